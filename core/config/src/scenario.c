/* Scenario files: a fixed schema of typed keys, parsed from INI with libinih. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "internal.h"
#include "qreplay/apps.h"
#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "qreplay/loopfault.h"
#include "qreplay/reader.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
#include "qreplay/version.h"

enum ktype {
    KT_U64,
    KT_INT,
    KT_DOUBLE,
    KT_TIME,
    KT_RATE,
    KT_BYTES,
    KT_MARGIN,
    KT_PERCENT,
    KT_PERSEC,
    KT_ENUM,
    KT_TIMELIST,
    KT_PERCENTLIST,
    KT_ENUMSET,
    KT_INPATH,     /* an input file: resolved against the scenario's folder, then the data folder */
    KT_OUTPATH,    /* an output folder: kept as given */
    KT_FAULTS,     /* [faults] drop rules (faults.h): syntax checked here, kept as given */
    KT_READERS,    /* [traffic] read_rate rules (reader.h): syntax checked here, kept as given */
    KT_LINKFAULTS, /* [faults] gray, blackhole, delay, rate (linkfault.h; min = the kind) */
    KT_APPS,       /* [traffic] apps sessions (apps.h): syntax checked here, kept as given */
    KT_LOOPS,      /* [faults] loop rules (loopfault.h): syntax checked here, kept as given */
};

static const char *const topo_names[] = {"fattree", "star", NULL};
static const char *const policy_names[] = {"dynamic", "static", NULL};
static const char *const pattern_names[] = {"websearch", "flows", "apps", NULL};
static const char *const tcp_names[] = {"newreno", "dctcp", "cubic", NULL};
static const char *const method_names[] = {"rate", "gap", NULL};
static const char *const mode_names[] = {"plain", "tagged", NULL};

struct keydef {
    const char *section;
    const char *key;
    enum ktype type;
    size_t offset;
    const char *def;
    double min, max; /* the range of numbers, times (ns), sizes (bytes), rates (bit/s) and event
                      * rates (/s); none if both are 0 */
    const char *const *names;
    const char *help;
};

#define OFF(field) offsetof(qr_config, field)

