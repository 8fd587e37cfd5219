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
#include "qreplay/trace.h"

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

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

int qr_host_map_check_captures(const qr_host_map_entry *map, size_t n, const char *map_path,
                               const char *const *captures, size_t n_captures, char *errbuf)
{
    for (size_t i = 0; i < n; i++) {
        if (!map[i].capture[0])
            continue;
        int found = 0;
        for (size_t c = 0; c < n_captures && !found; c++) {
            const char *base = strrchr(captures[c], '/');
            found = !strcmp(base ? base + 1 : captures[c], map[i].capture);
        }
        if (!found)
            return qri_err(errbuf, QR_EVALUE,
                           "%s:%ld: capture %s was not given (name it among the captures, or "
                           "leave the map's third field empty)",
                           map_path, map[i].line, map[i].capture);
    }
    return QR_OK;
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
        char *s = qri_trim(line);
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
            field[i] = qri_trim(field[i]);
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
        /* one address per host: a second one would make half its traffic look like a host
         * talking to itself */
        for (size_t k = 0; k < count; k++)
            if (v[k].host == e->host) {
                rc = qri_err(errbuf, QR_EDUP,
                             "%s:%ld: host %u was already given on line %ld (one address per "
                             "host)",
                             path, no, e->host, v[k].line);
                break;
            }
        if (rc)
            break;
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
    uint64_t involved, sent;
    uint64_t near; /* handshakes whose timing puts the capture at this address */
};

static void conn_key(const qr_capture_packet *p, uint8_t key[36], int *src_first);

/* One connection's handshake as a capture saw it: where the capture was taken shows in its
 * timing. At the client, the SYN-ACK comes a round trip after the SYN and the client's ACK leaves
 * at once; at the server, the SYN-ACK leaves at once and the ACK comes a round trip later. */
/* How many times longer a round trip is than a host's turnaround, at least, for the handshake
 * to tell where it was captured. */
#define HANDSHAKE_RATIO 4

struct handshake {
    uint8_t client[16], server[16];
    int64_t syn_ns, synack_ns;
    uint32_t synack_seq;
    uint8_t state; /* 1: a SYN seen, 2: its SYN-ACK, 3: done */
};

/* Feed p to its connection's handshake; when the handshake ends, *near is the address the capture
 * was taken nearer to (NULL: the timing cannot tell). */
static int handshake_step(qri_map *hs, const qr_capture_packet *p, const uint8_t **near)
{
    *near = NULL;
    uint8_t key[36];
    int src_first;
    conn_key(p, key, &src_first);
    uint64_t k1, k2;
    qri_hash36(key, &k1, &k2);
    struct handshake *h = qri_map_get(hs, k1, k2);
    int syn = (p->tcp_flags & QR_TCP_SYN) != 0, ack = (p->tcp_flags & QR_TCP_ACK) != 0;
    if (!h) {
        if (!syn || ack)
            return QR_OK;
        if (!(h = calloc(1, sizeof *h)) || qri_map_put(hs, k1, k2, h)) {
            free(h);
            return QR_ENOMEM;
        }
    }
    if (syn && !ack && h->state <= 1) {
        memcpy(h->client, p->src, 16);
        memcpy(h->server, p->dst, 16);
        h->syn_ns = p->time_ns;
        h->state = 1;
    } else if (syn && ack && h->state >= 1 && h->state <= 2 && !memcmp(p->src, h->server, 16)) {
        h->synack_ns = p->time_ns;
        h->synack_seq = p->seq;
        h->state = 2;
    } else if (!syn && ack && h->state == 2 && !memcmp(p->src, h->client, 16) &&
               p->ack == h->synack_seq + 1u) {
        int64_t to_synack = h->synack_ns - h->syn_ns, to_ack = p->time_ns - h->synack_ns;
        h->state = 3;
        /* decisive only when one gap is a round trip and the other a host's turnaround: on a
         * path whose round trip is no longer than the hosts' own processing (a veth pair,
         * loopback), the timing cannot tell */
        if (to_synack >= 0 && to_ack >= 0 &&
            (to_ack < to_synack / HANDSHAKE_RATIO || to_synack < to_ack / HANDSHAKE_RATIO))
            *near = to_ack < to_synack ? h->client : h->server;
    }
    return QR_OK;
}

