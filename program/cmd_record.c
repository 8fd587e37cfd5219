/* qreplay record: DETER's always-on record of a real Linux host's TCP, from the kernel's own
 * tracepoints (eBPF), and qreplay record --show: what a record holds and costs. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "krec_agent.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/krecord.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/version.h"
#include "testbed_net.h"

static const cli_opt opts[] = {
    {"netns", 0, CLI_VALUE, "LIST",
     "record these network namespaces (ip netns; comma-separated) instead of our own"},
    CLI_OPT_OUT("the record (default NAME.qrk, or host.qrk); with several namespaces a folder "
                "(default record/) of NAME.qrk, swapped in whole"),
    {"th", 0, CLI_VALUE, "LIST", "send-time sampling thresholds (default 1us,5us,10us)"},
    {"method", 0, CLI_VALUE, "rate|gap", "the sampler (rate: bounded error; the default)"},
    {"ignore-port", 0, CLI_VALUE, "LIST",
     "leave out connections on these ports (comma-separated; e.g. monitors' own probes)"},
    {"duration", 0, CLI_VALUE, "TIME", "stop after this long (default: at Ctrl-C or SIGTERM)"},
    {"show", 0, CLI_VALUE, "FILE", "print what the record FILE holds and costs, then exit"},
    {"rate-test", 0, CLI_FLAG, NULL,
     "measure the packet rates this machine's recorder keeps whole (-o: a CSV, default "
     "record-rate.csv)"},
    {"rates", 0, CLI_VALUE, "LIST",
     "--rate-test: the sender's aims, writes per second (default 2k,5k,10k,20k,50k,100k,200k)"},
    {"step", 0, CLI_VALUE, "TIME", "--rate-test: each rate's traffic (default 2s)"},
    {"size", 0, CLI_VALUE, "BYTES", "--rate-test: one write (default 100)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "record",
    "",
    "Record this host's TCP (or a network namespace's, --netns) as DETER does, with the kernel's\n"
    "own tracepoints (eBPF, CO-RE): connections (ends, open, close), the application's socket\n"
    "calls (sizes and times), every packet handed to the NIC reduced to what a replay needs (IP\n"
    "sizes run-length coded, GSO packets as the segments the NIC sends, send times through the\n"
    "rate-based sampler at each threshold), TCP's resends with the kernel's reason (RTO, fast,\n"
    "probe), and what arrived: sequence holes, duplicates (resends that were not needed), ECN\n"
    "CE marks, zero windows. No payload and no\n"
    "per-packet time are kept.\n\n"
    "The record (docs/FORMATS.md, \"The kernel record\") is written as the events come, in\n"
    "memory bounded by the open connections, and put in place whole at the end: Ctrl-C stops\n"
    "within a second with a complete record. Events the kernel could not hand over (a full ring\n"
    "buffer) are counted and reported. Needs root, a kernel with BTF and its TCP tracepoints;\n"
    "tracefs is mounted if it is not.\n\n"
    "--rate-test measures the packet rates this machine's recorder keeps without losing an\n"
    "event: two network namespaces of its own joined by a veth pair, an idle step (the\n"
    "recorder alone: its fixed cost), then for each rate a sender writing small messages\n"
    "(TCP_NODELAY: a segment each) at that rate to a receiver in the other namespace, both\n"
    "recorded by one recorder; each step's records are read back and checked against what the\n"
    "sender wrote. It stops rising where the sender falls short of its aim (the machine's\n"
    "limit), removes the namespaces, and writes a CSV of every step.\n",
    opts,
    sizeof opts / sizeof opts[0],
    0,
    0,
    "takes no arguments (options only)",
    "examples:\n"
    "  sudo qreplay record --duration 60s -o /var/tmp/host.qrk\n"
    "  sudo qreplay record --netns h0 -o h0.qrk        # one testbed host, until Ctrl-C\n"
    "  sudo qreplay record --netns h0,h1,h2 -o rec/     # one process, a record per namespace\n"
    "  qreplay record --show h0.qrk\n"
    "  sudo qreplay record --rate-test -o rate.csv     # the rates this machine keeps whole\n"};

/* format: the record's (4: its losses not told apart). */
static void print_stats(const char *path, const qr_krec_stats *s, const qr_krec_header *h,
                        int format)
{
    printf("record             %s (%" PRIu64 " bytes)\n", cli_shown(path), s->file_bytes);
    printf("connections        %" PRIu64 " (%" PRIu64 " closed while recorded)\n", s->connections,
           s->closed);
    printf("socket calls       %" PRIu64 " sends (%" PRIu64 " B), %" PRIu64 " receives (%" PRIu64
           " B)\n",
           s->calls[0], s->call_bytes[0], s->calls[1], s->call_bytes[1]);
    printf("packets sent       %" PRIu64 " (%" PRIu64 " B, %" PRIu64 " of payload; %" PRIu64
           " handed to the NIC)\n",
           s->packets, s->bytes, s->payload_bytes, s->nic_packets);
    printf("resends            %" PRIu64 " RTO, %" PRIu64 " fast, %" PRIu64 " probe\n",
           s->resends[QR_KREC_RTO], s->resends[QR_KREC_FAST], s->resends[QR_KREC_PROBE]);
    printf("arrived            %" PRIu64 " sequence holes (%" PRIu64 " B), %" PRIu64
           " duplicates (%" PRIu64 " B), %" PRIu64 " CE marks, %" PRIu64 " zero windows\n",
           s->holes, s->hole_bytes, s->duplicates, s->duplicate_bytes, s->ce, s->zero_windows);
    for (size_t i = 0; h && i < h->n_th; i++) {
        char t[32];
        printf("samples at %-7s %" PRIu64 " records\n", qr_format_time(h->th_ns[i], t, sizeof t),
               s->sample_records[i]);
    }
    printf("events             %" PRIu64 " from the kernel, %" PRIu64 " lost%s\n", s->events,
           s->lost_events, s->lost_events ? ": the record misses them" : "");
    if (s->lost_events && format >= 5 && s->recorder_lost + s->unseen <= s->lost_events)
        printf("lost               %" PRIu64 " by the recorder (its ring buffer full, runs the "
               "kernel skipped), %" PRIu64 " packets this host sent that no event told (gaps in "
               "its connections' IP identifications), %" PRIu64 " such packets of other hosts "
               "recorded with it\n",
               s->recorder_lost, s->unseen, s->lost_events - s->recorder_lost - s->unseen);
    if (s->ignored_events || s->flagless)
        printf("left out           %" PRIu64 " events of connections on ignored ports, %" PRIu64
               " TCP packets with no flag (no TCP stack sends one: a raw socket's probes)\n",
               s->ignored_events, s->flagless);
    if (s->reordered)
        printf("note               %" PRIu64 " send times before their connection's previous "
               "one (the CPUs' clocks): taken as the previous\n",
               s->reordered);
    printf("bytes per part    ");
    for (unsigned p = 0; p < QR_KREC_PARTS; p++)
        printf(" %s %" PRIu64, qr_krec_part_name((qr_krec_part)p), s->part_bytes[p]);
    printf("\n");
}

