#!/usr/bin/env python3
"""oomlint's test suite.

Runs, against a built oomlint binary:
  - the C unit tests (build/oomlint-unit), counted test by test;
  - the fixture harness: for every fixtures/**/*.py and *.ipynb, the set of
    (code, line) oomlint reports must equal the file's `# expect: CODE`
    markers exactly; every `x.fixed.py` beside a fixture must equal what
    `oomlint --fix` makes of `x.py` (and `x.unsafe-fixed.py` what
    `--fix --unsafe-fixes` makes of it), and a second --fix must change nothing;
  - CLI tests (tests/cli_tests.py), robustness tests (tests/robustness_tests.py),
    configuration tests (tests/config_tests.py) and safety tests
    (tests/safety_tests.py: no lost or half-written file, no hang, no failure
    reported as success);
  - the precision measurement on real code (tests/accuracy_tests.py: the
    script joining findings with hand labels, and the committed corpus files);
  - the CI consumers: SARIF against the schema and the SARIF Multitool
    (tests/sarif_tests.py), GitHub annotations, the Action and its documented
    workflow (tests/github_tests.py), and the pre-commit hooks run by pre-commit
    itself (tests/precommit_tests.py);
  - installing it: make install, the man page, the wheel and the source
    tarball installed with pip into fresh venvs (tests/install_tests.py);
  - the language server: the wire protocol and its bad inputs
    (tests/server_tests.py), and real clients driving it: Node with
    vscode-languageserver-protocol, headless Neovim, Vim with ALE, Emacs with
    eglot, and the VS Code extension's packaging (tests/editor_tests.py);
  - the probe on the CPU (tests/probe_tests.py): scenarios, verdicts, --script,
    the committed figures in the rule docs;
  - `oomlint explain` (tests/explain_tests.py): every form of the error, the
    ranking of findings on the failing stack, snapshots, bounds.

Only the standard library is used. The closing line is "N passed, N failed".
"""
import argparse
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import harness  # noqa: E402


