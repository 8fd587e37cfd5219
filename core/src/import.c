/* Host maps and capture owners for qreplay import. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/import.h"
#include "qreplay/textio.h"

int qr_addr_parse(const char *text, uint8_t out[16])
{
    uint8_t v4[4];
    if (inet_pton(AF_INET, text, v4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, v4, 4);
        return QR_OK;
    }
    if (inet_pton(AF_INET6, text, out) == 1)
        return QR_OK;
    return QR_EVALUE;
}

static uint64_t key_hi(const uint8_t a[16])
{
    uint64_t k = 0;
    for (int i = 0; i < 8; i++)
        k = k << 8 | a[i];
    return k;
}

static uint64_t key_lo(const uint8_t a[16])
{
    uint64_t k = 0;
    for (int i = 8; i < 16; i++)
        k = k << 8 | a[i];
    return k;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = '\0';
    return s;
}

void qr_host_map_free(qr_host_map_entry *map)
{
    free(map);
}

int qr_host_map_read(const char *path, uint32_t n_hosts, qr_host_map_entry **out, size_t *n,
                     char *errbuf)
{
    if (!path || !out || !n)
        return qri_err(errbuf, QR_EINVAL, "host map: NULL argument");
    *out = NULL;
    *n = 0;
    qr_lines *l;
    int rc = qr_lines_open(&l, path, errbuf);
    if (rc)
        return rc;
    qri_map seen;
    if (qri_map_init(&seen)) {
        qr_lines_close(l);
        return QR_ENOMEM;
    }
    qr_host_map_entry *v = NULL;
    size_t cap = 0, count = 0;
    char *line;
    size_t len;
    long no;
    while ((rc = qr_lines_next(l, &line, &len, &no, errbuf)) == QR_OK) {
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *field[4];
        int nf = 0;
        for (char *p = s; nf < 4; nf++) {
            field[nf] = p;
            p = strchr(p, ',');
            if (!p) {
                nf++;
                break;
            }
            *p++ = '\0';
        }
        for (int i = 0; i < nf; i++)
            field[i] = trim(field[i]);
        if (count == 0 && !strcmp(field[0], "address"))
            continue; /* the header */
        if (nf < 2 || nf > 3) {
            rc = qri_err(errbuf, QR_ESYNTAX,
                         "%s:%ld: expected address,host[,capture], found %d field%s", path, no, nf,
                         nf == 1 ? "" : "s");
            break;
        }
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            qr_host_map_entry *w = realloc(v, cap * sizeof *w);
            if (!w) {
                rc = QR_ENOMEM;
                break;
            }
            v = w;
        }
        qr_host_map_entry *e = &v[count];
        memset(e, 0, sizeof *e);
        e->line = no;
        if (qr_addr_parse(field[0], e->addr) != QR_OK) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: address '%s' is not an IPv4 or IPv6 address",
                         path, no, field[0]);
            break;
        }
        char *end;
        errno = 0;
        unsigned long long h = strtoull(field[1], &end, 10);
        if (!*field[1] || *end || errno || field[1][0] == '-' || h >= n_hosts) {
            rc = qri_err(errbuf, QR_EVALUE,
                         "%s:%ld: host '%s' is not a host of the topology (0 .. %" PRIu32 ")", path,
                         no, field[1], n_hosts ? n_hosts - 1 : 0);
            break;
        }
        e->host = (uint32_t)h;
        if (nf == 3 && qri_strlcpy(e->capture, field[2], sizeof e->capture)) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: capture name longer than %zu bytes", path, no,
                         sizeof e->capture - 1);
            break;
        }
        uintptr_t prev = (uintptr_t)qri_map_get(&seen, key_hi(e->addr), key_lo(e->addr));
        if (prev) {
            rc = qri_err(errbuf, QR_EDUP, "%s:%ld: address %s was already given on line %ld", path,
                         no, field[0], v[prev - 1].line);
            break;
        }
        if (qri_map_put(&seen, key_hi(e->addr), key_lo(e->addr), (void *)(uintptr_t)(count + 1))) {
            rc = QR_ENOMEM;
            break;
        }
        count++;
    }
    qr_lines_close(l);
    qri_map_free(&seen);
    if (rc == QR_END && count == 0)
        rc = qri_err(errbuf, QR_ESYNTAX, "%s: no address in the host map", path);
    if (rc != QR_END) {
        free(v);
        return rc;
    }
    *out = v;
    *n = count;
    return QR_OK;
}

struct owner_count {
    uint8_t addr[16];
    uint64_t n;
};

static void pick(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2;
    struct owner_count *c = value, *best = ctx;
    if (c->n > best->n || (c->n == best->n && best->n && memcmp(c->addr, best->addr, 16) < 0))
        *best = *c;
}

static void free_value(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2, (void)ctx;
    free(value);
}

int qr_capture_owner(const char *path, uint8_t addr[16], uint64_t *sent, qr_capture_stats *stats,
                     char *errbuf)
{
    qr_capture *c;
    int rc = qr_capture_open(&c, path, errbuf);
    if (rc)
        return rc;
    qri_map counts;
    if (qri_map_init(&counts)) {
        qr_capture_close(c);
        return QR_ENOMEM;
    }
    qr_capture_packet p;
    while ((rc = qr_capture_next(c, &p, errbuf)) == QR_OK) {
        struct owner_count *x = qri_map_get(&counts, key_hi(p.src), key_lo(p.src));
        if (!x) {
            x = calloc(1, sizeof *x);
            if (!x || qri_map_put(&counts, key_hi(p.src), key_lo(p.src), x)) {
                free(x);
                rc = QR_ENOMEM;
                break;
            }
            memcpy(x->addr, p.src, 16);
        }
        x->n++;
    }
    qr_capture_stats st;
    qr_capture_stats_get(c, &st);
    if (stats)
        *stats = st;
    struct owner_count best = {{0}, 0};
    if (rc == QR_END) {
        rc = QR_OK;
        qri_map_foreach(&counts, pick, &best);
        if (best.n == 0) {
            char counts_text[512] = "";
            size_t used = 0;
            for (int i = 0; i < QR_SKIP_COUNT; i++)
                if (st.skipped[i] && used < sizeof counts_text)
                    used += (size_t)snprintf(counts_text + used, sizeof counts_text - used,
                                             "%s%" PRIu64 " %s", used ? ", " : "", st.skipped[i],
                                             qr_skip_name(i));
            rc = qri_err(errbuf, QR_ENOTFOUND, "%s: no TCP packet in %" PRIu64 " frames%s%s", path,
                         st.frames, used ? ": " : "", counts_text);
        }
    }
    qri_map_foreach(&counts, free_value, NULL);
    qri_map_free(&counts);
    qr_capture_close(c);
    if (rc)
        return rc;
    memcpy(addr, best.addr, 16);
    if (sent)
        *sent = best.n;
    return QR_OK;
}
