/* Everflow's guided probes (guided.h, guided_plan.h) on hand-made mirrors of a k=4 fat tree: a
 * delivered probe crosses every port of its path once and is lost nowhere; a probe whose last copy
 * left a port is lost on that link, one whose last copy arrived at a switch is lost inside it,
 * headed out of the port its 5-tuple's other probes left by (or the switch's inside when none
 * did); a loss is silent only where the counters were read and did not move; bad files are errors
 * naming the file and line. The plan pins `paths` distinct source ports per host towards the
 * host with its index in the next pod, the same for the same seed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/guided.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"

static char dir[64];
static qr_topology *topo;
static FILE *copies;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-guided-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(qr_topology_fattree(&topo, 4), QR_OK);
    char p[128];
    snprintf(p, sizeof p, "%s/guided.csv", dir);
    copies = fopen(p, "w");
    cr_assert_not_null(copies);
    fprintf(copies, "src,dst,sport,seq,switch,port,dir,time_ns\n");
}

static void teardown(void)
{
    if (copies)
        fclose(copies);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        cr_log_info("could not remove %s", dir);
    qr_topology_destroy(topo);
}

TestSuite(guided, .init = setup, .fini = teardown);

/* The port of switch sw leading to node `to`. */
static uint32_t port_to(uint32_t sw, qr_node to)
{
    for (uint32_t p = 0; p < qr_topology_ports(topo, sw); p++) {
        qr_node_kind k;
        uint32_t peer, pp;
        if (qr_topology_link(topo, sw, p, &k, &peer, &pp) == QR_OK && k == to.kind &&
            peer == to.index)
            return p;
    }
    cr_assert_fail("s%u has no port to %u", sw, to.index);
    return 0;
}

/* Host 0 (10.0.0.2) to host 4 (10.1.0.2) across pods: s0 s8 s16 s10 s2. */
static const uint32_t path[5] = {0, 8, 16, 10, 2};

/* The copies of probe seq from sport along path, up to `copies_n` of its 10 (in and out at each
 * switch, in that order). */
static void probe(uint16_t sport, uint32_t seq, int copies_n)
{
    int64_t t = 1000000 * (int64_t)seq + sport;
    for (int i = 0, c = 0; i < 5; i++) {
        qr_node prev = i ? qr_topology_switch_node(topo, path[i - 1]) : (qr_node){QR_NODE_HOST, 0};
        qr_node next =
            i < 4 ? qr_topology_switch_node(topo, path[i + 1]) : (qr_node){QR_NODE_HOST, 4};
        if (c++ < copies_n)
            fprintf(copies, "10.0.0.2,10.1.0.2,%u,%u,s%u,%u,in,%lld\n", sport, seq, path[i],
                    port_to(path[i], prev), (long long)(t += 10));
        if (c++ < copies_n)
            fprintf(copies, "10.0.0.2,10.1.0.2,%u,%u,s%u,%u,out,%lld\n", sport, seq, path[i],
                    port_to(path[i], next), (long long)(t += 10));
    }
}

static void counters(uint32_t moved_sw, uint32_t moved_port)
{
    char p[128];
    snprintf(p, sizeof p, "%s/counters.csv", dir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fprintf(f, "switch,port,drops\n");
    for (uint32_t sw = 0; sw < qr_topology_switches(topo); sw++)
        for (uint32_t port = 0; port < 4; port++)
            fprintf(f, "s%u,%u,%d\n", sw, port, sw == moved_sw && port == moved_port ? 3 : 0);
    fclose(f);
}

static void run(qr_guided *g)
{
    fclose(copies);
    copies = NULL;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_guided_run(dir, topo, g, err), QR_OK, "%s", err);
}

static const qr_row_guided_port *row(const qr_guided *g, uint32_t sw, qr_node to)
{
    return qr_guided_port(g, sw, port_to(sw, to));
}

Test(guided, delivered_probes_cross_every_port_once)
{
    counters(UINT32_MAX, 0);
    for (uint32_t s = 0; s < 20; s++)
        probe(40001, s, 10);
    qr_guided g;
    run(&g);
    cr_assert_eq(g.probes, 20);
    cr_assert_eq(g.delivered, 20);
    cr_assert_eq(g.lost, 0);
    cr_assert_eq(g.copies, 200);
    cr_assert_eq(g.tuples, 1);
    cr_assert_eq(g.pinned, 1);
    cr_assert_eq(g.n_ports, 5, "the 5 ports of the path");
    for (size_t i = 0; i < g.n_ports; i++) {
        cr_assert_eq(g.ports[i].probes, 20);
        cr_assert_eq(g.ports[i].lost + g.ports[i].silent, 0);
    }
    qr_guided_free(&g);
}

