#!/usr/bin/python3
"""A real multi-tier service for qreplay's testbed (qreplay tiers --testbed; core/config tiers.h).

    tiers.py PLAN HOST LOG
    tiers.py delay DEV DELAY_NS       (in the switch's namespace: a planted slow link)

PLAN is the service as qreplay resolved it (JSON: tiers with their hosts, workers, service
times, sizes and stages of calls, the clients and their rate, the planted slow hosts, every
host's address); HOST is this process's host. A host of a tier serves it: it listens on the plan's
port and prints "ready"; each request takes one of its workers (a thread; requests wait, first
come first served, while all are busy), which computes (sleeps an exponential time of mean service
/ (stages + 1), times the host's slowness), makes the calls of its first stage in parallel (each
with its probability, to a host of the callee tier picked at random, over a free connection of
its pool to that host or a new one: persistent connections, one call at a time each), waits for
every reply, computes, makes the next stage's calls, ..., computes once more and replies. A
client prints "ready", waits for "go" on its standard input, sends requests to the first tier at
Poisson times for the plan's duration, waits for every reply, prints "done N" and exits. A server
stops when its standard input says "stop" (or closes), then prints "done N".

Every message carries its id, its parent's id and its length in its first 24 bytes (the rest is
padding to the tier's request or reply size). The truth goes to LOG, one line per event, the
times CLOCK_REALTIME in ns (what the captures' clocks read):
    S,ENDS,INDEX,ID,PARENT,SRC,DST,T    a message sent: ENDS the connection's "A:P-B:Q", INDEX its
                                        place among this socket's sends, PARENT "-" for a request
                                        of a client
    R,ID,T                              a message read whole
No analysis reads it (qreplay paths --truth scores with it). Every wait is bounded.

A planted slow link is a delay line on the switch: the switch routes the packets between the
link's two hosts into the TUN device DEV, and `delay` gives each back to the kernel DELAY_NS after
it came out (in order), from where it goes on to its host. It prints "ready" once attached and
stops at "stop" on its standard input; then "done PACKETS"."""
import json
import os
import queue
import random
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct("!QQQ")  # id, parent + 1 (0: none), total length
TIMEOUT = 10


class Log:
    def __init__(self, path):
        self.f = open(path, "w")
        self.lock = threading.Lock()

    def line(self, s):
        with self.lock:
            self.f.write(s + "\n")

    def close(self):
        with self.lock:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()


class Ids:
    """Ids unique over the service: the host in the top 24 bits."""

    def __init__(self, host):
        self.next = host << 40
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            self.next += 1
            return self.next - 1


class Conn:
    """One TCP connection: its sends counted (the truth's place), its messages read whole by a
    reader thread and handed to on_message(conn, id, parent, t)."""

    def __init__(self, sock, host, peer, log, on_message):
        self.sock, self.host, self.peer, self.log = sock, host, peer, log
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        la, lp = sock.getsockname()[:2]
        ra, rp = sock.getpeername()[:2]
        self.ends = "%s:%d-%s:%d" % (la, lp, ra, rp)
        self.sent = 0
        self.send_lock = threading.Lock()
        self.on_message = on_message
        self.reader = threading.Thread(target=self.read_loop, daemon=True)
        self.reader.start()

    def send(self, mid, parent, size):
        body = HEADER.pack(mid, 0 if parent is None else parent + 1, size)
        body += b"m" * (size - len(body))
        with self.send_lock:
            t = time.time_ns()
            self.log.line("S,%s,%d,%d,%s,%d,%d,%d" % (self.ends, self.sent, mid,
                                                      "-" if parent is None else parent,
                                                      self.host, self.peer, t))
            self.sent += 1
            self.sock.sendall(body)

    def read_exactly(self, n):
        b = bytearray()
        while len(b) < n:
            chunk = self.sock.recv(n - len(b))
            if not chunk:
                return None
            b += chunk
        return bytes(b)

    def read_loop(self):
        try:
            while True:
                head = self.read_exactly(HEADER.size)
                if head is None:
                    return
                mid, parent, size = HEADER.unpack(head)
                if size < HEADER.size or self.read_exactly(size - HEADER.size) is None:
                    return
                t = time.time_ns()
                self.log.line("R,%d,%d" % (mid, t))
                self.on_message(self, mid, parent - 1 if parent else None, t)
        except OSError:
            return


class Pools:
    """A caller's connections to each callee host: a free one, or a new one."""

    def __init__(self, plan, host, log):
        self.plan, self.host, self.log = plan, host, log
        self.free = {}
        self.lock = threading.Lock()
        self.waiting = {}  # connection -> the queue its reply goes to

    def on_reply(self, conn, mid, parent, t):
        self.waiting.pop(conn).put((mid, t))

    def call(self, callee, mid, parent, size, replies):
        with self.lock:
            free = self.free.setdefault(callee, [])
            conn = free.pop() if free else None
        if conn is None:
            addr = self.plan["addresses"][str(callee)]
            s = socket.create_connection((addr, self.plan["port"]), timeout=TIMEOUT)
            s.settimeout(None)
            conn = Conn(s, self.host, callee, self.log, self.on_reply)
        self.waiting[conn] = replies
        conn.send(mid, parent, size)
        return conn

    def release(self, callee, conn):
        with self.lock:
            self.free.setdefault(callee, []).append(conn)


