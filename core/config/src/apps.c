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

static int app_err(char *errbuf, size_t k, const char *text, const char *why)
{
    return qri_err(errbuf, QR_EVALUE, "session %zu ('%s'): %s", k, text, why);
}

int qr_apps_parse(const char *text, uint32_t hosts, qr_app *apps, size_t max, size_t *n,
                  char *errbuf)
{
    *n = 0;
    char buf[4096];
    if (qri_strlcpy(buf, text ? text : "", sizeof buf))
        return qri_err(errbuf, QR_EVALUE, "too long");
    if (qr_list_blank(buf))
        return QR_OK;
    size_t k = 0;
    for (char *rest = buf, *tok; (tok = qr_list_next(&rest, ','));) {
        k++;
        if (!*tok)
            return app_err(errbuf, k, tok, "an empty session");
        char name[32], pair[32], at[8], when[32], extra[8];
        int got = sscanf(tok, "%31s %31s %7s %31s %7s", name, pair, at, when, extra);
        if (got < 2)
            return app_err(errbuf, k, tok, "expected 'NAME CLIENT>SERVER [at TIME]'");
        int kind = qr_app_kind_of(name);
        if (kind < 0)
            return app_err(
                errbuf, k, tok,
                "unknown application (http-keepalive, http-bulk, rpc-think or bulk-both)");
        char *gt = strchr(pair, '>');
        if (!gt)
            return app_err(errbuf, k, tok, "expected CLIENT>SERVER (host numbers)");
        *gt = '\0';
        char why[QR_ERRBUF_SIZE];
        int64_t cl, sv, start = 0;
        int64_t top = hosts ? (int64_t)hosts - 1 : INT32_MAX;
        if (qr_parse_int(pair, 0, top, &cl, why) || qr_parse_int(gt + 1, 0, top, &sv, why))
            return app_err(errbuf, k, tok,
                           hosts ? "a host out of range (the network's hosts "
                                   "are numbered from 0)"
                                 : why);
        if (cl == sv)
            return app_err(errbuf, k, tok, "the client is its own server");
        if (got == 3 || (got >= 4 && strcmp(at, "at")))
            return app_err(errbuf, k, tok, "expected 'at TIME' after the hosts");
        if (got > 4)
            return app_err(errbuf, k, tok, "unexpected words after the time");
        if (got == 4 && qr_parse_time_ns(when, &start, why))
            return app_err(errbuf, k, tok, why);
        if (start < 0)
            return app_err(errbuf, k, tok, "a start before the run's");
        if (*n >= max) {
            char lim[64];
            snprintf(lim, sizeof lim, "more than %zu sessions", max);
            return app_err(errbuf, k, tok, lim);
        }
        apps[(*n)++] = (qr_app){(qr_app_kind)kind, (uint32_t)cl, (uint32_t)sv, start};
    }
    return QR_OK;
}
