/* qreplay testbed: the agents (their schedule, pinglists, guided probes and line protocol) and
 * the applications. */
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

#include "qreplay/error.h"
#include "qreplay/guided_plan.h"
#include "qreplay/metrics.h"
#include "qreplay/scenario.h"
#include "qreplay/stats.h"
#include "qreplay/workload.h"
#include "report.h"

struct agent_ctx {
    tb_run *run;
    size_t done;   /* flows finished at both ends or failed */
    uint8_t *fin;  /* per flow: bit 1 sender done, bit 2 receiver done */
    uint32_t host; /* of the agent whose lines are read */
    size_t cap_traces, cap_pings;
    int oom;
};

/* Room for one more of *n rows of `size` bytes in *rows (capacity *cap, doubled from `first`).
 * Returns 0, or 1 (out of memory: *rows unchanged). */
static int grow(void **rows, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    void *g = realloc(*rows, c * size);
    if (!g)
        return 1;
    *rows = g;
    *cap = c;
    return 0;
}

/* 007's and Pingmesh's lines: probes logged (a trace's number is the agent's own until the run
 * ends: qr_row_traceroute.host tells the agents apart), answers matched to their probe. */
static void on_probe_line(struct agent_ctx *c, const qr_agent_report *rep)
{
    tb_run *run = c->run;
    if (rep->kind == QR_AGENT_ANSWER) {
        for (size_t i = run->n_traces; i-- > 0;) {
            qr_row_traceroute *x = &run->traces[i];
            if (x->host == c->host && x->trace == rep->trace && x->ttl == rep->ttl) {
                if (!x->replier) {
                    x->replier = rep->replier;
                    x->rtt_ns = rep->a_ns - x->sent_ns;
                }
                return;
            }
        }
        return; /* an answer to no probe of this agent: not counted */
    }
    if (rep->kind == QR_AGENT_PROBE) {
        if (grow((void **)&run->traces, &c->cap_traces, run->n_traces, sizeof *run->traces, 256)) {
            c->oom = 1;
            return;
        }
        run->traces[run->n_traces++] = (qr_row_traceroute){.trace = rep->trace,
                                                           .host = c->host,
                                                           .dir = qr_dir_data(rep->flow),
                                                           .ttl = (uint8_t)rep->ttl,
                                                           .ip_id = (uint16_t)rep->ip_id,
                                                           .sent_ns = rep->a_ns,
                                                           .rtt_ns = -1};
        return;
    }
    if (grow((void **)&run->pings, &c->cap_pings, run->n_pings, sizeof *run->pings, 1024)) {
        c->oom = 1;
        return;
    }
    const qr_probe_pair *pp = qr_pingmesh_pair(run->pingmesh, rep->flow);
    run->pings[run->n_pings] = (qr_row_probe){.probe = (uint32_t)run->n_pings,
                                              .pair = rep->flow,
                                              .src = pp->src,
                                              .dst = pp->dst,
                                              .sport = rep->sport,
                                              .sent_ns = rep->a_ns,
                                              .rtt_ns = rep->b_ns,
                                              .echoed = rep->b_ns >= 0};
    run->n_pings++;
}

