/* qreplay: 007-style blame of links for the losses hosts detected (qreplay blame). Scoring against
 * the runtime's ground truth is a scorer's (blame_score.h): this analysis reads no truth.
 *
 * 007 (Arzani et al., NSDI 2018) runs on every host: when a TCP connection retransmits, the host
 * traces the connection's path and gives each of its h links a vote of 1/h; the links with the most
 * votes network-wide are blamed, and per connection the link on its path with the most votes is the
 * connection's most likely culprit. Here:
 *  - a vote comes from every flow direction in which the receiving host detected at least one lost
 *    packet (IP ID gaps, lossdet.h), once per direction: the hosts' view, without switch counters;
 *  - its path is the one its host traced (traceroute.h: the runtime's agents trace a connection
 *    when it retransmits; an import takes the user's path file), never the simulator's hash: a
 *    hop that did not answer leaves its links unknown (no vote for them, 1/h for the others), a
 *    direction never traced casts no vote. In a known network where both hosts hang off one
 *    switch the only path there is needs no trace;
 *  - links are cables (both directions of a link are one, as a traceroute sees hops): "s8-s16";
 *  - the flag rule is 007's Algorithm 1: while the link with the most votes holds at least
 *    `threshold` (1%) of all votes cast, flag it, take away the votes of every direction whose path
 *    crosses it (or, with QR_BLAME_ADJUST_ECMP, the votes ECMP would have sent through each link
 *    with them), and recount. A link flagged when the directions it took away had lost one packet
 *    between them is noise (the `noise` columns): flagged still, and said apart.
 * A tagged replay of the recording adds the replay's view: where it drops the lost packets
 * (congestion it can explain), and a second vote ("replay") that counts only the losses the replay
 * could not place anywhere, the ones congestion does not explain.
 *
 * The detection curve is the rule rerun on the first N voting connections (in the order of their
 * first loss) for growing N; what it found is scored by blame_score.h. */