def delay_line(dev, delay_ns):
    import collections
    import fcntl
    import select
    tunsetiff, iff_tun, iff_no_pi = 0x400454ca, 0x0001, 0x1000
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, tunsetiff, struct.pack("16sH", dev.encode(), iff_tun | iff_no_pi))
    print("ready", flush=True)
    held, n = collections.deque(), 0
    while True:
        wait = max(0.0, (held[0][0] - time.monotonic_ns()) / 1e9) if held else 1.0
        r, _, _ = select.select([fd, sys.stdin], [], [], wait)
        if sys.stdin in r:
            line = sys.stdin.readline()
            if not line or line.strip() == "stop":
                break
        if fd in r:
            held.append((time.monotonic_ns() + delay_ns, os.read(fd, 65536)))
        now = time.monotonic_ns()
        while held and held[0][0] <= now:
            os.write(fd, held.popleft()[1])
            n += 1
    print("done %d" % n, flush=True)


def serve(plan, host, log, ids):
    tier = next(t for t in plan["tiers"] if host in t["hosts"])
    slowness = plan["slowness"].get(str(host), 1.0)
    mean_ns = tier["service_ns"] / (len(tier["stages"]) + 1.0)
    rng = random.Random(plan["seed"] * 1000003 + host)
    rng_lock = threading.Lock()
    pools = Pools(plan, host, log)
    work = queue.Queue()
    served = [0]

    def worker():
        while True:
            job = work.get()
            if job is None:
                return
            conn, mid, caller = job
            last = mid  # the latest message in: the request, then each stage's last reply
            with rng_lock:
                d = rng.expovariate(1.0)
            time.sleep(d * mean_ns * slowness / 1e9)
            for stage in tier["stages"]:
                replies, calls = queue.Queue(), []
                for call in stage:
                    with rng_lock:
                        made = rng.random() < call["p"]
                        callee = rng.choice(plan["tiers"][call["tier"]]["hosts"])
                    if not made:
                        continue
                    size = plan["tiers"][call["tier"]]["request"]
                    c = pools.call(callee, ids.take(), last, size, replies)
                    calls.append((callee, c))
                latest = None
                for _ in calls:
                    rid, t = replies.get(timeout=30)
                    if latest is None or t >= latest[1]:
                        latest = (rid, t)
                for callee, c in calls:
                    pools.release(callee, c)
                if latest is not None:
                    last = latest[0]
                with rng_lock:
                    d = rng.expovariate(1.0)
                time.sleep(d * mean_ns * slowness / 1e9)
            conn.send(ids.take(), last, tier["reply"])
            served[0] += 1

    def on_request(conn, mid, parent, t):
        work.put((conn, mid, conn.peer))

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(tier["workers"])]
    for w in workers:
        w.start()
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((plan["addresses"][str(host)], plan["port"]))
    lst.listen(256)
    by_addr = {a: int(h) for h, a in plan["addresses"].items()}

    def accept_loop():
        while True:
            try:
                s, (a, _) = lst.accept()
            except OSError:
                return
            Conn(s, host, by_addr.get(a, -1), log, on_request)

    threading.Thread(target=accept_loop, daemon=True).start()
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    for _ in workers:
        work.put(None)
    for w in workers:
        w.join(timeout=10)
    print("done %d" % served[0], flush=True)


def client(plan, host, log, ids):
    first = plan["tiers"][plan["first"]]
    rate = plan["rate"] / len(plan["clients"])
    rng = random.Random(plan["seed"] * 1000003 + host)
    pools = Pools(plan, host, log)
    answered = [0]
    done = threading.Condition()

    def wait_reply(callee, conn, replies):
        replies.get(timeout=30)
        pools.release(callee, conn)
        with done:
            answered[0] += 1
            done.notify()

    print("ready", flush=True)
    line = sys.stdin.readline()
    if line.strip() != "go":
        raise OSError("expected 'go' on standard input, read %r" % line)
    start = time.monotonic()
    end = start + plan["duration_ns"] / 1e9
    at = start + rng.expovariate(rate)
    sent = 0
    while at < end:
        now = time.monotonic()
        if at > now:
            time.sleep(at - now)
        callee = rng.choice(first["hosts"])
        replies = queue.Queue(1)
        conn = pools.call(callee, ids.take(), None, first["request"], replies)
        threading.Thread(target=wait_reply, args=(callee, conn, replies), daemon=True).start()
        sent += 1
        at += rng.expovariate(rate)
    with done:
        done.wait_for(lambda: answered[0] == sent, timeout=30)
    if answered[0] != sent:
        raise OSError("%d of %d requests unanswered" % (sent - answered[0], sent))
    print("done %d" % sent, flush=True)


def main(argv):
    if len(argv) == 4 and argv[1] == "delay":
        try:
            delay_line(argv[2], int(argv[3]))
        except (OSError, ValueError) as e:
            print("tiers.py delay %s: %s" % (argv[2], e), file=sys.stderr, flush=True)
            return 1
        return 0
    if len(argv) != 4:
        print("usage: tiers.py PLAN HOST LOG | tiers.py delay DEV DELAY_NS", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            plan = json.load(f)
        host = int(argv[2])
        log = Log(argv[3])
    except (OSError, ValueError) as e:
        print("tiers.py: %s" % e, file=sys.stderr, flush=True)
        return 1
    ids = Ids(host)
    try:
        if host in plan["clients"]:
            client(plan, host, log, ids)
        else:
            serve(plan, host, log, ids)
    except (OSError, queue.Empty) as e:
        print("tiers.py host %d: %s" % (host, e or "a reply never came"), file=sys.stderr,
              flush=True)
        return 1
    finally:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
