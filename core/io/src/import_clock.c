/* qreplay import: the clock: reconcile, then shift every time onto one clock (import.h). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <math.h>
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

struct pair_acc {
    struct imp *m;
    qr_owd_pair *v;
    size_t n, cap;
    int oom;
};

static void collect_pair(uint64_t a, uint64_t b, void *value, void *ctx)
{
    struct pair_acc *acc = ctx;
    if (a >= b || acc->oom)
        return; /* each unordered pair once, from its smaller host */
    int64_t *back = qri_map_get(&acc->m->owd, b, a);
    if (!back || *back == INT64_MAX || *(int64_t *)value == INT64_MAX)
        return;
    if (acc->n == acc->cap) {
        size_t cap = acc->cap ? 2 * acc->cap : 16;
        qr_owd_pair *v = realloc(acc->v, cap * sizeof *v);
        if (!v) {
            acc->oom = 1;
            return;
        }
        acc->v = v;
        acc->cap = cap;
    }
    acc->v[acc->n++] = (qr_owd_pair){(uint32_t)a, (uint32_t)b, *(int64_t *)value, *back};
}

void qri_imp_free_owd(uint64_t a, uint64_t b, void *value, void *ctx)
{
    (void)a, (void)b, (void)ctx;
    free(value);
}

/* Shift every host's pcap by the correction of the clock its times were taken on (its own, or for
 * a reconstructed host, each packet's receiver's), keeping the NIC order. */
int qri_imp_shift_pcaps(struct imp *m, const int64_t *shift)
{
    char in[sizeof m->tmp + 32], out[sizeof m->tmp + 48];
    for (uint32_t h = 0; h < m->n_hosts; h++) {
        if (!m->rep->hosts[h].packets)
            continue;
        snprintf(in, sizeof in, "%s/pcap/h%04u.pcap", m->tmp, h);
        snprintf(out, sizeof out, "%s/pcap/h%04u.shifted", m->tmp, h);
        qr_pcap_reader *r = NULL;
        qr_pcap_writer *w = NULL;
        int rc = qr_pcap_reader_open(&r, in, m->errbuf);
        if (!rc)
            rc = qr_pcap_writer_open(&w, out, m->errbuf);
        qr_packet p;
        int64_t nic = 0;
        while (!rc && (rc = qr_pcap_read(r, &p, m->errbuf)) == QR_OK) {
            uint32_t clock = h;
            if (m->reconstructed[h] && qr_topology_host_of_addr(m->topo, p.dst_ip, &clock))
                clock = h;
            __int128 t = (__int128)p.time_ns + shift[clock];
            if (t > QR_TIME_MAX) {
                rc = qri_err(m->errbuf, QR_EVALUE,
                             "host %u: the clock correction puts a packet beyond 2^62 ns", h);
                break;
            }
            p.time_ns = t < nic ? nic : (int64_t)t;
            nic = p.time_ns + wire_ns(m, p.ip_len);
            rc = qr_pcap_write(w, &p, m->errbuf);
        }
        if (rc == QR_END)
            rc = QR_OK;
        qr_pcap_reader_close(r);
        int wc = qr_pcap_writer_close(w, m->errbuf);
        if (!rc)
            rc = wc;
        if (!rc && rename(out, in))
            rc = qri_err(m->errbuf, QR_EIO, "%s: %s", in, strerror(errno));
        if (rc)
            return rc;
    }
    return QR_OK;
}

/* An estimated offset in whole ns (qr_clock_reconcile keeps it within +-2^61). */
int64_t qri_imp_offset_ns(const qr_clock_estimate *e)
{
    return e->offset_ns;
}

int qri_imp_reconcile(struct imp *m, int64_t *shift)
{
    qr_import_report *rep = m->rep;
    struct pair_acc acc = {m, NULL, 0, 0, 0};
    qri_map_foreach(&m->owd, collect_pair, &acc);
    if (acc.oom) {
        free(acc.v);
        return QR_ENOMEM;
    }
    rep->clock_pairs = acc.n;
    for (uint32_t h = 0; h < m->n_hosts; h++)
        shift[h] = 0;
    int rc = QR_OK;
    if (m->cfg->clock == QR_IMPORT_CLOCK_RECONCILE && acc.n == 0) {
        rc = qri_err(m->errbuf, QR_EVALUE,
                     "--clock reconcile: no two hosts were captured at both ends of a connection "
                     "with packets matched both ways (use --clock none)");
    } else if (acc.n) {
        qr_clock_estimate *est = malloc(m->n_hosts * sizeof *est);
        if (!est) {
            free(acc.v);
            return QR_ENOMEM;
        }
        uint32_t ref = m->scan->owner_host[0];
        if ((rc = qr_clock_reconcile(m->n_hosts, acc.v, acc.n, ref, est)) == QR_OK) {
            /* the hosts a router's or mirror's capture holds in view share its one clock */
            for (uint32_t h = 0; h < m->n_hosts; h++) {
                int32_t c = m->cap_of_host[h];
                if (c >= 0 && m->scan->owner_host[c] != h) {
                    est[h] = est[m->scan->owner_host[c]];
                }
            }
            for (uint32_t h = 0; h < m->n_hosts; h++)
                rep->hosts[h].clock = est[h];
            if (m->cfg->clock != QR_IMPORT_CLOCK_NONE) {
                /* onto the reference host's clock, rebased on the earliest corrected capture
                 * start (less 1 ms, as before): the result does not depend on which host's
                 * clock was off */
                rep->clock_applied = 1;
                int64_t base = INT64_MAX;
                for (size_t c = 0; c < m->scan->n_captures; c++) {
                    int64_t e = qri_imp_offset_ns(&est[m->scan->owner_host[c]]);
                    if (m->scan->first_ns[c] != INT64_MAX && m->scan->first_ns[c] - e < base)
                        base = m->scan->first_ns[c] - e;
                }
                base -= 1000000;
                for (uint32_t h = 0; h < m->n_hosts; h++) {
                    int64_t e = qri_imp_offset_ns(&est[h]);
                    shift[h] = clamp62((__int128)rep->time_base_ns - base - e);
                    rep->hosts[h].clock_applied_ns = e;
                }
                rep->time_base_ns = base;
            }
        }
        free(est);
    }
    free(acc.v);
    return rc;
}
