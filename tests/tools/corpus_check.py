#!/usr/bin/python3
"""qreplay against tshark, connection by connection, over a corpus of public captures.

For every capture: tshark's reading of each TCP connection (its own dissection and TCP analysis)
of the capture's TCP frames with duplicated frames removed (by editcap's MD5s under the import's
rule, reference_duplicates) is the reference; qreplay's is what `qreplay import` and `qreplay
diagnose --flows all` make of
the same capture, alone. The two are matched by their ends (addresses and ports, as captured) and
start order, then compared fact by fact:

  bytes0, bytes1   stream bytes each way (0: from the side that opened it), SYN and FIN aside
  end              closed (both FINs, each acknowledged), reset, open
  syn_retries      SYNs sent again by the opener; synack_retries, SYN-ACKs sent again
  resent           data segments and FINs sent again (tshark: retransmission or fast
                   retransmission); SYNs are syn_retries. A segment tshark calls out of order
                   (by its timing rule) that a newer TCP timestamp, or an IP ID above the
                   direction's highest, shows was sent after the rest is a resend to qreplay:
                   where that makes the difference, it is one of definition
  spurious         resends of data that had arrived (tshark: already acknowledged when resent;
                   qreplay also counts a resend a later D-SACK reports arrived twice, and one
                   (a late hole filler too) whose first ACK echoes an older timestamp than its
                   own (Eifel), and where the capture is at the receiver, a resend of bytes (or
                   a FIN) an earlier frame already brought: where that alone makes the difference, it
                   counts as one of definition)
  dupacks_max      the longest run of duplicate ACKs
  zero_windows     zero-window episodes (a zero window after a nonzero one, per direction)
  out_of_order     segments that arrived after one sent later (qreplay also counts the original
                   of a resend a later D-SACK shows was not needed, and where the capture is at
                   the sender, a segment of its own tshark calls out of order is a resend to
                   qreplay: differences of definition the check finds itself, as for spurious)
  duration         from the connection's first frame to its last, to the nanosecond: qreplay's
                   from the recording, each packet at its time where it was captured (its send
                   time where its sender was, else its receive time; made-up drops aside)
and per capture (the import reads it whole):
  duplicates       frames captured twice that the import removed, against editcap's MD5s over
                   the capture's TCP frames under the import's rule (equal bytes within 5 frames;
                   with IPv4 ID 0 or IPv6, also within 1 ms, with no answer from the other end
                   in between: the same bytes a stack sent again are kept)
  established      the handshake completed

A disagreement is a failure unless tests/data/corpus/differences.tsv lists it (capture, fact,
reason): a documented difference of definition between the two tools, never a tolerance. A listed
difference that no longer occurs is reported too (the list must shrink as the code improves).

Usage: corpus_check.py --qreplay build/qreplay [--json OUT] [--work DIR] [--only NAME] CORPUS_DIR
Exit 0 when every disagreement is listed, 1 otherwise, 2 on a usage or tool error.
"""
import argparse
import collections
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
except ImportError:  # pragma: no cover
    sys.exit("corpus_check: needs python3-h5py (Debian)")

FACTS = ["established", "bytes0", "bytes1", "end", "syn_retries", "synack_retries", "resent",
         "spurious", "dupacks_max", "zero_windows", "out_of_order", "duration"]

MTU = 1500  # the simulated network's (qreplay's QR_MTU_BYTES)


def epoch_ns(text):
    """tshark's frame.time_epoch (seconds, up to 9 decimals) as integer nanoseconds."""
    s, _, frac = text.strip().partition(".")
    return int(s) * 1_000_000_000 + int((frac + "000000000")[:9])


