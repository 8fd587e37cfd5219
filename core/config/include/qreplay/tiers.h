/* qreplay: multi-tier services, where one request causes others (WAP5's setting).
 *
 * A service is a set of tiers, each run by one or more hosts. Clients send requests to the first
 * tier at Poisson times (open loop). A host serves a request with one of its workers (a request
 * waits, first come first served, while every worker is busy): it computes, then makes the calls
 * of its first stage (in parallel, each with its probability), waits for all their replies,
 * computes again, makes the calls of its next stage, and so on; after the last stage it computes
 * once more and replies. Each computation takes an exponential time of mean service / (stages +
 * 1), times the host's slowness. A call goes to a host of the callee tier picked at random, over
 * a connection of the caller's pool towards that host: a free one, or a new one (one call at a
 * time per connection, as HTTP/1.1 keep-alive pools work).
 *
 * The spec is text, one item per line (or separated by ';'); '#' starts a comment that runs to the
 * end of its line:
 *
 *   tier NAME hosts=H[,H...] [service=T] [workers=N] [request=BYTES] [reply=BYTES]
 *        [calls=STAGE[,STAGE...]]    STAGE: TIER[@P][+TIER[@P]...], P a probability (default 1)
 *   clients hosts=H[,H...] rate=R/s [first=TIER]
 *   fault slow-node HOST xFACTOR
 *   fault slow-link HOST HOST +DELAY
 *
 * e.g. 'tier app hosts=4,5 service=200us calls=cache+audit@0.05,store@0.3' makes each request to
 * the app tier call the cache (and, one time in twenty, the audit tier in parallel), then call the
 * store three times in ten (a cache miss). Defaults: service 100us, workers 8, request 200B, reply
 * 1000B; the first tier named is the clients' unless first= says otherwise.
 *
 * The machine (qr_tiers_*) is the service's logic without a network: it is told when a message
 * arrives and says which messages to send and when; the core's own simulation (qr_tiers_simulate)
 * and the ns-3 runtime drive the same machine. Every message carries its id (the truth: its
 * parent, its request); no analysis reads it. */
#ifndef QREPLAY_TIERS_H
#define QREPLAY_TIERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QR_TIERS_MAX 16      /* tiers in a service */
#define QR_TIER_HOSTS_MAX 16 /* hosts of one tier, or clients */
#define QR_TIER_STAGES_MAX 4 /* stages of one tier */
#define QR_TIER_CALLS_MAX 4  /* calls of one stage */
#define QR_TIER_FAULTS_MAX 8 /* planted faults */
#define QR_TIER_NO_PARENT UINT64_MAX

typedef struct qr_tier_call {
    uint32_t tier;      /* callee */
    double probability; /* that the call is made */
} qr_tier_call;

typedef struct qr_tier_stage {
    uint32_t n_calls;
    qr_tier_call calls[QR_TIER_CALLS_MAX];
} qr_tier_stage;

typedef struct qr_tier {
    char name[32];
    uint32_t n_hosts;
    uint32_t hosts[QR_TIER_HOSTS_MAX];
    int64_t service_ns; /* mean total compute per request */
    uint32_t workers;
    uint64_t request_bytes, reply_bytes; /* what a request to this tier, and its reply, carry */
    uint32_t n_stages;
    qr_tier_stage stages[QR_TIER_STAGES_MAX];
} qr_tier;

typedef enum { QR_TIER_SLOW_NODE = 0, QR_TIER_SLOW_LINK } qr_tier_fault_kind;

typedef struct qr_tier_fault {
    qr_tier_fault_kind kind;
    uint32_t a, b;    /* the host (slow node), or the link's two hosts (either direction) */
    double factor;    /* slow node: its computations take this many times longer */
    int64_t delay_ns; /* slow link: added to every message over it */
} qr_tier_fault;

typedef struct qr_tiers_spec {
    uint32_t n_tiers;
    qr_tier tiers[QR_TIERS_MAX];
    uint32_t n_clients;
    uint32_t clients[QR_TIER_HOSTS_MAX];
    double rate_per_s; /* requests per second, all clients together */
    uint32_t first;    /* the tier clients call */
    uint32_t n_faults;
    qr_tier_fault faults[QR_TIER_FAULTS_MAX];
} qr_tiers_spec;

