/* Trace's hop-by-hop report, as the program prints it (tables.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qreplay/hoptrace.h"
#include "qreplay/units.h"
#include "tables.h"

static void flags_text(uint8_t f, char *buf)
{
    static const char letters[] = "FSRPAUEC";
    for (int i = 0; i < 8; i++)
        buf[i] = (f >> i) & 1 ? letters[i] : '.';
    buf[8] = '\0';
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

static double us(double ns)
{
    return ns / 1e3;
}

/* Why a drop happened, as the trace infers it: silent (no counter moved), or counted by its
 * switch, with the numbers the switch had. */
static void why(const qr_hoptrace *t, const qr_row_hop_drop *d, char *buf, size_t size)
{
    if (d->silent) {
        snprintf(buf, size, "trace stops, s%u:%u counted no drop", d->sw, d->port);
        return;
    }
    switch (d->reason) {
    case QR_DROP_THRESHOLD:
        snprintf(buf, size, "queue %" PRIu64 " + %u B > threshold %" PRId64 " B", d->queue_bytes,
                 d->bytes, d->threshold);
        break;
    case QR_DROP_BUFFER_FULL:
        snprintf(buf, size, "switch %" PRIu64 " + %u B > buffer %" PRIu64 " B", d->total_bytes,
                 d->bytes, t->summary.buffer_bytes);
        break;
    case QR_DROP_TAGGED:
        snprintf(buf, size, "tagged; queue %" PRIu64 " B > threshold %" PRId64 " B - margin",
                 d->queue_bytes, d->threshold);
        break;
    case QR_TRACE_COUNTED:
        snprintf(buf, size, "trace stops, counter moved (%" PRIu64 " drops), reason unknown",
                 d->counter_drops);
        break;
    default: snprintf(buf, size, "?"); break;
    }
}

static void print_packet(const qr_hoptrace *t, size_t i, FILE *out)
{
    const qr_row_hop_packet *p = &t->packets[i];
    char fl[9];
    flags_text(p->flags, fl);
    fprintf(out,
            "packet %u:%u  flow %u %s  h%u:%u>h%u:%u  seq %u len %u [%s]%s%s\n"
            "  sent %.6f ms (sender's clock), %u hops, %s\n",
            p->dir, qr_packet_id_seq(p->packet), p->flow, qr_dir_is_ack(p->dir) ? "ack" : "data",
            p->src, p->sport, p->dst, p->dport, p->seq, p->payload, fl,
            p->retransmit ? " retransmit" : "", p->detected ? " detected-lost" : "", ms(p->sent_ns),
            p->hops, p->fate ? qr_trace_decision_name(p->fate) : "left its last switch");
    fprintf(out, "  %3s %-9s %12s %10s %11s %12s %11s  %s\n", "hop", "queue", "arrived (ms)",
            "queued us", "queue B", "switch B", "threshold", "decision");
    /* the hops of packet i: rows are by packet rank then hop */
    size_t first = 0;
    for (size_t k = 0; k < i; k++)
        first += t->packets[k].hops;
    for (size_t h = first; h < first + p->hops && h < t->n_hops; h++) {
        const qr_row_hop *x = &t->hops[h];
        char q[24];
        snprintf(q, sizeof q, "s%u:%u", x->sw, x->port);
        fprintf(out, "  %3u %-9s %12.6f %10.2f %11" PRIu64 " %12" PRIu64 " %11" PRId64 "  %s\n",
                x->hop, q, ms(x->time_ns), us((double)x->queue_ns), x->queue_bytes, x->total_bytes,
                x->threshold, qr_trace_decision_name(x->decision));
    }
}

typedef struct place_count {
    char name[32];
    uint8_t silent;
    uint64_t n;
} place_count;

