/* Send traces in pcap format (libpcap; capture.c reads operators' captures). */
#define _DEFAULT_SOURCE /* libpcap needs the BSD type names (u_int, u_char) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include "internal.h"
#include "pcap_internal.h"
#include "qreplay/capture.h"
#include "qreplay/pcap_file.h"
#include "qreplay/sampler.h"

#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif

struct qr_pcap_writer {
    pcap_t *pcap;
    pcap_dumper_t *dumper;
    char path[1024];
    int64_t last_ns;
    uint64_t count;
    qr_pcap_format fmt;
};

struct qr_pcap_reader {
    pcap_t *pcap;
    char path[1024];
    int dlt;
    int ended;
    uint64_t count;
    uint64_t offset;    /* of the next record (0: not known, pcapng) */
    char warning[1200]; /* "" or what the reader left out and why */
};

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)(v >> 16));
    put16(b + 2, (uint16_t)v);
}

int qr_pcap_writer_open(qr_pcap_writer **out, const char *path, char *errbuf)
{
    const qr_pcap_format ours = {QR_PCAP_LINK_IPV4, 0};
    return qr_pcap_writer_open_as(out, path, &ours, errbuf);
}

int qr_pcap_writer_open_as(qr_pcap_writer **out, const char *path, const qr_pcap_format *fmt,
                           char *errbuf)
{
    if (!out || !path || !fmt)
        return qri_err(errbuf, QR_EINVAL, "trace: NULL argument");
    if (fmt->link != QR_PCAP_LINK_IPV4 && fmt->link != QR_PCAP_LINK_ETHERNET)
        return qri_err(errbuf, QR_EINVAL, "%s: unknown link type %d", path, (int)fmt->link);
    qr_pcap_writer *w = calloc(1, sizeof *w);
    if (!w)
        return QR_ENOMEM;
    snprintf(w->path, sizeof w->path, "%s", path);
    w->fmt = *fmt;
    w->pcap = pcap_open_dead_with_tstamp_precision(
        fmt->link == QR_PCAP_LINK_ETHERNET ? DLT_EN10MB : DLT_IPV4, 65535,
        fmt->micro ? PCAP_TSTAMP_PRECISION_MICRO : PCAP_TSTAMP_PRECISION_NANO);
    if (!w->pcap) {
        free(w);
        return qri_err(errbuf, QR_ENOMEM, "%s: cannot create pcap handle", path);
    }
    w->dumper = pcap_dump_open(w->pcap, path);
    if (!w->dumper) {
        int rc = qri_err(errbuf, QR_EIO, "%s: %s", path, pcap_geterr(w->pcap));
        pcap_close(w->pcap);
        free(w);
        return rc;
    }
    *out = w;
    return QR_OK;
}

int qr_pcap_write(qr_pcap_writer *w, const qr_packet *p, char *errbuf)
{
    if (!w || !p)
        return qri_err(errbuf, QR_EINVAL, "trace: NULL argument");
    if (p->time_ns < 0)
        return qri_err(errbuf, QR_EVALUE, "%s: packet %" PRIu64 ": negative time", w->path,
                       w->count);
    if (p->time_ns >= QR_PCAP_TIME_END)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": time %" PRId64
                       " ns is beyond what a pcap record holds (2^31 s, the year 2038)",
                       w->path, w->count, p->time_ns);
    if (p->proto == 6 && p->ip_len < QR_PCAP_CAPLEN + (p->tcp_opt_len & ~3u))
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": IP length %u below its headers (%u bytes)", w->path,
                       w->count, p->ip_len, QR_PCAP_CAPLEN + (p->tcp_opt_len & ~3u));
    if (w->count > 0 && p->time_ns < w->last_ns)
        return qri_err(errbuf, QR_EORDER,
                       "%s: packet %" PRIu64 ": time %" PRId64 " ns before the previous %" PRId64
                       " ns",
                       w->path, w->count, p->time_ns, w->last_ns);
    uint8_t frame[14 + QR_PCAP_CAPLEN_MAX];
    size_t l2 = w->fmt.link == QR_PCAP_LINK_ETHERNET ? 14 : 0;
    if (l2) {
        /* dst and src MAC 02:00:a.b.c.d of the IPv4 addresses, then type IPv4 */
        frame[0] = frame[6] = 0x02;
        frame[1] = frame[7] = 0x00;
        put32(frame + 2, p->dst_ip);
        put32(frame + 8, p->src_ip);
        put16(frame + 12, 0x0800);
    }
    size_t caplen = l2 + qr_packet_encode(p, frame + l2);
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(p->time_ns / 1000000000);
    /* the sub-second part in the file's resolution: ns, or us truncated as a capture's are */
    h.ts.tv_usec = (suseconds_t)(p->time_ns % 1000000000 / (w->fmt.micro ? 1000 : 1));
    h.caplen = (bpf_u_int32)caplen;
    h.len = l2 + (p->ip_len > caplen - l2 ? p->ip_len : (bpf_u_int32)(caplen - l2));
    errno = 0;
    pcap_dump((u_char *)w->dumper, &h, frame);
    if (ferror(pcap_dump_file(w->dumper)))
        return qri_err(errbuf, QR_EIO, "%s: %s", w->path,
                       errno ? strerror(errno) : "write error (disk full?)");
    w->last_ns = p->time_ns;
    w->count++;
    return QR_OK;
}