/* Parse a spec (above). Errors name the item by number and the word at fault: an unknown tier or
 * key, a bad number, a tier that calls itself or an earlier tier (calls must go down the tiers, so
 * no request waits for itself), a host in two tiers or both client and server, too many items.
 * Returns 0 or QR_EVALUE. */
int qr_tiers_parse(const char *text, qr_tiers_spec *out, char *errbuf);
/* The tier host h serves; -1 for a client or a host of no tier. */
int qr_tiers_tier_of(const qr_tiers_spec *s, uint32_t h);
/* The largest host number the spec names, plus one. */
uint32_t qr_tiers_hosts(const qr_tiers_spec *s);

/* One message: a request or a reply of one call. */
typedef struct qr_tier_msg {
    uint64_t id;     /* in order of sending, from 0 */
    uint64_t call;   /* the call it belongs to */
    uint64_t parent; /* the message that caused it (QR_TIER_NO_PARENT: a client's request) */
    uint64_t root;   /* the client request it serves (the request id) */
    uint32_t from, to;
    uint32_t conn; /* the connection, numbered in order of opening over the whole service */
    uint64_t bytes;
    int reply;
    int64_t at_ns; /* when it is sent */
} qr_tier_msg;

typedef struct qr_tiers qr_tiers;

/* A machine for spec s (copied), its random choices from seed. Returns 0, QR_EVALUE (an empty
 * spec) or QR_ENOMEM; caller owns *out (qr_tiers_destroy). */
int qr_tiers_create(qr_tiers **out, const qr_tiers_spec *s, uint64_t seed);
/* Release; NULL is allowed. */
void qr_tiers_destroy(qr_tiers *t);
/* Have the clients send their requests until end_ns (exclusive), from 0. */
int qr_tiers_start(qr_tiers *t, int64_t end_ns);
/* The time of the machine's next own event (a request to send, a computation that ends);
 * INT64_MAX if none. */
int64_t qr_tiers_next(const qr_tiers *t);
/* Run the machine's own events up to now_ns (inclusive). Returns 0 or QR_ENOMEM. */
int qr_tiers_advance(qr_tiers *t, int64_t now_ns);
/* Message id has arrived at its destination at now_ns. Returns 0, QR_EINVAL (no such message, or
 * it arrived before) or QR_ENOMEM. */
int qr_tiers_arrive(qr_tiers *t, uint64_t id, int64_t now_ns);
/* Every message sent so far, in order of id; borrowed until the next call. */
const qr_tier_msg *qr_tiers_messages(const qr_tiers *t, size_t *n);
/* Messages sent but not yet taken (qr_tiers_take): the ones to put on the network. */
const qr_tier_msg *qr_tiers_take(qr_tiers *t, size_t *n);
/* Requests the clients sent, and those answered. */
void qr_tiers_counts(const qr_tiers *t, uint64_t *requests, uint64_t *answered);

/* The core's own network for the machine: a message of b bytes from a to c takes base_ns + b
 * bytes at rate_bps + an exponential jitter of mean jitter_ns (+ the slow links' delay). Each
 * host's clock is off by an offset drawn uniformly from [-clock_ns, clock_ns]. */
typedef struct qr_tiers_net {
    int64_t base_ns, jitter_ns, clock_ns;
    uint64_t rate_bps;
    int64_t duration_ns; /* clients send requests until then; the run ends when all are answered */
} qr_tiers_net;

/* The defaults: 10 us, 5 us jitter, no clock error, 10 Gb/s, 100 ms. */
void qr_tiers_net_default(qr_tiers_net *n);

/* A message as the hosts saw it, with the truth beside it. */
typedef struct qr_tiers_trace_msg {
    qr_tier_msg m;
    int64_t true_send_ns, true_recv_ns;
    int64_t send_ns, recv_ns; /* on the sender's and the receiver's clocks */
} qr_tiers_trace_msg;

/* Run spec s over the core's network (net) from seed: every message in order of id, with both
 * times, and the clock offsets of hosts 0 .. qr_tiers_hosts(s) - 1 (caller frees both). Returns
 * 0, QR_EVALUE (a bad network) or QR_ENOMEM. */
int qr_tiers_simulate(const qr_tiers_spec *s, const qr_tiers_net *net, uint64_t seed,
                      qr_tiers_trace_msg **msgs, size_t *n, int64_t **offsets, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
