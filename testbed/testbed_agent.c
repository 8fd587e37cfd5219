/* qreplay testbed-agent: the sender and receiver of one testbed host, run by qreplay testbed inside
 * the host's network namespace (not a user command).
 *
 *   qreplay testbed-agent HOST SCHEDULE [--cc NAME] [--sndbuf BYTES] [--rcvbuf BYTES]
 *                         [--trace PER_CONNECTION PER_HOST]
 *                         [--pinglist FILE --ping INTERVAL_NS TIMEOUT_NS END_NS]
 *                         [--guided FILE COUNT]
 *
 * SCHEDULE is a CSV written by qreplay testbed: flow,src,dst,bytes,start_ns,src_addr,src_port,
 * dst_addr,hops (start_ns from the common start; hops: switches between the two hosts).
 *
 * With --trace it is also 007's agent: every few ms it reads each of its sending sockets' kernel
 * retransmission counter (tcpi_total_retrans); when one grew, it traces that connection's path
 * (at most PER_CONNECTION times per connection, PER_HOST in all) with crafted TCP packets of the
 * connection's own 5-tuple, no flags, no payload, TTL 1..hops, the TTL in the IP ID (trace << 5 |
 * ttl, as traceroute.h), through a raw socket; it reads the switches' ICMP time-exceeded answers
 * on a raw ICMP socket and matches them by the IP ID they quote.
 *
 * With --pinglist it is Pingmesh's agent: FILE holds its pairs (pair,dst_addr,phase_ns); each pair
 * probes at phase + j x INTERVAL from the start until END (-1: until stop) with a TCP connect to
 * the probed host's QR_PROBE_PORT from a fresh port the kernel picks; the round trip is the
 * connect's time, a probe unanswered within TIMEOUT is lost. Every agent accepts the probes of
 * others on QR_PROBE_PORT and holds each until its prober closes it with a reset, so neither side
 * keeps the probe's 4-tuple in TIME_WAIT. The agent listens on QR_SINK_PORT, prints "ready",
 * waits for "go T0" on stdin (T0: CLOCK_REALTIME ns), then opens each of its flows at T0 + start
 * from its port, writes exactly its bytes, shuts its side and waits for the receiver to close. It
 * prints one line per event on stdout:
 *   sent FLOW START_NS END_NS BYTES RETRANS    (END: the receiver closed after reading all)
 *   recv FLOW FIRST_NS LAST_NS BYTES           (LAST: its last byte was read; then EOF)
 *   fail FLOW REASON
 *   probe FLOW TRACE TTL IPID SENT_NS
 *   answer TRACE TTL REPLIER RECV_NS
 *   ping PAIR SPORT SENT_NS RTT_NS
 * (qr_agent_report_parse reads them) and exits on "stop" or the end of stdin.
 *
 * With --guided it sends Everflow's guided probes when it stops: FILE holds its pinned 5-tuples
 * (src_addr,dst_addr,sport: guided_plan.h); COUNT rounds, one probe per 5-tuple each, a TCP packet
 * with no flags to QR_PROBE_PORT, the round in its sequence number, DSCP QR_GUIDED_DSCP (the
 * debug mark), 1 ms between rounds; then it prints "guided SENT". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "qreplay/flowtable.h"
#include "qreplay/guided_plan.h"
#include "qreplay/pingmesh.h"
#include "qreplay/traceroute.h"
#include "testbed_net.h"

struct aflow {
    uint32_t id, src, dst;
    uint64_t bytes;
    int64_t start_ns;
    struct in_addr src_addr, dst_addr;
    uint16_t src_port;
    uint32_t hops; /* switches between the hosts */
    uint32_t retrans, traces;
    /* sender */
    int fd, connected, shut;
    uint64_t written;
    int64_t t_start;
    /* receiver */
    int rfd;
    uint64_t got;
    int64_t t_first, t_last;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int read_schedule(const char *path, uint32_t host, struct aflow **out, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "testbed-agent: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[512], sa[64], da[64];
    size_t cap = 0, k = 0;
    struct aflow *v = NULL;
    long ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (line[0] == '#' || !strncmp(line, "flow,", 5))
            continue;
        struct aflow a;
        memset(&a, 0, sizeof a);
        unsigned port, hops = 1;
        int got = sscanf(line, "%u,%u,%u,%" SCNu64 ",%" SCNd64 ",%63[^,],%u,%63[^,\n],%u", &a.id,
                         &a.src, &a.dst, &a.bytes, &a.start_ns, sa, &port, da, &hops);
        if (got < 8 || hops < 1 || hops > QR_TRACE_MAX_TTL ||
            !inet_pton(AF_INET, sa, &a.src_addr) || !inet_pton(AF_INET, da, &a.dst_addr) ||
            port > 65535) {
            fprintf(stderr, "testbed-agent: %s:%ld: not a schedule line\n", path, ln);
            free(v);
            fclose(f);
            return 1;
        }
        if (a.src != host && a.dst != host)
            continue;
        a.src_port = (uint16_t)port;
        a.hops = hops;
        a.fd = a.rfd = -1;
        a.t_first = a.t_last = -1;
        if (k == cap) {
            cap = cap ? 2 * cap : 64;
            struct aflow *g = realloc(v, cap * sizeof *g);
            if (!g) {
                free(v);
                fclose(f);
                return 1;
            }
            v = g;
        }
        v[k++] = a;
    }
    fclose(f);
    *out = v;
    *n = k;
    return 0;
}