static int cmp_place(const void *pa, const void *pb)
{
    const place_count *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* A counted drop's queue (sN:P); a silent drop's link (A>B). */
static void where_of(const qr_row_hop_drop *d, char *buf, size_t size)
{
    if (d->silent)
        snprintf(buf, size, "%s", d->link_name);
    else
        snprintf(buf, size, "s%u:%u", d->sw, d->port);
}

static void print_drops(const qr_hoptrace *t, size_t max, FILE *out)
{
    const qr_row_hop_summary *s = &t->summary;
    fprintf(out,
            "\ndrop debugger: %zu drops of matched packets: %" PRIu64
            " silent (the trace stops at a port whose drop counter did not move in its %.3g ms), "
            "%" PRIu64 " counted; receivers detected %" PRIu64 ", senders resent %" PRIu64 "\n",
            t->n_drops, s->silent, (double)t->opts.counter_interval_ns / 1e6,
            (uint64_t)t->n_drops - s->silent, s->detected, s->resent);
    if (!t->n_drops)
        return;
    fprintf(out, "  %12s %-14s %5s %3s %-10s %-11s %-44s %8s %s\n", "time (ms)", "packet", "flow",
            "hop", "where", "inferred", "why", "detected", "resent after");
    for (size_t i = 0; i < t->n_drops && i < max; i++) {
        const qr_row_hop_drop *d = &t->drops[i];
        char id[32], w[96], resent[32], where[32];
        snprintf(id, sizeof id, "%u:%u", d->dir, qr_packet_id_seq(d->packet));
        where_of(d, where, sizeof where);
        why(t, d, w, sizeof w);
        if (d->resent_ns >= 0)
            snprintf(resent, sizeof resent, "%.1f us", us((double)(d->resent_ns - d->time_ns)));
        else if (d->resent_ns == -2)
            snprintf(resent, sizeof resent, "-");
        else
            snprintf(resent, sizeof resent, "never");
        fprintf(out, "  %12.6f %-14s %5u %3u %-10s %-11s %-44s %8s %s\n", ms(d->time_ns), id,
                d->flow, d->hop, where, d->silent ? "silent" : "counted", w,
                d->detected ? "yes" : "no", resent);
    }
    if (t->n_drops > max)
        fprintf(out, "  ... %zu more in trace.h5 /drops (--drops N shows more)\n",
                t->n_drops - max);
    /* by place */
    place_count *pc = calloc(t->n_drops, sizeof *pc);
    size_t n = 0;
    for (size_t i = 0; pc && i < t->n_drops; i++) {
        const qr_row_hop_drop *d = &t->drops[i];
        char where[32];
        where_of(d, where, sizeof where);
        size_t k;
        for (k = 0; k < n; k++)
            if (pc[k].silent == d->silent && !strcmp(pc[k].name, where))
                break;
        if (k == n) {
            snprintf(pc[n].name, sizeof pc[n].name, "%s", where);
            pc[n++].silent = d->silent;
        }
        pc[k].n++;
    }
    if (pc) {
        qsort(pc, n, sizeof *pc, cmp_place);
        fprintf(out, "  by place:");
        for (size_t k = 0; k < n && k < 8; k++)
            fprintf(out, "%s %s %s %" PRIu64, k ? "," : "", pc[k].name,
                    pc[k].silent ? "silent" : "counted", pc[k].n);
        fprintf(out, "%s\n", n > 8 ? ", ..." : "");
    }
    free(pc);
}

static const char *port_name(uint32_t sw, uint32_t port)
{
    static char buf[24];
    if (port == QR_GUIDED_INSIDE)
        snprintf(buf, sizeof buf, "%u", sw);
    else
        snprintf(buf, sizeof buf, "%u:%u", sw, port);
    return buf;
}

/* Everflow's guided probes: where they were lost, and what they say of the drop debugger's silent
 * drops (confirmed where probes through the same port were lost silently too). */
static void print_guided(const qr_hoptrace *t, FILE *out)
{
    if (!t->has_guided)
        return;
    const qr_guided *g = &t->guided;
    fprintf(out,
            "\nguided probes: %" PRIu64 " along %" PRIu64 " pinned 5-tuples (%" PRIu64
            " with a delivered path) out of %zu switch ports, %" PRIu64 " mirrored copies; %" PRIu64
            " delivered, %" PRIu64 " lost",
            g->probes, g->tuples, g->pinned, g->n_ports, g->copies, g->delivered, g->lost);
    if (g->lost)
        fprintf(out, " (%" PRIu64 " on a link out of a port, %" PRIu64 " inside a switch)",
                g->lost_link, g->lost_inside);
    fprintf(out, "; %s\n",
            g->counters_known ? "drop counters read around them" : "no drop counters (unknown)");
    size_t shown = 0;
    for (size_t i = 0; i < g->n_ports && g->ports[i].lost; i++, shown++)
        if (shown < 10)
            fprintf(out,
                    "  s%-7s %-10s %6" PRIu64 " probes, %4" PRIu64 " lost (%.1f%%), counter %s: "
                    "%s\n",
                    port_name(g->ports[i].sw, g->ports[i].port), g->ports[i].link_name,
                    g->ports[i].probes, g->ports[i].lost,
                    100.0 * (double)g->ports[i].lost / (double)g->ports[i].probes,
                    !g->ports[i].counters_known ? "unknown"
                    : g->ports[i].counter_drops ? "moved"
                                                : "still",
                    g->ports[i].silent ? "silent loss" : "maybe the queue's");
    if (shown > 10)
        fprintf(out, "  ... %zu more ports lost probes (trace.h5 /guided)\n", shown - 10);
    if (!shown)
        fprintf(out, "  no port lost a probe (%zu ports probed)\n", g->n_ports);
    /* the drop debugger's silent places, checked: the confirmed ones first, then the others */
    size_t places = 0, confirmed = 0, refuted = 0, unprobed = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < t->n_drops; i++) {
            const qr_row_hop_drop *d = &t->drops[i];
            int first = d->silent;
            for (size_t j = 0; first && j < i; j++)
                first =
                    !(t->drops[j].silent && t->drops[j].sw == d->sw && t->drops[j].port == d->port);
            /* the probes headed out of that port, or, when some were lost inside the switch
             * with no known way out (a blackhole eats every probe of its 5-tuples), those */
            const qr_row_guided_port *r = first ? qr_guided_port(g, d->sw, d->port) : NULL;
            const qr_row_guided_port *in =
                first ? qr_guided_port(g, d->sw, QR_GUIDED_INSIDE) : NULL;
            if (in && in->silent && !(r && r->silent))
                r = in;
            if (!first || (pass == 0) != (r && r->silent))
                continue;
            places++;
            confirmed += r && r->silent;
            refuted += r && !r->silent;
            unprobed += !r;
            if (places > 10)
                continue;
            if (!r)
                fprintf(out, "  silent drops out of s%u:%u (%s): no guided probe went that way\n",
                        d->sw, d->port, d->link_name);
            else
                fprintf(out,
                        "  silent drops out of s%u:%u (%s): %s by the guided probes (%" PRIu64
                        " of %" PRIu64 " lost%s%s)\n",
                        d->sw, d->port, d->link_name, r->silent ? "confirmed" : "not confirmed",
                        r->lost, r->probes,
                        r->port == QR_GUIDED_INSIDE ? " inside the switch, their way out unknown"
                        : r->lost && r->inside == r->lost ? " inside the switch"
                                                          : "",
                        r->lost && !r->silent ? ", the counter moved" : "");
        }
    if (places)
        fprintf(out,
                "  the drop debugger's %zu silent places: %zu confirmed by the guided probes, %zu "
                "not, %zu not probed\n",
                places, confirmed, refuted, unprobed);
}

