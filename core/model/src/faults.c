/* qreplay: planted faults ([faults] drop): parsing, resolution against a workload, and the
 * per-packet decision the runtime asks at every switch arrival. */
#include "qreplay/faults.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/packet.h"
#include "qreplay/textio.h"

/* TCP flag bits (RFC 793). */

static const char *const kind_names[] = {"syn", "synack", "data", "ack"};

const char *qr_fault_kind_name(qr_fault_kind k)
{
    return (unsigned)k < 4 ? kind_names[k] : "?";
}

const char *qr_fault_rule_format(const qr_fault_rule *r, char *buf, size_t size)
{
    int n = snprintf(buf, size, "flow %u %s %u", r->flow, qr_fault_kind_name(r->kind), r->first);
    if (n >= 0 && (size_t)n < size && r->last != r->first)
        n += snprintf(buf + n, size - (size_t)n, "-%u", r->last);
    if (n >= 0 && (size_t)n < size && r->sw >= 0)
        snprintf(buf + n, size - (size_t)n, " at %lld", (long long)r->sw);
    return buf;
}

/* A count: decimal digits only, at least 1 and at most max. */
static int parse_count(const char *w, uint64_t max, uint64_t *out)
{
    if (!w || !*w)
        return -1;
    for (const char *p = w; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    unsigned long long v = strtoull(w, NULL, 10);
    if (errno || v > max)
        return -1;
    *out = v;
    return 0;
}

static int rule_err(char *errbuf, size_t k, const char *text, const char *why)
{
    return qri_err(errbuf, QR_EVALUE, "rule %zu ('%s'): %s", k + 1, text, why);
}

/* One rule: words separated by blanks. */
static int parse_rule(char *text, size_t k, qr_fault_rule *r, char *errbuf)
{
    char shown[128];
    snprintf(shown, sizeof shown, "%s", text);
    char *words[8];
    size_t n = 0;
    char *save = NULL;
    for (char *w = strtok_r(text, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == 8)
            return rule_err(errbuf, k, shown, "too many words (flow F KIND [N[-M]] [at S])");
        words[n++] = w;
    }
    if (n < 3 || strcmp(words[0], "flow") != 0)
        return rule_err(errbuf, k, shown, "expected 'flow F KIND [N[-M]] [at S]'");
    uint64_t v;
    if (parse_count(words[1], UINT32_MAX, &v))
        return rule_err(errbuf, k, shown, "the flow is not a number");
    r->flow = (uint32_t)v;
    int kind = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(words[2], kind_names[i]) == 0)
            kind = i;
    if (kind < 0)
        return rule_err(errbuf, k, shown, "the kind must be syn, synack, data or ack");
    r->kind = (qr_fault_kind)kind;
    r->first = r->last = 1;
    r->sw = -1;
    size_t i = 3;
    if (i < n && strcmp(words[i], "at") != 0) {
        char *dash = strchr(words[i], '-');
        if (dash)
            *dash = '\0';
        uint64_t a, b;
        if (parse_count(words[i], UINT32_MAX, &a) || a == 0)
            return rule_err(errbuf, k, shown, "the packet count must be a number from 1");
        b = a;
        if (dash && (parse_count(dash + 1, UINT32_MAX, &b) || b < a))
            return rule_err(errbuf, k, shown, "a range N-M needs M >= N");
        r->first = (uint32_t)a;
        r->last = (uint32_t)b;
        i++;
    }
    if (i < n) {
        if (strcmp(words[i], "at") != 0 || i + 2 != n)
            return rule_err(errbuf, k, shown, "expected 'at S' (a switch number) at the end");
        if (parse_count(words[i + 1], UINT32_MAX, &v))
            return rule_err(errbuf, k, shown, "the switch is not a number");
        r->sw = (int64_t)v;
    }
    return QR_OK;
}