/* epoll tags: 0 stdin, 1 listener, 2 timer, 3 ICMP, 4 probe listener, 5 tick, 16 + 2i sender of
 * flow i, 17 + 2i receiver, TAG_PING + j Pingmesh probe j */
#define TAG_STDIN 0
#define TAG_LISTEN 1
#define TAG_TIMER 2
#define TAG_ICMP 3
#define TAG_PROBES 4
#define TAG_TICK 5
#define TAG_BASE 16
#define TAG_HELD (1ull << 39) /* + fd: a probe this agent answered */
#define TAG_PING (1ull << 40)
#define TICK_NS 2000000 /* how often 007's agent reads the counters and probes time out */

static int ep_add(int ep, int fd, uint32_t events, uint64_t tag)
{
    struct epoll_event e = {.events = events, .data.u64 = tag};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
}

static void arm(int tfd, int64_t t)
{
    struct itimerspec it;
    memset(&it, 0, sizeof it);
    if (t > 0) {
        it.it_value.tv_sec = t / 1000000000;
        it.it_value.tv_nsec = t % 1000000000;
    }
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

static void sender_fail(struct aflow *f, int ep, const char *why)
{
    printf("fail %u %s\n", f->id, why);
    fflush(stdout);
    if (f->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, f->fd, NULL);
        close(f->fd);
    }
    f->fd = -2;
}

static void start_flow(struct aflow *f, size_t i, int ep, const char *cc, int sndbuf, int rcvbuf,
                       int debug_every)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        sender_fail(f, ep, strerror(errno));
        return;
    }
    int tos = QR_DEBUG_TOS; /* Everflow's debug bit; the kernel keeps the ECN bits its own */
    if (qr_debug_dir(debug_every, qr_dir_data(f->id)) &&
        setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos)) {
        close(fd);
        sender_fail(f, ep, "cannot set the debug bit (IP_TOS)");
        return;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc))) {
        close(fd);
        sender_fail(f, ep, "congestion control not available");
        return;
    }
    if (sndbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(f->src_port)};
    a.sin_addr = f->src_addr;
    struct sockaddr_in b = {.sin_family = AF_INET, .sin_port = htons(QR_SINK_PORT)};
    b.sin_addr = f->dst_addr;
    f->t_start = now_ns();
    if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
        (connect(fd, (struct sockaddr *)&b, sizeof b) && errno != EINPROGRESS)) {
        char why[128];
        snprintf(why, sizeof why, "%s", strerror(errno));
        close(fd);
        sender_fail(f, ep, why);
        return;
    }
    f->fd = fd;
    ep_add(ep, fd, EPOLLOUT | EPOLLIN, TAG_BASE + 2 * i);
}

static void sender_event(struct aflow *f, int ep, uint32_t ev)
{
    static char zeros[65536];
    if (!f->connected && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t l = sizeof err;
        getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &l);
        if (err) {
            sender_fail(f, ep, strerror(err));
            return;
        }
        f->connected = 1;
    }
    while (f->connected && f->written < f->bytes) {
        size_t want =
            f->bytes - f->written < sizeof zeros ? (size_t)(f->bytes - f->written) : sizeof zeros;
        ssize_t w = send(f->fd, zeros, want, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            sender_fail(f, ep, strerror(errno));
            return;
        }
        f->written += (uint64_t)w;
    }
    if (f->connected && f->written == f->bytes && !f->shut) {
        shutdown(f->fd, SHUT_WR);
        f->shut = 1;
    }
    (void)ep;
}

