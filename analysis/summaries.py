"""What is kept of a case's outputs: its summary, read from the result files its commands wrote.

Each summary function takes the case's output folder and its options (experiments/cases.json) and
returns a dict of numbers for data/results/CASE.json. They read result files only (HDF5, CSV,
JSON the commands wrote): never what a command printed, and they compute nothing a user of the
tool could not get from those files (the metrics are the core's: results.h5, trace.h5, ...).
A value the files lack is None in the summary. SUMMARIES maps the names cases.json uses."""
import csv
import glob
import json
import math
import os



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


def no_nan(x):
    """JSON has no NaN: None instead (a median of nothing, precision with nothing flagged)."""
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, list):
        return [no_nan(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


BUSY_KEYS = ["arrivals", "start_ns", "end_ns", "share", "min_queue_bytes", "max_queue_bytes",
             "settled_min_queue_bytes"]


def run(out, opts):
    """A `qreplay run`: its variants (results.h5), and with opts busy the busiest queue's busy
    period and each replay there (queue summary, send-time lag, the first false accepts)."""
    f, var = variants_of(os.path.join(out, "run", "results.h5"))
    res = {"variants": var, "runtime": attrs(f["runtime"], ["drops", "packets"])}
    if opts.get("busy"):
        res["busiest"] = attrs(f["runtime"], ["busiest_switch", "busiest_port"])
        bp = attrs(f["runtime"]["busy_period"], BUSY_KEYS)
        if bp["arrivals"] == 0:
            bp = {"arrivals": 0}
        elif bp["settled_min_queue_bytes"] < 0:
            bp["settled_min_queue_bytes"] = None
        res["busiest"]["busy_period"] = bp
        bq = (res["busiest"]["busiest_switch"], res["busiest"]["busiest_port"])
        drop_times = {int(r["packet"]): int(r["time_ns"]) for r in f["runtime"]["drops"][:]}
        for v in var:
            g = f["replay"][v["variant"]]
            qs = [r for r in rows(g["queues"]) if (r["switch"], r["port"]) == bq][0]
            v["busiest_queue"] = {k: qs[k] for k in ("count", "mean", "len_diff_mean",
                                                     "len_longer", "len_shorter")}
            rep = set(int(p) for p in g["drops"]["packet"])
            v["false_accept_times_ns"] = sorted(t for p, t in drop_times.items()
                                                if p not in rep)[:10]
            # the core writes a median only where arrivals fell in that part of the period
            lag = attrs(g, ["lag_early_ns", "lag_settled_ns"])
            v["lag_early_ns"] = lag.get("lag_early_ns")
            v["lag_settled_ns"] = lag.get("lag_settled_ns")
    return res


def seeds(out, opts):
    res = []
    for seed in opts["seeds"]:
        _, var = variants_of(os.path.join(out, "seed_%d" % seed, "results.h5"))
        res.append({"seed": seed, "variants": var})
    return {"seeds": res}


def butterfly(out, opts):
    f = h5().File(os.path.join(out, "bf", "butterfly.h5"), "r")
    return {"sigma": rows(f["sigma"]), "attrs": attrs(f, ["short_flow", "runtime_short_fct_ns",
                                                         "runtime_drops", "bottleneck_switch",
                                                         "bottleneck_port"])}


def isolate(out, opts):
    """What recording /received costs next to the pcaps."""
    rec = h5().File(os.path.join(out, "rt", "recording.h5"), "r")
    received = rec["received"]
    pcaps = glob.glob(os.path.join(out, "rt", "pcap", "*.pcap"))
    packets = int(sum(h["packets"] for h in rec["hosts"][:]))
    return {"received_rows": int(received.shape[0]),
            "received_bytes_per_packet": received.id.get_storage_size() / float(received.shape[0]),
            "pcap_bytes_per_packet": sum(os.path.getsize(p) for p in pcaps) / float(packets)}


def sample(out, opts):
    """qreplay sample's result (s.h5 /sampling)."""
    return {"sampling": attrs(h5().File(os.path.join(out, "s.h5"), "r")["sampling"],
                              ["method", "th_ns", "flows", "packets", "records",
                               "packets_per_record", "max_error_ns"])}


LIGHT_PARTS = ["header", "config", "calls", "loss", "timers", "samples", "received", "order"]


def light_blocks(path):
    """A light record's bytes (docs/FORMATS.md, "The light record"): per part, and per threshold the
    samples and order blocks, each block with its 16-byte header; the thresholds (ns); the
    connections whose receive times it leaves out and the timer firings it keeps instead (its
    header's at_once and gates; 0 in version 1)."""
    import struct
    import zlib
    with open(path, "rb") as fh:
        b = fh.read()
    if b[:8] != b"QRLIGHT1":
        raise ValueError("%s: not a light record" % path)
    parts, per_th, ths, at, at_once, gates = dict.fromkeys(LIGHT_PARTS, 0), {}, [], 8, 0, 0
    while at < len(b):
        part, th = b[at], b[at + 1]
        rlen, clen, _ = struct.unpack_from("<III", b, at + 4)
        size = 16 + clen
        if part == 0:
            text = zlib.decompress(b[at + 16:at + 16 + clen]).decode()
            line = [x for x in text.split("\n") if x.startswith("thresholds=")][0]
            ths = [int(x) for x in line.split("=", 1)[1].split(",")]
            once = [x for x in text.split("\n") if x.startswith("at_once=")]
            at_once = int(once[0].split("=", 1)[1]) if once else 0
            kept = [x for x in text.split("\n") if x.startswith("gates=")]
            gates = int(kept[0].split("=", 1)[1]) if kept else 0
        if part < len(LIGHT_PARTS):
            parts[LIGHT_PARTS[part]] += size
            if LIGHT_PARTS[part] in ("samples", "order"):
                per_th[th] = per_th.get(th, 0) + size
        at += size
    fixed = len(b) - sum(per_th.values())
    return {"parts": parts, "file_bytes": len(b), "thresholds_ns": ths, "at_once": at_once,
            "gates": gates,
            "at_th_bytes": [fixed + per_th.get(i, 0) for i in range(len(ths))],
            "th_bytes": [per_th.get(i, 0) for i in range(len(ths))]}


def light(out, opts):
    """DETER's light record against the same run's pcaps, raw and compressed (headers only: the
    runtime's pcaps hold headers; xz -9e and gzip -9), per load; and the fidelity of each tagged
    replay (the threshold study's storage axis)."""
    import gzip
    import lzma
    res = []
    for load, sub in sorted(opts["runs"].items(), key=lambda kv: float(kv[0])):
        run = os.path.join(out, sub)
        rec_dir = os.path.join(run, "recording")
        rec = h5().File(os.path.join(rec_dir, "recording.h5"), "r")
        packets = int(sum(h["packets"] for h in rec["hosts"][:]))
        pcaps = sorted(glob.glob(os.path.join(rec_dir, "pcap", "*.pcap")))
        raw = xz = gz = 0
        for p in pcaps:
            with open(p, "rb") as fh:
                data = fh.read()
            raw += len(data)
            xz += len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
            gz += len(gzip.compress(data, 9, mtime=0))
        _, var = variants_of(os.path.join(run, "results.h5"))
        d = {"load_pct": float(load), "connections": int(rec["flows"].shape[0]),
             "packets": packets, "pcap_bytes": raw, "pcap_xz_bytes": xz, "pcap_gzip_bytes": gz,
             "variants": [{k: v.get(k) for k in ("variant", "th_ns", "mode", "qdiff_mean_mtu",
                                                  "qdiff_p99_mtu", "drop_error")}
                          for v in var]}
        d.update(light_blocks(os.path.join(rec_dir, "light.qrl")))
        res.append(d)
    return {"loads": res}


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


def sweep(out, opts):
    with open(os.path.join(out, "sweep", "summary.csv")) as fh:
        table = list(csv.DictReader(fh))
    res = {"rows": [{k: num(r[k]) for k in SUMMARY_KEEP} for r in table]}
    ppath = os.path.join(out, "sweep", "points.csv")
    if os.path.exists(ppath):  # the points over seeds (sweeps of aggregate.py)
        with open(ppath) as fh:
            res["points"] = [{k: (v if k in ("variant", "mode") else
                                  (round(float(v), 9) if v != "" else None))
                              for k, v in r.items()} for r in csv.DictReader(fh)]
    h = h5()
    perf = []
    for d in sorted(glob.glob(os.path.join(out, "sweep", "load_*_seed_*"))):
        name = os.path.basename(d)
        truth = h.File(os.path.join(d, "recording", "truth", "truth.h5"), "r")
        fl = h.File(os.path.join(d, "recording", "recording.h5"), "r")["flows"][:]
        t = attrs(truth, ["events", "wall_s", "sim_end_ns", "end"])
        replay_wall = 0.0
        for rp in glob.glob(os.path.join(d, "replay", "*", "replay.h5")):
            replay_wall += float(h.File(rp, "r").attrs.get("wall_s", 0.0))
        bpath = os.path.join(out, "sweep", "benchmarks", name + ".tsv")
        bench = sweep_bench(bpath) if os.path.exists(bpath) else {}
        rt = attrs(h.File(os.path.join(d, "results.h5"), "r")["runtime"])
        perf.append({"run": name, "flows": int(len(fl)), "completed": int(fl["completed"].sum()),
                     "runtime_drops": int(rt["drops"]), "packets": int(rt["packets"]),
                     "events": int(t["events"]),
                     "sim_end_ns": int(t["sim_end_ns"]),
                     # the rate is network-wide, so its share grows as the network shrinks
                     "incast_bytes_share": round(rt["incast_bytes_share"], 4),
                     "incast_drops_share": round(rt["incast_drops_share"], 4),
                     "volatile": {"runtime_wall_s": round(float(t["wall_s"]), 1),
                                  "replays_wall_s": round(replay_wall, 1),
                                  "run_wall_s": bench.get("wall_s"),
                                  "run_max_rss_mb": bench.get("max_rss_mb")}})
    res["runs"] = perf
    return res


def bench(out, opts):
    """Nothing deterministic: the benchmarks' printouts are kept in the summary's stdout."""
    return {}


def engines(out, opts):
    """Per network (opts nets, one bench_replay each, after its runtime; NET/bench.json): what
    both engines replayed (deterministic), and their speed and memory (volatile)."""
    res, vol = {}, {}
    for net in opts["nets"]:
        with open(os.path.join(out, net, "bench.json")) as fh:
            b = json.load(fh)
        nat, ref = b["engines"]["native"], b["engines"]["ns3"]
        cmp_ = [c for c in b["comparisons"] if c["engine"] == "native" and c["against"] == "ns3"]
        res[net] = {"packet_hops": nat["packet_hops"], "drops": nat["drops"],
                    "logs_identical": bool(cmp_ and cmp_[0]["logs_identical"])}
        vol[net] = {"native": nat, "ns3": ref, "speedup": ref["wall_s"] / nat["wall_s"],
                    "memory_ratio": nat["peak_rss_mb"] / ref["peak_rss_mb"]}
    res["volatile"] = vol
    return res


def commands(out, opts):
    """Per network (opts nets: a qreplay run, then bench_commands.py --json NET/commands.json):
    what the commands handled (deterministic) and their wall times, memory and ratios
    (volatile)."""
    res, vol = {}, {}
    for net in opts["nets"]:
        with open(os.path.join(out, net, "commands.json")) as fh:
            b = json.load(fh)
        res[net] = {"runtime_arrivals": b["runtime_arrivals"], "variants": len(b["variants"]),
                    "arrivals_compared": b["metrics"]["arrivals_compared"],
                    "replay_arrivals": b["replay_arrivals"], "log_bytes": b["log_bytes"],
                    "logs_identical": b["logs_identical"]}
        vol[net] = {"metrics": b["metrics"], "replay": b["replay"],
                    "ns3_over_native": b["ns3_over_native"], "load": b["load"]}
    res["volatile"] = vol
    return res


def everflow_summary(path):
    """Everflow's view of one trace, as its scorer graded it (trace.h5 /score): the links where
    traced packets vanished silently, right if they are the planted cable, and how many drops the
    debugger read, and how much simulated time passed, until the cable had two silent drops."""
    f = h5().File(path, "r")
    s = rows(f["summary"])[0]
    sc = attrs(f["score"])
    links = sc["silent_links"]
    out = {"matched": s["matched"], "drops": int(f["drops"].shape[0]), "silent": sc["silent"],
           "silent_links": links.split(",") if links else [], "right": bool(sc["right"]),
           "detect_after_drops": sc["detect_after_drops"],
           "detect_after_ns": sc["detect_after_ns"],
           "mirror": attrs(f)["mirror"], "mirror_copies": s["mirror_copies"],
           "mirror_lost": s["mirror_lost"]}
    if "guided" in f:
        g = attrs(f["guided"])
        places = rows(f["guided"])
        out["guided"] = {k: g[k] for k in ("probes", "lost", "tuples", "pinned")}
        out["guided"].update({k: sc[k] for k in ("guided_silent", "guided_silent_right",
                                                 "guided_faulty_probed", "guided_faulty_found")})
        out["guided"]["silent_places"] = [p["link_name"] for p in places if p["silent"]]
        # the drop debugger's silent places (switch, port) against the guided probes there
        by_port = {(p["sw"], p["port"]): p for p in places}
        silent = sorted({(d["sw"], d["port"]) for d in rows(f["drops"]) if d["silent"]})
        verdict = {"confirmed": 0, "refuted": 0, "unprobed": 0}
        for sw, port in silent:
            p, inside = by_port.get((sw, port)), by_port.get((sw, 4294967295))
            if inside and inside["silent"] and not (p and p["silent"]):
                p = inside  # lost inside the switch, their way out unknown (as qreplay trace)
            verdict["unprobed" if p is None else "confirmed" if p["silent"] else "refuted"] += 1
        out["guided"]["debugger_places"] = verdict
    return out


def faults(out, opts):
    res = []
    for r in opts["runs"]:
        d = os.path.join(out, r["dir"])
        pm = rows(h5().File(os.path.join(d, "pingmesh.h5"), "r")["summary"])[0]
        bl = {x["method"]: x for x in rows(h5().File(os.path.join(d, "blame.h5"), "r")["summary"])}
        tr = h5().File(os.path.join(d, "trace-all.h5"), "r")
        res.append({
            "gray": r["gray"], "load": r["load"],
            **{k: r[k] for k in ("world", "fault", "link") if k in r},
            "pingmesh": {k: pm[k] for k in ("scored", "lost", "fault_lost", "congestion_lost",
                                             "flagged", "right", "precision", "recall",
                                             "detect_after", "detect_after_ns", "probe_share")},
            "blame": {m: {k: bl[m][k] for k in ("connections", "flagged", "true_flagged",
                                                 "precision", "recall", "culprit_accuracy",
                                                 "detect_after", "rank1_after")}
                      for m in bl},
            "everflow": everflow_summary(os.path.join(d, "trace-all.h5")),
            "everflow_sfr": everflow_summary(os.path.join(d, "trace-sfr.h5")),
            "packets": rows(tr["summary"])[0]["packets"],
            "arrivals": rows(tr["summary"])[0]["arrivals"]})
        busy = os.path.join(d, "trace-busy.h5")  # a case that traced behind a busy mirror
        if os.path.exists(busy):
            res[-1]["everflow_busy"] = everflow_summary(busy)
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


def diagnose(out, opts):
    return {"load": opts["load"],
            "p99": diagnosis_summary(os.path.join(out, "rt", "diagnosis.h5"), True),
            "p90": diagnosis_summary(os.path.join(out, "t90.h5"), True),
            "all": diagnosis_summary(os.path.join(out, "all.h5"), False)}


APP_FIELDS = ["exchanges", "bytes", "bytes_back", "retransmissions", "tlps", "rtos",
              "fast_retransmits", "racks", "unknown_retx", "lost_data", "not_seen", "reordered",
              "spurious", "completed", "end"]


def apps(out, opts):
    """Per real-application capture (tests/data/captures/make_app_captures.sh) and vantage
    (client, server, both): the connection's diagnosis and its slowest exchange; the truth is
    what the router dropped (the script's nftables rules, opts["planted"]), beside what the import
    of both captures counts as dropped (the pair of captures plays a switch's two ports)."""
    res = {}
    for n in opts["names"]:
        both = h5().File(os.path.join(out, n + "-both", "recording", "recording.h5"), "r")
        res[n] = {"truth_drops": int(opts["planted"][n]),
                  "pair_drops": int(both["import"].attrs["drops_both"]), "views": {}}
        for v in ("client", "server", "both"):
            f = h5().File(os.path.join(out, n + "-" + v, "diagnosis.h5"), "r")
            fl = rows(f["flows"])[0]
            ex = rows(f["exchanges"])
            slow = max(ex, key=lambda e: e["duration_ns"]) if ex else None
            d = {k: fl[k] for k in APP_FIELDS}
            d["cause"] = fl["cause"]
            d["slowest"] = None if slow is None else {
                "dir": slow["dir"], "bytes": slow["bytes"], "duration_ns": slow["duration_ns"],
                "cause": slow["cause"], "status": slow["status"]}
            res[n]["views"][v] = d
    return res


WHATIF_KEYS = ["drops", "edge_drops", "agg_drops", "core_drops", "lossy_share", "new_drops",
               "sent_after_new_drop", "all_q_p99", "edge_q_p99", "agg_q_p99", "core_q_p99",
               "all_above90", "delay_p50", "delay_p99", "flow_delay_p99", "blackholes",
               "model_mismatches"]


def whatif(out, opts):
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
                                             "best_delay_true"])}


