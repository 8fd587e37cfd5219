/* Packets (packet.h): IPv4/TCP header codecs, TCP options, the retransmission rule. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "qreplay/packet.h"

static const char *const skip_names[QR_SKIP_COUNT] = {[QR_SKIP_NOT_IP] = "not IP",
                                                      [QR_SKIP_NOT_TCP] = "not TCP",
                                                      [QR_SKIP_FRAGMENT] = "IP fragment",
                                                      [QR_SKIP_SNAPLEN] = "cut by the snap length",
                                                      [QR_SKIP_BAD_LINK] = "bad link header",
                                                      [QR_SKIP_BAD_IP] = "bad IP header",
                                                      [QR_SKIP_BAD_TCP] = "bad TCP header",
                                                      [QR_SKIP_DUPLICATE] = "captured twice"};

const char *qr_skip_name(int reason)
{
    return reason >= 0 && reason < QR_SKIP_COUNT ? skip_names[reason] : "?";
}

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
    memset(buf, 0, QR_PCAP_CAPLEN + opt);
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
    return QR_PCAP_CAPLEN + opt;
}

int qr_ipv4_parse(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p, int *reason,
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
    return qr_ipv4_parse(buf, len, wire_len, p, &reason, why, why_size);
}

int qr_packet_decode(const uint8_t *buf, size_t len, uint32_t wire_len, qr_packet *p)
{
    return qr_packet_parse(buf, len, wire_len, p, NULL, 0);
}

int qr_icmp_time_exceeded_parse(const uint8_t *ip, size_t len, uint32_t *replier,
                                qr_five_tuple *quoted, uint16_t *quoted_id)
{
    if (len < 20 || (ip[0] >> 4) != 4 || ip[9] != 1)
        return 0;
    size_t ihl = (size_t)(ip[0] & 15) * 4;
    if (ihl < 20 || len < ihl + 8 + 20)
        return 0;
    const uint8_t *icmp = ip + ihl, *q = icmp + 8;
    if (icmp[0] != 11 || (q[0] >> 4) != 4)
        return 0;
    size_t qihl = (size_t)(q[0] & 15) * 4;
    if (qihl < 20 || len < ihl + 8 + qihl + 8)
        return 0;
    *replier = get32(ip + 12);
    memset(quoted, 0, sizeof *quoted);
    quoted->src_ip = get32(q + 12);
    quoted->dst_ip = get32(q + 16);
    quoted->proto = q[9];
    qr_l4_ports(q[9], q + qihl, 8, &quoted->src_port, &quoted->dst_port);
    *quoted_id = (uint16_t)(q[4] << 8 | q[5]);
    return 1;
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

uint32_t qr_tcp_seq_len(uint32_t payload, uint8_t tcp_flags)
{
    return payload + ((tcp_flags & QR_TCP_SYN) != 0) + ((tcp_flags & QR_TCP_FIN) != 0);
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

int qr_seq_step(qr_seq_state *s, uint8_t flags, uint32_t seq, uint32_t len, uint64_t *rel)
{
    if (!s->have_isn && (flags & QR_TCP_SYN)) {
        s->have_isn = 1;
        s->isn = seq;
    }
    *rel = (uint32_t)(seq - s->isn);
    int counts = len > 0 || (flags & (QR_TCP_SYN | QR_TCP_FIN));
    if (!counts || !s->have_isn)
        return 0;
    int retx = *rel < s->high;
    uint64_t end = *rel + qr_tcp_seq_len(len, flags);
    if (end > s->high)
        s->high = end;
    return retx;
}

int qr_l4_ports(uint8_t proto, const uint8_t *l4, size_t len, uint16_t *src_port,
                uint16_t *dst_port)
{
    *src_port = *dst_port = 0;
    if ((proto != 6 && proto != 17) || len < 4)
        return 0;
    *src_port = get16(l4); /* TCP and UDP both start with source and destination port */
    *dst_port = get16(l4 + 2);
    return 1;
}

int qr_tcp_segment(const uint8_t *seg, size_t captured, uint32_t seg_len, uint8_t *flags,
                   uint32_t *payload_bytes)
{
    if (seg_len < 20 || captured < 14)
        return 0;
    uint32_t header = (uint32_t)(seg[12] >> 4) * 4u;
    if (header < 20 || header > seg_len)
        return 0;
    *flags = seg[13];
    *payload_bytes = seg_len - header;
    return 1;
}
