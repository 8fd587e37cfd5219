/* The FatTree testbed's plan (fabric.h): cables, addresses, MACs, routes checked by walking every
 * host pair over every multipath choice, and the faults as the kernel's tools plant them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/fabric.h"
#include "qreplay/scenario.h"

static qr_scenario *scenario(const char *const *sets, size_t n)
{
    qr_scenario *s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    const char *base[] = {"topology.kind=fattree", "topology.k=4", "links.rate=20Mbps",
                          "buffer.policy=static"};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        cr_assert_eq(qr_scenario_replace(s, base[i], err), QR_OK, "%s: %s", base[i], err);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(qr_scenario_replace(s, sets[i], err), QR_OK, "%s: %s", sets[i], err);
    return s;
}

static qr_fabric *plan(const char *const *sets, size_t n, char *err)
{
    qr_scenario *s = scenario(sets, n);
    qr_fabric *f = NULL;
    int rc = qr_fabric_plan(qr_scenario_config(s), &f, err);
    qr_scenario_destroy(s);
    return rc ? NULL : f;
}

Test(fabric, a_k4_fat_tree_is_16_hosts_20_switches_48_cables_each_a_30)
{
    char err[QR_ERRBUF_SIZE];
    qr_fabric *f = plan(NULL, 0, err);
    cr_assert(f, "%s", err);
    cr_assert_eq(qr_fabric_hosts(f), 16);
    cr_assert_eq(qr_fabric_switches(f), 20);
    cr_assert_eq(qr_fabric_namespaces(f), 36);
    size_t n;
    const qr_fabric_cable *c = qr_fabric_cables(f, &n);
    cr_assert_eq(n, 48);
    uint32_t ports_used[36] = {0};
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(c[i].a.addr & ~3u, c[i].b.addr & ~3u, "cable %zu is one /30", i);
        cr_assert_neq(c[i].a.addr, c[i].b.addr);
        cr_assert_neq(c[i].a.addr & 3u, 0);
        cr_assert_neq(c[i].a.addr & 3u, 3, "no network or broadcast address");
        cr_assert_neq(c[i].b.addr & 3u, 0);
        cr_assert_neq(c[i].b.addr & 3u, 3);
        const qr_fabric_end *e[2] = {&c[i].a, &c[i].b};
        for (int j = 0; j < 2; j++) {
            qr_node nd;
            uint32_t port;
            cr_assert(qr_fabric_mac_owner(e[j]->mac, &nd, &port));
            cr_assert_eq(nd.index, e[j]->node.index);
            cr_assert_eq(nd.kind == QR_NODE_HOST, e[j]->node.kind == QR_NODE_HOST);
            cr_assert_eq(port, e[j]->port);
            ports_used[e[j]->ns]++;
        }
        for (size_t k = 0; k < i; k++) /* every MAC address once */
            cr_assert(memcmp(c[k].a.mac, c[i].a.mac, 6) && memcmp(c[k].b.mac, c[i].a.mac, 6) &&
                      memcmp(c[k].a.mac, c[i].b.mac, 6) && memcmp(c[k].b.mac, c[i].b.mac, 6));
    }
    for (uint32_t ns = 0; ns < 36; ns++)
        cr_assert_eq(ports_used[ns], ns < 16 ? 1u : 4u, "namespace %u", ns);
    /* host 5's uplink: its address is the host's, its switch end the one below */
    const qr_topology *t = qr_fabric_topology(f);
    int seen = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].a.node.kind == QR_NODE_HOST && c[i].a.node.index == 5) {
            cr_assert_eq(c[i].a.addr, qr_topology_host_addr(t, 5));
            cr_assert_eq(c[i].b.addr, c[i].a.addr - 1);
            cr_assert_str_eq(c[i].a.ifname, "eth0");
            seen++;
        }
    cr_assert_eq(seen, 1);
    qr_fabric_destroy(f);
}

