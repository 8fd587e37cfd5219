/* Message traces as text (messages.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/messages.h"
#include "qreplay/textio.h"
#include "qreplay/txn.h"

#define MSG_MAGIC "# qreplay messages 1"
#define MSG_HEADER "src,dst,conn,send_ns,recv_ns,bytes"

/* Field f of a line: an unsigned number up to max, or (time) a signed time or "-". */
static int field(const char *s, int time, uint64_t max, int64_t *t, uint64_t *u)
{
    if (time && !strcmp(s, "-")) {
        *t = QR_MSG_UNTRACED;
        return 0;
    }
    char *e;
    errno = 0;
    if (time) {
        long long v = strtoll(s, &e, 10);
        if (e == s || *e || errno || v > QR_TIME_MAX || v < -QR_TIME_MAX)
            return -1;
        *t = v;
        return 0;
    }
    if (*s == '-' || *s == '+')
        return -1;
    unsigned long long v = strtoull(s, &e, 10);
    if (e == s || *e || errno || v > max)
        return -1;
    *u = v;
    return 0;
}

static int parse_line(char *line, qr_msg *m, const char *path, long ln, char *errbuf)
{
    static const char *const names[] = {"src", "dst", "conn", "send_ns", "recv_ns", "bytes"};
    char *f[7];
    int nf = 0;
    char *cur = line;
    while (cur && nf < 7) {
        f[nf++] = cur;
        cur = strchr(cur, ',');
        if (cur)
            *cur++ = 0;
    }
    if (nf != 6)
        return qri_err(errbuf, QR_ESYNTAX, "%s:%ld: %d fields where a message has 6 (%s)", path, ln,
                       nf, MSG_HEADER);
    uint64_t u[6] = {0};
    int64_t t[6] = {0};
    const uint64_t max[6] = {
        QR_MSG_HOSTS_MAX - 1, QR_MSG_HOSTS_MAX - 1, UINT32_MAX, 0, 0, UINT64_MAX};
    for (int i = 0; i < 6; i++) {
        int time = i == 3 || i == 4;
        if (field(qri_trim(f[i]), time, max[i], &t[i], &u[i]))
            return qri_err(errbuf, QR_EVALUE, "%s:%ld: %s '%s' is not %s", path, ln, names[i], f[i],
                           time     ? "a time in ns (within 2^62) or -"
                           : i < 2  ? "a host number below 65536"
                           : i == 2 ? "a connection number below 2^32"
                                    : "a byte count");
    }
    if (u[0] == u[1])
        return qri_err(errbuf, QR_EVALUE, "%s:%ld: a message from host %" PRIu64 " to itself", path,
                       ln, u[0]);
    *m = (qr_msg){(uint32_t)u[0], (uint32_t)u[1], (uint32_t)u[2], t[3], t[4], u[5]};
    return QR_OK;
}

int qr_msgs_read(const char *path, qr_msg **out, size_t *n, uint32_t *n_hosts, char *errbuf)
{
    *out = NULL;
    *n = 0;
    *n_hosts = 0;
    qr_lines *l;
    int rc = qr_lines_open(&l, path, errbuf);
    if (rc)
        return rc;
    char *line;
    size_t len, cap = 0;
    long ln;
    int state = 0; /* 0: the first line, 1: the header, 2: messages */
    qr_msg *m = NULL;
    while (!rc && !(rc = qr_lines_next(l, &line, &len, &ln, errbuf))) {
        if (state == 0) {
            if (strcmp(qri_trim(line), MSG_MAGIC))
                rc = qri_err(errbuf, QR_EFORMAT,
                             "%s:%ld: not a message trace (its first line "
                             "must be '%s')",
                             path, ln, MSG_MAGIC);
            state = 1;
            continue;
        }
        char *s = qri_trim(line);
        if (!*s || *s == '#')
            continue;
        if (state == 1) {
            if (strcmp(s, MSG_HEADER))
                rc = qri_err(errbuf, QR_EFORMAT, "%s:%ld: the header must be '%s'", path, ln,
                             MSG_HEADER);
            state = 2;
            continue;
        }
        if (qri_grow((void **)&m, &cap, *n, sizeof *m, 1024)) {
            rc = qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
            break;
        }
        rc = parse_line(s, &m[*n], path, ln, errbuf);
        if (!rc) {
            uint32_t top = m[*n].src > m[*n].dst ? m[*n].src : m[*n].dst;
            *n_hosts = top + 1 > *n_hosts ? top + 1 : *n_hosts;
            (*n)++;
        }
    }
    qr_lines_close(l);
    if (rc == QR_END && state < 2)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: %s", path,
                     state ? "no header line" : "empty: not a message trace");
    if (rc != QR_END) {
        free(m);
        *n = 0;
        *n_hosts = 0;
        return rc;
    }
    *out = m;
    return QR_OK;
}

