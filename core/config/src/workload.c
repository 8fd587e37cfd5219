/* Flow-size CDF, Poisson background flows and incast events. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "internal.h"
#include "qreplay/random.h"
#include "qreplay/scenario.h"
#include "qreplay/textio.h"
#include "qreplay/units.h"
#include "qreplay/workload.h"

struct qr_cdf {
    size_t n;
    double *x;
    double *p;
    double mean;
};

static int check_points(const double *x, const double *p, size_t n, const int *lines,
                        const char *name, char *errbuf)
{
#define WHERE(i) name, lines ? lines[i] : (int)(i) + 1
    if (n < 2)
        return qri_err(errbuf, QR_EVALUE, "%s: a CDF needs at least two points", name);
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] >= 0) || !(x[i] <= 1e15))
            return qri_err(errbuf, QR_EVALUE, "%s:%d: size must be a number of bytes in 0 .. 1e15",
                           WHERE(i));
        if (!(p[i] >= 0 && p[i] <= 1))
            return qri_err(errbuf, QR_EVALUE, "%s:%d: probability must lie in [0, 1]", WHERE(i));
        if (i > 0 && x[i] < x[i - 1])
            return qri_err(errbuf, QR_EVALUE, "%s:%d: sizes must not decrease", WHERE(i));
        if (i > 0 && p[i] < p[i - 1])
            return qri_err(errbuf, QR_EVALUE, "%s:%d: probabilities must not decrease", WHERE(i));
    }
    if (p[n - 1] != 1.0)
        return qri_err(errbuf, QR_EVALUE, "%s:%d: the last probability must be 1", WHERE(n - 1));
    return QR_OK;
#undef WHERE
}

static int cdf_build(qr_cdf **out, const double *x, const double *p, size_t n, const int *lines,
                     const char *name, char *errbuf)
{
    int rc = check_points(x, p, n, lines, name, errbuf);
    if (rc)
        return rc;
    qr_cdf *c = calloc(1, sizeof *c);
    if (!c)
        return QR_ENOMEM;
    c->x = malloc(n * sizeof *c->x);
    c->p = malloc(n * sizeof *c->p);
    if (!c->x || !c->p) {
        qr_cdf_destroy(c);
        return QR_ENOMEM;
    }
    memcpy(c->x, x, n * sizeof *x);
    memcpy(c->p, p, n * sizeof *p);
    c->n = n;
    double mean = p[0] * x[0];
    for (size_t i = 0; i + 1 < n; i++)
        mean += (p[i + 1] - p[i]) * 0.5 * (x[i] + x[i + 1]);
    if (!(mean >= 1.0)) {
        qr_cdf_destroy(c);
        return qri_err(errbuf, QR_EVALUE,
                       "%s: the sizes average %.3g bytes: a flow-size CDF must average at least "
                       "one byte",
                       name, mean);
    }
    c->mean = mean;
    *out = c;
    return QR_OK;
}

int qr_cdf_load(qr_cdf **out, const char *path, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "cdf: NULL argument");
    qr_lines *in;
    if (qr_lines_open(&in, path, errbuf))
        return qri_err(errbuf, QR_ENOENT, "%s: cannot open flow-size CDF", path);
    size_t n = 0, cap = 0;
    double *x = NULL, *p = NULL;
    int *lines = NULL;
    char *line;
    long lineno = 0;
    int rc;
    while ((rc = qr_lines_next(in, &line, NULL, &lineno, errbuf)) == QR_OK) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line + strspn(line, " \t");
        if (*s == '\0')
            continue;
        double a, b;
        char extra;
        if (sscanf(s, "%lf %lf %c", &a, &b, &extra) != 2) {
            rc = qri_err(errbuf, QR_ESYNTAX, "%s:%ld: expected 'bytes probability'", path, lineno);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            double *nx = realloc(x, cap * sizeof *x);
            if (nx)
                x = nx;
            double *np = realloc(p, cap * sizeof *p);
            if (np)
                p = np;
            int *nl = realloc(lines, cap * sizeof *lines);
            if (nl)
                lines = nl;
            if (!nx || !np || !nl) {
                rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
                break;
            }
        }
        x[n] = a;
        p[n] = b;
        lines[n] = (int)lineno;
        n++;
    }
    qr_lines_close(in);
    if (rc == QR_END)
        rc = cdf_build(out, x, p, n, lines, path, errbuf);
    free(x);
    free(p);
    free(lines);
    return rc;
}

void qr_cdf_destroy(qr_cdf *c)
{
    if (!c)
        return;
    free(c->x);
    free(c->p);
    free(c);
}

double qr_cdf_mean(const qr_cdf *c)
{
    return c->mean;
}

uint64_t qr_cdf_quantile(const qr_cdf *c, double u)
{
    double v;
    if (u <= c->p[0]) {
        v = c->x[0];
    } else {
        size_t lo = 0, hi = c->n - 1; /* find i with p[i] < u <= p[i+1] */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->p[mid] < u)
                lo = mid;
            else
                hi = mid;
        }
        double dp = c->p[hi] - c->p[lo];
        v = dp > 0 ? c->x[lo] + (u - c->p[lo]) / dp * (c->x[hi] - c->x[lo]) : c->x[hi];
    }
    uint64_t b = (uint64_t)llround(v);
    return b ? b : 1;
}