struct owner_pick {
    struct owner_count best, second; /* by packets involved in, then sent, then address */
};

static int better(const struct owner_count *a, const struct owner_count *b)
{
    if (a->involved != b->involved)
        return a->involved > b->involved;
    if (a->near != b->near)
        return a->near > b->near;
    if (a->sent != b->sent)
        return a->sent > b->sent;
    return memcmp(a->addr, b->addr, 16) < 0;
}

static void pick(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2;
    struct owner_count *c = value;
    struct owner_pick *p = ctx;
    if (!p->best.involved || better(c, &p->best)) {
        p->second = p->best;
        p->best = *c;
    } else if (!p->second.involved || better(c, &p->second)) {
        p->second = *c;
    }
}

static void free_value(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2, (void)ctx;
    free(value);
}

static struct owner_count *count_of(qri_map *m, const uint8_t a[16])
{
    struct owner_count *x = qri_map_get(m, key_hi(a), key_lo(a));
    if (x)
        return x;
    x = calloc(1, sizeof *x);
    if (!x || qri_map_put(m, key_hi(a), key_lo(a), x)) {
        free(x);
        return NULL;
    }
    memcpy(x->addr, a, 16);
    return x;
}

/* What tells whose capture it is, gathered packet by packet: each address's packets and the
 * handshakes' votes (qr_capture_owner; the scan gathers it too, for a mapped capture). */
struct owner_acc {
    qri_map counts, hs;
};

static int owner_acc_init(struct owner_acc *a)
{
    if (qri_map_init(&a->counts))
        return QR_ENOMEM;
    if (qri_map_init(&a->hs)) {
        qri_map_free(&a->counts);
        return QR_ENOMEM;
    }
    return QR_OK;
}

static int owner_acc_add(struct owner_acc *a, const qr_capture_packet *p)
{
    /* a packet from an address to itself (loopback, or a host talking to itself) is left out
     * of the recording and says nothing of which host's capture it is: counted, it would make
     * 127.0.0.1 the owner of an any-interface capture full of local traffic */
    if (!memcmp(p->src, p->dst, 16))
        return QR_OK;
    struct owner_count *s = count_of(&a->counts, p->src),
                       *d = s ? count_of(&a->counts, p->dst) : NULL;
    const uint8_t *near;
    if (!d || handshake_step(&a->hs, p, &near))
        return QR_ENOMEM;
    s->involved++;
    s->sent++;
    d->involved++;
    if (near)
        (!memcmp(near, s->addr, 16) ? s : d)->near++;
    return QR_OK;
}

/* The two best addresses; 1 when the best one is decided (not tied with the second). */
static int owner_acc_pick(struct owner_acc *a, struct owner_pick *best)
{
    memset(best, 0, sizeof *best);
    qri_map_foreach(&a->counts, pick, best);
    return best->best.involved > 0 &&
           (best->second.involved != best->best.involved || best->second.near != best->best.near);
}

static void owner_acc_free(struct owner_acc *a)
{
    qri_map_foreach(&a->hs, free_value, NULL);
    qri_map_free(&a->hs);
    qri_map_foreach(&a->counts, free_value, NULL);
    qri_map_free(&a->counts);
}

