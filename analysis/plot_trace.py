#!/usr/bin/python3
"""Figures of a hop trace (trace.h5 written by `qreplay trace`).

usage: plot_trace.py TRACE.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  trace_profile   the latency profiler: per hop of the path, the matched packets' queueing delay
                  (mean and p99) at each queue that held a visible share of it, and each hop's
                  share of all their queueing
  trace_hops      the kept packets' queueing delay at each hop against the time they reached
                  the hop, one colour per hop, drops marked (x) as the trace inferred
                  them: counted by their switch, or silent (no counter moved)
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_main, save  # noqa: E402



def title(f):
    m = f.attrs.get("match", b"")
    return "match: " + (m.decode() if isinstance(m, bytes) else str(m))


def profile_figure(f, outdir, quiet):
    prof = f["profile"][:]
    if len(prof) == 0:
        return
    hops = sorted(set(int(h) for h in prof["hop"]))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [3, 1]})
    labels, means, p99s, colors = [], [], [], []
    cmap = plt.get_cmap("tab10")
    for h in hops:
        rows = prof[prof["hop"] == h]
        rows = rows[np.argsort(-rows["share"], kind="stable")]
        # each hop's queues with the most queueing; the rest are in the share panel
        for r in rows[:4]:
            labels.append("%d: s%d:%d" % (h, r["sw"], r["port"]))
            means.append(r["mean_ns"] / 1e3)
            p99s.append(r["p99_ns"] / 1e3)
            colors.append(cmap((h - 1) % 10))
    x = np.arange(len(labels))
    a1.bar(x - 0.2, means, 0.4, color=colors, label="mean")
    a1.bar(x + 0.2, p99s, 0.4, color=colors, alpha=0.45, hatch="//", label="p99")
    a1.set_xticks(x)
    a1.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    a1.set_ylabel("queueing delay (us)")
    a1.set_xlabel("hop: queue (each hop's four queues with the most queueing)")
    a1.legend()
    a1.set_title(title(f))
    share = [prof[prof["hop"] == h]["share"].sum() * 100 for h in hops]
    a2.bar([str(h) for h in hops], share, color=[cmap((h - 1) % 10) for h in hops])
    a2.set_xlabel("hop")
    a2.set_ylabel("share of the path's queueing (%)")
    a2.set_title("where the time goes")
    fig.tight_layout()
    save(fig, outdir, "trace_profile", quiet)


def hops_figure(f, outdir, quiet):
    hops = f["hops"][:]
    if len(hops) == 0:
        return
    fig, ax = plt.subplots(figsize=(10, 4.2))
    cmap = plt.get_cmap("tab10")
    admitted = hops[hops["decision"] == 0]
    for h in sorted(set(int(v) for v in hops["hop"])):
        r = admitted[admitted["hop"] == h]
        if len(r):
            ax.scatter(r["time_ns"] / 1e6, r["queue_ns"] / 1e3, s=6, color=cmap((h - 1) % 10),
                       label="hop %d" % h)
    dropped = hops[hops["decision"] != 0]
    # what the trace inferred of each drop (its /drops row): silent, or counted by its switch
    silent = {int(d["packet"]) for d in f["drops"][:] if d["silent"]}
    is_silent = np.array([int(p) in silent for p in dropped["packet"]], dtype=bool)
    for mask, name in ((~is_silent, "counted by its switch"),
                       (is_silent, "silent (no counter moved)")):
        r = dropped[mask]
        if len(r):
            ax.scatter(r["time_ns"] / 1e6, r["queue_ns"] / 1e3, marker="x", s=30,
                       label="dropped: " + name)
    ax.set_xlabel("time the packet reached the hop (ms)")
    ax.set_ylabel("queueing delay (us)")
    n = len(f["packets"])
    ax.set_title("%s (%d kept packets)" % (title(f), n))
    ax.legend(fontsize=8, markerscale=2)
    fig.tight_layout()
    save(fig, outdir, "trace_hops", quiet)


def main(argv):
    return figure_main(argv, __doc__, "trace.h5",
                       ["packets", "hops", "drops", "profile", "summary"], "qreplay trace",
                       [profile_figure, hops_figure])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
