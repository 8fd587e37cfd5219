/* FatTree and star structure, addressing, and per-flow ECMP routing: every host reaches every
 * other on a shortest, loop-free path that depends only on the 5-tuple; uplinks share flows evenly.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "qreplay/error.h"
#include "qreplay/topology.h"

Test(topology, sizes)
{
    const int ks[] = {4, 8, 16};
    const uint32_t hosts[] = {16, 128, 1024}, switches[] = {20, 80, 320};
    for (int i = 0; i < 3; i++) {
        qr_topology *t;
        cr_assert_eq(qr_topology_fattree(&t, ks[i]), QR_OK);
        cr_assert_eq(qr_topology_hosts(t), hosts[i]);
        cr_assert_eq(qr_topology_switches(t), switches[i]);
        qr_topology_destroy(t);
    }
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 5), QR_EINVAL);
    cr_assert_eq(qr_topology_fattree(&t, 0), QR_EINVAL);
    cr_assert_eq(qr_topology_star(&t, 64), QR_EINVAL);
    cr_assert_eq(qr_topology_star(&t, 3), QR_OK);
    cr_assert_eq(qr_topology_switches(t), 1);
    qr_topology_destroy(t);
}

/* Every link is the same link seen from both ends; every host is attached where links say. */
static void check_wiring(const qr_topology *t)
{
    for (uint32_t sw = 0; sw < qr_topology_switches(t); sw++) {
        for (uint32_t p = 0; p < qr_topology_ports(t, sw); p++) {
            qr_node_kind kind;
            uint32_t peer, pport;
            cr_assert_eq(qr_topology_link(t, sw, p, &kind, &peer, &pport), QR_OK);
            if (kind == QR_NODE_HOST) {
                uint32_t asw, aport;
                qr_topology_host_attach(t, peer, &asw, &aport);
                cr_assert_eq(asw, sw);
                cr_assert_eq(aport, p);
            } else {
                cr_assert_eq(qr_topology_switch_kind(t, peer), kind);
                qr_node_kind back_kind;
                uint32_t back, bport;
                cr_assert_eq(qr_topology_link(t, peer, pport, &back_kind, &back, &bport), QR_OK);
                cr_assert_eq(back, sw, "switch %u port %u", sw, p);
                cr_assert_eq(bport, p);
                cr_assert_eq(back_kind, qr_topology_switch_kind(t, sw));
            }
        }
    }
    for (uint32_t h = 0; h < qr_topology_hosts(t); h++) {
        uint32_t back;
        cr_assert_eq(qr_topology_host_of_addr(t, qr_topology_host_addr(t, h), &back), QR_OK);
        cr_assert_eq(back, h);
    }
    uint32_t x;
    cr_assert_eq(qr_topology_host_of_addr(t, 0x0b000002, &x), QR_ENOTFOUND);
    cr_assert_eq(qr_topology_host_of_addr(t, 0x0a000001, &x), QR_ENOTFOUND);
}

Test(topology, wiring_is_symmetric)
{
    qr_topology *t;
    for (int k = 2; k <= 16; k += 2) {
        qr_topology_fattree(&t, k);
        check_wiring(t);
        qr_topology_destroy(t);
    }
    qr_topology_star(&t, 7);
    check_wiring(t);
    qr_topology_destroy(t);
}

/* Follow a packet from src to dst; returns the number of switches crossed (0 if lost). */
static int walk(const qr_topology *t, const qr_five_tuple *ft, uint32_t src, uint32_t dst,
                uint32_t *path)
{
    uint32_t sw, port;
    qr_topology_host_attach(t, src, &sw, &port);
    for (int hops = 1; hops <= 5; hops++) {
        path[hops - 1] = sw;
        cr_assert_eq(qr_topology_route(t, sw, ft, &port), QR_OK);
        qr_node_kind kind;
        uint32_t peer, pport;
        qr_topology_link(t, sw, port, &kind, &peer, &pport);
        if (kind == QR_NODE_HOST)
            return peer == dst ? hops : 0;
        sw = peer;
    }
    return 0;
}

Test(topology, every_pair_routes_on_a_shortest_stable_path)
{
    qr_topology *t;
    qr_topology_fattree(&t, 8);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    for (uint32_t s = 0; s < 128; s++) {
        for (uint32_t d = 0; d < 128; d++) {
            if (s == d)
                continue;
            qr_five_tuple ft = {qr_topology_host_addr(t, s), qr_topology_host_addr(t, d),
                                (uint16_t)gsl_rng_get(r), 80, 6};
            uint32_t path[5], again[5];
            int hops = walk(t, &ft, s, d, path);
            int expect = s / 4 == d / 4 ? 1 : (s / 16 == d / 16 ? 3 : 5);
            cr_assert_eq(hops, expect, "%u -> %u: %d hops", s, d, hops);
            cr_assert_eq(walk(t, &ft, s, d, again), hops);
            for (int i = 0; i < hops; i++)
                cr_assert_eq(path[i], again[i], "a flow takes one path");
        }
    }
    gsl_rng_free(r);
    qr_topology_destroy(t);
}

