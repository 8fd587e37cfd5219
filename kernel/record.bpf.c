/* The kernel recorder's BPF program (qreplay record): TCP's events on the network namespaces in
 * `recorded`, as
 * fixed-size records (record_events.h) in a ring buffer. Attached to tracepoints only (no kprobe,
 * no fentry), read through BTF (CO-RE). It does no reduction: the agent (krec_agent.c) hands every
 * event to the core's kernel-record writer. An event the ring buffer has no room for is counted in
 * `lost`, never dropped silently. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "record_events.h"

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6

char LICENSE[] SEC("license") = "GPL";

struct
{
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 22);
} events SEC(".maps");

/* [1]: events lost (no room, or a packet whose headers could not be read); [0] unused */
struct
{
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u64);
} state SEC(".maps");

/* A socket's ends as last seen with both ports (a closed socket's local port is reset, and the
 * application may read what arrived before the close after it). */
struct ends
{
    __u8 laddr[16], raddr[16];
    __u16 lport, rport;
    __u8 family;
};

struct
{
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 65536);
    __type(key, __u64);
    __type(value, struct ends);
} sock_ends_of SEC(".maps");

static __always_inline void
remember(const void* sk, const struct qr_kev* e)
{
    struct ends v;
    __builtin_memcpy(v.laddr, e->laddr, 16);
    __builtin_memcpy(v.raddr, e->raddr, 16);
    v.lport = e->lport;
    v.rport = e->rport;
    v.family = e->family;
    __u64 k = (__u64)sk;
    bpf_map_update_elem(&sock_ends_of, &k, &v, BPF_ANY);
}

/* The network namespaces recorded (their inode numbers), each the agent's index of its record. */
struct
{
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, __u32);
} recorded SEC(".maps");

static __always_inline int
wanted(__u32 netns)
{
    return bpf_map_lookup_elem(&recorded, &netns) != 0;
}

static __always_inline struct qr_kev*
reserve(void)
{
    struct qr_kev* e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
    if (!e)
    {
        __u32 k = 1;
        __u64* v = bpf_map_lookup_elem(&state, &k);
        if (v)
            __sync_fetch_and_add(v, 1);
        return 0;
    }
    __builtin_memset(e, 0, sizeof *e);
    e->t_ns = bpf_ktime_get_ns();
    return e;
}

