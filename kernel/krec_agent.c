/* The kernel recorder's agent (krec_agent.h). */
#define _GNU_SOURCE
#include "krec_agent.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "qreplay/error.h"

#ifdef QR_HAVE_KREC
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record.skel.h"
#include "record_events.h"
#endif

static int fail(char* errbuf, int code, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char* errbuf, int code, const char* fmt, ...)
{
    if (errbuf)
    {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, QR_ERRBUF_SIZE, fmt, ap);
        va_end(ap);
    }
    return code;
}

int
qr_kagent_built(void)
{
#ifdef QR_HAVE_KREC
    return 1;
#else
    return 0;
#endif
}

static const char* const tracepoints[] = {"sock/inet_sock_set_state",
                                          "sock/sock_send_length",
                                          "sock/sock_recv_length",
                                          "net/net_dev_start_xmit",
                                          "net/netif_receive_skb",
                                          "tcp/tcp_retransmit_skb"};

const char*
qr_kagent_missing(char* why, size_t size)
{
    struct stat st;
    if (geteuid() != 0)
    {
        snprintf(why, size, "it runs as root (the kernel loads BPF programs for root only)");
        return "root";
    }
    if (stat("/sys/kernel/btf/vmlinux", &st) != 0)
    {
        snprintf(why,
                 size,
                 "this kernel has no BTF (/sys/kernel/btf/vmlinux: %s): it needs a kernel built "
                 "with CONFIG_DEBUG_INFO_BTF",
                 strerror(errno));
        return "BTF";
    }
    if (stat("/sys/kernel/tracing/events", &st) != 0 &&
        mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
    {
        snprintf(why,
                 size,
                 "tracefs is not mounted at /sys/kernel/tracing and mounting it failed (%s): "
                 "mount -t tracefs tracefs /sys/kernel/tracing",
                 strerror(errno));
        return "tracefs";
    }
    for (size_t i = 0; i < sizeof tracepoints / sizeof *tracepoints; i++)
    {
        char p[256];
        snprintf(p, sizeof p, "/sys/kernel/tracing/events/%s", tracepoints[i]);
        if (stat(p, &st) != 0)
        {
            snprintf(why, size, "this kernel has no tracepoint %s (%s)", tracepoints[i], p);
            return "a tracepoint";
        }
    }
    return NULL;
}

#ifdef QR_HAVE_KREC

static int64_t
clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Unix-epoch time less the kernel's monotonic clock (bpf_ktime_get_ns), taken as the tightest of
 * a few readings. */
static int64_t
realtime_offset(void)
{
    int64_t best = 0, width = INT64_MAX;
    for (int i = 0; i < 8; i++)
    {
        int64_t a = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME),
                b = clock_ns(CLOCK_MONOTONIC);
        if (b - a < width)
        {
            width = b - a;
            best = r - (a + (b - a) / 2);
        }
    }
    return best;
}

/* A namespace recorded: its inode number, its record, the events it was handed. */
struct nsrec
{
    uint32_t inum;
    size_t order; /* its place among the namespaces given */
    qr_krec_writer* w;
    uint64_t events;
};

struct agent
{
    struct nsrec* ns; /* sorted by inum */
    size_t n;
    int64_t offset;
    uint64_t events;
    int rc;
    FILE* dump; /* QREPLAY_KEV_DUMP: stderr, or the file it names */
    char* err;
};

static int
cmp_nsrec(const void* a, const void* b)
{
    const struct nsrec *x = a, *y = b;
    return x->inum < y->inum ? -1 : x->inum > y->inum;
}

static void
ends_of(const struct qr_kev* e, qr_krec_ends* x)
{
    x->family = e->family == 10 ? 6 : 4;
    memcpy(x->laddr, e->laddr, 16);
    memcpy(x->raddr, e->raddr, 16);
    x->lport = e->lport;
    x->rport = e->rport;
}