static int cmp_flow(const void *a, const void *b)
{
    const qr_flow *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    /* ties: background before incast, then by generation order kept in id */
    return x->id < y->id ? -1 : x->id > y->id;
}

struct flowvec {
    qr_flow *v;
    size_t n, cap;
};

static int push_flow(struct flowvec *fv, qr_flow f)
{
    if (fv->n == fv->cap) {
        size_t cap = fv->cap ? 2 * fv->cap : 1024;
        qr_flow *v = realloc(fv->v, cap * sizeof *v);
        if (!v)
            return QR_ENOMEM;
        fv->v = v;
        fv->cap = cap;
    }
    fv->v[fv->n++] = f;
    return QR_OK;
}

/* Hand a built schedule to the caller, sorted by start time with ids in that order; on error
 * release it. */
static int finish_schedule(struct flowvec *fv, int rc, qr_flow **flows, size_t *n_flows)
{
    if (rc) {
        free(fv->v);
        return rc;
    }
    if (fv->n > 1)
        qsort(fv->v, fv->n, sizeof *fv->v, cmp_flow);
    for (size_t i = 0; i < fv->n; i++)
        fv->v[i].id = i;
    *flows = fv->v;
    *n_flows = fv->n;
    return QR_OK;
}

int qr_workload_generate(const qr_workload_cfg *cfg, qr_flow **flows, size_t *n_flows, char *errbuf)
{
    if (!cfg || !flows || !n_flows)
        return qri_err(errbuf, QR_EINVAL, "workload: NULL argument");
    *flows = NULL;
    *n_flows = 0;
    if (cfg->n_hosts < 2)
        return qri_err(errbuf, QR_EINVAL, "workload: need at least 2 hosts, have %u", cfg->n_hosts);
    if (!(cfg->load >= 0 && cfg->load <= 1))
        return qri_err(errbuf, QR_EINVAL, "workload: load %g outside [0, 1]", cfg->load);
    if (cfg->load > 0 && (!cfg->sizes || cfg->link_rate_bps == 0))
        return qri_err(errbuf, QR_EINVAL, "workload: load > 0 needs sizes and a link rate");
    if (cfg->duration_ns < 0)
        return qri_err(errbuf, QR_EINVAL, "workload: negative duration");
    if (!(cfg->incast_rate_per_s >= 0))
        return qri_err(errbuf, QR_EINVAL, "workload: negative incast rate");
    if (cfg->incast_rate_per_s > 0 && (cfg->incast_fanin < 1 || cfg->incast_fanin >= cfg->n_hosts))
        return qri_err(errbuf, QR_EINVAL, "workload: incast fan-in %u needs 1..%u",
                       cfg->incast_fanin, cfg->n_hosts - 1);

    struct flowvec fv = {0};
    int rc = QR_OK;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    uint32_t *others = malloc(cfg->n_hosts * sizeof *others);
    uint32_t *chosen = malloc(cfg->n_hosts * sizeof *chosen);
    if (!r || !others || !chosen)
        rc = QR_ENOMEM;
    uint64_t seq = 0;

    if (!rc && cfg->load > 0 && cfg->duration_ns > 0) {
        gsl_rng_set(r, (unsigned long)qr_seed_derive(cfg->seed, "workload.background", 0));
        double lambda_per_ns = cfg->load * (double)cfg->link_rate_bps * cfg->n_hosts /
                               (8.0 * qr_cdf_mean(cfg->sizes)) / 1e9;
        double expected = lambda_per_ns * (double)cfg->duration_ns;
        if (expected > QR_FLOWS_MAX) {
            gsl_rng_free(r);
            free(others);
            free(chosen);
            return qri_err(errbuf, QR_EVALUE,
                           "workload: the background would start about %.3g flows (mean size %.3g "
                           "bytes), more than %g: lower the load or the duration",
                           expected, qr_cdf_mean(cfg->sizes), (double)QR_FLOWS_MAX);
        }
        double t = 0;
        for (;;) {
            t += gsl_ran_exponential(r, 1.0 / lambda_per_ns);
            if (t >= (double)cfg->duration_ns)
                break;
            qr_flow f = {.id = seq++, .start_ns = (int64_t)t};
            f.src = (uint32_t)gsl_rng_uniform_int(r, cfg->n_hosts);
            f.dst = (uint32_t)gsl_rng_uniform_int(r, cfg->n_hosts - 1);
            if (f.dst >= f.src)
                f.dst++; /* uniform over the other hosts */
            f.bytes = qr_cdf_quantile(cfg->sizes, gsl_rng_uniform(r));
            if ((rc = push_flow(&fv, f)))
                break;
        }
    }
    if (!rc && cfg->incast_rate_per_s > 0 && cfg->duration_ns > 0) {
        double expected =
            cfg->incast_rate_per_s * (double)cfg->duration_ns / 1e9 * (double)cfg->incast_fanin;
        if (expected + (double)fv.n > QR_FLOWS_MAX) {
            gsl_rng_free(r);
            free(others);
            free(chosen);
            free(fv.v);
            return qri_err(errbuf, QR_EVALUE,
                           "workload: the incasts would start about %.3g flows (%g/s of %u "
                           "servers for %.3g s), more than %g with the background: lower "
                           "[traffic] incast_rate, incast_fanin or duration",
                           expected, cfg->incast_rate_per_s, cfg->incast_fanin,
                           (double)cfg->duration_ns / 1e9, (double)QR_FLOWS_MAX);
        }
        gsl_rng_set(r, (unsigned long)qr_seed_derive(cfg->seed, "workload.incast", 0));
        double mean_gap_ns = 1e9 / cfg->incast_rate_per_s;
        double t = 0;
        uint32_t event = 0;
        for (;;) {
            t += gsl_ran_exponential(r, mean_gap_ns);
            if (t >= (double)cfg->duration_ns)
                break;
            event++;
            uint32_t client = (uint32_t)gsl_rng_uniform_int(r, cfg->n_hosts);
            size_t n = 0;
            for (uint32_t h = 0; h < cfg->n_hosts; h++)
                if (h != client)
                    others[n++] = h;
            gsl_ran_choose(r, chosen, cfg->incast_fanin, others, n, sizeof *others);
            for (uint32_t i = 0; i < cfg->incast_fanin && !rc; i++) {
                qr_flow f = {.id = seq++,
                             .src = chosen[i],
                             .dst = client,
                             .bytes = cfg->incast_size_bytes,
                             .start_ns = (int64_t)t,
                             .incast = event};
                rc = push_flow(&fv, f);
            }
            if (rc)
                break;
        }
    }
    gsl_rng_free(r);
    free(others);
    free(chosen);
    return finish_schedule(&fv, rc, flows, n_flows);
}

