/* The packet corrector's maps (correct.bpf.c), the same layout on both sides: the fates (which
 * copies of which packets to drop, qreplay/tb_repeat.h) and the connections' initial sequence
 * numbers it learns from their SYNs. Addresses, ports and numbers in host order. */
#ifndef QR_CORRECT_MAPS_H
#define QR_CORRECT_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* One direction of a connection. */
struct qr_dir4
{
    __u32 saddr, daddr;
    __u16 sport, dport;
};

/* A packet of a direction, its numbers relative to the connection's initial ones. */
struct qr_fate_key
{
    struct qr_dir4 d;
    __u32 rel_seq, rel_ack, len;
};

struct qr_fate_val
{
    __u64 occurrences; /* bit i: drop the i-th copy */
    __u32 seen, dropped;
};

/* totals: [0] packets dropped, [1] TCP packets of no connection whose SYN it saw, [2] TCP
 * packets it looked at */
#define QR_CORRECT_TOTALS 3

#endif
