#!/usr/bin/python3
"""Figures of a what-if grid (whatif.h5 written by `qreplay whatif`).

usage: plot_whatif.py WHATIF.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  whatif_vs_KEY        drops, p99 queueing delay, p99 queue occupancy and the share of flows
                       losing a packet against each varied KEY, one line per combination of the
                       other keys (validated grids: the truth dashed, in the same colour)
  whatif_heatmap       for a two-key grid: predicted drops and p99 delay over the grid (and the
                       truth's next to them when validated)
  whatif_occupancy_cdf per layer (edge, aggregation, core): the CDF of the queue length arriving
                       packets saw, one line per point
  whatif_pred_vs_true  validated grids: predicted against true per metric, one dot per point, the
                       diagonal is a perfect prediction
"""
import itertools
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_args, make_outdir, not_a, save  # noqa: E402

LAYERS = ["edge", "agg", "core"]
METRICS = [("drops", "drops (packets)", 1.0),
           ("delay_p99", "p99 queueing delay per packet (us)", 1e-3),
           ("all_q_p99", "p99 queue length at arrivals (KB)", 1e-3),
           ("lossy_share", "flows losing a packet (%)", 100.0)]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load(f):
    keys = text(f["grid"].attrs["keys"]).split(",")
    grid = f["grid"][:]
    values = {k: [text(v) for v in grid[k]] for k in keys}
    summ = f["summary"][:]
    pred = {int(r["point"]): r for r in summ[summ["kind"] == 0]}
    truth = {int(r["point"]): r for r in summ[summ["kind"] == 1]}
    base = int(f.attrs.get("baseline", 0))
    return keys, values, len(grid), pred, truth, base


def ordered(vals):
    """A key's distinct values in grid order."""
    seen = []
    for v in vals:
        if v not in seen:
            seen.append(v)
    return seen


def vs_key(keys, values, n, pred, truth, base, outdir, quiet):
    for key in keys:
        xs = ordered(values[key])
        others = [k for k in keys if k != key]
        combos = sorted(set(tuple(values[k][p] for k in others) for p in range(n)))
        fig, axes = plt.subplots(1, len(METRICS), figsize=(4.2 * len(METRICS), 3.6))
        for ax, (field, label, scale) in zip(axes, METRICS):
            for ci, combo in enumerate(combos):
                pts = [p for p in range(n) if tuple(values[k][p] for k in others) == combo and
                       p in pred]
                pts.sort(key=lambda p: xs.index(values[key][p]))
                x = [xs.index(values[key][p]) for p in pts]
                name = ", ".join("%s=%s" % (k, v) for k, v in zip(others, combo)) or "predicted"
                line, = ax.plot(x, [pred[p][field] * scale for p in pts], "o-", label=name)
                if truth:
                    ax.plot(x, [truth[p][field] * scale for p in pts if p in truth], "s--",
                            color=line.get_color(), alpha=0.7,
                            label="truth" if ci == 0 and not others else None)
                if base in pts:
                    ax.plot([xs.index(values[key][base])], [pred[base][field] * scale], "k*",
                            ms=12, label="recorded" if ci == 0 else None)
            ax.set_xticks(range(len(xs)))
            ax.set_xticklabels(xs)
            ax.set_xlabel(key)
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.suptitle("what-if: against %s%s" % (key, " (dashed: closed-loop truth)"
                                                 if truth else ""))
        fig.tight_layout()
        save(fig, outdir, "whatif_vs_" + key.replace(".", "_"), quiet)