static void on_agent_line(void *vctx, const char *line)
{
    struct agent_ctx *c = vctx;
    qr_agent_report rep;
    unsigned long long guided;
    if (sscanf(line, "guided %llu", &guided) == 1) {
        c->run->guided_sent += guided;
        return;
    }
    if (!strncmp(line, "ping ", 5)) {
        size_t pairs = c->run->pingmesh ? qr_pingmesh_pairs(c->run->pingmesh) : 0;
        if (qr_agent_report_parse(line, (uint32_t)pairs, &rep) == QR_OK)
            on_probe_line(c, &rep);
        return;
    }
    if (qr_agent_report_parse(line, (uint32_t)c->run->n_flows, &rep) != QR_OK)
        return; /* not a report: the agent's other output */
    if (rep.kind == QR_AGENT_PROBE || rep.kind == QR_AGENT_ANSWER) {
        on_probe_line(c, &rep);
        return;
    }
    unsigned id = rep.flow;
    tb_flow_result *r = &c->run->res[id];
    uint8_t before = c->fin[id];
    if (rep.kind == QR_AGENT_SENT) {
        r->sent = 1;
        r->start_ns = rep.a_ns;
        r->end_ns = rep.b_ns;
        r->bytes_sent = rep.bytes;
        r->retrans = rep.retransmissions;
        c->fin[id] |= 1;
    } else if (rep.kind == QR_AGENT_RECV) {
        r->received = 1;
        r->first_ns = rep.a_ns;
        r->last_ns = rep.b_ns;
        r->bytes_received = rep.bytes;
        c->fin[id] |= 2;
    } else {
        r->failed = 1;
        snprintf(r->why, sizeof r->why, "%s", rep.why);
        c->fin[id] |= 3;
    }
    if (before != 3 && c->fin[id] == 3)
        c->done++;
}

/* The schedule the agents read (capture_dir/schedule.csv). Returns 0 or 1 after printing. */
static int write_schedule(const char *command, const tb_run *run, const char *sched)
{
    FILE *f = fopen(sched, "w");
    if (!f)
        return cli_fail(command, "%s: %s", sched, strerror(errno));
    fprintf(f, "flow,src,dst,bytes,start_ns,src_addr,src_port,dst_addr,hops\n");
    for (size_t i = 0; i < run->n_flows; i++) {
        char sa[32], da[32];
        tb_host_addr(run->fabric, run->flows[i].src, sa, sizeof sa);
        tb_host_addr(run->fabric, run->flows[i].dst, da, sizeof da);
        uint32_t hops = run->fabric ? qr_topology_hops(qr_fabric_topology(run->fabric),
                                                       run->flows[i].src, run->flows[i].dst)
                                    : 1;
        fprintf(f, "%zu,%u,%u,%" PRIu64 ",%" PRId64 ",%s,%u,%s,%u\n", i, run->flows[i].src,
                run->flows[i].dst, run->flows[i].bytes, run->flows[i].start_ns, sa,
                run->src_port[i], da, hops);
    }
    if (fclose(f))
        return cli_fail(command, "%s: %s", sched, strerror(errno));
    return 0;
}

/* Host h's pinglist (capture_dir/pinglist-hH.csv): its pairs of Pingmesh's plan, the probed
 * host's address and the pair's phase. Returns 0 or 1 after printing. */
static int write_pinglist(const char *command, const tb_run *run, uint32_t h, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_fail(command, "%s: %s", path, strerror(errno));
    fprintf(f, "pair,dst_addr,phase_ns\n");
    for (size_t i = 0; i < qr_pingmesh_pairs(run->pingmesh); i++) {
        const qr_probe_pair *p = qr_pingmesh_pair(run->pingmesh, i);
        if (p->src != h)
            continue;
        char da[32];
        tb_host_addr(run->fabric, p->dst, da, sizeof da);
        fprintf(f, "%zu,%s,%" PRId64 "\n", i, da, qr_pingmesh_send_time(run->pingmesh, i, 0));
    }
    if (fclose(f))
        return cli_fail(command, "%s: %s", path, strerror(errno));
    return 0;
}

