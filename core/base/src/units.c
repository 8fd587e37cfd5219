/* Strict parsing of dimensioned values: integer arithmetic only, so "1.5us" is exactly 1500 ns. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/units.h"

struct unit {
    const char *name;
    uint64_t factor;
};

static const struct unit time_units[] = {
    {"ns", 1ULL}, {"us", 1000ULL}, {"ms", 1000000ULL}, {"s", 1000000000ULL}, {NULL, 0}};
static const struct unit rate_units[] = {
    {"bps", 1ULL},           {"Kbps", 1000ULL},          {"Mbps", 1000000ULL},
    {"Gbps", 1000000000ULL}, {"Tbps", 1000000000000ULL}, {NULL, 0}};
static const struct unit byte_units[] = {
    {"B", 1ULL},      {"KB", 1000ULL},     {"MB", 1000000ULL},     {"GB", 1000000000ULL},
    {"KiB", 1024ULL}, {"MiB", 1048576ULL}, {"GiB", 1073741824ULL}, {NULL, 0}};
static const struct unit byte_mtu_units[] = {
    {"B", 1ULL},      {"KB", 1000ULL},     {"MB", 1000000ULL},     {"GB", 1000000000ULL},
    {"KiB", 1024ULL}, {"MiB", 1048576ULL}, {"GiB", 1073741824ULL}, {"MTU", QR_MTU_BYTES},
    {NULL, 0}};

static void unit_list(const struct unit *u, char *buf, size_t size)
{
    buf[0] = '\0';
    for (; u->name; u++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", len ? ", " : "", u->name);
    }
}

/* Parse "<digits>[.<digits>]<unit>" exactly into base units. */
static int parse_with_units(const char *text, const struct unit *units, int zero_ok,
                            const char *what, uint64_t *out, char *errbuf)
{
    const char *p = text;
    uint64_t mant = 0;
    uint64_t scale = 1;
    int digits = 0;

    if (!text)
        return qri_err(errbuf, QR_EINVAL, "no value");
    while (isdigit((unsigned char)*p)) {
        if (__builtin_mul_overflow(mant, 10, &mant) ||
            __builtin_add_overflow(mant, (uint64_t)(*p - '0'), &mant))
            return qri_err(errbuf, QR_EVALUE, "%s '%s' is too large", what, text);
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            if (__builtin_mul_overflow(mant, 10, &mant) ||
                __builtin_add_overflow(mant, (uint64_t)(*p - '0'), &mant) ||
                __builtin_mul_overflow(scale, 10, &scale))
                return qri_err(errbuf, QR_EVALUE, "%s '%s' has too many digits", what, text);
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return qri_err(errbuf, QR_EVALUE, "%s '%s' is not a number with a unit", what, text);
    if (*p == '\0') {
        if (zero_ok && mant == 0) {
            *out = 0;
            return QR_OK;
        }
        char list[128];
        unit_list(units, list, sizeof list);
        return qri_err(errbuf, QR_EUNIT, "%s '%s' has no unit (one of: %s)", what, text, list);
    }
    for (const struct unit *u = units; u->name; u++) {
        if (strcmp(p, u->name) == 0) {
            uint64_t v;
            if (__builtin_mul_overflow(mant, u->factor, &v))
                return qri_err(errbuf, QR_EVALUE, "%s '%s' is too large", what, text);
            if (v % scale != 0)
                return qri_err(errbuf, QR_EVALUE, "%s '%s' is not a whole number of %s", what, text,
                               units[0].name);
            *out = v / scale;
            return QR_OK;
        }
    }
    char list[128];
    unit_list(units, list, sizeof list);
    return qri_err(errbuf, QR_EUNIT, "%s '%s' has an unknown unit '%s' (one of: %s)", what, text, p,
                   list);
}

int qr_parse_time_ns(const char *text, int64_t *out, char *errbuf)
{
    uint64_t v;
    int rc = parse_with_units(text, time_units, 1, "time", &v, errbuf);
    if (rc)
        return rc;
    if (v > (uint64_t)INT64_MAX)
        return qri_err(errbuf, QR_EVALUE, "time '%s' is too large", text);
    *out = (int64_t)v;
    return QR_OK;
}

int qr_parse_rate_bps(const char *text, uint64_t *out, char *errbuf)
{
    return parse_with_units(text, rate_units, 0, "rate", out, errbuf);
}

int qr_parse_bytes(const char *text, uint64_t *out, char *errbuf)
{
    return parse_with_units(text, byte_units, 0, "size", out, errbuf);
}

int qr_parse_bytes_or_mtu(const char *text, uint64_t *out, char *errbuf)
{
    return parse_with_units(text, byte_mtu_units, 0, "size", out, errbuf);
}

/* strtod, but the whole string must be a finite number with no leading space. */
static int parse_number(const char *text, double *out)
{
    if (!text || !*text || isspace((unsigned char)*text))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || !isfinite(v))
        return -1;
    *out = v;
    return (int)(end - text);
}