def more(x):
    """The segments beyond the first of a frame above the MTU (TSO at its sender, GRO at its
    receiver): qreplay splits it at the MTU as the NIC sent it, so a resend of one is as many
    resends, spurious or not."""
    return max(0, -(-x["len"] // (MTU - 20 - x["hdr"])) - 1)


TSHARK_FIELDS = ["frame.number", "frame.time_epoch", "ip.src", "ipv6.src", "ip.dst", "ipv6.dst",
                 "tcp.srcport", "tcp.dstport", "tcp.stream", "tcp.len", "tcp.seq_raw",
                 "tcp.ack_raw", "tcp.flags.syn", "tcp.flags.ack", "tcp.flags.fin",
                 "tcp.flags.reset", "tcp.window_size_value", "tcp.analysis.retransmission",
                 "tcp.analysis.fast_retransmission", "tcp.analysis.spurious_retransmission",
                 "tcp.analysis.duplicate_ack_num", "tcp.analysis.zero_window",
                 "tcp.analysis.out_of_order", "ip.id", "frame.len", "ip.proto", "ipv6.nxt",
                 "tcp.options.sack.dsack_le", "tcp.options.sack.dsack_re",
                 "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr", "tcp.hdr_len"]


def last(v):
    """The innermost of a field tshark repeats (a tunnel's inner header comes last)."""
    return v.split(",")[-1] if v else ""


def seq_after(a, b):
    return ((a - b) & 0xFFFFFFFF) < 0x80000000


def tshark_conns(path):
    """Per tcp.stream: the facts tshark's dissection gives."""
    cmd = ["tshark", "-n", "-r", path, "-Y", "tcp", "-o", "tcp.relative_sequence_numbers:FALSE",
           "-o", "tcp.analyze_sequence_numbers:TRUE", "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode not in (0, 2):  # 2: a cut last record, still read
        raise RuntimeError(f"tshark failed on {path}: {out.stderr.strip()[:300]}")
    streams = collections.OrderedDict()
    for line in out.stdout.splitlines():
        v = dict(zip(TSHARK_FIELDS, line.split("\t")))
        if not v.get("tcp.stream"):
            continue
        # tunnelled TCP (IP in IP, 6in4, GRE) has two IP headers: qreplay reads the outer one only
        nip = len(v["ip.src"].split(",")) if v["ip.src"] else 0
        nip6 = len(v["ipv6.src"].split(",")) if v["ipv6.src"] else 0
        tunnelled = nip + nip6 > 1
        src = last(v["ipv6.src"]) or last(v["ip.src"])
        dst = last(v["ipv6.dst"]) or last(v["ip.dst"])
        sport, dport = int(last(v["tcp.srcport"])), int(last(v["tcp.dstport"]))
        stream = int(last(v["tcp.stream"]))
        s = streams.setdefault(stream, {"pkts": [], "tunnelled": False})
        s["tunnelled"] |= tunnelled
        s["pkts"].append({
            "t": float(v["frame.time_epoch"]), "t_ns": epoch_ns(v["frame.time_epoch"]),
            "src": (src, sport), "dst": (dst, dport),
            "len": int(last(v["tcp.len"]) or 0), "seq": int(last(v["tcp.seq_raw"]) or 0),
            "hdr": int(last(v["tcp.hdr_len"]) or 20),
            "ack": int(last(v["tcp.ack_raw"]) or 0),
            "syn": last(v["tcp.flags.syn"]) in ("1", "True"),
            "ackf": last(v["tcp.flags.ack"]) in ("1", "True"),
            "fin": last(v["tcp.flags.fin"]) in ("1", "True"),
            "rst": last(v["tcp.flags.reset"]) in ("1", "True"),
            "win": int(last(v["tcp.window_size_value"]) or 0),
            "retx": bool(v["tcp.analysis.retransmission"] or v["tcp.analysis.fast_retransmission"]),
            "spur": bool(v["tcp.analysis.spurious_retransmission"]),
            "dupnum": max([int(x) for x in v["tcp.analysis.duplicate_ack_num"].split(",") if x]
                          or [0]),
            "zw": bool(v["tcp.analysis.zero_window"]),
            "ooo": bool(v["tcp.analysis.out_of_order"]),
            "dsack": (int(last(v["tcp.options.sack.dsack_le"])),
                      int(last(v["tcp.options.sack.dsack_re"])))
            if v["tcp.options.sack.dsack_le"] and v["tcp.options.sack.dsack_re"] else None,
            "tsval": int(last(v["tcp.options.timestamp.tsval"]))
            if v["tcp.options.timestamp.tsval"] else None,
            "ipid": int(last(v["ip.id"]), 16) if v["ip.id"] else None,
            "tsecr": int(last(v["tcp.options.timestamp.tsecr"]))
            if v["tcp.options.timestamp.tsecr"] else None,
        })
    conns = []
    for stream, s in streams.items():
        p = s["pkts"]
        opener = next((x["src"] for x in p if x["syn"] and not x["ackf"]), None)
        if opener is None:
            opener = next((x["dst"] for x in p if x["syn"] and x["ackf"]), p[0]["src"])
        peer = p[0]["dst"] if p[0]["src"] == opener else p[0]["src"]
        f = {"stream": stream, "ends": (opener, peer), "start": p[0]["t"],
             "tunnelled": s["tunnelled"], "frames": len(p),
             "duration": max(x["t_ns"] for x in p) - min(x["t_ns"] for x in p)}
        dirs = [[x for x in p if x["src"] == opener], [x for x in p if x["src"] != opener]]
        for k in (0, 1):
            d = dirs[k]
            isn = next((x["seq"] for x in d if x["syn"]), None)
            data = [x for x in d if x["len"] > 0]
            if not data:
                f[f"bytes{k}"] = 0
                continue
            base = (isn + 1) & 0xFFFFFFFF if isn is not None else min(
                data, key=lambda x: (x["seq"] - data[0]["seq"] + 0x80000000) & 0xFFFFFFFF)["seq"]
            hi = max(((x["seq"] + x["len"] - base) & 0xFFFFFFFF) for x in data
                     if ((x["seq"] + x["len"] - base) & 0xFFFFFFFF) < 0x80000000)
            f[f"bytes{k}"] = hi
        syns = [x for x in dirs[0] if x["syn"] and not x["ackf"]]
        synacks = [x for x in dirs[1] if x["syn"] and x["ackf"]]
        f["syn_retries"] = max(0, len(syns) - 1)
        f["synack_retries"] = max(0, len(synacks) - 1)
        f["established"] = int(bool(synacks) and any(x["ackf"] and not x["syn"] for x in dirs[0])
                               and bool(syns))
        fins = [next((x for x in reversed(d) if x["fin"]), None) for d in dirs]
        if any(x["rst"] for x in p):
            f["end"] = "reset"
        elif all(fins):
            # both FINs, each acknowledged (ACK past the FIN) by the other side after it was sent
            def acked(k):
                fin_end = (fins[k]["seq"] + fins[k]["len"] + 1) & 0xFFFFFFFF
                return any(x["ackf"] and seq_after(x["ack"], fin_end) and x["t"] >= fins[k]["t"]
                           for x in dirs[k ^ 1])
            f["end"] = "closed" if acked(0) and acked(1) else "open"
        else:
            f["end"] = "open"
        # segments that carry sequence space (data or a FIN) sent again; SYNs are syn_retries
        seqsp = [x for x in p if (x["len"] > 0 or x["fin"]) and not x["syn"]]
        f["resent"] = sum(1 for x in seqsp if x["retx"])
        f["spurious"] = sum(1 for x in seqsp if x["spur"])
        # qreplay's definition (RFC 2883): also a resend that a later D-SACK from the other side
        # reports arrived twice (each D-SACK names one: the latest resend before it that
        # overlaps its block); tshark counts only resends of data acknowledged when sent
        marked = set()
        for d_, o_ in ((dirs[0], dirs[1]), (dirs[1], dirs[0])):
            resends = [i for i, x in enumerate(d_) if x["retx"] and (x["len"] > 0 or x["fin"])
                       and not x["syn"]]
            for y in o_:
                if not y["dsack"]:
                    continue
                le, re_ = y["dsack"]
                for i in reversed(resends):
                    x = d_[i]
                    lo, hi = x["seq"], (x["seq"] + max(x["len"], 1)) & 0xFFFFFFFF
                    if (x["t"] <= y["t"] and (id(d_), i) not in marked
                            and seq_after(hi, le + 1) and seq_after(re_, lo + 1)):
                        marked.add((id(d_), i))
                        break
        dsacked = [x for d_ in dirs for i, x in enumerate(d_) if (id(d_), i) in marked]
        # a segment tshark calls out of order (by its timing rule) that was sent after everything
        # before it (a newer TCP timestamp, or an IP ID 1 to 1024 above the direction's highest):
        # a resend to qreplay, its original lost
        later = 0
        late = set()  # those segments, (direction, index)
        for d_ in dirs:
            top_ts = top_id = None
            # IP IDs tell the order of sending only if the sender counts them up (random ones:
            # no): nine in ten of its steps between nonzero IDs forward by 1 to 1024
            ids = [x["ipid"] for x in d_ if x["ipid"]]
            steps = [(b - a) & 0xFFFF for a, b in zip(ids, ids[1:])]
            counted = bool(steps) and sum(1 for v in steps if 0 < v <= 1024) >= 0.9 * len(steps)
            for i, x in enumerate(d_):
                if x["ooo"] and x["len"] > 0 and (
                        (x["tsval"] is not None and top_ts is not None
                         and 0 < ((x["tsval"] - top_ts) & 0xFFFFFFFF) < 0x80000000)
                        or (x["tsval"] is None and counted and x["ipid"] and top_id is not None
                            and 0 < ((x["ipid"] - top_id) & 0xFFFF) <= 1024)):
                    later += 1
                    late.add((id(d_), i))
                if x["tsval"] is not None and (top_ts is None or 0 < ((x["tsval"] - top_ts)
                                                                     & 0xFFFFFFFF) < 0x80000000):
                    top_ts = x["tsval"]
                # the highest IP ID: any that is not just behind it (a jump, or a sender that
                # numbered from 0 in its handshake: Linux's SYN-ACK); 0 says nothing
                if x["ipid"] and (top_id is None or not 0 < ((top_id - x["ipid"]) & 0xFFFF) <= 1024):
                    top_id = x["ipid"]
        # and (Eifel, RFC 3522) a resend (one tshark calls so, or one of the late hole fillers
        # above) whose bytes the first ACK to cover them acknowledges with the echo of an older
        # timestamp than the resend's: the original had arrived
        eifel = 0
        eifels = set()
        for d_, o_ in ((dirs[0], dirs[1]), (dirs[1], dirs[0])):
            for i, x in enumerate(d_):
                key = (id(d_), i)
                if (not (x["retx"] or key in late) or x["spur"] or key in marked
                        or x["tsval"] is None or x["syn"] or not (x["len"] > 0 or x["fin"])):
                    continue
                end = (x["seq"] + x["len"] + (1 if x["fin"] else 0)) & 0xFFFFFFFF
                y = next((y for y in o_ if y["t"] >= x["t"] and y["ackf"]
                          and seq_after(y["ack"], end)), None)
                if y is not None and y["tsecr"] is not None and \
                        0 < ((x["tsval"] - y["tsecr"]) & 0xFFFFFFFF) < 0x80000000:
                    eifel += 1
                    eifels.add(key)
        # and, where the capture was taken at a direction's receiver (known once the import
        # has said whose capture it is), a resend every byte of which an earlier frame of the
        # direction already brought: it had arrived (tshark: only if already acknowledged)
        f["held_dir"] = [0, 0]
        for k, d_ in enumerate(dirs):
            seen = []  # [lo, hi) of the direction's payload captured so far (relative)
            base = d_[0]["seq"] if d_ else 0
            for i, x in enumerate(d_):
                if not (x["len"] > 0 or x["fin"]) or x["syn"]:
                    continue
                lo = (x["seq"] - base) & 0xFFFFFFFF
                hi = lo + x["len"] + (1 if x["fin"] else 0)  # a FIN takes a sequence number
                key = (id(d_), i)
                if ((x["retx"] or key in late) and not x["spur"] and key not in marked
                        and key not in eifels and any(a <= lo and hi <= b for a, b in seen)):
                    f["held_dir"][k] += 1 + more(x)
                seen.append((lo, hi))
                seen.sort()
                merged = []
                for a, b in seen:
                    if merged and a <= merged[-1][1]:
                        merged[-1] = (merged[-1][0], max(merged[-1][1], b))
                    else:
                        merged.append((a, b))
                seen = merged
        f["spurious_dsack"] = (f["spurious"] + sum(1 for x in dsacked if not x["spur"]) + eifel
                               + sum(more(x) for x in seqsp if x["spur"]))
        f["resent_def"] = f["resent"] + later + sum(more(x) for x in seqsp if x["retx"])
        # a segment of its own that tshark calls out of order (its timing rule), where the
        # capture was taken at the sender (known once the import has said whose capture it
        # is): bytes it had sent before, sent again, a resend to qreplay
        f["ooo_dir"] = [sum(1 for i, x in enumerate(d_) if x["ooo"] and x["len"] > 0
                            and (id(d_), i) not in late) for d_ in dirs]
        # qreplay also counts the original of a resend a D-SACK shows was not needed as
        # reordered (it arrived, late: Linux's reordering detection); tshark cannot see it
        f["ooo_def"] = (sum(1 for x in p if x["ooo"]) - later
                        + sum(1 for x in dsacked if not x["spur"]))
        f["dupacks_max"] = max([x["dupnum"] for x in p] or [0])
        # episodes: a zero-window frame after a direction's nonzero window (or first)
        f["zero_windows"] = 0
        for d in dirs:
            zero = False
            for x in d:
                if x["syn"] or x["fin"] or x["rst"]:
                    continue
                if x["zw"] and not zero:
                    f["zero_windows"] += 1
                zero = x["zw"]
        f["out_of_order"] = sum(1 for x in p if x["ooo"])
        # what the conservation check needs, per direction (0: the opener's)
        f["cap_bytes"] = [sum(x["len"] for x in d) for d in dirs]
        # segments that came again or filled a hole (tshark: retransmission, or out of order
        # where tshark's timing rule and the import's IP ID or timestamp order differ): each
        # drop the import records needs one
        f["resent_dir"] = [sum(1 for x in d if (x["retx"] or x["ooo"]) and
                               (x["len"] > 0 or x["fin"] or x["syn"])) for d in dirs]
        conns.append(f)
    return conns


SAME_NS = 1_000_000  # core/io/include/qreplay/capture.h: QR_CAPTURE_DEDUP_SAME_NS
DEDUP_WINDOW = 5  # core/io/include/qreplay/import.h: QR_IMPORT_DEDUP_WINDOW


def reference_duplicates(path, work):
    """The frames captured twice among the capture's TCP frames (tshark's filter first), by the
    import's documented rule with editcap's identity and tshark's dissection: a frame whose length
    and MD5 (editcap -D 0 -V) equal one of the previous 5 kept frames'; where equal bytes prove
    nothing (IPv4 ID 0, IPv6), only if it came less than 1 ms after that frame and no frame of its
    connection's other direction was kept in between (a stack's answer sent again). Writes
    dedup.pcapng without them (editcap deleting the frames by number); returns their count."""
    tcp = os.path.join(work, "tcp.pcapng")
    r = subprocess.run(["tshark", "-n", "-r", path, "-Y", "tcp && !icmp && !icmpv6", "-w", tcp],
                       capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 2):
        raise RuntimeError(f"tshark failed on {path}: {r.stderr.strip()[:300]}")
    r = subprocess.run(["editcap", "-D", "0", "-V", tcp, os.path.join(work, "hashed.pcapng")],
                       capture_output=True, text=True, timeout=300)
    hashes = {int(m.group(1)): (int(m.group(2)), m.group(3)) for m in re.finditer(
        r"Packet: (\d+), Len: (\d+), MD5 Hash: ([0-9a-f]+)", r.stdout + r.stderr)}
    if r.returncode != 0:
        raise RuntimeError(f"editcap -V failed on {path}: {(r.stdout + r.stderr).strip()[:300]}")
    r = subprocess.run(["tshark", "-n", "-r", tcp, "-T", "fields", "-E", "occurrence=l",
                        "-e", "frame.number", "-e", "frame.time_epoch", "-e", "ip.id",
                        "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport",
                        "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 2):
        raise RuntimeError(f"tshark failed on {tcp}: {r.stderr.strip()[:300]}")
    recent, dups = [], []
    for line in r.stdout.splitlines():
        f = line.split("\t")
        n = int(f[0])
        if n not in hashes:
            raise RuntimeError(f"editcap -V gave no hash for frame {n} of {path}")
        sec, _, frac = f[1].partition(".")
        t = int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])
        src, dst = (f[3] or f[4], f[5]), (f[6] or f[7], f[8])
        proves = f[2] not in ("", "0x0000", "0")
        copy = False
        for k, (h, t0, _) in enumerate(recent):
            if h != hashes[n]:
                continue
            copy = proves or (t - t0 < SAME_NS and
                              all(e != (dst, src) for _, _, e in recent[k + 1:]))
            if copy:
                break
        if copy:
            dups.append(n)
            continue
        recent = (recent + [(hashes[n], t, (src, dst))])[-DEDUP_WINDOW:]
    out = os.path.join(work, "dedup.pcapng")
    r = subprocess.run(["editcap", tcp, out] + [str(n) for n in dups],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"editcap failed on {tcp}: {(r.stdout + r.stderr).strip()[:300]}")
    return len(dups)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def qreplay_conns(qreplay, scenario, path, work):
    """What qreplay import + diagnose make of the capture: (conns, error)."""
    out = os.path.join(work, "run")
    shutil.rmtree(out, ignore_errors=True)
    r = run([qreplay, "import", scenario, path, "-o", out, "-q"])
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    r = run([qreplay, "diagnose", out, "--flows", "all", "--no-replay", "--no-figures", "-q"])
    if r.returncode != 0:
        return None, "diagnose: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    with h5py.File(os.path.join(out, "recording", "recording.h5"), "r") as rec, \
            h5py.File(os.path.join(out, "diagnosis.h5"), "r") as dg:
        conns = rec["import/connections"][:]
        dups = int(rec["import/captures"]["skip_duplicate"].sum())
        # the hosts whose packets a capture gives (its owner, and at a router or mirror port
        # the others its timing puts it next to)
        owners = {x["addr"].decode() for x in rec["import/hosts"][:] if x["captured"]}
        flows = {int(x["flow"]): x for x in dg["flows"][:]}
    total, invented, drops_dir, made_dir, span = recording_bytes(out)
    res = []
    for c in conns:
        fl = flows.get(int(c["flow"]))
        if fl is None:
            continue
        a0, a1 = c["addr0"].decode(), c["addr1"].decode()
        f = {"ends": ((a0, int(c["port0"])), (a1, int(c["port1"]))), "flow": int(c["flow"]),
             "start": int(fl["start_ns"])}
        f["bytes0"] = int(fl["bytes"])
        f["bytes1"] = int(fl["bytes_back"])
        end = fl["end"].decode()
        f["end"] = {"closed": "closed", "reset": "reset"}.get(end, "open")
        f["syn_retries"] = max(0, int(fl["syn_sent"]) - 1)
        f["synack_retries"] = max(0, int(fl["synack_sent"]) - 1)
        f["established"] = int(int(fl["syn_sent"]) > 0 and int(fl["synack_sent"]) > 0
                               and int(fl["handshake_ns"]) > 0)
        f["resent"] = int(fl["retransmissions"])
        f["spurious"] = int(fl["spurious"])
        f["owners"] = owners
        f["dupacks_max"] = int(fl["dupack_run"])
        f["zero_windows"] = int(fl["zero_windows"])
        f["out_of_order"] = int(fl["reordered"])
        f["drops"] = int(c["drops0"]) + int(c["drops1"])
        f["packets"] = int(c["packets0"]) + int(c["packets1"])
        fl = int(c["flow"])
        f["rec_bytes"] = [total[2 * fl], total[2 * fl + 1]]  # side 0: its addr0 (the opener)
        f["made_bytes"] = [invented[2 * fl], invented[2 * fl + 1]]
        f["drops_dir"] = [drops_dir[2 * fl], drops_dir[2 * fl + 1]]
        f["duration"] = span[fl][1] - span[fl][0] if fl in span else None
        res.append(f)
    return (res, dups), None


def recording_bytes(out):
    """Per recording flow direction (2 * flow + side, side 0 the flow's source): payload bytes of
    every packet in the recording's pcaps, and of the packets the import made up (drops of a
    direction only its receiver captured), both read back with tshark."""
    rec = os.path.join(out, "recording")
    with h5py.File(os.path.join(rec, "recording.h5"), "r") as h:
        flows = h["flows"][:]
        addr = {int(x["host"]): int(x["addr"]) for x in h["hosts"][:]}
        conns = {int(c["flow"]): c for c in h["import/connections"][:]}
        det = h["drops_detected"][:] if "drops_detected" in h else []
        recv = {(int(x["dir"]), int(x["seq"])): int(x["time_ns"]) for x in h["received"][:]}
    key_dir = {}
    for fl in flows:
        f = int(fl["id"])
        a, b = addr[int(fl["src"])], addr[int(fl["dst"])]
        key_dir[(a, int(fl["src_port"]), b, int(fl["dst_port"]))] = 2 * f
        key_dir[(b, int(fl["dst_port"]), a, int(fl["src_port"]))] = 2 * f + 1
    # evidence 2 (ipid) and 3 (none): only the receiver captured, its drops made up
    made_up = {(int(d["dir"]), int(d["ip_id"])) for d in det
               if int(conns[int(d["dir"]) // 2]["evidence%d" % (int(d["dir"]) % 2)]) >= 2}
    total, invented = collections.Counter(), collections.Counter()
    span = {}  # flow -> [first, last]: where each packet was captured (below)
    pdir = os.path.join(rec, "pcap")
    pcaps = sorted(os.path.join(pdir, n) for n in os.listdir(pdir))
    merged = os.path.join(out, "merged.pcap")  # one tshark run, not one per host
    r = run(["mergecap", "-a", "-F", "pcap", "-w", merged] + pcaps) if pcaps else None
    if r is not None and r.returncode != 0:
        raise RuntimeError(f"mergecap failed on {pdir}: {r.stderr.strip()[:300]}")
    for name in [merged] if pcaps else []:
        r = run(["tshark", "-n", "-r", name, "-Y", "tcp", "-T", "fields",
                 "-E", "separator=\t", "-e", "ip.src", "-e", "tcp.srcport", "-e", "ip.dst",
                 "-e", "tcp.dstport", "-e", "ip.id", "-e", "tcp.len", "-e", "frame.time_epoch"])
        if r.returncode != 0:
            raise RuntimeError(f"tshark failed on {name}: {r.stderr.strip()[:300]}")
        for line in r.stdout.splitlines():
            src, sp, dst, dp, ipid, ln, when = line.split("\t")
            ip = lambda t: int.from_bytes(bytes(int(x) for x in t.split(".")), "big")
            d = key_dir.get((ip(src), int(sp), ip(dst), int(dp)))
            if d is None:
                raise RuntimeError(f"{name}: a packet of no flow ({line})")
            total[d] += int(ln)
            seq = int(ipid, 16)  # the recording numbers each direction's packets in its IP IDs
            if (d, seq) in made_up:
                invented[d] += int(ln)
                continue
            # its time where it was captured: sent, where its sender was; else received
            if int(conns[d // 2]["evidence%d" % (d % 2)]) < 2:
                t = epoch_ns(when)
            elif (d, seq) in recv:
                t = recv[(d, seq)]
            else:
                continue
            s = span.setdefault(d // 2, [t, t])
            s[0], s[1] = min(s[0], t), max(s[1], t)
    counts = collections.Counter(int(d["dir"]) for d in det)
    made = collections.Counter(d for d, _ in made_up)
    return total, invented, counts, made, span


def key(ends):
    return tuple(sorted(ends))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--qreplay", default="build/qreplay")
    ap.add_argument("--scenario", default=None,
                    help="the network to import into (default: scenarios/fattree-k16-paper.ini)")
    ap.add_argument("--differences", default=None,
                    help="listed differences (default: CORPUS/differences.tsv)")
    ap.add_argument("--json", help="write the agreement table and every disagreement here")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--only", action="append", help="only this capture (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every disagreement")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the differences file: drop the rows that agree now, append a "
                         "'defect:' row for each new disagreement (review them before committing)")
    a = ap.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    scenario = a.scenario or os.path.join(top, "scenarios", "fattree-k16-paper.ini")
    diff_path = a.differences or os.path.join(a.corpus, "differences.tsv")
    listed, header = {}, []
    if os.path.exists(diff_path):
        with open(diff_path, newline="") as fh:
            for n, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
                if not row or row[0].startswith("#"):
                    if row and not listed:
                        header.append("\t".join(row))
                    continue
                if len(row) < 3:
                    sys.exit(f"{diff_path}:{n}: expected capture, fact, reason")
                listed[(row[0], row[1])] = row[2]
    with open(os.path.join(a.corpus, "manifest.tsv"), newline="") as fh:
        manifest = [r for r in csv.DictReader(fh, delimiter="\t")]
    files = [m["file"] for m in manifest if not a.only or m["file"] in a.only]
    work = a.work or tempfile.mkdtemp(prefix="qreplay-corpus-")
    os.makedirs(work, exist_ok=True)
    agree = collections.Counter()
    total = collections.Counter()
    unlisted, seen_listed, rows = [], set(), []
    n_conns = n_matched = drops = resends = 0
    kinds = collections.defaultdict(collections.Counter)  # listed rows used, per fact and kind
    refused = collections.Counter()  # connections of captures the import refused, per kind
    try:
        for name in files:
            path = os.path.join(a.corpus, name)
            # the reference reads the capture as the import does: duplicated frames removed
            ref_dups = reference_duplicates(path, work)
            ref = tshark_conns(os.path.join(work, "dedup.pcapng"))
            ours, err = qreplay_conns(a.qreplay, scenario, path, work)
            n_conns += len(ref)
            if ours is None:
                what = (name, "import")
                if what in listed:
                    seen_listed.add(what)
                    refused[listed[what].split(":")[0]] += len(ref)
                else:
                    unlisted.append({"capture": name, "fact": "import", "error": err})
                rows.append({"capture": name, "connections": len(ref), "error": err})
                continue
            ours, dups = ours
            total["duplicates"] += 1
            if dups == ref_dups:
                agree["duplicates"] += 1
            elif (name, "duplicates") in listed:
                seen_listed.add((name, "duplicates"))
                agree["duplicates (listed)"] += 1
                kinds["duplicates"][listed[(name, "duplicates")].split(":")[0]] += 1
            else:
                unlisted.append({"capture": name, "fact": "duplicates", "tshark": ref_dups,
                                 "qreplay": dups})
            drops += sum(f["drops"] for f in ours)
            resends += sum(r["resent"] for r in ref if key(r["ends"]) in {key(f["ends"]) for f in ours})
            by_key = collections.defaultdict(list)
            for f in ours:
                by_key[key(f["ends"])].append(f)
            for f in by_key.values():
                f.sort(key=lambda x: x["start"])
            mism = collections.Counter()
            for r in ref:
                cand = by_key.get(key(r["ends"]))
                facts_of = "tunnelled" if r["tunnelled"] else "connection"
                if not cand:
                    what = (name, "tunnelled" if r["tunnelled"] else "connection")
                    total["connection"] += 1
                    if what in listed:
                        seen_listed.add(what)
                        continue
                    unlisted.append({"capture": name, "fact": facts_of, "stream": r["stream"],
                                     "ends": r["ends"], "ours": "missing"})
                    mism["connection"] += 1
                    continue
                q = cand.pop(0)
                total["connection"] += 1
                if q["packets"] == 0:
                    # the capture holds other hosts' traffic (a router's or a mirror's): the
                    # import read it as its owner's and left this connection out, counted
                    what = (name, "left out")
                    if what in listed:
                        seen_listed.add(what)
                        agree["left out (listed)"] += 1
                        kinds["left out"][listed[what].split(":")[0]] += 1
                    else:
                        unlisted.append({"capture": name, "fact": "left out", "stream": r["stream"],
                                         "ends": r["ends"], "qreplay": "left out"})
                    continue
                n_matched += 1
                agree["connection"] += 1
                # the opener: qreplay's flow source must be tshark's opener
                flip = q["ends"][0] != r["ends"][0]
                def judge(fact, ok, definition, row):
                    """Count one comparison: agreed, a difference of definition the check
                    computes itself, listed in differences.tsv, or a failure."""
                    total[fact] += 1
                    if ok:
                        agree[fact] += 1
                    elif definition:
                        agree[fact + " (listed)"] += 1
                        kinds[fact]["definition"] += 1
                    elif (name, fact) in listed:
                        seen_listed.add((name, fact))
                        agree[fact + " (listed)"] += 1
                        kinds[fact][listed[(name, fact)].split(":")[0]] += 1
                    else:
                        mism[fact] += 1
                        unlisted.append(dict({"capture": name, "fact": fact,
                                              "stream": r["stream"], "ends": r["ends"]}, **row))

                for fact in FACTS:
                    qv = q[fact]
                    if flip and fact in ("bytes0", "bytes1"):
                        qv = q["bytes1" if fact == "bytes0" else "bytes0"]
                    # differences of definition the check finds itself (D-SACK, Eifel, hole
                    # fillers sent after the rest)
                    own = {"spurious": "spurious_dsack", "out_of_order": "ooo_def",
                           "resent": "resent_def"}.get(fact)
                    want = r[own] if own else None
                    if fact == "spurious":  # + those already held where the receiver was captured
                        want += sum(r["held_dir"][k] for k in (0, 1)
                                    if r["ends"][k ^ 1][0] in q["owners"])
                    at_sender = sum(r["ooo_dir"][k] for k in (0, 1)
                                    if r["ends"][k][0] in q["owners"])
                    if fact == "resent":
                        want += at_sender
                    if fact == "out_of_order":
                        want -= at_sender
                    judge(fact, qv == r[fact], own is not None and qv == want,
                          {"tshark": r[fact], "qreplay": qv})
                # conservation: the recording holds the captured bytes and those of the drops
                # it made up, nothing else; and no drop where tshark sees no resend
                k = 1 if flip else 0
                for side in (0, 1):
                    rd = side ^ k  # the reference's direction of the recording's side
                    val = (f"recording {q['rec_bytes'][side]} B ({q['made_bytes'][side]} made "
                           f"up), captured {r['cap_bytes'][rd]} B")
                    judge("conservation",
                          q["rec_bytes"][side] - q["made_bytes"][side] == r["cap_bytes"][rd],
                          False, {"direction": rd, "tshark": val, "qreplay": val})
                    val = (f"{q['drops_dir'][side]} drops, tshark sees {r['resent_dir'][rd]} "
                           "resends or hole fillers")
                    judge("drops supported", q["drops_dir"][side] <= r["resent_dir"][rd], False,
                          {"direction": rd, "tshark": val, "qreplay": val})
            for extra in by_key.values():
                for q in extra:
                    total["connection"] += 1
                    unlisted.append({"capture": name, "fact": "connection", "ends": q["ends"],
                                     "tshark": "missing"})
            rows.append({"capture": name, "connections": len(ref), "disagreements": dict(mism)})
            print(f"{name}: {len(ref)} connections, "
                  f"{sum(mism.values())} unlisted disagreement(s)", file=sys.stderr)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    checked = set(files)  # with --only, the rows of other captures are neither used nor stale
    stale = sorted(k for k in set(listed) - seen_listed if k[0] in checked)
    print(f"corpus: {len(files)} captures, {n_conns} connections (tshark), {n_matched} matched")
    print(f"drops the import recorded: {drops}; data segments tshark sees resent in the same "
          f"connections: {resends}")
    print(f"{'fact':<16}{'agree':>8}{'listed':>8}{'of':>8}")
    print(f"{'left out':<16}{0:>8}{agree['left out (listed)']:>8}{total['connection']:>8}"
          "   (connections whose timing does not say which of their ends a capture was next to)")
    for fact in ["connection"] + FACTS + ["duplicates", "conservation", "drops supported"]:
        print(f"{fact:<16}{agree[fact]:>8}{agree[fact + ' (listed)']:>8}{total[fact]:>8}")
    for u in unlisted if a.verbose else unlisted[:40]:
        print("DISAGREE", json.dumps(u, default=str))
    if len(unlisted) > 40 and not a.verbose:
        print(f"... {len(unlisted) - 40} more (-v)")
    for s in stale:
        print(f"LISTED BUT AGREES NOW: {s[0]}\t{s[1]} (remove it from {diff_path})")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"captures": len(files), "connections": n_conns, "matched": n_matched, "drops": drops, "resends": resends,
                       "kinds": kinds, "refused": refused,
                       "agree": agree, "total": total, "unlisted": unlisted, "stale": stale,
                       "rows": rows}, fh, indent=1, default=str)
    if a.update:
        keep = [(k, r) for k, r in listed.items() if k not in set(stale)]
        new = collections.OrderedDict()
        for u in unlisted:
            k = (u["capture"], u["fact"])
            if k in new:
                continue
            n = sum(1 for x in unlisted if (x["capture"], x["fact"]) == k)
            new[k] = (f"defect: {u['error']}" if "error" in u else
                      f"defect: {n} connection(s) disagree, e.g. stream {u.get('stream')}: "
                      f"tshark {u.get('tshark')}, qreplay {u.get('qreplay')}")
        with open(diff_path, "w") as fh:
            fh.write("".join(h + "\n" for h in header))
            for (c, f), r in keep + list(new.items()):
                fh.write(f"{c}\t{f}\t{r}\n")
        print(f"{diff_path}: {len(stale)} row(s) dropped, {len(new)} added")
        return 0
    ok = not unlisted and not stale
    print(f"{sum(agree[f] for f in FACTS)} passed, {len(unlisted) + len(stale)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
