/* The kernel recorder's rate test (qreplay record --rate-test): what each step of a rising packet
 * rate cost the recorder and what it lost, from the step's records and the recorder's own
 * accounting, and the highest rate it kept whole on this machine. */
#ifndef QREPLAY_KREC_RATE_H
#define QREPLAY_KREC_RATE_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/krecord.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One step: a sender writing messages at an aimed rate for a while, both hosts recorded. */
typedef struct qr_krec_rate_step {
    double target_pps;   /* the sender's aim, writes per second; 0: the idle step (no traffic) */
    int unrecorded;      /* the same traffic with no recorder: what the machine reaches bare */
    double traffic_s;    /* how long the sender wrote */
    uint64_t writes;     /* the sender's writes, one message each */
    uint64_t read_bytes; /* what the receiver read (the sender's bytes, all of them) */
    uint64_t msg_bytes;  /* one message */
    /* from the step's records, both hosts (qr_krec_rate_add_records) */
    uint64_t recorded_sends, recorded_send_bytes; /* send calls the records hold */
    uint64_t nic_packets;                         /* packets handed to the NIC */
    uint64_t events;                              /* handed over by the kernel */
    uint64_t ring_lost; /* lost by the recorder: its ring buffer full, or runs the kernel skipped */
    uint64_t unseen;    /* packets the hosts sent that no event told (IPv4 ID gaps) */
    /* the recorder's process: user and system CPU, run time; its BPF programs' time in the
     * kernel (charged to what they interrupted, so not in cpu_s) and runs */
    double cpu_s, wall_s, bpf_s;
    uint64_t bpf_runs;
} qr_krec_rate_step;

/* Add the stats of a step's n records (one per host, from one recorder) into s: the recorder's
 * own losses (the same in each record) once, every record's unseen packets. */
void qr_krec_rate_add_records(qr_krec_rate_step *s, const qr_krec_stats *st, size_t n);

/* A step's packets per second (both hosts' packets handed to the NIC over the traffic time). */
double qr_krec_rate_pps(const qr_krec_rate_step *s);
/* Whether nothing of a step was lost: no event lost, no packet unseen, every write recorded
 * with its bytes, every byte read (an unrecorded step: never). */
int qr_krec_rate_whole(const qr_krec_rate_step *s);
/* Whether the sender reached less than 90% of its aim: the machine, not the recorder, is the
 * limit of the step. */
int qr_krec_rate_short(const qr_krec_rate_step *s);

typedef struct qr_krec_rate_summary {
    double idle_cpu_s;      /* the idle step's recorder CPU: loading, attaching, writing */
    double max_pps;         /* the highest packet rate a step reached */
    double whole_pps;       /* the highest of a step kept whole (qr_krec_rate_whole); 0: none */
    double ring_whole_pps;  /* the highest with no event lost by the recorder itself */
    double first_lossy_pps; /* the lowest of a step where the recorder lost events; 0: none */
    int saturated;          /* a step's sender fell short of its aim (qr_krec_rate_short) */
    double max_wps;         /* the most writes per second a recorded step's sender made */
    double bare_wps;        /* the same without the recorder (an unrecorded step); 0: none */
    int lossy_below_whole;  /* a step lost events below a rate kept whole (losses not by rate) */
} qr_krec_rate_summary;

/* The steps summed up: the idle step's CPU, the highest rates reached and kept whole, the lowest
 * where the recorder lost events, the writes per second recorded and not. */
void qr_krec_rate_summarise(const qr_krec_rate_step *s, size_t n, qr_krec_rate_summary *out);

/* The steps as CSV at path (written whole or not at all), after a line "# " made_by (what made
 * it: the program, its version, the kernel). Columns: target_pps, recorded, traffic_s, writes,
 * msg_bytes, read_bytes, recorded_sends, recorded_send_bytes, nic_packets, pps, events,
 * events_per_s, ring_lost, unseen, whole, short, recorder_cpu_s, recorder_wall_s, bpf_s, bpf_runs,
 * and the CPU the traffic cost: recorder_pct (the recorder's CPU above the idle step's, of one CPU
 * over the traffic time), bpf_pct, us_per_packet ((recorder above idle + BPF) per packet). Returns
 * 0 or QR_EIO naming the file. */
int qr_krec_rate_write(const char *path, const char *made_by, const qr_krec_rate_step *s, size_t n,
                       char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
