/* qreplay testbed: namespaces, veth pairs, qdiscs, tcpdump and the agents (testbed_net.h).
 *
 * The star: namespace qrtbPID-hN per host (eth0, 10.0.N.2, default route via the switch) and
 * qrtbPID-sw (port pN facing host N, 10.0.N.1, forwarding). Fixed MAC addresses with permanent
 * neighbour entries (no ARP during a run), IPv6 off (no neighbour discovery), segmentation and
 * receive offloads off (one packet is one packet at every tap). Every egress, hosts' and switch
 * ports', is a token bucket at the link rate (burst of one packet) over a byte FIFO; the qdiscs
 * count IP bytes (stab overhead -14), as the simulation does. Names carry the process id: two
 * testbeds on one machine never share a name. */
#define _GNU_SOURCE
#include "tb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corrector.h"
#include "qreplay/error.h"
#include "qreplay/guided_plan.h"
#include "qreplay/krecord.h"
#include "qreplay/metrics.h"
#include "qreplay/scenario.h"
#include "qreplay/stats.h"
#include "qreplay/workload.h"
#include "report.h"

/* Packets in the fabric's queues, summed over every namespace's qdiscs ("backlog Nb Mp");
 * -1 if tc cannot say. */
static long fabric_backlog(struct tb *t)
{
    long sum = 0;
    for (int i = 0; i < t->n_ns; i++) {
        char out[16384];
        char *argv[] = {"tc", "-n", t->ns[i], "-s", "qdisc", "show", NULL};
        if (tbi_run_argv(argv, out, sizeof out) != 0)
            return -1;
        for (const char *b = strstr(out, "backlog "); b; b = strstr(b + 8, "backlog ")) {
            const char *pk = strchr(b + 8, ' ');
            sum += pk ? strtol(pk + 1, NULL, 10) : 0;
        }
    }
    return sum;
}

/* The end of a run: nothing in flight when the counters are read and the captures stop. Every
 * host stops sending (a direct-action classic BPF program on its port's egress hook returns
 * TC_ACT_SHOT, before its qdisc and its capture: what the kernel still sends once the agents are
 * gone, a SYN-ACK or a reset sent again, is never sent), the queues tbi_drain, and libpcap's packet
 * buffer timeout (1 s) passes so that every capture's last block reaches its file; a block
 * tcpdump holds when it is stopped is lost without being counted. Without it a packet captured
 * entering a switch in the last microseconds, and not leaving, counts as a queue drop the qdisc
 * never made. Returns 0 or 1 after printing. */
static int quiesce(struct tb *t)
{
    for (uint32_t h = 0; h < t->hosts; h++) {
        char *add[] = {"tc", "-n", t->ns[h], "qdisc", "add", "dev", "eth0", "clsact", NULL};
        char *drop[] = {"tc",     "-n",  t->ns[h], "filter",   "add",        "dev", "eth0",
                        "egress", "bpf", "da",     "bytecode", "1,6 0 0 2,", NULL};
        char out[1024];
        if (tbi_run_argv(add, out, sizeof out) != 0 || tbi_run_argv(drop, out, sizeof out) != 0)
            return cli_fail(t->cmd, "cannot stop host %u's traffic at the end (tc clsact, bpf): %s",
                            h, out);
    }
    long q = 0;
    for (int w = 0; w < 150 && !cli_signal && (q = fabric_backlog(t)) > 0; w++)
        usleep(20000);
    if (q < 0)
        return cli_fail(t->cmd, "cannot read the qdiscs' backlogs (tc -s qdisc show)");
    if (q > 0)
        fprintf(stderr,
                "qreplay %s: warning: %ld packets still queued 3 s after the hosts went "
                "quiet\n",
                t->cmd, q);
    for (int w = 0; w < 55 && !cli_signal; w++)
        usleep(20000);
    return 0;
}

