/* The native open-loop replay engine (replay.h): a discrete-event simulation of the replay
 * network, event for event what the ns-3 replay schedules.
 *
 * Events are ordered by (time, sequence number), the sequence number given when an event is
 * scheduled, as ns-3's scheduler orders them. Each handler schedules what its ns-3 counterpart
 * schedules, in the same order:
 *  - SEND(h): host h injects every packet now due; a NIC that is free starts at once
 *    (TransmitStart: the end of the transmission, then the arrival at the far end); then the
 *    host's next SEND;
 *  - TXDONE(d): device d's last bit left: a switch port releases the packet's bytes; the device
 *    starts its next packet, if any;
 *  - RECV(d, p): packet p reached device d: a host counts it; a switch routes it and holds it for
 *    FLUSH (scheduled at the first such arrival in a nanosecond, so after every event already due
 *    then, as the ns-3 module's FabricSwitch does);
 *  - FLUSH(s): the packets switch s received this nanosecond, by packet id, each in turn: TTL,
 *    the admission decision at its egress queue (the arrival log), and a transmission if the port
 *    is free.
 * Memory holds the packets in flight and the events pending; each host's packets are read from
 * the recording one by one as they become due.
 *
 * Only SEND and TXDONE events go through the heap. Every link has the same delay, so the RECV of
 * a transmission, scheduled right after its TXDONE (the next sequence number) at its time plus the
 * delay, falls in the same order among RECVs as its TXDONE among TXDONEs: it joins a FIFO when its
 * TXDONE is taken. A FLUSH is scheduled at the current time, after every event already due then:
 * a FIFO too. The next event is the least (time, sequence number) of the three heads, exactly the
 * heap's order. */
#include "qreplay/replay.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "qreplay/buffer.h"
#include "qreplay/flowtable.h"
#include "qreplay/pcap_file.h"
#include "qreplay/queuelog.h"
#include "qreplay/topology.h"
#include "qreplay/units.h"

void qr_replay_out_free(qr_replay_out *out)
{
    if (!out)
        return;
    free(out->sent);
    free(out->sent_bytes);
    free(out->drops);
    memset(out, 0, sizeof *out);
}

enum { EV_SEND, EV_TXDONE, EV_RECV, EV_FLUSH };

typedef struct event {
    int64_t t;
    uint64_t seq;
    uint32_t kind, a, b;
} event;

#define NIL UINT32_MAX

typedef struct pkt {
    uint64_t id;
    int64_t due; /* injection time (hosts' NICs) */
    qr_five_tuple ft;
    uint32_t flow;
    uint32_t next; /* FIFO link */
    uint16_t ip_len, host_bytes;
    uint8_t ttl, tag;
} pkt;

typedef struct device {
    uint32_t head, tail; /* FIFO of packets waiting (not the one on the wire) */
    uint32_t peer;       /* the device at the other end */
    uint32_t sw, port;   /* NIL for a host's NIC */
    uint32_t cur_bytes;  /* switch port: the packet on the wire */
    uint32_t cur_flow;
    uint8_t busy;
} device;

typedef struct pending {
    uint64_t key;
    uint32_t order, pkt, port;
} pending;

typedef struct swstate {
    qr_buffer *buf;
    uint32_t first_dev; /* its port p is device first_dev + p */
    pending *pend;
    size_t n_pend, cap_pend;
    uint32_t arrivals; /* ns-3's per-switch arrival counter: the tie-break of equal keys */
    uint8_t flush_scheduled;
} swstate;

/* Events in (time, sequence number) order, in a ring (capacity a power of two). */
typedef struct evring {
    event *v;
    size_t cap, head, n;
} evring;

