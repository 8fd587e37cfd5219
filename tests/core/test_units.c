/* Strict parsing of values with units: exact results and exact error codes. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "qreplay/error.h"
#include "qreplay/units.h"

/* Parameters are copied to the test process: strings live inside the struct, not behind pointers.
 */
struct time_case {
    char text[32];
    int rc;
    int64_t ns;
};

ParameterizedTestParameters(units, time)
{
    static struct time_case cases[] = {
        {"5us", QR_OK, 5000},
        {"1.5us", QR_OK, 1500},
        {"0", QR_OK, 0},
        {"0ns", QR_OK, 0},
        {"16ms", QR_OK, 16000000},
        {"2s", QR_OK, 2000000000},
        {"1ns", QR_OK, 1},
        {"0.001us", QR_OK, 1},
        {"5", QR_EUNIT, 0},
        {"5 us", QR_EUNIT, 0},
        {"5usec", QR_EUNIT, 0},
        {"1.5ns", QR_EVALUE, 0},
        {"-5us", QR_EVALUE, 0},
        {"us", QR_EVALUE, 0},
        {"", QR_EVALUE, 0},
        {"99999999999999999999s", QR_EVALUE, 0},
        {"0.0001us", QR_EVALUE, 0},
    };
    return cr_make_param_array(struct time_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct time_case *c, units, time)
{
    int64_t ns = -1;
    char err[QR_ERRBUF_SIZE] = "";
    int rc = qr_parse_time_ns(c->text, &ns, err);
    cr_assert_eq(rc, c->rc, "'%s': rc %d (%s), expected %d", c->text, rc, err, c->rc);
    if (rc == QR_OK)
        cr_assert_eq(ns, c->ns, "'%s' -> %lld", c->text, (long long)ns);
    else
        cr_assert(strstr(err, c->text) != NULL || c->text[0] == '\0', "message names the value: %s",
                  err);
}

struct u64_case {
    char text[32];
    int rc;
    uint64_t v;
};

ParameterizedTestParameters(units, bytes)
{
    static struct u64_case cases[] = {
        {"2MB", QR_OK, 2000000}, {"2MiB", QR_OK, 2097152}, {"393KB", QR_OK, 393000},
        {"7500B", QR_OK, 7500},  {"1KiB", QR_OK, 1024},    {"1.5KB", QR_OK, 1500},
        {"2", QR_EUNIT, 0},      {"2mb", QR_EUNIT, 0},     {"0.5B", QR_EVALUE, 0},
        {"5MTU", QR_EUNIT, 0},
    };
    return cr_make_param_array(struct u64_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct u64_case *c, units, bytes)
{
    uint64_t v = 0;
    int rc = qr_parse_bytes(c->text, &v, NULL);
    cr_assert_eq(rc, c->rc, "'%s': rc %d, expected %d", c->text, rc, c->rc);
    if (rc == QR_OK)
        cr_assert_eq(v, c->v);
}

ParameterizedTestParameters(units, rate)
{
    static struct u64_case cases[] = {
        {"10Gbps", QR_OK, 10000000000ULL},
        {"100Mbps", QR_OK, 100000000ULL},
        {"2.5Gbps", QR_OK, 2500000000ULL},
        {"1bps", QR_OK, 1},
        {"10G", QR_EUNIT, 0},
        {"10", QR_EUNIT, 0},
        {"10gbps", QR_EUNIT, 0},
        {"Gbps", QR_EVALUE, 0},
    };
    return cr_make_param_array(struct u64_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct u64_case *c, units, rate)
{
    uint64_t v = 0;
    int rc = qr_parse_rate_bps(c->text, &v, NULL);
    cr_assert_eq(rc, c->rc, "'%s': rc %d, expected %d", c->text, rc, c->rc);
    if (rc == QR_OK)
        cr_assert_eq(v, c->v);
}

Test(units, margin_in_mtu_or_bytes)
{
    uint64_t v;
    cr_assert_eq(qr_parse_bytes_or_mtu("5MTU", &v, NULL), QR_OK);
    cr_assert_eq(v, 5 * QR_MTU_BYTES);
    cr_assert_eq(qr_parse_bytes_or_mtu("7500B", &v, NULL), QR_OK);
    cr_assert_eq(v, 7500);
    cr_assert_eq(qr_parse_bytes_or_mtu("5", &v, NULL), QR_EUNIT);
}

Test(units, percent_and_per_second)
{
    double v;
    cr_assert_eq(qr_parse_percent("30%", &v, NULL), QR_OK);
    cr_assert_float_eq(v, 0.30, 1e-12);
    cr_assert_eq(qr_parse_percent("30", &v, NULL), QR_EUNIT);
    cr_assert_eq(qr_parse_percent("130%", &v, NULL), QR_EVALUE);
    cr_assert_eq(qr_parse_percent("0x10%", &v, NULL), QR_EVALUE);
    cr_assert_eq(qr_parse_percent("nan%", &v, NULL), QR_EVALUE);
    cr_assert_eq(qr_parse_per_second("2400/s", &v, NULL), QR_OK);
    cr_assert_float_eq(v, 2400.0, 1e-9);
    cr_assert_eq(qr_parse_per_second("0", &v, NULL), QR_OK);
    cr_assert_eq(qr_parse_per_second("2400", &v, NULL), QR_EUNIT);
    cr_assert_eq(qr_parse_per_second("2400/ms", &v, NULL), QR_EUNIT);
}

Test(units, integers_are_strict)
{
    int64_t v;
    cr_assert_eq(qr_parse_int("42", 0, 100, &v, NULL), QR_OK);
    cr_assert_eq(v, 42);
    cr_assert_eq(qr_parse_int("42x", 0, 100, &v, NULL), QR_EVALUE);
    cr_assert_eq(qr_parse_int(" 42", 0, 100, &v, NULL), QR_EVALUE);
    cr_assert_eq(qr_parse_int("101", 0, 100, &v, NULL), QR_EVALUE);
    cr_assert_eq(qr_parse_int("", 0, 100, &v, NULL), QR_EVALUE);
}

Test(units, formatting_round_trips)
{
    char buf[32];
    cr_assert_str_eq(qr_format_time(5000, buf, sizeof buf), "5us");
    cr_assert_str_eq(qr_format_time(1500, buf, sizeof buf), "1500ns");
    cr_assert_str_eq(qr_format_time(0, buf, sizeof buf), "0");
    cr_assert_str_eq(qr_format_rate(10000000000ULL, buf, sizeof buf), "10Gbps");
    cr_assert_str_eq(qr_format_bytes(2000000, buf, sizeof buf), "2MB");
    cr_assert_str_eq(qr_format_bytes(2097152, buf, sizeof buf), "2MiB");
    cr_assert_str_eq(qr_format_bytes(1500, buf, sizeof buf), "1500B");
    /* every formatted time parses back to itself */
    for (int64_t ns = 0; ns < 3000000; ns += 999) {
        int64_t back;
        cr_assert_eq(qr_parse_time_ns(qr_format_time(ns, buf, sizeof buf), &back, NULL), QR_OK);
        cr_assert_eq(back, ns);
    }
}

Test(units, strerror_names_every_code)
{
    for (int c = QR_ENOTFOUND; c <= QR_END; c++)
        cr_assert_str_neq(qr_strerror(c), "unknown error", "code %d", c);
    cr_assert_str_eq(qr_strerror(12345), "unknown error");
}

Test(units, time_lists)
{
    int64_t v[16];
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_parse_time_list("2us, 5us,10us", v, 16, &n, err), QR_OK, "%s", err);
    cr_assert(n == 3 && v[0] == 2000 && v[1] == 5000 && v[2] == 10000);
    cr_assert_eq(qr_parse_time_list("0", v, 16, &n, err), QR_OK);
    cr_assert(n == 1 && v[0] == 0);
    const char *bad[] = {"", "5", "-1ns", "1ns,1ns", "1ns,,2ns", "1ns,", ",1ns", "1,2,3"};
    const char *why[] = {"empty list", "no unit",    "negative",   "listed twice",
                         "empty item", "empty item", "empty item", "no unit"};
    const int code[] = {QR_EVALUE, QR_EUNIT,  QR_EVALUE, QR_EVALUE,
                        QR_EVALUE, QR_EVALUE, QR_EVALUE, QR_EUNIT};
    for (int i = 0; i < 8; i++) {
        int rc = qr_parse_time_list(bad[i], v, 16, &n, err);
        cr_assert_eq(rc, code[i], "%d (want %d): '%s'", rc, code[i], bad[i]);
        cr_assert(strstr(err, why[i]), "'%s': %s", bad[i], err);
    }
    cr_assert_eq(qr_parse_time_list("1ns,2ns,3ns", v, 2, &n, err), QR_EVALUE);
    cr_assert(strstr(err, "at most 2"), "%s", err);
}

Test(units, index_lists)
{
    uint64_t *v;
    size_t n;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_parse_index_list("3,0,6", 6, "--flows", &v, &n, err), QR_OK, "%s", err);
    cr_assert(n == 3 && v[0] == 3 && v[1] == 0 && v[2] == 6);
    qr_index_list_free(v);
    const char *bad[] = {"7", "", "1,,2", "a", "-1", "1,1", "1.5", "2,"};
    const char *why[] = {"'7'", "''", "''", "'a'", "'-1'", "twice", "'1.5'", "''"};
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(qr_parse_index_list(bad[i], 6, "--flows", &v, &n, err), QR_EVALUE, "%s",
                     bad[i]);
        cr_assert_null(v);
        cr_assert(strstr(err, "--flows") && strstr(err, why[i]), "'%s': %s", bad[i], err);
    }
}

Test(units, shares_and_durations)
{
    double v;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_parse_share("0.1%", &v, err), QR_OK, "%s", err);
    cr_assert_float_eq(v, 0.001, 1e-15);
    cr_assert_eq(qr_parse_share("0.25", &v, err), QR_OK, "%s", err);
    cr_assert_float_eq(v, 0.25, 1e-15);
    static const char *const bad[] = {"", "0", "1", "100%", "0%", "-0.1", "0.5x", "abc", "1e-400"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 0.5;
        cr_assert_eq(qr_parse_share(bad[i], &v, err), QR_EVALUE, "'%s' accepted", bad[i]);
        cr_assert_float_eq(v, 0.5, 0, "'%s': the output is left alone", bad[i]);
    }
    char buf[48];
    cr_assert_str_eq(qr_format_duration(0, buf, sizeof buf), "0 ns");
    cr_assert_str_eq(qr_format_duration(999, buf, sizeof buf), "999 ns");
    cr_assert_str_eq(qr_format_duration(1000, buf, sizeof buf), "1.000 us");
    cr_assert_str_eq(qr_format_duration(16600000, buf, sizeof buf), "16.600 ms");
    cr_assert_str_eq(qr_format_duration(-2500, buf, sizeof buf), "-2.500 us");
}
