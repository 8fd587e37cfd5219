#!/usr/bin/python3
"""Compare two qreplay result files: every summary attribute of results.h5 (the root's, /runtime's,
/sampling/*'s and each /replay/<variant>'s) or every table of butterfly.h5, value for value.

    compare_results.py BEFORE.h5 AFTER.h5

Attributes that name the code (code_version) and wall-clock measurements (wall_s) are left out.
Exit status 0 when equal, 1 with the differences listed otherwise."""
import sys

import h5py
import numpy as np

SKIP_ATTRS = {"code_version"}
SKIP_FIELDS = {"wall_s"}


def attrs(obj):
    return {k: v for k, v in obj.attrs.items() if k not in SKIP_ATTRS}


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def compare_attrs(name, a, b, out):
    x, y = attrs(a), attrs(b)
    for k in sorted(set(x) | set(y)):
        if k not in x or k not in y:
            out.append("%s: attribute %s only in %s" % (name, k, "after" if k in y else "before"))
        elif not same(x[k], y[k]):
            out.append("%s: %s = %r before, %r after" % (name, k, x[k], y[k]))


def compare_table(name, a, b, out):
    fields = [f for f in a.dtype.names if f not in SKIP_FIELDS]
    if a.shape != b.shape:
        out.append("%s: %d rows before, %d after" % (name, a.shape[0], b.shape[0]))
        return
    for f in fields:
        if f not in b.dtype.names:
            out.append("%s: field %s missing after" % (name, f))
        elif not np.array_equal(a[f][()], b[f][()]):
            out.append("%s: field %s differs" % (name, f))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    diffs = []
    with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
        kind = a.attrs.get("kind", b"")
        kind = kind.decode() if isinstance(kind, bytes) else kind
        compare_attrs("/", a, b, diffs)
        if kind == "qreplay butterfly":
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    if name not in b:
                        diffs.append("%s: missing after" % name)
                    else:
                        compare_table(name, obj, b[name], diffs)
                        compare_attrs(name, obj, b[name], diffs)
                elif name in b:
                    compare_attrs(name, obj, b[name], diffs)
            a.visititems(visit)
        else:
            groups = ["runtime"] + ["sampling/" + k for k in a.get("sampling", {})] + \
                     ["replay/" + k for k in a.get("replay", {})]
            for g in groups:
                if g not in b:
                    diffs.append("%s: missing after" % g)
                else:
                    compare_attrs(g, a[g], b[g], diffs)
    for d in diffs:
        print(d)
    print("%s: %s" % (sys.argv[2], "identical" if not diffs else "%d differences" % len(diffs)))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
