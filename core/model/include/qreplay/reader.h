/* qreplay: receiving applications that read slowly ([traffic] read_rate).
 *
 * By default a flow's receiving application reads every byte as soon as it arrives, so the
 * receiver's window never closes. [traffic] read_rate makes chosen flows' applications read at a
 * fixed rate instead: the bytes they have not read stay in the socket's receive buffer ([tcp]
 * rcvbuf), the advertised window shrinks, and when the buffer is full the window is zero and the
 * sender waits (the receiver-limited case of qreplay diagnose). Its value is a list of rules
 * separated by ',':
 *
 *     flow F RATE
 *
 * e.g. `flow 0 100Mbps, flow 3 1Gbps`. The pacing is a token bucket: credit accrues at RATE, up to
 * QR_READ_BURST_BYTES, from the moment the connection is accepted; a read takes as many of the
 * available bytes as the credit allows (the application's read calls are at most that large). */
#ifndef QREPLAY_READER_H
#define QREPLAY_READER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many rules in [traffic] read_rate. */
#define QR_READ_RULES_MAX 64
/* The largest read: the bucket's depth. */
#define QR_READ_BURST_BYTES 16384u

typedef struct qr_read_rule {
    uint32_t flow;
    uint64_t rate_bps;
} qr_read_rule;

/* Parse [traffic] read_rate ("" or blanks: no rule). Returns 0 or QR_EVALUE with "rule K
 * ('TEXT'): reason" (an unknown word, a bad or zero rate, a flow named twice, too many rules). */
int qr_read_rules_parse(const char *text, qr_read_rule *rules, size_t max, size_t *n, char *errbuf);

/* Per flow of a workload of n_flows flows: its read rate in bits/s, 0 for "reads at once", into
 * rates[0..n_flows) (caller's array). Returns 0 or QR_EVALUE ("[traffic] read_rate: rule K
 * ('TEXT'): flow 12 does not exist (the workload has 10 flows)"). */
int qr_read_rates_resolve(const char *text, size_t n_flows, uint64_t *rates, char *errbuf);

/* A reading application's pacing. */
typedef struct qr_reader {
    uint64_t rate_bps;
    uint64_t credit; /* bits x 1e9 (so that rate x ns adds exactly) */
    int64_t last_ns;
} qr_reader;

/* Start at now_ns with an empty bucket. rate_bps > 0. */
void qr_reader_init(qr_reader *r, uint64_t rate_bps, int64_t now_ns);

/* How many of `available` bytes the application reads at now_ns (>= the last call's time); the
 * credit they use is spent. Unless it reads all of them, it reads a multiple of `quantum` bytes
 * (the segment size: a receive window that is not a multiple of it can stall a sender, which
 * neither sends less than a segment nor probes a window that is not zero). */
uint64_t qr_reader_take(qr_reader *r, int64_t now_ns, uint64_t available, uint64_t quantum);

/* The time (>= now_ns) at which min(bytes, QR_READ_BURST_BYTES) bytes can be read, if nothing is
 * read before. */
int64_t qr_reader_next_ns(const qr_reader *r, int64_t now_ns, uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif
