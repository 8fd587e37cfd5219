/* The injection plan and its sources (plan.h, source.h, pcap_stream.h), on generated recordings.
 *
 * Each seed makes a recording of a star of four hosts: random flows, each direction a train of
 * packets with bursts and idle gaps, every host's capture in time order. Over both sampling
 * methods and several thresholds:
 *  - the plan's order is a permutation sorted by (injection time, recorded index);
 *  - at a rate threshold th every inferred time is within th of the recorded time less the host's
 *    correction, and at 0 exactly that time;
 *  - a cursor gives every packet once, in the plan's order, at the plan's time, and the recording
 *    is unchanged by any of it;
 *  - the pcaps streamed give each host the same packets in the same order at the same times as
 *    the plan of the recording read whole, with the same counts and the same sample records.
 * Two implementations of one rule (sample, infer, order), checked against each other. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/pcap_file.h"
#include "qreplay/pcap_stream.h"
#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/replay.h"
#include "qreplay/topology.h"

#define HOSTS 4
#define MAX_FLOWS 6

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/qr-plan-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(plan, .init = setup, .fini = teardown);

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef struct gen_pkt {
    qr_packet pk;
    uint32_t dir;
} gen_pkt;

static int by_time(const void *a, const void *b)
{
    const gen_pkt *x = a, *y = b;
    if (x->pk.time_ns != y->pk.time_ns)
        return x->pk.time_ns < y->pk.time_ns ? -1 : 1;
    return x->dir < y->dir ? -1 : x->dir > y->dir;
}

/* A recording in dir made from seed: returns its packets' number. */
static uint64_t make_recording(uint64_t seed)
{
    char p[256], err[QR_ERRBUF_SIZE];
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    qr_scenario *scen;
    qr_topology *topo;
    cr_assert_eq(qr_scenario_create(&scen), QR_OK);
    cr_assert_eq(qr_scenario_set(scen, "topology.kind=star", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(scen, "topology.hosts=4", err), QR_OK, "%s", err);
    cr_assert_eq(qr_topology_star(&topo, HOSTS), QR_OK);
    size_t nf = 1 + rnd(&s) % MAX_FLOWS;
    qr_flow fl[MAX_FLOWS];
    for (size_t f = 0; f < nf; f++) {
        uint32_t a = (uint32_t)(rnd(&s) % HOSTS),
                 b = (uint32_t)((a + 1 + rnd(&s) % (HOSTS - 1)) % HOSTS);
        fl[f] = (qr_flow){f, a, b, 1000, (int64_t)(f * 1000), 0};
    }
    qr_flow_table *ft;
    cr_assert_eq(qr_flow_table_for_topology(&ft, fl, nf, topo, err), QR_OK, "%s", err);
    /* every direction's packets: bursts back to back (1.2 us apart), idle gaps between them */
    gen_pkt *all = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t d = 0; d < 2 * nf; d++) {
        const qr_flow *f = &fl[d / 2];
        uint32_t src = d % 2 ? f->dst : f->src, dst = d % 2 ? f->src : f->dst;
        int64_t t = f->start_ns + (int64_t)(rnd(&s) % 5000);
        size_t count = rnd(&s) % 60;
        for (size_t i = 0; i < count; i++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                all = realloc(all, cap * sizeof *all);
                cr_assert_not_null(all);
            }
            t += rnd(&s) % 4 ? 1200 + (int64_t)(rnd(&s) % 50) : 3000 + (int64_t)(rnd(&s) % 40000);
            qr_packet pk = {.time_ns = t,
                            .proto = 6,
                            .ttl = 64,
                            .ip_id = (uint16_t)i,
                            .ip_len = d % 2 ? 52 : 1500,
                            .tcp_flags = QR_TCP_ACK};
            uint16_t port = qr_flow_table_sender_port(ft, d / 2);
            pk.src_ip = qr_flow_table_host_addr(ft, src);
            pk.dst_ip = qr_flow_table_host_addr(ft, dst);
            pk.src_port = d % 2 ? QR_SINK_PORT : port;
            pk.dst_port = d % 2 ? port : QR_SINK_PORT;
            all[n++] = (gen_pkt){pk, d};
        }
    }
    qsort(all, n, sizeof *all, by_time);
    snprintf(p, sizeof p, "%s/pcap", dir);
    cr_assert_eq(qr_make_dirs(p, err), QR_OK);
    qr_row_host hosts[HOSTS];
    for (uint32_t h = 0; h < HOSTS; h++) {
        snprintf(p, sizeof p, "%s/pcap/h%04u.pcap", dir, h);
        qr_pcap_writer *w;
        cr_assert_eq(qr_pcap_writer_open(&w, p, err), QR_OK, "%s", err);
        uint64_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (qr_flow_table_dir_src(ft, all[i].dir) == h) {
                cr_assert_eq(qr_pcap_write(w, &all[i].pk, err), QR_OK, "%s", err);
                k++;
            }
        cr_assert_eq(qr_pcap_writer_close(w, err), QR_OK, "%s", err);
        hosts[h] = (qr_row_host){h, qr_flow_table_host_addr(ft, h), 0, k, 0, ""};
        snprintf(hosts[h].pcap, sizeof hosts[h].pcap, "pcap/h%04u.pcap", h);
    }
    qr_row_flow rows[MAX_FLOWS];
    for (size_t f = 0; f < nf; f++)
        rows[f] = (qr_row_flow){f,
                                fl[f].src,
                                fl[f].dst,
                                qr_flow_table_sender_port(ft, (uint32_t)f),
                                QR_SINK_PORT,
                                1000,
                                fl[f].start_ns,
                                -1,
                                -1,
                                0,
                                0,
                                0};
    qr_row_detected det[] = {qr_detected_row(0, 0, 1, 0)};
    qr_recording_info info = {
        NULL, "generated", QR_END_COMPLETED, 0, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0};
    snprintf(p, sizeof p, "%s/recording.h5", dir);
    cr_assert_eq(qr_recording_write(p, scen, &info, rows, nf, hosts, HOSTS, det, 1, NULL, 0, err),
                 QR_OK, "%s", err);
    free(all);
    qr_flow_table_destroy(ft);
    qr_topology_destroy(topo);
    qr_scenario_destroy(scen);
    return n;
}

