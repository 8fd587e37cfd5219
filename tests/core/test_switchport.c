/* A switch port's decision for an arriving packet (switchport.h): planted drop rules first, then
 * faulty links, then the buffer's admission; the ECN rule; the flow a packet is accounted to. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/switchport.h"

#define SYN 0x02
#define ACK 0x10

typedef struct fixture {
    qr_topology *t;
    qr_flow_table *ft;
    qr_buffer *b;
    qr_port port;
    uint32_t up_port; /* the port of the first switch of flow 0's data path toward its second */
} fixture;

/* k=4 FatTree; flow 0 from h0 to h15 (crosses the core); a 100 KB buffer, alpha 1, on the first
 * switch of flow 0's data path (h0's edge switch). */
static void setup(fixture *x, const char *drop_rules, const char *gray)
{
    char err[QR_ERRBUF_SIZE];
    memset(x, 0, sizeof *x);
    cr_assert_eq(qr_topology_fattree(&x->t, 4), QR_OK);
    qr_flow flows[1] = {{0, 0, 15, 100000, 0, 0}};
    cr_assert_eq(qr_flow_table_for_topology(&x->ft, flows, 1, x->t, err), QR_OK, "%s", err);
    uint32_t sw, hport;
    qr_topology_host_attach(x->t, 0, &sw, &hport);
    qr_buffer_cfg cfg = {0};
    cfg.size_bytes = 100000;
    cfg.alpha = 1.0;
    cfg.n_queues = qr_topology_ports(x->t, sw);
    cr_assert_eq(qr_buffer_create(&x->b, &cfg), QR_OK);
    x->port.buffer = x->b;
    x->port.sw = sw;
    x->port.mode = QR_MODE_PLAIN;
    cr_assert_eq(qr_faults_create(&x->port.faults, drop_rules, x->ft, x->t, err), QR_OK, "%s", err);
    qr_link_fault_texts texts = {{gray, NULL, NULL, NULL}};
    cr_assert_eq(qr_link_faults_create(&x->port.link_faults, &texts, x->t, 1, err), QR_OK, "%s",
                 err);
}

static void teardown(fixture *x)
{
    qr_faults_destroy(x->port.faults);
    qr_link_faults_destroy(x->port.link_faults);
    qr_buffer_destroy(x->b);
    qr_flow_table_destroy(x->ft);
    qr_topology_destroy(x->t);
}

/* A data packet of flow 0 (payload 1000 B) as the port sees it; the port is the one that routes
 * it. */
static qr_port_packet data_packet(fixture *x)
{
    qr_port_packet p = {0};
    p.bytes = 1040;
    p.has_dir = 1;
    p.dir = qr_dir_data(0);
    p.has_tcp = 1;
    p.tcp_flags = ACK;
    p.payload_bytes = 1000;
    p.has_tuple = 1;
    const qr_flow *f = qr_flow_table_flow(x->ft, 0);
    p.ft = (qr_five_tuple){qr_flow_table_host_addr(x->ft, f->src),
                           qr_flow_table_host_addr(x->ft, f->dst),
                           qr_flow_table_sender_port(x->ft, 0), QR_SINK_PORT, 6};
    cr_assert_eq(qr_topology_route(x->t, x->port.sw, &p.ft, &x->port.port), QR_OK);
    return p;
}

Test(switchport, a_drop_rule_wins_then_the_faulty_link_then_the_buffer)
{
    fixture x;
    /* the rule drops flow 0's 2nd data packet at its first switch */
    setup(&x, "flow 0 data 2", NULL);
    qr_port_packet p = data_packet(&x);
    qr_decision d;
    int mark;
    cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_ADMIT);
    cr_assert_eq(qr_buffer_queue(x.b, x.port.port), 1040, "an admitted packet is accounted");
    cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_DROP_FAULT, "the 2nd data packet is the rule's");
    cr_assert_eq(qr_buffer_queue(x.b, x.port.port), 1040, "a dropped packet takes no buffer");
    cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_ADMIT, "the 3rd is not");
    teardown(&x);
    /* a packet without its direction (no tag) or TCP header is not counted by the rule */
    setup(&x, "flow 0 data 1", NULL);
    p = data_packet(&x);
    p.has_tcp = 0;
    cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_ADMIT);
    p.has_tcp = 1;
    cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_DROP_FAULT, "the first packet the rule counts is its 1st");
    teardown(&x);
}