static const struct keydef schema[] = {
    {"run", "seed", KT_U64, OFF(run.seed), "1", 0, 0, NULL,
     "master seed; every random stream derives from it"},
    {"topology", "kind", KT_ENUM, OFF(topology.kind), "fattree", 0, 0, topo_names,
     "fattree or star"},
    {"topology", "k", KT_INT, OFF(topology.k), "4", 2, 64, NULL, "FatTree arity (even)"},
    {"topology", "hosts", KT_INT, OFF(topology.hosts), "3", 2, 63, NULL,
     "hosts on the star (2..63)"},
    {"links", "rate", KT_RATE, OFF(links.rate_bps), "10Gbps", 1e3, 1e13, NULL, "every link's rate"},
    {"links", "delay", KT_TIME, OFF(links.delay_ns), "1us", 0, 1e9, NULL,
     "propagation delay per link"},
    {"buffer", "size", KT_BYTES, OFF(buffer.size_bytes), "2MB", 1, 1e12, NULL,
     "shared buffer per switch"},
    {"buffer", "alpha", KT_DOUBLE, OFF(buffer.alpha), "1", 1e-6, 1e6, NULL,
     "dynamic-threshold alpha: threshold = alpha * (size - occupancy)"},
    {"buffer", "policy", KT_ENUM, OFF(buffer.policy), "dynamic", 0, 0, policy_names,
     "dynamic (thresholds alpha * free shared buffer) or static (each port its own port_size "
     "bytes, as a Linux switch of byte-limited FIFOs)"},
    {"buffer", "port_size", KT_BYTES, OFF(buffer.port_size_bytes), "0B", 0, 1e12, NULL,
     "policy = static: each egress port's limit (0: size divided by the switch's ports)"},
    {"buffer", "ecn_threshold", KT_BYTES, OFF(buffer.ecn_threshold_bytes), "0B", 0, 1e12, NULL,
     "mark ECN CE on packets joining a queue longer than this (0: never; dctcp needs it)"},
    {"traffic", "pattern", KT_ENUM, OFF(traffic.pattern), "websearch", 0, 0, pattern_names,
     "websearch (Poisson background), flows (explicit list) or apps (real applications, "
     "qreplay testbed only)"},
    {"traffic", "load", KT_PERCENT, OFF(traffic.load), "30%", 0, 0, NULL,
     "offered background load on host links"},
    {"traffic", "duration", KT_TIME, OFF(traffic.duration_ns), "5ms", 0, 1e12, NULL,
     "flows start during this time"},
    {"traffic", "stop", KT_TIME, OFF(traffic.stop_ns), "50ms", 0, 1e15, NULL,
     "hard end of simulated time"},
    {"traffic", "incast_rate", KT_PERSEC, OFF(traffic.incast_rate_per_s), "0", 0, 1e9, NULL,
     "incast events per second, network-wide (0 for none)"},
    {"traffic", "incast_fanin", KT_INT, OFF(traffic.incast_fanin), "40", 1, 100000, NULL,
     "servers per incast"},
    {"traffic", "incast_size", KT_BYTES, OFF(traffic.incast_size_bytes), "250KB", 1, 1e12, NULL,
     "response size per incast server"},
    {"traffic", "flows", KT_INPATH, OFF(traffic.flows), "", 0, 0, NULL,
     "explicit flow list (CSV: src,dst,bytes,start) for pattern = flows"},
    {"traffic", "apps", KT_APPS, OFF(traffic.apps), "", 0, 0, NULL,
     "pattern = apps: sessions 'NAME CLIENT>SERVER [at TIME]' separated by ',' (NAME: "
     "http-keepalive, http-bulk, rpc-think or bulk-both; hosts by number; run by qreplay "
     "testbed)"},
    {"traffic", "size_cdf", KT_INPATH, OFF(traffic.size_cdf), "websearch.cdf", 0, 0, NULL,
     "flow-size distribution (empirical CDF: bytes probability per line)"},
    {"tcp", "variant", KT_ENUM, OFF(tcp.variant), "newreno", 0, 0, tcp_names,
     "newreno, dctcp or cubic"},
    {"tcp", "min_rto", KT_TIME, OFF(tcp.min_rto_ns), "10ms", 0, 1e12, NULL,
     "minimum retransmission timeout"},
    {"tcp", "delack_timeout", KT_TIME, OFF(tcp.delack_timeout_ns), "1ms", 0, 1e12, NULL,
     "delayed-ACK timeout (keep it below min_rto unless studying their interaction)"},
    {"tcp", "delack_count", KT_INT, OFF(tcp.delack_count), "2", 1, 64, NULL,
     "segments received before an ACK is sent (1: no delayed ACK)"},
    {"tcp", "syn_timeout", KT_TIME, OFF(tcp.syn_timeout_ns), "1s", 1, 1e12, NULL,
     "timeout before a lost SYN is sent again (Linux and RFC 6298: 1 s)"},
    {"tcp", "persist_timeout", KT_TIME, OFF(tcp.persist_timeout_ns), "6s", 1, 1e12, NULL,
     "interval of zero-window probes (ns-3's default 6 s; ns-3 sends no window update when the "
     "application reads, so a sender facing a zero window learns it opened only from a probe)"},
    {"tcp", "init_cwnd", KT_INT, OFF(tcp.init_cwnd), "10", 1, 1000, NULL,
     "initial congestion window (segments of 1448 B)"},
    {"tcp", "rcvbuf", KT_BYTES, OFF(tcp.rcvbuf_bytes), "1MB", 1, 4294967295, NULL,
     "socket receive buffer (bounds the advertised window)"},
    {"tcp", "sndbuf", KT_BYTES, OFF(tcp.sndbuf_bytes), "1MB", 1, 4294967295, NULL,
     "socket send buffer"},
    {"host", "proc_delay", KT_TIME, OFF(host.proc_delay_ns), "0", 0, 1e9, NULL,
     "per-packet host processing delay"},
    {"host", "proc_jitter", KT_TIME, OFF(host.proc_jitter_ns), "0", 0, 1e9, NULL,
     "standard deviation of the processing delay"},
    {"host", "nic_queue", KT_INT, OFF(host.nic_queue), "10000", 1, 100000000, NULL,
     "packets the host NIC queue holds (hosts should not drop their own packets)"},
    {"clock", "max_offset", KT_TIME, OFF(clock.max_offset_ns), "5us", 0, 1e12, NULL,
     "host clock offsets are uniform in [0, max_offset]"},
    {"sampling", "th", KT_TIMELIST, OFF(sampling.th_ns), "2us,5us,10us", 0, 1e9, NULL,
     "sampling error bounds; 0 means exact times"},
    {"sampling", "method", KT_ENUM, OFF(sampling.method), "rate", 0, 0, method_names,
     "rate (bounded error) or gap (strawman)"},
    {"replay", "modes", KT_ENUMSET, OFF(replay.modes), "plain,tagged", 0, 0, mode_names,
     "replay drop decisions to run: plain, tagged"},
    {"replay", "margin", KT_MARGIN, OFF(replay.margin_bytes), "5MTU", 0, 1e12, NULL,
     "occupancy margin for dropping tagged packets (MTU or bytes)"},
    {"sweep", "loads", KT_PERCENTLIST, OFF(sweep.loads), "30%", 0, 0, NULL,
     "background loads the sweep workflow runs (each overrides [traffic] load)"},
    {"sweep", "seeds", KT_INT, OFF(sweep.seeds), "1", 1, 1000, NULL,
     "seeds 1..seeds the sweep workflow runs per load"},
    {"traffic", "read_rate", KT_READERS, OFF(traffic.read_rate), "", 0, 0, NULL,
     "receiving applications that read slowly: 'flow F RATE', rules separated by ',' (the "
     "unread bytes fill [tcp] rcvbuf and close the window)"},
    {"faults", "drop", KT_FAULTS, OFF(faults.drop), "", 0, 0, NULL,
     "planted per-packet drops in the runtime: 'flow F syn|synack|data|ack [N[-M]] [at SWITCH]', "
     "rules separated by ',' (the N-th to M-th counted packet, from 1, at the direction's first "
     "switch unless given)"},
    {"faults", "gray", KT_LINKFAULTS, OFF(faults.link[QR_LINK_GRAY]), "", QR_LINK_GRAY, 0, NULL,
     "gray links: 'LINK P' drops each packet crossing LINK with probability P (1%); LINK is A>B, "
     "A-B (both directions) or sS:P, nodes sN and hN; rules separated by ','"},
    {"faults", "blackhole", KT_LINKFAULTS, OFF(faults.link[QR_LINK_BLACKHOLE]), "",
     QR_LINK_BLACKHOLE, 0, NULL,
     "hash-range blackholes: 'LINK S' drops every packet of the flow directions whose 5-tuple "
     "hash falls in a share S (25%) of the hash space, as a bad ECMP entry would"},
    {"faults", "delay", KT_LINKFAULTS, OFF(faults.link[QR_LINK_DELAY]), "", QR_LINK_DELAY, 0, NULL,
     "slow cables: 'A-B D' adds D (50us) of propagation delay between nodes A and B"},
    {"faults", "loop", KT_LOOPS, OFF(faults.loop), "", 0, 0, NULL,
     "routing loops: 'S>N H' has switch S send the packets to host H to its neighbour switch N "
     "(s8>s16 h0: they go round until their TTL runs out; runtime only)"},
    {"faults", "rate", KT_LINKFAULTS, OFF(faults.link[QR_LINK_RATE]), "", QR_LINK_RATE, 0, NULL,
     "degraded ports: 'LINK R' transmits at R (1Gbps) instead of [links] rate"},
    {"pingmesh", "interval", KT_TIME, OFF(pingmesh.interval_ns), "0", 0, 1e12, NULL,
     "Pingmesh agents in the runtime: every probe pair probes this often (0: no probes; qreplay "
     "pingmesh uses 100us if unset)"},
    {"pingmesh", "servers", KT_INT, OFF(pingmesh.servers), "2", 1, 100000, NULL,
     "servers per rack that probe the same-numbered servers of every other rack (every server "
     "probes its own rack)"},
    {"pingmesh", "size", KT_BYTES, OFF(pingmesh.size_bytes), "64B", 28, 1500, NULL,
     "probe and answer IP packet size (UDP; 28 B of headers)"},
    {"pingmesh", "timeout", KT_TIME, OFF(pingmesh.timeout_ns), "2ms", 1, 1e12, NULL,
     "a probe not answered within this is lost"},
    {"pingmesh", "connect_wait", KT_TIME, OFF(pingmesh.connect_wait_ns), "0", 0, 1e12, NULL,
     "testbed: how long an agent waits for a probe's TCP connect (0: the timeout); a connect "
     "whose SYN or SYN-ACK was lost completes after the kernel's SYN timeout (Linux: 1 s, then "
     "doubling), so 3500ms measures Pingmesh's drop rate from connect times"},
    {"pingmesh", "duration", KT_TIME, OFF(pingmesh.duration_ns), "0", 0, 1e15, NULL,
     "probing stops after this and the run lasts at least this long (0: probe while the traffic "
     "runs)"},
    {"traceroute", "per_connection", KT_INT, OFF(traceroute.per_connection), "0", 0, 1000000, NULL,
     "007's path discovery in the runtime: a host traces a direction's path (TCP probes with its "
     "5-tuple, ICMP time-exceeded from the switches) when it retransmits, at most this many times "
     "per direction and epoch (0: no traceroutes; qreplay blame needs them in a network with "
     "several "
     "paths)"},
    {"traceroute", "per_host", KT_INT, OFF(traceroute.per_host), "10", 1, 1000000, NULL,
     "traceroutes a host runs at most per epoch (007's cap C_t)"},
    {"traceroute", "epoch", KT_TIME, OFF(traceroute.epoch_ns), "0", 0, 1e15, NULL,
     "007's epoch: per_connection and per_host count anew in each, and qreplay blame tallies "
     "votes per epoch (0: the whole run is one epoch)"},
    {"traceroute", "icmp_rate", KT_PERSEC, OFF(traceroute.icmp_rate), "1000/s", 1e-3, 1e9, NULL,
     "ICMP errors a switch sends per second (Linux's icmp_msgs_per_sec)"},
    {"traceroute", "icmp_burst", KT_INT, OFF(traceroute.icmp_burst), "50", 1, 1000000, NULL,
     "burst of that limit (Linux's icmp_msgs_burst)"},
    {"traceroute", "icmp_interval", KT_TIME, OFF(traceroute.icmp_interval_ns), "1s", 0, 1e13, NULL,
     "a switch answers one destination at most once per interval, with a burst of 6 (Linux's "
     "icmp_ratelimit; 0: no per-destination limit)"},
    {"everflow", "guided", KT_INT, OFF(everflow.guided), "0", 0, 1000, NULL,
     "Everflow's guided probes: after the traffic every switch bounces this many link round-trip "
     "probes off each neighbour (a fat tree, simulated or on the testbed), and on the testbed each "
     "host also sends this many debug-marked probes along each of its pinned 5-tuples, which "
     "every switch mirrors (0: none)"},
    {"everflow", "paths", KT_INT, OFF(everflow.paths), "8", 1, 64, NULL,
     "pinned 5-tuples (source ports) per host for the guided probes"},
    {"everflow", "debug_every", KT_INT, OFF(everflow.debug_every), "0", 0, 1000000, NULL,
     "Everflow's debug bit: the senders of flows 0, N, 2N, ... mark their packets with DSCP 16 "
     "(qreplay trace --match debug selects them; 0: no flow is marked)"},
    {"output", "dir", KT_OUTPATH, OFF(output.dir), "results", 0, 0, NULL,
     "folder the results are written to"},
};