static int cmp_rec(const void *a, const void *b)
{
    const qr_row_sample_record *x = a, *y = b;
    if (x->dir != y->dir)
        return x->dir < y->dir ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* One plan's properties, and the cursor over it. */
static void check_plan(const qr_recording *r, const qr_plan *plan, const int64_t *corr,
                       qr_sampling_method m, int64_t th, const char *what)
{
    for (uint32_t h = 0; h < HOSTS; h++) {
        size_t n, nt;
        const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
        const int64_t *t = qr_plan_times(plan, h, &nt);
        const uint32_t *o = qr_plan_order(plan, h);
        cr_assert_eq(nt, n, "%s host %u", what, h);
        uint8_t *seen = calloc(n ? n : 1, 1);
        for (size_t i = 0; i < n; i++) {
            cr_assert_lt(o[i], n);
            cr_assert_not(seen[o[i]], "%s host %u: packet %u twice in the order", what, h, o[i]);
            seen[o[i]] = 1;
            if (i)
                cr_assert(t[o[i - 1]] < t[o[i]] || (t[o[i - 1]] == t[o[i]] && o[i - 1] < o[i]),
                          "%s host %u: order %zu", what, h, i);
            int64_t want = pk[i].pk.time_ns - (corr ? corr[h] : 0);
            if (m == QR_SAMPLING_RATE)
                cr_assert_leq(llabs(t[i] - want), th, "%s host %u packet %zu", what, h, i);
        }
        free(seen);
    }
    qr_plan_cursor *c;
    cr_assert_eq(qr_plan_cursor_create(&c, r, plan), QR_OK);
    qr_source *src = qr_plan_cursor_source(c);
    char err[QR_ERRBUF_SIZE];
    for (uint32_t h = 0; h < HOSTS; h++) {
        size_t n, nt, k = 0;
        const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
        const int64_t *t = qr_plan_times(plan, h, &nt);
        const uint32_t *o = qr_plan_order(plan, h);
        qr_injection in, again;
        while (src->next(src, h, &in, err) == QR_OK && in.p) {
            cr_assert_eq(src->next(src, h, &again, err), QR_OK);
            cr_assert(again.p == in.p, "asking again without take gives the same packet");
            cr_assert(k < n && in.p == &pk[o[k]] && in.time_ns == t[o[k]], "%s host %u: %zu", what,
                      h, k);
            src->take(src, h);
            k++;
        }
        cr_assert_eq(k, n, "%s host %u: the cursor gave every packet", what, h);
    }
    qr_plan_cursor_free(c);
}

Test(plan, sampled_ordered_and_streamed_alike_over_generated_recordings)
{
    static const int64_t ths[] = {0, 1000, 5000, 20000};
    char err[QR_ERRBUF_SIZE], serr[QR_ERRBUF_SIZE];
    for (uint64_t seed = 1; seed <= 40; seed++) {
        uint64_t total = make_recording(seed);
        qr_recording *r;
        cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "seed %llu: %s",
                     (unsigned long long)seed, err);
        /* the recorded times, to see that nothing below changes them */
        uint64_t sum = 0;
        for (uint32_t h = 0; h < HOSTS; h++) {
            size_t n;
            const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
            for (size_t i = 0; i < n; i++)
                sum = sum * 31 + (uint64_t)pk[i].pk.time_ns;
        }
        for (int m = 0; m < 2; m++)
            for (size_t k = 0; k < sizeof ths / sizeof ths[0]; k++) {
                qr_sampling_method method = m ? QR_SAMPLING_GAP : QR_SAMPLING_RATE;
                int64_t th = ths[k];
                char what[96];
                snprintf(what, sizeof what, "seed %llu %s th %lld", (unsigned long long)seed,
                         m ? "gap" : "rate", (long long)th);
                qr_plan *plan;
                qr_sampling_stats st;
                qr_row_sample_record *recs;
                size_t nr;
                int rc = qr_plan_sample(&plan, r, NULL, method, th, &st, &recs, &nr, err);
                cr_assert_eq(rc, QR_OK, "%s: %s", what, err);
                cr_assert_eq(st.packets, total, "%s", what);
                cr_assert_eq(st.records, nr, "%s", what);
                if (method == QR_SAMPLING_RATE)
                    cr_assert_leq(st.max_error_ns, th, "%s", what);
                check_plan(r, plan, NULL, method, th, what);
                /* the stream: the same packets, order, times, counts and records */
                qr_pcap_stream *ps;
                cr_assert_eq(qr_pcap_stream_open(&ps, dir, NULL, method, th, serr), QR_OK, "%s: %s",
                             what, serr);
                cr_assert_not(qr_recording_has_packets(qr_pcap_stream_recording(ps)));
                qr_source *src = qr_pcap_stream_source(ps);
                for (uint32_t h = 0; h < HOSTS; h++) {
                    size_t n, nt, j = 0;
                    const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
                    const int64_t *t = qr_plan_times(plan, h, &nt);
                    const uint32_t *o = qr_plan_order(plan, h);
                    qr_injection in;
                    while ((rc = src->next(src, h, &in, serr)) == QR_OK && in.p) {
                        cr_assert_lt(j, n, "%s host %u: the stream gives more", what, h);
                        const qr_rec_packet *w = &pk[o[j]];
                        cr_assert(in.p->dir == w->dir && in.p->seq == w->seq &&
                                      in.p->drop_tag == w->drop_tag && in.time_ns == t[o[j]],
                                  "%s host %u #%zu: streamed %u/%u at %lld, planned %u/%u at %lld",
                                  what, h, j, in.p->dir, in.p->seq, (long long)in.time_ns, w->dir,
                                  w->seq, (long long)t[o[j]]);
                        src->take(src, h);
                        j++;
                    }
                    cr_assert_eq(rc, QR_OK, "%s host %u: %s", what, h, serr);
                    cr_assert_eq(j, n, "%s host %u", what, h);
                }
                qr_sampling_stats sst;
                FILE *f;
                cr_assert_eq(qr_pcap_stream_end(ps, &sst, &f, serr), QR_OK, "%s: %s", what, serr);
                cr_assert(sst.packets == st.packets && sst.records == st.records &&
                              sst.max_error_ns == st.max_error_ns,
                          "%s: stream %llu/%llu/%lld, plan %llu/%llu/%lld", what,
                          (unsigned long long)sst.packets, (unsigned long long)sst.records,
                          (long long)sst.max_error_ns, (unsigned long long)st.packets,
                          (unsigned long long)st.records, (long long)st.max_error_ns);
                qr_row_sample_record *srecs = calloc(nr ? nr : 1, sizeof *srecs);
                cr_assert_eq(fread(srecs, sizeof *srecs, nr, f), nr, "%s", what);
                qsort(srecs, nr, sizeof *srecs, cmp_rec);
                qsort(recs, nr, sizeof *recs, cmp_rec);
                for (size_t i = 0; i < nr; i++) /* field by field: rows have padding */
                    cr_assert(srecs[i].dir == recs[i].dir && srecs[i].index == recs[i].index &&
                                  srecs[i].time_ns == recs[i].time_ns &&
                                  srecs[i].gap_num == recs[i].gap_num &&
                                  srecs[i].gap_den == recs[i].gap_den,
                              "%s: record %zu", what, i);
                free(srecs);
                qr_h5_rows_free(recs);
                qr_pcap_stream_close(ps);
                qr_plan_free(plan);
            }
        /* corrections: exact at th 0 */
        int64_t corr[HOSTS] = {0, -333, 4, -(int64_t)(seed * 7)};
        qr_plan *plan;
        cr_assert_eq(qr_plan_sample(&plan, r, corr, QR_SAMPLING_RATE, 0, NULL, NULL, NULL, err),
                     QR_OK, "%s", err);
        check_plan(r, plan, corr, QR_SAMPLING_RATE, 0, "corrected");
        qr_plan_free(plan);
        uint64_t after = 0;
        for (uint32_t h = 0; h < HOSTS; h++) {
            size_t n;
            const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
            for (size_t i = 0; i < n; i++)
                after = after * 31 + (uint64_t)pk[i].pk.time_ns;
        }
        cr_assert_eq(after, sum, "seed %llu: the recording changed", (unsigned long long)seed);
        qr_recording_close(r);
        char cmd[160];
        snprintf(cmd, sizeof cmd, "rm -rf %s/pcap %s/recording.h5", dir, dir);
        cr_assert_eq(system(cmd), 0);
    }
}