static __always_inline __u32
sock_netns(const struct sock* sk)
{
    return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

/* This host's end and the peer's, from a socket. */
static __always_inline void
sock_ends(const struct sock* sk, struct qr_kev* e)
{
    e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
    e->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
    e->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
    if (e->family == AF_INET6)
    {
        BPF_CORE_READ_INTO(&e->laddr, sk, __sk_common.skc_v6_rcv_saddr);
        BPF_CORE_READ_INTO(&e->raddr, sk, __sk_common.skc_v6_daddr);
    }
    else
    {
        __u32 l = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
        __u32 r = BPF_CORE_READ(sk, __sk_common.skc_daddr);
        __builtin_memcpy(e->laddr, &l, 4);
        __builtin_memcpy(e->raddr, &r, 4);
    }
}

/* The calls', packets' and resends' programs are raw tracepoints: a classic tracepoint program is
 * skipped (and counted as missed) when any other BPF program runs on its CPU, and TCP resends (its
 * retransmission timer) and sends packets from softirqs that can interrupt one (measured: 8 of
 * 340 packets missed behind a token bucket, and a resend missed in 2 of 5 testbed runs); a raw
 * tracepoint program is skipped only when it interrupts itself. The state changes' program stays
 * a classic one: as a raw tracepoint (args: sk, oldstate, newstate) it recorded no close on this
 * kernel, not understood yet. */
SEC("tracepoint/sock/inet_sock_set_state")

int
on_state(struct trace_event_raw_inet_sock_set_state* ctx)
{
    const struct sock* sk = ctx->skaddr;
    if (ctx->protocol != IPPROTO_TCP || !wanted(sock_netns(sk)))
        return 0;
    struct qr_kev* e = reserve();
    if (!e)
        return 0;
    e->kind = QR_KEV_STATE;
    e->netns = sock_netns(sk);
    e->family = ctx->family;
    e->lport = ctx->sport;
    e->rport = ctx->dport;
    /* the context's arrays through a read (the verifier takes no offset into the context) */
    if (ctx->family == AF_INET6)
    {
        bpf_probe_read_kernel(e->laddr, 16, ctx->saddr_v6);
        bpf_probe_read_kernel(e->raddr, 16, ctx->daddr_v6);
    }
    else
    {
        bpf_probe_read_kernel(e->laddr, 4, ctx->saddr);
        bpf_probe_read_kernel(e->raddr, 4, ctx->daddr);
    }
    e->len = ctx->newstate;
    e->aux = ctx->oldstate;
    if (e->lport && e->rport)
        remember(sk, e);
    bpf_ringbuf_submit(e, 0);
    return 0;
}

static __always_inline int
on_call(struct bpf_raw_tracepoint_args* ctx, __u8 kind)
{
    const struct sock* sk = (const struct sock*)ctx->args[0];
    int ret = (int)ctx->args[1];
    if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP || ret <= 0 || !wanted(sock_netns(sk)))
        return 0;
    struct qr_kev* e = reserve();
    if (!e)
        return 0;
    e->kind = kind;
    e->netns = sock_netns(sk);
    sock_ends(sk, e);
    if (!e->lport)
    { /* closed meanwhile: its ends as they were */
        __u64 k = (__u64)sk;
        struct ends* v = bpf_map_lookup_elem(&sock_ends_of, &k);
        if (v)
        {
            __builtin_memcpy(e->laddr, v->laddr, 16);
            __builtin_memcpy(e->raddr, v->raddr, 16);
            e->lport = v->lport;
            e->rport = v->rport;
            e->family = v->family;
        }
    }
    e->len = (__u32)ret;
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("raw_tp/sock_send_length")

int
on_send(struct bpf_raw_tracepoint_args* ctx)
{
    return on_call(ctx, QR_KEV_SEND);
}

SEC("raw_tp/sock_recv_length")

int
on_recv(struct bpf_raw_tracepoint_args* ctx)
{
    return on_call(ctx, QR_KEV_RECV);
}

/* The IP and TCP headers at ip: ends (outgoing: the source is this host), sequence number,
 * lengths, flags, window, ECN. 0, -1 for an IP packet that is not TCP, -2 for one whose headers
 * could not be read, -3 for no IP header at ip. */
static __always_inline int
parse(const unsigned char* ip, int outgoing, struct qr_kev* e)
{
    __u8 v;
    if (bpf_probe_read_kernel(&v, 1, ip))
        return -2;
    __u32 iph, total;
    if (v >> 4 == 4)
    {
        struct iphdr h;
        if (bpf_probe_read_kernel(&h, sizeof h, ip))
            return -2;
        if (h.protocol != IPPROTO_TCP)
            return -1;
        e->family = AF_INET;
        __builtin_memcpy(outgoing ? e->laddr : e->raddr, &h.saddr, 4);
        __builtin_memcpy(outgoing ? e->raddr : e->laddr, &h.daddr, 4);
        iph = h.ihl * 4;
        total = bpf_ntohs(h.tot_len);
        e->ipid = bpf_ntohs(h.id);
        e->ipid_ok = 1;
        e->ce = (h.tos & 3) == 3;
    }
    else if (v >> 4 == 6)
    {
        struct ipv6hdr h;
        if (bpf_probe_read_kernel(&h, sizeof h, ip))
            return -2;
        if (h.nexthdr != IPPROTO_TCP)
            return -1;
        e->family = AF_INET6;
        __builtin_memcpy(outgoing ? e->laddr : e->raddr, &h.saddr, 16);
        __builtin_memcpy(outgoing ? e->raddr : e->laddr, &h.daddr, 16);
        iph = 40;
        total = 40 + bpf_ntohs(h.payload_len);
        e->ce = ((h.flow_lbl[0] >> 4) & 3) == 3;
    }
    else
    {
        return -3;
    }
    struct tcphdr t;
    if (bpf_probe_read_kernel(&t, sizeof t, ip + iph))
        return -2;
    __u16 sport = bpf_ntohs(t.source), dport = bpf_ntohs(t.dest);
    e->lport = outgoing ? sport : dport;
    e->rport = outgoing ? dport : sport;
    e->seq = bpf_ntohl(t.seq);
    e->hdr = (__u16)(iph + t.doff * 4);
    e->len = total;
    __u8 flags;
    bpf_probe_read_kernel(&flags, 1, ip + iph + 13);
    e->flags = flags;
    if (!outgoing)
        e->aux = bpf_ntohs(t.window);
    return 0;
}

/* After parse (rc): 0 to go on; else the event dropped, and counted lost when the packet's
 * headers could not be read, or skb->protocol says IP where no IP header is. */
static __always_inline int
unreadable(int rc, const struct sk_buff* skb, struct qr_kev* e)
{
    if (!rc)
        return 0;
    bpf_ringbuf_discard(e, 0);
    __u16 proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
    if (rc == -2 || (rc == -3 && (proto == 0x0800 || proto == 0x86dd)))
    {
        __u32 k = 1;
        __u64* v = bpf_map_lookup_elem(&state, &k);
        if (v)
            __sync_fetch_and_add(v, 1);
    }
    return 1;
}

SEC("raw_tp/net_dev_start_xmit")

int
on_xmit(struct bpf_raw_tracepoint_args* ctx)
{
    struct sk_buff* skb = (struct sk_buff*)ctx->args[0];
    __u32 ns = BPF_CORE_READ(skb, dev, nd_net.net, ns.inum);
    if (!wanted(ns))
        return 0;
    unsigned char* head = BPF_CORE_READ(skb, head);
    __u16 nh = BPF_CORE_READ(skb, network_header);
    struct qr_kev* e = reserve();
    if (!e)
        return 0;
    if (unreadable(parse(head + nh, 1, e), skb, e))
        return 0;
    e->kind = QR_KEV_XMIT;
    e->netns = ns;
    /* a GSO packet: its IP length is the whole (the header's may not say it) */
    struct skb_shared_info* sh = (struct skb_shared_info*)(head + BPF_CORE_READ(skb, end));
    __u16 segs = BPF_CORE_READ(sh, gso_segs), size = BPF_CORE_READ(sh, gso_size);
    if (segs > 1)
    {
        unsigned char* data = BPF_CORE_READ(skb, data);
        e->len = BPF_CORE_READ(skb, len) - (__u32)((head + nh) - data);
        e->segs = segs;
        e->aux = size;
    }
    else
    {
        e->segs = 1;
    }
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("raw_tp/netif_receive_skb")

int
on_rx(struct bpf_raw_tracepoint_args* ctx)
{
    struct sk_buff* skb = (struct sk_buff*)ctx->args[0];
    __u32 ns = BPF_CORE_READ(skb, dev, nd_net.net, ns.inum);
    if (!wanted(ns))
        return 0;
    unsigned char* data = BPF_CORE_READ(skb, data);
    struct qr_kev* e = reserve();
    if (!e)
        return 0;
    if (unreadable(parse(data, 0, e), skb, e))
        return 0;
    e->kind = QR_KEV_RX;
    e->netns = ns;
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("raw_tp/tcp_retransmit_skb")

int
on_retx(struct bpf_raw_tracepoint_args* ctx)
{
    const struct sock* sk = (const struct sock*)ctx->args[0];
    if (!wanted(sock_netns(sk)))
        return 0;
    struct qr_kev* e = reserve();
    if (!e)
        return 0;
    e->kind = QR_KEV_RETX;
    e->netns = sock_netns(sk);
    sock_ends(sk, e);
    const struct sk_buff* skb = (const struct sk_buff*)ctx->args[1];
    const struct tcp_skb_cb* cb = (const struct tcp_skb_cb*)&skb->cb[0];
    e->seq = BPF_CORE_READ(cb, seq);
    const struct inet_connection_sock* icsk = (const struct inet_connection_sock*)sk;
    __u8 ca = BPF_CORE_READ_BITFIELD_PROBED(icsk, icsk_ca_state);
    e->aux = ca == 4 ? QR_KEV_RESEND_RTO : ca == 3 ? QR_KEV_RESEND_FAST : QR_KEV_RESEND_PROBE;
    bpf_ringbuf_submit(e, 0);
    return 0;
}
