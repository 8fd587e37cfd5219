/* qreplay: causal paths through black-box multi-tier applications (WAP5, WWW 2006), from message
 * traces alone.
 *
 * A message is one application-level send from one host to another, with its send time on the
 * sender's clock and its receive time on the receiver's (either may be unknown: a host without a
 * trace). Message linking, as WAP5 defines it:
 *   - per host B and peer C, the mean causal delay d(B->C) is the mean, over messages B->C, of the
 *     delay since the latest message into B no more than the cutoff x before (none: spontaneous,
 *     not counted);
 *   - a message B->C sent at t weighs each message X->B that reached B at t' in [t - x, t] by
 *     f(t - t') = lambda e^(-lambda (t - t')), lambda = 1 / d(B->C), and spontaneity by f(y d);
 *     the weights, normalised, are the message's link probabilities;
 *     (a message from a host outside the application is spontaneous: opts.outside);
 *   - from each root (a message most likely spontaneous) path instances are built: each link from
 *     a message of the instance to a message its receiver sent is true (p >= p_hi), false
 *     (p <= p_lo) or, near 0.5 or where it is the child's most likely cause, tried both ways, at
 *     most k times per tree (beyond that: true where it is the child's most likely cause);
 *   - an instance scores the product of its decisions' probabilities; instances of the same
 *     structure (hosts and nesting, children in a canonical order) form a path pattern, with a
 *     count (roots whose best instance it is) and an expected count (the sum of scores).
 * Each hop of a pattern has its node delay (its send minus its parent's arrival, both on its
 * sender's clock: no clock error) and its network delay (receive minus send, with the hosts'
 * offsets estimated from the least one-way delays both ways, WAP5's symmetric-delay estimate,
 * taken out), over the best instances of the pattern.
 *
 * Project 5's nesting and convolution are WAP5's comparators. Nesting pairs each call with its
 * return on one connection (a message and the next one back) and takes a call's parent to be the
 * latest call into its sender that encloses it; a return's parent is the latest return its sender
 * got for a call it made while serving, or the call itself. Convolution: qr_paths_conv. Given
 * parents (qr_paths_given) make patterns from any assignment, such as the truth's, with the same
 * canonical shapes. */
#ifndef QREPLAY_PATHS_H
#define QREPLAY_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/messages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Candidate parents less likely than this are dropped once weighed (false links whose factor in
 * a score, 1 - p, is 1 within 1e-4): they keep memory in bounds when the cutoff spans many
 * arrivals. */
#define QR_PATHS_MIN_P 1e-4
/* No parent: the message is spontaneous (a root). */
#define QR_PATHS_ROOT UINT64_MAX

typedef struct qr_paths_opts {
    int64_t cutoff_ns;       /* x: a parent arrived at most this long before its child left */
    double y;                /* spontaneity weighs f(y d) */
    uint32_t k;              /* try-both decisions per tree */
    double p_lo, p_hi;       /* a link is false below p_lo, true above p_hi */
    double near;             /* tried both ways when |p - 0.5| <= near */
    uint32_t max_candidates; /* the latest arrivals weighed per message */
    uint32_t max_tree;       /* messages in one instance (larger trees are cut, and counted) */
    int64_t slow_link_ns;    /* a link is named slow when its median network delay exceeds the
                                median of every link's by this much and by half again */
    double slow_node;        /* a host is named slow when its mean node delay is this many times
                                the median of the other hosts in the same role */
    /* The hosts outside the application (its clients, as WAP5 leaves them untraced): what they
     * send starts a path, whatever reached them before, and in shapes they are one node, "c".
     * n_hosts flags, or NULL: none. Borrowed for the call only. */
    const uint8_t *outside;
} qr_paths_opts;

/* WAP5's defaults scaled to data-center delays: x = 10 ms (WAP5: 100 ms in a LAN, 2 s in the wide
 * area), y = 4, k = 6, p_lo = 0.1, p_hi = 0.9, near = 0.15, 64 candidates, trees of 1024
 * messages, slow links 100 us, slow nodes 2x, no host outside. */
void qr_paths_opts_default(qr_paths_opts *o);

typedef struct qr_paths_hop {
    uint32_t src, dst;
    int32_t parent;  /* its parent's position in the pattern; -1 for the root */
    uint64_t node_n; /* node delays measured (both times known) */
    double node_mean_ns;
    uint64_t net_n; /* network delays measured */
    double net_mean_ns;
    const int64_t *node_ns, *net_ns; /* every delay measured (for histograms) */
} qr_paths_hop;

