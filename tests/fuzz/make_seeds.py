#!/usr/bin/python3
"""Seed corpora of the fuzz targets: SOURCE_DIR OUT_DIR. Scenario files and data shipped with the
project, plus small generated pcaps (raw IPv4 + TCP, nanosecond timestamps, several flows) and an
arrival log, written the way docs/FORMATS.md describes them. Deterministic."""
import glob
import os
import struct
import sys

src, out = sys.argv[1], sys.argv[2]


def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


for p in sorted(glob.glob(os.path.join(src, "scenarios", "*.ini"))):
    put("scenario", os.path.basename(p), open(p, "rb").read())
put("text", "websearch.cdf", b"\x00" + open(os.path.join(src, "data", "websearch.cdf"), "rb").read())
for p in sorted(glob.glob(os.path.join(src, "data", "flows", "*.csv"))):
    put("text", os.path.basename(p), b"\x01" + open(p, "rb").read())
for i, s in enumerate([b"5us", b"1.5ms", b"0", b"2MB", b"393KB", b"2MiB", b"10Gbps", b"30%",
                       b"2400/s", b"2us,5us,10us", b"0,1ns,10ns", b"1,2,3", b"7500B", b"5MTU"]):
    put("units", "u%02d" % i, s)


def ip_tcp(src_ip, dst_ip, sport, dport, ip_id, ip_len, seq, flags=0x10):
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, ip_len, ip_id, 0x4000, 64, 6, 0,
                     struct.pack(">I", src_ip), struct.pack(">I", dst_ip))
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, 1, 5 << 4, flags, 65535, 0, 0)
    return ip + tcp