#define N_KEYS (sizeof schema / sizeof schema[0])

struct keystate {
    char value[QR_PATH_MAX];
    char origin[QR_PATH_MAX + 32];
    int set_by_file; /* set by the file currently being read */
    int set_by_override;
};

struct qr_scenario {
    qr_config cfg;
    struct keystate keys[N_KEYS];
    char data_dir[QR_PATH_MAX]; /* where input files not next to the scenario are looked up */
};

static const struct keydef *find_key(const char *section, const char *key, size_t *index)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        if (strcmp(schema[i].section, section) == 0 && strcmp(schema[i].key, key) == 0) {
            if (index)
                *index = i;
            return &schema[i];
        }
    }
    return NULL;
}

static int known_section(const char *section)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(schema[i].section, section) == 0)
            return 1;
    return 0;
}

/* Trim leading and trailing white space in place. */
static int parse_enum(const char *text, const char *const *names, int *out, char *errbuf)
{
    for (int i = 0; names[i]; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return QR_OK;
        }
    }
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
    }
    return qri_err(errbuf, QR_EVALUE, "'%s' is not one of: %s", text, list);
}

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static int resolve_input(const char *text, const char *base_dir, const char *data_dir, char *out,
                         char *errbuf)
{
    char buf[2 * QR_PATH_MAX];
    if (text[0] == '\0' || text[0] == '/') {
        snprintf(buf, sizeof buf, "%s", text);
    } else {
        /* next to the scenario, then in the data folder; found nowhere, the text as given (so a
         * printed scenario loads back to the same value) */
        if (base_dir && *base_dir && strcmp(base_dir, ".") != 0)
            snprintf(buf, sizeof buf, "%s/%s", base_dir, text);
        else
            snprintf(buf, sizeof buf, "%s", text);
        if (!file_exists(buf)) {
            char alt[2 * QR_PATH_MAX];
            snprintf(alt, sizeof alt, "%s/%s", data_dir ? data_dir : "", text);
            if (data_dir && *data_dir && file_exists(alt))
                memcpy(buf, alt, sizeof buf);
            else
                snprintf(buf, sizeof buf, "%s", text);
        }
    }
    /* a file found is named by its absolute path: the printed scenario then loads back to the
     * same file from any folder (a recording, a sweep's run) */
    char abs[PATH_MAX];
    if (file_exists(buf) && realpath(buf, abs))
        snprintf(buf, sizeof buf, "%s", abs);
    if (qri_strlcpy(out, buf, QR_PATH_MAX))
        return qri_err(errbuf, QR_EVALUE, "path '%s' is too long", text);
    return QR_OK;
}

