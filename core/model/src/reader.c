/* qreplay: receiving applications that read slowly (see reader.h). */
#include "qreplay/reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/textio.h"
#include "qreplay/units.h"

#define UNIT 8000000000ull /* credit per byte: 8 bits x 1e9 */
#define CAP ((uint64_t)QR_READ_BURST_BYTES * UNIT)

struct rules_ctx {
    qr_read_rule *rules;
    size_t max, *n;
};

static int one_rule(void *ctx, size_t k, const char *tok, char *why)
{
    (void)k;
    struct rules_ctx *c = ctx;
    char word[16], num[32], rate[32], extra[8];
    int got = sscanf(tok, "%15s %31s %31s %7s", word, num, rate, extra);
    const char *bad = got < 1 || strcmp(word, "flow") ? "expected 'flow F RATE'"
                      : got < 3 ? "expected 'flow F RATE' (a flow number and a rate)"
                      : got > 3 ? "unexpected words after the rate"
                                : NULL;
    if (bad) {
        snprintf(why, QR_ERRBUF_SIZE, "%s", bad);
        return 1;
    }
    int64_t f;
    uint64_t bps;
    if (qr_parse_int(num, 0, UINT32_MAX, &f, why) || qr_parse_rate_bps(rate, &bps, why))
        return 1;
    if (bps == 0) {
        snprintf(why, QR_ERRBUF_SIZE, "a rate of 0 would never read");
        return 1;
    }
    for (size_t i = 0; i < *c->n; i++)
        if (c->rules[i].flow == (uint32_t)f) {
            snprintf(why, QR_ERRBUF_SIZE, "this flow already has a read rate");
            return 1;
        }
    if (*c->n >= c->max) {
        snprintf(why, QR_ERRBUF_SIZE, "more than %zu rules", c->max);
        return 1;
    }
    c->rules[(*c->n)++] = (qr_read_rule){(uint32_t)f, bps};
    return 0;
}

int qr_read_rules_parse(const char *text, qr_read_rule *rules, size_t max, size_t *n, char *errbuf)
{
    *n = 0;
    struct rules_ctx c = {rules, max, n};
    return qr_list_each(text, ',', "rule", one_rule, &c, errbuf);
}

int qr_read_rates_resolve(const char *text, size_t n_flows, uint64_t *rates, char *errbuf)
{
    qr_read_rule rules[QR_READ_RULES_MAX];
    size_t n;
    char why[QR_ERRBUF_SIZE];
    for (size_t f = 0; f < n_flows; f++)
        rates[f] = 0;
    if (qr_read_rules_parse(text, rules, QR_READ_RULES_MAX, &n, why))
        return qri_err(errbuf, QR_EVALUE, "[traffic] read_rate: %s", why);
    for (size_t i = 0; i < n; i++) {
        if (rules[i].flow >= n_flows)
            return qri_err(errbuf, QR_EVALUE,
                           "[traffic] read_rate: rule %zu: flow %" PRIu32
                           " does not exist (the workload has %zu flows)",
                           i + 1, rules[i].flow, n_flows);
        rates[rules[i].flow] = rules[i].rate_bps;
    }
    return QR_OK;
}

void qr_reader_init(qr_reader *r, uint64_t rate_bps, int64_t now_ns)
{
    r->rate_bps = rate_bps ? rate_bps : 1;
    r->credit = 0;
    r->last_ns = now_ns;
}

static void refill(qr_reader *r, int64_t now_ns)
{
    if (now_ns <= r->last_ns)
        return;
    uint64_t dt = (uint64_t)(now_ns - r->last_ns);
    r->last_ns = now_ns;
    uint64_t room = CAP - r->credit;
    if (dt >= room / r->rate_bps + 1)
        r->credit = CAP;
    else
        r->credit += dt * r->rate_bps; /* < room: no overflow */
    if (r->credit > CAP)
        r->credit = CAP;
}

uint64_t qr_reader_take(qr_reader *r, int64_t now_ns, uint64_t available, uint64_t quantum)
{
    refill(r, now_ns);
    uint64_t n = r->credit / UNIT;
    if (n >= available)
        n = available;
    else if (quantum > 1)
        n -= n % quantum;
    r->credit -= n * UNIT;
    return n;
}

int64_t qr_reader_next_ns(const qr_reader *r, int64_t now_ns, uint64_t bytes)
{
    qr_reader x = *r;
    refill(&x, now_ns);
    if (bytes > QR_READ_BURST_BYTES)
        bytes = QR_READ_BURST_BYTES;
    if (bytes == 0)
        bytes = 1;
    uint64_t need = bytes * UNIT;
    if (x.credit >= need)
        return now_ns;
    uint64_t miss = need - x.credit;
    return now_ns + (int64_t)((miss + x.rate_bps - 1) / x.rate_bps);
}
