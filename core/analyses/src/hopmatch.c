/* qreplay: the match expressions of qreplay trace (hoptrace.h): a tokenizer, a recursive-descent
 * parser into a node array, and the evaluation of a packet against it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/guided_plan.h"
#include "qreplay/hoptrace.h"
#include "qreplay/pcap_file.h"
#include "qreplay/topology.h"
#include "qreplay/units.h"

#include "internal.h"

#define EXPR_MAX 4096
#define HOP_ATOMS_MAX 64

enum {
    N_ALL,
    N_AND,
    N_OR,
    N_NOT,
    N_FLOW,   /* u1..u2 */
    N_DIR,    /* u1 */
    N_PACKET, /* u1 */
    N_SRC,    /* host u1 */
    N_DST,
    N_HOST,
    N_SPORT, /* u1 */
    N_DPORT,
    N_PORT,
    N_TUPLE,   /* hosts u1 > u2, ports p1, p2 (0: any) */
    N_FLAG,    /* u1: flag bits */
    N_PAYLOAD, /* carries data */
    N_DSCP,    /* u1: the DSCP */
    N_RETX,
    N_DETECTED,
    N_HOP,    /* hop atom u1 */
    N_AFTER,  /* first_ns >= t */
    N_BEFORE, /* first_ns < t */
};

typedef struct node {
    int kind;
    int a, b; /* children */
    uint64_t u1, u2;
    uint32_t p1, p2;
    int64_t t;
} node;

enum { A_DROPPED, A_DROP, A_TAGGED, A_VIA_SW, A_VIA_QUEUE, A_QUEUED };

typedef struct hop_atom {
    int kind;
    uint32_t sw, port;
    uint8_t reason;
    int64_t t;
} hop_atom;

struct qr_match {
    node *nodes;
    size_t n, cap;
    int root;
    hop_atom atoms[HOP_ATOMS_MAX];
    size_t n_atoms;
};

typedef struct token {
    char text[128];
    size_t col; /* from 1 */
    int is_word;
} token;

typedef struct parser {
    qr_match *m;
    token *tok;
    size_t n_tok, pos;
    const qr_recording *rec;
    const qr_flow_table *ft;
    qr_topology *topo;
    char *errbuf;
    int rc;
} parser;

static int fail(parser *p, const token *t, const char *fmt, const char *arg)
{
    char msg[QR_ERRBUF_SIZE];
    snprintf(msg, sizeof msg, fmt, arg);
    if (t)
        qri_err(p->errbuf, QR_EVALUE, "at '%s' (column %zu): %s", t->text, t->col, msg);
    else
        qri_err(p->errbuf, QR_EVALUE, "at the end: %s", msg);
    p->rc = QR_EVALUE;
    return -1;
}

static int tokenize(parser *p, const char *expr)
{
    size_t cap = 0;
    for (size_t i = 0; expr[i];) {
        char c = expr[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
            continue;
        }
        if (qri_grow((void **)&p->tok, &cap, p->n_tok, sizeof *p->tok, 16))
            return p->rc = qri_err(p->errbuf, QR_ENOMEM, "out of memory");
        token *t = &p->tok[p->n_tok++];
        memset(t, 0, sizeof *t);
        t->col = i + 1;
        if ((c == '&' || c == '|') && expr[i + 1] == c) {
            t->text[0] = t->text[1] = c;
            i += 2;
            continue;
        }
        if (c == '(' || c == ')' || c == '!' || c == '>') {
            t->text[0] = c;
            i++;
            continue;
        }
        if (c == '&' || c == '|') {
            snprintf(t->text, sizeof t->text, "%c", c);
            return fail(p, t, "%s", c == '&' ? "write '&&' or 'and'" : "write '||' or 'or'");
        }
        size_t n = 0;
        while (expr[i] && !strchr(" \t\r\n()!&|>", expr[i])) {
            if (n + 1 < sizeof t->text)
                t->text[n++] = expr[i];
            i++;
        }
        if (n + 1 >= sizeof t->text)
            return fail(p, t, "%s", "a word longer than 126 characters");
        t->is_word = 1;
    }
    return 0;
}

static const token *peek(parser *p)
{
    return p->pos < p->n_tok ? &p->tok[p->pos] : NULL;
}

static int is(const token *t, const char *a, const char *b)
{
    return t && (!strcmp(t->text, a) || (b && !strcmp(t->text, b)));
}

