/* qreplay: TCP execution traces of isolated replays (see tcptrace.h). */
#include "qreplay/tcptrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/pcap_file.h"
#include "qreplay/schema.h"

static const char *const var_names[QR_TT_N_VARS] = {"cwnd", "ssthresh",  "cong_state", "rto",
                                                    "rtt",  "in_flight", "rwnd",       "adv_wnd"};
static const char *const trigger_names[QR_TT_N_TRIGGERS] = {
    "", "rto", "after-rto", "fast-retransmit", "recovery", "other"};

const char *qr_tt_var_name(int v)
{
    return v >= 0 && v < QR_TT_N_VARS ? var_names[v] : "?";
}

const char *qr_tt_trigger_name(int t)
{
    return t >= 0 && t < QR_TT_N_TRIGGERS ? trigger_names[t] : "?";
}

/* A raw event: a segment or a variable change, numbered in the order the simulator reported it. */
typedef struct raw {
    uint64_t order;
    int is_var;
    qr_tt_segment seg; /* absolute seq/ack until finish */
    qr_tt_var_change var;
} raw;

struct qr_tcp_trace {
    raw *ev;
    size_t n, cap;
    int nomem;
    qr_tt_segment *segs;
    size_t n_segs;
    qr_tt_var_change *vars;
    size_t n_vars;
    int64_t delack_ns;
    qr_tt_summary sum;
};

int qr_tcp_trace_create(qr_tcp_trace **out, uint32_t flow, uint32_t dupack_threshold,
                        int64_t delack_ns)
{
    qr_tcp_trace *t = calloc(1, sizeof *t);
    if (!t)
        return QR_ENOMEM;
    t->delack_ns = delack_ns;
    t->sum.flow = flow;
    t->sum.dupack_threshold = dupack_threshold;
    t->sum.max_cwnd = -1;
    t->sum.min_ssthresh = -1;
    *out = t;
    return QR_OK;
}

static raw *push(qr_tcp_trace *t)
{
    if (t->nomem || qri_grow((void **)&t->ev, &t->cap, t->n, sizeof *t->ev, 1024)) {
        t->nomem = 1;
        return NULL;
    }
    raw *r = &t->ev[t->n];
    memset(r, 0, sizeof *r);
    r->order = t->n++;
    return r;
}

void qr_tcp_trace_segment(qr_tcp_trace *t, int64_t time_ns, uint32_t end, uint32_t dir,
                          uint8_t flags, uint32_t seq, uint32_t ack, uint32_t window, uint32_t len)
{
    raw *r = push(t);
    if (!r)
        return;
    r->seg.time_ns = time_ns;
    r->seg.end = (uint8_t)(end != 0);
    r->seg.dir = (uint8_t)(dir != 0);
    r->seg.flags = flags;
    r->seg.seq = seq;
    r->seg.ack = ack;
    r->seg.window = window;
    r->seg.len = len;
}

void qr_tcp_trace_var(qr_tcp_trace *t, int64_t time_ns, qr_tt_var var, int64_t value)
{
    raw *r = push(t);
    if (!r)
        return;
    r->is_var = 1;
    r->var.time_ns = time_ns;
    r->var.var = (uint32_t)var;
    r->var.value = value;
}

int qr_recorded_retransmissions(const qr_recording *rec, uint32_t flow, uint32_t end,
                                uint64_t **seqs, size_t *n)
{
    *seqs = NULL;
    *n = 0;
    const qr_flow *fl = qr_flow_table_flow(qr_recording_flows(rec), flow);
    if (!fl)
        return QR_OK;
    uint32_t host = end == QR_TT_SENDER ? fl->src : fl->dst;
    size_t np, cap = 0;
    const qr_rec_packet *pk = qr_recording_packets(rec, host, &np);
    qr_seq_state st = {0};
    for (size_t i = 0; i < np; i++) {
        if (pk[i].dir != 2 * flow + end)
            continue;
        const qr_packet *p = &pk[i].pk;
        uint64_t rel;
        if (!qr_seq_step(&st, p->tcp_flags, p->seq, qr_tcp_payload(p), &rel))
            continue;
        if (qri_grow((void **)seqs, &cap, *n, sizeof **seqs, 16)) {
            free(*seqs);
            *seqs = NULL;
            *n = 0;
            return QR_ENOMEM;
        }
        (*seqs)[(*n)++] = rel;
    }
    return QR_OK;
}

/* What qr_tcp_trace_finish carries from one event to the next. */
struct finish {
    qr_seq_state st[2];
    uint64_t sent[2];
    int64_t state;
    int state_fresh; /* the state changed and no retransmission has gone out since */
    uint32_t dup;
    int have_ack;
    uint64_t high_ack;
    /* per end: when the oldest segment it received since it last sent an ACK arrived */
    int64_t unacked_rx[2];
    uint64_t *traced[2]; /* per end: the relative sequence of each retransmission */
    size_t n_traced[2], cap_traced[2];
};

