/* The closed-loop runtime's recorder (recorder.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/fs.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/probelog.h"
#include "qreplay/recorder.h"
#include "qreplay/txn.h"

#define ARRIVALS_NAME "truth/arrivals.qra"
#define MIRROR_NAME QR_MIRROR_COPIES

/* Return x's error, if any. */
#define RETURN_IF(x)                                                                               \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ != QR_OK)                                                                          \
            return rc_;                                                                            \
    } while (0)

struct qr_recorder {
    const qr_scenario *s;
    const qr_flow_table *ft;
    char out_dir[QR_PATH_MAX];
    char made[4][QR_PATH_MAX + 16]; /* folders open_files made: out_dir, pcap/, truth/, mirror/ */
    char name[256];
    char id[QR_ID_SIZE]; /* the recording's (qr_recording_id_of) */
    int to_disk, arrivals_on, ended, committed;
    uint32_t hosts;
    size_t n_dirs, n_flows;
    int64_t *offsets;
    qr_row_direction *dirs;
    qr_recorder_flow *flows;
    uint64_t *host_packets, *host_bytes;
    uint64_t *sent_at_cutoff;
    qr_row_drop *drops;
    size_t n_drops, cap_drops;
    qr_row_detected *detected;
    size_t n_detected, cap_detected;
    qr_row_received *received;
    size_t n_received, cap_received;
    qr_row_received *ce; /* the received packets marked CE */
    size_t n_ce, cap_ce;
    qr_lossdet *lossdet;
    qr_pcap_writer **pcaps;
    qr_arrival_writer *log, *mirror; /* the truth's log; the switches' mirrored copies */
    uint64_t flows_closed;
    qr_recorder_counts c;
};

void qr_recorder_pcap_name(uint32_t host, char *buf, size_t size)
{
    snprintf(buf, size, "pcap/h%04u.pcap", host);
}

/* The temporary name of rel (a path relative to the run folder). */
static void temp_of(const qr_recorder *r, const char *rel, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s.partial-%ld", r->out_dir, rel, (long)getpid());
}

static void close_writers(qr_recorder *r)
{
    char err[QR_ERRBUF_SIZE];
    for (uint32_t h = 0; r->pcaps && h < r->hosts; h++) {
        qr_pcap_writer_close(r->pcaps[h], err);
        r->pcaps[h] = NULL;
    }
    qr_arrival_writer_close(r->log, err);
    qr_arrival_writer_close(r->mirror, err);
    r->log = r->mirror = NULL;
}

static void remove_temps(qr_recorder *r)
{
    char rel[64], p[QR_PATH_MAX + 128];
    for (uint32_t h = 0; h < r->hosts; h++) {
        qr_recorder_pcap_name(h, rel, sizeof rel);
        temp_of(r, rel, p, sizeof p);
        unlink(p);
    }
    temp_of(r, ARRIVALS_NAME, p, sizeof p);
    unlink(p);
    temp_of(r, MIRROR_NAME, p, sizeof p);
    unlink(p);
    /* and the folders it made, where nothing else was put */
    static const char *const subs[] = {"pcap", "truth", "mirror"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", r->out_dir, subs[i]);
        qr_unmake_dirs(p, r->made[i + 1]);
    }
    qr_unmake_dirs(r->out_dir, r->made[0]);
}

void qr_recorder_destroy(qr_recorder *r)
{
    if (!r)
        return;
    close_writers(r);
    if (r->to_disk && !r->committed)
        remove_temps(r);
    qr_lossdet_destroy(r->lossdet);
    free(r->pcaps);
    free(r->offsets);
    free(r->dirs);
    free(r->flows);
    free(r->host_packets);
    free(r->host_bytes);
    free(r->sent_at_cutoff);
    free(r->drops);
    free(r->detected);
    free(r->received);
    free(r->ce);
    free(r);
}

