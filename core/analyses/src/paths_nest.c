/* Causal paths: Project 5's nesting, the comparator of message linking (paths.h).
 *
 * On each connection the side whose first message reached the other before the other sent
 * anything is the caller: its messages are calls, the other side's returns, and a call's return
 * is the first message back sent after the call arrived (both on the callee's clock). A call
 * from A encloses what A did between its arrival and its return (A's clock); a call out of A is
 * nested in the latest call into A that arrived no more than the cutoff before it left and whose
 * return left A after this call's return came back. A message's parent is then the latest message
 * into its sender, within the call it is serving, before it left: the enclosing call itself or a
 * return of an earlier nested call. Messages with a time unknown are roots (nesting needs both). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "paths_internal.h"
#include "qreplay/error.h"

#define NONE UINT64_MAX

struct nest {
    const qr_msg *m;
    size_t n;
    int8_t *is_call;   /* 1 call, 0 return, -1 unknown */
    uint64_t *ret;     /* a call's return (NONE: none seen) */
    uint64_t *call_of; /* a return's call */
    uint64_t *encl;    /* a call's enclosing call (NONE: a root) */
};

static int known(const qr_msg *m)
{
    return m->send_ns != QR_MSG_UNTRACED && m->recv_ns != QR_MSG_UNTRACED;
}

static int cmp_conn(const void *a, const void *b, void *ctx)
{
    const qr_msg *m = ctx, *x = &m[*(const uint64_t *)a], *y = &m[*(const uint64_t *)b];
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->send_ns < y->send_ns ? -1 : x->send_ns > y->send_ns;
}

/* Roles and pairs on one connection: idx[a .. b) its messages, by sender then send time. */
static void pair_conn(struct nest *s, const uint64_t *idx, size_t a, size_t b)
{
    size_t mid = a;
    while (mid < b && s->m[idx[mid]].src == s->m[idx[a]].src)
        mid++;
    if (mid < b && s->m[idx[b - 1]].src != s->m[idx[mid]].src)
        return; /* more than two ends on one connection: no roles */
    const qr_msg *fa = &s->m[idx[a]], *fb = mid < b ? &s->m[idx[mid]] : NULL;
    /* the caller's first message arrived before the other side spoke */
    int a_calls = !fb || fa->recv_ns <= fb->send_ns;
    size_t c0 = a_calls ? a : mid, c1 = a_calls ? mid : b, r0 = a_calls ? mid : a,
           r1 = a_calls ? b : mid;
    size_t r = r0;
    for (size_t c = c0; c < c1; c++) {
        s->is_call[idx[c]] = 1;
        while (r < r1 && s->m[idx[r]].send_ns < s->m[idx[c]].recv_ns)
            r++;
        if (r < r1 && (c + 1 == c1 || s->m[idx[r]].recv_ns <= s->m[idx[c + 1]].send_ns)) {
            s->ret[idx[c]] = idx[r];
            s->call_of[idx[r]] = idx[c];
            s->is_call[idx[r]] = 0;
            r++;
        }
    }
}

/* Calls into each host by arrival: into[start[h] .. start[h + 1]). */
static int calls_into(const struct nest *s, uint32_t n_hosts, size_t **start, uint64_t **into)
{
    *start = calloc(n_hosts + 1, sizeof **start);
    *into = malloc((s->n ? s->n : 1) * sizeof **into);
    if (!*start || !*into)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->is_call[i] == 1) {
            (*into)[k++] = i;
            (*start)[s->m[i].dst + 1]++;
        }
    for (uint32_t h = 0; h < n_hosts; h++)
        (*start)[h + 1] += (*start)[h];
    return qri_sort(*into, k, sizeof **into, qri_paths_cmp_arrival, (void *)s->m);
}

/* The enclosing call of call c out of its sender A, or NONE. */
static uint64_t enclosing(const struct nest *s, const size_t *start, const uint64_t *into,
                          uint64_t c, int64_t cutoff)
{
    const qr_msg *m = &s->m[c];
    int64_t back = s->ret[c] != NONE ? s->m[s->ret[c]].recv_ns : m->send_ns;
    for (size_t j = start[m->src + 1]; j > start[m->src]; j--) {
        const qr_msg *p = &s->m[into[j - 1]];
        if (p->recv_ns > m->send_ns)
            continue;
        if (m->send_ns - p->recv_ns > cutoff)
            break;
        uint64_t pr = s->ret[into[j - 1]];
        if (pr == NONE || s->m[pr].send_ns >= back)
            return into[j - 1];
    }
    return NONE;
}

