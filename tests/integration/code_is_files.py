#!/usr/bin/env python3
"""Is the code of process PID the code of its files? Every executable mapping
of a file, byte for byte (what benchtrap promises after it detaches).
usage: code_is_files.py PID   exit 0 and the bytes compared, or 1 and where."""
import sys


def compare(pid):
    """Bytes compared; raises AssertionError naming the first difference."""
    compared = 0
    with open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in open(f"/proc/{pid}/maps"):
            f = line.split()
            if len(f) < 6 or "x" not in f[1] or not f[5].startswith("/"):
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            with open(f[5], "rb") as fh:
                fh.seek(int(f[2], 16))
                want = fh.read(hi - lo)
            mem.seek(lo)
            assert mem.read(len(want)) == want, f"{f[5]} at {lo:#x} differs"
            compared += len(want)
    assert compared > 0, "no code mapped from a file"
    return compared


if __name__ == "__main__":
    try:
        print(f"{compare(int(sys.argv[1]))} bytes of code compared")
    except AssertionError as e:
        print(f"code differs: {e}", file=sys.stderr)
        sys.exit(1)