int qr_fault_rules_parse(const char *text, qr_fault_rule *rules, size_t max, size_t *n,
                         char *errbuf)
{
    if (!text || !n || (!rules && max))
        return qri_err(errbuf, QR_EINVAL, "no rules");
    *n = 0;
    char *copy = strdup(text);
    if (!copy)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = QR_OK;
    size_t k = 0;
    char *rest = qr_list_blank(text) ? NULL : copy, *p;
    while (!rc && (p = qr_list_next(&rest, ','))) {
        if (!*p) {
            rc =
                qri_err(errbuf, QR_EVALUE, "rule %zu is empty (rules are separated by ',')", k + 1);
        } else if (*n == max) {
            rc = qri_err(errbuf, QR_EVALUE, "more than %zu rules", max);
        } else {
            rc = parse_rule(p, k, &rules[*n], errbuf);
            if (!rc)
                (*n)++;
        }
        k++;
    }
    free(copy);
    return rc;
}

int qr_fault_classify(uint32_t dir, uint8_t tcp_flags, uint32_t payload_bytes, qr_fault_kind *kind)
{
    int ack_dir = qr_dir_is_ack(dir);
    if (tcp_flags & QR_TCP_SYN) {
        int synack = (tcp_flags & QR_TCP_ACK) != 0;
        if (synack != ack_dir)
            return QR_ENOTFOUND;
        *kind = synack ? QR_FAULT_SYNACK : QR_FAULT_SYN;
        return QR_OK;
    }
    if (!ack_dir && payload_bytes > 0) {
        *kind = QR_FAULT_DATA;
        return QR_OK;
    }
    if (ack_dir && payload_bytes == 0) {
        *kind = QR_FAULT_ACK;
        return QR_OK;
    }
    return QR_ENOTFOUND;
}

/* The 5-tuple of direction dir as the flow table's hosts send it. */
static qr_five_tuple dir_tuple(const qr_flow_table *flows, uint32_t dir)
{
    uint32_t f = qr_dir_flow(dir);
    uint32_t src = qr_flow_table_dir_src(flows, dir), dst = qr_flow_table_dir_dst(flows, dir);
    uint16_t sport = qr_flow_table_sender_port(flows, f);
    qr_five_tuple ft = {qr_flow_table_host_addr(flows, src), qr_flow_table_host_addr(flows, dst),
                        qr_dir_is_ack(dir) ? (uint16_t)QR_SINK_PORT : sport,
                        qr_dir_is_ack(dir) ? sport : (uint16_t)QR_SINK_PORT, 6};
    return ft;
}

int qr_dir_links(const qr_flow_table *flows, const qr_topology *topo, uint32_t dir, uint32_t *links,
                 size_t max, size_t *n)
{
    if (!flows || !topo || !n || dir >= qr_flow_table_directions(flows))
        return QR_EINVAL;
    qr_five_tuple ft = dir_tuple(flows, dir);
    uint32_t src = qr_flow_table_dir_src(flows, dir);
    if (src >= qr_topology_hosts(topo) || qr_topology_path_links(topo, src, &ft, links, max, n))
        return QR_EVALUE;
    return QR_OK;
}

int qr_dir_path(const qr_flow_table *flows, const qr_topology *topo, uint32_t dir, uint32_t *sw,
                size_t max, size_t *n)
{
    uint32_t links[16];
    size_t m;
    int rc = qr_dir_links(flows, topo, dir, links, 16, &m);
    if (rc)
        return rc;
    if (m > 16)
        return QR_EVALUE;
    /* every link after the uplink leaves a switch */
    *n = m - 1;
    for (size_t i = 1; i < m && i - 1 < max; i++) {
        qr_node from, to;
        uint32_t port;
        qr_topology_link_ends(topo, links[i], &from, &to, &port);
        sw[i - 1] = from.index;
    }
    return QR_OK;
}

struct qr_faults {
    qr_fault_rule rules[QR_FAULT_RULES_MAX];
    uint32_t dir[QR_FAULT_RULES_MAX]; /* the direction each rule counts */
    uint64_t counted[QR_FAULT_RULES_MAX], dropped[QR_FAULT_RULES_MAX];
    size_t n;
};

