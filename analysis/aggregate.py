#!/usr/bin/python3
"""Collect the results.h5 files of a sweep into one table and draw the sweep's figures.

usage: aggregate.py --out DIR [--name NAME] RESULTS.h5 [RESULTS.h5 ...]
       aggregate.py --out DIR [--name NAME] --from-csv SUMMARY.csv [SUMMARY.csv ...]

The second form only redraws the figures from stored summary tables (data/results/*.csv, or
several sweeps' tables together, e.g. one per load), without the runs.

Writes DIR/summary.csv and DIR/summary.h5 (one row per run and replay variant: load, seed, mode,
threshold, qdiff mean/p50/p99/max in MTU, drops in runtime and replay, false accepts, false drops,
wrong locations, drop error, and the run's wall time and peak memory when snakemake's benchmark file
DIR/benchmarks/load_<L>_seed_<S>.tsv exists), and in DIR/figures (PNG and PDF):
  sweep_qdiff       qdiff mean and p99 (MTU) against load, one line per threshold, per mode
  sweep_drop_error  drop error against load, plain vs tagged, one line per threshold
  sweep_error_kinds the share of false accepts, false drops and wrong locations among the drop
                    errors, against load (tagged mode, the middle threshold)
Titles name the sweep. Uses Debian's python3-h5py, numpy and matplotlib.
"""
import argparse
import csv
import os
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FIELDS = ["load_pct", "seed", "variant", "mode", "th_us", "qdiff_mean_mtu", "qdiff_p50_mtu",
          "qdiff_p99_mtu", "qdiff_max_mtu", "qdiff_zero_fraction", "runtime_drops", "replay_drops",
          "false_accepts", "false_drops", "wrong_locations", "drop_error", "matched_arrivals",
          "wall_s", "max_rss_mb"]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def bench(outdir, load, seed):
    """Wall time (s) and peak memory (MB) from snakemake's benchmark file, if there is one."""
    path = os.path.join(outdir, "benchmarks", "load_%s_seed_%s.tsv" % (load, seed))
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        return float(rows[0]["s"]), float(rows[0]["max_rss"])
    except (OSError, KeyError, IndexError, ValueError):
        return float("nan"), float("nan")


def rows_of(path, outdir):
    with h5py.File(path, "r") as f:
        load = text(f.attrs["traffic.load"]).rstrip("%")
        seed = int(text(f.attrs["run.seed"]))
        wall, rss = bench(outdir, load, seed)
        for v in f["replay"]:
            g = f["replay"][v].attrs
            yield {"load_pct": float(load), "seed": seed, "variant": v, "mode": text(g["mode"]),
                   "th_us": g["th_ns"] / 1e3, "qdiff_mean_mtu": g["qdiff_mean_mtu"],
                   "qdiff_p50_mtu": g["qdiff_p50_mtu"], "qdiff_p99_mtu": g["qdiff_p99_mtu"],
                   "qdiff_max_mtu": g["qdiff_max_mtu"], "qdiff_zero_fraction": g["qdiff_zero_fraction"],
                   "runtime_drops": int(g["runtime_drops"]), "replay_drops": int(g["replay_drops"]),
                   "false_accepts": int(g["false_accepts"]), "false_drops": int(g["false_drops"]),
                   "wrong_locations": int(g["wrong_locations"]), "drop_error": g["drop_error"],
                   "matched_arrivals": int(g["matched_arrivals"]), "wall_s": wall, "max_rss_mb": rss}


def save(fig, outdir, name):
    os.makedirs(os.path.join(outdir, "figures"), exist_ok=True)
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(outdir, "figures", name + "." + ext), dpi=150 if ext == "png" else None,
                    bbox_inches="tight")
    plt.close(fig)


def mean_by(rows, mode, th, key):
    loads = sorted({r["load_pct"] for r in rows})
    ys = []
    for l in loads:
        v = [r[key] for r in rows if r["mode"] == mode and r["th_us"] == th and r["load_pct"] == l]
        ys.append(np.mean(v) if v else np.nan)
    return loads, ys