int qr_pcap_writer_close(qr_pcap_writer *w, char *errbuf)
{
    if (!w)
        return QR_OK;
    int rc = QR_OK;
    errno = 0;
    if (pcap_dump_flush(w->dumper) != 0 || ferror(pcap_dump_file(w->dumper)))
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path,
                     errno ? strerror(errno) : "write error (disk full?)");
    FILE *fp = pcap_dump_file(w->dumper);
    /* pcap_dump_close closes the FILE; check the close ourselves by flushing first above. */
    if (fflush(fp) != 0 && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    pcap_dump_close(w->dumper);
    pcap_close(w->pcap);
    free(w);
    return rc;
}

int qr_pcap_reader_open(qr_pcap_reader **out, const char *path, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "trace: NULL argument");
    pcap_t *pc;
    int orc = qri_pcap_open(path, "pcap file", "pcap", &pc, errbuf);
    if (orc)
        return orc;
    int dlt = pcap_datalink(pc);
    if (dlt != DLT_IPV4 && dlt != DLT_RAW) {
        const char *name = pcap_datalink_val_to_name(dlt);
        int rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: link type %s (%d): qreplay reads raw-IP captures, as it records them "
                         "(LINKTYPE_IPV4 or RAW)%s",
                         path, name ? name : "?", dlt,
                         qr_capture_link_supported(dlt)
                             ? "; for a tcpdump or Wireshark capture (Ethernet, cooked, loopback), "
                               "make a recording "
                               "of it first with 'qreplay import SCENARIO CAPTURE... -o DIR'"
                             : "");
        pcap_close(pc);
        return rc;
    }
    qr_pcap_reader *r = calloc(1, sizeof *r);
    if (!r) {
        pcap_close(pc);
        return QR_ENOMEM;
    }
    r->pcap = pc;
    r->dlt = dlt;
    r->offset = qri_pcap_first_offset(pc);
    snprintf(r->path, sizeof r->path, "%s", path);
    *out = r;
    return QR_OK;
}

int qr_pcap_read(qr_pcap_reader *r, qr_packet *p, char *errbuf)
{
    if (!r || !p)
        return qri_err(errbuf, QR_EINVAL, "trace: NULL argument");
    if (r->ended)
        return QR_END;
    struct pcap_pkthdr *h;
    const u_char *data;
    int64_t t;
    int rc = qri_pcap_next(r->pcap, r->path, r->count, &r->offset, &h, &data, &t, r->warning,
                           sizeof r->warning, errbuf);
    if (rc == QR_END)
        r->ended = 1;
    if (rc != QR_OK)
        return rc;
    char why[256];
    if (qr_packet_parse(data, h->caplen, h->len, p, why, sizeof why) != QR_OK)
        return qri_err(errbuf, QR_EFORMAT, "%s: packet %" PRIu64 ": %s", r->path, r->count + 1,
                       why);
    p->time_ns = t;
    r->count++;
    return QR_OK;
}

const char *qr_pcap_reader_warning(const qr_pcap_reader *r)
{
    return r->warning;
}

uint64_t qr_pcap_reader_count(const qr_pcap_reader *r)
{
    return r->count;
}

void qr_pcap_reader_close(qr_pcap_reader *r)
{
    if (!r)
        return;
    pcap_close(r->pcap);
    free(r);
}
