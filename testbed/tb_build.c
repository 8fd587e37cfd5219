/* qreplay testbed: the network built (the star, the fat tree), its counters and its captures. */
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

uint64_t tbi_qdisc_drops(struct tb *t, const char *ns, const char *dev, int *ok)
{
    char out[4096];
    char *argv[] = {"tc", "-n", (char *)ns, "-s", "qdisc", "show", "dev", (char *)dev, NULL};
    *ok = tbi_run_argv(argv, out, sizeof out) == 0;
    const char *d = *ok ? strstr(out, "dropped ") : NULL;
    if (!d) {
        *ok = 0;
        fprintf(stderr, "qreplay %s: cannot read the drop counter of %s in %s\n", t->cmd, dev, ns);
        return 0;
    }
    return strtoull(d + 8, NULL, 10);
}

uint64_t tbi_softnet_drops(void)
{
    FILE *f = fopen("/proc/net/softnet_stat", "r");
    uint64_t sum = 0;
    unsigned a, b;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%x %x", &a, &b) == 2)
            sum += b;
    if (f)
        fclose(f);
    return sum;
}

uint64_t tb_burst_bytes(uint64_t rate_bps)
{
    return 1500 + rate_bps / 8 * TB_TIMER_SLACK_NS / 1000000000;
}

int tbi_build_star(struct tb *t, const tb_run *run)
{
    const qr_config *c = run->conf;
    char rate[64], burst[32], hlimit[32], plimit[32], rto[32], icw[16];
    snprintf(rate, sizeof rate, "%" PRIu64 "bit", c->links.rate_bps);
    snprintf(burst, sizeof burst, "%" PRIu64, tb_burst_bytes(c->links.rate_bps));
    snprintf(hlimit, sizeof hlimit, "%" PRIu64, (uint64_t)c->host.nic_queue * 1514u);
    snprintf(plimit, sizeof plimit, "%" PRIu64, run->port_limit);
    snprintf(rto, sizeof rto, "%" PRId64 "ms", c->tcp.min_rto_ns / 1000000);
    snprintf(icw, sizeof icw, "%d", c->tcp.init_cwnd);
    const char *sw = t->ns[t->hosts];
    for (uint32_t i = 0; i <= t->hosts; i++) {
        if (tbi_x(t, "ip", "netns", "add", t->ns[i], NULL))
            return 1;
        t->n_ns = (int)i + 1;
        /* no IPv6 (no neighbour discovery or MLD on the wire) before any link exists */
        if (tbi_ns_sysctl(t, t->ns[i], "net/ipv6/conf/all/disable_ipv6", "1", 1) ||
            tbi_ns_sysctl(t, t->ns[i], "net/ipv6/conf/default/disable_ipv6", "1", 1) ||
            tbi_x(t, "ip", "-n", t->ns[i], "link", "set", "lo", "up", NULL))
            return 1;
    }
    if (tbi_ns_sysctl(t, sw, "net/ipv4/ip_forward", "1", 0))
        return 1;
    for (uint32_t i = 0; i < t->hosts; i++) {
        const char *h = t->ns[i];
        char port[16], hmac[32], smac[32], haddr[32], saddr[32], hip[32], sip[32];
        snprintf(port, sizeof port, "p%u", i);
        snprintf(hmac, sizeof hmac, "02:00:0a:00:%02x:02", i);
        snprintf(smac, sizeof smac, "02:00:0a:00:%02x:01", i);
        snprintf(hip, sizeof hip, "10.0.%u.2", i);
        snprintf(sip, sizeof sip, "10.0.%u.1", i);
        snprintf(haddr, sizeof haddr, "%s/24", hip);
        snprintf(saddr, sizeof saddr, "%s/24", sip);
        if (tbi_x(t, "ip", "link", "add", "eth0", "address", hmac, "netns", h, "type", "veth",
                  "peer", "name", port, "address", smac, "netns", sw, NULL) ||
            tbi_x(t, "ip", "-n", h, "addr", "add", haddr, "dev", "eth0", NULL) ||
            tbi_x(t, "ip", "-n", sw, "addr", "add", saddr, "dev", port, NULL) ||
            tbi_x(t, "ip", "netns", "exec", h, "ethtool", "-K", "eth0", "tso", "off", "gso", "off",
                  "gro", "off", NULL) ||
            tbi_x(t, "ip", "netns", "exec", sw, "ethtool", "-K", port, "tso", "off", "gso", "off",
                  "gro", "off", NULL) ||
            tbi_x(t, "ip", "-n", h, "link", "set", "eth0", "up", NULL) ||
            tbi_x(t, "ip", "-n", sw, "link", "set", port, "up", NULL) ||
            tbi_x(t, "ip", "-n", h, "neigh", "replace", sip, "lladdr", smac, "dev", "eth0", "nud",
                  "permanent", NULL) ||
            tbi_x(t, "ip", "-n", sw, "neigh", "replace", hip, "lladdr", hmac, "dev", port, "nud",
                  "permanent", NULL) ||
            tbi_x(t, "ip", "-n", h, "route", "add", "10.0.0.0/16", "via", sip, "dev", "eth0",
                  "rto_min", rto, "initcwnd", icw, "congctl", qr_testbed_congestion(c->tcp.variant),
                  NULL) ||
            tbi_x(t, "tc", "-n", h, "qdisc", "add", "dev", "eth0", "root", "stab", "overhead",
                  "-14", "tbf", "rate", rate, "burst", burst, "limit", hlimit, NULL) ||
            tbi_x(t, "tc", "-n", sw, "qdisc", "add", "dev", port, "root", "stab", "overhead", "-14",
                  "tbf", "rate", rate, "burst", burst, "limit", plimit, NULL))
            return 1;
    }
    return 0;
}

