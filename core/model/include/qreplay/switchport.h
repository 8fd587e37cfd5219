/* qreplay: what a switch port decides for an arriving packet, in one call: the planted faults
 * first, then the faulty links, then the shared buffer's admission; the ECN mark of an admitted
 * packet; and the flow a packet is accounted to in the queue's per-flow bytes.
 *
 * The ns-3 runtime calls qr_port_arrive for every packet that reaches a switch port; the native
 * and the ns-3 replay call the buffer alone (replays do not plant faults). whatif measures ECN
 * marks with qr_ecn_mark, the same rule. */
#ifndef QREPLAY_SWITCHPORT_H
#define QREPLAY_SWITCHPORT_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/buffer.h"
#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An arriving packet as the port sees it. */
typedef struct qr_port_packet {
    uint32_t bytes;    /* its size at the port (IP total length + link header), bytes */
    int has_dir;       /* it carries the runtime's tag: dir is its flow direction */
    uint32_t dir;      /* flow direction (flowtable.h) */
    int tagged;        /* the drop tag (replay drop decision) */
    int has_tcp;       /* tcp_flags and payload_bytes are known */
    uint8_t tcp_flags; /* QR_TCP_* */
    uint32_t payload_bytes;
    int has_tuple; /* ft is known (an IPv4 packet) */
    qr_five_tuple ft;
} qr_port_packet;

/* A switch port's state: its buffer and the faults planted on the run (either may be NULL). */
typedef struct qr_port {
    qr_buffer *buffer;
    uint32_t sw, port;
    qr_drop_mode mode;
    uint64_t margin_bytes;        /* tagged mode's occupancy margin */
    uint64_t ecn_threshold_bytes; /* mark CE above this many queued bytes; 0: never */
    qr_faults *faults;            /* [faults] drop rules; NULL: none */
    qr_link_faults *link_faults;  /* [faults] gray, blackhole, ...; NULL: none */
} qr_port;

/* Decide for packet p arriving at port: a [faults] drop rule that drops it (it needs the packet's
 * direction and TCP header) wins, then a faulty link (needs its 5-tuple), then the buffer's
 * admission (which accounts the bytes of an admitted packet). *decision gets the outcome; *mark 1
 * if the admitted packet is to be marked CE (qr_ecn_mark with the queue's bytes before it), else
 * 0. Returns 0 or QR_EINVAL (port out of range). */
int qr_port_arrive(const qr_port *port, const qr_port_packet *p, qr_decision *decision, int *mark);

/* The ECN rule: an admitted packet of `bytes` joining a queue that held queue_bytes is marked CE
 * iff a threshold is set and queue_bytes + bytes exceeds it. */
int qr_ecn_mark(uint64_t queue_bytes, uint64_t bytes, uint64_t threshold_bytes);

/* The flow a packet is accounted to in a queue's per-flow bytes (qdiff's key): its direction if
 * it carries one, else the hash of its 5-tuple (a probe, or a packet of no flow), else 0. */
uint32_t qr_port_flow(const qr_port_packet *p);

#ifdef __cplusplus
}
#endif
#endif
