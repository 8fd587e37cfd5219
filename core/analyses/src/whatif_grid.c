/* What-if analysis: the grid of configurations (whatif.h): the --vary keys, their values, the
 * points and each point's scenario. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map.h"
#include "qreplay/buffer.h"
#include "qreplay/error.h"
#include "qreplay/flowtable.h"
#include "qreplay/metrics.h"
#include "qreplay/queuelog.h"
#include "qreplay/switchport.h"
#include "qreplay/topology.h"
#include "qreplay/whatif.h"

const char *const qr_whatif_keys[] = {"buffer.size",      "buffer.alpha",         "buffer.policy",
                                      "buffer.port_size", "buffer.ecn_threshold", "links.rate",
                                      "links.delay",      "replay.margin",        NULL};

const char *const qr_whatif_layer_names[QR_WHATIF_LAYERS + 1] = {"edge", "agg", "core", "all"};

/* ---- the grid ---- */

struct qr_whatif_grid {
    char *rec_h5, *base_dir;
    size_t n_keys;
    char keys[QR_WHATIF_MAX_KEYS][48];
    size_t n_points, baseline;
    char (*values)[QR_WHATIF_MAX_KEYS][QR_WHATIF_VALUE_SIZE]; /* per point */
};

static int scenario_with(const qr_whatif_grid *g, const char *const *assign, size_t n,
                         qr_scenario **out, char *errbuf)
{
    qr_scenario *s = NULL;
    int rc = qr_scenario_from_h5(&s, g->rec_h5, NULL, g->base_dir, errbuf);
    for (size_t i = 0; !rc && i < n; i++)
        rc = qr_scenario_set(s, assign[i], errbuf);
    if (rc) {
        qr_scenario_destroy(s);
        return rc;
    }
    *out = s;
    return QR_OK;
}

static int split_key(const char *key, char *section, char *name)
{
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || (size_t)(dot - key) >= 32 || strlen(dot + 1) >= 32)
        return QR_EKEY;
    memcpy(section, key, (size_t)(dot - key));
    section[dot - key] = 0;
    strcpy(name, dot + 1);
    return QR_OK;
}

static int is_whatif_key(const char *key)
{
    for (size_t i = 0; qr_whatif_keys[i]; i++)
        if (!strcmp(key, qr_whatif_keys[i]))
            return 1;
    return 0;
}

/* One key's values as given (trimmed), each checked by applying it; two values that resolve to
 * the same configuration (1MB and 1000KB) are an error. base: the recording's configuration;
 * *has_base: whether one of them resolves to it. */
static int parse_values(qr_whatif_grid *g, const char *key, char *list,
                        char (*vals)[QR_WHATIF_VALUE_SIZE], size_t *n_vals, const qr_config *base,
                        int *has_base, size_t *base_index, char *errbuf)
{
    *n_vals = 0;
    *has_base = 0;
    if (!*qri_trim(list))
        return qri_err(errbuf, QR_EVALUE, "--vary %s: no values (give V1,V2,...)", key);
    size_t len = strlen(list);
    if (list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return qri_err(errbuf, QR_EVALUE, "--vary %s=%s: an empty value in the list", key, list);
    qr_config *seen = malloc(QR_WHATIF_MAX_POINTS * sizeof *seen);
    if (!seen)
        return QR_ENOMEM;
    char *save = NULL;
    int rc = QR_OK;
    for (char *v = strtok_r(list, ",", &save); !rc && v; v = strtok_r(NULL, ",", &save)) {
        v = qri_trim(v);
        char assign[256];
        if (!*v) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: an empty value in the list", key);
            break;
        }
        if (*n_vals == QR_WHATIF_MAX_POINTS) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: more than %d values", key,
                         QR_WHATIF_MAX_POINTS);
            break;
        }
        if (strlen(v) >= QR_WHATIF_VALUE_SIZE ||
            (size_t)snprintf(assign, sizeof assign, "%s=%s", key, v) >= sizeof assign) {
            rc = qri_err(errbuf, QR_EVALUE, "--vary %s: value '%.20s...' too long", key, v);
            break;
        }
        qr_scenario *s;
        const char *a = assign;
        char detail[QR_ERRBUF_SIZE];
        rc = scenario_with(g, &a, 1, &s, detail);
        if (rc) {
            rc = qri_err(errbuf, rc, "--vary %s: value '%s': %s", key, v, detail);
            break;
        }
        /* the resolved configurations are plain data, zeroed when made: equal values compare
         * equal byte for byte */
        seen[*n_vals] = *qr_scenario_config(s);
        qr_scenario_destroy(s);
        for (size_t j = 0; !rc && j < *n_vals; j++)
            if (!memcmp(&seen[j], &seen[*n_vals], sizeof *seen))
                rc = qri_err(errbuf, QR_EVALUE,
                             "--vary %s: value '%s' is listed twice (the same as '%s')", key, v,
                             vals[j]);
        if (rc)
            break;
        if (!memcmp(&seen[*n_vals], base, sizeof *base)) {
            *has_base = 1;
            *base_index = *n_vals;
        }
        strcpy(vals[(*n_vals)++], v);
    }
    free(seen);
    return rc;
}

