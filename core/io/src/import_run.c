/* qreplay import, second pass: a recording from operators' captures (import.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_internal.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/textio.h"
#include "qreplay/topology.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/version.h"
#include "recording_internal.h"

/* ---- every capture's SHA-256, on a second thread while the passes read ---- */

struct hash_job {
    const char *const *paths;
    size_t n;
    char (*sha)[65];
    uint64_t *size;
    size_t failed; /* the first capture that could not be read, + 1 */
    pthread_t thread;
    int started;
};

static void *hash_all(void *arg)
{
    struct hash_job *j = arg;
    for (size_t c = 0; c < j->n && !j->failed; c++)
        if (qri_sha256_file(j->paths[c], j->sha[c], &j->size[c]) != QR_OK)
            j->failed = c + 1;
    return NULL;
}

static int hash_start(struct hash_job *j, const qr_import_cfg *cfg)
{
    memset(j, 0, sizeof *j);
    j->paths = cfg->captures;
    j->n = cfg->n_captures;
    j->sha = calloc(j->n, sizeof *j->sha);
    j->size = calloc(j->n, sizeof *j->size);
    if (!j->sha || !j->size)
        return QR_ENOMEM;
    if (pthread_create(&j->thread, NULL, hash_all, j) == 0)
        j->started = 1;
    else
        hash_all(j); /* no thread to be had: in line */
    return QR_OK;
}

static void hash_join(struct hash_job *j)
{
    if (j->started)
        pthread_join(j->thread, NULL);
    j->started = 0;
}

static void hash_free(struct hash_job *j)
{
    hash_join(j);
    free(j->sha);
    free(j->size);
}

/* ---- the pass ---- */

static int read_next(struct imp *m, size_t c)
{
    struct cap_state *cs = &m->caps[c];
    int rc = qr_capture_next(cs->c, &cs->next, m->errbuf);
    cs->has_next = rc == QR_OK;
    return rc == QR_END ? QR_OK : rc;
}

/* Whether capture cs holds host h in view. */
static int in_view(const struct cap_state *cs, uint32_t h)
{
    return cs->n_view && bsearch(&h, cs->view, cs->n_view, sizeof h, qri_cmp_u32) != NULL;
}

static int pass(struct imp *m)
{
    const qr_import_scan *s = m->scan;
    int rc;
    for (size_t c = 0; c < s->n_captures; c++) {
        m->caps[c].last_time = INT64_MIN;
        if ((rc = qr_capture_open(&m->caps[c].c, m->cfg->captures[c], m->errbuf)) != QR_OK)
            return rc;
        qr_capture_dedup(m->caps[c].c, QR_IMPORT_DEDUP_WINDOW);
        if ((rc = read_next(m, c)) != QR_OK)
            return rc;
        qri_strlcpy(m->rep->captures[c].link, qr_capture_link(m->caps[c].c),
                    sizeof m->rep->captures[c].link);
    }
    for (;;) {
        /* the capture whose next packet is earliest */
        size_t c = SIZE_MAX;
        for (size_t i = 0; i < s->n_captures; i++)
            if (m->caps[i].has_next &&
                (c == SIZE_MAX || m->caps[i].next.time_ns < m->caps[c].next.time_ns))
                c = i;
        if (c == SIZE_MAX)
            break;
        struct cap_state *cs = &m->caps[c];
        qr_import_capture_report *cr = &m->rep->captures[c];
        qr_capture_packet p = cs->next;
        if ((rc = read_next(m, c)) != QR_OK)
            return rc;
        if (++m->packets_seen % 65536 == 0 && m->cfg->progress) {
            char status[160];
            snprintf(status, sizeof status,
                     "import: %" PRIu64 " packets read, %" PRIu64 " in the recording",
                     m->packets_seen, m->rep->packets);
            if (m->cfg->progress(m->cfg->progress_ctx, status))
                return qri_err(m->errbuf, QR_ECANCELED, "import: interrupted");
        }
        int64_t v = qri_imp_find_dir(m, &p);
        if (v < 0 || m->flow_of_conn[v / 2] < 0) {
            cr->left[QR_IMPORT_LEFT_SAME_HOST]++;
            continue;
        }
        uint32_t dir = 2 * (uint32_t)m->flow_of_conn[v / 2] + (uint32_t)(v % 2);
        const struct dir_state *d = &m->dirs[dir];
        int back = p.time_ns < cs->last_time;
        if (!back)
            cs->last_time = p.time_ns;
        /* sent by a host whose packets this capture gives, received by one, or both (two hosts
         * a router's or mirror's capture holds in view): one capture, one clock */
        int as_sent = m->cap_of_host[d->src] == (int32_t)c,
            as_recv = m->cap_of_host[d->dst] == (int32_t)c;
        if (as_sent) {
            qr_capture_packet q = p;
            cr->sent++;
            cr->clamped += (uint64_t)back;
            if ((rc = qri_imp_on_send(m, dir, &q)) != QR_OK)
                return rc;
        }
        if (as_recv) {
            cr->received++;
            if ((rc = qri_imp_on_receive(m, dir, &p)) != QR_OK)
                return rc;
        }
        if (!as_sent && !as_recv)
            cr->left[in_view(cs, d->src) || in_view(cs, d->dst) ? QR_IMPORT_LEFT_DUPLICATE
                                                                : QR_IMPORT_LEFT_NOT_OWNER]++;
    }
    for (size_t c = 0; c < s->n_captures; c++) {
        qr_capture_stats_get(m->caps[c].c, &m->rep->captures[c].stats);
        qri_strlcpy(m->rep->captures[c].warning, qr_capture_warning(m->caps[c].c),
                    sizeof m->rep->captures[c].warning);
        if (s->warning[c][0]) {
            char *w = m->rep->captures[c].warning;
            size_t used = strlen(w);
            snprintf(w + used, sizeof m->rep->captures[c].warning - used, "%s%s", used ? "; " : "",
                     s->warning[c]);
        }
    }
    for (uint32_t h = 0; h < m->n_hosts; h++)
        m->rep->hosts[h].ipid_kind = (uint8_t)qr_ipid_classify(&m->rep->hosts[h].ipid);
    return qri_imp_finish_dirs(m);
}