/* A line per connection (the first 20). */
static void print_conns(const qr_krec *k)
{
    const qr_krec_conn *c;
    size_t n = qr_krec_conns(k, &c);
    if (n)
        printf("\n%-4s %-44s %9s %9s %10s %8s %8s\n", "conn", "this end -> peer", "open (s)",
               "close (s)", "packets", "sends", "resends");
    int64_t t0 = qr_krec_header_of(k)->start_ns;
    for (size_t i = 0; i < n && i < 20; i++) {
        char l[64], r[64], ends[160], close[32] = "open";
        int af = c[i].ends.family == 6 ? AF_INET6 : AF_INET;
        inet_ntop(af, c[i].ends.laddr, l, sizeof l);
        inet_ntop(af, c[i].ends.raddr, r, sizeof r);
        snprintf(ends, sizeof ends, "%s:%u -> %s:%u", l, c[i].ends.lport, r, c[i].ends.rport);
        if (c[i].close_ns)
            snprintf(close, sizeof close, "%.6f", (double)(c[i].close_ns - t0) / 1e9);
        printf("%-4u %-44s %9.6f%s %9s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n", c[i].id, ends,
               (double)(c[i].open_ns - t0) / 1e9, c[i].mid ? "*" : " ", close, c[i].packets,
               c[i].calls[0], c[i].resends[0] + c[i].resends[1] + c[i].resends[2]);
    }
    if (n > 20)
        printf("... and %zu more\n", n - 20);
    if (n)
        printf("(* first seen after it opened: open before the record started)\n");
}

