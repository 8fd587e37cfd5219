/* Directed links of a topology (topology.h: ids, names, parsing, reverse, paths) and the link
 * faults of [faults] gray, blackhole, delay, rate (linkfault.h): the grammar and its errors,
 * resolution against a topology, and the per-packet decisions: a gray link drops its share of the
 * packets crossing it and repeats exactly for a seed, a blackhole drops all or nothing of a flow
 * direction, and a host's uplink is crossed only at that host's switch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "qreplay/loopfault.h"
#include "qreplay/random.h"

static qr_five_tuple tuple(const qr_topology *t, uint32_t a, uint32_t b, uint16_t sport)
{
    qr_five_tuple ft = {qr_topology_host_addr(t, a), qr_topology_host_addr(t, b), sport, 5001, 6};
    return ft;
}

Test(links, every_link_round_trips_through_its_name_and_reverse)
{
    for (int k = 2; k <= 8; k += 2) {
        qr_topology *t;
        cr_assert_eq(qr_topology_fattree(&t, k), QR_OK);
        uint32_t n = qr_topology_links(t);
        cr_assert_eq(n, qr_topology_switches(t) * (uint32_t)k + qr_topology_hosts(t));
        for (uint32_t id = 0; id < n; id++) {
            char name[32], err[QR_ERRBUF_SIZE];
            uint32_t ids[2];
            size_t m;
            qr_topology_link_name(t, id, name, sizeof name);
            cr_assert_eq(qr_topology_link_parse(t, name, ids, &m, err), QR_OK, "%s: %s", name, err);
            cr_assert_eq(m, 1);
            cr_assert_eq(ids[0], id, "%s", name);
            uint32_t rev = qr_topology_link_reverse(t, id);
            cr_assert_neq(rev, id);
            cr_assert_eq(qr_topology_link_reverse(t, rev), id, "%s", name);
            qr_node a, b, c, d;
            uint32_t port;
            qr_topology_link_ends(t, id, &a, &b, &port);
            qr_topology_link_ends(t, rev, &c, &d, &port);
            cr_assert(a.kind == d.kind && a.index == d.index && b.kind == c.kind &&
                      b.index == c.index);
            /* A-B names both directions */
            char both[32];
            strcpy(both, name);
            *strchr(both, '>') = '-';
            cr_assert_eq(qr_topology_link_parse(t, both, ids, &m, err), QR_OK, "%s", err);
            cr_assert(m == 2 && ids[0] == id && ids[1] == rev);
        }
        cr_assert_eq(qr_topology_link_ends(t, n, &(qr_node){0}, &(qr_node){0}, &(uint32_t){0}),
                     QR_EINVAL);
        qr_topology_destroy(t);
    }
}

Test(links, paths_follow_the_switches_routing_picks)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 8), QR_OK);
    uint64_t s = qr_seed_derive(5, "links", 0);
    for (int i = 0; i < 2000; i++) {
        s = qr_seed_derive(s, "x", (uint64_t)i);
        uint32_t a = (uint32_t)(s % 128), b = (uint32_t)((s >> 20) % 128);
        if (a == b)
            continue;
        qr_five_tuple ft = tuple(t, a, b, (uint16_t)(1024 + (s >> 40) % 60000));
        uint32_t links[8];
        size_t n;
        cr_assert_eq(qr_topology_path_links(t, a, &ft, links, 8, &n), QR_OK);
        cr_assert_eq(n, qr_topology_hops(t, a, b) + 1);
        cr_assert_eq(links[0], qr_topology_uplink(t, a));
        qr_node prev_to = {QR_NODE_HOST, a};
        for (size_t j = 0; j < n; j++) { /* consecutive: each link starts where the last ended */
            qr_node from, to;
            uint32_t port;
            qr_topology_link_ends(t, links[j], &from, &to, &port);
            if (j > 0)
                cr_assert(from.kind == prev_to.kind && from.index == prev_to.index);
            prev_to = to;
        }
        cr_assert(prev_to.kind == QR_NODE_HOST && prev_to.index == b);
    }
    qr_topology_destroy(t);
}