def pcap(packets):
    """packets: (time_ns, bytes, wire_len)"""
    b = struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 101)  # nanosecond, LINKTYPE_RAW
    for t, data, wire in packets:
        b += struct.pack("<IIII", t // 1000000000, t % 1000000000, len(data), wire) + data
    return b


pk = []
t = 1700000000 * 10**9
for i in range(60):
    flow = i % 3
    t += 1200 + 300 * (i % 4)
    pk.append((t, ip_tcp(0x0a000002, 0x0a000102 + flow, 10000 + flow, 5001, i // 3, 1500,
                         1 + 1448 * (i // 3)), 1500))
trace = pcap(pk)
put("pcap", "three-flows", b"\x32" + trace)
put("pcap", "exact", b"\x00" + trace)
put("recording", "empty", pcap([]))
put("recording", "three-flows", trace)

# an arrival log (queuelog.h): magic, records, trailer (count and recording id)
arr = b"QRARRV2\n"
for i in range(8):
    flows = [(1, 1500 * i), (3, 1500)] if i else []
    arr += struct.pack("<QqIIIBBHQQq", i, 1000 * i, 0, i % 2, 1500, 0, 0, len(flows),
                       1500 * i, 3000 * i, 2000000 - 3000 * i)
    for f, n in flows:
        arr += struct.pack("<QQ", f, n)
put("arrivals", "eight", arr + b"QRAEND2\n" + struct.pack("<Q", 8) + b"0123456789abcdef" * 2)
put("arrivals", "cut", arr)


# the same arrivals in the third format (docs/FORMATS.md), encoded here from the documented layout
def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7
    return out + bytes([v])


def zz(d):
    d &= (1 << 64) - 1
    return ((d << 1) ^ (0xffffffffffffffff if d >> 63 else 0)) & ((1 << 64) - 1)


pay, prev_t, seqs, sizes, queues, sws = b"", 0, {}, {}, {}, {}
for i in range(8):
    flows = [(1, 1500 * i), (3, 1500)] if i else []
    d, seq, sw, port, size, t = 0, i, 0, i % 2, 1500, 1000 * i
    total, thr, qb = 3000 * i, 2000000 - 3000 * i, 1500 * i
    old_q = dict(queues.get((sw, port), []))
    pt, pthr = sws.get(sw, (0, 0))
    flags = 0
    flags |= 0x10 if sizes.get(d, 0) == size else 0
    flags |= 0x20 if qb == sum(b for _, b in flows) else 0
    dt, dthr = (total - pt), (thr - pthr)
    flags |= 0x40 if (dthr + dt) % (1 << 64) == 0 else 0
    flags |= 0x80 if old_q == dict(flows) else 0
    r = bytes([flags]) + varint(zz(t - prev_t)) + varint(d) + varint(zz(seq - seqs.get(d, 0)))
    r += varint(sw) + varint(port)
    if not flags & 0x10:
        r += varint(size)
    r += varint(zz(dt))
    if not flags & 0x40:
        r += varint(zz(dthr))
    if not flags & 0x80:
        new_q = dict(flows)
        ch = sorted(f for f in set(old_q) | set(new_q) if old_q.get(f) != new_q.get(f))
        r += varint(len(ch))
        for k, f in enumerate(ch):
            r += varint(f if k == 0 else f - ch[k - 1] - 1)
            r += varint(new_q[f] + 1 if f in new_q else 0)
    if not flags & 0x20:
        r += varint(zz(qb - sum(b for _, b in flows)))
    pay += r
    prev_t, seqs[d], sizes[d], queues[(sw, port)], sws[sw] = t, seq, size, flows, (total, thr)
fnv = 2166136261
for c in pay:
    fnv = ((fnv ^ c) * 16777619) & 0xffffffff
arr3 = b"QRARRV3\n" + struct.pack("<III", len(pay), 8, fnv) + pay
put("arrivals", "eight-v3", arr3 + b"QRAEND3\n" + struct.pack("<Q", 8) + b"0123456789abcdef" * 2)

# real kernel captures (tests/data/captures, every format and link type) for the capture reader
for p in sorted(glob.glob(os.path.join(src, "tests", "data", "captures", "*.pcap*"))):
    put("capture", os.path.basename(p), open(p, "rb").read())

# both ends of real connections for the whole import: 2 bytes of the first capture's length, the
# first capture (10.77.0.1's), the second (10.77.0.2's); and the sender's side alone
cap = os.path.join(src, "tests", "data", "captures")
pa = open(os.path.join(cap, "pair-a.pcap"), "rb").read()
pb = open(os.path.join(cap, "pair-b.pcap"), "rb").read()
if len(pa) < 65536:
    put("import", "pair", struct.pack(">H", len(pa)) + pa + pb)
    put("import", "sender-only", struct.pack(">H", len(pa)) + pa)
# real HTTP keep-alive sessions (make_app_captures.sh), their addresses moved to the target's
# (10.78.1.1 -> 10.77.0.1, 10.78.2.1 -> 10.77.0.2; IP checksums are not read)
for name in ("http-keepalive", "http-lossy"):
    parts = []
    for side in ("client", "server"):
        b = open(os.path.join(cap, "%s-%s.pcap" % (name, side)), "rb").read()
        parts.append(b.replace(bytes([10, 78, 1, 1]), bytes([10, 77, 0, 1]))
                      .replace(bytes([10, 78, 2, 1]), bytes([10, 77, 0, 2])))
    if len(parts[0]) < 65536:
        put("import", name, struct.pack(">H", len(parts[0])) + parts[0] + parts[1])
        put("import", name + "-client", struct.pack(">H", len(parts[0])) + parts[0])

# fuzz_inputs: byte 0 picks the reader (0 host map, 1 match expression, 2 whatif --vary lines,
# 3 agent report with byte 1 = flows - 1, 4 a mirror of guided probes, 5 of round-trip probes)
for i, m in enumerate([b"address,host,capture\n10.0.0.2,0,a.pcap\n10.0.0.6,1,b.pcap\n",
                       b"# a comment\n10.0.0.2,0\n\n::ffff:10.0.0.10,2\nfe80::1,1,b.pcap\n",
                       b"address,host\n10.0.0.2,0\n10.0.0.2,1\n"]):
    put("inputs", "map%d" % i, b"\x00" + m)
for i, e in enumerate([b"flow 0", b"flow 0-1 and not retransmit", b"(src h0 || dst 10.0.0.6) && syn",
                       b"dir 1 or packet 0:3", b"via 0:1 and queued 1us", b"drop threshold or tagged",
                       b"after 2ms and before 3ms and payload", b"sport 10000 and dport 5001",
                       b"via h0>s0", b"detected or dropped or not ack"]):
    put("inputs", "match%d" % i, b"\x01" + e)
for i, v in enumerate([b"buffer.alpha=0.5,1,2", b"buffer.size=1MB,2MB\nbuffer.alpha=1,4",
                       b"links.rate=1Gbps,10Gbps", b"buffer.policy=static,dt"]):
    put("inputs", "vary%d" % i, b"\x02" + v)
for i, a in enumerate([b"\x03sent 0 100 200 1448 0", b"\x03recv 1 150 260 1448",
                       b"\x00fail 0 connect: Connection refused", b"\x07sent 5 -1 -1 0 2"]):
    put("inputs", "agent%d" % i, b"\x03" + a)
GUIDED_HEAD = b"src,dst,sport,seq,switch,port,dir,time_ns\n"
for i, g in enumerate([b"10.0.0.2,10.1.0.2,40001,0,s0,0,in,10\n10.0.0.2,10.1.0.2,40001,0,s0,2,out,20\n"
                       b"10.0.0.2,10.1.0.2,40001,0,s8,0,in,30\n",
                       b"10.0.0.2,10.1.0.2,40001,1,s0,0,in,5\n10.0.0.2,10.1.0.2,40002,0,s0,3,out,6\n",
                       b"10.0.0.2,10.1.0.2,40001,0,s99,0,in,1\n"]):
    put("inputs", "guided%d" % i, b"\x04" + GUIDED_HEAD + g)
# 5 a mirror of link round-trip probes: s0's port 2 to s8 (11.0.0.1), back; lost; a stranger
for i, g in enumerate([b"11.0.0.1,11.0.0.1,8766,0,s0,2,out,10\n11.0.0.1,11.0.0.1,8766,0,s8,0,in,20\n"
                       b"11.0.0.1,11.0.0.1,8766,0,s8,0,out,30\n11.0.0.1,11.0.0.1,8766,0,s0,2,in,40\n",
                       b"11.0.0.1,11.0.0.1,8766,1,s0,2,out,10\n11.0.0.1,11.0.0.1,8766,0,s8,0,in,20\n",
                       b"10.0.0.2,10.0.0.2,8766,0,s0,2,out,10\n"]):
    put("inputs", "bounce%d" % i, b"\x05" + GUIDED_HEAD + g)


# light records (fuzz_light's framing: mode, flows, then blocks of part, threshold, length, raw)
def light_block(part, th, raw):
    return bytes([part, th]) + struct.pack("<H", len(raw)) + raw


def uv(*vs):
    return b"".join(varint(v) for v in vs)


LIGHT = [
    (1, 0, uv(0, 1, zz(1000), 0, 2, 3, zz(500), 0)),                   # config
    (2, 0, uv(1, 3000, 1, 1, 0, zz(0), 1, 0, zz(0))),                  # calls
    (3, 0, uv(3, 3, 1, 1, 1, 1, 0, 3, 2, 0, 0, 0, 3, 3, 0, 0, 1, 2, 3, 2, 0, 0, 0)),  # loss
    (5, 0, uv(1, 0, zz(10), zz(1200), 1, 1, 0, zz(5000), zz(100), 1,
              1, 0, zz(3), zz(1200), 1, 1, 0, zz(4000), zz(0), 1)),       # samples
    (6, 0, uv(zz(3000), zz(2400), zz(6000), zz(50), zz(100), zz(1200), zz(1200), zz(4500),
              zz(10))),                                                   # received
    (7, 0, uv(0, 0, 0, 0)),                                               # order
    (0xff, 0, uv(2, 10) + b"0123456789abcdef0123456789abcdef"),           # end
]
put("light", "two-flows", b"\x00\x02" + b"".join(light_block(*b) for b in LIGHT))
put("light", "no-end", b"\x00\x02" + b"".join(light_block(*b) for b in LIGHT[:-1]))
put("light", "raw", b"\x01QRLIGHT1" + bytes(16))
# version 2: every direction's receive times left out (kept = 0 each)
LIGHT_V2 = [b if b[0] != 6 else (6, 0, uv(0, 0, 0, 0)) for b in LIGHT]
put("light", "two-flows-v2", b"\x80\x02" + b"".join(light_block(*b) for b in LIGHT_V2))

# kernel records (fuzz_krec's framing: mode, then blocks of part, threshold, length, raw): one
# connection seen from its SYN, a resend, a hole, a CE mark, a zero window, closed
KREC = [
    (1, 0, uv(0, 0, zz(100)) + bytes([4, 10, 0, 0, 1]) + uv(40000) + bytes([10, 0, 0, 2]) +
     uv(5001) + uv(0, 2, zz(5000))),                                       # conns
    (3, 0, uv(0, 1, 60, 60 << 3 | 2, 1, 999) + uv(0, 10, 1500, 52 << 3, 0)),  # sent
    (4, 0, uv(0, 0, zz(100), zz(1200), 1)),                                # samples
    (2, 0, uv(0, 0, zz(200), 14480)),                                      # calls
    (5, 0, uv(0, 2448, 2, zz(300))),                                       # resent
    (6, 0, uv(0, 0, zz(400), 7000, 1448) + uv(0, 1, zz(10)) + uv(0, 2, zz(10))),  # arrived
    (0xff, 0, uv(20, 0, 1, 1, 11, 1, 0, 2, 14480)),                        # end
]
put("krec", "one-conn", b"\x00" + b"".join(light_block(*b) for b in KREC))
put("krec", "no-end", b"\x00" + b"".join(light_block(*b) for b in KREC[:-1]))
put("krec", "raw", b"\x01QRLIGHTK" + bytes(16))

# qreplay paths: the shipped multi-tier specs and a small message trace
for p in sorted(glob.glob(os.path.join(src, "scenarios", "tiers", "*.tiers"))):
    put("paths", os.path.basename(p), b"\x00" + open(p, "rb").read())
put("paths", "trace.csv", b"\x01# qreplay messages 1\nsrc,dst,conn,send_ns,recv_ns,bytes\n"
    b"0,3,0,1000,12000,200\n3,4,1,20000,31000,200\n4,3,1,90000,101000,1000\n"
    b"3,0,0,110000,121000,1000\n1,3,2,-,130000,200\n3,5,3,140000,-,200\n")
put("paths", "truth.csv", b"\x02# qreplay tiers-truth 1\n# spec: tier a hosts=3 calls=b; tier b hosts=4; "
    b"clients hosts=0 rate=10/s; fault slow-node 4 x3\n"
    b"conn,index,id,parent,src,dst,true_send_ns,true_recv_ns\n0,0,0,-,0,3,1000,12000\n"
    b"1,0,1,0,3,4,20000,31000\n1,0,2,1,4,3,90000,101000\n0,0,3,2,3,0,110000,-\n"
    b"10.0.0.1:40000-10.0.0.4:80,1,4,-,0,3,-,-\n")
