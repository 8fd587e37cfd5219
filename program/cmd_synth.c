#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/pcap_file.h"
#include "qreplay/synth.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"

static const cli_opt opts[] = {
    {"packets", 0, CLI_VALUE, "N", "packets in all (default 100000)"},
    {"flows", 0, CLI_VALUE, "F", "flow directions (default 8)"},
    {"seed", 0, CLI_VALUE, "S", "seed (default 1)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "synth",
    "OUT.pcap|OUT.csv",
    "Write a synthetic send trace of one host: F flows of N packets each in total,\n"
    "bursts of 1500-byte packets at 1, 2.5, 5 or 10 Gbit/s with rate changes inside\n"
    "bursts and idle gaps between them (see synth.h of the core). A pcap gets\n"
    "real IPv4/TCP headers (consecutive IP IDs per flow); a CSV gets 'flow,time_ns'.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one output file",
    NULL};

struct cursor {
    int64_t *times;
    size_t n, next;
};

int qr_cmd_synth(int argc, char **argv)
{
    int64_t packets = 100000, flows = 8, seed = 1;
    char err[QR_ERRBUF_SIZE];
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *np = cli_value(&a, "packets"), *nf = cli_value(&a, "flows"),
               *ns = cli_value(&a, "seed");
    int quiet = cli_count(&a, "quiet") > 0;
    const char *out = a.pos[0];
    rc = -1;
    if (np && qr_parse_int(np, 1, 1000000000, &packets, err))
        rc = cli_usage_error("synth", "--packets: %s", err);
    else if (nf && qr_parse_int(nf, 1, 65000, &flows, err))
        rc = cli_usage_error("synth", "--flows: %s", err);
    else if (ns && qr_parse_int(ns, 0, INT64_MAX, &seed, err))
        rc = cli_usage_error("synth", "--seed: %s", err);
    cli_args_free(&a);
    if (rc >= 0)
        return rc;
    size_t len = strlen(out);
    int csv = len > 4 && strcmp(out + len - 4, ".csv") == 0;
    if (!csv && !(len > 5 && strcmp(out + len - 5, ".pcap") == 0))
        return cli_usage_error("synth", "output must end in .pcap or .csv");

    struct cursor *cur = calloc((size_t)flows, sizeof *cur);
    if (!cur)
        return cli_fail("synth", "out of memory");
    qr_synth_cfg cfg = qr_synth_default((uint64_t)seed);
    rc = 0;
    for (int64_t f = 0; f < flows && !rc; f++) {
        cur[f].n = (size_t)(packets / flows + (f < packets % flows));
        cur[f].times = malloc((cur[f].n ? cur[f].n : 1) * sizeof *cur[f].times);
        if (!cur[f].times || qr_synth_flow(&cfg, (uint64_t)f, cur[f].n, cur[f].times))
            rc = cli_fail("synth", "out of memory");
    }
    /* written under a temporary name, renamed when whole */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial-%ld", out, (long)getpid());
    qr_leftovers_remove(out);
    qr_partial_add(tmp);
    FILE *fp = NULL;
    qr_pcap_writer *w = NULL;
    cli_catch_signals();
    if (!rc && csv && !(fp = fopen(tmp, "w")))
        rc = cli_fail("synth", "%s: cannot create file", out);
    if (!rc && !csv && qr_pcap_writer_open(&w, tmp, err))
        rc = cli_fail("synth", "%s", err);
    if (!rc && csv)
        fprintf(fp, "flow,time_ns\n");
    cli_progress p;
    cli_progress_init(&p, quiet);
    for (int64_t i = 0; !rc && i < packets; i++) {
        int64_t best = -1; /* merge the flows by time, ties by flow number */
        for (int64_t f = 0; f < flows; f++)
            if (cur[f].next < cur[f].n &&
                (best < 0 || cur[f].times[cur[f].next] < cur[best].times[cur[best].next]))
                best = f;
        struct cursor *b = &cur[best];
        int64_t t = b->times[b->next];
        if (csv) {
            fprintf(fp, "flow%" PRId64 ",%" PRId64 "\n", best, t);
        } else {
            qr_packet pk = {.time_ns = t,
                            .src_ip = 0x0a000001,
                            .dst_ip = 0x0a000100 + (uint32_t)(best % 250) + 2,
                            .src_port = (uint16_t)(10000 + best),
                            .dst_port = 80,
                            .proto = 6,
                            .ttl = 64,
                            .ip_id = (uint16_t)b->next,
                            .ip_len = QR_MTU_BYTES,
                            .seq = (uint32_t)(1 + b->next * 1448),
                            .ack = 1,
                            .tcp_flags = QR_TCP_ACK | QR_TCP_PSH,
                            .window = 65535};
            if (qr_pcap_write(w, &pk, err))
                rc = cli_fail("synth", "%s", err);
        }
        b->next++;
        cli_progress_update(&p, "synth: %" PRId64 " of %" PRId64 " packets", i + 1, packets);
        if (cli_signal) {
            fprintf(stderr, "qreplay synth: interrupted; nothing written\n");
            rc = cli_interrupted_status();
        }
    }
    cli_progress_done(&p);
    errno = 0;
    if (fp && fclose(fp) != 0 && !rc)
        rc = cli_fail("synth", "%s: %s", out, errno ? strerror(errno) : "write error");
    if (w && qr_pcap_writer_close(w, err) && !rc)
        rc = cli_fail("synth", "%s", err);
    for (int64_t f = 0; f < flows; f++)
        free(cur[f].times);
    free(cur);
    if (!rc && qr_commit_path(tmp, out, err) != 0)
        rc = cli_fail("synth", "%s", err);
    cli_restore_signals();
    if (rc) {
        remove(tmp);
        return rc;
    }
    if (!quiet)
        fprintf(stderr, "synth: wrote %" PRId64 " packets of %" PRId64 " flows to %s\n", packets,
                flows, out);
    return 0;
}