static int show(const char *path)
{
    char err[QR_ERRBUF_SIZE];
    qr_krec *k;
    if (qr_krec_open(&k, path, err))
        return cli_fail("record", "%s", err);
    qr_krec_stats st;
    qr_krec_stats_get(k, &st);
    printf("host               %s\n", qr_krec_host(k)[0] ? qr_krec_host(k) : "(this host)");
    print_stats(path, &st, qr_krec_header_of(k), qr_krec_format(k));
    print_conns(k);
    qr_krec_close(k);
    return 0;
}

static void on_ready(void *ctx)
{
    const char *out = ctx;
    fprintf(stderr,
            "qreplay record: listening on the kernel's TCP, recording to %s (Ctrl-C stops)\n",
            cli_shown(out));
}

static void on_progress(void *ctx, const qr_krec_stats *st, double elapsed)
{
    (void)ctx;
    fprintf(stderr, "\rrecord: %.0f s | %" PRIu64 " events | %" PRIu64 " lost   ", elapsed,
            st->events, st->lost_events);
}

/* The options into o. Returns -1, or the exit code of a usage error. */
static int parse_options(const cli_args *a, qr_kagent_opts *o)
{
    char err[QR_ERRBUF_SIZE];
    const char *th = cli_value(a, "th"), *method = cli_value(a, "method");
    const char *duration = cli_value(a, "duration");
    if (qr_parse_time_list(th ? th : "1us,5us,10us", o->th_ns, QR_KREC_MAX_TH, &o->n_th, err))
        return cli_usage_error("record", "--th: %s", err);
    for (size_t i = 1; i < o->n_th; i++)
        if (o->th_ns[i] <= o->th_ns[i - 1])
            return cli_usage_error("record", "--th: thresholds in increasing order");
    if (method && strcmp(method, "rate") && strcmp(method, "gap"))
        return cli_usage_error("record", "--method: '%s' is not rate or gap", method);
    o->method = method && !strcmp(method, "gap") ? QR_SAMPLING_GAP : QR_SAMPLING_RATE;
    int64_t d = 0;
    if (duration && (qr_parse_time_ns(duration, &d, err) || d <= 0))
        return cli_usage_error("record", "--duration: '%s' is not a time above 0", duration);
    o->duration_s = (double)d / 1e9;
    static uint16_t ports[QR_KREC_MAX_IGNORE];
    const char *ig = cli_value(a, "ignore-port");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", ig ? ig : "");
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || *end || v < 1 || v > 65535)
            return cli_usage_error("record", "--ignore-port: '%s' is not a port (1-65535)", p);
        if (o->n_ignore == QR_KREC_MAX_IGNORE)
            return cli_usage_error("record", "--ignore-port: at most %d ports", QR_KREC_MAX_IGNORE);
        ports[o->n_ignore++] = (uint16_t)v;
    }
    if (ig && !o->n_ignore)
        return cli_usage_error("record", "--ignore-port: no port given");
    o->ignore_ports = ports;
    return -1;
}

#define MAX_NS 4096