/* Each end's initial sequence number (isn) and room for the trace's segments and variables. */
static int finish_alloc(qr_tcp_trace *t, uint32_t isn[2], char *errbuf)
{
    int have[2] = {0, 0};
    size_t n_segs = 0, n_vars = 0;
    for (size_t i = 0; i < t->n; i++) {
        const raw *r = &t->ev[i];
        if (r->is_var) {
            n_vars++;
            continue;
        }
        n_segs++;
        if (r->seg.dir == QR_TT_TX && (r->seg.flags & QR_TCP_SYN) && !have[r->seg.end]) {
            have[r->seg.end] = 1;
            isn[r->seg.end] = (uint32_t)r->seg.seq;
        }
    }
    if (!have[QR_TT_SENDER])
        return qri_err(errbuf, QR_EVALUE, "flow %" PRIu32 ": the traced sender sent no SYN",
                       t->sum.flow);
    free(t->segs);
    free(t->vars);
    t->segs = calloc(n_segs ? n_segs : 1, sizeof *t->segs);
    t->vars = calloc(n_vars ? n_vars : 1, sizeof *t->vars);
    if (!t->segs || !t->vars)
        return qri_err(errbuf, QR_ENOMEM, "flow %" PRIu32 ": out of memory", t->sum.flow);
    return QR_OK;
}

/* A change of one of TCP's variables. */
static void finish_var(qr_tcp_trace *t, struct finish *F, qr_tt_var_change v)
{
    qr_tt_summary *s = &t->sum;
    t->vars[t->n_vars++] = v;
    if (v.var == QR_TT_CONG_STATE && v.value != F->state) {
        F->state = v.value;
        F->state_fresh = 1;
    } else if (v.var == QR_TT_CWND && v.value > s->max_cwnd) {
        s->max_cwnd = v.value;
    } else if (v.var == QR_TT_SSTHRESH && (s->min_ssthresh < 0 || v.value < s->min_ssthresh)) {
        s->min_ssthresh = v.value;
    }
}

/* A segment end e received: the oldest unacknowledged arrival, and the sender's duplicate
 * ACKs. */
static void finish_rx(struct finish *F, qr_tt_segment *g)
{
    uint32_t e = g->end;
    if (F->unacked_rx[e] == INT64_MIN && (g->len > 0 || (g->flags & (QR_TCP_SYN | QR_TCP_FIN))))
        F->unacked_rx[e] = g->time_ns;
    int pure = g->len == 0 && !(g->flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST)) &&
               (g->flags & QR_TCP_ACK);
    if (e == QR_TT_SENDER && (g->flags & QR_TCP_ACK)) {
        if (!F->have_ack || g->ack > F->high_ack) {
            F->have_ack = 1;
            F->high_ack = g->ack;
            F->dup = 0;
        } else if (pure && g->ack == F->high_ack && F->st[QR_TT_SENDER].high > g->ack) {
            F->dup++;
        }
        g->dupacks = F->dup;
    }
}

/* What sent a retransmission, from TCP's congestion state when it left. */
static qr_tt_trigger finish_trigger(struct finish *F, const qr_tt_segment *g)
{
    qr_tt_trigger trig;
    if ((g->flags & QR_TCP_SYN) || g->end == QR_TT_RECEIVER)
        trig = QR_TT_TRIG_RTO;
    else if (F->state == QR_TT_LOSS)
        trig = F->state_fresh ? QR_TT_TRIG_RTO : QR_TT_TRIG_AFTER_RTO;
    else if (F->state == QR_TT_RECOVERY)
        trig = F->state_fresh ? QR_TT_TRIG_FAST : QR_TT_TRIG_RECOVERY;
    else
        trig = QR_TT_TRIG_OTHER;
    if (g->end == QR_TT_SENDER && !(g->flags & QR_TCP_SYN))
        F->state_fresh = 0;
    return trig;
}

/* A segment end e sent (seq: its absolute sequence number): its packet, whether the recording
 * lost it, a retransmission's trigger, and how long a pure ACK was held. */