/* Everflow's link round trips: each probed port's S1 -> S2 -> S1 times and losses, the flagged
 * ones first. */
static void print_bounce(const qr_hoptrace *t, FILE *out)
{
    if (!t->has_bounce)
        return;
    const qr_bounce *b = &t->bounce;
    fprintf(out,
            "\nlink round trips (S1 -> S2 -> S1): %" PRIu64
            " probes out of %zu switch ports, %" PRIu64
            " back; median round trip %.1f us; %zu ports flagged (above %.1f x the median, or "
            "lost probes)\n",
            b->probes, b->n_rows, b->returned, us((double)b->median_rtt_ns), b->flagged, b->ratio);
    if (b->unseen)
        fprintf(out,
                "  %" PRIu64 " rounds had copies but none leaving their switch (the mirror "
                "missed it): no fate\n",
                b->unseen);
    fprintf(out, "  %-9s %-10s %6s %6s %8s %9s %9s %9s %9s  %s\n", "port", "link", "sent", "back",
            "lost", "rtt p50", "rtt min", "out p50", "back p50", "");
    size_t shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < b->n_rows; i++) {
            const qr_row_bounce *r = &b->rows[i];
            if ((pass == 0) != (r->slow || r->lossy) || (pass == 1 && shown >= 6))
                continue;
            shown++;
            char lost[32];
            snprintf(lost, sizeof lost, "%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64, r->lost_in,
                     r->lost_out, r->lost_peer, r->lost_back);
            fprintf(out,
                    "  s%-8s %-10s %6" PRIu64 " %6" PRIu64
                    " %8s %8.1fus %8.1fus %8.1fus %8.1fus  %s%s\n",
                    port_name(r->sw, r->port), r->link_name, r->sent, r->returned, lost,
                    us((double)r->rtt_p50_ns), us((double)r->rtt_min_ns), us((double)r->out_p50_ns),
                    us((double)r->back_p50_ns), r->slow ? "slow " : "", r->lossy ? "lossy" : "");
        }
    if (shown < b->n_rows)
        fprintf(out, "  ... %zu more ports (trace.h5 /bounce); lost: in S1/out/inside S2/back\n",
                b->n_rows - shown);
}

