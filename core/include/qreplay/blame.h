/* qreplay: 007-style blame of links for the losses hosts detected (qreplay blame), scored against
 * the runtime's ground truth.
 *
 * 007 (Arzani et al., NSDI 2018) runs on every host: when a TCP connection retransmits, the host
 * traces the connection's path and gives each of its h links a vote of 1/h; the links with the most
 * votes network-wide are blamed, and per connection the link on its path with the most votes is the
 * connection's most likely culprit. Here:
 *  - a vote comes from every flow direction in which the receiving host detected at least one lost
 *    packet (IP ID gaps, lossdet.h), once per direction: the hosts' view, without switch counters;
 *  - its path is what a traceroute along the direction's 5-tuple would return. A host can compute
 * it without probing, from the topology and the switches' ECMP hash (topology.h), and that is what
 * we do; a real deployment would trace it;
 *  - links are cables (both directions of a link are one, as a traceroute sees hops): "s8-s16";
 *  - the flag rule is 007's Algorithm 1: while the link with the most votes holds at least
 *    `threshold` (1%) of all votes cast, flag it, take away the votes of every direction whose path
 *    crosses it, and recount.
 * A tagged replay of the recording adds the replay's view: where it drops the lost packets
 * (congestion it can explain), and a second vote ("replay") that counts only the losses the replay
 * could not place anywhere, the ones congestion does not explain.
 *
 * Scoring against truth.h5 (/drops, /link_faults): the faulty links are the cables with a planted
 * gray or blackhole fault; precision and recall of the flagged links, per connection whether its
 * culprit is the cable where the network really dropped most of its packets, and the detection
 * curve: the rule rerun on the first N voting connections (in the order of their first loss) for
 * growing N. */
#ifndef QREPLAY_BLAME_H
#define QREPLAY_BLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/recording.h"
#include "qreplay/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two ways of voting. */
enum { QR_BLAME_007 = 0, QR_BLAME_REPLAY = 1, QR_BLAME_METHODS = 2 };
/* "007", "replay". */
const char *qr_blame_method_name(int method);

typedef struct qr_blame_opts {
    double threshold;     /* 007's flag rule: share of all votes (0.01) */
    const char *arrivals; /* a tagged replay's arrival log; NULL: the 007 votes only */
    const char *truth;    /* truth.h5 to score against; NULL: no scoring */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
} qr_blame_opts;

void qr_blame_opts_default(qr_blame_opts *o);

typedef struct qr_blame {
    qr_blame_opts opts;
    int has_replay, has_truth;
    qr_row_blame_link *links; /* every cable of the topology */
    size_t n_links;
    qr_row_blame_conn *conns; /* every voting direction */
    size_t n_conns;
    qr_row_blame_curve *curve; /* the detection curve, per method */
    size_t n_curve;
    qr_row_blame_summary summary[QR_BLAME_METHODS];
    size_t n_summary;             /* 1, or 2 with a replay */
    uint64_t losses, unexplained; /* detected losses; those the replay did not drop */
} qr_blame;

/* Blame the links of a recording (its topology from its scenario). Returns 0, QR_EVALUE (a
 * recording whose hosts are not the topology's: "direction 12 has no route ..."), or the errors of
 * reading the arrival log or truth.h5, naming the file. */
int qr_blame_run(const qr_recording *rec, const qr_blame_opts *o, qr_blame *out, char *errbuf);
void qr_blame_free(qr_blame *b);

/* blame.h5: /links, /connections, /curve, /summary and the scenario. */
int qr_blame_write(const char *path, const qr_scenario *s, const qr_blame *b, char *errbuf);

/* The readable report: the top links by votes with the truth beside them, the flagged links, and
 * the scores. top: how many links to list. */
void qr_blame_print(const qr_blame *b, size_t top, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
