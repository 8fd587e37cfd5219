"""Drawing helpers shared by the figures: series sampled at packet arrivals."""
import os

import numpy as np


def gaps(t, factor=100.0, span_fraction=0.005):
    """Indices i where the stretch t[i] -> t[i+1] holds no arrival for longer than
    max(factor x the median spacing, span_fraction of the whole span): a gap, not a trend."""
    t = np.asarray(t, dtype=float)
    if len(t) < 3:
        return np.array([], dtype=int)
    dt = np.diff(t)
    limit = max(factor * float(np.median(dt)), span_fraction * float(t[-1] - t[0]))
    return np.nonzero(dt > limit)[0]


def arrival_steps(ax, t, y, shade_gaps=True, gap_label="no arrivals", **kw):
    """Draw values seen at arrivals as steps (each value held until the next arrival), broken at
    gaps, which are shaded: no line crosses a stretch without arrivals. Returns the gaps drawn as
    (start, end) pairs."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(t) == 0:
        return []
    g = gaps(t)
    bounds = [0] + [i + 1 for i in g] + [len(t)]
    label = kw.pop("label", None)
    color = kw.pop("color", None)
    spans = []
    for k in range(len(bounds) - 1):
        a, b = bounds[k], bounds[k + 1]
        line, = ax.step(t[a:b], y[a:b], where="post", label=label if k == 0 else None,
                        color=color, **kw)
        color = line.get_color()
    for i in g:
        spans.append((t[i], t[i + 1]))
    if shade_gaps:
        labelled = any(getattr(p, "_qr_gap", False) for p in ax.patches)
        for s, e in spans:
            p = ax.axvspan(s, e, color="0.85", alpha=0.5, lw=0,
                           label=None if labelled else gap_label)
            p._qr_gap = True
            labelled = True
    return spans


_made = []  # output folders this process created (taken back if it fails before any figure)


def make_outdir(path):
    """mkdir -p path, remembering the folders it made."""
    path = os.path.abspath(path)
    missing = []
    p = path
    while p and not os.path.isdir(p):
        missing.append(p)
        p = os.path.dirname(p)
    os.makedirs(path, exist_ok=True)
    _made.extend(missing)


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def save(fig, outdir, name, quiet):
    """Write fig as outdir/name.png and .pdf (and say so unless quiet), then close it. Each file is
    written under a temporary name and renamed: a figure is whole or absent. A write that fails (a
    full disk) ends the script with one line naming the file and exit status 1, leaving no partial
    file and no folder it made empty."""
    import sys

    import matplotlib.pyplot as plt
    path = outdir
    try:
        for ext in ("png", "pdf"):
            path = os.path.join(outdir, name + "." + ext)
            tmp = os.path.join(outdir, ".%s.%s.partial-%d" % (name, ext, os.getpid()))
            try:
                fig.savefig(tmp, format=ext, dpi=150 if ext == "png" else None,
                            bbox_inches="tight")
                os.replace(tmp, path)
            except BaseException:
                _unlink(tmp)
                raise
            if not quiet:
                print("figure             " + path)
    except Exception as e:
        # the write's own error, also where the writer failed again while handling it (the PDF
        # backend raises AttributeError after a full disk's OSError)
        cause = e
        while cause is not None and not isinstance(cause, OSError):
            cause = cause.__context__ or cause.__cause__
        if cause is None:
            raise
        prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "plot"
        print("%s: cannot write %s: %s" % (prog, path, cause.strerror or cause), file=sys.stderr)
        for d in _made:  # deepest first
            try:
                os.rmdir(d)  # only if empty
            except OSError:
                break
        sys.exit(1)
    finally:
        plt.close(fig)


def figure_args(argv, doc, what):
    """The command line every single-file figure script takes (FILE [-o DIR] [--quiet]) and that
    file opened: (args, the h5py file, the output folder), or None after printing why (the
    caller exits 1). `what` names the file for --help ("butterfly.h5")."""
    import argparse
    import sys

    import h5py
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("path", help=what)
    ap.add_argument("-o", "--out", help="output folder")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "plot"
    try:
        f = h5py.File(a.path, "r")
    except OSError as e:
        print("%s: %s: %s" % (prog, a.path, e), file=sys.stderr)
        return None
    outdir = a.out or os.path.join(os.path.dirname(os.path.abspath(a.path)), "figures")
    return a, f, outdir


def not_a(f, path, groups, kind):
    """True (after saying so) when f lacks one of groups: not a `kind` result."""
    import sys
    if all(g in f for g in groups):
        return False
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "plot"
    print("%s: %s: not a %s result" % (prog, path, kind), file=sys.stderr)
    return True


def figure_main(argv, doc, what, groups, kind, drawers):
    """main() of a figure script of one result file: open it (figure_args), check it is a `kind`
    result (not_a), and call every drawer(f, outdir, quiet). Returns the exit status."""
    got = figure_args(argv, doc, what)
    if got is None:
        return 1
    a, f, outdir = got
    if not_a(f, a.path, groups, kind):
        return 1
    make_outdir(outdir)
    for draw in drawers:
        draw(f, outdir, a.quiet)
    return 0