Test(guided, losses_on_a_link_and_inside_a_switch_are_placed_and_silent)
{
    counters(UINT32_MAX, 0);
    for (uint32_t s = 0; s < 10; s++)
        probe(40001, s, 10);
    probe(40001, 10, 4); /* left s8 towards s16, never arrived: the link s8>s16 */
    probe(40001, 11, 5); /* arrived at s16, never left: inside s16, headed to s10 */
    probe(40002, 0, 3);  /* another 5-tuple: arrived at s8 and no probe of it ever left s8 */
    qr_guided g;
    run(&g);
    cr_assert_eq(g.probes, 13);
    cr_assert_eq(g.delivered, 10);
    cr_assert_eq(g.lost, 3);
    cr_assert_eq(g.lost_link, 1);
    cr_assert_eq(g.lost_inside, 2);
    cr_assert_eq(g.pinned, 1, "the second 5-tuple never reached its host");
    const qr_row_guided_port *a = row(&g, 8, qr_topology_switch_node(topo, 16));
    cr_assert_not_null(a);
    cr_assert_eq(a->probes, 12, "10 delivered, the one lost after it, the one lost beyond");
    cr_assert_eq(a->lost, 1);
    cr_assert_eq(a->inside, 0);
    cr_assert(a->silent);
    cr_assert_str_eq(a->link_name, "s8>s16");
    const qr_row_guided_port *b = row(&g, 16, qr_topology_switch_node(topo, 10));
    cr_assert_not_null(b);
    cr_assert_eq(b->probes, 11);
    cr_assert_eq(b->lost, 1);
    cr_assert_eq(b->inside, 1);
    cr_assert(b->silent);
    const qr_row_guided_port *c = qr_guided_port(&g, 8, QR_GUIDED_INSIDE);
    cr_assert_not_null(c, "no way out of s8 known for the second 5-tuple");
    cr_assert_eq(c->lost, 1);
    cr_assert_str_eq(c->link_name, "s8");
    cr_assert_eq(g.ports[0].lost, 1, "most lost first");
    qr_guided_free(&g);
}

Test(guided, a_counter_that_moved_or_was_not_read_makes_no_loss_silent)
{
    uint32_t p = port_to(8, qr_topology_switch_node(topo, 16));
    counters(8, p);
    probe(40001, 0, 10);
    probe(40001, 1, 4);
    probe(40001, 2, 5);
    qr_guided g;
    run(&g);
    cr_assert(g.counters_known);
    const qr_row_guided_port *a = qr_guided_port(&g, 8, p);
    cr_assert_eq(a->lost, 1);
    cr_assert_eq(a->counter_drops, 3);
    cr_assert_not(a->silent, "the switch counted drops at that port: maybe its queue's");
    cr_assert(row(&g, 16, qr_topology_switch_node(topo, 10))->silent);
    qr_guided_free(&g);
    /* no counters: nothing can be called silent */
    char c[128];
    snprintf(c, sizeof c, "%s/counters.csv", dir);
    cr_assert_eq(unlink(c), 0);
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_guided_run(dir, topo, &g, err), QR_OK, "%s", err);
    cr_assert_not(g.counters_known);
    for (size_t i = 0; i < g.n_ports; i++)
        cr_assert_not(g.ports[i].silent);
    qr_guided_free(&g);
}