static void print_profile(const qr_hoptrace *t, FILE *out)
{
    const qr_row_hop_summary *s = &t->summary;
    fprintf(out,
            "\nlatency profile: queueing of the matched packets at each hop (packets the hop "
            "admitted)\n"
            "  path queueing of the delivered ones: mean %.2f us, p99 %.2f us, max %.2f us\n",
            us(s->queue_mean_ns), us((double)s->queue_p99_ns), us((double)s->queue_max_ns));
    if (!t->n_profile)
        return;
    fprintf(out, "  %3s %-9s %9s %10s %10s %10s %10s %7s\n", "hop", "queue", "packets", "mean us",
            "p50 us", "p99 us", "max us", "share");
    for (size_t i = 0; i < t->n_profile; i++) {
        const qr_row_hop_profile *p = &t->profile[i];
        /* every hop's busiest queues; the rest summed */
        size_t rank = 0;
        for (size_t k = i; k > 0 && t->profile[k - 1].hop == p->hop; k--)
            rank++;
        if (rank >= 4) {
            uint64_t pk = 0;
            double share = 0;
            size_t k = i;
            for (; k < t->n_profile && t->profile[k].hop == p->hop; k++) {
                pk += t->profile[k].packets;
                share += t->profile[k].share;
            }
            fprintf(out, "  %3u %-9s %9" PRIu64 " %10s %10s %10s %10s %6.1f%%\n", p->hop,
                    "(others)", pk, "", "", "", "", 100 * share);
            i = k - 1;
            continue;
        }
        char q[24];
        snprintf(q, sizeof q, "s%u:%u", p->sw, p->port);
        fprintf(out, "  %3u %-9s %9" PRIu64 " %10.2f %10.2f %10.2f %10.2f %6.1f%%\n", p->hop, q,
                p->packets, us(p->mean_ns), us((double)p->p50_ns), us((double)p->p99_ns),
                us((double)p->max_ns), 100 * p->share);
    }
}

