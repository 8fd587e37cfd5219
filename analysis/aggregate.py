#!/usr/bin/python3
"""Collect the results.h5 files of a sweep into one table and draw the sweep's figures.

usage: aggregate.py --out DIR [--name NAME] RESULTS.h5 [RESULTS.h5 ...]
       aggregate.py --out DIR [--name NAME] --from-csv SUMMARY.csv [SUMMARY.csv ...]

The second form only redraws the figures from stored summary tables (data/results/*.csv, or
several sweeps' tables together, e.g. one per load), without the runs.

Writes DIR/summary.csv and DIR/summary.h5 (one row per run and replay variant: load, seed, mode,
threshold, qdiff mean/p50/p99/max in MTU, drops in runtime and replay, false accepts, false drops,
wrong locations, drop error, and the run's wall time and peak memory when snakemake's benchmark file
DIR/benchmarks/load_<L>_seed_<S>.tsv exists); DIR/points.csv and summary.h5's /points (one row per
load and variant over its seeds: how many, and per metric the mean, the standard deviation and the
half-width of the 95% confidence interval of the mean, Student's t with n - 1 degrees of freedom;
empty with one seed); and in DIR/figures (PNG and PDF), with 95% intervals as error bars when a point
has two seeds or more:
  sweep_qdiff       qdiff mean and p99 (MTU) against load, one line per threshold, per mode
  sweep_drop_error  drop error against load, plain vs tagged, one line per threshold
  sweep_error_kinds the share of false accepts, false drops and wrong locations among the drop
                    errors, against load (tagged mode, the middle threshold)
Titles name the sweep. Uses Debian's python3-h5py, numpy and matplotlib.
"""
import argparse
import csv
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from intervals import interval  # noqa: E402

FIELDS = ["load_pct", "seed", "variant", "mode", "th_us", "qdiff_mean_mtu", "qdiff_p50_mtu",
          "qdiff_p99_mtu", "qdiff_max_mtu", "qdiff_zero_fraction", "runtime_drops", "replay_drops",
          "false_accepts", "false_drops", "wrong_locations", "drop_error", "matched_arrivals",
          "wall_s", "max_rss_mb"]


# the metrics summarized over seeds, per point
POINT_METRICS = ["qdiff_mean_mtu", "qdiff_p50_mtu", "qdiff_p99_mtu", "qdiff_max_mtu", "drop_error",
                 "false_accepts", "false_drops", "wrong_locations", "runtime_drops", "replay_drops"]
POINT_FIELDS = ["load_pct", "variant", "mode", "th_us", "seeds"] + [
    "%s_%s" % (m, s) for m in POINT_METRICS for s in ("mean", "sd", "ci95")]

def points(rows):
    """One row per (load, variant): its seeds' count and per metric mean, sd and 95% interval."""
    keys = sorted({(r["load_pct"], r["variant"], r["mode"], r["th_us"]) for r in rows},
                  key=lambda k: (k[0], k[2], k[3]))
    out = []
    for load, variant, mode, th in keys:
        sel = [r for r in rows if r["load_pct"] == load and r["variant"] == variant]
        p = {"load_pct": load, "variant": variant, "mode": mode, "th_us": th,
             "seeds": len({r.get("seed") for r in sel})}
        for m in POINT_METRICS:
            _, mean, sd, ci = interval([r.get(m, float("nan")) for r in sel])
            p[m + "_mean"], p[m + "_sd"], p[m + "_ci95"] = mean, sd, ci
        out.append(p)
    return out


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
    """Loads, the mean over seeds at each, and the half-width of its 95% interval (0 with one
    seed: no bar)."""
    loads = sorted({r["load_pct"] for r in rows})
    ys, cis = [], []
    for l in loads:
        n, mean, _, ci = interval([r[key] for r in rows
                                   if r["mode"] == mode and r["th_us"] == th and r["load_pct"] == l])
        ys.append(mean if n else np.nan)
        cis.append(ci if ci == ci else 0.0)
    return loads, ys, cis


def dodge(x, i, n):
    """Loads shifted a little per line (of n) so that their error bars do not hide each other."""
    return [v + 0.4 * (i - (n - 1) / 2) for v in x]


def seeds_note(rows):
    """What the error bars are, for a title."""
    n = len({r.get("seed") for r in rows})
    return "; %d seeds per point, bars: 95%% intervals of the mean" % n if n > 1 else ""


def figures(rows, outdir, name):
    modes = sorted({r["mode"] for r in rows})
    ths = sorted({r["th_us"] for r in rows})
    fig, axes = plt.subplots(1, len(modes), figsize=(5 * len(modes), 3.8), squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for i, th in enumerate(ths):
            x, m, mc = mean_by(rows, mode, th, "qdiff_mean_mtu")
            _, p, pc = mean_by(rows, mode, th, "qdiff_p99_mtu")
            x = dodge(x, i, len(ths))
            line = ax.errorbar(x, m, yerr=mc, fmt="o-", capsize=3,
                               label="mean, th = %g us" % th).lines[0]
            ax.errorbar(x, p, yerr=pc, fmt="s--", capsize=3, color=line.get_color(),
                        label="p99, th = %g us" % th)
        ax.set_xlabel("load (%)")
        ax.set_ylabel("qdiff (MTU)")
        ax.set_title("%s replay" % mode)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("qdiff against load (%s)%s" % (name, seeds_note(rows)))
    fig.tight_layout()
    save(fig, outdir, "sweep_qdiff")

    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, style in (("plain", "s--"), ("tagged", "o-")):
        for i, th in enumerate(ths):
            x, e, ec = mean_by(rows, mode, th, "drop_error")
            x = dodge(x, i + (len(ths) if mode == "tagged" else 0), 2 * len(ths))
            if not np.all(np.isnan(e)):
                ax.errorbar(x, 100 * np.array(e), yerr=100 * np.array(ec), fmt=style, capsize=3,
                            label="%s, th = %g us" % (mode, th))
    ax.set_xlabel("load (%)")
    ax.set_ylabel("drop error (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("drop error against load, plain vs tagged (%s)%s" % (name, seeds_note(rows)),
                 fontsize=9)
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
    pts = points(rows)
    tmpp = os.path.join(a.out, "points.csv.partial")
    with open(tmpp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=POINT_FIELDS)
        w.writeheader()
        for p in pts:
            w.writerow({k: ("" if isinstance(v, float) and v != v else v) for k, v in p.items()})
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
        pdt = np.dtype([(k, "S32") if k in ("variant", "mode") else (k, "f8") for k in POINT_FIELDS])
        parr = np.array([tuple(p[k].encode() if isinstance(p[k], str) else p[k] for k in POINT_FIELDS)
                         for p in pts], dtype=pdt)
        d = f.create_dataset("points", data=parr, compression="gzip")
        d.attrs["interval"] = "95% interval of the mean over seeds, Student's t with seeds - 1 dof"
        for k in POINT_FIELDS:
            if "_mtu_" in k:
                d.attrs["unit:" + k] = "MTU"
    os.replace(tmph5, os.path.join(a.out, "summary.h5"))
    os.replace(tmpp, os.path.join(a.out, "points.csv"))
    os.replace(tmp, os.path.join(a.out, "summary.csv"))
    figures(rows, a.out, a.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