Test(topology, uplinks_share_flows_evenly)
{
    qr_topology *t;
    qr_topology_fattree(&t, 8);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    const int flows = 40000;
    for (uint32_t sw = 0; sw < 64; sw++) { /* edges and aggregation switches */
        uint32_t count[4] = {0};
        for (int f = 0; f < flows; f++) {
            /* destinations in other pods, so every flow goes up */
            uint32_t pod = sw < 32 ? sw / 4 : (sw - 32) / 4;
            uint32_t d = (uint32_t)gsl_rng_uniform_int(r, 112);
            d = d >= pod * 16 ? d + 16 : d;
            qr_five_tuple ft = {0x0a000002 + (uint32_t)gsl_rng_uniform_int(r, 1000),
                                qr_topology_host_addr(t, d), (uint16_t)gsl_rng_get(r), 80, 6};
            uint32_t port;
            qr_topology_route(t, sw, &ft, &port);
            cr_assert_geq(port, 4);
            count[port - 4]++;
        }
        for (int u = 0; u < 4; u++)
            cr_assert_leq(fabs(count[u] / (flows / 4.0) - 1), 0.05, "switch %u uplink %d: %u", sw,
                          u, count[u]);
    }
    gsl_rng_free(r);
    qr_topology_destroy(t);
}

Test(topology, unknown_destinations)
{
    qr_topology *t;
    qr_topology_fattree(&t, 4);
    qr_five_tuple ft = {0x0a000002, 0x0b000002, 1, 2, 6};
    uint32_t port;
    cr_assert_eq(qr_topology_route(t, 0, &ft, &port), QR_ENOTFOUND);
    ft.dst_ip = qr_topology_host_addr(t, 3);
    cr_assert_eq(qr_topology_route(t, 99, &ft, &port), QR_ENOTFOUND);
    qr_topology_destroy(t);
}

Test(topology, address_plan_gives_every_link_end_its_own_address_in_a_shared_slash30)
{
    for (int k = 2; k <= 8; k += 2) {
        qr_topology *t;
        cr_assert_eq(qr_topology_fattree(&t, k), QR_OK);
        uint32_t n = qr_topology_links(t);
        uint32_t *addr = calloc(n, sizeof *addr);
        qr_topology_addresses(t, addr);
        for (uint32_t l = 0; l < n; l++) {
            uint32_t r = qr_topology_link_reverse(t, l);
            cr_assert_neq(addr[l], 0, "k=%d link %u has an address", k, l);
            cr_assert_neq(addr[l], addr[r], "k=%d link %u: two ends, two addresses", k, l);
            cr_assert_eq(addr[l] & ~3u, addr[r] & ~3u, "k=%d link %u: one /30 per cable", k, l);
            cr_assert(addr[l] % 4 == 1 || addr[l] % 4 == 2, "k=%d: not a host address of a /30", k);
            for (uint32_t m = l + 1; m < n; m++)
                cr_assert_neq(addr[l], addr[m], "k=%d: links %u and %u share an address", k, l, m);
        }
        /* hosts keep the addresses the flow table and the captures know */
        for (uint32_t h = 0; h < qr_topology_hosts(t); h++)
            cr_assert_eq(addr[qr_topology_uplink(t, h)], qr_topology_host_addr(t, h));
        free(addr);
        qr_topology_destroy(t);
    }
}

Test(topology, corrector_release_time_inverts_the_link)
{
    /* 10 Gbit/s: 1500 + 2 bytes take 1201.6 ns -> 1202; 1 us delay. To arrive at 10000 the
     * packet starts at 10000 - 1202 - 1000 = 7798. */
    int64_t late;
    cr_assert_eq(qr_link_tx_ns(1502, 10000000000ull), 1202);
    cr_assert_eq(qr_link_release_ns(10000, 1500, 10000000000ull, 1000, 0, &late), 7798);
    cr_assert_eq(late, 0);
    cr_assert_eq(qr_link_release_ns(10000, 1500, 10000000000ull, 1000, 7798, &late), 7798);
    cr_assert_eq(late, 0, "exactly on time");
    cr_assert_eq(qr_link_release_ns(10000, 1500, 10000000000ull, 1000, 8000, &late), 8000);
    cr_assert_eq(late, 202, "too late: now, and by how much");
}