/* A bound of a key's range in the key's own units ("1s", "1TB", "10Tbps"). */
static const char *bound_text(const struct keydef *kd, double v, char *buf, size_t size)
{
    switch (kd->type) {
    case KT_TIME:
    case KT_TIMELIST: return qr_format_time((int64_t)v, buf, size);
    case KT_BYTES:
    case KT_MARGIN: return qr_format_bytes((uint64_t)v, buf, size);
    case KT_RATE: return qr_format_rate((uint64_t)v, buf, size);
    case KT_PERSEC: snprintf(buf, size, "%g/s", v); return buf;
    default: snprintf(buf, size, "%g", v); return buf;
    }
}

/* Values the whole pipeline can represent (ns-3's times and 32-bit socket buffers, the buffer's
 * threshold arithmetic, the sampler): outside its range a key's value is refused, naming it. */
static int check_range(const struct keydef *kd, const char *text, double v, char *errbuf)
{
    if ((kd->min == 0 && kd->max == 0) || (v >= kd->min && v <= kd->max))
        return QR_OK;
    char lo[32], hi[32];
    return qri_err(errbuf, QR_EVALUE, "'%s' is outside %s .. %s", text,
                   bound_text(kd, kd->min, lo, sizeof lo), bound_text(kd, kd->max, hi, sizeof hi));
}

/* Parse text as the key's type and store it in cfg. */
/* A rule list's key (link faults, applications, faults, readers): its syntax checked now, its
 * text kept as given in field. */
static int parse_rules(const struct keydef *kd, const char *text, char *field, char *errbuf)
{
    int rc = QR_EINVAL;
    size_t n;
    switch (kd->type) {
    case KT_LINKFAULTS: {
        qr_link_fault rules[QR_LINK_FAULTS_MAX];
        rc = qr_link_fault_rules_parse((qr_link_fault_kind)kd->min, text, rules, QR_LINK_FAULTS_MAX,
                                       &n, errbuf);
        break;
    }
    case KT_LOOPS: {
        qr_loop_rule loops[QR_LOOP_RULES_MAX];
        rc = qr_loop_rules_parse(text, NULL, loops, QR_LOOP_RULES_MAX, &n, errbuf);
        break;
    }
    case KT_APPS: {
        qr_app apps[QR_APPS_MAX];
        rc = qr_apps_parse(text, 0, apps, QR_APPS_MAX, &n, errbuf);
        break;
    }
    case KT_FAULTS: {
        qr_fault_rule faults[QR_FAULT_RULES_MAX];
        rc = qr_fault_rules_parse(text, faults, QR_FAULT_RULES_MAX, &n, errbuf);
        break;
    }
    case KT_READERS: {
        qr_read_rule readers[QR_READ_RULES_MAX];
        rc = qr_read_rules_parse(text, readers, QR_READ_RULES_MAX, &n, errbuf);
        break;
    }
    default: break;
    }
    if (!rc && qri_strlcpy(field, text, QR_PATH_MAX))
        rc = qri_err(errbuf, QR_EVALUE, "too long");
    return rc;
}

/* A list key: thresholds (times), loads (percentages) or a set of names. */
static int parse_list(const struct keydef *kd, const char *text, qr_config *cfg, char *field,
                      char *errbuf)
{
    int rc;
    char copy[QR_PATH_MAX];
    if (qri_strlcpy(copy, text, sizeof copy))
        return qri_err(errbuf, QR_EVALUE, "list is too long");
    int64_t times[QR_LIST_MAX];
    double pct[QR_LIST_MAX];
    size_t n = 0;
    unsigned set = 0;
    char *save = NULL;
    int items = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok = qri_trim(tok);
        items++;
        if (kd->type == KT_TIMELIST) {
            continue; /* parsed whole below */
        } else if (kd->type == KT_PERCENTLIST) {
            if (n == QR_LIST_MAX)
                return qri_err(errbuf, QR_EVALUE, "more than %d values", QR_LIST_MAX);
            rc = qr_parse_percent(tok, &pct[n], errbuf);
            if (rc)
                return rc;
            for (size_t j = 0; j < n; j++)
                if (pct[j] == pct[n])
                    return qri_err(errbuf, QR_EVALUE, "'%s' is listed twice", tok);
            n++;
        } else {
            int v;
            rc = parse_enum(tok, kd->names, &v, errbuf);
            if (rc)
                return rc;
            if (set & (1u << v))
                return qri_err(errbuf, QR_EVALUE, "'%s' is listed twice", tok);
            set |= 1u << v;
        }
    }
    if (items == 0 || text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,"))
        return qri_err(errbuf, QR_EVALUE, "'%s' is not a comma-separated list", text);
    if (kd->type == KT_TIMELIST) {
        rc = qr_parse_time_list(text, times, QR_LIST_MAX, &n, errbuf);
        for (size_t j = 0; !rc && j < n; j++) {
            char item[32];
            rc = check_range(kd, qr_format_time(times[j], item, sizeof item), (double)times[j],
                             errbuf);
        }
        if (rc)
            return rc;
        memcpy(cfg->sampling.th_ns, times, n * sizeof times[0]);
        cfg->sampling.n_th = n;
    } else if (kd->type == KT_PERCENTLIST) {
        memcpy(cfg->sweep.loads, pct, n * sizeof pct[0]);
        cfg->sweep.n_loads = n;
    } else {
        *(unsigned *)field = set;
    }
    return QR_OK;
}