def clocks(out, opts):
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
    return {"estimate": est, "variants": var}


def roundtrip(out, opts):
    _, back = variants_of(os.path.join(out, "back", "results.h5"))
    _, run = variants_of(os.path.join(out, "run", "results.h5"))
    rec = h5().File(os.path.join(out, "back", "recording", "recording.h5"), "r")
    return {"imported": back, "recorded": run,
            "import": attrs(rec["import"], ["time_base_ns"]),
            "packets": int(sum(int(r["packets"]) for r in rec["hosts"][:]))}


def csv_rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def testbed(out, opts):
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


def testbed_apps(out, opts):
    """Real applications on the testbed (scenarios/testbed-apps.ini), each repeat: the sessions'
    outcomes (testbed/apps.csv) and every exchange's diagnosis against the switch's captures
    (testbed/diagnosis.csv), with the session each connection belongs to; with --record the
    kernel records' state and the diagnosis from them (testbed/diagnosis-record.csv)."""
    reps = []
    for i in range(1, opts["repeats"] + 1):
        d = os.path.join(out, "rep%d" % i)
        apps = csv_rows(os.path.join(d, "testbed", "apps.csv"))
        rec = h5().File(os.path.join(d, "recording", "recording.h5"), "r")
        session = {}
        for c in rec["import"]["connections"][:]:
            k = int(c["port1"]) - opts["first_port"]
            if 0 <= k < len(apps):
                session[int(c["flow"])] = k
        def scored(name):
            rows = []
            for r in csv_rows(os.path.join(d, "testbed", name)):
                k = session.get(int(r["flow"]), -1)
                rows.append({"session": k, "app": apps[k]["app"] if k >= 0 else "",
                             "flow": int(r["flow"]), "exchange": int(r["exchange"]),
                             "dir": int(r["dir"]), "bytes": int(r["bytes"]), "cause": r["cause"],
                             "status": r["status"], "lost": int(r["lost"]),
                             "retransmissions": int(r["retransmissions"]),
                             "dropped": int(r["dropped"]), "dropped_acks": int(r["dropped_acks"]),
                             "queue": max(int(r["max_queue_bytes"]),
                                          int(r["max_ack_queue_bytes"])),
                             "verdict": r["verdict"], "why": r["why"]})
            return rows
        truth = h5().File(os.path.join(d, "recording", "truth", "truth.h5"), "r")
        rep = {"sessions": [{"app": a["app"], "client": int(a["client"]),
                             "server": int(a["server"]), "completed": int(a["completed"])}
                            for a in apps],
               "drops": int(truth["drops"].shape[0]), "exchanges": scored("diagnosis.csv")}
        # with --record: the hosts' kernel records, kept (each equal to its host's capture) or set
        # aside (a packet no event told), their lost events, and the diagnosis from them
        for sub in ("record", "record-refused"):
            recs = sorted(glob.glob(os.path.join(d, sub, "h*.qrk")))
            if recs and os.path.exists(os.path.join(d, "testbed", "diagnosis-record.csv")):
                ends = [krec_blocks(x)["end"] for x in recs]
                rep["record"] = {"kept": sub == "record",
                                 "lost_events": max(e["lost_events"] for e in ends),
                                 "nic_packets": sum(e["nic_packets"] for e in ends),
                                 "exchanges": scored("diagnosis-record.csv")}
        reps.append(rep)
    return {"repeats": reps}


