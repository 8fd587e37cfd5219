#!/usr/bin/python3
"""Write the published numbers into the docs, from the stored summaries only.

Every number in README.md and docs/*.md that a command produced lives in a summary under
data/results/ (experiments/run.py stores them) and is written into the docs by this script, never
by hand. It runs nothing and reads nothing else: the summaries, and the reference numbers the
results are compared with (experiments/reference.json, stated in docs/model.md).

  render.py            rewrite the generated parts of the docs
  render.py --check    only say whether they are up to date (with a diff); exit 1 if not

The docs mark what is generated. A block

  <!-- generated: NAME -->
  ...
  <!-- end generated -->

is replaced by the output of the block renderer NAME (BLOCKS below), and an inline value

  <!--v CASE:PATH|FORMAT-->text<!--/v-->

by the value at PATH in data/results/CASE.json (CASE `totals`: quick_wall_s and long_wall_s, the
stored cases' wall times summed per kind), formatted: PATH is dot-separated keys, a list
element is picked by `[key=value,...]` (all must match, exactly one element), FORMAT is
`[scale:]spec` with scale one of s2min ns2us ns2ms ns2s pct k M (divide or multiply accordingly) and
spec a Python format spec (e.g. `ns2ms:.3f`, `pct:.2f`, `,d`).
"""
import argparse
import difflib
import math
import os
import re
import sys

from intervals import interval, t975
from results_store import DocsError, TOP, experiments_file, load, store_path, stored

DOCS = ["README.md", "docs/REPRODUCTION.md", "docs/study.md", "docs/captures.md",
        "docs/slow-flows.md", "docs/faulty-links.md", "docs/whatif.md", "docs/testbed.md",
        "docs/sweeps.md", "docs/program.md", "docs/development.md", "docs/benchmarks.md",
        "docs/record.md", "docs/multi-tier.md", "CHANGELOG.md"]


def ref(key):
    """A reference number's text as the paper gives it (experiments/reference.json)."""
    refs = experiments_file("reference.json")
    if key not in refs:
        raise DocsError("experiments/reference.json: no reference '%s'" % key)
    return refs[key]["text"]


def pick(variants, mode, th_us, where=""):
    """The one variant (a summary's variant or sweep row) of a drop mode at a threshold (us),
    chosen by its fields."""
    hits = [v for v in variants if v["mode"] == mode and
            float(v["th_us"] if "th_us" in v else v["th_ns"] / 1000.0) == th_us]
    if len(hits) != 1:
        raise DocsError("%s: %d variants are %s at th = %g us" % (where, len(hits), mode, th_us))
    return hits[0]


SCALES = {"s2min": 1 / 60.0, "ns2us": 1e-3, "ns2ms": 1e-6, "ns2s": 1e-9, "pct": 100.0, "k": 1e-3, "M": 1e-6}


def lookup(path, data, where):
    cur = data
    for part in re.findall(r"[^.\[]+(?:\[[^\]]*\])?", path):
        m = re.match(r"^([^\[]+)(?:\[([^\]]*)\])?$", part)
        key, sel = m.group(1), m.group(2)
        if isinstance(cur, list) and key.isdigit() and int(key) < len(cur):
            cur = cur[int(key)]
            continue
        if not isinstance(cur, dict) or key not in cur:
            raise DocsError("%s: no '%s' in %s" % (where, key, path))
        cur = cur[key]
        if sel is not None:
            conds = [c.split("=", 1) for c in sel.split(",")]
            hits = [e for e in cur if all(str(e.get(k)) == v for k, v in conds)]
            if len(hits) != 1:
                raise DocsError("%s: [%s] selects %d elements in %s" % (where, sel, len(hits),
                                                                          path))
            cur = hits[0]
    return cur


def fmt(value, spec, where):
    scale = None
    if ":" in spec:
        scale, spec = spec.split(":", 1)
        if scale not in SCALES:
            raise DocsError("%s: unknown scale '%s'" % (where, scale))
        value = value * SCALES[scale]
    try:
        return format(value, spec)
    except (ValueError, TypeError) as e:
        raise DocsError("%s: format '%s' of %r: %s" % (where, spec, value, e))


def totals():
    """The pseudo-case `totals`: wall time of every stored case, summed per kind."""
    out = {"quick_wall_s": 0.0, "long_wall_s": 0.0}
    walls = {}
    for name in stored():
        d = load(name)
        walls.setdefault(d["kind"] + "_wall_s", []).extend(t["wall_s"] for t in d["timings"])
    for key, w in walls.items():
        out[key] = math.fsum(w)  # exact: the same whatever the order of the cases
    return out


def value(ref, where):
    m = re.match(r"^\s*([\w-]+):([^|]+?)(?:\|(.*?))?\s*$", ref)
    if not m:
        raise DocsError("%s: bad reference '%s' (CASE:PATH|FORMAT)" % (where, ref))
    data = totals() if m.group(1) == "totals" else load(m.group(1))
    v = lookup(m.group(2), data, where)
    return fmt(v, m.group(3) or "", where) if m.group(3) else str(v)


def pct(x, d=2):
    return "%.*f%%" % (d, 100.0 * x)


def th_us(v):
    return "%g" % (v["th_ns"] / 1000.0)


def provenance(*names):
    parts = []
    for n in names:
        d = load(n)
        cmds = ["`%s`" % c for c in d["commands"]]
        if len(cmds) > 2:
            cmds = [cmds[0], "%d more like it" % (len(cmds) - 1)]
        parts.append("`%s`: %s; code %s, %s" % (n, ", ".join(cmds), d["code_version"], d["date"]))
    return "<sub>Generated by `./waf docs` from `data/results/`: %s.</sub>" % " | ".join(parts)


def block_run_table(name):
    d = load(name)
    lines = d["stdout"][0]
    i = next(k for k, l in enumerate(lines) if l.startswith("variant"))
    return "```\n" + "\n".join(lines[i:]) + "\n```\n" + provenance(name)


def block_runtime_printout(names):
    """The runtime part of what `qreplay run` printed."""
    out = ["```"]
    for n in names:
        d = load(n)
        out.append("$ " + d["commands"][0])
        lines = d["stdout"][0]
        j = next(k for k, l in enumerate(lines) if l.startswith("== replay"))
        out += lines[:j] + ["..."]
    out.append("```")
    return "\n".join(out) + "\n" + provenance(*names)


def block_sample_printout(name):
    d = load(name)
    return "```\n$ %s\n%s\n```\n%s" % (d["commands"][1], "\n".join(d["stdout"][1]),
                                       provenance(name))


def block_table_lines(name, command):
    """What command number `command` of a case printed (its table), as printed."""
    d = load(name)
    lines = [l for l in d["stdout"][command] if l.strip()]
    return "```\n%s\n```\n%s" % ("\n".join(lines), provenance(name))


def variant_row(v):
    return "| %s %s=%sus | %.3f | %.2f | %.3f | %d | %d | %d | %d | %d | %s |" % (
        v["mode"], "th", th_us(v), v["qdiff_mean_mtu"], v["qdiff_p99_mtu"],
        v["qdiff_zero_fraction"], v["runtime_drops"], v["replay_drops"], v["false_accepts"],
        v["false_drops"], v["wrong_locations"], pct(v["drop_error"]))


VARIANT_HEAD = ("| variant | qdiff mean MTU | p99 MTU | qdiff = 0 | drops runtime | replay | "
                "false accepts | false drops | wrong loc. | drop error |\n"
                "|---|---|---|---|---|---|---|---|---|---|")


def block_sweep_variants(name, load_pct):
    d = load(name)
    rows_ = [r for r in d["results"]["rows"] if float(r["load_pct"]) == load_pct]
    rows_.sort(key=lambda r: (r["mode"], r["th_us"]))
    out = [VARIANT_HEAD]
    for r in rows_:
        v = dict(r)
        v["th_ns"] = r["th_us"] * 1000
        out.append(variant_row(v))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_run_variants(name):
    d = load(name)
    vs = sorted(d["results"]["variants"], key=lambda v: (v["mode"], v["th_ns"]))
    return "\n".join([VARIANT_HEAD] + [variant_row(v) for v in vs]) + "\n\n" + provenance(name)


def with_ci(p, key, fmt, scale=1.0):
    """A point's mean over seeds with its 95% interval: "0.412 ± 0.031" (the mean alone with one
    seed)."""
    m, ci = p[key + "_mean"], p[key + "_ci95"]
    if m is None:
        return "-"
    return pm(scale * m, float("nan") if ci is None else scale * ci, fmt)


def block_sweep_points(name):
    """A sweep's points over seeds: mean and 95% interval of the mean per load and variant."""
    d = load(name)
    pts = d["results"].get("points")
    if not pts:
        raise DocsError("%s: no points over seeds (stored before sweeps kept them): store it again" % name)
    out = ["| load | variant | seeds | qdiff mean (MTU) | qdiff p99 (MTU) | drop error | "
           "false accepts | false drops | wrong locations |",
           "|---|---|---|---|---|---|---|---|---|"]
    for p in sorted(pts, key=lambda p: (p["load_pct"], p["mode"], p["th_us"])):
        out.append("| %g%% | %s | %d | %s | %s | %s | %s | %s | %s |" % (
            p["load_pct"], p["variant"], p["seeds"], with_ci(p, "qdiff_mean_mtu", "%.3f"),
            with_ci(p, "qdiff_p99_mtu", "%.2f"), with_ci(p, "drop_error", "%.2f%%", 100.0),
            with_ci(p, "false_accepts", "%.1f"), with_ci(p, "false_drops", "%.1f"),
            with_ci(p, "wrong_locations", "%.1f")))
    return "\n".join(out) + "\n\n" + provenance(name)


def seeds_of(d):
    """How many seeds a stored sweep ran per point."""
    return len({r.get("seed") for r in d["results"]["rows"]})


def sweep_pick(d, load, mode, th_us):
    """A sweep's row at a load, of a drop mode at a threshold; with several seeds, the means over
    them, and in "_ci" each metric's 95% interval half-width and in "_seeds" the rows of every
    seed."""
    rows_ = [r for r in d["results"]["rows"] if float(r["load_pct"]) == load and
             r["mode"] == mode and float(r["th_us"]) == th_us]
    if seeds_of(d) <= 1:
        return pick(rows_, mode, th_us, "%s at %g%% load" % (d["case"], load))
    if not rows_:
        raise DocsError("%s at %g%% load: no %s variant at th = %g us" % (d["case"], load, mode,
                                                                         th_us))
    out, ci = {"mode": mode, "th_us": th_us, "load_pct": load}, {}
    for k, v in rows_[0].items():
        if isinstance(v, (int, float)) and k not in ("load_pct", "seed", "th_us"):
            _, out[k], _, ci[k] = interval([r[k] for r in rows_])
    out["_ci"], out["_seeds"] = ci, rows_
    return out


def paired(a, b, key):
    """The mean over seeds of a[key] - b[key] (a, b: sweep_pick of one sweep) and its 95% interval
    (seed by seed: both come from the same runtime); the interval is nan with one seed."""
    if "_seeds" not in a:
        return a[key] - b[key], float("nan")
    byseed = {r["seed"]: r[key] for r in b["_seeds"]}
    _, m, _, ci = interval([r[key] - byseed[r["seed"]] for r in a["_seeds"]])
    return m, ci


def pm(value, ci, fmt):
    """value, with " ± ci" when there is an interval."""
    return fmt % value + ("" if ci != ci else " ± " + fmt.replace("+", "") % ci)


def row_pm(row, key, fmt, scale=1.0):
    """A metric of a sweep_pick (scaled), with " ± its interval" when it is a mean over seeds."""
    return pm(scale * row[key], scale * row.get("_ci", {}).get(key, float("nan")), fmt)


def load_note(loads, what=""):
    """The docs' footnote of the machine's load during a stored measurement ("" without one)."""
    return ("<br><sub>Machine load (1-minute average, 2 cores)%s: %s.</sub>" % (what, loads)
            if loads else "")


def count(row, key):
    """A count of a sweep_pick: as it is, or its mean over seeds with one decimal."""
    return "%d" % row[key] if "_ci" not in row else "%.1f" % row[key]