static int finish_tx(qr_tcp_trace *t, struct finish *F, qr_tt_segment *g, uint32_t seq,
                     const qr_recording *rec)
{
    qr_tt_summary *s = &t->sum;
    uint32_t e = g->end;
    uint64_t rel;
    int retx = qr_seq_step(&F->st[e], g->flags, seq, g->len, &rel);
    g->packet = qr_packet_id(2 * s->flow + e, F->sent[e]++);
    int64_t at;
    g->lost = rec && qr_recording_received(rec, g->packet, &at) != QR_OK;
    s->lost += g->lost;
    if (e == QR_TT_SENDER)
        g->dupacks = F->dup;
    if (retx) {
        qr_tt_trigger trig = finish_trigger(F, g);
        g->retx = (uint8_t)trig;
        s->retransmissions++;
        s->by_trigger[trig]++;
        if (trig == QR_TT_TRIG_FAST && F->dup > s->dupack_threshold)
            s->late_fast_retransmits++;
        if (qri_grow((void **)&F->traced[e], &F->cap_traced[e], F->n_traced[e],
                     sizeof *F->traced[e], 16))
            return QR_ENOMEM;
        F->traced[e][F->n_traced[e]++] = g->seq;
    }
    if (e == QR_TT_RECEIVER && g->len == 0 && (g->flags & QR_TCP_ACK) &&
        !(g->flags & (QR_TCP_SYN | QR_TCP_FIN | QR_TCP_RST))) {
        g->held_ns = F->unacked_rx[e] == INT64_MIN ? 0 : g->time_ns - F->unacked_rx[e];
        if (g->held_ns >= t->delack_ns) {
            g->delack = QR_TT_ACK_DELAYED;
            s->delayed_acks++;
            if (g->held_ns > s->max_held_ns)
                s->max_held_ns = g->held_ns;
        } else {
            g->delack = QR_TT_ACK_IMMEDIATE;
            s->immediate_acks++;
        }
    }
    if (g->flags & QR_TCP_ACK)
        F->unacked_rx[e] = INT64_MIN; /* everything received so far is acknowledged */
    return QR_OK;
}

/* Whether the traced retransmissions are the recording's, end by end. */
static int finish_compare(qr_tcp_trace *t, const struct finish *F, const qr_recording *rec)
{
    qr_tt_summary *s = &t->sum;
    s->recorded_retransmissions = 0;
    s->matches_recording = rec != NULL;
    for (uint32_t e = 0; rec && e < 2; e++) {
        uint64_t *recorded;
        size_t n_recorded;
        if (qr_recorded_retransmissions(rec, s->flow, e, &recorded, &n_recorded))
            return QR_ENOMEM;
        s->recorded_retransmissions += n_recorded;
        if (n_recorded != F->n_traced[e] ||
            (n_recorded && memcmp(recorded, F->traced[e], n_recorded * sizeof *recorded)))
            s->matches_recording = 0;
        free(recorded);
    }
    return QR_OK;
}

int qr_tcp_trace_finish(qr_tcp_trace *t, const qr_recording *rec, char *errbuf)
{
    if (t->nomem)
        return qri_err(errbuf, QR_ENOMEM, "flow %" PRIu32 ": out of memory tracing", t->sum.flow);
    uint32_t isn[2] = {0, 0};
    int rc = finish_alloc(t, isn, errbuf);
    if (rc)
        return rc;
    qr_tt_summary *s = &t->sum;
    memset(s->by_trigger, 0, sizeof s->by_trigger);
    s->retransmissions = s->late_fast_retransmits = s->lost = 0;
    s->delayed_acks = s->immediate_acks = 0;
    s->max_held_ns = 0;
    s->max_cwnd = s->min_ssthresh = -1;
    struct finish F = {.state = QR_TT_OPEN, .unacked_rx = {INT64_MIN, INT64_MIN}};
    for (size_t i = 0; !rc && i < t->n; i++) {
        const raw *r = &t->ev[i];
        if (r->is_var) {
            finish_var(t, &F, r->var);
            continue;
        }
        qr_tt_segment g = r->seg;
        uint32_t seq = (uint32_t)g.seq, ack = (uint32_t)g.ack;
        /* the sender of this segment: its end when sent, the other end when received */
        uint32_t from = g.dir == QR_TT_TX ? g.end : 1 - g.end;
        g.seq = (uint32_t)(seq - isn[from]);
        g.ack = (g.flags & QR_TCP_ACK) ? (uint32_t)(ack - isn[1 - from]) : 0;
        if (g.dir == QR_TT_RX)
            finish_rx(&F, &g);
        else
            rc = finish_tx(t, &F, &g, seq, rec);
        t->segs[t->n_segs++] = g;
    }
    s->segments = t->n_segs;
    s->var_changes = t->n_vars;
    if (!rc)
        rc = finish_compare(t, &F, rec);
    free(F.traced[0]);
    free(F.traced[1]);
    if (rc)
        return qri_err(errbuf, rc, "flow %" PRIu32 ": out of memory", s->flow);
    free(t->ev);
    t->ev = NULL;
    t->n = t->cap = 0;
    return QR_OK;
}

