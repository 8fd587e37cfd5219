/* qreplay testbed: a multi-tier service (tiers.h) on the star: its planted slow links shaped on the
 * switch, and its hosts run by testbed/tiers.py (qreplay tiers --testbed). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/tiers.h"
#include "tb_internal.h"

/* A slow link between hosts a and b: a delay line on the switch. The switch's packets from a's
 * port to b and from b's port to a are routed into a TUN device (qrdF, F the fault's number), where
 * tiers.py delay gives each back after the fault's delay; back in the kernel they are routed on
 * to their host. Started here, stopped with the service. Returns 0 or 1 after printing. */
int tbi_tiers_shape(struct tb *t, const tb_run *run)
{
    const qr_tiers_spec *s = run->tiers;
    const char *sw = t->ns[t->hosts];
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    if (tbi_ns_sysctl(t, sw, "net/ipv4/conf/all/rp_filter", "0", 0) ||
        tbi_ns_sysctl(t, sw, "net/ipv4/conf/default/rp_filter", "0", 0))
        return 1;
    int first = t->n_p;
    for (uint32_t f = 0; f < s->n_faults; f++) {
        const qr_tier_fault *x = &s->faults[f];
        if (x->kind != QR_TIER_SLOW_LINK)
            continue;
        if (x->a >= t->hosts || x->b >= t->hosts || x->delay_ns <= 0)
            return cli_fail(t->cmd, "fault slow-link %u %u: no such hosts on the star", x->a, x->b);
        char dev[16], table[16], ns_delay[32], name[64];
        snprintf(dev, sizeof dev, "qrd%u", f);
        snprintf(table, sizeof table, "%u", 100 + f);
        snprintf(ns_delay, sizeof ns_delay, "%" PRId64, x->delay_ns);
        if (tbi_x(t, "ip", "-n", sw, "tuntap", "add", "dev", dev, "mode", "tun", NULL) ||
            tbi_x(t, "ip", "-n", sw, "link", "set", dev, "up", NULL) ||
            tbi_x(t, "ip", "-n", sw, "route", "add", "default", "dev", dev, "table", table, NULL))
            return 1;
        for (int dir = 0; dir < 2; dir++) {
            char port[16], src[32], dst[32];
            uint32_t from = dir ? x->b : x->a, to = dir ? x->a : x->b;
            snprintf(port, sizeof port, "p%u", from);
            tb_host_addr(NULL, from, src, sizeof src);
            tb_host_addr(NULL, to, dst, sizeof dst);
            if (tbi_x(t, "ip", "-n", sw, "rule", "add", "iif", port, "from", src, "to", dst,
                      "table", table, NULL))
                return 1;
        }
        snprintf(name, sizeof name, "the delay line of slow link %u-%u", x->a, x->b);
        char *argv[] = {
            "ip",    "netns", "exec",   (char *)sw, (char *)py, (char *)run->tiers_script,
            "delay", dev,     ns_delay, NULL};
        if (!tbi_spawn(t, name, argv))
            return cli_fail(t->cmd, "cannot start %s", name);
    }
    return tbi_await_ready(t, first, t->n_p, "delay lines");
}

/* Start host h's process (server or client) in its namespace. Returns 0 or 1 after printing. */
static int spawn_host(struct tb *t, const tb_run *run, uint32_t h, const char *py)
{
    const qr_tiers_spec *s = run->tiers;
    int tier = qr_tiers_tier_of(s, h);
    char host[16], log[4200], name[64];
    snprintf(host, sizeof host, "%u", h);
    snprintf(log, sizeof log, "%s/h%u.log", run->tiers_log_dir, h);
    snprintf(name, sizeof name, "tiers.py on host %u (%s)", h,
             tier >= 0 ? s->tiers[tier].name : "a client");
    char *argv[] = {"ip",
                    "netns",
                    "exec",
                    t->ns[h],
                    (char *)py,
                    (char *)run->tiers_script,
                    (char *)run->tiers_plan,
                    host,
                    log,
                    NULL};
    return tbi_spawn(t, name, argv) ? 0 : cli_fail(t->cmd, "cannot start %s", name);
}

static int is_client(const qr_tiers_spec *s, uint32_t h)
{
    for (uint32_t i = 0; i < s->n_clients; i++)
        if (s->clients[i] == h)
            return 1;
    return 0;
}