def fabric_rates(out, opts):
    """The fat-tree testbed at rising link rates: what the machine kept up with. Per rate the
    packets its captures followed, the flows, and the delay from a host's capture to its edge
    switch's (truth.h5: a machine that keeps up takes well under a packet's time)."""
    res = []
    for r in opts["runs"]:
        d = os.path.join(out, r["dir"])
        t = attrs(h5().File(os.path.join(d, "recording", "truth", "truth.h5"), "r"))
        with open(os.path.join(d, "testbed", "fabric.csv")) as fh:
            ports = list(csv.DictReader(fh))
        with open(os.path.join(d, "testbed", "flows.csv")) as fh:
            flows = list(csv.DictReader(fh))
        res.append({"rate_mbps": r["rate_mbps"],
                    "hops": sum(int(x["in"]) for x in ports),
                    "qdisc_drops": sum(int(x["qdisc_drops"]) for x in ports),
                    "flows": len(flows),
                    "completed": sum(int(x["completed"]) for x in flows),
                    "tap_delay_p50_ns": t.get("tap_delay_p50_ns"),
                    "tap_delay_p99_ns": t.get("tap_delay_p99_ns"),
                    "packet_ns": 1500 * 8 * 1000 / r["rate_mbps"]})
    return {"runs": res}


