/* qreplay: routing loops planted in the runtime (loopfault.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/loopfault.h"
#include "qreplay/textio.h"

/* "sN" or "hN" with its kind letter; 1 if text is one. */
static int node_of(const char *text, char kind, uint32_t *index)
{
    char *end;
    if (text[0] != kind || text[1] < '0' || text[1] > '9')
        return 0;
    unsigned long v = strtoul(text + 1, &end, 10);
    if (*end || v > 1000000)
        return 0;
    *index = (uint32_t)v;
    return 1;
}

struct loops_ctx {
    const qr_topology *t;
    qr_loop_rule *rules;
    size_t max, *n;
};

/* Resolve rule r against t: its reason in why, or 0. */
static int resolve(const qr_topology *t, qr_loop_rule *r, char *why)
{
    uint32_t sw = qr_topology_switches(t), hosts = qr_topology_hosts(t);
    if (r->sw >= sw || r->next >= sw) {
        snprintf(why, QR_ERRBUF_SIZE, "no switch s%u (the topology has switches s0-s%u)",
                 r->sw >= sw ? r->sw : r->next, sw - 1);
        return 1;
    }
    if (r->host >= hosts) {
        snprintf(why, QR_ERRBUF_SIZE, "no host h%u (the topology has hosts h0-h%u)", r->host,
                 hosts - 1);
        return 1;
    }
    for (uint32_t p = 0; p < qr_topology_ports(t, r->sw); p++) {
        qr_node_kind kind;
        uint32_t peer, peer_port;
        if (qr_topology_link(t, r->sw, p, &kind, &peer, &peer_port) == QR_OK &&
            kind != QR_NODE_HOST && peer == r->next) {
            r->port = p;
            return 0;
        }
    }
    snprintf(why, QR_ERRBUF_SIZE, "s%u and s%u are not linked", r->sw, r->next);
    return 1;
}

/* One rule: S>N H, resolved against the topology when there is one. */
static int one_rule(void *ctx, size_t k, const char *item, char *why)
{
    (void)k;
    struct loops_ctx *c = ctx;
    char buf[64], *words[3], *save = NULL;
    if (*c->n >= c->max) {
        snprintf(why, QR_ERRBUF_SIZE, "more than %zu rules", c->max);
        return 1;
    }
    qr_loop_rule *r = &c->rules[*c->n];
    memset(r, 0, sizeof *r);
    snprintf(r->text, sizeof r->text, "%s", item);
    snprintf(buf, sizeof buf, "%s", item);
    size_t n = 0;
    for (char *w = strtok_r(buf, " \t", &save); w && n < 3; w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    char *gt = n == 2 ? strchr(words[0], '>') : NULL;
    if (!gt) {
        snprintf(why, QR_ERRBUF_SIZE,
                 "expected 'S>N H': switch S sends the packets to host H to its neighbour switch "
                 "N (s8>s16 h0)");
        return 1;
    }
    *gt = 0;
    if (!node_of(words[0], 's', &r->sw) || !node_of(gt + 1, 's', &r->next)) {
        snprintf(why, QR_ERRBUF_SIZE, "'%s>%s' is not two switches (sS>sN)", words[0], gt + 1);
        return 1;
    }
    if (!node_of(words[1], 'h', &r->host)) {
        snprintf(why, QR_ERRBUF_SIZE, "'%s' is not a host (hN)", words[1]);
        return 1;
    }
    if (c->t && resolve(c->t, r, why))
        return 1;
    (*c->n)++;
    return 0;
}

int qr_loop_rules_parse(const char *text, const qr_topology *t, qr_loop_rule *rules, size_t max,
                        size_t *n, char *errbuf)
{
    *n = 0;
    struct loops_ctx c = {t, rules, max, n};
    return qr_list_each(text, ',', "rule", one_rule, &c, errbuf);
}

int qr_loop_route(const qr_loop_rule *rules, size_t n, uint32_t sw, uint32_t dst, uint32_t *port)
{
    for (size_t i = 0; i < n; i++)
        if (rules[i].sw == sw && rules[i].host == dst) {
            *port = rules[i].port;
            return 1;
        }
    return 0;
}
