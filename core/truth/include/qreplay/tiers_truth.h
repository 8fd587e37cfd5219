/* qreplay: the truth of a multi-tier service's run, for scoring causal paths (paths_score.h):
 * every message of every call with its id and its parent's, as the service itself logged them
 * (ns-3's `qreplay tiers` from the core's machine, tiers.h; the testbed's Python services from
 * the ids their payloads carry). No analysis reads it.
 *
 * The text form (docs/FORMATS.md, "Service truth"):
 *
 *   # qreplay tiers-truth 1
 *   # spec: ITEM; ITEM; ...          the service (tiers.h's spec on one line): its planted faults
 *   # ...                            comments (what it was made from)
 *   conn,index,id,parent,src,dst,true_send_ns,true_recv_ns
 *   ...
 *
 * A message is named by its connection and its place on it: conn is the connection's number in
 * the message trace the run wrote, or its two ends "A:P-B:Q" (either end first) for runs read from
 * captures or kernel records; index counts the messages from src to dst on the connection, from
 * 0 in order of sending (a direction's bytes keep their order, whatever the clocks say).
 * parent is "-" for a client's request; a true time "-" where it is not known. */
#ifndef QREPLAY_TIERS_TRUTH_H
#define QREPLAY_TIERS_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/messages.h"
#include "qreplay/tiers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A true time not known. */
#define QR_TRUTH_NO_TIME INT64_MIN
/* The most bytes a service's spec may hold on its line. */
#define QR_TIERS_SPEC_TEXT 8192

typedef struct qr_tiers_truth_row {
    char conn[QR_MSG_ENDS_TEXT]; /* a number, or "A:P-B:Q" */
    uint64_t index;              /* its place among the connection's messages src -> dst */
    uint64_t id, parent;         /* parent: QR_TIER_NO_PARENT for a client's request */
    uint32_t src, dst;
    int64_t true_send_ns, true_recv_ns; /* QR_TRUTH_NO_TIME: not known */
} qr_tiers_truth_row;

typedef struct qr_tiers_truth qr_tiers_truth;

/* Write a truth whole or not at all: spec_text is the service's spec file (its comments dropped,
 * its items joined on one line), comment (may be NULL) says what the run was. Returns 0 or
 * QR_EIO, QR_EVALUE (a spec longer than QR_TIERS_SPEC_TEXT on one line). */
int qr_tiers_truth_write(const char *path, const char *spec_text, const qr_tiers_truth_row *rows,
                         size_t n, const char *comment, char *errbuf);

/* Read a truth. Errors name the file and line: a missing or foreign first line, no spec line or
 * one tiers.h refuses, no header, a row without eight fields or with a field that is no number
 * (or no connection), a message that is its own parent, an id given twice, a place given twice.
 * Returns 0 or QR_ENOENT, QR_EFORMAT, QR_ESYNTAX, QR_EVALUE, QR_ENOMEM; caller owns *out
 * (qr_tiers_truth_destroy). */
int qr_tiers_truth_read(const char *path, qr_tiers_truth **out, char *errbuf);
void qr_tiers_truth_destroy(qr_tiers_truth *t);
/* The service it was (its planted faults among others), and its rows (borrowed). */
const qr_tiers_spec *qr_tiers_truth_spec(const qr_tiers_truth *t);
const qr_tiers_truth_row *qr_tiers_truth_rows(const qr_tiers_truth *t, size_t *n);

/* What qr_tiers_truth_gather joined, and what it could not. */
typedef struct qr_tiers_gather_report {
    uint64_t sent, received;
    uint64_t never_read;   /* sent, never read whole (true_recv_ns unknown) */
    uint64_t unknown_read; /* read, never logged as sent (no row) */
} qr_tiers_gather_report;

/* The truth of a service whose hosts logged it themselves (the testbed's tiers.py): one log per
 * host, one event per line, times in ns on one clock:
 *   S,ENDS,INDEX,ID,PARENT,SRC,DST,T   a message sent over the connection ENDS ("A:P-B:Q"), INDEX
 *                                      its place among that socket's sends, PARENT an id or "-"
 *   R,ID,T                             message ID read whole
 * gathered into rows (*rows, caller frees) in order of id. Errors name the file and line (a line
 * of neither form, a field that is no number), or the id sent twice. Returns 0 or QR_ENOENT,
 * QR_ESYNTAX, QR_EVALUE, QR_ENOMEM. */
int qr_tiers_truth_gather(const char *const *logs, size_t n, qr_tiers_truth_row **rows,
                          size_t *n_rows, qr_tiers_gather_report *rep, char *errbuf);

/* A parent the truth cannot give: the message, or its true parent, is not in the truth or not
 * among the messages observed. The scorer leaves such messages out (and counts them). */
#define QR_TRUTH_NO_PARENT (UINT64_MAX - 1)

typedef struct qr_tiers_truth_match_report {
    uint64_t matched;       /* observed messages the truth names */
    uint64_t no_truth;      /* observed messages the truth has no row for */
    uint64_t wrong_hosts;   /* of those, a row at their place but with other hosts */
    uint64_t unobserved;    /* rows no observed message matched */
    uint64_t parent_unseen; /* matched messages whose true parent was not observed */
} qr_tiers_truth_match_report;

/* The true parent of each observed message m[i] (an index into m; QR_PATHS_ROOT, i.e.
 * UINT64_MAX, for a client's request; QR_TRUTH_NO_PARENT where unknown) and its true network
 * delay (QR_TRUTH_NO_TIME where unknown): message i is the row at its place, its connection
 * named by ends[m[i].conn] (ends NULL: by the number m[i].conn), its index counted over the
 * messages of m from m[i].src on that connection, in the order of m. Returns 0 or QR_ENOMEM,
 * QR_EVALUE (a connection number past n_ends). */
int qr_tiers_truth_match(const qr_tiers_truth *t, const qr_msg *m, size_t n,
                         const qr_msg_ends *ends, size_t n_ends, uint64_t *true_parent,
                         int64_t *true_net_ns, qr_tiers_truth_match_report *rep, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
