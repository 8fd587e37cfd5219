#!/usr/bin/python3
"""Published numbers from stored results: run the cases, store their summaries, write the docs.

Every number in README.md and docs/*.md that a command produced lives in a small JSON summary
under data/results/ (one per case, with the commands, the scenario's hash, the seed and the code
version that made it, and the wall time and peak memory of every command), and is written into
the docs by this script, never by hand:

  docs.py store CASE... | quick | long    run the cases' commands, write data/results/CASE.json
  docs.py verify CASE... | quick          run them again, compare with the stored summaries
  docs.py render [--check]                rewrite the generated parts of the docs (--check: only
                                          say whether they are up to date, with a diff)
  docs.py adopt CASE SWEEP_DIR            a sweep case from a finished workflow folder instead of
                                          running it (a long sweep spans several sittings: see
                                          adopt_sweep)
  docs.py list                            the cases, their kind and commands

A sweep case also keeps the workflow's summary table as data/results/CASE.csv (one row per load,
seed and variant), so its figures can be redrawn without running it again.

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

Quick cases (seconds to a minute each) are rerun by the test suite (`verify quick`): a change that
moves a published number fails until the summary is stored again and the docs rendered. Long
cases (k=8 and k=16 sweeps, the 100-replay butterfly, benchmarks) are stored by `store long` and
carry their code version, which the docs print next to each table.
"""
import argparse
import csv
import datetime
import difflib
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
STORE = os.path.join(TOP, "data", "results")
DOCS = ["README.md", "docs/REPRODUCTION.md", "docs/study.md", "docs/captures.md",
        "docs/slow-flows.md", "docs/faulty-links.md", "docs/whatif.md", "docs/testbed.md",
        "docs/sweeps.md", "docs/program.md", "docs/development.md", "CHANGELOG.md"]
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class DocsError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Running commands