/* The namespaces of --netns (a comma-separated list) into names[] (pointing into buf). */
static int netns_list(const char *text, char *buf, size_t size, const char **names, size_t *n)
{
    *n = 0;
    if (!text)
        return -1;
    snprintf(buf, size, "%s", text);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_NS)
            return cli_usage_error("record", "--netns: at most %d namespaces", MAX_NS);
        if (!*p || strchr(p, '/'))
            return cli_usage_error("record", "--netns: '%s' is not a namespace's name", p);
        names[(*n)++] = p;
    }
    if (!*n)
        return cli_usage_error("record", "--netns: no namespace named");
    return -1;
}

/* Record: into one file, or (several namespaces) into a folder swapped in whole. */
static int record(qr_kagent_opts *o, const char *out_opt, int quiet)
{
    char err[QR_ERRBUF_SIZE], one[4096];
    size_t n = o->n_netns ? o->n_netns : 1;
    const char **outs = calloc(n, sizeof *outs);
    char *paths = calloc(n, 4200);
    qr_krec_stats *st = calloc(n, sizeof *st);
    qr_stage *stage = NULL;
    int rc = outs && paths && st ? QR_OK : QR_ENOMEM;
    if (!rc && n == 1) {
        snprintf(one, sizeof one, "%s", out_opt ? out_opt : "");
        if (!one[0])
            snprintf(one, sizeof one, "%s.qrk", o->n_netns ? o->netns[0] : "host");
        outs[0] = one;
    } else if (!rc) { /* a folder: one record per namespace, NAME.qrk */
        rc = qr_stage_begin(&stage, out_opt ? out_opt : "record", err);
        for (size_t i = 0; !rc && i < n; i++) {
            snprintf(paths + i * 4200, 4200, "%s/%s.qrk", qr_stage_path(stage), o->netns[i]);
            outs[i] = paths + i * 4200;
        }
    }
    o->out = outs;
    o->ctx = (void *)(n == 1 ? one : out_opt ? out_opt : "record");
    uint64_t bpf_runs = 0, bpf_ns = 0, full = 0, skipped = 0;
    o->bpf_runs = &bpf_runs;
    o->bpf_ns = &bpf_ns;
    o->ring_full = &full;
    o->skipped = &skipped;
    char by[256] = "";
    o->skipped_by = by;
    cli_watchdog_off(); /* it stops by itself, within 0.1 s, and writes the records whole */
    cli_catch_signals();
    if (!rc)
        rc = qr_kagent_run(o, st, err);
    int stopped = cli_signal;
    cli_signal = 0; /* the way to stop it: the record is complete, not interrupted */
    cli_restore_signals();
    if (!rc && stage)
        rc = qr_stage_commit(stage, err);
    else
        qr_stage_abort(stage);
    if (!quiet)
        fprintf(stderr, "\n");
    if (!rc && !quiet) {
        if (stopped)
            fprintf(stderr, "qreplay record: stopped by signal %d; the record is complete\n",
                    stopped);
        /* the testbed reads this line: the programs' CPU, charged to what they interrupted */
        fprintf(stderr,
                "qreplay record: its BPF programs ran %" PRIu64 " times, %.6f s of CPU in the "
                "kernel\n",
                bpf_runs, (double)bpf_ns / 1e9);
        if (full || skipped)
            fprintf(stderr,
                    "qreplay record: it lost %" PRIu64 " events: %" PRIu64 " found its ring "
                    "buffer full (or a packet whose headers could not be read), %" PRIu64
                    " were runs of its programs the kernel skipped (a program interrupted by "
                    "itself on its CPU%s%s)\n",
                    full + skipped, full, skipped, by[0] ? ": " : "", by);
        qr_krec_header h = {0};
        h.n_th = o->n_th;
        memcpy(h.th_ns, o->th_ns, sizeof h.th_ns);
        for (size_t i = 0; i < n; i++) {
            if (n > 1)
                printf("%s== %s\n", i ? "\n" : "", o->netns[i]);
            print_stats(n == 1 ? one : o->netns[i], &st[i], &h, 5);
        }
    }
    free(outs);
    free(paths);
    free(st);
    if (rc == QR_ENOMEM)
        return cli_fail("record", "out of memory");
    return rc ? cli_fail("record", "%s", err) : 0;
}

