#!/usr/bin/python3
"""Figures of TCP execution traces (/tcp_trace of `qreplay isolate --trace`).

usage: plot_tcp_trace.py ISOLATED.h5 [-o DIR] [--quiet]

In DIR (default: a 'figures' folder next to the file), as PNG and PDF, per traced flow F:
  tcp_trace_F  above: the time-sequence diagram (the sender's data segments by relative sequence
               number over time, the ACKs it received, retransmissions marked by trigger, lost
               packets crossed out, delayed ACKs of the receiver ringed); below: the congestion
               window, slow-start threshold, bytes in flight and the receiver's window, with the
               congestion state shaded (recovery, loss)
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from plotutil import figure_args, make_outdir, not_a, save  # noqa: E402

TRIGGERS = {"rto": "tab:red", "after-rto": "tab:orange", "fast-retransmit": "tab:purple",
            "recovery": "tab:pink", "other": "tab:brown"}
STATES = {3: ("recovery", "tab:purple"), 4: ("loss", "tab:red")}


def text(a):
    return np.char.decode(np.asarray(a).astype("S"))


def steps(vars_, name):
    sel = vars_[text(vars_["var"]) == name]
    return sel["time_ns"] / 1e6, sel["value"].astype(float)


def flow_figure(flow, grp, outdir, quiet):
    seg = grp["segments"][:]
    vars_ = grp["vars"][:]
    end, direction, retx, kind = (text(seg["end"]), text(seg["dir"]), text(seg["retx"]),
                                  text(seg["ack_kind"]))
    t = seg["time_ns"] / 1e6
    fig, (top, bot) = plt.subplots(2, 1, figsize=(9, 7), sharex=True,
                                   gridspec_kw={"height_ratios": [3, 2]})
    data = (end == "sender") & (direction == "tx") & (seg["len"] > 0)
    top.scatter(t[data], seg["seq"][data] / 1e3, s=6, marker="s", color="tab:blue",
                label="data sent")
    acks = (end == "sender") & (direction == "rx") & ((seg["flags"] & 0x10) != 0)
    top.step(t[acks], seg["ack"][acks] / 1e3, where="post", color="tab:green", lw=1,
             label="ACK received")
    for trig, color in TRIGGERS.items():
        m = (end == "sender") & (direction == "tx") & (retx == trig)
        if m.any():
            top.scatter(t[m], seg["seq"][m] / 1e3, s=40, facecolors="none", edgecolors=color,
                        linewidths=1.5, label="retransmission: " + trig)
    lost = (direction == "tx") & (seg["lost"] == 1) & (end == "sender")
    if lost.any():
        top.scatter(t[lost], seg["seq"][lost] / 1e3, s=40, marker="x", color="black",
                    label="lost (data direction)")
    lost_ack = (direction == "tx") & (seg["lost"] == 1) & (end == "receiver")
    if lost_ack.any():
        top.scatter(t[lost_ack], seg["ack"][lost_ack] / 1e3, s=40, marker="x", color="tab:gray",
                    label="lost ACK")
    delayed = (end == "receiver") & (kind == "delayed")
    if delayed.any():
        top.scatter(t[delayed], seg["ack"][delayed] / 1e3, s=60, facecolors="none",
                    edgecolors="tab:olive", label="delayed ACK (receiver)")
    top.set_ylabel("relative sequence (KB)")
    top.legend(fontsize=7, loc="upper left")
    thr = grp.attrs.get("dupack_threshold", 3)
    top.set_title("flow %d: %d retransmissions (%d recorded, %s), duplicate-ACK threshold %d"
                  % (flow, grp.attrs["retransmissions"], grp.attrs["recorded_retransmissions"],
                     "identical" if grp.attrs["matches_recording"] else "DIFFERENT", thr),
                  fontsize=9)
    ts, st = steps(vars_, "cong_state")
    end_ms = t.max() if len(t) else 1.0
    for i in range(len(ts)):
        if int(st[i]) in STATES:
            stop = ts[i + 1] if i + 1 < len(ts) else end_ms
            name, color = STATES[int(st[i])]
            for ax in (top, bot):
                ax.axvspan(ts[i], stop, color=color, alpha=0.12, lw=0)
    top_kb = 0.0
    for name, color, label in (("cwnd", "tab:blue", "cwnd"), ("ssthresh", "tab:red", "ssthresh"),
                               ("in_flight", "tab:gray", "bytes in flight"),
                               ("rwnd", "tab:green", "receiver window")):
        x, y = steps(vars_, name)
        y = np.where(y >= 2**31, np.nan, y)  # ssthresh starts "infinite"
        if len(x) and np.isfinite(y).any():
            bot.step(np.append(x, end_ms), np.append(y, y[-1]) / 1e3, where="post", color=color,
                     lw=1, label=label)
            if name != "rwnd":
                top_kb = max(top_kb, np.nanmax(y) / 1e3)
    if top_kb > 0:  # a receiver window far above the congestion window would flatten the rest
        bot.set_ylim(0, top_kb * 1.6)
    bot.set_ylabel("KB")
    bot.set_xlabel("time (ms)")
    bot.legend(fontsize=7, loc="upper left", ncol=2)
    save(fig, outdir, "tcp_trace_%d" % flow, quiet)


def main(argv):
    got = figure_args(argv, __doc__, "isolated.h5 with /tcp_trace")
    if got is None:
        return 1
    a, f, outdir = got
    if not_a(f, a.path, ["tcp_trace"], "qreplay isolate --trace"):
        return 1
    make_outdir(outdir)
    for name in sorted(f["tcp_trace"], key=int):
        flow_figure(int(name), f["tcp_trace"][name], outdir, a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