static int parse_value(const struct keydef *kd, const char *text, const char *base_dir,
                       const char *data_dir, qr_config *cfg, char *errbuf)
{
    char *field = (char *)cfg + kd->offset;
    int rc;
    switch (kd->type) {
    case KT_U64: {
        int64_t v;
        rc = qr_parse_int(text, 0, INT64_MAX, &v, errbuf);
        if (!rc)
            *(uint64_t *)field = (uint64_t)v;
        return rc;
    }
    case KT_INT: {
        int64_t v;
        rc = qr_parse_int(text, (int64_t)kd->min, (int64_t)kd->max, &v, errbuf);
        if (!rc)
            *(int *)field = (int)v;
        return rc;
    }
    case KT_DOUBLE: return qr_parse_double(text, kd->min, kd->max, (double *)field, errbuf);
    case KT_TIME: {
        int64_t v;
        rc = qr_parse_time_ns(text, &v, errbuf);
        if (!rc && v < 0)
            rc = qri_err(errbuf, QR_EVALUE, "'%s' is negative", text);
        if (!rc)
            rc = check_range(kd, text, (double)v, errbuf);
        if (!rc)
            *(int64_t *)field = v;
        return rc;
    }
    case KT_RATE: {
        uint64_t v;
        rc = qr_parse_rate_bps(text, &v, errbuf);
        if (!rc && v == 0)
            rc = qri_err(errbuf, QR_EVALUE, "rate must be positive");
        if (!rc)
            rc = check_range(kd, text, (double)v, errbuf);
        if (!rc)
            *(uint64_t *)field = v;
        return rc;
    }
    case KT_BYTES:
    case KT_MARGIN: {
        uint64_t v;
        rc = kd->type == KT_BYTES ? qr_parse_bytes(text, &v, errbuf)
                                  : qr_parse_bytes_or_mtu(text, &v, errbuf);
        if (!rc)
            rc = check_range(kd, text, (double)v, errbuf);
        if (!rc)
            *(uint64_t *)field = v;
        return rc;
    }
    case KT_PERCENT: return qr_parse_percent(text, (double *)field, errbuf);
    case KT_PERSEC: {
        double v;
        rc = qr_parse_per_second(text, &v, errbuf);
        if (!rc)
            rc = check_range(kd, text, v, errbuf);
        if (!rc)
            *(double *)field = v;
        return rc;
    }
    case KT_ENUM: {
        int v;
        rc = parse_enum(text, kd->names, &v, errbuf);
        if (!rc)
            *(int *)field = v;
        return rc;
    }
    case KT_TIMELIST:
    case KT_PERCENTLIST:
    case KT_ENUMSET: return parse_list(kd, text, cfg, field, errbuf);
    case KT_INPATH: return resolve_input(text, base_dir, data_dir, field, errbuf);
    case KT_LINKFAULTS:
    case KT_LOOPS:
    case KT_APPS:
    case KT_FAULTS:
    case KT_READERS: return parse_rules(kd, text, field, errbuf);
    case KT_OUTPATH:
        if (text[0] == '\0')
            return qri_err(errbuf, QR_EVALUE, "empty folder name");
        if (qri_strlcpy(field, text, QR_PATH_MAX))
            return qri_err(errbuf, QR_EVALUE, "path is too long");
        return QR_OK;
    }
    return QR_EINVAL;
}

/* Set one key from text; origin names where it came from. */
static int set_key(qr_scenario *s, size_t i, const char *raw, const char *base_dir,
                   const char *origin, char *errbuf)
{
    char text[QR_PATH_MAX];
    if (qri_strlcpy(text, raw, sizeof text))
        return qri_err(errbuf, QR_EVALUE, "value is too long");
    char *v = qri_trim(text);
    if (v[0] == ';')
        return qri_err(errbuf, QR_EVALUE,
                       "a value cannot start with ';' (a scenario file reads it as a comment)");
    if (schema[i].type == KT_TIMELIST || schema[i].type == KT_ENUMSET ||
        schema[i].type == KT_PERCENTLIST) {
        char *w = v; /* lists are kept without blanks: "2us,5us,10us" */
        for (char *r = v; *r; r++)
            if (!isspace((unsigned char)*r))
                *w++ = *r;
        *w = '\0';
    }
    int rc = parse_value(&schema[i], v, base_dir, s->data_dir, &s->cfg, errbuf);
    if (rc)
        return rc;
    /* Keep resolved input paths, so the printed scenario loads back from anywhere. */
    const char *shown = v;
    if (schema[i].type == KT_INPATH)
        shown = (char *)&s->cfg + schema[i].offset;
    qri_strlcpy(s->keys[i].value, shown, sizeof s->keys[i].value);
    snprintf(s->keys[i].origin, sizeof s->keys[i].origin, "%s", origin);
    return QR_OK;
}

