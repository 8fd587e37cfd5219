/* The packet corrector (qreplay testbed --repeat): a tc program on the switch's ports that drops
 * exactly the packets a run's switch dropped (their fates, correct_maps.h), each named by its
 * direction's ends and its sequence and acknowledgement numbers relative to the connection's
 * initial ones (learned from the SYNs it passes: the kernels pick them at random) and its payload
 * length, at the same copy. Everything else passes. */
#include "vmlinux.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "correct_maps.h"

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define IPPROTO_TCP 6
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

char LICENSE[] SEC("license") = "GPL";

struct
{
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, struct qr_fate_key);
    __type(value, struct qr_fate_val);
} fates SEC(".maps");

struct
{
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, struct qr_dir4);
    __type(value, __u32);
} isn SEC(".maps");

struct
{
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, QR_CORRECT_TOTALS);
    __type(key, __u32);
    __type(value, __u64);
} totals SEC(".maps");

static __always_inline void
count(__u32 k)
{
    __u64* v = bpf_map_lookup_elem(&totals, &k);
    if (v)
        __sync_fetch_and_add(v, 1);
}

SEC("tc")

int
correct(struct __sk_buff* skb)
{
    __u16 proto;
    if (bpf_skb_load_bytes(skb, 12, &proto, 2) || proto != bpf_htons(ETH_P_IP))
        return TC_ACT_OK;
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip, sizeof ip) || ip.protocol != IPPROTO_TCP)
        return TC_ACT_OK;
    __u32 ihl = ip.ihl * 4;
    if (ihl < 20 || ihl > 60)
        return TC_ACT_OK;
    struct tcphdr t;
    if (bpf_skb_load_bytes(skb, ETH_HLEN + ihl, &t, sizeof t))
        return TC_ACT_OK;
    __u8 flags;
    if (bpf_skb_load_bytes(skb, ETH_HLEN + ihl + 13, &flags, 1))
        return TC_ACT_OK;
    count(2);
    struct qr_dir4 d = {bpf_ntohl(ip.saddr),
                        bpf_ntohl(ip.daddr),
                        bpf_ntohs(t.source),
                        bpf_ntohs(t.dest)};
    __u32 seq = bpf_ntohl(t.seq), ack = bpf_ntohl(t.ack_seq);
    if (flags & 0x02)
        bpf_map_update_elem(&isn, &d, &seq, BPF_ANY);
    __u32* mine = bpf_map_lookup_elem(&isn, &d);
    if (!mine)
    {
        count(1);
        return TC_ACT_OK;
    }
    struct qr_fate_key k = {};
    k.d = d;
    k.rel_seq = seq - *mine;
    if (flags & 0x10)
    {
        struct qr_dir4 r = {d.daddr, d.saddr, d.dport, d.sport};
        __u32* peer = bpf_map_lookup_elem(&isn, &r);
        if (!peer)
            return TC_ACT_OK;
        k.rel_ack = ack - *peer;
    }
    __u32 hdr = ihl + t.doff * 4, total = bpf_ntohs(ip.tot_len);
    k.len = total > hdr ? total - hdr : 0;
    struct qr_fate_val* v = bpf_map_lookup_elem(&fates, &k);
    if (!v)
        return TC_ACT_OK;
    __u32 i = __sync_fetch_and_add(&v->seen, 1);
    if (i < 64 && (v->occurrences >> i) & 1)
    {
        __sync_fetch_and_add(&v->dropped, 1);
        count(0);
        return TC_ACT_SHOT;
    }
    return TC_ACT_OK;
}
