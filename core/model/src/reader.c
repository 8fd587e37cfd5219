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

static int rule_err(char *errbuf, size_t k, const char *text, const char *why)
{
    return qri_err(errbuf, QR_EVALUE, "rule %zu ('%s'): %s", k, text, why);
}

int qr_read_rules_parse(const char *text, qr_read_rule *rules, size_t max, size_t *n, char *errbuf)
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
            return rule_err(errbuf, k, tok, "an empty rule");
        char word[16], num[32], rate[32], extra[8];
        int got = sscanf(tok, "%15s %31s %31s %7s", word, num, rate, extra);
        if (got < 1 || strcmp(word, "flow"))
            return rule_err(errbuf, k, tok, "expected 'flow F RATE'");
        if (got < 3)
            return rule_err(errbuf, k, tok, "expected 'flow F RATE' (a flow number and a rate)");
        if (got > 3)
            return rule_err(errbuf, k, tok, "unexpected words after the rate");
        char why[QR_ERRBUF_SIZE];
        int64_t f;
        if (qr_parse_int(num, 0, UINT32_MAX, &f, why))
            return rule_err(errbuf, k, tok, why);
        uint64_t bps;
        if (qr_parse_rate_bps(rate, &bps, why))
            return rule_err(errbuf, k, tok, why);
        if (bps == 0)
            return rule_err(errbuf, k, tok, "a rate of 0 would never read");
        for (size_t i = 0; i < *n; i++)
            if (rules[i].flow == (uint32_t)f)
                return rule_err(errbuf, k, tok, "this flow already has a read rate");
        if (*n >= max) {
            char lim[64];
            snprintf(lim, sizeof lim, "more than %zu rules", max);
            return rule_err(errbuf, k, tok, lim);
        }
        rules[(*n)++] = (qr_read_rule){(uint32_t)f, bps};
    }
    return QR_OK;
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