/* A switch's own traffic, counted where no capture can see it all (nftables, table ip
 * qreplay_own): chain out, every IPv4 packet the switch itself sends (ICMP answers to 007's
 * probes and traceroutes) before its egress queue, which may drop it; chain in, every one it
 * takes for itself that is not TCP; chain back, every one not TCP that arrives with one of its own
 * addresses as its source (its own answer sent back to it round a routing loop), which the kernel
 * drops as a martian before any chain after. Appended to rules[0..len); the new length, or -1 if
 * size is too small. */
static int add_own_counters(char *rules, size_t len, size_t size)
{
    int w = snprintf(rules + len, size - len,
                     "table ip qreplay_own {\n"
                     "  chain out {\n"
                     "    type filter hook output priority 0; policy accept;\n"
                     "    counter\n"
                     "  }\n"
                     "  chain in {\n"
                     "    type filter hook input priority 0; policy accept;\n"
                     "    meta l4proto != tcp counter\n"
                     "  }\n"
                     "  chain back {\n"
                     "    type filter hook prerouting priority 0; policy accept;\n"
                     "    meta l4proto != tcp fib saddr type local counter\n"
                     "  }\n"
                     "}\n");
    return w < 0 || (size_t)w >= size - len ? -1 : (int)(len + (size_t)w);
}

/* Namespace ns's setup script (DIR/.nsN-PID.sh, removed after): its ip and tc commands as
 * batches, the offloads off, and its nftables rules; errors into DIR/.nsN-PID.err. */