static int
on_event(void* ctx, void* data, size_t size)
{
    struct agent* a = ctx;
    const struct qr_kev* e = data;
    if (a->rc || size < sizeof *e)
        return 0;
    struct nsrec key = {.inum = e->netns};
    struct nsrec* r = bsearch(&key, a->ns, a->n, sizeof *a->ns, cmp_nsrec);
    if (!r)
        return 0; /* not recorded (the program filters: cannot happen) */
    qr_krec_writer* w = r->w;
    r->events++;
    qr_krec_ends x;
    ends_of(e, &x);
    int64_t t = (int64_t)e->t_ns + a->offset;
    a->events++;
    if (a->dump) /* QREPLAY_KEV_DUMP: every event as it comes, for debugging the recorder */
        fprintf(a->dump,
                "kev %u ns=%u t=%" PRId64 " lport=%u rport=%u seq=%u len=%u aux=%u flags=%#x\n",
                e->kind,
                e->netns,
                t,
                e->lport,
                e->rport,
                e->seq,
                e->len,
                e->aux,
                e->flags);
    switch (e->kind)
    {
    case QR_KEV_STATE:
        a->rc = qr_krec_state(w, &x, t, (int)e->aux, (int)e->len, a->err);
        break;
    case QR_KEV_SEND:
        a->rc = qr_krec_call(w, &x, 0, e->len, t, a->err);
        break;
    case QR_KEV_RECV:
        a->rc = qr_krec_call(w, &x, 1, e->len, t, a->err);
        break;
    case QR_KEV_XMIT:
        a->rc = qr_krec_sent_ipid(w,
                                  &x,
                                  e->seq,
                                  e->len,
                                  e->hdr,
                                  e->segs > 1 ? e->aux : 0,
                                  e->flags,
                                  e->ipid_ok ? (int32_t)e->ipid : -1,
                                  t,
                                  a->err);
        break;
    case QR_KEV_RETX:
        a->rc = qr_krec_resent(w, &x, e->seq, (qr_krec_resend)e->aux, t, a->err);
        break;
    case QR_KEV_RX:
        a->rc = qr_krec_arrived(w, &x, e->seq, e->len, e->hdr, e->flags, e->ce, e->aux, t, a->err);
        break;
    default:
        break;
    }
    return 0;
}

static int
netns_inode(const char* name, uint32_t* inum, char* errbuf)
{
    char p[512];
    snprintf(p, sizeof p, name ? "/run/netns/%s" : "/proc/self/ns/net", name);
    struct stat st;
    if (stat(p, &st) != 0)
        return fail(errbuf,
                    QR_ENOENT,
                    "--netns %s: no such network namespace (%s: %s)",
                    name ? name : "",
                    p,
                    strerror(errno));
    *inum = (uint32_t)st.st_ino;
    return QR_OK;
}

/* The programs' totals as the kernel counted them: the runs it skipped (a program that
 * interrupted itself: its recursion misses), and (with BPF_ENABLE_STATS on) their runs and time
 * in the kernel. */
static void
prog_totals(struct qr_record_bpf* s, uint64_t* misses, uint64_t* runs, uint64_t* ns)
{
    struct bpf_program* p;
    bpf_object__for_each_program(p, s->obj)
    {
        struct bpf_prog_info info;
        uint32_t len = sizeof info;
        memset(&info, 0, sizeof info);
        if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) == 0)
        {
            *misses += info.recursion_misses;
            *runs += info.run_cnt;
            *ns += info.run_time_ns;
        }
    }
}

/* The programs whose runs the kernel skipped, "NAME N, ..." into buf. */
static void
skipped_by(struct qr_record_bpf* s, char* buf, size_t size)
{
    struct bpf_program* p;
    size_t n = 0;
    buf[0] = 0;
    bpf_object__for_each_program(p, s->obj)
    {
        struct bpf_prog_info info;
        uint32_t len = sizeof info;
        memset(&info, 0, sizeof info);
        if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) == 0 && info.recursion_misses &&
            n < size)
            n += (size_t)snprintf(buf + n,
                                  size - n,
                                  "%s%s %llu",
                                  n ? ", " : "",
                                  bpf_program__name(p),
                                  (unsigned long long)info.recursion_misses);
    }
}

/* The events lost: those the ring buffer had no room for (or whose packet headers could not be
 * read), and the runs of the programs the kernel skipped. */