/* The latency profiler's links: the slow ones, and the slowest few against the median. */
static void print_links(const qr_hoptrace *t, FILE *out)
{
    if (!t->n_links)
        return;
    const qr_row_hop_summary *s = &t->summary;
    fprintf(out,
            "\nlink latency: from a packet's copy at a switch to its copy at the next (%zu links; "
            "the median least %.2f us);\n%" PRIu32 " slow (least latency >= %.3g x the median)",
            t->n_links, (double)s->link_median_min_ns / 1e3, s->slow_links, t->opts.link_ratio);
    fputs(s->slow_links ? ":\n" : "; the slowest:\n", out);
    fprintf(out, "  %-12s %9s %11s %11s %11s %13s\n", "link", "packets", "least", "p50", "p99",
            "rate");
    for (size_t i = 0; i < t->n_links && (t->links[i].slow || t->links[i].slow_rate || i < 3);
         i++) {
        const qr_row_hop_link *l = &t->links[i];
        char rate[32] = "-";
        if (l->rate_pairs)
            snprintf(rate, sizeof rate, "%.2f Mb/s", l->rate_bps / 1e6);
        fprintf(out, "  %-12s %9" PRIu64 " %8.2f us %8.2f us %8.2f us %13s%s%s\n", l->name,
                l->packets, (double)l->min_ns / 1e3, (double)l->p50_ns / 1e3,
                (double)l->p99_ns / 1e3, rate, l->slow ? "  SLOW" : "",
                l->slow_rate ? "  SLOW RATE" : "");
    }
    if (isnan(s->link_median_rate_bps))
        fprintf(out, "service rate: no link had %d packets leave back to back (unknown)\n",
                QR_HOP_RATE_PAIRS);
    else
        fprintf(out,
                "service rate (bits over the time between the far copies of packets that left "
                "back to back): median %.2f Mb/s; %" PRIu32 " link%s at least %.3g x below the "
                "ports' %.2f Mb/s\n",
                s->link_median_rate_bps / 1e6, s->slow_rate_links,
                s->slow_rate_links == 1 ? "" : "s", t->opts.link_ratio, (double)s->rate_bps / 1e6);
}

/* Everflow's loop debugger: the cycles matched packets went round. */
static void print_loops(const qr_hoptrace *t, FILE *out)
{
    const qr_row_hop_summary *s = &t->summary;
    if (!t->n_loops) {
        fprintf(out, "\nloop debugger: no matched packet came back to a switch it had left\n");
        return;
    }
    fprintf(out,
            "\nloop debugger: %" PRIu64 " matched packet%s came back to a switch %s had left, "
            "in %" PRIu64 " cycle%s (a trace that stops in one: its TTL ran out there)\n",
            s->looping, s->looping == 1 ? "" : "s", s->looping == 1 ? "it" : "they", s->loops,
            s->loops == 1 ? "" : "s");
    fprintf(out, "  %-24s %9s %9s %12s %12s %s\n", "cycle", "packets", "copies", "first (ms)",
            "last (ms)", "example");
    for (size_t i = 0; i < t->n_loops; i++) {
        const qr_row_hop_loop *l = &t->loops[i];
        fprintf(out, "  %-24s %9" PRIu64 " %9" PRIu64 " %12.6f %12.6f %u:%u%s\n", l->cycle,
                l->packets, l->copies, (double)l->first_ns / 1e6, (double)l->last_ns / 1e6,
                qr_packet_id_dir(l->example), qr_packet_id_seq(l->example),
                l->planted ? "  PLANTED" : "");
    }
}

/* Everflow's ECMP profile: per switch that spreads over several up ports, each member's share. */
static void print_ecmp(const qr_hoptrace *t, FILE *out)
{
    if (!t->n_ecmp)
        return;
    fprintf(out, "\nECMP profile: the matched packets each up port of a multipath group carried "
                 "(share of the group, flows)\n");
    size_t groups = 0;
    double worst = 0;
    uint32_t worst_sw = 0;
    for (size_t i = 0; i < t->n_ecmp;) {
        size_t j = i;
        double hi = 0;
        while (j < t->n_ecmp && t->ecmp[j].sw == t->ecmp[i].sw) {
            if (t->ecmp[j].share > hi)
                hi = t->ecmp[j].share;
            j++;
        }
        double uneven = hi * (double)(j - i); /* the busiest member against an even split */
        if (uneven > worst) {
            worst = uneven;
            worst_sw = t->ecmp[i].sw;
        }
        if (groups++ < 12) {
            fprintf(out, "  s%-3u", t->ecmp[i].sw);
            for (size_t k = i; k < j; k++)
                fprintf(out, "%s %s %.0f%% (%" PRIu64 ")", k > i ? "," : "", t->ecmp[k].link_name,
                        100 * t->ecmp[k].share, t->ecmp[k].flows);
            fputc('\n', out);
        }
        i = j;
    }
    if (groups > 12)
        fprintf(out, "  ... %zu more groups in trace.h5 /ecmp\n", groups - 12);
    fprintf(out, "  most uneven: s%u, its busiest member %.2fx an even split\n", worst_sw, worst);
}