Test(links, bad_names_say_why)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    uint32_t ids[2];
    size_t m;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_topology_link_parse(t, "s8>s40", ids, &m, err), QR_EVALUE);
    cr_assert(strstr(err, "no switch s40 (the topology has switches s0-s19)"), "%s", err);
    cr_assert_eq(qr_topology_link_parse(t, "s8>s2", ids, &m, err), QR_EVALUE);
    cr_assert(strstr(err, "s8 and s2 are not linked"), "%s", err);
    cr_assert_eq(qr_topology_link_parse(t, "h16>s7", ids, &m, err), QR_EVALUE);
    cr_assert(strstr(err, "no host h16"), "%s", err);
    cr_assert_eq(qr_topology_link_parse(t, "x3>s1", ids, &m, err), QR_EVALUE);
    cr_assert(strstr(err, "'x3' is not a node"), "%s", err);
    cr_assert_eq(qr_topology_link_parse(t, "s3:4", ids, &m, err), QR_EVALUE);
    cr_assert(strstr(err, "ports 0-3"), "%s", err);
    cr_assert_eq(qr_topology_link_parse(t, "s3", ids, &m, err), QR_EVALUE);
    cr_assert_eq(qr_topology_link_parse(t, "h1:0", ids, &m, err), QR_EVALUE);
    cr_assert_eq(qr_topology_link_parse(t, "s0:2", ids, &m, err), QR_OK, "%s", err);
    char name[32];
    cr_assert_str_eq(qr_topology_link_name(t, ids[0], name, sizeof name), "s0>s8");
    qr_topology_destroy(t);
}

Test(linkfault, rules_parse_and_errors)
{
    qr_link_fault r[8];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_link_fault_rules_parse(QR_LINK_GRAY, "s8>s16 1%, h3-s1 0.1%", r, 8, &n, err),
                 QR_OK, "%s", err);
    cr_assert_eq(n, 2);
    cr_assert_float_eq(r[0].share, 0.01, 1e-12);
    cr_assert_str_eq(r[1].link, "h3-s1");
    cr_assert_eq(qr_link_fault_rules_parse(QR_LINK_DELAY, "s8-s16 50us", r, 8, &n, err), QR_OK);
    cr_assert_eq(r[0].delay_ns, 50000);
    cr_assert_eq(qr_link_fault_rules_parse(QR_LINK_RATE, "s8:2 1Gbps", r, 8, &n, err), QR_OK);
    cr_assert_eq(r[0].rate_bps, 1000000000u);
    cr_assert_eq(qr_link_fault_rules_parse(QR_LINK_GRAY, " ", r, 8, &n, err), QR_OK);
    cr_assert_eq(n, 0);
    const struct {
        qr_link_fault_kind kind;
        const char *text, *why;
    } bad[] = {
        {QR_LINK_GRAY, "s8>s16", "expected 'LINK VALUE'"},
        {QR_LINK_GRAY, "s8>s16 0%", "not a drop probability"},
        {QR_LINK_GRAY, "s8>s16 101%", "at most 100%"},
        {QR_LINK_BLACKHOLE, "s8 25%", "not a link"},
        {QR_LINK_DELAY, "s8>s16 5us", "write A-B"},
        {QR_LINK_DELAY, "s8-s16 -5us", "not a time"},
        {QR_LINK_RATE, "s8:2 fast", "not a rate"},
        {QR_LINK_GRAY, "s8>s16 1%,", "rule 2 is empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(qr_link_fault_rules_parse(bad[i].kind, bad[i].text, r, 8, &n, err), QR_EVALUE,
                     "%s", bad[i].text);
        cr_assert(strstr(err, bad[i].why), "%s: %s", bad[i].text, err);
    }
}

