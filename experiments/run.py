#!/usr/bin/python3
"""Run the experiments behind the published numbers and store their summaries.

An experiment (a "case") is data: experiments/cases.json names its kind (quick: seconds to a
minute, rerun by the test suite; long: k=8/k=16 sweeps, the 100-replay butterfly, benchmarks;
archive: kept to compare with, never run again), its scenario, its commands ({qreplay}, {build}
and {out} stand for the program, the build folder and a fresh output folder) and the summary
functions (analysis/summaries.py) that read what its commands wrote. This script runs them:

  run.py store CASE... | quick | long    run the cases' commands, write data/results/CASE.json
  run.py verify CASE... | quick          run them again, compare with the stored summaries
         [--except CASE]                 (store and verify) leave a case out of those named
  run.py adopt CASE SWEEP_DIR            a sweep case from a finished workflow folder instead of
                                         running it (a long sweep spans several sittings)
  run.py list                            the cases, their kind and commands

A summary keeps the commands, the scenario's SHA-256 (with the data files it names), its seed,
the code version, the wall time and peak memory of every command and what each printed (shown in
the docs as printouts, never parsed), and the case's numbers. A sweep case also keeps the
workflow's summary table as data/results/CASE.csv. The docs are written from the summaries by
analysis/render.py (./waf docs); the reference numbers they are compared with are
experiments/reference.json.
"""
import argparse
import datetime
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "analysis"))
from results_store import DocsError, STORE, TOP, experiments_file, load, store_path, write_json  # noqa: E402
from summaries import SUMMARIES, attrs, h5, sweep_bench  # noqa: E402

# Lines of printed output that carry wall times: kept, never compared.
VOLATILE = re.compile(r"wall|events/s|\[[0-9.]+ s\]")
KINDS = ("quick", "long", "archive")


def cases():
    """experiments/cases.json, checked: every case has a known kind, a scenario, commands and
    summary functions that exist."""
    data = experiments_file("cases.json")
    for name, c in data.items():
        where = "experiments/cases.json: %s" % name
        if c.get("kind") not in KINDS:
            raise DocsError("%s: kind must be one of %s" % (where, ", ".join(KINDS)))
        if not isinstance(c.get("scenario"), str) or not c.get("commands"):
            raise DocsError("%s: needs a scenario and commands" % where)
        for s in c.get("summary", []):
            if s not in SUMMARIES:
                raise DocsError("%s: no summary function '%s' (analysis/summaries.py has %s)" % (
                    where, s, ", ".join(sorted(SUMMARIES))))
        c.setdefault("opts", {})
    return data


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


def display(argv):
    s = " ".join(argv).replace("qreplay={qreplay}", "qreplay=build/qreplay")
    s = s.replace("{qreplay}", "qreplay").replace("{out}", "DIR")
    s = s.replace("{build}/", "build/")
    return s


def scenario_info(qreplay, scenario):
    """The scenario file's SHA-256 (with the data files it names) and its seed. A file that is no
    scenario (a multi-tier service, scenarios/tiers/*.tiers) is hashed alone, with no seed: its
    commands give theirs."""
    h = hashlib.sha256()
    with open(os.path.join(TOP, scenario), "rb") as fh:
        h.update(fh.read())
    if not scenario.endswith(".ini"):
        return h.hexdigest(), None
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
    case = cases()[name]
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
        for s in case["summary"]:
            results.update(SUMMARIES[s](out, case["opts"]))
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


def select(names):
    all_cases = cases()
    out = []
    for n in names:
        if n in ("quick", "long"):
            out += [c for c in all_cases if all_cases[c]["kind"] == n]
        elif n == "all":
            out += list(all_cases)
        elif n in all_cases:
            out.append(n)
        else:
            raise DocsError("unknown case '%s' (cases: %s)" % (n, ", ".join(all_cases)))
    return out


def adopt_sweep(name, sweep_dir, keep):
    """Make the kept folder (keep/NAME, as --keep would) of a sweep case from a workflow folder
    that `./waf sweep` finished, possibly over several sittings: the runs' results, snakemake's
    benchmark files for the timings (the sum of the runs' wall times, the largest peak memory), and
    the code version that every run recorded (they must agree: a sweep whose runs were made by
    different code is refused). The folder must be this case's scenario: checked against the
    scenario text each run recorded."""
    case = cases()[name]
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
            a = attrs(f, ["code_version", "scenario_name"])
            versions.add(str(a["code_version"]))
            if str(a.get("scenario_name", "")) != scen_name:
                raise DocsError("%s: made from scenario %s, not %s" % (
                    d, a.get("scenario_name", "?"), case["scenario"]))
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
        s.add_argument("--except", dest="skip", metavar="CASE", action="append", default=[],
                       help="leave this case out of the ones named (repeatable)")
    sub.add_parser("list")
    a = ap.parse_args(argv)
    try:
        all_cases = cases()
        if a.cmd == "list":
            for n, c in all_cases.items():
                print("%-20s %-5s %s" % (n, c["kind"], "; ".join(display(x) for x in c["commands"])))
            return 0
        qreplay = os.path.abspath(a.qreplay)
        if not os.access(qreplay, os.X_OK):
            raise DocsError("%s: not built (run ./waf build)" % qreplay)
        build = os.path.dirname(qreplay)
        if a.cmd == "adopt":
            if a.case not in all_cases:
                raise DocsError("unknown case '%s' (cases: %s)" % (a.case, ", ".join(all_cases)))
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
        for n in a.skip:
            if n not in all_cases:
                raise DocsError("--except: unknown case '%s' (cases: %s)" % (n, ", ".join(all_cases)))
        for name in [n for n in select(a.cases) if n not in a.skip]:
            if all_cases[name]["kind"] == "archive":
                if name in a.cases:
                    raise DocsError("%s: an archive of older code (%s), kept to compare with; "
                                    "not run again" % (name, load(name)["code_version"]))
                continue
            fresh = run_case(name, qreplay, build, a.keep, a.reuse)
            if a.cmd == "store":
                os.makedirs(STORE, exist_ok=True)
                table = fresh.pop("_csv")
                write_json(store_path(name), fresh)
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