/* "2k,5k,1M" into rates (at most max), increasing. Returns -1, or a usage error's code. */
static int rate_list(const char *text, double *rates, size_t max, size_t *n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    *n = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(p, &end);
        v *= *end == 'k' || *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : 1;
        end += *end == 'k' || *end == 'K' || *end == 'M';
        if (end == p || *end || !(v >= 1 && v <= 1e7))
            return cli_usage_error("record", "--rates: '%s' is not a rate of 1 to 10M writes/s", p);
        if (*n == max)
            return cli_usage_error("record", "--rates: at most %zu rates", max);
        if (*n && v <= rates[*n - 1])
            return cli_usage_error("record", "--rates: rates in increasing order");
        rates[(*n)++] = v;
    }
    return *n ? -1 : cli_usage_error("record", "--rates: no rate given");
}

static void print_rate_table(const qr_krec_rate_step *s, size_t n, const qr_krec_rate_summary *r)
{
    printf("%10s %9s %11s %11s %10s %7s %8s %9s %9s %8s\n", "aim (w/s)", "writes", "packets/s",
           "events/s", "ring lost", "unseen", "whole", "recorder", "BPF", "us/pkt");
    for (size_t i = 0; i < n; i++) {
        double t = s[i].traffic_s, above = s[i].target_pps > 0 ? s[i].cpu_s - r->idle_cpu_s : 0;
        if (s[i].unrecorded) {
            printf("%10.0f %9" PRIu64 " %11s %11s %10s %7s %8s %9s %9s %8s   (not recorded: "
                   "%.0f writes/s)\n",
                   s[i].target_pps, s[i].writes, "-", "-", "-", "-", "-", "-", "-", "-",
                   t > 0 ? (double)s[i].writes / t : 0);
            continue;
        }
        if (s[i].target_pps <= 0) {
            printf("%10s %9s %11s %11s %10" PRIu64 " %7" PRIu64 " %8s %8.3fs %9s %8s\n", "idle",
                   "-", "-", "-", s[i].ring_lost, s[i].unseen, "-", s[i].cpu_s, "-", "-");
            continue;
        }
        printf("%10.0f %9" PRIu64 " %11.0f %11.0f %10" PRIu64 " %7" PRIu64 " %8s %8.2f%% %8.2f%% "
               "%8.2f\n",
               s[i].target_pps, s[i].writes, qr_krec_rate_pps(&s[i]),
               t > 0 ? (double)s[i].events / t : 0, s[i].ring_lost, s[i].unseen,
               qr_krec_rate_whole(&s[i])   ? "yes"
               : qr_krec_rate_short(&s[i]) ? "short"
                                           : "NO",
               t > 0 ? 100 * above / t : 0, t > 0 ? 100 * s[i].bpf_s / t : 0,
               s[i].nic_packets ? 1e6 * (above + s[i].bpf_s) / (double)s[i].nic_packets : 0);
    }
    printf("\nhighest packet rate kept whole  %.0f packets/s (both hosts' packets handed to the "
           "NIC)\n",
           r->whole_pps);
    printf("highest with no event lost by the recorder  %.0f packets/s\n", r->ring_whole_pps);
    if (r->first_lossy_pps > 0)
        printf("the recorder first lost events at  %.0f packets/s\n", r->first_lossy_pps);
    if (r->saturated)
        printf("the sender fell short of its aim: at most %.0f writes/s recorded (%.0f packets/s), "
               "%.0f writes/s not recorded\n",
               r->max_wps, r->max_pps, r->bare_wps);
    else
        printf("the highest rate reached  %.0f packets/s (give higher --rates to go on)\n",
               r->max_pps);
}

