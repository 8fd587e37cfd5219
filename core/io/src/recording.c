/* A recording read back for replay (recording.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "map.h"
#include "qreplay/clock.h"
#include "qreplay/h5.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/topology.h"
#include "qreplay/version.h"
#include "recording_internal.h"

#include <unistd.h>

void qr_recording_close(qr_recording *r)
{
    if (!r)
        return;
    for (uint32_t h = 0; r->hosts && h < r->n_hosts; h++) {
        free(r->hosts[h].pk);
    }
    free(r->hosts);
    free(r->dir);
    qr_h5_rows_free(r->host_rows);
    free(r->detected);
    free(r->received);
    free(r->ce);
    free(r->late);
    free(r->seen);
    qr_h5_rows_free(r->paths);
    qr_h5_rows_free(r->icmp);
    qr_flow_table_destroy(r->flows);
    qr_scenario_destroy(r->scenario);
    free(r);
}

/* An optional table of packets (rows of /received's columns) as sorted packet ids into *ids
 * (NULL: the table is absent); present but unreadable is damage, said as such. */
static int read_ids(qr_h5_reader *in, const char *h5, const char *name, uint64_t **ids, size_t *n,
                    char *errbuf)
{
    qr_row_received *rows = NULL;
    size_t k = 0;
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_h5_read_rows(in, name, &qr_schema_received, (void **)&rows, &k, detail);
    if (rc == QR_ENOTFOUND)
        return QR_OK;
    if (rc)
        return qri_err(errbuf, rc, "%s: %s is damaged: %s", h5, name, detail);
    *ids = malloc((k ? k : 1) * sizeof **ids);
    if (!*ids) {
        qr_h5_rows_free(rows);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < k; i++)
        (*ids)[i] = qr_packet_id(rows[i].dir, rows[i].seq);
    qsort(*ids, k, sizeof **ids, qri_cmp_u64);
    *n = k;
    qr_h5_rows_free(rows);
    return QR_OK;
}

/* An import's /import/connections: which ends of each direction were captured. */
static int read_import_seen(qr_recording *r, qr_h5_reader *in, const char *h5, size_t n_flows,
                            char *errbuf)
{
    qr_row_import_conn *ic = NULL;
    size_t n = 0;
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_h5_read_rows(in, "/import/connections", &qr_schema_import_conn, (void **)&ic, &n,
                             detail);
    if (rc == QR_ENOTFOUND)
        return QR_OK; /* a runtime's recording: both ends of everything */
    if (rc)
        return qri_err(errbuf, rc, "%s: /import/connections is damaged: %s", h5, detail);
    if (n != n_flows) {
        qr_h5_rows_free(ic);
        return qri_err(errbuf, QR_EFORMAT, "%s: /import/connections has %zu rows for %zu flows", h5,
                       n, n_flows);
    }
    r->seen = calloc(2 * (n ? n : 1), 1);
    if (!r->seen) {
        qr_h5_rows_free(ic);
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    }
    r->n_seen = 2 * n;
    for (size_t f = 0; f < n; f++) {
        uint8_t ev[2] = {ic[f].evidence0, ic[f].evidence1};
        for (int k = 0; k < 2; k++)
            r->seen[2 * f + (size_t)k] = ev[k] == QR_EVIDENCE_BOTH
                                             ? QR_TC_AT_SENDER | QR_TC_AT_RECEIVER
                                         : ev[k] == QR_EVIDENCE_RETRANS ? QR_TC_AT_SENDER
                                                                        : QR_TC_AT_RECEIVER;
    }
    qr_h5_rows_free(ic);
    double known = 0;
    if (qr_h5_read_attr_f64(in, "/import", "network_known", &known, NULL) == QR_OK)
        r->network_known = known != 0;
    return QR_OK;
}

unsigned qr_recording_seen(const qr_recording *r, uint32_t dir)
{
    if (!r->seen)
        return QR_TC_AT_SENDER | QR_TC_AT_RECEIVER;
    return dir < r->n_seen ? r->seen[dir] : 0;
}

int qr_recording_paths(const qr_recording *r, const qr_row_path **rows, size_t *n)
{
    *rows = r->paths;
    *n = r->n_paths;
    return r->has_paths;
}

int qr_recording_icmp(const qr_recording *r, const qr_row_icmp **rows, size_t *n)
{
    *rows = r->icmp;
    *n = r->n_icmp;
    return r->has_icmp;
}

int qr_recording_imported(const qr_recording *r)
{
    return r->seen != NULL;
}

