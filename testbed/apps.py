#!/usr/bin/python3
"""The real applications of qreplay's testbed ([traffic] pattern = apps; core/config apps.h).

    apps.py server NAME ADDR PORT    serve one session on ADDR:PORT, print "ready" once listening
    apps.py client NAME ADDR PORT    run one session against ADDR:PORT

NAME is http-keepalive (Python's http.server and http.client, HTTP/1.1 on one persistent
connection: GET 5000, 200 ms think time, GET 300000, 100 ms, GET 20000, close), http-bulk (the
same server and client, GET 3000000 three times back to back on one connection), rpc-think (five
rounds of a 200-byte request, a 3000-byte reply and 50 ms of think time) or bulk-both (each side
sends 400000 bytes at once, shuts down its sending side and reads to the end). Each side prints
"done SENT RECEIVED" (application bytes) and exits 0, or says what failed on stderr and exits 1.
Every wait is bounded (10 s per socket operation, 30 s for the first connection).
Also used by tests/data/captures/make_app_captures.sh, which made the capture corpus."""
import http.client
import http.server
import socket
import socketserver
import sys
import threading
import time

TIMEOUT = 10
HTTP_GETS = ((5000, 0.2), (300000, 0.1), (20000, 0.0))
HTTP_BULK_GETS = ((3000000, 0.0),) * 3
RPC_ROUNDS, RPC_REQUEST, RPC_REPLY, RPC_THINK = 5, 200, 3000, 0.05
BULK = 400000


def ready():
    print("ready", flush=True)


def done(sent, received):
    print("done %d %d" % (sent, received), flush=True)


def listener(addr, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(30)
    return s


def connect(addr, port):
    end = time.monotonic() + 30
    while True:
        try:
            return socket.create_connection((addr, port), timeout=TIMEOUT)
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


def read_exactly(k, n):
    got = 0
    while got < n:
        b = k.recv(min(65536, n - got))
        if not b:
            raise OSError("the peer closed after %d of %d bytes" % (got, n))
        got += len(b)
    return got


def http_server(addr, port, gets=HTTP_GETS):
    sent = [0]

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            n = int(self.path.strip("/"))
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            self.wfile.write(b"x" * n)
            sent[0] += n

        def log_message(self, *a):
            pass

    # TCPServer, not HTTPServer: that one looks its name up (getfqdn), 5 s without DNS
    socketserver.TCPServer.allow_reuse_address = True
    srv = socketserver.TCPServer((addr, port), H)
    srv.timeout = 30
    ready()
    srv.handle_request()
    srv.server_close()
    if sent[0] != sum(n for n, _ in gets):
        raise OSError("served %d bytes, not every GET" % sent[0])
    return sent[0], 0


def http_client(addr, port, gets=HTTP_GETS):
    end = time.monotonic() + 30
    while True:
        try:
            k = http.client.HTTPConnection(addr, port, timeout=TIMEOUT)
            k.connect()
            break
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
    got = 0
    for n, think in gets:
        k.request("GET", "/%d" % n)
        r = k.getresponse()
        body = r.read()
        if len(body) != n:
            raise OSError("GET /%d returned %d bytes" % (n, len(body)))
        got += n
        time.sleep(think)
    k.close()
    return 0, got


def rpc_server(addr, port):
    s = listener(addr, port)
    ready()
    k, _ = s.accept()
    k.settimeout(TIMEOUT)
    got = 0
    for _ in range(RPC_ROUNDS):
        got += read_exactly(k, RPC_REQUEST)
        k.sendall(b"r" * RPC_REPLY)
    k.recv(1)  # the client's close
    k.close()
    s.close()
    return RPC_ROUNDS * RPC_REPLY, got


def rpc_client(addr, port):
    k = connect(addr, port)
    got = 0
    for _ in range(RPC_ROUNDS):
        k.sendall(b"q" * RPC_REQUEST)
        got += read_exactly(k, RPC_REPLY)
        time.sleep(RPC_THINK)
    k.close()
    return RPC_ROUNDS * RPC_REQUEST, got


def bulk(k):
    k.settimeout(TIMEOUT)
    failed = []

    def send():
        try:
            k.sendall(b"b" * BULK)
            k.shutdown(socket.SHUT_WR)
        except OSError as e:
            failed.append(e)

    t = threading.Thread(target=send)
    t.start()
    n = 0
    while True:
        b = k.recv(65536)
        if not b:
            break
        n += len(b)
    t.join()
    if failed:
        raise failed[0]
    if n != BULK:
        raise OSError("received %d of %d bytes" % (n, BULK))
    k.close()
    return BULK, n


def bulk_server(addr, port):
    s = listener(addr, port)
    ready()
    k, _ = s.accept()
    s.close()
    return bulk(k)


def bulk_client(addr, port):
    return bulk(connect(addr, port))


APPS = {
    "http-keepalive": (http_server, http_client),
    "rpc-think": (rpc_server, rpc_client),
    "bulk-both": (bulk_server, bulk_client),
    "http-bulk": (lambda a, p: http_server(a, p, HTTP_BULK_GETS),
                  lambda a, p: http_client(a, p, HTTP_BULK_GETS)),
}


def main(argv):
    if len(argv) != 5 or argv[1] not in ("server", "client") or argv[2] not in APPS:
        print("usage: apps.py server|client %s ADDR PORT" % "|".join(APPS), file=sys.stderr)
        return 2
    role, name, addr, port = argv[1], argv[2], argv[3], int(argv[4])
    try:
        sent, received = APPS[name][role == "client"](addr, port)
    except (OSError, http.client.HTTPException) as e:
        print("%s %s: %s" % (name, role, e), file=sys.stderr, flush=True)
        return 1
    done(sent, received)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
