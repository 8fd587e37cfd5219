/* Multi-tier services: the spec's text (tiers.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/error.h"
#include "qreplay/tiers.h"
#include "qreplay/units.h"

/* A stage's callees by name until every tier is known. */
struct pending_calls {
    char text[QR_TIER_STAGES_MAX * QR_TIER_CALLS_MAX * 40];
};

static int host_list(const char *v, uint32_t *hosts, uint32_t *n, int item, char *errbuf)
{
    *n = 0;
    const char *p = v;
    while (*p) {
        char *e;
        unsigned long h = strtoul(p, &e, 10);
        if (e == p || h > 65535 || (*e && *e != ','))
            return qri_err(errbuf, QR_EVALUE, "item %d: hosts: '%s' is not a list of host numbers",
                           item, v);
        if (*n == QR_TIER_HOSTS_MAX)
            return qri_err(errbuf, QR_EVALUE, "item %d: more than %d hosts", item,
                           QR_TIER_HOSTS_MAX);
        hosts[(*n)++] = (uint32_t)h;
        p = *e ? e + 1 : e;
    }
    if (!*n)
        return qri_err(errbuf, QR_EVALUE, "item %d: hosts= names no host", item);
    return QR_OK;
}

static int number(const char *v, double lo, double hi, double *out)
{
    char *e;
    double x = strtod(v, &e);
    if (e == v || *e || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

static int tier_key(qr_tier *t, struct pending_calls *pc, const char *k, const char *v, int item,
                    char *errbuf)
{
    char err[QR_ERRBUF_SIZE];
    double x;
    if (!strcmp(k, "hosts"))
        return host_list(v, t->hosts, &t->n_hosts, item, errbuf);
    if (!strcmp(k, "service")) {
        if (qr_parse_time_ns(v, &t->service_ns, err) || t->service_ns < 0)
            return qri_err(errbuf, QR_EVALUE, "item %d: service=%s: %s", item, v,
                           t->service_ns < 0 ? "negative" : err);
        return QR_OK;
    }
    if (!strcmp(k, "workers")) {
        if (number(v, 1, 4096, &x) || x != floor(x))
            return qri_err(errbuf, QR_EVALUE, "item %d: workers=%s: a whole number in 1 .. 4096",
                           item, v);
        t->workers = (uint32_t)x;
        return QR_OK;
    }
    if (!strcmp(k, "request") || !strcmp(k, "reply")) {
        uint64_t *b = k[1] == 'e' && k[2] == 'q' ? &t->request_bytes : &t->reply_bytes;
        if (qr_parse_bytes(v, b, err) || !*b || *b > 100000000)
            return qri_err(errbuf, QR_EVALUE, "item %d: %s=%s: bytes in 1 .. 100MB", item, k, v);
        return QR_OK;
    }
    if (!strcmp(k, "calls")) {
        if (strlen(v) >= sizeof pc->text)
            return qri_err(errbuf, QR_EVALUE, "item %d: calls= is too long", item);
        snprintf(pc->text, sizeof pc->text, "%s", v);
        return QR_OK;
    }
    return qri_err(errbuf, QR_EKEY, "item %d: tier %s: unknown key '%s'", item, t->name, k);
}

/* Resolve tier i's calls text against every tier's name. */
static int resolve_calls(qr_tiers_spec *s, uint32_t i, char *text, char *errbuf)
{
    qr_tier *t = &s->tiers[i];
    char *save_stage = NULL;
    for (char *st = strtok_r(text, ",", &save_stage); st; st = strtok_r(NULL, ",", &save_stage)) {
        if (t->n_stages == QR_TIER_STAGES_MAX)
            return qri_err(errbuf, QR_EVALUE, "tier %s: more than %d stages", t->name,
                           QR_TIER_STAGES_MAX);
        qr_tier_stage *g = &t->stages[t->n_stages++];
        char *save_call = NULL;
        for (char *c = strtok_r(st, "+", &save_call); c; c = strtok_r(NULL, "+", &save_call)) {
            if (g->n_calls == QR_TIER_CALLS_MAX)
                return qri_err(errbuf, QR_EVALUE, "tier %s: more than %d calls in a stage", t->name,
                               QR_TIER_CALLS_MAX);
            qr_tier_call *call = &g->calls[g->n_calls++];
            call->probability = 1;
            char *at = strchr(c, '@');
            if (at) {
                *at = 0;
                if (number(at + 1, 0, 1, &call->probability))
                    return qri_err(errbuf, QR_EVALUE,
                                   "tier %s: calls: '%s' is not a probability in [0, 1]", t->name,
                                   at + 1);
            }
            int found = -1;
            for (uint32_t j = 0; j < s->n_tiers; j++)
                if (!strcmp(s->tiers[j].name, c))
                    found = (int)j;
            if (found < 0)
                return qri_err(errbuf, QR_EVALUE, "tier %s: calls an unknown tier '%s'", t->name,
                               c);
            if ((uint32_t)found <= i)
                return qri_err(errbuf, QR_EVALUE,
                               "tier %s: calls '%s', which is not below it (calls go down the "
                               "tiers, in the order they are named)",
                               t->name, c);
            call->tier = (uint32_t)found;
        }
        if (!g->n_calls)
            return qri_err(errbuf, QR_EVALUE, "tier %s: an empty stage", t->name);
    }
    return QR_OK;
}

static int parse_fault(qr_tiers_spec *s, char **w, int nw, int item, char *errbuf)
{
    if (s->n_faults == QR_TIER_FAULTS_MAX)
        return qri_err(errbuf, QR_EVALUE, "item %d: more than %d faults", item, QR_TIER_FAULTS_MAX);
    qr_tier_fault *f = &s->faults[s->n_faults];
    double a, b;
    char err[QR_ERRBUF_SIZE];
    if (nw == 4 && !strcmp(w[1], "slow-node") && !number(w[2], 0, 65535, &a) && a == floor(a) &&
        w[3][0] == 'x' && !number(w[3] + 1, 1, 1e6, &f->factor)) {
        f->kind = QR_TIER_SLOW_NODE;
        f->a = f->b = (uint32_t)a;
    } else if (nw == 5 && !strcmp(w[1], "slow-link") && !number(w[2], 0, 65535, &a) &&
               !number(w[3], 0, 65535, &b) && a == floor(a) && b == floor(b) && a != b &&
               w[4][0] == '+' && !qr_parse_time_ns(w[4] + 1, &f->delay_ns, err) &&
               f->delay_ns >= 0) {
        f->kind = QR_TIER_SLOW_LINK;
        f->a = (uint32_t)a;
        f->b = (uint32_t)b;
    } else {
        return qri_err(errbuf, QR_EVALUE,
                       "item %d: a fault is 'fault slow-node HOST xFACTOR' (FACTOR >= 1) or "
                       "'fault slow-link HOST HOST +DELAY'",
                       item);
    }
    s->n_faults++;
    return QR_OK;
}

static int parse_clients(qr_tiers_spec *s, char **w, int nw, char first[32], int item, char *errbuf)
{
    for (int i = 1; i < nw; i++) {
        char *eq = strchr(w[i], '=');
        if (!eq)
            return qri_err(errbuf, QR_ESYNTAX, "item %d: '%s' is not KEY=VALUE", item, w[i]);
        *eq = 0;
        const char *k = w[i], *v = eq + 1;
        size_t vl = strlen(v);
        if (!strcmp(k, "hosts")) {
            if (host_list(v, s->clients, &s->n_clients, item, errbuf))
                return QR_EVALUE;
        } else if (!strcmp(k, "rate")) {
            char num[64];
            if (vl < 3 || vl >= sizeof num || strcmp(v + vl - 2, "/s"))
                return qri_err(errbuf, QR_EVALUE, "item %d: rate=%s: requests per second, N/s",
                               item, v);
            snprintf(num, sizeof num, "%.*s", (int)(vl - 2), v);
            if (number(num, 1e-3, 1e8, &s->rate_per_s))
                return qri_err(errbuf, QR_EVALUE, "item %d: rate=%s: a number in 0.001 .. 1e8 /s",
                               item, v);
        } else if (!strcmp(k, "first")) {
            snprintf(first, 32, "%s", v);
        } else {
            return qri_err(errbuf, QR_EKEY, "item %d: clients: unknown key '%s'", item, k);
        }
    }
    if (!s->n_clients || !(s->rate_per_s > 0))
        return qri_err(errbuf, QR_EVALUE, "item %d: clients need hosts= and rate=", item);
    return QR_OK;
}

static int parse_tier(qr_tiers_spec *s, struct pending_calls *pc, char **w, int nw, int item,
                      char *errbuf)
{
    if (s->n_tiers == QR_TIERS_MAX)
        return qri_err(errbuf, QR_EVALUE, "item %d: more than %d tiers", item, QR_TIERS_MAX);
    if (nw < 2 || strchr(w[1], '=') || strlen(w[1]) >= 32)
        return qri_err(errbuf, QR_ESYNTAX,
                       "item %d: 'tier NAME KEY=VALUE...' (a name of at most "
                       "31 characters)",
                       item);
    for (uint32_t j = 0; j < s->n_tiers; j++)
        if (!strcmp(s->tiers[j].name, w[1]))
            return qri_err(errbuf, QR_EDUP, "item %d: tier %s named twice", item, w[1]);
    qr_tier *t = &s->tiers[s->n_tiers];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", w[1]);
    t->service_ns = 100000;
    t->workers = 8;
    t->request_bytes = 200;
    t->reply_bytes = 1000;
    for (int i = 2; i < nw; i++) {
        char *eq = strchr(w[i], '=');
        if (!eq)
            return qri_err(errbuf, QR_ESYNTAX, "item %d: '%s' is not KEY=VALUE", item, w[i]);
        *eq = 0;
        if (tier_key(t, &pc[s->n_tiers], w[i], eq + 1, item, errbuf))
            return QR_EVALUE;
    }
    if (!t->n_hosts)
        return qri_err(errbuf, QR_EVALUE, "item %d: tier %s has no hosts=", item, t->name);
    s->n_tiers++;
    return QR_OK;
}

static int check_hosts(const qr_tiers_spec *s, char *errbuf)
{
    uint32_t n = qr_tiers_hosts(s);
    int *owner = calloc(n ? n : 1, sizeof *owner);
    if (!owner)
        return qri_err(errbuf, QR_ENOMEM, "tiers: out of memory");
    int rc = QR_OK;
    for (uint32_t i = 0; !rc && i <= s->n_tiers; i++) {
        const uint32_t *h = i < s->n_tiers ? s->tiers[i].hosts : s->clients;
        uint32_t nh = i < s->n_tiers ? s->tiers[i].n_hosts : s->n_clients;
        for (uint32_t j = 0; !rc && j < nh; j++) {
            if (owner[h[j]])
                rc = qri_err(errbuf, QR_EVALUE, "host %u is named twice (in %s and %s)", h[j],
                             owner[h[j]] <= (int)s->n_tiers ? s->tiers[owner[h[j]] - 1].name
                                                            : "clients",
                             i < s->n_tiers ? s->tiers[i].name : "clients");
            owner[h[j]] = (int)i + 1;
        }
    }
    free(owner);
    return rc;
}

int qr_tiers_parse(const char *text, qr_tiers_spec *out, char *errbuf)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    struct pending_calls *pc = calloc(QR_TIERS_MAX, sizeof *pc);
    if (!copy || !pc) {
        free(copy);
        free(pc);
        return qri_err(errbuf, QR_ENOMEM, "tiers: out of memory");
    }
    memcpy(copy, text, len + 1);
    /* a comment runs from '#' to the end of its line, ';' in it included */
    for (char *c = strchr(copy, '#'); c; c = strchr(c, '#'))
        while (*c && *c != '\n')
            *c++ = ' ';
    char first[32] = "";
    int rc = QR_OK, item = 0;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n;", &save); !rc && line;
         line = strtok_r(NULL, "\n;", &save)) {
        char *w[64];
        int nw = 0;
        char *sw = NULL;
        for (char *t = strtok_r(line, " \t\r", &sw); t && nw < 64; t = strtok_r(NULL, " \t\r", &sw))
            w[nw++] = t;
        if (!nw)
            continue;
        item++;
        if (!strcmp(w[0], "tier"))
            rc = parse_tier(out, pc, w, nw, item, errbuf);
        else if (!strcmp(w[0], "clients"))
            rc = parse_clients(out, w, nw, first, item, errbuf);
        else if (!strcmp(w[0], "fault"))
            rc = parse_fault(out, w, nw, item, errbuf);
        else
            rc =
                qri_err(errbuf, QR_EKEY, "item %d: '%s' is not tier, clients or fault", item, w[0]);
    }
    for (uint32_t i = 0; !rc && i < out->n_tiers; i++)
        rc = resolve_calls(out, i, pc[i].text, errbuf);
    if (!rc && (!out->n_tiers || !out->n_clients))
        rc = qri_err(errbuf, QR_EVALUE, "tiers: a service needs a tier and a clients item");
    for (uint32_t i = 0; !rc && first[0] && i <= out->n_tiers; i++) {
        if (i == out->n_tiers)
            rc = qri_err(errbuf, QR_EVALUE, "clients: first=%s is no tier", first);
        else if (!strcmp(out->tiers[i].name, first)) {
            out->first = i;
            break;
        }
    }
    if (!rc)
        rc = check_hosts(out, errbuf);
    for (uint32_t f = 0; !rc && f < out->n_faults; f++)
        if (out->faults[f].a >= qr_tiers_hosts(out) || out->faults[f].b >= qr_tiers_hosts(out))
            rc =
                qri_err(errbuf, QR_EVALUE, "fault %u names a host of no tier and no client", f + 1);
    free(copy);
    free(pc);
    return rc;
}

int qr_tiers_tier_of(const qr_tiers_spec *s, uint32_t h)
{
    for (uint32_t i = 0; i < s->n_tiers; i++)
        for (uint32_t j = 0; j < s->tiers[i].n_hosts; j++)
            if (s->tiers[i].hosts[j] == h)
                return (int)i;
    return -1;
}

uint32_t qr_tiers_hosts(const qr_tiers_spec *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_tiers; i++)
        for (uint32_t j = 0; j < s->tiers[i].n_hosts; j++)
            n = s->tiers[i].hosts[j] + 1 > n ? s->tiers[i].hosts[j] + 1 : n;
    for (uint32_t j = 0; j < s->n_clients; j++)
        n = s->clients[j] + 1 > n ? s->clients[j] + 1 : n;
    return n;
}