def figures(rows, outdir, name):
    modes = sorted({r["mode"] for r in rows})
    ths = sorted({r["th_us"] for r in rows})
    fig, axes = plt.subplots(1, len(modes), figsize=(5 * len(modes), 3.8), squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for th in ths:
            x, m = mean_by(rows, mode, th, "qdiff_mean_mtu")
            _, p = mean_by(rows, mode, th, "qdiff_p99_mtu")
            line, = ax.plot(x, m, "o-", label="mean, th = %g us" % th)
            ax.plot(x, p, "s--", color=line.get_color(), label="p99, th = %g us" % th)
        ax.set_xlabel("load (%)")
        ax.set_ylabel("qdiff (MTU)")
        ax.set_title("%s replay" % mode)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("qdiff against load (%s)" % name)
    fig.tight_layout()
    save(fig, outdir, "sweep_qdiff")

    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, style in (("plain", "s--"), ("tagged", "o-")):
        for th in ths:
            x, e = mean_by(rows, mode, th, "drop_error")
            if not np.all(np.isnan(e)):
                ax.plot(x, 100 * np.array(e), style, label="%s, th = %g us" % (mode, th))
    ax.set_xlabel("load (%)")
    ax.set_ylabel("drop error (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("drop error against load, plain vs tagged (%s)" % name)
    save(fig, outdir, "sweep_drop_error")

    th = ths[len(ths) // 2]
    loads = sorted({r["load_pct"] for r in rows})
    shares = {k: [] for k in ("false_accepts", "false_drops", "wrong_locations")}
    for l in loads:
        sel = [r for r in rows if r["mode"] == "tagged" and r["th_us"] == th and r["load_pct"] == l]
        tot = sum(r["false_accepts"] + r["false_drops"] + r["wrong_locations"] for r in sel)
        for k in shares:
            shares[k].append(100.0 * sum(r[k] for r in sel) / tot if tot else 0.0)
    fig, ax = plt.subplots(figsize=(6, 4))
    bottom = np.zeros(len(loads))
    width = 0.8 * (min(np.diff(loads)) if len(loads) > 1 else 10)
    for k, color in (("false_accepts", "tab:orange"), ("false_drops", "tab:red"),
                     ("wrong_locations", "tab:purple")):
        ax.bar(loads, shares[k], width=width, bottom=bottom, color=color, label=k.replace("_", " "))
        bottom += np.array(shares[k])
    ax.set_xlabel("load (%)")
    ax.set_ylabel("share of drop errors (%)")
    ax.legend(fontsize=7)
    ax.set_title("kinds of drop error, tagged, th = %g us (%s)" % (th, name))
    save(fig, outdir, "sweep_error_kinds")


def rows_of_csv(path):
    """The rows of a summary table written by this script (numbers as floats)."""
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        missing = [k for k in ("load_pct", "mode", "th_us", "qdiff_mean_mtu", "qdiff_p99_mtu",
                               "drop_error") if k not in (rd.fieldnames or [])]
        if missing:
            raise KeyError("no column " + ", ".join(missing))
        out = []
        for line, r in enumerate(rd, start=2):
            row = {}
            for k, v in r.items():
                if k in ("variant", "mode"):
                    row[k] = v
                elif v in ("", None):
                    row[k] = float("nan")
                else:
                    try:
                        row[k] = float(v)
                    except ValueError:
                        raise ValueError("line %d, column %s: '%s' is not a number" % (line, k, v))
            out.append(row)
        return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", default="sweep")
    ap.add_argument("--from-csv", nargs="+", metavar="CSV",
                    help="redraw the figures from summary tables instead of results files")
    ap.add_argument("results", nargs="*")
    a = ap.parse_args(argv)
    if a.from_csv:
        if a.results:
            ap.error("give results files or --from-csv tables, not both")
        rows = []
        for p in a.from_csv:
            try:
                rows.extend(rows_of_csv(p))
            except (OSError, KeyError, ValueError) as e:
                print("aggregate.py: %s: not a sweep summary table (%s)" % (p, e), file=sys.stderr)
                return 1
        if not rows:
            print("aggregate.py: no rows in %s" % ", ".join(a.from_csv), file=sys.stderr)
            return 1
        os.makedirs(a.out, exist_ok=True)
        figures(rows, a.out, a.name)
        return 0
    if not a.results:
        ap.error("no results files")
    rows = []
    for p in a.results:
        try:
            rows.extend(rows_of(p, a.out))
        except (OSError, KeyError) as e:
            print("aggregate.py: %s: not a qreplay results file (%s)" % (p, e), file=sys.stderr)
            return 1
    rows.sort(key=lambda r: (r["load_pct"], r["seed"], r["mode"], r["th_us"]))
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "summary.csv.partial")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    dt = np.dtype([(k, "S32") if k in ("variant", "mode") else (k, "f8") for k in FIELDS])
    arr = np.array([tuple(r[k].encode() if isinstance(r[k], str) else r[k] for k in FIELDS) for r in rows],
                   dtype=dt)
    tmph5 = os.path.join(a.out, "summary.h5.partial")
    with h5py.File(tmph5, "w") as f:
        d = f.create_dataset("runs", data=arr, compression="gzip")
        d.attrs["sweep"] = a.name
        for k in FIELDS:
            if k.endswith("_mtu"):
                d.attrs["unit:" + k] = "MTU"
    os.replace(tmph5, os.path.join(a.out, "summary.h5"))
    os.replace(tmp, os.path.join(a.out, "summary.csv"))
    figures(rows, a.out, a.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
