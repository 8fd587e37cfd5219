#!/usr/bin/python3
"""The chaos harness: every command that writes, stopped at random moments, must leave its output
exactly as it was (old) or exactly as a complete run makes it (new), and the next command must work.

For each case an "old" state is built once (a run folder, a recording, an earlier output). Then,
per trial, the old state is copied fresh and the command is started on it and stopped:
  - SIGINT or SIGTERM at a random moment (up to 1.3 times an uninterrupted run's duration): exit
    0, 130 or 143 (or death by the signal, in the program's first milliseconds or after its
    output is complete); nothing partial anywhere;
  - SIGKILL at a random moment: nothing can clean up, so a stage may be left beside the output
    (named NAME.partial-PID), never inside it;
  - a full disk (root only): the trial runs on a tmpfs as small as the old state plus a random
    number of bytes of what the command writes; exit 0 or 1 with "No space left on device".
After each, the output folder must equal the old state (every file byte for byte) or the new one
(the same files as an uninterrupted run; each file whole: a result file's checksum block verifies;
every file byte for byte except HDF5 result files, which hold the time they were written, and
whose recording ids must be the new run's, and arrival logs, whose trailer names the replay that
wrote each, and figures, whose PDFs hold the time they were drawn: whole is enough). Then the
same command runs again, uninterrupted: it
must succeed, give the new state and leave no leftover anywhere (it removes a killed run's stage).

Then the mixes: a run folder with one file of another run of the same scenario in it (copied,
hard-linked or linked), or one file swapped between two of its replays; every command that reads
that file must refuse it (exit 1, saying it is another's).

Prints, per case, the trials by kind and how each ended (old or new), and with --json writes the
same as a table. Exit status 1 on any violation (each one printed), 0 otherwise.

  tests/tools/chaos.py --qreplay build/qreplay [--trials N] [--seed S] [--only CASE] [--json F]
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["scenarios/single-switch.ini", "--set", "traffic.duration=2ms"]
# The old state of most cases: a small run folder.
RUN = ["run"] + TINY + ["--no-figures", "-o", "{R}/run", "--quiet"]
LEFTOVER = re.compile(r".+\.(partial|old)-[0-9]+(\..*)?$")
USERBLOCK = 512

# Each case: a name, the old state (commands run once, in order, in the fixture folder R), the
# command under test, and the output it writes (a folder or a file, relative to R). "{R}" is the
# root of a trial. Commands read only what is under R or in the source tree.
CASES = [
    {"name": "runtime",
     "old": [RUN],
     "cmd": ["runtime"] + TINY + ["--set", "run.seed=2", "-o", "{R}/run/recording", "--quiet"],
     "out": "run"},
    {"name": "run",
     "old": [RUN],
     "cmd": ["run"] + TINY + ["--set", "run.seed=3", "--no-figures", "-o", "{R}/run", "--quiet"],
     "out": "run"},
    {"name": "run-new-folder",
     "old": [],
     "cmd": RUN,
     "out": "run"},
    {"name": "import",
     "old": [RUN],
     "files": {"hosts.csv": "address,host,capture\n10.77.0.1,0,pair-a.pcap\n"
                            "10.77.0.2,2,pair-b.pcap\n"},
     "cmd": ["import", "scenarios/single-switch.ini", "tests/data/captures/pair-a.pcap",
             "tests/data/captures/pair-b.pcap", "--map", "{R}/hosts.csv", "-o", "{R}/run",
             "--quiet"],
     "out": "run"},
    {"name": "replay",
     "old": [RUN],
     "cmd": ["replay", "{R}/run", "--th", "0", "--name", "tagged_th_5", "--quiet"],
     "out": "run"},
    {"name": "metrics",
     "old": [RUN,
             ["replay", "{R}/run", "--th", "0", "--name", "extra", "--quiet"]],
     "cmd": ["metrics", "{R}/run", "--no-figures", "--quiet"],
     "out": "run"},
    {"name": "metrics-figures",
     "old": [RUN,
             ["metrics", "{R}/run", "--quiet"],
             ["replay", "{R}/run", "--th", "0", "--name", "extra", "--quiet"]],
     "cmd": ["metrics", "{R}/run", "--quiet"],
     "out": "run"},
    {"name": "diagnose",
     "old": [RUN],
     "cmd": ["diagnose", "{R}/run", "--no-figures", "--quiet"],
     "out": "run"},
    {"name": "blame",
     "old": [RUN],
     "cmd": ["blame", "{R}/run", "--no-figures", "--quiet"],
     "out": "run"},
    {"name": "trace",
     "old": [RUN],
     "cmd": ["trace", "{R}/run", "--no-figures", "--quiet"],
     "out": "run"},
    {"name": "light",
     "old": [RUN],
     "cmd": ["light", "{R}/run", "--quiet"],
     "out": "run"},
    {"name": "pingmesh",
     "old": [["pingmesh"] + TINY + ["--no-figures", "-o", "{R}/pm", "--quiet"]],
     "cmd": ["pingmesh"] + TINY + ["--set", "run.seed=4", "--no-figures", "-o", "{R}/pm",
                                   "--quiet"],
     "out": "pm"},
    {"name": "butterfly",
     "old": [["butterfly", "scenarios/butterfly.ini", "--sigma", "0,1us", "--replays", "2",
              "--no-figures", "-o", "{R}/bf", "--quiet"]],
     "cmd": ["butterfly", "scenarios/butterfly.ini", "--sigma", "0,10ns", "--replays", "3",
             "--no-figures", "-o", "{R}/bf", "--quiet"],
     "out": "bf"},
    {"name": "export",
     "old": [RUN,
             ["export", "{R}/run", "-o", "{R}/exp", "--quiet"]],
     "cmd": ["export", "{R}/run", "-o", "{R}/exp", "--precision", "us", "--quiet"],
     "out": "exp"},
    {"name": "workload",
     "old": [["workload"] + TINY + ["-o", "{R}/w", "--quiet"]],
     "cmd": ["workload"] + TINY + ["--set", "run.seed=3", "-o", "{R}/w", "--quiet"],
     "out": "w"},
    {"name": "synth",
     "old": [["synth", "--quiet", "--packets", "20000", "{R}/s.pcap"]],
     "cmd": ["synth", "--quiet", "--packets", "30000", "--seed", "2", "{R}/s.pcap"],
     "out": "s.pcap"},
    {"name": "clocks",
     "old": [RUN,
             ["clocks", "{R}/run", "-o", "{R}/clocks.h5", "--quiet"]],
     "cmd": ["clocks", "{R}/run", "-o", "{R}/clocks.h5", "--reference", "1", "--quiet"],
     "out": "clocks.h5"},
    {"name": "paths",
     "old": [["paths", "--tiers", "scenarios/tiers/three-tier.tiers", "-o", "{R}/p", "--quiet"]],
     "cmd": ["paths", "--tiers", "scenarios/tiers/three-tier.tiers", "--rate", "3000",
             "--seed", "2", "-o", "{R}/p", "--quiet"],
     "out": "p"},
    {"name": "tiers",
     "old": [["tiers", "scenarios/tiers/three-tier.tiers", "-o", "{R}/t", "--quiet"]],
     "cmd": ["tiers", "scenarios/tiers/three-tier.tiers", "--rate", "3000", "--seed", "2",
             "-o", "{R}/t", "--quiet"],
     "out": "t"},
    {"name": "sample",
     "old": [["synth", "--quiet", "--packets", "20000", "{R}/s.pcap"],
             ["sample", "{R}/s.pcap", "{R}/s.h5", "--quiet"]],
     "cmd": ["sample", "{R}/s.pcap", "{R}/s.h5", "--th", "2us", "--quiet"],
     "out": "s.h5"},
]


def fill(args, root):
    return [a.replace("{R}", root) for a in args]


def run_plain(qreplay, args, root):
    p = subprocess.run([qreplay] + fill(args, root), cwd=SRC, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr


def h5_id(path):
    """(whole, recording id) of a qreplay result file: the checksum block verified."""
    with open(path, "rb") as f:
        data = f.read()
    head = data[:USERBLOCK].split(b"\n")[0].decode("ascii", "replace")
    m = re.match(r"QREPLAY-H5 1 sha256=([0-9a-f]{64}) size=([0-9]+)$", head)
    if not m:
        return False, None
    whole = (int(m.group(2)) == len(data)
             and hashlib.sha256(data[USERBLOCK:]).hexdigest() == m.group(1))
    rid = None
    if whole:
        try:
            import h5py
            with h5py.File(path, "r") as h:
                v = h.attrs.get("recording_id")
                rid = v.decode() if isinstance(v, bytes) else (str(v) if v is not None else None)
        except Exception:  # noqa: BLE001 - any unreadable file is not whole
            return False, None
    return whole, rid


def state(path, allow_stage=False):
    """A folder's (or file's) state: {relative path: ("d"|"l"|sha|("h5", whole, id))}; names of
    leftovers found (any, or only beside the output when allow_stage)."""
    out, leftovers = {}, []
    if os.path.isfile(path) or not os.path.exists(path):
        if os.path.isfile(path):
            out["."] = entry(path)
        return out, leftovers
    for top, dirs, files in os.walk(path):
        for n in sorted(dirs + files):
            full = os.path.join(top, n)
            rel = os.path.relpath(full, path)
            if LEFTOVER.match(n):
                leftovers.append(rel)
                continue
            if n == ".qreplay-lock":
                out[rel] = "lock"  # its content notes the holder's process
            elif os.path.islink(full):
                out[rel] = "l:" + os.readlink(full)
            elif os.path.isdir(full):
                out[rel] = "d"
            else:
                out[rel] = entry(full)
        dirs[:] = [d for d in dirs if not LEFTOVER.match(d)]
    return out, leftovers


def entry(path):
    with open(path, "rb") as f:
        head = f.read(16)
    if path.endswith((".png", ".pdf")):
        # a figure: whole (PNG's IEND, PDF's %%EOF at its end); its bytes hold the time it was
        # drawn (PDF), so a new one is compared by being whole, an old one byte for byte
        with open(path, "rb") as f:
            data = f.read()
        whole = data.rstrip().endswith(b"%%EOF") if path.endswith(".pdf") else \
            data.startswith(b"\x89PNG") and data[-12:-4] == b"\0\0\0\0IEND"
        return ("fig", whole, hashlib.sha256(data).hexdigest())
    if head.startswith(b"QRARRV4\n"):
        # an arrival log: its bytes but the trailer's last 32, the run that wrote it (a replay's
        # own id, new at every replay)
        with open(path, "rb") as f:
            data = f.read()
        return ("qra", hashlib.sha256(data[:-32]).hexdigest(), hashlib.sha256(data).hexdigest())
    if head.startswith(b"QREPLAY-H5"):
        whole, rid = h5_id(path)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        return ("h5", whole, rid, digest)
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def same_old(now, old):
    return now == old


def same_new(now, new):
    """Every path of new, nothing else; each file whole; non-HDF5 files byte for byte; HDF5
    result files of the same recording (they hold the time they were written)."""
    if set(now) != set(new):
        return False
    for k, v in new.items():
        w = now[k]
        if isinstance(v, tuple) and v[0] == "h5":
            if not isinstance(w, tuple) or w[0] != "h5" or not w[1] or w[2] != v[2]:
                return False
        elif isinstance(v, tuple) and v[0] == "fig":
            if not isinstance(w, tuple) or w[0] != "fig" or not w[1]:
                return False
        elif isinstance(v, tuple) and v[0] == "qra":
            if not isinstance(w, tuple) or w[:2] != v[:2]:
                return False
        elif w != v:
            return False
    return True


def siblings(root, out):
    """Leftovers beside the output (the stage of a killed command)."""
    base = os.path.basename(out)
    parent = os.path.dirname(out) or root
    return [n for n in os.listdir(parent) if n.startswith(base + ".") and LEFTOVER.match(n)]


def du(path):
    total = 0
    for top, _, files in os.walk(path):
        for n in files:
            try:
                total += os.lstat(os.path.join(top, n)).st_size
            except OSError:
                pass
    return total


# Mixes: which commands read a file of a run folder (relative path pattern -> commands; {M} is the
# mixed folder, {V} the replay's name in the path).
READERS = [
    (r"recording/recording\.h5$", [["replay", "{M}", "--th", "0", "--name", "z", "--quiet"],
                                  ["metrics", "{M}", "--no-figures", "--quiet"]]),
    (r"recording/pcap/h[0-9]+\.pcap$", [["replay", "{M}", "--th", "0", "--name", "z", "--quiet"]]),
    (r"recording/truth/truth\.h5$", [["metrics", "{M}", "--no-figures", "--quiet"]]),
    (r"recording/truth/arrivals\.qra$", [["metrics", "{M}", "--no-figures", "--quiet"],
                                        ["blackholes", "{M}", "--quiet"]]),
    (r"recording/light\.qrl$", [["replay", "{M}", "--from", "light", "--quiet"]]),
    (r"replay/([^/]+)/replay\.h5$", [["metrics", "{M}", "--no-figures", "--quiet"]]),
    (r"replay/([^/]+)/arrivals\.qra$", [["metrics", "{M}", "--no-figures", "--quiet"],
                                       ["diagnose", "{M}", "--replay", "{V}", "--no-figures",
                                        "--quiet"],
                                       ["blackholes", "{M}", "--replay", "{V}", "--quiet"]]),
]


def sha_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Checker:
    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.work = tempfile.mkdtemp(prefix="qr-chaos-")
        self.failures = []
        self.table = []

    def fail(self, case, what):
        self.failures.append("%s: %s" % (case, what))
        print("  FAIL %s: %s" % (case, what), flush=True)

    def fixture(self, case):
        root = os.path.join(self.work, "fix-" + case["name"])
        os.makedirs(root)
        for name, text in case.get("files", {}).items():
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        for cmd in case["old"]:
            rc, err = run_plain(self.a.qreplay, cmd, root)
            if rc:
                raise SystemExit("chaos: %s: setting up the old state failed: %s" %
                                 (case["name"], err.strip()))
        return root

    def trial_root(self, fixture, where=None):
        root = os.path.join(where or self.work, "trial")
        if os.path.exists(root):
            shutil.rmtree(root)
        shutil.copytree(fixture, root, symlinks=True)
        return root

    def run_case(self, case):
        name = case["name"]
        fix = self.fixture(case)
        old, _ = state(os.path.join(fix, case["out"]))
        # the new state: an uninterrupted run on a copy
        root = self.trial_root(fix)
        t0 = time.monotonic()
        rc, err = run_plain(self.a.qreplay, case["cmd"], root)
        span = time.monotonic() - t0
        if rc:
            self.fail(name, "the uninterrupted command fails: %s" % err.strip())
            return
        new, left = state(os.path.join(root, case["out"]))
        if left or siblings(root, os.path.join(root, case["out"])):
            self.fail(name, "an uninterrupted run leaves leftovers: %s" % left)
        grown = max(du(root) - du(fix), 4096)
        counts = {}
        kinds = ["INT", "TERM", "KILL"] + (["DISK"] if self.a.full_disk else [])
        for i in range(self.a.trials):
            kind = kinds[i % len(kinds)]
            ended = self.trial(case, fix, old, new, span, grown, kind)
            if ended:
                counts.setdefault(kind, {"old": 0, "new": 0})[ended] += 1
        row = {"case": name, "command": case["cmd"][0], "span_s": round(span, 3)}
        for k in kinds:
            c = counts.get(k, {"old": 0, "new": 0})
            row[k] = c
        self.table.append(row)
        print("%-15s %s" % (name, "  ".join(
            "%s %d old/%d new" % (k, row[k]["old"], row[k]["new"]) for k in kinds)), flush=True)

    def trial(self, case, fix, old, new, span, grown, kind):
        name = case["name"]
        mnt = None
        where = None
        if kind == "DISK":
            mnt = os.path.join(self.work, "mnt")
            os.makedirs(mnt, exist_ok=True)
            size = du(fix) * 2 + 256 * 1024 + self.rng.randrange(grown + 1)
            size = (size + 4095) // 4096 * 4096
            if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % size, "qr-chaos", mnt],
                              stderr=subprocess.DEVNULL).returncode:
                self.fail(name, "cannot mount a tmpfs (needs root)")
                return None
            where = mnt
        try:
            try:
                root = self.trial_root(fix, where)
            except OSError:
                return None  # the old state does not fit: no trial
            out = os.path.join(root, case["out"])
            if kind == "DISK":
                # fill all but a random share of what the command writes
                st = os.statvfs(mnt)
                free = st.f_bavail * st.f_frsize
                keep = self.rng.randrange(grown + 1)
                if free > keep:
                    subprocess.run(["fallocate", "-l", str(free - keep),
                                    os.path.join(mnt, "filler")], stderr=subprocess.DEVNULL)
                p = subprocess.run([self.a.qreplay] + fill(case["cmd"], root), cwd=SRC,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                rc, err = p.returncode, p.stderr
                if os.path.exists(os.path.join(mnt, "filler")):
                    os.unlink(os.path.join(mnt, "filler"))
                if rc not in (0, 1) or (rc == 1 and "No space left on device" not in err):
                    self.fail(name, "full disk: exit %d: %s" % (rc, err.strip()))
            else:
                sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "KILL": signal.SIGKILL}[kind]
                p = subprocess.Popen([self.a.qreplay] + fill(case["cmd"], root), cwd=SRC,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                time.sleep(self.rng.uniform(0, 1.3 * span))
                p.send_signal(sig)
                err = p.communicate()[1]
                rc = p.returncode
                # or death by the signal itself: before the program catches it (its first
                # milliseconds) or after its output is complete; the state says which
                ok = {"INT": (0, 130, -2), "TERM": (0, 143, -15), "KILL": (0, -9)}[kind]
                if rc not in ok:
                    self.fail(name, "%s: exit %d: %s" % (kind, rc, err.strip()))
            now, left = state(out)
            beside = siblings(root, out)
            if left:
                self.fail(name, "%s: leftovers inside the output: %s" % (kind, left))
            if beside and kind != "KILL":
                self.fail(name, "%s: leftovers beside the output: %s" % (kind, beside))
            ended = "old" if same_old(now, old) else "new" if same_new(now, new) else None
            if ended is None:
                gone = sorted(set(old) - set(now))[:5]
                added = sorted(set(now) - set(old))[:5]
                self.fail(name, "%s: neither old nor new (exit %d; vs old: %s missing, %s added): %s"
                          % (kind, rc, gone, added, err.strip()[:300]))
            if kind != "DISK" or ended == "old":
                # the next command works and cleans up
                if mnt:
                    # off the full disk: the folder as the trial left it, then the disk goes
                    safe = os.path.join(self.work, "trial-next")
                    if os.path.exists(safe):
                        shutil.rmtree(safe)
                    shutil.copytree(root, safe, symlinks=True)
                    subprocess.run(["umount", mnt])
                    mnt = None
                    root, out = safe, os.path.join(safe, case["out"])
                rc2, err2 = run_plain(self.a.qreplay, case["cmd"], root)
                after, left2 = state(out)
                if rc2 or not same_new(after, new) or left2 or siblings(root, out):
                    self.fail(name, "%s: the next command: exit %d, new state %s, leftovers %s: %s"
                              % (kind, rc2, same_new(after, new), left2 + siblings(root, out),
                                 err2.strip()[:300]))
            return ended
        finally:
            if mnt:
                subprocess.run(["umount", mnt])

    def mixes(self, n):
        """Two run folders of one scenario (seeds 1 and 2); n times a copy of the first with one
        file taken from the second (copied, hard-linked or linked) or swapped between two of its
        replays; every command that reads that file must refuse the mix, naming it."""
        base = os.path.join(self.work, "mix")
        os.makedirs(base)
        runs = []
        for seed in (1, 2):
            d = os.path.join(base, "s%d" % seed)
            for cmd in (["run"] + TINY + ["--set", "run.seed=%d" % seed, "--set",
                                          "sampling.th=5us", "--no-figures", "-o", d, "--quiet"],
                        ["light", d, "--quiet"]):
                rc, err = run_plain(self.a.qreplay, cmd, base)
                if rc:
                    raise SystemExit("chaos: mixes: setting up failed: %s" % err.strip())
            runs.append(d)
        a, b = runs
        files = []
        for top, _, names in os.walk(a):
            for nm in names:
                rel = os.path.relpath(os.path.join(top, nm), a)
                if any(re.match(pat, rel) for pat, _ in READERS):
                    files.append(rel)
        files.sort()
        replays = sorted(os.listdir(os.path.join(a, "replay")))
        tried = {}
        for i in range(n):
            m = os.path.join(base, "m")
            if os.path.exists(m):
                shutil.rmtree(m)
            shutil.copytree(a, m, symlinks=True)
            how = self.rng.choice(["copy", "hardlink", "symlink", "swap"])
            if how == "swap":
                kind = self.rng.choice(["replay.h5", "arrivals.qra"])
                x, y = self.rng.sample(replays, 2)
                fx = os.path.join(m, "replay", x, kind)
                fy = os.path.join(m, "replay", y, kind)
                tmp = fx + ".swap"
                os.rename(fx, tmp)
                os.rename(fy, fx)
                os.rename(tmp, fy)
                rel = os.path.join("replay", x, kind)
            else:
                rel = self.rng.choice(files)
                src = os.path.join(b, rel)
                if not os.path.exists(src) or sha_of(src) == sha_of(os.path.join(a, rel)):
                    continue  # the same bytes in both: no mix
                dst = os.path.join(m, rel)
                os.unlink(dst)
                if how == "copy":
                    shutil.copy2(src, dst)
                elif how == "hardlink":
                    os.link(src, dst)
                else:
                    os.symlink(src, dst)
            for pat, cmds in READERS:
                mm = re.match(pat, rel)
                if not mm:
                    continue
                v = mm.group(1) if mm.groups() else ""
                for cmd in cmds:
                    args = [x.replace("{M}", m).replace("{V}", v) for x in cmd]
                    rc, err = run_plain(self.a.qreplay, args, base)
                    key = "%s %s" % (how, os.path.basename(rel))
                    tried[key] = tried.get(key, 0) + 1
                    if rc != 1 or not err.strip():
                        self.fail("mix", "%s of %s: qreplay %s: exit %d (a mix must be refused): "
                                  "%s" % (how, rel, args[0], rc, err.strip()[:200]))
                    elif "another" not in err and "not the" not in err:
                        self.fail("mix", "%s of %s: qreplay %s refused it without saying it is "
                                  "a mix: %s" % (how, rel, args[0], err.strip()[:300]))
        self.table.append({"case": "mixes", "command": "readers", "tried": tried})
        print("%-15s %d reads of mixed folders refused (%s)" % (
            "mixes", sum(tried.values()),
            ", ".join("%s %d" % kv for kv in sorted(tried.items()))), flush=True)

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qreplay", default=os.path.join(SRC, "build", "qreplay"))
    ap.add_argument("--trials", type=int, default=8, help="interruptions per case (default 8)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--mixes", type=int, default=12,
                    help="folders with one file of another run in them (default 12)")
    ap.add_argument("--json", help="write the table here")
    ap.add_argument("--no-full-disk", dest="full_disk", action="store_false",
                    help="no full-disk trials (they need root)")
    a = ap.parse_args()
    a.qreplay = os.path.abspath(a.qreplay)
    if a.full_disk and os.geteuid() != 0:
        print("chaos: not root: no full-disk trials", file=sys.stderr)
        a.full_disk = False
    only = set(a.only.split(",")) if a.only else None
    c = Checker(a)
    try:
        for case in CASES:
            if only and case["name"] not in only:
                continue
            c.run_case(case)
        if a.mixes and (not only or "mixes" in only):
            c.mixes(a.mixes)
    finally:
        c.close()
    if a.json:
        tmp = a.json + ".partial-%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump({"trials_per_case": a.trials, "seed": a.seed, "cases": c.table}, f,
                      indent=1)
        os.replace(tmp, a.json)
    tried = sum(sum(v["old"] + v["new"] for k, v in r.items() if isinstance(v, dict)
                    and "old" in v) for r in c.table)
    print("chaos: %d cases, %d interruptions ended old or new, %d violations" %
          (len(c.table), tried, len(c.failures)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