const qr_tt_segment *qr_tcp_trace_segments(const qr_tcp_trace *t, size_t *n)
{
    *n = t->n_segs;
    return t->segs;
}

const qr_tt_var_change *qr_tcp_trace_vars(const qr_tcp_trace *t, size_t *n)
{
    *n = t->n_vars;
    return t->vars;
}

const qr_tt_summary *qr_tcp_trace_summary(const qr_tcp_trace *t)
{
    return &t->sum;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) {                                                                                 \
            free(segs);                                                                            \
            free(vars);                                                                            \
            return rc_;                                                                            \
        }                                                                                          \
    } while (0)

int qr_tcp_trace_write(const qr_tcp_trace *t, qr_h5 *f, char *errbuf)
{
    static const char *const ack_kinds[] = {"", "immediate", "delayed"};
    qr_row_tt_segment *segs = calloc(t->n_segs ? t->n_segs : 1, sizeof *segs);
    qr_row_tt_var *vars = calloc(t->n_vars ? t->n_vars : 1, sizeof *vars);
    if (!segs || !vars) {
        free(segs);
        free(vars);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->n_segs; i++) {
        const qr_tt_segment *g = &t->segs[i];
        qr_row_tt_segment *r = &segs[i];
        r->time_ns = g->time_ns;
        qri_strlcpy(r->end, g->end == QR_TT_SENDER ? "sender" : "receiver", sizeof r->end);
        qri_strlcpy(r->dir, g->dir == QR_TT_TX ? "tx" : "rx", sizeof r->dir);
        r->flags = g->flags;
        r->seq = g->seq;
        r->ack = g->ack;
        r->len = g->len;
        r->window = g->window;
        qri_strlcpy(r->retx, qr_tt_trigger_name(g->retx), sizeof r->retx);
        r->lost = g->lost;
        qri_strlcpy(r->ack_kind, ack_kinds[g->delack <= 2 ? g->delack : 0], sizeof r->ack_kind);
        r->dupacks = g->dupacks;
        r->held_ns = g->held_ns;
        r->packet = g->dir == QR_TT_TX ? g->packet : 0;
    }
    for (size_t i = 0; i < t->n_vars; i++) {
        vars[i].time_ns = t->vars[i].time_ns;
        qri_strlcpy(vars[i].var, qr_tt_var_name((int)t->vars[i].var), sizeof vars[i].var);
        vars[i].value = t->vars[i].value;
    }
    const qr_tt_summary *s = &t->sum;
    char g[64], p[96];
    snprintf(g, sizeof g, "/tcp_trace/%" PRIu32, s->flow);
    TRY(qr_h5_group(f, g, errbuf));
    snprintf(p, sizeof p, "%s/segments", g);
    TRY(qr_h5_write_rows(f, p, &qr_schema_tt_segment, segs, t->n_segs, errbuf));
    snprintf(p, sizeof p, "%s/vars", g);
    TRY(qr_h5_write_rows(f, p, &qr_schema_tt_var, vars, t->n_vars, errbuf));
    TRY(qr_h5_attr_u64(f, g, "flow", s->flow, errbuf));
    TRY(qr_h5_attr_u64(f, g, "dupack_threshold", s->dupack_threshold, errbuf));
    TRY(qr_h5_attr_u64(f, g, "retransmissions", s->retransmissions, errbuf));
    TRY(qr_h5_attr_u64(f, g, "recorded_retransmissions", s->recorded_retransmissions, errbuf));
    TRY(qr_h5_attr_u64(f, g, "matches_recording", (uint64_t)s->matches_recording, errbuf));
    for (int k = 1; k < QR_TT_N_TRIGGERS; k++) {
        char name[40];
        snprintf(name, sizeof name, "retx_%s", trigger_names[k]);
        TRY(qr_h5_attr_u64(f, g, name, s->by_trigger[k], errbuf));
    }
    TRY(qr_h5_attr_u64(f, g, "late_fast_retransmits", s->late_fast_retransmits, errbuf));
    TRY(qr_h5_attr_u64(f, g, "lost", s->lost, errbuf));
    TRY(qr_h5_attr_u64(f, g, "delayed_acks", s->delayed_acks, errbuf));
    TRY(qr_h5_attr_u64(f, g, "immediate_acks", s->immediate_acks, errbuf));
    TRY(qr_h5_attr_i64(f, g, "delack_threshold_ns", t->delack_ns, errbuf));
    free(segs);
    free(vars);
    return QR_OK;
}

void qr_tcp_trace_destroy(qr_tcp_trace *t)
{
    if (!t)
        return;
    free(t->ev);
    free(t->segs);
    free(t->vars);
    free(t);
}