/* Host h's pinned 5-tuples for Everflow's guided probes (guided_plan.h): src,dst,sport lines. */
static int write_guided(const char *command, const tb_run *run, uint32_t h, const char *path)
{
    qr_guided_pin *pin;
    size_t n;
    if (qr_guided_plan(qr_fabric_topology(run->fabric), (uint32_t)run->conf->everflow.paths,
                       run->conf->run.seed, &pin, &n))
        return cli_fail(command, "cannot plan the guided probes (a fat tree, 1-64 paths)");
    FILE *f = fopen(path, "w");
    if (!f) {
        free(pin);
        return cli_fail(command, "%s: %s", path, strerror(errno));
    }
    for (size_t i = 0; i < n; i++) {
        if (pin[i].src != h)
            continue;
        char sa[32], da[32];
        tb_host_addr(run->fabric, pin[i].src, sa, sizeof sa);
        tb_host_addr(run->fabric, pin[i].dst, da, sizeof da);
        fprintf(f, "%s,%s,%u\n", sa, da, pin[i].sport);
    }
    free(pin);
    if (fclose(f))
        return cli_fail(command, "%s: %s", path, strerror(errno));
    return 0;
}

/* The traces get the run's numbers: in the order they started (each agent numbered its own). */
static int cmp_trace_start(const void *tbi_x, const void *y)
{
    const qr_row_traceroute *a = tbi_x, *b = y;
    if (a->sent_ns != b->sent_ns)
        return a->sent_ns < b->sent_ns ? -1 : 1;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    return (int)a->ttl - (int)b->ttl;
}

static void number_traces(tb_run *run)
{
    if (!run->n_traces)
        return;
    qsort(run->traces, run->n_traces, sizeof *run->traces, cmp_trace_start);
    /* the first probe of each (host, trace) in start order gets the next number */
    size_t n = run->n_traces;
    uint32_t *map_host = malloc((n ? n : 1) * sizeof *map_host);
    uint32_t *map_local = malloc((n ? n : 1) * sizeof *map_local);
    size_t m = 0;
    for (size_t i = 0; map_host && map_local && i < n; i++) {
        qr_row_traceroute *x = &run->traces[i];
        size_t j = 0;
        while (j < m && !(map_host[j] == x->host && map_local[j] == x->trace))
            j++;
        if (j == m) {
            map_host[m] = x->host;
            map_local[m++] = x->trace;
        }
        x->trace = (uint32_t)j;
    }
    free(map_host);
    free(map_local);
}

/* Wait until the processes first..last-1 said "ready" (10 s at most). Returns 0 or 1 after
 * printing; `what` names them in the error. */
int tbi_await_ready(struct tb *t, int first, int last, const char *what)
{
    for (int w = 0;; w++) {
        int ready = 0;
        for (int i = first; i < last; i++) {
            tbi_drain(&t->p[i], tbi_on_ready, &t->p[i]);
            ready += t->p[i].listening;
            int st = 0;
            if (!t->p[i].listening && tbi_exited(&t->p[i], &st)) {
                tbi_drain(&t->p[i], NULL, NULL);
                return cli_fail(t->cmd, "the %s exited (status %d): %s", t->p[i].name, st,
                                t->p[i].errtext);
            }
        }
        if (ready == last - first)
            return 0;
        if (cli_signal)
            return 1;
        if (w > 500)
            return cli_fail(t->cmd, "the %s did not start within 10 s", what);
        usleep(20000);
    }
}

/* The agents run the scenario's flows; returns when every flow ended at both ends, or at the
 * scenario's stop (plus 2 s), after the queues drained. Returns 0 or 1 after printing. */
/* An agent in every host's namespace, each given the schedule, its pinglist and its guided
 * probes as the scenario asks. Returns 0, or the exit status after the error. */