static int open_files(qr_recorder *r, char *errbuf)
{
    char p[QR_PATH_MAX + 128], rel[64];
    RETURN_IF(qr_make_dirs_noted(r->out_dir, r->made[0], sizeof r->made[0], errbuf));
    static const char *const subs[] = {"pcap", "truth", "mirror"};
    for (int i = 1; i <= 3; i++) {
        if (i == 3 && !r->arrivals_on)
            break;
        snprintf(p, sizeof p, "%s/%s", r->out_dir, subs[i - 1]);
        RETURN_IF(qr_make_dirs_noted(p, r->made[i], sizeof r->made[i], errbuf));
    }
    snprintf(p, sizeof p, "%s/recording.h5", r->out_dir);
    unlink(p); /* the "complete" marker goes first */
    r->pcaps = calloc(r->hosts ? r->hosts : 1, sizeof *r->pcaps);
    if (!r->pcaps)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (uint32_t h = 0; h < r->hosts; h++) {
        qr_recorder_pcap_name(h, rel, sizeof rel);
        temp_of(r, rel, p, sizeof p);
        qr_partial_add(p);
        RETURN_IF(qr_pcap_writer_open(&r->pcaps[h], p, errbuf));
    }
    if (r->arrivals_on) {
        temp_of(r, ARRIVALS_NAME, p, sizeof p);
        qr_partial_add(p);
        RETURN_IF(qr_arrival_writer_open(&r->log, p, errbuf));
        RETURN_IF(qr_arrival_writer_set_recording(r->log, r->id));
        RETURN_IF(qr_arrival_writer_set_source(r->log, QR_ARRIVALS_TRUTH));
        temp_of(r, MIRROR_NAME, p, sizeof p);
        qr_partial_add(p);
        RETURN_IF(qr_arrival_writer_open(&r->mirror, p, errbuf));
        RETURN_IF(qr_arrival_writer_set_recording(r->mirror, r->id));
        RETURN_IF(qr_arrival_writer_set_source(r->mirror, QR_ARRIVALS_MIRROR));
    }
    return QR_OK;
}

