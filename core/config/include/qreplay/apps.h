/* qreplay: real applications as a scenario's traffic ([traffic] pattern = apps). The testbed runs
 * them on real Linux TCP (qreplay testbed); the ns-3 runtime has no applications of its own and
 * refuses them. Each session is one client host talking to one server host through the network:
 *
 *   http-keepalive  Python's own HTTP/1.1 server (http.server) and client (http.client) on one
 *                   persistent connection: GET 5000 B, 200 ms think time, GET 300000 B, 100 ms,
 *                   GET 20000 B, close. Bulk from the side that accepted the connection.
 *   rpc-think       a request/response protocol on one connection (Python sockets): five rounds
 *                   of a 200-byte request, a 3000-byte reply and 50 ms of think time.
 *   bulk-both       two-way bulk: each side sends 400000 bytes at once, shuts down its sending
 *                   side and reads to the end.
 *   http-bulk       downloads: the same HTTP/1.1 server and client, GET 3000000 B three times
 *                   back to back on one persistent connection (two of them towards one host
 *                   overflow its switch port).
 *
 * The programs are testbed/apps.py (Python from Debian); the same ones made the capture corpus
 * under tests/data/captures. */
#ifndef QREPLAY_APPS_H
#define QREPLAY_APPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    QR_APP_HTTP_KEEPALIVE = 0,
    QR_APP_RPC_THINK,
    QR_APP_BULK_BOTH,
    QR_APP_HTTP_BULK,
    QR_APP_KINDS
} qr_app_kind;

/* The most sessions one scenario runs. */
#define QR_APPS_MAX 64
/* Session i's server listens on this port + i. */
#define QR_APP_FIRST_PORT 8080

typedef struct qr_app {
    qr_app_kind kind;
    uint32_t client, server; /* hosts */
    int64_t start_ns;        /* when the client connects, from the run's start */
} qr_app;

/* "http-keepalive", "rpc-think", "bulk-both", "http-bulk"; "?" out of range (static storage). */
const char *qr_app_name(qr_app_kind k);
/* The kind named `name`; -1 if none. */
int qr_app_kind_of(const char *name);
/* What each side of one session of kind k sends (bytes of application data). */
void qr_app_bytes(qr_app_kind k, uint64_t *client_bytes, uint64_t *server_bytes);

/* Parse [traffic] apps: sessions 'NAME CLIENT>SERVER [at TIME]' separated by ',' (hosts by
 * number; TIME as [traffic] keys, default 0). hosts: the network's hosts (0: not checked yet).
 * Errors name the session by number and text: an unknown application, a host out of range, a
 * client that is its own server, more than max sessions. Returns 0 or QR_EVALUE. */
int qr_apps_parse(const char *text, uint32_t hosts, qr_app *apps, size_t max, size_t *n,
                  char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
