/* Operators' captures through libpcap: link layers, IPv4 and IPv6, TCP; skipped frames counted. */
#define _DEFAULT_SOURCE /* libpcap needs the BSD type names (u_int, u_char) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include "internal.h"
#include "map.h"
#include "pcap_internal.h"
#include "qreplay/capture.h"

#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif
#ifndef DLT_NFLOG
#define DLT_NFLOG 239
#endif
#ifndef DLT_PPP_SERIAL
#define DLT_PPP_SERIAL 50
#endif
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86dd

struct qr_capture {
    pcap_t *pcap;
    int dlt;
    int ended;
    uint64_t offset; /* of the next record (0: not known, pcapng) */
    char path[1024];
    char link[64];
    char warning[1200];
    qr_capture_stats stats;
    qr_capture_skip_fn on_skip;
    void *on_skip_ctx;
    unsigned dedup;       /* the window of qr_capture_dedup (0: off) */
    struct recent {       /* the last kept TCP packets, oldest first from */
        uint64_t headers; /* next_recent - n_recent: every field's hash, */
        uint64_t ends;    /* their addresses and ports' (source first) */
        int64_t time_ns;
    } recent[QR_CAPTURE_DEDUP_MAX];
    unsigned n_recent, next_recent;
};

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

int qr_capture_link_supported(int dlt)
{
    switch (dlt) {
    case DLT_EN10MB:
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
    case DLT_LINUX_SLL:
    case DLT_LINUX_SLL2:
    case DLT_NULL:
    case DLT_LOOP:
    case DLT_PPP:
    case DLT_PPP_SERIAL:
    case DLT_NFLOG: return 1;
    default: return 0;
    }
}

static void mapped4(uint8_t out[16], uint32_t a)
{
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    out[12] = (uint8_t)(a >> 24);
    out[13] = (uint8_t)(a >> 16);
    out[14] = (uint8_t)(a >> 8);
    out[15] = (uint8_t)a;
}

static int skip(qr_skip *why, qr_skip r)
{
    *why = r;
    return 1;
}

/* TCP header at t (have: captured bytes from t, seg: bytes of the segment per the IP length). */
static int tcp(const uint8_t *t, size_t have, size_t seg, qr_capture_packet *p, qr_skip *why)
{
    if (seg < 20)
        return skip(why, QR_SKIP_BAD_TCP);
    if (have < 20)
        return skip(why, QR_SKIP_SNAPLEN);
    size_t doff = (size_t)(t[12] >> 4) * 4;
    if (doff < 20 || doff > seg)
        return skip(why, QR_SKIP_BAD_TCP);
    p->src_port = get16(t);
    p->dst_port = get16(t + 2);
    p->seq = get32(t + 4);
    p->ack = get32(t + 8);
    p->tcp_flags = t[13];
    p->window = get16(t + 14);
    p->tcp_hdr_len = (uint8_t)doff;
    p->payload = (uint32_t)(seg - doff);
    size_t want = doff - 20, got = have - 20;
    size_t n = (want < got ? want : got) & ~(size_t)3;
    memcpy(p->tcp_opts, t + 20, n);
    p->tcp_opt_len = (uint8_t)n;
    return 0;
}

static int ipv4(const uint8_t *b, size_t len, uint32_t wire, qr_capture_packet *p, qr_skip *why)
{
    qr_packet q;
    int reason;
    if (qr_ipv4_parse(b, len, wire, &q, &reason, NULL, 0) != QR_OK)
        return skip(why, (qr_skip)reason);
    p->family = 4; /* the IP header's fields, also of a packet of another protocol */
    mapped4(p->src, q.src_ip);
    mapped4(p->dst, q.dst_ip);
    p->ip_len = q.ip_len;
    p->ip_id = q.ip_id;
    p->tos = q.tos;
    p->ttl = q.ttl;
    if (q.proto != 6)
        return skip(why, QR_SKIP_NOT_TCP);
    if (get16(b + 6) & 0x2000) /* more fragments: the segment is not whole here */
        return skip(why, QR_SKIP_FRAGMENT);
    size_t ihl = (size_t)(b[0] & 0x0f) * 4;
    return tcp(b + ihl, len - ihl, (size_t)q.ip_len - ihl, p, why);
}

