/* [faults] drop (faults.h): the rule grammar and its errors, packet classes, resolution against a
 * workload (flows that exist, switches on the path), and the per-packet decision: exactly the
 * named packets of the named kind, counted at the named switch, are dropped. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/faults.h"
#include "qreplay/random.h"
#include "qreplay/scenario.h"

#define SYN 0x02
#define ACK 0x10
#define FIN 0x01

Test(faults, rules_parse_with_defaults_ranges_and_switches)
{
    qr_fault_rule r[8];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(
        qr_fault_rules_parse(" flow 0 data 5 , flow 3 ack 2-4 at 17,flow 5 syn", r, 8, &n, err),
        QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(r[0].flow, 0);
    cr_assert_eq(r[0].kind, QR_FAULT_DATA);
    cr_assert_eq(r[0].first, 5);
    cr_assert_eq(r[0].last, 5);
    cr_assert_eq(r[0].sw, -1);
    cr_assert_eq(r[1].kind, QR_FAULT_ACK);
    cr_assert_eq(r[1].first, 2);
    cr_assert_eq(r[1].last, 4);
    cr_assert_eq(r[1].sw, 17);
    cr_assert_eq(r[2].kind, QR_FAULT_SYN);
    cr_assert_eq(r[2].first, 1);
    char buf[96];
    cr_assert_str_eq(qr_fault_rule_format(&r[1], buf, sizeof buf), "flow 3 ack 2-4 at 17");
    cr_assert_eq(qr_fault_rules_parse("   ", r, 8, &n, err), QR_OK);
    cr_assert_eq(n, 0);
}

Test(faults, bad_rules_name_the_rule_and_the_reason)
{
    static const struct {
        const char *text, *says;
    } bad[] = {{"flow 0 data 5,", "rule 2 is empty"},
               {"flow x data 1", "not a number"},
               {"flow 0 fin 1", "syn, synack, data or ack"},
               {"flow 0 data 0", "from 1"},
               {"flow 0 data 5-3", "M >= N"},
               {"flow 0 data 1 on 3", "'at S'"},
               {"flow 0 data 1 at", "'at S'"},
               {"flow 0 data 1 at -2", "not a number"},
               {"flw 0 data 1", "expected 'flow"},
               {"flow 0", "expected 'flow"},
               {"flow 0 data 1, flow 1 ack -3", "rule 2"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qr_fault_rule r[8];
        size_t n;
        char err[QR_ERRBUF_SIZE] = "";
        cr_assert_eq(qr_fault_rules_parse(bad[i].text, r, 8, &n, err), QR_EVALUE, "%s",
                     bad[i].text);
        cr_assert(strstr(err, bad[i].says), "'%s': %s", bad[i].text, err);
    }
    qr_fault_rule r[2];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_fault_rules_parse("flow 0 syn, flow 1 syn, flow 2 syn", r, 2, &n, err),
                 QR_EVALUE);
    cr_assert(strstr(err, "more than 2 rules"), "%s", err);
    /* the scenario key checks the syntax where it is read */
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "faults.drop=flow 0 dat 1", err), QR_EVALUE);
    cr_assert(strstr(err, "faults") && strstr(err, "rule 1"), "%s", err);
    cr_assert_eq(qr_scenario_set(s, "faults.drop=flow 0 data 1-2, flow 1 ack", err), QR_OK, "%s",
                 err);
    cr_assert_str_eq(qr_scenario_config(s)->faults.drop, "flow 0 data 1-2, flow 1 ack");
    qr_scenario_destroy(s);
}

Test(faults, packets_are_classified_by_direction_flags_and_payload)
{
    qr_fault_kind k;
    cr_assert_eq(qr_fault_classify(0, SYN, 0, &k), QR_OK);
    cr_assert_eq(k, QR_FAULT_SYN);
    cr_assert_eq(qr_fault_classify(1, SYN | ACK, 0, &k), QR_OK);
    cr_assert_eq(k, QR_FAULT_SYNACK);
    cr_assert_eq(qr_fault_classify(2, ACK, 1448, &k), QR_OK);
    cr_assert_eq(k, QR_FAULT_DATA);
    cr_assert_eq(qr_fault_classify(2, ACK | FIN, 100, &k), QR_OK);
    cr_assert_eq(k, QR_FAULT_DATA);
    cr_assert_eq(qr_fault_classify(3, ACK, 0, &k), QR_OK);
    cr_assert_eq(k, QR_FAULT_ACK);
    cr_assert_eq(qr_fault_classify(3, ACK | FIN, 0, &k), QR_OK);
    cr_assert_eq(k, QR_FAULT_ACK);
    /* no rule counts the client's pure ACKs, a SYN in the wrong direction, payload going back */
    cr_assert_eq(qr_fault_classify(2, ACK, 0, &k), QR_ENOTFOUND);
    cr_assert_eq(qr_fault_classify(1, SYN, 0, &k), QR_ENOTFOUND);
    cr_assert_eq(qr_fault_classify(0, SYN | ACK, 0, &k), QR_ENOTFOUND);
    cr_assert_eq(qr_fault_classify(3, ACK, 10, &k), QR_ENOTFOUND);
}

/* splitmix64 */
static uint64_t next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A k=4 FatTree with 3 flows across pods. */
static void fattree_flows(qr_topology **t, qr_flow_table **ft)
{
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_topology_fattree(t, 4), QR_OK);
    qr_flow flows[3] = {{0, 0, 15, 100000, 0, 0}, {1, 3, 8, 5000, 10, 0}, {2, 15, 0, 5000, 20, 0}};
    cr_assert_eq(qr_flow_table_for_topology(ft, flows, 3, *t, err), QR_OK, "%s", err);
}

