/* The truth of a multi-tier service's run (tiers_truth.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/common.h"
#include "qreplay/error.h"
#include "qreplay/textio.h"
#include "qreplay/tiers_truth.h"
#include "qreplay/txn.h"

#define TRUTH_MAGIC "# qreplay tiers-truth 1"
#define TRUTH_SPEC "# spec: "
#define TRUTH_HEADER "conn,index,id,parent,src,dst,true_send_ns,true_recv_ns"

struct qr_tiers_truth {
    qr_tiers_spec spec;
    qr_tiers_truth_row *rows; /* sorted by connection, then place */
    size_t n;
};

/* The spec on one line: each line's comment dropped, its items joined by "; ". Returns 0 or -1
 * (too long). */
static int spec_line(const char *text, char *out, size_t size)
{
    size_t k = 0;
    out[0] = '\0';
    while (*text) {
        const char *nl = strchr(text, '\n'), *end = nl ? nl : text + strlen(text);
        const char *hash = memchr(text, '#', (size_t)(end - text));
        const char *stop = hash ? hash : end;
        while (text < stop && (*text == ' ' || *text == '\t' || *text == '\r' || *text == ';'))
            text++;
        while (stop > text &&
               (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r' || stop[-1] == ';'))
            stop--;
        if (stop > text) {
            int w = snprintf(out + k, size - k, "%s%.*s", k ? "; " : "", (int)(stop - text), text);
            if (w < 0 || (size_t)w >= size - k)
                return -1;
            k += (size_t)w;
        }
        text = nl ? nl + 1 : end;
    }
    return 0;
}

struct wctx {
    const char *spec, *comment;
    const qr_tiers_truth_row *rows;
    size_t n;
};

static void put_time(FILE *f, int64_t t, const char *sep)
{
    if (t == QR_TRUTH_NO_TIME)
        fprintf(f, "-%s", sep);
    else
        fprintf(f, "%" PRId64 "%s", t, sep);
}

static void write_all(FILE *f, const void *ctx)
{
    const struct wctx *w = ctx;
    fprintf(f, "%s\n%s%s\n", TRUTH_MAGIC, TRUTH_SPEC, w->spec);
    if (w->comment)
        for (const char *c = w->comment; *c;) { /* each line of the comment as a '#' line */
            const char *nl = strchr(c, '\n');
            int len = nl ? (int)(nl - c) : (int)strlen(c);
            fprintf(f, "# %.*s\n", len, c);
            c += len + (nl != NULL);
        }
    fprintf(f, "%s\n", TRUTH_HEADER);
    for (size_t i = 0; i < w->n; i++) {
        const qr_tiers_truth_row *r = &w->rows[i];
        fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",", r->conn, r->index, r->id);
        if (r->parent == QR_TIER_NO_PARENT)
            fputs("-,", f);
        else
            fprintf(f, "%" PRIu64 ",", r->parent);
        fprintf(f, "%" PRIu32 ",%" PRIu32 ",", r->src, r->dst);
        put_time(f, r->true_send_ns, ",");
        put_time(f, r->true_recv_ns, "\n");
    }
}

int qr_tiers_truth_write(const char *path, const char *spec_text, const qr_tiers_truth_row *rows,
                         size_t n, const char *comment, char *errbuf)
{
    char *spec = malloc(QR_TIERS_SPEC_TEXT);
    if (!spec)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    if (spec_line(spec_text, spec, QR_TIERS_SPEC_TEXT)) {
        free(spec);
        return qri_err(errbuf, QR_EVALUE, "%s: the service's spec is longer than %d bytes", path,
                       QR_TIERS_SPEC_TEXT);
    }
    struct wctx w = {spec, comment, rows, n};
    int rc = qr_write_text_file(path, write_all, &w, errbuf);
    free(spec);
    return rc;
}

static int cmp_row(const void *x, const void *y)
{
    const qr_tiers_truth_row *a = x, *b = y;
    int c = strcmp(a->conn, b->conn);
    if (!c)
        c = (a->src > b->src) - (a->src < b->src);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* A number field up to max (or "-" where dash is allowed: *v = dash_value). Returns 0 or -1. */
static int number(const char *s, uint64_t max, int dash, uint64_t dash_value, uint64_t *v)
{
    if (dash && !strcmp(s, "-")) {
        *v = dash_value;
        return 0;
    }
    char *e;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long u = strtoull(s, &e, 10);
    if (*e || errno || u > max)
        return -1;
    *v = u;
    return 0;
}

static int time_field(const char *s, int64_t *t)
{
    if (!strcmp(s, "-")) {
        *t = QR_TRUTH_NO_TIME;
        return 0;
    }
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (e == s || *e || errno || v > QR_TIME_MAX || v < -QR_TIME_MAX)
        return -1;
    *t = v;
    return 0;
}

/* A connection's key as the matcher compares it: a number as is, ends lower first. */
static int conn_key(const char *s, char *out)
{
    uint64_t v;
    if (!number(s, UINT32_MAX, 0, 0, &v)) {
        snprintf(out, QR_MSG_ENDS_TEXT, "%" PRIu64, v);
        return 0;
    }
    qr_msg_ends e;
    if (qr_msg_ends_parse(s, &e))
        return -1;
    qr_msg_ends_text(&e, out, QR_MSG_ENDS_TEXT);
    return 0;
}

/* The comma-separated fields of line, cut in place: at most max (the rest stays in the last).
 * Returns how many. */
static int split_fields(char *line, char **f, int max)
{
    int nf = 0;
    for (char *cur = line; cur && nf < max;) {
        f[nf++] = cur;
        cur = strchr(cur, ',');
        if (cur)
            *cur++ = 0;
    }
    return nf;
}

static int parse_row(char *line, qr_tiers_truth_row *r, const char *path, long ln, char *errbuf)
{
    static const char *const names[] = {"conn", "index", "id",           "parent",
                                        "src",  "dst",   "true_send_ns", "true_recv_ns"};
    char *f[9];
    int nf = split_fields(line, f, 9);
    if (nf != 8)
        return qri_err(errbuf, QR_ESYNTAX, "%s:%ld: %d fields where a row has 8 (%s)", path, ln, nf,
                       TRUTH_HEADER);
    for (int i = 0; i < 8; i++)
        f[i] = qri_trim(f[i]);
    if (conn_key(f[0], r->conn))
        return qri_err(errbuf, QR_EVALUE,
                       "%s:%ld: conn '%s' is neither a connection number nor 'A:P-B:Q'", path, ln,
                       f[0]);
    uint64_t u[6];
    for (int i = 1; i < 6; i++) {
        uint64_t max = i >= 4 ? QR_MSG_HOSTS_MAX - 1 : UINT64_MAX - 2;
        if (number(f[i], max, i == 3, QR_TIER_NO_PARENT, &u[i]))
            return qri_err(errbuf, QR_EVALUE, "%s:%ld: %s '%s' is not %s", path, ln, names[i], f[i],
                           i >= 4   ? "a host number below 65536"
                           : i == 3 ? "a message id or -"
                                    : "a number");
    }
    r->index = u[1];
    r->id = u[2];
    r->parent = u[3];
    r->src = (uint32_t)u[4];
    r->dst = (uint32_t)u[5];
    if (time_field(f[6], &r->true_send_ns) || time_field(f[7], &r->true_recv_ns))
        return qri_err(errbuf, QR_EVALUE, "%s:%ld: %s is not a time in ns (within 2^62) or -", path,
                       ln, time_field(f[6], &r->true_send_ns) ? names[6] : names[7]);
    if (r->src == r->dst)
        return qri_err(errbuf, QR_EVALUE, "%s:%ld: a message from host %" PRIu32 " to itself", path,
                       ln, r->src);
    if (r->parent == r->id)
        return qri_err(errbuf, QR_EVALUE, "%s:%ld: message %" PRIu64 " is its own parent", path, ln,
                       r->id);
    return QR_OK;
}

static int cmp_u64(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

static int cmp_id(const void *x, const void *y)
{
    const qr_tiers_truth_row *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

/* No id twice, no place twice. */
static int check_unique(qr_tiers_truth *t, const char *path, char *errbuf)
{
    if (t->n) /* an empty truth has no rows to sort (and qsort takes no NULL) */
        qsort(t->rows, t->n, sizeof *t->rows, cmp_row);
    for (size_t i = 1; i < t->n; i++)
        if (!cmp_row(&t->rows[i - 1], &t->rows[i]))
            return qri_err(errbuf, QR_EVALUE,
                           "%s: connection %s's message %" PRIu64 " from host %" PRIu32
                           " is given twice",
                           path, t->rows[i].conn, t->rows[i].index, t->rows[i].src);
    uint64_t *ids = malloc((t->n ? t->n : 1) * sizeof *ids);
    if (!ids)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < t->n; i++)
        ids[i] = t->rows[i].id;
    qsort(ids, t->n, sizeof *ids, cmp_u64);
    int rc = QR_OK;
    for (size_t i = 1; !rc && i < t->n; i++)
        if (ids[i] == ids[i - 1])
            rc = qri_err(errbuf, QR_EVALUE, "%s: message id %" PRIu64 " is given twice", path,
                         ids[i]);
    free(ids);
    return rc;
}

/* One line after the first: the spec, a comment, the header or a row (state: 1 before the
 * spec, 2 before the header, 3 rows). */
static int truth_line(qr_tiers_truth *t, char *s, int *state, size_t *cap, const char *path,
                      long ln, char *errbuf)
{
    if (*state == 1 && !strncmp(s, TRUTH_SPEC, strlen(TRUTH_SPEC))) {
        char why[QR_ERRBUF_SIZE];
        *state = 2;
        if (qr_tiers_parse(s + strlen(TRUTH_SPEC), &t->spec, why))
            return qri_err(errbuf, QR_EVALUE, "%s:%ld: the service's spec: %s", path, ln, why);
        return QR_OK;
    }
    if (!*s || *s == '#')
        return QR_OK;
    if (*state == 1)
        return qri_err(errbuf, QR_EFORMAT, "%s:%ld: no '%s...' line before the rows", path, ln,
                       TRUTH_SPEC);
    if (*state == 2) {
        *state = 3;
        return strcmp(s, TRUTH_HEADER)
                   ? qri_err(errbuf, QR_EFORMAT, "%s:%ld: the header must be '%s'", path, ln,
                             TRUTH_HEADER)
                   : QR_OK;
    }
    if (qri_grow((void **)&t->rows, cap, t->n, sizeof *t->rows, 1024))
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    int rc = parse_row(s, &t->rows[t->n], path, ln, errbuf);
    t->n += rc == QR_OK;
    return rc;
}

int qr_tiers_truth_read(const char *path, qr_tiers_truth **out, char *errbuf)
{
    *out = NULL;
    qr_tiers_truth *t = calloc(1, sizeof *t);
    if (!t)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    qr_lines *l;
    int rc = qr_lines_open(&l, path, errbuf);
    char *line;
    size_t len, cap = 0;
    long ln;
    int state = 0;
    while (!rc && !(rc = qr_lines_next(l, &line, &len, &ln, errbuf))) {
        if (state == 0) {
            state = 1;
            if (strcmp(qri_trim(line), TRUTH_MAGIC))
                rc = qri_err(errbuf, QR_EFORMAT,
                             "%s:%ld: not a service's truth (its first line must be '%s')", path,
                             ln, TRUTH_MAGIC);
            continue;
        }
        rc = truth_line(t, qri_trim(line), &state, &cap, path, ln, errbuf);
    }
    qr_lines_close(l);
    if (rc == QR_END && state < 3)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: %s", path,
                     state == 0   ? "empty: not a service's truth"
                     : state == 1 ? "no spec line"
                                  : "no header line");
    if (rc == QR_END)
        rc = check_unique(t, path, errbuf);
    if (rc) {
        qr_tiers_truth_destroy(t);
        return rc;
    }
    *out = t;
    return QR_OK;
}

void qr_tiers_truth_destroy(qr_tiers_truth *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t);
}

const qr_tiers_spec *qr_tiers_truth_spec(const qr_tiers_truth *t)
{
    return &t->spec;
}

const qr_tiers_truth_row *qr_tiers_truth_rows(const qr_tiers_truth *t, size_t *n)
{
    *n = t->n;
    return t->rows;
}

/* (connection, sender, order) of a message, to count its place in its direction. */
struct place {
    uint64_t conn, src, i;
};

static int cmp_place(const void *x, const void *y)
{
    const struct place *a = x, *b = y;
    if (a->conn != b->conn)
        return (a->conn > b->conn) - (a->conn < b->conn);
    if (a->src != b->src)
        return (a->src > b->src) - (a->src < b->src);
    return (a->i > b->i) - (a->i < b->i);
}

/* The row at (key, index), or NULL. */
static const qr_tiers_truth_row *find_row(const qr_tiers_truth *t, const char *key, uint32_t src,
                                          uint64_t index)
{
    qr_tiers_truth_row k;
    snprintf(k.conn, sizeof k.conn, "%s", key);
    k.src = src;
    k.index = index;
    return bsearch(&k, t->rows, t->n, sizeof *t->rows, cmp_row);
}

int qr_tiers_truth_match(const qr_tiers_truth *t, const qr_msg *m, size_t n,
                         const qr_msg_ends *ends, size_t n_ends, uint64_t *true_parent,
                         int64_t *true_net_ns, qr_tiers_truth_match_report *rep, char *errbuf)
{
    memset(rep, 0, sizeof *rep);
    for (size_t i = 0; ends && i < n; i++)
        if (m[i].conn >= n_ends)
            return qri_err(errbuf, QR_EVALUE,
                           "truth: message %zu's connection %" PRIu32 " has no ends", i, m[i].conn);
    struct place *pl = malloc((n ? n : 1) * sizeof *pl);
    uint64_t *ids = malloc((n ? n : 1) * 2 * sizeof *ids); /* (id, message) pairs */
    const qr_tiers_truth_row **row = calloc(n ? n : 1, sizeof *row);
    if (!pl || !ids || !row) {
        free(pl);
        free(ids);
        free(row);
        return qri_err(errbuf, QR_ENOMEM, "truth: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        pl[i] = (struct place){m[i].conn, m[i].src, i};
    qsort(pl, n, sizeof *pl, cmp_place);
    size_t n_ids = 0;
    char key[QR_MSG_ENDS_TEXT];
    for (size_t j = 0, place = 0; j < n; j++) {
        place = j && pl[j - 1].conn == pl[j].conn && pl[j - 1].src == pl[j].src ? place + 1 : 0;
        size_t i = pl[j].i;
        if (ends)
            qr_msg_ends_text(&ends[m[i].conn], key, sizeof key);
        else
            snprintf(key, sizeof key, "%" PRIu32, m[i].conn);
        const qr_tiers_truth_row *r = find_row(t, key, m[i].src, place);
        if (r && (r->src != m[i].src || r->dst != m[i].dst)) {
            rep->wrong_hosts++;
            r = NULL;
        }
        row[i] = r;
        if (!r) {
            rep->no_truth++;
            continue;
        }
        rep->matched++;
        ids[2 * n_ids] = r->id;
        ids[2 * n_ids++ + 1] = i;
    }
    qsort(ids, n_ids, 2 * sizeof *ids, cmp_u64);
    rep->unobserved = t->n - rep->matched;
    for (size_t i = 0; i < n; i++) {
        const qr_tiers_truth_row *r = row[i];
        true_parent[i] = QR_TRUTH_NO_PARENT;
        true_net_ns[i] = QR_TRUTH_NO_TIME;
        if (!r)
            continue;
        if (r->true_send_ns != QR_TRUTH_NO_TIME && r->true_recv_ns != QR_TRUTH_NO_TIME)
            true_net_ns[i] = r->true_recv_ns - r->true_send_ns;
        if (r->parent == QR_TIER_NO_PARENT) {
            true_parent[i] = UINT64_MAX; /* paths.h's QR_PATHS_ROOT */
            continue;
        }
        uint64_t k[2] = {r->parent, 0};
        const uint64_t *hit = bsearch(k, ids, n_ids, 2 * sizeof *ids, cmp_u64);
        if (hit)
            true_parent[i] = hit[1];
        else
            rep->parent_unseen++;
    }
    free(pl);
    free(ids);
    free(row);
    return QR_OK;
}

/* One log line into the rows (S) or the reads (R: id, time pairs). */
static int gather_line(char *line, qr_tiers_truth_row **rows, size_t *n, size_t *cap,
                       uint64_t **reads, size_t *nr, size_t *cap_r, const char *path, long ln,
                       char *errbuf)
{
    char *f[9];
    int nf = split_fields(line, f, 9);
    int64_t t;
    uint64_t id;
    if (nf == 3 && !strcmp(f[0], "R")) {
        if (number(f[1], UINT64_MAX - 2, 0, 0, &id) || time_field(f[2], &t) ||
            t == QR_TRUTH_NO_TIME)
            return qri_err(errbuf, QR_EVALUE, "%s:%ld: 'R,ID,T' with a number and a time", path,
                           ln);
        if (qri_grow((void **)reads, cap_r, *nr + 1, 2 * sizeof **reads, 1024))
            return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
        (*reads)[2 * *nr] = id;
        (*reads)[2 * (*nr)++ + 1] = (uint64_t)t;
        return QR_OK;
    }
    if (nf != 8 || strcmp(f[0], "S"))
        return qri_err(errbuf, QR_ESYNTAX,
                       "%s:%ld: neither 'S,ENDS,INDEX,ID,PARENT,SRC,DST,T' nor 'R,ID,T'", path, ln);
    if (qri_grow((void **)rows, cap, *n, sizeof **rows, 1024))
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", path);
    /* the row's own reader, with the receive time unknown until its R line */
    char text[QR_LINE_MAX < 4096 ? QR_LINE_MAX : 4096];
    snprintf(text, sizeof text, "%s,%s,%s,%s,%s,%s,%s,-", f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
    int rc = parse_row(text, &(*rows)[*n], path, ln, errbuf);
    *n += rc == QR_OK;
    return rc;
}

int qr_tiers_truth_gather(const char *const *logs, size_t n, qr_tiers_truth_row **rows,
                          size_t *n_rows, qr_tiers_gather_report *rep, char *errbuf)
{
    *rows = NULL;
    *n_rows = 0;
    memset(rep, 0, sizeof *rep);
    size_t cap = 0, nr = 0, cap_r = 0;
    uint64_t *reads = NULL;
    int rc = QR_OK;
    for (size_t k = 0; !rc && k < n; k++) {
        qr_lines *l;
        if ((rc = qr_lines_open(&l, logs[k], errbuf)))
            break;
        char *line;
        size_t len;
        long ln;
        while (!rc && !(rc = qr_lines_next(l, &line, &len, &ln, errbuf))) {
            char *s = qri_trim(line);
            if (*s)
                rc = gather_line(s, rows, n_rows, &cap, &reads, &nr, &cap_r, logs[k], ln, errbuf);
        }
        qr_lines_close(l);
        rc = rc == QR_END ? QR_OK : rc;
    }
    qr_tiers_truth_row *r = *rows;
    if (!rc) { /* in order of id, each id once; each read joined to its send */
        if (*n_rows)
            qsort(r, *n_rows, sizeof *r, cmp_id);
        if (nr)
            qsort(reads, nr, 2 * sizeof *reads, cmp_u64);
        for (size_t i = 1; !rc && i < *n_rows; i++)
            if (r[i].id == r[i - 1].id)
                rc = qri_err(errbuf, QR_EVALUE, "message id %" PRIu64 " sent twice", r[i].id);
        for (size_t i = 0; !rc && i < nr; i++) {
            qr_tiers_truth_row key = {.id = reads[2 * i]};
            qr_tiers_truth_row *hit = bsearch(&key, r, *n_rows, sizeof *r, cmp_id);
            if (!hit) {
                rep->unknown_read++;
                continue;
            }
            hit->true_recv_ns = (int64_t)reads[2 * i + 1];
            rep->received++;
        }
        rep->sent = *n_rows;
        for (size_t i = 0; i < *n_rows; i++)
            rep->never_read += r[i].true_recv_ns == QR_TRUTH_NO_TIME;
    }
    free(reads);
    if (rc) {
        free(*rows);
        *rows = NULL;
        *n_rows = 0;
    }
    return rc;
}
