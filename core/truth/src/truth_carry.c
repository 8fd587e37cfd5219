/* The ground truth of a simulated run carried over to a recording imported from captures exported
 * from it (import.h): the round trip's replay scored against the runtime's queues. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/queuelog.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/truth.h"
#include "truth_internal.h"

#define NO_DIR UINT32_MAX

static int cmp_flow_bytes(const void *a, const void *b)
{
    const qr_flow_bytes *x = a, *y = b;
    return x->flow < y->flow ? -1 : x->flow > y->flow;
}

/* runtime direction -> imported direction, from the imported connections' original ports */
static int build_map(const qr_recording *rt, const qr_recording *im, const qr_row_import_conn *c,
                     size_t n_conn, uint32_t *map, size_t n_rt_dirs, const char *im_dir,
                     char *errbuf)
{
    const qr_flow_table *ft = qr_recording_flows(rt), *fi = qr_recording_flows(im);
    for (size_t d = 0; d < n_rt_dirs; d++)
        map[d] = NO_DIR;
    for (size_t i = 0; i < n_conn; i++) {
        if (c[i].flow >= qr_flow_table_flows(fi))
            return qri_err(errbuf, QR_EFORMAT, "%s: /import/connections row %zu: flow %u of %zu",
                           im_dir, i, c[i].flow, qr_flow_table_flows(fi));
        const qr_flow *b = qr_flow_table_flow(fi, c[i].flow);
        uint32_t f;
        if (b->src >= qr_recording_hosts(rt) ||
            qr_flow_table_flow_of_sender(ft, qr_flow_table_host_addr(ft, b->src), c[i].port0, &f) !=
                QR_OK)
            return qri_err(errbuf, QR_EVALUE,
                           "%s: connection %s:%u -> %s:%u is no flow of the run: were its captures "
                           "exported from it?",
                           im_dir, c[i].addr0, c[i].port0, c[i].addr1, c[i].port1);
        const qr_flow *a = qr_flow_table_flow(ft, f);
        if (a->src != b->src || a->dst != b->dst)
            return qri_err(
                errbuf, QR_EVALUE,
                "%s: connection %s:%u -> %s:%u: hosts %u -> %u here, %u -> %u in the run", im_dir,
                c[i].addr0, c[i].port0, c[i].addr1, c[i].port1, b->src, b->dst, a->src, a->dst);
        map[qr_dir_data(f)] = qr_dir_data(c[i].flow);
        map[qr_dir_ack(f)] = qr_dir_ack(c[i].flow);
    }
    return QR_OK;
}

static int carry_arrivals(const char *in, const char *out, const char *recording_id,
                          const uint32_t *map, size_t n_map, int64_t shift,
                          qr_truth_carry_stats *st, char *errbuf)
{
    qr_arrival_reader *r = NULL;
    qr_arrival_writer *w = NULL;
    qr_flow_bytes *fl = NULL;
    size_t cap = 0;
    int rc = qr_arrival_reader_open(&r, in, errbuf);
    if (!rc)
        rc = qr_arrival_writer_open(&w, out, errbuf);
    if (!rc)
        rc = qr_arrival_writer_set_recording(w, recording_id);
    if (!rc)
        rc = qr_arrival_writer_set_source(w, QR_ARRIVALS_TRUTH);
    qr_arrival a;
    while (!rc && (rc = qr_arrival_read(r, &a, errbuf)) == QR_OK) {
        uint32_t d = qr_packet_id_dir(a.packet);
        if (d >= n_map || map[d] == NO_DIR) {
            st->arrivals_left++;
            continue;
        }
        if (a.n_flows > cap) {
            qr_flow_bytes *g = realloc(fl, a.n_flows * sizeof *g);
            if (!g) {
                rc = QR_ENOMEM;
                break;
            }
            fl = g;
            cap = a.n_flows;
        }
        /* the queue's contents per direction, renamed (a direction of no imported flow keeps a
         * name beyond the imported ones: its bytes still count) */
        for (uint16_t k = 0; k < a.n_flows; k++) {
            fl[k] = a.flows[k];
            fl[k].flow = fl[k].flow < n_map && map[fl[k].flow] != NO_DIR
                             ? map[fl[k].flow]
                             : (uint64_t)n_map + fl[k].flow;
        }
        if (a.n_flows) {
            qsort(fl, a.n_flows, sizeof *fl, cmp_flow_bytes);
            a.flows = fl;
        }
        a.packet = qr_packet_id(map[d], qr_packet_id_seq(a.packet));
        a.time_ns += shift;
        rc = qr_arrival_write(w, &a, errbuf);
        st->arrivals++;
    }
    if (rc == QR_END)
        rc = QR_OK;
    int crc = qr_arrival_writer_close(w, rc ? NULL : errbuf); /* the first error is the one said */
    qr_arrival_reader_close(r);
    free(fl);
    return rc ? rc : crc;
}

