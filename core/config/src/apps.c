/* qreplay: real applications as a scenario's traffic (apps.h). */
#include "qreplay/apps.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/textio.h"
#include "qreplay/units.h"

static const char *const names[QR_APP_KINDS] = {"http-keepalive", "rpc-think", "bulk-both",
                                                "http-bulk"};

const char *qr_app_name(qr_app_kind k)
{
    return (unsigned)k < QR_APP_KINDS ? names[k] : "?";
}

int qr_app_kind_of(const char *name)
{
    for (int k = 0; k < QR_APP_KINDS; k++)
        if (!strcmp(name, names[k]))
            return k;
    return -1;
}

void qr_app_bytes(qr_app_kind k, uint64_t *client_bytes, uint64_t *server_bytes)
{
    /* the request lines are HTTP/1.1 GETs with Python's headers; their size is the client's
     * (about 80 B each) and not counted here */
    static const uint64_t c[QR_APP_KINDS] = {0, 5 * 200, 400000, 0};
    static const uint64_t s[QR_APP_KINDS] = {5000 + 300000 + 20000, 5 * 3000, 400000, 9000000};
    *client_bytes = (unsigned)k < QR_APP_KINDS ? c[k] : 0;
    *server_bytes = (unsigned)k < QR_APP_KINDS ? s[k] : 0;
}

/* A refusal of one session: its reason into why, 1. */
static int refuse(char *why, const char *what)
{
    snprintf(why, QR_ERRBUF_SIZE, "%s", what);
    return 1;
}

struct apps_ctx {
    uint32_t hosts;
    qr_app *apps;
    size_t max, *n;
};

static int one_app(void *ctx, size_t k, const char *tok, char *why)
{
    (void)k;
    struct apps_ctx *c = ctx;
    char name[32], pair[32], at[8], when[32], extra[8];
    int got = sscanf(tok, "%31s %31s %7s %31s %7s", name, pair, at, when, extra);
    if (got < 2)
        return refuse(why, "expected 'NAME CLIENT>SERVER [at TIME]'");
    int kind = qr_app_kind_of(name);
    if (kind < 0)
        return refuse(why,
                      "unknown application (http-keepalive, http-bulk, rpc-think or bulk-both)");
    char *gt = strchr(pair, '>');
    if (!gt)
        return refuse(why, "expected CLIENT>SERVER (host numbers)");
    *gt = '\0';
    int64_t cl, sv, start = 0;
    int64_t top = c->hosts ? (int64_t)c->hosts - 1 : INT32_MAX;
    if (qr_parse_int(pair, 0, top, &cl, why) || qr_parse_int(gt + 1, 0, top, &sv, why))
        return c->hosts ? refuse(why, "a host out of range (the network's hosts are numbered "
                                      "from 0)")
                        : 1;
    if (cl == sv)
        return refuse(why, "the client is its own server");
    if (got == 3 || (got >= 4 && strcmp(at, "at")))
        return refuse(why, "expected 'at TIME' after the hosts");
    if (got > 4)
        return refuse(why, "unexpected words after the time");
    if (got == 4 && qr_parse_time_ns(when, &start, why))
        return 1;
    if (start < 0)
        return refuse(why, "a start before the run's");
    if (*c->n >= c->max) {
        snprintf(why, QR_ERRBUF_SIZE, "more than %zu sessions", c->max);
        return 1;
    }
    c->apps[(*c->n)++] = (qr_app){(qr_app_kind)kind, (uint32_t)cl, (uint32_t)sv, start};
    return 0;
}

int qr_apps_parse(const char *text, uint32_t hosts, qr_app *apps, size_t max, size_t *n,
                  char *errbuf)
{
    *n = 0;
    struct apps_ctx c = {hosts, apps, max, n};
    return qr_list_each(text, ',', "session", one_app, &c, errbuf);
}