static int fabric_script(struct tb *t, const tb_run *run, uint32_t ns, char *script, size_t size)
{
    const qr_fabric *f = t->fab;
    const qr_config *c = run->conf;
    const char *dir = run->capture_dir;
    char burst[32], rto[32], icw[16], base[4200];
    snprintf(burst, sizeof burst, "%" PRIu64, tb_burst_bytes(c->links.rate_bps));
    snprintf(rto, sizeof rto, "%" PRId64 "ms", c->tcp.min_rto_ns / 1000000);
    snprintf(icw, sizeof icw, "%d", c->tcp.init_cwnd);
    snprintf(base, sizeof base, "%s/.ns%u-%ld", dir, ns, (long)getpid());
    char ipf[4300], tcf[4300];
    snprintf(ipf, sizeof ipf, "%s.ip", base);
    snprintf(tcf, sizeof tcf, "%s.tc", base);
    snprintf(script, size, "%s.sh", base);
    FILE *ip = fopen(ipf, "w"), *tc = fopen(tcf, "w"), *sh = fopen(script, "w");
    if (!ip || !tc || !sh) {
        if (ip)
            fclose(ip);
        if (tc)
            fclose(tc);
        if (sh)
            fclose(sh);
        return cli_fail(t->cmd, "%s: %s", base, strerror(errno));
    }
    fprintf(sh, "set -e\nip -batch '%s'\ntc -batch '%s'\n", ipf, tcf);
    fprintf(ip, "link set lo up\n");
    size_t n_cables, n_routes;
    const qr_fabric_cable *cb = qr_fabric_cables(f, &n_cables);
    const qr_fabric_route *r = qr_fabric_routes(f, &n_routes);
    for (size_t i = 0; i < n_cables; i++)
        for (int j = 0; j < 2; j++) {
            const qr_fabric_end *e = j ? &cb[i].b : &cb[i].a, *o = j ? &cb[i].a : &cb[i].b;
            if (e->ns != ns)
                continue;
            char a[20], peer[20];
            tbi_ip4_text(e->addr, a, sizeof a);
            tbi_ip4_text(o->addr, peer, sizeof peer);
            fprintf(ip, "addr add %s/30 dev %s\nlink set %s up\n", a, e->ifname, e->ifname);
            fprintf(
                ip, "neigh replace %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent\n",
                peer, o->mac[0], o->mac[1], o->mac[2], o->mac[3], o->mac[4], o->mac[5], e->ifname);
            fprintf(tc,
                    "qdisc add dev %s root stab overhead -14 tbf rate %" PRIu64
                    "bit burst %s limit %" PRIu64 "\n",
                    e->ifname, qr_fabric_rate(f, ns, e->ifname), burst,
                    e->node.kind == QR_NODE_HOST ? (uint64_t)c->host.nic_queue * 1514u
                                                 : run->port_limit);
            fprintf(sh, "ethtool -K %s tso off gso off gro off\n", e->ifname);
        }
    for (size_t i = 0; i < n_routes; i++) {
        if (r[i].ns != ns)
            continue;
        char p[20];
        tbi_ip4_text(r[i].prefix, p, sizeof p);
        if (r[i].plen)
            fprintf(ip, "route add %s/%u", p, r[i].plen);
        else
            fprintf(ip, "route add default");
        for (uint32_t v = 0; v < r[i].n_via; v++) {
            tbi_ip4_text(r[i].via[v], p, sizeof p);
            fprintf(ip, "%s via %s dev %s", r[i].n_via > 1 ? " nexthop" : "", p, r[i].dev[v]);
        }
        if (ns < qr_fabric_hosts(f)) /* the hosts' TCP settings ride on their route */
            fprintf(ip, " rto_min %s initcwnd %s congctl %s", rto, icw,
                    qr_testbed_congestion(c->tcp.variant));
        fputc('\n', ip);
    }
    char rules[8192];
    int len = qr_fabric_nft_ruleset(f, ns, rules, sizeof rules);
    if (len >= 0 && ns >= qr_fabric_hosts(f)) /* a switch: what it sends and takes itself */
        len = add_own_counters(rules, (size_t)len, sizeof rules);
    if (len > 0) {
        char file[4200], name[16];
        snprintf(file, sizeof file, "%s/faults-%s.nft", dir,
                 qr_fabric_ns_name(f, ns, name, sizeof name));
        FILE *o = fopen(file, "w");
        if (!o || fputs(rules, o) < 0 || fclose(o)) {
            fclose(ip);
            fclose(tc);
            fclose(sh);
            return cli_fail(t->cmd, "%s: %s", file, strerror(errno));
        }
        fprintf(sh, "nft -f '%s'\n", file);
    }
    fprintf(sh, "rm -f '%s' '%s'\n", ipf, tcf);
    int bad = fclose(ip) | fclose(tc) | fclose(sh);
    return bad ? cli_fail(t->cmd, "%s: %s", base, strerror(errno)) : 0;
}

