/* qreplay: DETER's light record. Per connection: its configuration, the application's socket
 * calls, what the network did to its packets as the receiver saw it (losses, the IP ID gaps the
 * receiver detected, ECN CE marks), rate-sampled send times at one or more thresholds, and the
 * order of events the isolated replay needs to be exact: the receive times of a connection whose
 * replay depends on them, else only the timer firings that came between two of its arrivals (its
 * packets then arrive at once, in order). No packet is stored: a replay regenerates
 * them by running each connection's TCP again (the isolated replay, isolate.h), gives them the
 * record's inferred send times and pushes them through the switch-queue replay.
 *
 * The file (docs/FORMATS.md, "The light record") is a magic, then blocks, each one part of the
 * record for a chunk of connections, deflated on its own (zlib) with a CRC-32 of its raw bytes,
 * so what each part costs is measured and a reader can go chunk by chunk. */
#ifndef QREPLAY_LIGHT_H
#define QREPLAY_LIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/plan.h"
#include "qreplay/recording.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The record's parts, as the cost table reports them. */
typedef enum qr_light_part {
    QR_LIGHT_HEADER = 0,   /* the scenario, the hosts, the thresholds (once per file) */
    QR_LIGHT_CONFIG = 1,   /* per connection: its ends and start */
    QR_LIGHT_CALLS = 2,    /* the application's socket calls (a pattern table of bytes, flags) */
    QR_LIGHT_LOSS = 3,     /* per direction: packets sent, lost, detected lost, marked CE */
    QR_LIGHT_TIMERS = 4,   /* timer firings between arrivals, as gates (qr_light_gate) */
    QR_LIGHT_SAMPLES = 5,  /* per threshold: the sampler's records of every direction */
    QR_LIGHT_RECEIVED = 6, /* per received packet: its receive time, delta-coded */
    QR_LIGHT_ORDER = 7,    /* per threshold: the hosts' order among equal inferred times */
    QR_LIGHT_PARTS = 8
} qr_light_part;

/* "header", "config", "calls", "loss", "timers", "samples", "received", "order". */
const char *qr_light_part_name(qr_light_part p);

#define QR_LIGHT_MAX_TH 8

/* What a record holds and costs: bytes per part (deflated, as stored, block headers included;
 * raw: before deflate), samples and order also per threshold. */
typedef struct qr_light_stats {
    uint64_t connections, directions, packets, received, lost, detected, ce, sample_records;
    uint64_t calls;      /* the applications' socket calls */
    uint64_t unobserved; /* directions whose sender or receiver no capture saw (an import) */
    uint64_t at_once;    /* connections whose receive times it leaves out (qr_light_write) */
    uint64_t gates;      /* the timer firings it keeps instead (qr_light_gate) */
    uint64_t bytes[QR_LIGHT_PARTS], raw[QR_LIGHT_PARTS];
    size_t n_th;
    int64_t th_ns[QR_LIGHT_MAX_TH];
    uint64_t th_bytes[QR_LIGHT_MAX_TH]; /* samples and order at that threshold */
    uint64_t th_records[QR_LIGHT_MAX_TH];
    uint64_t file_bytes;
} qr_light_stats;

/* A timer's firing between two arrivals, as the record keeps it for a connection whose packets
 * arrive at once: packet `seq` of direction `dir` (the connection's: 0 data, 1 ACKs) reaches its
 * receiver only once that receiver has sent `sends` packets of the connection (the timer's packet
 * among them). DETER's order of events: in the runtime the receiver's timer fired (a delayed ACK,
 * a retransmission) before that packet arrived. */
typedef struct qr_light_gate {
    uint32_t dir, seq, sends;
} qr_light_gate;

/* How the record keeps one connection's timing: its receive times (at_once 0), or its packets
 * delivered at once with the timer firings gates[0..n_gates), sorted by (dir, seq), each (dir,
 * seq) once. */
typedef struct qr_light_timing {
    uint8_t at_once;
    const qr_light_gate *gates;
    size_t n_gates;
} qr_light_timing;

/* Write rec's light record to path (written whole or not at all: a temporary file renamed): the
 * sampling with `method` at each of th_ns[0..n_th) (1 to QR_LIGHT_MAX_TH, increasing), and the
 * hosts' clock offsets the caller knows (offsets, one per host; NULL: 0), with which the isolated
 * replays take each host's clock out of its times (a runtime: the truth's, passed by the program
 * where it can be seen). timing (one per connection, or NULL: every receive time kept) says per
 * connection whether the record leaves its receive times out, and the gates it keeps instead:
 * the caller has checked that an isolated replay delivering its packets at once, in order, held
 * by those gates, with the recorded losses and CE marks, sends every packet the runtime sent
 * (qr_isolated_next_gate), so its packets regenerate exactly without them. A gate naming a
 * packet past its direction's, a lost one, or out of order is refused (QR_EINVAL). rec must be
 * read whole with /received (a runtime's recording). Returns 0,
 * QR_EINVAL (thresholds), QR_ESTATE (no /received; an import, whose TCP ns-3 cannot regenerate), or
 * an I/O error naming the file. */
