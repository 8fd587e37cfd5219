/* qreplay: the state blame.c keeps for the scorer and its comparators (blame_cover.c). Private to
 * the analyses layer. */
#ifndef QREPLAY_BLAME_CTX_H
#define QREPLAY_BLAME_CTX_H

#include <stdint.h>

#include "qreplay/blame.h"
#include "qreplay/cover.h"
#include "qreplay/topology.h"

#define MAX_PATH 32
#define NONE UINT32_MAX

/* One flow direction's part. */
typedef struct dir_info {
    uint32_t cables[MAX_PATH]; /* the known cables of its traced path, in hop order (indices into
                                  the cable table) */
    uint32_t hops;             /* known cables */
    uint32_t len;              /* positions on the path, known or not: each known one gets 1/len */
    uint32_t losses, unexplained;
    int64_t first_loss, first_unexplained;
    uint32_t replay_drops[MAX_PATH]; /* the tagged replay's drops, per known cable */
    int routed;                      /* a path is known (hops > 0) */
    uint32_t ecmp_first, ecmp_n;     /* its hosts' shortest paths: ecmp[ecmp_first ..] */
} dir_info;

/* One shortest path between two hosts: its cables. */
typedef struct ecmp_path {
    uint32_t cables[MAX_PATH];
    uint32_t n;
} ecmp_path;

/* What the analysis keeps for the scorer (qr_blame_rule, qr_blame_path, qr_blame_culprit). */
typedef struct qr_blame_ctx {
    qr_topology *topo;
    int topo_known;    /* the scenario's topology is the network the packets crossed */
    uint32_t n_topo;   /* its cables: the first rows of the cable table */
    uint32_t *by_name; /* cable indices sorted by name */
    uint32_t n_cables;
    uint32_t *cable_of;   /* directed link -> cable index */
    uint32_t *cable_link; /* cable index -> its lower directed link */
    dir_info *dirs;
    size_t n_dirs;
    double threshold;
    uint32_t *voting[QR_BLAME_METHODS]; /* the voting directions of each method, by first loss */
    size_t n_voting[QR_BLAME_METHODS];
    uint32_t *culprit[QR_BLAME_METHODS];    /* per connection row: its culprit cable (NONE: none) */
    uint8_t *comp_blamed[QR_COVER_METHODS]; /* per cable: blamed by comparator m */
    uint32_t *comp_culprit[QR_COVER_METHODS]; /* per connection row (NONE: none) */
    int adjust_ecmp; /* Algorithm 1's adjustment by ECMP shares (else the voters' own) */
    ecmp_path *ecmp; /* the voters' hosts' shortest paths (dir_info ecmp_first, ecmp_n) */
    size_t n_ecmp;
    uint8_t *noise;         /* per cable: flagged on the evidence of one lost packet or none */
    uint8_t *epoch_flagged; /* per epoch row of the result, n_cables each */
    /* scratch for the flag rule */
    double *votes, *left;
    uint32_t *voters, *rank;
    uint8_t *flagged, *removed;
    uint32_t *order, *sort_tmp;
} qr_blame_ctx;
typedef qr_blame_ctx ctx;

/* The result of the flag rule on a set of voting directions: the votes cast, the links flagged,
 * and of them noise. */
typedef struct qri_rule_out {
    double total;
    uint32_t flagged, noise;
} qri_rule_out;
/* 007's flag rule on the directions voting[0..n): the scratch arrays hold the votes, ranks, flags
 * and noise after it. */
qri_rule_out qri_blame_rule_of(qr_blame_ctx *c, const uint32_t *voting, size_t n);
/* The tally per epoch (out->epochs, out->epoch_links, c->epoch_flagged) when opts.epoch_ns (or
 * the scenario's [traceroute] epoch) is set. Returns 0 or QR_ENOMEM. */
int qri_blame_epochs(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out);
/* Theorem 1 against the switches' counters (out->icmp). Returns 0 or QR_ENOMEM. */
int qri_blame_icmp_check(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out);

/* Every voting direction's hosts' shortest paths (c->ecmp; at most QRI_ECMP_MAX each, a pair with
 * more keeps none and is adjusted by its own trace). Returns 0 or QR_ENOMEM. */
#define QRI_ECMP_MAX 64
int qri_blame_ecmp_paths(qr_blame_ctx *c, const qr_recording *rec);

/* 007's comparators on the voters of method 007 (cover.h): fills out->comparators, out->blamed
 * and the per-connection culprits. Returns 0, QR_ENOMEM or the solver's error. */
int qri_blame_comparators(qr_blame_ctx *c, const qr_recording *rec, qr_blame *out, char *errbuf);

#endif
