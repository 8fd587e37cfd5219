#!/bin/bash
# Make the real kernel captures in this folder (run as root on Debian 12 with iproute2, tcpdump,
# python3, wireshark-common's editcap and tcpreplay's tcprewrite; nothing leaves the two
# namespaces this script creates).
#
# Two network namespaces joined by a veth pair, 10.77.0.1 <-> 10.77.0.2 and fd77::1 <-> fd77::2.
# In each run a real Linux TCP client sends BYTES to a real Linux TCP server (python3 sockets)
# while tcpdump captures; the veth keeps TSO/GSO on, so the sender's side shows super-segments as
# a host's tcpdump does. VLAN tags are added to a real capture with tcprewrite (802.1Q id 100;
# QinQ: 802.1Q 300 inside 802.1ad 200), because the kernel these were made on has no 802.1Q
# support (CONFIG_VLAN_8021Q unset). Usage: make_captures.sh [OUTDIR] (default: this folder).
set -euo pipefail
out=$(cd "${1:-$(dirname "$0")}" && pwd)
a=qrcapA$$ b=qrcapB$$
cleanup() {
    ip netns del "$a" 2>/dev/null || true
    ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
ip netns add "$a"
ip netns add "$b"
ip link add va netns "$a" type veth peer name vb netns "$b"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" addr add 10.77.0.1/24 dev va
ip -n "$b" addr add 10.77.0.2/24 dev vb
ip -n "$a" addr add fd77::1/64 dev va nodad
ip -n "$b" addr add fd77::2/64 dev vb nodad
ip -n "$a" link set va up
ip -n "$b" link set vb up

server='import socket,sys
fam=socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s=socket.socket(fam); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)
s.bind((sys.argv[1],5001)); s.listen(1); c,_=s.accept(); n=0
while True:
    d=c.recv(65536)
    if not d: break
    n+=len(d)
c.close()'
client='import socket,sys,time
fam=socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
for i in range(50):
    try:
        s=socket.create_connection((sys.argv[1],5001)); break
    except OSError: time.sleep(0.05)
s.sendall(b"q"*int(sys.argv[2])); s.shutdown(socket.SHUT_WR); s.recv(1); s.close()'

# wait until the tcpdump writing its messages to LOG listens (at most 10 s)
. "$(dirname "$0")/capture_lib.sh"

# capture NAME NS IFACE SERVER_ADDR BYTES [TCPDUMP OPTIONS]: one transfer from A to B, captured
# in NS on IFACE; ping once first so ARP/NDP frames are in the capture too
capture() {
    local name=$1 ns=$2 ifc=$3 addr=$4 bytes=$5
    shift 5
    rm -f "$out/.log"
    ip netns exec "$ns" tcpdump -i "$ifc" --immediate-mode -U -w "$out/$name" "$@" >/dev/null 2>"$out/.log" &
    local dump=$!
    listening "$out/.log"
    ip netns exec "$b" python3 -c "$server" "$addr" &
    local srv=$!
    sleep 0.3
    ip netns exec "$a" ping -c 1 -W 1 "$addr" >/dev/null 2>&1 || true
    ip netns exec "$a" python3 -c "$client" "$addr" "$bytes"
    wait "$srv"
    sleep 0.5
    kill -INT "$dump"
    wait "$dump" || true
}

# Ethernet, nanosecond pcap, sender's side (TSO super-segments), headers only
capture eth-ipv4-sender-ns.pcap "$a" va 10.77.0.2 300000 --time-stamp-precision=nano -s 128
# Ethernet, receiver's side of the same kind of transfer (GRO-merged segments)
capture eth-ipv4-receiver-ns.pcap "$b" vb 10.77.0.2 300000 --time-stamp-precision=nano -s 128
# IPv6 over Ethernet
capture eth-ipv6-sender-ns.pcap "$a" va fd77::2 100000 --time-stamp-precision=nano -s 128
# a small transfer, to tag
capture eth-small-ns.pcap "$a" va 10.77.0.2 30000 --time-stamp-precision=nano -s 128
# Linux cooked v2 (tcpdump -i any) and v1 (-y LINUX_SLL)
capture any-sll2.pcap "$a" any 10.77.0.2 60000 --time-stamp-precision=nano -s 128
capture any-sll.pcap "$a" any 10.77.0.2 60000 -y LINUX_SLL -s 128

