/* The table-driven option parser of the qreplay program (opt.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt.h"

static const cli_opt help_opt = {"help", 'h', CLI_FLAG, NULL, "this text"};

void cli_args_free(cli_args *a)
{
    if (!a->spec)
        return;
    for (size_t i = 0; i < a->spec->n_opts; i++)
        free(a->lists ? a->lists[i] : NULL);
    free(a->lists);
    free(a->values);
    free(a->counts);
    free(a->pos);
    memset(a, 0, sizeof *a);
}

static int find(const cli_spec *s, const char *name, size_t len, char short_name)
{
    for (size_t i = 0; i < s->n_opts; i++) {
        const cli_opt *o = &s->opts[i];
        if (short_name ? o->short_name == short_name
                       : strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return (int)i;
    }
    return -1;
}

static int add_value(cli_args *a, int i, const char *v)
{
    const cli_opt *o = &a->spec->opts[i];
    a->counts[i]++;
    if (o->kind == CLI_VALUE) {
        a->values[i] = v;
    } else if (o->kind == CLI_LIST) {
        const char **l = realloc(a->lists[i], (size_t)a->counts[i] * sizeof *l);
        if (!l)
            return -1;
        l[a->counts[i] - 1] = v;
        a->lists[i] = l;
    }
    return 0;
}

int cli_parse(const cli_spec *spec, int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->spec = spec;
    size_t n = spec->n_opts ? spec->n_opts : 1;
    a->values = calloc(n, sizeof *a->values);
    a->counts = calloc(n, sizeof *a->counts);
    a->lists = calloc(n, sizeof *a->lists);
    a->pos = calloc((size_t)(argc > 0 ? argc : 1), sizeof *a->pos);
    if (!a->values || !a->counts || !a->lists || !a->pos) {
        cli_args_free(a);
        cli_fail(spec->name, "out of memory");
        return 1;
    }
    int rc = -1, only_args = 0;
    for (int k = 1; k < argc && rc < 0; k++) {
        char *arg = argv[k];
        if (only_args || arg[0] != '-' || arg[1] == '\0') {
            a->pos[a->n_pos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_args = 1;
            continue;
        }
        int i;
        const char *inline_value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            if (len == 4 && strncmp(name, "help", 4) == 0 && !eq) {
                cli_help(spec, stdout);
                rc = 0;
                break;
            }
            i = find(spec, name, len, 0);
            if (eq)
                inline_value = eq + 1;
        } else {
            if (arg[1] == 'h' && arg[2] == '\0') {
                cli_help(spec, stdout);
                rc = 0;
                break;
            }
            i = find(spec, NULL, 0, arg[1]);
            if (arg[2] != '\0')
                inline_value = arg + 2;
        }
        if (i < 0) {
            if (arg[1] == '-' && strchr(arg, '='))
                rc = cli_usage_error(spec->name, "unknown option '%.*s'",
                                     (int)(strchr(arg, '=') - arg), arg);
            else
                rc = cli_usage_error(spec->name, "unknown option '%s'", arg);
            break;
        }
        const cli_opt *o = &spec->opts[i];
        if (o->kind == CLI_FLAG) {
            if (inline_value) {
                rc = cli_usage_error(spec->name, "--%s takes no value", o->name);
                break;
            }
            add_value(a, i, NULL);
            continue;
        }
        const char *v = inline_value;
        if (!v) {
            if (k + 1 >= argc) {
                rc = cli_usage_error(spec->name, "%s needs a value", arg);
                break;
            }
            v = argv[++k];
        }
        if (add_value(a, i, v)) {
            rc = cli_fail(spec->name, "out of memory");
            break;
        }
    }
    if (rc < 0 && (a->n_pos < spec->min_args || (spec->max_args >= 0 && a->n_pos > spec->max_args)))
        rc = cli_usage_error(spec->name, "%s", spec->args_hint);
    if (rc >= 0)
        cli_args_free(a);
    return rc;
}

static int index_of(const cli_args *a, const char *name)
{
    int i = find(a->spec, name, strlen(name), 0);
    if (i < 0) {
        fprintf(stderr, "qreplay %s: internal error: no option --%s\n", a->spec->name, name);
        abort();
    }
    return i;
}

const char *cli_value(const cli_args *a, const char *name)
{
    return a->values[index_of(a, name)];
}

int cli_count(const cli_args *a, const char *name)
{
    return a->counts[index_of(a, name)];
}

const char **cli_list(const cli_args *a, const char *name, int *n)
{
    int i = index_of(a, name);
    *n = a->counts[i];
    return a->lists[i];
}

static void opt_label(const cli_opt *o, char *buf, size_t size)
{
    if (o->short_name)
        snprintf(buf, size, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
    else
        snprintf(buf, size, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void cli_help(const cli_spec *spec, FILE *out)
{
    fprintf(out, "usage: qreplay %s%s%s [OPTIONS]\n\n%s", spec->name,
            spec->synopsis && *spec->synopsis ? " " : "", spec->synopsis ? spec->synopsis : "",
            spec->description);
    size_t width = 0;
    char label[96];
    for (size_t i = 0; i <= spec->n_opts; i++) {
        opt_label(i < spec->n_opts ? &spec->opts[i] : &help_opt, label, sizeof label);
        if (strlen(label) > width)
            width = strlen(label);
    }
    fprintf(out, "\noptions:\n");
    for (size_t i = 0; i <= spec->n_opts; i++) {
        const cli_opt *o = i < spec->n_opts ? &spec->opts[i] : &help_opt;
        opt_label(o, label, sizeof label);
        fprintf(out, "  %-*s  %s\n", (int)width, label, o->help);
    }
    if (spec->epilogue)
        fprintf(out, "\n%s", spec->epilogue);
}
