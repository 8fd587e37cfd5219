/* qreplay sample: rate- or gap-based sampling of a trace's send times, and inference back. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/pcap_file.h"
#include "qreplay/sample_h5.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/textio.h"
#include "qreplay/units.h"
#include "qreplay/version.h"

static const cli_opt opts[] = {
    {"th", 0, CLI_VALUE, "TIME",
     "error bound (rate) or burst gap (gap), e.g. 5us; 0 = exact (default 5us)"},
    {"method", 0, CLI_VALUE, "M", "rate (bounded error, default) or gap (the strawman)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "sample",
    "IN OUT.h5",
    "Sample the send times of every flow direction in IN, infer every packet's time back\n"
    "from the records, and write both to OUT.h5:\n"
    "  /sampling/records   (flow, index, time_ns, gap_num, gap_den)  what a host would keep\n"
    "  /sampling/inferred  (flow, index, true_ns, inferred_ns)  one row per packet\n"
    "  /sampling/flows     (flow, packets, records, max_error_ns)\n"
    "Prints packets, records, packets per record and the maximum inference error.\n\n"
    "IN is a pcap of raw IPv4 packets (as qreplay records them; flows are 5-tuples) or a\n"
    "CSV with the header 'flow,time_ns' and one row per packet, in send order within each\n"
    "flow (flow is any name of at most 63 characters).\n",
    opts,
    sizeof opts / sizeof opts[0],
    2,
    2,
    "expected IN and OUT.h5",
    NULL};

/* Packets grouped by flow direction, in order of first appearance. */
struct flow {
    char name[QR_FLOW_NAME_MAX];
    int64_t *times;
    size_t n, cap;
    long first_line; /* CSV: line of the flow's latest packet, for messages */
};

struct flowset {
    struct flow *flows;
    size_t n, cap;
    size_t *slots; /* open addressing: index + 1, 0 = empty */
    size_t n_slots;
    uint64_t packets;
};

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static struct flow *flow_get(struct flowset *fs, const char *name)
{
    if (fs->n * 2 >= fs->n_slots) {
        size_t ns = fs->n_slots ? fs->n_slots * 2 : 1024;
        size_t *slots = calloc(ns, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < fs->n; i++) {
            size_t j = hash_name(fs->flows[i].name) & (ns - 1);
            while (slots[j])
                j = (j + 1) & (ns - 1);
            slots[j] = i + 1;
        }
        free(fs->slots);
        fs->slots = slots;
        fs->n_slots = ns;
    }
    size_t j = hash_name(name) & (fs->n_slots - 1);
    while (fs->slots[j]) {
        struct flow *f = &fs->flows[fs->slots[j] - 1];
        if (strcmp(f->name, name) == 0)
            return f;
        j = (j + 1) & (fs->n_slots - 1);
    }
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? 2 * fs->cap : 64;
        struct flow *v = realloc(fs->flows, cap * sizeof *v);
        if (!v)
            return NULL;
        fs->flows = v;
        fs->cap = cap;
    }
    struct flow *f = &fs->flows[fs->n];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    fs->slots[j] = ++fs->n;
    return f;
}

static int flow_push(struct flow *f, int64_t t)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 256;
        int64_t *v = realloc(f->times, cap * sizeof *v);
        if (!v)
            return -1;
        f->times = v;
        f->cap = cap;
    }
    f->times[f->n++] = t;
    return 0;
}

static void flowset_free(struct flowset *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        free(fs->flows[i].times);
    free(fs->flows);
    free(fs->slots);
}

static int interrupted(void)
{
    fprintf(stderr, "qreplay sample: interrupted; nothing written\n");
    return cli_interrupted_status();
}

