/* qreplay internal: the import's state, shared by its modules: the pass over the captures
 * (import_run.c), matching each packet at its two ends (import_match.c), the set-up from the
 * first pass's scan (import_setup.c), the clocks (import_clock.c) and the recording's HDF5 file
 * (import_write.c). */
#ifndef QREPLAY_IMPORT_INTERNAL_H
#define QREPLAY_IMPORT_INTERNAL_H

#include <stdint.h>

#include "internal.h"
#include "map.h"
#include "qreplay/capture.h"
#include "qreplay/import.h"
#include "qreplay/pcap_file.h"
#include "qreplay/topology.h"
#include "qreplay/units.h"

typedef struct ring {
    uint8_t *v;
    size_t head, n, cap, size;
} ring;

struct sent_ent {
    uint64_t key;
    uint32_t seq;
    uint16_t ip_id, ip_len;
    int64_t time;      /* first bit, sender's clock (rebased) */
    uint8_t seq_space; /* it carries sequence space (payload, SYN or FIN): a sender resends it */
};

struct recv_ent {
    uint64_t key;
    uint16_t ip_id;
    int64_t time; /* last bit, receiver's clock (rebased) */
};

struct rtx_ent {
    uint32_t start, end; /* TCP sequence range (SYN and FIN count one) */
    uint32_t seq;        /* the packet's number */
    uint8_t lost;
};

/* Bytes a receiver-only direction is missing: [lo, hi), opened by a segment with these IP ID and
 * TCP timestamp. */
struct hole {
    uint32_t lo, hi;
    uint16_t id_after;
    uint32_t ts_after;
    uint8_t has_ts;
};
#define QR_IMPORT_HOLES_MAX 16

struct dir_state {
    uint32_t src, dst; /* hosts */
    uint8_t evidence, family;
    uint32_t next_seq;
    ring sent, recv, rtx;
    ring late; /* sent, passed over by a later segment's arrival: overtaken or lost */
    uint8_t have_hi;
    uint8_t cls_have; /* the sender's IP IDs, every captured packet (qr_ipid_stats) */
    uint16_t cls_id;
    uint32_t cls_prev_pay; /* the previous packet's payload */
    uint32_t hi;           /* receiver only: the highest sequence received */
    uint8_t ids_count_up;  /* its sender numbers IP IDs up (a counter per connection or per host):
                              they order its packets */
    struct hole holes[QR_IMPORT_HOLES_MAX];
    size_t n_holes;
    int64_t last_send;
    uint64_t drops;
};

struct flow_times {
    int64_t first, last; /* rebased, on the clock of first_host / last_host */
    uint32_t first_h, last_h;
};

struct cap_state {
    qr_capture *c;
    qr_capture_packet next;
    int has_next;
    uint32_t *view; /* the hosts it holds in view, sorted */
    size_t n_view;
    int64_t last_time;
};

struct imp {
    const qr_import_cfg *cfg;
    const qr_config *conf;
    uint64_t nic_bps; /* the rate a host's NIC serializes what its capture shows (below) */
    qr_topology *topo;
    qr_import_scan *scan;
    qr_flow_table *ft;
    int64_t *flow_of_conn; /* -1: left out */
    size_t n_flows;
    struct dir_state *dirs;
    struct flow_times *ftimes;
    uint32_t n_hosts;
    qr_pcap_writer **w;
    int64_t *nic_free;
    int32_t *host_last_id; /* the last IPv4 ID a host sent, in capture time order; -1 none */
    int32_t *cap_of_host;  /* the capture a host's packets come from, -1 none */
    uint8_t *reconstructed;
    qri_map dir_index; /* directional 5-tuple -> conn * 2 + side + 1 */
    qri_map owd;       /* (sender host, receiver host) -> min one-way delay + 1 (stored as ptr) */
    struct cap_state *caps;
    qr_capture_packet *segs;
    size_t segs_cap;
    qr_row_detected *det;
    size_t n_det, cap_det;
    qr_row_received *recv;
    size_t n_recv, cap_recv;
    qr_row_received *late; /* /import/late: late originals at a receiver-only direction */
    size_t n_late, cap_late;
    qr_import_report *rep;
    char tmp[QR_PATH_MAX + 64];
    uint64_t packets_seen;
    char *errbuf;
};

/* Time arithmetic on captured timestamps ([0, 2^62] ns, rebased) and values derived from them:
 * computed in 128 bits and kept within +-2^62, so no sum or difference of two of them overflows. */
static inline int64_t clamp62(__int128 v)
{
    const __int128 lim = (__int128)1 << 62;
    return (int64_t)(v > lim ? lim : v < -lim ? -lim : v);
}

static inline int64_t wire_ns(const struct imp *m, uint32_t ip_len)
{
    return qri_wire_ns((uint64_t)ip_len + QR_LINK_OVERHEAD_BYTES, m->nic_bps);
}

/* import_match.c */
/* The direction of a captured packet (its connection * 2 + side), -1 if none. */
int64_t qri_imp_find_dir(struct imp *m, const qr_capture_packet *p);
/* The directional 5-tuples of the connections kept into m->dir_index. */
int qri_imp_index_dirs(struct imp *m);
/* Host host's trace writer, opened when first needed. */
int qri_imp_writer(struct imp *m, uint32_t host, qr_pcap_writer **out);
/* A packet of direction dir in its sender's capture, and in its receiver's. */
int qri_imp_on_send(struct imp *m, uint32_t dir, qr_capture_packet *p);
int qri_imp_on_receive(struct imp *m, uint32_t dir, qr_capture_packet *p);
/* What is left in every direction once the captures end. */
int qri_imp_finish_dirs(struct imp *m);

/* import_setup.c: the state for the flows the scan kept. */
int qri_imp_setup(struct imp *m);

/* import_clock.c */
void qri_imp_free_owd(uint64_t a, uint64_t b, void *value, void *ctx);
int qri_imp_shift_pcaps(struct imp *m, const int64_t *shift);
int64_t qri_imp_offset_ns(const qr_clock_estimate *e);
int qri_imp_reconcile(struct imp *m, int64_t *shift);

/* import_write.c: the recording's HDF5 file. */
int qri_imp_write_h5(struct imp *m, const qr_scenario *sc, const int64_t *shift);

#endif
