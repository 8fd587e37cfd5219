/* qreplay: a recorded run read back with only what hosts know, for replays.
 *
 * A recording folder (written by qreplay runtime) holds recording.h5 (/flows, /hosts,
 * /drops_detected, /received; the scenario as an attribute) and one pcap per host. Every packet is
 * named as in the runtime (flowtable.h): its direction from the 5-tuple, its number from its place
 * in the direction, checked against the IP ID.
 *
 * A recording is a value: once opened it never changes. What a replay injects and when is made
 * from it (plan.h: an injection plan; pcap_stream.h: the captures streamed), never stored in it. */
#ifndef QREPLAY_RECORDING_H
#define QREPLAY_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/clock.h"
#include "qreplay/flowtable.h"
#include "qreplay/pcap_file.h"
#include "qreplay/random.h"
#include "qreplay/sampler.h"
#include "qreplay/scenario.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/schema.h"
#include "qreplay/tcpconn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One recorded packet. */
typedef struct qr_rec_packet {
    qr_packet pk;     /* as recorded (pk.time_ns: the recorded send time, on the host's clock) */
    uint32_t dir;     /* flow direction */
    uint32_t seq;     /* number within the direction */
    uint8_t drop_tag; /* a receiver saw this packet lost */
} qr_rec_packet;

typedef struct qr_recording qr_recording;

/* Read the recording in dir. check: NULL to use the recording's own scenario, or a scenario that
 * must describe the same network (topology kind, k or hosts). Returns 0, or QR_ENOENT (no complete
 * recording), QR_EFORMAT / QR_EVALUE / QR_ETRUNC naming the file and what is wrong (a pcap cut
 * short, IP IDs out of sequence, a packet of no flow, a mismatched scenario). Caller owns *out
 * (qr_recording_close). */
int qr_recording_open(qr_recording **out, const char *dir, const qr_scenario *check, char *errbuf);

/* recording.h5 of dir alone, checked as qr_recording_open checks it (the pcaps' sizes and
 * digests included), without reading the pcaps or /received: a recording with no packets and no
 * receive times (qr_recording_has_received is 0), for a reader that streams the pcaps
 * (pcap_stream.h). Returns as qr_recording_open. */
int qr_recording_open_tables(qr_recording **out, const char *dir, const qr_scenario *check,
                             char *errbuf);

/* Release; NULL is allowed. */
void qr_recording_close(qr_recording *r);
/* 0 for a recording opened by qr_recording_open_tables (no packets read), 1 otherwise. */
int qr_recording_has_packets(const qr_recording *r);

/* Host h's capture (the folder and its /hosts pcap name) into path (size bytes), and the number of
 * packets /hosts says it holds. */
void qr_recording_pcap_path(const qr_recording *r, uint32_t h, char *path, size_t size);
uint64_t qr_recording_pcap_packets(const qr_recording *r, uint32_t h);

/* The scenario the recording was made with (borrowed from r). */
const qr_scenario *qr_recording_scenario(const qr_recording *r);
/* The recording's id: every file made from it carries it ("recording_id"), so a result of another
 * recording is refused, never read as this one's. "" for a recording of a qreplay before ids.
 * Borrowed from r. */
const char *qr_recording_id(const qr_recording *r);
/* When the run stopped recording, on the simulator's clock (recording.h5 sim_end_ns: the hosts'
 * captures and the switches' mirror sessions stopped then); 0 if unknown (an import). */
int64_t qr_recording_end_ns(const qr_recording *r);
/* A recording's id from what determines it: the kind of run ("runtime", "import"), the code
 * version, the resolved scenario (seed included) and extra (e.g. the captures' SHA-256; may be
 * NULL). The same inputs give the same recording, so the same id. Returns 0 or QR_ENOMEM. */
int qr_recording_id_of(const char *kind, const qr_scenario *s, const char *extra,
                       char out[QR_ID_SIZE]);
/* The "recording_id" attribute of the HDF5 file at path into out ("" if it has none). Returns 0 or
 * the reader's error naming the file. */
int qr_h5_recording_id(const char *path, char out[QR_ID_SIZE], char *errbuf);
/* The text attribute `name` of the root of result file path into out (size bytes; "" when the
 * file has none). Returns 0 or the reader's error. */
int qr_h5_text_attr(const char *path, const char *name, char *out, size_t size, char *errbuf);
/* Its flows (borrowed from r). */
const qr_flow_table *qr_recording_flows(const qr_recording *r);
uint32_t qr_recording_hosts(const qr_recording *r);

/* Host h's packets in recorded order (borrowed; *n gets their number). */
const qr_rec_packet *qr_recording_packets(const qr_recording *r, uint32_t host, size_t *n);

/* Whose observations of flow direction dir the recording holds: QR_TC_AT_SENDER (every packet
 * its sender sent, with send times, and every packet of the other direction that reached it) and
 * QR_TC_AT_RECEIVER (every packet that reached its receiver, in /received). A runtime records both
 * ends of every direction; an import what its captures saw (/import/connections: "both" both,
 * "retrans" the sender, "ipid" and "none" the receiver: then the sender's packets are
 * reconstructed and only the received ones are observations). 0: dir out of range. */