static int add_node(parser *p, node n)
{
    if (qri_grow((void **)&p->m->nodes, &p->m->cap, p->m->n, sizeof n, 16)) {
        p->rc = qri_err(p->errbuf, QR_ENOMEM, "out of memory");
        return -1;
    }
    p->m->nodes[p->m->n] = n;
    return (int)p->m->n++;
}

static int add_atom(parser *p, const token *t, hop_atom a)
{
    for (size_t i = 0; i < p->m->n_atoms; i++) {
        const hop_atom *x = &p->m->atoms[i];
        if (x->kind == a.kind && x->sw == a.sw && x->port == a.port && x->reason == a.reason &&
            x->t == a.t)
            return add_node(p, (node){.kind = N_HOP, .u1 = i});
    }
    if (p->m->n_atoms == HOP_ATOMS_MAX)
        return fail(p, t, "%s", "more than 64 different hop tests");
    p->m->atoms[p->m->n_atoms] = a;
    return add_node(p, (node){.kind = N_HOP, .u1 = p->m->n_atoms++});
}

/* The word after a keyword. */
static const token *arg(parser *p, const token *kw, const char *what)
{
    const token *t = peek(p);
    if (!t || !t->is_word) {
        fail(p, t ? t : kw, "expected %s", what);
        return NULL;
    }
    p->pos++;
    return t;
}

