/* Flow table and naming: ports per source host, directions, 5-tuple lookup both ways, packet ids
 * and queue keys round-trip, bad flows named in the error. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/flowtable.h"

static qr_flow F(uint64_t id, uint32_t src, uint32_t dst)
{
    qr_flow f = {id, src, dst, 1000, 0, 0};
    return f;
}

Test(flowtable, ports_directions_and_lookup)
{
    qr_topology *t;
    cr_assert_eq(qr_topology_fattree(&t, 4), QR_OK);
    qr_flow flows[] = {F(0, 0, 5), F(1, 0, 9), F(2, 3, 0), F(3, 0, 5)};
    qr_flow_table *ft;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_flow_table_for_topology(&ft, flows, 4, t, err), QR_OK, "%s", err);
    cr_assert_eq(qr_flow_table_flows(ft), 4);
    cr_assert_eq(qr_flow_table_directions(ft), 8);
    /* sender ports count per source host, in schedule order */
    cr_assert_eq(qr_flow_table_sender_port(ft, 0), 10000);
    cr_assert_eq(qr_flow_table_sender_port(ft, 1), 10001);
    cr_assert_eq(qr_flow_table_sender_port(ft, 2), 10000);
    cr_assert_eq(qr_flow_table_sender_port(ft, 3), 10002);
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t src = flows[f].src, dst = flows[f].dst, dir;
        qr_five_tuple data = {qr_topology_host_addr(t, src), qr_topology_host_addr(t, dst),
                              qr_flow_table_sender_port(ft, f), QR_SINK_PORT, 6};
        qr_five_tuple ack = {data.dst_ip, data.src_ip, data.dst_port, data.src_port, 6};
        cr_assert_eq(qr_flow_table_resolve(ft, &data, &dir), QR_OK);
        cr_assert_eq(dir, qr_dir_data(f));
        cr_assert_eq(qr_flow_table_resolve(ft, &ack, &dir), QR_OK);
        cr_assert_eq(dir, qr_dir_ack(f));
        cr_assert_eq(qr_dir_flow(dir), f);
        cr_assert(qr_dir_is_ack(dir));
        cr_assert_eq(qr_flow_table_dir_src(ft, qr_dir_data(f)), src);
        cr_assert_eq(qr_flow_table_dir_dst(ft, qr_dir_data(f)), dst);
        cr_assert_eq(qr_flow_table_dir_src(ft, qr_dir_ack(f)), dst);
        cr_assert_eq(qr_flow_table_dir_dst(ft, qr_dir_ack(f)), src);
        uint32_t back;
        cr_assert_eq(qr_flow_table_flow_of_sender(ft, data.src_ip, data.src_port, &back), QR_OK);
        cr_assert_eq(back, f);
        /* UDP, or the right ports to the wrong host, belong to no flow */
        data.proto = 17;
        cr_assert_eq(qr_flow_table_resolve(ft, &data, &dir), QR_ENOTFOUND);
        data.proto = 6;
        data.dst_ip =
            qr_topology_host_addr(t, (dst + 1) % 16 == src ? (dst + 2) % 16 : (dst + 1) % 16);
        cr_assert_eq(qr_flow_table_resolve(ft, &data, &dir), QR_ENOTFOUND);
    }
    qr_flow_table_destroy(ft);
    qr_topology_destroy(t);
}

