/* qreplay export: a recording's traffic written out as the captures its hosts would have taken,
 * for Wireshark and other tools, and to test qreplay import against a known truth. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/recording.h"
#include "qreplay/txn.h"

static const cli_opt opts[] = {
    CLI_OPT_OUT("the folder to write the captures and hosts.csv to (default: DIR/captures)"),
    {"precision", 0, CLI_VALUE, "us|ns",
     "timestamp resolution (us: tcpdump's default, times truncated as a capture's are)"},
    {"link", 0, CLI_VALUE, "ethernet|ip", "link layer of the frames (ethernet)"},
    CLI_OPT_QUIET,
};

static const cli_spec spec = {
    "export",
    "DIR",
    "Write the traffic of the recording in DIR/recording (or DIR itself when it holds\n"
    "recording.h5) as the captures its hosts would have taken: per host, every packet it sent\n"
    "at its send time and every packet it received at its receive time, both on the host's own\n"
    "clock, headers only, in one pcap per host (hNNNN.pcap), with hosts.csv mapping addresses\n"
    "to hosts and captures. The captures open in Wireshark and tcpdump and go back in with\n"
    "'qreplay import SCENARIO OUT/*.pcap --map OUT/hosts.csv' (a round trip whose truth is\n"
    "known). 'editcap -F pcapng' turns them into pcapng.\n\n"
    "Hosts that sent and received nothing get no capture. The folder is written whole or not\n"
    "at all; an existing one is replaced only if it holds nothing but an earlier export.\n",
    opts,
    sizeof opts / sizeof opts[0],
    1,
    1,
    "expected one run folder DIR",
    "examples:\n"
    "  qreplay export results/single-switch -o /tmp/caps\n"
    "  qreplay import scenarios/single-switch.ini /tmp/caps/*.pcap --map /tmp/caps/hosts.csv "
    "-o /tmp/back\n"};

/* The file that marks a folder as an export, written last. */
#define EXPORT_MARK ".qreplay-export"

/* What an earlier export left: its mark, hNNNN.pcap and hosts.csv only. Returns 1 if dir is
 * empty or holds exactly such an export, 0 if anything else (a folder of captures without the
 * mark is someone else's: a recording's pcap/, a user's), -1 if it is not a folder. */
static int only_an_export(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int ok = 1, mark = 0, any = 0;
    while (ok && (e = readdir(d))) {
        const char *n = e->d_name;
        size_t l = strlen(n);
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        any = 1;
        if (!strcmp(n, EXPORT_MARK)) {
            mark = 1;
            continue;
        }
        if (!strcmp(n, "hosts.csv"))
            continue;
        ok = l == 10 && n[0] == 'h' && !strcmp(n + 5, ".pcap") && strspn(n + 1, "0123456789") == 4;
    }
    closedir(d);
    return ok && (mark || !any);
}

/* Mark folder tmp as the export of recording id. Returns 0 or -1 (errno). */
static int mark_export(const char *tmp, const char *id)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/" EXPORT_MARK, tmp);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fprintf(f, "qreplay export of recording %s\n", id[0] ? id : "(no id)");
    return fclose(f);
}

/* Remove a folder holding only files (what this command writes). */
static void remove_flat_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[4400];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
}

int qr_cmd_export(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *dir = a.pos[0], *out = cli_value(&a, "out"), *prec = cli_value(&a, "precision"),
               *link = cli_value(&a, "link");
    int quiet = cli_count(&a, "quiet") > 0;
    qr_pcap_format fmt = {QR_PCAP_LINK_ETHERNET, 1};
    if (prec && strcmp(prec, "us") && strcmp(prec, "ns")) {
        rc = cli_usage_error("export", "--precision: '%s' (us or ns)", prec);
        goto out_args;
    }
    if (link && strcmp(link, "ethernet") && strcmp(link, "ip")) {
        rc = cli_usage_error("export", "--link: '%s' (ethernet or ip)", link);
        goto out_args;
    }
    fmt.micro = !prec || !strcmp(prec, "us");
    fmt.link = !link || !strcmp(link, "ethernet") ? QR_PCAP_LINK_ETHERNET : QR_PCAP_LINK_IPV4;
    char rec_dir[4096], target[4096], tmp[4200], err[QR_ERRBUF_SIZE];
    cli_recording_dir(dir, rec_dir, sizeof rec_dir);
    if (out)
        snprintf(target, sizeof target, "%s", out);
    else
        snprintf(target, sizeof target, "%s/captures", dir);
    if (cli_exists(target) && only_an_export(target) != 1) {
        rc = cli_fail(
            "export",
            "%s: exists and is not an earlier export (a folder of hNNNN.pcap and hosts.csv "
            "marked by qreplay export): choose another -o",
            target);
        goto out_args;
    }
    /* the recording's own files are never written over (a capture folder inside pcap/) */
    snprintf(tmp, sizeof tmp, "%s/pcap", rec_dir);
    {
        char rt[4096], rp[4096];
        if (realpath(tmp, rp) && realpath(target, rt) && !strcmp(rt, rp)) {
            rc = cli_fail("export", "%s: refusing to write over an input (the recording's pcap/)",
                          target);
            goto out_args;
        }
    }
    qr_recording *r = NULL;
    if (qr_recording_open(&r, rec_dir, NULL, err)) {
        rc = cli_fail("export", "%s", err);
        goto out_args;
    }
    snprintf(tmp, sizeof tmp, "%s.partial-%ld", target, (long)getpid());
    qr_leftovers_remove(target);
    if (mkdir(tmp, 0777)) {
        rc = cli_fail("export", "%s: %s", tmp, strerror(errno));
        qr_recording_close(r);
        goto out_args;
    }
    qr_partial_add(tmp);
    cli_catch_signals();
    qr_export_stats st = {0};
    int xrc = qr_recording_export(r, tmp, &fmt, &st, err);
    if (!xrc && mark_export(tmp, qr_recording_id(r))) {
        snprintf(err, sizeof err, "%s: %s", tmp, strerror(errno));
        xrc = QR_EIO;
    }
    qr_recording_close(r);
    if (!xrc && cli_signal) {
        remove_flat_dir(tmp);
        rc = cli_interrupted_status();
        fprintf(stderr, "qreplay export: interrupted; nothing written\n");
    } else if (xrc) {
        remove_flat_dir(tmp);
        rc = cli_fail("export", "%s", err);
    } else {
        /* in place of the earlier export at once (an exchange), then the old one goes */
        if (qr_commit_path(tmp, target, err)) {
            rc = cli_fail("export", "%s", err);
            remove_flat_dir(tmp);
        } else {
            qr_partial_done(tmp);
            rc = 0;
            if (!quiet) {
                printf("captures           %" PRIu32 " (%s, %s timestamps)\n", st.captures,
                       fmt.link == QR_PCAP_LINK_ETHERNET ? "Ethernet" : "raw IPv4",
                       fmt.micro ? "microsecond" : "nanosecond");
                printf("frames             %" PRIu64 " sent, %" PRIu64 " received\n", st.sent,
                       st.received);
                printf("output             %s (hosts.csv: the map for qreplay import)\n", target);
            }
        }
    }
    cli_restore_signals();
out_args:
    cli_args_free(&a);
    return rc;
}