int qr_recorder_create(qr_recorder **out, const qr_scenario *s, const qr_flow_table *ft,
                       const int64_t *offsets, const qr_recorder_opts *o, char *errbuf)
{
    *out = NULL;
    qr_recorder *r = calloc(1, sizeof *r);
    if (!r)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    r->s = s;
    r->ft = ft;
    r->hosts = qr_flow_table_hosts(ft);
    r->n_dirs = qr_flow_table_directions(ft);
    r->n_flows = qr_flow_table_flows(ft);
    snprintf(r->name, sizeof r->name, "%s", o && o->scenario_name ? o->scenario_name : "scenario");
    /* the same scenario run by the same code is the same recording: the same id */
    if (qr_recording_id_of("runtime", s, NULL, r->id) != QR_OK) {
        free(r);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    r->to_disk = o && o->out_dir && o->out_dir[0];
    r->arrivals_on = o && o->arrivals;
    if (r->to_disk && strlen(o->out_dir) >= sizeof r->out_dir) {
        free(r);
        return qri_err(errbuf, QR_EINVAL, "%s: the folder's path is too long", o->out_dir);
    }
    if (r->to_disk)
        snprintf(r->out_dir, sizeof r->out_dir, "%s", o->out_dir);
    size_t nh = r->hosts ? r->hosts : 1, nd = r->n_dirs ? r->n_dirs : 1;
    r->offsets = calloc(nh, sizeof *r->offsets);
    r->dirs = calloc(nd, sizeof *r->dirs);
    r->flows = calloc(r->n_flows ? r->n_flows : 1, sizeof *r->flows);
    r->host_packets = calloc(nh, sizeof *r->host_packets);
    r->host_bytes = calloc(nh, sizeof *r->host_bytes);
    if (!r->offsets || !r->dirs || !r->flows || !r->host_packets || !r->host_bytes ||
        qr_lossdet_create(&r->lossdet, r->n_dirs)) {
        qr_recorder_destroy(r);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (uint32_t h = 0; offsets && h < r->hosts; h++)
        r->offsets[h] = offsets[h];
    for (uint32_t d = 0; d < r->n_dirs; d++) {
        r->dirs[d].dir = d;
        r->dirs[d].flow = qr_dir_flow(d);
        r->dirs[d].src = qr_flow_table_dir_src(ft, d);
        r->dirs[d].dst = qr_flow_table_dir_dst(ft, d);
    }
    for (size_t f = 0; f < r->n_flows; f++)
        r->flows[f].end_ns = -1;
    int rc = r->to_disk ? open_files(r, errbuf) : QR_OK;
    if (rc) {
        qr_recorder_destroy(r);
        return rc;
    }
    *out = r;
    return QR_OK;
}

int qr_recorder_sent(qr_recorder *r, uint32_t host, uint32_t dir, qr_packet *pk, int64_t now_ns,
                     char *errbuf)
{
    if (dir < r->n_dirs) {
        r->dirs[dir].sent++;
        r->dirs[dir].sent_bytes += pk->ip_len;
        r->c.in_flight++;
    } else {
        r->c.unknown++;
    }
    if (host < r->hosts) {
        r->host_packets[host]++;
        r->host_bytes[host] += pk->ip_len;
    }
    r->c.packets++;
    if (!r->pcaps || host >= r->hosts)
        return QR_OK;
    pk->time_ns = now_ns + r->offsets[host];
    return qr_pcap_write(r->pcaps[host], pk, errbuf);
}

void qr_recorder_unknown(qr_recorder *r)
{
    r->c.unknown++;
}

void qr_recorder_delivered(qr_recorder *r, uint32_t host, uint32_t dir, uint64_t seq,
                           uint64_t bytes, int64_t now_ns, int ce)
{
    if (dir >= r->n_dirs)
        return;
    r->dirs[dir].delivered++;
    r->dirs[dir].delivered_bytes += bytes;
    r->c.in_flight--;
    if (qri_grow((void **)&r->received, &r->cap_received, r->n_received, sizeof *r->received, 1024))
        return;
    /* on the receiving host's clock, as its own capture would show it */
    int64_t off = host < r->hosts ? r->offsets[host] : 0;
    r->received[r->n_received++] = (qr_row_received){dir, (uint32_t)seq, now_ns + off};
    if (ce && !qri_grow((void **)&r->ce, &r->cap_ce, r->n_ce, sizeof *r->ce, 256))
        r->ce[r->n_ce++] = (qr_row_received){dir, (uint32_t)seq, now_ns + off};
}

int qr_recorder_observed(qr_recorder *r, uint32_t host, uint32_t dir, uint16_t ip_id)
{
    if (dir >= r->n_dirs)
        return QR_OK;
    uint64_t seq, first, n;
    qr_lossdet_observe(r->lossdet, dir, ip_id, &seq, &first, &n);
    for (uint64_t s = first; s < first + n; s++) {
        if (qri_grow((void **)&r->detected, &r->cap_detected, r->n_detected, sizeof *r->detected,
                     256))
            return QR_ENOMEM;
        r->detected[r->n_detected++] = qr_detected_row(host, dir, s, 0);
    }
    return QR_OK;
}

int qr_recorder_arrival(qr_recorder *r, const qr_arrival *a, char *errbuf)
{
    uint32_t dir = qr_packet_id_dir(a->packet);
    if (dir == QR_DIR_NONE) {
        r->c.unknown++;
        if (a->decision != QR_ADMIT)
            r->c.other_drops++;
        return QR_OK;
    }
    if (r->log)
        RETURN_IF(qr_arrival_write(r->log, a, errbuf));
    if (r->mirror) {
        qr_arrival copy;
        qr_mirror_copy(a, &copy);
        RETURN_IF(qr_arrival_write(r->mirror, &copy, errbuf));
    }
    if (a->decision == QR_ADMIT)
        return QR_OK;
    if (qri_grow((void **)&r->drops, &r->cap_drops, r->n_drops, sizeof *r->drops, 256))
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    qr_drop_row_of(a, &r->drops[r->n_drops++]);
    if (dir < r->n_dirs) {
        r->dirs[dir].dropped++;
        r->dirs[dir].dropped_bytes += a->bytes;
        r->c.in_flight--;
    }
    return QR_OK;
}

void qr_recorder_other_drop(qr_recorder *r, int known)
{
    r->c.other_drops++;
    if (known)
        r->c.in_flight--; /* it was sent and will never arrive */
}

void qr_recorder_host_queue_drop(qr_recorder *r)
{
    r->c.host_queue_drops++;
}

void qr_recorder_completed(qr_recorder *r, uint32_t f, int64_t now_ns)
{
    if (f < r->n_flows && r->flows[f].end_ns < 0) {
        r->flows[f].end_ns = now_ns;
        r->c.flows_done++;
    }
}

static void end_flow(qr_recorder *r, uint32_t f, int failed)
{
    if (f >= r->n_flows)
        return;
    if (!r->flows[f].closed && !r->flows[f].failed)
        r->flows_closed++;
    if (failed)
        r->flows[f].failed = 1;
    else
        r->flows[f].closed = 1;
}

void qr_recorder_closed(qr_recorder *r, uint32_t f)
{
    end_flow(r, f, 0);
}

void qr_recorder_failed(qr_recorder *r, uint32_t f)
{
    end_flow(r, f, 1);
}

int qr_recorder_all_done(const qr_recorder *r)
{
    return r->c.flows_done >= r->n_flows && r->flows_closed >= r->n_flows && r->c.in_flight == 0;
}

void qr_recorder_cutoff(qr_recorder *r)
{
    if (!r->sent_at_cutoff)
        r->sent_at_cutoff = calloc(r->n_dirs ? r->n_dirs : 1, sizeof *r->sent_at_cutoff);
    for (size_t d = 0; r->sent_at_cutoff && d < r->n_dirs; d++)
        r->sent_at_cutoff[d] = r->dirs[d].sent;
}

/* A direction's sender knows how many packets it sent; those its receiver never saw after its last
 * packet were lost. In a run cut by [traffic] stop only the packets sent before the cutoff count.
 */
static int detect_tails(qr_recorder *r, qr_end_reason reason, char *errbuf)
{
    uint64_t *sent = calloc(r->n_dirs ? r->n_dirs : 1, sizeof *sent);
    if (!sent)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    if (reason == QR_END_COMPLETED) {
        for (size_t d = 0; d < r->n_dirs; d++)
            sent[d] = r->dirs[d].sent;
    } else if (r->sent_at_cutoff) {
        memcpy(sent, r->sent_at_cutoff, r->n_dirs * sizeof *sent);
    } else {
        free(sent);
        return QR_OK;
    }
    qr_row_detected *rows = NULL;
    size_t n = 0;
    int rc = qr_lossdet_tails(r->lossdet, r->ft, sent, r->n_dirs, &rows, &n, errbuf);
    free(sent);
    if (rc)
        return rc;
    rc = qri_reserve((void **)&r->detected, &r->cap_detected, r->n_detected + n,
                     sizeof *r->detected, 256);
    if (!rc && n) {
        memcpy(r->detected + r->n_detected, rows, n * sizeof *rows);
        r->n_detected += n;
    }
    qr_h5_rows_free(rows);
    return rc ? qri_err(errbuf, QR_ENOMEM, "out of memory") : QR_OK;
}

static int rename_files(qr_recorder *r, char *errbuf)
{
    char err[QR_ERRBUF_SIZE];
    int rc = QR_OK;
    for (uint32_t h = 0; h < r->hosts; h++) {
        int rc2 = qr_pcap_writer_close(r->pcaps[h], err);
        r->pcaps[h] = NULL;
        if (rc2 && !rc)
            rc = qri_err(errbuf, rc2, "%s", err);
    }
    for (qr_arrival_writer **w = (qr_arrival_writer *[]){r->log, r->mirror}, **e = w + 2; w < e;
         w++) {
        int rc2 = qr_arrival_writer_close(*w, err);
        if (rc2 && !rc)
            rc = qri_err(errbuf, rc2, "%s", err);
    }
    r->log = r->mirror = NULL;
    if (rc)
        return rc;
    char rel[64], from[QR_PATH_MAX + 128], to[QR_PATH_MAX + 128];
    for (uint32_t h = 0; h <= r->hosts + 1; h++) {
        if (h >= r->hosts && !r->arrivals_on)
            break;
        if (h < r->hosts)
            qr_recorder_pcap_name(h, rel, sizeof rel);
        else
            snprintf(rel, sizeof rel, "%s", h == r->hosts ? ARRIVALS_NAME : MIRROR_NAME);
        temp_of(r, rel, from, sizeof from);
        snprintf(to, sizeof to, "%s/%s", r->out_dir, rel);
        int rc = qr_commit_path(from, to, errbuf);
        if (rc)
            return rc;
    }
    return QR_OK;
}

static int write_truth(qr_recorder *r, const qr_recorder_end *e, char *errbuf)
{
    size_t nf = qr_faults_rules(e->faults), nl = qr_link_faults_count(e->link_faults);
    qr_row_fault *faults = calloc(nf ? nf : 1, sizeof *faults);
    qr_row_link_fault *links = calloc(nl ? nl : 1, sizeof *links);
    int rc = QR_OK;
    if (!faults || !links)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nf; i++)
        qr_faults_row(e->faults, i, &faults[i]);
    for (size_t i = 0; !rc && i < nl; i++)
        qr_link_faults_row(e->link_faults, i, &links[i]);
    qr_row_clock *clocks = calloc(r->hosts ? r->hosts : 1, sizeof *clocks);
    if (!clocks && !rc)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (uint32_t h = 0; !rc && h < r->hosts; h++)
        clocks[h] = (qr_row_clock){h, r->offsets[h]};
    qr_truth_info info = {r->id,
                          e->reason,
                          e->sim_end_ns,
                          e->events,
                          e->wall_s,
                          r->c.in_flight,
                          r->c.other_drops,
                          r->c.host_queue_drops,
                          r->c.unknown,
                          faults,
                          nf,
                          links,
                          nl,
                          e->probed,
                          e->probes,
                          e->n_probes,
                          e->trace_fault_drops,
                          e->trace_buffer_drops,
                          NULL,
                          0,
                          0,
                          0,
                          0,
                          clocks,
                          r->hosts};
    char p[QR_PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/truth/truth.h5", r->out_dir);
    if (!rc)
        rc = qr_truth_write(p, r->s, &info, r->drops, r->n_drops, r->dirs, r->n_dirs, errbuf);
    free(clocks);
    free(faults);
    free(links);
    return rc;
}

static int write_recording(qr_recorder *r, const qr_recorder_end *e, char *errbuf)
{
    qr_row_flow *flows = calloc(r->n_flows ? r->n_flows : 1, sizeof *flows);
    qr_row_host *hosts = calloc(r->hosts ? r->hosts : 1, sizeof *hosts);
    int rc = QR_OK;
    if (!flows || !hosts)
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (uint32_t f = 0; !rc && f < r->n_flows; f++) {
        const qr_flow *fl = qr_flow_table_flow(r->ft, f);
        const qr_recorder_flow *x = &r->flows[f];
        flows[f] = (qr_row_flow){f,
                                 fl->src,
                                 fl->dst,
                                 qr_flow_table_sender_port(r->ft, f),
                                 QR_SINK_PORT,
                                 fl->bytes,
                                 fl->start_ns,
                                 x->end_ns,
                                 qr_fct_ns(fl->start_ns, x->end_ns),
                                 fl->incast,
                                 (uint8_t)(x->end_ns >= 0),
                                 x->closed};
    }
    for (uint32_t h = 0; !rc && h < r->hosts; h++) {
        /* a host does not know its clock's offset: the truth holds it (/clocks) */
        hosts[h] = (qr_row_host){
            h, qr_flow_table_host_addr(r->ft, h), 0, r->host_packets[h], r->host_bytes[h], ""};
        qr_recorder_pcap_name(h, hosts[h].pcap, sizeof hosts[h].pcap);
    }
    qr_recording_info info = {
        r->id,    r->name,    e->reason, e->sim_end_ns, e->traced, e->traceroutes, e->n_traceroutes,
        e->paths, e->n_paths, e->icmp,   e->n_icmp,     r->ce,     r->n_ce};
    char p[QR_PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/recording.h5", r->out_dir);
    if (!rc)
        rc = qr_recording_write(p, r->s, &info, flows, r->n_flows, hosts, r->hosts, r->detected,
                                r->n_detected, r->received, r->n_received, errbuf);
    free(flows);
    free(hosts);
    return rc;
}

int qr_recorder_end_run(qr_recorder *r, qr_end_reason reason, char *errbuf)
{
    if (r->ended)
        return qri_err(errbuf, QR_ESTATE, "the run was ended already");
    r->ended = 1;
    return detect_tails(r, reason, errbuf);
}

int qr_recorder_commit(qr_recorder *r, const qr_recorder_end *end, char *errbuf)
{
    if (r->committed)
        return qri_err(errbuf, QR_ESTATE, "the recording was committed already");
    if (!r->ended)
        RETURN_IF(qr_recorder_end_run(r, end->reason, errbuf));
    if (!r->to_disk) {
        r->committed = 1;
        return QR_OK;
    }
    RETURN_IF(rename_files(r, errbuf));
    r->committed = 1; /* the captures have their names: they stay */
    RETURN_IF(write_truth(r, end, errbuf));
    if (end->probed) { /* the agents' log: an observation, beside the captures */
        char p[QR_PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/probes.h5", r->out_dir);
        RETURN_IF(qr_probe_log_write(p, r->s, r->id, end->sim_end_ns, r->dirs, r->n_dirs,
                                     end->probes, end->n_probes, errbuf));
    }
    return write_recording(r, end, errbuf); /* last: its presence marks a complete recording */
}

const qr_row_direction *qr_recorder_directions(const qr_recorder *r, size_t *n)
{
    *n = r->n_dirs;
    return r->dirs;
}

const qr_recorder_flow *qr_recorder_flows(const qr_recorder *r, size_t *n)
{
    *n = r->n_flows;
    return r->flows;
}

const qr_row_drop *qr_recorder_drops(const qr_recorder *r, size_t *n)
{
    *n = r->n_drops;
    return r->drops;
}

const qr_row_detected *qr_recorder_detected(const qr_recorder *r, size_t *n)
{
    *n = r->n_detected;
    return r->detected;
}

const qr_row_received *qr_recorder_received(const qr_recorder *r, size_t *n)
{
    *n = r->n_received;
    return r->received;
}

const uint64_t *qr_recorder_sent_at_cutoff(const qr_recorder *r, size_t *n)
{
    *n = r->sent_at_cutoff ? r->n_dirs : 0;
    return r->sent_at_cutoff;
}

qr_recorder_counts qr_recorder_counters(const qr_recorder *r)
{
    return r->c;
}
