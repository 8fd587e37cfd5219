/* qreplay testbed-agent: the sender and receiver of one testbed host, run by qreplay testbed inside
 * the host's network namespace (not a user command).
 *
 *   qreplay testbed-agent HOST SCHEDULE [--cc NAME] [--sndbuf BYTES] [--rcvbuf BYTES]
 *
 * SCHEDULE is a CSV written by qreplay testbed: flow,src,dst,bytes,start_ns,src_addr,src_port,
 * dst_addr (start_ns from the common start). The agent listens on QR_SINK_PORT, prints "ready",
 * waits for "go T0" on stdin (T0: CLOCK_REALTIME ns), then opens each of its flows at T0 + start
 * from its port, writes exactly its bytes, shuts its side and waits for the receiver to close. It
 * prints one line per event on stdout:
 *   sent FLOW START_NS END_NS BYTES RETRANS    (END: the receiver closed after reading all)
 *   recv FLOW FIRST_NS LAST_NS BYTES           (LAST: its last byte was read; then EOF)
 *   fail FLOW REASON
 * and exits on "stop" or the end of stdin. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
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
#include "testbed_net.h"

struct aflow {
    uint32_t id, src, dst;
    uint64_t bytes;
    int64_t start_ns;
    struct in_addr src_addr, dst_addr;
    uint16_t src_port;
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
        unsigned port;
        if (sscanf(line, "%u,%u,%u,%" SCNu64 ",%" SCNd64 ",%63[^,],%u,%63[^,\n]", &a.id, &a.src,
                   &a.dst, &a.bytes, &a.start_ns, sa, &port, da) != 8 ||
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

/* epoll tags: 0 stdin, 1 listener, 2 timer, 16 + 2i sender of flow i, 17 + 2i receiver */
#define TAG_STDIN 0
#define TAG_LISTEN 1
#define TAG_TIMER 2
#define TAG_BASE 16

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