/* The values of every --vary key as parsed, and where the baseline's value is among them. */
struct axes {
    char (*vals)[QR_WHATIF_MAX_POINTS][QR_WHATIF_VALUE_SIZE];
    size_t n_vals[QR_WHATIF_MAX_KEYS], base_idx[QR_WHATIF_MAX_KEYS];
    int has_base[QR_WHATIF_MAX_KEYS];
    char base_vals[QR_WHATIF_MAX_KEYS][QR_WHATIF_VALUE_SIZE];
};

/* The key name of --vary argument `arg` into key, checked (a what-if key, with values). */
static int vary_key(const char *arg, char key[48], char *errbuf)
{
    const char *eq = strchr(arg, '=');
    size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (klen >= 48)
        return qri_err(errbuf, QR_EKEY, "--vary %.40s...: not a what-if key", arg);
    memcpy(key, arg, klen);
    key[klen] = 0;
    if (!is_whatif_key(key)) {
        char list[256] = "";
        for (size_t j = 0; qr_whatif_keys[j]; j++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                     qr_whatif_keys[j]);
        return qri_err(errbuf, QR_EKEY, "--vary %s: not a what-if key (one of: %s)", key, list);
    }
    if (!eq)
        return qri_err(errbuf, QR_EVALUE, "--vary %s: no values (give %s=V1,V2,...)", key, key);
    return QR_OK;
}

/* --vary argument i (KEY=V1,V2,...) into the grid's key i and its values into ax. */
static int parse_vary(qr_whatif_grid *g, const char *arg, size_t i, const qr_scenario *base,
                      struct axes *ax, char *errbuf)
{
    char key[48];
    int rc = vary_key(arg, key, errbuf);
    if (rc)
        return rc;
    for (size_t j = 0; j < i; j++)
        if (!strcmp(g->keys[j], key))
            return qri_err(errbuf, QR_EVALUE, "--vary %s: given twice", key);
    strcpy(g->keys[i], key);
    g->n_keys = i + 1;
    char *list = strdup(strchr(arg, '=') + 1);
    if (!list)
        return QR_ENOMEM;
    rc = parse_values(g, key, list, ax->vals[i], &ax->n_vals[i], qr_scenario_config(base),
                      &ax->has_base[i], &ax->base_idx[i], errbuf);
    free(list);
    if (!rc) {
        char section[32], name[32];
        const char *v;
        split_key(key, section, name);
        rc = qr_scenario_get(base, section, name, &v);
        if (!rc)
            qri_strlcpy(ax->base_vals[i], v, QR_WHATIF_VALUE_SIZE);
    }
    return rc;
}

/* The grid's points: the product of the keys' values, with the baseline first when it is not in
 * the product. */
static int make_points(qr_whatif_grid *g, const struct axes *ax, size_t n_vary, char *errbuf)
{
    size_t product = 1;
    for (size_t i = 0; i < n_vary; i++) {
        product *= ax->n_vals[i];
        if (product > QR_WHATIF_MAX_POINTS)
            return qri_err(errbuf, QR_EVALUE, "--vary: the grid has more than %d points",
                           QR_WHATIF_MAX_POINTS);
    }
    int base_in = 1; /* is the baseline in the product? */
    for (size_t i = 0; i < n_vary; i++)
        base_in &= ax->has_base[i];
    g->n_points = product + !base_in;
    g->values = calloc(g->n_points, sizeof *g->values);
    if (!g->values)
        return QR_ENOMEM;
    size_t p = 0;
    if (!base_in) {
        for (size_t i = 0; i < n_vary; i++)
            strcpy(g->values[0][i], ax->base_vals[i]);
        g->baseline = 0;
        p = 1;
    }
    for (size_t idx = 0; idx < product; idx++, p++) {
        size_t rem = idx;
        int is_base = 1;
        for (size_t i = n_vary; i-- > 0;) {
            strcpy(g->values[p][i], ax->vals[i][rem % ax->n_vals[i]]);
            is_base &= ax->has_base[i] && rem % ax->n_vals[i] == ax->base_idx[i];
            rem /= ax->n_vals[i];
        }
        if (is_base && base_in)
            g->baseline = p;
    }
    return QR_OK;
}

