/* qreplay: 007's comparators (NSDI 2018, section 7): which links explain the connections that
 * failed, as set cover. With A the routing matrix (failed connections x links: a connection's row
 * holds the links of its traced path) and r the connections' retransmission counts:
 *  - the binary program: the fewest links such that every failed connection crosses one
 *    (minimise sum y_l, A y >= 1, y binary);
 *  - the integer program: drops per link explaining each connection's retransmissions
 *    (minimise sum x_l, A x >= r, x integer >= 0); its x ranks the links;
 * both solved exactly with GLPK's branch and cut (glpk.h, Debian's libglpk-dev), and two greedy
 * approximations of the binary program:
 *  - MAX COVERAGE: take the link crossed by most connections not yet explained, until all are;
 *  - Tomo (Kompella et al., INFOCOM 2007): the same, over the links whose hit ratio (failed
 *    connections through it against all connections through it) reaches a threshold, so that a
 *    link good connections cross is not blamed for the failed ones.
 * A connection without a known link can be explained by none: it is left out and counted. Pure
 * functions of their input: no truth, no recording. */
#ifndef QREPLAY_COVER_H
#define QREPLAY_COVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    QR_COVER_BINARY = 0,
    QR_COVER_INTEGER = 1,
    QR_COVER_MAXCOV = 2,
    QR_COVER_TOMO = 3,
    QR_COVER_METHODS = 4
};
/* "binary", "integer", "maxcov", "tomo"; NULL for another number. */
const char *qr_cover_method_name(int method);

/* The failed connections: connection f crosses links[start[f] .. start[f + 1]) (indices below
 * n_links; a link listed twice counts once) and retransmitted count[f] times (NULL: once each).
 * good[l]: how many connections that did not fail cross link l (a share each where their path
 * is known only in expectation; NULL: none known), for Tomo's hit ratio. */
typedef struct qr_cover {
    uint32_t n_links;
    size_t n_flows;
    const size_t *start; /* n_flows + 1 offsets */
    const uint32_t *links;
    const uint32_t *count;
    const double *good;
} qr_cover;

typedef struct qr_cover_opts {
    double hit_ratio;    /* Tomo: a link is a candidate from this hit ratio on (0.5) */
    double time_limit_s; /* the exact programs: give up after this long, keeping the best
                            solution found and saying so (0: no limit; 60) */
} qr_cover_opts;
/* Fill *o with the defaults: hit ratio 50%, a 60 s limit. */
void qr_cover_opts_default(qr_cover_opts *o);

typedef struct qr_cover_result {
    int method;
    double *value;   /* per link: binary 0 or 1; integer: its drops; greedy: the step it was
                        taken at (1 first), 0 not taken */
    uint8_t *blamed; /* per link: taken */
    uint32_t n_blamed;
    double objective;     /* links taken (binary, greedy) or drops in all (integer) */
    size_t explained;     /* failed connections crossing a blamed link */
    size_t unexplainable; /* failed connections with no known link (left out) */
    int optimal;          /* 1: the exact programs' proven optimum; 0: greedy, or stopped early */
    char status[96];      /* "optimal", "time limit: best found", "greedy", ... */
} qr_cover_result;

/* Solve p by `method` into *r (caller frees with qr_cover_result_free, also after an error).
 * Returns 0, QR_EINVAL (a link index out of range, a count of 0, an unknown method), QR_ENOMEM,
 * or QR_EFORMAT naming what GLPK said where it found no solution at all. */
int qr_cover_solve(const qr_cover *p, int method, const qr_cover_opts *o, qr_cover_result *r,
                   char *errbuf);
void qr_cover_result_free(qr_cover_result *r);

#ifdef __cplusplus
}
#endif
#endif