static int start_agents(struct tb *t, const tb_run *run, const char *self, const char *sched)
{
    const char *command = t->cmd;
    char sndbuf[32], rcvbuf[32], hs[16];
    snprintf(sndbuf, sizeof sndbuf, "%" PRIu64, run->conf->tcp.sndbuf_bytes);
    snprintf(rcvbuf, sizeof rcvbuf, "%" PRIu64, run->conf->tcp.rcvbuf_bytes);
    const char *cc = qr_testbed_congestion(run->conf->tcp.variant);
    char pc[16], ph[16], pi[24], pt[24], pe[24], gcount[16], debug[16];
    snprintf(debug, sizeof debug, "%d", run->conf->everflow.debug_every);
    snprintf(pc, sizeof pc, "%d", run->conf->traceroute.per_connection);
    snprintf(ph, sizeof ph, "%d", run->conf->traceroute.per_host);
    snprintf(gcount, sizeof gcount, "%d", run->conf->everflow.guided);
    if (run->pingmesh) {
        snprintf(pi, sizeof pi, "%" PRId64, run->conf->pingmesh.interval_ns);
        snprintf(pt, sizeof pt, "%" PRId64, qr_pingmesh_wait(run->pingmesh));
        snprintf(pe, sizeof pe, "%" PRId64, qr_pingmesh_end(run->pingmesh));
    }
    int rc = 0;
    for (uint32_t i = 0; !rc && i < t->hosts; i++) {
        snprintf(hs, sizeof hs, "%u", i);
        char name[32], plist[4200], gfile[4200];
        snprintf(name, sizeof name, "agent of host %u", i);
        snprintf(plist, sizeof plist, "%s/pinglist-h%u.csv", run->capture_dir, i);
        snprintf(gfile, sizeof gfile, "%s/guided-h%u.csv", run->capture_dir, i);
        char *argv[32] = {"ip",         "netns",         "exec",     t->ns[i],
                          (char *)self, "testbed-agent", hs,         (char *)sched,
                          "--cc",       (char *)cc,      "--sndbuf", sndbuf,
                          "--rcvbuf",   rcvbuf,          NULL};
        int k = 14;
        if (run->conf->traceroute.per_connection > 0) {
            argv[k++] = "--trace";
            argv[k++] = pc;
            argv[k++] = ph;
        }
        if (run->pingmesh) {
            rc = write_pinglist(command, run, i, plist);
            argv[k++] = "--pinglist";
            argv[k++] = plist;
            argv[k++] = "--ping";
            argv[k++] = pi;
            argv[k++] = pt;
            argv[k++] = pe;
        }
        if (run->conf->everflow.debug_every > 0) {
            argv[k++] = "--debug-every";
            argv[k++] = debug;
        }
        if (!rc && run->sweep_drops) {
            rc = write_guided(command, run, i, gfile);
            argv[k++] = "--guided";
            argv[k++] = gfile;
            argv[k++] = gcount;
        }
        argv[k] = NULL;
        if (!rc && !tbi_spawn(t, name, argv))
            rc = cli_fail(command, "cannot start the agent of host %u", i);
    }
    return rc;
}

/* Every process's lines read (the agents' [ag_first, ...) by the line protocol). */
static void drain_all(struct tb *t, struct agent_ctx *ac, int ag_first)
{
    for (int i = 0; i < t->n_p; i++) {
        ac->host = (uint32_t)(i - ag_first);
        tbi_drain(&t->p[i], i >= ag_first ? on_agent_line : NULL, ac);
    }
}

/* The run until every flow ended at both ends and Pingmesh's probing ([pingmesh] duration) is
 * over with its last probes' wait, or the scenario's stop: [traffic] stop ends the traffic here
 * as it ends the runtime's simulation. Returns 0, or the exit status after a process stopped. */
