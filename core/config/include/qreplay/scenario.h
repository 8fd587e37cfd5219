/* qreplay: scenario files.
 *
 * A scenario is an INI file (parsed with libinih, the project's only configuration parser) whose
 * sections and keys are fixed by a schema: every key has a type with its unit, a default, and a
 * help line. qr_scenario_load() reads a file, qr_scenario_set() applies a "section.key=value"
 * override (as given on the command line with --set), and qr_scenario_config() returns the
 * resolved, typed values. Unknown sections and keys, keys given twice, values that do not parse and
 * values without their unit are errors whose detail names the file, the line and the key. */
#ifndef QREPLAY_SCENARIO_H
#define QREPLAY_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/buffer.h"
#include "qreplay/common.h"
#include "qreplay/sampler.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    QR_PATTERN_WEBSEARCH = 0,
    QR_PATTERN_FLOWS = 1,
    QR_PATTERN_APPS = 2 /* real applications (apps.h): the testbed only */
} qr_traffic_pattern;
typedef enum { QR_TCP_NEWRENO = 0, QR_TCP_DCTCP = 1, QR_TCP_CUBIC = 2 } qr_tcp_variant;

/* The resolved values of a scenario, in base units (ns, bit/s, bytes, fractions). */
typedef struct qr_config {
    struct {
        uint64_t seed;
    } run;
    struct {
        qr_topology_kind kind;
        int k;     /* FatTree arity (even) */
        int hosts; /* hosts on the star */
    } topology;
    struct {
        uint64_t rate_bps;
        int64_t delay_ns;
    } links;
    struct {
        uint64_t size_bytes;
        double alpha;
        uint64_t ecn_threshold_bytes; /* mark CE above this many queued bytes; 0: no marking */
        int policy;                   /* a qr_buffer_policy: 0 dynamic, 1 static */
        uint64_t port_size_bytes;     /* static: each port's limit (0: size / the switch's ports) */
    } buffer;
    struct {
        qr_traffic_pattern pattern;
        double load; /* fraction of host link rate, 0..1 */
        int64_t duration_ns;
        int64_t stop_ns;
        double incast_rate_per_s;
        int incast_fanin;
        uint64_t incast_size_bytes;
        char flows[QR_PATH_MAX]; /* resolved relative to the scenario file's folder; "" if unset */
        char read_rate[QR_PATH_MAX]; /* slow readers (reader.h): 'flow F RATE, ...'; "" none */
        char size_cdf[QR_PATH_MAX];  /* flow-size CDF file, resolved like flows */
        char apps[QR_PATH_MAX];      /* pattern = apps: 'NAME CLIENT>SERVER [at TIME], ...' */
    } traffic;
    struct {
        qr_tcp_variant variant;
        int64_t min_rto_ns;
        int64_t delack_timeout_ns;
        int delack_count;           /* segments received before an ACK is sent */
        int64_t syn_timeout_ns;     /* retransmission timeout of a connection's SYN */
        int64_t persist_timeout_ns; /* zero-window probe interval */
        int init_cwnd;              /* initial congestion window, segments */
        uint64_t rcvbuf_bytes;      /* socket receive buffer */
        uint64_t sndbuf_bytes;      /* socket send buffer */
    } tcp;
    struct {
        int64_t proc_delay_ns;
        int64_t proc_jitter_ns;
        int nic_queue; /* packets the host NIC queue holds before it drops */
    } host;
    struct {
        int64_t max_offset_ns;
    } clock;
    struct {
        int64_t th_ns[QR_LIST_MAX];
        size_t n_th;
        qr_sampling_method method;
    } sampling;
    struct {
        unsigned modes; /* bit set of 1u << qr_drop_mode */
        uint64_t margin_bytes;
    } replay;
    struct {
        char dir[QR_PATH_MAX];
    } output;
    struct {
        char drop[QR_PATH_MAX];    /* [faults] drop rules (faults.h); "" for none */
        char link[4][QR_PATH_MAX]; /* gray, blackhole, delay, rate (linkfault.h, by kind) */
        char loop[QR_PATH_MAX];    /* routing loops (loopfault.h); "" for none */
    } faults;
    struct {
        int64_t interval_ns;     /* each probe pair probes this often; 0: no probing (pingmesh.h) */
        int servers;             /* servers per rack that probe other racks */
        uint64_t size_bytes;     /* probe IP packet */
        int64_t timeout_ns;      /* a probe unanswered this long is lost */
        int64_t connect_wait_ns; /* testbed: how long a probe's TCP connect is waited for */
        int64_t duration_ns;     /* probing ends (0: while the traffic runs) */
    } pingmesh;
    struct {
        int per_connection;       /* traceroutes per retransmitting direction; 0: none */
        int per_host;             /* traceroutes per host per epoch */
        int64_t epoch_ns;         /* 007's epoch: the caps reset, votes are tallied (0: the run) */
        double icmp_rate;         /* each switch's ICMP errors per second (global bucket) */
        int icmp_burst;           /* its burst */
        int64_t icmp_interval_ns; /* per destination: one answer per interval, burst 6 */
    } traceroute;
    struct {
        int guided; /* Everflow's guided probes per pinned 5-tuple, after the traffic; 0: none */
        int paths;  /* pinned 5-tuples per host (guided_plan.h) */
        int debug_every; /* flows 0, N, 2N, ... carry the debug mark (guided_plan.h); 0: none */
    } everflow;
    struct {
        double loads[QR_LIST_MAX]; /* background loads of a sweep (fractions) */
        size_t n_loads;
        int seeds; /* seeds 1..seeds per load */
    } sweep;
} qr_config;