/* Every point must be a valid scenario. */
static int check_points(const qr_whatif_grid *g, size_t n_vary, char *errbuf)
{
    for (size_t p = 0; p < g->n_points; p++) {
        qr_scenario *s;
        char detail[QR_ERRBUF_SIZE];
        int rc = qr_whatif_grid_scenario(g, p, &s, detail);
        if (!rc) {
            rc = qr_scenario_validate(s, detail);
            qr_scenario_destroy(s);
        }
        if (rc) {
            char what[512] = "";
            for (size_t i = 0; i < n_vary; i++)
                snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s=%s", i ? " " : "",
                         g->keys[i], g->values[p][i]);
            return qri_err(errbuf, rc, "--vary: the point %s is not a valid scenario: %s", what,
                           detail);
        }
    }
    return QR_OK;
}

int qr_whatif_grid_parse(qr_whatif_grid **out, const char *const *vary, size_t n_vary,
                         const char *rec_h5, const char *base_dir, char *errbuf)
{
    if (n_vary == 0)
        return qri_err(errbuf, QR_EVALUE, "no --vary given (e.g. --vary buffer.size=1MB,2MB,4MB)");
    if (n_vary > QR_WHATIF_MAX_KEYS)
        return qri_err(errbuf, QR_EVALUE, "at most %d --vary keys", QR_WHATIF_MAX_KEYS);
    qr_whatif_grid *g = calloc(1, sizeof *g);
    struct axes *ax = calloc(1, sizeof *ax);
    if (!g || !ax) {
        free(g);
        free(ax);
        return QR_ENOMEM;
    }
    g->rec_h5 = strdup(rec_h5);
    g->base_dir = strdup(base_dir ? base_dir : ".");
    ax->vals = calloc(n_vary, sizeof *ax->vals);
    int rc = g->rec_h5 && g->base_dir && ax->vals ? QR_OK : QR_ENOMEM;
    qr_scenario *base = NULL;
    if (!rc)
        rc = scenario_with(g, NULL, 0, &base, errbuf);
    for (size_t i = 0; !rc && i < n_vary; i++)
        rc = parse_vary(g, vary[i], i, base, ax, errbuf);
    if (!rc)
        rc = make_points(g, ax, n_vary, errbuf);
    if (!rc)
        rc = check_points(g, n_vary, errbuf);
    qr_scenario_destroy(base);
    free(ax->vals);
    free(ax);
    if (rc) {
        qr_whatif_grid_destroy(g);
        return rc;
    }
    *out = g;
    return QR_OK;
}

void qr_whatif_grid_destroy(qr_whatif_grid *g)
{
    if (!g)
        return;
    free(g->rec_h5);
    free(g->base_dir);
    free(g->values);
    free(g);
}

size_t qr_whatif_grid_keys(const qr_whatif_grid *g)
{
    return g->n_keys;
}

const char *qr_whatif_grid_key(const qr_whatif_grid *g, size_t k)
{
    return k < g->n_keys ? g->keys[k] : NULL;
}

size_t qr_whatif_grid_points(const qr_whatif_grid *g)
{
    return g->n_points;
}

size_t qr_whatif_grid_baseline(const qr_whatif_grid *g)
{
    return g->baseline;
}

const char *qr_whatif_grid_value(const qr_whatif_grid *g, size_t point, size_t k)
{
    return point < g->n_points && k < g->n_keys ? g->values[point][k] : NULL;
}

int qr_whatif_grid_scenario(const qr_whatif_grid *g, size_t point, qr_scenario **out, char *errbuf)
{
    if (point >= g->n_points)
        return qri_err(errbuf, QR_EINVAL, "no grid point %zu", point);
    char assign[QR_WHATIF_MAX_KEYS][96];
    const char *a[QR_WHATIF_MAX_KEYS];
    for (size_t i = 0; i < g->n_keys; i++) {
        snprintf(assign[i], sizeof assign[i], "%s=%s", g->keys[i], g->values[point][i]);
        a[i] = assign[i];
    }
    return scenario_with(g, a, g->n_keys, out, errbuf);
}

/* ---- measuring one run ---- */
