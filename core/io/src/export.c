/* qreplay export: a recording written back out as the captures its hosts would have taken
 * (recording.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"

/* A frame in one host's capture: a packet of host `host`'s send list, at `time_ns`. */
struct frame {
    int64_t time_ns;
    uint32_t host, index;
};

static int cmp_frame(const void *a, const void *b)
{
    const struct frame *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int write_host(const qr_recording *r, uint32_t h, const struct frame *rx, size_t n_rx,
                      const char *path, const qr_pcap_format *fmt, char *errbuf)
{
    size_t n_tx = 0;
    const qr_rec_packet *tx = qr_recording_packets(r, h, &n_tx);
    qr_pcap_writer *w = NULL;
    int rc = qr_pcap_writer_open_as(&w, path, fmt, errbuf);
    size_t i = 0, j = 0;
    while (!rc && (i < n_tx || j < n_rx)) {
        /* the two lists are each in time order; at a tie the received packet goes first (a
         * packet sent in the nanosecond another arrived may be its answer) */
        if (j == n_rx || (i < n_tx && tx[i].pk.time_ns < rx[j].time_ns)) {
            rc = qr_pcap_write(w, &tx[i++].pk, errbuf);
        } else {
            qr_packet p = qr_recording_packets(r, rx[j].host, &(size_t){0})[rx[j].index].pk;
            p.time_ns = rx[j].time_ns;
            rc = qr_pcap_write(w, &p, errbuf);
            j++;
        }
    }
    int crc = qr_pcap_writer_close(w, rc ? NULL : errbuf); /* the first error is the one said */
    return rc ? rc : crc;
}

int qr_recording_export(const qr_recording *r, const char *dir, const qr_pcap_format *fmt,
                        qr_export_stats *st, char *errbuf)
{
    if (!r || !dir || !fmt)
        return qri_err(errbuf, QR_EINVAL, "export: NULL argument");
    if (!qr_recording_has_received(r))
        return qri_err(errbuf, QR_ESTATE,
                       "%s: the recording has no /received table: what hosts received is unknown",
                       dir);
    const qr_flow_table *ft = qr_recording_flows(r);
    uint32_t n_hosts = qr_recording_hosts(r);
    qr_export_stats s = {0};
    /* every received packet, grouped by receiving host, in time order */
    size_t total = 0;
    for (uint32_t h = 0; h < n_hosts; h++) {
        size_t n = 0;
        qr_recording_packets(r, h, &n);
        total += n;
    }
    struct frame *rx = malloc((total ? total : 1) * sizeof *rx);
    size_t *start = calloc((size_t)n_hosts + 1, sizeof *start);
    uint32_t *to = malloc((total ? total : 1) * sizeof *to);
    if (!rx || !start || !to) {
        free(rx);
        free(start);
        free(to);
        return QR_ENOMEM;
    }
    size_t k = 0;
    for (uint32_t h = 0; h < n_hosts; h++) {
        size_t n = 0;
        const qr_rec_packet *pk = qr_recording_packets(r, h, &n);
        for (size_t i = 0; i < n; i++) {
            int64_t t;
            if (qr_recording_received(r, qr_packet_id(pk[i].dir, pk[i].seq), &t) != QR_OK)
                continue;
            uint32_t d = qr_flow_table_dir_dst(ft, pk[i].dir);
            rx[k] = (struct frame){t, h, (uint32_t)i};
            to[k++] = d;
            start[d + 1]++;
        }
    }
    for (uint32_t h = 0; h < n_hosts; h++)
        start[h + 1] += start[h];
    struct frame *by = malloc((k ? k : 1) * sizeof *by);
    size_t *fill = malloc(((size_t)n_hosts + 1) * sizeof *fill);
    int rc = by && fill ? QR_OK : QR_ENOMEM;
    if (!rc) {
        memcpy(fill, start, ((size_t)n_hosts + 1) * sizeof *fill);
        for (size_t i = 0; i < k; i++)
            by[fill[to[i]]++] = rx[i];
        for (uint32_t h = 0; h < n_hosts; h++)
            qsort(by + start[h], start[h + 1] - start[h], sizeof *by, cmp_frame);
    }
    char path[4096];
    FILE *map = NULL;
    if (!rc) {
        snprintf(path, sizeof path, "%s/hosts.csv", dir);
        map = fopen(path, "w");
        if (!map)
            rc = qri_err(errbuf, QR_EIO, "%s: cannot create", path);
        else
            fputs("address,host,capture\n", map);
    }
    for (uint32_t h = 0; !rc && h < n_hosts; h++) {
        size_t n_tx = 0;
        qr_recording_packets(r, h, &n_tx);
        size_t n_rx = start[h + 1] - start[h];
        if (n_tx + n_rx == 0)
            continue; /* a host without traffic has nothing to capture */
        char name[32];
        snprintf(name, sizeof name, "h%04" PRIu32 ".pcap", h);
        if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
            rc = qri_err(errbuf, QR_EINVAL, "%s: path too long", dir);
            break;
        }
        rc = write_host(r, h, by + start[h], n_rx, path, fmt, errbuf);
        uint32_t a = qr_flow_table_host_addr(ft, h);
        fprintf(map, "%u.%u.%u.%u,%" PRIu32 ",%s\n", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255,
                h, name);
        s.captures++;
        s.sent += n_tx;
        s.received += n_rx;
    }
    if (map && (fclose(map) != 0) && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s/hosts.csv: write error", dir);
    free(rx);
    free(start);
    free(to);
    free(by);
    free(fill);
    if (!rc && st)
        *st = s;
    return rc;
}