static int number(const char *s, uint64_t max, uint64_t *out)
{
    if (!*s || *s < '0' || *s > '9')
        return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* A host: hN or one of the hosts' IPv4 addresses. */
static int host_of(parser *p, const token *t, const char *s, uint32_t *host)
{
    uint32_t n = qr_flow_table_hosts(p->ft);
    uint64_t v;
    if (s[0] == 'h' && !number(s + 1, UINT32_MAX, &v)) {
        if (v >= n) {
            char msg[96];
            snprintf(msg, sizeof msg, "no host h%" PRIu64 " (the recording has hosts h0-h%u)", v,
                     n - 1);
            return fail(p, t, "%s", msg);
        }
        *host = (uint32_t)v;
        return 0;
    }
    unsigned b[4];
    char tail;
    if (sscanf(s, "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3], &tail) == 4 && b[0] < 256 &&
        b[1] < 256 && b[2] < 256 && b[3] < 256) {
        uint32_t addr = b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
        for (uint32_t h = 0; h < n; h++)
            if (qr_flow_table_host_addr(p->ft, h) == addr) {
                *host = h;
                return 0;
            }
        return fail(p, t, "no host of the recording has address %s", s);
    }
    return fail(p, t, "'%s' is not a host (hN or an IPv4 address)", s);
}

/* An endpoint H or H:P of a 5-tuple. */
static int endpoint(parser *p, const token *t, uint32_t *host, uint32_t *port)
{
    char h[128];
    snprintf(h, sizeof h, "%s", t->text);
    char *colon = strrchr(h, ':');
    *port = 0;
    if (colon) {
        *colon = '\0';
        uint64_t v;
        if (number(colon + 1, 65535, &v) || v == 0)
            return fail(p, t, "'%s' is not a port (1-65535)", colon + 1);
        *port = (uint32_t)v;
    }
    return host_of(p, t, h, host);
}

/* A node of `kind` whose u1 is the number after kw, 0..max ("a port number"; "a port"). */
static int number_node(parser *p, const token *kw, int kind, uint64_t max, const char *want,
                       const char *what)
{
    const token *t = arg(p, kw, want);
    uint64_t v;
    if (!t)
        return -1;
    char fmt[96];
    snprintf(fmt, sizeof fmt, "'%%s' is not %s (0-%" PRIu64 ")", what, max);
    if (number(t->text, max, &v))
        return fail(p, t, fmt, t->text);
    return add_node(p, (node){.kind = kind, .u1 = v});
}

static int port_arg(parser *p, const token *kw, int kind)
{
    return number_node(p, kw, kind, 65535, "a port number", "a port");
}

static int time_arg(parser *p, const token *kw, int64_t *out)
{
    const token *t = arg(p, kw, "a time (\"10us\")");
    char e[QR_ERRBUF_SIZE];
    if (!t)
        return -1;
    if (qr_parse_time_ns(t->text, out, e) || *out < 0)
        return fail(p, t, "'%s' is not a time such as 10us or 2ms", t->text);
    return 0;
}

static int via(parser *p, const token *kw)
{
    const token *t = arg(p, kw, "a switch (sN), a queue (sN:P) or a link (A>B)");
    if (!t)
        return -1;
    uint32_t n_sw = qr_topology_switches(p->topo);
    if (is(peek(p), ">", NULL)) {
        p->pos++;
        const token *b = arg(p, kw, "the link's other end");
        if (!b)
            return -1;
        char text[260], e[QR_ERRBUF_SIZE];
        snprintf(text, sizeof text, "%s>%s", t->text, b->text);
        uint32_t ids[2];
        size_t n;
        if (qr_topology_link_parse(p->topo, text, ids, &n, e)) {
            /* point at the end that is wrong: the message names it (or, for two ends that are
             * not linked, the second) */
            int second = strstr(e, "not linked") || (strstr(e, b->text) && !strstr(e, t->text));
            return fail(p, second ? b : t, "%s", e);
        }
        qr_node from, to;
        uint32_t port;
        qr_topology_link_ends(p->topo, ids[0], &from, &to, &port);
        if (from.kind == QR_NODE_HOST)
            return fail(p, t, "%s",
                        "a host's uplink has no switch queue (match the host with 'src hN')");
        return add_atom(p, t, (hop_atom){.kind = A_VIA_QUEUE, .sw = from.index, .port = port});
    }
    char s[128];
    snprintf(s, sizeof s, "%s", t->text);
    char *colon = strchr(s, ':');
    if (colon)
        *colon = '\0';
    uint64_t sw, port = 0;
    if (s[0] != 's' || number(s + 1, UINT32_MAX, &sw))
        return fail(p, t, "'%s' is not a switch (sN), a queue (sN:P) or a link (A>B)", t->text);
    if (sw >= n_sw) {
        char msg[96];
        snprintf(msg, sizeof msg, "no switch s%" PRIu64 " (the topology has switches s0-s%u)", sw,
                 n_sw - 1);
        return fail(p, t, "%s", msg);
    }
    if (!colon)
        return add_atom(p, t, (hop_atom){.kind = A_VIA_SW, .sw = (uint32_t)sw});
    uint32_t ports = qr_topology_ports(p->topo, (uint32_t)sw);
    if (number(colon + 1, UINT32_MAX, &port) || port >= ports) {
        char msg[96];
        snprintf(msg, sizeof msg, "no port %s at s%" PRIu64 " (it has ports 0-%u)", colon + 1, sw,
                 ports - 1);
        return fail(p, t, "%s", msg);
    }
    return add_atom(p, t,
                    (hop_atom){.kind = A_VIA_QUEUE, .sw = (uint32_t)sw, .port = (uint32_t)port});
}

static int parse_or(parser *p);

/* "drop REASON": a replay drop of that reason (a planted fault is refused: no trace sees it). */
static int drop_test(parser *p, const token *t)
{
    const token *r = arg(p, t, "a reason (threshold, buffer-full, tagged, silent, counted)");
    if (!r)
        return -1;
    static const int reasons[] = {QR_DROP_THRESHOLD, QR_DROP_BUFFER_FULL, QR_DROP_TAGGED,
                                  QR_TRACE_SILENT, QR_TRACE_COUNTED};
    for (size_t d = 0; d < sizeof reasons / sizeof reasons[0]; d++)
        if (!strcmp(r->text, qr_trace_decision_name(reasons[d])))
            return add_atom(p, r, (hop_atom){.kind = A_DROP, .reason = (uint8_t)reasons[d]});
    if (!strcmp(r->text, "fault"))
        return fail(p, r,
                    "'%s': a planted fault is what a trace cannot see (its scorer reads it); "
                    "'drop silent' matches the drops whose port counted none, as Everflow "
                    "infers them",
                    r->text);
    return fail(p, r, "'%s' is not a drop reason (threshold, buffer-full, tagged, silent, counted)",
                r->text);
}

/* "flow N" or "flow N-M": the recording's flows checked. */
static int flow_test(parser *p, const token *t)
{
    const token *v = arg(p, t, "a flow number or range N-M");
    if (!v)
        return -1;
    uint64_t lo, hi;
    char s[128];
    snprintf(s, sizeof s, "%s", v->text);
    char *dash = strchr(s, '-');
    if (dash)
        *dash = '\0';
    if (number(s, UINT32_MAX, &lo) || (dash && number(dash + 1, UINT32_MAX, &hi)))
        return fail(p, v, "'%s' is not a flow number or range N-M", v->text);
    if (!dash)
        hi = lo;
    size_t nf = qr_flow_table_flows(p->ft);
    if (hi < lo)
        return fail(p, v, "%s", "the range ends before it starts");
    if (hi >= nf) {
        char msg[96];
        snprintf(msg, sizeof msg, "the recording has flows 0-%zu", nf ? nf - 1 : 0);
        return fail(p, v, "%s", nf ? msg : "the recording has no flows");
    }
    return add_node(p, (node){.kind = N_FLOW, .u1 = lo, .u2 = hi});
}

/* "dir N": one direction of the recording. */
static int dir_test(parser *p, const token *t)
{
    const token *v = arg(p, t, "a direction number");
    uint64_t d;
    if (!v)
        return -1;
    size_t nd = qr_flow_table_directions(p->ft);
    if (number(v->text, UINT32_MAX, &d))
        return fail(p, v, "'%s' is not a direction number", v->text);
    if (d >= nd) {
        char msg[96];
        snprintf(msg, sizeof msg, "the recording has directions 0-%zu", nd ? nd - 1 : 0);
        return fail(p, v, "%s", msg);
    }
    return add_node(p, (node){.kind = N_DIR, .u1 = d});
}

/* "packet ID" or "packet DIR:NUMBER". */
static int packet_test(parser *p, const token *t)
{
    const token *v = arg(p, t, "a packet id or DIR:NUMBER");
    if (!v)
        return -1;
    uint64_t id, d, s;
    const char *colon = strchr(v->text, ':');
    if (colon) {
        char a[128];
        snprintf(a, sizeof a, "%.*s", (int)(colon - v->text), v->text);
        if (number(a, UINT32_MAX, &d) || number(colon + 1, UINT32_MAX, &s))
            return fail(p, v, "'%s' is not a packet (an id or DIR:NUMBER)", v->text);
        id = qr_packet_id((uint32_t)d, s);
    } else if (number(v->text, UINT64_MAX, &id)) {
        return fail(p, v, "'%s' is not a packet (an id or DIR:NUMBER)", v->text);
    }
    return add_node(p, (node){.kind = N_PACKET, .u1 = id});
}

/* "A>B": a 5-tuple's ends, each a host (hN or an address) with an optional port. */
static int tuple_test(parser *p, const token *t)
{
    if (!is(peek(p), ">", NULL))
        return fail(p, peek(p), "%s", "expected '>' between the ends of a 5-tuple (A>B)");
    p->pos++;
    const token *b = arg(p, t, "the destination of A>B");
    node n = {.kind = N_TUPLE};
    uint32_t sh, dh;
    if (!b || endpoint(p, t, &sh, &n.p1) || endpoint(p, b, &dh, &n.p2))
        return -1;
    n.u1 = sh;
    n.u2 = dh;
    return add_node(p, n);
}

static int primary(parser *p)
{
    const token *t = peek(p);
    if (!t)
        return fail(p, NULL, "%s", "expected a test (see qreplay trace --help)");
    if (is(t, "(", NULL)) {
        p->pos++;
        int e = parse_or(p);
        if (e < 0)
            return -1;
        if (!is(peek(p), ")", NULL))
            return fail(p, peek(p), "%s", "expected ')'");
        p->pos++;
        return e;
    }
    if (!t->is_word)
        return fail(p, t, "%s", "expected a test");
    p->pos++;
    const char *w = t->text;
    static const struct {
        const char *name;
        uint8_t bit;
    } flags[] = {{"fin", QR_TCP_FIN}, {"syn", QR_TCP_SYN}, {"rst", 0x04}, {"psh", 0x08},
                 {"ack", QR_TCP_ACK}, {"urg", 0x20},       {"ece", 0x40}, {"cwr", 0x80}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (!strcmp(w, flags[i].name))
            return add_node(p, (node){.kind = N_FLAG, .u1 = flags[i].bit});
    if (!strcmp(w, "all") || !strcmp(w, "any"))
        return add_node(p, (node){.kind = N_ALL});
    if (!strcmp(w, "payload"))
        return add_node(p, (node){.kind = N_PAYLOAD});
    if (!strcmp(w, "debug")) /* Everflow's debug bit (guided_plan.h) */
        return add_node(p, (node){.kind = N_DSCP, .u1 = QR_DEBUG_DSCP});
    if (!strcmp(w, "dscp"))
        return number_node(p, t, N_DSCP, 63, "a DSCP (0-63)", "a DSCP");
    if (!strcmp(w, "retransmit"))
        return add_node(p, (node){.kind = N_RETX});
    if (!strcmp(w, "detected"))
        return add_node(p, (node){.kind = N_DETECTED});
    if (!strcmp(w, "dropped"))
        return add_atom(p, t, (hop_atom){.kind = A_DROPPED});
    if (!strcmp(w, "tagged"))
        return add_atom(p, t, (hop_atom){.kind = A_TAGGED});
    if (!strcmp(w, "drop"))
        return drop_test(p, t);
    if (!strcmp(w, "via"))
        return via(p, t);
    if (!strcmp(w, "queued")) {
        int64_t ns;
        if (time_arg(p, t, &ns))
            return -1;
        return add_atom(p, t, (hop_atom){.kind = A_QUEUED, .t = ns});
    }
    if (!strcmp(w, "after") || !strcmp(w, "before")) {
        int64_t ns;
        if (time_arg(p, t, &ns))
            return -1;
        return add_node(p, (node){.kind = w[0] == 'a' ? N_AFTER : N_BEFORE, .t = ns});
    }
    if (!strcmp(w, "flow"))
        return flow_test(p, t);
    if (!strcmp(w, "dir"))
        return dir_test(p, t);
    if (!strcmp(w, "packet"))
        return packet_test(p, t);
    if (!strcmp(w, "src") || !strcmp(w, "dst") || !strcmp(w, "host")) {
        const token *v = arg(p, t, "a host (hN or an IPv4 address)");
        uint32_t h;
        if (!v || host_of(p, v, v->text, &h))
            return -1;
        int kind = w[0] == 's' ? N_SRC : w[0] == 'd' ? N_DST : N_HOST;
        return add_node(p, (node){.kind = kind, .u1 = h});
    }
    if (!strcmp(w, "sport"))
        return port_arg(p, t, N_SPORT);
    if (!strcmp(w, "dport"))
        return port_arg(p, t, N_DPORT);
    if (!strcmp(w, "port"))
        return port_arg(p, t, N_PORT);
    /* A>B */
    if (is(peek(p), ">", NULL) || ((w[0] == 'h' || (w[0] >= '0' && w[0] <= '9')) && peek(p)))
        return tuple_test(p, t);
    return fail(p, t, "'%s' is not a test (see qreplay trace --help for the grammar)", w);
}

static int unary(parser *p)
{
    if (is(peek(p), "not", "!")) {
        p->pos++;
        int a = unary(p);
        if (a < 0)
            return -1;
        return add_node(p, (node){.kind = N_NOT, .a = a});
    }
    return primary(p);
}

static int parse_and(parser *p)
{
    int a = unary(p);
    while (a >= 0 && is(peek(p), "and", "&&")) {
        p->pos++;
        int b = unary(p);
        if (b < 0)
            return -1;
        a = add_node(p, (node){.kind = N_AND, .a = a, .b = b});
    }
    return a;
}

static int parse_or(parser *p)
{
    int a = parse_and(p);
    while (a >= 0 && is(peek(p), "or", "||")) {
        p->pos++;
        int b = parse_and(p);
        if (b < 0)
            return -1;
        a = add_node(p, (node){.kind = N_OR, .a = a, .b = b});
    }
    return a;
}

int qr_match_parse(qr_match **out, const char *expr, const qr_recording *rec, char *errbuf)
{
    *out = NULL;
    if (!expr)
        expr = "all";
    if (strlen(expr) > EXPR_MAX)
        return qri_err(errbuf, QR_EVALUE, "the expression is longer than %d characters", EXPR_MAX);
    parser p = {.rec = rec, .ft = qr_recording_flows(rec), .errbuf = errbuf};
    p.m = calloc(1, sizeof *p.m);
    if (!p.m)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = qr_topology_of_config(&p.topo, qr_scenario_config(qr_recording_scenario(rec)));
    if (rc) {
        qr_match_free(p.m);
        return qri_err(errbuf, rc, "cannot build the recording's topology");
    }
    if (!tokenize(&p, expr)) {
        if (!p.n_tok) {
            fail(&p, NULL, "%s", "an empty expression (write 'all' for every packet)");
        } else {
            p.m->root = parse_or(&p);
            if (p.m->root >= 0 && p.pos < p.n_tok) {
                const token *t = peek(&p);
                if (is(t, ")", NULL))
                    fail(&p, t, "%s", "a ')' without its '('");
                else
                    fail(&p, t, "%s", "expected 'and' or 'or' before it");
            }
        }
    }
    free(p.tok);
    qr_topology_destroy(p.topo);
    if (p.rc) {
        qr_match_free(p.m);
        return p.rc;
    }
    *out = p.m;
    return QR_OK;
}

void qr_match_free(qr_match *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m);
}

uint64_t qr_match_hop(const qr_match *m, const qr_arrival *a, int64_t queue_ns)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < m->n_atoms; i++) {
        const hop_atom *x = &m->atoms[i];
        int hit = 0;
        switch (x->kind) {
        case A_DROPPED: break; /* where the trace stops: qr_match_fate */
        case A_DROP: hit = a->decision != QR_DROP_FAULT && a->decision == x->reason; break;
        case A_TAGGED: hit = a->tagged != 0; break;
        case A_VIA_SW: hit = a->sw == x->sw; break;
        case A_VIA_QUEUE: hit = a->sw == x->sw && a->port == x->port; break;
        case A_QUEUED: hit = a->decision == QR_ADMIT && queue_ns >= x->t; break;
        }
        if (hit)
            bits |= 1ull << i;
    }
    return bits;
}

