/* qreplay: a diagnosis scored against what the switches saw (the testbed's switch captures, or a
 * runtime's ground truth): per exchange, the packets of its direction the switch dropped and the
 * queue they met, next to what the diagnosis says (its cause, the losses it counted), and whether
 * the diagnosis is right. The analysis never sees any of it (diagnose.h reads the hosts'
 * observations only); this is the grader.
 *
 * A switch drop belongs to the exchange of its direction that started last before the drop (data:
 * packets with payload; SYN, FIN and pure ACKs are counted apart). The verdict of an exchange:
 *   unknown  the diagnosis said "unknown" (with its reason in the diagnosis)
 *   right    its data losses equal the switch's data drops, it is complete where its connection
 *            completed, and its cause agrees with the switch: a loss cause (rto, tail-loss-probe,
 *            fast-retransmit, rack, lost-retransmit, loss, ...) only where the switch dropped its
 *            data; ack-drop only where the switch dropped the other direction's ACKs and none of
 *            its data; congestion only where its data or its ACKs met a queue of at least one
 *            packet
 *   wrong    otherwise. */
#ifndef QREPLAY_DIAGNOSE_SCORE_H
#define QREPLAY_DIAGNOSE_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/diagnose.h"
#include "qreplay/recording.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { QR_VERDICT_RIGHT = 0, QR_VERDICT_WRONG, QR_VERDICT_UNKNOWN } qr_diag_verdict;
/* "right", "wrong", "unknown"; "?" out of range. */
const char *qr_diag_verdict_name(int v);

/* One exchange of the diagnosis with what the switch saw of it. */
typedef struct qr_diag_score_row {
    uint32_t flow, index, dir; /* as qr_diag_exchange */
    uint64_t bytes;
    qr_diag_cause cause;
    uint8_t status; /* qr_tc_status */
    uint32_t lost;  /* the diagnosis's data losses */
    uint32_t retransmissions;
    uint32_t dropped;             /* the switch dropped this many of its data packets */
    uint32_t dropped_control;     /* ... of its SYN, FIN and pure ACKs */
    uint32_t dropped_acks;        /* ... of the other direction's pure ACKs while it ran */
    uint64_t max_queue_bytes;     /* the most its data packets found queued at the switch */
    uint64_t max_ack_queue_bytes; /* ... the other direction's pure ACKs while it ran */
    uint8_t verdict;              /* qr_diag_verdict */
    char why[80];                 /* wrong: what disagrees */
} qr_diag_score_row;

typedef struct qr_diag_score {
    qr_diag_score_row *rows; /* every exchange, in the diagnosis's order */
    size_t n_rows;
    size_t right, wrong, unknown;          /* exchanges */
    size_t connections, connections_right; /* right: every exchange right */
    uint64_t dropped, lost;                /* data drops at the switch, losses diagnosed */
    uint64_t arrivals;                     /* switch arrivals read */
} qr_diag_score;

/* Score d (qr_diagnose of rec) against the switches' arrival log at arrivals_path (truth/
 * arrivals.qra: every arrival with its queue and whether it was dropped). completed: per flow of
 * the recording, 1 if the application completed it (NULL: judge completion by the connection's
 * end: closed or reset). Returns 0, QR_ENOMEM, QR_EFORMAT (an arrival of a packet the recording
 * does not have, naming it) or the log reader's error. qr_diag_score_free releases *out (also
 * after an error). */
int qr_diagnose_score(const qr_diagnosis *d, const qr_recording *rec, const char *arrivals_path,
                      const uint8_t *completed, qr_diag_score *out, char *errbuf);
void qr_diag_score_free(qr_diag_score *s);

/* Write the rows as CSV (flow, exchange, dir, bytes, cause, status, lost, retransmissions,
 * dropped, dropped_control, dropped_acks, max_queue_bytes, max_ack_queue_bytes, verdict, why),
 * whole or not at all. Returns 0 or QR_EIO naming the file. */
int qr_diag_score_write_csv(const char *path, const qr_diag_score *s, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