/* Whether name is one qreplay writes in a recording's sub-folder sub ("" for the folder itself). */
static int ours(const char *sub, const char *name)
{
    unsigned h;
    char tail;
    if (strstr(name, ".partial-") || strstr(name, ".old-"))
        return 1; /* a temporary of an interrupted run */
    if (!sub[0])
        return !strcmp(name, "recording.h5") || !strcmp(name, "pcap") || !strcmp(name, "truth") ||
               !strcmp(name, "mirror") || !strcmp(name, "probes.h5") ||
               !strcmp(name, "light.qrl") || !strcmp(name, ".qreplay-export");
    if (!strcmp(sub, "pcap"))
        return sscanf(name, "h%4u.pcap%c", &h, &tail) == 1 && strlen(name) == 10;
    if (!strcmp(sub, "mirror")) /* the switches' copies (queuelog.h); the guided probes' */
        return !strcmp(name, "copies.qra") || !strcmp(name, "guided.csv") ||
               !strcmp(name, "counters.csv");
    return !strcmp(name, "truth.h5") || !strcmp(name, "arrivals.qra");
}

/* The recording folder is replaced whole: refuse if it holds anything qreplay did not write there,
 * which would go with it. */
static int check_replaceable(const char *rec_dir, char *errbuf)
{
    static const char *const subs[] = {"", "pcap", "truth", "mirror"};
    for (size_t i = 0; i < 4; i++) {
        char d[QR_PATH_MAX + 16];
        snprintf(d, sizeof d, "%s%s%s", rec_dir, subs[i][0] ? "/" : "", subs[i]);
        DIR *dir = opendir(d);
        if (!dir)
            continue;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            if (!ours(subs[i], e->d_name)) {
                int rc = qri_err(errbuf, QR_ESAMEFILE,
                                 "%s/%s was not written by qreplay and would be lost when the "
                                 "recording in %s is replaced: move it out first",
                                 d, e->d_name, rec_dir);
                closedir(dir);
                return rc;
            }
        }
        closedir(dir);
    }
    return QR_OK;
}

/* Everything the import's state holds (the report aside). */
static void imp_free(struct imp *m)
{
    if (m->caps)
        for (size_t c = 0; m->scan && c < m->scan->n_captures; c++) {
            qr_capture_close(m->caps[c].c);
            free(m->caps[c].view);
        }
    if (m->dirs)
        for (size_t d = 0; d < 2 * m->n_flows; d++) {
            free(m->dirs[d].sent.v);
            free(m->dirs[d].late.v);
            free(m->dirs[d].recv.v);
            free(m->dirs[d].rtx.v);
        }
    qri_map_foreach(&m->owd, qri_imp_free_owd, NULL);
    qri_map_free(&m->owd);
    qri_map_free(&m->dir_index);
    free(m->dirs);
    free(m->ftimes);
    free(m->w);
    free(m->nic_free);
    free(m->host_last_id);
    free(m->cap_of_host);
    free(m->reconstructed);
    free(m->flow_of_conn);
    free(m->caps);
    free(m->segs);
    free(m->det);
    free(m->recv);
    free(m->late);
    qr_flow_table_destroy(m->ft);
    qr_topology_destroy(m->topo);
    qr_import_scan_free(m->scan);
}

/* Every host of the topology has its pcap, empty if it sent nothing. */
static int close_pcaps(struct imp *m)
{
    for (uint32_t h = 0; h < m->n_hosts; h++) {
        qr_pcap_writer *w;
        int rc = qri_imp_writer(m, h, &w);
        if (rc)
            return rc;
        rc = qr_pcap_writer_close(w, m->errbuf);
        m->w[h] = NULL;
        if (rc)
            return rc;
    }
    return QR_OK;
}

/* The new recording's folder beside rec_dir (any left by an earlier run removed), with its pcap/.
 */