static int ipv6(const uint8_t *b, size_t len, uint32_t wire, qr_capture_packet *p, qr_skip *why)
{
    if (len < 40)
        return skip(why, wire >= 40 ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_IP);
    if (b[0] >> 4 != 6)
        return skip(why, QR_SKIP_BAD_IP);
    size_t plen = get16(b + 4);
    if (plen == 0 || (wire && 40 + plen > wire)) /* 0: a jumbogram; beyond the frame */
        return skip(why, QR_SKIP_BAD_IP);
    p->family = 6;
    memcpy(p->src, b + 8, 16);
    memcpy(p->dst, b + 24, 16);
    p->ip_len = (uint32_t)(40 + plen);
    p->tos = (uint8_t)((get16(b) >> 4) & 0xff);
    p->ttl = b[7];
    unsigned next = b[6];
    size_t off = 40, end = 40 + plen;
    for (int hops = 0;; hops++) {
        if (next == 6)
            break;
        if (hops > 8 || !(next == 0 || next == 43 || next == 44 || next == 60 || next == 51))
            return skip(why, QR_SKIP_NOT_TCP);
        if (off + 8 > end)
            return skip(why, QR_SKIP_BAD_IP);
        if (off + 8 > len)
            return skip(why, QR_SKIP_SNAPLEN);
        size_t hl;
        if (next == 44) {
            if (get16(b + off + 2) & 0xfff9) /* an offset, or more fragments */
                return skip(why, QR_SKIP_FRAGMENT);
            hl = 8;
        } else if (next == 51) {
            hl = ((size_t)b[off + 1] + 2) * 4;
        } else {
            hl = ((size_t)b[off + 1] + 1) * 8;
        }
        next = b[off];
        off += hl;
        if (off > end)
            return skip(why, QR_SKIP_BAD_IP);
    }
    if (off > len)
        return skip(why, QR_SKIP_SNAPLEN);
    return tcp(b + off, len - off, end - off, p, why);
}

static int by_ethertype(unsigned type, const uint8_t *b, size_t len, uint32_t wire,
                        qr_capture_packet *p, qr_skip *why)
{
    if (type == ETH_IPV4)
        return ipv4(b, len, wire, p, why);
    if (type == ETH_IPV6)
        return ipv6(b, len, wire, p, why);
    return skip(why, QR_SKIP_NOT_IP);
}

static int by_version(const uint8_t *b, size_t len, uint32_t wire, qr_capture_packet *p,
                      qr_skip *why)
{
    if (len < 1)
        return skip(why, wire ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_IP);
    if (b[0] >> 4 == 4)
        return ipv4(b, len, wire, p, why);
    if (b[0] >> 4 == 6)
        return ipv6(b, len, wire, p, why);
    return skip(why, QR_SKIP_NOT_IP);
}