/* Sender order: by start time, then by flow (qsort's comparator over indices into sort_fl). */
static const struct aflow *sort_fl;
static int cmp_start(const void *x, const void *y)
{
    const struct aflow *a = &sort_fl[*(const size_t *)x], *b = &sort_fl[*(const size_t *)y];
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* ---- 007's agent ---- */

struct tracer {
    int raw, icmp;               /* -1: not tracing */
    uint32_t per_conn, per_host; /* the caps */
    uint32_t traces;             /* this host's, so far (its trace numbers) */
};

static uint16_t csum16(const void *data, size_t len, uint32_t sum)
{
    const uint8_t *b = data;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)b[i] << 8 | b[i + 1];
    if (len & 1)
        sum += (uint32_t)b[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static ssize_t send_bare_tcp(int raw, struct in_addr src, struct in_addr dst, uint16_t sport,
                             uint16_t dport, uint32_t seq, uint16_t id, uint8_t ttl, uint8_t tos);

/* Trace flow f's data direction: one TCP packet per TTL 1..hops with its 5-tuple. */
static void trace_flow(struct tracer *tr, struct aflow *f)
{
    uint32_t trace = tr->traces++;
    f->traces++;
    for (uint32_t ttl = 1; ttl <= f->hops; ttl++) {
        uint16_t id = qr_tracer_ip_id(trace, ttl);
        int64_t now = now_ns();
        if (send_bare_tcp(tr->raw, f->src_addr, f->dst_addr, f->src_port, QR_SINK_PORT, 0, id,
                          (uint8_t)ttl, 0) == 40)
            printf("probe %u %u %u %u %" PRId64 "\n", f->id, trace, ttl, id, now);
    }
    fflush(stdout);
}

/* Read the kernel's retransmission counter of every sending socket; trace those that grew. */
static void tracer_tick(struct tracer *tr, struct aflow *fl, size_t n, uint32_t host)
{
    for (size_t i = 0; i < n; i++) {
        struct aflow *f = &fl[i];
        if (f->src != host || f->fd < 0)
            continue;
        struct tcp_info ti;
        socklen_t tl = sizeof ti;
        memset(&ti, 0, sizeof ti);
        if (getsockopt(f->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl))
            continue;
        if (ti.tcpi_total_retrans <= f->retrans)
            continue;
        f->retrans = ti.tcpi_total_retrans;
        if (f->traces < tr->per_conn && tr->traces < tr->per_host)
            trace_flow(tr, f);
    }
}

/* ICMP time-exceeded answers to this host's probes. */
static void tracer_answers(struct tracer *tr, struct in_addr self)
{
    uint8_t b[1500];
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t r = recvfrom(tr->icmp, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (r <= 0)
            return;
        int64_t now = now_ns();
        size_t ihl = (size_t)(b[0] & 15) * 4;
        if ((size_t)r < ihl + 8 + 20 + 8 || b[ihl] != 11 || b[ihl + 1] != 0)
            continue; /* not a time-exceeded in transit with a quoted header */
        const uint8_t *q = b + ihl + 8;
        size_t qihl = (size_t)(q[0] & 15) * 4;
        if (q[9] != IPPROTO_TCP || memcmp(q + 12, &self, 4) || (size_t)r < ihl + 8 + qihl + 4)
            continue;
        uint16_t id = (uint16_t)(q[4] << 8 | q[5]);
        uint32_t trace = id >> 5, ttl = id & QR_TRACE_MAX_TTL;
        if (trace >= tr->traces || ttl == 0)
            continue; /* not one of this host's probes */
        printf("answer %u %u %u %" PRId64 "\n", trace, ttl, (uint32_t)ntohl(from.sin_addr.s_addr),
               now);
    }
}

/* ---- Pingmesh's agent ---- */

struct ppair {
    uint32_t pair;
    struct in_addr dst;
    int64_t phase_ns;
    uint64_t sent; /* probes so far */
};

struct pprobe {
    uint32_t pair;
    int fd; /* -1: done */
    int64_t sent_ns;
};

struct pinger {
    struct ppair *pairs;
    size_t n_pairs;
    int64_t interval, timeout, end; /* end -1: until stop */
    struct pprobe *probes;
    size_t n, cap;
};

static int read_pinglist(const char *path, struct pinger *pg)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "testbed-agent: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[256], da[64];
    long ln = 0;
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (!strncmp(line, "pair,", 5))
            continue;
        struct ppair p = {0};
        if (sscanf(line, "%u,%63[^,],%" SCNd64, &p.pair, da, &p.phase_ns) != 3 ||
            !inet_pton(AF_INET, da, &p.dst) || p.phase_ns < 0) {
            fprintf(stderr, "testbed-agent: %s:%ld: not a pinglist line\n", path, ln);
            fclose(f);
            return 1;
        }
        if (pg->n_pairs == cap) {
            cap = cap ? 2 * cap : 32;
            struct ppair *g = realloc(pg->pairs, cap * sizeof *g);
            if (!g) {
                fclose(f);
                return 1;
            }
            pg->pairs = g;
        }
        pg->pairs[pg->n_pairs++] = p;
    }
    fclose(f);
    return 0;
}

/* Close with a reset: no side keeps the probe's 4-tuple in TIME_WAIT, so a later probe that draws
 * the same source port gets a SYN-ACK, not a challenge ACK. */
static void close_now(int fd)
{
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

static void ping_done(struct pprobe *x, int ep, int64_t rtt)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    memset(&a, 0, sizeof a);
    getsockname(x->fd, (struct sockaddr *)&a, &al);
    printf("ping %u %u %" PRId64 " %" PRId64 "\n", x->pair, ntohs(a.sin_port), x->sent_ns, rtt);
    fflush(stdout);
    epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
    close_now(x->fd);
    x->fd = -1;
}