static uint64_t
lost_events(struct qr_record_bpf* s)
{
    uint32_t k = 1;
    uint64_t v = 0, runs = 0, ns = 0;
    bpf_map__lookup_elem(s->maps.state, &k, sizeof k, &v, sizeof v, 0);
    prog_totals(s, &v, &runs, &ns);
    return v;
}

/* libbpf's messages (the verifier's log among them) only when QREPLAY_BPF_LOG is set. */
static int
bpf_log(enum libbpf_print_level level, const char* fmt, va_list ap)
{
    (void)level;
    return getenv("QREPLAY_BPF_LOG") ? vfprintf(stderr, fmt, ap) : 0;
}

/* Poll the ring buffer until stopped; each second, the progress. */
static int
poll_events(const qr_kagent_opts* o,
            struct ring_buffer* rb,
            struct agent* a,
            struct qr_record_bpf* s)
{
    int64_t t0 = clock_ns(CLOCK_MONOTONIC), last = t0;
    while (!a->rc && !(o->stop && *o->stop))
    {
        int n = ring_buffer__poll(rb, 100);
        if (n < 0 && n != -EINTR)
            return fail(a->err, QR_EIO, "reading the kernel's events: %s", strerror(-n));
        int64_t now = clock_ns(CLOCK_MONOTONIC);
        if (o->duration_s > 0 && (double)(now - t0) / 1e9 >= o->duration_s)
            break;
        if (o->progress && now - last >= 1000000000)
        {
            last = now;
            qr_krec_stats st = {0};
            st.events = a->events;
            st.lost_events = lost_events(s);
            o->progress(o->ctx, &st, (double)(now - t0) / 1e9);
        }
    }
    return a->rc;
}

/* The namespaces' inode numbers and records, sorted by inode (a namespace named twice refused). */
static int
open_records(const qr_kagent_opts* o, struct agent* a, char* errbuf)
{
    size_t n = o->n_netns ? o->n_netns : 1;
    a->ns = calloc(n, sizeof *a->ns);
    if (!a->ns)
        return fail(errbuf, QR_ENOMEM, "out of memory");
    int64_t start = clock_ns(CLOCK_REALTIME) - 1000000;
    for (size_t i = 0; i < n; i++)
    {
        const char* name = o->n_netns ? o->netns[i] : NULL;
        a->ns[i].order = i;
        int rc = netns_inode(name, &a->ns[i].inum, errbuf);
        for (size_t j = 0; !rc && j < i; j++)
            if (a->ns[j].inum == a->ns[i].inum)
                rc = fail(errbuf, QR_EVALUE, "--netns %s: the same namespace twice", name);
        qr_krec_header h = {name ? name : "", a->ns[i].inum, start, o->method, o->n_th, {0}};
        memcpy(h.th_ns, o->th_ns, sizeof h.th_ns);
        if (!rc)
            rc = qr_krec_writer_open(&a->ns[i].w, o->out[i], &h, errbuf);
        if (!rc)
            rc = qr_krec_writer_ignore_ports(a->ns[i].w, o->ignore_ports, o->n_ignore, errbuf);
        a->n = i + 1;
        if (rc)
            return rc;
    }
    qsort(a->ns, a->n, sizeof *a->ns, cmp_nsrec);
    return QR_OK;
}

/* Every record put in place (lost: the recorder's, whatever the namespace), or every one dropped
 * (rc). st[i]: namespace i's, in the order given. */
static int
close_records(struct agent* a, int rc, uint64_t lost, qr_krec_stats* st, char* errbuf)
{
    /* packets a host sent that no event told: the kernel told nothing of any namespace then
     * (its events go through one ring buffer), so every record counts them lost */
    uint64_t unseen = 0;
    for (size_t i = 0; !rc && i < a->n; i++)
        unseen += qr_krec_writer_unseen(a->ns[i].w);
    for (size_t i = 0; i < a->n; i++)
    {
        if (rc)
        {
            qr_krec_writer_abort(a->ns[i].w);
            continue;
        }
        qr_krec_writer_recorder_lost(a->ns[i].w, lost);
        rc = qr_krec_writer_close(a->ns[i].w,
                                  a->ns[i].events,
                                  lost + unseen - qr_krec_writer_unseen(a->ns[i].w),
                                  st ? &st[a->ns[i].order] : NULL,
                                  errbuf);
    }
    free(a->ns);
    return rc;
}