static void start_flow(struct aflow *f, size_t i, int ep, const char *cc, int sndbuf, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        sender_fail(f, ep, strerror(errno));
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

int qr_cmd_testbed_agent(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: qreplay testbed-agent HOST SCHEDULE [--cc NAME] [--sndbuf N] "
                        "[--rcvbuf N] (run by qreplay testbed)\n");
        return 2;
    }
    uint32_t host = (uint32_t)strtoul(argv[1], NULL, 10);
    const char *cc = NULL;
    int sndbuf = 0, rcvbuf = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cc"))
            cc = argv[i + 1];
        else if (!strcmp(argv[i], "--sndbuf"))
            sndbuf = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rcvbuf"))
            rcvbuf = atoi(argv[i + 1]);
    }
    struct aflow *fl = NULL;
    size_t n = 0;
    if (read_schedule(argv[2], host, &fl, &n))
        return 1;
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (rcvbuf > 0)
        setsockopt(ls, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in la = {.sin_family = AF_INET, .sin_port = htons(QR_SINK_PORT)};
    if (ls < 0 || bind(ls, (struct sockaddr *)&la, sizeof la) || listen(ls, 4096)) {
        fprintf(stderr, "testbed-agent: host %u: listen on port %d: %s\n", host, QR_SINK_PORT,
                strerror(errno));
        return 1;
    }
    int ep = epoll_create1(0), tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    ep_add(ep, 0, EPOLLIN, TAG_STDIN);
    ep_add(ep, ls, EPOLLIN, TAG_LISTEN);
    ep_add(ep, tfd, EPOLLIN, TAG_TIMER);
    printf("ready\n");
    fflush(stdout);
    /* the flows this host sends, in start order */
    size_t *order = malloc((n ? n : 1) * sizeof *order), n_send = 0, next = 0;
    for (size_t i = 0; i < n; i++)
        if (fl[i].src == host)
            order[n_send++] = i;
    sort_fl = fl;
    qsort(order, n_send, sizeof *order, cmp_start);
    int64_t t0 = -1;
    char inbuf[256];
    size_t inlen = 0;
    static char rbuf[1 << 16];
    int running = 1;
    while (running) {
        struct epoll_event evs[64];
        int k = epoll_wait(ep, evs, 64, -1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        for (int e = 0; e < k; e++) {
            uint64_t tag = evs[e].data.u64;
            if (tag == TAG_STDIN) {
                ssize_t r = read(0, inbuf + inlen, sizeof inbuf - 1 - inlen);
                if (r <= 0) {
                    running = 0;
                    break;
                }
                inlen += (size_t)r;
                inbuf[inlen] = 0;
                char *nl;
                while ((nl = strchr(inbuf, '\n'))) {
                    *nl = 0;
                    if (!strncmp(inbuf, "go ", 3) && t0 < 0) {
                        t0 = strtoll(inbuf + 3, NULL, 10);
                        if (n_send)
                            arm(tfd, t0 + fl[order[0]].start_ns);
                    } else if (!strcmp(inbuf, "stop"))
                        running = 0;
                    size_t used = (size_t)(nl + 1 - inbuf);
                    memmove(inbuf, nl + 1, inlen - used + 1);
                    inlen -= used;
                }
                if (inlen == sizeof inbuf - 1)
                    inlen = 0;
            } else if (tag == TAG_TIMER) {
                uint64_t x;
                if (read(tfd, &x, sizeof x) < 0 && errno != EAGAIN)
                    break;
                int64_t now = now_ns();
                while (next < n_send && t0 + fl[order[next]].start_ns <= now) {
                    size_t i = order[next++];
                    start_flow(&fl[i], i, ep, cc, sndbuf, rcvbuf);
                }
                arm(tfd, next < n_send ? t0 + fl[order[next]].start_ns : 0);
            } else if (tag == TAG_LISTEN) {
                for (;;) {
                    struct sockaddr_in pa;
                    socklen_t pl = sizeof pa;
                    int fd = accept4(ls, (struct sockaddr *)&pa, &pl, SOCK_NONBLOCK);
                    if (fd < 0)
                        break;
                    size_t i = 0;
                    while (i < n &&
                           !(fl[i].dst == host && fl[i].src_port == ntohs(pa.sin_port) &&
                             fl[i].src_addr.s_addr == pa.sin_addr.s_addr && fl[i].rfd == -1))
                        i++;
                    if (i == n) {
                        close(fd); /* of no flow of the schedule */
                        continue;
                    }
                    fl[i].rfd = fd;
                    ep_add(ep, fd, EPOLLIN, TAG_BASE + 2 * i + 1);
                }
            } else {
                size_t i = (size_t)(tag - TAG_BASE) / 2;
                struct aflow *f = &fl[i];
                if ((tag - TAG_BASE) % 2) {
                    /* receiver */
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
                            break;
                        printf("recv %u %" PRId64 " %" PRId64 " %" PRIu64 "\n", f->id, f->t_first,
                               f->t_last, f->got);
                        fflush(stdout);
                        epoll_ctl(ep, EPOLL_CTL_DEL, f->rfd, NULL);
                        close(f->rfd);
                        f->rfd = -2;
                        break;
                    }
                } else if (f->fd >= 0) {
                    if (!f->shut)
                        sender_event(f, ep, evs[e].events);
                    if (f->fd >= 0 && f->shut) {
                        /* wait for the receiver's close */
                        struct epoll_event ev2 = {.events = EPOLLIN, .data.u64 = tag};
                        epoll_ctl(ep, EPOLL_CTL_MOD, f->fd, &ev2);
                        ssize_t r;
                        while ((r = recv(f->fd, rbuf, sizeof rbuf, 0)) > 0)
                            ;
                        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                            struct tcp_info ti;
                            socklen_t tl = sizeof ti;
                            memset(&ti, 0, sizeof ti);
                            getsockopt(f->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
                            printf("sent %u %" PRId64 " %" PRId64 " %" PRIu64 " %u\n", f->id,
                                   f->t_start, now_ns(), f->written, ti.tcpi_total_retrans);
                            fflush(stdout);
                            epoll_ctl(ep, EPOLL_CTL_DEL, f->fd, NULL);
                            close(f->fd);
                            f->fd = -2;
                        }
                    }
                }
            }
        }
    }
    free(order);
    free(fl);
    return 0;
}
