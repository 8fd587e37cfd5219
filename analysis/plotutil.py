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


def save(fig, outdir, name, quiet):
    """Write fig as outdir/name.png and .pdf (and say so unless quiet), then close it."""
    import matplotlib.pyplot as plt
    for ext in ("png", "pdf"):
        path = os.path.join(outdir, name + "." + ext)
        fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight")
        if not quiet:
            print("figure             " + path)
    plt.close(fig)