/* The fat tree of run->fabric (fabric.h): a namespace per host and switch, a veth pair per cable,
 * the plan's addresses, permanent neighbours, routes and kernel settings, a shaper over a byte
 * FIFO on every interface, and the faults' nftables rules (their text kept in capture_dir). The
 * namespaces are made in one batch, their cables in another; each namespace is then set up by its
 * own script, a few at a time. */
int tbi_build_fabric(struct tb *t, const tb_run *run)
{
    const qr_fabric *f = t->fab;
    const char *dir = run->capture_dir;
    uint32_t hosts = qr_fabric_hosts(f), nn = qr_fabric_namespaces(f);
    char path[4200];
    snprintf(path, sizeof path, "%s/.fabric-%ld.batch", dir, (long)getpid());
    FILE *b = fopen(path, "w");
    if (!b)
        return cli_fail(t->cmd, "%s: %s", path, strerror(errno));
    for (uint32_t i = 0; i < nn; i++)
        fprintf(b, "netns add %s\n", t->ns[i]);
    t->n_ns = (int)nn; /* the teardown removes what exists of them */
    int rc = fclose(b) ? cli_fail(t->cmd, "%s: %s", path, strerror(errno))
                       : tbi_x(t, "ip", "-batch", path, NULL);
    for (uint32_t i = 0; !rc && i < nn; i++) {
        const char *const base[][2] = {{"net/ipv6/conf/all/disable_ipv6", "1"},
                                       {"net/ipv6/conf/default/disable_ipv6", "1"},
                                       {"net/ipv4/conf/all/rp_filter", "0"},
                                       {"net/ipv4/conf/default/rp_filter", "0"}};
        const int opt[] = {1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
        char seed[16], limit[24], rate[24], burst[24];
        snprintf(seed, sizeof seed, "%u", i < hosts ? 0 : qr_fabric_hash_seed(f, i - hosts));
        /* the switches answer 007's traceroutes under the scenario's ICMP limits
         * ([traceroute] icmp_*; the kernel counts the per-destination interval in ms) */
        const qr_config *c = run->conf;
        snprintf(limit, sizeof limit, "%" PRId64, c->traceroute.icmp_interval_ns / 1000000);
        snprintf(rate, sizeof rate, "%.0f", c->traceroute.icmp_rate);
        snprintf(burst, sizeof burst, "%d", c->traceroute.icmp_burst);
        const char *const sw[][2] = {{"net/ipv6/conf/all/disable_ipv6", "1"},
                                     {"net/ipv6/conf/default/disable_ipv6", "1"},
                                     {"net/ipv4/conf/all/rp_filter", "0"},
                                     {"net/ipv4/conf/default/rp_filter", "0"},
                                     {"net/ipv4/ip_forward", "1"},
                                     {"net/ipv4/fib_multipath_hash_policy", "3"},
                                     {"net/ipv4/fib_multipath_hash_fields", "0x0037"},
                                     {"net/ipv4/icmp_errors_use_inbound_ifaddr", "1"},
                                     {"net/ipv4/fib_multipath_hash_seed", seed},
                                     {"net/ipv4/icmp_ratelimit", limit},
                                     {"net/ipv4/icmp_msgs_per_sec", rate},
                                     {"net/ipv4/icmp_msgs_burst", burst},
                                     /* a bounce probe leaves by the port it came in by: no
                                      * ICMP redirect for it (guided_plan.h) */
                                     {"net/ipv4/conf/all/send_redirects", "0"},
                                     {"net/ipv4/conf/default/send_redirects", "0"}};
        int absent = t->absent_sysctl;
        t->absent_sysctl = 0;
        rc = i < hosts ? tbi_ns_sysctls(t, t->ns[i], base, 4, opt)
                       : tbi_ns_sysctls(t, t->ns[i], sw, 14, opt);
        t->absent_sysctl = i >= hosts && t->absent_sysctl ? 2 /* the seed */ : absent;
    }
    size_t n_cables;
    const qr_fabric_cable *cb = qr_fabric_cables(f, &n_cables);
    if (!rc && !(b = fopen(path, "w")))
        rc = cli_fail(t->cmd, "%s: %s", path, strerror(errno));
    for (size_t i = 0; !rc && i < n_cables; i++) {
        const uint8_t *m0 = cb[i].a.mac, *m1 = cb[i].b.mac;
        fprintf(b,
                "link add %s address %02x:%02x:%02x:%02x:%02x:%02x netns %s type veth peer name "
                "%s address %02x:%02x:%02x:%02x:%02x:%02x netns %s\n",
                cb[i].a.ifname, m0[0], m0[1], m0[2], m0[3], m0[4], m0[5], t->ns[cb[i].a.ns],
                cb[i].b.ifname, m1[0], m1[1], m1[2], m1[3], m1[4], m1[5], t->ns[cb[i].b.ns]);
    }
    if (!rc)
        rc = fclose(b) ? cli_fail(t->cmd, "%s: %s", path, strerror(errno))
                       : tbi_x(t, "ip", "-batch", path, NULL);
    unlink(path);
    /* each namespace's script, at most 4 at once */
    char scripts[QR_FABRIC_MAX_NODES][4300];
    pid_t pids[QR_FABRIC_MAX_NODES];
    int running = 0;
    uint32_t next = 0, done = 0;
    for (uint32_t i = 0; !rc && i < nn; i++)
        rc = fabric_script(t, run, i, scripts[i], sizeof scripts[i]);
    while (!rc && done < nn) {
        while (running < 4 && next < nn) {
            char *argv[] = {"ip", "netns", "exec", t->ns[next], "sh", scripts[next], NULL};
            char err[4400];
            snprintf(err, sizeof err, "%.4290s.err", scripts[next]);
            pid_t pid = fork();
            if (pid == 0) {
                setpgid(0, 0);
                int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) {
                    dup2(fd, 1);
                    dup2(fd, 2);
                }
                signal(SIGPIPE, SIG_DFL); /* the testbed ignores it; its programs do not */
                execvp(argv[0], argv);
                _exit(127);
            }
            if (pid < 0) {
                rc = cli_fail(t->cmd, "fork: %s", strerror(errno));
                break;
            }
            pids[next++] = pid;
            running++;
        }
        int st = 0;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        for (uint32_t i = 0; i < next; i++) {
            if (pids[i] != pid)
                continue;
            running--;
            done++;
            char err[4400], text[1024] = "";
            snprintf(err, sizeof err, "%.4290s.err", scripts[i]);
            FILE *e = fopen(err, "r");
            size_t l = e ? fread(text, 1, sizeof text - 1, e) : 0;
            text[l] = 0;
            if (e)
                fclose(e);
            while (l && text[l - 1] == '\n')
                text[--l] = 0;
            if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !rc)
                rc = cli_fail(t->cmd, "setting up namespace %s failed: %s", t->ns[i], text);
            unlink(err);
            unlink(scripts[i]);
        }
    }
    while (running > 0) { /* after an error: let the others end */
        int st;
        if (waitpid(-1, &st, 0) < 0 && errno != EINTR)
            break;
        running--;
    }
    return rc;
}