/* Send the probes now due (from t0), and time out the unanswered ones. */
static void pinger_tick(struct pinger *pg, int ep, int64_t t0)
{
    int64_t now = now_ns();
    for (size_t i = 0; i < pg->n; i++)
        if (pg->probes[i].fd >= 0 && now - pg->probes[i].sent_ns > pg->timeout)
            ping_done(&pg->probes[i], ep, -1);
    for (size_t i = 0; i < pg->n_pairs; i++) {
        struct ppair *p = &pg->pairs[i];
        for (;;) {
            int64_t at = t0 + p->phase_ns + (int64_t)p->sent * pg->interval;
            if (at > now || (pg->end >= 0 && at - t0 >= pg->end))
                break;
            p->sent++;
            if (pg->n == pg->cap) {
                size_t c = pg->cap ? 2 * pg->cap : 256;
                struct pprobe *g = realloc(pg->probes, c * sizeof *g);
                if (!g)
                    return;
                pg->probes = g;
                pg->cap = c;
            }
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (fd < 0)
                continue;
            struct sockaddr_in b = {
                .sin_family = AF_INET, .sin_port = htons(QR_PROBE_PORT), .sin_addr = p->dst};
            struct pprobe *x = &pg->probes[pg->n];
            *x = (struct pprobe){p->pair, fd, now_ns()};
            if (connect(fd, (struct sockaddr *)&b, sizeof b) && errno != EINPROGRESS) {
                close(fd);
                continue;
            }
            ep_add(ep, fd, EPOLLOUT, TAG_PING + pg->n);
            pg->n++;
        }
    }
}

static void ping_event(struct pprobe *x, int ep)
{
    if (x->fd < 0)
        return;
    int err = 0;
    socklen_t l = sizeof err;
    getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &err, &l);
    ping_done(x, ep, err ? -1 : now_ns() - x->sent_ns);
}

/* One TCP packet with no flags and no payload from src:sport to dst:dport into pkt (IP checksum
 * left 0, the TCP checksum filled). */
static void bare_tcp(uint8_t pkt[40], struct in_addr src, struct in_addr dst, uint16_t sport,
                     uint16_t dport, uint32_t seq, uint16_t id, uint8_t ttl, uint8_t tos)
{
    memset(pkt, 0, 40);
    pkt[0] = 0x45;
    pkt[1] = tos;
    pkt[3] = 40;
    pkt[4] = (uint8_t)(id >> 8), pkt[5] = (uint8_t)id;
    pkt[8] = ttl;
    pkt[9] = IPPROTO_TCP;
    memcpy(pkt + 12, &src, 4);
    memcpy(pkt + 16, &dst, 4);
    uint8_t *t = pkt + 20;
    t[0] = (uint8_t)(sport >> 8), t[1] = (uint8_t)sport;
    t[2] = (uint8_t)(dport >> 8), t[3] = (uint8_t)dport;
    t[4] = (uint8_t)(seq >> 24), t[5] = (uint8_t)(seq >> 16), t[6] = (uint8_t)(seq >> 8);
    t[7] = (uint8_t)seq;
    t[12] = 5 << 4; /* no flags, no payload */
    /* the TCP checksum over the pseudo-header */
    uint8_t ph[12];
    memcpy(ph, pkt + 12, 8);
    ph[8] = 0, ph[9] = IPPROTO_TCP, ph[10] = 0, ph[11] = 20;
    uint32_t sum = 0;
    for (int i = 0; i < 12; i += 2)
        sum += (uint32_t)ph[i] << 8 | ph[i + 1];
    uint16_t c = csum16(t, 20, sum);
    t[16] = (uint8_t)(c >> 8), t[17] = (uint8_t)c;
}

/* bare_tcp through raw socket raw (the kernel fills the IP checksum, and the IP ID when id is 0).
 * Returns sendto's result. */
static ssize_t send_bare_tcp(int raw, struct in_addr src, struct in_addr dst, uint16_t sport,
                             uint16_t dport, uint32_t seq, uint16_t id, uint8_t ttl, uint8_t tos)
{
    uint8_t pkt[40];
    bare_tcp(pkt, src, dst, sport, dport, seq, id, ttl, tos);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = dst};
    return sendto(raw, pkt, sizeof pkt, 0, (struct sockaddr *)&to, sizeof to);
}