Test(guided, bad_files_name_the_file_and_line)
{
    char err[QR_ERRBUF_SIZE], p[128];
    qr_guided g;
    probe(40001, 0, 10);
    fprintf(copies, "10.0.0.2,10.1.0.2,40001,1,s99,0,in,5\n");
    fclose(copies);
    copies = NULL;
    cr_assert_eq(qr_guided_run(dir, topo, &g, err), QR_EVALUE);
    cr_assert(strstr(err, "guided.csv:12") && strstr(err, "s99"), "%s", err);
    struct {
        const char *line, *says;
        int rc;
    } bad[] = {{"10.0.0.2,10.1.0.2,40001,1,s8,0,sideways,5", "not a copy", QR_EFORMAT},
               {"10.0.0.2,10.1.0.2,70000,1,s8,0,in,5", "not a copy", QR_EFORMAT},
               {"10.0.0.2,10.1.0.2,40001,1,s8,0,in", "not a copy", QR_EFORMAT},
               {"10.0.0.2,10.1.0.2,40001,1,s8,7,in,5", "no switch port s8:7", QR_EVALUE},
               {"10.9.0.2,10.1.0.2,40001,1,s8,0,in,5", "no host", QR_EVALUE},
               {"10.0.0.2,10.1.0.2,40001,x,s8,0,in,5", "not a copy", QR_EFORMAT}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(p, sizeof p, "%s/guided.csv", dir);
        FILE *f = fopen(p, "w");
        fprintf(f, "src,dst,sport,seq,switch,port,dir,time_ns\n%s\n", bad[i].line);
        fclose(f);
        cr_assert_eq(qr_guided_run(dir, topo, &g, err), bad[i].rc, "%s: %s", bad[i].line, err);
        cr_assert(strstr(err, "guided.csv:2") && strstr(err, bad[i].says), "%s: %s", bad[i].line,
                  err);
    }
    FILE *f = fopen(p, "w");
    fprintf(f, "src,dst,port\n");
    fclose(f);
    cr_assert_eq(qr_guided_run(dir, topo, &g, err), QR_EFORMAT);
    cr_assert(strstr(err, "guided.csv:1"), "%s", err);
    cr_assert_eq(unlink(p), 0);
    cr_assert_eq(qr_guided_run(dir, topo, &g, err), QR_ENOENT);
}

Test(guided, the_plan_pins_distinct_ports_towards_the_next_pod)
{
    qr_guided_pin *a, *b;
    size_t na, nb;
    cr_assert_eq(qr_guided_plan(topo, 8, 7, &a, &na), QR_OK);
    cr_assert_eq(na, 16 * 8);
    for (size_t i = 0; i < na; i++) {
        cr_assert_eq(a[i].src, i / 8);
        cr_assert_eq(a[i].dst, (a[i].src + 4) % 16, "the host with its index in the next pod");
        cr_assert(a[i].sport >= 40000 && a[i].sport < 60000);
        for (size_t j = i / 8 * 8; j < i; j++)
            cr_assert_neq(a[j].sport, a[i].sport, "host %u uses port %u twice", a[i].src,
                          a[i].sport);
    }
    cr_assert_eq(qr_guided_plan(topo, 8, 7, &b, &nb), QR_OK);
    cr_assert_eq(memcmp(a, b, na * sizeof *a), 0, "the same seed, the same plan");
    free(b);
    cr_assert_eq(qr_guided_plan(topo, 8, 8, &b, &nb), QR_OK);
    cr_assert_neq(memcmp(a, b, na * sizeof *a), 0, "another seed, other ports");
    free(a);
    free(b);
    cr_assert_eq(qr_guided_plan(topo, 0, 7, &a, &na), QR_EINVAL);
    cr_assert_eq(qr_guided_plan(topo, QR_GUIDED_MAX_PATHS + 1, 7, &a, &na), QR_EINVAL);
    qr_topology *star;
    cr_assert_eq(qr_topology_star(&star, 4), QR_OK);
    cr_assert_eq(qr_guided_plan(star, 8, 7, &a, &na), QR_EINVAL, "a star has one path");
    qr_topology_destroy(star);
}

/* Everflow's link round trips (qr_bounce_run) over randomized mirrors: every port of the plan
 * sends R rounds, each with a fate drawn at random (back, lost in S1, on the way out, inside S2,
 * on the way back) and times with a little noise; one port's cable is 50 us longer each way. The
 * analysis must count every fate where it was planted, measure the round trips the copies hold,
 * and flag exactly the slow port and the ports that lost probes. */
