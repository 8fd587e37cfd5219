#!/bin/bash
# Make the real-application captures in this folder (run as root on Debian 12 with iproute2,
# tcpdump, nftables, ethtool and python3 (/usr/bin/python3); nothing leaves the three namespaces this script creates).
#
# A client namespace (10.78.1.1) and a server namespace (10.78.2.1) joined through a router
# namespace by two veth pairs; real Linux TCP at both ends, TSO/GSO as the kernel sets them. The
# programs are the testbed's (testbed/apps.py). The
# server is Python's own HTTP/1.1 server (http.server, keep-alive), the client Python's
# http.client on one persistent connection: GET /5000, 200 ms of think time, GET /300000, 100 ms,
# GET /20000, then close. Both ends are captured (tcpdump, nanosecond stamps, 128-byte snap
# length). The server sends MTU-sized packets (TSO and GSO off); the client's side keeps the
# kernel's defaults (GRO-merged arrivals in its capture). In the lossy run the router drops, with nftables on its ingress from the server, the
# 30th and 60th data packet the server sends in it (numgen inc: the same packets every run), so
# both captures show what was lost on the way. Usage: make_app_captures.sh [OUTDIR [NAME...]]
# (default: every capture below, into this folder).
#
#   http-keepalive-client.pcap, http-keepalive-server.pcap    no loss
#   http-lossy-client.pcap, http-lossy-server.pcap            two server packets dropped
#   http-tail-*.pcap      the same session; the router drops the last packet of the last response
#                         once (its IP length, 1228, is unique to it): Linux's tail-loss probe
#                         resends it
#   http-rto-*.pcap       ... dropped twice (the original and the probe): the retransmission
#                         timer (200 ms) resends it
#   rpc-think-*.pcap      a request/response protocol on one connection (Python sockets): five
#                         rounds of a 200-byte request, a 3000-byte reply and 50 ms of think time
#   bulk-both-*.pcap      two-way bulk: each side sends 400000 bytes at once, then shuts down its
#                         sending side and reads to the end
set -euo pipefail
out=$(cd "${1:-$(dirname "$0")}" && pwd)
shift || true
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(http-keepalive http-lossy http-tail http-rto rpc-think bulk-both)
c=qrappC$$ r=qrappR$$ s=qrappS$$
cleanup() {
    for ns in "$c" "$r" "$s"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM
for ns in "$c" "$r" "$s"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
done
ip link add vc netns "$c" type veth peer name rc netns "$r"
ip link add vs netns "$s" type veth peer name rs netns "$r"
ip -n "$c" addr add 10.78.1.1/24 dev vc
ip -n "$r" addr add 10.78.1.254/24 dev rc
ip -n "$s" addr add 10.78.2.1/24 dev vs
ip -n "$r" addr add 10.78.2.254/24 dev rs
for x in "$c:vc" "$r:rc" "$r:rs" "$s:vs"; do ip -n "${x%%:*}" link set "${x##*:}" up; done
ip -n "$c" route add default via 10.78.1.254
ip -n "$s" route add default via 10.78.2.254
ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
# the server sends MTU-sized packets (no TSO/GSO) and the router forwards them one by one (no
# GRO), so the router's rule counts the packets on the wire; the client keeps the kernel's defaults
ip netns exec "$s" ethtool -K vs tso off gso off >/dev/null
ip netns exec "$r" ethtool -K rs gro off >/dev/null

# the applications are the testbed's (testbed/apps.py: the same programs made these captures)
apps="$(cd "$(dirname "$0")/../../.." && pwd)/testbed/apps.py"
. "$(dirname "$0")/capture_lib.sh"

# run NAME [APP]: one session of APP (default: the HTTP keep-alive one), captured at the client
# and at the server
run() {
    local name=$1 app=${2:-http-keepalive}
    rm -f "$out/.logc" "$out/.logs"
    ip netns exec "$c" tcpdump -i vc --immediate-mode -U -s 128 --time-stamp-precision=nano \
        -w "$out/$name-client.pcap" tcp >/dev/null 2>"$out/.logc" &
    local dc=$!
    ip netns exec "$s" tcpdump -i vs --immediate-mode -U -s 128 --time-stamp-precision=nano \
        -w "$out/$name-server.pcap" tcp >/dev/null 2>"$out/.logs" &
    local ds=$!
    listening "$out/.logc"
    listening "$out/.logs"
    ip netns exec "$s" timeout 30 /usr/bin/python3 "$apps" server "$app" 10.78.2.1 8080 >/dev/null &
    local srv=$!
    sleep 0.3
    ip netns exec "$c" timeout 30 /usr/bin/python3 "$apps" client "$app" 10.78.2.1 8080 >/dev/null
    wait "$srv"
    sleep 1 # tcpdump writes what it has before it stops
    kill -INT "$dc" "$ds"
    wait "$dc" "$ds" || true
    rm -f "$out/.logc" "$out/.logs"
}

# router rules: drop the server's packets chosen by RULE (nftables netdev ingress), or none
rules() {
    ip netns exec "$r" nft delete table netdev qrapp 2>/dev/null || true
    [ -n "$1" ] || return 0
    ip netns exec "$r" nft -f - <<NFT
table netdev qrapp {
    chain in {
        type filter hook ingress device rs priority 0;
        ip saddr 10.78.2.1 tcp sport 8080 $1
    }
}
NFT
}

for name in "${want[@]}"; do
    case $name in
    http-keepalive) rules "" && run http-keepalive ;;
    # the server's 30th and 60th data packet of the session (payload > 0)
    http-lossy) rules 'ip length > 52 numgen inc mod 1000 vmap { 29 : drop, 59 : drop, * : continue }' && run http-lossy ;;
    # the last packet of GET /20000 (1176 bytes of payload: IP length 1228), once or twice
    http-tail) rules 'ip length 1228 quota until 1228 bytes drop' && run http-tail ;;
    http-rto) rules 'ip length 1228 quota until 2456 bytes drop' && run http-rto ;;
    rpc-think) rules "" && run rpc-think rpc-think ;;
    bulk-both) rules "" && run bulk-both bulk-both ;;
    *) echo "make_app_captures.sh: no capture named $name" >&2; exit 2 ;;
    esac
done