static int watch_agents(struct tb *t, tb_run *run, struct agent_ctx *ac, int ag_first,
                        cli_progress *prog)
{
    int64_t t0 = run->t0_ns, deadline = t0 + run->conf->traffic.stop_ns, probing = t0;
    if (run->pingmesh && qr_pingmesh_end(run->pingmesh) > 0)
        probing = t0 + qr_pingmesh_end(run->pingmesh) + qr_pingmesh_wait(run->pingmesh);
    while (!cli_signal && (ac->done < run->n_flows || tbi_now_real() < probing) &&
           tbi_now_real() < deadline) {
        struct pollfd pf[MAX_PROCS];
        int np = 0;
        for (int i = 0; i < t->n_p; i++)
            pf[np++] =
                (struct pollfd){.fd = i >= ag_first ? t->p[i].out : t->p[i].err, .events = POLLIN};
        poll(pf, (nfds_t)np, 100);
        drain_all(t, ac, ag_first);
        for (int i = 0; i < t->n_p; i++) {
            int st = 0;
            if (tbi_exited(&t->p[i], &st)) {
                ac->host = (uint32_t)(i - ag_first);
                tbi_drain(&t->p[i], i >= ag_first ? on_agent_line : NULL, ac);
                return cli_fail(t->cmd, "the %s stopped during the run (status %d): %s",
                                t->p[i].name, st, t->p[i].errtext);
            }
        }
        double el = (double)(tbi_now_real() - t0) / 1e9;
        cli_progress_update(prog, "testbed: %zu of %zu flows done, %.1f s", ac->done, run->n_flows,
                            el < 0 ? 0 : el);
    }
    return 0;
}

/* The guided probes go when the agents stop: the switch ports' counters before them. Returns 0
 * or 1. */
static int sweep_counters(struct tb *t, tb_run *run)
{
    for (uint32_t sw = 0, at = 0; sw < qr_fabric_switches(run->fabric); sw++)
        for (uint32_t p = 0; p < qr_topology_ports(qr_fabric_topology(run->fabric), sw);
             p++, at++) {
            char port[16];
            int ok;
            snprintf(port, sizeof port, "p%u", p);
            run->sweep_drops[at] =
                tbi_qdisc_drops(t, t->ns[qr_fabric_switch_ns(run->fabric, sw)], port, &ok);
            if (!ok)
                return 1;
        }
    return 0;
}

/* "bounce SENT" from a switch's bouncer. */
static void on_bounce_line(void *ctx, const char *line)
{
    unsigned long long n;
    if (sscanf(line, "bounce %llu", &n) == 1)
        *(uint64_t *)ctx += n;
}

/* Everflow's link round trips (guided_plan.h qr_bounce_plan): a bouncer in every switch's
 * namespace sends [everflow] guided rounds out of each of its ports to a switch, beside the
 * agents' guided probes, and the run waits for them. Returns 0 or 1 after printing. */
static int run_bounce(struct tb *t, tb_run *run, const char *self)
{
    const qr_topology *topo = qr_fabric_topology(run->fabric);
    qr_bounce_pin *pin;
    size_t n;
    if (qr_bounce_plan(topo, &pin, &n))
        return cli_fail(t->cmd, "out of memory");
    char count[16];
    snprintf(count, sizeof count, "%d", run->conf->everflow.guided);
    int first = t->n_p, rc = 0;
    for (uint32_t sw = 0; !rc && sw < qr_fabric_switches(run->fabric); sw++) {
        char path[4200], name[32], addr[32];
        snprintf(path, sizeof path, "%s/bounce-s%u.csv", run->capture_dir, sw);
        FILE *f = fopen(path, "w");
        if (!f) {
            rc = cli_fail(t->cmd, "%s: %s", path, strerror(errno));
            break;
        }
        for (size_t i = 0; i < n; i++) {
            if (pin[i].sw != sw)
                continue;
            const uint8_t *a = pin[i].mac, *b = pin[i].peer_mac;
            tbi_ip4_text(pin[i].addr, addr, sizeof addr);
            fprintf(f, "p%u,%02x:%02x:%02x:%02x:%02x:%02x,%02x:%02x:%02x:%02x:%02x:%02x,%s\n",
                    pin[i].port, a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3], b[4],
                    b[5], addr);
        }
        if (fclose(f)) {
            rc = cli_fail(t->cmd, "%s: %s", path, strerror(errno));
            break;
        }
        snprintf(name, sizeof name, "bouncer of s%u", sw);
        char *argv[] = {"ip",         "netns",
                        "exec",       t->ns[qr_fabric_switch_ns(run->fabric, sw)],
                        (char *)self, "testbed-agent",
                        "bounce",     path,
                        count,        NULL};
        if (!tbi_spawn(t, name, argv))
            rc = cli_fail(t->cmd, "cannot start the %s", name);
    }
    free(pin);
    /* each sends its rounds 1 ms apart: bounded by the rounds, and a margin for the start */
    double bound = 5.0 + run->conf->everflow.guided * 0.002;
    for (int i = first; i < t->n_p; i++) {
        int st = 0;
        for (int w = 0; w < (int)(bound * 50) && !tbi_exited(&t->p[i], &st); w++) {
            tbi_drain(&t->p[i], on_bounce_line, &run->bounce_sent);
            usleep(20000);
        }
        tbi_drain(&t->p[i], on_bounce_line, &run->bounce_sent);
        if (!rc && !tbi_exited(&t->p[i], &st))
            rc = cli_fail(t->cmd, "the %s did not finish in %.0f s", t->p[i].name, bound);
        else if (!rc && st)
            rc = cli_fail(t->cmd, "the %s failed (status %d): %s", t->p[i].name, st,
                          t->p[i].errtext);
    }
    return rc;
}

