/* qreplay: link and port faults ([faults] gray, blackhole, delay, rate): parsing, resolution on a
 * topology, and the per-packet decision the runtime asks at every switch arrival. */
#include "qreplay/linkfault.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/random.h"
#include "qreplay/textio.h"
#include "qreplay/units.h"

#include "internal.h"

static const char *const kind_names[] = {"gray", "blackhole", "delay", "rate"};

const char *qr_link_fault_kind_name(qr_link_fault_kind k)
{
    return (unsigned)k < 4 ? kind_names[k] : "?";
}

static const char *const value_help[] = {"a drop probability such as 1% or 0.1%",
                                         "a share of the flows such as 25%", "a time such as 50us",
                                         "a rate such as 1Gbps"};

/* One rule: LINK VALUE. */
static int parse_rule(qr_link_fault_kind kind, char *text, size_t k, qr_link_fault *r, char *errbuf)
{
    char shown[128], *words[4];
    snprintf(shown, sizeof shown, "%s", text);
    size_t n = 0;
    char *save = NULL;
    for (char *w = strtok_r(text, " \t", &save); w && n < 4; w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    /* a blackhole may key on the addresses alone: LINK S addresses */
    int by_addr = kind == QR_LINK_BLACKHOLE && n == 3 && !strcmp(words[2], "addresses");
    if (n != 2 && !by_addr)
        return qri_err(errbuf, QR_EVALUE, "rule %zu ('%s'): expected 'LINK VALUE'%s, VALUE %s",
                       k + 1, shown, kind == QR_LINK_BLACKHOLE ? " or 'LINK VALUE addresses'" : "",
                       value_help[kind]);
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->by_addr = (uint8_t)by_addr;
    if (strlen(words[0]) >= sizeof r->link || !words[0][strcspn(words[0], ">-:")])
        return qri_err(errbuf, QR_EVALUE,
                       "rule %zu ('%s'): '%s' is not a link (A>B, A-B for both directions, or "
                       "sS:P; nodes sN or hN)",
                       k + 1, shown, words[0]);
    snprintf(r->link, sizeof r->link, "%s", words[0]);
    int bad = 0;
    switch (kind) {
    case QR_LINK_GRAY:
    case QR_LINK_BLACKHOLE:
        bad = qr_parse_percent(words[1], &r->share, NULL) || !(r->share > 0 && r->share <= 1);
        break;
    case QR_LINK_DELAY:
        bad = qr_parse_time_ns(words[1], &r->delay_ns, NULL) || r->delay_ns <= 0;
        if (!bad && !strchr(r->link, '-'))
            return qri_err(errbuf, QR_EVALUE,
                           "rule %zu ('%s'): a delay is a cable's, both directions: write A-B",
                           k + 1, shown);
        break;
    case QR_LINK_RATE: bad = qr_parse_rate_bps(words[1], &r->rate_bps, NULL) || !r->rate_bps; break;
    }
    if (bad)
        return qri_err(errbuf, QR_EVALUE, "rule %zu ('%s'): '%s' is not %s (above 0%s)", k + 1,
                       shown, words[1], value_help[kind],
                       kind <= QR_LINK_BLACKHOLE ? ", at most 100%" : "");
    return QR_OK;
}

int qr_link_fault_rules_parse(qr_link_fault_kind kind, const char *text, qr_link_fault *rules,
                              size_t max, size_t *n, char *errbuf)
{
    if (!text || !n || (unsigned)kind > QR_LINK_RATE)
        return qri_err(errbuf, QR_EINVAL, "no rules");
    *n = 0;
    char *copy = strdup(text);
    if (!copy)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = QR_OK;
    char *rest = qr_list_blank(text) ? NULL : copy, *p;
    for (size_t k = 0; !rc && (p = qr_list_next(&rest, ',')); k++) {
        if (!*p)
            rc =
                qri_err(errbuf, QR_EVALUE, "rule %zu is empty (rules are separated by ',')", k + 1);
        else if (*n == max)
            rc = qri_err(errbuf, QR_EVALUE, "more than %zu rules", max);
        else if (!(rc = parse_rule(kind, p, k, &rules[*n], errbuf)))
            (*n)++;
    }
    free(copy);
    return rc;
}

struct qr_link_faults {
    const qr_topology *topo;
    uint64_t seed;
    size_t n;
    qr_link_fault rule[QR_LINK_FAULTS_MAX];
    uint32_t link[QR_LINK_FAULTS_MAX];
    uint64_t crossed[QR_LINK_FAULTS_MAX], dropped[QR_LINK_FAULTS_MAX];
};

int qr_link_faults_create(qr_link_faults **out, const qr_link_fault_texts *texts,
                          const qr_topology *t, uint64_t seed, char *errbuf)
{
    if (!out || !texts || !t)
        return qri_err(errbuf, QR_EINVAL, "no topology");
    *out = NULL;
    qr_link_faults *f = calloc(1, sizeof *f);
    if (!f)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    f->topo = t;
    f->seed = seed;
    for (int kind = 0; kind < 4; kind++) {
        const char *text = texts->text[kind] ? texts->text[kind] : "";
        qr_link_fault rules[QR_LINK_FAULTS_MAX];
        size_t n;
        int rc = qr_link_fault_rules_parse((qr_link_fault_kind)kind, text, rules,
                                           QR_LINK_FAULTS_MAX, &n, errbuf);
        for (size_t i = 0; !rc && i < n; i++) {
            uint32_t ids[2];
            size_t m;
            rc = qr_topology_link_parse(t, rules[i].link, ids, &m, errbuf);
            if (rc) {
                qri_err_prefix(errbuf, "rule %zu ('%s')", i + 1, rules[i].link);
                break;
            }
            for (size_t j = 0; j < m; j++) {
                if (f->n == QR_LINK_FAULTS_MAX) {
                    rc = qri_err(errbuf, QR_EVALUE, "more than %d faulty links in all",
                                 QR_LINK_FAULTS_MAX);
                    break;
                }
                f->rule[f->n] = rules[i];
                f->link[f->n++] = ids[j];
            }
        }
        if (rc) {
            qri_err_prefix(errbuf, "[faults] %s", kind_names[kind]);
            free(f);
            return rc;
        }
    }
    if (f->n == 0) {
        free(f);
        return QR_OK;
    }
    *out = f;
    return QR_OK;
}

void qr_link_faults_destroy(qr_link_faults *f)
{
    free(f);
}

size_t qr_link_faults_count(const qr_link_faults *f)
{
    return f ? f->n : 0;
}

const qr_link_fault *qr_link_faults_get(const qr_link_faults *f, size_t i, uint32_t *link)
{
    if (!f || i >= f->n)
        return NULL;
    if (link)
        *link = f->link[i];
    return &f->rule[i];
}

/* A uniform draw in [0, 1) from 64 random bits. */
static double unit(uint64_t bits)
{
    return (double)(bits >> 11) * 0x1.0p-53;
}

/* Count a packet crossing fault i's link; 1 if the fault drops it. */
static int cross(qr_link_faults *f, size_t i, const qr_five_tuple *ft)
{
    uint64_t c = f->crossed[i]++;
    const qr_link_fault *r = &f->rule[i];
    int drop = 0;
    if (r->kind == QR_LINK_GRAY)
        drop = unit(qr_seed_derive(f->seed, "fault-gray", (uint64_t)i << 40 | c)) < r->share;
    else if (r->kind == QR_LINK_BLACKHOLE) {
        qr_five_tuple key = *ft;
        if (r->by_addr) /* the pair of addresses, whatever the ports and protocol */
            key.src_port = key.dst_port = 0, key.proto = 0;
        drop = unit(qr_flow_hash(&key, 0xb1ac0000u ^ f->link[i])) < r->share;
    }
    f->dropped[i] += (uint64_t)drop;
    return drop;
}

int qr_link_faults_packet(qr_link_faults *f, uint32_t sw, uint32_t port, const qr_five_tuple *ft,
                          size_t *fault)
{
    if (!f)
        return 0;
    const qr_topology *t = f->topo;
    uint32_t src, at, p;
    uint32_t links[2];
    size_t n_links = 0;
    if (!qr_topology_host_of_addr(t, ft->src_ip, &src)) {
        qr_topology_host_attach(t, src, &at, &p);
        if (at == sw)
            links[n_links++] = qr_topology_uplink(t, src);
    }
    links[n_links++] = qr_topology_port_link(t, sw, port);
    for (size_t l = 0; l < n_links; l++) {
        int drop = 0;
        for (size_t i = 0; i < f->n; i++) {
            if (f->link[i] != links[l] || !cross(f, i, ft) || drop)
                continue;
            drop = 1;
            if (fault)
                *fault = i;
        }
        if (drop)
            return 1;
    }
    return 0;
}

static const char *kind_text(qr_node_kind k)
{
    static const char *const names[] = {"host", "edge", "agg", "core"};
    return (unsigned)k < 4 ? names[k] : "?";
}

void qr_link_faults_row(const qr_link_faults *f, size_t i, qr_row_link_fault *row)
{
    memset(row, 0, sizeof *row);
    if (!f || i >= f->n)
        return;
    const qr_link_fault *r = &f->rule[i];
    char value[32];
    row->fault = (uint32_t)(i + 1);
    snprintf(row->kind, sizeof row->kind, "%s", kind_names[r->kind]);
    switch (r->kind) {
    case QR_LINK_GRAY:
    case QR_LINK_BLACKHOLE: snprintf(value, sizeof value, "%g%%", r->share * 100); break;
    case QR_LINK_DELAY: qr_format_time(r->delay_ns, value, sizeof value); break;
    case QR_LINK_RATE: qr_format_rate(r->rate_bps, value, sizeof value); break;
    }
    snprintf(row->text, sizeof row->text, "%s %s", r->link, value);
    row->link = f->link[i];
    qr_topology_link_name(f->topo, f->link[i], row->name, sizeof row->name);
    qr_node from, to;
    uint32_t port;
    qr_topology_link_ends(f->topo, f->link[i], &from, &to, &port);
    row->from_node = from.index;
    row->to_node = to.index;
    snprintf(row->from_kind, sizeof row->from_kind, "%s", kind_text(from.kind));
    snprintf(row->to_kind, sizeof row->to_kind, "%s", kind_text(to.kind));
    row->share = r->share;
    row->delay_ns = r->delay_ns;
    row->rate_bps = r->rate_bps;
    row->crossed = f->crossed[i];
    row->dropped = f->dropped[i];
}

uint32_t qr_fault_drop_link(const qr_topology *t, const uint8_t *faulty, uint32_t sw, uint32_t port,
                            uint32_t src_host)
{
    uint32_t link = qr_topology_port_link(t, sw, port);
    if (src_host >= qr_topology_hosts(t) || faulty[link])
        return link;
    uint32_t up = qr_topology_uplink(t, src_host), edge, p;
    qr_topology_host_attach(t, src_host, &edge, &p);
    return edge == sw && faulty[up] ? up : link;
}
