/* qreplay scenario: validate a scenario file and print it resolved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "qreplay/error.h"
#include "qreplay/scenario.h"

static const cli_opt opts[] = {
    CLI_OPT_SET,
    {"get", 0, CLI_VALUE, "S.K", "print only the resolved value of key K of section S"},
    {"keys", 0, CLI_FLAG, NULL, "list every key with its default and meaning, then exit"},
};

static const cli_spec spec = {
    "scenario",
    "FILE",
    "Validate a scenario file and print it fully resolved: every key with its value,\n"
    "its meaning and where it came from (the file's line, --set, or the default).\n"
    "The output is itself a valid scenario file. 'qreplay scenario --keys' lists every key.\n",
    opts,
    sizeof opts / sizeof opts[0],
    0,
    1,
    "expected one scenario FILE",
    NULL};

static int print_keys(void)
{
    qr_scenario *s;
    if (qr_scenario_create_in(&s, cli_data_dir()))
        return cli_fail("scenario", "out of memory");
    for (size_t i = 0; i < qr_scenario_key_count(); i++) {
        const char *sec, *key, *val, *hlp;
        qr_scenario_key(s, i, &sec, &key, &val, NULL, &hlp);
        char name[64];
        snprintf(name, sizeof name, "%s.%s", sec, key);
        printf("%-24s %-16s %s\n", name, val[0] ? val : "(none)", hlp);
    }
    qr_scenario_destroy(s);
    return 0;
}

static int show(const char *file, const char **sets, int n_sets, const char *get)
{
    qr_scenario *s;
    if (cli_load_scenario("scenario", file, sets, n_sets, &s))
        return 1;
    int rc = 0;
    if (get) {
        char sec[64], key[64];
        const char *value;
        const char *dot = strchr(get, '.');
        if (!dot || dot - get >= (long)sizeof sec || strlen(dot + 1) >= sizeof key) {
            rc = cli_usage_error("scenario", "--get: expected section.key, got '%s'", get);
        } else {
            snprintf(sec, sizeof sec, "%.*s", (int)(dot - get), get);
            snprintf(key, sizeof key, "%s", dot + 1);
            if (qr_scenario_get(s, sec, key, &value))
                rc = cli_fail("scenario", "--get %s: unknown key", get);
            else
                printf("%s\n", value);
        }
    } else {
        printf("; %s, resolved\n", file);
        if (qr_scenario_print(s, stdout))
            rc = cli_fail("scenario", "cannot write the scenario");
    }
    qr_scenario_destroy(s);
    return rc;
}

int qr_cmd_scenario(int argc, char **argv)
{
    cli_args a;
    int rc = cli_parse(&spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    int n_sets;
    const char **sets = cli_list(&a, "set", &n_sets);
    if (cli_count(&a, "keys"))
        rc = print_keys();
    else if (a.n_pos != 1)
        rc = cli_usage_error("scenario", "expected one scenario FILE");
    else
        rc = show(a.pos[0], sets, n_sets, cli_value(&a, "get"));
    cli_args_free(&a);
    return rc;
}