static int load_pcap(const char *path, struct flowset *fs, cli_progress *p)
{
    char err[QR_ERRBUF_SIZE];
    qr_pcap_reader *r;
    if (qr_pcap_reader_open(&r, path, err))
        return cli_fail("sample", "%s", err);
    qr_packet pk;
    int rc;
    while ((rc = qr_pcap_read(r, &pk, err)) == QR_OK) {
        char name[QR_FLOW_NAME_MAX];
        struct flow *f = flow_get(fs, qr_packet_flow_name(&pk, name, sizeof name));
        if (!f || flow_push(f, pk.time_ns)) {
            qr_pcap_reader_close(r);
            return cli_fail("sample", "out of memory");
        }
        fs->packets++;
        cli_progress_update(p, "sample: read %" PRIu64 " packets", fs->packets);
        if (cli_signal) {
            qr_pcap_reader_close(r);
            return interrupted();
        }
    }
    if (rc == QR_END && qr_pcap_reader_warning(r)[0])
        fprintf(stderr, "qreplay sample: warning: %s\n", qr_pcap_reader_warning(r));
    qr_pcap_reader_close(r);
    if (rc != QR_END)
        return cli_fail("sample", "%s", err);
    return 0;
}

static int load_csv(const char *path, struct flowset *fs, cli_progress *p)
{
    char err[QR_ERRBUF_SIZE];
    qr_lines *in;
    if (qr_lines_open(&in, path, err))
        return cli_fail("sample", "%s", err);
    char *line;
    size_t len;
    long lineno = 0;
    int rc;
    while ((rc = qr_lines_next(in, &line, &len, &lineno, err)) == QR_OK) {
        if (lineno == 1) {
            if (strcmp(line, "flow,time_ns") != 0) {
                qr_lines_close(in);
                return cli_fail("sample", "%s:1: expected the header 'flow,time_ns'", path);
            }
            continue;
        }
        if (len == 0)
            continue;
        char *comma = strrchr(line, ',');
        const char *bad = NULL;
        long long t = 0;
        if (!comma || comma == line) {
            bad = "expected 'flow,time_ns'";
        } else {
            *comma = '\0';
            char *end;
            errno = 0;
            t = strtoll(comma + 1, &end, 10);
            if (strlen(line) >= QR_FLOW_NAME_MAX)
                bad = "flow name longer than 63 characters";
            else if (errno || end == comma + 1 || *end != '\0' || t < 0 || t > QR_TIME_MAX ||
                     !isdigit((unsigned char)comma[1]))
                bad = "time_ns is not a whole number of ns in 0 .. 2^62";
        }
        if (bad) {
            qr_lines_close(in);
            return cli_fail("sample", "%s:%ld: %s", path, lineno, bad);
        }
        struct flow *f = flow_get(fs, line);
        if (!f || (f->n > 0 && t < f->times[f->n - 1]) || flow_push(f, t)) {
            rc = !f ? cli_fail("sample", "out of memory")
                 : f->n > 0 && t < f->times[f->n - 1]
                     ? cli_fail("sample",
                                "%s:%ld: flow %s goes back in time (%lld ns after %" PRId64
                                " ns at line %ld)",
                                path, lineno, line, t, f->times[f->n - 1], f->first_line)
                     : cli_fail("sample", "out of memory");
            qr_lines_close(in);
            return rc;
        }
        f->first_line = lineno;
        fs->packets++;
        cli_progress_update(p, "sample: read %" PRIu64 " packets", fs->packets);
        if (cli_signal) {
            qr_lines_close(in);
            return interrupted();
        }
    }
    qr_lines_close(in);
    if (rc != QR_END)
        return cli_fail("sample", "%s", err);
    if (lineno == 0)
        return cli_fail("sample", "%s: empty file", path);
    return 0;
}

static int load_input(const char *path, struct flowset *fs, cli_progress *p)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return cli_fail("sample", "%s: cannot open: %s", path, strerror(errno));
    unsigned char magic[4] = {0};
    size_t got = fread(magic, 1, 4, fp);
    uint32_t m = (uint32_t)magic[0] | (uint32_t)magic[1] << 8 | (uint32_t)magic[2] << 16 |
                 (uint32_t)magic[3] << 24;
    int is_pcap = got == 4 && (m == 0xa1b2c3d4 || m == 0xd4c3b2a1 || m == 0xa1b23c4d ||
                               m == 0x4d3cb2a1 || m == 0x0a0d0d0a);
    int rc;
    if (is_pcap || (got == 4 && memcmp(magic, "flow", 4) != 0)) {
        fclose(fp);
        rc = load_pcap(path, fs, p); /* anything not a CSV gets pcap's verdict on its format */
    } else {
        fclose(fp);
        rc = load_csv(path, fs, p);
    }
    return rc;
}

