#!/usr/bin/python3
"""Figures of a causal-paths analysis (paths.h5 written by `qreplay paths`).

usage: plot_paths.py PATHS.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF:
  paths_timelines   WAP5's timelines of the most expected patterns: one row per host, a box on
                    a host for the time between a message's arrival and the next message it
                    sends (the node delay), a line for each message from its send to its arrival
                    (the network delay), each labelled with its mean; a host whose delays were
                    never measured (no trace) is a diamond
  paths_delays      histograms of the node delays of the most expected pattern's hops, and of
                    the network delays of the links named slow (or the slowest)
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_main, save  # noqa: E402

TOP = 4


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def hops_of(f, rank):
    h = f["hops"][:]
    return h[h["rank"] == rank]


def timeline(ax, hops, title):
    """Mean times of one pattern: the root leaves at 0; a hop arrives its mean network delay after
    it left; a child leaves its mean node delay after its parent arrived."""
    n = len(hops)
    send = np.zeros(n)
    recv = np.zeros(n)
    for i in range(n):
        p = int(hops["parent"][i])
        send[i] = 0.0 if p < 0 else recv[p] + hops["node_mean_ns"][i] / 1e3
        recv[i] = send[i] + hops["net_mean_ns"][i] / 1e3
    rows = []
    for i in range(n):
        for h in (int(hops["src"][i]), int(hops["dst"][i])):
            if h not in rows:
                rows.append(h)
    y = {h: len(rows) - 1 - k for k, h in enumerate(rows)}
    for i in range(n):
        s, d = int(hops["src"][i]), int(hops["dst"][i])
        ax.annotate("", xy=(recv[i], y[d]), xytext=(send[i], y[s]),
                    arrowprops=dict(arrowstyle="->", lw=1.2, color="tab:blue"))
        ax.text((send[i] + recv[i]) / 2, (y[s] + y[d]) / 2, "%.0f" % (recv[i] - send[i]),
                fontsize=7, color="tab:blue", ha="center", va="bottom")
        p = int(hops["parent"][i])
        if p >= 0:
            if hops["node_n"][i] > 0:
                ax.add_patch(plt.Rectangle((recv[p], y[s] - 0.15), send[i] - recv[p], 0.3,
                                           color="tab:orange", alpha=0.6))
                ax.text((recv[p] + send[i]) / 2, y[s] + 0.2, "%.0f" % (send[i] - recv[p]),
                        fontsize=7, color="tab:red", ha="center")
            else:
                ax.plot([send[i]], [y[s]], marker="D", color="tab:gray")
    ax.set_yticks([y[h] for h in rows])
    ax.set_yticklabels(["host %d" % h for h in rows])
    ax.set_xlabel("us after the request left (means)")
    ax.set_xlim(-0.05 * max(recv.max(), 1), 1.1 * max(recv.max(), 1))
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_title(title, fontsize=8)


def timelines_figure(f, outdir, quiet):
    pats = f["patterns"][:]
    k = min(TOP, len(pats))
    if k == 0:
        return
    fig, axes = plt.subplots(k, 1, figsize=(9, 2.6 * k), squeeze=False)
    for i in range(k):
        row = pats[i]
        title = "#%d  %s   count %d, expected %.1f" % (row["rank"], text(row["shape"]),
                                                       row["count"], row["expected"])
        if row["true_count"] >= 0:
            title += ", true %d" % row["true_count"]
        timeline(axes[i][0], hops_of(f, row["rank"]), title)
    fig.suptitle("WAP5 timelines (%s): boxes are node delays, arrows messages, in us"
                 % text(f.attrs["method"]), fontsize=9)
    fig.tight_layout()
    save(fig, outdir, "paths_timelines", quiet)


def delays_figure(f, outdir, quiet):
    pats = f["patterns"][:]
    if len(pats) == 0:
        return
    d = f["delays"][:]
    hops = hops_of(f, pats[0]["rank"])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
    top = d[(d["rank"] == pats[0]["rank"]) & (d["network"] == 0)]
    for pos in np.unique(top["pos"]):
        v = top[top["pos"] == pos]["ns"] / 1e3
        h = hops[hops["pos"] == pos][0]
        a1.hist(v, bins=30, histtype="step", label="before %d>%d" % (h["src"], h["dst"]))
    a1.set_xlabel("node delay (us)")
    a1.set_ylabel("requests")
    a1.set_title("pattern #1: node delays per hop", fontsize=9)
    a1.legend(fontsize=7)
    sus = f["suspects"][:]
    links = [(int(s["a"]), int(s["b"])) for s in sus if text(s["kind"]) == "link"]
    net = f["hops"][:]
    if not links and len(net):
        k = int(np.argmax(net["net_mean_ns"]))
        links = [(int(min(net["src"][k], net["dst"][k])), int(max(net["src"][k], net["dst"][k])))]
    allnet = d[d["network"] == 1]
    key = {(int(r["rank"]), int(r["pos"])): (int(min(r["src"], r["dst"])), int(max(r["src"], r["dst"])))
           for r in net}
    ends = np.array([key[(int(r), int(p))] for r, p in zip(allnet["rank"], allnet["pos"])]) \
        if len(allnet) else np.zeros((0, 2))
    a2.hist(allnet["ns"] / 1e3, bins=40, histtype="stepfilled", alpha=0.3, label="every link")
    for a, b in links:
        sel = (ends[:, 0] == a) & (ends[:, 1] == b) if len(ends) else []
        a2.hist(allnet["ns"][sel] / 1e3, bins=40, histtype="step", lw=1.5,
                label="link %d-%d" % (a, b))
    a2.set_xlabel("network delay, offsets taken out (us)")
    a2.set_title("network delays: named links against every link", fontsize=9)
    a2.legend(fontsize=7)
    fig.tight_layout()
    save(fig, outdir, "paths_delays", quiet)


def main(argv):
    return figure_main(argv, __doc__, "paths.h5", ["messages", "patterns", "hops", "delays"],
                       "qreplay paths", [timelines_figure, delays_figure])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