# Both ends of the same two connections (50 kB and 20 kB, A to B), captured at the same time in
# A and in B: what an operator who captures every host has
rm -f "$out/.log"
ip netns exec "$a" tcpdump -i va --immediate-mode -U -w "$out/pair-a.pcap" --time-stamp-precision=nano -s 128 >/dev/null 2>"$out/.log" &
dump_a=$!
listening "$out/.log"
rm -f "$out/.log"
ip netns exec "$b" tcpdump -i vb --immediate-mode -U -w "$out/pair-b.pcap" --time-stamp-precision=nano -s 128 >/dev/null 2>"$out/.log" &
dump_b=$!
listening "$out/.log"
for n in 50000 20000; do
    ip netns exec "$b" python3 -c "$server" 10.77.0.2 &
    srv=$!
    sleep 0.3
    ip netns exec "$a" python3 -c "$client" 10.77.0.2 "$n"
    wait "$srv"
done
sleep 0.5
kill -INT "$dump_a" "$dump_b"
wait "$dump_a" "$dump_b" || true

# Format variants of the first capture (Debian's editcap): microsecond pcap, pcapng
editcap -F pcap "$out/eth-ipv4-sender-ns.pcap" "$out/eth-ipv4-sender-us.pcap"
editcap -F pcapng "$out/eth-ipv4-sender-ns.pcap" "$out/eth-ipv4-sender.pcapng"
# Big-endian (swapped) pcap: editcap writes the host's byte order, so swap with python3's struct
python3 - "$out/eth-ipv4-sender-us.pcap" "$out/eth-ipv4-sender-us-be.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
magic, vmaj, vmin, tz, sig, snap, lt = struct.unpack("<IHHiIII", d[:24])
o = bytearray(struct.pack(">IHHiIII", magic, vmaj, vmin, tz, sig, snap, lt))
i = 24
while i + 16 <= len(d):
    s, us, cap, ln = struct.unpack("<IIII", d[i:i + 16])
    o += struct.pack(">IIII", s, us, cap, ln) + d[i + 16:i + 16 + cap]
    i += 16 + cap
open(sys.argv[2], "wb").write(bytes(o))
PY
# 802.1Q (id 100) and QinQ (802.1ad 200 outside, 802.1Q 300 inside) of the small transfer
tcprewrite --enet-vlan=add --enet-vlan-tag=100 --enet-vlan-cfi=0 --enet-vlan-pri=0 \
    -i "$out/eth-small-ns.pcap" -o "$out/eth-vlan.pcap"
tcprewrite --enet-vlan=add --enet-vlan-tag=300 --enet-vlan-cfi=0 --enet-vlan-pri=0 \
    -i "$out/eth-small-ns.pcap" -o "$out/qinq-inner.tmp"
tcprewrite --enet-vlan=add --enet-vlan-tag=200 --enet-vlan-cfi=0 --enet-vlan-pri=0 \
    --enet-vlan-proto=802.1ad -i "$out/qinq-inner.tmp" -o "$out/eth-qinq.pcap"
rm -f "$out/qinq-inner.tmp" "$out/eth-small-ns.pcap"
# A capture cut in its last record, as when tcpdump is killed mid-write
size=$(stat -c %s "$out/eth-ipv4-sender-ns.pcap")
head -c $((size - 30)) "$out/eth-ipv4-sender-ns.pcap" > "$out/eth-ipv4-cut-ns.pcap"
rm -f "$out/.log"
ls -l "$out"/*.pcap "$out"/*.pcapng