typedef struct qr_scenario qr_scenario;

/* Create a scenario holding every key at its default. Input files named in it (traffic.flows,
 * traffic.size_cdf) are looked up next to the scenario file, then in data_dir (the project's
 * data/ folder; NULL: nowhere else). Caller owns *out (qr_scenario_destroy). Returns 0,
 * QR_EINVAL (data_dir too long) or QR_ENOMEM. */
int qr_scenario_create_in(qr_scenario **out, const char *data_dir);

/* qr_scenario_create_in(out, NULL): for scenarios whose input paths are already resolved (those
 * stored in result files). */
int qr_scenario_create(qr_scenario **out);

/* Release a scenario; NULL is allowed. */
void qr_scenario_destroy(qr_scenario *s);

/* Read an INI file over the current values. On error, returns QR_ENOENT, QR_ESYNTAX, QR_EKEY,
 * QR_EDUP, QR_EVALUE or QR_EUNIT with "FILE:LINE: [section] key: reason" in errbuf. A scenario
 * that failed to load must not be used further. */
int qr_scenario_load(qr_scenario *s, const char *path, char *errbuf);

/* Read INI text (name is used in messages; relative paths resolve against base_dir). */
int qr_scenario_load_string(qr_scenario *s, const char *text, const char *name,
                            const char *base_dir, char *errbuf);

/* Apply one override "section.key=value" (the --set syntax). Errors as qr_scenario_load, the
 * detail starting with "--set section.key". An override may be applied to any key once. */
int qr_scenario_set(qr_scenario *s, const char *assignment, char *errbuf);

/* The same, for a program's own adjustment after the user's overrides (the testbed's replay
 * rate): a key the user already set with --set is set again, not refused. */
int qr_scenario_replace(qr_scenario *s, const char *assignment, char *errbuf);

/* Check the values against each other (e.g. k even, incast fan-in below the number of hosts).
 * Returns 0 or QR_EVALUE naming the keys. Called by the programs after every override. */
int qr_scenario_validate(const qr_scenario *s, char *errbuf);

/* The resolved, typed values; borrowed, valid until the next call that changes s. */
const qr_config *qr_scenario_config(const qr_scenario *s);

/* Number of hosts of the configured topology (k^3/4 for a FatTree, topology.hosts for a star). */
uint32_t qr_config_hosts(const qr_config *c);

/* Number of keys in the schema, and the i-th key's section, name, current value (as text, in the
 * canonical unit form), where it was set ("default", "FILE:LINE" or "--set"), and its help text.
 * Strings are borrowed from s. Returns 0 or QR_EINVAL for i out of range. */
size_t qr_scenario_key_count(void);
int qr_scenario_key(const qr_scenario *s, size_t i, const char **section, const char **key,
                    const char **value, const char **origin, const char **help);

/* Look up the current text value of section.key; QR_EKEY if no such key. Borrowed from s. */
int qr_scenario_get(const qr_scenario *s, const char *section, const char *key, const char **value);

/* Print the fully resolved scenario as an INI file that loads back to the same values, each key
 * commented with where it came from. Returns 0 or QR_EIO. */
int qr_scenario_print(const qr_scenario *s, FILE *out);

/* The topology a configuration describes. Caller owns *out (qr_topology_destroy). Returns 0,
 * QR_EINVAL or QR_ENOMEM. */
int qr_topology_of_config(qr_topology **out, const qr_config *c);

#ifdef __cplusplus
}
#endif
#endif