int qr_scenario_create(qr_scenario **out)
{
    return qr_scenario_create_in(out, NULL);
}

int qr_scenario_create_in(qr_scenario **out, const char *data_dir)
{
    if (!out)
        return QR_EINVAL;
    qr_scenario *s = calloc(1, sizeof *s);
    if (!s)
        return QR_ENOMEM;
    if (data_dir && qri_strlcpy(s->data_dir, data_dir, sizeof s->data_dir)) {
        free(s);
        return QR_EINVAL;
    }
    for (size_t i = 0; i < N_KEYS; i++) {
        char err[QR_ERRBUF_SIZE];
        int rc = set_key(s, i, schema[i].def, NULL, "default", err);
        if (rc) { /* a schema bug: defaults must parse */
            free(s);
            return rc;
        }
    }
    *out = s;
    return QR_OK;
}

void qr_scenario_destroy(qr_scenario *s)
{
    free(s);
}

/* State of one parse: the line reader counts lines so the handler can name them. */
struct parse_ctx {
    qr_scenario *s;
    const char *name;
    const char *base_dir;
    /* input: either a FILE or a string */
    FILE *fp;
    const char *str;
    int line;
    int section_line; /* line of the latest [section] header */
    int long_line;    /* first line that exceeded the reader's buffer and could not be passed on */
    int bad_line;     /* first line with a NUL or control character */
    int bad_char;
    char *line_buf; /* the whole current line */
    size_t line_cap;
    char **long_values; /* values too long for inih's line buffer, passed as "\x01N" */
    size_t n_long;
    int err_line;
    int err_code;
    char *errbuf;
    char err[QR_ERRBUF_SIZE];
};

/* A line too long for inih's buffer (INI_MAX_LINE): a "key = value" line is passed on as
 * "key = \x01N" with the value kept aside (the handler puts it back); a long comment is passed as
 * an empty comment. Returns 0, or -1 if the line cannot be passed on. */
static int pass_long_line(struct parse_ctx *c, const char *line, char *buf, int num)
{
    const char *s = line + strspn(line, " \t");
    if (*s == ';' || *s == '#') {
        snprintf(buf, (size_t)num, ";");
        return 0;
    }
    const char *eq = strpbrk(s, "=:");
    if (!eq || *s == '[')
        return -1;
    const char *v = eq + 1;
    v += strspn(v, " \t");
    char **vals = realloc(c->long_values, (c->n_long + 1) * sizeof *vals);
    if (!vals)
        return -1;
    c->long_values = vals;
    if (!(vals[c->n_long] = strdup(v)))
        return -1;
    /* inline comments (" ;") end a value, as inih would have it */
    char *cut = strstr(vals[c->n_long], " ;");
    if (cut)
        *cut = '\0';
    int n = snprintf(buf, (size_t)num, "%.*s= \x01%zu", (int)(eq - line), line, c->n_long);
    c->n_long++;
    return n < num - 1 ? 0 : -1;
}

static char *reader(char *buf, int num, void *stream)
{
    struct parse_ctx *c = stream;
    size_t n = 0;
    int ch;
    int got = 0;
    for (;;) {
        if (c->fp) {
            ch = fgetc(c->fp);
        } else {
            ch = *c->str ? (unsigned char)*c->str++ : EOF;
        }
        if (ch == EOF)
            break;
        got = 1;
        if (ch == '\n')
            break;
        if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f) {
            if (!c->bad_line) {
                c->bad_line = c->line + 1;
                c->bad_char = ch;
            }
            ch = ' ';
        }
        if (n + 2 >= c->line_cap) {
            size_t cap = c->line_cap ? 2 * c->line_cap : 256;
            if (cap > (1u << 20)) { /* a "line" of a megabyte is no scenario */
                if (!c->long_line)
                    c->long_line = c->line + 1;
                continue;
            }
            char *b = realloc(c->line_buf, cap);
            if (!b)
                return NULL;
            c->line_buf = b;
            c->line_cap = cap;
        }
        c->line_buf[n++] = (char)ch;
    }
    if (!got)
        return NULL;
    c->line++;
    if (!c->line_buf) { /* an empty first line */
        if (!(c->line_buf = malloc(1)))
            return NULL;
        c->line_cap = 1;
    }
    if (n && c->line_buf[n - 1] == '\r')
        n--;
    c->line_buf[n] = '\0';
    if ((int)n <= num - 2) {
        memcpy(buf, c->line_buf, n + 1);
    } else if (pass_long_line(c, c->line_buf, buf, num) != 0) {
        if (!c->long_line)
            c->long_line = c->line;
        buf[0] = '\0';
    }
    if (buf[strspn(buf, " \t")] == '[')
        c->section_line = c->line;
    size_t len = strlen(buf);
    buf[len++] = '\n';
    buf[len] = '\0';
    return buf;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse_ctx *c = user;
    char *eb = c->err;
    int rc = QR_OK;
    size_t i;
    if (c->err_code)
        return 1; /* report only the first error */
    if (!known_section(section)) {
        rc = qri_err(eb, QR_EKEY, "unknown section [%s]", section);
    } else if (!find_key(section, name, &i)) {
        rc = qri_err(eb, QR_EKEY, "[%s] %s: unknown key", section, name);
    } else if (c->s->keys[i].set_by_file) {
        rc = qri_err(eb, QR_EDUP, "[%s] %s: given twice (first at %s)", section, name,
                     c->s->keys[i].origin);
    } else {
        char origin[QR_PATH_MAX + 32];
        snprintf(origin, sizeof origin, "%s:%d", c->name, c->line);
        if (value[0] == '\x01') /* a long value kept aside by the reader */
            value = c->long_values[strtoul(value + 1, NULL, 10)];
        rc = set_key(c->s, i, value, c->base_dir, origin, eb);
        if (rc)
            qri_err_prefix(eb, "[%s] %s", section, name);
        else
            c->s->keys[i].set_by_file = 1;
    }
    if (rc) {
        c->err_code = rc;
        /* an unknown section is blamed on its header line */
        c->err_line = rc == QR_EKEY && section[0] && !known_section(section) && c->section_line
                          ? c->section_line
                          : c->line;
        return 0;
    }
    return 1;
}