int qr_recording_network_known(const qr_recording *r)
{
    return !r->seen || r->network_known;
}

static int cmp_recv(const void *a, const void *b)
{
    return qri_cmp_u64(&((const struct recv_entry *)a)->packet,
                       &((const struct recv_entry *)b)->packet);
}

/* Sort the receive entries by packet id: least significant digit first, a byte per pass, passes
 * over bytes that every id shares left out (ids are direction << 32 | number: most high bytes are
 * zero). Stable, O(n) per pass; the ids are unique, so the order is the one qsort gave. */
static int sort_received(struct recv_entry *v, size_t n)
{
    if (n < 64) {
        qsort(v, n, sizeof *v, cmp_recv);
        return QR_OK;
    }
    size_t(*count)[256] = calloc(8, sizeof *count);
    struct recv_entry *tmp = malloc(n * sizeof *tmp);
    if (!count || !tmp) {
        free(count);
        free(tmp);
        return QR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            count[b][(v[i].packet >> (8 * b)) & 0xff]++;
    struct recv_entry *from = v, *to = tmp;
    for (int b = 0; b < 8; b++) {
        if (count[b][(v[0].packet >> (8 * b)) & 0xff] == n)
            continue; /* every id has this byte */
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = count[b][d];
            count[b][d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            to[count[b][(from[i].packet >> (8 * b)) & 0xff]++] = from[i];
        struct recv_entry *t = from;
        from = to;
        to = t;
    }
    if (from != v)
        memcpy(v, from, n * sizeof *v);
    free(count);
    free(tmp);
    return QR_OK;
}

static const char *key_value(const qr_scenario *s, const char *key)
{
    const char *v = "";
    qr_scenario_get(s, "topology", key, &v);
    return v;
}

/* The check scenario must describe the recorded network. */
static int check_match(const qr_scenario *rec, const qr_scenario *check, const char *dir,
                       char *errbuf)
{
    const char *kind = key_value(check, "kind");
    const char *keys[] = {"kind", "k", "hosts"};
    for (int i = 0; i < 3; i++) {
        int relevant =
            i == 0 || (i == 1 && !strcmp(kind, "fattree")) || (i == 2 && !strcmp(kind, "star"));
        const char *a = key_value(rec, keys[i]), *b = key_value(check, keys[i]);
        if (relevant && strcmp(a, b) != 0)
            return qri_err(errbuf, QR_EVALUE,
                           "the scenario does not match the recording in %s: [topology] %s = %s, "
                           "recorded %s",
                           dir, keys[i], b, a);
    }
    return QR_OK;
}

static int push_packet(struct host_pk *h, const qr_rec_packet *p)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        qr_rec_packet *v = realloc(h->pk, cap * sizeof *v);
        if (!v)
            return QR_ENOMEM;
        h->pk = v;
        h->cap = cap;
    }
    h->pk[h->n++] = *p;
    return QR_OK;
}

/* Read host h's pcap; next[dir] is the next number expected per direction. */
static int read_pcap(qr_recording *r, uint32_t h, const char *path, uint64_t expected,
                     uint32_t *next, char *errbuf)
{
    qr_pcap_reader *tr = NULL;
    int rc = qr_pcap_reader_open(&tr, path, errbuf);
    if (rc)
        return rc;
    struct host_pk *hp = &r->hosts[h];
    qr_packet pk;
    while ((rc = qr_pcap_read(tr, &pk, errbuf)) == QR_OK) {
        uint64_t n = qr_pcap_reader_count(tr);
        qr_five_tuple ft = {pk.src_ip, pk.dst_ip, pk.src_port, pk.dst_port, pk.proto};
        uint32_t d;
        if (qr_flow_table_resolve(r->flows, &ft, &d) != QR_OK ||
            qr_flow_table_dir_src(r->flows, d) != h) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: packet %" PRIu64 ": belongs to no flow of host %u", path, n, h);
            break;
        }
        if (pk.ip_id != (uint16_t)next[d]) {
            rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: packet %" PRIu64
                         ": IP ID %u, expected %u (IDs must be consecutive per flow direction)",
                         path, n, pk.ip_id, (unsigned)(uint16_t)next[d]);
            break;
        }
        uint32_t seq = next[d]++;
        qr_rec_packet rp = {.pk = pk, .dir = d, .seq = seq};
        rp.drop_tag = (uint8_t)qr_recording_detected(r, qr_packet_id(d, seq));
        if ((rc = push_packet(hp, &rp)) != QR_OK) {
            qri_err(errbuf, rc, "%s: out of memory", path);
            break;
        }
    }
    char cut[1300];
    snprintf(cut, sizeof cut, "%s", rc == QR_END ? qr_pcap_reader_warning(tr) : "");
    qr_pcap_reader_close(tr);
    if (rc != QR_END)
        return rc;
    if (hp->n != expected)
        return qri_err(errbuf, QR_ETRUNC, "%s: %zu packets, the recording says %" PRIu64 " (%s)",
                       path, hp->n, expected, cut[0] ? cut : "truncated?");
    return QR_OK;
}

