/* qreplay: Pingmesh's drop rate from TCP connect times (pingmesh_analyze.h). */
#include <math.h>

#include "qreplay/pingmesh_analyze.h"

uint32_t qr_pingmesh_syn_timeouts(int64_t rtt_ns, int64_t wait_ns, int64_t rto_ns, int *failed)
{
    *failed = rtt_ns < 0;
    if (rto_ns <= 0)
        return 0;
    /* the time a connect waits after k lost attempts: rto (2^k - 1); a quarter of rto of slack
     * for the path's own round trips */
    int64_t t = *failed ? wait_ns : rtt_ns + rto_ns / 4;
    uint32_t k = 0;
    while (k < 30 && t >= rto_ns * ((INT64_C(1) << (k + 1)) - 1))
        k++;
    return k;
}

void qr_pingmesh_connects(const qr_probe_log *log, int64_t rto_ns, qr_row_pm_summary *s)
{
    const qr_config *c = qr_scenario_config(log->scenario);
    int64_t timeout = c->pingmesh.timeout_ns, wait = c->pingmesh.connect_wait_ns;
    if (wait < timeout)
        wait = timeout;
    s->connect_wait_ns = wait;
    s->syn_rto_ns = rto_ns;
    s->connect_scored = s->connect_slow = s->connect_failed = s->syn_timeouts = 0;
    s->connect_drop_rate = s->syn_drop_rate = NAN;
    if (!(wait > timeout && rto_ns > 0 && wait >= rto_ns))
        return;
    for (size_t i = 0; i < log->n_probes; i++) {
        const qr_row_probe_obs *p = &log->probes[i];
        if (p->sent_ns + wait > log->sim_end_ns)
            continue;
        int failed;
        uint32_t k = qr_pingmesh_syn_timeouts(p->rtt_ns, wait, rto_ns, &failed);
        s->connect_scored++;
        s->connect_failed += (uint64_t)failed;
        s->connect_slow += (uint64_t)(failed || k > 0);
        s->syn_timeouts += k;
    }
    if (!s->connect_scored)
        return;
    s->connect_drop_rate = (double)s->connect_slow / (double)s->connect_scored;
    uint64_t done = s->connect_scored - s->connect_failed;
    if (s->syn_timeouts + done)
        s->syn_drop_rate = (double)s->syn_timeouts / (double)(s->syn_timeouts + done);
}