Test(linkfault, unknown_targets_name_the_key_and_rule)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    qr_link_faults *f;
    char err[QR_ERRBUF_SIZE];
    qr_link_fault_texts x = {{"s8>s16 1%, s8>s99 1%", NULL, NULL, NULL}};
    cr_assert_eq(qr_link_faults_create(&f, &x, t, 1, err), QR_EVALUE);
    cr_assert(f == NULL);
    cr_assert(strstr(err, "[faults] gray: rule 2 ('s8>s99'): no switch s99"), "%s", err);
    qr_link_fault_texts y = {{NULL, NULL, NULL, "s0>s1 1Gbps"}};
    cr_assert_eq(qr_link_faults_create(&f, &y, t, 1, err), QR_EVALUE);
    cr_assert(strstr(err, "[faults] rate: rule 1 ('s0>s1'): s0 and s1 are not linked"), "%s", err);
    qr_link_fault_texts none = {{"", " ", NULL, ""}};
    cr_assert_eq(qr_link_faults_create(&f, &none, t, 1, err), QR_OK);
    cr_assert(f == NULL);
    qr_link_fault_texts both = {{"s8-s16 1%", NULL, "h3-s1 20us", NULL}};
    cr_assert_eq(qr_link_faults_create(&f, &both, t, 1, err), QR_OK, "%s", err);
    cr_assert_eq(qr_link_faults_count(f), 4);
    qr_row_link_fault row;
    qr_link_faults_row(f, 1, &row);
    cr_assert_str_eq(row.name, "s16>s8");
    cr_assert_str_eq(row.from_kind, "core");
    cr_assert_str_eq(row.to_kind, "agg");
    qr_link_faults_row(f, 2, &row);
    cr_assert_str_eq(row.name, "h3>s1");
    cr_assert_str_eq(row.kind, "delay");
    cr_assert_eq(row.delay_ns, 20000);
    qr_link_faults_destroy(f);
    qr_topology_destroy(t);
}

/* Feed n packets of random 5-tuples through link s8>s16's port: how many were dropped. */
static uint64_t feed(qr_link_faults *f, const qr_topology *t, uint64_t seed, int n)
{
    uint32_t ids[2];
    size_t m;
    qr_topology_link_parse(t, "s8>s16", ids, &m, NULL);
    uint64_t dropped = 0;
    for (int i = 0; i < n; i++) {
        uint64_t s = qr_seed_derive(seed, "feed", (uint64_t)i);
        qr_five_tuple ft = tuple(t, (uint32_t)(s % 4), 8 + (uint32_t)((s >> 8) % 8),
                                 (uint16_t)(1024 + (s >> 16) % 50000));
        dropped += (uint64_t)qr_link_faults_packet(f, 8, ids[0] % 4, &ft, NULL);
    }
    return dropped;
}

Test(linkfault, gray_drops_its_share_and_repeats_for_a_seed)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    const double p[] = {0.001, 0.01, 0.1};
    for (size_t i = 0; i < 3; i++) {
        char text[32];
        snprintf(text, sizeof text, "s8>s16 %g%%", p[i] * 100);
        qr_link_fault_texts x = {{text, NULL, NULL, NULL}};
        qr_link_faults *a, *b, *c;
        char err[QR_ERRBUF_SIZE];
        cr_assert_eq(qr_link_faults_create(&a, &x, t, 7, err), QR_OK, "%s", err);
        cr_assert_eq(qr_link_faults_create(&b, &x, t, 7, err), QR_OK);
        cr_assert_eq(qr_link_faults_create(&c, &x, t, 8, err), QR_OK);
        const int n = 200000;
        uint64_t da = feed(a, t, 3, n), db = feed(b, t, 3, n), dc = feed(c, t, 3, n);
        double mean = n * p[i], sd = sqrt(n * p[i] * (1 - p[i]));
        cr_assert(fabs((double)da - mean) < 5 * sd, "p %g: %llu of %d", p[i],
                  (unsigned long long)da, n);
        cr_assert_eq(da, db, "the same seed repeats exactly");
        cr_assert(fabs((double)dc - mean) < 5 * sd);
        qr_row_link_fault row;
        qr_link_faults_row(a, 0, &row);
        cr_assert_eq(row.crossed, (uint64_t)n);
        cr_assert_eq(row.dropped, da);
        /* the other port of s8 leads to s17: never crossed */
        qr_five_tuple ft = tuple(t, 0, 8, 2000);
        cr_assert_eq(qr_link_faults_packet(a, 8, 3, &ft, NULL), 0);
        qr_link_faults_destroy(a);
        qr_link_faults_destroy(b);
        qr_link_faults_destroy(c);
    }
    qr_topology_destroy(t);
}

