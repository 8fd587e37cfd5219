/* qreplay internal: the diagnosis's state, shared by its modules: the whole recording
 * (diagnose.c), the connection model's rows (diagnose_conn.c), the replay's arrivals
 * (diagnose_arrivals.c) and the HDF5 result (diagnose_write.c). */
#ifndef QREPLAY_DIAGNOSE_INTERNAL_H
#define QREPLAY_DIAGNOSE_INTERNAL_H

#include <stdint.h>

#include "internal.h"
#include "map.h"
#include "qreplay/blackhole.h"
#include "qreplay/diagnose.h"
#include "qreplay/krec_recording.h"
#include "qreplay/tcpconn.h"

typedef struct {
    const qr_rec_packet *pk;
    int64_t tx; /* send time, on the reconciled clock (the hosts' estimated offsets out) */
    int64_t rx; /* arrival time at the other end, likewise; -1: no record */
} dpkt;

struct host_busy;

typedef struct qri_diag_ctx {
    const qr_recording *rec;
    const qr_krec_set *krec; /* diagnosing from kernel records: the set rec is made from */
    const qr_scenario *s;
    const qr_config *c;
    const qr_flow_table *ft;
    qr_topology *topo;
    uint32_t *dir_first, *dir_count; /* into idx */
    const qr_rec_packet **idx;       /* packets of every direction, in recorded order */
    dpkt *buf;                       /* scratch: a direction's packets */
    size_t buf_cap;
    int64_t delack_ns; /* a hold this long is the delayed-ACK timer's (0: unknown) */
    /* evidence being collected (NULL: not collecting) */
    qr_diag_event **events;
    size_t *n_events, *cap_events;
    /* replay arrivals */
    qri_map drops; /* packet id -> struct drop_at */
    int have_drops;
    qr_blackhole_detector *bh; /* owns episodes */
    const qr_blackhole *episodes;
    size_t n_episodes;
    /* per host, made when first needed: when its link was busy sending (merged intervals of
     * true time, with the busy time before each) */
    struct host_busy *busy;
    uint32_t hosts;
    int64_t *off; /* per host: its clock's offset, taken out of its times (the reconciled
                   * estimate; imports were reconciled when imported) */
    /* the connection model (tcpconn.h) */
    qr_tc_cfg tcfg;
    int imported;
    int64_t rec_end_ns; /* the last packet's time in the recording (sent or received) */
    qr_tc_pkt *tp[2];
    const qr_rec_packet **tp_rec[2];
    size_t tp_cap[2];
    qr_diagnosis *out;
    size_t cap_exchanges;
} qri_diag_ctx;

struct host_busy {
    int made;
    size_t n;
    int64_t *start, *end, *before; /* before[i]: busy ns in the intervals ahead of i */
};

struct drop_at {
    uint32_t sw, port;
    int64_t time_ns;
};

typedef struct {
    uint32_t sw, port;
    int64_t sum_ns;
} hop_sum;

#define HOPS_MAX 8

typedef struct {
    hop_sum hop[HOPS_MAX];
    uint32_t n_hop;
    int64_t total_ns;
    uint64_t arrivals;
} flow_q;

/* An event of flow f into the evidence being collected (none while x->events is NULL). */
int qri_diag_add_event(qri_diag_ctx *x, uint32_t flow, qr_diag_event_kind kind, int64_t t,
                       uint64_t packet, uint64_t tcp_seq, int64_t value, uint32_t sw,
                       uint32_t port);

/* Flow f's row, from the connection model (both directions, every exchange), and in the first
 * pass its exchanges into x->out->exchanges. */
int qri_diag_analyse_conn(qri_diag_ctx *x, uint32_t f, qr_diag_flow *o, int first_pass);

/* Flow f's connection model from the kernel records x->krec (diagnose_krec.c): dirs its packets
 * as the model takes them, c (free with qr_tc_conn_free, also on error). */
int qri_diag_krec_conn(qri_diag_ctx *x, uint32_t f, qr_tc_dir dirs[2], qr_tc_conn *c);

/* From the first of `bytes` leaving src to the last arriving at dst, alone on the empty network
 * (the scenario's topology and links): segments of mss payload and hdr header bytes back to back
 * at the link rate, the last one store-and-forward at every hop. */
int64_t qri_diag_transfer_ideal(const qri_diag_ctx *x, uint32_t src, uint32_t dst, uint64_t bytes,
                                uint32_t mss, uint32_t hdr);

/* One read of the replay's arrival log: drops of the selected flows (sel_of[f] >= 0) into
 * x->drops, their data's queueing per hop into fq, every arrival into the blackhole detector. */
int qri_diag_read_arrivals(qri_diag_ctx *x, qr_diagnosis *out, const int32_t *sel_of, flow_q *fq,
                           qr_blackhole_detector *bh, char *errbuf);

/* A blackhole episode as the result's row. */
void qri_diag_blackhole_row(const qr_blackhole *e, qr_row_diag_blackhole *r);

/* Figure 9's queues and every arrival at them within their windows (a second read). */
int qri_diag_blackhole_series(qr_diagnosis *out, char *errbuf);

#endif