Test(faults, rules_resolve_against_the_workload_and_its_paths)
{
    qr_topology *t;
    qr_flow_table *ft;
    fattree_flows(&t, &ft);
    char err[QR_ERRBUF_SIZE];
    qr_faults *f = NULL;
    cr_assert_eq(qr_faults_create(&f, "", ft, t, err), QR_OK);
    cr_assert_null(f);
    cr_assert_eq(qr_faults_create(&f, "flow 3 data 1", ft, t, err), QR_EVALUE);
    cr_assert(strstr(err, "flow 3 does not exist (the workload has 3 flows)"), "%s", err);
    /* paths: from the sender's edge switch to the receiver's, 5 switches across pods */
    uint32_t path[8];
    size_t hops;
    cr_assert_eq(qr_dir_path(ft, t, 0, path, 8, &hops), QR_OK);
    cr_assert_eq(hops, 5);
    uint32_t sw, port;
    qr_topology_host_attach(t, 0, &sw, &port);
    cr_assert_eq(path[0], sw);
    qr_topology_host_attach(t, 15, &sw, &port);
    cr_assert_eq(path[4], sw);
    /* a switch off the path is refused, naming the path */
    uint32_t off = 0;
    for (uint32_t s = 0; s < qr_topology_switches(t); s++) {
        int on = 0;
        for (size_t h = 0; h < hops; h++)
            on |= path[h] == s;
        if (!on) {
            off = s;
            break;
        }
    }
    char text[64];
    snprintf(text, sizeof text, "flow 0 data 1 at %u", off);
    cr_assert_eq(qr_faults_create(&f, text, ft, t, err), QR_EVALUE);
    cr_assert(strstr(err, "is not on flow 0's data path (switches "), "%s", err);
    /* the default switch is the first of the counted direction's path */
    cr_assert_eq(qr_faults_create(&f, "flow 0 ack 2", ft, t, err), QR_OK, "%s", err);
    uint32_t apath[8];
    cr_assert_eq(qr_dir_path(ft, t, 1, apath, 8, &hops), QR_OK);
    cr_assert_eq(qr_faults_rule(f, 0)->sw, (int64_t)apath[0]);
    qr_faults_destroy(f);
    qr_flow_table_destroy(ft);
    qr_topology_destroy(t);
}

Test(faults, exactly_the_named_packets_are_dropped_at_the_named_switch)
{
    qr_topology *t;
    qr_flow_table *ft;
    fattree_flows(&t, &ft);
    char err[QR_ERRBUF_SIZE];
    uint32_t path[8];
    size_t hops;
    cr_assert_eq(qr_dir_path(ft, t, 0, path, 8, &hops), QR_OK);
    char text[96];
    snprintf(text, sizeof text, "flow 0 data 3-5 at %u, flow 0 syn, flow 1 ack 2", path[2]);
    qr_faults *f;
    cr_assert_eq(qr_faults_create(&f, text, ft, t, err), QR_OK, "%s", err);
    /* seeded random streams of packets of every direction at every switch of flow 0's path;
     * count by hand what each rule must drop */
    uint64_t rng = qr_seed_derive(7, "faults-test", 0);
    uint64_t data_at_sw = 0, dropped_data = 0, syn_at_first = 0, dropped_syn = 0, acks = 0,
             dropped_ack = 0;
    for (int i = 0; i < 5000; i++) {
        uint32_t dir = (uint32_t)(next(&rng) % 6);
        uint32_t sw = path[next(&rng) % hops];
        int kind = (int)(next(&rng) % 3);
        uint8_t flags = kind == 0 ? (qr_dir_is_ack(dir) ? SYN | ACK : SYN) : ACK;
        uint32_t payload = kind == 2 && !qr_dir_is_ack(dir) ? 1448 : 0;
        size_t rule = 99;
        int drop = qr_faults_arrive(f, sw, dir, flags, payload, &rule);
        if (dir == 0 && kind == 2 && sw == path[2]) {
            data_at_sw++;
            cr_assert_eq(drop, data_at_sw >= 3 && data_at_sw <= 5);
            dropped_data += drop;
            if (drop)
                cr_assert_eq(rule, 0);
        } else if (dir == 0 && kind == 0 && sw == path[0]) {
            syn_at_first++;
            cr_assert_eq(drop, syn_at_first == 1);
            dropped_syn += drop;
        } else if (dir == 3 && kind == 1) {
            uint32_t apath[8];
            size_t ah;
            cr_assert_eq(qr_dir_path(ft, t, 3, apath, 8, &ah), QR_OK);
            if (sw == apath[0]) {
                acks++;
                cr_assert_eq(drop, acks == 2);
                dropped_ack += drop;
            } else {
                cr_assert_eq(drop, 0);
            }
        } else {
            cr_assert_eq(drop, 0, "dir %u kind %d sw %u", dir, kind, sw);
        }
    }
    cr_assert_eq(dropped_data, 3);
    cr_assert_eq(dropped_syn, 1);
    cr_assert_eq(qr_faults_dropped(f, 0), 3);
    cr_assert_eq(qr_faults_counted(f, 0), data_at_sw);
    cr_assert_eq(qr_faults_dropped(f, 1), 1);
    cr_assert_eq(qr_faults_dropped(f, 2), dropped_ack);
    qr_row_fault row;
    qr_faults_row(f, 0, &row);
    cr_assert_eq(row.rule, 1);
    cr_assert_str_eq(row.kind, "data");
    cr_assert_eq(row.sw, path[2]);
    cr_assert_eq(row.dropped, 3);
    qr_faults_destroy(f);
    qr_flow_table_destroy(ft);
    qr_topology_destroy(t);
}