Test(flowtable, bad_flows_are_named)
{
    uint32_t addr[3] = {1, 2, 3};
    char err[QR_ERRBUF_SIZE];
    qr_flow_table *ft = (qr_flow_table *)1;
    qr_flow bad[] = {F(0, 0, 1), F(1, 2, 2)};
    cr_assert_eq(qr_flow_table_create(&ft, bad, 2, addr, 3, err), QR_EVALUE);
    cr_assert_null(ft);
    cr_assert(strstr(err, "flow 1"), "%s", err);
    qr_flow out[] = {F(0, 0, 3)};
    cr_assert_eq(qr_flow_table_create(&ft, out, 1, addr, 3, err), QR_EVALUE);
    cr_assert(strstr(err, "flow 0"), "%s", err);
    /* a host that starts more flows than it has sender ports */
    size_t n = 65536 - QR_FIRST_SENDER_PORT + 1;
    qr_flow *many = calloc(n, sizeof *many);
    for (size_t i = 0; i < n; i++)
        many[i] = F(i, 1, 2);
    cr_assert_eq(qr_flow_table_create(&ft, many, n, addr, 3, err), QR_EVALUE);
    cr_assert(strstr(err, "host 1"), "%s", err);
    cr_assert_eq(qr_flow_table_create(&ft, many, n - 1, addr, 3, err), QR_OK, "%s", err);
    cr_assert_eq(qr_flow_table_sender_port(ft, (uint32_t)(n - 2)), 65535);
    qr_flow_table_destroy(ft);
    free(many);
}

/* Property: ids and keys round-trip over random values. */
Test(flowtable, packet_ids_and_queue_keys_round_trip)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int i = 0; i < 100000; i++) {
        uint32_t dir = (uint32_t)gsl_rng_get(r), seq = (uint32_t)gsl_rng_get(r);
        uint64_t id = qr_packet_id(dir, seq);
        cr_assert(qr_packet_id_dir(id) == dir && qr_packet_id_seq(id) == seq);
        uint32_t sw = (uint32_t)gsl_rng_get(r), port = (uint32_t)gsl_rng_get(r);
        uint64_t k = qr_queue_key(sw, port);
        cr_assert(qr_queue_key_switch(k) == sw && qr_queue_key_port(k) == port);
        /* keys order like (switch, port) pairs */
        uint32_t sw2 = (uint32_t)gsl_rng_get(r), port2 = (uint32_t)gsl_rng_get(r);
        uint64_t k2 = qr_queue_key(sw2, port2);
        int lex = sw != sw2 ? (sw < sw2 ? -1 : 1) : (port < port2 ? -1 : port > port2);
        cr_assert_eq(k < k2 ? -1 : k > k2, lex);
    }
    /* seq beyond 32 bits keeps its low 32 bits (the IP ID is its low 16) */
    cr_assert_eq(qr_packet_id_seq(qr_packet_id(3, 0x100000005ULL)), 5);
    gsl_rng_free(r);
}

Test(flowtable, same_time_order_key)
{
    qr_five_tuple ft = {1, 2, 3, 4, 6};
    cr_assert_eq(qr_same_time_key(1, 77, &ft, 9), 77);
    uint64_t a = qr_same_time_key(0, 0, &ft, 9), b = qr_same_time_key(0, 0, &ft, 10);
    cr_assert_eq(b - a, 1, "untagged packets of one flow order by IP ID");
    cr_assert_eq(a >> 16, qr_flow_hash(&ft, 0) & 0xffffffffffffULL);
}

Test(flowtable, completion_time_and_per_direction_numbers)
{
    cr_assert_eq(qr_fct_ns(1000, 5000), 4000);
    cr_assert_eq(qr_fct_ns(1000, -1), -1, "not completed");
    cr_assert_eq(qr_fct_ns(0, 0), 0);
    qr_dir_numbers *n;
    cr_assert_eq(qr_dir_numbers_create(&n, 3), QR_OK);
    uint64_t seq;
    uint16_t id;
    for (uint64_t i = 0; i < 70000; i++) {
        cr_assert_eq(qr_dir_numbers_next(n, 1, &seq, &id), QR_OK);
        cr_assert_eq(seq, i, "consecutive per direction");
        cr_assert_eq(id, (uint16_t)(i & 0xffff), "the IP ID wraps at 16 bits");
    }
    cr_assert_eq(qr_dir_numbers_next(n, 0, &seq, &id), QR_OK);
    cr_assert_eq(seq, 0, "each direction counts on its own");
    cr_assert_eq(qr_dir_numbers_next(n, 3, &seq, &id), QR_EINVAL);
    qr_dir_numbers_destroy(n);
    qr_dir_numbers_destroy(NULL);
}
