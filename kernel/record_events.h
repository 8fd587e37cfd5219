/* The events the kernel recorder's BPF program (record.bpf.c) hands to its agent through the ring
 * buffer: fixed-size records, the same layout on both sides. Addresses are raw network-order bytes
 * (IPv4 in the first 4 of 16), ports host order; times are the kernel's monotonic clock (ns). */
#ifndef QR_RECORD_EVENTS_H
#define QR_RECORD_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum qr_kev_kind
{
    QR_KEV_STATE = 1, /* a TCP socket changed state (inet_sock_set_state) */
    QR_KEV_SEND = 2,  /* the application's send call returned (sock_send_length) */
    QR_KEV_RECV = 3,  /* the application's receive call returned (sock_recv_length) */
    QR_KEV_XMIT = 4,  /* a TCP packet handed to the NIC (net_dev_start_xmit) */
    QR_KEV_RETX = 5,  /* TCP retransmitted a segment (tcp_retransmit_skb) */
    QR_KEV_RX = 6,    /* a TCP packet received from the NIC (netif_receive_skb) */
};

/* Why TCP resent, from the socket's congestion state at the resend (icsk_ca_state). */
enum qr_kev_resend
{
    QR_KEV_RESEND_PROBE = 0, /* Open, Disorder or CWR: a tail loss probe */
    QR_KEV_RESEND_FAST = 1,  /* Recovery: fast retransmit */
    QR_KEV_RESEND_RTO = 2,   /* Loss: the retransmission timer */
};

struct qr_kev
{
    __u64 t_ns;
    __u8 kind, family, flags, ce; /* flags: TCP flags; ce: IP ECN bits == 3 */
    __u8 laddr[16], raddr[16];    /* this host's end and the peer's */
    __u16 lport, rport;
    __u32 netns;
    __u32 seq;  /* XMIT, RX, RETX: the segment's first sequence number */
    __u32 len;  /* XMIT, RX: IP length (a GSO packet's whole); SEND, RECV: bytes; STATE: new */
    __u32 aux;  /* XMIT: GSO segment size (0: one packet); RX: TCP window; RETX: reason;
                 * STATE: old state */
    __u16 hdr;  /* XMIT, RX: IP and TCP header bytes */
    __u16 segs; /* XMIT: GSO segments */
    __u16 ipid; /* XMIT, RX: the IPv4 identification (ipid_ok) */
    __u16 ipid_ok;
};

#endif