int qr_capture_owner(const char *path, uint8_t addr[16], uint64_t *sent, qr_capture_stats *stats,
                     char *errbuf)
{
    qr_capture *c;
    int rc = qr_capture_open(&c, path, errbuf);
    if (rc)
        return rc;
    qr_capture_dedup(c, QR_IMPORT_DEDUP_WINDOW);
    struct owner_acc acc;
    if (owner_acc_init(&acc)) {
        qr_capture_close(c);
        return QR_ENOMEM;
    }
    qr_capture_packet p;
    while ((rc = qr_capture_next(c, &p, errbuf)) == QR_OK)
        if (owner_acc_add(&acc, &p)) {
            rc = QR_ENOMEM;
            break;
        }
    qr_capture_stats st;
    qr_capture_stats_get(c, &st);
    if (stats)
        *stats = st;
    struct owner_pick best;
    memset(&best, 0, sizeof best);
    if (rc == QR_END) {
        rc = QR_OK;
        int decided = owner_acc_pick(&acc, &best);
        char a[QR_ADDR_TEXT_MAX], b[QR_ADDR_TEXT_MAX];
        if (best.best.involved == 0) {
            char counts_text[512] = "";
            size_t used = 0;
            for (int i = 0; i < QR_SKIP_COUNT; i++)
                if (st.skipped[i] && used < sizeof counts_text)
                    used += (size_t)snprintf(counts_text + used, sizeof counts_text - used,
                                             "%s%" PRIu64 " %s", used ? ", " : "", st.skipped[i],
                                             qr_skip_name(i));
            rc = qri_err(errbuf, QR_ENOTFOUND, "%s: no TCP packet in %" PRIu64 " frames%s%s", path,
                         st.frames, used ? ": " : "", counts_text);
        } else if (!decided) {
            rc = qri_err(errbuf, QR_EVALUE,
                         "%s: cannot tell whose capture it is: %s and %s both take part in all "
                         "%" PRIu64 " of its TCP packets and no handshake's timing tells which "
                         "end it was taken at; name its host in a host map (address,host,%s)",
                         path, qr_addr_text(best.best.addr, a, sizeof a),
                         qr_addr_text(best.second.addr, b, sizeof b), best.best.involved,
                         base_name(path));
        }
    }
    owner_acc_free(&acc);
    qr_capture_close(c);
    if (rc)
        return rc;
    memcpy(addr, best.best.addr, 16);
    if (sent)
        *sent = best.best.sent;
    return QR_OK;
}

/* ---- the first pass: connections and hosts ---- */

/* Per direction and per view (0: seen in the sender's own capture, 1: in another capture). */
struct seqtrack {
    uint32_t seq0, end;
    uint64_t bytes, packets;
    uint8_t known;
};

struct conn_acc {
    struct seqtrack t[2][2]; /* [side][view] */
};

/* The canonical key of a packet's connection: the smaller (address, port) first. */
static void conn_key(const qr_capture_packet *p, uint8_t key[36], int *src_first)
{
    int c = memcmp(p->src, p->dst, 16);
    *src_first = c < 0 || (c == 0 && p->src_port <= p->dst_port);
    const uint8_t *a = *src_first ? p->src : p->dst, *b = *src_first ? p->dst : p->src;
    uint16_t pa = *src_first ? p->src_port : p->dst_port;
    uint16_t pb = *src_first ? p->dst_port : p->src_port;
    memcpy(key, a, 16);
    memcpy(key + 16, b, 16);
    key[32] = (uint8_t)(pa >> 8), key[33] = (uint8_t)pa;
    key[34] = (uint8_t)(pb >> 8), key[35] = (uint8_t)pb;
}

/* The stream bytes a side sent: the range its data segments cover (a SYN fixes where the stream
 * starts; segments without payload, such as pure ACKs after a FIN, cover nothing). */
static void track(struct seqtrack *t, const qr_capture_packet *p)
{
    t->packets++;
    int syn = (p->tcp_flags & QR_TCP_SYN) != 0;
    if (!syn && p->payload == 0)
        return;
    uint32_t start = p->seq + (syn ? 1u : 0u);
    uint32_t end = start + p->payload;
    if (!t->known) {
        t->seq0 = start;
        t->end = end;
        t->bytes = p->payload;
        t->known = 1;
        return;
    }
    if ((int32_t)(end - t->end) > 0) {
        t->bytes += (uint32_t)(end - t->end);
        t->end = end;
    }
    if ((int32_t)(start - t->seq0) < 0) { /* data before the first seen: mid-connection start */
        t->bytes += (uint32_t)(t->seq0 - start);
        t->seq0 = start;
    }
}

struct scan_state {
    qr_import_scan *s;
    struct conn_acc *acc;
    size_t cap;
    qri_map index; /* (hash1, hash2) -> conn index + 1 */
};