int qr_faults_create(qr_faults **out, const char *text, const qr_flow_table *flows,
                     const qr_topology *topo, char *errbuf)
{
    if (!out || !flows || !topo)
        return qri_err(errbuf, QR_EINVAL, "no workload");
    *out = NULL;
    qr_fault_rule rules[QR_FAULT_RULES_MAX];
    size_t n;
    int rc = qr_fault_rules_parse(text ? text : "", rules, QR_FAULT_RULES_MAX, &n, errbuf);
    if (rc) {
        qri_err_prefix(errbuf, "[faults] drop");
        return rc;
    }
    if (n == 0)
        return QR_OK;
    qr_faults *f = calloc(1, sizeof *f);
    if (!f)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    size_t n_flows = qr_flow_table_flows(flows);
    for (size_t i = 0; i < n; i++) {
        qr_fault_rule *r = &rules[i];
        char shown[96];
        qr_fault_rule_format(r, shown, sizeof shown);
        if (r->flow >= n_flows) {
            free(f);
            return qri_err(errbuf, QR_EVALUE,
                           "[faults] drop: rule %zu ('%s'): flow %u does not exist (the workload "
                           "has %zu flows)",
                           i + 1, shown, r->flow, n_flows);
        }
        uint32_t dir = r->kind == QR_FAULT_SYN || r->kind == QR_FAULT_DATA ? qr_dir_data(r->flow)
                                                                           : qr_dir_ack(r->flow);
        uint32_t path[16];
        size_t hops;
        if (qr_dir_path(flows, topo, dir, path, 16, &hops) || hops > 16) {
            free(f);
            return qri_err(errbuf, QR_EVALUE,
                           "[faults] drop: rule %zu ('%s'): flow %u has no route", i + 1, shown,
                           r->flow);
        }
        if (r->sw < 0) {
            r->sw = path[0];
        } else {
            int on = 0;
            for (size_t h = 0; h < hops; h++)
                on |= (int64_t)path[h] == r->sw;
            if (!on) {
                char list[128] = "";
                size_t len = 0;
                for (size_t h = 0; h < hops && len < sizeof list; h++)
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", h ? ", " : "",
                                            path[h]);
                free(f);
                return qri_err(errbuf, QR_EVALUE,
                               "[faults] drop: rule %zu ('%s'): switch %lld is not on flow %u's %s "
                               "path (switches %s)",
                               i + 1, shown, (long long)r->sw, r->flow,
                               qr_dir_is_ack(dir) ? "ACK" : "data", list);
            }
        }
        f->rules[i] = *r;
        f->dir[i] = dir;
    }
    f->n = n;
    *out = f;
    return QR_OK;
}

void qr_faults_destroy(qr_faults *f)
{
    free(f);
}

int qr_faults_arrive(qr_faults *f, uint32_t sw, uint32_t dir, uint8_t tcp_flags,
                     uint32_t payload_bytes, size_t *rule)
{
    if (!f)
        return 0;
    qr_fault_kind kind;
    if (qr_fault_classify(dir, tcp_flags, payload_bytes, &kind))
        return 0;
    int drop = 0;
    for (size_t i = 0; i < f->n; i++) {
        const qr_fault_rule *r = &f->rules[i];
        if (f->dir[i] != dir || r->kind != kind || r->sw != (int64_t)sw)
            continue;
        uint64_t c = ++f->counted[i];
        if (!drop && c >= r->first && c <= r->last) {
            drop = 1;
            f->dropped[i]++;
            if (rule)
                *rule = i;
        }
    }
    return drop;
}

size_t qr_faults_rules(const qr_faults *f)
{
    return f ? f->n : 0;
}

const qr_fault_rule *qr_faults_rule(const qr_faults *f, size_t i)
{
    return f && i < f->n ? &f->rules[i] : NULL;
}

uint64_t qr_faults_counted(const qr_faults *f, size_t i)
{
    return f && i < f->n ? f->counted[i] : 0;
}

uint64_t qr_faults_dropped(const qr_faults *f, size_t i)
{
    return f && i < f->n ? f->dropped[i] : 0;
}

void qr_faults_row(const qr_faults *f, size_t i, qr_row_fault *row)
{
    memset(row, 0, sizeof *row);
    if (!f || i >= f->n)
        return;
    const qr_fault_rule *r = &f->rules[i];
    row->rule = (uint32_t)(i + 1);
    qr_fault_rule_format(r, row->text, sizeof row->text);
    row->flow = r->flow;
    row->dir = f->dir[i];
    snprintf(row->kind, sizeof row->kind, "%s", qr_fault_kind_name(r->kind));
    row->first = r->first;
    row->last = r->last;
    row->sw = (uint32_t)r->sw;
    row->counted = f->counted[i];
    row->dropped = f->dropped[i];
}
