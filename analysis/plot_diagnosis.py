#!/usr/bin/python3
"""Figures of a diagnosis (diagnosis.h5 written by `qreplay diagnose`).

usage: plot_diagnosis.py DIAGNOSIS.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  diagnosis_causes     tail flows per size class, stacked by root cause
  diagnosis_breakdown  each selected flow's time, stacked by part (handshake, RTO, recovery,
                       receiver-limited, delayed ACK, application, queueing, sending), as a share
                       of its FCT; the cause written next to it (at most 40 flows, slowest first)
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_args, not_a, save  # noqa: E402

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


def main(argv):
    got = figure_args(argv, __doc__, "diagnosis.h5")
    if got is None:
        return 1
    a, f, outdir = got
    if not_a(f, a.path, ["flows", "causes"], "qreplay diagnose"):
        return 1
    flows = f["flows"][:]
    os.makedirs(outdir, exist_ok=True)
    causes_figure(flows, outdir, a.quiet)
    breakdown_figure(flows, outdir, a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