/* What fault rule `fault` of namespace ns dropped: its counter. */
uint64_t tbi_nft_drops(struct tb *t, const char *ns, uint32_t fault, int *ok)
{
    char out[4096], chain[32];
    snprintf(chain, sizeof chain, "fault%u", fault);
    char *argv[] = {"ip",    "netns",  "exec",    (char *)ns, "nft", "list",
                    "chain", "netdev", "qreplay", chain,      NULL};
    *ok = tbi_run_argv(argv, out, sizeof out) == 0;
    const char *d = *ok ? strstr(out, "counter packets ") : NULL;
    if (!d) {
        *ok = 0;
        fprintf(stderr, "qreplay %s: cannot read the counter of fault %u in %s\n", t->cmd, fault,
                ns);
        return 0;
    }
    return strtoull(d + 16, NULL, 10);
}

/* A switch's own counter (own_counters): chain "out", "in" or "back" of table ip qreplay_own. */
uint64_t tbi_own_count(struct tb *t, const char *ns, const char *chain, int *ok)
{
    char out[4096];
    char *argv[] = {"ip",    "netns", "exec",        (char *)ns,    "nft", "list",
                    "chain", "ip",    "qreplay_own", (char *)chain, NULL};
    *ok = tbi_run_argv(argv, out, sizeof out) == 0;
    const char *d = *ok ? strstr(out, "counter packets ") : NULL;
    if (!d) {
        *ok = 0;
        fprintf(stderr, "qreplay %s: cannot read the counter of its own packets (%s) in %s\n",
                t->cmd, chain, ns);
        return 0;
    }
    return strtoull(d + 16, NULL, 10);
}

