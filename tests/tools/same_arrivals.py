#!/usr/bin/python3
"""Whether two arrival logs (docs/FORMATS.md) hold the same arrivals of the same recording: every
byte equal but the last 32 of the fourth format's trailer, which name the run that wrote each (two
replays are two runs). Prints "same arrivals: N records" and exits 0, or says where they differ
and exits 1.

  tests/tools/same_arrivals.py A.qra B.qra
"""
import struct
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    a, b = (open(p, "rb").read() for p in sys.argv[1:])
    for p, d in zip(sys.argv[1:], (a, b)):
        if d[:8] != b"QRARRV4\n" or len(d) < 8 + 80 or d[-80:-72] != b"QRAEND4\n":
            print("%s: not a whole arrival log of the fourth format" % p, file=sys.stderr)
            return 1
    if len(a) != len(b):
        print("the logs differ in size: %d and %d bytes" % (len(a), len(b)), file=sys.stderr)
        return 1
    body = len(a) - 32
    if a[:body] != b[:body]:
        at = next(i for i in range(body) if a[i] != b[i])
        print("the logs differ at byte %d" % at, file=sys.stderr)
        return 1
    print("same arrivals: %d records" % struct.unpack("<Q", a[-72:-64])[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