/* Everflow's guided probes along the pinned 5-tuples of file, count rounds (above). */
static int send_guided(const char *file, int count, uint32_t host)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "testbed-agent: host %u: %s: %s\n", host, file, strerror(errno));
        return 1;
    }
    struct {
        struct in_addr src, dst;
        uint16_t sport;
    } pin[QR_GUIDED_MAX_PATHS];
    size_t n = 0;
    char line[128], a[32], b[32];
    unsigned sport;
    while (n < QR_GUIDED_MAX_PATHS && fgets(line, sizeof line, f))
        if (sscanf(line, "%31[^,],%31[^,],%u", a, b, &sport) == 3 && sport < 65536 &&
            inet_pton(AF_INET, a, &pin[n].src) == 1 && inet_pton(AF_INET, b, &pin[n].dst) == 1)
            pin[n++].sport = (uint16_t)sport;
    fclose(f);
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    if (raw < 0) {
        fprintf(stderr, "testbed-agent: host %u: a raw socket for the guided probes: %s\n", host,
                strerror(errno));
        return 1;
    }
    uint64_t sent = 0;
    for (int r = 0; r < count; r++) {
        for (size_t i = 0; i < n; i++)
            sent += send_bare_tcp(raw, pin[i].src, pin[i].dst, pin[i].sport, QR_PROBE_PORT,
                                  (uint32_t)r, 0, 64, QR_GUIDED_TOS) == 40;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    close(raw);
    printf("guided %" PRIu64 "\n", sent);
    fflush(stdout);
    return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
    unsigned m[6];
    char extra;
    if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &extra) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        if (m[i] > 255)
            return -1;
        mac[i] = (uint8_t)m[i];
    }
    return 0;
}

/* qreplay testbed-agent bounce FILE COUNT, in a switch's namespace: Everflow's link round trip
 * probes (guided_plan.h qr_bounce_plan). FILE holds one port per line (ifname,mac,peer_mac,addr);
 * COUNT rounds, one probe out of each port each, 1 ms apart: an Ethernet frame to the neighbour's
 * interface carrying a TCP packet with no flags from addr to addr, port QR_PROBE_PORT, DSCP
 * QR_GUIDED_DSCP, the round in its sequence number. Prints "bounce SENT". */