/* The value of counter `name` in the `prefix` lines ("Icmp: " of /proc/net/snmp, "TcpExt: " of
 * /proc/net/netstat: a header line of names, then a line of values); 0 and *found 0 when absent. */
static uint64_t proc_counter(const char *text, const char *prefix, const char *name, int *found)
{
    size_t pl = strlen(prefix);
    const char *h = strstr(text, prefix);
    const char *v = h ? strstr(h + pl, prefix) : NULL;
    *found = 0;
    if (!v)
        return 0;
    const char *he = strchr(h, '\n');
    size_t len = strlen(name);
    int at = 0;
    for (const char *p = h + pl; p && p < he; at++) {
        while (*p == ' ')
            p++;
        if (!strncmp(p, name, len) && (p[len] == ' ' || p[len] == '\n')) {
            const char *q = v + pl;
            for (int i = 0; i < at && q; i++) {
                q = strchr(q, ' ');
                if (q)
                    q++;
            }
            *found = q != NULL;
            return q ? strtoull(q, NULL, 10) : 0;
        }
        p = strchr(p, ' ');
    }
    return 0;
}

static uint64_t icmp_counter(const char *snmp, const char *name, int *found)
{
    return proc_counter(snmp, "Icmp: ", name, found);
}

/* File `path` (a /proc/net counters file) as namespace ns sees it, into out; 0 or -1. */
static int ns_counters(const char *ns, const char *path, char *out, size_t size)
{
    char *argv[] = {"ip", "netns", "exec", (char *)ns, "cat", (char *)path, NULL};
    return tbi_run_argv(argv, out, size) == 0 ? 0 : -1;
}

int tbi_ns_reorder(struct tb *t, const char *ns, uint64_t *reorder, uint64_t *fast_retrans)
{
    char out[16384];
    static const char *const kinds[] = {"TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder"};
    int found = 0;
    if (ns_counters(ns, "/proc/net/netstat", out, sizeof out) == 0)
        *fast_retrans = proc_counter(out, "TcpExt: ", "TCPFastRetrans", &found);
    for (int i = 0; found && i < 3; i++) {
        int f;
        *reorder += proc_counter(out, "TcpExt: ", kinds[i], &f);
    }
    if (!found) {
        fprintf(stderr, "qreplay %s: cannot read the TCP counters (/proc/net/netstat) in %s\n",
                t->cmd, ns);
        return 1;
    }
    return 0;
}

int tbi_ns_icmp(struct tb *t, const char *ns, uint64_t *sent, uint64_t *refused, uint64_t *expired)
{
    char out[8192];
    int found = 0, g = 0, h = 0, e = 0;
    if (ns_counters(ns, "/proc/net/snmp", out, sizeof out) == 0) {
        *sent = icmp_counter(out, "OutTimeExcds", &found);
        /* the packets it did not forward for their TTL (ip_forward counts them here) */
        *expired = proc_counter(out, "Ip: ", "InHdrErrors", &e);
        found = found && e;
    }
    if (!found) {
        fprintf(stderr, "qreplay %s: cannot read the ICMP counters (/proc/net/snmp) in %s\n",
                t->cmd, ns);
        return 1;
    }
    *refused =
        icmp_counter(out, "OutRateLimitGlobal", &g) + icmp_counter(out, "OutRateLimitHost", &h);
    return 0;
}