static int do_parse(struct parse_ctx *c)
{
    for (size_t i = 0; i < N_KEYS; i++)
        c->s->keys[i].set_by_file = 0;
    int ret = ini_parse_stream(reader, c, handler, c);
    free(c->line_buf);
    for (size_t i = 0; i < c->n_long; i++)
        free(c->long_values[i]);
    free(c->long_values);
    if (c->bad_line && (!c->err_code || c->bad_line <= c->err_line) &&
        (ret <= 0 || c->bad_line <= ret))
        return qri_err(c->errbuf, QR_ESYNTAX, "%s:%d: a %s byte (0x%02x): a scenario is text",
                       c->name, c->bad_line, c->bad_char == 0 ? "NUL" : "control",
                       (unsigned)c->bad_char);
    if (c->long_line && (!c->err_code || c->long_line <= c->err_line) &&
        (ret <= 0 || c->long_line <= ret))
        return qri_err(c->errbuf, QR_ESYNTAX, "%s:%d: a line too long to read", c->name,
                       c->long_line);
    if (ret < 0)
        return qri_err(c->errbuf, QR_ENOMEM, "%s: out of memory while parsing", c->name);
    if (ret > 0 && (!c->err_code || ret < c->err_line))
        return qri_err(c->errbuf, QR_ESYNTAX,
                       "%s:%d: syntax error (expected [section], key = value, or a comment)",
                       c->name, ret);
    if (c->err_code)
        return qri_err(c->errbuf, c->err_code, "%s:%d: %s", c->name, c->err_line, c->err);
    return QR_OK;
}

