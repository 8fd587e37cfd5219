/* The kernel recorder's agent (qreplay record): loads record.bpf.c's program through libbpf
 * (CO-RE, BTF), attaches it to TCP's tracepoints for one network namespace, and hands every event
 * to the core's kernel-record writer (krecord.h) until told to stop. Glue only: what an event
 * means for the record is the core's. */
#ifndef QR_KREC_AGENT_H
#define QR_KREC_AGENT_H

#include <signal.h>
#include <stdint.h>

#include "qreplay/krecord.h"

#ifdef __cplusplus
extern "C"
{
#endif

    typedef struct qr_kagent_opts
    {
        const char* const* netns; /* named namespaces (ip netns), n_netns; none: the agent's own */
        size_t n_netns;
        const char* const* out; /* each one's record (n_netns paths; one without namespaces) */
        qr_sampling_method method;
        size_t n_th;
        int64_t th_ns[QR_KREC_MAX_TH];
        const uint16_t* ignore_ports; /* connections on these ports left out (n_ignore) */
        size_t n_ignore;
        double duration_s;           /* > 0: stop after this long */
        volatile sig_atomic_t* stop; /* set (by a signal handler): stop within 0.1 s */
        void (*ready)(void* ctx);    /* attached: events from now on are recorded (may be NULL) */
        void (*progress)(void* ctx, const qr_krec_stats* st, double elapsed_s); /* every second */
        void* ctx;
        /* out (may be NULL): the BPF programs' runs and their time in the kernel (ns), counted
         * by the kernel while the agent runs (BPF_ENABLE_STATS; 0 where the kernel cannot) */
        uint64_t* bpf_runs;
        uint64_t* bpf_ns;
        /* out (may be NULL): the recorder's own losses told apart: events that found the ring
         * buffer full (or a packet whose headers could not be read), runs the kernel skipped */
        uint64_t* ring_full;
        uint64_t* skipped;
        char*
            skipped_by; /* out (may be NULL, 256 bytes): "PROGRAM N, ..." where runs were skipped */
    } qr_kagent_opts;

    /* What this machine lacks for the recorder (root, BTF, tracefs, a tracepoint), NULL if nothing:
     * tracefs is mounted at /sys/kernel/tracing when it is not. why holds the detail. */
    const char* qr_kagent_missing(char* why, size_t size);

    /* Record until stopped; each record is put in place whole at the end (on an error, none is).
     * st (may be NULL): each record's stats, in the namespaces' order (one without namespaces).
     * Returns 0, or a QR_* code with errbuf saying what went wrong. */
    int qr_kagent_run(const qr_kagent_opts* o, qr_krec_stats* st, char* errbuf);

    /* Whether this build has the recorder (the BPF program needs the build machine's BTF). */
    int qr_kagent_built(void);

#ifdef __cplusplus
}
#endif
#endif
