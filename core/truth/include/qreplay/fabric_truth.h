/* qreplay: the ground truth of a FatTree testbed run (fabric.h) from every switch port's capture
 * and every fault's netfilter log; for scorers, never for an analysis.
 *
 * Each packet a host recorded is followed through the fabric: it must arrive at its edge switch on
 * the port facing its host; from every switch it arrived at, it leaves by one port (the kernel's
 * route: a frame a switch port's capture holds left by that port when its source MAC address is
 * the port's own, qr_fabric_mac) and arrives at the switch or host that port leads to, until it
 * leaves towards its destination host (delivered), or it never leaves a switch it arrived at
 * (dropped there). A packet is matched at every tap by its direction, IP ID, sequence and
 * acknowledgement numbers, flags and length. A dropped packet a fault's log holds was dropped by
 * that fault (it must be at the fault's switch); any other was dropped by the queue of the port its
 * direction leaves that switch by (where its other packets left; unknown if none did). Packets of
 * no recorded connection (the agents' probes) are followed the same way, by their headers. Every
 * drop is checked: per switch, the queue drops the captures show (the probes' too) against the
 * qdiscs' counters; per fault, the packets its log holds against its rule's counter. A packet that
 * leaves a switch and never reaches the next one, or that reaches a switch without having left the
 * one before, means a damaged capture: an error naming the capture and packet. Frames that are not
 * TCP (ICMP, ARP) are counted, not followed.
 *
 * Written: REC_DIR/truth/truth.h5 (the runtime's layout: /drops with reason buffer-full or fault
 * at their switch and port, /directions, /link_faults with what crossed each faulty link and what
 * it dropped) and REC_DIR/truth/arrivals.qra (every switch a recorded packet reached: its arrival
 * as its ingress capture's time, the port it left by, the bytes that port's FIFO held from the
 * captures, admitted, or its drop: what `qreplay trace` reads as the switches' mirrored copies and
 * drop counters), whole or not at all; and by qr_fabric_truth_write_paths the path each direction
 * took. */
#ifndef QREPLAY_FABRIC_TRUTH_H
#define QREPLAY_FABRIC_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/fabric.h"
#include "qreplay/pingmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_fabric_truth_in {
    const char *rec_dir;         /* the hosts' captures imported (--clock none) */
    const char *capture_dir;     /* sS-pP.pcap per switch port, fault-F.pcap per drop fault */
    const qr_fabric *fab;        /* the run's plan */
    const uint64_t *qdisc_drops; /* per switch port (switch x k + port), the qdiscs' counters */
    const uint64_t *fault_drops; /* per fault of qr_fabric_faults, its rule's counter */
    /* per switch, its nftables counters: the IPv4 packets it sent itself (its ICMP answers), and
     * those not TCP it took for itself; with its captures' frames that are not TCP, they give the
     * queue drops of such packets, which no capture holds */
    const uint64_t *own_sent, *own_taken;
    /* Pingmesh's agents' log (pingmesh.h; probed: the run probed), times on the captures' clock:
     * written to truth.h5 /probes on the recording's time base, each lost probe's truth filled
     * from the captures (its request or answer: where it stopped and why) */
    int probed;
    const qr_row_probe *pings;
    size_t n_pings;
    /* when the agents were told to stop, on the captures' clock (0: unknown): until then they
     * waited for their probes, so the probe log's run lasts at least that long */
    int64_t agents_stop_ns;
    /* per switch, its kernel's count of the packets it did not forward because their TTL ran out
     * (/proc/net/snmp Ip InHdrErrors over the run): the captures must show as many arriving with
     * TTL 1 or less (a routing loop's, 007's probes'). NULL: not checked */
    const uint64_t *ttl_expired;
    /* per switch, its nftables counter of the packets not TCP that arrived with one of its own
     * addresses as their source (its own answers sent back round a loop; the kernel drops them as
     * martians): the captures must show as many. NULL: not checked */
    const uint64_t *own_returned;
} qr_fabric_truth_in;

/* One mirrored copy of a guided probe: its addresses (IPv4, host order), source port and
 * sequence number, the switch port whose capture holds it, whether it left by that port (out) or
 * arrived by it, and when (the capture's clock). */
typedef struct qr_fabric_mirror_copy {
    uint32_t src, dst, seq;
    uint16_t sport, sw;
    uint8_t port, out;
    int64_t t;
} qr_fabric_mirror_copy;

/* One switch port: what its capture shows and its queue did. */
typedef struct qr_fabric_port_report {
    uint32_t sw, port;
    uint64_t in, out;         /* recorded packets that arrived by it, that left by it */
    uint64_t queue_drops;     /* drops charged to its queue */
    uint64_t qdisc_drops;     /* its counter */
    uint64_t max_queue_bytes; /* the most its FIFO held when a packet arrived */
} qr_fabric_port_report;

typedef struct qr_fabric_fault_report {
    uint64_t crossed; /* recorded packets that reached the faulty link (sent over it or dropped) */
    uint64_t dropped; /* recorded packets its log holds */
    uint64_t logged;  /* every packet its log holds (probes and non-TCP too) */
    uint64_t counter; /* its rule's counter */
} qr_fabric_fault_report;