void cli_print_hoptrace(const qr_hoptrace *t, size_t traces, size_t drops, FILE *out)
{
    const qr_row_hop_summary *s = &t->summary;
    fprintf(out, "match              %s\n", t->match);
    fprintf(out, "arrival log        %s (%s)\n", t->opts.arrivals,
            t->opts.runtime ? "the switches' mirrored copies" : "a replay's");
    fprintf(out,
            "read               %" PRIu64 " arrivals of %" PRIu64 " recorded packets (%" PRIu64
            " arrivals of packets the recording lacks, left out)\n",
            s->arrivals, s->packets, s->unknown_arrivals);
    fprintf(out, "mirror             %s", qr_mirror_name(t->opts.mirror));
    if (t->opts.mirror == QR_MIRROR_EVERFLOW)
        fprintf(out, " (Everflow's rules: SYN, FIN, RST)");
    else
        fprintf(out, " (every packet at every switch)");
    if (t->opts.mirror_rate_bps)
        fprintf(out,
                "; sessions of %.6g Mbps over %" PRIu64 " B: %" PRIu64 " of %" PRIu64
                " copies lost",
                (double)t->opts.mirror_rate_bps / 1e6, t->opts.mirror_buffer_bytes, s->mirror_lost,
                s->mirror_copies);
    else
        fprintf(out, "; %" PRIu64 " copies, none lost (no session limit)", s->mirror_copies);
    fputc('\n', out);
    fprintf(out,
            "matched            %" PRIu64 " packets: %" PRIu64 " left their last switch, %" PRIu64
            " dropped, %" PRIu64 " reached no switch in the log (or no copy of them did)\n",
            s->matched, s->delivered, s->dropped, s->unseen);
    if (s->gaps || s->in_flight)
        fprintf(out,
                "                   %" PRIu64 " delivered with a hop missing (%" PRIu64
                " copies inferred lost: seen further on, so not drops), %" PRIu64
                " in flight when the log ends\n",
                s->gaps, s->gap_copies, s->in_flight);
    fprintf(out, "kept               %" PRIu64 " in /packets and /hops", s->kept);
    if (s->kept < s->matched - s->unseen)
        fprintf(out, " (the first by time at their first switch; --limit)");
    fputc('\n', out);
    if (t->n_packets && traces) {
        fprintf(out, "\ntraces of the first %zu:\n", traces < t->n_packets ? traces : t->n_packets);
        for (size_t i = 0; i < t->n_packets && i < traces; i++)
            print_packet(t, i, out);
    }
    print_drops(t, drops, out);
    print_loops(t, out);
    print_guided(t, out);
    print_bounce(t, out);
    print_profile(t, out);
    print_ecmp(t, out);
    print_links(t, out);
    if (t->truth.has_truth) {
        const qr_hoptrace_truth *x = &t->truth;
        fprintf(out,
                "\nscore (against the planted faults, after the analysis): %" PRIu64
                " drops inferred silent, %" PRIu64 " of them a planted fault's; %" PRIu64
                " fault drops taken for counted ones; silent on %s: %s\n",
                x->silent, x->silent_right, x->fault_missed,
                x->silent_links[0] ? x->silent_links : "no link", x->right ? "right" : "not right");
        if (t->has_guided)
            fprintf(out,
                    "       guided probes: silent loss at %" PRIu64 " ports (%s), %" PRIu64
                    " of them on a planted cable; %" PRIu64 " of the %" PRIu64
                    " planted faulty directions they crossed showed it\n",
                    x->guided_silent, x->guided_links[0] ? x->guided_links : "none",
                    x->guided_silent_right, x->guided_faulty_found, x->guided_faulty_probed);
        if (t->has_bounce)
            fprintf(out,
                    "       link round trips: %" PRIu64 " ports flagged, %" PRIu64
                    " of them on a planted cable; %" PRIu64 " of the %" PRIu64
                    " probed ports of planted cables flagged\n",
                    x->bounce_flagged, x->bounce_right, x->bounce_faulty_found,
                    x->bounce_faulty_probed);
    }
}
