/* The packet corrector of qreplay testbed --repeat: loads correct.bpf.c's tc program with a run's
 * fates (qreplay/tb_repeat.h) and attaches it to the ingress of devices of one network namespace
 * (the switch's ports), so that the run's drops happen again to the same packets. Glue only: the
 * fates are the core's. */
#ifndef QR_CORRECTOR_H
#define QR_CORRECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/tb_repeat.h"

#ifdef __cplusplus
extern "C"
{
#endif

    typedef struct qr_corrector qr_corrector;

    /* Load the program with the n fates and attach it to the ingress (tc clsact) of each of the
     * n_devs devices of namespace netns (ip netns). Returns 0, or a QR_* code with errbuf saying
     * what failed (no BPF support in this build, the kernel's refusal, a device not found). */
    int qr_corrector_attach(qr_corrector** out,
                            const char* netns,
                            const char* const* devs,
                            size_t n_devs,
                            const qr_tb_fate* fates,
                            size_t n,
                            char* errbuf);
    /* What it did so far: the TCP packets it looked at, those it dropped, those of connections
     * whose SYN it never saw. */
    void qr_corrector_counts(const qr_corrector* c,
                             uint64_t* seen,
                             uint64_t* dropped,
                             uint64_t* unknown);
    /* Release (the program stays attached until its namespace is removed). NULL allowed. */
    void qr_corrector_free(qr_corrector* c);

#ifdef __cplusplus
}
#endif
#endif