Test(fabric, every_host_reaches_every_other_over_every_multipath_choice)
{
    char err[QR_ERRBUF_SIZE];
    const char *k2[] = {"topology.k=2"};
    for (int i = 0; i < 2; i++) {
        qr_fabric *f = plan(i ? k2 : NULL, (size_t)i, err);
        cr_assert(f, "%s", err);
        cr_assert_eq(qr_fabric_check_routes(f, err), QR_OK, "%s", err);
        size_t n, multi = 0;
        const qr_fabric_route *r = qr_fabric_routes(f, &n);
        for (size_t j = 0; j < n; j++)
            multi += r[j].n_via > 1;
        /* k=4: every edge and aggregation switch spreads its up traffic over 2 next hops */
        cr_assert_eq(multi, i ? 0u : 16u);
        for (uint32_t sw = 0; sw < qr_fabric_switches(f); sw++)
            for (uint32_t s2 = 0; s2 < sw; s2++)
                cr_assert_neq(qr_fabric_hash_seed(f, sw), qr_fabric_hash_seed(f, s2));
        qr_fabric_destroy(f);
    }
}

Test(fabric, faults_are_nftables_rules_and_shapers_on_the_right_interface)
{
    char err[QR_ERRBUF_SIZE];
    const char *sets[] = {"faults.gray=s8-s16 1%, h3>s1 0.1%",
                          "faults.blackhole=s0>s8 25%, s1:0 30% addresses",
                          "faults.rate=s9:2 5Mbps"};
    qr_fabric *f = plan(sets, 3, err);
    cr_assert(f, "%s", err);
    size_t n;
    const qr_fabric_fault *x = qr_fabric_faults(f, &n);
    cr_assert_eq(n, 6);
    const qr_topology *t = qr_fabric_topology(f);
    int gray = 0, hostlink = 0, bh = 0, rate = 0;
    for (size_t i = 0; i < n; i++) {
        qr_node from, to;
        uint32_t port;
        qr_topology_link_ends(t, x[i].link, &from, &to, &port);
        if (x[i].kind == QR_LINK_RATE) {
            cr_assert_eq(x[i].ns, qr_fabric_switch_ns(f, 9));
            cr_assert_str_eq(x[i].dev, "p2");
            cr_assert_eq(qr_fabric_rate(f, x[i].ns, "p2"), 5000000);
            cr_assert_eq(qr_fabric_rate(f, x[i].ns, "p1"), 20000000);
            rate++;
            continue;
        }
        char set[4096];
        int len = qr_fabric_nft_ruleset(f, x[i].ns, set, sizeof set);
        cr_assert_gt(len, 0);
        char want[128];
        snprintf(want, sizeof want, "device \"%s\"", x[i].dev);
        cr_assert(strstr(set, want), "%s", set);
        snprintf(want, sizeof want, "counter log group %u snaplen 128 queue-threshold 1 drop",
                 x[i].group);
        cr_assert(strstr(set, want), "%s", set);
        if (from.kind == QR_NODE_HOST) { /* h3>s1: on s1's port towards h3, as it arrives */
            uint32_t sw, sp;
            qr_topology_host_attach(t, 3, &sw, &sp);
            cr_assert_eq(x[i].ns, qr_fabric_switch_ns(f, sw));
            cr_assert_eq(x[i].hook, QR_FABRIC_HOOK_INGRESS);
            cr_assert_eq(x[i].threshold, 1000, "0.1%% of 10^6");
            cr_assert(strstr(set, "hook ingress"));
            hostlink++;
        } else { /* on the sending switch's port, before its egress capture */
            cr_assert_eq(x[i].ns, qr_fabric_switch_ns(f, from.index));
            cr_assert_eq(x[i].hook, QR_FABRIC_HOOK_EGRESS);
            char dev[16];
            snprintf(dev, sizeof dev, "p%u", port);
            cr_assert_str_eq(x[i].dev, dev);
            cr_assert(strstr(set, "hook egress"));
            if (x[i].kind == QR_LINK_GRAY) {
                cr_assert_eq(x[i].threshold, 10000);
                cr_assert(strstr(set, "numgen random mod 1000000 < 10000"), "%s", set);
                gray++;
            } else if (x[i].by_addr) { /* the addresses alone: any protocol, any port */
                cr_assert_eq(x[i].threshold, 300000);
                cr_assert(strstr(set, "meta protocol ip jhash ip saddr . ip daddr mod 1000000"),
                          "%s", set);
                cr_assert_null(strstr(set, "sport"), "%s", set);
                bh++;
            } else {
                cr_assert_eq(x[i].threshold, 250000);
                cr_assert(strstr(set, "jhash ip saddr . ip daddr . tcp sport . tcp dport"), "%s",
                          set);
                bh++;
            }
        }
    }
    cr_assert_eq(gray, 2, "s8-s16 is both directions");
    cr_assert_eq(hostlink, 1);
    cr_assert_eq(bh, 2);
    cr_assert_eq(rate, 1);
    char set[64];
    cr_assert_eq(qr_fabric_nft_ruleset(f, 0, set, sizeof set), 0, "host 0 has no rule");
    cr_assert_eq(qr_fabric_nft_ruleset(f, qr_fabric_switch_ns(f, 8), set, sizeof set), QR_EINVAL);
    qr_fabric_destroy(f);
}