/* The hosts' pcaps, read by a few threads side by side: each claims the next unread host, so a
 * thread's hosts rise and its first failure is its lowest; the error reported is the lowest host's
 * of all, the one reading them in turn would report (the threads read every host, even after an
 * error). A host's packets, IDs and directions are its own (next[d] only for directions the host
 * sends); the flow table and the detected drops are only read. */
struct pcap_job {
    qr_recording *r;
    uint32_t *next;
    atomic_uint claim;
};

struct pcap_worker {
    struct pcap_job *job;
    pthread_t thread;
    int started, rc;
    uint32_t host; /* of rc */
    char err[QR_ERRBUF_SIZE];
};

void qr_recording_pcap_path(const qr_recording *r, uint32_t h, char *path, size_t size)
{
    char pcap[sizeof r->host_rows[h].pcap + 1];
    memcpy(pcap, r->host_rows[h].pcap, sizeof r->host_rows[h].pcap);
    pcap[sizeof r->host_rows[h].pcap] = '\0';
    snprintf(path, size, "%s/%s", r->dir, pcap);
}

static void *read_pcaps(void *arg)
{
    struct pcap_worker *w = arg;
    struct pcap_job *j = w->job;
    char path[3 * QR_PATH_MAX], err[QR_ERRBUF_SIZE];
    for (;;) {
        uint32_t h = atomic_fetch_add(&j->claim, 1);
        if (h >= j->r->n_hosts)
            break;
        qr_recording_pcap_path(j->r, h, path, sizeof path);
        int rc = read_pcap(j->r, h, path, j->r->host_rows[h].packets, j->next, err);
        if (rc != QR_OK && w->rc == QR_OK) {
            w->rc = rc;
            w->host = h;
            memcpy(w->err, err, sizeof err);
        }
    }
    return NULL;
}

static int read_all_pcaps(qr_recording *r, uint32_t *next, char *errbuf)
{
    enum { MAX_READERS = 4 };
    struct pcap_job job = {r, next, 0};
    struct pcap_worker w[MAX_READERS];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cpus > 1 ? (int)(cpus < MAX_READERS ? cpus : MAX_READERS) : 1;
    if ((uint32_t)n > r->n_hosts)
        n = r->n_hosts ? (int)r->n_hosts : 1;
    memset(w, 0, sizeof w);
    for (int i = 0; i < n; i++) {
        w[i].job = &job;
        w[i].rc = QR_OK;
    }
    for (int i = 1; i < n; i++) /* a thread that does not start leaves its share to the others */
        w[i].started = pthread_create(&w[i].thread, NULL, read_pcaps, &w[i]) == 0;
    read_pcaps(&w[0]);
    for (int i = 1; i < n; i++)
        if (w[i].started)
            pthread_join(w[i].thread, NULL);
    int first = -1;
    for (int i = 0; i < n; i++)
        if (w[i].rc != QR_OK && (first < 0 || w[i].host < w[first].host))
            first = i;
    if (first < 0)
        return QR_OK;
    memcpy(errbuf, w[first].err, QR_ERRBUF_SIZE);
    return w[first].rc;
}

/* The file of host h's pcap in rec_dir. */
static void pcap_file(const char *rec_dir, uint32_t h, char *path, size_t size)
{
    snprintf(path, size, "%s/pcap/h%04u.pcap", rec_dir, h);
}

int qri_recording_write_pcaps(qr_h5 *f, const char *rec_dir, uint32_t n_hosts, char *errbuf)
{
    qr_row_pcap *rows = calloc(n_hosts ? n_hosts : 1, sizeof *rows);
    if (!rows)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    size_t n = 0;
    int rc = QR_OK;
    for (uint32_t h = 0; !rc && h < n_hosts; h++) {
        char path[3 * QR_PATH_MAX];
        pcap_file(rec_dir, h, path, sizeof path);
        int hr = qri_sha256_file(path, rows[n].sha256, &rows[n].bytes);
        if (hr == QR_ENOENT)
            continue;
        if (hr)
            rc = qri_err(errbuf, QR_EIO, "%s: cannot read it back", path);
        rows[n++].host = h;
    }
    if (!rc)
        rc = qr_h5_write_rows(f, "/pcaps", &qr_schema_pcap, rows, n, errbuf);
    free(rows);
    return rc;
}