typedef struct qr_paths_pattern {
    const char *shape; /* canonical: "c>3(3>4(4>6(6>4)))": hop src>dst(children, sorted); "c" is
                          any host outside the application */
    uint32_t n_hops;   /* hops in canonical order, parents before children */
    const qr_paths_hop *hops;
    uint64_t count;  /* roots whose best instance has this shape */
    double expected; /* the sum of the scores of every instance of this shape */
} qr_paths_pattern;

typedef struct qr_paths_suspect {
    int link; /* 0: a host (a), 1: a link (a, b) */
    uint32_t a, b;
    double delay_ns;    /* its mean node delay, or its median network delay */
    double baseline_ns; /* the median it was compared with */
    uint64_t n;         /* delays it had */
} qr_paths_suspect;

typedef struct qr_paths_stats {
    uint64_t messages, roots, instances;
    uint64_t untraced_send, untraced_recv; /* messages with a time unknown */
    uint64_t spontaneous;                  /* messages whose most likely cause is none */
    uint64_t trees_cut;                    /* trees cut at max_tree messages */
    uint64_t budget_spent;                 /* trees that used all k try-both decisions */
    uint64_t clock_pairs;                  /* host pairs seen both ways (offsets estimated) */
} qr_paths_stats;

typedef struct qr_paths qr_paths;

/* WAP5's message linking over n messages between hosts below n_hosts (o NULL: defaults). The
 * messages are borrowed: they must outlive the analysis.
 * Returns 0, QR_EINVAL (a host beyond n_hosts, a bad option: errbuf names the message or option)
 * or QR_ENOMEM. Caller owns *out (qr_paths_destroy). */
int qr_paths_link(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf);
/* Project 5's nesting over the same messages. */
int qr_paths_nest(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf);
/* Project 5's convolution over the same messages: at each host, the cross-correlation of each
 * stream in (one sender) with each stream out (one receiver) over lags up to the cutoff in 10 us
 * bins; a bin 4 standard deviations above independent streams' count is a causal edge, its
 * highest bin the edge's delay and the bins around it above the independent count its extent; a
 * message's parent is the arrival, over the edges into its stream, within the extent before it
 * and nearest the edge's delay. */
int qr_paths_conv(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf);
/* Patterns from given parents (parents[i]: a message index or QR_PATHS_ROOT); QR_EINVAL for a
 * parent that is no message, is the message itself or makes a cycle. */
int qr_paths_given(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                   const uint64_t *parents, const qr_paths_opts *o, char *errbuf);
/* Release; NULL is allowed. */
void qr_paths_destroy(qr_paths *p);

/* Each message's most likely parent (QR_PATHS_ROOT: spontaneous) and its probability. */
const uint64_t *qr_paths_parents(const qr_paths *p, const double **prob);
/* The patterns, by expected count, largest first. */
const qr_paths_pattern *qr_paths_patterns(const qr_paths *p, size_t *n);
/* The pattern of this shape, or NULL. */
const qr_paths_pattern *qr_paths_find(const qr_paths *p, const char *shape);
/* The hosts and links named slow, worst first. */
const qr_paths_suspect *qr_paths_suspects(const qr_paths *p, size_t *n);
/* What the analysis saw and left out. */
const qr_paths_stats *qr_paths_get_stats(const qr_paths *p);
/* Host h's clock offset as estimated (ns; 0 where no pair was seen both ways). */
int64_t qr_paths_offset(const qr_paths *p, uint32_t h);

/* What paths.h5 records beside the analysis. */
typedef struct qr_paths_write_info {
    const char *method; /* "link", "nest" or "given" */
    const char *source; /* what the messages were made from (a file and its digest, a spec) */
    const uint64_t *true_parent; /* a scorer's truth per message, or NULL */
    const qr_paths *truth;       /* patterns of the true parents (qr_paths_given), or NULL */
    size_t n_scores;             /* a scorer's numbers, written as attributes "score.NAME" */
    const char *const *score_names;
    const double *score_values;
    double analysis_s; /* how long the analysis took (wall), or < 0: not measured */
} qr_paths_write_info;

/* paths.h5 (written whole under a temporary name, then renamed): /messages, /patterns, /hops,
 * /delays, /suspects, /offsets, the options and counts as attributes (docs/FORMATS.md). Returns 0
 * or the writer's error naming the file. */
int qr_paths_write(const char *path, const qr_paths *p, const qr_paths_write_info *info,
                   char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
