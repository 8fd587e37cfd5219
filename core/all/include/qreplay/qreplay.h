/* qreplay: every public header of libqreplay, layer by layer (the README draws the layers). A
 * program that includes this one links the library `qreplay` (pkg-config qreplay): every layer. */
#ifndef QREPLAY_H
#define QREPLAY_H

/* base */
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/random.h"
#include "qreplay/stats.h"
#include "qreplay/tasks.h"
#include "qreplay/textio.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/version.h"

/* model */
#include "qreplay/buffer.h"
#include "qreplay/clock.h"
#include "qreplay/faults.h"
#include "qreplay/flowtable.h"
#include "qreplay/linkfault.h"
#include "qreplay/loopfault.h"
#include "qreplay/lossdet.h"
#include "qreplay/packet.h"
#include "qreplay/queue.h"
#include "qreplay/reader.h"
#include "qreplay/sampler.h"
#include "qreplay/switchport.h"
#include "qreplay/synth.h"
#include "qreplay/tcpconn.h"
#include "qreplay/topology.h"

/* config */
#include "qreplay/apps.h"
#include "qreplay/scenario.h"
#include "qreplay/tiers.h"
#include "qreplay/workload.h"

/* agents */
#include "qreplay/guided_plan.h"
#include "qreplay/pingmesh.h"
#include "qreplay/traceroute.h"

/* io */
#include "qreplay/capture.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/krec_rate.h"
#include "qreplay/krec_recording.h"
#include "qreplay/krecord.h"
#include "qreplay/light.h"
#include "qreplay/messages.h"
#include "qreplay/pcap_file.h"
#include "qreplay/pcap_stream.h"
#include "qreplay/plan.h"
#include "qreplay/probelog.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/sample_h5.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/schema.h"
#include "qreplay/source.h"
#include "qreplay/workload_h5.h"

/* replay */
#include "qreplay/butterfly.h"
#include "qreplay/compare.h"
#include "qreplay/isolate.h"
#include "qreplay/metrics.h"
#include "qreplay/replay.h"
#include "qreplay/results.h"
#include "qreplay/runstats.h"

/* truth */
#include "qreplay/fabric.h"
#include "qreplay/fabric_truth.h"
#include "qreplay/recorder.h"
#include "qreplay/tb_repeat.h"
#include "qreplay/testbed.h"
#include "qreplay/tiers_truth.h"
#include "qreplay/truth.h"

/* analyses */
#include "qreplay/blackhole.h"
#include "qreplay/blame.h"
#include "qreplay/cover.h"
#include "qreplay/diagnose.h"
#include "qreplay/guided.h"
#include "qreplay/hoptrace.h"
#include "qreplay/isolate_run.h"
#include "qreplay/paths.h"
#include "qreplay/pingmesh_analyze.h"
#include "qreplay/schema_blame.h"
#include "qreplay/schema_diagnose.h"
#include "qreplay/schema_hoptrace.h"
#include "qreplay/schema_paths.h"
#include "qreplay/schema_pingmesh.h"
#include "qreplay/schema_tcptrace.h"
#include "qreplay/tcptrace.h"
#include "qreplay/whatif.h"

/* scorers */
#include "qreplay/blame_score.h"
#include "qreplay/clock_score.h"
#include "qreplay/diagnose_score.h"
#include "qreplay/hoptrace_score.h"
#include "qreplay/paths_score.h"
#include "qreplay/pingmesh_score.h"
#include "qreplay/whatif_score.h"

#endif