/* Whether every pcap /pcaps names is the one the recording wrote: its size, then its SHA-256.
 * A recording without /pcaps (of a qreplay before them) is not checked. */
static int check_pcaps(qr_h5_reader *in, const char *h5, const char *dir, char *errbuf)
{
    qr_row_pcap *rows = NULL;
    size_t n = 0;
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_h5_read_rows(in, "/pcaps", &qr_schema_pcap, (void **)&rows, &n, detail);
    if (rc == QR_ENOTFOUND)
        return QR_OK;
    if (rc)
        return qri_err(errbuf, rc, "%s: /pcaps is damaged: %s", h5, detail);
    for (size_t i = 0; !rc && i < n; i++) {
        char path[3 * QR_PATH_MAX], sha[65];
        uint64_t bytes = 0;
        struct stat st;
        pcap_file(dir, rows[i].host, path, sizeof path);
        if (stat(path, &st) != 0)
            continue; /* a missing pcap is said by the reader that needs it */
        if ((uint64_t)st.st_size < rows[i].bytes)
            rc = qri_err(errbuf, QR_ETRUNC,
                         "%s is cut short: %" PRIu64 " bytes of the %" PRIu64 " %s recorded "
                         "(record again, or put the whole pcap back)",
                         path, (uint64_t)st.st_size, rows[i].bytes, h5);
        else if ((uint64_t)st.st_size != rows[i].bytes)
            rc = qri_err(errbuf, QR_ESTALE,
                         "%s is not the pcap %s recorded (%" PRIu64 " bytes, recorded %" PRIu64
                         "): another run's? Put this recording's back, or record again",
                         path, h5, (uint64_t)st.st_size, rows[i].bytes);
        else if (qri_sha256_file(path, sha, &bytes) != QR_OK)
            rc = qri_err(errbuf, QR_EIO, "%s: cannot read it", path);
        else if (strcmp(sha, rows[i].sha256) != 0)
            rc = qri_err(errbuf, QR_ESTALE,
                         "%s is not the pcap %s recorded (its SHA-256 differs): another run's? "
                         "Put this recording's back, or record again",
                         path, h5);
    }
    qr_h5_rows_free(rows);
    return rc;
}

/* recording.h5's tables as read, before they become the recording's. */
struct tables {
    qr_row_flow *flows;
    qr_row_host *hosts;
    qr_row_detected *det;
    qr_row_received *recv;
    size_t n_flows, n_hosts, n_det, n_recv;
};

static void tables_free(struct tables *t)
{
    qr_h5_rows_free(t->flows);
    qr_h5_rows_free(t->hosts);
    qr_h5_rows_free(t->det);
    qr_h5_rows_free(t->recv);
}

