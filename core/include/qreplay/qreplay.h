/* qreplay: every public header of libqreplay. */
#ifndef QREPLAY_H
#define QREPLAY_H
#include "qreplay/buffer.h"
#include "qreplay/capture.h"
#include "qreplay/clock.h"
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/lossdet.h"
#include "qreplay/metrics.h"
#include "qreplay/queuelog.h"
#include "qreplay/random.h"
#include "qreplay/sampler.h"
#include "qreplay/scenario.h"
#include "qreplay/synth.h"
#include "qreplay/tcptrace.h"
#include "qreplay/testbed.h"
#include "qreplay/topology.h"
#include "qreplay/trace.h"
#include "qreplay/units.h"
#include "qreplay/version.h"
#include "qreplay/workload.h"
#endif