static int conn_find(struct scan_state *st, const qr_capture_packet *p, uint32_t capture,
                     size_t *at, int *side)
{
    uint8_t key[36];
    int src_first;
    conn_key(p, key, &src_first);
    uint64_t k1, k2;
    qri_hash36(key, &k1, &k2);
    qr_import_scan *s = st->s;
    for (;; k2++) { /* probe past (practically impossible) collisions */
        uintptr_t v = (uintptr_t)qri_map_get(&st->index, k1, k2);
        if (!v)
            break;
        qr_import_conn *c = &s->conns[v - 1];
        if (!memcmp(c->addr[0], p->src, 16) && c->port[0] == p->src_port &&
            !memcmp(c->addr[1], p->dst, 16) && c->port[1] == p->dst_port) {
            *at = v - 1, *side = 0;
            return QR_OK;
        }
        if (!memcmp(c->addr[1], p->src, 16) && c->port[1] == p->src_port &&
            !memcmp(c->addr[0], p->dst, 16) && c->port[0] == p->dst_port) {
            *at = v - 1, *side = 1;
            return QR_OK;
        }
    }
    if (s->n_conns == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 64;
        qr_import_conn *c = realloc(s->conns, cap * sizeof *c);
        if (!c)
            return QR_ENOMEM;
        s->conns = c;
        struct conn_acc *a = realloc(st->acc, cap * sizeof *a);
        if (!a)
            return QR_ENOMEM;
        st->acc = a;
        st->cap = cap;
    }
    qr_import_conn *c = &s->conns[s->n_conns];
    memset(c, 0, sizeof *c);
    memset(&st->acc[s->n_conns], 0, sizeof st->acc[0]);
    /* the initiator: the SYN's sender, or the first packet's; a SYN+ACK's receiver */
    int flip = (p->tcp_flags & (QR_TCP_SYN | QR_TCP_ACK)) == (QR_TCP_SYN | QR_TCP_ACK);
    const qr_capture_packet q = *p;
    memcpy(c->addr[flip], q.src, 16);
    memcpy(c->addr[!flip], q.dst, 16);
    c->port[flip] = q.src_port;
    c->port[!flip] = q.dst_port;
    c->family = q.family;
    c->first_ns = q.time_ns;
    c->own_first_ns = INT64_MAX;
    c->capture = capture;
    if (qri_map_put(&st->index, k1, k2, (void *)(uintptr_t)(s->n_conns + 1)))
        return QR_ENOMEM;
    *at = s->n_conns++;
    *side = flip;
    return QR_OK;
}

void qr_import_scan_free(qr_import_scan *s)
{
    if (!s)
        return;
    free(s->owner);
    free(s->owner_host);
    free(s->stats);
    free(s->conns);
    free(s->addr);
    free(s->addr_host);
    free(s->first_ns);
    free(s->warning);
    if (s->index) {
        qri_map_free(s->index);
        free(s->index);
    }
    free(s);
}

int64_t qr_import_scan_host(const qr_import_scan *s, const uint8_t addr[16])
{
    if (!s->index)
        return -1;
    uintptr_t v = (uintptr_t)qri_map_get(s->index, key_hi(addr), key_lo(addr));
    return v ? (int64_t)s->addr_host[v - 1] : -1;
}