/* The tables of recording.h5 (h5, in the recording folder dir), and the pcaps beside it checked. */
static int read_tables(qr_recording *r, qr_h5_reader *in, const char *h5, const char *dir,
                       int received, struct tables *t, char *errbuf)
{
    char detail[QR_ERRBUF_SIZE];
    int rc;
    if ((rc = qr_h5_read_rows(in, "/flows", &qr_schema_flow, (void **)&t->flows, &t->n_flows,
                              errbuf)) ||
        (rc = qr_h5_read_rows(in, "/hosts", &qr_schema_host, (void **)&t->hosts, &t->n_hosts,
                              errbuf)) ||
        (rc = qr_h5_read_rows(in, "/drops_detected", &qr_schema_detected, (void **)&t->det,
                              &t->n_det, errbuf)))
        return rc;
    /* /received is optional (a runtime without receive records); present but unreadable is
     * damage, said as such, not taken for missing */
    rc = received ? qr_h5_read_rows(in, "/received", &qr_schema_received, (void **)&t->recv,
                                    &t->n_recv, detail)
                  : QR_ENOTFOUND;
    r->has_received = rc == QR_OK;
    if (rc != QR_OK && rc != QR_ENOTFOUND)
        return qri_err(errbuf, rc, "%s: /received is damaged: %s", h5, detail);
    /* /received_ce: a runtime whose switches mark ECN (optional, like /received) */
    if (received && (rc = read_ids(in, h5, "/received_ce", &r->ce, &r->n_ce, errbuf)) != QR_OK)
        return rc;
    if ((rc = read_import_seen(r, in, h5, t->n_flows, errbuf)) != QR_OK ||
        (rc = read_ids(in, h5, "/import/late", &r->late, &r->n_late, errbuf)) != QR_OK)
        return rc;
    /* the pcaps beside it must be the ones it recorded */
    if ((rc = check_pcaps(in, h5, dir, errbuf)) != QR_OK)
        return rc;
    /* /paths is optional (a run without path discovery); present but unreadable is damage */
    rc = qr_h5_read_rows(in, "/paths", &qr_schema_path, (void **)&r->paths, &r->n_paths, detail);
    r->has_paths = rc == QR_OK;
    if (rc != QR_OK && rc != QR_ENOTFOUND)
        return qri_err(errbuf, rc, "%s: /paths is damaged: %s", h5, detail);
    /* /icmp likewise (recordings of older runs have none) */
    rc = qr_h5_read_rows(in, "/icmp", &qr_schema_icmp, (void **)&r->icmp, &r->n_icmp, detail);
    r->has_icmp = rc == QR_OK;
    if (rc != QR_OK && rc != QR_ENOTFOUND)
        return qri_err(errbuf, rc, "%s: /icmp is damaged: %s", h5, detail);
    return QR_OK;
}

/* The recording's flow table from /flows, on the topology; /paths and the ports checked by it. */
static int build_flows(qr_recording *r, const qr_topology *topo, const char *h5,
                       const struct tables *t, char *errbuf)
{
    char detail[QR_ERRBUF_SIZE];
    qr_flow *fl = malloc((t->n_flows ? t->n_flows : 1) * sizeof *fl);
    if (!fl)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t f = 0; f < t->n_flows; f++) {
        const qr_row_flow *x = &t->flows[f];
        fl[f] = (qr_flow){x->id, x->src, x->dst, x->bytes, x->start_ns, x->incast};
    }
    int rc = qr_flow_table_for_topology(&r->flows, fl, t->n_flows, topo, detail);
    free(fl);
    if (rc != QR_OK)
        return qri_err(errbuf, rc, "%s: /flows: %s", h5, detail);
    for (size_t i = 0; i < r->n_paths; i++)
        if (r->paths[i].dir >= qr_flow_table_directions(r->flows))
            return qri_err(errbuf, QR_EFORMAT, "%s: /paths row %zu: direction %u is no flow's", h5,
                           i + 1, r->paths[i].dir);
    for (size_t f = 0; f < t->n_flows; f++)
        if (qr_flow_table_sender_port(r->flows, (uint32_t)f) != t->flows[f].src_port)
            return qri_err(errbuf, QR_EVALUE,
                           "%s: /flows: flow %zu has port %u, not the runtime's numbering", h5, f,
                           t->flows[f].src_port);
    return QR_OK;
}

/* The drops the receivers detected and the receive times, sorted for lookup. */
static int take_packets(qr_recording *r, const struct tables *t, char *errbuf)
{
    r->detected = malloc((t->n_det ? t->n_det : 1) * sizeof *r->detected);
    r->received = malloc((t->n_recv ? t->n_recv : 1) * sizeof *r->received);
    if (!r->detected || !r->received)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n_det; i++)
        r->detected[i] = t->det[i].packet;
    qsort(r->detected, t->n_det, sizeof *r->detected, qri_cmp_u64);
    r->n_detected = t->n_det;
    for (size_t i = 0; i < t->n_recv; i++)
        r->received[i] =
            (struct recv_entry){qr_packet_id(t->recv[i].dir, t->recv[i].seq), t->recv[i].time_ns};
    if (sort_received(r->received, t->n_recv) != QR_OK)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    r->n_received = t->n_recv;
    return QR_OK;
}

