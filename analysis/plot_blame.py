#!/usr/bin/python3
"""Figures of a blame analysis (blame.h5 written by `qreplay blame`).

usage: plot_blame.py BLAME.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  blame_topology  the network drawn in layers (hosts, edge, aggregation, core), every cable
                  coloured and thickened by its 007 votes; flagged cables circled, cables with a
                  planted fault (truth) marked with a cross; with a replay, a second panel with
                  the replay's votes (losses the replay could not place); for links a path
                  file named (captures of an unknown network), the most voted as bars
  blame_curve     with truth: per method, the best rank of a faulty cable and the precision and
                  recall of the flagged cables against the number of voting connections seen
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from plotutil import figure_main, save  # noqa: E402


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def layout(links):
    """x, y of every node, by layer: hosts at y 0, edge 1, aggregation 2, core 3; each layer's
    nodes spread evenly in the order of their numbers (pods and racks stay together)."""
    layers = {"host": set(), "edge": set(), "agg": set(), "core": set()}
    for row in links:
        kind = text(row["layer"])
        lower, upper = {"host-edge": ("host", "edge"), "edge-agg": ("edge", "agg"),
                        "agg-core": ("agg", "core")}[kind]
        layers[lower].add(int(row["a"]))
        layers[upper].add(int(row["b"]))
    pos = {}
    for y, name in enumerate(["host", "edge", "agg", "core"]):
        nodes = sorted(layers[name])
        for i, n in enumerate(nodes):
            pos[(name, n)] = ((i + 0.5) / max(len(nodes), 1), float(y))
    return pos


def ends(row):
    lower, upper = {"host-edge": ("host", "edge"), "edge-agg": ("edge", "agg"),
                    "agg-core": ("agg", "core")}[text(row["layer"])]
    return (lower, int(row["a"])), (upper, int(row["b"]))


def topology_panel(ax, links, pos, votes_field, flag_field, title):
    votes = np.asarray(links[votes_field], dtype=float)
    top = votes.max() if len(votes) and votes.max() > 0 else 1.0
    segs, colors, widths = [], [], []
    cmap = plt.get_cmap("Reds")
    order = np.argsort(votes)  # the most voted drawn last, on top
    for i in order:
        a, b = ends(links[i])
        segs.append([pos[a], pos[b]])
        v = votes[i] / top
        colors.append(cmap(0.15 + 0.85 * v) if votes[i] > 0 else (0.85, 0.85, 0.85, 1))
        widths.append(0.6 + 4.0 * v)
    ax.add_collection(LineCollection(segs, colors=colors, linewidths=widths))
    for i in range(len(links)):
        a, b = ends(links[i])
        mid = ((pos[a][0] + pos[b][0]) / 2, (pos[a][1] + pos[b][1]) / 2)
        if links[flag_field][i]:
            ax.plot(*mid, "o", ms=11, mfc="none", mec="tab:blue", mew=1.8,
                    label="flagged" if "flagged" not in ax.get_legend_handles_labels()[1] else None)
        if links["faulty"][i]:
            ax.plot(*mid, "x", ms=9, color="black", mew=2,
                    label="planted fault" if "planted fault" not in
                    ax.get_legend_handles_labels()[1] else None)
    for (kind, n), (x, y) in pos.items():
        ax.plot(x, y, "s" if kind != "host" else "o", ms=4 if kind == "host" else 6,
                color="0.3")
    ax.set_yticks([0, 1, 2, 3])
    ax.set_yticklabels(["hosts", "edge", "aggregation", "core"])
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.3, 3.3)
    ax.set_title(title + " (max %.2f votes)" % top)
    if ax.get_legend_handles_labels()[1]:
        ax.legend(loc="upper right", fontsize=8)


def votes_figure(links, outdir, quiet):
    """Links named by a path file (captures of an unknown network): the most voted as bars."""
    order = np.argsort(-np.asarray(links["votes"], dtype=float))[:30]
    order = [i for i in order if links["votes"][i] > 0] or list(order[:1])
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(order) + 1.5))
    names = [text(links["name"][i]) for i in order]
    colors = ["tab:red" if links["flagged"][i] else "0.6" for i in order]
    ax.barh(range(len(order)), [links["votes"][i] for i in order], color=colors)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("007 votes (red: flagged by 007's rule)")
    ax.set_title("links of the traced paths, by votes")
    fig.tight_layout()
    save(fig, outdir, "blame_topology", quiet)


def topology_figure(f, outdir, quiet):
    links = f["links"][:]
    known = np.array([text(x) in ("host-edge", "edge-agg", "agg-core") for x in links["layer"]],
                     dtype=bool)
    if not known.all():
        # a path file's names are no cables of a drawable topology
        votes_figure(links, outdir, quiet)
        return
    pos = layout(links)
    replay = len(f["summary"]) > 1
    fig, axes = plt.subplots(1, 2 if replay else 1, figsize=(14 if replay else 8, 4.5),
                             squeeze=False)
    topology_panel(axes[0][0], links, pos, "votes", "flagged", "007 votes")
    if replay:
        topology_panel(axes[0][1], links, pos, "replay_votes", "replay_flagged",
                       "votes of losses the replay could not place")
    fig.tight_layout()
    save(fig, outdir, "blame_topology", quiet)


def curve_figure(f, outdir, quiet):
    curve = f["curve"][:]
    if len(curve) == 0 or not np.any(f["summary"]["faulty"] > 0):
        return
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for method, style in (("007", "-"), ("replay", "--")):
        c = curve[np.char.decode(curve["method"].astype("S")) == method]
        if len(c) == 0:
            continue
        rank = np.where(c["fault_rank"] > 0, c["fault_rank"], np.nan)
        a1.step(c["connections"], rank, where="post", ls=style, label=method)
        a2.step(c["connections"], c["recall"], where="post", ls=style, label=method + " recall")
        a2.step(c["connections"], c["precision"], where="post", ls=style, alpha=0.7,
                label=method + " precision")
    a1.set_xlabel("voting connections seen")
    a1.set_ylabel("best rank of a faulty cable")
    a1.set_yscale("log")
    a1.invert_yaxis()
    a1.legend()
    a2.set_xlabel("voting connections seen")
    a2.set_ylabel("share")
    a2.set_ylim(-0.05, 1.05)
    a2.legend(fontsize=8)
    a1.set_title("how soon the faulty cable comes first")
    a2.set_title("flagged cables against the planted faults")
    fig.tight_layout()
    save(fig, outdir, "blame_curve", quiet)


def main(argv):
    return figure_main(argv, __doc__, "blame.h5", ["links", "connections", "curve", "summary"],
                       "qreplay blame", [topology_figure, curve_figure])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