#ifndef QREPLAY_BLAME_H
#define QREPLAY_BLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/cover.h"
#include "qreplay/recording.h"
#include "qreplay/schema_blame.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Algorithm 1's adjustment after flagging a link: take away the votes of the directions whose
 * traced paths cross it (as before), or (the paper's) the votes their hosts' flows would give each
 * link if ECMP spread them evenly over the shortest paths through the flagged one. */
enum { QR_BLAME_ADJUST_VOTERS = 0, QR_BLAME_ADJUST_ECMP = 1 };

/* The two ways of voting. */
enum { QR_BLAME_007 = 0, QR_BLAME_REPLAY = 1, QR_BLAME_METHODS = 2 };
/* "007", "replay". */
const char *qr_blame_method_name(int method);

typedef struct qr_blame_opts {
    double threshold;     /* 007's flag rule: share of all votes (0.01) */
    int64_t epoch_ns;     /* tally votes per epoch of this length (first losses' times); -1: the
                             scenario's [traceroute] epoch; 0: the whole run is one */
    const char *arrivals; /* a tagged replay's arrival log; NULL: the 007 votes only */
    int adjust;           /* QR_BLAME_ADJUST_VOTERS (default) or _ECMP (a known network) */
    int comparators;      /* also run 007's comparators (cover.h) on the same voters (1) */
    qr_cover_opts cover;  /* their options */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
} qr_blame_opts;

/* Fill *o with the defaults: threshold 1%, the scenario's epoch, no replay, the comparators with
 * cover.h's defaults, no progress callback. */
void qr_blame_opts_default(qr_blame_opts *o);

struct qr_blame_ctx;

/* 007's bound on the ICMP answers a switch sends (its Theorem 1, made exact for the run's network):
 * a switch answers at most one probe of each traceroute, and only traceroutes from hosts with a
 * shortest path through it reach it, so in an epoch switch s sends at most C_t x H(s) answers
 * (C_t: [traceroute] per_host; H(s): those hosts). Checked against the switches' own counters
 * (recording.h5 /icmp). */
typedef struct qr_blame_icmp {
    int known;           /* the recording has the switches' counters */
    int64_t epoch_ns;    /* their epoch (0: the run) */
    uint32_t per_host;   /* C_t */
    uint32_t epochs;     /* epochs with an answer asked for */
    uint64_t max_sent;   /* the most answers one switch sent in one epoch */
    uint32_t max_switch; /* which, and when */
    int64_t max_epoch;
    uint64_t max_bound; /* its bound */
    uint64_t min_bound; /* the smallest bound of any switch */
    uint32_t over;      /* (switch, epoch) counts above their bound: 0 if the bound holds */
    uint64_t refused;   /* answers the switches' limits refused, in all */
} qr_blame_icmp;

typedef struct qr_blame {
    qr_blame_opts opts;
    int has_replay;
    int has_truth;            /* scored (blame_score.h): the truth columns are filled */
    char truth[1024];         /* the truth file it was scored against; "" for none */
    qr_row_blame_link *links; /* every cable of the topology */
    size_t n_links;
    qr_row_blame_conn *conns; /* every voting direction */
    size_t n_conns;
    qr_row_blame_curve *curve; /* the detection curve, per method */
    size_t n_curve;
    qr_row_blame_summary summary[QR_BLAME_METHODS];
    size_t n_summary;             /* 1, or 2 with a replay */
    uint64_t losses, unexplained; /* detected losses; those the replay did not drop */
    qr_row_blame_comparator comparators[QR_COVER_METHODS]; /* with opts.comparators */
    size_t n_comparators;
    qr_row_blame_blamed *blamed; /* the links each comparator blamed */
    size_t n_blamed;
    qr_blame_icmp icmp;         /* Theorem 1 checked (icmp.known: counters recorded) */
    int64_t epoch_ns;           /* the tally's epoch (0: the run) */
    qr_row_blame_epoch *epochs; /* per method and epoch: voters, what the rule flagged alone */
    size_t n_epochs;
    qr_row_blame_epoch_link *epoch_links; /* per epoch row: its cables with votes */
    size_t n_epoch_links;
    struct qr_blame_ctx *ctx; /* the analysis's state, for the calls below; private */
} qr_blame;

/* Blame the links of a recording along its traced paths (qr_recording_paths). The cables are the
 * scenario's topology's when it is the network the packets crossed (then named as
 * qr_topology_cable_name), followed by any other name the paths hold. The truth columns of the
 * rows stay empty (no fault known: precision 0 of what was flagged, recall, culprit accuracy and
 * the detection points unknown; every connection's correct -1). Caller owns *out (qr_blame_free,
 * also after an error). Returns 0, QR_EINVAL (threshold outside (0, 1); a replay of a recording
 * whose network is unknown), QR_ENOMEM, or the errors of reading the arrival log, naming the
 * file. */
int qr_blame_run(const qr_recording *rec, const qr_blame_opts *o, qr_blame *out, char *errbuf);
/* Release what *b holds (NULL allowed); *b is zeroed. */
void qr_blame_free(qr_blame *b);

/* What the analysis decided, for a scorer. Cables are numbered as b->links (each pair of directed
 * links of the topology, by the lower link id). All borrowed from b until qr_blame_free.
 *
 * qr_blame_topology: the scenario's topology. qr_blame_cable_of: the cable of directed link
 * `link` (UINT32_MAX if out of range or the network is unknown). qr_blame_path: the known cables
 * of direction dir's traced path, in hop order (*hops of them), and its length with the unknown
 * ones (*len, may be NULL); 0 or QR_ENOTFOUND (no path known). qr_blame_culprit: the culprit cable
 * of connection row `conn` under `method` (UINT32_MAX: none). */
const qr_topology *qr_blame_topology(const qr_blame *b);
/* The flow directions of the recording blamed (directions are numbered below it). */
size_t qr_blame_directions(const qr_blame *b);
uint32_t qr_blame_cable_of(const qr_blame *b, uint32_t link);
int qr_blame_path(const qr_blame *b, uint32_t dir, const uint32_t **cables, uint32_t *hops,
                  uint32_t *len);
uint32_t qr_blame_culprit(const qr_blame *b, size_t conn, int method);
/* Comparator m's (cover.h) choice: per cable whether it blamed it (NULL: not run), and connection
 * row conn's culprit: the blamed cable on its path with the highest value (UINT32_MAX: none). */
const uint8_t *qr_blame_comparator_blamed(const qr_blame *b, int m);
uint32_t qr_blame_comparator_culprit(const qr_blame *b, size_t conn, int m);

/* 007's flag rule on the first k voting connections of `method` (by first loss; k is capped at
 * the voters): rank[cable] (1 = most votes, 0 = none) and flagged[cable] for each of b->n_links
 * cables into the caller's arrays (either may be NULL). Returns the number flagged. Uses the
 * analysis's scratch space: one call at a time per b. */
uint32_t qr_blame_rule(const qr_blame *b, int method, size_t k, uint32_t *rank, uint8_t *flagged);

/* The cables the rule flagged on epoch row i's voters alone (NULL: no such row). */
const uint8_t *qr_blame_epoch_flagged(const qr_blame *b, size_t i);

/* blame.h5: /links, /connections, /curve, /summary, /comparators, /blamed, /epochs, /epoch_links,
 * the ICMP check and the scenario. */
int qr_blame_write(const char *path, const qr_scenario *s, const char *recording_id,
                   const qr_blame *b, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