int
qr_kagent_run(const qr_kagent_opts* o, qr_krec_stats* st, char* errbuf)
{
    char why[512];
    if (qr_kagent_missing(why, sizeof why))
        return fail(errbuf, QR_ESTATE, "qreplay record cannot run here: %s", why);
    libbpf_set_print(bpf_log);
    struct agent a = {.offset = realtime_offset(), .err = errbuf, .dump = NULL};
    const char* dump = getenv("QREPLAY_KEV_DUMP");
    if (dump)
        a.dump = strcmp(dump, "1") ? fopen(dump, "w") : stderr;
    int rc = open_records(o, &a, errbuf);
    struct qr_record_bpf* s = rc ? NULL : qr_record_bpf__open_and_load();
    if (!rc && !s)
        rc = fail(errbuf,
                  QR_EIO,
                  "the kernel refused the recorder's BPF program: %s (QREPLAY_BPF_LOG=1 prints "
                  "the verifier's log)",
                  strerror(errno));
    for (size_t i = 0; !rc && i < a.n; i++)
    {
        uint32_t idx = (uint32_t)i;
        if (bpf_map__update_elem(s->maps.recorded,
                                 &a.ns[i].inum,
                                 sizeof a.ns[i].inum,
                                 &idx,
                                 sizeof idx,
                                 0))
            rc = fail(errbuf, QR_EIO, "the recorder's namespace filter: %s", strerror(errno));
    }
    struct ring_buffer* rb = NULL;
    if (!rc && !(rb = ring_buffer__new(bpf_map__fd(s->maps.events), on_event, &a, NULL)))
        rc = fail(errbuf, QR_EIO, "the recorder's ring buffer: %s", strerror(errno));
    if (!rc && qr_record_bpf__attach(s))
        rc = fail(errbuf,
                  QR_EIO,
                  "attaching the recorder to TCP's tracepoints: %s",
                  strerror(errno));
    /* the kernel counts the programs' runs and time while this descriptor is open */
    int stats_fd = rc ? -1 : bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (!rc && o->ready)
        o->ready(o->ctx);
    if (!rc)
        rc = poll_events(o, rb, &a, s);
    uint64_t lost = 0;
    if (s)
    {
        qr_record_bpf__detach(s);
        uint64_t misses = 0, runs = 0, ns = 0;
        if (stats_fd >= 0)
            prog_totals(s, &misses, &runs, &ns);
        if (o->bpf_runs)
            *o->bpf_runs = runs;
        if (o->bpf_ns)
            *o->bpf_ns = ns;
        if (!rc && rb) /* what the kernel handed over before the detach */
            ring_buffer__consume(rb);
        lost = lost_events(s);
        uint32_t k = 1;
        uint64_t full = 0;
        bpf_map__lookup_elem(s->maps.state, &k, sizeof k, &full, sizeof full, 0);
        if (o->ring_full)
            *o->ring_full = full;
        if (o->skipped)
            *o->skipped = lost - full;
        if (o->skipped_by)
            skipped_by(s, o->skipped_by, 256);
    }
    if (stats_fd >= 0)
        close(stats_fd);
    rc = rc ? rc : a.rc;
    ring_buffer__free(rb);
    qr_record_bpf__destroy(s);
    if (a.dump && a.dump != stderr)
        fclose(a.dump);
    return close_records(&a, rc, lost, st, errbuf);
}

#else

int
qr_kagent_run(const qr_kagent_opts* o, qr_krec_stats* st, char* errbuf)
{
    (void)o;
    (void)st;
    return fail(errbuf,
                QR_ESTATE,
                "this qreplay was built without the kernel recorder: its build machine had no "
                "/sys/kernel/btf/vmlinux, clang, bpftool or libbpf-dev (./waf deps, then build "
                "again on a kernel with BTF)");
}

#endif