CORPUS_FACTS = ["left out", "established", "bytes0", "bytes1", "end", "syn_retries",
                "synack_retries", "resent", "spurious", "dupacks_max", "zero_windows",
                "out_of_order", "duration", "duplicates", "conservation", "drops supported"]


def corpus(out, opts):
    """The public capture corpus against tshark (tests/tools/corpus_check.py --json): per fact,
    the connections (captures, for duplicates) that agree, that disagree as listed in
    differences.tsv by kind (definition, defect), and all compared; the connections of captures
    the import refused, and the drops it recorded against tshark's resends."""
    with open(os.path.join(out, "corpus.json")) as fh:
        d = json.load(fh)
    facts = {}
    for f in CORPUS_FACTS:
        k = d["kinds"].get(f, {})
        facts[f] = {"agree": int(d["agree"].get(f, 0)), "definition": int(k.get("definition", 0)),
                    "defect": int(k.get("defect", 0)),
                    "of": int(d["total"].get("duplicates" if f == "duplicates" else
                                             "connection" if f == "left out" else f, 0))}
    return {"captures": d["captures"], "connections": d["connections"],
            "diagnosed": d["matched"], "refused": {k: int(v) for k, v in d["refused"].items()},
            "drops": d["drops"], "resends": d["resends"], "unlisted": len(d["unlisted"]),
            "facts": facts}