typedef struct engine {
    const qr_config *c;
    const qr_recording *rec;
    qr_source *src;
    const qr_replay_opts *o;
    qr_replay_out *out;
    qr_topology *topo;
    uint32_t hosts, switches, n_dev;
    device *dev;
    swstate *sw;
    qr_queue_flows **flows; /* per switch device */
    /* events: SEND and TXDONE in a 4-ary heap, RECV and FLUSH in FIFOs */
    event *heap;
    size_t n_ev, cap_ev;
    evring recv, flush;
    uint64_t seq;
    int64_t now;
    /* packets */
    pkt *pk;
    uint32_t n_pk, free_pk;
    size_t cap_pk;
    size_t alive;
    qr_arrival_writer *log;
    size_t cap_drops;
    int64_t *tx_cache; /* qr_link_tx_ns of every wire size, -1 until computed */
    uint64_t tick;
    double wall_start, last_progress;
    char *err;
    int rc;
} engine;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int ev_less(const event *x, const event *y)
{
    return x->t != y->t ? x->t < y->t : x->seq < y->seq;
}

/* The events: a 4-ary heap on (time, sequence number), shallower than a binary one (fewer cache
 * lines touched per pop, its four children side by side). */
static int schedule(engine *e, int64_t t, uint32_t kind, uint32_t a, uint32_t b)
{
    if (qri_grow((void **)&e->heap, &e->cap_ev, e->n_ev, sizeof *e->heap, 1024))
        return qri_err(e->err, QR_ENOMEM, "replay: out of memory (events)");
    event ev = {t, e->seq++, kind, a, b};
    size_t i = e->n_ev++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!ev_less(&ev, &e->heap[p]))
            break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = ev;
    return 0;
}

static int ring_push(engine *e, evring *r, event ev)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        event *v = malloc(cap * sizeof *v);
        if (!v)
            return qri_err(e->err, QR_ENOMEM, "replay: out of memory (events)");
        for (size_t i = 0; i < r->n; i++)
            v[i] = r->v[(r->head + i) & (r->cap - 1)];
        free(r->v);
        r->v = v;
        r->cap = cap;
        r->head = 0;
    }
    r->v[(r->head + r->n++) & (r->cap - 1)] = ev;
    return 0;
}

static event ring_pop(evring *r)
{
    event ev = r->v[r->head];
    r->head = (r->head + 1) & (r->cap - 1);
    r->n--;
    return ev;
}

static event pop(engine *e)
{
    event top = e->heap[0], last = e->heap[--e->n_ev];
    size_t i = 0, n = e->n_ev;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t m = c, end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (ev_less(&e->heap[k], &e->heap[m]))
                m = k;
        if (!ev_less(&e->heap[m], &last))
            break;
        e->heap[i] = e->heap[m];
        i = m;
    }
    if (n)
        e->heap[i] = last;
    return top;
}

static uint32_t pkt_new(engine *e)
{
    uint32_t i;
    if (e->free_pk != NIL) {
        i = e->free_pk;
        e->free_pk = e->pk[i].next;
    } else {
        if (e->n_pk == UINT32_MAX - 1 ||
            qri_grow((void **)&e->pk, &e->cap_pk, e->n_pk, sizeof *e->pk, 1024))
            return NIL;
        i = e->n_pk++;
    }
    if (++e->alive > e->out->peak_in_flight)
        e->out->peak_in_flight = e->alive;
    return i;
}

static void pkt_free(engine *e, uint32_t i)
{
    e->pk[i].next = e->free_pk;
    e->free_pk = i;
    e->alive--;
}

static int64_t tx_ns(engine *e, uint32_t wire_bytes)
{
    if (e->tx_cache[wire_bytes] < 0)
        e->tx_cache[wire_bytes] = qr_link_tx_ns(wire_bytes, e->c->links.rate_bps);
    return e->tx_cache[wire_bytes];
}

static void fifo_push(engine *e, device *d, uint32_t p)
{
    e->pk[p].next = NIL;
    if (d->tail == NIL)
        d->head = p;
    else
        e->pk[d->tail].next = p;
    d->tail = p;
}

static uint32_t fifo_pop(engine *e, device *d)
{
    uint32_t p = d->head;
    if (p != NIL) {
        d->head = e->pk[p].next;
        if (d->head == NIL)
            d->tail = NIL;
    }
    return p;
}

