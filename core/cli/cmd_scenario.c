#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "qreplay/error.h"
#include "qreplay/scenario.h"

static void help(void)
{
    printf("usage: qreplay scenario FILE [--set section.key=value ...] [--get section.key]\n"
           "       qreplay scenario --keys\n\n"
           "Validate a scenario file and print it fully resolved: every key with its value,\n"
           "its meaning and where it came from (the file's line, --set, or the default).\n"
           "The output is itself a valid scenario file.\n\n"
           "options:\n"
           "  --set S.K=V   override key K of section S (repeatable)\n"
           "  --get S.K     print only the resolved value of key K of section S\n"
           "  --keys        list every key with its default and meaning, then exit\n"
           "  --quiet       accepted for symmetry; this command prints only its result\n"
           "  --help        this text\n");
}

int qr_cmd_scenario(int argc, char **argv)
{
    static const struct option opts[] = {{"set", required_argument, NULL, 's'},
                                         {"keys", no_argument, NULL, 'k'},
                                         {"get", required_argument, NULL, 'g'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *sets[64];
    int n_sets = 0, keys = 0, c;
    const char *get = NULL;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (n_sets == 64)
                return cli_usage_error("scenario", "too many --set options");
            sets[n_sets++] = optarg;
            break;
        case 'k': keys = 1; break;
        case 'g': get = optarg; break;
        case 'q': break;
        case 'h': help(); return 0;
        case ':': return cli_usage_error("scenario", "%s needs a value", argv[optind - 1]);
        default: return cli_usage_error("scenario", "unknown option '%s'", argv[optind - 1]);
        }
    }
    qr_scenario *s;
    if (qr_scenario_create(&s))
        return cli_fail("scenario", "out of memory");
    if (keys) {
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
    qr_scenario_destroy(s);
    if (optind != argc - 1)
        return cli_usage_error("scenario", "expected one scenario FILE");
    if (cli_load_scenario("scenario", argv[optind], sets, n_sets, &s))
        return 1;
    if (get) {
        char sec[64], key[64];
        const char *value;
        const char *dot = strchr(get, '.');
        if (!dot || dot - get >= (long)sizeof sec || strlen(dot + 1) >= sizeof key) {
            qr_scenario_destroy(s);
            return cli_usage_error("scenario", "--get: expected section.key, got '%s'", get);
        }
        snprintf(sec, sizeof sec, "%.*s", (int)(dot - get), get);
        snprintf(key, sizeof key, "%s", dot + 1);
        if (qr_scenario_get(s, sec, key, &value)) {
            qr_scenario_destroy(s);
            return cli_fail("scenario", "--get %s: unknown key", get);
        }
        printf("%s\n", value);
        qr_scenario_destroy(s);
        return 0;
    }
    printf("; %s, resolved\n", argv[optind]);
    qr_scenario_print(s, stdout);
    qr_scenario_destroy(s);
    return 0;
}