/* VLAN tags (802.1Q, 802.1ad, the old QinQ 0x9100) before the payload's ethertype at b[at]. */
static int after_tags(const uint8_t *b, size_t caplen, uint32_t wire_len, size_t at,
                      qr_capture_packet *p, qr_skip *why)
{
    unsigned type = get16(b + at);
    at += 2;
    while (type == 0x8100 || type == 0x88a8 || type == 0x9100) {
        if (caplen < at + 4)
            return skip(why, wire_len >= at + 4 ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
        if (!p->vlan)
            p->vlan = get16(b + at) & 0x0fff;
        type = get16(b + at + 2);
        at += 4;
    }
    if (type < 0x0600) /* an 802.3 length: LLC/SNAP frames (STP, ...) */
        return skip(why, QR_SKIP_NOT_IP);
    return by_ethertype(type, b + at, caplen - at, wire_len > at ? wire_len - (uint32_t)at : 0, p,
                        why);
}

/* A netfilter log record (DLT_NFLOG): a 4-byte header (family, version, group), then TLVs of a
 * 16-bit length (with the TLV's own 4 bytes) and type in the capturing host's byte order (little
 * endian on every machine qreplay runs on), each padded to 4 bytes. Type 9 holds the packet; type
 * 11 the link-layer header when the packet starts after it. A netdev hook's packet may start
 * with its Ethernet header. */
static int nflog(const uint8_t *buf, size_t caplen, qr_capture_packet *p, qr_skip *why)
{
    const uint8_t *pay = NULL, *hw = NULL;
    size_t pay_len = 0, hw_len = 0, at = 4;
    if (caplen < 4)
        return skip(why, QR_SKIP_BAD_LINK);
    while (at + 4 <= caplen) {
        size_t len = (size_t)buf[at] | (size_t)buf[at + 1] << 8;
        unsigned type = (unsigned)buf[at + 2] | (unsigned)buf[at + 3] << 8;
        if (len < 4)
            return skip(why, QR_SKIP_BAD_LINK);
        if (at + len > caplen) {
            if (type != 9)
                return skip(why, QR_SKIP_SNAPLEN);
            len = caplen - at; /* the packet, cut by the snap length */
        }
        if (type == 9) {
            pay = buf + at + 4;
            pay_len = len - 4;
        } else if (type == 11) {
            hw = buf + at + 4;
            hw_len = len - 4;
        }
        at += (len + 3) & ~(size_t)3;
    }
    if (!pay)
        return skip(why, QR_SKIP_BAD_LINK);
    if (pay_len >= 14 && pay[0] >> 4 != 4 && pay[0] >> 4 != 6 &&
        (get16(pay + 12) == ETH_IPV4 || get16(pay + 12) == ETH_IPV6)) {
        hw = pay;
        hw_len = 14;
        pay += 14;
        pay_len -= 14;
    }
    int rc = by_version(pay, pay_len, 0, p, why); /* its length on the wire: unknown */
    if (rc == 0 && hw && hw_len >= 12) {
        p->has_mac = 1;
        memcpy(p->mac_dst, hw, 6);
        memcpy(p->mac_src, hw + 6, 6);
    }
    return rc;
}

/* PPP (RFC 1661; ns-3's point-to-point devices write it): an optional address and control
 * field (ff 03), then the protocol, one byte where compressed (odd), else two: 0x0021 IPv4,
 * 0x0057 IPv6. */
static int ppp(const uint8_t *buf, size_t caplen, uint32_t wire_len, qr_capture_packet *p,
               qr_skip *why)
{
    size_t at = caplen >= 2 && buf[0] == 0xff && buf[1] == 0x03 ? 2 : 0;
    if (caplen < at + 1)
        return skip(why, wire_len > caplen ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
    unsigned proto = buf[at];
    size_t hdr = at + 1;
    if (!(proto & 1)) {
        if (caplen < at + 2)
            return skip(why, wire_len > caplen ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
        proto = get16(buf + at);
        hdr = at + 2;
    }
    uint32_t wire = wire_len > hdr ? wire_len - (uint32_t)hdr : 0;
    if (proto == 0x21)
        return ipv4(buf + hdr, caplen - hdr, wire, p, why);
    if (proto == 0x57)
        return ipv6(buf + hdr, caplen - hdr, wire, p, why);
    return skip(why, QR_SKIP_NOT_IP);
}

int qr_capture_decode(int dlt, const uint8_t *buf, size_t caplen, uint32_t wire_len,
                      qr_capture_packet *p, qr_skip *why)
{
    if (!buf || !p || !why || !qr_capture_link_supported(dlt))
        return QR_EINVAL;
    memset(p, 0, sizeof *p);
    size_t hdr;
    switch (dlt) {
    case DLT_EN10MB: {
        if (caplen < 14)
            return skip(why, wire_len >= 14 ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
        int rc = after_tags(buf, caplen, wire_len, 12, p, why);
        if (rc == 0 || rc == 1) {
            p->has_mac = 1;
            memcpy(p->mac_dst, buf, 6);
            memcpy(p->mac_src, buf + 6, 6);
        }
        return rc;
    }
    case DLT_NFLOG: return nflog(buf, caplen, p, why);
    case DLT_PPP:
    case DLT_PPP_SERIAL: return ppp(buf, caplen, wire_len, p, why);
    case DLT_LINUX_SLL:
        if (caplen < 16)
            return skip(why, wire_len >= 16 ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
        return after_tags(buf, caplen, wire_len, 14, p, why);
    case DLT_LINUX_SLL2: {
        if (caplen < 20)
            return skip(why, wire_len >= 20 ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
        unsigned type = get16(buf);
        if (type == 0x8100 || type == 0x88a8 || type == 0x9100)
            return skip(why, QR_SKIP_NOT_IP); /* SLL2 carries tags out of band; not expected */
        return by_ethertype(type, buf + 20, caplen - 20, wire_len > 20 ? wire_len - 20 : 0, p, why);
    }
    case DLT_NULL:
    case DLT_LOOP: {
        if (caplen < 4)
            return skip(why, wire_len >= 4 ? QR_SKIP_SNAPLEN : QR_SKIP_BAD_LINK);
        /* the address family, in the capturing host's byte order (NULL) or network order
         * (LOOP): 2 is AF_INET everywhere, 24, 28 and 30 are AF_INET6 on the BSDs and macOS */
        uint32_t be = get32(buf), le = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 |
                                       (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
        uint32_t fam = dlt == DLT_LOOP ? be : (be < 256 ? be : le);
        hdr = 4;
        if (fam == 2)
            return ipv4(buf + hdr, caplen - hdr, wire_len > 4 ? wire_len - 4 : 0, p, why);
        if (fam == 24 || fam == 28 || fam == 30)
            return ipv6(buf + hdr, caplen - hdr, wire_len > 4 ? wire_len - 4 : 0, p, why);
        return skip(why, QR_SKIP_NOT_IP);
    }
    default: /* RAW, IPV4, IPV6 */ return by_version(buf, caplen, wire_len, p, why);
    }
}

size_t qr_capture_segment(const qr_capture_packet *p, uint32_t mtu, uint64_t rate_bps,
                          uint32_t overhead, qr_capture_packet *out, size_t max)
{
    if (!p || rate_bps == 0)
        return 0;
    uint32_t headers = p->ip_len - p->payload;
    if (p->ip_len <= mtu) {
        if (max && out)
            out[0] = *p;
        return 1;
    }
    if (mtu <= headers)
        return 0;
    uint32_t mss = mtu - headers;
    size_t count = (p->payload + mss - 1) / mss;
    unsigned __int128 bytes = 0; /* on the wire before segment k */
    for (size_t k = 0; k < count && k < max && out; k++) {
        qr_capture_packet *o = &out[k];
        *o = *p;
        uint32_t off = (uint32_t)k * mss;
        o->payload = p->payload - off < mss ? p->payload - off : mss;
        o->ip_len = headers + o->payload;
        o->seq = p->seq + off;
        o->ip_id = p->family == 4 ? (uint16_t)(p->ip_id + k) : 0;
        o->time_ns = p->time_ns + (int64_t)(bytes * 8 * 1000000000u / rate_bps);
        if (k + 1 < count)
            o->tcp_flags &= (uint8_t) ~(QR_TCP_FIN | QR_TCP_PSH);
        if (k > 0)
            o->tcp_flags &= (uint8_t)~QR_TCP_CWR;
        bytes += (unsigned __int128)o->ip_len + overhead;
    }
    return count;
}

int qr_capture_open(qr_capture **out, const char *path, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "capture: NULL argument");
    *out = NULL;
    pcap_t *pc;
    int orc = qri_pcap_open(path, "capture", "pcap or pcapng", &pc, errbuf);
    if (orc)
        return orc;
    int dlt = pcap_datalink(pc);
    const char *name = pcap_datalink_val_to_name(dlt);
    if (!qr_capture_link_supported(dlt)) {
        int rc = qri_err(errbuf, QR_EFORMAT,
                         "%s: link type %s (%d) is not one qreplay reads (it reads EN10MB "
                         "Ethernet with VLAN tags, RAW, IPV4, IPV6, LINUX_SLL, LINUX_SLL2, NULL, "
                         "LOOP, PPP, NFLOG)",
                         path, name ? name : "?", dlt);
        pcap_close(pc);
        return rc;
    }
    qr_capture *c = calloc(1, sizeof *c);
    if (!c) {
        pcap_close(pc);
        return QR_ENOMEM;
    }
    c->pcap = pc;
    c->dlt = dlt;
    c->offset = qri_pcap_first_offset(pc);
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->link, sizeof c->link, "%s", name ? name : "?");
    *out = c;
    return QR_OK;
}

static uint64_t ends_hash(const uint8_t *a, uint16_t ap, const uint8_t *b, uint16_t bp)
{
    uint64_t h = 0x84222325cbf29ce4ull;
    for (int i = 0; i < 16; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        h = qri_mix64(h ^ x);
        h = qri_mix64(h ^ y);
    }
    return qri_mix64(h ^ ((uint64_t)ap << 16 | bp));
}

/* Whether p is a copy of one of the last c->dedup kept packets (qr_capture_dedup's rule);
 * remember it if not. */
static int seen_recently(qr_capture *c, const qr_capture_packet *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
#define MIX(v) (h = qri_mix64(h ^ (uint64_t)(v)))
    for (int i = 0; i < 16; i += 8) {
        uint64_t a, b;
        memcpy(&a, p->src + i, 8);
        memcpy(&b, p->dst + i, 8);
        MIX(a);
        MIX(b);
    }
    MIX((uint64_t)p->src_port << 48 | (uint64_t)p->dst_port << 32 | p->family);
    MIX((uint64_t)p->seq << 32 | p->ack);
    MIX((uint64_t)p->tcp_flags << 56 | (uint64_t)p->window << 40 | (uint64_t)p->ip_id << 24 |
        (uint64_t)p->tos << 16 | (uint64_t)p->ttl << 8 | p->tcp_opt_len);
    MIX((uint64_t)p->ip_len << 32 | p->payload);
    MIX(p->vlan);
    for (unsigned i = 0; i < p->tcp_opt_len; i += 8) {
        uint64_t o = 0;
        memcpy(&o, p->tcp_opts + i, p->tcp_opt_len - i < 8 ? p->tcp_opt_len - i : 8);
        MIX(o);
    }
#undef MIX
    uint64_t ends = ends_hash(p->src, p->src_port, p->dst, p->dst_port);
    uint64_t back = ends_hash(p->dst, p->dst_port, p->src, p->src_port);
    /* an IPv4 ID tells two sendings apart, except 0 (stacks that set DF may send 0 always) */
    int proves = p->family == 4 && p->ip_id != 0;
    unsigned first = c->next_recent + c->dedup - c->n_recent;
    for (unsigned k = 0; k < c->n_recent; k++) {
        const struct recent *r = &c->recent[(first + k) % c->dedup];
        if (r->headers != h)
            continue;
        int copy = proves || p->time_ns - r->time_ns < QR_CAPTURE_DEDUP_SAME_NS;
        for (unsigned j = k + 1; copy && j < c->n_recent; j++)
            if (c->recent[(first + j) % c->dedup].ends == back)
                copy = proves; /* an answer to something the other end sent in between */
        if (copy)
            return 1;
    }
    c->recent[c->next_recent] = (struct recent){h, ends, p->time_ns};
    c->next_recent = (c->next_recent + 1) % c->dedup;
    if (c->n_recent < c->dedup)
        c->n_recent++;
    return 0;
}

int qr_capture_next(qr_capture *c, qr_capture_packet *p, char *errbuf)
{
    if (!c || !p)
        return qri_err(errbuf, QR_EINVAL, "capture: NULL argument");
    while (!c->ended) {
        struct pcap_pkthdr *h;
        const u_char *data;
        int64_t t;
        int rc = qri_pcap_next(c->pcap, c->path, c->stats.frames, &c->offset, &h, &data, &t,
                               c->warning, sizeof c->warning, errbuf);
        if (rc == QR_END)
            c->ended = 1;
        if (rc != QR_OK)
            return rc;
        c->stats.frames++;
        qr_skip why;
        rc = qr_capture_decode(c->dlt, data, h->caplen, h->len, p, &why);
        if (rc == 1) {
            c->stats.skipped[why]++;
            if (c->on_skip) {
                p->time_ns = t;
                p->frame = c->stats.frames;
                c->on_skip(c->on_skip_ctx, p, why);
            }
            continue;
        }
        if (rc != QR_OK)
            return qri_err(errbuf, rc, "%s: frame %" PRIu64 ": cannot decode", c->path,
                           c->stats.frames);
        p->time_ns = t;
        p->frame = c->stats.frames;
        if (c->dedup && seen_recently(c, p)) {
            c->stats.skipped[QR_SKIP_DUPLICATE]++;
            if (c->on_skip)
                c->on_skip(c->on_skip_ctx, p, QR_SKIP_DUPLICATE);
            continue;
        }
        c->stats.kept++;
        return QR_OK;
    }
    return QR_END;
}

void qr_capture_dedup(qr_capture *c, unsigned window)
{
    if (c)
        c->dedup = window > QR_CAPTURE_DEDUP_MAX ? QR_CAPTURE_DEDUP_MAX : window;
}

void qr_capture_on_skip(qr_capture *c, qr_capture_skip_fn fn, void *ctx)
{
    if (c) {
        c->on_skip = fn;
        c->on_skip_ctx = ctx;
    }
}

const char *qr_capture_link(const qr_capture *c)
{
    return c ? c->link : "";
}

void qr_capture_stats_get(const qr_capture *c, qr_capture_stats *out)
{
    if (c && out)
        *out = c->stats;
}

const char *qr_capture_warning(const qr_capture *c)
{
    return c ? c->warning : "";
}

void qr_capture_close(qr_capture *c)
{
    if (!c)
        return;
    pcap_close(c->pcap);
    free(c);
}

char *qr_addr_text(const uint8_t addr[16], char *buf, size_t size)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char tmp[INET6_ADDRSTRLEN];
    if (!memcmp(addr, prefix, 12))
        inet_ntop(AF_INET, addr + 12, tmp, sizeof tmp);
    else
        inet_ntop(AF_INET6, addr, tmp, sizeof tmp);
    snprintf(buf, size, "%s", tmp);
    return buf;
}