/* "stop" to the agents [first, last) (one already gone is reaped by the teardown). */
static void stop_agents(struct tb *t, int first, int last)
{
    for (int i = first; i < last; i++)
        if (t->p[i].in >= 0 && write(t->p[i].in, "stop\n", 5) < 0) {
            /* it is gone already; the teardown reaps it */
        }
}

int tbi_run_agents(struct tb *t, tb_run *run, cli_progress *prog, const char *self)
{
    const char *command = t->cmd;
    char sched[4200];
    snprintf(sched, sizeof sched, "%s/schedule.csv", run->capture_dir);
    struct agent_ctx ac = {.run = run, .fin = calloc(run->n_flows ? run->n_flows : 1, 1)};
    if (!ac.fin)
        return cli_fail(command, "out of memory");
    int rc = write_schedule(command, run, sched);
    int ag_first = t->n_p;
    if (!rc)
        rc = start_agents(t, run, self, sched);
    int ag_last = t->n_p;
    /* every agent listens before any flow starts */
    if (!rc)
        rc = tbi_await_ready(t, ag_first, ag_last, "agents");
    int64_t t0 = tbi_now_real() + 200000000;
    run->t0_ns = t0;
    for (int i = ag_first; !rc && !cli_signal && i < ag_last; i++) {
        char go[64];
        int l = snprintf(go, sizeof go, "go %" PRId64 "\n", t0);
        if (write(t->p[i].in, go, (size_t)l) != l)
            rc = cli_fail(command, "the %s does not listen", t->p[i].name);
    }
    if (!rc)
        rc = watch_agents(t, run, &ac, ag_first, prog);
    int64_t last_end = t0;
    for (size_t i = 0; i < run->n_flows; i++) {
        tb_flow_result *r = &run->res[i];
        if (r->received && r->last_ns > last_end)
            last_end = r->last_ns;
        if (r->sent && r->end_ns > last_end)
            last_end = r->end_ns;
    }
    run->traffic_s = (double)(last_end - t0) / 1e9;
    if (!rc && !cli_signal && ac.done < run->n_flows) {
        /* stopped at [traffic] stop: the agents reset what is still open, now */
        run->stopped = 1;
        run->agents_stop_ns = tbi_now_real();
        stop_agents(t, ag_first, ag_last);
    }
    /* let the queues drain and the captures' buffers reach their files */
    for (int w = 0; !rc && !cli_signal && w < 75; w++) {
        drain_all(t, &ac, ag_first);
        usleep(20000);
    }
    if (!rc && !cli_signal && run->sweep_drops)
        rc = sweep_counters(t, run);
    if (!run->stopped) {
        run->agents_stop_ns = tbi_now_real();
        stop_agents(t, ag_first, ag_last);
    }
    if (!rc && !cli_signal && run->sweep_drops)
        rc = run_bounce(t, run, self);
    for (int i = ag_first; i < ag_last; i++) { /* their last lines: the pings still open at
                                                   the stop, the guided probes they sent */
        ac.host = (uint32_t)(i - ag_first);
        for (int w = 0; w < 100 && !tbi_exited(&t->p[i], NULL); w++) {
            tbi_drain(&t->p[i], on_agent_line, &ac);
            usleep(20000);
        }
        tbi_drain(&t->p[i], on_agent_line, &ac);
    }
    free(ac.fin);
    if (!rc && ac.oom)
        rc = cli_fail(command, "out of memory for the agents' probes");
    if (!rc && !cli_signal && t->fab)
        tbi_fabric_quiet(t);
    number_traces(run);
    return rc;
}