static int send_bounce(const char *file, int count)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "testbed-agent bounce: %s: %s\n", file, strerror(errno));
        return 1;
    }
    struct {
        int ifindex;
        uint8_t mac[6], peer[6];
        struct in_addr addr;
    } pin[64];
    size_t n = 0;
    char line[256], ifname[32], m1[32], m2[32], a[32];
    long no = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        no++;
        if (n == 64 || sscanf(line, "%31[^,],%31[^,],%31[^,],%31[^,\n]", ifname, m1, m2, a) != 4 ||
            parse_mac(m1, pin[n].mac) || parse_mac(m2, pin[n].peer) ||
            inet_pton(AF_INET, a, &pin[n].addr) != 1 ||
            !(pin[n].ifindex = (int)if_nametoindex(ifname))) {
            fprintf(stderr,
                    "testbed-agent bounce: %s:%ld: not ifname,mac,peer_mac,addr of an "
                    "interface here\n",
                    file, no);
            rc = 1;
        } else
            n++;
    }
    fclose(f);
    int fd = rc ? -1 : socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
    if (!rc && fd < 0) {
        fprintf(stderr, "testbed-agent bounce: a packet socket: %s\n", strerror(errno));
        rc = 1;
    }
    uint64_t sent = 0;
    for (int r = 0; !rc && r < count; r++) {
        for (size_t i = 0; i < n; i++) {
            uint8_t fr[14 + 40];
            memcpy(fr, pin[i].peer, 6);
            memcpy(fr + 6, pin[i].mac, 6);
            fr[12] = 0x08, fr[13] = 0x00;
            bare_tcp(fr + 14, pin[i].addr, pin[i].addr, QR_BOUNCE_SPORT, QR_PROBE_PORT, (uint32_t)r,
                     (uint16_t)r, 64, QR_GUIDED_TOS);
            uint16_t c = csum16(fr + 14, 20, 0);
            fr[24] = (uint8_t)(c >> 8), fr[25] = (uint8_t)c;
            struct sockaddr_ll to = {.sll_family = AF_PACKET,
                                     .sll_protocol = htons(ETH_P_IP),
                                     .sll_ifindex = pin[i].ifindex,
                                     .sll_halen = 6};
            memcpy(to.sll_addr, pin[i].peer, 6);
            sent += sendto(fd, fr, sizeof fr, 0, (struct sockaddr *)&to, sizeof to) == sizeof fr;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (fd >= 0)
        close(fd);
    if (!rc) {
        printf("bounce %" PRIu64 "\n", sent);
        fflush(stdout);
    }
    return rc;
}

/* One agent's state: its host, the schedule's flows, its sockets and its clock. */
struct agent {
    uint32_t host;
    const char *cc, *pinglist, *guided;
    int sndbuf, rcvbuf, guided_count;
    int debug_every; /* [everflow] debug_every (guided_plan.h qr_debug_dir) */
    struct tracer tr;
    struct pinger pg;
    struct aflow *fl;
    size_t n;
    size_t *order, n_send, next; /* the flows this host sends, in start order; the next one */
    struct in_addr self;
    int ls, ps, ep, tfd, tick;
    int64_t t0; /* the run's start ("go"), -1 before */
    char inbuf[256];
    size_t inlen;
    int running;
};

/* A buffer to drain sockets into. */
static char rbuf[1 << 16];

static void agent_args(struct agent *a, int argc, char **argv)
{
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cc"))
            a->cc = argv[i + 1];
        else if (!strcmp(argv[i], "--sndbuf"))
            a->sndbuf = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rcvbuf"))
            a->rcvbuf = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--debug-every"))
            a->debug_every = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--trace") && i + 2 < argc) {
            a->tr.per_conn = (uint32_t)strtoul(argv[i + 1], NULL, 10);
            a->tr.per_host = (uint32_t)strtoul(argv[++i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--pinglist")) {
            a->pinglist = argv[i + 1];
        } else if (!strcmp(argv[i], "--guided") && i + 2 < argc) {
            a->guided = argv[i + 1];
            a->guided_count = atoi(argv[++i + 1]);
        } else if (!strcmp(argv[i], "--ping") && i + 3 < argc) {
            a->pg.interval = strtoll(argv[i + 1], NULL, 10);
            a->pg.timeout = strtoll(argv[i + 2], NULL, 10);
            a->pg.end = strtoll(argv[i + 3], NULL, 10);
            i += 2;
        }
    }
}

/* A listening socket on port, added to the agent's epoll with tag. Returns it, or -1 after
 * saying why. */
static int agent_listen(struct agent *a, uint16_t port, int rcvbuf, uint64_t tag)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in la = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (s >= 0) {
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (rcvbuf > 0)
            setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    if (s < 0 || bind(s, (struct sockaddr *)&la, sizeof la) || listen(s, 4096)) {
        fprintf(stderr, "testbed-agent: host %u: listen on port %d: %s\n", a->host, port,
                strerror(errno));
        return -1;
    }
    ep_add(a->ep, s, EPOLLIN, tag);
    return s;
}

/* The sockets: the sink's and the probes' listeners, the start timer, 007's raw sockets and the
 * agents' tick. Returns 0, or 1 after saying what failed. */
static int agent_sockets(struct agent *a)
{
    if (a->tr.per_conn) {
        a->tr.raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
        a->tr.icmp = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMP);
        if (a->tr.raw < 0 || a->tr.icmp < 0) {
            fprintf(stderr, "testbed-agent: host %u: raw sockets for 007's traceroutes: %s\n",
                    a->host, strerror(errno));
            return 1;
        }
    }
    a->ep = epoll_create1(0);
    a->tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    ep_add(a->ep, 0, EPOLLIN, TAG_STDIN);
    ep_add(a->ep, a->tfd, EPOLLIN, TAG_TIMER);
    a->ls = agent_listen(a, QR_SINK_PORT, a->rcvbuf, TAG_LISTEN);
    /* Pingmesh: every agent answers probes (accepts and closes) */
    a->ps = a->ls < 0 ? -1 : agent_listen(a, QR_PROBE_PORT, 0, TAG_PROBES);
    if (a->ls < 0 || a->ps < 0)
        return 1;
    a->tick = -1;
    if (a->tr.per_conn || a->pg.n_pairs) {
        a->tick = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
        struct itimerspec it = {{0, TICK_NS}, {0, TICK_NS}};
        timerfd_settime(a->tick, 0, &it, NULL);
        ep_add(a->ep, a->tick, EPOLLIN, TAG_TICK);
    }
    if (a->tr.icmp >= 0)
        ep_add(a->ep, a->tr.icmp, EPOLLIN, TAG_ICMP);
    return 0;
}

/* The runner's lines on stdin: "go T0" starts the schedule, "stop" or the end of input stops.
 * Returns -1 at the end of input. */
static int agent_stdin(struct agent *a)
{
    ssize_t r = read(0, a->inbuf + a->inlen, sizeof a->inbuf - 1 - a->inlen);
    if (r <= 0) {
        a->running = 0;
        return -1;
    }
    a->inlen += (size_t)r;
    a->inbuf[a->inlen] = 0;
    char *nl;
    while ((nl = strchr(a->inbuf, '\n'))) {
        *nl = 0;
        if (!strncmp(a->inbuf, "go ", 3) && a->t0 < 0) {
            a->t0 = strtoll(a->inbuf + 3, NULL, 10);
            if (a->n_send)
                arm(a->tfd, a->t0 + a->fl[a->order[0]].start_ns);
        } else if (!strcmp(a->inbuf, "stop"))
            a->running = 0;
        size_t used = (size_t)(nl + 1 - a->inbuf);
        memmove(a->inbuf, nl + 1, a->inlen - used + 1);
        a->inlen -= used;
    }
    if (a->inlen == sizeof a->inbuf - 1)
        a->inlen = 0;
    return 0;
}

