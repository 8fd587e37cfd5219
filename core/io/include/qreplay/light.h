/* qreplay: DETER's light record. Per connection: its configuration, the application's socket
 * calls, what the network did to its packets as the receiver saw it (losses, the IP ID gaps the
 * receiver detected, ECN CE marks), rate-sampled send times at one or more thresholds, and the
 * receive times the isolated replay needs to be exact. No packet is stored: a replay regenerates
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
    QR_LIGHT_TIMERS = 4,   /* timer firings (none from ns-3's TCP: see FORMATS.md) */
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
    uint64_t bytes[QR_LIGHT_PARTS], raw[QR_LIGHT_PARTS];
    size_t n_th;
    int64_t th_ns[QR_LIGHT_MAX_TH];
    uint64_t th_bytes[QR_LIGHT_MAX_TH]; /* samples and order at that threshold */
    uint64_t th_records[QR_LIGHT_MAX_TH];
    uint64_t file_bytes;
} qr_light_stats;

/* Write rec's light record to path (written whole or not at all: a temporary file renamed): the
 * sampling with `method` at each of th_ns[0..n_th) (1 to QR_LIGHT_MAX_TH, increasing). rec must be
 * read whole with /received (a runtime's recording). Returns 0, QR_EINVAL (thresholds),
 * QR_ESTATE (no /received; an import, whose TCP ns-3 cannot regenerate), or an I/O error naming
 * the file. */
int qr_light_write(const qr_recording *rec, qr_sampling_method method, const int64_t *th_ns,
                   size_t n_th, const char *path, qr_light_stats *stats, char *errbuf);

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
/* The scenario as the record holds it (INI text, as qr_scenario_print wrote it). */
const char *qr_light_scenario_text(const qr_light *l);
const char *qr_light_path(const qr_light *l);
uint32_t qr_light_hosts(const qr_light *l);
/* Host h's clock offset as the runtime set it (0 beyond the hosts). */
int64_t qr_light_clock_offset(const qr_light *l, uint32_t h);
qr_sampling_method qr_light_method(const qr_light *l);
void qr_light_stats_get(const qr_light *l, qr_light_stats *out);
/* Packets direction dir sent (0 beyond the directions). */
uint32_t qr_light_sent(const qr_light *l, uint32_t dir);
/* When the connection of `flow` sent its last packet, true time, as the isolated replay's stop
 * needs it (the latest inferred send time at the smallest threshold, or the flow's start). */
int64_t qr_light_last_ns(const qr_light *l, uint32_t flow);
/* The fate of packet seq of direction dir, as qr_isolated_fate: 1 with *lost, or *arrive_ns
 * (true time: the receiver's clock less its offset) and *ce (it arrived marked CE); 0 for a packet
 * the record does not have. */
int qr_light_fate(const qr_light *l, uint32_t dir, uint32_t seq, int *lost, int64_t *arrive_ns,
                  int *ce);

/* The recording a queue replay reads from a light record: every direction's regenerated packets
 * (packets[d][0..n[d]), d < the flows' directions; n[d] must equal qr_light_sent), named by
 * direction and number, tagged with the receivers' detected losses. It is sampled only at the
 * record's thresholds and method (qr_recording_sample gives the record's samples and their
 * inferred times, in the record's injection order); it has no /received and no clock offsets.
 * The recording keeps a reference to l (close it first). Returns 0, QR_EVALUE (a direction with
 * another number of packets than the record's), QR_ENOMEM. */
int qr_recording_from_light(qr_recording **out, const qr_light *l, const qr_packet *const *packets,
                            const size_t *n, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