/* The latest return into host h, of a call nested in e (or made at the top level when e is NONE:
 * none), that came back no later than t; else e itself. kids: the calls nested in e. */
static uint64_t latest_in(const struct nest *s, uint64_t e, const uint64_t *kids, size_t n_kids,
                          int64_t t)
{
    uint64_t best = e;
    int64_t at = e != NONE ? s->m[e].recv_ns : INT64_MIN;
    for (size_t k = 0; k < n_kids; k++) {
        uint64_t r = s->ret[kids[k]];
        if (r != NONE && s->m[r].recv_ns <= t && s->m[r].recv_ns >= at) {
            best = r;
            at = s->m[r].recv_ns;
        }
    }
    return best;
}

static int by_encl(const void *a, const void *b, void *ctx)
{
    const uint64_t *encl = ctx, x = encl[*(const uint64_t *)a], y = encl[*(const uint64_t *)b];
    return x < y ? -1 : x > y;
}

/* Each message's parent from the calls' nesting. */
static int parents_of(struct nest *s, uint64_t *parent)
{
    uint64_t *calls = malloc((s->n ? s->n : 1) * sizeof *calls);
    if (!calls)
        return QR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->is_call[i] == 1 && s->encl[i] != NONE)
            calls[k++] = i;
    if (qri_sort(calls, k, sizeof *calls, by_encl, s->encl)) {
        free(calls);
        return QR_ENOMEM;
    }
    /* kids of call e: calls[kb[e] .. ke[e]) found by binary search over the sorted run */
    for (size_t i = 0; i < s->n; i++) {
        parent[i] = QR_PATHS_ROOT;
        uint64_t e = s->is_call[i] == 1 ? s->encl[i] : s->is_call[i] == 0 ? s->call_of[i] : NONE;
        if (e == NONE)
            continue;
        size_t lo = 0, hi = k;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->encl[calls[mid]] < e)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t end = lo;
        while (end < k && s->encl[calls[end]] == e)
            end++;
        parent[i] = latest_in(s, e, calls + lo, end - lo, s->m[i].send_ns);
    }
    free(calls);
    return QR_OK;
}

int qr_paths_nest(qr_paths **out, const qr_msg *m, size_t n, uint32_t n_hosts,
                  const qr_paths_opts *o, char *errbuf)
{
    qr_paths *p;
    int rc = qri_paths_new(&p, m, n, n_hosts, o, errbuf);
    if (rc)
        return rc;
    struct nest s = {m,
                     n,
                     malloc(n + 1),
                     malloc((n + 1) * sizeof *s.ret),
                     malloc((n + 1) * sizeof *s.call_of),
                     malloc((n + 1) * sizeof *s.encl)};
    uint64_t *idx = malloc((n + 1) * sizeof *idx), *parent = malloc((n + 1) * sizeof *parent);
    size_t *start = NULL, k = 0;
    uint64_t *into = NULL;
    rc = s.is_call && s.ret && s.call_of && s.encl && idx && parent ? QR_OK : QR_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        s.is_call[i] = -1;
        s.ret[i] = s.call_of[i] = s.encl[i] = NONE;
        if (known(&m[i]))
            idx[k++] = i;
    }
    if (!rc)
        rc = qri_sort(idx, k, sizeof *idx, cmp_conn, (void *)m);
    for (size_t a = 0, b; !rc && a < k; a = b) {
        for (b = a; b < k && m[idx[b]].conn == m[idx[a]].conn; b++)
            ;
        pair_conn(&s, idx, a, b);
    }
    if (!rc)
        rc = calls_into(&s, n_hosts, &start, &into);
    for (size_t i = 0; !rc && i < n; i++)
        if (s.is_call[i] == 1)
            s.encl[i] = enclosing(&s, start, into, i, p->o.cutoff_ns);
    if (!rc)
        rc = parents_of(&s, parent);
    if (!rc)
        rc = qri_paths_finish(p, parent, errbuf); /* destroys p on failure */
    else
        qr_paths_destroy(p);
    free(s.is_call);
    free(s.ret);
    free(s.call_of);
    free(s.encl);
    free(idx);
    free(parent);
    free(start);
    free(into);
    if (rc == QR_ENOMEM)
        return qri_err(errbuf, rc, "paths: out of memory");
    if (!rc)
        *out = p;
    return rc;
}