/* The run's namespace names (t->ns) and the switch ports it has. */
static uint32_t name_namespaces(struct tb *t)
{
    if (!t->fab) {
        for (uint32_t i = 0; i < t->hosts; i++)
            snprintf(t->ns[i], sizeof t->ns[i], "%s-h%u", t->prefix, i);
        snprintf(t->ns[t->hosts], sizeof t->ns[t->hosts], "%s-sw", t->prefix);
        return t->hosts;
    }
    for (uint32_t i = 0; i < qr_fabric_namespaces(t->fab); i++) {
        char name[16];
        snprintf(t->ns[i], sizeof t->ns[i], "%s-%s", t->prefix,
                 qr_fabric_ns_name(t->fab, i, name, sizeof name));
    }
    uint32_t n_ports = 0;
    for (uint32_t sw = 0; sw < qr_fabric_switches(t->fab); sw++)
        n_ports += qr_topology_ports(qr_fabric_topology(t->fab), sw);
    return n_ports;
}

/* The run's result arrays. Returns 0, or the exit status after the error. */
static int alloc_results(const struct tb *t, tb_run *run, uint32_t n_ports, size_t n_faults)
{
    struct utsname u;
    if (!uname(&u))
        snprintf(run->kernel, sizeof run->kernel, "%s %s", u.sysname, u.release);
    run->res = calloc(run->n_flows ? run->n_flows : 1, sizeof *run->res);
    run->app_res = calloc(run->n_apps ? run->n_apps : 1, sizeof *run->app_res);
    run->qdisc_drops = calloc(n_ports, sizeof *run->qdisc_drops);
    run->fault_drops = calloc(n_faults + 1, sizeof *run->fault_drops);
    uint32_t n_sw = t->fab ? qr_fabric_switches(t->fab) : 1;
    run->own_sent = calloc(n_sw, sizeof *run->own_sent);
    run->own_taken = calloc(n_sw, sizeof *run->own_taken);
    run->own_back = calloc(n_sw, sizeof *run->own_back);
    run->icmp_sent = calloc(n_sw, sizeof *run->icmp_sent);
    run->icmp_refused = calloc(n_sw, sizeof *run->icmp_refused);
    run->ttl_expired = calloc(n_sw, sizeof *run->ttl_expired);
    int sweep = run->fabric && run->conf->everflow.guided > 0;
    if (sweep)
        run->sweep_drops = calloc(n_ports, sizeof *run->sweep_drops);
    if (!run->res || !run->app_res || !run->qdisc_drops || !run->fault_drops || !run->own_sent ||
        !run->own_taken || !run->icmp_sent || !run->icmp_refused || !run->ttl_expired ||
        !run->own_back || (sweep && !run->sweep_drops))
        return cli_fail(t->cmd, "out of memory");
    return 0;
}

/* tcpdump everywhere: the hosts' (the recording); the star switch's ports both ways, or every
 * fabric switch port both ways and every fault's log (the truth). Returns 0, or the exit status
 * after the error. */
static int start_captures(struct tb *t, const tb_run *run)
{
    const char *command = t->cmd;
    char file[4200], port[16];
    for (uint32_t i = 0; i < t->hosts; i++) {
        snprintf(port, sizeof port, "p%u", i);
        snprintf(file, sizeof file, "%s/h%u.pcap", run->capture_dir, i);
        if (!tbi_capture(t, t->ns[i], "eth0", NULL, file, "200", t->fab ? "8192" : "32768",
                         t->fab ? TB_HOST_FILTER : NULL))
            return cli_fail(command, "cannot start tcpdump");
        if (t->fab)
            continue;
        snprintf(file, sizeof file, "%s/sw%u-in.pcap", run->capture_dir, i);
        if (!tbi_capture(t, t->ns[t->hosts], port, "in", file, "200", "32768", NULL))
            return cli_fail(command, "cannot start tcpdump");
        snprintf(file, sizeof file, "%s/sw%u-out.pcap", run->capture_dir, i);
        if (!tbi_capture(t, t->ns[t->hosts], port, "out", file, "200", "32768", NULL))
            return cli_fail(command, "cannot start tcpdump");
    }
    for (uint32_t sw = 0; t->fab && sw < qr_fabric_switches(t->fab); sw++)
        for (uint32_t p = 0; p < qr_topology_ports(qr_fabric_topology(t->fab), sw); p++) {
            snprintf(port, sizeof port, "p%u", p);
            snprintf(file, sizeof file, "%s/s%u-p%u.pcap", run->capture_dir, sw, p);
            if (!tbi_capture(t, t->ns[qr_fabric_switch_ns(t->fab, sw)], port, NULL, file, "96",
                             "4096", NULL))
                return cli_fail(command, "cannot start tcpdump");
        }
    size_t n_faults = 0;
    const qr_fabric_fault *faults = t->fab ? qr_fabric_faults(t->fab, &n_faults) : NULL;
    for (size_t i = 0; i < n_faults; i++) {
        if (faults[i].kind != QR_LINK_GRAY && faults[i].kind != QR_LINK_BLACKHOLE)
            continue;
        char dev[24];
        snprintf(dev, sizeof dev, "nflog:%u", faults[i].group);
        snprintf(file, sizeof file, "%s/fault-%u.pcap", run->capture_dir, faults[i].fault);
        if (!tbi_capture(t, t->ns[faults[i].ns], dev, NULL, file, "65535", "4096", NULL))
            return cli_fail(command, "cannot start tcpdump");
    }
    return 0;
}

