#!/usr/bin/python3
"""The functions longer than a limit, longest first: a contributor's list of what to split.

A function is counted from the line of its name (a line starting with an identifier and holding
an opening parenthesis, not a declaration) to the line holding only its closing brace, as
./waf format lays out the C and C++ of this repository. It is a report, not a check: nothing
fails.

Usage: long_functions.py [--limit N] [DIR...]   (default: 100 lines; core program ns3-module
testbed under the repository)
"""
import os
import re
import sys

HEAD = re.compile(r"^[A-Za-z_].*\(")
NAME = re.compile(r"([A-Za-z_0-9:~]+)\s*\(")


def functions(path):
    """(lines, name) of every function in one source file."""
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    start = name = None
    for i, line in enumerate(lines):
        if start is None and HEAD.match(line) and not line.startswith(("#", "typedef")) \
                and not line.rstrip().endswith(";"):
            m = NAME.search(line)
            start, name = i, m.group(1) if m else "?"
        elif start is not None and line == "}":
            yield i - start + 1, name
            start = None
        elif start is not None and i == start and line.rstrip().endswith(";"):
            start = None


def main(argv):
    limit = 100
    if len(argv) > 1 and argv[0] == "--limit":
        limit, argv = int(argv[1]), argv[2:]
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    dirs = argv or [os.path.join(top, d) for d in ("core", "program", "ns3-module", "testbed")]
    found = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in files:
                if f.endswith((".c", ".cc")):
                    p = os.path.join(root, f)
                    found += [(n, os.path.relpath(p, top), name) for n, name in functions(p)
                              if n > limit]
    for n, p, name in sorted(found, reverse=True):
        print("%5d  %s  %s" % (n, p, name))
    print("%d functions over %d lines" % (len(found), limit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