/* A process that ended badly: its last line on stderr. */
static int failed(struct tb *t, struct proc *p, int st)
{
    tbi_drain(p, NULL, NULL);
    size_t len = strlen(p->errtext);
    while (len && p->errtext[len - 1] == '\n')
        p->errtext[--len] = '\0';
    const char *last = strrchr(p->errtext, '\n');
    return cli_fail(t->cmd, "%s exited (status %d)%s%s", p->name, st, len ? ": " : "",
                    last ? last + 1 : p->errtext);
}

/* Write a line to every process of [first, last) that is (or is not) a client. */
static int tell(struct tb *t, const int *proc_host, const tb_run *run, int first, int last,
                int clients, const char *line)
{
    for (int i = first; i < last; i++) {
        if (is_client(run->tiers, (uint32_t)proc_host[i - first]) != clients)
            continue;
        ssize_t l = (ssize_t)strlen(line);
        if (t->p[i].pid > 0 && write(t->p[i].in, line, (size_t)l) != l)
            return cli_fail(t->cmd, "%s does not listen", t->p[i].name);
    }
    return 0;
}

/* Every host of the service: servers and clients started and ready, then the clients told to go;
 * when every client has had its requests answered the servers are told to stop. A process that
 * fails, or a run past its duration + 40 s, fails the run. Returns 0 or 1 after printing. */
int tbi_run_tiers(struct tb *t, tb_run *run, cli_progress *prog)
{
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    const qr_tiers_spec *s = run->tiers;
    uint32_t n = qr_tiers_hosts(s);
    int first = t->n_p, proc_host[QR_TESTBED_MAX_HOSTS], rc = 0, clients = 0;
    for (uint32_t h = 0; !rc && h < n && h < t->hosts; h++) {
        if (qr_tiers_tier_of(s, h) < 0 && !is_client(s, h))
            continue;
        proc_host[t->n_p - first] = (int)h;
        clients += is_client(s, h);
        rc = spawn_host(t, run, h, py);
    }
    int last = t->n_p;
    if (!rc)
        rc = tbi_await_ready(t, first, last, "service's hosts");
    int64_t t0 = tbi_now_real();
    run->t0_ns = t0;
    if (!rc)
        rc = tell(t, proc_host, run, first, last, 1, "go\n");
    int64_t deadline = t0 + run->tiers_duration_ns + 40000000000LL;
    int done = 0, stopping = 0;
    uint8_t gone[QR_TESTBED_MAX_HOSTS] = {0};
    while (!rc && !cli_signal && done < last - first) {
        if (tbi_now_real() > deadline) {
            rc = cli_fail(t->cmd, "the service's hosts were still running 40 s after its "
                                  "clients' last request was due");
            break;
        }
        struct pollfd pf[MAX_PROCS];
        int np = 0;
        for (int i = 0; i < t->n_p; i++)
            pf[np++] = (struct pollfd){.fd = t->p[i].out, .events = POLLIN};
        poll(pf, (nfds_t)np, 20);
        for (int i = first; !rc && i < last; i++) {
            int st = 0;
            tbi_drain(&t->p[i], NULL, NULL);
            if (gone[i - first] || !tbi_exited(&t->p[i], &st))
                continue;
            gone[i - first] = 1;
            done++;
            if (st)
                rc = failed(t, &t->p[i], st);
        }
        for (int i = 0; i < first; i++)
            tbi_drain(&t->p[i], NULL, NULL); /* the captures' stderr */
        int clients_done = 0;
        for (int i = first; i < last; i++)
            clients_done += gone[i - first] && is_client(s, (uint32_t)proc_host[i - first]);
        if (!rc && !stopping && clients_done == clients) {
            stopping = 1;
            run->traffic_s = (double)(tbi_now_real() - t0) / 1e9;
            rc = tell(t, proc_host, run, first, last, 0, "stop\n");
        }
        cli_progress_update(prog, "testbed: tiers: %d of %d clients done, %.1f s", clients_done,
                            clients, (double)(tbi_now_real() - t0) / 1e9);
    }
    for (int i = first; i < last; i++)
        if (!gone[i - first])
            tbi_stop_proc(&t->p[i], SIGTERM);
    for (int i = 0; i < first; i++) /* the slow links' delay lines */
        if (!strncmp(t->p[i].name, "the delay line", 14) && t->p[i].pid > 0) {
            if (write(t->p[i].in, "stop\n", 5) != 5)
                tbi_stop_proc(&t->p[i], SIGTERM);
            tbi_wait_for(&t->p[i], 2.0);
        }
    /* let the queues drain and the captures' buffers reach their files */
    for (int w = 0; !rc && !cli_signal && w < 75; w++) {
        for (int i = 0; i < first; i++)
            tbi_drain(&t->p[i], NULL, NULL);
        usleep(20000);
    }
    return rc;
}