def chaos(out, opts):
    """The chaos harness (tests/tools/chaos.py --json): per case, how many interruptions of each
    kind ended with the output old and how many new (a violation fails the command, so none are
    stored); the mixes tried by how and file, all refused."""
    with open(os.path.join(out, "chaos.json")) as fh:
        d = json.load(fh)
    cases, mixes = [], {}
    for r in d["cases"]:
        if r["case"] == "mixes":
            mixes = {k: int(v) for k, v in r["tried"].items()}
            continue
        cases.append({"case": r["case"], "command": r["command"],
                      "kinds": {k: {"old": int(v["old"]), "new": int(v["new"])}
                                for k, v in r.items() if isinstance(v, dict)}})
    return {"trials_per_case": int(d["trials_per_case"]), "seed": int(d["seed"]), "cases": cases,
            "mixes": mixes}


KREC_PARTS = ["header", "conns", "calls", "sent", "samples", "resent", "arrived"]
KREC_END = ["events", "lost_events", "connections", "closed", "segments", "calls", "moved",
            "nic_packets", "payload_bytes", "recorder_lost", "unseen"]  # the last two: format 5


def uvs(b):
    """The LEB128 varints of b, in order."""
    out, v, shift = [], 0, 0
    for x in b:
        v |= (x & 0x7f) << shift
        shift += 7
        if not x & 0x80:
            out.append(v)
            v, shift = 0, 0
    return out


def krec_blocks(path):
    """A kernel record's bytes (docs/FORMATS.md, "The kernel record"): per part (each block with
    its 16-byte header; the magic and the end block as "framing"), per threshold the samples'
    blocks, the thresholds (ns) and the end block's counts."""
    import struct
    import zlib
    with open(path, "rb") as fh:
        b = fh.read()
    if b[:8] != b"QRLIGHTK":
        raise ValueError("%s: not a kernel record" % path)
    parts, per_th, ths, end, at = dict.fromkeys(KREC_PARTS + ["framing"], 0), {}, [], {}, 8
    parts["framing"] = 8
    at_once = 0
    while at < len(b):
        part, th = b[at], b[at + 1]
        rlen, clen, _ = struct.unpack_from("<III", b, at + 4)
        size = 16 + clen
        raw = zlib.decompress(b[at + 16:at + 16 + clen])
        if part == 0:
            text = raw.decode()
            line = [x for x in text.split("\n") if x.startswith("th_ns=")][0]
            ths = [int(x) for x in line.split("=", 1)[1].split(",")]
            once = [x for x in text.split("\n") if x.startswith("at_once=")]
            at_once = int(once[0].split("=", 1)[1]) if once else 0
        if part == 255:
            end = dict(zip(KREC_END, uvs(raw)))
            parts["framing"] += size
        else:
            parts[KREC_PARTS[part]] += size
            if KREC_PARTS[part] == "samples":
                per_th[th] = per_th.get(th, 0) + size
        at += size
    return {"parts": parts, "file_bytes": len(b), "thresholds_ns": ths, "at_once": at_once, "end": end,
            "th_bytes": [per_th.get(i, 0) for i in range(len(ths))]}


def headers_only(path):
    """A capture (pcap, any snap length) with every frame cut after its TCP header (Ethernet, IPv4
    or IPv6, TCP: what tcpdump -s keeps at the smallest snap length that holds them), as bytes."""
    import struct
    with open(path, "rb") as fh:
        b = fh.read()
    magic = struct.unpack_from("<I", b, 0)[0]
    e = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    out, at = [b[:24]], 24
    while at + 16 <= len(b):
        ts, tf, cap, orig = struct.unpack_from(e + "IIII", b, at)
        frame = b[at + 16:at + 16 + cap]
        keep = cap
        if cap >= 34 and frame[12:14] == b"\x08\x00":
            ihl = (frame[14] & 15) * 4
            if frame[23] == 6 and cap >= 14 + ihl + 13:
                keep = min(cap, 14 + ihl + (frame[14 + ihl + 12] >> 4) * 4)
        elif cap >= 54 + 13 and frame[12:14] == b"\x86\xdd" and frame[20] == 6:
            keep = min(cap, 54 + (frame[54 + 12] >> 4) * 4)
        out.append(struct.pack(e + "IIII", ts, tf, keep, orig) + frame[:keep])
        at += 16 + cap
    return b"".join(out)


def record_testbed(out, opts):
    """qreplay record beside tcpdump on the testbed, per repeat: the hosts' records by part and per
    threshold against the same hosts' captures cut to their headers, raw, gzip -9 and xz -9e
    (DETER's comparison), the processes' CPU (testbed/processes.csv), and every variant's fidelity
    replayed from the captures and from the records (<variant>_record), both against the switch;
    the records' send times against the captures' per threshold (testbed/record-times.csv)."""
    import gzip
    import lzma
    reps = []
    for i in range(1, opts["repeats"] + 1):
        run = os.path.join(out, "rep%d" % i)
        recs = [krec_blocks(p) for p in sorted(glob.glob(os.path.join(run, "record", "h*.qrk")))]
        procs = os.path.join(run, "testbed", "processes.csv")
        _, var = variants_of(os.path.join(run, "results.h5"))
        ports = csv_rows(os.path.join(run, "testbed", "ports.csv"))
        # what the bottleneck (the port whose queue grew largest) served while busy: below the
        # links' rate when the machine did not keep up
        busy = float(max(ports, key=lambda p: int(p["max_queue_bytes"]))["busy_rate_bps"])
        if not recs:  # the testbed set them aside (record-refused): they differ from the captures
            reps.append({"refused": True, "busy_rate_bps": busy, "processes": csv_rows(procs),
                         "variants": [{k: v.get(k) for k in ("variant", "th_ns", "mode")}
                                      for v in var]})
            continue
        raw = xz = gz = 0
        for p in sorted(glob.glob(os.path.join(run, "capture", "h*.pcap"))):
            data = headers_only(p)
            raw += len(data)
            xz += len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
            gz += len(gzip.compress(data, 9, mtime=0))
        parts = {k: sum(r["parts"][k] for r in recs) for k in recs[0]["parts"]}
        ths = recs[0]["thresholds_ns"]
        th_bytes = [sum(r["th_bytes"][j] for r in recs) for j in range(len(ths))]
        fixed = sum(r["file_bytes"] for r in recs) - sum(th_bytes)
        d = {"refused": False, "busy_rate_bps": busy, "hosts": len(recs),
             "segments": sum(r["end"]["segments"] for r in recs),
             "nic_packets": sum(r["end"]["nic_packets"] for r in recs),
             "connections": sum(r["end"]["connections"] for r in recs),
             "lost_events": max(r["end"]["lost_events"] for r in recs),
             "file_bytes": sum(r["file_bytes"] for r in recs), "parts": parts,
             "thresholds_ns": ths, "th_bytes": th_bytes,
             "at_th_bytes": [fixed + x for x in th_bytes],
             "pcap_headers_bytes": raw, "pcap_headers_xz_bytes": xz,
             "pcap_headers_gzip_bytes": gz,
             "processes": csv_rows(procs) if os.path.exists(procs) else None,
             "variants": [{k: v.get(k) for k in ("variant", "th_ns", "mode", "qdiff_mean_mtu",
                                                  "qdiff_p99_mtu", "runtime_drops", "replay_drops",
                                                  "drop_error")} for v in var]}
        times = os.path.join(run, "testbed", "record-times.csv")
        if os.path.exists(times):
            d["times"] = [{k: int(v) for k, v in row.items()} for row in csv_rows(times)]
        reps.append(d)
    return {"repeats": reps}


