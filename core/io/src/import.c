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
#include "qreplay/pcap_file.h"
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
        uintptr_t prev = (uintptr_t)qri_map_get(&seen, qri_addr_hi(e->addr), qri_addr_lo(e->addr));
        if (prev) {
            rc = qri_err(errbuf, QR_EDUP, "%s:%ld: address %s was already given on line %ld", path,
                         no, field[0], v[prev - 1].line);
            break;
        }
        if (qri_map_put(&seen, qri_addr_hi(e->addr), qri_addr_lo(e->addr),
                        (void *)(uintptr_t)(count + 1))) {
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

/* Where a capture was taken shows in the timing of each connection: the end it was taken next to
 * answers at once, the other a round trip later.
 *  - The handshake: at the client the SYN-ACK comes a round trip after the SYN and the client's ACK
 *    leaves at once; at the server the SYN-ACK leaves at once and the ACK comes a round trip later.
 *  - Without one (a capture that starts mid-connection): each end's quickest turnaround, from the
 *    other end's latest segment to the first acknowledgment covering it. */
/* How many times longer a round trip is than a host's turnaround, at least, for the timing to tell
 * where it was captured. */
#define HANDSHAKE_RATIO 4
/* How many turnarounds of each end, at least, for their quickest to tell where the capture was
 * taken: a lone ACK may have waited for the delayed-ACK timer (40 to 500 ms), and a lone answer
 * for its application. */
#define TURN_SAMPLES 3

struct conn_vote {
    uint8_t end[2][16]; /* the connection key's order */
    uint64_t packets;
    /* the handshake */
    uint8_t client, state; /* client: which end sent the SYN; state 1: a SYN seen, 2: its
                              SYN-ACK, 3: done */
    int64_t syn_ns, synack_ns;
    uint32_t synack_seq;
    int8_t hs_near; /* the end the handshake puts the capture at, -1: none */
    /* turnarounds */
    int64_t data_ns[2], turn_min[2];
    uint32_t turns[2];
    uint32_t data_end[2];
    uint8_t pending[2];
};

/* The end of v the capture was taken next to, -1 when its timing cannot tell: the handshake's
 * verdict unless the ends' quickest turnarounds say the other end answers quicker (a client that
 * was slow to send the handshake's last ACK); without a handshake, the turnarounds' when one is at
 * least HANDSHAKE_RATIO times the other (each the quickest of TURN_SAMPLES at least). */
static int vote_near(const struct conn_vote *v)
{
    if (v->hs_near >= 0) /* any turnaround against it is enough to doubt it */
        return v->turns[0] && v->turns[1] && v->turn_min[v->hs_near] > v->turn_min[!v->hs_near]
                   ? -1
                   : v->hs_near;
    if (v->turns[0] < TURN_SAMPLES || v->turns[1] < TURN_SAMPLES)
        return -1;
    if (v->turn_min[0] < v->turn_min[1] / HANDSHAKE_RATIO)
        return 0;
    if (v->turn_min[1] < v->turn_min[0] / HANDSHAKE_RATIO)
        return 1;
    return -1;
}

/* Feed p, sent by end e of its connection, to v. Returns 1 when p completed the handshake. */
static int vote_step(struct conn_vote *v, const qr_capture_packet *p, int e)
{
    int syn = (p->tcp_flags & QR_TCP_SYN) != 0, ack = (p->tcp_flags & QR_TCP_ACK) != 0;
    int done = 0;
    v->packets++;
    if (syn && !ack && v->state <= 1) {
        v->client = (uint8_t)e;
        v->syn_ns = p->time_ns;
        v->state = 1;
    } else if (syn && ack && v->state >= 1 && v->state <= 2 && e != v->client) {
        v->synack_ns = p->time_ns;
        v->synack_seq = p->seq;
        v->state = 2;
    } else if (!syn && ack && v->state == 2 && e == v->client && p->ack == v->synack_seq + 1u) {
        int64_t to_synack = v->synack_ns - v->syn_ns, to_ack = p->time_ns - v->synack_ns;
        v->state = 3;
        done = 1;
        /* decisive only when one gap is a round trip and the other a host's turnaround: on a
         * path whose round trip is no longer than the hosts' own processing (a veth pair,
         * loopback), the timing cannot tell */
        if (to_synack >= 0 && to_ack >= 0 &&
            (to_ack < to_synack / HANDSHAKE_RATIO || to_synack < to_ack / HANDSHAKE_RATIO))
            v->hs_near = (int8_t)(to_ack < to_synack ? v->client : !v->client);
    }
    int o = !e;
    if (ack && v->pending[o] && (int32_t)(p->ack - v->data_end[o]) >= 0) {
        int64_t t = p->time_ns - v->data_ns[o];
        if (t >= 0) {
            v->turns[e]++;
            if (t < v->turn_min[e])
                v->turn_min[e] = t;
        }
        v->pending[o] = 0;
    }
    uint32_t len = qr_tcp_seq_len(p->payload, p->tcp_flags);
    if (len) {
        v->data_ns[e] = p->time_ns;
        v->data_end[e] = p->seq + len;
        v->pending[e] = 1;
    }
    return done;
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
    struct owner_count *x = qri_map_get(m, qri_addr_hi(a), qri_addr_lo(a));
    if (x)
        return x;
    x = calloc(1, sizeof *x);
    if (!x || qri_map_put(m, qri_addr_hi(a), qri_addr_lo(a), x)) {
        free(x);
        return NULL;
    }
    memcpy(x->addr, a, 16);
    return x;
}

/* What tells whose capture it is, gathered packet by packet: each address's packets, and each
 * connection's timing (qr_capture_owner and the scan). */
struct owner_acc {
    qri_map counts, conns;
};

static int owner_acc_init(struct owner_acc *a)
{
    if (qri_map_init(&a->counts))
        return QR_ENOMEM;
    if (qri_map_init(&a->conns)) {
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
    if (!d)
        return QR_ENOMEM;
    uint8_t key[36];
    int src_first;
    conn_key(p, key, &src_first);
    uint64_t k1, k2;
    qri_hash36(key, &k1, &k2);
    struct conn_vote *v = qri_map_get(&a->conns, k1, k2);
    if (!v) {
        if (!(v = calloc(1, sizeof *v)) || qri_map_put(&a->conns, k1, k2, v)) {
            free(v);
            return QR_ENOMEM;
        }
        memcpy(v->end[0], key, 16);
        memcpy(v->end[1], key + 16, 16);
        v->hs_near = -1;
        v->turn_min[0] = v->turn_min[1] = INT64_MAX;
    }
    int e = !src_first;
    s->involved++;
    s->sent++;
    d->involved++;
    if (vote_step(v, p, e) && v->hs_near >= 0)
        (v->hs_near == e ? s : d)->near++;
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
    qri_map_foreach(&a->conns, free_value, NULL);
    qri_map_free(&a->conns);
    qri_map_foreach(&a->counts, free_value, NULL);
    qri_map_free(&a->counts);
}

/* The other hosts a capture holds in view: a capture taken at a router or a mirror port holds
 * connections of several hosts. Each connection none of the owner's covers goes to the end its
 * timing puts the capture next to (vote_near); those ends, the one most connections point to
 * first, are its other hosts. A connection whose timing cannot tell stays out (counted by the
 * import as not the capture's host's). */
struct near_addr {
    uint8_t addr[16];
    uint64_t votes, packets;
};

struct locals_acc {
    const uint8_t *owner;
    qri_map votes; /* address -> struct near_addr */
    int oom;
};

/* The end of a connection the owner takes no part in that its timing puts the capture next to;
 * -1: the owner's connection, or the timing cannot tell. */
static int near_other(const struct conn_vote *v, const uint8_t *owner)
{
    if (!memcmp(v->end[0], owner, 16) || !memcmp(v->end[1], owner, 16))
        return -1;
    return vote_near(v);
}

static void gather_near(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2;
    const struct conn_vote *v = value;
    struct locals_acc *l = ctx;
    int near = near_other(v, l->owner);
    if (near < 0)
        return;
    const uint8_t *a = v->end[near];
    struct near_addr *x = qri_map_get(&l->votes, qri_addr_hi(a), qri_addr_lo(a));
    if (!x) {
        if (!(x = calloc(1, sizeof *x)) ||
            qri_map_put(&l->votes, qri_addr_hi(a), qri_addr_lo(a), x)) {
            free(x);
            l->oom = 1;
            return;
        }
        memcpy(x->addr, a, 16);
    }
    x->votes++;
    x->packets += v->packets;
}

static void count_value(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2, (void)value;
    ++*(size_t *)ctx;
}

struct near_list {
    struct near_addr *v;
    size_t n;
};

static void list_near(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2;
    struct near_list *l = ctx;
    l->v[l->n++] = *(const struct near_addr *)value;
}

static int cmp_near(const void *a, const void *b)
{
    const struct near_addr *x = a, *y = b;
    if (x->votes != y->votes)
        return x->votes > y->votes ? -1 : 1;
    if (x->packets != y->packets)
        return x->packets > y->packets ? -1 : 1;
    return memcmp(x->addr, y->addr, 16);
}

/* The candidates' ranks, and each candidate's connections by the rank of their far end (0: not a
 * candidate), as compressed rows: far[first[i] .. first[i + 1]). */
struct adj_acc {
    const uint8_t *owner;
    qri_map *rank; /* address -> index in the sorted list + 1 */
    size_t *first, *fill;
    size_t *far;
};

static void adj_count(uint64_t k1, uint64_t k2, void *value, void *ctx)
{
    (void)k1, (void)k2;
    const struct conn_vote *v = value;
    struct adj_acc *a = ctx;
    int near = near_other(v, a->owner);
    if (near < 0)
        return;
    size_t i =
        (uintptr_t)qri_map_get(a->rank, qri_addr_hi(v->end[near]), qri_addr_lo(v->end[near])) - 1;
    size_t f =
        (uintptr_t)qri_map_get(a->rank, qri_addr_hi(v->end[!near]), qri_addr_lo(v->end[!near]));
    if (a->far)
        a->far[a->fill[i]++] = f;
    else
        a->first[i + 1]++;
}

/* The capture's other hosts, in order, into *out (caller frees) and *n. A candidate is taken when
 * one of its connections has a far end not taken before it (two hosts of a mirror talking to each
 * other need one of them only). */
static int owner_acc_locals(struct owner_acc *a, const uint8_t owner[16], uint8_t (**out)[16],
                            size_t *n)
{
    *out = NULL;
    *n = 0;
    struct locals_acc l = {owner, {0}, 0};
    if (qri_map_init(&l.votes))
        return QR_ENOMEM;
    qri_map_foreach(&a->conns, gather_near, &l);
    size_t count = 0;
    qri_map_foreach(&l.votes, count_value, &count);
    struct near_list list = {NULL, 0};
    qri_map rank;
    struct adj_acc adj = {owner, &rank, NULL, NULL, NULL};
    uint8_t *taken = NULL;
    int rc = QR_ENOMEM, rank_ok = !qri_map_init(&rank);
    if (l.oom || !rank_ok || !(list.v = malloc((count + 1) * sizeof *list.v)) ||
        !(*out = malloc((count + 1) * sizeof **out)) ||
        !(adj.first = calloc(count + 2, sizeof *adj.first)) ||
        !(adj.fill = malloc((count + 1) * sizeof *adj.fill)) || !(taken = calloc(count + 1, 1)))
        goto done;
    qri_map_foreach(&l.votes, list_near, &list);
    qsort(list.v, list.n, sizeof *list.v, cmp_near);
    for (size_t i = 0; i < list.n; i++)
        if (qri_map_put(&rank, qri_addr_hi(list.v[i].addr), qri_addr_lo(list.v[i].addr),
                        (void *)(uintptr_t)(i + 1)))
            goto done;
    qri_map_foreach(&a->conns, adj_count, &adj);
    for (size_t i = 0; i < list.n; i++) {
        adj.fill[i] = adj.first[i];
        adj.first[i + 1] += adj.first[i];
    }
    if (!(adj.far = malloc((adj.first[list.n] + 1) * sizeof *adj.far)))
        goto done;
    qri_map_foreach(&a->conns, adj_count, &adj);
    for (size_t i = 0; i < list.n; i++) {
        for (size_t j = adj.first[i]; j < adj.first[i + 1] && !taken[i]; j++) {
            size_t f = adj.far[j]; /* rank + 1 of the far end, 0: not a candidate */
            taken[i] = !f || f - 1 >= i || !taken[f - 1];
        }
        if (taken[i])
            memcpy((*out)[(*n)++], list.v[i].addr, 16);
    }
    rc = QR_OK;
done:
    qri_map_foreach(&l.votes, free_value, NULL);
    qri_map_free(&l.votes);
    if (rank_ok)
        qri_map_free(&rank);
    free(list.v);
    free(adj.first);
    free(adj.fill);
    free(adj.far);
    free(taken);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* Read every packet of a capture into acc; *st gets its counts. */
static int votes_read(const char *path, struct owner_acc *acc, qr_capture_stats *st, char *errbuf)
{
    qr_capture *c;
    int rc = qr_capture_open(&c, path, errbuf);
    if (rc)
        return rc;
    qr_capture_dedup(c, QR_IMPORT_DEDUP_WINDOW);
    qr_capture_packet p;
    while ((rc = qr_capture_next(c, &p, errbuf)) == QR_OK)
        if (owner_acc_add(acc, &p)) {
            rc = QR_ENOMEM;
            break;
        }
    qr_capture_stats_get(c, st);
    qr_capture_close(c);
    return rc == QR_END ? QR_OK : rc;
}

/* Whose capture it is, from its votes (qr_capture_owner's rule and errors). */
static int owner_decide(const char *path, struct owner_acc *acc, const qr_capture_stats *st,
                        struct owner_pick *best, char *errbuf)
{
    int decided = owner_acc_pick(acc, best);
    char a[QR_ADDR_TEXT_MAX], b[QR_ADDR_TEXT_MAX];
    if (best->best.involved == 0) {
        char counts_text[512] = "";
        size_t used = 0;
        for (int i = 0; i < QR_SKIP_COUNT; i++)
            if (st->skipped[i] && used < sizeof counts_text)
                used += (size_t)snprintf(counts_text + used, sizeof counts_text - used,
                                         "%s%" PRIu64 " %s", used ? ", " : "", st->skipped[i],
                                         qr_skip_name(i));
        return qri_err(errbuf, QR_ENOTFOUND, "%s: no TCP packet in %" PRIu64 " frames%s%s", path,
                       st->frames, used ? ": " : "", counts_text);
    }
    if (!decided)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: cannot tell whose capture it is: %s and %s both take part in all "
                       "%" PRIu64 " of its TCP packets and no handshake's timing tells which "
                       "end it was taken at; name its host in a host map (address,host,%s)",
                       path, qr_addr_text(best->best.addr, a, sizeof a),
                       qr_addr_text(best->second.addr, b, sizeof b), best->best.involved,
                       base_name(path));
    return QR_OK;
}

int qr_capture_owner(const char *path, uint8_t addr[16], uint64_t *sent, qr_capture_stats *stats,
                     char *errbuf)
{
    struct owner_acc acc;
    if (owner_acc_init(&acc))
        return QR_ENOMEM;
    qr_capture_stats st;
    memset(&st, 0, sizeof st);
    struct owner_pick best;
    memset(&best, 0, sizeof best);
    int rc = votes_read(path, &acc, &st, errbuf);
    if (stats)
        *stats = st;
    if (!rc)
        rc = owner_decide(path, &acc, &st, &best, errbuf);
    owner_acc_free(&acc);
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
    uint8_t have_id;
    uint16_t last_id;
    uint64_t id_up, id_back, id_other;
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
    if (p->family == 4 && !(p->tcp_flags & (QR_TCP_SYN | QR_TCP_RST))) {
        uint16_t up = (uint16_t)(p->ip_id - t->last_id), back = (uint16_t)(t->last_id - p->ip_id);
        if (t->have_id) {
            if (up && up <= QR_IPID_MAX_GAP)
                t->id_up++;
            else if (back && back <= QR_IPID_MAX_GAP)
                t->id_back++;
            else
                t->id_other++;
        }
        t->last_id = p->ip_id;
        t->have_id = 1;
    }
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
    free(s->view_capture);
    free(s->view_addr);
    free(s->view_how);
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
    uintptr_t v = (uintptr_t)qri_map_get(s->index, qri_addr_hi(addr), qri_addr_lo(addr));
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
    size_t cap = 2 * s->n_conns + s->n_views + 1;
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
    for (size_t v = 0; v < s->n_views; v++) /* each capture's owner first, in capture order */
        if (s->view_how[v] != QR_VANTAGE_TIMING)
            memcpy(rest[n_rest++], s->view_addr[v], 16);
    for (size_t v = 0; v < s->n_views; v++)
        if (s->view_how[v] == QR_VANTAGE_TIMING)
            memcpy(rest[n_rest++], s->view_addr[v], 16);
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
        if (qri_map_put(s->index, qri_addr_hi(rest[i]), qri_addr_lo(rest[i]),
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

/* Append capture c's hosts in view: its owner (how), then others (by timing). */
static int add_views(qr_import_scan *s, uint32_t c, const uint8_t owner[16], int how,
                     const uint8_t (*others)[16], size_t n_others)
{
    size_t n = s->n_views + 1 + n_others;
    uint32_t *vc = realloc(s->view_capture, n * sizeof *vc);
    if (vc)
        s->view_capture = vc;
    uint8_t(*va)[16] = realloc(s->view_addr, n * sizeof *va);
    if (va)
        s->view_addr = va;
    uint8_t *vh = realloc(s->view_how, n);
    if (vh)
        s->view_how = vh;
    if (!vc || !va || !vh)
        return QR_ENOMEM;
    for (size_t i = 0; i <= n_others; i++) {
        size_t v = s->n_views++;
        s->view_capture[v] = c;
        memcpy(s->view_addr[v], i ? others[i - 1] : owner, 16);
        s->view_how[v] = (uint8_t)(i ? QR_VANTAGE_TIMING : how);
    }
    return QR_OK;
}

/* Capture c's owner (named by the map, else the address in the most packets; a map that
 * contradicts the packets is said in a warning, not overruled) and the other hosts it holds in
 * view. */
static int scan_owner(qr_import_scan *s, const char *const *captures, size_t c,
                      const qr_host_map_entry *map, size_t n_map, char *errbuf)
{
    int rc;
    s->owner_host[c] = UINT32_MAX;
    const qr_host_map_entry *named = NULL;
    for (size_t m = 0; m < n_map; m++) {
        if (!map[m].capture[0] ||
            (strcmp(map[m].capture, captures[c]) && strcmp(map[m].capture, base_name(captures[c]))))
            continue;
        if (named && named->host != map[m].host) {
            return qri_err(errbuf, QR_EVALUE,
                           "%s: the host map gives it to host %" PRIu32 " (line %ld) and to "
                           "host %" PRIu32 " (line %ld)",
                           captures[c], named->host, named->line, map[m].host, map[m].line);
        }
        named = &map[m];
    }
    struct owner_acc acc;
    if (owner_acc_init(&acc)) {
        return QR_ENOMEM;
    }
    qr_capture_stats st;
    struct owner_pick best;
    memset(&best, 0, sizeof best);
    rc = votes_read(captures[c], &acc, &st, errbuf);
    if (!rc && named) {
        memcpy(s->owner[c], named->addr, 16);
        s->owner_host[c] = named->host;
        /* a map that contradicts the capture's own packets: said, not overruled */
        char a[QR_ADDR_TEXT_MAX], b[QR_ADDR_TEXT_MAX];
        if (owner_acc_pick(&acc, &best) && memcmp(best.best.addr, s->owner[c], 16))
            snprintf(s->warning[c], sizeof s->warning[c],
                     "%s: the host map (line %ld) gives it to %s, but %s takes part in more "
                     "of its packets or its handshakes' timing puts the capture there",
                     base_name(captures[c]), named->line, qr_addr_text(s->owner[c], a, sizeof a),
                     qr_addr_text(best.best.addr, b, sizeof b));
    } else if (!rc && (rc = owner_decide(captures[c], &acc, &st, &best, errbuf)) == QR_OK) {
        memcpy(s->owner[c], best.best.addr, 16);
    }
    uint8_t(*others)[16] = NULL;
    size_t n_others = 0;
    if (!rc)
        rc = owner_acc_locals(&acc, s->owner[c], &others, &n_others);
    owner_acc_free(&acc);
    if (!rc)
        rc = add_views(s, (uint32_t)c, s->owner[c], named ? QR_VANTAGE_MAP : QR_VANTAGE_PACKETS,
                       others, n_others);
    free(others);
    return rc;
}

/* Capture c's connections: their packets per side and vantage (its hosts' own, or seen in
 * passing), first times, SYNs and FINs. */
static int scan_conns(qr_import_scan *s, struct scan_state *st, const char *const *captures,
                      size_t c, char *errbuf)
{
    int rc;
    qri_map in_view; /* the capture's hosts' addresses */
    if (qri_map_init(&in_view)) {
        return QR_ENOMEM;
    }
    rc = QR_OK;
    for (size_t v = 0; v < s->n_views && !rc; v++)
        if (s->view_capture[v] == c && qri_map_put(&in_view, qri_addr_hi(s->view_addr[v]),
                                                   qri_addr_lo(s->view_addr[v]), (void *)1))
            rc = QR_ENOMEM;
    qr_capture *r = NULL;
    if (rc || (rc = qr_capture_open(&r, captures[c], errbuf)) != QR_OK) {
        qri_map_free(&in_view);
        return rc;
    }
    qr_capture_dedup(r, QR_IMPORT_DEDUP_WINDOW);
    qr_capture_packet p;
    s->first_ns[c] = INT64_MAX;
    while ((rc = qr_capture_next(r, &p, errbuf)) == QR_OK) {
        if (p.time_ns < s->first_ns[c])
            s->first_ns[c] = p.time_ns;
        size_t at;
        int side;
        if ((rc = conn_find(st, &p, (uint32_t)c, &at, &side)) != QR_OK)
            break;
        qr_import_conn *k = &s->conns[at];
        /* 0: the sender's own capture */
        int view = !qri_map_get(&in_view, qri_addr_hi(p.src), qri_addr_lo(p.src));
        track(&st->acc[at].t[side][view], &p);
        if (side == 0 && view == 0 && p.time_ns < k->own_first_ns)
            k->own_first_ns = p.time_ns;
        if (side == 0 && (p.tcp_flags & (QR_TCP_SYN | QR_TCP_ACK)) == QR_TCP_SYN)
            k->syn = 1;
        if (p.tcp_flags & QR_TCP_FIN)
            k->fin[side] = 1;
    }
    qr_capture_stats_get(r, &s->stats[c]);
    qr_capture_close(r);
    qri_map_free(&in_view);
    return rc == QR_END ? QR_OK : rc;
}

/* Each direction from its sender's capture where there is one, else as received. */
static void scan_directions(qr_import_scan *s, const struct scan_state *st)
{
    for (size_t i = 0; i < s->n_conns; i++)
        for (int side = 0; side < 2; side++) {
            const struct seqtrack *own = &st->acc[i].t[side][0], *other = &st->acc[i].t[side][1];
            const struct seqtrack *t = own->known ? own : other;
            s->conns[i].packets[side] = t->packets;
            s->conns[i].bytes[side] = t->bytes;
            s->conns[i].seq0[side] = t->seq0;
            s->conns[i].seq_end[side] = t->end;
            s->conns[i].seq_known[side] = t->known;
            s->conns[i].id_up[side] = t->id_up;
            s->conns[i].id_back[side] = t->id_back;
            s->conns[i].id_other[side] = t->id_other;
        }
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
    s->n_captures = n_captures;
    s->owner = calloc(n_captures, sizeof *s->owner);
    s->owner_host = malloc(n_captures * sizeof *s->owner_host);
    s->stats = calloc(n_captures, sizeof *s->stats);
    s->first_ns = malloc(n_captures * sizeof *s->first_ns);
    s->warning = calloc(n_captures, sizeof *s->warning);
    if (!s->owner || !s->owner_host || !s->stats || !s->first_ns || !s->warning)
        goto fail;
    /* each capture's owner (named by the map, else the address in the most packets) and the
     * other hosts it holds in view */
    for (size_t c = 0; c < n_captures; c++)
        if ((rc = scan_owner(s, captures, c, map, n_map, errbuf)))
            goto fail;
    for (size_t c = 0; c < n_captures; c++)
        if ((rc = scan_conns(s, &st, captures, c, errbuf)))
            goto fail;
    scan_directions(s, &st);
    if ((rc = assign_hosts(s, map, n_map, n_hosts, errbuf)) != QR_OK)
        goto fail;
    free(st.acc);
    qri_map_free(&st.index);
    *out = s;
    return QR_OK;
fail:
    free(st.acc);
    qri_map_free(&st.index);
    qr_import_scan_free(s);
    return rc;
}
