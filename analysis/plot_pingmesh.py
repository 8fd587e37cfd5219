#!/usr/bin/python3
"""Figures of a Pingmesh analysis (pingmesh.h5 written by `qreplay pingmesh`).

usage: plot_pingmesh.py PINGMESH.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  pingmesh_heatmap  the rack matrix drawn as Pingmesh draws it: rows are probing racks,
                    columns probed racks, both ordered by pod then rack, pods separated by
                    lines; left the drop rate (white: no probes), right the p99 round-trip
                    time; flagged places outlined (a pod's rows and columns, a rack's row and
                    column, a rack pair's cell)
  pingmesh_curve    with planted faults: places flagged and those pointing at a faulty cable,
                    against the probes seen, and when the faults were detected for good
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_main, save  # noqa: E402


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def matrix(racks, n, field):
    m = np.full((n, n), np.nan)
    for row in racks:
        if row["probes"] > 0:
            v = float(row[field])
            m[int(row["src_rack"]), int(row["dst_rack"])] = np.nan if v < 0 else v
    return m


def pod_lines(ax, racks, n):
    pods = np.zeros(n, dtype=int)
    for row in racks:
        pods[int(row["src_rack"])] = int(row["src_pod"])
    for i in range(1, n):
        if pods[i] != pods[i - 1]:
            ax.axhline(i - 0.5, color="k", lw=0.8)
            ax.axvline(i - 0.5, color="k", lw=0.8)
    return pods


def outline(ax, places, pods, n):
    """Outline the flagged places on a matrix."""
    from matplotlib.patches import Rectangle
    for p in places:
        if p["flagged"] == 0:
            continue
        kind, idx = text(p["kind"]), int(p["index"])
        label = "%d: %s" % (p["flagged"], text(p["name"]))
        color = plt.get_cmap("tab10")((int(p["flagged"]) - 1) % 10)
        style = dict(fill=False, ec=color, lw=2.5, ls="--" if p["flagged"] > 1 else "-")
        if kind == "racks":
            a, b = divmod(idx, n)
            ax.add_patch(Rectangle((b - 0.5, a - 0.5), 1, 1, **style))
        elif kind in ("rack", "pod"):
            rows = [idx] if kind == "rack" else [i for i in range(n) if pods[i] == idx]
            lo, hi = min(rows), max(rows)
            ax.add_patch(Rectangle((-0.5, lo - 0.5), n, hi - lo + 1, **style))
            ax.add_patch(Rectangle((lo - 0.5, -0.5), hi - lo + 1, n, **style))
        elif kind == "spine":
            ax.add_patch(Rectangle((-0.5, -0.5), n, n, **style))
        else:
            continue
        ax.plot([], [], color=color, lw=2.5, ls=style["ls"], label=label)
    if any(p["flagged"] for p in places):
        ax.legend(loc="upper left", bbox_to_anchor=(1.25, 1.0), fontsize=8, title="flagged")


def heatmap_figure(f, outdir, quiet):
    racks = f["racks"][:]
    n = int(f.attrs["racks"])
    places = f["places"][:]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5.2))
    drop = matrix(racks, n, "drop_rate")
    cmap = plt.get_cmap("Reds").copy()
    cmap.set_bad("white")
    top = np.nanmax(drop) if np.any(np.isfinite(drop)) and np.nanmax(drop) > 0 else 0.01
    im = a1.imshow(drop * 100, cmap=cmap, vmin=0, vmax=top * 100, interpolation="nearest")
    fig.colorbar(im, ax=a1, label="drop rate (%)", fraction=0.046)
    p99 = matrix(racks, n, "p99_ns") / 1e3
    cmap2 = plt.get_cmap("viridis").copy()
    cmap2.set_bad("white")
    im2 = a2.imshow(p99, cmap=cmap2, interpolation="nearest")
    fig.colorbar(im2, ax=a2, label="p99 round-trip time (us)", fraction=0.046)
    for ax, title in ((a1, "probe drop rate"), (a2, "probe p99 latency")):
        pods = pod_lines(ax, racks, n)
        ax.set_xlabel("probed rack (edge switch), by pod")
        ax.set_ylabel("probing rack")
        ax.set_title(title)
        if n <= 16:
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            ax.set_xticklabels(["s%d" % i for i in range(n)], fontsize=7)
            ax.set_yticklabels(["s%d" % i for i in range(n)], fontsize=7)
    outline(a1, places, pods, n)
    fig.tight_layout()
    save(fig, outdir, "pingmesh_heatmap", quiet)


def curve_figure(f, outdir, quiet):
    curve = f["curve"][:]
    s = f["summary"][0]
    if len(curve) == 0 or s["faulty"] == 0:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.step(curve["probes"], curve["flagged"], where="post", label="places flagged")
    ax.step(curve["probes"], curve["right"], where="post", ls="--",
            label="of them pointing at a faulty cable")
    if s["detect_after"] > 0:
        ax.axvline(s["detect_after"], color="k", ls=":", lw=1,
                   label="detected for good (%.2f ms)" % (s["detect_after_ns"] / 1e6))
    ax.set_xlabel("probes seen (by send time)")
    ax.set_ylabel("places")
    ax.set_title("the detection rule on the first N probes")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, outdir, "pingmesh_curve", quiet)


def main(argv):
    return figure_main(argv, __doc__, "pingmesh.h5",
                       ["pairs", "racks", "places", "curve", "summary"], "qreplay pingmesh",
                       [heatmap_figure, curve_figure])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