def record_rate(out, opts):
    """qreplay record --rate-test, per repeat: every step's row of its CSV (the idle step, each
    aimed rate, the unrecorded step where the sender fell short) and the line saying what made
    it (program, version, kernel)."""
    reps = []
    for i in range(1, opts["repeats"] + 1):
        with open(os.path.join(out, "rate%d.csv" % i)) as fh:
            made_by = fh.readline()[2:].strip()
            rows = list(csv.DictReader(fh))
        steps = []
        for r in rows:
            steps.append({k: (float(v) if "." in v else int(v)) for k, v in r.items()})
        reps.append({"made_by": made_by, "steps": steps})
    return {"repeats": reps}


def record_fattree(out, opts):
    """qreplay testbed --record on the fat tree, per repeat: each host's record against its
    capture (testbed/records.csv) and whether the records were kept or set aside."""
    reps = []
    for i in range(1, opts["repeats"] + 1):
        run = os.path.join(out, "rep%d" % i)
        rows = [{k: int(v) for k, v in r.items()}
                for r in csv_rows(os.path.join(run, "testbed", "records.csv"))]
        with open(os.path.join(run, "testbed", "recorder.log")) as fh:
            said = [x.strip() for x in fh if "it lost" in x]
        reps.append({"hosts": rows, "kept": os.path.isdir(os.path.join(run, "record")),
                     "recorder_lost": said[0] if said else ""})
    return {"repeats": reps}


def testbed_repeat(out, opts):
    """qreplay testbed --repeat, without and with jitter: each repeat's totals (repeats.csv) and
    each connection of each repeat (repeat-connections.csv), and the run's flows."""
    runs = {}
    for name in ("still", "jitter"):
        d = os.path.join(out, name, "testbed")
        num = lambda rows: [{k: int(v) for k, v in r.items()} for r in rows]  # noqa: E731
        runs[name] = {"repeats": num(csv_rows(os.path.join(d, "repeats.csv"))),
                      "connections": num(csv_rows(os.path.join(d, "repeat-connections.csv"))),
                      "flows": csv_rows(os.path.join(d, "flows.csv"))}
    return runs


def paths(out, opts):
    """qreplay paths over multi-tier services (the core's, or ns-3's from qreplay tiers): every
    NAME/paths.h5 of the case with its settings (from its name: r{rate}-c{clock}-{method}-s{seed},
    f{fan-out}-r{rate}-{method}-s{seed}, faults-{method}-s{seed}, cost-{duration}-{method}), its
    counts, score and analysis time."""
    import re
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "*", "paths.h5"))):
        name = os.path.basename(os.path.dirname(path))
        f = h5().File(path, "r")
        a = {k: (v.decode() if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v)
             for k, v in f.attrs.items()}
        # a trace read from the case's own folder is named as {out}: the same in every run
        row = {"name": name, "method": a["method"], "source": a["source"].replace(out, "{out}"),
               "messages": a["messages"], "roots": a["roots"], "instances": a["instances"],
               # a wall time: shown in the docs, never compared with a fresh run
               "volatile": {"analysis_s": a.get("analysis_s", -1)},
               "patterns": int(f["patterns"].shape[0]),
               "score": {k[6:]: v for k, v in a.items() if k.startswith("score.")},
               "suspects": [{"kind": r["kind"].decode(), "a": int(r["a"]), "b": int(r["b"])}
                            for r in f["suspects"][:]]}
        m = re.match(r"r(\d+)-c([^-]+)-(link|nest|conv)-s(\d+)$", name)
        f = re.match(r"f(\d+)-r(\d+)-(link|nest|conv)-s(\d+)$", name)
        if f:
            row.update(group="fanout", fanout=int(f.group(1)), rate=int(f.group(2)),
                       seed=int(f.group(4)))
        elif m:
            row.update(group="load", rate=int(m.group(1)), clock=m.group(2), seed=int(m.group(4)))
        elif name.startswith("faults-"):
            row.update(group="faults", seed=int(name.rsplit("-s", 1)[1]))
        elif name.startswith("cost-"):
            row.update(group="cost", duration=name.split("-")[1])
        runs.append(row)
    return {"runs": runs}


