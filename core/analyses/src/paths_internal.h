/* Causal paths: what linking, nesting and given parents share (paths.h). */
#ifndef QR_PATHS_INTERNAL_H
#define QR_PATHS_INTERNAL_H

#include "map.h"
#include "qreplay/paths.h"

/* A candidate parent of a message, with its probability. */
struct pcand {
    uint64_t msg;
    double p;
};

/* One hop of a pattern as it is built. */
struct phop {
    qr_paths_hop h;
    int64_t *node, *net;
    size_t cap_node, cap_net;
};

struct ppat {
    char *shape;
    uint32_t n_hops;
    struct phop *hops;
    uint64_t count;
    double expected;
};

struct qr_paths {
    qr_paths_opts o;
    const qr_msg *m; /* borrowed: the caller keeps them while p lives */
    size_t n;
    uint32_t n_hosts;
    /* candidates of message i: cand[cstart[i] .. cstart[i + 1]) */
    size_t *cstart;
    struct pcand *cand;
    double *spont;
    /* children of message j: kid[kstart[j] .. kstart[j + 1]) (the candidates turned around) */
    size_t *kstart;
    struct pcand *kid;
    uint64_t *parent;
    double *prob;
    int64_t *offset;
    struct ppat *pats;
    size_t n_pats, cap_pats;
    qri_map pat_index; /* shape hash -> pattern index + 1 */
    qr_paths_pattern *out;
    qr_paths_hop *out_hops;
    qr_paths_suspect *suspects;
    size_t n_suspects;
    qr_paths_stats st;
};

/* A new analysis of m (checked), offsets estimated; *out owned by the caller. */
int qri_paths_new(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf);
/* Messages into each host with a known arrival, by arrival: idx[start[h] .. start[h + 1]) (both
 * allocated; the caller frees them). Returns 0 or QR_ENOMEM. */
int qri_paths_arrivals(const qr_paths *p, size_t **start, uint64_t **idx);
/* Message indices by receiver, then arrival, then index (ctx: the messages). */
int qri_paths_cmp_arrival(const void *a, const void *b, void *ctx);
/* Make p's patterns from the parents given (each a message or QR_PATHS_ROOT); destroys p on
 * failure. */
int qri_paths_finish(qr_paths *p, const uint64_t *parents, char *errbuf);
/* Turn the candidates around into children (kstart, kid). */
int qri_paths_children(qr_paths *p);
/* Name the hosts and links slow by the patterns' delays (paths_suspects.c). */
int qri_paths_suspects(qr_paths *p);
/* Build path instances from every root, patterns and their delays, then the public view. */
int qri_paths_build(qr_paths *p, char *errbuf);

#endif