unsigned qr_recording_seen(const qr_recording *r, uint32_t dir);
/* 1 if the recording was made by qreplay import. */
int qr_recording_imported(const qr_recording *r);
/* 1 if the scenario's network is the one the packets crossed: a runtime, or an import whose
 * captures were said to come from it (import --network scenario; the testbed). Otherwise the
 * paths, rates and delays the packets met are unknown. */
int qr_recording_network_known(const qr_recording *r);

/* The paths the hosts traced (traceroute.h: /paths, rows of a trace consecutive in hop order) or
 * an import's path file gave; borrowed. Returns 1 if the recording has path evidence (a runtime
 * that traced, or an import given paths), 0 if not (then *n is 0). */
int qr_recording_paths(const qr_recording *r, const qr_row_path **rows, size_t *n);
/* The switches' ICMP counters per epoch (/icmp: a runtime that traced). Returns 1 and the rows, or
 * 0 (none recorded: *rows NULL, *n 0). */
int qr_recording_icmp(const qr_recording *r, const qr_row_icmp **rows, size_t *n);

/* Whether a receiver detected packet `packet` lost. */
int qr_recording_detected(const qr_recording *r, uint64_t packet);
/* Whether the recording has /received (arrival times at destination hosts). */
int qr_recording_has_received(const qr_recording *r);
/* Whether packet `packet` reached its destination host marked CE (/received_ce: a runtime whose
 * switches mark ECN; 0 for a recording without it). */
int qr_recording_ce(const qr_recording *r, uint64_t packet);
/* Whether packet `packet` of an import is a late original: in a direction only its receiver
 * captured, the receiver's capture (a rising IP ID or TCP timestamp) shows it was sent before
 * segments that arrived ahead of it (/import/late). */
int qr_recording_late(const qr_recording *r, uint64_t packet);
/* When packet `packet` reached its destination host. Returns 0 or QR_ENOTFOUND (lost). */
int qr_recording_received(const qr_recording *r, uint64_t packet, int64_t *time_ns);

/* Clock reconciliation from the recording's own data: the smallest one-way delay beyond the
 * unloaded latency of every host pair (recorded send time on the sender's clock, /received on the
 * receiver's) in both directions, combined by qr_clock_reconcile with host `reference` at 0.
 * out has qr_recording_hosts entries; *n_pairs (may be NULL) gets the pairs measured both ways.
 * Returns 0, QR_ESTATE (no /received),
 * QR_EINVAL (reference beyond the hosts) or QR_ENOMEM, with a message in errbuf. */
int qr_recording_estimate_clocks(const qr_recording *r, uint32_t reference, qr_clock_estimate *out,
                                 size_t *n_pairs, char *errbuf);
/* What qr_recording_export wrote. */
typedef struct qr_export_stats {
    uint32_t captures;       /* files written: hosts that sent or received anything */
    uint64_t sent, received; /* frames written, by direction seen from the capturing host */
} qr_export_stats;

/* Write every host's traffic as a capture taken on that host would hold it: each packet it sent
 * at its recorded send time (pk.time_ns) and each packet it received
 * at its /received time, both on its own clock, in time order, headers only (caplen below the
 * length), in format fmt, to dir/hNNNN.pcap; and dir/hosts.csv (address,host,capture), the map
 * qreplay import reads. dir must exist; hosts without traffic get no file. Returns 0, QR_ESTATE
 * (no /received), or the writer's error naming the file. */
int qr_recording_export(const qr_recording *r, const char *dir, const qr_pcap_format *fmt,
                        qr_export_stats *st, char *errbuf);

/* How a simulated run ended. */
typedef enum {
    QR_END_COMPLETED = 0, /* every flow completed and closed, the network empty */
    QR_END_STOP = 1,      /* [traffic] stop reached */
    QR_END_CANCELLED = 2, /* interrupted (SIGINT, SIGTERM) */
} qr_end_reason;

/* "completed", "stop", "cancelled". */
const char *qr_end_reason_name(qr_end_reason r);

/* recording.h5: what the runtime's hosts know. */
typedef struct qr_recording_info {
    const char *id; /* the recording's id (qr_recording_id_of), stamped into what derives */
    const char *scenario_name; /* shown in figures (the scenario file's name) */
    qr_end_reason end;
    int64_t sim_end_ns;
    int traced; /* the hosts ran path discovery: /traceroutes and /paths are written */
    const qr_row_traceroute *traceroutes;
    size_t n_traceroutes;
    const qr_row_path *paths;
    size_t n_paths;
    const qr_row_icmp *icmp; /* the switches' ICMP counters per epoch (with traced) */
    size_t n_icmp;
    /* the received packets that arrived marked ECN CE: /received_ce, written when the scenario
     * marks ([buffer] ecn_threshold) */
    const qr_row_received *ce;
    size_t n_ce;
} qr_recording_info;

/* Write recording.h5 at path (under a temporary name, renamed when complete): the scenario, info,
 * and the tables /flows, /hosts, /drops_detected, /received (and /traceroutes, /paths, /icmp if
 * traced).
 * Returns 0 or the writer's error naming the file. */
int qr_recording_write(const char *path, const qr_scenario *s, const qr_recording_info *info,
                       const qr_row_flow *flows, size_t n_flows, const qr_row_host *hosts,
                       size_t n_hosts, const qr_row_detected *detected, size_t n_detected,
                       const qr_row_received *received, size_t n_received, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