Test(linkfault, blackhole_drops_all_or_nothing_of_a_flow_direction)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    qr_link_fault_texts x = {{NULL, "s8>s16 25%", NULL, NULL}};
    qr_link_faults *f;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_link_faults_create(&f, &x, t, 1, err), QR_OK, "%s", err);
    int hit = 0;
    const int flows = 4000;
    for (int i = 0; i < flows; i++) {
        qr_five_tuple ft = tuple(t, (uint32_t)(i % 4), 8 + (uint32_t)(i % 8), (uint16_t)(1024 + i));
        int first = qr_link_faults_packet(f, 8, 2, &ft, NULL);
        for (int k = 0; k < 5; k++)
            cr_assert_eq(qr_link_faults_packet(f, 8, 2, &ft, NULL), first);
        hit += first;
    }
    double sd = sqrt(flows * 0.25 * 0.75);
    cr_assert(fabs(hit - flows * 0.25) < 5 * sd, "%d of %d", hit, flows);
    qr_link_faults_destroy(f);
    qr_topology_destroy(t);
}

Test(linkfault, an_uplink_is_crossed_only_at_its_hosts_switch)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    qr_link_fault_texts x = {{"h3>s1 100%", NULL, NULL, NULL}};
    qr_link_faults *f;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_link_faults_create(&f, &x, t, 1, err), QR_OK, "%s", err);
    qr_five_tuple from3 = tuple(t, 3, 9, 4000), from2 = tuple(t, 2, 9, 4000);
    cr_assert_eq(qr_link_faults_packet(f, 1, 2, &from3, NULL), 1); /* at s1: crossed h3>s1 */
    cr_assert_eq(qr_link_faults_packet(f, 9, 2, &from3, NULL), 0); /* later switches: no */
    cr_assert_eq(qr_link_faults_packet(f, 1, 2, &from2, NULL), 0); /* h2 has its own uplink */
    qr_row_link_fault row;
    qr_link_faults_row(f, 0, &row);
    cr_assert_eq(row.crossed, 1);
    cr_assert_eq(row.dropped, 1);
    qr_link_faults_destroy(f);
    qr_topology_destroy(t);
}

/* [faults] loop: rules parse, resolve to the port towards the neighbour, route only the packets
 * they name, and a wrong one says what is wrong. */
Test(linkfault, loop_rules_route_what_they_name)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    qr_loop_rule r[4];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_loop_rules_parse("s8>s16 h0, s0>s9 h3", t, r, 4, &n, err), QR_OK, "%s", err);
    cr_assert_eq(n, 2);
    /* the port of s8 that leads to s16, and of s0 to s9 */
    for (size_t i = 0; i < n; i++) {
        qr_node_kind kind;
        uint32_t peer, pp;
        cr_assert_eq(qr_topology_link(t, r[i].sw, r[i].port, &kind, &peer, &pp), QR_OK);
        cr_assert_eq(peer, r[i].next);
    }
    uint32_t port = 99;
    cr_assert_eq(qr_loop_route(r, n, 8, 0, &port), 1);
    cr_assert_eq(port, r[0].port);
    port = 99;
    cr_assert_eq(qr_loop_route(r, n, 8, 1, &port), 0, "h1 is not named");
    cr_assert_eq(qr_loop_route(r, n, 9, 0, &port), 0, "s9 has no rule");
    cr_assert_eq(port, 99);
    const char *bad[][2] = {
        {"s8 h0", "expected 'S>N H'"},  {"s8>h16 h0", "is not two switches"},
        {"s8>s16 s0", "is not a host"}, {"s8>s40 h0", "no switch s40"},
        {"s8>s16 h16", "no host h16"},  {"s8>s4 h0", "s8 and s4 are not linked"},
        {"s8>s16 h0,", "an empty rule"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(qr_loop_rules_parse(bad[i][0], t, r, 4, &n, err), QR_EVALUE, "%s", bad[i][0]);
        cr_assert(strstr(err, bad[i][1]) && strstr(err, "rule "), "%s: %s", bad[i][0], err);
    }
    /* the syntax alone, as the scenario checks it */
    cr_assert_eq(qr_loop_rules_parse("s8>s40 h99", NULL, r, 4, &n, err), QR_OK, "%s", err);
    qr_topology_destroy(t);
}
