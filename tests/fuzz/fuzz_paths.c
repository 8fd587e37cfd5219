/* WAP5's inputs: message traces, multi-tier service specs and services' truths. Every input is
 * read or refused with a message; a trace that reads is linked, nested and convolved, and every
 * parent found is another message of the trace (or none); a spec that parses, with few enough
 * requests, runs to the end with every request answered; a truth that reads is matched to the
 * messages its own rows describe, every row matched and every parent another message, a root or
 * unknown. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/messages.h"
#include "qreplay/paths.h"
#include "qreplay/tiers.h"
#include "qreplay/tiers_truth.h"

static void
check_parents(const qr_paths* p, size_t n)
{
    const uint64_t* par = qr_paths_parents(p, NULL);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(par[i] == QR_PATHS_ROOT || (par[i] < n && par[i] != i),
                   "message %zu's parent",
                   i);
    size_t np;
    const qr_paths_pattern* pt = qr_paths_patterns(p, &np);
    uint64_t count = 0;
    for (size_t i = 0; i < np; i++)
        count += pt[i].count;
    FUZZ_CHECK(count == qr_paths_get_stats(p)->roots,
               "%llu best instances, %llu roots",
               (unsigned long long)count,
               (unsigned long long)qr_paths_get_stats(p)->roots);
}

static void
trace(const char* path)
{
    char err[QR_ERRBUF_SIZE] = "";
    qr_msg* m = NULL;
    size_t n = 0;
    uint32_t hosts = 0;
    int rc = qr_msgs_read(path, &m, &n, &hosts, err);
    FUZZ_CHECK(rc == QR_OK || err[0], "trace refused without a message");
    if (rc == QR_OK && n <= 2000)
    {
        qr_paths* p = NULL;
        FUZZ_CHECK(qr_paths_link(&p, m, n, hosts, NULL, err) == QR_OK, "link: %s", err);
        check_parents(p, n);
        qr_paths_destroy(p);
        FUZZ_CHECK(qr_paths_nest(&p, m, n, hosts, NULL, err) == QR_OK, "nest: %s", err);
        check_parents(p, n);
        qr_paths_destroy(p);
        FUZZ_CHECK(qr_paths_conv(&p, m, n, hosts, NULL, err) == QR_OK, "conv: %s", err);
        check_parents(p, n);
        qr_paths_destroy(p);
    }
    free(m);
}

static void
spec(const char* text)
{
    char err[QR_ERRBUF_SIZE] = "";
    qr_tiers_spec s;
    int rc = qr_tiers_parse(text, &s, err);
    FUZZ_CHECK(rc == QR_OK || err[0], "spec refused without a message");
    if (rc != QR_OK || s.rate_per_s * 0.002 > 200)
        return;
    qr_tiers_net net;
    qr_tiers_net_default(&net);
    net.duration_ns = 2000000;
    qr_tiers_trace_msg* t = NULL;
    int64_t* off = NULL;
    size_t n = 0;
    rc = qr_tiers_simulate(&s, &net, 1, &t, &n, &off, err);
    FUZZ_CHECK(rc == QR_OK, "simulate: %s", err);
    size_t replies = 0;
    for (size_t i = 0; i < n; i++)
        replies += t[i].m.reply;
    FUZZ_CHECK(2 * replies == n, "%zu messages, %zu replies: a call unanswered", n, replies);
    free(t);
    free(off);
}

static void
truth(const char* path)
{
    char err[QR_ERRBUF_SIZE] = "";
    qr_tiers_truth* t = NULL;
    int rc = qr_tiers_truth_read(path, &t, err);
    FUZZ_CHECK(rc == QR_OK || err[0], "truth refused without a message");
    if (rc != QR_OK)
        return;
    size_t nr, n = 0;
    const qr_tiers_truth_row* r = qr_tiers_truth_rows(t, &nr);
    /* the messages the rows with numbered connections describe, in order of place */
    qr_msg* m = (qr_msg*)(malloc((nr ? nr : 1) * sizeof *m));
    int numbered = 1;
    for (size_t i = 0; i < nr; i++)
    {
        char* e;
        unsigned long c = strtoul(r[i].conn, &e, 10);
        numbered = numbered && !*e;
        m[n++] = (qr_msg){r[i].src, r[i].dst, (uint32_t)c, 0, 0, 1};
    }
    uint64_t* par = (uint64_t*)(malloc((n ? n : 1) * sizeof *par));
    int64_t* net = (int64_t*)(malloc((n ? n : 1) * sizeof *net));
    qr_tiers_truth_match_report rep;
    if (numbered && n <= 5000)
    {
        FUZZ_CHECK(qr_tiers_truth_match(t, m, n, NULL, 0, par, net, &rep, err) == QR_OK,
                   "match: %s",
                   err);
        FUZZ_CHECK(rep.matched + rep.no_truth == n, "%zu messages, counts disagree", n);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(par[i] == UINT64_MAX || par[i] == QR_TRUTH_NO_PARENT ||
                           (par[i] < n && par[i] != i),
                       "message %zu's true parent",
                       i);
    }
    free(m);
    free(par);
    free(net);
    qr_tiers_truth_destroy(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1 || size > 20000)
        return 0;
    if (data[0] % 3 == 1 || data[0] % 3 == 2)
    {
        const char* path = fuzz_file(data + 1, size - 1, ".csv");
        if (data[0] % 3 == 1)
            trace(path);
        else
            truth(path);
        unlink(path);
    }
    else
    {
        char* text = malloc(size);
        memcpy(text, data + 1, size - 1);
        text[size - 1] = 0;
        spec(text);
        free(text);
    }
    return 0;
}