static int cmp_addr(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

/* Give every address a host: the map's, else capture owners in capture order, then the rest in
 * address order. */
static int assign_hosts(qr_import_scan *s, const qr_host_map_entry *map, size_t n_map,
                        uint32_t n_hosts, char *errbuf)
{
    size_t cap = 2 * s->n_conns + s->n_captures + 1;
    s->addr = malloc(cap * sizeof *s->addr);
    s->addr_host = malloc(cap * sizeof *s->addr_host);
    uint8_t *taken = calloc(n_hosts ? n_hosts : 1, 1);
    uint8_t(*rest)[16] = malloc(cap * sizeof *rest);
    int rc = QR_ENOMEM;
    s->index = malloc(sizeof(qri_map));
    if (s->index && qri_map_init(s->index)) {
        free(s->index);
        s->index = NULL;
    }
    if (!s->addr || !s->addr_host || !taken || !rest || !s->index)
        goto done;
    for (size_t i = 0; i < n_map; i++)
        taken[map[i].host] = 1;
    size_t n_rest = 0;
    for (size_t c = 0; c < s->n_captures; c++)
        memcpy(rest[n_rest++], s->owner[c], 16);
    size_t n_owners = n_rest;
    for (size_t i = 0; i < s->n_conns; i++)
        for (int k = 0; k < 2; k++)
            memcpy(rest[n_rest++], s->conns[i].addr[k], 16);
    qsort(rest + n_owners, n_rest - n_owners, 16, cmp_addr);
    uint32_t next = 0;
    for (size_t i = 0; i < n_rest; i++) {
        if (qr_import_scan_host(s, rest[i]) >= 0)
            continue;
        int64_t host = -1;
        for (size_t m = 0; m < n_map && host < 0; m++)
            if (!memcmp(map[m].addr, rest[i], 16))
                host = map[m].host;
        if (host < 0) {
            while (next < n_hosts && taken[next])
                next++;
            if (next >= n_hosts) {
                char t[QR_ADDR_TEXT_MAX];
                size_t total = 0;
                for (size_t j = 0; j < n_rest; j++) {
                    int dup = 0;
                    for (size_t k = 0; k < j && !dup; k++)
                        dup = !memcmp(rest[k], rest[j], 16);
                    total += !dup;
                }
                rc = qri_err(errbuf, QR_EVALUE,
                             "the captures hold %zu addresses but the topology has %" PRIu32
                             " hosts: %s is the first that does not fit (give a host map, or a "
                             "larger topology)",
                             total, n_hosts, qr_addr_text(rest[i], t, sizeof t));
                goto done;
            }
            host = next;
            taken[next] = 1;
        }
        memcpy(s->addr[s->n_addrs], rest[i], 16);
        s->addr_host[s->n_addrs++] = (uint32_t)host;
        if (qri_map_put(s->index, key_hi(rest[i]), key_lo(rest[i]),
                        (void *)(uintptr_t)s->n_addrs)) {
            rc = QR_ENOMEM;
            goto done;
        }
    }
    for (size_t c = 0; c < s->n_captures; c++)
        if (s->owner_host[c] == UINT32_MAX)
            s->owner_host[c] = (uint32_t)qr_import_scan_host(s, s->owner[c]);
    rc = QR_OK;
done:
    free(taken);
    free(rest);
    return rc;
}

int qr_import_scan_run(const char *const *captures, size_t n_captures, const qr_host_map_entry *map,
                       size_t n_map, uint32_t n_hosts, qr_import_scan **out, char *errbuf)
{
    if (!captures || !out || (!map && n_map) || n_captures == 0)
        return qri_err(errbuf, QR_EINVAL, "import: no capture");
    *out = NULL;
    for (size_t m = 0; m < n_map; m++)
        if (map[m].host >= n_hosts)
            return qri_err(errbuf, QR_EVALUE,
                           "host map line %ld: host %" PRIu32 " is not in the topology",
                           map[m].line, map[m].host);
    qr_import_scan *s = calloc(1, sizeof *s);
    struct scan_state st = {s, NULL, 0, {0}};
    if (!s || qri_map_init(&st.index)) {
        free(s);
        return QR_ENOMEM;
    }
    int rc = QR_ENOMEM;
    long *map_line = NULL;
    s->n_captures = n_captures;
    s->owner = calloc(n_captures, sizeof *s->owner);
    s->owner_host = malloc(n_captures * sizeof *s->owner_host);
    s->stats = calloc(n_captures, sizeof *s->stats);
    s->first_ns = malloc(n_captures * sizeof *s->first_ns);
    s->warning = calloc(n_captures, sizeof *s->warning);
    map_line = calloc(n_captures, sizeof *map_line); /* the map's line naming it, 0: none */
    if (!s->owner || !s->owner_host || !s->stats || !s->first_ns || !s->warning || !map_line)
        goto fail;
    /* each capture's owner: named by the map, else the address sending most */
    for (size_t c = 0; c < n_captures; c++) {
        s->owner_host[c] = UINT32_MAX;
        const qr_host_map_entry *named = NULL;
        for (size_t m = 0; m < n_map; m++) {
            if (!map[m].capture[0] || (strcmp(map[m].capture, captures[c]) &&
                                       strcmp(map[m].capture, base_name(captures[c]))))
                continue;
            if (named && named->host != map[m].host) {
                rc = qri_err(errbuf, QR_EVALUE,
                             "%s: the host map gives it to host %" PRIu32 " (line %ld) and to "
                             "host %" PRIu32 " (line %ld)",
                             captures[c], named->host, named->line, map[m].host, map[m].line);
                goto fail;
            }
            named = &map[m];
        }
        if (named) {
            memcpy(s->owner[c], named->addr, 16);
            s->owner_host[c] = named->host;
            map_line[c] = named->line;
        } else if ((rc = qr_capture_owner(captures[c], s->owner[c], NULL, NULL, errbuf)) != QR_OK) {
            goto fail;
        }
    }
    /* the connections */
    for (size_t c = 0; c < n_captures; c++) {
        qr_capture *r;
        if ((rc = qr_capture_open(&r, captures[c], errbuf)) != QR_OK)
            goto fail;
        qr_capture_dedup(r, QR_IMPORT_DEDUP_WINDOW);
        /* a mapped capture: what its own packets say of whose it is, to check the map */
        struct owner_acc acc;
        int check = map_line[c] != 0;
        if (check && owner_acc_init(&acc)) {
            qr_capture_close(r);
            rc = QR_ENOMEM;
            goto fail;
        }
        qr_capture_packet p;
        s->first_ns[c] = INT64_MAX;
        while ((rc = qr_capture_next(r, &p, errbuf)) == QR_OK) {
            if (check && owner_acc_add(&acc, &p)) {
                rc = QR_ENOMEM;
                break;
            }
            if (p.time_ns < s->first_ns[c])
                s->first_ns[c] = p.time_ns;
            size_t at;
            int side;
            if ((rc = conn_find(&st, &p, (uint32_t)c, &at, &side)) != QR_OK)
                break;
            qr_import_conn *k = &s->conns[at];
            int view = memcmp(p.src, s->owner[c], 16) != 0; /* 0: the sender's own capture */
            track(&st.acc[at].t[side][view], &p);
            if (side == 0 && view == 0 && p.time_ns < k->own_first_ns)
                k->own_first_ns = p.time_ns;
            if (side == 0 && (p.tcp_flags & (QR_TCP_SYN | QR_TCP_ACK)) == QR_TCP_SYN)
                k->syn = 1;
            if (p.tcp_flags & QR_TCP_FIN)
                k->fin[side] = 1;
        }
        qr_capture_stats_get(r, &s->stats[c]);
        qr_capture_close(r);
        if (check) {
            /* a map that contradicts the capture's own packets: said, not overruled */
            struct owner_pick best;
            char a[QR_ADDR_TEXT_MAX], b[QR_ADDR_TEXT_MAX];
            if (rc == QR_END && owner_acc_pick(&acc, &best) &&
                memcmp(best.best.addr, s->owner[c], 16))
                snprintf(s->warning[c], sizeof s->warning[c],
                         "%s: the host map (line %ld) gives it to %s, but %s takes part in more "
                         "of its packets or its handshakes' timing puts the capture there",
                         base_name(captures[c]), map_line[c],
                         qr_addr_text(s->owner[c], a, sizeof a),
                         qr_addr_text(best.best.addr, b, sizeof b));
            owner_acc_free(&acc);
        }
        if (rc != QR_END)
            goto fail;
    }
    /* each direction from its sender's capture where there is one, else as received */
    for (size_t i = 0; i < s->n_conns; i++)
        for (int side = 0; side < 2; side++) {
            const struct seqtrack *own = &st.acc[i].t[side][0], *other = &st.acc[i].t[side][1];
            const struct seqtrack *t = own->known ? own : other;
            s->conns[i].packets[side] = t->packets;
            s->conns[i].bytes[side] = t->bytes;
            s->conns[i].seq0[side] = t->seq0;
            s->conns[i].seq_end[side] = t->end;
            s->conns[i].seq_known[side] = t->known;
        }
    if ((rc = assign_hosts(s, map, n_map, n_hosts, errbuf)) != QR_OK)
        goto fail;
    free(st.acc);
    free(map_line);
    qri_map_free(&st.index);
    *out = s;
    return QR_OK;
fail:
    free(map_line);
    free(st.acc);
    qri_map_free(&st.index);
    qr_import_scan_free(s);
    return rc;
}
