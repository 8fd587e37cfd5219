#!/usr/bin/python3
"""Figures of a diagnosis (diagnosis.h5 written by `qreplay diagnose`).

usage: plot_diagnosis.py DIAGNOSIS.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  diagnosis_causes     tail flows per size class, stacked by root cause
  diagnosis_breakdown  each selected flow's time, stacked by part (handshake, RTO, recovery,
                       receiver-limited, delayed ACK, application, queueing, sending), as a share
                       of its FCT; the cause written next to it (at most 40 flows, slowest first)
  diagnosis_blackhole  with replay arrivals and blackhole episodes (the replay paper's figure 9):
                       per blackholed queue drawn (/blackhole_series), its length and dynamic
                       threshold over time above its cumulative drops, with the queue whose burst
                       shrank the threshold (the culprit) and the episodes shaded
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_args, make_outdir, not_a, save  # noqa: E402

CLASSES = ["<100KB", "100KB-1MB", "1-10MB", ">10MB"]
PARTS = ["handshake", "rto", "recovery", "receiver", "delack", "app", "queueing", "sending"]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def causes_figure(flows, outdir, quiet):
    tail = flows[flows["tail"] == 1]
    tail = tail[tail["completed"] == 1]
    causes = sorted({text(c) for c in tail["cause"]})
    fig, ax = plt.subplots(figsize=(7, 4))
    bottom = np.zeros(len(CLASSES))
    cmap = plt.get_cmap("tab20")
    for i, c in enumerate(causes):
        counts = np.array([np.sum((np.char.decode(tail["size_class"].astype("S")) == k) &
                                  (np.char.decode(tail["cause"].astype("S")) == c))
                           for k in CLASSES], dtype=float)
        ax.bar(CLASSES, counts, bottom=bottom, label=c, color=cmap(i % 20))
        bottom += counts
    ax.set_ylabel("tail flows")
    ax.set_xlabel("flow size")
    ax.set_title("root causes of the tail flows per size class")
    if causes:
        ax.legend(fontsize=8)
    save(fig, outdir, "diagnosis_causes", quiet)


def breakdown_figure(flows, outdir, quiet):
    sel = flows[(flows["tail"] == 1) & (flows["completed"] == 1)]
    sel = sel[np.argsort(-sel["slowdown"])][:40]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(sel) + 1.5))
    y = np.arange(len(sel))
    left = np.zeros(len(sel))
    cmap = plt.get_cmap("tab10")
    fct = np.maximum(sel["fct_ns"].astype(float), 1)
    for i, p in enumerate(PARTS):
        share = 100.0 * sel[p + "_ns"] / fct
        ax.barh(y, share, left=left, label=p, color=cmap(i))
        left += share
    ax.set_yticks(y)
    ax.set_yticklabels(["flow %d (%s, x%.1f)" % (f["flow"], text(f["cause"]), f["slowdown"])
                        for f in sel], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("share of the flow's completion time (%)")
    ax.set_xlim(0, 100)
    ax.legend(fontsize=7, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    save(fig, outdir, "diagnosis_breakdown", quiet)


def blackhole_figure(f, outdir, quiet):
    pts = f["blackhole_series"][:]
    eps = f["blackholes"][:]
    queues = sorted(set(int(q) for q in pts["series"]))
    if not queues:
        return
    fig, axes = plt.subplots(2 * len(queues), 1, figsize=(8, 4.5 * len(queues)), sharex=False,
                             gridspec_kw={"height_ratios": [2, 1] * len(queues)})
    kb = 1000.0
    for n, q in enumerate(queues):
        ax, axd = axes[2 * n], axes[2 * n + 1]
        s = pts[pts["series"] == q]
        victim = s[s["culprit"] == 0]
        sw, port = int(victim["switch"][0]), int(victim["port"][0])
        ms = victim["time_ns"] / 1e6
        ax.step(ms, victim["queue_bytes"] / kb, where="post", color="C0",
                label="queue %d (switch %d)" % (port, sw))
        ax.step(ms, victim["threshold"] / kb, where="post", color="C3", ls="--",
                label="its threshold")
        for i, cp in enumerate(sorted(set(int(p) for p in s[s["culprit"] == 1]["port"]))):
            c = s[(s["culprit"] == 1) & (s["port"] == cp)]
            ax.step(c["time_ns"] / 1e6, c["queue_bytes"] / kb, where="post", color="C%d" % (i + 1),
                    alpha=0.8, label="queue %d (culprit)" % cp)
        d = victim[victim["dropped"] == 1]
        ax.plot(d["time_ns"] / 1e6, d["queue_bytes"] / kb, "x", color="k", ms=4,
                label="drops at queue %d" % port)
        axd.step(ms, victim["drops"], where="post", color="k")
        for e in eps[eps["series"] == q]:
            for a in (ax, axd):
                a.axvspan(e["start_ns"] / 1e6, max(e["end_ns"], e["start_ns"] + 1000) / 1e6,
                          color="0.85", zorder=0)
        ax.set_ylabel("bytes (KB)")
        ax.set_title("blackhole of switch %d queue %d: length, threshold, culprit (episodes shaded)"
                     % (sw, port), fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
        axd.set_ylabel("cumulative drops")
        axd.set_xlabel("time (ms)")
        axd.set_xlim(ax.get_xlim())
    fig.tight_layout()
    save(fig, outdir, "diagnosis_blackhole", quiet)


def main(argv):
    got = figure_args(argv, __doc__, "diagnosis.h5")
    if got is None:
        return 1
    a, f, outdir = got
    if not_a(f, a.path, ["flows", "causes"], "qreplay diagnose"):
        return 1
    flows = f["flows"][:]
    make_outdir(outdir)
    causes_figure(flows, outdir, a.quiet)
    breakdown_figure(flows, outdir, a.quiet)
    if "blackhole_series" in f and len(f["blackhole_series"]):
        blackhole_figure(f, outdir, a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
