/* Scenario files: schema, strict values, errors naming file, line and key, overrides, printing. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qreplay/apps.h"
#include "qreplay/error.h"
#include "qreplay/scenario.h"
#include "qreplay/workload.h"

static qr_scenario *s;
static char err[QR_ERRBUF_SIZE];

static void setup(void)
{
    cr_assert_eq(qr_scenario_create_in(&s, QR_SOURCE_DIR "/data"), QR_OK);
    err[0] = '\0';
}

static void teardown(void)
{
    qr_scenario_destroy(s);
}

TestSuite(scenario, .init = setup, .fini = teardown);

Test(scenario, defaults_match_design)
{
    const qr_config *c = qr_scenario_config(s);
    cr_assert_eq(c->topology.kind, QR_TOPO_FATTREE);
    cr_assert_eq(c->topology.k, 4);
    cr_assert_eq(c->links.rate_bps, 10000000000ULL);
    cr_assert_eq(c->buffer.size_bytes, 2000000);
    cr_assert_eq(c->replay.margin_bytes, 7500);
    cr_assert_eq(c->replay.modes, (1u << QR_MODE_PLAIN) | (1u << QR_MODE_TAGGED));
    cr_assert_eq(c->sampling.n_th, 3);
    cr_assert_eq(c->sampling.th_ns[0], 2000);
    cr_assert_eq(c->sampling.th_ns[1], 5000);
    cr_assert_eq(c->sampling.th_ns[2], 10000);
    cr_assert_eq(c->clock.max_offset_ns, 5000);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
}

Test(scenario, loads_typed_values)
{
    const char *ini = "[topology]\nkind = star\nhosts = 3\n"
                      "[links]\nrate = 100Mbps ; inline comment\ndelay = 2.5us\n"
                      "[buffer]\nsize = 393KB\nalpha = 4\n"
                      "# a comment\n[traffic]\nload = 80%\nincast_rate = 2400/s\n"
                      "[sampling]\nth = 0, 5us\nmethod = gap\n"
                      "[replay]\nmodes = tagged\nmargin = 7500B\n";
    cr_assert_eq(qr_scenario_load_string(s, ini, "t.ini", ".", err), QR_OK, "%s", err);
    const qr_config *c = qr_scenario_config(s);
    cr_assert_eq(c->topology.kind, QR_TOPO_STAR);
    cr_assert_eq(c->topology.hosts, 3);
    cr_assert_eq(c->links.rate_bps, 100000000ULL);
    cr_assert_eq(c->links.delay_ns, 2500);
    cr_assert_eq(c->buffer.size_bytes, 393000);
    cr_assert_float_eq(c->buffer.alpha, 4.0, 1e-12);
    cr_assert_float_eq(c->traffic.load, 0.8, 1e-12);
    cr_assert_float_eq(c->traffic.incast_rate_per_s, 2400.0, 1e-9);
    cr_assert_eq(c->sampling.n_th, 2);
    cr_assert_eq(c->sampling.th_ns[0], 0);
    cr_assert_eq(c->sampling.th_ns[1], 5000);
    cr_assert_eq(c->sampling.method, QR_SAMPLING_GAP);
    cr_assert_eq(c->replay.modes, 1u << QR_MODE_TAGGED);
    cr_assert_eq(c->replay.margin_bytes, 7500);
    const char *v, *origin;
    cr_assert_eq(qr_scenario_get(s, "links", "rate", &v), QR_OK);
    cr_assert_str_eq(v, "100Mbps");
    cr_assert_eq(qr_scenario_get(s, "links", "nope", &v), QR_EKEY);
    for (size_t i = 0; i < qr_scenario_key_count(); i++) {
        const char *sec, *key;
        qr_scenario_key(s, i, &sec, &key, NULL, &origin, NULL);
        if (!strcmp(sec, "buffer") && !strcmp(key, "size"))
            cr_assert_str_eq(origin, "t.ini:8");
        if (!strcmp(sec, "run") && !strcmp(key, "seed"))
            cr_assert_str_eq(origin, "default");
    }
}

/* Parameters are copied to the test process: strings live inside the struct, not behind pointers.
 */