static void report_progress(engine *e)
{
    double now = wall_now();
    if (now - e->last_progress >= 0.5) {
        e->last_progress = now;
        e->o->progress(e->o->progress_ctx, e->now, now - e->wall_start, e->out->events);
    }
}

/* Device di starts sending packet p now (PointToPointNetDevice::TransmitStart). */
static int transmit_start(engine *e, uint32_t di, uint32_t p)
{
    device *d = &e->dev[di];
    pkt *x = &e->pk[p];
    uint32_t bytes;
    d->busy = 1;
    if (d->sw == NIL) { /* a host's NIC: PhyTxBegin */
        uint32_t h = di;
        bytes = x->host_bytes;
        e->out->sent[h]++;
        e->out->sent_bytes[h] += bytes;
        int64_t late = e->now - x->due;
        if (late > e->out->max_late_ns)
            e->out->max_late_ns = late;
        if (++e->tick % 4096 == 0) {
            if (e->o->cancel && *e->o->cancel)
                e->out->cancelled = 1;
            if (e->o->progress)
                report_progress(e);
        }
    } else {
        bytes = x->ip_len;
        d->cur_bytes = bytes;
        d->cur_flow = x->flow;
    }
    int64_t t = tx_ns(e, bytes + QR_LINK_OVERHEAD_BYTES);
    int rc = schedule(e, e->now + t, EV_TXDONE, di, p);
    e->seq++; /* the RECV's, scheduled with it: it joins its FIFO when the TXDONE is taken */
    return rc;
}

static int on_txdone(engine *e, const event *ev)
{
    uint32_t di = ev->a;
    device *d = &e->dev[di];
    int rc = ring_push(e, &e->recv,
                       (event){ev->t + e->c->links.delay_ns, ev->seq + 1, EV_RECV, d->peer, ev->b});
    if (rc)
        return rc;
    d->busy = 0;
    if (d->sw != NIL) { /* PhyTxEnd: the packet's bytes leave the buffer */
        qr_buffer_release(e->sw[d->sw].buf, d->port, d->cur_bytes);
        qr_queue_flows_remove(e->flows[di], d->cur_flow, d->cur_bytes);
    }
    uint32_t p = fifo_pop(e, d);
    return p == NIL ? 0 : transmit_start(e, di, p);
}

/* What ns-3 would do differently from this engine: refuse it (as the packet comes to be injected:
 * a source may be a stream). */
static int check_packet(const qr_rec_packet *p, uint32_t h, char *err)
{
    uint16_t len = p->pk.ip_len;
    if (len <= QR_MTU_BYTES && len >= 20)
        return QR_OK;
    return qri_err(err, QR_EVALUE,
                   "host %u, packet #%u of direction %u: IP length %u is %s; the native engine "
                   "does not model it (ns-3 would %s it): replay with --engine ns3",
                   h, p->seq, p->dir, len,
                   len < 20 ? "below an IP header" : "above the links' 1500-byte MTU",
                   len < 20 ? "fail to parse" : "fragment");
}