/* recording.h5's identity: its scenario (checked against `check`), id and end. */
static int read_head(qr_recording *r, qr_h5_reader *in, const char *h5, const char *dir,
                     const qr_scenario *check, char *errbuf)
{
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_scenario_from_h5(&r->scenario, h5, NULL, dir, detail);
    if (rc != QR_OK)
        return qri_err(errbuf, rc, "%s: its scenario does not load: %s", h5, detail);
    if (check && (rc = check_match(r->scenario, check, dir, errbuf)) != QR_OK)
        return rc;
    char *id = NULL;
    if (qr_h5_read_attr_str(in, "/", "recording_id", &id, NULL) == QR_OK)
        snprintf(r->id, sizeof r->id, "%s", id);
    qr_h5_str_free(id);
    double end = 0;
    if (qr_h5_read_attr_f64(in, "/", "sim_end_ns", &end, NULL) == QR_OK && end > 0 && end < 9e18)
        r->end_ns = (int64_t)end;
    return QR_OK;
}

static int load(qr_recording *r, const char *dir, const qr_scenario *check, int received,
                char *errbuf)
{
    char h5[2 * QR_PATH_MAX];
    snprintf(h5, sizeof h5, "%s/recording.h5", dir);
    qr_h5_reader *in = NULL;
    qr_topology *topo = NULL;
    struct tables t = {0};
    char detail[QR_ERRBUF_SIZE];
    int rc = qr_h5_open(&in, h5, detail);
    if (rc) {
        rc = qri_err(errbuf, rc, "%s (not a complete recording: run qreplay runtime)", detail);
        goto out;
    }
    if ((rc = read_head(r, in, h5, dir, check, errbuf)) != QR_OK)
        goto out;
    const qr_config *c = qr_scenario_config(check ? check : r->scenario);
    rc = qr_topology_of_config(&topo, c);
    if (rc) {
        rc = qri_err(errbuf, QR_EVALUE, "%s: bad topology", h5);
        goto out;
    }
    if ((rc = read_tables(r, in, h5, dir, received, &t, errbuf)) != QR_OK)
        goto out;
    qr_h5_close(in);
    in = NULL;
    r->n_hosts = qr_topology_hosts(topo);
    if (t.n_hosts != r->n_hosts) {
        rc = qri_err(errbuf, QR_EVALUE,
                     "the scenario does not match the recording in %s: %u hosts, recorded %zu", dir,
                     r->n_hosts, t.n_hosts);
        goto out;
    }
    r->hosts = calloc(t.n_hosts, sizeof *r->hosts);
    r->dir = strdup(dir);
    if (!r->hosts || !r->dir) {
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = build_flows(r, topo, h5, &t, errbuf)) != QR_OK ||
        (rc = take_packets(r, &t, errbuf)) != QR_OK)
        goto out;
    r->host_rows = t.hosts;
    t.hosts = NULL;
out:
    qr_h5_close(in);
    tables_free(&t);
    qr_topology_destroy(topo);
    return rc;
}

int qr_recording_open(qr_recording **out, const char *dir, const qr_scenario *check, char *errbuf)
{
    *out = NULL;
    qr_recording *r = calloc(1, sizeof *r);
    if (!r)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = load(r, dir, check, 1, errbuf);
    uint32_t *next = NULL;
    if (!rc && !(next = calloc(qr_flow_table_directions(r->flows) + 1, sizeof *next)))
        rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
    if (!rc)
        rc = read_all_pcaps(r, next, errbuf);
    free(next);
    if (rc) {
        qr_recording_close(r);
        return rc;
    }
    *out = r;
    return QR_OK;
}

int qr_recording_open_tables(qr_recording **out, const char *dir, const qr_scenario *check,
                             char *errbuf)
{
    *out = NULL;
    qr_recording *r = calloc(1, sizeof *r);
    if (!r)
        return qri_err(errbuf, QR_ENOMEM, "out of memory");
    int rc = load(r, dir, check, 0, errbuf);
    r->tables_only = 1;
    if (rc) {
        qr_recording_close(r);
        return rc;
    }
    *out = r;
    return QR_OK;
}

int qr_recording_has_packets(const qr_recording *r)
{
    return !r->tables_only;
}

uint64_t qr_recording_pcap_packets(const qr_recording *r, uint32_t h)
{
    return h < r->n_hosts && r->host_rows ? r->host_rows[h].packets : 0;
}

const qr_scenario *qr_recording_scenario(const qr_recording *r)
{
    return r->scenario;
}

const char *qr_recording_id(const qr_recording *r)
{
    return r->id;
}

int64_t qr_recording_end_ns(const qr_recording *r)
{
    return r->end_ns;
}

