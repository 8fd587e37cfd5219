/* The packet corrector's loader (corrector.h): glue between the core's fates and the kernel. */
#define _GNU_SOURCE
#include "corrector.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"

static int
fail(char* errbuf, int code, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, QR_ERRBUF_SIZE, fmt, ap);
    va_end(ap);
    return code;
}

#ifdef QR_HAVE_KREC
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "correct.skel.h"
#include "correct_maps.h"

struct qr_corrector
{
    struct qr_correct_bpf* s;
};

/* Attach to one device of the namespace we are in. */
static int
attach_dev(struct qr_correct_bpf* s, const char* netns, const char* dev, char* errbuf)
{
    unsigned idx = if_nametoindex(dev);
    if (!idx)
        return fail(errbuf, QR_EIO, "namespace %s: no device %s", netns, dev);
    DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)idx, .attach_point = BPF_TC_INGRESS);
    DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(s->progs.correct));
    int rc = bpf_tc_hook_create(&hook);
    if (rc && rc != -EEXIST)
        return fail(errbuf, QR_EIO, "namespace %s, %s: tc clsact: %s", netns, dev, strerror(-rc));
    if ((rc = bpf_tc_attach(&hook, &opts)))
        return fail(errbuf,
                    QR_EIO,
                    "namespace %s, %s: attaching the corrector: %s",
                    netns,
                    dev,
                    strerror(-rc));
    return QR_OK;
}

static int
attach(qr_corrector** out,
       const char* netns,
       const char* const* devs,
       size_t n_devs,
       const qr_tb_fate* fates,
       size_t n,
       char* errbuf)
{
    *out = NULL;
    qr_corrector* c = calloc(1, sizeof *c);
    if (!c)
        return fail(errbuf, QR_ENOMEM, "out of memory");
    if (!(c->s = qr_correct_bpf__open_and_load()))
    {
        free(c);
        return fail(errbuf,
                    QR_EIO,
                    "the kernel refused the corrector's BPF program: %s",
                    strerror(errno));
    }
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < n; i++)
    {
        struct qr_fate_key k;
        memset(&k, 0, sizeof k);
        k.d.saddr = fates[i].saddr;
        k.d.daddr = fates[i].daddr;
        k.d.sport = fates[i].sport;
        k.d.dport = fates[i].dport;
        k.rel_seq = fates[i].rel_seq;
        k.rel_ack = fates[i].rel_ack;
        k.len = fates[i].len;
        struct qr_fate_val v = {fates[i].occurrences, 0, 0};
        if (bpf_map__update_elem(c->s->maps.fates, &k, sizeof k, &v, sizeof v, BPF_NOEXIST))
            rc = fail(errbuf, QR_EIO, "the corrector's fate %zu: %s", i, strerror(errno));
    }
    char path[300];
    snprintf(path, sizeof path, "/run/netns/%s", netns);
    int self = rc ? -1 : open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int there = rc ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    if (!rc && (self < 0 || there < 0 || setns(there, CLONE_NEWNET)))
        rc = fail(errbuf, QR_EIO, "cannot enter namespace %s: %s", netns, strerror(errno));
    else if (!rc)
    {
        for (size_t i = 0; !rc && i < n_devs; i++)
            rc = attach_dev(c->s, netns, devs[i], errbuf);
        if (setns(self, CLONE_NEWNET) && !rc)
            rc = fail(errbuf, QR_EIO, "cannot return to our namespace: %s", strerror(errno));
    }
    if (self >= 0)
        close(self);
    if (there >= 0)
        close(there);
    if (rc)
    {
        qr_corrector_free(c);
        return rc;
    }
    *out = c;
    return QR_OK;
}

static void
counts(const qr_corrector* c, uint64_t* seen, uint64_t* dropped, uint64_t* unknown)
{
    uint64_t v[QR_CORRECT_TOTALS] = {0};
    for (uint32_t k = 0; c && k < QR_CORRECT_TOTALS; k++)
        bpf_map__lookup_elem(c->s->maps.totals, &k, sizeof k, &v[k], sizeof v[k], 0);
    *dropped = v[0];
    *unknown = v[1];
    *seen = v[2];
}

#else

struct qr_corrector
{
    int unused;
};

#endif

int
qr_corrector_attach(qr_corrector** out,
                    const char* netns,
                    const char* const* devs,
                    size_t n_devs,
                    const qr_tb_fate* fates,
                    size_t n,
                    char* errbuf)
{
#ifdef QR_HAVE_KREC
    return attach(out, netns, devs, n_devs, fates, n, errbuf);
#else
    (void)netns, (void)devs, (void)n_devs, (void)fates, (void)n;
    *out = NULL;
    return fail(errbuf,
                QR_ESTATE,
                "this qreplay was built without BPF (its build machine had no "
                "/sys/kernel/btf/vmlinux, clang, bpftool or libbpf-dev): no packet corrector");
#endif
}

void
qr_corrector_counts(const qr_corrector* c, uint64_t* seen, uint64_t* dropped, uint64_t* unknown)
{
    *seen = *dropped = *unknown = 0;
#ifdef QR_HAVE_KREC
    if (c)
        counts(c, seen, dropped, unknown);
#else
    (void)c;
#endif
}

void
qr_corrector_free(qr_corrector* c)
{
    if (!c)
        return;
#ifdef QR_HAVE_KREC
    qr_correct_bpf__destroy(c->s);
#endif
    free(c);
}
