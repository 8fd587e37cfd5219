/* A diagnosis scored against what the switches saw (diagnose_score.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/diagnose_score.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/queuelog.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"

const char *qr_diag_verdict_name(int v)
{
    static const char *const names[] = {"right", "wrong", "unknown"};
    return v >= 0 && v <= QR_VERDICT_UNKNOWN ? names[v] : "?";
}

/* What a recorded packet is: payload bytes, or a control packet (SYN/FIN without payload) */
#define KIND_ACK 0
#define KIND_DATA 1
#define KIND_CONTROL 2

typedef struct {
    uint8_t *kind; /* per packet number */
    uint32_t n;
} dir_kinds;

static int is_loss_cause(qr_diag_cause c)
{
    switch (c) {
    case QR_CAUSE_HANDSHAKE:
    case QR_CAUSE_RTO:
    case QR_CAUSE_RTO_FEW_DUPACKS:
    case QR_CAUSE_TAIL_DROP:
    case QR_CAUSE_LATE_FR:
    case QR_CAUSE_FAST_RETRANSMIT:
    case QR_CAUSE_LOST_RETX:
    case QR_CAUSE_TLP:
    case QR_CAUSE_RACK:
    case QR_CAUSE_LOSS: return 1;
    default: return 0;
    }
}

/* Every recorded packet's kind, per direction (sent packets of every host). */
static int packet_kinds(const qr_recording *rec, size_t n_dirs, dir_kinds *dk, char *errbuf)
{
    uint32_t hosts = qr_recording_hosts(rec);
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t h = 0; h < hosts; h++) {
            size_t n;
            const qr_rec_packet *p = qr_recording_packets(rec, h, &n);
            for (size_t i = 0; i < n; i++) {
                if (p[i].dir >= n_dirs)
                    continue;
                dir_kinds *d = &dk[p[i].dir];
                if (pass == 0) {
                    if (p[i].seq + 1 > d->n)
                        d->n = p[i].seq + 1;
                    continue;
                }
                uint32_t pay = qr_tcp_payload(&p[i].pk);
                d->kind[p[i].seq] = pay                                               ? KIND_DATA
                                    : (p[i].pk.tcp_flags & (QR_TCP_SYN | QR_TCP_FIN)) ? KIND_CONTROL
                                                                                      : KIND_ACK;
            }
            if (pass == 0 && h + 1 == hosts)
                for (size_t k = 0; k < n_dirs; k++)
                    if (dk[k].n && !(dk[k].kind = calloc(dk[k].n, 1)))
                        return qri_err(errbuf, QR_ENOMEM, "out of memory");
        }
    return QR_OK;
}

/* The exchange of direction k of flow f that started last at or before t (the first one if none
 * did); -1 if the direction has none. */
static long exchange_at(const qr_diagnosis *d, uint32_t f, uint32_t k, int64_t t)
{
    const qr_diag_flow *fl = &d->flows[f];
    long best = -1, first = -1;
    for (uint32_t i = 0; i < fl->exchanges; i++) {
        size_t j = fl->first_exchange + i;
        const qr_diag_exchange *e = &d->exchanges[j];
        if (e->dir != k)
            continue;
        if (first < 0)
            first = (long)j;
        if (e->start_ns <= t && (best < 0 || e->start_ns >= d->exchanges[best].start_ns))
            best = (long)j;
    }
    return best >= 0 ? best : first;
}

static void judge(qr_diag_score_row *r, int app_done)
{
    r->verdict = QR_VERDICT_WRONG;
    if (r->cause == QR_CAUSE_UNKNOWN) {
        r->verdict = QR_VERDICT_UNKNOWN;
        return;
    }
    if (r->lost != r->dropped)
        snprintf(r->why, sizeof r->why, "%u losses diagnosed where the switch dropped %u", r->lost,
                 r->dropped);
    else if (app_done && r->status != QR_TC_COMPLETE)
        snprintf(r->why, sizeof r->why, "%s though the application completed",
                 qr_tc_status_name(r->status));
    else if (is_loss_cause(r->cause) && !r->dropped)
        snprintf(r->why, sizeof r->why, "%s though the switch dropped none of its data",
                 qr_diag_cause_name(r->cause));
    else if (r->cause == QR_CAUSE_ACK_DROP && (!r->dropped_acks || r->dropped))
        snprintf(r->why, sizeof r->why, "ack-drop though the switch dropped %s",
                 r->dropped ? "its data" : "no ACK");
    else if (r->cause == QR_CAUSE_CONGESTION && r->max_queue_bytes < QR_MTU_BYTES &&
             r->max_ack_queue_bytes < QR_MTU_BYTES)
        snprintf(r->why, sizeof r->why,
                 "congestion though its data and ACKs met at most %" PRIu64 " B queued",
                 r->max_queue_bytes > r->max_ack_queue_bytes ? r->max_queue_bytes
                                                             : r->max_ack_queue_bytes);
    else
        r->verdict = QR_VERDICT_RIGHT;
}