/* The counters after the run: every qdisc's drops (hosts' and switch ports'; a port's growth
 * while the guided probes went), the switches' own packets, the faults' rules. Returns 0 or 1
 * after the error. */
static int read_counters(struct tb *t, tb_run *run)
{
    int ok = 1;
    for (uint32_t i = 0; ok && i < t->hosts; i++) {
        if (!t->fab) {
            char port[16];
            snprintf(port, sizeof port, "p%u", i);
            run->qdisc_drops[i] = tbi_qdisc_drops(t, t->ns[t->hosts], port, &ok);
        }
        if (ok)
            run->host_qdisc_drops += tbi_qdisc_drops(t, t->ns[i], "eth0", &ok);
        uint64_t fr = 0;
        if (ok)
            ok = tbi_ns_reorder(t, t->ns[i], &run->reorder_events, &fr) == 0;
        run->fast_retrans += fr;
    }
    for (uint32_t sw = 0, at = 0; ok && t->fab && sw < qr_fabric_switches(t->fab); sw++)
        for (uint32_t p = 0; ok && p < qr_topology_ports(qr_fabric_topology(t->fab), sw); p++) {
            char port[16];
            snprintf(port, sizeof port, "p%u", p);
            run->qdisc_drops[at] =
                tbi_qdisc_drops(t, t->ns[qr_fabric_switch_ns(t->fab, sw)], port, &ok);
            if (run->sweep_drops) /* the counter's growth while the guided probes went */
                run->sweep_drops[at] = run->qdisc_drops[at] - run->sweep_drops[at];
            at++;
        }
    for (uint32_t sw = 0; ok && t->fab && sw < qr_fabric_switches(t->fab); sw++) {
        const char *ns = t->ns[qr_fabric_switch_ns(t->fab, sw)];
        run->own_sent[sw] = tbi_own_count(t, ns, "out", &ok);
        if (ok)
            run->own_taken[sw] = tbi_own_count(t, ns, "in", &ok);
        if (ok)
            run->own_back[sw] = tbi_own_count(t, ns, "back", &ok);
        if (ok)
            ok = tbi_ns_icmp(t, ns, &run->icmp_sent[sw], &run->icmp_refused[sw],
                             &run->ttl_expired[sw]) == 0;
    }
    size_t n_faults = 0;
    const qr_fabric_fault *faults = t->fab ? qr_fabric_faults(t->fab, &n_faults) : NULL;
    for (size_t i = 0; ok && i < n_faults; i++)
        if (faults[i].kind == QR_LINK_GRAY || faults[i].kind == QR_LINK_BLACKHOLE)
            run->fault_drops[i] = tbi_nft_drops(t, t->ns[faults[i].ns], faults[i].fault, &ok);
    return ok ? 0 : 1;
}

/* The captures [first, last) stopped: each tcpdump exits (its file then whole) and reports
 * what the kernel dropped, and a run with a loss or a capture that does not exit is not scored.
 * Returns 0, or the exit status after the error (check: 0, only stop them). */