static int carry_truth_h5(const char *in, const char *out, const qr_scenario *s,
                          const char *recording_id, const uint32_t *map, size_t n_map,
                          int64_t shift, qr_truth_carry_stats *st, char *errbuf)
{
    qr_h5_reader *r = NULL;
    qr_row_drop *drops = NULL;
    qr_row_direction *dirs = NULL;
    size_t nd = 0, ndir = 0, kd = 0, kdir = 0;
    qr_truth_info info = {.recording_id = recording_id};
    double v;
    char *end = NULL;
    int rc = qr_h5_open(&r, in, errbuf);
    if (!rc)
        rc = qr_h5_read_rows(r, "/drops", &qr_schema_drop, (void **)&drops, &nd, errbuf);
    if (!rc)
        rc = qr_h5_read_rows(r, "/directions", &qr_schema_direction, (void **)&dirs, &ndir, errbuf);
    if (!rc && !qr_h5_read_attr_str(r, "/", "end", &end, errbuf)) {
        for (int e = QR_END_COMPLETED; e <= QR_END_CANCELLED; e++)
            if (!strcmp(qr_end_reason_name((qr_end_reason)e), end))
                info.end = (qr_end_reason)e;
    }
    qr_h5_str_free(end);
#define NUM(name, field, type)                                                                     \
    if (!rc && !qr_h5_read_attr_f64(r, "/", name, &v, errbuf))                                     \
    info.field = (type)v
    NUM("sim_end_ns", sim_end_ns, int64_t);
    NUM("events", events, uint64_t);
    NUM("wall_s", wall_s, double);
    NUM("in_flight_at_end", in_flight_at_end, uint64_t);
    NUM("other_drops", other_drops, uint64_t);
    NUM("host_queue_drops", host_queue_drops, uint64_t);
    NUM("unknown_packets", unknown_packets, uint64_t);
#undef NUM
    qr_h5_close(r);
    if (!rc) {
        for (size_t i = 0; i < nd; i++) {
            if (drops[i].dir >= n_map || map[drops[i].dir] == NO_DIR) {
                st->drops_left++;
                continue;
            }
            qr_row_drop x = drops[i];
            x.dir = map[x.dir];
            x.packet = qr_packet_id(x.dir, qr_packet_id_seq(x.packet));
            x.time_ns += shift;
            drops[kd++] = x;
        }
        st->drops = kd;
        for (size_t i = 0; i < ndir; i++) {
            if (dirs[i].dir >= n_map || map[dirs[i].dir] == NO_DIR)
                continue;
            qr_row_direction x = dirs[i];
            x.dir = map[x.dir];
            x.flow = qr_dir_flow(x.dir);
            dirs[kdir++] = x;
        }
        info.sim_end_ns += shift;
        rc = qr_truth_write(out, s, &info, drops, kd, dirs, kdir, errbuf);
    }
    qr_h5_rows_free(drops);
    qr_h5_rows_free(dirs);
    return rc;
}

void qri_truth_discard(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/arrivals.qra", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/truth.h5", dir);
    unlink(p);
    rmdir(dir);
}

int qri_truth_stage(const char *rec_dir, char *tmp, size_t size, char *errbuf)
{
    snprintf(tmp, size, "%s/truth.partial-%ld", rec_dir, (long)getpid());
    if (mkdir(tmp, 0777))
        return qri_err(errbuf, QR_EIO, "%s: %s", tmp, strerror(errno));
    qr_partial_add(tmp);
    return QR_OK;
}

int qri_truth_commit(const char *rec_dir, const char *tmp, char *errbuf)
{
    char dst[4200];
    struct stat sb;
    /* the switches' mirrored copies of the arrivals, an observation file of their own */
    char log[4200], mirror[4200];
    snprintf(log, sizeof log, "%s/arrivals.qra", tmp);
    snprintf(mirror, sizeof mirror, "%s/%s", rec_dir, QR_MIRROR_COPIES);
    if (stat(log, &sb) == 0) {
        int rc = qr_mirror_write_from(log, mirror, errbuf);
        if (rc)
            return rc;
    }
    snprintf(dst, sizeof dst, "%s/truth", rec_dir);
    if (stat(dst, &sb) == 0)
        qri_truth_discard(dst);
    if (rename(tmp, dst))
        return qri_err(errbuf, QR_EIO, "%s: %s", dst, strerror(errno));
    return QR_OK;
}