def run_command(argv, display, out_dir, env=None):
    """Run argv from the top of the tree; return its stdout (the output folder shown as DIR),
    its wall time and peak memory (the largest resident set of it and the processes it waited
    for, from wait4)."""
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, cwd=TOP, stdout=so, stderr=se, env=env)
        try:
            _, status, usage = os.wait4(p.pid, 0)
        except KeyboardInterrupt:
            p.terminate()
            p.wait()
            raise
        p.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") \
            else (status >> 8 if os.WIFEXITED(status) else -os.WTERMSIG(status))
        wall = time.monotonic() - t0
        so.seek(0)
        se.seek(0)
        text, err = so.read().decode(errors="replace"), se.read().decode(errors="replace")
    if p.returncode != 0:
        raise DocsError("%s: exit %d\n%s" % (display, p.returncode, err[-2000:]))
    text = text.replace(out_dir, "DIR").replace(TOP + "/", "")  # no path of this machine
    return text.splitlines(), {
        "command": display, "wall_s": round(wall, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        # the machine's 1-minute load average before and after: how shared it was
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def printed_fields(lines):
    """The `name   value` lines a command printed, as a dict (name -> value text); lines with wall
    times are left out (they are in `stdout`, kept but not compared)."""
    out = {}
    for line in lines:
        if VOLATILE.search(line):
            continue
        m = re.match(r"^([a-z][a-z/ ]*?[a-z/])\s{2,}(\S.*)$", line)
        if m and not line.startswith("variant"):
            out[m.group(1)] = m.group(2).strip()
    return out


def h5():
    import h5py  # Debian's python3-h5py
    return h5py


def attrs(obj, keys=None):
    out = {}
    for k in obj.attrs:
        if keys is not None and k not in keys:
            continue
        v = obj.attrs[k]
        if hasattr(v, "item"):
            v = v.item()
        if isinstance(v, bytes):
            v = v.decode()
        out[k] = v
    return out


def rows(dataset, fields=None):
    data = dataset[:]
    names = fields or data.dtype.names
    out = []
    for r in data:
        d = {}
        for n in names:
            v = r[n]
            v = v.item() if hasattr(v, "item") else v
            d[n] = v.decode() if isinstance(v, bytes) else v
        out.append(d)
    return out


VARIANT_KEYS = ["mode", "th_ns", "qdiff_mean_mtu", "qdiff_p50_mtu", "qdiff_p99_mtu",
                "qdiff_max_mtu", "qdiff_zero_fraction", "qdiff_sym_mean_mtu", "qdiff_sym_p99_mtu",
                "qlen_diff_mean_mtu", "qlen_longer_fraction", "qlen_shorter_fraction",
                "runtime_drops", "replay_drops", "false_accepts", "false_drops", "wrong_locations",
                "drop_error", "matched_arrivals"]


def variants_of(results_h5):
    f = h5().File(results_h5, "r")
    out = []
    for name in sorted(f["replay"], key=lambda v: (f["replay"][v].attrs["th_ns"], v)):
        d = {"variant": name}
        d.update(attrs(f["replay"][name], VARIANT_KEYS))
        out.append(d)
    return f, out


def busy_period(series):
    """The longest stretch of consecutive arrivals that found the queue non-empty."""
    t, q = series["time_ns"], series["queue_bytes"]
    best, start = (0, 0, 0), None
    for i in range(len(q) + 1):
        if i < len(q) and q[i] > 0:
            if start is None:
                start = i
        elif start is not None:
            if i - start > best[2] - best[1] or best == (0, 0, 0):
                best = (0, start, i)
            start = None
    _, a, b = best
    if b <= a:
        return {"arrivals": 0}
    settled = q[a:b][t[a:b] >= t[a] + 1000000]
    return {"start_ns": int(t[a]), "end_ns": int(t[b - 1]), "arrivals": int(b - a),
            "settled_min_queue_bytes": int(settled.min()) if len(settled) else None,
            "share": (b - a) / float(len(q)), "min_queue_bytes": int(q[a:b].min()),
            "max_queue_bytes": int(q[a:b].max())}


# ---------------------------------------------------------------------------------------------
# Cases: commands and what is kept of their output

def q(args):
    return ["{qreplay}"] + args


def extract_run(out, lines, opts):
    f, var = variants_of(os.path.join(out, "run", "results.h5"))
    res = {"variants": var, "runtime": attrs(f["runtime"], ["drops", "packets"])}
    res["printed"] = printed_fields(lines[0])
    if opts.get("busy"):
        series = f["runtime"]["busiest_queue"][:]
        res["busiest"] = attrs(f["runtime"], ["busiest_switch", "busiest_port"])
        res["busiest"]["busy_period"] = busy_period(series)
        bq = (res["busiest"]["busiest_switch"], res["busiest"]["busiest_port"])
        runtime_drops = set(int(p) for p in f["runtime"]["drops"]["packet"])
        drop_times = {int(r["packet"]): int(r["time_ns"]) for r in f["runtime"]["drops"][:]}
        for v in var:
            g = f["replay"][v["variant"]]
            qs = [r for r in rows(g["queues"]) if (r["switch"], r["port"]) == bq][0]
            v["busiest_queue"] = {k: qs[k] for k in ("count", "mean", "len_diff_mean",
                                                     "len_longer", "len_shorter")}
            rep = set(int(p) for p in g["drops"]["packet"])
            v["false_accept_times_ns"] = sorted(drop_times[p] for p in runtime_drops - rep)[:10]
            # the send-time lag at the busiest queue: early in its busy period, and settled
            bp = res["busiest"]["busy_period"]
            qd = g["qdiff"][:]
            qd = qd[(qd["switch"] == bq[0]) & (qd["port"] == bq[1])]
            lag = qd["time_rep_ns"] - qd["time_run_ns"]
            early = (qd["time_run_ns"] >= bp["start_ns"]) & \
                (qd["time_run_ns"] < bp["start_ns"] + 500000)
            settled = (qd["time_run_ns"] >= bp["start_ns"] + 1000000) & \
                (qd["time_run_ns"] <= bp["end_ns"])
            import numpy
            v["lag_early_ns"] = float(numpy.median(lag[early])) if early.any() else None
            v["lag_settled_ns"] = float(numpy.median(lag[settled])) if settled.any() else None
    return res


def extract_seeds(out, lines, opts):
    res = []
    for i, seed in enumerate(opts["seeds"]):
        _, var = variants_of(os.path.join(out, "seed_%d" % seed, "results.h5"))
        res.append({"seed": seed, "variants": var})
    return {"seeds": res}


def extract_butterfly(out, lines, opts):
    f = h5().File(os.path.join(out, "bf", "butterfly.h5"), "r")
    return {"sigma": rows(f["sigma"]), "attrs": attrs(f, ["short_flow", "runtime_short_fct_ns",
                                                         "runtime_drops", "bottleneck_switch",
                                                         "bottleneck_port"]),
            "table": [l for l in lines[0] if l.strip()]}


def extract_isolate(out, lines, opts):
    """The table, and what recording /received costs next to the pcaps."""
    rec = h5().File(os.path.join(out, "rt", "recording.h5"), "r")
    received = rec["received"]
    pcaps = glob.glob(os.path.join(out, "rt", "pcap", "*.pcap"))
    packets = int(sum(h["packets"] for h in rec["hosts"][:]))
    return {"table": [l for l in lines[1] if l.strip()],
            "received_rows": int(received.shape[0]),
            "received_bytes_per_packet": received.id.get_storage_size() / float(received.shape[0]),
            "pcap_bytes_per_packet": sum(os.path.getsize(p) for p in pcaps) / float(packets)}


def extract_sample(out, lines, opts):
    return {"printed": printed_fields(lines[-1])}


SUMMARY_KEEP = ["load_pct", "seed", "variant", "mode", "th_us", "qdiff_mean_mtu", "qdiff_p50_mtu",
                "qdiff_p99_mtu", "qdiff_max_mtu", "qdiff_zero_fraction", "runtime_drops",
                "replay_drops", "false_accepts", "false_drops", "wrong_locations", "drop_error",
                "matched_arrivals"]


def num(v):
    try:
        x = float(v)
    except ValueError:
        return v
    return int(x) if x == int(x) and "." not in v else x


def sweep_bench(path):
    """A sweep run's wall time (s) and peak memory (MB), from snakemake's benchmark file."""
    with open(path) as fh:
        b = list(csv.DictReader(fh, delimiter="\t"))[0]
    return {"wall_s": float(b["s"]), "max_rss_mb": float(b["max_rss"])}


def extract_sweep(out, lines, opts):
    with open(os.path.join(out, "sweep", "summary.csv")) as fh:
        table = list(csv.DictReader(fh))
    res = {"rows": [{k: num(r[k]) for k in SUMMARY_KEEP} for r in table]}
    h = h5()
    perf = []
    for d in sorted(glob.glob(os.path.join(out, "sweep", "load_*_seed_*"))):
        name = os.path.basename(d)
        truth = h.File(os.path.join(d, "recording", "truth", "truth.h5"), "r")
        rec = h.File(os.path.join(d, "recording", "recording.h5"), "r")
        fl = rec["flows"][:]
        t = attrs(truth, ["events", "wall_s", "sim_end_ns", "end"])
        replay_wall = 0.0
        for rp in glob.glob(os.path.join(d, "replay", "*", "replay.h5")):
            replay_wall += float(h.File(rp, "r").attrs.get("wall_s", 0.0))
        bpath = os.path.join(out, "sweep", "benchmarks", name + ".tsv")
        bench = sweep_bench(bpath) if os.path.exists(bpath) else {}
        rt = h.File(os.path.join(d, "results.h5"), "r")["runtime"].attrs
        drops, packets = rt["drops"], rt["packets"]
        # how much of the traffic and of the drops is incast (the rate is network-wide, so its
        # share grows as the network shrinks)
        inc = fl["incast"] != 0
        incast_flow = dict(zip(fl["id"].tolist(), inc.tolist()))
        dirs = truth["directions"][:]
        dflow = dict(zip(dirs["dir"].tolist(), dirs["flow"].tolist()))
        dr = truth["drops"]["dir"]
        n_inc = sum(1 for x in dr.tolist() if incast_flow.get(dflow.get(x), False))
        perf.append({"run": name, "flows": int(len(fl)), "completed": int(fl["completed"].sum()),
                     "runtime_drops": int(drops), "packets": int(packets),
                     "events": int(t["events"]),
                     "sim_end_ns": int(t["sim_end_ns"]),
                     "incast_bytes_share": round(float(fl["bytes"][inc].sum()) /
                                                 max(1.0, float(fl["bytes"].sum())), 4),
                     "incast_drops_share": round(n_inc / max(1, len(dr)), 4),
                     "volatile": {"runtime_wall_s": round(float(t["wall_s"]), 1),
                                  "replays_wall_s": round(replay_wall, 1),
                                  "run_wall_s": bench.get("wall_s"),
                                  "run_max_rss_mb": bench.get("max_rss_mb")}})
    res["runs"] = perf
    return res


def extract_bench(out, lines, opts):
    return {"volatile": {"core": [l for l in lines[0] if l.strip()],
                         "runtime": [l for l in lines[1] if l.strip()]}}


def parse_bench_replay(lines):
    """bench_replay's table (one row per engine) and its comparison line."""
    engines, compare = {}, None
    cols = None
    for l in lines:
        f = l.split()
        if not f or l.startswith("#"):
            continue
        if f[0] == "engine":
            cols = f[1:]
        elif cols and len(f) == len(cols) + 1 and f[0] in ("native", "ns3"):
            engines[f[0]] = {c: num(v) for c, v in zip(cols, f[1:])}
        elif " vs " in l:
            compare = l.strip()
    return engines, compare


def extract_engines(out, lines, opts):
    """Per network (opts["nets"], one bench_replay each, after its runtime): what both engines
    replayed (deterministic), and their speed and memory (volatile)."""
    res, vol = {}, {}
    for i, net in enumerate(opts["nets"]):
        engines, compare = parse_bench_replay(lines[2 * i + 1])
        nat, ref = engines["native"], engines["ns3"]
        res[net] = {"packet_hops": nat["packet_hops"], "drops": nat["drops"],
                    "logs_identical": bool(compare and "identical" in compare)}
        vol[net] = {"native": nat, "ns3": ref, "speedup": ref["wall_s"] / nat["wall_s"],
                    "memory_ratio": nat["peak_rss_mb"] / ref["peak_rss_mb"], "line": compare}
    res["volatile"] = vol
    return res


def engines_case(nets):
    """The native replay engine against the ns-3 replay: a runtime per network, then one tagged
    replay at th = 5 us by each engine (bench_replay)."""
    cmds = []
    for net, scenario in nets:
        cmds.append(q(["runtime", scenario, "-o", "{out}/%s/recording" % net, "--quiet"]))
        cmds.append(["{build}/bench_replay", "{out}/%s" % net, "--th", "5us"])
    return {"kind": "long", "scenario": nets[-1][1], "commands": cmds,
            "extract": [extract_engines], "opts": {"nets": [n for n, _ in nets]}}


def sweep_cmd(scenario, cores):
    return ["snakemake", "-s", "analysis/Snakefile", "--cores", str(cores), "-q",
            "--config", "scenario=" + scenario, "out={out}/sweep", "qreplay={qreplay}"]


def sweep_case(scenario, cores, kind):
    return {"kind": kind, "scenario": scenario, "commands": [sweep_cmd(scenario, cores)],
            "extract": [extract_sweep], "opts": {}, "csv": os.path.join("sweep", "summary.csv")}


def adopt_sweep(name, sweep_dir, keep):
    """Make the kept folder (keep/NAME, as --keep would) of a sweep case from a workflow folder
    that `./waf sweep` finished, possibly over several sittings: the runs' results, snakemake's
    benchmark files for the timings (the sum of the runs' wall times, the largest peak memory), and
    the code version that every run recorded (they must agree: a sweep whose runs were made by
    different code is refused). The folder must be this case's scenario: checked against the
    scenario text each run recorded."""
    case = CASES[name]
    if case.get("csv") is None:
        raise DocsError("%s: not a sweep case (adopt takes only those)" % name)
    sweep_dir = os.path.abspath(sweep_dir)
    if not os.path.exists(os.path.join(sweep_dir, "summary.csv")):
        raise DocsError("%s: no summary.csv: the sweep is not finished (run it again to finish "
                        "it)" % sweep_dir)
    h = h5()
    versions, wall, rss = set(), 0.0, 0.0
    scen_name = os.path.splitext(os.path.basename(case["scenario"]))[0]
    runs = sorted(glob.glob(os.path.join(sweep_dir, "load_*_seed_*")))
    if not runs:
        raise DocsError("%s: no runs (load_*_seed_*)" % sweep_dir)
    for d in runs:
        with h.File(os.path.join(d, "results.h5"), "r") as f:
            versions.add(str(f.attrs["code_version"]))
            if str(f.attrs.get("scenario_name", "")) != scen_name:
                raise DocsError("%s: made from scenario %s, not %s" % (
                    d, f.attrs.get("scenario_name", "?"), case["scenario"]))
        b = sweep_bench(os.path.join(sweep_dir, "benchmarks", os.path.basename(d) + ".tsv"))
        wall += b["wall_s"]
        rss = max(rss, b["max_rss_mb"])
    if len(versions) != 1:
        raise DocsError("%s: its runs were made by different code (%s)" % (
            sweep_dir, ", ".join(sorted(versions))))
    out = os.path.join(keep, name)
    os.makedirs(out)
    os.symlink(sweep_dir, os.path.join(out, "sweep"))
    write_json(os.path.join(out, "docs-run.json"), {
        "stdout": [[]], "code_version": versions.pop(),
        "timings": [{"command": display(case["commands"][0]), "wall_s": round(wall, 2),
                     "peak_rss_mb": round(rss, 1),
                     "note": "sum of the runs' wall times (snakemake benchmarks)"}]})


def k8_long_run(load):
    """k=8 with 20 ms of flow arrivals at one load, th = 5 us only."""
    sets = ["traffic.load=%d%%" % load, "traffic.duration=20ms", "traffic.stop=80ms",
            "sampling.th=5us"]
    argv = ["run", "scenarios/fattree-k8-sweep.ini"]
    for kv in sets:
        argv += ["--set", kv]
    return {"kind": "long", "scenario": "scenarios/fattree-k8-sweep.ini",
            "commands": [q(argv + ["-o", "{out}/run", "--no-figures"])],
            "extract": [extract_run], "opts": {}}


WHATIF_GRID = ["--vary", "buffer.size=1MB,2MB,4MB", "--vary", "buffer.alpha=0.5,1,2"]
WHATIF_KEYS = ["drops", "edge_drops", "agg_drops", "core_drops", "lossy_share", "new_drops",
               "sent_after_new_drop", "all_q_p99", "edge_q_p99", "agg_q_p99", "core_q_p99",
               "all_above90", "delay_p50", "delay_p99", "flow_delay_p99", "blackholes",
               "model_mismatches"]


def whatif_case(kind, scenario, load):
    """A buffer x alpha grid, validated, on a runtime of scenario at a load."""
    rt = ["runtime", scenario, "--set", "traffic.load=%d%%" % load, "-o", "{out}/rt/recording",
          "--quiet"]
    return {"kind": kind, "scenario": scenario,
            "commands": [q(rt), q(["whatif", "{out}/rt"] + WHATIF_GRID +
                                  ["--validate", "--prune", "--no-figures"])],
            "extract": [extract_whatif], "opts": {"load": load}}


def diagnose_case(kind, scenario, load):
    """The root causes of slow flows on a runtime of scenario at a load: the tail (p99 and p90 of
    slowdown per size class) and every flow."""
    rt = ["runtime", scenario, "--set", "traffic.load=%d%%" % load, "-o", "{out}/rt", "--quiet"]
    return {"kind": kind, "scenario": scenario,
            "commands": [q(rt), q(["diagnose", "{out}/rt", "--no-figures"]),
                         q(["diagnose", "{out}/rt", "--tail", "90%", "-o", "{out}/t90.h5",
                            "--no-figures", "--quiet"]),
                         q(["diagnose", "{out}/rt", "--flows", "all", "-o", "{out}/all.h5",
                            "--no-figures", "--quiet"])],
            "extract": [extract_diagnose], "opts": {"load": load}}


def faults_case(kind, k, grays, loads, interval):
    """A gray cable between pod 0's first aggregation switch and the first core switch
    (scenarios/faults/gray-k4.ini, at k), at each drop rate and load: a runtime with Pingmesh's
    agents (qreplay pingmesh), 007 with an exact tagged replay (qreplay blame), and Everflow
    (qreplay trace) matching every packet and only SYN/FIN/RST."""
    agg, core = k * k // 2, k * k  # switches: edges, then aggregations, then cores
    link = "s%d-s%d" % (agg, core)
    cmds, runs = [], []
    for g in grays:
        for load in loads:
            d = "{out}/g%s_l%d" % (g.replace(".", "p").replace("%", ""), load)
            runs.append({"gray": g, "load": load, "dir": os.path.basename(d)})
            cmds += [q(["pingmesh", "scenarios/faults/gray-k4.ini", "-o", d, "--set",
                        "topology.k=%d" % k, "--set", "traffic.load=%d%%" % load, "--set",
                        "faults.gray=%s %s" % (link, g), "--interval", interval,
                        "--no-figures", "--quiet"]),
                     q(["blame", d, "--no-figures", "--quiet"]),
                     q(["trace", d, "--match", "all", "--limit", "1", "-o", d + "/trace-all.h5",
                        "--no-figures", "--quiet"]),
                     q(["trace", d, "--match", "syn or fin or rst", "--limit", "1", "-o",
                        d + "/trace-sfr.h5", "--no-figures", "--quiet"])]
    return {"kind": kind, "scenario": "scenarios/faults/gray-k4.ini", "commands": cmds,
            "extract": [extract_faults],
            "opts": {"k": k, "link": link, "runs": runs, "interval": interval}}


def everflow_summary(path, link):
    """Everflow's view of one trace: the links where traced packets vanished silently (fault drops:
    no switch counted them), right if they are the planted cable; how many drops the debugger had
    to look at, and how much simulated time passed, until the cable had two silent drops."""
    f = h5().File(path, "r")
    s = rows(f["summary"])[0]
    drops = f["drops"][:]
    a, b = link.split("-")
    cable = {a + ">" + b, b + ">" + a}
    silent = [(int(d["time_ns"]), d["link_name"].decode()) for d in drops if d["reason"] == 4]
    links = sorted(set(n for _, n in silent))
    out = {"matched": s["matched"], "drops": len(drops), "silent": len(silent), "silent_links": links,
           "right": all(n in cable for n in links) and bool(links),
           "detect_after_drops": 0, "detect_after_ns": -1}
    on = 0
    for i, d in enumerate(drops):
        if d["reason"] == 4 and d["link_name"].decode() in cable:
            on += 1
            if on == 2:
                out["detect_after_drops"] = i + 1
                out["detect_after_ns"] = int(d["time_ns"])
                break
    return out


def no_nan(x):
    """JSON has no NaN: None instead (precision with nothing flagged, recall with no fault)."""
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, float) and x != x:
        return None
    return x


def extract_faults(out, lines, opts):
    res = []
    for r in opts["runs"]:
        d = os.path.join(out, r["dir"])
        pm = rows(h5().File(os.path.join(d, "pingmesh.h5"), "r")["summary"])[0]
        bl = {x["method"]: x for x in rows(h5().File(os.path.join(d, "blame.h5"), "r")["summary"])}
        tr = h5().File(os.path.join(d, "trace-all.h5"), "r")
        res.append({
            "gray": r["gray"], "load": r["load"],
            "pingmesh": {k: pm[k] for k in ("scored", "lost", "fault_lost", "congestion_lost",
                                             "flagged", "right", "precision", "recall",
                                             "detect_after", "detect_after_ns", "probe_share")},
            "blame": {m: {k: bl[m][k] for k in ("connections", "flagged", "true_flagged",
                                                 "precision", "recall", "culprit_accuracy",
                                                 "detect_after", "rank1_after")}
                      for m in bl},
            "everflow": everflow_summary(os.path.join(d, "trace-all.h5"), opts["link"]),
            "everflow_sfr": everflow_summary(os.path.join(d, "trace-sfr.h5"), opts["link"]),
            "packets": rows(tr["summary"])[0]["packets"],
            "arrivals": rows(tr["summary"])[0]["arrivals"]})
    res = [no_nan(r) for r in res]
    return {"k": opts["k"], "link": opts["link"], "interval": opts["interval"], "runs": res}


DIAG_CLASSES = ["<100KB", "100KB-1MB", "1-10MB", ">10MB"]


def diagnosis_summary(path, tail_only):
    """Per size class: flows, tail flows, their causes and how many had each kind of event."""
    f = h5().File(path, "r")
    fl = rows(f["flows"])
    out = {"classes": {}, "blackhole_episodes": int(f.attrs["blackhole_episodes"])}
    for c in DIAG_CLASSES:
        done = [r for r in fl if r["size_class"] == c and r["completed"]]
        sel = [r for r in done if r["tail"] or not tail_only]
        causes = {}
        for r in sel:
            causes[r["cause"]] = causes.get(r["cause"], 0) + 1
        out["classes"][c] = {
            "flows": len(done), "selected": len(sel), "causes": causes,
            "with_rto": sum(1 for r in sel if r["rtos"]),
            "with_fast_retransmit": sum(1 for r in sel if r["fast_retransmits"]),
            "with_late_fr": sum(1 for r in sel if r["late_fast_retransmits"]),
            "with_loss": sum(1 for r in sel if r["lost_data"] or r["lost_acks"]),
            "with_blackhole": sum(1 for r in sel if r["blackhole_losses"]),
            "rtos": sum(r["rtos"] for r in sel),
            "fast_retransmits": sum(r["fast_retransmits"] for r in sel),
            "late_fast_retransmits": sum(r["late_fast_retransmits"] for r in sel)}
    thr = {r["size_class"]: r["tail_slowdown"] for r in rows(f["causes"])}
    for c in DIAG_CLASSES:
        out["classes"][c]["tail_slowdown"] = thr.get(c, 0.0)
    return out


def extract_diagnose(out, lines, opts):
    return {"load": opts["load"],
            "p99": diagnosis_summary(os.path.join(out, "rt", "diagnosis.h5"), True),
            "p90": diagnosis_summary(os.path.join(out, "t90.h5"), True),
            "all": diagnosis_summary(os.path.join(out, "all.h5"), False)}


def extract_whatif(out, lines, opts):
    """Per point: the grid values, the predicted and true numbers, the errors; the agreement."""
    f = h5().File(os.path.join(out, "rt", "whatif", "whatif.h5"), "r")
    keys = f["grid"].attrs["keys"]
    keys = (keys.decode() if isinstance(keys, bytes) else keys).split(",")
    grid = rows(f["grid"])
    summ = f["summary"][:]
    errs = {r["point"]: r for r in rows(f["errors"])}
    points = []
    for g in grid:
        p = g["point"]
        pt = {"point": p, "baseline": bool(g["baseline"]),
              "values": {k: g[k] for k in keys}, "error": errs[p]}
        for kind, name in ((0, "pred"), (1, "true")):
            r = summ[(summ["point"] == p) & (summ["kind"] == kind)][0]
            pt[name] = {k: r[k].item() for k in WHATIF_KEYS}
        points.append(pt)
    rec = summ[summ["kind"] == 2][0]
    return {"load": opts["load"], "keys": keys, "points": points,
            "recorded": {k: rec[k].item() for k in WHATIF_KEYS},
            "agreement": attrs(f["errors"], ["tau_drops", "tau_delay_p99", "best_drops_pred",
                                             "best_drops_true", "best_delay_pred",
                                             "best_delay_true"]),
            "table": [l for l in lines[1] if l.strip()]}


def extract_clocks(out, lines, opts):
    """Clock reconciliation on a simulated recording: the estimate's error per host against the
    true offsets (qreplay clocks), and the replays with recorded vs reconciled clocks."""
    c = h5().File(os.path.join(out, "clocks.h5"), "r")
    _, var = variants_of(os.path.join(out, "run", "results.h5"))
    keep = ["hosts", "estimated", "pairs", "error_mean_abs_ns", "error_rms_ns",
            "error_max_abs_ns", "residual_rms_ns", "corrected", "raw_mean_abs_ns",
            "left_mean_abs_ns"]
    errs = sorted(abs(float(r["error_ns"])) for r in c["clocks"][:] if r["pairs"] > 0)
    est = attrs(c, keep)
    est["error_p50_abs_ns"] = errs[len(errs) // 2] if errs else 0.0
    return {"estimate": est, "variants": var, "table": [l for l in lines[-1] if l.strip()]}


def clock_case(kind, scenario, sets, ths):
    """Runtime, clock estimate, then tagged replays at each threshold with the recorded and with
    the reconciled clocks, and the metrics of all of them."""
    argv = ["runtime", scenario]
    for kv in sets:
        argv += ["--set", kv]
    cmds = [q(argv + ["-o", "{out}/run/recording", "--quiet"]),
            q(["clocks", "{out}/run", "-o", "{out}/clocks.h5", "--quiet"])]
    for th in ths:
        cmds.append(q(["replay", "{out}/run", "--th", th, "--mode", "tagged", "--quiet"]))
        cmds.append(q(["replay", "{out}/run", "--th", th, "--mode", "tagged", "--clock",
                       "reconcile", "--quiet"]))
    cmds.append(q(["metrics", "{out}/run", "--no-figures"]))
    return {"kind": kind, "scenario": scenario, "commands": cmds, "extract": [extract_clocks],
            "opts": {}}


def roundtrip_case(kind, scenario, ths):
    """Runtime, its captures exported (Ethernet, us timestamps), imported back with the runtime's
    truth carried over, tagged replays of the import and of the runtime's own recording."""
    cmds = [q(["runtime", scenario, "-o", "{out}/run/recording", "--quiet"]),
            q(["export", "{out}/run", "-o", "{out}/caps", "--quiet"]),
            ["sh", "-c", "{qreplay} import %s {out}/caps/h*.pcap --map {out}/caps/hosts.csv "
             "--truth {out}/run -o {out}/back --quiet" % scenario]]
    for th in ths:
        cmds.append(q(["replay", "{out}/back", "--th", th, "--mode", "tagged", "--quiet"]))
        cmds.append(q(["replay", "{out}/run", "--th", th, "--mode", "tagged", "--quiet"]))
    cmds.append(q(["metrics", "{out}/back", "--no-figures"]))
    cmds.append(q(["metrics", "{out}/run", "--no-figures"]))
    return {"kind": kind, "scenario": scenario, "commands": cmds,
            "extract": [extract_roundtrip], "opts": {}}


def extract_roundtrip(out, lines, opts):
    _, back = variants_of(os.path.join(out, "back", "results.h5"))
    _, run = variants_of(os.path.join(out, "run", "results.h5"))
    rec = h5().File(os.path.join(out, "back", "recording", "recording.h5"), "r")
    return {"imported": back, "recorded": run,
            "import": attrs(rec["import"], ["time_base_ns"]),
            "packets": int(sum(int(r["packets"]) for r in rec["hosts"][:]))}


def testbed_case(scenario, repeats):
    """The testbed in a box (root): REPEATS runs of real Linux TCP through the namespace switch,
    each imported, replayed and scored against the switch's captures; and the ns-3 runtime of the
    same scenario, replayed and scored the same way."""
    cmds = [q(["testbed", scenario, "-o", "{out}/rep%d" % i, "--no-figures"])
            for i in range(1, repeats + 1)]
    cmds.append(q(["run", scenario, "-o", "{out}/ns3", "--no-figures"]))
    return {"kind": "long", "scenario": scenario, "commands": cmds,
            "extract": [extract_testbed], "opts": {"repeats": repeats}}


def csv_rows(path):
    import csv
    with open(path) as fh:
        return list(csv.DictReader(fh))


def extract_testbed(out, lines, opts):
    reps = []
    for i in range(1, opts["repeats"] + 1):
        d = os.path.join(out, "rep%d" % i)
        _, var = variants_of(os.path.join(d, "results.h5"))
        ports = csv_rows(os.path.join(d, "testbed", "ports.csv"))
        flows = csv_rows(os.path.join(d, "testbed", "flows.csv"))
        reps.append({"variants": var,
                     "drops": sum(int(p["drops"]) for p in ports),
                     "qdisc_drops": sum(int(p["qdisc_drops"]) for p in ports),
                     # the bottleneck: the port whose queue grew largest
                     "busy_rate_bps": float(max(ports, key=lambda p: int(p["max_queue_bytes"]))
                                            ["busy_rate_bps"]),
                     "flows": [{"flow": int(f["flow"]), "bytes": int(f["bytes"]),
                                "completed": int(f["completed"]), "fct_ns": int(f["fct_ns"]),
                                "retransmissions": int(f["retransmissions"])} for f in flows]})
    _, ns3 = variants_of(os.path.join(out, "ns3", "results.h5"))
    rec = h5().File(os.path.join(out, "ns3", "recording", "recording.h5"), "r")
    truth = h5().File(os.path.join(out, "ns3", "recording", "truth", "truth.h5"), "r")
    nflows = [{"flow": int(r["id"]), "bytes": int(r["bytes"]), "completed": int(r["completed"]),
               "fct_ns": int(r["fct_ns"])} for r in rec["flows"][:]]
    return {"repeats": reps, "ns3": {"variants": ns3, "drops": int(truth["drops"].shape[0]),
                                     "flows": nflows}}


CASES = {
    "k4-default": {
        "kind": "quick", "scenario": "scenarios/fattree-k4-websearch.ini",
        "commands": [q(["run", "scenarios/fattree-k4-websearch.ini", "-o", "{out}/run",
                        "--no-figures"]),
                     q(["sample", "--th", "5us", "{out}/run/recording/pcap/h0008.pcap",
                        "{out}/s.h5"])],
        "extract": [extract_run, extract_sample], "opts": {},
    },
    "single-switch": {
        "kind": "quick", "scenario": "scenarios/single-switch.ini",
        "commands": [q(["run", "scenarios/single-switch.ini", "-o", "{out}/run", "--no-figures"])],
        "extract": [extract_run], "opts": {"busy": True},
    },
    "single-switch-seeds": {
        "kind": "quick", "scenario": "scenarios/single-switch.ini",
        "commands": [q(["run", "scenarios/single-switch.ini", "--set", "run.seed=%d" % s, "-o",
                        "{out}/seed_%d" % s, "--no-figures", "--quiet"]) for s in range(1, 8)],
        "extract": [extract_seeds], "opts": {"seeds": list(range(1, 8))},
    },
    "butterfly-quick": {
        "kind": "quick", "scenario": "scenarios/butterfly.ini",
        "commands": [q(["butterfly", "scenarios/butterfly.ini", "--sigma", "0,1ns,100ns",
                        "--replays", "3", "-o", "{out}/bf", "--no-figures"])],
        "extract": [extract_butterfly], "opts": {},
    },
    "isolate-k4": {
        "kind": "quick", "scenario": "scenarios/fattree-k4-websearch.ini",
        "commands": [q(["runtime", "scenarios/fattree-k4-websearch.ini", "-o", "{out}/rt",
                        "--quiet"]),
                     q(["isolate", "{out}/rt", "--sigma", "0,1ns,10ns,100ns,1us", "-o",
                        "{out}/iso.h5"])],
        "extract": [extract_isolate], "opts": {},
    },
    "sweep-ci": sweep_case("scenarios/fattree-k4-sweep-ci.ini", 2, "quick"),
    "butterfly-100": {
        "kind": "long", "scenario": "scenarios/butterfly.ini",
        "commands": [q(["butterfly", "scenarios/butterfly.ini", "--sigma", "0,1ns,10ns,100ns,1us",
                        "--replays", "100", "-o", "{out}/bf", "--no-figures"])],
        "extract": [extract_butterfly], "opts": {},
    },
    "k8-sweep": sweep_case("scenarios/fattree-k8-sweep.ini", 1, "long"),
    "k16-paper": sweep_case("scenarios/fattree-k16-paper.ini", 1, "long"),
    "k8-paper": sweep_case("scenarios/fattree-k8-paper.ini", 1, "long"),
    "k8-paper-scaled": sweep_case("scenarios/fattree-k8-paper-scaled.ini", 1, "long"),
    "k16-long-10": sweep_case("scenarios/fattree-k16-long-10.ini", 1, "long"),
    "k16-long-30": sweep_case("scenarios/fattree-k16-long-30.ini", 1, "long"),
    "k16-long-80": sweep_case("scenarios/fattree-k16-long-80.ini", 1, "long"),
    "k8-20ms-10": k8_long_run(10),
    "k8-20ms-80": k8_long_run(80),
    "whatif-k4": whatif_case("quick", "scenarios/fattree-k4-websearch.ini", 30),
    "whatif-k8-30": whatif_case("long", "scenarios/fattree-k8-sweep.ini", 30),
    "whatif-k8-70": whatif_case("long", "scenarios/fattree-k8-sweep.ini", 70),
    "diagnose-k4": diagnose_case("quick", "scenarios/fattree-k4-websearch.ini", 30),
    "diagnose-k8-30": diagnose_case("long", "scenarios/fattree-k8-sweep.ini", 30),
    "diagnose-k8-80": diagnose_case("long", "scenarios/fattree-k8-sweep.ini", 80),
    "faults-k4-quick": faults_case("quick", 4, ["1%"], [30], "100us"),
    "faults-k4": faults_case("long", 4, ["0.1%", "1%", "10%"], [10, 30, 50, 70], "100us"),
    "faults-k8": faults_case("long", 8, ["0.1%", "1%", "10%"], [10, 40, 70], "400us"),
    "roundtrip-k4": roundtrip_case("quick", "scenarios/fattree-k4-websearch.ini", ["0", "5us"]),
    "clock-k4": clock_case("quick", "scenarios/fattree-k4-websearch.ini", [], ["0", "5us"]),
    "clock-k8": clock_case("long", "scenarios/fattree-k8-sweep.ini", [], ["5us"]),
    "clock-k16": clock_case("long", "scenarios/fattree-k16-paper.ini", [], ["5us"]),
    "testbed-single-switch": testbed_case("scenarios/testbed-single-switch.ini", 5),
    "replay-engines": engines_case([("k4", "scenarios/fattree-k4-websearch.ini"),
                                    ("k8", "scenarios/fattree-k8-sweep.ini"),
                                    ("k16", "scenarios/fattree-k16-paper.ini")]),
    # bench as it was before issue 15's runtime work (code bd4853a, glibc malloc), kept to compare
    # with: an archive is never run again (it would measure today's code)
    "bench-before": {
        "kind": "archive", "scenario": "scenarios/fattree-k4-websearch.ini",
        "commands": [["{build}/bench_core"], ["{build}/bench_runtime"]],
        "extract": [extract_bench], "opts": {},
    },
    "bench": {
        "kind": "long", "scenario": "scenarios/fattree-k4-websearch.ini",
        "commands": [["{build}/bench_core"], ["{build}/bench_runtime"]],
        "extract": [extract_bench], "opts": {},
    },
}

# Lines of printed output that carry wall times: kept, never compared.
VOLATILE = re.compile(r"wall|events/s|\[[0-9.]+ s\]")


def display(argv):
    s = " ".join(argv).replace("qreplay={qreplay}", "qreplay=build/qreplay")
    s = s.replace("{qreplay}", "qreplay").replace("{out}", "DIR")
    s = s.replace("{build}/", "build/")
    return s


def scenario_info(qreplay, scenario):
    """The scenario file's SHA-256 (with the data files it names) and its seed."""
    h = hashlib.sha256()
    with open(os.path.join(TOP, scenario), "rb") as fh:
        h.update(fh.read())
    text = subprocess.run([qreplay, "scenario", scenario], cwd=TOP, capture_output=True,
                          text=True, check=True).stdout
    for key in ("flows", "size_cdf"):
        m = re.search(r"^%s = (.+)$" % key, text, re.M)
        if m and os.path.isfile(m.group(1)):
            with open(m.group(1), "rb") as fh:
                h.update(fh.read())
    seed = subprocess.run([qreplay, "scenario", scenario, "--get", "run.seed"], cwd=TOP,
                          capture_output=True, text=True, check=True).stdout.strip()
    return h.hexdigest(), int(seed)


def run_case(name, qreplay, build, keep=None, reuse=None):
    """Run a case's commands (or, with reuse, take a kept run of them) and extract its summary.
    keep: a folder to keep the case's outputs in (keep/NAME), to extract again with reuse."""
    case = CASES[name]
    if reuse:
        out = os.path.join(reuse, name)
        with open(os.path.join(out, "docs-run.json")) as fh:
            kept = json.load(fh)
        stdout, timings = kept["stdout"], kept["timings"]
    else:
        out = tempfile.mkdtemp(prefix="qr-docs-%s-" % name, dir=keep)
    try:
        if not reuse:
            env = dict(os.environ)
            env.setdefault("LC_ALL", "C.UTF-8")
            stdout, timings = [], []
            for argv in case["commands"]:
                real = [a.replace("{qreplay}", qreplay).replace("{out}", out)
                        .replace("{build}", build) for a in argv]
                sys.stderr.write("docs: %s: %s\n" % (name, display(argv)))
                lines, t = run_command(real, display(argv), out, env)
                stdout.append(lines)
                timings.append(t)
            if keep:
                version = subprocess.run([qreplay, "--version"], capture_output=True, text=True,
                                         check=True).stdout.strip().replace("qreplay ", "")
                write_json(os.path.join(out, "docs-run.json"), {"stdout": stdout,
                                                                "timings": timings,
                                                                "code_version": version})
        results = {}
        for ex in case["extract"]:
            results.update(ex(out, stdout, case["opts"]))
        table = None
        if case.get("csv"):
            with open(os.path.join(out, case["csv"])) as fh:
                table = fh.read()
        sha, seed = scenario_info(qreplay, case["scenario"])
        version = subprocess.run([qreplay, "--version"], capture_output=True, text=True,
                                 check=True).stdout.strip().replace("qreplay ", "")
        if reuse:
            version = kept.get("code_version", version)
        return {"case": name, "kind": case["kind"],
                "commands": [display(a) for a in case["commands"]],
                "scenario": case["scenario"], "scenario_sha256": sha, "seed": seed,
                "code_version": version, "date": datetime.date.today().isoformat(),
                "timings": timings, "stdout": stdout, "results": results, "_csv": table}
    finally:
        if keep and not reuse:
            dest = os.path.join(keep, name)
            shutil.rmtree(dest, ignore_errors=True)
            os.replace(out, dest)
        elif not reuse:
            shutil.rmtree(out, ignore_errors=True)


def comparable(summary):
    """What must be equal between a stored summary and a fresh run."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "volatile"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return {"commands": summary["commands"], "scenario_sha256": summary["scenario_sha256"],
            "seed": summary["seed"], "results": strip(summary["results"]),
            "stdout": [[l for l in cmd if not VOLATILE.search(l)] for cmd in summary["stdout"]]}


def flatten(x, prefix=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from flatten(v, prefix + "." + k if prefix else k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from flatten(v, "%s[%d]" % (prefix, i))
    else:
        yield prefix, x


def differences(a, b, limit=20):
    fa, fb = dict(flatten(a)), dict(flatten(b))
    out = []
    for k in sorted(set(fa) | set(fb)):
        if fa.get(k, "<missing>") != fb.get(k, "<missing>"):
            out.append("  %s: stored %r, fresh %r" % (k, fa.get(k, "<missing>"),
                                                      fb.get(k, "<missing>")))
    return out[:limit] + (["  ... %d more" % (len(out) - limit)] if len(out) > limit else [])


def store_path(name):
    return os.path.join(STORE, name + ".json")


def load(name):
    path = store_path(name)
    if not os.path.exists(path):
        raise DocsError("%s: no stored summary (run: ./waf results %s)" % (path, name))
    with open(path) as fh:
        return json.load(fh)


def write_json(path, data):
    tmp = "%s.partial-%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def select(names):
    out = []
    for n in names:
        if n in ("quick", "long"):
            out += [c for c in CASES if CASES[c]["kind"] == n]
        elif n == "all":
            out += list(CASES)
        elif n in CASES:
            out.append(n)
        else:
            raise DocsError("unknown case '%s' (cases: %s)" % (n, ", ".join(CASES)))
    return out


# ---------------------------------------------------------------------------------------------
# Rendering

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
    for name, case in CASES.items():
        key = case["kind"] + "_wall_s"
        out[key] = out.get(key, 0.0) + sum(t["wall_s"] for t in load(name)["timings"])
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


def block_table_lines(name, head):
    d = load(name)
    return "```\n%s\n```\n%s" % ("\n".join(d["results"]["table"]), provenance(name))


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


def sweep_pick(d, load, variant):
    for r in d["results"]["rows"]:
        if float(r["load_pct"]) == load and r["variant"] == variant:
            return r
    raise DocsError("%s: no row for load %s, %s" % (d["case"], load, variant))


def block_k8_table(name):
    d = load(name)
    loads = sorted(set(float(r["load_pct"]) for r in d["results"]["rows"]))
    out = ["| load | qdiff mean / p99, tagged th=2 | th=5 | th=10 | drop error plain th=5 | "
           "tagged th=2 | th=5 | th=10 | runtime drops | FA / FD / WL (tagged th=5) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for L in loads:
        t = {th: sweep_pick(d, L, "tagged_th_%d" % th) for th in (2, 5, 10)}
        p5 = sweep_pick(d, L, "plain_th_5")
        out.append("| %g%% | %s | %s | %s | %s | %s | %s | %s | %d | %d / %d / %d |" % (
            L, *["%.3f / %.2f" % (t[th]["qdiff_mean_mtu"], t[th]["qdiff_p99_mtu"])
                 for th in (2, 5, 10)],
            pct(p5["drop_error"]), *[pct(t[th]["drop_error"]) for th in (2, 5, 10)],
            t[5]["runtime_drops"], t[5]["false_accepts"], t[5]["false_drops"],
            t[5]["wrong_locations"]))
    return "\n".join(out) + "\n\n" + provenance(name)


def block_side_by_side(_):
    k16, k4 = load("k16-paper"), load("k4-default")

    def k4v(v):
        return [x for x in k4["results"]["variants"] if x["variant"] == v][0]

    a, b = sweep_pick(k16, 30.0, "tagged_th_5"), sweep_pick(k16, 30.0, "tagged_th_2")
    p = sweep_pick(k16, 30.0, "plain_th_5")
    c, e, pk = k4v("tagged_th_5"), k4v("tagged_th_2"), k4v("plain_th_5")
    rows_ = [
        ("qdiff mean, th = 5 us (tagged)", "0.78 MTU", "%.3f MTU" % a["qdiff_mean_mtu"],
         "%.3f MTU" % c["qdiff_mean_mtu"]),
        ("qdiff p99, th = 5 us (tagged)", "5.7 MTU", "%.3f MTU" % a["qdiff_p99_mtu"],
         "%.3f MTU" % c["qdiff_p99_mtu"]),
        ("th = 5 us minus th = 2 us, mean", "under 0.3 MTU",
         "%.3f MTU" % (a["qdiff_mean_mtu"] - b["qdiff_mean_mtu"]),
         "%.3f MTU" % (c["qdiff_mean_mtu"] - e["qdiff_mean_mtu"])),
        ("th = 5 us minus th = 2 us, p99", "under 1.8 MTU",
         "%.3f MTU" % (a["qdiff_p99_mtu"] - b["qdiff_p99_mtu"]),
         "%.3f MTU" % (c["qdiff_p99_mtu"] - e["qdiff_p99_mtu"])),
        ("drop error, th = 5 us, plain", "58.3%", pct(p["drop_error"]), pct(pk["drop_error"])),
        ("drop error, th = 5 us, tagged", "2.87%", pct(a["drop_error"]), pct(c["drop_error"])),
        ("false drops (tagged)", "none", "%d" % a["false_drops"], "%d" % c["false_drops"]),
        ("wrong locations", "under 0.37% of drops", "%d" % a["wrong_locations"],
         "%d" % c["wrong_locations"]),
        ("the rest of the tagged error", "false accepts",
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
    want = ["tagged_th_0", "tagged_th_500", "plain_th_0", "plain_th_500"]
    out = ["| run | " + " | ".join("%s qdiff mean / p99, drop error" % v for v in want) +
           " | switch drops (qdisc) | bottleneck port's rate while busy |",
           "|---|" + "---|" * (len(want) + 2)]

    def cells(var):
        by = {v["variant"]: v for v in var}
        return " | ".join("%.2f / %.2f MTU, %s" % (by[v]["qdiff_mean_mtu"], by[v]["qdiff_p99_mtu"],
                                                  pct(by[v]["drop_error"], 1))
                          if v in by else "" for v in want)
    for i, rep in enumerate(r["repeats"], 1):
        out.append("| testbed %d | %s | %d (%d) | %.2f Mbps |" % (
            i, cells(rep["variants"]), rep["drops"], rep["qdisc_drops"],
            rep["busy_rate_bps"] / 1e6))
    spread = []
    for v in want:
        m = [x for rep in r["repeats"] for x in rep["variants"] if x["variant"] == v]
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
    out.append("| paper's testbed (DESIGN.md) | 0.57 / 4.83 MTU | | | | | |")
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
                v = [x for x in s["variants"] if x["variant"] == "%s_th_%d" % (m, t)][0]
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


def block_bench(name):
    d = load(name)
    v = d["results"]["volatile"]
    loads = ", ".join("%s: load %.1f before, %.1f after" % ((t["command"],) + tuple(t["load"]))
                      for t in d["timings"] if "load" in t)
    return ("```\n$ build/bench_core\n%s\n$ build/bench_runtime\n%s\n```\n%s%s" %
            ("\n".join(v["core"]), "\n".join(v["runtime"]), provenance(name),
             "<br><sub>Machine load (1-minute average, 2 cores): %s.</sub>" % loads if loads else ""))


def bench_runtime_rows(name):
    """(k, setup) -> (events, wall_s, events_per_s) from a stored bench's bench_runtime printout."""
    out = {}
    for line in load(name)["results"]["volatile"]["runtime"]:
        m = re.match(r"^(\d+)\s+(.+?)\s{2,}[0-9.]+\s+[0-9.]+\s+(\d+)\s+([0-9.]+)\s+(\d+)\s", line)
        if m:
            out[(int(m.group(1)), m.group(2).strip())] = (int(m.group(3)), float(m.group(4)),
                                                          int(m.group(5)))
    return out


def block_bench_compare(before, after):
    """bench_runtime before and after issue 15's runtime work, row by row."""
    b, a = bench_runtime_rows(before), bench_runtime_rows(after)
    out = ["| k | setup | events | wall before | wall after | events/s before | events/s after | "
           "after / before |", "|---|---|---|---|---|---|---|---|"]
    for key in sorted(a):
        if key not in b:
            continue
        (eb, wb, rb), (ea, wa, ra) = b[key], a[key]
        out.append("| %d | %s | %s | %.2f s | %.2f s | %s | %s | %.2fx |" % (
            key[0], key[1], "{:,}".format(ea) if ea == eb else "%s / %s" % (
                "{:,}".format(eb), "{:,}".format(ea)), wb, wa, "{:,}".format(rb),
            "{:,}".format(ra), ra / rb))
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
            ("<br><sub>Machine load (1-minute average, 2 cores) before / after each bench_replay: "
             "%s.</sub>" % loads if loads else ""))

K16_LONG = {10.0: "k16-long-10", 30.0: "k16-long-30", 80.0: "k16-long-80"}


def load_case_for(net, at):
    """The stored case of the full-length experiment on net (k8, k8s: k=8 with the incast rate
    scaled, k16) that holds load at."""
    if net == "k16":
        return load(K16_LONG[at])
    return load({"k8": "k8-paper", "k8s": "k8-paper-scaled"}[net])


def block_paper_full(_):
    """The reference numbers next to the full-length k=8 sweep and the long k=16 runs."""
    def row(net, at, variant):
        return sweep_pick(load_case_for(net, at), at, variant)

    def cell(net, f):
        try:
            return f(net)
        except (KeyError, DocsError):
            return "-"

    def digits(key):  # qdiff means to 3 decimals, p99s (steps of about 1 MTU) to 2
        return 3 if key == "qdiff_mean_mtu" else 2

    def q(key, at):
        return lambda net: "%.*f" % (digits(key), row(net, at, "tagged_th_5")[key])

    def inc(key, at):
        return lambda net: "%+.*f" % (digits(key), row(net, at, "tagged_th_5")[key] -
                                      row(net, at, "tagged_th_2")[key])

    def err(mode, at):
        return lambda net: pct(row(net, at, "%s_th_5" % mode)["drop_error"])

    def wl(at):
        def f(net):
            r = row(net, at, "tagged_th_5")
            return "%d (%.2f%%)" % (r["wrong_locations"], 100.0 * r["wrong_locations"] /
                                    max(1, r["runtime_drops"]))
        return f

    def fd(at):
        def f(net):
            r = row(net, at, "tagged_th_5")
            return "%d FD, %d FA" % (r["false_drops"], r["false_accepts"])
        return f

    rows_ = [("qdiff mean, 30%", "0.78", q("qdiff_mean_mtu", 30.0)),
             ("qdiff p99, 30%", "5.7", q("qdiff_p99_mtu", 30.0)),
             ("qdiff mean, 80%", "1.7", q("qdiff_mean_mtu", 80.0)),
             ("qdiff p99, 80%", "9.7", q("qdiff_p99_mtu", 80.0)),
             ("qdiff mean, 10%", "-", q("qdiff_mean_mtu", 10.0)),
             ("qdiff p99, 10%", "-", q("qdiff_p99_mtu", 10.0)),
             ("th 2 -> 5 us, mean, 30%", "under +0.3", inc("qdiff_mean_mtu", 30.0)),
             ("th 2 -> 5 us, mean, 80%", "under +0.3", inc("qdiff_mean_mtu", 80.0)),
             ("th 2 -> 5 us, p99, 30%", "under +1.8", inc("qdiff_p99_mtu", 30.0)),
             ("th 2 -> 5 us, p99, 80%", "under +1.8", inc("qdiff_p99_mtu", 80.0)),
             ("drop error plain, 10%", "-", err("plain", 10.0)),
             ("drop error plain, 30%", "58.3%", err("plain", 30.0)),
             ("drop error plain, 80%", "-", err("plain", 80.0)),
             ("drop error tagged, 10%", "2.52%", err("tagged", 10.0)),
             ("drop error tagged, 30%", "2.87%", err("tagged", 30.0)),
             ("drop error tagged, 80%", "3.81%", err("tagged", 80.0)),
             ("wrong locations (of runtime drops), 10%", "under 0.37%", wl(10.0)),
             ("wrong locations, 30%", "under 0.37%", wl(30.0)),
             ("wrong locations, 80%", "under 0.37%", wl(80.0)),
             ("false drops / false accepts, 30%", "no false drops; the rest false accepts",
              fd(30.0)),
             ("false drops / false accepts, 80%", "no false drops; the rest false accepts",
              fd(80.0))]
    out = ["| tagged th = 5 us unless named (qdiff in MTU) | reference (k=16) | ours, k=8, 20 ms "
           "per load | k=8, incast scaled to 300/s | ours, k=16, long runs |",
           "|---|---|---|---|---|"]
    for label, ref, f in rows_:
        out.append("| %s | %s | %s | %s | %s |" % (label, ref, cell("k8", f), cell("k8s", f),
                                                   cell("k16", f)))
    names = [n for n in ["k8-paper", "k8-paper-scaled"] + list(K16_LONG.values())
             if os.path.exists(store_path(n))]
    return "\n".join(out) + "\n\n" + provenance(*names)


def block_runtime_cost(_):
    """Wall time and events per simulated ms of the runtime, from the full-length runs."""
    out = ["| network, load | flows (arrivals during) | packets | runtime events | simulated | "
           "events per simulated ms | runtime wall | wall per simulated ms | incast share of "
           "bytes / of drops |", "|---|---|---|---|---|---|---|---|---|"]
    names = []
    for net, cases in (("k=8", ["k8-paper"]), ("k=8, incast 300/s", ["k8-paper-scaled"]),
                       ("k=16", list(K16_LONG.values()))):
        for name in cases:
            if not os.path.exists(store_path(name)):
                continue
            names.append(name)
            d = load(name)
            dur_ms = None
            for r in sorted(d["results"]["runs"], key=lambda r: float(r["run"].split("_")[1])):
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


def block_diagnose_tail(cases):
    """Per case and size class: the tail flows (p99 and p90 of slowdown) by root cause, and how
    many of them had a timeout, a (late) fast retransmission, or losses in a blackhole."""
    out = ["| case | size class | flows | tail p99: flows (slowdown >=) | causes | tail p90: "
           "flows | causes | p90 tail with an RTO / fast retx (late) / blackhole loss |",
           "|---|---|---|---|---|---|---|---|"]
    for n, label in cases:
        r = load(n)["results"]
        for c in DIAG_CLASSES:
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
        tot = {k: sum(cl[c][k] for c in DIAG_CLASSES) for k in
               ("flows", "with_loss", "rtos", "with_rto", "fast_retransmits",
                "with_fast_retransmit", "late_fast_retransmits", "with_blackhole")}
        causes = {}
        for c in DIAG_CLASSES:
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


BLOCKS = {
    "whatif-errors": lambda: block_whatif_errors(WHATIF_CASES),
    "diagnose-tail": lambda: block_diagnose_tail(DIAGNOSE_CASES),
    "diagnose-all": lambda: block_diagnose_all(DIAGNOSE_CASES),
    "faults-k4": lambda: block_faults(["faults-k4"]),
    "faults-k8": lambda: block_faults(["faults-k8"]),
    "whatif-trust": lambda: block_whatif_trust(WHATIF_CASES),
    "k4-table": lambda: block_run_table("k4-default"),
    "runtime-printouts": lambda: block_runtime_printout(["k4-default", "single-switch"]),
    "k4-sample": lambda: block_sample_printout("k4-default"),
    "butterfly-100-table": lambda: block_table_lines("butterfly-100", None),
    "butterfly-quick-table": lambda: block_table_lines("butterfly-quick", None),
    "isolate-k4-table": lambda: block_table_lines("isolate-k4", None),
    "k16-variants": lambda: block_sweep_variants("k16-paper", 30.0),
    "k8-table": lambda: block_k8_table("k8-sweep"),
    "k8-paper-table": lambda: block_k8_table("k8-paper"),
    "k8-paper-scaled-table": lambda: block_k8_table("k8-paper-scaled"),
    "paper-full": lambda: block_paper_full(None),
    "runtime-cost": lambda: block_runtime_cost(None),
    "side-by-side": lambda: block_side_by_side(None),
    "k8-scale": lambda: block_k8_scale("k8-sweep"),
    "scale": lambda: block_scale(None),
    "single-switch-variants": lambda: block_run_variants("single-switch"),
    "single-switch-evidence": lambda: block_single_switch_evidence("single-switch"),
    "single-switch-seeds": lambda: block_seeds("single-switch-seeds"),
    "sweep-ci-variants": lambda: block_sweep_variants("sweep-ci", 30.0),
    "bench": lambda: block_bench("bench"),
    "bench-compare": lambda: block_bench_compare("bench-before", "bench"),
    "replay-engines": lambda: block_engines("replay-engines"),
    "clocks": lambda: block_clocks(["clock-k4", "clock-k8", "clock-k16"]),
    "roundtrip": lambda: block_roundtrip("roundtrip-k4"),
    "testbed": lambda: block_testbed("testbed-single-switch"),
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
    sub = ap.add_subparsers(dest="cmd", required=True)
    ad = sub.add_parser("adopt", help="store a sweep case from a finished workflow folder")
    ad.add_argument("case")
    ad.add_argument("sweep_dir")
    ad.add_argument("--qreplay", default=os.path.join(TOP, "build", "qreplay"))
    for c in ("store", "verify"):
        s = sub.add_parser(c)
        s.add_argument("cases", nargs="+")
        s.add_argument("--qreplay", default=os.path.join(TOP, "build", "qreplay"))
        s.add_argument("--keep", metavar="DIR", help="keep every case's outputs in DIR/CASE")
        s.add_argument("--reuse", metavar="DIR", help="do not run: extract from DIR/CASE, kept "
                       "by an earlier --keep")
    r = sub.add_parser("render")
    r.add_argument("--check", action="store_true")
    sub.add_parser("list")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "list":
            for n, c in CASES.items():
                print("%-20s %-5s %s" % (n, c["kind"], "; ".join(display(x) for x in c["commands"])))
            return 0
        if a.cmd == "render":
            return render(a.check)
        qreplay = os.path.abspath(a.qreplay)
        if not os.access(qreplay, os.X_OK):
            raise DocsError("%s: not built (run ./waf build)" % qreplay)
        build = os.path.dirname(qreplay)
        if a.cmd == "adopt":
            if a.case not in CASES:
                raise DocsError("unknown case '%s' (cases: %s)" % (a.case, ", ".join(CASES)))
            keep = tempfile.mkdtemp(prefix="qr-docs-adopt-")
            try:
                adopt_sweep(a.case, a.sweep_dir, keep)
                fresh = run_case(a.case, qreplay, build, None, keep)
            finally:
                shutil.rmtree(keep, ignore_errors=True)
            table = fresh.pop("_csv")
            os.makedirs(STORE, exist_ok=True)
            write_json(store_path(a.case), fresh)
            with open(os.path.join(STORE, a.case + ".csv"), "w") as fh:
                fh.write(table)
            print("docs: stored %s and %s.csv from %s (code %s)" % (
                store_path(a.case), a.case, a.sweep_dir, fresh["code_version"]))
            return 0
        failed = 0
        for name in select(a.cases):
            if CASES[name]["kind"] == "archive":
                if name in a.cases:
                    raise DocsError("%s: an archive of older code (%s), kept to compare with; "
                                    "not run again" % (name, load(name)["code_version"]))
                continue
            fresh = run_case(name, qreplay, build, a.keep, a.reuse)
            if a.cmd == "store":
                os.makedirs(STORE, exist_ok=True)
                write_json(store_path(name), fresh)
                table = fresh.pop("_csv")
                if table is not None:
                    with open(os.path.join(STORE, name + ".csv"), "w") as fh:
                        fh.write(table)
                print("docs: stored %s (code %s)" % (store_path(name), fresh["code_version"]))
                continue
            fresh.pop("_csv")
            diff = differences(comparable(load(name)), comparable(fresh))
            if diff:
                failed += 1
                print("docs: %s: a fresh run differs from data/results/%s.json (stored by code "
                      "%s):\n%s" % (name, name, load(name)["code_version"], "\n".join(diff)))
            else:
                print("docs: %s: a fresh run equals the stored summary" % name)
        if failed:
            print("docs: if the change is intended: ./waf results %s && ./waf docs, and say in "
                  "the commit why the numbers moved" % " ".join(a.cases))
        return 1 if failed else 0
    except DocsError as e:
        print("docs: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