int qr_recording_id_of(const char *kind, const qr_scenario *s, const char *extra,
                       char out[QR_ID_SIZE])
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return QR_ENOMEM;
    fputs("qreplay ", m);
    fputs(kind, m);
    fputs("\n", m);
    fputs(qr_version(), m);
    fputs("\n", m);
    int rc = qr_scenario_print(s, m);
    if (extra)
        fputs(extra, m);
    if (fclose(m) != 0 && rc == QR_OK)
        rc = QR_ENOMEM;
    if (rc == QR_OK)
        rc = qr_id_of(buf, len, out);
    free(buf);
    return rc;
}

int qr_h5_recording_id(const char *path, char out[QR_ID_SIZE], char *errbuf)
{
    qr_h5_reader *in = NULL;
    char *id = NULL;
    out[0] = '\0';
    int rc = qr_h5_open(&in, path, errbuf);
    if (rc)
        return rc;
    if (qr_h5_read_attr_str(in, "/", "recording_id", &id, NULL) == QR_OK)
        snprintf(out, QR_ID_SIZE, "%s", id);
    qr_h5_str_free(id);
    qr_h5_close(in);
    return QR_OK;
}

int qr_h5_text_attr(const char *path, const char *name, char *out, size_t size, char *errbuf)
{
    qr_h5_reader *in = NULL;
    char *v = NULL;
    out[0] = '\0';
    int rc = qr_h5_open(&in, path, errbuf);
    if (rc)
        return rc;
    if (qr_h5_read_attr_str(in, "/", name, &v, NULL) == QR_OK)
        snprintf(out, size, "%s", v);
    qr_h5_str_free(v);
    qr_h5_close(in);
    return QR_OK;
}

const qr_flow_table *qr_recording_flows(const qr_recording *r)
{
    return r->flows;
}

uint32_t qr_recording_hosts(const qr_recording *r)
{
    return r->n_hosts;
}

const qr_rec_packet *qr_recording_packets(const qr_recording *r, uint32_t host, size_t *n)
{
    *n = r->hosts[host].n;
    return r->hosts[host].pk;
}

int qr_recording_detected(const qr_recording *r, uint64_t packet)
{
    return bsearch(&packet, r->detected, r->n_detected, sizeof *r->detected, qri_cmp_u64) != NULL;
}

int qr_recording_ce(const qr_recording *r, uint64_t packet)
{
    return r->ce && bsearch(&packet, r->ce, r->n_ce, sizeof *r->ce, qri_cmp_u64) != NULL;
}

int qr_recording_late(const qr_recording *r, uint64_t packet)
{
    return r->late && bsearch(&packet, r->late, r->n_late, sizeof *r->late, qri_cmp_u64) != NULL;
}

int qr_recording_has_received(const qr_recording *r)
{
    return r->has_received;
}

int qr_recording_received(const qr_recording *r, uint64_t packet, int64_t *time_ns)
{
    struct recv_entry key = {packet, 0};
    const struct recv_entry *e =
        bsearch(&key, r->received, r->n_received, sizeof *r->received, cmp_recv);
    if (!e)
        return QR_ENOTFOUND;
    *time_ns = e->time_ns;
    return QR_OK;
}

/* qr_recording_estimate_clocks: one pair's smallest one-way delay beyond the unloaded latency. */
struct owd_acc {
    qri_map *m;
    qr_owd_pair *v;
    size_t n;
    int failed;
};

static void owd_collect(uint64_t a, uint64_t b, void *value, void *ctx)
{
    struct owd_acc *acc = ctx;
    int64_t *back = a < b ? qri_map_get(acc->m, b, a) : NULL;
    if (back)
        acc->v[acc->n++] = (qr_owd_pair){(uint32_t)a, (uint32_t)b, *(int64_t *)value, *back};
}

static void owd_free(uint64_t a, uint64_t b, void *value, void *ctx)
{
    (void)a, (void)b, (void)ctx;
    free(value);
}