static int stop_captures(struct tb *t, int first, int last, int check)
{
    for (int i = first; i < last; i++)
        if (t->p[i].pid > 0)
            kill(t->p[i].pid, SIGINT);
    for (int i = first; i < last; i++)
        tbi_wait_for(&t->p[i], check ? 30.0 : 5.0);
    for (int i = first; check && i < last; i++) {
        /* its statistics come before it closes its file: only an exit says the file is whole */
        if (!tbi_exited(&t->p[i], NULL))
            return cli_fail(t->cmd,
                            "%s did not exit within 30 s of being stopped: its file may not "
                            "be whole, so the run is not scored",
                            t->p[i].name);
        tbi_drain(&t->p[i], NULL, NULL);
        int have;
        uint64_t lost = tbi_capture_lost(&t->p[i], &have);
        if (!have)
            return cli_fail(t->cmd, "%s did not report its statistics: %s", t->p[i].name,
                            t->p[i].errtext);
        if (lost)
            return cli_fail(t->cmd,
                            "%s lost %" PRIu64 " packets (dropped by the kernel): the run is "
                            "not scored; lower [links] rate (this machine's capture limit) or "
                            "the load",
                            t->p[i].name, lost);
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The kernel recorder on every host (one process: qreplay record --netns ...), started once the
 * captures listen, and waited for until it listens too. Returns 0, or 1 after the error. */
static int start_recorder(struct tb *t, const tb_run *run, const char *self, int *idx)
{
    static char list[MAX_NS * 48], out[4200];
    list[0] = 0;
    for (uint32_t i = 0; i < t->hosts; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", t->ns[i]);
    snprintf(out, sizeof out, "%s", run->record_dir);
    /* the scenario's thresholds (increasing, each once, as many as a record holds) and method:
     * what the run's replays sample at, so that the records replay the same variants */
    static char th[QR_KREC_MAX_TH * 24];
    int64_t v[QR_LIST_MAX];
    size_t n = run->conf->sampling.n_th, m = 0;
    memcpy(v, run->conf->sampling.th_ns, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_i64);
    th[0] = 0;
    for (size_t i = 0; i < n && m < QR_KREC_MAX_TH; i++)
        if (!i || v[i] != v[i - 1])
            snprintf(th + strlen(th), sizeof th - strlen(th), "%s%" PRId64 "ns", m++ ? "," : "",
                     v[i]);
    char *method = run->conf->sampling.method == QR_SAMPLING_GAP ? "gap" : "rate";
    /* the fabric's host captures leave out Pingmesh's connections (TB_HOST_FILTER): so do the
     * records (007's and the guided probes, TCP with no flag, every record leaves out) */
    char port[16];
    snprintf(port, sizeof port, "%d", QR_PROBE_PORT);
    char *argv[] = {(char *)self,
                    "record",
                    "--netns",
                    list,
                    "--th",
                    th,
                    "--method",
                    method,
                    "-o",
                    out,
                    t->fab ? "--ignore-port" : NULL,
                    port,
                    NULL};
    *idx = t->n_p;
    if (!tbi_spawn(t, "the kernel recorder", argv))
        return cli_fail(t->cmd, "cannot start the kernel recorder");
    return tbi_await_captures(t, *idx, *idx + 1);
}

/* The recorder stopped (SIGINT: it writes its records whole; what it said into run) after the
 * captures, its records named by host: record_dir/hN.qrk. Returns 0, or the exit status after
 * the error (check: 0, only stop it). */
static int stop_recorder(struct tb *t, tb_run *run, int idx, int check)
{
    struct proc *p = &t->p[idx];
    if (p->pid > 0)
        kill(p->pid, SIGINT);
    int st = -1, exited = 0; /* its status: tbi_wait_for would reap it without */
    for (int i = 0; i < (check ? 1500 : 250) && !(exited = tbi_exited(p, &st)); i++) {
        tbi_drain(p, NULL, NULL);
        usleep(20000);
    }
    tbi_drain(p, NULL, NULL);
    snprintf(run->recorder_said, sizeof run->recorder_said, "%s", p->errtext);
    if (!check)
        return 0;
    if (!exited || st != 0 || !strstr(p->errtext, "the record is complete"))
        return cli_fail(t->cmd,
                        "the kernel recorder did not end with complete records (status %d): %s", st,
                        p->errtext);
    for (uint32_t i = 0; i < t->hosts; i++) {
        char from[4300], to[4300];
        snprintf(from, sizeof from, "%s/%s.qrk", run->record_dir, t->ns[i]);
        snprintf(to, sizeof to, "%s/h%u.qrk", run->record_dir, i);
        if (rename(from, to))
            return cli_fail(t->cmd, "%s: %s", from, strerror(errno));
    }
    return 0;
}

/* The captures' [first, last) and the recorder's (rec; -1: none) CPU into run->procs. */
static void keep_cpu(const struct tb *t, tb_run *run, int first, int last, int rec)
{
    free(run->procs);
    run->n_procs = 0;
    run->procs = calloc((size_t)(last - first) + 2, sizeof *run->procs);
    for (int i = first; run->procs && i <= last; i++) {
        if (i == last && rec < 0)
            continue;
        const struct proc *p = &t->p[i < last ? i : rec];
        if (!p->reaped)
            continue;
        tb_proc_cpu *c = &run->procs[run->n_procs++];
        snprintf(c->name, sizeof c->name, "%s", p->name);
        c->cpu_s = (double)p->cpu_ns / 1e9;
        c->wall_s = (double)p->wall_ns / 1e9;
        /* the recorder's BPF programs run in the kernel, charged to what they interrupted: the
         * recorder says what the kernel counted */
        const char *b = i == last ? strstr(p->errtext, "its BPF programs ran ") : NULL;
        double s = 0;
        if (b && sscanf(b, "its BPF programs ran %*u times, %lf s", &s) == 1) {
            c = &run->procs[run->n_procs++];
            snprintf(c->name, sizeof c->name, "the kernel recorder's BPF programs");
            c->cpu_s = s;
            c->wall_s = (double)p->wall_ns / 1e9;
        }
    }
}

/* The packet corrector on every port of the star's switch (ingress: what the hosts sent). */
static int attach_corrector(struct tb *t, const tb_run *run, qr_corrector **out)
{
    char names[QR_TESTBED_MAX_HOSTS][16], err[QR_ERRBUF_SIZE];
    const char *devs[QR_TESTBED_MAX_HOSTS];
    if (t->fab)
        return cli_fail(t->cmd, "the packet corrector is for the star (its switch's ports)");
    for (uint32_t i = 0; i < t->hosts; i++) {
        snprintf(names[i], sizeof names[i], "p%u", i);
        devs[i] = names[i];
    }
    if (qr_corrector_attach(out, t->ns[t->hosts], devs, t->hosts, run->fates, run->n_fates, err))
        return cli_fail(t->cmd, "%s", err);
    return 0;
}

int tb_run_testbed(const char *command, tb_run *run)
{
    static struct tb t; /* large; one run at a time per process */
    memset(&t, 0, sizeof t);
    t.cmd = command;
    /* a write to a program that is gone (an agent that stopped) fails with EPIPE, said or
     * ignored where it happens, never death by SIGPIPE in the middle of a run */
    signal(SIGPIPE, SIG_IGN);
    t.fab = run->fabric;
    t.hosts = t.fab ? qr_fabric_hosts(t.fab) : (uint32_t)run->conf->topology.hosts;
    snprintf(t.prefix, sizeof t.prefix, "qrtb%ld", (long)getpid());
    size_t n_faults = 0;
    if (t.fab)
        qr_fabric_faults(t.fab, &n_faults);
    int rc = alloc_results(&t, run, name_namespaces(&t), n_faults);
    if (rc)
        return rc;
    cli_progress prog;
    cli_progress_init(&prog, run->quiet);
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        rc = cli_fail(command, "cannot find its own program (/proc/self/exe)");
    else
        self[sl] = 0;
    if (!rc && t.fab) {
        cli_progress_update(&prog, "testbed: building a fat tree of %u hosts and %u switches",
                            t.hosts, qr_fabric_switches(t.fab));
        rc = tbi_build_fabric(&t, run);
        run->same_hash_seed = t.absent_sysctl == 2;
    } else if (!rc) {
        cli_progress_update(&prog, "testbed: building %u host namespaces and a switch", t.hosts);
        rc = tbi_build_star(&t, run);
        if (!rc && run->tiers)
            rc = tbi_tiers_shape(&t, run);
    }
    qr_corrector *corr = NULL;
    if (!rc && run->fates)
        rc = attach_corrector(&t, run, &corr);
    int cap_first = t.n_p;
    if (!rc)
        rc = start_captures(&t, run);
    int cap_last = t.n_p, rec = -1;
    if (!rc) {
        cli_progress_update(&prog, "testbed: starting %d captures", cap_last - cap_first);
        rc = tbi_await_captures(&t, cap_first, cap_last);
    }
    if (!rc && run->record) {
        cli_progress_update(&prog, "testbed: starting the kernel recorder on %u hosts", t.hosts);
        rc = start_recorder(&t, run, self, &rec);
    }
    uint64_t softnet0 = tbi_softnet_drops();
    if (!rc)
        rc = run->tiers    ? tbi_run_tiers(&t, run, &prog)
             : run->n_apps ? tbi_run_apps(&t, run, &prog)
                           : tbi_run_agents(&t, run, &prog, self);
    if (!rc && !cli_signal) {
        cli_progress_update(&prog, "testbed: the hosts go quiet, the queues drain");
        rc = quiesce(&t);
    }
    cli_progress_done(&prog);
    uint64_t softnet1 = tbi_softnet_drops();
    if (!rc && !cli_signal)
        rc = read_counters(&t, run);
    int stopped = stop_captures(&t, cap_first, cap_last, !rc && !cli_signal);
    if (!rc)
        rc = stopped;
    if (rec >= 0) {
        stopped = stop_recorder(&t, run, rec, !rc && !cli_signal);
        if (!rc)
            rc = stopped;
    }
    keep_cpu(&t, run, cap_first, cap_last, rec);
    if (corr)
        qr_corrector_counts(corr, &run->corrected_seen, &run->corrected, &run->corrected_unknown);
    qr_corrector_free(corr);
    if (!rc && !cli_signal && softnet1 != softnet0)
        rc = cli_fail(command,
                      "the kernel dropped %" PRIu64 " packets in its receive backlog "
                      "(/proc/net/softnet_stat) during the run: not the switch's queue, so the "
                      "run is not scored; lower [links] rate",
                      softnet1 - softnet0);
    if (!rc && !cli_signal && run->host_qdisc_drops)
        rc = cli_fail(command,
                      "the hosts' own qdiscs dropped %" PRIu64 " packets: raise [host] nic_queue",
                      run->host_qdisc_drops);
    tbi_teardown(&t);
    if (cli_signal) {
        fprintf(stderr, "qreplay %s: interrupted; the testbed is removed\n", command);
        return cli_interrupted_status();
    }
    return rc;
}

void tb_run_free(tb_run *run)
{
    free(run->procs);
    run->procs = NULL;
    run->n_procs = 0;
    free(run->res);
    free(run->app_res);
    free(run->qdisc_drops);
    free(run->fault_drops);
    free(run->own_sent);
    free(run->own_taken);
    free(run->own_back);
    run->own_sent = run->own_taken = run->own_back = NULL;
    free(run->icmp_sent);
    free(run->icmp_refused);
    free(run->ttl_expired);
    run->icmp_sent = run->icmp_refused = NULL;
    run->ttl_expired = NULL;
    free(run->sweep_drops);
    run->sweep_drops = NULL;
    free(run->traces);
    free(run->pings);
    run->traces = NULL;
    run->pings = NULL;
    run->res = NULL;
    run->app_res = NULL;
    run->qdisc_drops = NULL;
    run->fault_drops = NULL;
}

int tb_write_flows(const char *command, const tb_run *run, const char *path, tb_flow_summary *out)
{
    qr_testbed_flow *fl = calloc(run->n_flows ? run->n_flows : 1, sizeof *fl);
    if (!fl)
        return cli_fail(command, "%s: out of memory", path);
    for (size_t i = 0; i < run->n_flows; i++) {
        const tb_flow_result *r = &run->res[i];
        fl[i] =
            (qr_testbed_flow){r->sent,    r->received,       r->failed,  r->start_ns,
                              r->last_ns, r->bytes_received, r->retrans, r->failed ? r->why : NULL};
    }
    char err[QR_ERRBUF_SIZE];
    int rc = qr_testbed_flows_write(path, run->flows, run->src_port, fl, run->n_flows, out, err);
    free(fl);
    return rc ? cli_fail(command, "%s", err) : 0;
}