int qr_flows_load(const char *path, uint32_t n_hosts, qr_flow **flows, size_t *n_flows,
                  char *errbuf)
{
    if (!path || !flows || !n_flows)
        return qri_err(errbuf, QR_EINVAL, "flows: NULL argument");
    *flows = NULL;
    *n_flows = 0;
    qr_lines *in;
    int orc = qr_lines_open(&in, path, errbuf); /* its message names the file and why */
    if (orc)
        return orc;
    static const char *const names[4] = {"src", "dst", "bytes", "start"};
    struct flowvec fv = {0};
    char *line;
    long lineno = 0;
    int header = 0, rc;
    while ((rc = qr_lines_next(in, &line, NULL, &lineno, errbuf)) == QR_OK) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (line[strspn(line, " \t")] == '\0')
            continue;
        /* exactly four comma-separated fields, each trimmed; an empty one is an error */
        char *fields[4];
        int nf = 0;
        for (char *f = line;; nf++) {
            char *comma = strchr(f, ',');
            if (nf < 4) {
                if (comma)
                    *comma = '\0';
                f += strspn(f, " \t");
                size_t n = strlen(f);
                while (n && (f[n - 1] == ' ' || f[n - 1] == '\t'))
                    f[--n] = '\0';
                fields[nf] = f;
            }
            if (!comma)
                break;
            f = comma + 1;
        }
        nf++;
        if (!header) {
            if (nf != 4 || strcmp(fields[0], "src") || strcmp(fields[1], "dst") ||
                strcmp(fields[2], "bytes") || strcmp(fields[3], "start")) {
                rc = qri_err(errbuf, QR_ESYNTAX,
                             "%s:%ld: expected the header 'src,dst,bytes,start'", path, lineno);
                break;
            }
            header = 1;
            continue;
        }
        if (nf != 4) {
            rc = qri_err(errbuf, QR_ESYNTAX, "%s:%ld: %d fields, expected 4: src,dst,bytes,start",
                         path, lineno, nf);
            break;
        }
        for (int k = 0; k < 4 && !rc; k++)
            if (fields[k][0] == '\0')
                rc = qri_err(errbuf, QR_ESYNTAX, "%s:%ld: field %d (%s) is empty", path, lineno,
                             k + 1, names[k]);
        if (rc)
            break;
        int64_t src, dst;
        qr_flow f = {.id = fv.n};
        if ((rc = qr_parse_int(fields[0], 0, (int64_t)n_hosts - 1, &src, errbuf)) ||
            (rc = qr_parse_int(fields[1], 0, (int64_t)n_hosts - 1, &dst, errbuf)) ||
            (rc = qr_parse_bytes(fields[2], &f.bytes, errbuf)) ||
            (rc = qr_parse_time_ns(fields[3], &f.start_ns, errbuf))) {
            qri_err_prefix(errbuf, "%s:%ld", path, lineno);
            break;
        }
        if (src == dst) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: src and dst are both host %lld", path, lineno,
                         (long long)src);
            break;
        }
        if (f.bytes == 0) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: a flow of 0 bytes", path, lineno);
            break;
        }
        if (f.start_ns < 0) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: a negative start time", path, lineno);
            break;
        }
        f.src = (uint32_t)src;
        f.dst = (uint32_t)dst;
        if (fv.n >= QR_FLOWS_MAX) {
            rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: more than %d flows", path, lineno,
                         QR_FLOWS_MAX);
            break;
        }
        rc = push_flow(&fv, f);
    }
    qr_lines_close(in);
    if (rc == QR_END)
        rc = header ? QR_OK : qri_err(errbuf, QR_ESYNTAX, "%s: empty flow list (no header)", path);
    return finish_schedule(&fv, rc, flows, n_flows);
}