Test(plan, a_bad_threshold_is_refused_and_a_stream_refuses_it_too)
{
    char err[QR_ERRBUF_SIZE];
    make_recording(3);
    qr_recording *r;
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    qr_plan *plan = (qr_plan *)1;
    cr_assert_eq(qr_plan_sample(&plan, r, NULL, QR_SAMPLING_RATE, -1, NULL, NULL, NULL, err),
                 QR_EINVAL);
    cr_assert_null(plan, "no plan after a refusal");
    qr_pcap_stream *ps;
    cr_assert_eq(qr_pcap_stream_open(&ps, dir, NULL, QR_SAMPLING_RATE, -1, err), QR_EINVAL);
    qr_recording_close(r);
}

/* A variant's input is one of its three forms; anything else is refused before an engine runs,
 * and leaves no replay folder behind. */
Test(plan, a_variant_refuses_an_input_it_cannot_replay)
{
    char err[QR_ERRBUF_SIZE], rd[128];
    make_recording(5);
    qr_recording *r, *tables;
    cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
    cr_assert_eq(qr_recording_open_tables(&tables, dir, NULL, err), QR_OK, "%s", err);
    qr_pcap_stream *ps;
    cr_assert_eq(qr_pcap_stream_open(&ps, dir, NULL, QR_SAMPLING_RATE, 5000, err), QR_OK, "%s",
                 err);
    snprintf(rd, sizeof rd, "%s/run", dir);
    qr_variant_settings v = {0};
    v.mode = QR_MODE_TAGGED;
    v.th_ns = 5000;
    const qr_scenario *s = qr_recording_scenario(r);
    qr_replay_input none = {NULL, NULL, NULL, NULL}, tab = {tables, NULL, NULL, NULL},
                    st = {NULL, NULL, ps, NULL};
    cr_assert_eq(qr_replay_variant(rd, s, &none, &v, qr_replay_native, NULL, err), QR_EINVAL);
    cr_assert_eq(qr_replay_variant(rd, s, &tab, &v, qr_replay_native, NULL, err), QR_EINVAL);
    cr_assert(strstr(err, "not read"), "%s", err);
    v.reconcile = 1;
    cr_assert_eq(qr_replay_variant(rd, s, &st, &v, qr_replay_native, NULL, err), QR_EINVAL);
    cr_assert(strstr(err, "streamed"), "%s", err);
    v.reconcile = 0;
    v.th_ns = 2000; /* the stream was opened at 5 us */
    cr_assert_eq(qr_replay_variant(rd, s, &st, &v, qr_replay_native, NULL, err), QR_EINVAL);
    char p[256];
    snprintf(p, sizeof p, "%s/replay/tagged_th_2", rd);
    cr_assert_neq(access(p, F_OK), 0, "no folder left behind");
    qr_pcap_stream_close(ps);
    qr_recording_close(tables);
    qr_recording_close(r);
}