int qr_diagnose_score(const qr_diagnosis *d, const qr_recording *rec, const char *arrivals_path,
                      const uint8_t *completed, qr_diag_score *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    const qr_flow_table *ft = qr_recording_flows(rec);
    size_t n_dirs = qr_flow_table_directions(ft);
    if (d->n_flows * 2 != n_dirs)
        return qri_err(errbuf, QR_EINVAL,
                       "the diagnosis is not of this recording (%zu flows, "
                       "the recording has %zu)",
                       d->n_flows, n_dirs / 2);
    dir_kinds *dk = calloc(n_dirs ? n_dirs : 1, sizeof *dk);
    out->rows = calloc(d->n_exchanges ? d->n_exchanges : 1, sizeof *out->rows);
    if (!dk || !out->rows) {
        free(dk);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    out->n_rows = d->n_exchanges;
    for (size_t i = 0; i < d->n_exchanges; i++) {
        const qr_diag_exchange *e = &d->exchanges[i];
        qr_diag_score_row *r = &out->rows[i];
        r->flow = e->flow;
        r->index = e->index;
        r->dir = e->dir;
        r->bytes = e->bytes;
        r->cause = e->cause;
        r->status = e->status;
        r->lost = e->lost;
        r->retransmissions = e->retransmissions;
        out->lost += e->lost;
    }
    int rc = packet_kinds(rec, n_dirs, dk, errbuf);
    qr_arrival_reader *ar = NULL;
    if (!rc)
        rc = qr_arrival_reader_open(&ar, arrivals_path, errbuf);
    qr_arrival a;
    while (!rc && (rc = qr_arrival_read(ar, &a, errbuf)) == QR_OK) {
        out->arrivals++;
        uint32_t dir = qr_packet_id_dir(a.packet), seq = qr_packet_id_seq(a.packet);
        if (dir >= n_dirs || seq >= dk[dir].n) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: arrival %" PRIu64 ": packet %" PRIu32 " of direction %" PRIu32
                         ", which the recording does not have",
                         arrivals_path, out->arrivals, seq, dir);
            break;
        }
        uint32_t f = qr_dir_flow(dir), k = dir & 1;
        int kind = dk[dir].kind[seq], dropped = a.decision != QR_ADMIT;
        long x = exchange_at(d, f, k, a.time_ns);
        if (kind == KIND_DATA) {
            if (x >= 0 && !dropped && a.queue_bytes > out->rows[x].max_queue_bytes)
                out->rows[x].max_queue_bytes = a.queue_bytes;
            if (dropped) {
                out->dropped++;
                if (x >= 0)
                    out->rows[x].dropped++;
            }
        } else {
            if (dropped && x >= 0)
                out->rows[x].dropped_control += kind == KIND_CONTROL;
            /* a pure ACK: of the other direction's exchange running then (its queue, its loss) */
            long y = kind == KIND_ACK ? exchange_at(d, f, k ^ 1u, a.time_ns) : -1;
            if (y >= 0 && dropped)
                out->rows[y].dropped_acks++;
            else if (y >= 0 && a.queue_bytes > out->rows[y].max_ack_queue_bytes)
                out->rows[y].max_ack_queue_bytes = a.queue_bytes;
        }
    }
    if (rc == QR_END)
        rc = QR_OK;
    qr_arrival_reader_close(ar);
    for (size_t k = 0; k < n_dirs; k++)
        free(dk[k].kind);
    free(dk);
    if (rc)
        return rc;
    for (size_t f = 0; f < d->n_flows; f++) {
        const qr_diag_flow *fl = &d->flows[f];
        int app_done = completed ? completed[f] != 0 : fl->end != QR_TC_END_OPEN;
        int all = fl->exchanges > 0;
        for (uint32_t i = 0; i < fl->exchanges; i++) {
            qr_diag_score_row *r = &out->rows[fl->first_exchange + i];
            judge(r, app_done);
            out->right += r->verdict == QR_VERDICT_RIGHT;
            out->wrong += r->verdict == QR_VERDICT_WRONG;
            out->unknown += r->verdict == QR_VERDICT_UNKNOWN;
            all &= r->verdict == QR_VERDICT_RIGHT;
        }
        out->connections++;
        out->connections_right += all;
    }
    return QR_OK;
}

void qr_diag_score_free(qr_diag_score *s)
{
    if (!s)
        return;
    free(s->rows);
    memset(s, 0, sizeof *s);
}

static void write_rows(FILE *f, const void *ctx)
{
    const qr_diag_score *s = ctx;
    fprintf(f, "flow,exchange,dir,bytes,cause,status,lost,retransmissions,dropped,"
               "dropped_control,dropped_acks,max_queue_bytes,max_ack_queue_bytes,verdict,why\n");
    for (size_t i = 0; i < s->n_rows; i++) {
        const qr_diag_score_row *r = &s->rows[i];
        fprintf(f,
                "%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%s,%s,%" PRIu32 ",%" PRIu32
                ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%s,%s\n",
                r->flow, r->index, r->dir, r->bytes, qr_diag_cause_name(r->cause),
                qr_tc_status_name(r->status), r->lost, r->retransmissions, r->dropped,
                r->dropped_control, r->dropped_acks, r->max_queue_bytes, r->max_ack_queue_bytes,
                qr_diag_verdict_name(r->verdict), r->why);
    }
}

int qr_diag_score_write_csv(const char *path, const qr_diag_score *s, char *errbuf)
{
    return qr_write_text_file(path, write_rows, s, errbuf);
}