int qr_workload_from_config(const qr_config *c, qr_flow **flows, size_t *n_flows, char *errbuf)
{
    char err[QR_ERRBUF_SIZE];
    uint32_t hosts = qr_config_hosts(c);
    if (c->traffic.pattern == QR_PATTERN_APPS)
        return qri_err(errbuf, QR_EVALUE,
                       "[traffic] pattern = apps: real applications run only on the testbed "
                       "(qreplay testbed); a simulation needs flows or websearch");
    if (c->traffic.pattern == QR_PATTERN_FLOWS) {
        int rc = qr_flows_load(c->traffic.flows, hosts, flows, n_flows, err);
        return rc ? qri_err(errbuf, rc, "[traffic] flows: %s", err) : QR_OK;
    }
    qr_cdf *cdf = NULL;
    if (c->traffic.load > 0) {
        int rc = qr_cdf_load(&cdf, c->traffic.size_cdf, err);
        if (rc)
            return qri_err(errbuf, rc, "[traffic] size_cdf: %s", err);
    }
    qr_workload_cfg w = {.seed = c->run.seed,
                         .n_hosts = hosts,
                         .link_rate_bps = c->links.rate_bps,
                         .load = c->traffic.load,
                         .duration_ns = c->traffic.duration_ns,
                         .sizes = cdf,
                         .incast_rate_per_s = c->traffic.incast_rate_per_s,
                         .incast_fanin = (uint32_t)c->traffic.incast_fanin,
                         .incast_size_bytes = c->traffic.incast_size_bytes};
    int rc = qr_workload_generate(&w, flows, n_flows, errbuf);
    qr_cdf_destroy(cdf);
    return rc;
}

void qr_flows_free(qr_flow *flows)
{
    free(flows);
}

double qr_workload_offered_load(const struct qr_config *c, const qr_flow *flows, size_t n,
                                uint32_t hosts)
{
    uint64_t bg_bytes = 0;
    for (size_t i = 0; i < n; i++)
        if (flows[i].incast == 0)
            bg_bytes += flows[i].bytes;
    if (c->traffic.duration_ns <= 0 || !hosts)
        return 0.0;
    return (double)bg_bytes * 8.0 /
           ((double)c->traffic.duration_ns * 1e-9 * (double)c->links.rate_bps * hosts);
}