def heatmap(keys, values, n, pred, truth, outdir, quiet):
    if len(keys) != 2:
        return
    ys, xs = ordered(values[keys[0]]), ordered(values[keys[1]])
    panels = [("drops", "predicted drops", pred, 1.0), ("delay_p99", "predicted p99 delay (us)",
                                                         pred, 1e-3)]
    if truth:
        panels += [("drops", "true drops", truth, 1.0), ("delay_p99", "true p99 delay (us)",
                                                         truth, 1e-3)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.6))
    for ax, (field, title, src, scale) in zip(np.atleast_1d(axes), panels):
        m = np.full((len(ys), len(xs)), np.nan)
        for p in range(n):
            if p in src:
                m[ys.index(values[keys[0]][p]), xs.index(values[keys[1]][p])] = \
                    src[p][field] * scale
        im = ax.imshow(m, cmap="viridis", aspect="auto", origin="lower")
        for i, j in itertools.product(range(len(ys)), range(len(xs))):
            if not np.isnan(m[i, j]):
                ax.text(j, i, "%.0f" % m[i, j], ha="center", va="center", color="w", fontsize=8)
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels(xs)
        ax.set_yticks(range(len(ys)))
        ax.set_yticklabels(ys)
        ax.set_xlabel(keys[1])
        ax.set_ylabel(keys[0])
        ax.set_title(title)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    save(fig, outdir, "whatif_heatmap", quiet)


def occupancy_cdf(f, keys, values, n, outdir, quiet):
    qt = f["quantiles"][:]
    qt = qt[qt["kind"] == 0]
    layers = [l for l in range(3) if (qt[qt["layer"] == l]["queue_bytes"] > 0).any()] or [0]
    fig, axes = plt.subplots(1, len(layers), figsize=(4.4 * len(layers), 3.6), squeeze=False)
    cmap = plt.get_cmap("viridis")
    for ax, l in zip(axes[0], layers):
        for p in range(n):
            r = qt[(qt["point"] == p) & (qt["layer"] == l)]
            if len(r) == 0:
                continue
            name = ", ".join("%s=%s" % (k, values[k][p]) for k in keys)
            ax.plot(r["queue_bytes"] / 1e3, r["p"], color=cmap(p / max(1, n - 1)), label=name)
        ax.set_xlabel("queue length at arrivals (KB)")
        ax.set_ylabel("CDF")
        ax.set_title(LAYERS[l] + " queues")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=6)
    fig.suptitle("what-if: queue occupancy per layer (predicted)")
    fig.tight_layout()
    save(fig, outdir, "whatif_occupancy_cdf", quiet)


def pred_vs_true(pred, truth, n, outdir, quiet):
    if not truth:
        return
    fields = METRICS[:3] + [("delay_p50", "p50 queueing delay per packet (us)", 1e-3)]
    fig, axes = plt.subplots(1, len(fields), figsize=(4.0 * len(fields), 3.8))
    for ax, (field, label, scale) in zip(axes, fields):
        pts = [p for p in range(n) if p in pred and p in truth]
        x = np.array([truth[p][field] * scale for p in pts], dtype=float)
        y = np.array([pred[p][field] * scale for p in pts], dtype=float)
        ax.plot(x, y, "o")
        for p, a, b in zip(pts, x, y):
            ax.annotate(str(p), (a, b), fontsize=7, xytext=(3, 3), textcoords="offset points")
        hi = max(x.max() if len(x) else 1, y.max() if len(y) else 1) * 1.05 or 1
        ax.plot([0, hi], [0, hi], "k:", lw=1)
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        ax.set_xlabel("true (closed loop)")
        ax.set_ylabel("predicted (open loop)")
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle("what-if prediction against the closed-loop truth (labels: grid points)")
    fig.tight_layout()
    save(fig, outdir, "whatif_pred_vs_true", quiet)


def main(argv):
    opened = figure_args(argv, __doc__, "whatif.h5")
    if opened is None:
        return 1
    a, f, outdir = opened
    with f:
        if not_a(f, a.path, ["grid", "summary"], "what-if"):
            return 1
        make_outdir(outdir)
        keys, values, n, pred, truth, base = load(f)
        vs_key(keys, values, n, pred, truth, base, outdir, a.quiet)
        heatmap(keys, values, n, pred, truth, outdir, a.quiet)
        occupancy_cdf(f, keys, values, n, outdir, a.quiet)
        pred_vs_true(pred, truth, n, outdir, a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
