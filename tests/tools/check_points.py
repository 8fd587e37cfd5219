#!/usr/bin/python3
"""Check a sweep's points over seeds (aggregate.py's points.csv) against its summary.csv,
computed here independently: each point's seeds, the mean, the sample standard deviation and the
half-width of the 95% interval of the mean with Student's t quantile found by integrating t's
density (Simpson) and bisecting, not from aggregate.py's table.

usage: check_points.py SUMMARY.csv POINTS.csv
       check_points.py --self-test      (analysis/intervals.py's t quantiles, 1..200 degrees of freedom)
Exit 0 when every number agrees (relative 1e-6), 1 with the first disagreement."""
import csv
import math
import os
import sys

METRICS = ["qdiff_mean_mtu", "qdiff_p99_mtu", "drop_error", "false_accepts", "false_drops",
           "wrong_locations", "runtime_drops"]


def t_cdf(x, dof):
    """P(T <= x) for x >= 0: 1/2 plus the density's integral from 0 to x (Simpson, 2000 steps)."""
    c = math.exp(math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2)) / math.sqrt(dof * math.pi)
    f = lambda t: c * (1 + t * t / dof) ** (-(dof + 1) / 2)
    n = 2000
    h = x / n
    s = f(0) + f(x) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    return 0.5 + s * h / 3


def t_quantile(p, dof):
    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if t_cdf(mid, dof) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def close(a, b):
    if a != a or b != b:
        return a != a and b != b
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def num(v):
    return float(v) if v not in ("", None) else float("nan")


def self_test():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "analysis"))
    import intervals
    for dof in list(range(1, 41)) + [50, 80, 120, 200]:
        want, got = t_quantile(0.975, dof), intervals.t975(dof)
        if abs(want - got) > 2e-4:
            print("t(0.975, %d): intervals.py %.5f, integrated %.5f" % (dof, got, want))
            return 1
    print("t quantiles of analysis/intervals.py agree for 1..40, 50, 80, 120, 200 degrees of freedom")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rows = list(csv.DictReader(open(argv[0])))
    pts = list(csv.DictReader(open(argv[1])))
    keys = {(float(r["load_pct"]), r["variant"]) for r in rows}
    if len(pts) != len(keys):
        print("%d points for %d (load, variant) pairs" % (len(pts), len(keys)))
        return 1
    for p in pts:
        sel = [r for r in rows if float(r["load_pct"]) == float(p["load_pct"]) and
               r["variant"] == p["variant"]]
        n = len({r["seed"] for r in sel})
        if int(float(p["seeds"])) != n or n != len(sel):
            print("load %s %s: %s seeds, the summary has %d" % (p["load_pct"], p["variant"],
                                                                p["seeds"], n))
            return 1
        for m in METRICS:
            v = [num(r[m]) for r in sel]
            mean = sum(v) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else float("nan")
            ci = t_quantile(0.975, n - 1) * sd / math.sqrt(n) if n > 1 else float("nan")
            for what, want in (("mean", mean), ("sd", sd), ("ci95", ci)):
                got = num(p["%s_%s" % (m, what)])
                tol = 2e-4 * max(1.0, abs(want)) if what == "ci95" else None
                ok = close(got, want) if tol is None else (
                    (got != got and want != want) or abs(got - want) <= tol)
                if not ok:
                    print("load %s %s: %s %s is %r, computed %r" % (p["load_pct"], p["variant"], m,
                                                                   what, got, want))
                    return 1
    print("%d points over %s seeds agree with the summary's %d rows" % (
        len(pts), "/".join(sorted({p["seeds"] for p in pts})), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
