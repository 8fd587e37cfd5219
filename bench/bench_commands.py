#!/usr/bin/python3
"""Benchmark: whole qreplay commands as a user runs them, side by side in one run (numbers, never
pass/fail).

usage: bench_commands.py RUN_DIR [--qreplay PATH] [--th 5us] [--mode tagged] [--repeat 3]
                         [--json FILE]

RUN_DIR holds a study run (qreplay run: a recording and its replays). Measures, each command as
its own process (wall time and peak memory from wait4), best of --repeat runs:
  replay   `qreplay replay RUN_DIR --engine native` (streaming the captures), `--engine ns3` and
           `--engine native --read whole` at the same threshold and mode: everything a user waits
           for (opening and sampling the recording, the replay, writing the arrival log and
           replay.h5); the ratio ns3 / native; whether the three arrival logs are byte for byte
           identical; the log's bytes per arrival.
  metrics  `qreplay metrics RUN_DIR --no-figures`: arrivals compared per second, counting for each
           replay variant its own arrivals and the runtime's it is compared with.
The replays this writes go to RUN_DIR/replay/bench-ENGINE-PID and are removed
at the end (before metrics runs, so its numbers are the run's own variants). Prints the machine's
1-minute load average before and after; --json also writes every number to FILE.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import time


def run(cmd):
    """Wall seconds and peak RSS (MB) of one command; exits on failure with its output."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(out.decode(errors="replace"))
        sys.exit("bench_commands: %s exited %d" % (" ".join(cmd), code))
    return wall, ru.ru_maxrss / 1024.0


def best(cmd, repeat):
    runs = [run(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def log_records(path):
    """The record count in an arrival log's trailer (the fourth format's last 80 bytes: magic,
    count, recording id, the run that wrote it; the third format's 48: without the run)."""
    with open(path, "rb") as f:
        head = f.read(8)
        f.seek(-72 if head == b"QRARRV4\n" else -40, os.SEEK_END)
        return struct.unpack("<Q", f.read(8))[0]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--qreplay", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "..", "build", "qreplay"))
    ap.add_argument("--th", default="5us")
    ap.add_argument("--mode", default="tagged")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat: at least 1")
    q, d = a.qreplay, a.run_dir
    rt_log = os.path.join(d, "recording", "truth", "arrivals.qra")
    if not os.path.exists(rt_log):
        sys.exit("bench_commands: %s: no runtime arrival log (a qreplay run folder?)" % rt_log)
    print("qreplay whole commands, best of %d, on %s" % (a.repeat, d))
    load_before = os.getloadavg()[0]
    print("machine load before: %.2f (1-minute average, %d cores)" % (load_before, os.cpu_count()))
    # metrics first, on the run's own variants
    variants = sorted(v for v in os.listdir(os.path.join(d, "replay"))
                      if os.path.exists(os.path.join(d, "replay", v, "arrivals.qra")))
    rt_n = log_records(rt_log)
    compared = sum(rt_n + log_records(os.path.join(d, "replay", v, "arrivals.qra"))
                   for v in variants)
    mw, mrss = best([q, "metrics", d, "--no-figures", "-q"], a.repeat)
    print("%-28s %9s %9s %14s" % ("command", "wall_s", "peak_MB", "rate"))
    print("%-28s %9.3f %9.1f %12.3gM/s  (%d variants: %s arrivals compared)" % (
        "metrics --no-figures", mw, mrss, compared / mw / 1e6, len(variants),
        "{:,}".format(compared)))
    names = {}
    res = {}
    try:
        for eng in ("native", "ns3", "native-whole"):
            names[eng] = "bench-%s-%d" % (eng, os.getpid())
            extra = ["--read", "whole"] if eng == "native-whole" else []
            res[eng] = best([q, "replay", d, "--th", a.th, "--mode", a.mode, "--engine",
                             eng.split("-")[0], "--name", names[eng], "-q"] + extra, a.repeat)
        logs = {e: os.path.join(d, "replay", n, "arrivals.qra") for e, n in names.items()}
        n = log_records(logs["native"])
        size = os.path.getsize(logs["native"])
        # byte for byte but the trailer's last 32 bytes, the replay's own id (docs/FORMATS.md)
        same = open(logs["native"], "rb").read()[:-32] == open(logs["ns3"], "rb").read()[:-32] \
            == open(logs["native-whole"], "rb").read()[:-32]
        for eng in ("native", "ns3", "native-whole"):
            w, rss = res[eng]
            label = "replay --read whole" if eng == "native-whole" else "replay --engine " + eng
            print("%-28s %9.3f %9.1f %12.3gM/s  (arrivals written per second)" % (
                label, w, rss, n / w / 1e6))
        print("replay: ns3 / native %.1fx as whole processes; arrival logs %s; %s arrivals, "
              "%.2f bytes per arrival" % (res["ns3"][0] / res["native"][0],
                                          "identical" if same else "DIFFERENT", "{:,}".format(n),
                                          size / n if n else 0.0))
    finally:
        for name in names.values():
            shutil.rmtree(os.path.join(d, "replay", name), ignore_errors=True)
    load_after = os.getloadavg()[0]
    print("machine load after: %.2f" % load_after)
    if a.json:
        out = {"th": a.th, "mode": a.mode, "repeat": a.repeat, "runtime_arrivals": rt_n,
               "variants": variants, "load": [load_before, load_after],
               "metrics": {"wall_s": mw, "peak_rss_mb": mrss, "arrivals_compared": compared,
                           "arrivals_per_s": compared / mw},
               "replay": {e: {"wall_s": res[e][0], "peak_rss_mb": res[e][1]} for e in res},
               "replay_arrivals": n, "log_bytes": size, "logs_identical": same,
               "ns3_over_native": res["ns3"][0] / res["native"][0]}
        with open(a.json + ".partial", "w") as f:
            json.dump(out, f, indent=1)
        os.replace(a.json + ".partial", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