/* "done SENT RECEIVED" from an application side (apps.py). */
static void on_app_line(void *ctx, const char *line)
{
    uint64_t *v = ctx;
    unsigned long long s, r;
    char extra;
    if (sscanf(line, "done %llu %llu %c", &s, &r, &extra) == 2) {
        v[0] = s;
        v[1] = r;
        v[2] = 1;
    }
}

/* One side of a session ended (status st): its outcome into *res. */
static void app_side_ended(struct proc *p, int st, const uint64_t said[3], int server,
                           tb_app_result *res)
{
    if (st == 0 && said[2]) {
        if (server) {
            res->server_ok = 1;
            res->server_sent = said[0];
            res->server_received = said[1];
        } else {
            res->client_ok = 1;
            res->client_sent = said[0];
            res->client_received = said[1];
        }
        return;
    }
    if (res->why[0])
        return;
    /* the last line it wrote on stderr */
    size_t len = strlen(p->errtext);
    while (len && p->errtext[len - 1] == '\n')
        p->errtext[--len] = '\0';
    const char *last = strrchr(p->errtext, '\n');
    snprintf(res->why, sizeof res->why, "%s exited (status %d)%s%s", server ? "server" : "client",
             st, len ? ": " : "", last ? last + 1 : p->errtext);
}

/* Start side `server` (1) or client (0) of session i in its host's namespace. Returns 0 or 1
 * after printing. */
static int spawn_app(struct tb *t, const tb_run *run, size_t i, int server, const char *py)
{
    const qr_app *a = &run->apps[i];
    char addr[32], port[16], name[64];
    tb_host_addr(run->fabric, a->server, addr, sizeof addr);
    snprintf(port, sizeof port, "%u", QR_APP_FIRST_PORT + (unsigned)i);
    snprintf(name, sizeof name, "%s %s of session %zu", qr_app_name(a->kind),
             server ? "server" : "client", i);
    char *argv[] = {"ip",
                    "netns",
                    "exec",
                    t->ns[server ? a->server : a->client],
                    (char *)py,
                    (char *)run->apps_script,
                    server ? "server" : "client",
                    (char *)qr_app_name(a->kind),
                    addr,
                    port,
                    NULL};
    return tbi_spawn(t, name, argv) ? 0 : cli_fail(t->cmd, "cannot start the %s", name);
}

/* The scenario's application sessions ([traffic] apps, apps.h): each server started in its host's
 * namespace and listening before the run starts, each client started at its time; returns when
 * every side tbi_exited, or at the scenario's stop (plus 2 s: then what still runs is stopped and
 * its session failed), after the queues drained. Returns 0 or 1 after printing. */
