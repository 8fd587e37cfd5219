#!/usr/bin/python3
"""Pingmesh's heatmap patterns, side by side: the drop-rate matrices of several runs.

usage: plot_pingmesh_patterns.py LABEL=PINGMESH.h5 [LABEL=PINGMESH.h5 ...] -o DIR [--quiet]

Draws DIR/pingmesh_patterns (PNG and PDF): one rack matrix per run (rows probing racks, columns
probed racks, by pod then rack, pods separated by lines), all on one colour scale, titled by
LABEL, in the order given. Pingmesh (SIGCOMM 2015, its figure of heatmap patterns) reads a
failure's place from such a picture: a ToR's row and column, a pod's band of rows and columns,
and, for the spine, every cell between pods while the blocks inside the pods stay clear.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plot_pingmesh import matrix, pod_lines  # noqa: E402
from plotutil import make_outdir, save  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=PINGMESH.h5")
    ap.add_argument("-o", "--out", required=True, help="output folder")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    import h5py
    mats = []
    for spec in a.runs:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            print("plot_pingmesh_patterns.py: '%s' is not LABEL=PINGMESH.h5" % spec,
                  file=sys.stderr)
            return 1
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            print("plot_pingmesh_patterns.py: %s: %s" % (path, e), file=sys.stderr)
            return 1
        if "racks" not in f or "racks" not in f.attrs:
            print("plot_pingmesh_patterns.py: %s: not a qreplay pingmesh result" % path,
                  file=sys.stderr)
            return 1
        n = int(f.attrs["racks"])
        racks = f["racks"][:]
        mats.append((label, n, racks, matrix(racks, n, "drop_rate") * 100))
    top = max((np.nanmax(m) for _, _, _, m in mats if np.any(np.isfinite(m))), default=1.0)
    top = top if top > 0 else 1.0
    cmap = plt.get_cmap("Reds").copy()
    cmap.set_bad("white")
    fig, axes = plt.subplots(1, len(mats), figsize=(3.6 * len(mats) + 1, 3.8), squeeze=False)
    im = None
    for ax, (label, n, racks, m) in zip(axes[0], mats):
        im = ax.imshow(m, cmap=cmap, vmin=0, vmax=top, interpolation="nearest")
        pod_lines(ax, racks, n)
        ax.set_title(label, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("probed rack")
    axes[0][0].set_ylabel("probing rack")
    fig.colorbar(im, ax=list(axes[0]), label="probe drop rate (%)", fraction=0.02)
    make_outdir(os.path.abspath(a.out))
    save(fig, a.out, "pingmesh_patterns", a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