struct wctx {
    const qr_msg *m;
    size_t n;
    const char *comment;
};

static void put_time(FILE *f, int64_t t)
{
    if (t == QR_MSG_UNTRACED)
        fputs("-", f);
    else
        fprintf(f, "%" PRId64, t);
}

static void write_all(FILE *f, const void *ctx)
{
    const struct wctx *w = ctx;
    fprintf(f, "%s\n", MSG_MAGIC);
    if (w->comment) {
        fputs("# ", f);
        for (const char *c = w->comment; *c; c++)
            fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
        fputc('\n', f);
    }
    fprintf(f, "%s\n", MSG_HEADER);
    for (size_t i = 0; i < w->n; i++) {
        const qr_msg *m = &w->m[i];
        fprintf(f, "%u,%u,%u,", m->src, m->dst, m->conn);
        put_time(f, m->send_ns);
        fputc(',', f);
        put_time(f, m->recv_ns);
        fprintf(f, ",%" PRIu64 "\n", m->bytes);
    }
}

int qr_msgs_write(const char *path, const qr_msg *m, size_t n, const char *comment, char *errbuf)
{
    struct wctx w = {m, n, comment};
    return qr_write_text_file(path, write_all, &w, errbuf);
}

/* One end as text: IPv4 dotted (IPv4-mapped addresses), else IPv6 in brackets. */
static void end_text(const uint8_t a[16], uint16_t port, char *buf, size_t size)
{
    static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char h[64];
    if (!memcmp(a, v4, 12))
        snprintf(h, sizeof h, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
    else if (!inet_ntop(AF_INET6, a, h, sizeof h))
        snprintf(h, sizeof h, "?");
    snprintf(buf, size, "%s%s%s:%u", memcmp(a, v4, 12) ? "[" : "", h, memcmp(a, v4, 12) ? "]" : "",
             (unsigned)port);
}

void qr_msg_ends_text(const qr_msg_ends *e, char *buf, size_t size)
{
    char a[56], b[56];
    end_text(e->addr[0], e->port[0], a, sizeof a);
    end_text(e->addr[1], e->port[1], b, sizeof b);
    snprintf(buf, size, "%s-%s", a, b);
}

/* "A:P" (or "[A6]:P") from s up to end into addr and port. Returns 0 or -1. */
static int end_parse(const char *s, size_t len, uint8_t addr[16], uint16_t *port)
{
    char t[80];
    if (len == 0 || len >= sizeof t)
        return -1;
    memcpy(t, s, len);
    t[len] = '\0';
    char *colon = strrchr(t, ':'), *e;
    if (!colon || !colon[1])
        return -1;
    *colon = '\0';
    errno = 0;
    unsigned long p = strtoul(colon + 1, &e, 10);
    if (*e || errno || p > 65535 || colon[1] == '-' || colon[1] == '+')
        return -1;
    *port = (uint16_t)p;
    char *h = t;
    if (*h == '[') {
        size_t hl = strlen(h);
        if (hl < 2 || h[hl - 1] != ']')
            return -1;
        h[hl - 1] = '\0';
        return inet_pton(AF_INET6, h + 1, addr) == 1 ? 0 : -1;
    }
    uint8_t v4[4];
    if (inet_pton(AF_INET, h, v4) != 1)
        return -1;
    memset(addr, 0, 10);
    addr[10] = addr[11] = 0xff;
    memcpy(addr + 12, v4, 4);
    return 0;
}

int qr_msg_ends_parse(const char *text, qr_msg_ends *out)
{
    /* the dash between the ends: the one after the first end's port (IPv6 has no '-') */
    const char *dash = strchr(text, '-');
    if (!dash || strchr(dash + 1, '-'))
        return QR_EVALUE;
    qr_msg_ends e;
    if (end_parse(text, (size_t)(dash - text), e.addr[0], &e.port[0]) ||
        end_parse(dash + 1, strlen(dash + 1), e.addr[1], &e.port[1]))
        return QR_EVALUE;
    int c = memcmp(e.addr[0], e.addr[1], 16);
    if (c > 0 || (c == 0 && e.port[0] > e.port[1])) { /* the lower end first */
        uint8_t a[16];
        memcpy(a, e.addr[0], 16);
        memcpy(e.addr[0], e.addr[1], 16);
        memcpy(e.addr[1], a, 16);
        uint16_t p = e.port[0];
        e.port[0] = e.port[1];
        e.port[1] = p;
    }
    *out = e;
    return QR_OK;
}