def rpc(out, opts):
    """qreplay diagnose over a multi-tier service's captures (qreplay tiers --pcap in ns-3, or
    --testbed), every exchange of every persistent connection: each NAME/imp/diagnosis.h5 of the
    case (NAME: {world}-r{rate}-{fault}), per direction (requests from the side that opened the
    connection, responses back) the exchanges, their causes and statuses, the time their last
    ACK waited for the other side's reply, their RTOs and losses."""
    import re
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "*", "imp", "diagnosis.h5"))):
        name = os.path.basename(os.path.dirname(os.path.dirname(path)))
        m = re.match(r"(ns3|tb)-r(\d+)-(\w+)$", name)
        f = h5().File(path, "r")
        ex = rows(f["exchanges"])
        fl = rows(f["flows"])
        row = {"name": name, "world": m.group(1), "rate": int(m.group(2)), "fault": m.group(3),
               "connections": len(fl), "dirs": {}}
        for d, label in ((0, "request"), (1, "response")):
            e = [x for x in ex if x["dir"] == d]
            causes, status = {}, {}
            for x in e:
                causes[x["cause"]] = causes.get(x["cause"], 0) + 1
                status[x["status"]] = status.get(x["status"], 0) + 1
            done = [x for x in e if x["status"] == "complete"]
            slow = sorted(x["slowdown"] for x in done if x["slowdown"] > 0)
            row["dirs"][label] = {
                "exchanges": len(e), "causes": causes, "status": status,
                "duration_ns": sum(x["duration_ns"] for x in done),
                "reply_ns": sum(x["reply_ns"] for x in done),
                "delack_ns": sum(x["delack_ns"] for x in done),
                "rto_ns": sum(x["rto_ns"] for x in done),
                "rtos": sum(x["rtos"] for x in e), "lost": sum(x["lost"] for x in e),
                "with_reply": sum(1 for x in done if x["reply_ns"] > 0),
                "slowdown_p50": slow[len(slow) // 2] if slow else 0.0,
                "slowdown_p99": slow[min(len(slow) - 1, int(0.99 * len(slow)))] if slow else 0.0}
        runs.append(row)
    return {"runs": runs}


def comparators(out, opts):
    """007 (its votes; the voters' own and the ECMP adjustment) against the paper's comparators
    (binary and integer programs, MAX COVERAGE, Tomo) on the same runs: per run and method, links
    flagged, faulty links flagged, precision, recall, culprit accuracy."""
    keys = ("flagged", "true_flagged", "faulty", "precision", "recall", "culprit_accuracy")
    res = []
    for r in opts["runs"]:
        d = os.path.join(out, r["dir"])
        methods = {}
        for name, label in (("blame.h5", "007"), ("blame-ecmp.h5", "007-ecmp")):
            f = h5().File(os.path.join(d, name), "r")
            sm = {x["method"]: x for x in rows(f["summary"])}["007"]
            methods[label] = {k: sm[k] for k in keys}
            methods[label]["noise"] = sm["noise"]
            if label == "007":
                methods[label]["voters"] = sm["connections"]
                methods[label]["untraced"] = sm["untraced"]
                for c in rows(f["comparators"]):
                    methods[c["method"]] = {k: c[k] for k in keys}
                    methods[c["method"]]["optimal"] = int(c["optimal"])
                icmp = {k: int(f.attrs[k]) for k in ("icmp_max_sent", "icmp_max_bound", "icmp_over")
                        if k in f.attrs}
        res.append(no_nan({**{k: r[k] for k in ("axis", "value", "seed", "dir")},
                           "methods": methods, "icmp": icmp}))
    return {"runs": res}


def pingmesh_paper(out, opts):
    """Pingmesh as its paper measures: per run, the direct drop count (probes unanswered within the
    timeout), the drop rate from connect times (the testbed's TCP connects) graded against the
    truth, the black-hole rule's first flag (and whether it is the planted place) and the scan's."""
    keys = ("scored", "lost", "drop_rate", "fault_lost", "congestion_lost", "connect_scored",
            "connect_slow", "connect_failed", "syn_timeouts", "connect_drop_rate",
            "syn_drop_rate", "connect_right", "connect_missed", "connect_false")
    res = []
    for r in opts["runs"]:
        f = h5().File(os.path.join(out, r["dir"], "pingmesh.h5"), "r")
        sm = rows(f["summary"])[0]
        bh = rows(f["blackholes"]) if len(f["blackholes"]) else []
        flagged = [b for b in bh if b["flagged"]]
        places = [p for p in rows(f["places"]) if p["flagged"]]
        res.append(no_nan({
            **{k: r[k] for k in ("world", "fault", "value", "seed", "dir", "want")},
            **{k: sm[k] for k in keys},
            "symptom_pairs": int(f["blackholes"].attrs["symptom_pairs"]),
            "bh_tied": int(f["blackholes"].attrs["tied"]),
            "bh_flagged": len(flagged),
            "bh_wrong": sum(1 for b in flagged if not b["faulty"]),
            "bh_first": flagged[0]["name"] if flagged else "",
            "bh_first_right": int(flagged[0]["faulty"]) if flagged else None,
            "scan_flagged": len(places),
            "scan_first": places[0]["name"] if places else "",
            "scan_right": sum(1 for p in places if p["faulty"])}))
    return {"runs": res}


def pingmesh_patterns(out, opts):
    """Pingmesh's heatmap patterns: per run, the rack matrix's drop rate inside the cells its
    planted failure's pattern covers (a ToR's row and column; the cells between a pod and the
    others; every cell between pods for the spine) and in the rest, and the scan's flags."""
    res = []
    for r in opts["runs"]:
        f = h5().File(os.path.join(out, r["dir"], "pingmesh.h5"), "r")
        kind, idx = r["kind"], r["index"]

        def inside(c):
            if kind == "tor":
                return idx in (c["src_rack"], c["dst_rack"])
            if kind == "pod":
                return (c["src_pod"] == idx) != (c["dst_pod"] == idx)
            if kind == "spine":
                return c["src_pod"] != c["dst_pod"]
            return False
        sums = {True: [0, 0], False: [0, 0]}
        for c in rows(f["racks"]):
            sums[inside(c)][0] += c["probes"]
            sums[inside(c)][1] += c["lost"]
        places = [p for p in rows(f["places"]) if p["flagged"]]
        res.append(no_nan({
            **{k: r[k] for k in ("label", "kind", "index", "dir")},
            "in_probes": sums[True][0], "in_lost": sums[True][1],
            "in_rate": sums[True][1] / sums[True][0] if sums[True][0] else None,
            "out_probes": sums[False][0], "out_lost": sums[False][1],
            "out_rate": sums[False][1] / sums[False][0] if sums[False][0] else None,
            "flags": [p["name"] for p in places],
            "flags_right": sum(1 for p in places if p["faulty"])}))
    return {"runs": res}


def butterfly_search(out, opts):
    """DETER's butterfly, searched for: per run (buffer, the short flow's size and start, host
    jitter), the short flow's diagnosis (the last flow of the run): its completion, timeouts,
    delayed-ACK time, cause; and whether it is DETER's case, two timeouts (RTO then a backed-off
    one) with a delayed ACK holding the first resend's ACK, 3 x min RTO or more."""
    keys = ("fct_ns", "ideal_ns", "slowdown", "rtos", "retransmissions", "fast_retransmits",
            "tlps", "delayed_acks", "delack_ns", "rto_ns", "cause", "completed")
    res = []
    for r in opts["runs"]:
        flows = rows(h5().File(os.path.join(out, r["dir"], "diagnosis.h5"), "r")["flows"])
        short = max(flows, key=lambda f: f["flow"])
        d = {k: short[k] for k in keys}
        d["two_rtos"] = int(short["rtos"] >= 2)
        d["held"] = int(short["rtos"] >= 1 and short["delack_ns"] > 0)
        d["deter"] = int(short["rtos"] >= 2 and short["delack_ns"] > 0 and
                         short["fct_ns"] >= 3 * opts["min_rto_ns"])
        # every flow's late fast retransmissions (after reordering) and fast ones; on the
        # testbed, the hosts' kernels' own counts (DIR/testbed/tcp.csv)
        d["late_fr"] = int(sum(f["late_fast_retransmits"] for f in flows))
        d["fast_retransmits_all"] = int(sum(f["fast_retransmits"] for f in flows))
        tcp = os.path.join(out, r["dir"], "testbed", "tcp.csv")
        if os.path.exists(tcp):
            k = csv_rows(tcp)[0]
            d["kernel_fast_retrans"] = int(k["fast_retrans"])
            d["kernel_reorder"] = int(k["reorder_events"])
        res.append(no_nan({**{k: r[k] for k in ("buffer", "start", "size", "jitter", "dir")},
                           **d}))
    return {"min_rto_ns": opts["min_rto_ns"], "delack_ns": opts["delack_ns"], "runs": res}


def kernel_tcp(out, opts):
    """Per testbed run: the hosts' kernels' own TCP counters (DIR/testbed/tcp.csv: fast
    retransmits, reorderings detected) beside what the diagnosis of its captures found (fast and
    late fast retransmissions, flows it called late-fr)."""
    res = []
    for r in opts["runs"]:
        d = os.path.join(out, r["dir"])
        k = csv_rows(os.path.join(d, "testbed", "tcp.csv"))[0]
        flows = rows(h5().File(os.path.join(d, "diagnosis.h5"), "r")["flows"])
        res.append({**r, "kernel_fast_retrans": int(k["fast_retrans"]),
                    "kernel_reorder": int(k["reorder_events"]), "flows": len(flows),
                    "fast_retransmits": int(sum(f["fast_retransmits"] for f in flows)),
                    "late_fr": int(sum(f["late_fast_retransmits"] for f in flows)),
                    "reordered": int(sum(f["reordered"] for f in flows)),
                    "late_fr_flows": sum(1 for f in flows if f["cause"] == "late-fr")})
    return {"runs": res}


def loops(out, opts):
    """Everflow's loop debugger against planted routing loops, per run (ns-3 or the fat-tree
    testbed): each cycle the trace found from the mirrored copies (its packets, copies, whether
    the scorer found it planted), and from the truth the recorded packets lost outside the queues
    (sent, less delivered, dropped by a queue and still in flight at the end: a planted loop's
    run, their TTL ran out)."""
    res = []
    for r in opts["runs"]:
        d = os.path.join(out, r["dir"])
        tr = h5().File(os.path.join(d, "trace.h5"), "r")
        cycles = rows(tr["loops"]) if "loops" in tr else []
        summ = rows(tr["summary"])[0]
        truth_path = os.path.join(d, "truth", "truth.h5")
        if not os.path.exists(truth_path):  # the testbed's: beside its recording
            truth_path = os.path.join(d, "recording", "truth", "truth.h5")
        t = h5().File(truth_path, "r")
        dirs = rows(t["directions"])
        lost = sum(x["sent"] - x["delivered"] - x["dropped"] for x in dirs)
        lost -= int(t.attrs.get("in_flight_at_end", 0))
        n_rules = 0 if r["rules"] == "none" else len(r["rules"].split(","))
        res.append(no_nan({
            **r, "n_rules": n_rules,
            "cycles": [{k: c[k] for k in ("cycle", "packets", "copies", "planted", "first_ns",
                                          "last_ns")} for c in cycles],
            "planted_found": sum(1 for c in cycles if c["planted"]),
            "false_cycles": sum(1 for c in cycles if not c["planted"]),
            "looping": int(summ["looping"]), "matched": int(summ["matched"]),
            "lost_outside_queues": int(lost), "other_drops": int(t.attrs["other_drops"])}))
    return {"runs": res}


SUMMARIES = {"loops": loops, "kernel_tcp": kernel_tcp, "butterfly_search": butterfly_search, "pingmesh_patterns": pingmesh_patterns, "pingmesh_paper": pingmesh_paper, "comparators": comparators, "run": run, "paths": paths, "rpc": rpc, "corpus": corpus, "chaos": chaos, "seeds": seeds, "butterfly": butterfly, "isolate": isolate,
             "light": light,
             "sample": sample, "sweep": sweep, "bench": bench, "engines": engines,
             "commands": commands,
             "faults": faults, "diagnose": diagnose, "whatif": whatif, "clocks": clocks,
             "roundtrip": roundtrip, "testbed": testbed, "apps": apps,
             "testbed_apps": testbed_apps, "fabric_rates": fabric_rates,
             "record_testbed": record_testbed, "record_rate": record_rate,
             "testbed_repeat": testbed_repeat, "record_fattree": record_fattree}
