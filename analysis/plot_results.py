#!/usr/bin/python3
"""Figures of qreplay results (results.h5 written by `qreplay run` or `qreplay metrics`).

usage: plot_results.py RESULTS.h5 [RESULTS.h5 ...] [-o DIR] [--quiet]

For each results file, in DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  qdiff_cdf         CDF of qdiff (MTU) over all arrivals, one line per replay variant
  drop_error        drop error per variant, split into false accepts, false drops, wrong locations
  busiest_queue     length of the runtime's busiest queue over time: runtime and every variant
  runtime_vs_replay per variant, the busiest queue's length at each arrival: replay against runtime
Every title names the scenario the results came from. With several files, figure names get the
file's scenario name as a prefix. Uses Debian's python3-h5py, python3-numpy, python3-matplotlib.
"""
import argparse
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import arrival_steps, make_outdir, save  # noqa: E402

MTU = 1500.0


def attr_str(obj, name, default=""):
    v = obj.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def variants(f):
    """Replay variants in the file's order of mode, then threshold."""
    if "replay" not in f:
        return []
    names = list(f["replay"].keys())

    def key(n):
        mode, _, th = n.partition("_th_")
        try:
            return (mode, float(th), n)
        except ValueError:
            return (mode, float("inf"), n)

    return sorted(names, key=key)


def label(f, v):
    g = f["replay"][v]
    th = g.attrs.get("th_ns", 0) / 1e3
    return "%s, th = %g us" % (attr_str(g, "mode", v), th)


def plot_file(path, outdir, prefix, quiet):
    with h5py.File(path, "r") as f:
        scen = attr_str(f, "scenario_name", "scenario")
        vs = variants(f)
        if not vs:
            raise SystemExit("%s: no replay results (/replay is empty)" % path)

        # qdiff CDF
        fig, ax = plt.subplots(figsize=(6, 4))
        for v in vs:
            q = f["replay"][v]["qdiff"]["qdiff_bytes"][:] / MTU
            if q.size == 0:
                continue
            x = np.sort(q)
            y = np.arange(1, x.size + 1) / x.size
            ax.step(x, y, where="post", label=label(f, v))
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlabel("qdiff (MTU)")
        ax.set_ylabel("fraction of arrivals")
        ax.set_ylim(0, 1.01)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title("qdiff per arrival, runtime vs replay (%s)" % scen)
        save(fig, outdir, prefix + "qdiff_cdf", quiet)

        # drop error per variant, split by kind
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = np.arange(len(vs))
        bottom = np.zeros(len(vs))
        for part, color in (("false_accepts", "tab:orange"), ("false_drops", "tab:red"),
                            ("wrong_locations", "tab:purple")):
            vals = []
            for v in vs:
                g = f["replay"][v]
                either = float(g.attrs.get("dropped_in_either", 0))
                vals.append(100.0 * g.attrs.get(part, 0) / either if either else 0.0)
            ax.bar(xs, vals, bottom=bottom, color=color, label=part.replace("_", " "))
            bottom += np.array(vals)
        ax.set_xticks(xs)
        ax.set_xticklabels([label(f, v) for v in vs], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("drop error (% of packets dropped in either run)")
        ax.legend(fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title("drop error per replay (%s)" % scen)
        save(fig, outdir, prefix + "drop_error", quiet)

        # the busiest queue over time
        rt = f["runtime"]
        sw, port = int(rt.attrs.get("busiest_switch", 0)), int(rt.attrs.get("busiest_port", 0))
        fig, ax = plt.subplots(figsize=(7, 4))
        s = rt["busiest_queue"]
        # queue lengths seen at arrivals: steps, broken and shaded where no packet arrived
        arrival_steps(ax, s["time_ns"][:] / 1e6, s["queue_bytes"][:] / MTU, lw=1.2,
                      color="black", label="runtime")
        for v in vs:
            r = f["replay"][v]["busiest_queue"]
            arrival_steps(ax, r["time_ns"][:] / 1e6, r["queue_bytes"][:] / MTU, shade_gaps=False,
                          lw=0.7, alpha=0.7, label=label(f, v))
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("queue length (MTU)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title("busiest queue (switch %d, port %d) over time (%s)" % (sw, port, scen))
        save(fig, outdir, prefix + "busiest_queue", quiet)

        # runtime vs replay: queue length seen by the same packets
        n = len(vs)
        cols = min(n, 3)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False)
        t_run = s["time_ns"][:]
        q_run = s["queue_bytes"][:] / MTU
        for i, v in enumerate(vs):
            ax = axes[i // cols][i % cols]
            r = f["replay"][v]["busiest_queue"]
            m = min(len(q_run), len(r["queue_bytes"]))
            q_rep = r["queue_bytes"][:m] / MTU
            ax.plot(q_run[:m], q_rep, ".", ms=1.5, alpha=0.4)
            hi = max(q_run.max() if q_run.size else 1, q_rep.max() if q_rep.size else 1)
            ax.plot([0, hi], [0, hi], lw=0.8, color="black")
            ax.set_title(label(f, v), fontsize=8)
            ax.set_xlabel("runtime (MTU)", fontsize=7)
            ax.set_ylabel("replay (MTU)", fontsize=7)
        for j in range(n, rows * cols):
            axes[j // cols][j % cols].axis("off")
        del t_run
        fig.suptitle("busiest queue length, n-th arrival: replay vs runtime (%s)" % scen, fontsize=9)
        fig.tight_layout()
        save(fig, outdir, prefix + "runtime_vs_replay", quiet)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", help="results.h5 files")
    ap.add_argument("-o", "--out", help="output folder (default: figures/ next to each file)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    for path in a.results:
        if not os.path.exists(path):
            print("plot_results.py: %s: no such file" % path, file=sys.stderr)
            return 1
        try:
            with h5py.File(path, "r"):
                pass
        except OSError:
            print("plot_results.py: %s: not an HDF5 file" % path, file=sys.stderr)
            return 1
    for path in a.results:
        outdir = a.out or os.path.join(os.path.dirname(os.path.abspath(path)), "figures")
        make_outdir(outdir)
        prefix = ""
        if len(a.results) > 1:
            with h5py.File(path, "r") as f:
                prefix = attr_str(f, "scenario_name", "scenario") + "-"
        try:
            plot_file(path, outdir, prefix, a.quiet)
        except KeyError as e:
            print("plot_results.py: %s: not a qreplay results file (missing %s)" % (path, e),
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