int qr_recording_estimate_clocks(const qr_recording *r, uint32_t reference, qr_clock_estimate *out,
                                 size_t *n_pairs, char *errbuf)
{
    if (!r->has_received)
        return qri_err(errbuf, QR_ESTATE,
                       "the recording has no /received table: its receive times are unknown");
    if (reference >= r->n_hosts)
        return qri_err(errbuf, QR_EINVAL, "reference host %u: the recording has %u hosts",
                       reference, r->n_hosts);
    const qr_config *c = qr_scenario_config(r->scenario);
    qr_topology *topo = NULL;
    qri_map owd;
    struct owd_acc acc = {&owd, NULL, 0, 0};
    int rc = qr_topology_of_config(&topo, c);
    if (rc || qri_map_init(&owd)) {
        qr_topology_destroy(topo);
        return qri_err(errbuf, rc ? QR_EVALUE : QR_ENOMEM,
                       rc ? "the recording's topology does not build" : "out of memory");
    }
    for (uint32_t h = 0; h < r->n_hosts && rc == QR_OK; h++) {
        for (size_t i = 0; i < r->hosts[h].n && rc == QR_OK; i++) {
            const qr_rec_packet *p = &r->hosts[h].pk[i];
            const qr_flow *f = qr_flow_table_flow(r->flows, p->dir / 2);
            uint32_t to = p->dir % 2 ? f->src : f->dst;
            int64_t recv;
            if (qr_recording_received(r, qr_packet_id(p->dir, p->seq), &recv) != QR_OK)
                continue;
            /* both times as recorded, each on its host's clock */
            int64_t d = recv - p->pk.time_ns -
                        qr_unloaded_latency_ns(topo, h, to, p->pk.ip_len, c->links.rate_bps,
                                               c->links.delay_ns);
            int64_t *slot = qri_map_get(&owd, h, to);
            if (!slot) {
                if (!(slot = malloc(sizeof *slot)) || qri_map_put(&owd, h, to, slot)) {
                    free(slot);
                    rc = QR_ENOMEM;
                    break;
                }
                *slot = d;
            } else if (d < *slot)
                *slot = d;
        }
    }
    if (rc == QR_OK && !(acc.v = malloc((owd.count ? owd.count : 1) * sizeof *acc.v)))
        rc = QR_ENOMEM;
    if (rc == QR_OK) {
        qri_map_foreach(&owd, owd_collect, &acc);
        rc = qr_clock_reconcile(r->n_hosts, acc.v, acc.n, reference, out);
    }
    if (n_pairs)
        *n_pairs = acc.n;
    free(acc.v);
    qri_map_foreach(&owd, owd_free, NULL);
    qri_map_free(&owd);
    qr_topology_destroy(topo);
    return rc == QR_OK ? QR_OK : qri_err(errbuf, rc, "clock estimation: out of memory");
}

const char *qr_end_reason_name(qr_end_reason r)
{
    switch (r) {
    case QR_END_COMPLETED: return "completed";
    case QR_END_STOP: return "stop";
    case QR_END_CANCELLED: return "cancelled";
    }
    return "unknown";
}

int qr_recording_write(const char *path, const qr_scenario *s, const qr_recording_info *info,
                       const qr_row_flow *flows, size_t n_flows, const qr_row_host *hosts,
                       size_t n_hosts, const qr_row_detected *detected, size_t n_detected,
                       const qr_row_received *received, size_t n_received, char *errbuf)
{
    qr_h5 *f = NULL;
    int rc;
    QRI_TRY(qr_h5_create_result(&f, path, s, "qreplay recording", info->id, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "scenario_name", info->scenario_name, errbuf));
    QRI_TRY(qr_h5_attr_str(f, "/", "end", qr_end_reason_name(info->end), errbuf));
    QRI_TRY(qr_h5_attr_u64(f, "/", "sim_end_ns", (uint64_t)info->sim_end_ns, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/flows", &qr_schema_flow, flows, n_flows, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/hosts", &qr_schema_host, hosts, n_hosts, errbuf));
    {
        char dir[3 * QR_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        QRI_TRY(qri_recording_write_pcaps(f, dir, (uint32_t)n_hosts, errbuf));
    }
    QRI_TRY(
        qr_h5_write_rows(f, "/drops_detected", &qr_schema_detected, detected, n_detected, errbuf));
    QRI_TRY(qr_h5_write_rows(f, "/received", &qr_schema_received, received, n_received, errbuf));
    if (qr_scenario_config(s)->buffer.ecn_threshold_bytes > 0)
        QRI_TRY(
            qr_h5_write_rows(f, "/received_ce", &qr_schema_received, info->ce, info->n_ce, errbuf));
    if (info->traced) {
        QRI_TRY(qr_h5_write_rows(f, "/traceroutes", &qr_schema_traceroute, info->traceroutes,
                                 info->n_traceroutes, errbuf));
        QRI_TRY(qr_h5_write_rows(f, "/paths", &qr_schema_path, info->paths, info->n_paths, errbuf));
        QRI_TRY(qr_h5_write_rows(f, "/icmp", &qr_schema_icmp, info->icmp, info->n_icmp, errbuf));
    }
    return qr_h5_commit(f, errbuf);
fail:
    qr_h5_abort(f);
    return rc;
}