/* A variant hands back the plan it ran (qr_variant_settings.plan_out): the same times and order
 * as the plan sampled apart, over seeds; nothing on an error. */
Test(plan, a_variant_hands_back_the_plan_it_ran)
{
    char err[QR_ERRBUF_SIZE], rd[128];
    snprintf(rd, sizeof rd, "%s/run", dir);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        make_recording(seed);
        qr_recording *r;
        cr_assert_eq(qr_recording_open(&r, dir, NULL, err), QR_OK, "%s", err);
        const qr_scenario *s = qr_recording_scenario(r);
        qr_plan *got = NULL, *want = NULL;
        qr_variant_settings v = {0};
        v.mode = QR_MODE_TAGGED;
        v.th_ns = (int64_t)(seed * 1000);
        v.plan_out = &got;
        qr_replay_input in = {r, NULL, NULL, NULL};
        cr_assert_eq(qr_replay_variant(rd, s, &in, &v, qr_replay_native, NULL, err), QR_OK,
                     "seed %llu: %s", (unsigned long long)seed, err);
        cr_assert_not_null(got);
        cr_assert_eq(qr_plan_sample(&want, r, NULL, qr_scenario_config(s)->sampling.method, v.th_ns,
                                    NULL, NULL, NULL, err),
                     QR_OK, "%s", err);
        for (uint32_t h = 0; h < HOSTS; h++) {
            size_t na, nb;
            const int64_t *a = qr_plan_times(got, h, &na), *b = qr_plan_times(want, h, &nb);
            cr_assert_eq(na, nb);
            cr_assert_eq(memcmp(a, b, na * sizeof *a), 0, "seed %llu host %u: the times",
                         (unsigned long long)seed, h);
            cr_assert_eq(
                memcmp(qr_plan_order(got, h), qr_plan_order(want, h), na * sizeof(uint32_t)), 0,
                "seed %llu host %u: the order", (unsigned long long)seed, h);
        }
        qr_plan_free(got);
        qr_plan_free(want);
        /* an error: nothing handed back */
        got = (qr_plan *)&v;
        v.name = "../x";
        v.th_ns = -1;
        cr_assert_neq(qr_replay_variant(rd, s, &in, &v, qr_replay_native, NULL, err), QR_OK);
        cr_assert(got == NULL || got == (qr_plan *)&v, "a plan handed back after an error");
        qr_recording_close(r);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s/pcap %s/recording.h5 %s", dir, dir, rd);
        cr_assert_eq(system(cmd), 0);
    }
}