void tbi_fabric_quiet(struct tb *t)
{
    uint64_t prev = UINT64_MAX;
    for (int i = 0; i < 50 && !cli_signal; i++) {
        uint64_t sum = 0;
        for (uint32_t sw = 0; sw < qr_fabric_switches(t->fab); sw++) {
            char out[8192];
            int f = 0, e = 0;
            if (ns_counters(t->ns[qr_fabric_switch_ns(t->fab, sw)], "/proc/net/snmp", out,
                            sizeof out) == 0)
                sum += proc_counter(out, "Ip: ", "ForwDatagrams", &f) +
                       proc_counter(out, "Ip: ", "InHdrErrors", &e);
            if (!f || !e)
                return; /* unreadable: the counters' own reading says so after */
        }
        if (sum == prev)
            return;
        prev = sum;
        usleep(100000);
    }
}

/* tcpdump of dev in ns into file: one direction (dir "in" or "out") or both (NULL); snap bytes of
 * each frame, a kernel buffer of buf_kb; filter: a tcpdump expression, NULL for every frame. */
struct proc *tbi_capture(struct tb *t, const char *ns, const char *dev, const char *dir,
                         const char *file, const char *snap, const char *buf_kb, const char *filter)
{
    char name[64];
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    snprintf(name, sizeof name, "tcpdump of %s", base);
    char *argv[24];
    int n = 0;
    const char *fixed[] = {"ip",
                           "netns",
                           "exec",
                           ns,
                           "tcpdump",
                           "-i",
                           dev,
                           "-n",
                           "-s",
                           snap,
                           "-B",
                           buf_kb,
                           "--time-stamp-precision=nano",
                           "-Z",
                           "root",
                           "-w",
                           file};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strncmp(dev, "nflog:", 6) || strncmp(fixed[i], "--time-stamp", 12))
            argv[n++] = (char *)fixed[i]; /* a netfilter log has microsecond stamps only */
    if (dir) {
        argv[n++] = "-Q";
        argv[n++] = (char *)dir;
    }
    if (filter)
        argv[n++] = (char *)filter;
    argv[n] = NULL;
    return tbi_spawn(t, name, argv);
}

/* Wait until every capture listens (tcpdump says so on stderr). */
int tbi_await_captures(struct tb *t, int first, int last)
{
    for (int w = 0; w < 500; w++) {
        int all = 1;
        for (int i = first; i < last; i++) {
            tbi_drain(&t->p[i], NULL, NULL);
            int st = 0;
            if (!t->p[i].listening && tbi_exited(&t->p[i], &st)) {
                tbi_drain(&t->p[i], NULL, NULL);
                fprintf(stderr, "qreplay %s: %s exited (status %d): %s\n", t->cmd, t->p[i].name, st,
                        t->p[i].errtext);
                return 1;
            }
            all &= t->p[i].listening;
        }
        if (all)
            return 0;
        if (cli_signal)
            return 1;
        usleep(20000);
    }
    fprintf(stderr, "qreplay %s: the captures did not start within 10 s\n", t->cmd);
    return 1;
}

void tbi_on_ready(void *ctx, const char *line)
{
    if (!strcmp(line, "ready"))
        ((struct proc *)ctx)->listening = 1;
}

/* "N packets dropped by kernel" (and by interface) in a stopped tcpdump's report. */
uint64_t tbi_capture_lost(const struct proc *p, int *have)
{
    uint64_t lost = 0, v;
    const char *s = p->errtext;
    *have = 0;
    while ((s = strstr(s, "packets dropped by "))) {
        const char *b = s;
        while (b > p->errtext && b[-1] != '\n')
            b--;
        if (sscanf(b, "%" SCNu64, &v) == 1) {
            lost += v;
            *have = 1;
        }
        s += 19;
    }
    return lost;
}