Test(switchport, a_faulty_link_drops_before_the_buffer_is_asked)
{
    /* a gray link at 100% on the link out of the port flow 0 takes */
    qr_node_kind kind;
    uint32_t peer, peer_port;
    fixture y;
    setup(&y, "", NULL);
    qr_port_packet p = data_packet(&y);
    cr_assert_eq(qr_topology_link(y.t, y.port.sw, y.port.port, &kind, &peer, &peer_port), QR_OK);
    char gray[64];
    snprintf(gray, sizeof gray, "s%u>s%u 100%%", y.port.sw, peer);
    uint32_t port = y.port.port;
    teardown(&y);
    setup(&y, "flow 0 data 1000", gray); /* a rule that counts it but does not drop yet */
    y.port.port = port;
    qr_decision d;
    int mark;
    cr_assert_eq(qr_port_arrive(&y.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_DROP_FAULT);
    cr_assert_eq(qr_buffer_queue(y.b, port), 0);
    /* a packet whose 5-tuple is not known cannot be matched to the link: the buffer decides */
    p.has_tuple = 0;
    cr_assert_eq(qr_port_arrive(&y.port, &p, &d, &mark), QR_OK);
    cr_assert_eq(d, QR_ADMIT);
    teardown(&y);
}

Test(switchport, the_buffer_decides_the_rest_and_ecn_marks_above_the_threshold)
{
    fixture x;
    setup(&x, "", NULL);
    qr_port_packet p = data_packet(&x);
    x.port.ecn_threshold_bytes = 3000;
    qr_decision d;
    int mark, marks[4];
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
        cr_assert_eq(d, QR_ADMIT);
        marks[i] = mark;
    }
    /* queue before: 0, 1040, 2080, 3120 -> with 1040 more: 1040, 2080, 3120 (> 3000), 4160 */
    cr_assert_eq(marks[0], 0);
    cr_assert_eq(marks[1], 0);
    cr_assert_eq(marks[2], 1);
    cr_assert_eq(marks[3], 1);
    /* fill to the dynamic threshold: B = 100000, alpha 1: q + s <= B - Q fails eventually */
    int dropped = 0;
    for (int i = 0; i < 200 && !dropped; i++) {
        cr_assert_eq(qr_port_arrive(&x.port, &p, &d, &mark), QR_OK);
        dropped = d == QR_DROP_THRESHOLD;
        cr_assert(d == QR_ADMIT || d == QR_DROP_THRESHOLD);
        if (d != QR_ADMIT)
            cr_assert_eq(mark, 0, "a dropped packet is not marked");
    }
    cr_assert(dropped, "the threshold is reached");
    cr_assert_leq(qr_buffer_queue(x.b, x.port.port), 50000);
    teardown(&x);
}

Test(switchport, ecn_rule_and_flow_attribution)
{
    cr_assert_eq(qr_ecn_mark(0, 1500, 0), 0, "no threshold: never");
    cr_assert_eq(qr_ecn_mark(1500, 1500, 3000), 0, "exactly at the threshold: not above");
    cr_assert_eq(qr_ecn_mark(1501, 1500, 3000), 1);
    qr_port_packet p = {0};
    cr_assert_eq(qr_port_flow(&p), 0, "no direction and no 5-tuple: flow 0");
    p.has_tuple = 1;
    p.ft = (qr_five_tuple){0x0a000002, 0x0a000103, 10000, 5001, 6};
    cr_assert_eq(qr_port_flow(&p), (uint32_t)qr_flow_hash(&p.ft, 0));
    p.has_dir = 1;
    p.dir = 7;
    cr_assert_eq(qr_port_flow(&p), 7, "the direction wins over the 5-tuple");
}
