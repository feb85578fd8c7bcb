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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the oomlint binary under test")
    ap.add_argument("--unit", help="the unit-test binary")
    ap.add_argument("-k", help="run only tests whose name contains this")
    ap.add_argument("-v", action="store_true", help="print every test name")
    ap.add_argument("--groups", help="run only these groups of tests, comma-separated (e.g. fixture,cli);"
                    " 'unit' is the unit-test binary")
    ap.add_argument("--exclude", action="append", default=[], metavar="SUBSTRING",
                    help="leave out the tests whose name contains this (repeatable; they are counted as excluded)")
    args = ap.parse_args()
    harness.BIN = os.path.abspath(args.bin)

    passed = failed = excluded = 0
    skipped = []
    failures = []
    groups_wanted = set(args.groups.split(",")) if args.groups else None
    if args.unit and not args.k and (groups_wanted is None or "unit" in groups_wanted):
        p, f, out = run_unit(args.unit)
        passed += p
        failed += f
        if f:
            failures.append(("unit tests", out))
        print(f"unit: {p} passed, {f} failed", flush=True)

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
    import explain_tests  # noqa: F401

    groups = {}
    for name, fn in harness.TESTS:
        if args.k and args.k not in name:
            continue
        group = name.split(":", 1)[0]
        if groups_wanted is not None and group not in groups_wanted:
            continue
        if any(x in name for x in args.exclude):
            excluded += 1
            if args.v:
                print(f"excl {name}", flush=True)
            continue
        try:
            fn()
            passed += 1
            groups.setdefault(group, [0, 0])[0] += 1
            if args.v:
                print(f"ok   {name}", flush=True)
        except harness.Skip as why:
            skipped.append((name, str(why)))
            print(f"skip {name}: {why}", flush=True)
        except Exception as e:  # a test's failure, whatever raised it
            failed += 1
            groups.setdefault(group, [0, 0])[1] += 1
            detail = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
            failures.append((name, detail))
            print(f"FAIL {name}", flush=True)
    for group, (p, f) in sorted(groups.items()):
        print(f"{group}: {p} passed, {f} failed")
    for name, detail in failures:
        print(f"\n==== {name}\n{detail.rstrip()}")
    if excluded:
        print(f"excluded on purpose: {excluded} ({', '.join(args.exclude)})")
    if skipped:
        print(f"skipped, not run on this machine: {len(skipped)}")
        for name, why in skipped:
            print(f"  {name}: {why}")
    print(f"\n{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