static int on_send(engine *e, uint32_t h)
{
    qr_injection in;
    int rc;
    while ((rc = e->src->next(e->src, h, &in, e->err)) == QR_OK && in.p) {
        const qr_rec_packet *rp = in.p;
        int64_t due = qr_injection_due(&in);
        if (due > e->now)
            break;
        if ((rc = check_packet(rp, h, e->err)) != QR_OK)
            return rc;
        uint32_t p = pkt_new(e);
        if (p == NIL)
            return qri_err(e->err, QR_ENOMEM, "replay: out of memory (packets)");
        pkt *x = &e->pk[p];
        size_t hdr =
            QR_PCAP_CAPLEN + (rp->pk.tcp_opt_len > QR_TCP_OPTIONS_MAX ? QR_TCP_OPTIONS_MAX
                                                                      : rp->pk.tcp_opt_len & ~3u);
        x->id = qr_packet_id(rp->dir, rp->seq);
        x->due = due;
        x->ft = (qr_five_tuple){.src_ip = rp->pk.src_ip,
                                .dst_ip = rp->pk.dst_ip,
                                .src_port = rp->pk.src_port,
                                .dst_port = rp->pk.dst_port,
                                .proto = rp->pk.proto};
        if (rp->pk.proto != 6 && rp->pk.proto != 17)
            x->ft.src_port = x->ft.dst_port = 0;
        x->flow = rp->dir;
        x->ip_len = rp->pk.ip_len;
        x->host_bytes = (uint16_t)(rp->pk.ip_len > hdr ? rp->pk.ip_len : hdr);
        x->ttl = rp->pk.ttl ? rp->pk.ttl : 64;
        x->tag = e->o->mode == QR_MODE_TAGGED ? rp->drop_tag : 0;
        e->src->take(e->src, h);
        device *d = &e->dev[h];
        if (d->busy) {
            fifo_push(e, d, p);
        } else if ((rc = transmit_start(e, h, p)) != QR_OK) {
            return rc;
        }
    }
    if (rc)
        return rc;
    if (in.p)
        return schedule(e, qr_injection_due(&in), EV_SEND, h, 0);
    return 0;
}

static int on_recv(engine *e, uint32_t di, uint32_t p)
{
    device *d = &e->dev[di];
    if (d->sw == NIL) { /* a host swallows it */
        e->out->delivered++;
        pkt_free(e, p);
        return 0;
    }
    swstate *s = &e->sw[d->sw];
    uint32_t port;
    if (qr_topology_route(e->topo, d->sw, &e->pk[p].ft, &port) != 0 ||
        port >= qr_topology_ports(e->topo, d->sw)) {
        e->out->other_drops++; /* unroutable: the ns-3 switch drops it */
        pkt_free(e, p);
        return 0;
    }
    if (qri_grow((void **)&s->pend, &s->cap_pend, s->n_pend, sizeof *s->pend, 16))
        return qri_err(e->err, QR_ENOMEM, "replay: out of memory");
    s->pend[s->n_pend++] =
        (pending){qr_same_time_key(1, e->pk[p].id, NULL, 0), s->arrivals++, p, port};
    if (!s->flush_scheduled) {
        s->flush_scheduled = 1;
        return ring_push(e, &e->flush, (event){e->now, e->seq++, EV_FLUSH, d->sw, 0});
    }
    return 0;
}