Test(fabric, what_the_testbed_cannot_build_is_refused_with_the_reason)
{
    char err[QR_ERRBUF_SIZE];
    const char *delay[] = {"faults.delay=h3-s1 50us"};
    cr_assert_null(plan(delay, 1, err));
    cr_assert(strstr(err, "[faults] delay") && strstr(err, "netem"), "%s", err);
    const char *k6[] = {"topology.k=6"};
    cr_assert_null(plan(k6, 1, err));
    cr_assert(strstr(err, "k = 6"), "%s", err);
    const char *star[] = {"topology.kind=star", "topology.hosts=4"};
    cr_assert_null(plan(star, 2, err));
    cr_assert(strstr(err, "fat tree"), "%s", err);
    const char *bad[] = {"faults.gray=s8-s99 1%"};
    cr_assert_null(plan(bad, 1, err));
    cr_assert(strstr(err, "s99"), "%s", err);
}

/* [faults] loop: a host route (/32) on the rule's switch to its neighbour, more specific than the
 * fabric's own, as `ip route` plants it. The route walk (every host pair over every multipath
 * choice) finds the packets to h0 going round; without the rule every pair is reached (above). */
Test(fabric, a_loop_rule_is_a_host_route_the_route_walk_finds_going_round)
{
    char err[QR_ERRBUF_SIZE];
    const char *loop[] = {"faults.loop=s8>s16 h0"};
    qr_fabric *f = plan(loop, 1, err);
    cr_assert(f, "%s", err);
    size_t n, found = 0;
    const qr_fabric_route *r = qr_fabric_routes(f, &n);
    for (size_t j = 0; j < n; j++)
        if (r[j].plen == 32) {
            found++;
            cr_assert_eq(r[j].ns, qr_fabric_switch_ns(f, 8));
            cr_assert_eq(r[j].prefix, qr_topology_host_addr(qr_fabric_topology(f), 0));
            cr_assert_eq(r[j].n_via, 1);
            cr_assert_str_eq(r[j].dev[0], "p2", "s8's port 2 leads up to s16");
        }
    cr_assert_eq(found, 1);
    cr_assert_eq(qr_fabric_check_routes(f, err), QR_EVALUE);
    cr_assert(strstr(err, "-> h0: more than"), "%s", err);
    qr_fabric_destroy(f);
    const char *bad[] = {"faults.loop=s8>s4 h0"};
    cr_assert_null(plan(bad, 1, err));
    cr_assert(strstr(err, "[faults] loop: rule 1 ('s8>s4 h0'): s8 and s4 are not linked"), "%s",
              err);
}