typedef struct qr_fabric_truth_report {
    uint64_t packets;   /* recorded packets */
    uint64_t delivered; /* reached their destination host */
    uint64_t queue_drops, fault_drops;
    uint64_t unknown_port_drops; /* queue drops at a switch its direction never left */
    uint64_t unplaced_drops;     /* of them, those the arrival log has no arrival for */
    uint64_t hops;               /* switch traversals of the recorded packets */
    /* recorded packets whose TTL ran out at a switch (round a routing loop: [faults] loop): lost
     * outside the queues, truth.h5's other_drops; and the other packets' (probes, a host's
     * repeats, not TCP) */
    uint64_t expired, other_expired;
    /* packets not TCP that came back to the switch that sent them (dropped there as martians) */
    uint64_t returned;
    /* the hop from a host's capture to its edge switch's, over every packet (p50, p99): a machine
     * that keeps up takes well under a packet's time */
    int64_t hop_p50_ns, hop_p99_ns;
    uint64_t unrecorded;        /* TCP frames at switch ports of no recorded connection */
    uint64_t trace_probes;      /* of them, 007's probes (a recorded 5-tuple, no flags) */
    uint64_t trace_fault_drops; /* 007's probes the faults' logs hold */
    /* identical sendings a host's capture shows (a stack's IP ID 0 packet sent twice within the
     * dedup's reach) that the import keeps once, and their sightings at switch ports and in the
     * faults' logs: counted here, followed by no packet */
    uint64_t repeat_sends, repeat_frames;
    uint64_t repeat_queue_drops; /* of those repeats, the ones a queue dropped */
    /* Pingmesh: lost probes, and where the truth found them lost (their request or answer
     * stopped at a switch: by a fault, by a queue; never reached their switch; answered late) */
    uint64_t pings_lost, pings_fault, pings_queue, pings_host, pings_late;
    uint64_t skipped_frames; /* frames that are not TCP */
    uint32_t n_ports;
    qr_fabric_port_report *ports; /* every switch port */
    size_t n_faults;
    qr_fabric_fault_report *faults; /* per fault of qr_fabric_faults */
    /* the paths: directions followed, and per core switch the data directions that crossed it */
    uint64_t directions;
    uint32_t n_core;
    uint64_t *core_dirs;
    uint64_t probe_queue_drops; /* queue drops of the probes (packets of no recorded
                                   connection) */
    /* queue drops of packets that are not TCP (the switches' ICMP answers): per switch, what
     * arrived not TCP plus what it sent itself less what it took itself and what left not TCP;
     * with the recorded packets' and the probes' = the qdiscs' */
    uint64_t other_queue_drops;
    /* packets that are not TCP the faults' rules dropped (their logs; not in fault_drops, which
     * are the recorded connections') */
    uint64_t other_fault_drops;
    uint64_t own_sent; /* packets the switches sent themselves */
    /* per direction, its path (the switches it crossed, hop by hop; delivered packets') */
    size_t n_dirs;
    uint32_t (*dir_path)[5];
    uint8_t *dir_hops; /* 0: none of its packets was delivered */
    uint32_t *dir_src, *dir_dst;
    uint16_t *dir_sport, *dir_dport; /* the ports its packets carry */
    /* Everflow's mirror of its guided probes (guided_plan.h): every copy of a packet with the
     * debug mark to QR_PROBE_PORT that a switch port's capture holds */
    qr_fabric_mirror_copy *mirror;
    size_t n_mirror, cap_mirror;
    int64_t base_ns; /* the recording's time base on the captures' clock */
} qr_fabric_truth_report;

/* Release what a report holds (NULL allowed); *r is zeroed. */
void qr_fabric_truth_report_free(qr_fabric_truth_report *r);

/* The truth of a fabric run (above). Returns 0 with *rep (may be NULL), QR_EVALUE (a damaged
 * capture, a counter that disagrees: the message names the capture, frame and packet), or a
 * reader's or writer's error. */
int qr_fabric_truth(const qr_fabric_truth_in *in, qr_fabric_truth_report *rep, char *errbuf);

/* DIR/testbed/fabric.csv (per switch port: sw, port, peer, in, out, queue_drops, qdisc_drops,
 * max_queue_bytes) and DIR/testbed/paths.csv (per flow direction of the recording: dir, flow, src,
 * dst, sport, dport, hops, path as "s0 s8 s17 s12 s5"; "" when no packet was delivered), each
 * written whole or not at all. Returns 0 or QR_EIO naming the file. */
int qr_fabric_truth_write(const char *fabric_csv, const char *paths_csv, const qr_fabric *fab,
                          const qr_fabric_truth_report *r, char *errbuf);

/* What Everflow's analyzer gets of its guided probes, into mirror_dir (guided.h's files): the
 * mirrored copies (guided.csv, times on the recording's time base: capture time - base_ns; the
 * switches' link round-trip probes, whose source is no host, in bounce.csv alike: bounce.h) and,
 * when sweep_drops is not NULL, what each switch port's drop counter counted while the probes ran
 * (counters.csv; sweep_drops per switch x k + port). Each file whole or not at all; nothing when
 * the report holds no copy. Returns 0, QR_EIO naming the file. */
int qr_fabric_mirror_write(const char *mirror_dir, const qr_fabric *fab,
                           const qr_fabric_truth_report *r, const uint64_t *sweep_drops,
                           int64_t base_ns, char *errbuf);

/* A simulated fabric's link round-trip probes' copies (their switches logged them: times on the
 * simulation's clock) into mirror_dir/bounce.csv, whole or not at all. Returns 0 or QR_EIO. */
int qr_bounce_copies_write(const char *mirror_dir, const qr_fabric_mirror_copy *copies, size_t n,
                           char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