int qr_parse_percent(const char *text, double *out, char *errbuf)
{
    double v;
    int n = parse_number(text, &v);
    if (n < 0 || strchr(text, 'x') || strchr(text, 'X'))
        return qri_err(errbuf, QR_EVALUE, "percentage '%s' is not a number followed by %%",
                       text ? text : "");
    if (text[n] == '\0')
        return qri_err(errbuf, QR_EUNIT, "percentage '%s' has no unit (write e.g. 30%%)", text);
    if (strcmp(text + n, "%") != 0)
        return qri_err(errbuf, QR_EUNIT, "percentage '%s' must end in %%", text);
    if (v < 0 || v > 100)
        return qri_err(errbuf, QR_EVALUE, "percentage '%s' is outside 0%%..100%%", text);
    *out = v / 100.0;
    return QR_OK;
}

int qr_parse_per_second(const char *text, double *out, char *errbuf)
{
    double v;
    int n = parse_number(text, &v);
    if (n < 0 || strchr(text, 'x') || strchr(text, 'X'))
        return qri_err(errbuf, QR_EVALUE, "event rate '%s' is not a number followed by /s",
                       text ? text : "");
    if (text[n] == '\0') {
        if (v == 0) {
            *out = 0;
            return QR_OK;
        }
        return qri_err(errbuf, QR_EUNIT, "event rate '%s' has no unit (write e.g. 2400/s)", text);
    }
    if (strcmp(text + n, "/s") != 0)
        return qri_err(errbuf, QR_EUNIT, "event rate '%s' must end in /s", text);
    if (v < 0)
        return qri_err(errbuf, QR_EVALUE, "event rate '%s' is negative", text);
    *out = v;
    return QR_OK;
}

int qr_parse_int(const char *text, int64_t min, int64_t max, int64_t *out, char *errbuf)
{
    if (!text || !*text || isspace((unsigned char)*text))
        return qri_err(errbuf, QR_EVALUE, "'%s' is not an integer", text ? text : "");
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end != '\0')
        return qri_err(errbuf, QR_EVALUE, "'%s' is not an integer", text);
    if (v < min || v > max)
        return qri_err(errbuf, QR_EVALUE, "%lld is outside %" PRId64 "..%" PRId64, v, min, max);
    *out = v;
    return QR_OK;
}

int qr_parse_double(const char *text, double min, double max, double *out, char *errbuf)
{
    double v;
    int n = parse_number(text, &v);
    if (n < 0 || text[n] != '\0' || strchr(text, 'x') || strchr(text, 'X'))
        return qri_err(errbuf, QR_EVALUE, "'%s' is not a number", text ? text : "");
    if (v < min || v > max)
        return qri_err(errbuf, QR_EVALUE, "%s is outside %g..%g", text, min, max);
    *out = v;
    return QR_OK;
}

static char *format_exact(uint64_t v, const struct unit *units, size_t n_units, char *buf,
                          size_t size)
{
    if (v == 0) {
        snprintf(buf, size, "0%s", units[0].name);
        return buf;
    }
    for (size_t i = n_units; i-- > 0;) {
        if (v % units[i].factor == 0) {
            snprintf(buf, size, "%" PRIu64 "%s", v / units[i].factor, units[i].name);
            return buf;
        }
    }
    snprintf(buf, size, "%" PRIu64 "%s", v, units[0].name);
    return buf;
}

char *qr_format_time(int64_t ns, char *buf, size_t size)
{
    if (ns == 0) {
        snprintf(buf, size, "0");
        return buf;
    }
    if (ns < 0) {
        snprintf(buf, size, "%" PRId64 "ns", ns);
        return buf;
    }
    return format_exact((uint64_t)ns, time_units, 4, buf, size);
}

char *qr_format_rate(uint64_t bps, char *buf, size_t size)
{
    return format_exact(bps, rate_units, 5, buf, size);
}

char *qr_format_bytes(uint64_t bytes, char *buf, size_t size)
{
    /* SI units only (B, KB, MB, GB), unless the value is a whole number of binary units and not of
     * SI. */
    if (bytes != 0 && bytes % 1000 != 0 && bytes % 1024 == 0) {
        static const struct unit bin[] = {
            {"B", 1}, {"KiB", 1024}, {"MiB", 1048576}, {"GiB", 1073741824}};
        return format_exact(bytes, bin, 4, buf, size);
    }
    return format_exact(bytes, byte_units, 4, buf, size);
}