Test(guided, link_round_trips_count_every_fate_and_flag_the_planted_ports)
{
    fclose(copies);
    copies = NULL;
    qr_bounce_pin *pins;
    size_t n;
    cr_assert_eq(qr_bounce_plan(topo, &pins, &n), QR_OK);
    cr_assert_eq(n, 64, "every switch port to a switch of a k=4 fat tree");
    for (unsigned seed = 1; seed <= 20; seed++) {
        char p[128];
        snprintf(p, sizeof p, "%s/bounce.csv", dir);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f);
        fprintf(f, "src,dst,sport,seq,switch,port,dir,time_ns\n");
        unsigned st = seed;
        const uint32_t rounds = 15;
        size_t slow = (size_t)(rand_r(&st) % n);
        uint64_t want[64][5] = {{0}};
        for (uint32_t r = 0; r < rounds; r++)
            for (size_t i = 0; i < n; i++) {
                const qr_bounce_pin *x = &pins[i];
                /* port 0 always comes back, so every round is known; 1 in 10 fates a loss */
                int fate = i == 0 || rand_r(&st) % 10 ? 0 : 1 + rand_r(&st) % 4;
                want[i][fate]++;
                int64_t t = 1000000000LL * r + 1000 * (int64_t)i, leg = 1000 + rand_r(&st) % 300;
                if (i == slow)
                    leg += 50000;
                char a[24];
                snprintf(a, sizeof a, "%u.%u.%u.%u", x->addr >> 24, x->addr >> 16 & 255,
                         x->addr >> 8 & 255, x->addr & 255);
                if (fate == 1)
                    continue;
                fprintf(f, "%s,%s,8766,%u,s%u,%u,out,%lld\n", a, a, r, x->sw, x->port,
                        (long long)t);
                if (fate == 2)
                    continue;
                fprintf(f, "%s,%s,8766,%u,s%u,%u,in,%lld\n", a, a, r, x->peer, x->peer_port,
                        (long long)(t += leg));
                if (fate == 3)
                    continue;
                fprintf(f, "%s,%s,8766,%u,s%u,%u,out,%lld\n", a, a, r, x->peer, x->peer_port,
                        (long long)(t += 2000));
                if (fate == 4)
                    continue;
                fprintf(f, "%s,%s,8766,%u,s%u,%u,in,%lld\n", a, a, r, x->sw, x->port,
                        (long long)(t + leg));
            }
        fclose(f);
        qr_bounce b;
        char err[QR_ERRBUF_SIZE];
        cr_assert_eq(qr_bounce_run(dir, topo, 2.0, &b, err), QR_OK, "%s", err);
        cr_assert_eq(b.n_rows, n);
        for (size_t i = 0; i < n; i++) {
            const qr_row_bounce *r = &b.rows[i];
            cr_assert(r->sw == pins[i].sw && r->port == pins[i].port);
            cr_assert_eq(r->sent, rounds);
            cr_assert_eq(r->returned, want[i][0], "seed %u %s", seed, r->link_name);
            cr_assert_eq(r->lost_in, want[i][1], "seed %u %s", seed, r->link_name);
            cr_assert_eq(r->lost_out, want[i][2], "seed %u %s", seed, r->link_name);
            cr_assert_eq(r->lost_peer, want[i][3], "seed %u %s", seed, r->link_name);
            cr_assert_eq(r->lost_back, want[i][4], "seed %u %s", seed, r->link_name);
            cr_assert_eq(r->unseen, 0);
            cr_assert_eq(r->lossy, want[i][0] < rounds, "seed %u %s", seed, r->link_name);
            cr_assert_eq(r->slow, i == slow && want[i][0] > 0, "seed %u %s: %lld ns", seed,
                         r->link_name, (long long)r->rtt_p50_ns);
            if (want[i][0]) { /* two legs of 1000-1299 ns (+50 us) and 2 us inside S2 */
                int64_t lo = 4000 + (i == slow ? 100000 : 0);
                cr_assert(r->rtt_min_ns >= lo && r->rtt_max_ns < lo + 600 &&
                              r->rtt_min_ns <= r->rtt_p50_ns && r->rtt_p50_ns <= r->rtt_max_ns,
                          "seed %u %s: %lld..%lld", seed, r->link_name, (long long)r->rtt_min_ns,
                          (long long)r->rtt_max_ns);
                cr_assert_eq(r->peer_p50_ns, 2000);
            }
        }
        qr_bounce_free(&b);
    }
    /* a copy of no plan's probe is an error naming the file */
    char p[128];
    snprintf(p, sizeof p, "%s/bounce.csv", dir);
    FILE *f = fopen(p, "w");
    fprintf(f, "src,dst,sport,seq,switch,port,dir,time_ns\n10.0.0.2,10.0.0.2,8766,0,s0,2,out,5\n");
    fclose(f);
    qr_bounce b;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_bounce_run(dir, topo, 2.0, &b, err), QR_EVALUE);
    cr_assert(strstr(err, "bounce.csv") && strstr(err, "round-trip probe"), "%s", err);
    free(pins);
}