int qr_scenario_load(qr_scenario *s, const char *path, char *errbuf)
{
    if (!s || !path)
        return qri_err(errbuf, QR_EINVAL, "no scenario or path");
    FILE *fp = fopen(path, "r");
    if (!fp)
        return qri_err(errbuf, QR_ENOENT, "%s: cannot open scenario file: %s", path,
                       strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return qri_err(errbuf, QR_EVALUE, "%s: a folder, not a scenario file", path);
    }
    char dir[QR_PATH_MAX];
    qri_strlcpy(dir, path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    struct parse_ctx c = {.s = s, .name = path, .base_dir = dir, .fp = fp, .errbuf = errbuf};
    int rc = do_parse(&c);
    if (!rc && ferror(fp))
        rc = qri_err(errbuf, QR_EIO, "%s: read error", path);
    fclose(fp);
    return rc;
}

int qr_scenario_load_string(qr_scenario *s, const char *text, const char *name,
                            const char *base_dir, char *errbuf)
{
    if (!s || !text)
        return qri_err(errbuf, QR_EINVAL, "no scenario or text");
    struct parse_ctx c = {.s = s,
                          .name = name ? name : "<string>",
                          .base_dir = base_dir,
                          .str = text,
                          .errbuf = errbuf};
    return do_parse(&c);
}

static int set_override(qr_scenario *s, const char *assignment, int again, char *errbuf)
{
    if (!s || !assignment)
        return qri_err(errbuf, QR_EINVAL, "no scenario or override");
    char buf[QR_PATH_MAX];
    if (qri_strlcpy(buf, assignment, sizeof buf))
        return qri_err(errbuf, QR_EVALUE, "--set %.40s...: too long", assignment);
    char *eq = strchr(buf, '=');
    char *dot = strchr(buf, '.');
    if (!eq || !dot || dot > eq)
        return qri_err(errbuf, QR_ESYNTAX, "--set %s: expected section.key=value", assignment);
    *eq = '\0';
    *dot = '\0';
    char *section = qri_trim(buf);
    char *key = qri_trim(dot + 1);
    size_t i;
    if (!known_section(section))
        return qri_err(errbuf, QR_EKEY, "--set %s.%s: unknown section [%s]", section, key, section);
    if (!find_key(section, key, &i))
        return qri_err(errbuf, QR_EKEY, "--set %s.%s: unknown key", section, key);
    if (s->keys[i].set_by_override && !again)
        return qri_err(errbuf, QR_EDUP, "--set %s.%s: given twice", section, key);
    /* a value the printed scenario could not carry would not load back the same */
    for (const char *v = eq + 1; *v; v++)
        if ((unsigned char)*v < 0x20 || *v == 0x7f || *v == ';')
            return qri_err(errbuf, QR_EVALUE,
                           "--set %s.%s: a value cannot contain %s (a scenario file could not "
                           "hold it)",
                           section, key,
                           *v == ';' ? "';' (it starts a comment)" : "control characters");
    int rc = set_key(s, i, eq + 1, ".", "--set", errbuf);
    if (rc) {
        qri_err_prefix(errbuf, "--set %s.%s", section, key);
        return rc;
    }
    s->keys[i].set_by_override = 1;
    return QR_OK;
}

int qr_scenario_set(qr_scenario *s, const char *assignment, char *errbuf)
{
    return set_override(s, assignment, 0, errbuf);
}

int qr_scenario_replace(qr_scenario *s, const char *assignment, char *errbuf)
{
    return set_override(s, assignment, 1, errbuf);
}

int qr_scenario_validate(const qr_scenario *s, char *errbuf)
{
    if (!s)
        return qri_err(errbuf, QR_EINVAL, "no scenario");
    const qr_config *c = &s->cfg;
    int hosts;
    if (c->topology.kind == QR_TOPO_FATTREE) {
        if (c->topology.k % 2 != 0)
            return qri_err(errbuf, QR_EVALUE, "[topology] k: %d is not even", c->topology.k);
        hosts = c->topology.k * c->topology.k * c->topology.k / 4;
    } else {
        hosts = c->topology.hosts;
    }
    if (c->traffic.stop_ns <= 0)
        return qri_err(errbuf, QR_EVALUE, "[traffic] stop: must be positive");
    if (c->traffic.duration_ns > c->traffic.stop_ns)
        return qri_err(errbuf, QR_EVALUE, "[traffic] duration: longer than [traffic] stop");
    if (c->buffer.size_bytes < QR_MTU_BYTES)
        return qri_err(errbuf, QR_EVALUE, "[buffer] size: smaller than one MTU (%d B)",
                       QR_MTU_BYTES);
    if (c->buffer.policy == 0 && c->buffer.port_size_bytes != 0)
        return qri_err(errbuf, QR_EVALUE,
                       "[buffer] port_size: only for policy = static (the dynamic policy shares "
                       "size)");
    if (c->buffer.policy == 1 && c->buffer.port_size_bytes != 0 &&
        c->buffer.port_size_bytes < QR_MTU_BYTES)
        return qri_err(errbuf, QR_EVALUE, "[buffer] port_size: smaller than one MTU (%d B)",
                       QR_MTU_BYTES);
    if (c->traffic.pattern == QR_PATTERN_FLOWS && c->traffic.flows[0] == '\0')
        return qri_err(errbuf, QR_EVALUE, "[traffic] flows: required when pattern = flows");
    if (c->traffic.pattern == QR_PATTERN_APPS) {
        qr_app apps[QR_APPS_MAX];
        size_t n;
        char why[QR_ERRBUF_SIZE];
        if (qr_apps_parse(c->traffic.apps, (uint32_t)hosts, apps, QR_APPS_MAX, &n, why))
            return qri_err(errbuf, QR_EVALUE, "[traffic] apps: %s", why);
        if (n == 0)
            return qri_err(errbuf, QR_EVALUE, "[traffic] apps: required when pattern = apps");
    } else if (c->traffic.apps[0])
        return qri_err(errbuf, QR_EVALUE, "[traffic] apps: only for pattern = apps");
    if (c->traffic.incast_rate_per_s > 0 && c->traffic.incast_fanin >= hosts)
        return qri_err(errbuf, QR_EVALUE,
                       "[traffic] incast_fanin: %d servers need more than the %d hosts",
                       c->traffic.incast_fanin, hosts);
    if (c->tcp.variant == QR_TCP_DCTCP && c->buffer.ecn_threshold_bytes == 0)
        return qri_err(errbuf, QR_EVALUE,
                       "[tcp] variant: dctcp needs ECN marking; set [buffer] ecn_threshold "
                       "(e.g. 97500B, 65 packets)");
    if (c->tcp.rcvbuf_bytes < QR_MTU_BYTES || c->tcp.sndbuf_bytes < QR_MTU_BYTES)
        return qri_err(errbuf, QR_EVALUE, "[tcp] %s: smaller than one MTU",
                       c->tcp.rcvbuf_bytes < QR_MTU_BYTES ? "rcvbuf" : "sndbuf");
    if (c->sampling.n_th == 0)
        return qri_err(errbuf, QR_EVALUE, "[sampling] th: no threshold");
    if (c->replay.modes == 0)
        return qri_err(errbuf, QR_EVALUE, "[replay] modes: no mode");
    return QR_OK;
}

uint32_t qr_config_hosts(const qr_config *c)
{
    if (c->topology.kind == QR_TOPO_FATTREE)
        return (uint32_t)(c->topology.k * c->topology.k * c->topology.k / 4);
    return (uint32_t)c->topology.hosts;
}

const qr_config *qr_scenario_config(const qr_scenario *s)
{
    return s ? &s->cfg : NULL;
}

size_t qr_scenario_key_count(void)
{
    return N_KEYS;
}

int qr_scenario_key(const qr_scenario *s, size_t i, const char **section, const char **key,
                    const char **value, const char **origin, const char **help)
{
    if (!s || i >= N_KEYS)
        return QR_EINVAL;
    if (section)
        *section = schema[i].section;
    if (key)
        *key = schema[i].key;
    if (value)
        *value = s->keys[i].value;
    if (origin)
        *origin = s->keys[i].origin;
    if (help)
        *help = schema[i].help;
    return QR_OK;
}

int qr_scenario_get(const qr_scenario *s, const char *section, const char *key, const char **value)
{
    size_t i;
    if (!s || !section || !key || !value)
        return QR_EINVAL;
    if (!find_key(section, key, &i))
        return QR_EKEY;
    *value = s->keys[i].value;
    return QR_OK;
}

int qr_scenario_print(const qr_scenario *s, FILE *out)
{
    if (!s || !out)
        return QR_EINVAL;
    const char *section = "";
    for (size_t i = 0; i < N_KEYS; i++) {
        if (strcmp(section, schema[i].section) != 0) {
            section = schema[i].section;
            fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
        }
        fprintf(out, "; %s [%s]\n%s = %s\n", schema[i].help, s->keys[i].origin, schema[i].key,
                s->keys[i].value);
    }
    return ferror(out) ? QR_EIO : QR_OK;
}

int qr_topology_of_config(qr_topology **out, const qr_config *c)
{
    return c->topology.kind == QR_TOPO_FATTREE ? qr_topology_fattree(out, c->topology.k)
                                               : qr_topology_star(out, c->topology.hosts);
}
