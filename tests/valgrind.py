#!/usr/bin/env python3
"""`make valgrind`: the command line over every fixture, crash regression and
example under valgrind's memcheck, in every output format, with --diff and
--fix (unsafe fixes on, on a copy), with a configuration file and on
standard input. Any memory error or definite leak, in the supervisor or in
the child that lints (valgrind follows the fork), fails the run: valgrind
exits 99 (--error-exitcode) and oomlint passes a child's status on.

    python3 tests/valgrind.py --bin build/oomlint
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ERROR_EXIT = 99

VALGRIND = ["valgrind", "--tool=memcheck", f"--error-exitcode={ERROR_EXIT}", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite", "--track-fds=no",
            "--child-silent-after-fork=no", "--num-callers=30", "-q"]


def inputs():
    return [os.path.join(ROOT, "fixtures"), os.path.join(ROOT, "examples"), os.path.join(HERE, "crashers")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    failures = 0
    work = tempfile.mkdtemp(prefix="oomlint-valgrind-")
    try:
        copy = os.path.join(work, "copy")
        os.makedirs(copy)
        for src in inputs():
            shutil.copytree(src, os.path.join(copy, os.path.basename(src)))
        with open(os.path.join(copy, "pyproject.toml"), "w") as f:
            f.write('[tool.oomlint]\nextend-select = ["OOM401"]\nexclude = ["legacy"]\n\n'
                    '[tool.oomlint.per-file-ignores]\n"fixtures/OOM1*/*" = ["OOM102"]\n')
        runs = []
        for fmt in ("text", "json", "sarif", "github"):
            runs.append((f"--format {fmt}", ["--isolated", "--select", "ALL", "--format", fmt, "--color",
                                             "always", *inputs()], None, ROOT))
        runs.append(("--statistics", ["--isolated", "--statistics", *inputs()], None, ROOT))
        runs.append(("--diff --unsafe-fixes", ["--isolated", "--select", "ALL", "--diff", "--unsafe-fixes",
                                               *inputs()], None, ROOT))
        runs.append(("configuration", ["--format", "json", "."], None, copy))
        runs.append(("--show-settings", ["--show-settings", "fixtures/OOM101"], None, copy))
        runs.append(("--fix --unsafe-fixes", ["--select", "ALL", "--fix", "--unsafe-fixes", "."], None, copy))
        with open(os.path.join(ROOT, "examples", "train.py"), "rb") as f:
            example = f.read()
        runs.append(("stdin", ["--format", "json", "-", "--stdin-filename", "train.py"], example, ROOT))
        runs.append(("stdin --fix", ["--fix", "--unsafe-fixes", "-"], example, ROOT))
        # one thread: the injected abort kills the child where it stands, and a
        # second thread caught between a malloc and its free (a pointer held in
        # a register) would be reported as a definite leak that no run without
        # the abort has; the supervisor's side of the crash is checked all the same
        runs.append(("a crash set aside", ["--format", "sarif", "-j", "1", *inputs()], None, ROOT))
        for name, argv, stdin, cwd in runs:
            env = dict(os.environ, NO_COLOR="1")
            if name == "a crash set aside":
                env["OOMLINT_TEST_FAULT"] = "abort:fixtures/OOM103"
            start = time.time()
            proc = subprocess.run(VALGRIND + [binary, *argv], cwd=cwd, input=stdin, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=env, timeout=1800)
            err = proc.stderr.decode("utf-8", "replace")
            bad = proc.returncode == ERROR_EXIT or "==" in err and ("Invalid " in err or "definitely lost" in err
                                                                   or "uninitialised" in err)
            expected = (2,) if name == "a crash set aside" else (0, 1)
            status = "ok" if not bad and proc.returncode in expected else "FAIL"
            print(f"valgrind: {status:4} {name} (exit {proc.returncode}, {time.time() - start:.0f} s)", flush=True)
            if status != "ok":
                failures += 1
                print(err[-6000:])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"valgrind: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
