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
#include "qreplay/capture.h"
#include "qreplay/sampler.h"
#include "qreplay/trace.h"

#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif

struct qr_trace_writer {
    pcap_t *pcap;
    pcap_dumper_t *dumper;
    char path[1024];
    int64_t last_ns;
    uint64_t count;
    qr_trace_format fmt;
};

struct qr_trace_reader {
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
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

size_t qr_packet_encode(const qr_packet *p, uint8_t *buf)
{
    size_t opt = p->tcp_opt_len > QR_TCP_OPTIONS_MAX ? QR_TCP_OPTIONS_MAX : p->tcp_opt_len & ~3u;
    memset(buf, 0, QR_TRACE_CAPLEN + opt);
    buf[0] = 0x45; /* IPv4, 20-byte header */
    buf[1] = p->tos;
    put16(buf + 2, p->ip_len);
    put16(buf + 4, p->ip_id);
    put16(buf + 6, 0x4000); /* don't fragment */
    buf[8] = p->ttl ? p->ttl : 64;
    buf[9] = p->proto;
    put32(buf + 12, p->src_ip);
    put32(buf + 16, p->dst_ip);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += get16(buf + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    put16(buf + 10, (uint16_t)~sum);
    uint8_t *t = buf + 20;
    put16(t, p->src_port);
    put16(t + 2, p->dst_port);
    put32(t + 4, p->seq);
    put32(t + 8, p->ack);
    t[12] = (uint8_t)((5 + opt / 4) << 4); /* data offset in 32-bit words */
    t[13] = p->tcp_flags;
    put16(t + 14, p->window);
    memcpy(t + 20, p->tcp_opts, opt);
    return QR_TRACE_CAPLEN + opt;
}

int qri_ipv4_parse(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p, int *reason,
                   char *why, size_t why_size)
{
#define WHY_AS(r, ...)                                                                             \
    ((*reason = (r)), (why ? snprintf(why, why_size, __VA_ARGS__) : 0), QR_EFORMAT)
#define WHY(...) WHY_AS(QR_SKIP_BAD_IP, __VA_ARGS__)
    if (len < 1)
        return WHY("an empty packet");
    unsigned version = buf[0] >> 4;
    if (version == 6)
        return WHY("an IPv6 packet (qreplay reads IPv4)");
    if (version != 4)
        return WHY("not an IP packet (IP version %u)", version);
    size_t ihl = (size_t)(buf[0] & 0x0f) * 4;
    if (ihl < 20)
        return WHY("a bad IPv4 header length (%zu bytes)", ihl);
    if (len < ihl)
        return WHY_AS(QR_SKIP_SNAPLEN,
                      "cut by the capture's snap length: %zu of %u bytes captured, the IPv4 header "
                      "needs %zu",
                      len, wire_len, ihl);
    memset(p, 0, sizeof *p);
    p->tos = buf[1];
    p->ip_len = get16(buf + 2);
    p->ip_id = get16(buf + 4);
    p->ttl = buf[8];
    p->proto = buf[9];
    p->src_ip = get32(buf + 12);
    p->dst_ip = get32(buf + 16);
    if (p->ip_len < ihl)
        return WHY("IP total length %u is below its header's %zu bytes", p->ip_len, ihl);
    if (wire_len && p->ip_len > wire_len)
        return WHY("IP total length %u is beyond the packet's %u bytes on the wire", p->ip_len,
                   wire_len);
    unsigned frag = get16(buf + 6) & 0x1fff;
    if (frag && (p->proto == 6 || p->proto == 17))
        return WHY_AS(QR_SKIP_FRAGMENT,
                      "a non-first IP fragment (offset %u bytes): it carries no %s header",
                      frag * 8, p->proto == 6 ? "TCP" : "UDP");
    size_t l4 = p->proto == 6 ? 20 : p->proto == 17 ? 8 : 0;
    if (l4 && p->ip_len < ihl + l4)
        return WHY_AS(QR_SKIP_BAD_TCP, "IP total length %u cannot hold the %s header", p->ip_len,
                      p->proto == 6 ? "TCP" : "UDP");
    if (l4 && len < ihl + l4)
        return WHY_AS(QR_SKIP_SNAPLEN,
                      "cut by the capture's snap length: %zu of %u bytes captured, the %s header "
                      "needs %zu",
                      len, wire_len, p->proto == 6 ? "TCP" : "UDP", ihl + l4);
    const uint8_t *t = buf + ihl;
    if (l4) {
        p->src_port = get16(t);
        p->dst_port = get16(t + 2);
    }
    if (p->proto == 6) {
        p->seq = get32(t + 4);
        p->ack = get32(t + 8);
        p->tcp_flags = t[13];
        p->window = get16(t + 14);
        size_t doff = (size_t)(t[12] >> 4) * 4;
        if (doff < 20)
            return WHY_AS(QR_SKIP_BAD_TCP, "a bad TCP header length (%zu bytes)", doff);
        if (ihl + doff > p->ip_len)
            return WHY_AS(QR_SKIP_BAD_TCP,
                          "a TCP header of %zu bytes beyond the IP total length %u", doff,
                          p->ip_len);
        if (doff > 20) {
            size_t have = len - ihl - 20, want = doff - 20;
            size_t n = (want < have ? want : have) & ~(size_t)3;
            if (n > QR_TCP_OPTIONS_MAX)
                n = QR_TCP_OPTIONS_MAX;
            memcpy(p->tcp_opts, t + 20, n);
            p->tcp_opt_len = (uint8_t)n;
        }
    }
    return QR_OK;
#undef WHY
#undef WHY_AS
}

int qr_packet_parse(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p, char *why,
                    size_t why_size)
{
    int reason;
    return qri_ipv4_parse(buf, len, wire_len, p, &reason, why, why_size);
}

int qr_packet_decode(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p)
{
    return qr_packet_parse(buf, len, wire_len, p, NULL, 0);
}

int qr_trace_writer_open(qr_trace_writer **out, const char *path, char *errbuf)
{
    const qr_trace_format ours = {QR_TRACE_LINK_IPV4, 0};
    return qr_trace_writer_open_as(out, path, &ours, errbuf);
}

int qr_trace_writer_open_as(qr_trace_writer **out, const char *path, const qr_trace_format *fmt,
                            char *errbuf)
{
    if (!out || !path || !fmt)
        return qri_err(errbuf, QR_EINVAL, "trace: NULL argument");
    if (fmt->link != QR_TRACE_LINK_IPV4 && fmt->link != QR_TRACE_LINK_ETHERNET)
        return qri_err(errbuf, QR_EINVAL, "%s: unknown link type %d", path, (int)fmt->link);
    qr_trace_writer *w = calloc(1, sizeof *w);
    if (!w)
        return QR_ENOMEM;
    snprintf(w->path, sizeof w->path, "%s", path);
    w->fmt = *fmt;
    w->pcap = pcap_open_dead_with_tstamp_precision(
        fmt->link == QR_TRACE_LINK_ETHERNET ? DLT_EN10MB : DLT_IPV4, 65535,
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

int qr_trace_write(qr_trace_writer *w, const qr_packet *p, char *errbuf)
{
    if (!w || !p)
        return qri_err(errbuf, QR_EINVAL, "trace: NULL argument");
    if (p->time_ns < 0)
        return qri_err(errbuf, QR_EVALUE, "%s: packet %" PRIu64 ": negative time", w->path,
                       w->count);
    if (p->time_ns >= QR_TRACE_TIME_END)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": time %" PRId64
                       " ns is beyond what a pcap record holds (2^31 s, the year 2038)",
                       w->path, w->count, p->time_ns);
    if (p->proto == 6 && p->ip_len < QR_TRACE_CAPLEN + (p->tcp_opt_len & ~3u))
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": IP length %u below its headers (%u bytes)", w->path,
                       w->count, p->ip_len, QR_TRACE_CAPLEN + (p->tcp_opt_len & ~3u));
    if (w->count > 0 && p->time_ns < w->last_ns)
        return qri_err(errbuf, QR_EORDER,
                       "%s: packet %" PRIu64 ": time %" PRId64 " ns before the previous %" PRId64
                       " ns",
                       w->path, w->count, p->time_ns, w->last_ns);
    uint8_t frame[14 + QR_TRACE_CAPLEN_MAX];
    size_t l2 = w->fmt.link == QR_TRACE_LINK_ETHERNET ? 14 : 0;
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
    pcap_dump((u_char *)w->dumper, &h, frame);
    w->last_ns = p->time_ns;
    w->count++;
    return QR_OK;
}

int qr_trace_writer_close(qr_trace_writer *w, char *errbuf)
{
    if (!w)
        return QR_OK;
    int rc = QR_OK;
    if (pcap_dump_flush(w->dumper) != 0 || ferror(pcap_dump_file(w->dumper)))
        rc = qri_err(errbuf, QR_EIO, "%s: write error", w->path);
    FILE *fp = pcap_dump_file(w->dumper);
    /* pcap_dump_close closes the FILE; check the close ourselves by flushing first above. */
    if (fflush(fp) != 0 && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: %s", w->path, strerror(errno));
    pcap_dump_close(w->dumper);
    pcap_close(w->pcap);
    free(w);
    return rc;
}

int qri_pcap_open(const char *path, const char *kind, const char *formats, pcap_t **out,
                  char *errbuf)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return qri_err(errbuf, QR_ENOENT, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return qri_err(errbuf, QR_EFORMAT, "%s: is a folder, not a %s", path, kind);
    if (st.st_size == 0)
        return qri_err(errbuf, QR_ETRUNC, "%s: empty file (no %s header)", path, formats);
    char pe[PCAP_ERRBUF_SIZE] = "";
    pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, pe);
    if (!pc) {
        int code = strstr(pe, "truncated") ? QR_ETRUNC : QR_EFORMAT;
        if (strstr(pe, "No such file") || strstr(pe, "Permission denied"))
            code = QR_ENOENT;
        return qri_err(errbuf, code, "%s: not a readable %s file (%s)", path, formats, pe);
    }
    *out = pc;
    return QR_OK;
}

int qr_trace_reader_open(qr_trace_reader **out, const char *path, char *errbuf)
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
    qr_trace_reader *r = calloc(1, sizeof *r);
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

uint64_t qri_pcap_first_offset(pcap_t *pc)
{
    return pcap_major_version(pc) == 2 ? 24 : 0; /* classic pcap: a 24-byte file header */
}

int qri_pcap_next(pcap_t *pc, const char *path, uint64_t count, uint64_t *offset,
                  struct pcap_pkthdr **h, const u_char **data, int64_t *time_ns, char *warning,
                  size_t warning_size, char *errbuf)
{
    int rc = pcap_next_ex(pc, h, data);
    if (rc == PCAP_ERROR_BREAK)
        return QR_END;
    if (rc != 1) {
        const char *msg = pcap_geterr(pc);
        if (strstr(msg, "truncated")) {
            /* the file ends inside its last record (a capture stopped mid-write): the whole
             * packets before it are the capture */
            if (*offset)
                snprintf(warning, warning_size,
                         "%s: the last record, at byte %" PRIu64 ", is cut short (the capture "
                         "stopped mid-write); read the %" PRIu64 " whole packets before it",
                         path, *offset, count);
            else
                snprintf(warning, warning_size,
                         "%s: the last block is cut short at the end of the file (the capture "
                         "stopped mid-write); read the %" PRIu64 " whole packets before it",
                         path, count);
            return QR_END;
        }
        return qri_err(errbuf, QR_EFORMAT, "%s: packet %" PRIu64 ": %s", path, count + 1, msg);
    }
    /* the next record's offset, counted rather than asked of the FILE (ftell is a system call) */
    const struct pcap_pkthdr *x = *h;
    if (*offset)
        *offset += 16 + x->caplen;
    /* nanoseconds (the readers ask libpcap for nanosecond precision whatever the file's) */
    if (x->ts.tv_sec < 0 || x->ts.tv_usec < 0 || x->ts.tv_usec >= 1000000000 ||
        (int64_t)x->ts.tv_sec > QR_TIME_MAX / 1000000000)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": timestamp %lld s %ld ns is outside 0 .. 2^62 ns",
                       path, count + 1, (long long)x->ts.tv_sec, (long)x->ts.tv_usec);
    *time_ns = (int64_t)x->ts.tv_sec * 1000000000 + (int64_t)x->ts.tv_usec;
    if (*time_ns > QR_TIME_MAX)
        return qri_err(errbuf, QR_EVALUE, "%s: packet %" PRIu64 ": timestamp beyond 2^62 ns", path,
                       count + 1);
    return QR_OK;
}

int qr_trace_read(qr_trace_reader *r, qr_packet *p, char *errbuf)
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

const char *qr_trace_reader_warning(const qr_trace_reader *r)
{
    return r->warning;
}

uint64_t qr_trace_reader_count(const qr_trace_reader *r)
{
    return r->count;
}

void qr_trace_reader_close(qr_trace_reader *r)
{
    if (!r)
        return;
    pcap_close(r->pcap);
    free(r);
}

char *qr_packet_flow_name(const qr_packet *p, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u.%u:%u>%u.%u.%u.%u:%u/%u", p->src_ip >> 24,
             (p->src_ip >> 16) & 255, (p->src_ip >> 8) & 255, p->src_ip & 255, p->src_port,
             p->dst_ip >> 24, (p->dst_ip >> 16) & 255, (p->dst_ip >> 8) & 255, p->dst_ip & 255,
             p->dst_port, p->proto);
    return buf;
}

uint32_t qr_tcp_payload(const qr_packet *p)
{
    uint32_t hdr = 20u + 20u + p->tcp_opt_len;
    return p->ip_len > hdr ? p->ip_len - hdr : 0;
}

const uint8_t *qr_tcp_option(const uint8_t *opts, size_t len, uint8_t kind, size_t *declared,
                             size_t *present)
{
    for (size_t i = 0; i < len;) {
        uint8_t k = opts[i];
        if (k == 0)
            break;
        if (k == 1) {
            i++;
            continue;
        }
        if (i + 1 >= len || opts[i + 1] < 2)
            break;
        if (k == kind) {
            *declared = (size_t)opts[i + 1] - 2;
            *present = len - i - 2 < *declared ? len - i - 2 : *declared;
            return opts + i + 2;
        }
        i += opts[i + 1];
    }
    return NULL;
}