uint64_t qr_match_fate(const qr_match *m, int fate)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < m->n_atoms; i++)
        if ((m->atoms[i].kind == A_DROP && m->atoms[i].reason == fate) ||
            (m->atoms[i].kind == A_DROPPED && fate != QR_ADMIT))
            bits |= 1ull << i;
    return bits;
}

const char *qr_trace_decision_name(int d)
{
    if (d == QR_TRACE_SILENT)
        return "silent";
    if (d == QR_TRACE_COUNTED)
        return "counted";
    if (d == QR_ADMIT || d == QR_DROP_THRESHOLD || d == QR_DROP_BUFFER_FULL || d == QR_DROP_TAGGED)
        return qr_decision_name((qr_decision)d);
    return "?";
}

static int eval(const qr_match *m, int i, const qr_match_packet *p)
{
    const node *n = &m->nodes[i];
    const qr_packet *k = p->pk;
    switch (n->kind) {
    case N_ALL: return 1;
    case N_AND: return eval(m, n->a, p) && eval(m, n->b, p);
    case N_OR: return eval(m, n->a, p) || eval(m, n->b, p);
    case N_NOT: return !eval(m, n->a, p);
    case N_FLOW: return qr_dir_flow(p->dir) >= n->u1 && qr_dir_flow(p->dir) <= n->u2;
    case N_DIR: return p->dir == n->u1;
    case N_PACKET: return p->packet == n->u1;
    case N_SRC: return p->src == n->u1;
    case N_DST: return p->dst == n->u1;
    case N_HOST: return p->src == n->u1 || p->dst == n->u1;
    case N_SPORT: return k && k->src_port == n->u1;
    case N_DPORT: return k && k->dst_port == n->u1;
    case N_PORT: return k && (k->src_port == n->u1 || k->dst_port == n->u1);
    case N_TUPLE:
        return p->src == n->u1 && p->dst == n->u2 && (!n->p1 || (k && k->src_port == n->p1)) &&
               (!n->p2 || (k && k->dst_port == n->p2));
    case N_FLAG: return k && (k->tcp_flags & n->u1);
    case N_PAYLOAD: return k && qr_tcp_payload(k) > 0;
    case N_DSCP: return k && (uint64_t)(k->tos >> 2) == n->u1;
    case N_RETX: return p->retransmit;
    case N_DETECTED: return p->detected;
    case N_HOP: return (p->hops >> n->u1) & 1;
    case N_AFTER: return p->first_ns != INT64_MIN && p->first_ns >= n->t;
    case N_BEFORE: return p->first_ns != INT64_MIN && p->first_ns < n->t;
    }
    return 0;
}

int qr_match_eval(const qr_match *m, const qr_match_packet *p)
{
    return eval(m, m->root, p);
}
