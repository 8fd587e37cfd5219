/* The qreplay program's option parser: every command declares its options once, in a table, and
 * its --help text is generated from that table. The same rules everywhere: "--name value",
 * "--name=value", "-o value", options and arguments in any order, "--" ends the options; an
 * unknown option or a missing value is a usage error (exit 2) naming it. --help is always there. */
#ifndef QREPLAY_CLI_OPT_H
#define QREPLAY_CLI_OPT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CLI_FLAG,  /* no value: counted */
    CLI_VALUE, /* one value (the last one given wins) */
    CLI_LIST,  /* repeatable: every value kept, in order */
} cli_opt_kind;

typedef struct cli_opt {
    const char *name; /* long name without "--" */
    char short_name;  /* e.g. 'o' for -o, or 0 */
    cli_opt_kind kind;
    const char *arg;  /* the value's placeholder in --help ("DIR", "S.K=V"); NULL for flags */
    const char *help; /* one line */
} cli_opt;

typedef struct cli_spec {
    const char *name;        /* the command, e.g. "run" */
    const char *synopsis;    /* its arguments, e.g. "SCENARIO" */
    const char *description; /* what it does: paragraphs, lines of at most 96 columns */
    const cli_opt *opts;
    size_t n_opts;
    int min_args, max_args; /* positional arguments (max -1: any number) */
    const char *args_hint;  /* the usage error for a wrong number of them */
    const char *epilogue;   /* printed after the options (examples), or NULL */
} cli_spec;

/* What the command line said. */
typedef struct cli_args {
    const cli_spec *spec;
    const char **values; /* per option: the value (CLI_VALUE), NULL if not given */
    int *counts;         /* per option: how many times given */
    const char ***lists; /* per option (CLI_LIST): the values, counts[i] of them */
    char **pos;          /* positional arguments */
    int n_pos;
} cli_args;

/* Parse argv (argv[0] = the command's name). Returns -1 when the command should go on, 0 after
 * printing --help, 2 after printing a usage error. On -1 the caller owns *a (cli_args_free). */
int cli_parse(const cli_spec *spec, int argc, char **argv, cli_args *a);
void cli_args_free(cli_args *a);

/* The option's value (CLI_VALUE), or NULL if it was not given; unknown names abort. */
const char *cli_value(const cli_args *a, const char *name);
/* How many times the option was given. */
int cli_count(const cli_args *a, const char *name);
/* The values of a CLI_LIST option (borrowed; *n of them). */
const char **cli_list(const cli_args *a, const char *name, int *n);

/* The generated help text. */
void cli_help(const cli_spec *spec, FILE *out);

/* The options every scenario-driven command shares, to put in its table. */
#define CLI_OPT_SET                                                                                \
    {                                                                                              \
        "set", 0, CLI_LIST, "S.K=V", "override key K of section S of the scenario (repeatable)"    \
    }
#define CLI_OPT_OUT(what)                                                                          \
    {                                                                                              \
        "out", 'o', CLI_VALUE, "DIR", what                                                         \
    }
/* -o naming one output file (not a folder). */
#define CLI_OPT_OUT_FILE(what)                                                                     \
    {                                                                                              \
        "out", 'o', CLI_VALUE, "FILE", what                                                        \
    }
#define CLI_OPT_ENGINE                                                                             \
    {                                                                                              \
        "engine", 0, CLI_VALUE, "E",                                                               \
            "replay engine: native (default: the core's, exact against ns-3 and faster) or\n"      \
            "                         ns3 (the ns-3 replay, the reference)"                        \
    }
#define CLI_OPT_QUIET                                                                              \
    {                                                                                              \
        "quiet", 'q', CLI_FLAG, NULL, "print only errors (no progress, no summary)"                \
    }
#define CLI_OPT_NO_FIGURES                                                                         \
    {                                                                                              \
        "no-figures", 0, CLI_FLAG, NULL, "do not draw the figures"                                 \
    }

#ifdef __cplusplus
}
#endif
#endif