int qr_light_write(const qr_recording *rec, const int64_t *offsets, qr_sampling_method method,
                   const int64_t *th_ns, size_t n_th, const qr_light_timing *timing,
                   const char *path, qr_light_stats *stats, char *errbuf);

typedef struct qr_light qr_light;

/* Read a light record (every block checked: magic, lengths, CRC, every count against the
 * connections'). Returns 0, QR_ENOENT, or QR_EFORMAT naming the file, block and field. Caller owns
 * *out (qr_light_close). */
int qr_light_open(qr_light **out, const char *path, char *errbuf);
void qr_light_close(qr_light *l);

/* What it holds (borrowed from l). */
const qr_scenario *qr_light_scenario(const qr_light *l);
const qr_flow_table *qr_light_flows(const qr_light *l);
const char *qr_light_id(const qr_light *l);
/* The hosts' clock offsets the record was written with (qr_light_write; one per host; borrowed). */
const int64_t *qr_light_clock_offsets(const qr_light *l);
/* Why the record's packets cannot be regenerated by the isolated replay (NULL: they can): it is
 * of an import (captures of real hosts, a kernel's TCP), a connection's application wrote more
 * than once or from both sides, or a capture left a direction unobserved. */
const char *qr_light_unregenerable(const qr_light *l);
/* The scenario as the record holds it (INI text, as qr_scenario_print wrote it). */
const char *qr_light_scenario_text(const qr_light *l);
const char *qr_light_path(const qr_light *l);
void qr_light_stats_get(const qr_light *l, qr_light_stats *out);
/* Packets direction dir sent (0 beyond the directions). */
uint32_t qr_light_sent(const qr_light *l, uint32_t dir);
/* When the connection of `flow` sent its last packet, true time, as the isolated replay's stop
 * needs it (the latest inferred send time at the smallest threshold, or the flow's start). */
int64_t qr_light_last_ns(const qr_light *l, uint32_t flow);
/* The fate of packet seq of direction dir, as qr_isolated_fate: 1 with *lost, or *arrive_ns
 * (true time: the receiver's clock less its offset; QR_ARRIVE_AT_ONCE where the record keeps no
 * receive times for the connection) and *ce (it arrived marked CE); 0 for a packet the record
 * does not have. */
int qr_light_fate(const qr_light *l, uint32_t dir, uint32_t seq, int *lost, int64_t *arrive_ns,
                  int *ce);
/* Whether packet seq of direction dir (the record's numbering: 2 flow + local direction) is held
 * by a gate (qr_light_gate): 1 with *sends, the packets its receiver must have sent first; else
 * 0. */
int qr_light_gated(const qr_light *l, uint32_t dir, uint32_t seq, uint32_t *sends);

/* The recording a queue replay reads from a light record: every direction's regenerated packets
 * (packets[d][0..n[d]), d < the flows' directions; n[d] must equal qr_light_sent), as the
 * isolated replay sent them on its own two hosts (pk.time_ns: true time), given the runtime's
 * addresses and ports (the flow table's) and the sender's clock, named by direction and number,
 * tagged with the receivers' detected losses. Its send times are the record's samples
 * (qr_light_plan); it has no /received. With check (the same run's recording, read
 * whole), every packet is compared with the recorded one: TCP flags, sequence and
 * acknowledgment numbers, window, IP length and ID, TOS, TTL, the TCP options' length (their
 * content holds the timestamp clock, in ms), addresses and ports; *compared (may be NULL) counts
 * them. Returns 0, QR_ESTATE (a record
 * whose packets cannot be regenerated: qr_light_unregenerable), QR_EVALUE (a direction with
 * another number of packets than the record's or the check's, a packet unlike the recorded one:
 * the message names flow, direction and packet), QR_ENOMEM. */
int qr_recording_from_light(qr_recording **out, const qr_light *l, const qr_packet *const *packets,
                            const size_t *n, const qr_recording *check, uint64_t *compared,
                            char *errbuf);

/* The injection plan of rec (made by qr_recording_from_light from l) from the send times l holds
 * sampled: only at the record's thresholds and method (QR_EINVAL otherwise, naming the ones it
 * has), the inferred times and, for equal times, the record's injection order. stats, records and
 * n_records as qr_plan_sample's. Returns 0, QR_EINVAL, QR_EVALUE / QR_EFORMAT (a record whose
 * samples do not cover its packets), QR_ENOMEM. Caller owns *out (qr_plan_free). */
int qr_light_plan(qr_plan **out, const qr_light *l, const qr_recording *rec,
                  qr_sampling_method method, int64_t th_ns, qr_sampling_stats *stats,
                  qr_row_sample_record **records, size_t *n_records, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
