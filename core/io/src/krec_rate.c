/* The kernel recorder's rate test: each step's losses and cost, the highest rate kept whole. */
#include <inttypes.h>
#include <stdio.h>

#include "qreplay/krec_rate.h"
#include "qreplay/txn.h"

void qr_krec_rate_add_records(qr_krec_rate_step *s, const qr_krec_stats *st, size_t n)
{
    uint64_t lost = 0;
    for (size_t i = 0; i < n; i++) {
        s->recorded_sends += st[i].calls[0];
        s->recorded_send_bytes += st[i].call_bytes[0];
        s->nic_packets += st[i].nic_packets;
        s->events += st[i].events;
        s->unseen += st[i].unseen;
        if (st[i].recorder_lost > lost)
            lost = st[i].recorder_lost;
    }
    s->ring_lost += lost; /* the recorder's, the same in each of its records */
}

double qr_krec_rate_pps(const qr_krec_rate_step *s)
{
    return s->traffic_s > 0 ? (double)s->nic_packets / s->traffic_s : 0;
}

int qr_krec_rate_whole(const qr_krec_rate_step *s)
{
    return !s->unrecorded && !s->ring_lost && !s->unseen && s->recorded_sends == s->writes &&
           s->recorded_send_bytes == s->writes * s->msg_bytes &&
           s->read_bytes == s->writes * s->msg_bytes;
}

int qr_krec_rate_short(const qr_krec_rate_step *s)
{
    return s->target_pps > 0 && (double)s->writes < 0.9 * s->target_pps * s->traffic_s;
}

void qr_krec_rate_summarise(const qr_krec_rate_step *s, size_t n, qr_krec_rate_summary *out)
{
    qr_krec_rate_summary r = {0};
    double lowest_lossy = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].target_pps <= 0) {
            r.idle_cpu_s = s[i].cpu_s;
            continue;
        }
        double wps = s[i].traffic_s > 0 ? (double)s[i].writes / s[i].traffic_s : 0;
        if (s[i].unrecorded) {
            r.bare_wps = wps > r.bare_wps ? wps : r.bare_wps;
            continue;
        }
        r.max_wps = wps > r.max_wps ? wps : r.max_wps;
        double pps = qr_krec_rate_pps(&s[i]);
        r.max_pps = pps > r.max_pps ? pps : r.max_pps;
        r.saturated |= qr_krec_rate_short(&s[i]);
        if (qr_krec_rate_whole(&s[i]) && pps > r.whole_pps)
            r.whole_pps = pps;
        if (!s[i].ring_lost && pps > r.ring_whole_pps)
            r.ring_whole_pps = pps;
        if (s[i].ring_lost && (!lowest_lossy || pps < lowest_lossy))
            lowest_lossy = pps;
    }
    r.first_lossy_pps = lowest_lossy;
    r.lossy_below_whole = lowest_lossy > 0 && lowest_lossy < r.ring_whole_pps;
    *out = r;
}

struct rate_csv {
    const char *made_by;
    const qr_krec_rate_step *s;
    size_t n;
};

static void write_rate(FILE *f, const void *vctx)
{
    const struct rate_csv *c = vctx;
    double idle = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->s[i].target_pps <= 0 && !c->s[i].unrecorded)
            idle = c->s[i].cpu_s;
    fprintf(f, "# %s\n", c->made_by);
    fprintf(f, "target_pps,recorded,traffic_s,writes,msg_bytes,read_bytes,recorded_sends,"
               "recorded_send_bytes,nic_packets,pps,events,events_per_s,ring_lost,unseen,whole,"
               "short,recorder_cpu_s,recorder_wall_s,bpf_s,bpf_runs,recorder_pct,bpf_pct,"
               "us_per_packet\n");
    for (size_t i = 0; i < c->n; i++) {
        const qr_krec_rate_step *s = &c->s[i];
        double t = s->traffic_s > 0 ? s->traffic_s : 0;
        double above = s->target_pps > 0 && !s->unrecorded ? s->cpu_s - idle : 0;
        fprintf(f,
                "%.0f,%d,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%.1f,%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 ",%d,%d,%.6f,%.6f,%.6f,%" PRIu64
                ",%.3f,%.3f,%.3f\n",
                s->target_pps, !s->unrecorded, s->traffic_s, s->writes, s->msg_bytes, s->read_bytes,
                s->recorded_sends, s->recorded_send_bytes, s->nic_packets, qr_krec_rate_pps(s),
                s->events, t > 0 ? (double)s->events / t : 0, s->ring_lost, s->unseen,
                qr_krec_rate_whole(s), qr_krec_rate_short(s), s->cpu_s, s->wall_s, s->bpf_s,
                s->bpf_runs, t > 0 ? 100 * above / t : 0, t > 0 ? 100 * s->bpf_s / t : 0,
                s->nic_packets ? 1e6 * (above + s->bpf_s) / (double)s->nic_packets : 0);
    }
}

int qr_krec_rate_write(const char *path, const char *made_by, const qr_krec_rate_step *s, size_t n,
                       char *errbuf)
{
    struct rate_csv c = {made_by, s, n};
    return qr_write_text_file(path, write_rate, &c, errbuf);
}