static int cmp_pending(const void *a, const void *b)
{
    const pending *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int add_drop(engine *e, const qr_arrival *a)
{
    qr_replay_out *o = e->out;
    if (qri_grow((void **)&o->drops, &e->cap_drops, o->n_drops, sizeof *o->drops, 256))
        return qri_err(e->err, QR_ENOMEM, "replay: out of memory (drops)");
    qr_drop_row_of(a, &o->drops[o->n_drops++]);
    return 0;
}

/* Packet p joins egress `port` of switch sw (SharedBufferQueueDisc::DoEnqueue). */
static int enqueue(engine *e, uint32_t swi, uint32_t port, uint32_t p)
{
    swstate *s = &e->sw[swi];
    uint32_t di = s->first_dev + port;
    pkt *x = &e->pk[p];
    qr_buffer *b = s->buf;
    qr_arrival a = {0};
    a.packet = x->id;
    a.time_ns = e->now;
    a.sw = swi;
    a.port = port;
    a.bytes = x->ip_len;
    a.tagged = x->tag;
    a.queue_bytes = qr_buffer_queue(b, port);
    a.total_bytes = qr_buffer_total(b);
    a.threshold = qr_buffer_threshold(b);
    a.n_flows = (uint16_t)qr_queue_flows_snapshot(e->flows[di], &a.flows);
    qr_decision dec;
    qr_buffer_admit(b, port, x->ip_len, e->o->mode, x->tag, e->o->margin_bytes, &dec);
    a.decision = (uint8_t)dec;
    e->out->packet_hops++;
    int rc = 0;
    if (e->log && (rc = qr_arrival_write(e->log, &a, e->err)) != 0)
        return rc;
    if (dec != QR_ADMIT) {
        rc = add_drop(e, &a);
        pkt_free(e, p);
        return rc;
    }
    if (qr_queue_flows_add(e->flows[di], x->flow, x->ip_len))
        return qri_err(e->err, QR_ENOMEM, "replay: out of memory (queue flows)");
    device *d = &e->dev[di];
    if (d->busy) {
        fifo_push(e, d, p);
        return 0;
    }
    return transmit_start(e, di, p);
}

static int on_flush(engine *e, uint32_t swi)
{
    swstate *s = &e->sw[swi];
    s->flush_scheduled = 0;
    if (s->n_pend > 1)
        qsort(s->pend, s->n_pend, sizeof *s->pend, cmp_pending);
    size_t n = s->n_pend;
    s->n_pend = 0;
    for (size_t i = 0; i < n; i++) {
        pending pd = s->pend[i];
        pkt *x = &e->pk[pd.pkt];
        x->ttl--; /* FabricSwitch::Forward */
        if (x->ttl == 0) {
            e->out->other_drops++;
            pkt_free(e, pd.pkt);
            continue;
        }
        int rc = enqueue(e, swi, pd.port, pd.pkt);
        if (rc)
            return rc;
    }
    return 0;
}

static int build(engine *e, const qr_scenario *s, char *err)
{
    const qr_config *c = e->c;
    int rc = qr_topology_of_config(&e->topo, c);
    if (rc)
        return qri_err(err, QR_EVALUE, "replay: the scenario's network cannot be built");
    (void)s;
    e->hosts = qr_topology_hosts(e->topo);
    e->switches = qr_topology_switches(e->topo);
    if (e->hosts != qr_recording_hosts(e->rec))
        return qri_err(err, QR_EVALUE, "the scenario's network has %u hosts, the recording %u",
                       e->hosts, qr_recording_hosts(e->rec));
    e->n_dev = e->hosts;
    e->sw = calloc(e->switches, sizeof *e->sw);
    if (!e->sw)
        return qri_err(err, QR_ENOMEM, "replay: out of memory");
    for (uint32_t w = 0; w < e->switches; w++) {
        e->sw[w].first_dev = e->n_dev;
        e->n_dev += qr_topology_ports(e->topo, w);
    }
    e->dev = calloc(e->n_dev, sizeof *e->dev);
    e->flows = calloc(e->n_dev, sizeof *e->flows);
    e->out->sent = calloc(e->hosts, sizeof *e->out->sent);
    e->out->sent_bytes = calloc(e->hosts, sizeof *e->out->sent_bytes);
    e->tx_cache = malloc((65536 + 64) * sizeof *e->tx_cache);
    if (!e->dev || !e->flows || !e->out->sent || !e->out->sent_bytes || !e->tx_cache)
        return qri_err(err, QR_ENOMEM, "replay: out of memory");
    memset(e->tx_cache, 0xff, (65536 + 64) * sizeof *e->tx_cache);
    e->out->n_hosts = e->hosts;
    for (uint32_t i = 0; i < e->n_dev; i++)
        e->dev[i] = (device){NIL, NIL, NIL, NIL, NIL, 0, 0, 0};
    for (uint32_t w = 0; w < e->switches; w++) {
        uint32_t ports = qr_topology_ports(e->topo, w);
        qr_buffer_cfg bc = {c->buffer.size_bytes, c->buffer.alpha, ports,
                            (qr_buffer_policy)c->buffer.policy, c->buffer.port_size_bytes};
        if (qr_buffer_create(&e->sw[w].buf, &bc))
            return qri_err(err, QR_EVALUE, "replay: switch %u: invalid buffer settings", w);
        for (uint32_t p = 0; p < ports; p++) {
            uint32_t di = e->sw[w].first_dev + p;
            qr_node_kind kind;
            uint32_t peer, peer_port;
            qr_topology_link(e->topo, w, p, &kind, &peer, &peer_port);
            e->dev[di].sw = w;
            e->dev[di].port = p;
            e->dev[di].peer = kind == QR_NODE_HOST ? peer : e->sw[peer].first_dev + peer_port;
            if (kind == QR_NODE_HOST)
                e->dev[peer].peer = di;
            if (qr_queue_flows_create(&e->flows[di]))
                return qri_err(err, QR_ENOMEM, "replay: out of memory");
        }
    }
    return QR_OK;
}

static void teardown(engine *e)
{
    if (e->sw)
        for (uint32_t w = 0; w < e->switches; w++) {
            qr_buffer_destroy(e->sw[w].buf);
            free(e->sw[w].pend);
        }
    if (e->flows)
        for (uint32_t i = 0; i < e->n_dev; i++)
            qr_queue_flows_destroy(e->flows[i]);
    free(e->sw);
    free(e->flows);
    free(e->dev);
    free(e->heap);
    free(e->recv.v);
    free(e->flush.v);
    free(e->pk);
    free(e->tx_cache);
    qr_topology_destroy(e->topo);
}

/* The least of the heap's, the RECV FIFO's and the FLUSH FIFO's first events; 0 when none is
 * left. */
static int next_event(engine *e, event *out)
{
    const event *best = e->n_ev ? &e->heap[0] : NULL;
    evring *from = NULL;
    if (e->recv.n && (!best || ev_less(&e->recv.v[e->recv.head], best))) {
        best = &e->recv.v[e->recv.head];
        from = &e->recv;
    }
    if (e->flush.n && (!best || ev_less(&e->flush.v[e->flush.head], best))) {
        best = &e->flush.v[e->flush.head];
        from = &e->flush;
    }
    if (!best)
        return 0;
    *out = from ? ring_pop(from) : pop(e);
    return 1;
}

int qr_replay_native(void *ctx, const qr_scenario *s, const qr_recording *rec, qr_source *src,
                     const qr_replay_opts *opts, qr_replay_out *out, char *errbuf)
{
    (void)ctx;
    if (!s || !rec || !src || !opts || !out)
        return qri_err(errbuf, QR_EINVAL, "replay: missing argument");
    engine e = {0};
    e.c = qr_scenario_config(s);
    e.rec = rec;
    e.src = src;
    e.o = opts;
    e.out = out;
    e.err = errbuf;
    e.free_pk = NIL;
    e.wall_start = e.last_progress = wall_now();
    int rc = build(&e, s, errbuf);
    if (!rc && opts->arrivals_path)
        rc = qr_arrival_writer_open(&e.log, opts->arrivals_path, errbuf);
    if (!rc && e.log)
        rc = qr_arrival_writer_set_recording(e.log, qr_recording_id(rec));
    for (uint32_t h = 0; !rc && h < e.hosts; h++) {
        qr_injection first;
        if ((rc = src->next(src, h, &first, errbuf)) == QR_OK && first.p)
            rc = schedule(&e, qr_injection_due(&first), EV_SEND, h, 0);
    }
    event ev;
    while (!rc && next_event(&e, &ev) && !out->cancelled) {
        e.now = ev.t;
        out->events++;
        switch (ev.kind) {
        case EV_SEND: rc = on_send(&e, ev.a); break;
        case EV_TXDONE: rc = on_txdone(&e, &ev); break;
        case EV_RECV: rc = on_recv(&e, ev.a, ev.b); break;
        default: rc = on_flush(&e, ev.a); break;
        }
    }
    out->end_ns = e.now;
    out->wall_s = wall_now() - e.wall_start;
    if (e.log) {
        char cerr[QR_ERRBUF_SIZE];
        int crc = qr_arrival_writer_close(e.log, cerr);
        if (!rc && crc) {
            rc = crc;
            qri_strlcpy(errbuf, cerr, QR_ERRBUF_SIZE);
        }
    }
    teardown(&e);
    return rc;
}