int qr_parse_time_list(const char *text, int64_t *out, size_t max, size_t *n, char *errbuf)
{
    *n = 0;
    if (!text)
        text = "";
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0')
        return qri_err(errbuf, QR_EVALUE, "empty list");
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            return qri_err(errbuf, QR_EVALUE, "empty item in '%s'", text);
        if (len >= sizeof item)
            return qri_err(errbuf, QR_EVALUE, "'%.*s...' is too long", 20, p);
        memcpy(item, p, len);
        item[len] = '\0';
        if (item[0] == '-')
            return qri_err(errbuf, QR_EVALUE, "'%s' is negative", item);
        if (*n == max)
            return qri_err(errbuf, QR_EVALUE, "at most %zu values", max);
        int64_t v;
        int rc = qr_parse_time_ns(item, &v, errbuf);
        if (rc)
            return rc;
        if (v < 0)
            return qri_err(errbuf, QR_EVALUE, "'%s' is negative", item);
        for (size_t j = 0; j < *n; j++)
            if (out[j] == v)
                return qri_err(errbuf, QR_EVALUE, "'%s' is listed twice", item);
        out[(*n)++] = v;
        if (!comma)
            return QR_OK;
        p = comma + 1;
    }
}

int qr_parse_index_list(const char *text, uint64_t max_value, const char *what, uint64_t **out,
                        size_t *n, char *errbuf)
{
    *out = NULL;
    *n = 0;
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    uint64_t *v = malloc(cap * sizeof *v);
    if (!v)
        return qri_err(errbuf, QR_ENOMEM, "%s: out of memory", what);
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        int64_t x;
        if (len == 0 || len >= sizeof item) {
            free(v);
            return qri_err(errbuf, QR_EVALUE, "%s: '%.*s' is not a number in 0..%" PRIu64, what,
                           (int)(len < 20 ? len : 20), p, max_value);
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (max_value > INT64_MAX || qr_parse_int(item, 0, (int64_t)max_value, &x, NULL)) {
            free(v);
            return qri_err(errbuf, QR_EVALUE, "%s: '%s' is not a number in 0..%" PRIu64, what, item,
                           max_value);
        }
        for (size_t j = 0; j < *n; j++)
            if (v[j] == (uint64_t)x) {
                free(v);
                return qri_err(errbuf, QR_EVALUE, "%s: '%s' is listed twice", what, item);
            }
        v[(*n)++] = (uint64_t)x;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = v;
    return QR_OK;
}

void qr_index_list_free(uint64_t *list)
{
    free(list);
}

int64_t qri_wire_ns(uint64_t bytes, uint64_t rate_bps)
{
    if (!rate_bps)
        return 0;
    uint64_t bits = bytes * 8u;
    if (bytes < (1ull << 31)) /* bits * 1e9 fits 64 bits: every ordinary packet */
        return (int64_t)(bits * 1000000000u / rate_bps);
    return (int64_t)((unsigned __int128)bytes * 8u * 1000000000u / rate_bps);
}

int qri_reserve(void **array, size_t *cap, size_t need, size_t size, size_t first)
{
    while (*cap < need)
        if (qri_grow(array, cap, *cap, size, first))
            return QR_ENOMEM;
    return QR_OK;
}

int qri_grow(void **array, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return QR_OK;
    size_t c = *cap ? *cap * 2 : first;
    void *v = realloc(*array, c * size);
    if (!v)
        return QR_ENOMEM;
    *array = v;
    *cap = c;
    return QR_OK;
}

char *qr_format_duration(int64_t ns, char *buf, size_t size)
{
    if (ns >= 1000000 || ns <= -1000000)
        snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
    else if (ns >= 1000 || ns <= -1000)
        snprintf(buf, size, "%.3f us", (double)ns / 1e3);
    else
        snprintf(buf, size, "%" PRId64 " ns", ns);
    return buf;
}

int qr_parse_share(const char *text, double *out, char *errbuf)
{
    double v;
    if (strchr(text, '%')) {
        if (qr_parse_percent(text, &v, errbuf))
            return qri_err(errbuf, QR_EVALUE, "'%s' is not a share", text);
    } else {
        char *end;
        v = strtod(text, &end);
        if (!*text || *end)
            return qri_err(errbuf, QR_EVALUE, "'%s' is not a number", text);
    }
    if (!(v > 0 && v < 1))
        return qri_err(errbuf, QR_EVALUE, "'%s' is not between 0 and 1", text);
    *out = v;
    return QR_OK;
}
