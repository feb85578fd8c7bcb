#!/usr/bin/env python3
"""How oomlint's time grows with file size: measures and prints, asserts
nothing (tests/scaling_tests.py holds the asserting tests).

For each kind of generated file (tests/bigfiles.py) and each size, runs
`oomlint --timings -j1 --select ALL` on it and prints each phase's and each
rule's time, then the growth exponent between the two largest sizes: about
1 is linear, 2 is quadratic. A phase whose exponent is well above 1 on any
kind is a super-linear path to find (perf record, callgrind) and fix.

    python3 bench/scaling.py [--bin build/oomlint] [--kinds training,imports] [--sizes 0.5,1,2]
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import bigfiles  # noqa: E402


def measure(binary, path, timeout):
    env = dict(os.environ, OOMLINT_NO_SUPERVISOR="1")
    start = time.time()
    try:
        proc = subprocess.run([binary, "--isolated", "--select", "ALL", "-j1", "-q", "--timings", "--format",
                               "json", path], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, timeout
    wall = time.time() - start
    phases = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"\s+(\S+)\s+([0-9.]+) s", line)
        if m and m.group(1) not in ("throughput",):
            phases[m.group(1)] = float(m.group(2))
    return phases, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--kinds", default=",".join(bigfiles.KINDS))
    ap.add_argument("--sizes", default="0.5,1,2", help="megabytes, ascending")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            rows = []
            for mb in sizes:
                path = os.path.join(tmp, f"{kind}.py")
                with open(path, "w") as f:
                    f.write(bigfiles.KINDS[kind](mb))
                phases, wall = measure(args.bin, path, args.timeout)
                rows.append((mb, phases, wall))
                if phases is None:
                    break
            print(f"== {kind}")
            for mb, phases, wall in rows:
                if phases is None:
                    print(f"  {mb:6.2f} MB  timed out after {wall:.0f} s")
                    continue
                top = sorted(((v, k) for k, v in phases.items() if v > 0.05 * wall), reverse=True)[:6]
                print(f"  {mb:6.2f} MB  wall {wall:7.2f} s  " + "  ".join(f"{k} {v:.2f}" for v, k in top))
            done = [r for r in rows if r[1] is not None]
            if len(done) >= 2:
                (m0, p0, w0), (m1, p1, w1) = done[-2], done[-1]
                ratio = math.log(m1 / m0)
                growth = {k: math.log(max(p1.get(k, 0), 1e-3) / max(p0.get(k, 0), 1e-3)) / ratio
                          for k in p1 if p1.get(k, 0) > 0.05}
                worst = sorted(((v, k) for k, v in growth.items()), reverse=True)[:5]
                print(f"  growth exponent: wall {math.log(max(w1, 1e-3) / max(w0, 1e-3)) / ratio:.2f}  " +
                      "  ".join(f"{k} {v:.2f}" for v, k in worst))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