struct bad_case {
    char ini[128];
    int rc;
    char must_contain[96]; /* in the error message */
};

ParameterizedTestParameters(scenario, bad_input)
{
    static struct bad_case cases[] = {
        {"[topology]\nk = 4\n[nosuch]\nx = 1\n", QR_EKEY, "bad.ini:3: unknown section [nosuch]"},
        {"[topology]\nk = 4\nfoo = 1\n", QR_EKEY, "bad.ini:3: [topology] foo: unknown key"},
        {"[topology]\nk = 4\nk = 8\n", QR_EDUP,
         "bad.ini:3: [topology] k: given twice (first at bad.ini:2)"},
        {"[links]\nrate = 10\n", QR_EUNIT, "bad.ini:2: [links] rate: rate '10' has no unit"},
        {"[links]\n\ndelay = 1\n", QR_EUNIT, "bad.ini:3: [links] delay"},
        {"[buffer]\nsize = 2XB\n", QR_EUNIT, "bad.ini:2: [buffer] size"},
        {"[topology]\nkind = ring\n", QR_EVALUE,
         "bad.ini:2: [topology] kind: 'ring' is not one of: fattree, star"},
        {"[topology]\nk = four\n", QR_EVALUE, "bad.ini:2: [topology] k"},
        {"[topology]\nk = 100\n", QR_EVALUE, "bad.ini:2: [topology] k"},
        {"[traffic]\nload = 30\n", QR_EUNIT, "bad.ini:2: [traffic] load"},
        {"[sampling]\nth = 2us,,5us\n", QR_EVALUE, "bad.ini:2: [sampling] th"},
        {"[sampling]\nth = 2us,2us\n", QR_EVALUE, "listed twice"},
        {"[replay]\nmodes = plain,fancy\n", QR_EVALUE, "bad.ini:2: [replay] modes: 'fancy'"},
        {"[topology]\nthis line has no equals sign\n", QR_ESYNTAX, "bad.ini:2: syntax error"},
        {"[topology\nk = 4\n", QR_ESYNTAX, "bad.ini:1: syntax error"},
        {"k = 4\n", QR_EKEY, "bad.ini:1: unknown section []"},
        {"[run]\nseed = -1\n", QR_EVALUE, "bad.ini:2: [run] seed"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, scenario, bad_input)
{
    int rc = qr_scenario_load_string(s, c->ini, "bad.ini", ".", err);
    cr_assert_eq(rc, c->rc, "rc %d (%s), expected %d for:\n%s", rc, err, c->rc, c->ini);
    cr_assert(strstr(err, c->must_contain), "message '%s' lacks '%s'", err, c->must_contain);
}

Test(scenario, first_error_wins_and_later_lines_are_not_blamed)
{
    const char *ini = "[topology]\nk = 4\nbroken line\n[links]\nrate = 10\n";
    cr_assert_eq(qr_scenario_load_string(s, ini, "f.ini", ".", err), QR_ESYNTAX);
    cr_assert(strstr(err, "f.ini:3:"), "%s", err);
    const char *ini2 = "[links]\nrate = 10\nbroken line\n";
    cr_assert_eq(qr_scenario_load_string(s, ini2, "g.ini", ".", err), QR_EUNIT);
    cr_assert(strstr(err, "g.ini:2:"), "%s", err);
}

/* Lines longer than inih's buffer load (a scenario in a folder with a long
 * path prints such lines), and the printed scenario loads back to the same values. */
Test(scenario, long_lines_load_and_round_trip)
{
    char ini[2000];
    snprintf(ini, sizeof ini, "[output]\ndir = %0900d ; a comment\n; %0500d\n[run]\nseed = 3\n", 7,
             8);
    cr_assert_eq(qr_scenario_load_string(s, ini, "long.ini", ".", err), QR_OK, "%s", err);
    cr_assert_eq(strlen(qr_scenario_config(s)->output.dir), 900);
    cr_assert_eq(qr_scenario_config(s)->run.seed, 3);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert_eq(qr_scenario_print(s, mem), QR_OK);
    fclose(mem);
    qr_scenario *t;
    qr_scenario_create_in(&t, QR_SOURCE_DIR "/data");
    cr_assert_eq(qr_scenario_load_string(t, text, "printed", ".", err), QR_OK, "%s", err);
    cr_assert_eq(memcmp(qr_scenario_config(s), qr_scenario_config(t), sizeof(qr_config)), 0);
    free(text);
    qr_scenario_destroy(t);
    /* a long section header cannot be passed on: a clear error */
    snprintf(ini, sizeof ini, "[%0300d]\n", 1);
    cr_assert_eq(qr_scenario_load_string(s, ini, "sec.ini", ".", err), QR_ESYNTAX);
    cr_assert(strstr(err, "sec.ini:1"), "%s", err);
}

/* A NUL or control byte is no longer the silent end of a line. */
Test(scenario, nul_and_control_bytes_are_errors)
{
    char path[] = "/tmp/qr-nul-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char text[] = "[run]\nseed = 1\0 ignored\n[links]\nrate = 10Gbps\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    cr_assert_eq(qr_scenario_load(s, path, err), QR_ESYNTAX);
    cr_assert(strstr(err, ":2:") && strstr(err, "NUL"), "%s", err);
    cr_assert_eq(qr_scenario_load_string(s, "[run]\nseed = 1\x02\n", "c.ini", ".", err),
                 QR_ESYNTAX);
    cr_assert(strstr(err, "c.ini:2") && strstr(err, "control"), "%s", err);
    unlink(path);
}

/* --set values that a scenario file could not carry are refused, and a
 * relative input path given with --set is stored absolute (it then reloads from anywhere). */
Test(scenario, set_values_round_trip)
{
    const char *bad[] = {"output.dir=a;b", "output.dir=a\nb", "output.dir=x\n[run]\nseed=9"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(qr_scenario_set(s, bad[i], err), QR_EVALUE, "%s", bad[i]);
        cr_assert(strstr(err, "cannot contain"), "%s", err);
    }
    char cwd[1024];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(QR_SOURCE_DIR), 0);
    cr_assert_eq(qr_scenario_set(s, "traffic.flows=data/flows/butterfly.csv", err), QR_OK, "%s",
                 err);
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_str_eq(qr_scenario_config(s)->traffic.flows,
                     QR_SOURCE_DIR "/data/flows/butterfly.csv");
}

Test(scenario, missing_file)
{
    cr_assert_eq(qr_scenario_load(s, "/nonexistent/x.ini", err), QR_ENOENT);
    cr_assert(strstr(err, "/nonexistent/x.ini"), "%s", err);
}

Test(scenario, overrides)
{
    cr_assert_eq(qr_scenario_load_string(s, "[topology]\nk = 4\n", "a.ini", ".", err), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "topology.k=8", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_config(s)->topology.k, 8);
    cr_assert_eq(qr_scenario_set(s, " buffer.size = 1MiB ", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_config(s)->buffer.size_bytes, 1048576);
    cr_assert_eq(qr_scenario_set(s, "topology.k=6", err), QR_EDUP);
    cr_assert_eq(qr_scenario_set(s, "topology.x=1", err), QR_EKEY);
    cr_assert(strstr(err, "--set topology.x: unknown key"), "%s", err);
    cr_assert_eq(qr_scenario_set(s, "nope.k=1", err), QR_EKEY);
    cr_assert_eq(qr_scenario_set(s, "links.rate=10", err), QR_EUNIT);
    cr_assert(strstr(err, "--set links.rate"), "%s", err);
    cr_assert_eq(qr_scenario_set(s, "k=4", err), QR_ESYNTAX);
    cr_assert_eq(qr_scenario_set(s, "topology.k", err), QR_ESYNTAX);
}

Test(scenario, validation_across_keys)
{
    cr_assert_eq(qr_scenario_set(s, "topology.k=6", err), QR_OK);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    cr_assert_eq(qr_scenario_set(s, "topology.k=5", err), QR_OK);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE);
    cr_assert(strstr(err, "[topology] k"), "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    qr_scenario_set(s, "traffic.incast_rate=100/s", err);
    qr_scenario_set(s, "traffic.incast_fanin=16", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE); /* k=4: 16 hosts */
    cr_assert(strstr(err, "incast_fanin"), "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    qr_scenario_set(s, "traffic.pattern=flows", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE);
    cr_assert(strstr(err, "[traffic] flows"), "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    qr_scenario_set(s, "traffic.duration=100ms", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE);
}

Test(scenario, printed_scenario_loads_back_identically)
{
    const char *ini = "[topology]\nkind = star\nhosts = 5\n[links]\nrate = 2.5Gbps\n"
                      "[buffer]\nalpha = 0.5\n[sampling]\nth = 1us, 3us\n[run]\nseed = 99\n";
    cr_assert_eq(qr_scenario_load_string(s, ini, "p.ini", ".", err), QR_OK, "%s", err);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cr_assert_eq(qr_scenario_print(s, mem), QR_OK);
    fclose(mem);
    qr_scenario *t;
    qr_scenario_create_in(&t, QR_SOURCE_DIR "/data");
    cr_assert_eq(qr_scenario_load_string(t, text, "printed", ".", err), QR_OK, "%s\n%s", err, text);
    cr_assert_eq(memcmp(qr_scenario_config(s), qr_scenario_config(t), sizeof(qr_config)), 0,
                 "printed scenario does not load back to the same values:\n%s", text);
    free(text);
    qr_scenario_destroy(t);
}

Test(scenario, input_paths_resolve_against_the_file_then_the_data_folder)
{
    char dir[] = "/tmp/qr-scen-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], flows[256];
    snprintf(flows, sizeof flows, "%s/my-flows.csv", dir);
    FILE *f = fopen(flows, "w");
    fputs("src,dst,bytes,start\n0,1,1MB,0\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/s.ini", dir);
    f = fopen(path, "w");
    fputs("[traffic]\npattern = flows\nflows = my-flows.csv\n", f);
    fclose(f);
    cr_assert_eq(qr_scenario_load(s, path, err), QR_OK, "%s", err);
    cr_assert_str_eq(qr_scenario_config(s)->traffic.flows, flows);
    /* the default CDF is found in the project's data folder */
    cr_assert_eq(access(qr_scenario_config(s)->traffic.size_cdf, R_OK), 0, "%s",
                 qr_scenario_config(s)->traffic.size_cdf);
    unlink(flows);
    unlink(path);
    rmdir(dir);
}

Test(scenario, every_key_has_help_and_a_value)
{
    cr_assert_geq(qr_scenario_key_count(), 25);
    for (size_t i = 0; i < qr_scenario_key_count(); i++) {
        const char *sec, *key, *val, *origin, *help;
        cr_assert_eq(qr_scenario_key(s, i, &sec, &key, &val, &origin, &help), QR_OK);
        cr_assert(help && strlen(help) > 5, "%s.%s has no help", sec, key);
        cr_assert_str_eq(origin, "default");
    }
    cr_assert_eq(qr_scenario_key(s, qr_scenario_key_count(), NULL, NULL, NULL, NULL, NULL),
                 QR_EINVAL);
}

Test(scenario, sweep_loads_are_a_strict_percent_list)
{
    qr_scenario *s;
    char err[QR_ERRBUF_SIZE];
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_config(s)->sweep.n_loads, 1);
    cr_assert_eq(
        qr_scenario_load_string(s, "[sweep]\nloads = 10%, 20%,80%\nseeds = 3\n", "t.ini", ".", err),
        QR_OK, "%s", err);
    const qr_config *c = qr_scenario_config(s);
    cr_assert_eq(c->sweep.n_loads, 3);
    cr_assert_float_eq(c->sweep.loads[2], 0.8, 1e-12);
    cr_assert_eq(c->sweep.seeds, 3);
    const char *v;
    cr_assert_eq(qr_scenario_get(s, "sweep", "loads", &v), QR_OK);
    cr_assert_str_eq(v, "10%,20%,80%");
    qr_scenario_destroy(s);
    const char *bad[] = {"[sweep]\nloads = 10%,10%\n", "[sweep]\nloads = 10\n",
                         "[sweep]\nloads = 10%,,20%\n", "[sweep]\nloads = 150%\n",
                         "[sweep]\nseeds = 0\n"};
    const int code[] = {QR_EVALUE, QR_EUNIT, QR_EVALUE, QR_EVALUE, QR_EVALUE};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(qr_scenario_create(&s), QR_OK);
        int rc = qr_scenario_load_string(s, bad[i], "t.ini", ".", err);
        cr_assert_eq(rc, code[i], "%d (want %d): %s", rc, code[i], bad[i]);
        cr_assert(strstr(err, "t.ini:2") && strstr(err, "[sweep]"), "%s", err);
        qr_scenario_destroy(s);
    }
}

/* Every key's value is one the whole pipeline can represent; beyond, a clear
 * error with the range. */
Test(scenario, values_outside_what_the_pipeline_represents)
{
    const char *bad[][2] = {
        {"tcp.rcvbuf=4GiB", "4294967295B"},        {"tcp.sndbuf=5GB", "4294967295B"},
        {"links.delay=9223372036s", "1s"},         {"host.proc_delay=9000000000s", "1s"},
        {"clock.max_offset=9000000000s", "1000s"}, {"buffer.size=9000000GB", "1000GB"},
        {"replay.margin=9000000GB", "1000GB"},     {"links.rate=18000000Tbps", "10Tbps"},
        {"traffic.stop=9000000000s", "1000000s"},  {"sampling.th=5us,2s", "1s"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qr_scenario *t;
        cr_assert_eq(qr_scenario_create(&t), QR_OK);
        cr_assert_eq(qr_scenario_set(t, bad[i][0], err), QR_EVALUE, "%s", bad[i][0]);
        cr_assert(strstr(err, "outside") && strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
        qr_scenario_destroy(t);
    }
    /* the edges are accepted */
    cr_assert_eq(qr_scenario_set(s, "tcp.rcvbuf=4294967295B", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "buffer.size=1000GB", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "buffer.alpha=1000000", err), QR_OK, "%s", err);
    /* with the largest size and alpha the threshold still fits */
    const qr_config *c = qr_scenario_config(s);
    cr_assert_lt((double)c->buffer.size_bytes * c->buffer.alpha, 9.2e18);
}

/* Found by fuzz_scenario: a scenario whose first line is empty wrote through a NULL buffer. */
Test(scenario, an_empty_first_line)
{
    cr_assert_eq(qr_scenario_load_string(s, "\n[run]\nseed = 4\n", "e.ini", ".", err), QR_OK, "%s",
                 err);
    cr_assert_eq(qr_scenario_config(s)->run.seed, 4);
    cr_assert_eq(qr_scenario_load_string(s, "\n", "e.ini", ".", err), QR_OK, "%s", err);
}

/* Found by fuzz_scenario: "key =;x" loaded (no blank before ';', so no comment) but printed as
 * "key = ;x", which reloads as a comment. Such a value is refused. */
Test(scenario, a_value_starting_with_a_semicolon)
{
    cr_assert_eq(qr_scenario_load_string(s, "[traffic]\nflows =;.=x\n", "v.ini", ".", err),
                 QR_EVALUE);
    cr_assert(strstr(err, "v.ini:2") && strstr(err, "cannot start with ';'"), "%s", err);
}

/* A user's override is given once; a program's own adjustment after it replaces it. */
Test(scenario, a_program_may_replace_an_override)
{
    char err[QR_ERRBUF_SIZE];
    qr_scenario *s;
    cr_assert_eq(qr_scenario_create(&s), QR_OK);
    cr_assert_eq(qr_scenario_set(s, "links.rate=100Mbps", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_set(s, "links.rate=50Mbps", err), QR_EDUP);
    cr_assert(strstr(err, "given twice"), "%s", err);
    cr_assert_eq(qr_scenario_replace(s, "links.rate=99731000bps", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_config(s)->links.rate_bps, 99731000);
    cr_assert_eq(qr_scenario_replace(s, "links.rate=fast", err), QR_EVALUE);
    qr_scenario_destroy(s);
}

/* [traffic] apps: sessions of real applications, for the testbed only. */
Test(scenario, application_sessions)
{
    qr_app a[QR_APPS_MAX];
    size_t n;
    cr_assert_eq(qr_apps_parse(" http-keepalive 0>1, bulk-both 2>0 at 250ms ,rpc-think 1>2", 3, a,
                               QR_APPS_MAX, &n, err),
                 QR_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(a[0].kind, QR_APP_HTTP_KEEPALIVE);
    cr_assert(a[0].client == 0 && a[0].server == 1 && a[0].start_ns == 0);
    cr_assert(a[1].kind == QR_APP_BULK_BOTH && a[1].client == 2 && a[1].server == 0);
    cr_assert_eq(a[1].start_ns, 250000000);
    cr_assert_eq(qr_app_kind_of(qr_app_name(QR_APP_HTTP_BULK)), QR_APP_HTTP_BULK);
    cr_assert_eq(qr_apps_parse("", 3, a, QR_APPS_MAX, &n, err), QR_OK);
    cr_assert_eq(n, 0);
    const char *bad[][2] = {{"ftp 0>1", "unknown application"},
                            {"http-bulk 0-1", "CLIENT>SERVER"},
                            {"http-bulk 0>3", "out of range"},
                            {"http-bulk 1>1", "its own server"},
                            {"http-bulk 0>1 on 5ms", "'at TIME'"},
                            {"http-bulk 0>1 at", "'at TIME'"},
                            {"http-bulk 0>1 at 5ms now", "unexpected words"},
                            {"http-bulk 0>1 at soon", "soon"},
                            {"http-bulk 0>1,,rpc-think 1>0", "session 2"},
                            {"http-bulk", "expected 'NAME CLIENT>SERVER"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(qr_apps_parse(bad[i][0], 3, a, QR_APPS_MAX, &n, err), QR_EVALUE, "%s",
                     bad[i][0]);
        cr_assert(strstr(err, bad[i][1]), "'%s': %s", bad[i][0], err);
    }
    cr_assert_eq(qr_apps_parse("rpc-think 0>1, rpc-think 1>0, rpc-think 0>1", 3, a, 2, &n, err),
                 QR_EVALUE);
    cr_assert(strstr(err, "more than 2 sessions"), "%s", err);

    /* the scenario: pattern = apps needs sessions, hosts in the network; flows refuse them */
    cr_assert_eq(qr_scenario_load_string(s,
                                         "[topology]\nkind = star\nhosts = 3\n[traffic]\n"
                                         "pattern = apps\napps = http-bulk 0>1\n",
                                         "a.ini", ".", err),
                 QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_OK, "%s", err);
    qr_flow *fl = NULL;
    size_t nf = 0;
    cr_assert_eq(qr_workload_from_config(qr_scenario_config(s), &fl, &nf, err), QR_EVALUE);
    cr_assert(strstr(err, "only on the testbed"), "%s", err);
    cr_assert_null(fl);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    cr_assert_eq(qr_scenario_load_string(s,
                                         "[topology]\nkind = star\nhosts = 3\n[traffic]\n"
                                         "pattern = apps\napps = http-bulk 0>5\n",
                                         "a.ini", ".", err),
                 QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE);
    cr_assert(strstr(err, "[traffic] apps") && strstr(err, "out of range"), "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    cr_assert_eq(qr_scenario_set(s, "traffic.pattern=apps", err), QR_OK);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE);
    cr_assert(strstr(err, "required when pattern = apps"), "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    cr_assert_eq(qr_scenario_set(s, "traffic.apps=rpc-think 0>1", err), QR_OK, "%s", err);
    cr_assert_eq(qr_scenario_validate(s, err), QR_EVALUE);
    cr_assert(strstr(err, "only for pattern = apps"), "%s", err);
    cr_assert_eq(qr_scenario_set(s, "traffic.read_rate=flow 0 1Mbps", err), QR_OK, "%s", err);
    qr_scenario_destroy(s);
    qr_scenario_create(&s);
    cr_assert_eq(qr_scenario_set(s, "traffic.apps=telnet 0>1", err), QR_EVALUE);
    cr_assert(strstr(err, "unknown application"), "%s", err);
}