static int make_tmp(struct imp *m, const char *rec_dir)
{
    if (snprintf(m->tmp, sizeof m->tmp, "%s.partial-%ld", rec_dir, (long)getpid()) >=
        (int)sizeof m->tmp)
        return qri_err(m->errbuf, QR_EVALUE, "%s: path too long", rec_dir);
    qri_remove_tree(m->tmp);
    char pcapdir[sizeof m->tmp + 8];
    snprintf(pcapdir, sizeof pcapdir, "%s/pcap", m->tmp);
    int rc = qr_make_dirs(pcapdir, m->errbuf);
    if (!rc)
        qr_partial_add(m->tmp);
    return rc;
}

/* The captures' SHA-256 and sizes into the report, once the hashing thread is done. */
static int take_hashes(struct imp *m, struct hash_job *hash)
{
    hash_join(hash);
    if (hash->failed)
        return qri_err(m->errbuf, QR_EIO, "%s: cannot read it again",
                       m->cfg->captures[hash->failed - 1]);
    for (size_t c = 0; c < m->cfg->n_captures; c++) {
        memcpy(m->rep->captures[c].sha256, hash->sha[c], 65);
        m->rep->captures[c].size_bytes = hash->size[c];
    }
    return QR_OK;
}

int qr_import_run(const qr_import_cfg *cfg, const qr_scenario *sc, const char *rec_dir,
                  qr_import_report **report, char *errbuf)
{
    if (!cfg || !sc || !rec_dir || !cfg->captures || !cfg->n_captures)
        return qri_err(errbuf, QR_EINVAL, "import: no capture");
    if (report)
        *report = NULL;
    int crc = check_replaceable(rec_dir, errbuf);
    if (crc)
        return crc;
    struct imp m;
    memset(&m, 0, sizeof m);
    m.cfg = cfg;
    m.conf = qr_scenario_config(sc);
    /* In the scenario's network a host's NIC sends at its link rate. In a network qreplay does not
     * know, the captures' times are the only clock: a GSO burst of a fast virtual or 100G NIC
     * must not be spread at the scenario's rate (at 10 Gbps a 400 KB burst would drift 0.3 ms
     * behind its own ACKs); its segments go at 400 Gbps, or the scenario's rate if faster. */
    m.nic_bps = cfg->network_known || m.conf->links.rate_bps >= QR_IMPORT_UNKNOWN_NIC_BPS
                    ? m.conf->links.rate_bps
                    : QR_IMPORT_UNKNOWN_NIC_BPS;
    m.errbuf = errbuf;
    m.rep = calloc(1, sizeof *m.rep);
    int64_t *shift = NULL;
    int made_tmp = 0;
    struct hash_job hash;
    memset(&hash, 0, sizeof hash);
    int rc = QR_ENOMEM;
    if (!m.rep || qri_map_init(&m.dir_index) || qri_map_init(&m.owd))
        goto out;
    rc = qr_topology_of_config(&m.topo, m.conf);
    if (rc) {
        rc = qri_err(errbuf, QR_EVALUE, "import: the scenario's topology is not valid");
        goto out;
    }
    if ((rc = hash_start(&hash, cfg)) != QR_OK)
        goto out;
    if ((rc = qr_import_scan_run(cfg->captures, cfg->n_captures, cfg->map, cfg->n_map,
                                 qr_topology_hosts(m.topo), &m.scan, errbuf)) != QR_OK ||
        (rc = qri_imp_setup(&m)) != QR_OK)
        goto out;
    if ((rc = make_tmp(&m, rec_dir)) != QR_OK)
        goto out;
    made_tmp = 1;
    if ((rc = pass(&m)) != QR_OK)
        goto out;
    if ((rc = close_pcaps(&m)) != QR_OK)
        goto out;
    shift = calloc(m.n_hosts, sizeof *shift);
    if (!shift) {
        rc = QR_ENOMEM;
        goto out;
    }
    if ((rc = qri_imp_reconcile(&m, shift)) != QR_OK)
        goto out;
    if (m.rep->clock_applied && (rc = qri_imp_shift_pcaps(&m, shift)) != QR_OK)
        goto out;
    if ((rc = take_hashes(&m, &hash)) != QR_OK)
        goto out;
    if ((rc = qri_imp_write_h5(&m, sc, shift)) != QR_OK)
        goto out;
    if (cfg->progress && cfg->progress(cfg->progress_ctx, "import: done")) {
        rc = qri_err(errbuf, QR_ECANCELED, "import: interrupted");
        goto out;
    }
    /* in place of any earlier recording, at once (an exchange, then the old one goes) */
    if ((rc = qr_commit_path(m.tmp, rec_dir, errbuf)) != QR_OK)
        goto out;
    qr_partial_done(m.tmp);
    made_tmp = 0;
out:
    hash_free(&hash);
    if (m.w)
        for (uint32_t h = 0; h < m.n_hosts; h++)
            qr_pcap_writer_close(m.w[h], NULL);
    if (made_tmp)
        qri_remove_tree(m.tmp);
    imp_free(&m);
    free(shift);
    if (rc == QR_ENOMEM)
        qri_err(errbuf, rc, "import: out of memory");
    if (rc || !report)
        qr_import_report_free(m.rep);
    else
        *report = m.rep;
    return rc;
}