int qr_cmd_sample(int argc, char **argv)
{
    qr_sampler_cfg cfg = {.method = QR_SAMPLING_RATE, .th_ns = 5000};
    char err[QR_ERRBUF_SIZE];
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *th = cli_value(&a, "th"), *method = cli_value(&a, "method");
    int quiet = cli_count(&a, "quiet") > 0;
    const char *in = a.pos[0], *out = a.pos[1];
    rc = -1;
    if (th && qr_parse_time_ns(th, &cfg.th_ns, err))
        rc = cli_usage_error("sample", "--th: %s", err);
    else if (method && strcmp(method, "rate") == 0)
        cfg.method = QR_SAMPLING_RATE;
    else if (method && strcmp(method, "gap") == 0)
        cfg.method = QR_SAMPLING_GAP;
    else if (method)
        rc = cli_usage_error("sample", "--method: '%s' is not rate or gap", method);
    if (rc < 0) {
        /* never write over the input (the same file through any path or link) */
        cli_paths ins = {0}, outs = {0};
        cli_paths_add(&ins, "%s", in);
        cli_paths_add(&outs, "%s", out);
        if (cli_check_outputs("sample", &outs, &ins))
            rc = 1;
    }
    if (rc >= 0) {
        cli_args_free(&a);
        return rc;
    }

    cli_progress p;
    cli_progress_init(&p, quiet);
    struct flowset fs = {0};
    cli_catch_signals();
    rc = load_input(in, &fs, &p);
    cli_progress_done(&p);
    if (rc) {
        cli_restore_signals();
        flowset_free(&fs);
        cli_args_free(&a);
        return rc;
    }

    qr_sample_file *sf = NULL;
    qr_sample_file_stats st = {0};
    uint64_t done = 0;
    if (qr_sample_file_create(&sf, out, in, &cfg, err)) {
        rc = cli_fail("sample", "%s", err);
        goto out;
    }
    for (size_t fi = 0; fi < fs.n; fi++) {
        if (cli_signal) {
            rc = interrupted();
            goto out;
        }
        const struct flow *f = &fs.flows[fi];
        if (qr_sample_file_flow(sf, f->name, f->times, f->n, NULL, err)) {
            rc = cli_fail("sample", "%s: %s", in, err);
            goto out;
        }
        done += f->n;
        cli_progress_update(&p, "sample: %" PRIu64 " of %" PRIu64 " packets sampled", done,
                            fs.packets);
    }
    cli_progress_done(&p);
    if (cli_signal) {
        rc = interrupted();
        goto out;
    }
    rc = qr_sample_file_commit(sf, &st, err);
    sf = NULL;
    if (rc) {
        rc = cli_fail("sample", "%s", err);
        goto out;
    }
    double ppr = st.records ? (double)st.packets / (double)st.records : 0.0;
    char th_text[32];
    qr_format_time(cfg.th_ns, th_text, sizeof th_text);
    if (!quiet) {
        printf("input              %s\n", in);
        printf("method             %s, th = %s\n", cfg.method == QR_SAMPLING_RATE ? "rate" : "gap",
               th_text);
        printf("flows              %zu\n", fs.n);
        printf("packets            %" PRIu64 "\n", fs.packets);
        printf("records            %" PRIu64 "\n", st.records);
        printf("packets/record     %.2f\n", ppr);
        printf("max error          %" PRId64 " ns\n", st.max_error_ns);
        printf("output             %s\n", out);
    }
out:
    qr_sample_file_abort(sf);
    flowset_free(&fs);
    cli_restore_signals();
    cli_args_free(&a);
    return rc;
}