int qr_truth_carry(const char *run_rec_dir, const char *imported_rec_dir, qr_truth_carry_stats *st,
                   char *errbuf)
{
    if (!run_rec_dir || !imported_rec_dir)
        return qri_err(errbuf, QR_EINVAL, "truth carry: NULL argument");
    qr_truth_carry_stats s = {0};
    qr_recording *rt = NULL, *im = NULL;
    qr_h5_reader *h = NULL;
    qr_row_import_conn *conn = NULL;
    qr_row_import_host *ih = NULL;
    size_t n_conn = 0, n_ih = 0;
    uint32_t *map = NULL;
    char path[4200], tmp[4200], in_log[4200], in_h5[4200];
    double base = 0;
    int rc = qr_recording_open(&rt, run_rec_dir, NULL, errbuf);
    snprintf(in_log, sizeof in_log, "%s/truth/arrivals.qra", run_rec_dir);
    snprintf(in_h5, sizeof in_h5, "%s/truth/truth.h5", run_rec_dir);
    if (!rc && access(in_log, R_OK))
        rc = qri_err(errbuf, QR_ENOENT,
                     "%s: no ground truth with arrivals (a qreplay runtime recording made "
                     "without --no-arrivals)",
                     in_log);
    if (!rc)
        rc = qr_recording_open(&im, imported_rec_dir, NULL, errbuf);
    snprintf(path, sizeof path, "%s/recording.h5", imported_rec_dir);
    if (!rc)
        rc = qr_h5_open(&h, path, errbuf);
    if (!rc && qr_h5_read_rows(h, "/import/connections", &qr_schema_import_conn, (void **)&conn,
                               &n_conn, errbuf))
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not an imported recording (no /import)", path);
    if (!rc)
        rc = qr_h5_read_rows(h, "/import/hosts", &qr_schema_import_host, (void **)&ih, &n_ih,
                             errbuf);
    if (!rc)
        rc = qr_h5_read_attr_f64(h, "/import", "time_base_ns", &base, errbuf);
    qr_h5_close(h);
    if (!rc && qr_recording_hosts(rt) != qr_recording_hosts(im))
        rc = qri_err(errbuf, QR_EVALUE, "%s: %u hosts, the run %s has %u", imported_rec_dir,
                     qr_recording_hosts(im), run_rec_dir, qr_recording_hosts(rt));
    size_t n_map = rt ? qr_flow_table_directions(qr_recording_flows(rt)) : 0;
    if (!rc && !(map = malloc((n_map ? n_map : 1) * sizeof *map)))
        rc = QR_ENOMEM;
    if (!rc)
        rc = build_map(rt, im, conn, n_conn, map, n_map, imported_rec_dir, errbuf);
    /* the import's times: its reference host's clock (the run's true time + that host's offset
     * less the clock estimate's error), less the time base; the truth moves the same way */
    int64_t shift = 0;
    if (!rc) {
        uint32_t ref = n_ih ? ih[0].clock_reference : 0;
        if (ref >= qr_recording_hosts(rt))
            rc = qri_err(errbuf, QR_EFORMAT, "%s: clock reference host %u", path, ref);
        else {
            int64_t *off = calloc(qr_recording_hosts(rt), sizeof *off);
            rc = off ? qr_truth_clock_offsets(run_rec_dir, qr_recording_hosts(rt), off, errbuf)
                     : qri_err(errbuf, QR_ENOMEM, "out of memory");
            if (!rc)
                shift = off[ref] - (int64_t)base;
            free(off);
        }
        s.shift_ns = shift;
    }
    for (size_t d = 0; !rc && d < n_map; d++)
        s.dirs_mapped += map[d] != NO_DIR;
    if (!rc)
        rc = qri_truth_stage(imported_rec_dir, tmp, sizeof tmp, errbuf);
    int made = !rc;
    if (!rc) {
        snprintf(path, sizeof path, "%s/arrivals.qra", tmp);
        rc = carry_arrivals(in_log, path, qr_recording_id(im), map, n_map, shift, &s, errbuf);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/truth.h5", tmp);
        rc = carry_truth_h5(in_h5, path, qr_recording_scenario(im), qr_recording_id(im), map, n_map,
                            shift, &s, errbuf);
    }
    if (!rc)
        rc = qri_truth_commit(imported_rec_dir, tmp, errbuf);
    if (rc && made)
        qri_truth_discard(tmp);
    free(map);
    qr_h5_rows_free(conn);
    qr_h5_rows_free(ih);
    qr_recording_close(rt);
    qr_recording_close(im);
    if (!rc && st)
        *st = s;
    return rc;
}