def block_k8_table(name):
    d = load(name)
    loads = sorted(set(float(r["load_pct"]) for r in d["results"]["rows"]))
    out = ["| load | qdiff mean / p99, tagged th=2 | th=5 | th=10 | drop error plain th=5 | "
           "tagged th=2 | th=5 | th=10 | runtime drops | FA / FD / WL (tagged th=5) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    n = seeds_of(d)
    if n > 1:
        out[0] = out[0].replace("| load |", "| load (%d seeds: mean ± 95%% interval) |" % n)

    for L in loads:
        t = {th: sweep_pick(d, L, "tagged", th) for th in (2, 5, 10)}
        p5 = sweep_pick(d, L, "plain", 5)
        out.append("| %g%% | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |" % (
            L, *["%s / %s" % (row_pm(t[th], "qdiff_mean_mtu", "%.3f"),
                              row_pm(t[th], "qdiff_p99_mtu", "%.2f"))
                 for th in (2, 5, 10)],
            row_pm(p5, "drop_error", "%.2f%%", 100.0),
            *[row_pm(t[th], "drop_error", "%.2f%%", 100.0) for th in (2, 5, 10)],
            count(t[5], "runtime_drops"), count(t[5], "false_accepts"),
            count(t[5], "false_drops"), count(t[5], "wrong_locations")))
    return "\n".join(out) + "\n\n" + provenance(name)


def welch(a, b, key):
    """Mean of a[key] minus mean of b[key] over independent seeds (two loads: other runs), and the
    half-width of its 95% interval (Welch: the two spreads apart, Welch-Satterthwaite degrees of
    freedom, rounded down)."""
    va, vb = [r[key] for r in a["_seeds"]], [r[key] for r in b["_seeds"]]
    na, ma, sa, _ = interval(va)
    nb, mb, sb, _ = interval(vb)
    se2 = sa * sa / na + sb * sb / nb
    if se2 == 0:
        return ma - mb, 0.0
    dof = se2 * se2 / ((sa * sa / na) ** 2 / (na - 1) + (sb * sb / nb) ** 2 / (nb - 1))
    return ma - mb, t975(max(1, int(dof))) * se2 ** 0.5


def verdict(lo, hi, claim):
    """Whether an interval [lo, hi] supports a claim "above 0" ('>'), "below 0" ('<') or "about
    0" ('='): holds, cannot tell, or does not hold."""
    if claim == ">":
        return "holds" if lo > 0 else "cannot tell" if hi > 0 else "does not hold"
    if claim == "<":
        return "holds" if hi < 0 else "cannot tell" if lo < 0 else "does not hold"
    return "cannot tell apart (consistent)" if lo <= 0 <= hi else "does not hold"


def block_seed_claims(name, by_load=None):
    """The single-seed conclusions about a multi-seed sweep, seed 1 against the mean and 95%
    interval over every seed: which hold, which the seeds cannot tell, which do not hold. by_load
    (load -> case) takes each load from its own case (the long k=16 runs are one case per load);
    claims about a load that no case holds with several seeds are left out."""
    by_load = by_load or {L: name for L in sorted(set(
        float(r["load_pct"]) for r in load(name)["results"]["rows"]))}
    cases_ = {float(L): load(c) for L, c in by_load.items() if os.path.exists(store_path(c))}
    cases_ = {L: d for L, d in cases_.items() if seeds_of(d) > 1}
    if not cases_:
        raise DocsError("%s: one seed: nothing to say about seeds" % name)
    n = min(seeds_of(d) for d in cases_.values())
    refv = {k: v["value"] for k, v in experiments_file("reference.json").items() if k != "_about"}

    def row(L, mode="tagged", th=5):
        return sweep_pick(cases_[float(L)], float(L), mode, th)

    def have(*loads):
        return all(float(L) in cases_ for L in loads)

    def s1(r, key):
        return [x for x in r["_seeds"] if x["seed"] == 1][0][key]

    out = ["| single-seed conclusion (tagged, th = 5 us unless named) | seed 1 | %d seeds: mean ± "
           "95%% interval | verdict |" % n, "|---|---|---|---|"]

    def across(label, L1, L2, key, claim, fmt, scale=1.0):
        if not have(L1, L2):
            return
        a, b = row(L2), row(L1)
        m, ci = welch(a, b, key)
        out.append("| %s | %s | %s | %s |" % (label, (fmt % (scale * (s1(a, key) - s1(b, key)))),
                                              pm(scale * m, scale * ci, fmt),
                                              verdict(m - ci, m + ci, claim)))

    def against(label, L, key, refkey, claim, fmt, scale=1.0, mode="tagged"):
        if not have(L):
            return
        r = row(L, mode)
        m, ci = r[key] - refv[refkey], r["_ci"][key]
        out.append("| %s | %s | %s | %s |" % (label, fmt % (scale * s1(r, key)),
                                              pm(scale * r[key], scale * ci, fmt),
                                              verdict(m - ci, m + ci, claim)))

    def thstep(label, L, key, refkey, claim, fmt):
        if not have(L):
            return
        a, b = row(L, "tagged", 5), row(L, "tagged", 2)
        m, ci = paired(a, b, key)
        lim = refv[refkey]
        out.append("| %s | %s | %s | %s |" % (label, fmt % (s1(a, key) - s1(b, key)),
                                              pm(m, ci, fmt), verdict(m - ci - lim, m + ci - lim,
                                                                      claim)))

    across("qdiff mean: flat from 10% to 30% (30% minus 10%)", 10, 30, "qdiff_mean_mtu", "=",
           "%+.3f")
    across("qdiff mean: rises from 30% to 80% (80% minus 30%)", 30, 80, "qdiff_mean_mtu", ">",
           "%+.3f")
    across("qdiff p99: does not fall from 10% to 80% (80% minus 10%)", 10, 80, "qdiff_p99_mtu",
           "=", "%+.2f")
    for L in (30, 80):
        against("qdiff mean at %d%%: below the reference's %s MTU" % (L, ref("qdiff_mean_%d" % L)),
                L, "qdiff_mean_mtu", "qdiff_mean_%d" % L, "<", "%.3f")
        against("qdiff p99 at %d%%: below the reference's %s MTU" % (L, ref("qdiff_p99_%d" % L)),
                L, "qdiff_p99_mtu", "qdiff_p99_%d" % L, "<", "%.2f")
    for L in (30, 80):
        thstep("th 2 -> 5 us at %d%%, mean: under the reference's 0.3 MTU" % L, L,
               "qdiff_mean_mtu", "th_2_to_5_mean", "<", "%+.3f")
        thstep("th 2 -> 5 us at %d%%, p99: above the reference's 1.8 MTU" % L, L,
               "qdiff_p99_mtu", "th_2_to_5_p99", ">", "%+.2f")
    against("plain drop error at 30%%: above the reference's %s" % ref("drop_error_plain_30"), 30,
            "drop_error", "drop_error_plain_30", ">", "%.2f%%", 100.0, mode="plain")
    for L in (10, 30, 80):
        against("tagged drop error at %d%%: below the reference's %s" % (
            L, ref("drop_error_tagged_%d" % L)), L, "drop_error", "drop_error_tagged_%d" % L, "<",
            "%.2f%%", 100.0)
    across("tagged drop error: rises from 30% to 80% (80% minus 30%)", 30, 80, "drop_error", ">",
           "%+.2f%%", 100.0)
    return "\n".join(out) + "\n\n" + provenance(*sorted(set(by_load[L] for L in by_load
                                                              if float(L) in cases_)))


def block_side_by_side(_):
    k16, k4 = load("k16-paper"), load("k4-default")

    def k4v(mode, th):
        return pick(k4["results"]["variants"], mode, th, "k4-default")

    a, b = sweep_pick(k16, 30.0, "tagged", 5), sweep_pick(k16, 30.0, "tagged", 2)
    p = sweep_pick(k16, 30.0, "plain", 5)
    c, e, pk = k4v("tagged", 5), k4v("tagged", 2), k4v("plain", 5)
    rows_ = [
        ("qdiff mean, th = 5 us (tagged)", ref("qdiff_mean_30") + " MTU", "%.3f MTU" % a["qdiff_mean_mtu"],
         "%.3f MTU" % c["qdiff_mean_mtu"]),
        ("qdiff p99, th = 5 us (tagged)", ref("qdiff_p99_30") + " MTU", "%.3f MTU" % a["qdiff_p99_mtu"],
         "%.3f MTU" % c["qdiff_p99_mtu"]),
        ("th = 5 us minus th = 2 us, mean", ref("th_2_to_5_mean") + " MTU",
         "%.3f MTU" % (a["qdiff_mean_mtu"] - b["qdiff_mean_mtu"]),
         "%.3f MTU" % (c["qdiff_mean_mtu"] - e["qdiff_mean_mtu"])),
        ("th = 5 us minus th = 2 us, p99", ref("th_2_to_5_p99") + " MTU",
         "%.3f MTU" % (a["qdiff_p99_mtu"] - b["qdiff_p99_mtu"]),
         "%.3f MTU" % (c["qdiff_p99_mtu"] - e["qdiff_p99_mtu"])),
        ("drop error, th = 5 us, plain", ref("drop_error_plain_30"), pct(p["drop_error"]), pct(pk["drop_error"])),
        ("drop error, th = 5 us, tagged", ref("drop_error_tagged_30"), pct(a["drop_error"]), pct(c["drop_error"])),
        ("false drops (tagged)", ref("false_drops"), "%d" % a["false_drops"], "%d" % c["false_drops"]),
        ("wrong locations", ref("wrong_locations") + " of drops", "%d" % a["wrong_locations"],
         "%d" % c["wrong_locations"]),
        ("the rest of the tagged error", ref("rest_false_accepts"),
         "%d false accepts of %d drops" % (a["false_accepts"], a["runtime_drops"]),
         "%d of %d" % (c["false_accepts"], c["runtime_drops"])),
    ]
    out = ["| quantity (30% load) | reference | ours, k=16 | ours, k=4 default (`./waf run`) |",
           "|---|---|---|---|"] + ["| %s | %s | %s | %s |" % r for r in rows_]
    return "\n".join(out) + "\n\n" + provenance("k16-paper", "k4-default")


def block_k8_scale(name):
    d = load(name)
    out = ["| load | runtime wall | 6 replays wall (sum) | whole run wall (snakemake) | "
           "peak memory | runtime events |", "|---|---|---|---|---|---|"]
    for r in sorted(d["results"]["runs"], key=lambda r: float(r["run"].split("_")[1])):
        v = r["volatile"]
        out.append("| %s%% | %.1f s | %.1f s | %s | %s | %.2fM |" % (
            r["run"].split("_")[1], v["runtime_wall_s"], v["replays_wall_s"],
            "%.0f s" % v["run_wall_s"] if v["run_wall_s"] else "-",
            "%.0f MB" % v["run_max_rss_mb"] if v["run_max_rss_mb"] else "-", r["events"] / 1e6))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_scale(_):
    out = ["| run | wall | peak memory | load before / after | command |", "|---|---|---|---|---|"]
    for name, label in (("k4-default", "k=4 whole pipeline, figures excluded"),
                        ("k8-20ms-10", "k=8 whole pipeline (th = 5 us), 10%, 20 ms arrivals"),
                        ("k8-20ms-80", "k=8 whole pipeline (th = 5 us), 80%, 20 ms arrivals"),
                        ("k16-paper", "k=16 sweep at 30%, 3 ms arrivals (runtime, 6 replays, "
                                      "metrics)"),
                        ("butterfly-100", "butterfly, 5 sigmas x 100 replays")):
        d = load(name)
        t = d["timings"][0]
        machine = "%.1f / %.1f" % tuple(t["load"]) if "load" in t else "not recorded"
        out.append("| %s | %s | %.0f MB | %s | `%s` |" % (label, dur(t["wall_s"]),
                                                          t["peak_rss_mb"], machine, t["command"]))
    k16 = load("k16-paper")["results"]["runs"][0]
    out.append("| k=16 runtime alone (in the sweep) | %s | - | - | (truth.h5 `wall_s`; %.1fM events) |"
               % (dur(k16["volatile"]["runtime_wall_s"]), k16["events"] / 1e6))
    out.append("| k=16 6 replays (in the sweep, sum) | %s | - | - | (replay.h5 `wall_s`) |"
               % dur(k16["volatile"]["replays_wall_s"]))
    return "\n".join(out) + "\n\n<sub>Generated by `./waf docs` from the `timings` of " \
        "`data/results/*.json` (peak memory: the largest process the command ran; load: the " \
        "machine's 1-minute load average, 2 cores: above 2 the command shared the machine).</sub>"


def block_clocks(names):
    """Clock reconciliation on simulated recordings: the estimate's error against the true offsets
    and the tagged replays with the recorded (raw) and with the reconciled clocks."""
    out = ["| case | hosts estimated (pairs) | estimate error vs truth: mean / RMS / max | "
           "hosts corrected | mean offset raw / left | th | qdiff mean / p99, raw clocks | "
           "reconciled | drop error raw / reconciled |",
           "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        d = load(n)
        e = d["results"]["estimate"]
        var = {v["variant"]: v for v in d["results"]["variants"]}
        first = True
        for raw in sorted((v for v in var if v.startswith("tagged_") and
                           not v.endswith("_reconciled")), key=lambda v: var[v]["th_ns"]):
            rec = var[raw + "_reconciled"]
            r = var[raw]
            head = ("| %s | %d of %d (%d) | %.0f / %.0f / %.0f ns | %d | %.0f / %.0f ns" % (
                n, e["estimated"], e["hosts"], e["pairs"], e["error_mean_abs_ns"],
                e["error_rms_ns"], e["error_max_abs_ns"], e["corrected"], e["raw_mean_abs_ns"],
                e["left_mean_abs_ns"])) if first else "| | | | |"
            first = False
            out.append("%s | %s us | %.3f / %.3f MTU | %.3f / %.3f MTU | %s / %s |" % (
                head, th_us(r), r["qdiff_mean_mtu"], r["qdiff_p99_mtu"], rec["qdiff_mean_mtu"],
                rec["qdiff_p99_mtu"], pct(r["drop_error"]), pct(rec["drop_error"])))
    return "\n".join(out) + "\n\n" + provenance(*names)


def block_light(names):
    """DETER's light record: its cost by part and its size at each sampling threshold against the
    same run's pcaps (raw, xz -9e, gzip -9), next to the tagged replay's fidelity at that
    threshold (the threshold study's storage axis)."""
    out = ["| case | load | th | light record B/packet | B/connection | of the pcaps | "
           "of the pcaps xz -9e | of gzip -9 | qdiff mean / p99 (tagged) | drop error |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    parts = ["| case | load | connections / packets | header | config | calls | loss | timers | "
             "received | samples 2 / 5 / 10 us (with order) | pcaps raw / xz / gzip |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        for r in load(n)["results"]["loads"]:
            pk, cn = float(r["packets"]), float(r["connections"])
            for i, th in enumerate(r["thresholds_ns"]):
                b = r["at_th_bytes"][i]
                v = next((x for x in r["variants"] if x["variant"].startswith("tagged") and
                          x["th_ns"] == th), None)
                fid = ("%.3f / %.3f MTU | %s" % (v["qdiff_mean_mtu"], v["qdiff_p99_mtu"],
                                                 pct(v["drop_error"]))
                       if v else "- | -")
                out.append("| %s | %g%% | %g us | %.3f | %.0f | %s | %s | %s | %s |" % (
                    n, r["load_pct"], th / 1000.0, b / pk, b / cn, pct(b / r["pcap_bytes"]),
                    pct(b / r["pcap_xz_bytes"]), pct(b / r["pcap_gzip_bytes"]), fid))
            p = r["parts"]
            parts.append("| %s | %g%% | %d / %d | %s | %s | %s | %s | %s | %s | %s | %.1f / %.2f / "
                         "%.2f |" % (
                             n, r["load_pct"], r["connections"], r["packets"],
                             *("%.3f" % (p[k] / pk) for k in ("header", "config", "calls", "loss",
                                                               "timers", "received")),
                             " / ".join("%.3f" % (x / pk) for x in r["th_bytes"]),
                             r["pcap_bytes"] / pk, r["pcap_xz_bytes"] / pk,
                             r["pcap_gzip_bytes"] / pk))
    return ("\n".join(out) + "\n\nBytes per packet by part:\n\n" + "\n".join(parts) + "\n\n" +
            provenance(*names))


def block_light_claims(names):
    """What the light-storage tables say, in words: the record at 5 us against the compressed
    pcaps, the connections whose receive times it leaves out, the shares of the receive times
    kept and of the samples."""
    out = []
    for n in names:
        for r in load(n)["results"]["loads"]:
            i = r["thresholds_ns"].index(5000)
            at5, rec = r["at_th_bytes"][i], r["parts"]["received"]
            out.append("- `%s` at %g%% (%d connections, %d packets): %.2f bytes per packet at 5 us, "
                       "%s of the pcaps xz -9e compressed; receive times left out for %d of the "
                       "%d connections, %d timer firings between two arrivals kept instead; the "
                       "receive times kept are %s of it (%.3f bytes per packet); the samples at "
                       "5 us %s (%.3f)." % (
                           n, r["load_pct"], r["connections"], r["packets"], at5 / r["packets"],
                           pct(at5 / r["pcap_xz_bytes"], 1), r.get("at_once", 0),
                           r["connections"], r.get("gates", 0), pct(rec / at5, 1),
                           rec / r["packets"],
                           pct(r["th_bytes"][i] / at5, 0), r["th_bytes"][i] / r["packets"]))
    return "\n".join(out) + "\n\n" + provenance(*names)


def block_record(name):
    """qreplay record on the testbed beside tcpdump: the records' size against the same hosts'
    header captures (DETER's comparison), by part; the recorder's CPU against tcpdump's; each
    tagged variant replayed from the captures and from the records; the records' send times
    against the captures', packet by packet."""
    reps = load(name)["results"]["repeats"]
    kept = [r for r in reps if not r["refused"]]
    ths = kept[0]["thresholds_ns"]
    size = ["| run | hosts / connections / packets | " +
            " | ".join("record at %g us: B/packet, of the header captures raw / gzip -9 / xz -9e"
                       % (t / 1000.0) for t in ths) + " | header captures B/packet raw / xz |",
            "|---|---|" + "---|" * (len(ths) + 1)]
    parts = ["| run | " + " | ".join(KREC_PART_NAMES) + " | samples per threshold |",
             "|---|" + "---|" * (len(KREC_PART_NAMES) + 1)]
    cpu = ["| run | run time | recorder (user + system) | its BPF programs (kernel) | "
           "recorder total, of one CPU | tcpdump per host, of one CPU |", "|---|---|---|---|---|---|"]
    fid = ["| run | bottleneck's rate while busy | th | tagged from the captures: qdiff mean / "
           "p99, drop error | from the records | plain from the captures | from the records |",
           "|---|---|---|---|---|---|---|"]
    times = ["| run | th | packets | median | p99 | max | mean | bias |",
             "|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(reps, 1):
        if r["refused"]:
            size.append("| %d | the records differed from the captures: set aside |" % i)
            continue
        pk = float(r["segments"])
        cells = ["%.2f, %s / %s / %s" % (b / pk, pct(b / r["pcap_headers_bytes"]),
                                          pct(b / r["pcap_headers_gzip_bytes"]),
                                          pct(b / r["pcap_headers_xz_bytes"]))
                 for b in r["at_th_bytes"]]
        size.append("| %d | %d / %d / %d | %s | %.1f / %.2f |" % (
            i, r["hosts"], r["connections"], r["segments"], " | ".join(cells),
            r["pcap_headers_bytes"] / pk, r["pcap_headers_xz_bytes"] / pk))
        parts.append("| %d | %s | %s |" % (
            i, " | ".join("%.3f" % (r["parts"][k] / pk) for k in KREC_PART_KEYS),
            " / ".join("%.3f" % (b / pk) for b in r["th_bytes"])))
        pr = {x["process"]: x for x in (r["processes"] or [])}
        rec, bpf = pr.get("the kernel recorder"), pr.get("the kernel recorder's BPF programs")
        dumps = [x for k, x in pr.items() if k.startswith("tcpdump of h")]
        if rec and bpf and dumps:
            wall = float(rec["wall_s"])
            tot = float(rec["cpu_s"]) + float(bpf["cpu_s"])
            tcpd = sum(float(x["cpu_s"]) / float(x["wall_s"]) for x in dumps) / len(dumps)
            cpu.append("| %d | %.2f s | %.3f s | %.3f s | %s (%s per host) | %s |" % (
                i, wall, float(rec["cpu_s"]), float(bpf["cpu_s"]), pct(tot / wall),
                pct(tot / wall / r["hosts"]), pct(tcpd)))
        var = {v["variant"]: v for v in r["variants"]}
        for t in ths:
            def cell(v):
                return ("%.2f / %.2f MTU, %s" % (v["qdiff_mean_mtu"], v["qdiff_p99_mtu"],
                                                 pct(v["drop_error"], 1)) if v else "-")
            b = "th_%g" % (t / 1000.0)
            fid.append("| %d | %.1f Mbps | %g us | %s | %s | %s | %s |" % (
                i, r["busy_rate_bps"] / 1e6, t / 1000.0, cell(var.get("tagged_" + b)), cell(var.get("tagged_" + b + "_record")),
                cell(var.get("plain_" + b)), cell(var.get("plain_" + b + "_record"))))
        for x in r.get("times") or []:
            times.append("| %d | %g us | %d | %s | %s | %s | %s | %s |" % (
                i, x["th_ns"] / 1000.0, x["packets"], fmt_us(x["p50_ns"]), fmt_us(x["p99_ns"]),
                fmt_us(x["max_ns"]), fmt_us(x["mean_ns"]), fmt_us(x["bias_ns"])))
    return ("DETER: " + ref("record_size") + " of the compressed header traces, at " +
            ref("record_cpu") + " CPU.\n\n" + "\n".join(size) +
            "\n\nBytes per packet by part (the records of all hosts):\n\n" + "\n".join(parts) +
            "\n\nCPU:\n\n" + "\n".join(cpu) + "\n\nFidelity against the switch's captures:\n\n" +
            "\n".join(fid) +
            "\n\nSend times, packet by packet, the records' (inferred at each threshold) against "
            "the captures' (|record - capture|; bias: the mean of record - capture):\n\n" +
            "\n".join(times) + "\n\n" + provenance(name))


def block_record_rate(name):
    """qreplay record --rate-test, per repeat: each step's rate reached, events, losses (the
    recorder's own, and the packets the kernel told nothing of), whether the step was kept whole,
    and the CPU the traffic cost the recorder and its BPF programs; then per repeat the highest
    rate kept whole and the sender's limit recorded and not."""
    reps = load(name)["results"]["repeats"]
    out = ["| run | aim, writes/s | writes/s reached | packets/s (both hosts, to the NIC) | "
           "events/s | lost by the recorder | unseen | kept whole | recorder above idle, of one "
           "CPU | its BPF programs, of one CPU | CPU per packet |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines = []
    for i, r in enumerate(reps, 1):
        idle = [s for s in r["steps"] if s["target_pps"] == 0 and s["recorded"]]
        for s in r["steps"]:
            if s["target_pps"] == 0:
                continue
            wps = s["writes"] / s["traffic_s"]
            if not s["recorded"]:
                out.append("| %d | %d | %.0f | not recorded | - | - | - | - | - | - | - |" % (
                    i, s["target_pps"], wps))
                continue
            out.append("| %d | %d | %.0f%s | %.0f | %.0f | %d | %d | %s | %s | %s | %.1f us |" % (
                i, s["target_pps"], wps, " (short)" if s["short"] else "", s["pps"],
                s["events_per_s"], s["ring_lost"], s["unseen"], "yes" if s["whole"] else "no",
                pct(s["recorder_pct"] / 100.0), pct(s["bpf_pct"] / 100.0), s["us_per_packet"]))
        rec = [s for s in r["steps"] if s["target_pps"] > 0 and s["recorded"]]
        whole = [s["pps"] for s in rec if s["whole"]]
        lossy = [s["pps"] for s in rec if s["ring_lost"]]
        bare = [s["writes"] / s["traffic_s"] for s in r["steps"] if not s["recorded"]]
        short = [s for s in rec if s["short"]]
        text = "run %d: kept whole up to %.0f packets/s (%.0f events/s); " % (
            i, max(whole) if whole else 0,
            max([s["events_per_s"] for s in rec if s["whole"]] or [0]))
        text += ("the recorder first lost events at %.0f packets/s; " % min(lossy)) if lossy \
            else "the recorder lost no event at any rate; "
        if short:
            text += ("the sender reached %.0f writes/s recorded against its aim of %d, and %.0f "
                     "writes/s unrecorded" % (short[0]["writes"] / short[0]["traffic_s"],
                                              short[0]["target_pps"], max(bare or [0])))
        else:
            text += "the sender reached every aim"
        if idle:
            text += "; the recorder alone (loading, attaching, %g s idle): %.3f s of CPU" % (
                idle[0]["traffic_s"], idle[0]["recorder_cpu_s"])
        lines.append(text + ".")
    return ("\n".join(out) + "\n\n" + "\n".join("- " + x for x in lines) + "\n\n" +
            provenance(name))


def block_record_fattree(name):
    """The fat tree's records against its host captures, per run: the hosts whose record holds
    what their capture does, the packets in all, what was lost and whose."""
    reps = load(name)["results"]["repeats"]
    out = ["| run | hosts whose record = its capture | packets recorded / captured | payload "
           "bytes recorded / captured | packets sent that no event told (IP ID gaps) | missing "
           "beyond the gaps | events the recorder lost itself | records |",
           "|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(reps, 1):
        h = r["hosts"]
        same = sum(x["record_packets"] == x["capture_frames"] and
                   x["record_payload"] == x["capture_payload"] for x in h)
        beyond = sum(x["capture_frames"] - x["record_packets"] - x["unseen"] for x in h)
        out.append("| %d | %d of %d | %d / %d | %d / %d | %d | %d | %d | %s |" % (
            i, same, len(h), sum(x["record_packets"] for x in h),
            sum(x["capture_frames"] for x in h), sum(x["record_payload"] for x in h),
            sum(x["capture_payload"] for x in h), sum(x["unseen"] for x in h), beyond,
            max(x["recorder_lost"] for x in h), "kept" if r["kept"] else "set aside"))
    said = ["- run %d: \"%s\"" % (i, r["recorder_lost"]) for i, r in enumerate(reps, 1)
            if r["recorder_lost"]]
    return ("\n".join(out) + "\n\n" +
            ("The recorder, when it stopped:\n\n" + "\n".join(said) + "\n\n" if said else "") +
            provenance(name))


def block_testbed_repeat(name):
    """qreplay testbed --repeat, without and with jitter: per flow of the run, its size and drops,
    in how many repeats the kernels sent its packets again exactly and its data segments the
    same, and the median share of its packets the same before the first difference; then the
    drops the corrector re-applied."""
    d = load(name)["results"]
    out = ["| flow | bytes | drops in the run (without / with jitter) | packets | repeats | "
           "without jitter: exact | data "
           "the same | same before the first difference (median) | with 10 us of jitter: exact "
           "| data the same | same before the first difference (median) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    flows = d["still"]["flows"]
    notes = []
    for f in flows:
        fid = int(f["flow"])
        cells = []
        n = 0
        for v in ("still", "jitter"):
            cs = [c for c in d[v]["connections"] if c["flow"] == fid]
            n = len(cs)
            share = sorted(c["same_prefix"] / float(c["packets"]) for c in cs)
            cells += ["%d" % sum(c["exact"] for c in cs), "%d" % sum(c["data_same"] for c in cs),
                      pct(share[len(share) // 2], 0) if share else "-"]
        c0 = [c for c in d["still"]["connections"] if c["flow"] == fid][0]
        c1 = [c for c in d["jitter"]["connections"] if c["flow"] == fid][0]
        out.append("| %d | %s | %d / %d | %d | %d | %s |" % (
            fid, f["bytes"], c0["run_drops"], c1["run_drops"], c0["packets"], n,
            " | ".join(cells)))
    for v, label in (("still", "without jitter"), ("jitter", "with 10 us of jitter")):
        reps = d[v]["repeats"]
        full = sum(r["drops_applied"] == r["drops_listed"] for r in reps)
        notes.append("%s: %d repeats; in %d of them the corrector re-applied every one of the "
                     "run's drops (%d of %d listed at the least); %d of %d connections exact over "
                     "all repeats" % (
                         label, len(reps), full, min(r["drops_applied"] for r in reps),
                         reps[0]["drops_listed"], sum(r["exact"] for r in reps),
                         sum(r["connections"] for r in reps)))
    return ("\n".join(out) + "\n\n" + "\n".join("- " + x + "." for x in notes) + "\n\n" +
            provenance(name))


def fmt_us(ns):
    """ns as microseconds, to 0.1 us."""
    return "%.1f us" % (ns / 1000.0)


KREC_PART_KEYS = ["header", "conns", "calls", "sent", "samples", "resent", "arrived", "framing"]
KREC_PART_NAMES = ["header", "connections", "calls", "sent (sizes)", "samples (all thresholds)",
                   "resends", "arrivals", "framing and end"]


def block_roundtrip(name):
    """The round trip: the runtime's recording replayed directly and through its exported
    captures (us timestamps, clocks reconciled by the import), both scored against the runtime."""
    d = load(name)
    r = d["results"]
    rec = {v["variant"]: v for v in r["recorded"]}
    out = ["| th (tagged) | replayed from | qdiff mean / p99 | drops runtime / replay | "
           "drop error | arrivals matched |", "|---|---|---|---|---|---|"]
    for v in r["imported"]:
        for label, x in (("the recording (raw clocks, ns)", rec[v["variant"]]),
                         ("its captures, imported (us, reconciled)", v)):
            out.append("| %s us | %s | %.3f / %.3f MTU | %d / %d | %s | %d |" % (
                th_us(x), label, x["qdiff_mean_mtu"], x["qdiff_p99_mtu"], x["runtime_drops"],
                x["replay_drops"], pct(x["drop_error"]), x["matched_arrivals"]))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_testbed(name):
    """The testbed: each repeat's fidelity against the real queue, their spread, the ns-3 runtime
    of the same scenario scored the same way, and the paper's testbed."""
    d = load(name)
    r = d["results"]
    want = [("tagged", 0), ("tagged", 500), ("plain", 0), ("plain", 500)]
    out = ["| run | " + " | ".join("%s th=%g us: qdiff mean / p99, drop error" % v for v in want) +
           " | switch drops (qdisc) | bottleneck port's rate while busy |",
           "|---|" + "---|" * (len(want) + 2)]

    def of(var, mode, th):
        return [v for v in var if v["mode"] == mode and v["th_ns"] == th * 1000]

    def cells(var):
        return " | ".join("%.2f / %.2f MTU, %s" % (x[0]["qdiff_mean_mtu"], x[0]["qdiff_p99_mtu"],
                                                  pct(x[0]["drop_error"], 1))
                          if x else "" for x in (of(var, *w) for w in want))
    for i, rep in enumerate(r["repeats"], 1):
        out.append("| testbed %d | %s | %d (%d) | %.2f Mbps |" % (
            i, cells(rep["variants"]), rep["drops"], rep["qdisc_drops"],
            rep["busy_rate_bps"] / 1e6))
    spread = []
    for w in want:
        m = [x for rep in r["repeats"] for x in of(rep["variants"], *w)]
        if not m:
            spread.append("")
            continue
        lo = lambda k: min(x[k] for x in m)
        hi = lambda k: max(x[k] for x in m)
        spread.append("%.2f-%.2f / %.2f-%.2f MTU, %s-%s" % (
            lo("qdiff_mean_mtu"), hi("qdiff_mean_mtu"), lo("qdiff_p99_mtu"), hi("qdiff_p99_mtu"),
            pct(lo("drop_error"), 1), pct(hi("drop_error"), 1)))
    drops = [rep["drops"] for rep in r["repeats"]]
    out.append("| testbed, range of %d | %s | %d-%d | |" % (len(drops), " | ".join(spread),
                                                           min(drops), max(drops)))
    out.append("| ns-3 runtime, same scenario | %s | %d | |" % (cells(r["ns3"]["variants"]),
                                                             r["ns3"]["drops"]))
    out.append("| paper's testbed (model.md) | %s | | | | | |" % ref("testbed_qdiff"))
    # how well ns-3 predicts the real run: FCTs of the same flows
    out += ["", "| flows | testbed FCT p50 / max (all runs) | ns-3 FCT p50 / max | "
            "testbed retransmissions per run | ns-3 drops vs testbed drops |",
            "|---|---|---|---|---|"]
    for label, sel in (("long (1 MB)", lambda f: f["bytes"] >= 1000000),
                       ("short (10 KB)", lambda f: f["bytes"] < 1000000)):
        tb = sorted(f["fct_ns"] for rep in r["repeats"] for f in rep["flows"]
                    if sel(f) and f["completed"])
        ns = sorted(f["fct_ns"] for f in r["ns3"]["flows"] if sel(f) and f["completed"])
        rt = [sum(f["retransmissions"] for f in rep["flows"] if sel(f)) for rep in r["repeats"]]
        if not tb or not ns:
            continue
        out.append("| %s | %.1f / %.1f ms | %.1f / %.1f ms | %d-%d | %d vs %d-%d |" % (
            label, tb[len(tb) // 2] / 1e6, tb[-1] / 1e6, ns[len(ns) // 2] / 1e6, ns[-1] / 1e6,
            min(rt), max(rt), r["ns3"]["drops"], min(drops), max(drops)))
    return "\n".join(out) + "\n\n" + provenance(name)


def dur(s):
    if s >= 120:
        return "%d min %02d s" % (int(s) // 60, int(s) % 60)
    return "%.1f s" % s


def block_seeds(name):
    d = load(name)
    out = ["| seed | " + " | ".join("%s th=%s" % (m, t) for m in ("plain", "tagged")
                                   for t in ("2", "5", "10")) + " |",
           "|---|" + "---|" * 6]
    for s in d["results"]["seeds"]:
        cells = []
        for m in ("plain", "tagged"):
            for t in (2, 5, 10):
                v = pick(s["variants"], m, t, "seed %d" % s["seed"])
                cells.append("%.3f (%+.2f)" % (v["qdiff_mean_mtu"], v["qlen_diff_mean_mtu"]))
        out.append("| %d | %s |" % (s["seed"], " | ".join(cells)))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_single_switch_evidence(name):
    d = load(name)
    out = ["| variant | qdiff mean MTU | qdiff = 0 | false accepts (times, ms) | send-time lag, "
           "first 0.5 ms -> settled | bottleneck: replay queue longer | shorter | mean length "
           "difference |", "|---|---|---|---|---|---|---|---|"]
    for v in sorted(d["results"]["variants"], key=lambda v: (v["mode"], v["th_ns"])):
        fa = v["false_accept_times_ns"]
        fat = ", ".join("%.3f" % (t / 1e6) for t in fa[:4]) + (" ..." if len(fa) > 4 else "")
        b = v["busiest_queue"]
        out.append("| %s th=%sus | %.3f | %s | %d (%s) | %.2f -> %.2f us | %s | %s | %+.3f MTU |" % (
            v["mode"], th_us(v), v["qdiff_mean_mtu"], pct(v["qdiff_zero_fraction"], 1),
            v["false_accepts"], fat or "-", v["lag_early_ns"] / 1e3, v["lag_settled_ns"] / 1e3,
            pct(b["len_longer"], 1), pct(b["len_shorter"], 1), b["len_diff_mean"]))
    return "\n".join(out) + "\n\n" + provenance(name)


def bench_printouts(d):
    """A stored bench's printouts of bench_core and bench_runtime: kept as its commands' stdout
    (older stores kept them in results.volatile)."""
    v = d["results"].get("volatile")
    if v:
        return {"core": v["core"], "runtime": v["runtime"]}
    out = {}
    for cmd, lines in zip(d["commands"], d["stdout"]):
        out["core" if "bench_core" in cmd else "runtime"] = [x for x in lines if x.strip()]
    return out


def block_bench(name):
    d = load(name)
    v = bench_printouts(d)
    loads = ", ".join("%s: load %.1f before, %.1f after" % ((t["command"],) + tuple(t["load"]))
                      for t in d["timings"] if "load" in t)
    return ("```\n$ build/bench_core\n%s\n$ build/bench_runtime\n%s\n```\n%s%s" %
            ("\n".join(v["core"]), "\n".join(v["runtime"]), provenance(name), load_note(loads)))


def block_bench_runtime(name):
    """A stored bench_runtime printout alone, with its command line and the machine's load."""
    d = load(name)
    cmd = d["commands"][0].replace("{build}", "build")
    loads = ", ".join("load %.1f before, %.1f after" % tuple(t["load"]) for t in d["timings"]
                      if "load" in t)
    return "```\n$ %s\n%s\n```\n%s%s" % (cmd, "\n".join(bench_printouts(d)["runtime"]),
                                           provenance(name), load_note(loads))


def bench_runtime_rows(name):
    """(k, setup) -> (events, wall_s, events_per_s) from a stored bench's bench_runtime printout."""
    out = {}
    for line in bench_printouts(load(name))["runtime"]:
        # (packet-hops and events per hop, printed by newer benches, are skipped)
        m = re.match(r"^(\d+)\s+(.+?)\s{2,}[0-9.]+\s+[0-9.]+\s+(\d+)\s+(?:\d+\s+[0-9.]+\s+)?"
                     r"([0-9.]+)\s+(\d+)\s", line)
        if m:
            out[(int(m.group(1)), m.group(2).strip())] = (int(m.group(3)), float(m.group(4)),
                                                          int(m.group(5)))
    return out


def block_bench_compare(before, after):
    """bench_runtime before and after the runtime work, row by row; the
    speed-up is the wall times' ratio (the same simulated time: since then the qreplay rows
    schedule fewer events for the same packets, so events per second would understate it)."""
    b, a = bench_runtime_rows(before), bench_runtime_rows(after)
    out = ["| k | setup | events | wall before | wall after | events/s before | events/s after | "
           "wall before / after |", "|---|---|---|---|---|---|---|---|"]
    for key in sorted(a):
        if key not in b:
            continue
        (eb, wb, rb), (ea, wa, ra) = b[key], a[key]
        out.append("| %d | %s | %s | %.2f s | %.2f s | %s | %s | %.2fx |" % (
            key[0], key[1], "{:,}".format(ea) if ea == eb else "%s / %s" % (
                "{:,}".format(eb), "{:,}".format(ea)), wb, wa, "{:,}".format(rb),
            "{:,}".format(ra), wb / wa))
    return "\n".join(out) + "\n\n" + provenance(before, after)


def block_engines(name):
    d = load(name)
    r = d["results"]
    out = ["| network | packet-hops | ns-3 replay | native replay | faster | peak memory ns-3 / native (MB) | arrival logs |",
           "|---|---|---|---|---|---|---|"]
    for net in [n for n in ("k4", "k8", "k16") if n in r]:
        v = r["volatile"][net]
        out.append("| %s | %d | %.2f s | %.3f s | %.0fx | %.0f / %.0f | %s |" % (
            net.replace("k", "k="), r[net]["packet_hops"], v["ns3"]["wall_s"],
            v["native"]["wall_s"], v["speedup"], v["ns3"]["peak_rss_mb"],
            v["native"]["peak_rss_mb"], "identical" if r[net]["logs_identical"] else "DIFFERENT"))
    loads = ", ".join("%.1f / %.1f" % tuple(t["load"]) for t in d["timings"]
                      if "bench_replay" in t["command"] and "load" in t)
    return ("\n".join(out) + "\n\n" + provenance(name) +
            load_note(loads, " before / after each bench_replay"))


def block_commands(name):
    """Whole commands per network: metrics' rate, both replay engines as processes, the log."""
    d = load(name)
    r = d["results"]
    nets = sorted((k for k in r if k != "volatile"), key=lambda k: int(k[1:]))
    # since the stream the bench also runs the native engine reading whole
    whole = all("native-whole" in r["volatile"][n]["replay"] for n in nets)
    out = ["| network | runtime arrivals | `qreplay metrics` (arrivals compared) | its rate | "
           "`replay --engine native`%s | `--engine ns3` | ns3 / native | %sarrival log | "
           "logs identical |" % (" (streamed)" if whole else "",
                                 "`--read whole` | " if whole else ""),
           "|---|---|---|---|---|---|---|---|---|" + ("---|" if whole else "")]
    loads = []
    for net in nets:
        x, v = r[net], r["volatile"][net]
        rw = v["replay"].get("native-whole")
        out.append("| %s | %s | %.2f s, %.0f MB (%s) | %.1fM/s | %.3f s, %.0f MB | %.2f s, "
                   "%.0f MB | %.1fx | %s%.2f bytes per arrival | %s |" % (
                       net.replace("k", "k="), "{:,}".format(x["runtime_arrivals"]),
                       v["metrics"]["wall_s"], v["metrics"]["peak_rss_mb"],
                       "{:,}".format(x["arrivals_compared"]),
                       v["metrics"]["arrivals_per_s"] / 1e6, v["replay"]["native"]["wall_s"],
                       v["replay"]["native"]["peak_rss_mb"], v["replay"]["ns3"]["wall_s"],
                       v["replay"]["ns3"]["peak_rss_mb"], v["ns3_over_native"],
                       "%.3f s, %.0f MB | " % (rw["wall_s"], rw["peak_rss_mb"]) if whole else "",
                       x["log_bytes"] / max(1, x["replay_arrivals"]),
                       "yes" if x["logs_identical"] else "NO"))
        loads.append("%s %.1f / %.1f" % (net, v["load"][0], v["load"][1]))
    return "\n".join(out) + "\n\n" + provenance(name) + load_note(", ".join(loads),
                                                                 " before / after")


K16_LONG = {10.0: "k16-long-10", 30.0: "k16-long-30", 80.0: "k16-long-80"}
K16_100MS = "k16-long-80-100ms"  # 80% only: 20 ms of arrivals simulated until 100 ms


def load_case_for(net, at):
    """The stored case of the full-length experiment on net (k8, k8s: k=8 with the incast rate
    scaled, k16) that holds load at."""
    if net == "k16":
        return load(K16_LONG[at])
    if net == "k16l":
        if at != 80.0:
            raise KeyError(at)
        return load(K16_100MS)
    return load({"k8": "k8-paper", "k8s": "k8-paper-scaled"}[net])


def block_paper_full(_):
    """The reference numbers next to the full-length k=8 sweep and the long k=16 runs."""
    def row(net, at, mode, th):
        return sweep_pick(load_case_for(net, at), at, mode, th)

    def cell(net, f):
        try:
            return f(net)
        except (KeyError, DocsError):
            return "-"

    def digits(key):  # qdiff means to 3 decimals, p99s (steps of about 1 MTU) to 2
        return 3 if key == "qdiff_mean_mtu" else 2

    def q(key, at):
        def f(net):
            r = row(net, at, "tagged", 5)
            return row_pm(r, key, "%%.%df" % digits(key))
        return f

    def inc(key, at):
        def f(net):
            m, ci = paired(row(net, at, "tagged", 5), row(net, at, "tagged", 2), key)
            return pm(m, ci, "%%+.%df" % digits(key))
        return f

    def err(mode, at):
        def f(net):
            return row_pm(row(net, at, mode, 5), "drop_error", "%.2f%%", 100.0)
        return f

    def wl(at):
        def f(net):
            r = row(net, at, "tagged", 5)
            return "%s (%.2f%%)" % (count(r, "wrong_locations"), 100.0 * r["wrong_locations"] /
                                    max(1, r["runtime_drops"]))
        return f

    def fd(at):
        def f(net):
            r = row(net, at, "tagged", 5)
            return "%s FD, %s FA" % (count(r, "false_drops"), count(r, "false_accepts"))
        return f

    rows_ = [("qdiff mean, 30%", ref("qdiff_mean_30"), q("qdiff_mean_mtu", 30.0)),
             ("qdiff p99, 30%", ref("qdiff_p99_30"), q("qdiff_p99_mtu", 30.0)),
             ("qdiff mean, 80%", ref("qdiff_mean_80"), q("qdiff_mean_mtu", 80.0)),
             ("qdiff p99, 80%", ref("qdiff_p99_80"), q("qdiff_p99_mtu", 80.0)),
             ("qdiff mean, 10%", "-", q("qdiff_mean_mtu", 10.0)),
             ("qdiff p99, 10%", "-", q("qdiff_p99_mtu", 10.0)),
             ("th 2 -> 5 us, mean, 30%", ref("th_2_to_5_mean"), inc("qdiff_mean_mtu", 30.0)),
             ("th 2 -> 5 us, mean, 80%", ref("th_2_to_5_mean"), inc("qdiff_mean_mtu", 80.0)),
             ("th 2 -> 5 us, p99, 30%", ref("th_2_to_5_p99"), inc("qdiff_p99_mtu", 30.0)),
             ("th 2 -> 5 us, p99, 80%", ref("th_2_to_5_p99"), inc("qdiff_p99_mtu", 80.0)),
             ("drop error plain, 10%", "-", err("plain", 10.0)),
             ("drop error plain, 30%", ref("drop_error_plain_30"), err("plain", 30.0)),
             ("drop error plain, 80%", "-", err("plain", 80.0)),
             ("drop error tagged, 10%", ref("drop_error_tagged_10"), err("tagged", 10.0)),
             ("drop error tagged, 30%", ref("drop_error_tagged_30"), err("tagged", 30.0)),
             ("drop error tagged, 80%", ref("drop_error_tagged_80"), err("tagged", 80.0)),
             ("wrong locations (of runtime drops), 10%", ref("wrong_locations"), wl(10.0)),
             ("wrong locations, 30%", ref("wrong_locations"), wl(30.0)),
             ("wrong locations, 80%", ref("wrong_locations"), wl(80.0)),
             ("false drops / false accepts, 30%", "no false drops; the rest false accepts",
              fd(30.0)),
             ("false drops / false accepts, 80%", "no false drops; the rest false accepts",
              fd(80.0))]
    k8s = load_case_for("k8s", 30.0) if os.path.exists(store_path("k8-paper-scaled")) else None
    n8s = seeds_of(k8s) if k8s else 1
    k16s = {L: seeds_of(load(c)) for L, c in K16_LONG.items() if os.path.exists(store_path(c))}
    multi = sorted(L for L, n in k16s.items() if n > 1)
    k16_note = " (%s: %d seeds, mean ± 95%% interval)" % (
        ", ".join("%g%%" % L for L in multi), min(k16s[L] for L in multi)) if multi else ""
    long16 = os.path.exists(store_path(K16_100MS))
    out = ["| tagged th = 5 us unless named (qdiff in MTU) | reference (k=16) | ours, k=8, 20 ms "
           "per load | k=8, incast scaled to 300/s%s | ours, k=16, long runs%s |%s" % (
               ", %d seeds (mean ± 95%% interval)" % n8s if n8s > 1 else "", k16_note,
               " k=16 at 80%, 20 ms of arrivals until 100 ms, 1 seed |" if long16 else ""),
           "|---|---|---|---|---|" + ("---|" if long16 else "")]
    for label, reference, f in rows_:
        out.append("| %s | %s | %s | %s | %s |%s" % (
            label, reference, cell("k8", f), cell("k8s", f), cell("k16", f),
            " %s |" % cell("k16l", f) if long16 else ""))
    names = [n for n in ["k8-paper", "k8-paper-scaled"] + list(K16_LONG.values()) + [K16_100MS]
             if os.path.exists(store_path(n))]
    return "\n".join(out) + "\n\n" + provenance(*names)


def block_runtime_cost(_):
    """Wall time and events per simulated ms of the runtime, from the full-length runs."""
    out = ["| network, load | flows (arrivals during) | packets | runtime events | simulated | "
           "events per simulated ms | runtime wall | wall per simulated ms | incast share of "
           "bytes / of drops |", "|---|---|---|---|---|---|---|---|---|"]
    names = []
    for net, cases in (("k=8", ["k8-paper"]), ("k=8, incast 300/s", ["k8-paper-scaled"]),
                       ("k=16", list(K16_LONG.values())), ("k=16, until 100 ms", [K16_100MS])):
        for name in cases:
            if not os.path.exists(store_path(name)):
                continue
            names.append(name)
            d = load(name)
            # one seed per load (the first): the others cost the same
            runs = [r for r in d["results"]["runs"] if r["run"].endswith("_seed_1")]
            for r in sorted(runs, key=lambda r: float(r["run"].split("_")[1])):
                v = r["volatile"]
                ms = r["sim_end_ns"] / 1e6
                out.append("| %s, %s%% | %d | %s | %.1fM | %.0f ms | %.2fM | %s | %.1f s | "
                           "%.0f%% / %.0f%% |" % (
                               net, r["run"].split("_")[1], r["flows"], "{:,}".format(r["packets"]),
                               r["events"] / 1e6, ms, r["events"] / 1e6 / ms,
                               dur(v["runtime_wall_s"]), v["runtime_wall_s"] / ms,
                               100 * r["incast_bytes_share"], 100 * r["incast_drops_share"]))
    return "\n".join(out) + "\n\n" + provenance(*names)


def size_bytes(text):
    m = re.match(r"^([0-9.]+)\s*(B|KB|MB|GB)$", text)
    return float(m.group(1)) * {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]


def queue_cap(values, base):
    """The most one queue can hold (alpha / (1 + alpha) of the buffer) under a point's values,
    relative to the recorded configuration's."""
    def cap(v):
        b, a = size_bytes(v["buffer.size"]), float(v["buffer.alpha"])
        return a / (1 + a) * b
    return cap(values) / cap(base)


def whatif_label(name):
    d = load(name)
    k = "k=4" if "k4" in d["scenario"] else "k=8"
    return "%s, %d%% load" % (k, d["results"]["load"])


def block_whatif_errors(names):
    """Per case and point: predicted against true drops, occupancy and delay, with the point's
    per-queue cap against the recorded one's."""
    out = ["| case | buffer.size, alpha | queue cap vs recorded | drops predicted / true "
           "(error) | q p99 all layers, error | delay p99 predicted / true (error) | delay W1 |"
           " KS |", "|---|---|---|---|---|---|---|---|"]
    for n in names:
        r = load(n)["results"]
        base = [p for p in r["points"] if p["baseline"]][0]["values"]
        for p in r["points"]:
            e, pr, tr = p["error"], p["pred"], p["true"]
            out.append("| %s | %s, %s%s | %.2fx | %d / %d (%+.0f%%) | %+.1f%% | %.0f / %.0f us "
                       "(%+.0f%%) | %.1f us | %.2f |" % (
                           whatif_label(n), p["values"]["buffer.size"],
                           p["values"]["buffer.alpha"], " (recorded)" if p["baseline"] else "",
                           queue_cap(p["values"], base), pr["drops"], tr["drops"],
                           100 * e["drops_rel"], 100 * e["all_q_p99_rel"],
                           pr["delay_p99"] / 1e3, tr["delay_p99"] / 1e3, 100 * e["delay_p99_rel"],
                           e["delay_w1"] / 1e3, e["delay_ks"]))
    out.append("")
    out.append(provenance(*names))
    return "\n".join(out)


def block_whatif_trust(names):
    """Which conclusions survive, per case: the rankings, and the median absolute error by
    whether the point's queue cap is smaller than, equal to or larger than the recorded one."""
    out = ["| case | ranking by drops: Kendall tau, best point kept? | ranking by p99 delay: "
           "Kendall tau, best point kept? | median abs. error, smaller cap: drops / q p99 / "
           "delay p99 | same cap (not recorded) | larger cap |", "|---|---|---|---|---|---|"]

    def med(xs):
        xs = sorted(abs(x) for x in xs)
        if not xs:
            return None
        m = len(xs) // 2
        return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2

    for n in names:
        r = load(n)["results"]
        a = r["agreement"]
        base = [p for p in r["points"] if p["baseline"]][0]["values"]
        groups = {"smaller": [], "same": [], "larger": []}
        for p in r["points"]:
            if p["baseline"]:
                continue
            c = queue_cap(p["values"], base)
            g = "same" if abs(c - 1) < 1e-9 else ("smaller" if c < 1 else "larger")
            groups[g].append(p["error"])
        cells = []
        for g in ("smaller", "same", "larger"):
            es = groups[g]
            if not es:
                cells.append("no point")
                continue
            cells.append("%s / %s / %s (%d points)" % tuple(
                ["%.0f%%" % (100 * med([e[k] for e in es])) for k in
                 ("drops_rel", "all_q_p99_rel", "delay_p99_rel")] + [len(es)]))
        out.append("| %s | %.2f, %s | %.2f, %s | %s |" % (
            whatif_label(n), a["tau_drops"],
            "yes" if a["best_drops_pred"] == a["best_drops_true"] else
            "no (predicted point %d, true %d)" % (a["best_drops_pred"], a["best_drops_true"]),
            a["tau_delay_p99"],
            "yes" if a["best_delay_pred"] == a["best_delay_true"] else
            "no (predicted point %d, true %d)" % (a["best_delay_pred"], a["best_delay_true"]),
            " | ".join(cells)))
    out.append("")
    out.append(provenance(*names))
    return "\n".join(out)


WHATIF_CASES = ["whatif-k4", "whatif-k8-30", "whatif-k8-70"]


DIAGNOSE_CASES = [("diagnose-k4", "k=4, 30% load"), ("diagnose-k8-30", "k=8, 30% load"),
                  ("diagnose-k8-80", "k=8, 80% load")]


def cause_list(causes):
    if not causes:
        return "-"
    return ", ".join("%s %d" % (c, n) for c, n in sorted(causes.items(), key=lambda x: (-x[1], x[0])))


def size_classes(classes):
    """Size-class names as the diagnosis writes them ("<100KB", "100KB-1MB", "1-10MB", ">10MB"),
    smallest first."""
    units = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}

    def low(name):
        if name.startswith("<"):
            return 0.0
        m = re.match(r"^>?([0-9.]+)\s*([KMG]?B)?", name)
        unit = m.group(2) or re.findall(r"[KMG]?B", name)[-1]
        return float(m.group(1)) * units[unit]
    return sorted(classes, key=low)


def block_diagnose_tail(cases):
    """Per case and size class: the tail flows (p99 and p90 of slowdown) by root cause, and how
    many of them had a timeout, a (late) fast retransmission, or losses in a blackhole."""
    out = ["| case | size class | flows | tail p99: flows (slowdown >=) | causes | tail p90: "
           "flows | causes | p90 tail with an RTO / fast retx (late) / blackhole loss |",
           "|---|---|---|---|---|---|---|---|"]
    for n, label in cases:
        r = load(n)["results"]
        for c in size_classes(r["p99"]["classes"]):
            a, b = r["p99"]["classes"][c], r["p90"]["classes"][c]
            if not a["flows"]:
                continue
            out.append("| %s | %s | %d | %d (%.1f) | %s | %d | %s | %d / %d (%d) / %d |" % (
                label, c, a["flows"], a["selected"], a["tail_slowdown"], cause_list(a["causes"]),
                b["selected"], cause_list(b["causes"]), b["with_rto"], b["with_fast_retransmit"],
                b["with_late_fr"], b["with_blackhole"]))
    out.append("")
    out.append(provenance(*[n for n, _ in cases]))
    return "\n".join(out)


def block_diagnose_all(cases):
    """Every completed flow: how losses were repaired (timer against fast retransmission, and
    late fast retransmissions), the paper's Table 3 observations measured on ours."""
    out = ["| case | completed flows | with a loss | timeouts (flows) | fast retransmissions "
           "(flows) | of them late | timeouts among repairs | flows with blackhole losses | "
           "root causes, all flows |", "|---|---|---|---|---|---|---|---|---|"]
    for n, label in cases:
        cl = load(n)["results"]["all"]["classes"]
        tot = {k: sum(cl[c][k] for c in cl) for k in
               ("flows", "with_loss", "rtos", "with_rto", "fast_retransmits",
                "with_fast_retransmit", "late_fast_retransmits", "with_blackhole")}
        causes = {}
        for c in size_classes(cl):
            for k, v in cl[c]["causes"].items():
                causes[k] = causes.get(k, 0) + v
        repairs = tot["rtos"] + tot["fast_retransmits"]
        out.append("| %s | %d | %d | %d (%d) | %d (%d) | %d | %s | %d | %s |" % (
            label, tot["flows"], tot["with_loss"], tot["rtos"], tot["with_rto"],
            tot["fast_retransmits"], tot["with_fast_retransmit"], tot["late_fast_retransmits"],
            "%.0f%%" % (100.0 * tot["rtos"] / repairs) if repairs else "-", tot["with_blackhole"],
            cause_list(causes)))
    out.append("")
    out.append(provenance(*[n for n, _ in cases]))
    return "\n".join(out)


def fmt_bytes(n):
    for unit, k in (("MB", 1e6), ("KB", 1e3)):
        if n >= k:
            return "%.4g %s" % (n / k, unit)
    return "%d B" % n


def fmt_ns(ns):
    for unit, k in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= k:
            return "%.4g %s" % (ns / k, unit)
    return "%d ns" % ns


APP_MECHANISMS = {"tlps": "tail-loss probe", "rtos": "RTO", "fast_retransmits": "fast",
                  "racks": "RACK", "unknown_retx": "resend (what sent it unknown)"}


CORPUS_ROWS = [("left out", "connections of a router's or mirror's capture whose timing cannot "
                             "tell which end it was next to, left out"),
               ("established", "the handshake completed"),
               ("bytes0", "bytes from the side that opened it"), ("bytes1", "bytes back"),
               ("end", "end: closed, reset or open"), ("syn_retries", "SYNs sent again"),
               ("synack_retries", "SYN-ACKs sent again"), ("resent", "data segments and FINs resent"),
               ("spurious", "spurious resends"), ("dupacks_max", "longest duplicate-ACK run"),
               ("zero_windows", "zero-window episodes"), ("out_of_order", "out-of-order segments"),
               ("duration", "duration, first frame to last (to the ns)"),
               ("duplicates", "frames captured twice (per capture, against editcap's MD5s)"),
               ("conservation", "recorded bytes = captured + made-up drops' (per direction)"),
               ("drops supported", "drops recorded <= tshark's resends and hole fillers "
                                   "(per direction)")]


def block_corpus(name):
    """Every connection of the public capture corpus against tshark: per fact, how many agree,
    how many disagree as differences of definition and as defects still open (both listed in
    tests/data/corpus/differences.tsv), of how many compared."""
    r = load(name)["results"]
    out = ["| fact | agree | differ by definition | differ: open defect | compared |",
           "|---|---|---|---|---|"]
    for key, label in CORPUS_ROWS:
        f = r["facts"][key]
        agree = "-" if key == "left out" else "%d (%.1f%%)" % (
            f["agree"], 100.0 * f["agree"] / f["of"] if f["of"] else 0.0)
        out.append("| %s | %s | %d | %d | %d |" % (label, agree, f["definition"], f["defect"],
                                                  f["of"]))
    refused = r["refused"]
    out.append("")
    out.append("%d captures, %d connections (tshark's count); %d connections in captures the "
               "import refuses on purpose (listed: loopback only, tunnels, snap lengths libpcap "
               "refuses, one peer with no telling handshake)%s; %d diagnosed and compared. Drops "
               "the import recorded: %d, where tshark sees %d data segments and FINs resent in the same "
               "connections." % (
                   r["captures"], r["connections"], refused.get("definition", 0),
                   ", %d in captures it refuses wrongly" % refused["defect"]
                   if refused.get("defect") else "", r["diagnosed"], r["drops"], r["resends"]))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


CHAOS_KINDS = (("INT", "SIGINT"), ("TERM", "SIGTERM"), ("KILL", "SIGKILL"), ("DISK", "full disk"))


def block_chaos(name):
    """The chaos harness: per writing command, its interruptions by kind and how each ended (the
    output old, or the complete new one; a third outcome fails the harness), and the mixed run
    folders every reader refused."""
    r = load(name)["results"]
    out = ["| case | " + " | ".join("%s: old / new" % label for _, label in CHAOS_KINDS) +
           " | interruptions |", "|---|" + "---|" * (len(CHAOS_KINDS) + 1)]
    total = 0
    for c in r["cases"]:
        cells, n = [], 0
        for k, _ in CHAOS_KINDS:
            v = c["kinds"].get(k)
            cells.append("%d / %d" % (v["old"], v["new"]) if v else "-")
            n += v["old"] + v["new"] if v else 0
        total += n
        out.append("| `%s` | %s | %d |" % (c["case"], " | ".join(cells), n))
    mixes = sum(r["mixes"].values())
    out.append("")
    out.append("%d interruptions of %d cases, every one ended old or new, and the next command "
               "worked. %d reads of run folders holding one file of another run (copied, "
               "hard-linked, linked, or swapped between two replays), every one refused." % (
                   total, len(r["cases"]), mixes))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_apps(name):
    """Real applications through a router (tests/data/captures): per capture and vantage, the
    diagnosis next to what the router dropped, and the share it got right: the losses it reports
    equal the dropped ones where the sender was captured (a receiver alone may miss a loss it has
    no evidence of, never invent one), every exchange complete. The last column is what the import
    of both captures counts as dropped (the pair of captures as a switch's two ports)."""
    r = load(name)["results"]
    out = ["| application | vantage | exchanges | bytes out / back | resends, by what sent them "
           "| lost (dropped) | slowest exchange: size, time, cause | right | pair of captures: "
           "drops |",
           "|---|---|---|---|---|---|---|---|---|"]
    right = total = 0
    for app, x in r.items():
        for v in ("client", "server", "both"):
            d = x["views"][v]
            parts = ["%d %s" % (d[k], m) for k, m in APP_MECHANISMS.items() if d[k]]
            rest = d["retransmissions"] - sum(d[k] for k in APP_MECHANISMS)
            if rest > 0:
                parts.append("%d in the recovery" % rest)
            mech = ", ".join(parts)
            s = d["slowest"]
            slow = "-" if s is None else "%s %s, %s, %s" % (
                "->" if s["dir"] == 0 else "<-", fmt_bytes(s["bytes"]),
                fmt_ns(s["duration_ns"]), s["cause"])
            ok = d["completed"] and (d["lost_data"] == x["truth_drops"] if v != "client"
                                     else d["lost_data"] <= x["truth_drops"])
            right += ok
            total += 1
            out.append("| %s | %s | %d | %s / %s | %s | %d (%d) | %s | %s | %s |" % (
                app, v, d["exchanges"], fmt_bytes(d["bytes"]), fmt_bytes(d["bytes_back"]),
                "%d: %s" % (d["retransmissions"], mech) if d["retransmissions"] else "0",
                d["lost_data"], x["truth_drops"], slow, "yes" if ok else "**no**",
                "%d%s" % (x["pair_drops"], "" if x["pair_drops"] == x["truth_drops"]
                          else " (wrong)") if v == "both" else ""))
    out.append("")
    out.append("Right: %d of %d diagnoses (%.0f%%)." % (right, total, 100.0 * right / total))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_testbed_apps(name):
    """Real applications on the testbed: per repeat and session, its connection's exchanges with
    losses or a cause other than none, the diagnosis next to what the switch's captures show, and
    the rate of right causes over every exchange; the wrong ones are listed with the reason."""
    r = load(name)["results"]
    out = ["| run | session | exchanges | losses diagnosed (dropped at the switch) | causes "
           "diagnosed | right | wrong | unknown |",
           "|---|---|---|---|---|---|---|---|"]
    tot = {"right": 0, "wrong": 0, "unknown": 0}
    wrong = []
    for i, rep in enumerate(r["repeats"], 1):
        for k, s in enumerate(rep["sessions"]):
            ex = [x for x in rep["exchanges"] if x["session"] == k]
            causes = {}
            for x in ex:
                causes[x["cause"]] = causes.get(x["cause"], 0) + 1
            v = {key: sum(1 for x in ex if x["verdict"] == key) for key in tot}
            for key in tot:
                tot[key] += v[key]
            wrong += [(i, s["app"], x) for x in ex if x["verdict"] == "wrong"]
            out.append("| %d | %s %d>%d%s | %d | %d (%d) | %s | %d | %d | %d |" % (
                i, s["app"], s["client"], s["server"], "" if s["completed"] else " (failed)",
                len(ex), sum(x["lost"] for x in ex), sum(x["dropped"] for x in ex),
                ", ".join("%d %s" % (n, c) for c, n in sorted(causes.items(), key=lambda t: -t[1])),
                v["right"], v["wrong"], v["unknown"]))
        others = [x for x in rep["exchanges"] if x["session"] < 0]
        if others:
            out.append("| %d | (no session) | %d | | | | | |" % (i, len(others)))
    n = sum(tot.values())
    out.append("")
    out.append("Right: %d of %d exchanges (%.0f%%), %d wrong, %d unknown." % (
        tot["right"], n, 100.0 * tot["right"] / n if n else 0, tot["wrong"], tot["unknown"]))
    if wrong:
        out.append("")
        out.append("The wrong ones:")
        out.append("")
        for i, app, x in wrong:
            out.append("- run %d, %s, exchange %d (%s %s): %s." % (
                i, app, x["exchange"], "->" if x["dir"] == 0 else "<-", fmt_bytes(x["bytes"]),
                x["why"]))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_apps_record(name):
    """Real applications on the testbed, diagnosed from the hosts' captures and from their kernel
    records, both scored against the switch's captures: per run, the records kept or set aside
    (with the packets no event told), each diagnosis's losses against the switch's drops and its
    verdicts; the records' wrong ones listed."""
    r = load(name)["results"]
    out = ["| run | records | captures: losses (dropped) | right | wrong | unknown | records: "
           "losses (dropped) | right | wrong | unknown |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    tot = {"c": [0, 0, 0], "r": [0, 0, 0]}
    wrong = []
    keys = ("right", "wrong", "unknown")
    for i, rep in enumerate(r["repeats"], 1):
        rec = rep.get("record")
        if rec is None:
            out.append("| %d | none | | | | | | | | |" % i)
            continue
        cells = []
        for tag, ex in (("c", rep["exchanges"]), ("r", rec["exchanges"])):
            v = [sum(1 for x in ex if x["verdict"] == k) for k in keys]
            tot[tag] = [a + b for a, b in zip(tot[tag], v)]
            cells.append("%d (%d) | %d | %d | %d" % (sum(x["lost"] for x in ex),
                                                    sum(x["dropped"] for x in ex), *v))
        wrong += [(i, x) for x in rec["exchanges"] if x["verdict"] == "wrong"]
        state = "kept" if rec["kept"] else "set aside, %d lost events" % rec["lost_events"]
        out.append("| %d | %s | %s | %s |" % (i, state, cells[0], cells[1]))
    out.append("")
    for tag, what in (("c", "captures"), ("r", "records")):
        n = sum(tot[tag])
        out.append("From the %s: %d of %d exchanges right (%.0f%%), %d wrong, %d unknown." % (
            what, tot[tag][0], n, 100.0 * tot[tag][0] / n if n else 0, tot[tag][1], tot[tag][2]))
        out.append("")
    if wrong:
        out.append("The records' wrong ones:")
        out.append("")
        for i, x in wrong:
            out.append("- run %d, %s, exchange %d (%s %s): %s." % (
                i, x["app"] or "(no session)", x["exchange"], "->" if x["dir"] == 0 else "<-",
                fmt_bytes(x["bytes"]), x["why"]))
        out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_faults(cases):
    """Per case, drop rate and load: what each method flagged (right ones in brackets) and after how
    much data it found the planted cable for good."""
    def flag(x):
        return "%d (%d)" % (x["flagged"], x.get("true_flagged", x.get("right", 0)))

    def after(n, unit, ns=None):
        if not n:
            return "never"
        return "%s %s" % ("{:,}".format(n), unit) + ("" if ns is None or ns < 0 else
                                                   ", %.1f ms" % (ns / 1e6))
    out = ["| network | gray | load | flow packets lost to it | 007: flagged (right) | 007 found "
           "it after | replay-filtered 007: flagged (right) | found after | Pingmesh: flagged "
           "(right) | found after | probe share | Everflow (all packets): silent-drop links | "
           "found after | Everflow (SYN/FIN/RST): silent drops seen |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in cases:
        r = load(n)["results"]
        for x in r["runs"]:
            b7, br, pm, ev, es = (x["blame"]["007"], x["blame"].get("replay"), x["pingmesh"],
                                  x["everflow"], x["everflow_sfr"])
            out.append("| k=%d | %s | %d%% | %d | %s | %s | %s | %s | %s | %s | %.1f%% | %s | %s | "
                       "%d |" % (
                           r["k"], x["gray"], x["load"], ev["silent"], flag(b7),
                           after(b7["detect_after"], "conns"), flag(br) if br else "-",
                           after(br["detect_after"], "conns") if br else "-", flag(pm),
                           after(pm["detect_after"], "probes", pm["detect_after_ns"]),
                           100 * pm["probe_share"],
                           (", ".join(ev["silent_links"]) or "none") +
                           (" (right)" if ev["right"] else ""),
                           after(ev["detect_after_drops"], "drops", ev["detect_after_ns"]),
                           es["silent"]))
    out.append("")
    out.append(provenance(*cases))
    return "\n".join(out)


def block_faults_fabric(name):
    """The fat tree on real kernels (the testbed) and in ns-3, side by side: per fault and load,
    what each system flagged (right ones in brackets) and after how much it found the fault."""
    def flag(x):
        return "%d (%d)" % (x["flagged"], x.get("true_flagged", x.get("right", 0)))

    def after(n, unit):
        return "never" if not n else "%s %s" % ("{:,}".format(n), unit)
    r = load(name)["results"]
    runs = {(x["fault"], x["gray"], x["load"], x["world"]): x for x in r["runs"]}
    out = ["| fault | load | | packets it dropped | 007: flagged (right) | found after | "
           "culprits | Pingmesh: flagged (right) | found after | probes lost | Everflow: "
           "silent-drop links | found after |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    seen = []
    for x in r["runs"]:
        key = (x["fault"], x["gray"], x["load"])
        if key in seen:
            continue
        seen.append(key)
        for world, label in (("testbed", "real kernels"), ("ns3", "ns-3")):
            y = runs.get(key + (world,))
            if not y:
                continue
            b7, pm, ev = y["blame"]["007"], y["pingmesh"], y["everflow"]
            cul = b7.get("culprit_accuracy")
            out.append("| %s %s %s | %d%% | %s | %d | %s | %s | %s | %s | %s | %d | %s | %s |" % (
                x["fault"], x.get("link", ""), x["gray"], x["load"], label, ev["silent"],
                flag(b7), after(b7["detect_after"], "conns"),
                "-" if cul is None else "%.0f%%" % (100 * cul), flag(pm),
                after(pm["detect_after"], "probes"), pm["lost"],
                (", ".join(ev["silent_links"]) or "none") + (" (right)" if ev["right"] else ""),
                after(ev["detect_after_drops"], "drops")))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_faults_fabric_everflow(name):
    """Everflow on the fat tree, per fault, load and world: the silent-drop links the drop debugger
    found with a lossless tap, with Everflow's own rules (SYN, FIN, RST) and behind a busy mirror
    session, and what the guided probes (the testbed's) found and said of the busy mirror's
    silent places."""
    def links(e):
        return (", ".join(e["silent_links"][:3]) + (", ..." if len(e["silent_links"]) > 3 else "")
                or "none") + (" (right)" if e["right"] else "")
    r = load(name)["results"]
    out = ["| fault | load | | lossless tap: silent-drop links | Everflow's rules: silent-drop "
           "links | busy mirror: copies lost | its silent-drop links | guided probes: lost of "
           "sent | their silent places (right) | the busy mirror's silent places: confirmed / "
           "refuted / not probed |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for x in r["runs"]:
        ev, sfr, busy = x["everflow"], x["everflow_sfr"], x["everflow_busy"]
        g, gb = ev.get("guided"), busy.get("guided")
        out.append("| %s %s %s | %d%% | %s | %s | %s | %.0f%% | %s | %s | %s | %s |" % (
            x["fault"], x.get("link", ""), x["gray"], x["load"],
            "real kernels" if x["world"] == "testbed" else "ns-3", links(ev), links(sfr),
            100.0 * busy["mirror_lost"] / max(busy["mirror_copies"], 1), links(busy),
            "%d of %d" % (g["lost"], g["probes"]) if g else "-",
            "%s (%d)" % (", ".join(g["silent_places"]) or "none", g["guided_silent_right"])
            if g else "-",
            "%d / %d / %d" % (gb["debugger_places"]["confirmed"],
                              gb["debugger_places"]["refuted"],
                              gb["debugger_places"]["unprobed"]) if gb else "-"))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_fabric_rates(name):
    """The fat-tree testbed at rising link rates on this machine: what the captures followed and
    how long packets took from their host's capture to their edge switch's."""
    r = load(name)["results"]["runs"]
    out = ["| link rate | flows (completed) | switch hops captured | queue drops (qdiscs) | "
           "host to switch p50 | p99 | a packet's time | p99 / packet time |",
           "|---|---|---|---|---|---|---|---|"]
    for x in r:
        out.append("| %d Mbit/s | %d (%d) | %s | %d | %.1f us | %.1f us | %.0f us | %.2f |" % (
            x["rate_mbps"], x["flows"], x["completed"], "{:,}".format(x["hops"]),
            x["qdisc_drops"], x["tap_delay_p50_ns"] / 1e3, x["tap_delay_p99_ns"] / 1e3,
            x["packet_ns"] / 1e3, x["tap_delay_p99_ns"] / x["packet_ns"]))
    out.append("")
    out.append(provenance(name))
    return "\n".join(out)


def block_paths_load(name):
    """WAP5's linking against Project 5's nesting and convolution over a three-tier service (the
    core's network, or ns-3's TCP), per load and clock error: messages linked to their true parent (mean over seeds, 95% interval), true
    patterns found, rare ones, shapes found that no request took."""
    from intervals import interval
    runs = [r for r in load(name)["results"]["runs"] if r.get("group") == "load"]
    out = ["| requests/s | clock error | messages (mean) | method | linked to the true parent "
           "(95% interval) | true patterns found | rare ones found | shapes no request took | "
           "network delays off by (mean) |",
           "|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["rate"], r["clock"], r["method"]) for r in runs},
                  key=lambda k: (k[0], len(k[1]), k[1], k[2]))
    for rate, clock, method in keys:
        rs = [r for r in runs if (r["rate"], r["clock"], r["method"]) == (rate, clock, method)]
        n, mean, _, half = interval([r["score"]["share"] for r in rs])
        tp = sum(r["score"]["true_patterns"] for r in rs)
        fp = sum(r["score"]["found_patterns"] for r in rs)
        rp = sum(r["score"]["rare_patterns"] for r in rs)
        rf = sum(r["score"]["rare_found"] for r in rs)
        net = [r["score"].get("net_delay_error_ns") for r in rs]
        out.append("| %d | %s | %.0f | %s | %s &plusmn; %s | %d of %d | %d of %d | %.0f | %s |" % (
            rate, "none" if clock == "0" else clock,
            sum(r["messages"] for r in rs) / float(len(rs)), method, pct(mean, 1),
            pct(half, 1) if half == half else "-", fp, tp, rf, rp,
            sum(r["score"]["false_patterns"] for r in rs) / float(len(rs)),
            "%.1f us" % (sum(net) / len(net) / 1e3) if None not in net else "-"))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_paths_fanout(name):
    """Linking, nesting and convolution against the parallelism within a request: the share of
    messages linked to their true parent (mean over seeds, 95% interval) per fan-out and load."""
    from intervals import interval
    runs = [r for r in load(name)["results"]["runs"] if r.get("group") == "fanout"]
    out = ["| parallel calls per request | requests/s | messages (mean) | linking | nesting | "
           "convolution |", "|---|---|---|---|---|---|"]
    for fan, rate in sorted({(r["fanout"], r["rate"]) for r in runs}):
        rs = [r for r in runs if (r["fanout"], r["rate"]) == (fan, rate)]
        cells = []
        for method in ("link", "nest", "conv"):
            _, mean, _, half = interval([r["score"]["share"] for r in rs if r["method"] == method])
            cells.append("%s &plusmn; %s" % (pct(mean, 1), pct(half, 1) if half == half else "-"))
        out.append("| %d | %d | %.0f | %s |" % (
            fan, rate, sum(r["messages"] for r in rs) / float(len(rs)), " | ".join(cells)))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_paths_faults(name):
    """The planted slow host and link: in how many seeds each method named them, and what else
    it named; then the cost against the number of messages."""
    runs = load(name)["results"]["runs"]
    out = ["| method | seeds | linked to the true parent (mean) | slow host named | slow link "
           "named | named wrongly | node delays off by (mean) |", "|---|---|---|---|---|---|---|"]
    for method in ("link", "nest", "conv"):
        rs = [r for r in runs if r.get("group") == "faults" and r["method"] == method]
        if not rs:
            continue
        out.append("| %s | %d | %s | %d | %d | %d | %s |" % (
            method, len(rs), pct(sum(r["score"]["share"] for r in rs) / len(rs), 1),
            sum(r["score"]["slow_node_named"] == 1 for r in rs),
            sum(r["score"]["slow_link_named"] == 1 for r in rs),
            sum(r["score"]["wrongly_named"] for r in rs),
            pct(sum(r["score"]["node_delay_error"] for r in rs) / len(rs), 1)))
    cost = sorted((r for r in runs if r.get("group") == "cost"),
                  key=lambda r: (r["messages"], r["method"]))
    if not cost:
        return "\n".join(out) + "\n\n" + provenance(name)
    timings = {t["command"].split(" -o ")[1].split()[0].rsplit("/", 1)[1]: t
               for t in load(name)["timings"] if " -o " in t["command"]}
    out += ["", "| messages | method | analysis time | whole command (simulation included): "
            "wall, peak memory |", "|---|---|---|---|"]
    for r in cost:
        t = timings.get(r["name"], {})
        out.append("| %d | %s | %.2f s | %s s, %s MB |" % (
            r["messages"], r["method"], r["volatile"]["analysis_s"], t.get("wall_s", "-"),
            t.get("peak_rss_mb", "-")))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_rpc(*names):
    """Persistent-connection RPCs diagnosed exchange by exchange (the service's captures at every
    host): per run and direction, the exchanges, their causes (most first), the losses and RTOs,
    and the slowdown's median and 99th percentile."""
    out = ["| world | requests/s | planted | direction | exchanges | causes | lost | RTOs | "
           "slowdown p50 / p99 |", "|---|---|---|---|---|---|---|---|---|"]
    world = {"ns3": "ns-3", "tb": "testbed"}
    planted = {"none": "none", "gray": "1% gray cable at the store",
               "slow": "slow host, slow link"}
    for name in names:
        runs = sorted(load(name)["results"]["runs"], key=lambda r: (r["world"] != "ns3",
                                                                   r["rate"], r["fault"]))
        for r in runs:
            for d in ("request", "response"):
                x = r["dirs"][d]
                causes = ", ".join("%s %d" % (c, n) for c, n in
                                   sorted(x["causes"].items(), key=lambda kv: (-kv[1], kv[0])))
                out.append("| %s | %d | %s | %s | %d | %s | %d | %d | %.2f / %.1f |" % (
                    world[r["world"]], r["rate"], planted.get(r["fault"], r["fault"]), d,
                    x["exchanges"], causes, x["lost"], x["rtos"], x["slowdown_p50"],
                    x["slowdown_p99"]))
    return "\n".join(out) + "\n\n" + provenance(*names)


COMPARATORS = ["007", "007-ecmp", "binary", "integer", "maxcov", "tomo"]


def block_comparators(name):
    """007 against its paper's comparators on the same runs, along the paper's axes (drop rate of
    one gray link, number of gray links, load): precision and recall of the links each flagged,
    mean over seeds with the 95% interval."""
    from intervals import interval
    runs = load(name)["results"]["runs"]
    out = ["| axis | value | seeds | " + " | ".join(
        "%s precision / recall" % m for m in COMPARATORS) + " |",
        "|---|---|---|" + "---|" * len(COMPARATORS)]
    keys = []
    for r in runs:
        if (r["axis"], r["value"]) not in keys:
            keys.append((r["axis"], r["value"]))
    for axis, val in keys:
        rs = [r for r in runs if (r["axis"], r["value"]) == (axis, val)]
        cells = []
        for m in COMPARATORS:
            got = []
            for key in ("precision", "recall"):
                n, mean, _, half = interval([r["methods"][m][key] for r in rs
                                             if r["methods"][m][key] is not None])
                got.append("-" if n == 0 else pct(mean, 0) + (
                    "" if half != half else " &plusmn; " + pct(half, 0)))
            cells.append(" / ".join(got))
        out.append("| %s | %s | %d | %s |" % (
            {"drop": "drop rate (1 link)", "links": "gray links (1% each)",
             "load": "load (1 link, 1%)", "workload": "the websearch flows alone (1 link, 1%)"}
            [axis], val, len(rs), " | ".join(cells)))
    over = sum(r["icmp"].get("icmp_over", 0) for r in runs)
    top = max(runs, key=lambda r: r["icmp"].get("icmp_max_sent", 0))["icmp"]
    out.append("")
    out.append("ICMP (Theorem 1): at most %d answers from one switch in one epoch of any run, "
               "where 007's bound for that switch is %d; the bound was exceeded %d times." % (
                   top.get("icmp_max_sent", 0), top.get("icmp_max_bound", 0), over))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_pingmesh_paper(name):
    """Pingmesh as its paper measures: the drop rate from connect times beside the direct count
    and the truth (testbed), and the black-hole rule's first flag against the planted place."""
    runs = load(name)["results"]["runs"]
    groups = []
    for r in runs:
        if (r["world"], r["fault"], r["value"]) not in groups:
            groups.append((r["world"], r["fault"], r["value"]))
    out = ["| world | fault | runs | unanswered in time | from connect times | handshakes lost "
           "per attempt | slow connects right / missed / false | black-hole rule: first flag | "
           "its wrong flags | scan: first flag |",
           "|---|---|---|---|---|---|---|---|---|---|"]

    def mean(rs, key):
        v = [r[key] for r in rs if r[key] is not None]
        return sum(v) / len(v) if v else None

    for world, fault, val in groups:
        rs = [r for r in runs if (r["world"], r["fault"], r["value"]) == (world, fault, val)]
        cr = mean(rs, "connect_drop_rate")
        sr = mean(rs, "syn_drop_rate")
        conn = "-" if cr is None else pct(cr)
        syn = "-" if sr is None else pct(sr)
        graded = "-" if cr is None else "%d / %d / %d" % tuple(
            sum(r[k] for r in rs) for k in ("connect_right", "connect_missed", "connect_false"))
        firsts = sorted(set(r["bh_first"] or "none" for r in rs))
        right = sum(1 for r in rs if r["want"] and r["bh_first"] == r["want"])
        bh = ", ".join(firsts) + (" (the planted one in %d of %d)" % (right, len(rs))
                                  if rs[0]["want"] else "")
        scan = ", ".join(sorted(set(r["scan_first"] or "none" for r in rs)))
        out.append("| %s | %s %s | %d | %s | %s | %s | %s | %s | %d | %s |" % (
            world, fault, val, len(rs), pct(mean(rs, "drop_rate")), conn, syn, graded, bh,
            sum(r["bh_wrong"] for r in rs), scan))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_pingmesh_patterns(name):
    """Pingmesh's heatmap patterns: per planted failure, the drop rate inside the cells of its
    pattern and elsewhere, and what the scan flagged."""
    runs = load(name)["results"]["runs"]
    out = ["| failure | its pattern's cells | drop rate there | elsewhere | places flagged "
           "(in order) |", "|---|---|---|---|---|"]
    cells = {"none": "-", "tor": "the ToR's row and column",
             "pod": "between the pod and the others", "spine": "every cell between pods"}
    for r in runs:
        out.append("| %s | %s | %s | %s | %s |" % (
            r["label"], cells[r["kind"]], "-" if r["in_rate"] is None else pct(r["in_rate"]),
            pct(r["out_rate"]), ", ".join(r["flags"]) or "none"))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_butterfly_search(name):
    """DETER's butterfly searched for in ns-3: per short flow size, the runs, how many took a
    timeout, two timeouts, a timeout whose resend's ACK a delayed ACK held, DETER's whole case,
    and the longest completion with its cause."""
    d = load(name)["results"]
    runs = d["runs"]
    out = ["| short flow | runs | a timeout | two timeouts | a resend's ACK held | DETER's case "
           "(2 timeouts, held, >= %s ms) | longest completion |" % fmt_ms(3 * d["min_rto_ns"]),
           "|---|---|---|---|---|---|---|"]
    for size in sorted(set(r["size"] for r in runs), key=lambda x: int(x.rstrip("KB"))):
        rs = [r for r in runs if r["size"] == size]
        top = max(rs, key=lambda r: r["fct_ns"])
        out.append("| %s | %d | %d | %d | %d | %d | %s ms (%s, buffer %s, start %s, jitter %s) |"
                   % (size, len(rs), sum(1 for r in rs if r["rtos"] >= 1),
                      sum(r["two_rtos"] for r in rs), sum(r["held"] for r in rs),
                      sum(r["deter"] for r in rs), fmt_ms(top["fct_ns"]), top["cause"],
                      top["buffer"], top["start"], top["jitter"]))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_butterfly_kernels(name):
    """DETER's butterfly searched for on the kernels: the same table as in ns-3, then the late
    fast retransmissions the diagnosis found against the reorderings the kernels counted."""
    d = load(name)["results"]
    runs = d["runs"]
    late = sum(r["late_fr"] for r in runs)
    fast = sum(r["fast_retransmits_all"] for r in runs)
    kre = sum(r.get("kernel_reorder", 0) for r in runs)
    kfr = sum(r.get("kernel_fast_retrans", 0) for r in runs)
    table = block_butterfly_search(name).split("\n\n<sub>")[0]
    return (table + "\n\nLate fast retransmissions: %d of the %d fast retransmissions the "
            "diagnosis found in all flows of the %d runs; the hosts' kernels counted %d "
            "reorderings and %d fast retransmits.\n\n" % (late, fast, len(runs), kre, kfr)
            + provenance(name))


def block_kernel_tcp(name):
    """Per fat-tree testbed run: the kernels' reorderings and fast retransmits beside the
    diagnosis's fast, late and reordered counts."""
    runs = load(name)["results"]["runs"]
    out = ["| run | flows | kernels: fast retransmits | kernels: reorderings detected | diagnosis: "
           "fast retransmissions | late ones | segments reordered |", "|---|---|---|---|---|---|---|"]
    for r in runs:
        out.append("| %s | %d | %d | %d | %d | %d | %d |" % (
            r["label"], r["flows"], r["kernel_fast_retrans"], r["kernel_reorder"],
            r["fast_retransmits"], r["late_fr"], r["reordered"]))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_loops(name):
    """Everflow's loop debugger against planted loops: per run, the cycles found from the
    mirrored copies (planted or not), the packets caught, and the recorded packets the truth has
    lost outside the queues."""
    runs = load(name)["results"]["runs"]
    out = ["| where | planted loops | seed | cycles found (packets caught) | false cycles | "
           "packets caught | recorded packets lost outside the queues (truth) |",
           "|---|---|---|---|---|---|---|"]
    for r in runs:
        found = ", ".join("%s%s (%d)" % (c["cycle"], "" if c["planted"] else " NOT PLANTED",
                                         c["packets"]) for c in r["cycles"]) or "none"
        out.append("| %s | %s | %d | %s | %d | %d | %d |" % (
            r["backend"], r["rules"], r["seed"], found, r["false_cycles"], r["looping"],
            r["lost_outside_queues"]))
    planted = sum(r["n_rules"] for r in runs)
    found = sum(r["planted_found"] for r in runs)
    false = sum(r["false_cycles"] for r in runs)
    exact = sum(1 for r in runs if r["looping"] == r["lost_outside_queues"])
    missed = ["%s, %s, seed %d (%d of %d found; the truth lost %d recorded packets outside the "
              "queues)" % (r["backend"], r["rules"], r["seed"], r["planted_found"], r["n_rules"],
                           r["lost_outside_queues"])
              for r in runs if r["planted_found"] < r["n_rules"]]
    return ("\n".join(out) + "\n\n%d planted loops over %d runs; %d found as their planted cycle, "
            "%d cycles found that no rule planted; in %d of the %d runs the packets caught in a "
            "cycle are exactly the recorded packets the truth lost outside the queues. Not found: "
            "%s.\n\n" % (planted, len(runs), found, false, exact, len(runs),
                          "; ".join(missed) or "none") + provenance(name))


def fmt_ms(ns):
    return "%.1f" % (ns / 1e6)


BLOCKS = {
    "loops": lambda: block_loops("loops"),
    "blame-testbed": lambda: block_comparators("blame-testbed"),
    "butterfly-search": lambda: block_butterfly_search("butterfly-search"),
    "butterfly-kernels": lambda: block_butterfly_kernels("butterfly-kernels"),
    "reorder-fattree": lambda: block_kernel_tcp("reorder-fattree"),
    "pingmesh-patterns": lambda: block_pingmesh_patterns("pingmesh-patterns"),
    "pingmesh-paper": lambda: block_pingmesh_paper("pingmesh-paper"),
    "blame-comparators": lambda: block_comparators("blame-comparators"),
    "paths-load": lambda: block_paths_load("paths-core"),
    "paths-faults": lambda: block_paths_faults("paths-core"),
    "paths-ns3-load": lambda: block_paths_load("paths-ns3"),
    "paths-fanout": lambda: block_paths_fanout("paths-fanout"),
    "diagnose-rpc": lambda: block_rpc("diagnose-rpc", "diagnose-rpc-testbed"),
    "paths-ns3-faults": lambda: block_paths_faults("paths-ns3"),
    "paths-testbed-load": lambda: block_paths_load("paths-testbed"),
    "paths-testbed-faults": lambda: block_paths_faults("paths-testbed"),
    "fabric-rates": lambda: block_fabric_rates("fabric-rates"),
    "faults-fabric-everflow": lambda: block_faults_fabric_everflow("faults-fabric"),
    "faults-fabric": lambda: block_faults_fabric("faults-fabric"),
    "whatif-errors": lambda: block_whatif_errors(WHATIF_CASES),
    "diagnose-tail": lambda: block_diagnose_tail(DIAGNOSE_CASES),
    "diagnose-all": lambda: block_diagnose_all(DIAGNOSE_CASES),
    "faults-k4": lambda: block_faults(["faults-k4"]),
    "faults-k8": lambda: block_faults(["faults-k8"]),
    "whatif-trust": lambda: block_whatif_trust(WHATIF_CASES),
    "k4-table": lambda: block_run_table("k4-default"),
    "runtime-printouts": lambda: block_runtime_printout(["k4-default", "single-switch"]),
    "k4-sample": lambda: block_sample_printout("k4-default"),
    "butterfly-100-table": lambda: block_table_lines("butterfly-100", 0),
    "butterfly-quick-table": lambda: block_table_lines("butterfly-quick", 0),
    "isolate-k4-table": lambda: block_table_lines("isolate-k4", 1),
    "k16-variants": lambda: block_sweep_variants("k16-paper", 30.0),
    "k8-table": lambda: block_k8_table("k8-sweep"),
    "k8-paper-table": lambda: block_k8_table("k8-paper"),
    "k8-paper-scaled-table": lambda: block_k8_table("k8-paper-scaled"),
    "k8-paper-scaled-claims": lambda: block_seed_claims("k8-paper-scaled"),
    "k16-long-claims": lambda: block_seed_claims("k16-long", {30.0: "k16-long-30",
                                                              80.0: "k16-long-80"}),
    "paper-full": lambda: block_paper_full(None),
    "runtime-cost": lambda: block_runtime_cost(None),
    "side-by-side": lambda: block_side_by_side(None),
    "k8-scale": lambda: block_k8_scale("k8-sweep"),
    "scale": lambda: block_scale(None),
    "single-switch-variants": lambda: block_run_variants("single-switch"),
    "single-switch-evidence": lambda: block_single_switch_evidence("single-switch"),
    "single-switch-seeds": lambda: block_seeds("single-switch-seeds"),
    "sweep-ci-variants": lambda: block_sweep_variants("sweep-ci", 30.0),
    "sweep-ci-points": lambda: block_sweep_points("sweep-ci"),
    "bench": lambda: block_bench("bench"),
    "bench-compare": lambda: block_bench_compare("bench-before", "bench"),
    "bench-k16": lambda: block_bench_runtime("bench-k16"),
    "replay-engines": lambda: block_engines("replay-engines"),
    "bench-commands": lambda: block_commands("bench-commands"),
    "clocks": lambda: block_clocks(["clock-k4", "clock-k8", "clock-k16"]),
    "roundtrip": lambda: block_roundtrip("roundtrip-k4"),
    "light": lambda: block_light(["light-k4", "light-k8"]),
    "light-claims": lambda: block_light_claims(["light-k4", "light-k8"]),
    "testbed": lambda: block_testbed("testbed-single-switch"),
    "record-testbed": lambda: block_record("record-testbed"),
    "record-rate": lambda: block_record_rate("record-rate"),
    "testbed-repeat": lambda: block_testbed_repeat("testbed-repeat"),
    "record-fattree": lambda: block_record_fattree("record-fattree"),
    "apps-corpus": lambda: block_apps("apps-corpus"),
    "tshark-corpus": lambda: block_corpus("tshark-corpus"),
    "chaos": lambda: block_chaos("chaos"),
    "testbed-apps": lambda: block_testbed_apps("testbed-apps"),
    "record-apps": lambda: block_apps_record("testbed-apps"),
}


BLOCK_RE = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end generated -->)", re.S)


INLINE_RE = re.compile(r"(<!--v ([^>]*?)-->)(.*?)(<!--/v-->)", re.S)


def render_text(text, where):
    def blk(m):
        name = m.group(2)
        if name not in BLOCKS:
            raise DocsError("%s: unknown generated block '%s'" % (where, name))
        return m.group(1) + BLOCKS[name]().rstrip("\n") + "\n" + m.group(4)

    def inl(m):
        return m.group(1) + value(m.group(2), where) + m.group(4)

    text = BLOCK_RE.sub(blk, text)
    return INLINE_RE.sub(inl, text)


def render(check):
    stale = 0
    for rel in DOCS:
        path = os.path.join(TOP, rel)
        with open(path) as fh:
            old = fh.read()
        if old.count("<!-- generated:") != len(BLOCK_RE.findall(old)):
            raise DocsError("%s: a '<!-- generated: NAME -->' block without its end marker" % rel)
        new = render_text(old, rel)
        if new == old:
            continue
        stale += 1
        if check:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       rel, rel + " (./waf docs)"))
        else:
            tmp = "%s.partial-%d" % (path, os.getpid())
            with open(tmp, "w") as fh:
                fh.write(new)
            os.replace(tmp, path)
            print("docs: rewrote %s" % rel)
    if check and stale:
        print("docs: %d file(s) differ from what `./waf docs` writes from data/results/" % stale)
        return 1
    if check:
        print("docs: %s match data/results/" % ", ".join(DOCS))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("--check", action="store_true",
                    help="only say whether the docs are up to date (exit 1 and a diff if not)")
    a = ap.parse_args(argv)
    try:
        return render(a.check)
    except DocsError as e:
        print("docs: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