def run_unit(unit_bin):
    """Runs the C unit tests; returns (passed, failed, output)."""
    proc = subprocess.run([unit_bin], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    m = re.search(r"unit: (\d+) passed, (\d+) failed", out)
    if not m:
        return 0, 1, out
    passed, failed = int(m.group(1)), int(m.group(2))
    if proc.returncode != 0 and failed == 0:
        failed = 1
    return passed, failed, out


def register_all():
    import fixture_tests  # noqa: F401  (registers tests)
    import cli_tests  # noqa: F401
    import robustness_tests  # noqa: F401
    import crasher_tests  # noqa: F401
    import supervise_tests  # noqa: F401
    import scaling_tests  # noqa: F401
    import pathological_tests  # noqa: F401
    import config_tests  # noqa: F401
    import sarif_tests  # noqa: F401
    import github_tests  # noqa: F401
    import precommit_tests  # noqa: F401
    import conventions_tests  # noqa: F401
    import install_tests  # noqa: F401
    import server_tests  # noqa: F401
    import editor_tests  # noqa: F401
    import safety_tests  # noqa: F401
    import accuracy_tests  # noqa: F401
    import probe_tests  # noqa: F401
    import habits_tests  # noqa: F401
    import architecture_tests  # noqa: F401
    import explain_tests  # noqa: F401


def run_one(case):
    """Runs one test: ("ok" | "skip" | "FAIL", detail, seconds)."""
    t0 = time.monotonic()
    try:
        case.fn()
        return "ok", "", time.monotonic() - t0
    except harness.Skip as why:
        return "skip", str(why), time.monotonic() - t0
    except Exception as e:  # a test's failure, whatever raised it
        detail = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
        return "FAIL", detail, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the oomlint binary under test")
    ap.add_argument("--unit", help="the unit-test binary")
    ap.add_argument("-k", help="run only tests whose name contains this")
    ap.add_argument("-v", action="store_true", help="print every test's name and time")
    ap.add_argument("--groups", help="run only these groups of tests, comma-separated (e.g. fixture,cli);"
                    " 'unit' is the unit-test binary")
    ap.add_argument("--suite", choices=("fast", "slow", "all"), default="all",
                    help="fast: what `make test` runs after every change; slow: the groups and tests marked slow"
                    " (`make check`); all: both (the default)")
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="tests run side by side (each starts its own processes); 1 by default")
    ap.add_argument("--exclude", action="append", default=[], metavar="SUBSTRING",
                    help="leave out the tests whose name contains this (repeatable; they are counted as excluded)")
    args = ap.parse_args()
    harness.BIN = os.path.abspath(args.bin)
    started = time.monotonic()

    passed = failed = excluded = 0
    skipped = []
    failures = []
    groups_wanted = set(args.groups.split(",")) if args.groups else None
    if (args.unit and not args.k and (groups_wanted is None or "unit" in groups_wanted)
            and args.suite != "slow"):
        t0 = time.monotonic()
        p, f, out = run_unit(args.unit)
        passed += p
        failed += f
        if f:
            failures.append(("unit tests", out))
        print(f"unit: {p} passed, {f} failed ({time.monotonic() - t0:.1f} s)", flush=True)

    register_all()
    cases = []
    for case in harness.TESTS:
        if args.k and args.k not in case.name:
            continue
        if groups_wanted is not None and case.group not in groups_wanted:
            continue
        if (args.suite == "fast" and case.slow) or (args.suite == "slow" and not case.slow):
            continue
        if any(x in case.name for x in args.exclude):
            excluded += 1
            if args.v:
                print(f"excl {case.name}", flush=True)
            continue
        cases.append(case)

    # Groups are reported in the order they were registered, each once its
    # last test has finished: a line per group with its count and the time
    # its tests took, so a long run shows where it is.
    order = []
    left = {}
    for case in cases:
        if case.group not in left:
            order.append(case.group)
            left[case.group] = 0
        left[case.group] += 1
    tally = {g: [0, 0, 0, 0.0] for g in order}  # passed, failed, skipped, seconds
    total_groups = len(order)
    done_groups = [0]

    def finish(case, verdict, detail, secs):
        nonlocal passed, failed
        t = tally[case.group]
        t[3] += secs
        if verdict == "ok":
            passed += 1
            t[0] += 1
            if args.v:
                print(f"ok   {secs:6.1f}s {case.name}", flush=True)
        elif verdict == "skip":
            skipped.append((case.name, detail))
            t[2] += 1
            print(f"skip {case.name}: {detail}", flush=True)
        else:
            failed += 1
            t[1] += 1
            failures.append((case.name, detail))
            print(f"FAIL {case.name}", flush=True)
        left[case.group] -= 1
        if left[case.group] == 0:
            done_groups[0] += 1
            extra = f", {t[2]} skipped" if t[2] else ""
            print(f"[{done_groups[0]}/{total_groups}] {case.group}: {t[0]} passed, {t[1]} failed{extra}"
                  f" ({t[3]:.1f} s)", flush=True)

    if args.jobs <= 1:
        for case in cases:
            finish(case, *run_one(case))
    else:
        import concurrent.futures
        import threading
        lock = threading.Lock()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_one, case): case for case in cases}
            for fut in concurrent.futures.as_completed(futures):
                with lock:
                    finish(futures[fut], *fut.result())

    for name, detail in failures:
        print(f"\n==== {name}\n{detail.rstrip()}")
    if excluded:
        print(f"excluded on purpose: {excluded} ({', '.join(args.exclude)})")
    if skipped:
        print(f"skipped, not run on this machine: {len(skipped)}")
        for name, why in skipped:
            print(f"  {name}: {why}")
    suite = {"fast": "the fast suite", "slow": "the slow suite", "all": "every test"}[args.suite]
    print(f"\n{passed} passed, {failed} failed, {len(skipped)} skipped ({suite}, "
          f"{time.monotonic() - started:.0f} s)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