/* Connections to the sink: each given to its flow of the schedule (by its sender's address and
 * port), any other closed. */
static void agent_accept(struct agent *a)
{
    for (;;) {
        struct sockaddr_in pa;
        socklen_t pl = sizeof pa;
        int fd = accept4(a->ls, (struct sockaddr *)&pa, &pl, SOCK_NONBLOCK);
        if (fd < 0)
            return;
        size_t i = 0;
        while (i < a->n && !(a->fl[i].dst == a->host && a->fl[i].src_port == ntohs(pa.sin_port) &&
                             a->fl[i].src_addr.s_addr == pa.sin_addr.s_addr && a->fl[i].rfd == -1))
            i++;
        if (i == a->n) {
            close(fd); /* of no flow of the schedule */
            continue;
        }
        a->fl[i].rfd = fd;
        ep_add(a->ep, fd, EPOLLIN, TAG_BASE + 2 * i + 1);
    }
}

/* Flow f's receiving end readable: its bytes counted; at its end, reported and closed. */
static void agent_receive(struct agent *a, struct aflow *f)
{
    for (;;) {
        ssize_t r = recv(f->rfd, rbuf, sizeof rbuf, 0);
        if (r > 0) {
            int64_t t = now_ns();
            if (f->t_first < 0)
                f->t_first = t;
            f->t_last = t;
            f->got += (uint64_t)r;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        printf("recv %u %" PRId64 " %" PRId64 " %" PRIu64 "\n", f->id, f->t_first, f->t_last,
               f->got);
        fflush(stdout);
        epoll_ctl(a->ep, EPOLL_CTL_DEL, f->rfd, NULL);
        close(f->rfd);
        f->rfd = -2;
        return;
    }
}

/* Flow f's sending end: its bytes written; once shut, the receiver's close awaited, then its
 * retransmissions read (a new one traced by 007's agent) and the flow reported. */
static void agent_send(struct agent *a, struct aflow *f, uint64_t tag, uint32_t events)
{
    if (!f->shut)
        sender_event(f, a->ep, events);
    if (f->fd < 0 || !f->shut)
        return;
    /* wait for the receiver's close */
    struct epoll_event ev2 = {.events = EPOLLIN, .data.u64 = tag};
    epoll_ctl(a->ep, EPOLL_CTL_MOD, f->fd, &ev2);
    ssize_t r;
    while ((r = recv(f->fd, rbuf, sizeof rbuf, 0)) > 0)
        ;
    if (!(r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)))
        return;
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    memset(&ti, 0, sizeof ti);
    getsockopt(f->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
    /* a retransmission since the last tick (the counter is polled every few ms): traced now,
     * while the 5-tuple still routes the same way */
    if (a->tr.per_conn && ti.tcpi_total_retrans > f->retrans) {
        f->retrans = ti.tcpi_total_retrans;
        if (f->traces < a->tr.per_conn && a->tr.traces < a->tr.per_host)
            trace_flow(&a->tr, f);
    }
    printf("sent %u %" PRId64 " %" PRId64 " %" PRIu64 " %u\n", f->id, f->t_start, now_ns(),
           f->written, ti.tcpi_total_retrans);
    fflush(stdout);
    epoll_ctl(a->ep, EPOLL_CTL_DEL, f->fd, NULL);
    close(f->fd);
    f->fd = -2;
}

/* One epoll event. Returns 0, or -1 when the rest of the events at hand are to be left: the
 * end of stdin, or a timer that cannot be read. */
static int agent_event(struct agent *a, uint64_t tag, uint32_t events)
{
    uint64_t x;
    if (tag == TAG_STDIN) {
        return agent_stdin(a);
    } else if (tag == TAG_TIMER) {
        if (read(a->tfd, &x, sizeof x) < 0 && errno != EAGAIN)
            return -1;
        int64_t now = now_ns();
        while (a->next < a->n_send && a->t0 + a->fl[a->order[a->next]].start_ns <= now) {
            size_t i = a->order[a->next++];
            start_flow(&a->fl[i], i, a->ep, a->cc, a->sndbuf, a->rcvbuf, a->debug_every);
        }
        arm(a->tfd, a->next < a->n_send ? a->t0 + a->fl[a->order[a->next]].start_ns : 0);
    } else if (tag == TAG_TICK) {
        if (read(a->tick, &x, sizeof x) < 0 && errno != EAGAIN)
            return -1;
        if (a->t0 >= 0 && a->tr.per_conn)
            tracer_tick(&a->tr, a->fl, a->n, a->host);
        if (a->t0 >= 0 && a->pg.n_pairs)
            pinger_tick(&a->pg, a->ep, a->t0);
    } else if (tag == TAG_ICMP) {
        tracer_answers(&a->tr, a->self);
        fflush(stdout);
    } else if (tag == TAG_PROBES) {
        int fd; /* held until the prober closes (it resets): no TIME_WAIT here */
        while ((fd = accept4(a->ps, NULL, NULL, SOCK_NONBLOCK)) >= 0)
            ep_add(a->ep, fd, EPOLLIN | EPOLLRDHUP, TAG_HELD + (uint64_t)fd);
    } else if (tag >= TAG_HELD && tag < TAG_PING) {
        int fd = (int)(tag - TAG_HELD);
        epoll_ctl(a->ep, EPOLL_CTL_DEL, fd, NULL);
        close(fd);
    } else if (tag >= TAG_PING) {
        ping_event(&a->pg.probes[tag - TAG_PING], a->ep);
    } else if (tag == TAG_LISTEN) {
        agent_accept(a);
    } else {
        struct aflow *f = &a->fl[(size_t)(tag - TAG_BASE) / 2];
        if ((tag - TAG_BASE) % 2)
            agent_receive(a, f);
        else if (f->fd >= 0)
            agent_send(a, f, tag, events);
    }
    return 0;
}

/* The stop: probes still waiting get no answer; a flow still open ([traffic] stop came first)
 * ends now: its sender resets it, so no byte of it leaves after the stop; its receiver reads what
 * is still in flight until that reset (or the flow's end) arrives, at most 300 ms, and only then
 * closes. Closed first, a receiver's kernel would answer each segment still in flight with the
 * same reset, identical frames a capture cannot tell from one captured twice. */
static void agent_stop(struct agent *a)
{
    for (size_t i = 0; i < a->pg.n; i++)
        if (a->pg.probes[i].fd >= 0)
            ping_done(&a->pg.probes[i], a->ep, -1);
    for (size_t i = 0; i < a->n; i++)
        if (a->fl[i].fd >= 0) {
            close_now(a->fl[i].fd);
            a->fl[i].fd = -2;
        }
    int64_t until = now_ns() + 300000000LL;
    for (int open_rx = 1; open_rx && now_ns() < until;) {
        open_rx = 0;
        for (size_t i = 0; i < a->n; i++) {
            if (a->fl[i].rfd < 0)
                continue;
            ssize_t r;
            while ((r = recv(a->fl[i].rfd, rbuf, sizeof rbuf, 0)) > 0)
                ;
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                close(a->fl[i].rfd);
                a->fl[i].rfd = -2;
            } else {
                open_rx = 1;
            }
        }
        if (open_rx) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    for (size_t i = 0; i < a->n; i++)
        if (a->fl[i].rfd >= 0)
            close(a->fl[i].rfd);
}

int qr_cmd_testbed_agent(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "bounce"))
        return send_bounce(argv[2], atoi(argv[3]));
    if (argc < 3) {
        fprintf(stderr, "usage: qreplay testbed-agent HOST SCHEDULE [--cc NAME] [--sndbuf N] "
                        "[--rcvbuf N] (run by qreplay testbed)\n");
        return 2;
    }
    struct agent a;
    memset(&a, 0, sizeof a);
    a.host = (uint32_t)strtoul(argv[1], NULL, 10);
    a.tr = (struct tracer){-1, -1, 0, 0, 0};
    a.t0 = -1;
    a.running = 1;
    agent_args(&a, argc, argv);
    if (read_schedule(argv[2], a.host, &a.fl, &a.n))
        return 1;
    int rc = 0;
    if (a.pinglist &&
        (read_pinglist(a.pinglist, &a.pg) || a.pg.interval <= 0 || a.pg.timeout <= 0)) {
        fprintf(stderr, "testbed-agent: host %u: a pinglist needs --ping INTERVAL TIMEOUT END\n",
                a.host);
        rc = 1;
    }
    for (size_t i = 0; i < a.n; i++)
        if (a.fl[i].src == a.host)
            a.self = a.fl[i].src_addr;
    if (!rc)
        rc = agent_sockets(&a);
    a.order = malloc((a.n ? a.n : 1) * sizeof *a.order);
    if (!rc && !a.order)
        rc = 1;
    if (rc) {
        free(a.order);
        free(a.fl);
        return rc;
    }
    printf("ready\n");
    fflush(stdout);
    for (size_t i = 0; i < a.n; i++)
        if (a.fl[i].src == a.host)
            a.order[a.n_send++] = i;
    sort_fl = a.fl;
    qsort(a.order, a.n_send, sizeof *a.order, cmp_start);
    while (a.running) {
        struct epoll_event evs[64];
        int k = epoll_wait(a.ep, evs, 64, -1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        for (int e = 0; e < k; e++)
            if (agent_event(&a, evs[e].data.u64, evs[e].events))
                break;
    }
    agent_stop(&a);
    rc = a.guided && a.guided_count > 0 ? send_guided(a.guided, a.guided_count, a.host) : 0;
    free(a.pg.probes);
    free(a.pg.pairs);
    free(a.order);
    free(a.fl);
    return rc;
}
