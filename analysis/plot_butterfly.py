#!/usr/bin/python3
"""Figures of a butterfly experiment (butterfly.h5 written by `qreplay butterfly`).

usage: plot_butterfly.py BUTTERFLY.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  reproduction      share of replays that reproduce the short flow's completion time (within 1%)
                    and the whole run (the same dropped packets), against sigma (log axis; sigma = 0
                    drawn at the left edge)
  queue_difference  for one typical replay per sigma (median first divergence), the bottleneck's
                    queue-length difference against the runtime at each packet arrival, over time
Titles name the scenario file's output folder and the runtime's short-flow completion time.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import arrival_steps, figure_args, make_outdir, not_a, save  # noqa: E402

MTU = 1500.0


def fmt_sigma(ns):
    if ns == 0:
        return "0"
    if ns < 1000:
        return "%g ns" % ns
    if ns < 1000000:
        return "%g us" % (ns / 1e3)
    return "%g ms" % (ns / 1e6)


def main(argv):
    opened = figure_args(argv, __doc__, "butterfly.h5")
    if opened is None:
        return 1
    a, f, outdir = opened
    with f:
        if not_a(f, a.path, ["sigma", "typical"], "butterfly"):
            return 1
        make_outdir(outdir)
        name = f.attrs.get("output.dir", b"butterfly")
        name = os.path.basename(name.decode() if isinstance(name, bytes) else str(name))
        fct = f.attrs.get("runtime_short_fct_ns", -1) / 1e6
        s = f["sigma"][:]
        sig = s["sigma_ns"].astype(float)
        # sigma = 0 sits a decade left of the smallest positive sigma
        pos = sig[sig > 0]
        zero_at = pos.min() / 10 if pos.size else 0.1
        x = np.where(sig > 0, sig, zero_at)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(x, s["short_reproduced_pct"], "o-", label="short flow reproduced (FCT within 1%)")
        ax.plot(x, s["run_reproduced_pct"], "s--", label="whole run reproduced (same drops)")
        ax.set_xscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([fmt_sigma(v) for v in sig])
        ax.set_xlabel("processing-delay standard deviation sigma (log axis)")
        ax.set_ylabel("replays (%)")
        ax.set_ylim(-5, 105)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("replays that reproduce the runtime (%s, %d per sigma; runtime short flow %.2f ms)"
                     % (name, int(s["replays"][0]), fct), fontsize=9)
        save(fig, outdir, "reproduction", a.quiet)

        fig, ax = plt.subplots(figsize=(7, 4))
        for key in sorted(f["typical"].keys(), key=lambda k: int(k.split("_")[1])):
            g = f["typical"][key]
            t = g["time_ns"][:] / 1e6
            d = g["diff_bytes"][:] / MTU
            # values seen at arrivals: steps, broken and shaded where no packet arrived
            arrival_steps(ax, t, d, lw=0.6, rasterized=True,
                          label="sigma = %s (replay %d)" % (fmt_sigma(int(g.attrs["sigma_ns"])),
                                                           int(g.attrs["replay"])))
        end = f.attrs.get("runtime_end_ns", 0) / 1e6
        if end > 0:
            ax.set_xlim(0, end * 1.1)  # the runtime's span; a replay may run on (e.g. a lost SYN)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("queue-length difference (MTU)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title("bottleneck queue, replay vs runtime at each packet arrival (%s)" % name, fontsize=9)
        save(fig, outdir, "queue_difference", a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
