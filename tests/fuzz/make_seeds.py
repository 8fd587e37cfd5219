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