/* qreplay record --rate-test. */
static int rate_test(const cli_args *a)
{
    double rates[64];
    size_t n = 0;
    int rc;
    const char *list = cli_value(a, "rates"), *step = cli_value(a, "step");
    const char *size = cli_value(a, "size"), *th = cli_value(a, "th");
    const char *out = cli_value(a, "out") ? cli_value(a, "out") : "record-rate.csv";
    if ((rc = rate_list(list ? list : "2k,5k,10k,20k,50k,100k,200k", rates, 64, &n)) >= 0)
        return rc;
    char err[QR_ERRBUF_SIZE];
    int64_t step_ns = 2000000000;
    if (step &&
        (qr_parse_time_ns(step, &step_ns, err) || step_ns < 100000000 || step_ns > 600000000000))
        return cli_usage_error("record", "--step: '%s' is not a time of 0.1 s to 10 min", step);
    double msg = 100;
    if (size && qr_parse_double(size, 1, 65536, &msg, err))
        return cli_usage_error("record", "--size: %s", err);
    if (cli_value(a, "netns") || cli_value(a, "duration") || cli_value(a, "show"))
        return cli_usage_error("record", "--rate-test makes its own namespaces and steps: no "
                                         "--netns, --duration or --show with it");
    if (tb_check_privileges("record"))
        return 1;
    char why[512];
    if (qr_kagent_missing(why, sizeof why))
        return cli_fail("record", "qreplay record cannot run here: %s", why);
    char work[] = "/tmp/qreplay-rate-XXXXXX";
    if (!mkdtemp(work))
        return cli_fail("record", "a scratch folder in /tmp: %s", strerror(errno));
    qr_krec_rate_step steps[66];
    size_t n_steps = 0;
    tb_rate_opts o = {rates,
                      n,
                      (double)step_ns / 1e9,
                      (uint32_t)msg,
                      th ? th : "1us,5us,10us",
                      work,
                      cli_count(a, "quiet") > 0};
    cli_catch_signals();
    rc = tb_record_rate("record", &o, steps, &n_steps);
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf -- '%s'", work);
    if (system(rm) != 0)
        fprintf(stderr, "qreplay record: could not remove %s\n", work);
    if (rc)
        return rc;
    struct utsname u;
    uname(&u);
    char made[600];
    snprintf(made, sizeof made,
             "qreplay %s record --rate-test --rates %s --step %s --size %.0f --th %s; kernel %s",
             qr_version(), list ? list : "2k,5k,10k,20k,50k,100k,200k", step ? step : "2s", msg,
             o.th, u.release);
    if (qr_krec_rate_write(out, made, steps, n_steps, err))
        return cli_fail("record", "%s", err);
    qr_krec_rate_summary r;
    qr_krec_rate_summarise(steps, n_steps, &r);
    if (!cli_count(a, "quiet"))
        print_rate_table(steps, n_steps, &r);
    return 0;
}

int qr_cmd_record(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (cli_count(&a, "rate-test")) {
        rc = rate_test(&a);
        cli_args_free(&a);
        return rc;
    }
    if (cli_value(&a, "rates") || cli_value(&a, "step") || cli_value(&a, "size")) {
        cli_args_free(&a);
        return cli_usage_error("record", "--rates, --step and --size go with --rate-test");
    }
    if (cli_value(&a, "show")) {
        rc = show(cli_value(&a, "show"));
        cli_args_free(&a);
        return rc;
    }
    qr_kagent_opts o = {0};
    static char nsbuf[1 << 16];
    static const char *names[MAX_NS];
    if ((rc = parse_options(&a, &o)) >= 0 ||
        (rc = netns_list(cli_value(&a, "netns"), nsbuf, sizeof nsbuf, names, &o.n_netns)) >= 0) {
        cli_args_free(&a);
        return rc;
    }
    o.netns = names;
    int quiet = cli_count(&a, "quiet") > 0;
    char out_opt[4096] = "";
    if (cli_value(&a, "out"))
        snprintf(out_opt, sizeof out_opt, "%s", cli_value(&a, "out"));
    o.stop = &cli_signal;
    o.ready = quiet ? NULL : on_ready;
    o.progress = quiet ? NULL : on_progress;
    cli_args_free(&a);
    return record(&o, out_opt[0] ? out_opt : NULL, quiet);
}