int tbi_run_apps(struct tb *t, tb_run *run, cli_progress *prog)
{
    const char *command = t->cmd;
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    size_t n = run->n_apps;
    uint64_t(*said)[3] = calloc(2 * n + 1, sizeof *said);
    int *srv = calloc(n + 1, sizeof *srv), *cli = calloc(n + 1, sizeof *cli);
    if (!said || !srv || !cli) {
        free(said);
        free(srv);
        free(cli);
        return cli_fail(command, "out of memory");
    }
    int rc = 0, app_first = t->n_p;
    for (size_t i = 0; !rc && i < n; i++) {
        srv[i] = t->n_p;
        rc = spawn_app(t, run, i, 1, py);
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = tbi_await_ready(t, srv[i], srv[i] + 1, "application servers");
    int64_t t0 = tbi_now_real() + 200000000;
    run->t0_ns = t0;
    int64_t deadline = t0 + run->conf->traffic.stop_ns; /* [traffic] stop */
    size_t started = 0, ended = 0;
    uint8_t *gone = calloc(2 * n + 1, 1);
    if (!gone)
        rc = cli_fail(command, "out of memory");
    while (!rc && !cli_signal && ended < 2 * n) {
        int64_t now = tbi_now_real();
        if (now >= deadline)
            break;
        for (size_t i = 0; !rc && i < n; i++) {
            const qr_app *a = &run->apps[i];
            if (cli[i] || t0 + a->start_ns > now)
                continue;
            run->app_res[i].start_ns = now;
            cli[i] = t->n_p;
            rc = spawn_app(t, run, i, 0, py);
            started++;
        }
        struct pollfd pf[MAX_PROCS];
        int np = 0;
        for (int i = 0; i < t->n_p; i++)
            pf[np++] = (struct pollfd){.fd = t->p[i].out, .events = POLLIN};
        poll(pf, (nfds_t)np, 20);
        for (size_t i = 0; i < n; i++)
            for (int side = 0; side < 2; side++) {
                int k = side ? srv[i] : cli[i];
                if (!k || gone[2 * i + side])
                    continue;
                struct proc *p = &t->p[k];
                tbi_drain(p, on_app_line, said[2 * i + side]);
                int st = 0;
                if (!tbi_exited(p, &st))
                    continue;
                tbi_drain(p, on_app_line, said[2 * i + side]);
                gone[2 * i + side] = 1;
                ended++;
                app_side_ended(p, st, said[2 * i + side], side, &run->app_res[i]);
                if (!side)
                    run->app_res[i].end_ns = tbi_now_real();
            }
        for (int i = 0; i < app_first; i++)
            tbi_drain(&t->p[i], NULL, NULL); /* the captures' stderr */
        double el = (double)(tbi_now_real() - t0) / 1e9;
        cli_progress_update(prog,
                            "testbed: %zu of %zu sessions started, %zu of %zu sides done, "
                            "%.1f s",
                            started, n, ended, 2 * n, el < 0 ? 0 : el);
    }
    /* what still runs at the deadline: stopped, its session failed */
    for (size_t i = 0; !rc && i < n; i++)
        for (int side = 0; side < 2; side++) {
            int k = side ? srv[i] : cli[i];
            if (gone[2 * i + side])
                continue;
            tb_app_result *r = &run->app_res[i];
            if (!r->why[0])
                snprintf(r->why, sizeof r->why, "%s still running at [traffic] stop",
                         !k     ? "client never started,"
                         : side ? "server"
                                : "client");
            if (k)
                tbi_stop_proc(&t->p[k], SIGTERM);
        }
    int64_t last_end = t0;
    for (size_t i = 0; i < n; i++)
        if (run->app_res[i].end_ns > last_end)
            last_end = run->app_res[i].end_ns;
    run->traffic_s = (double)(last_end - t0) / 1e9;
    /* let the queues drain and the captures' buffers reach their files */
    for (int w = 0; !rc && !cli_signal && w < 75; w++) {
        for (int i = 0; i < app_first; i++)
            tbi_drain(&t->p[i], NULL, NULL);
        usleep(20000);
    }
    free(gone);
    free(said);
    free(srv);
    free(cli);
    return rc;
}
