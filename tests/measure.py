"""Running oomlint with its cost measured, for the tests that bound time and
memory (scaling_tests.py, pathological_tests.py).

Time is CPU time (user + system) of oomlint and every process it starts,
from wait4(): unlike wall time it does not grow when the machine's cores are
busy with other work, so a bound can be generous and still catch a path that
turned quadratic. Memory is the peak resident set of the largest of them.
Sanitizer builds (build/san/) run several times slower and bigger; tests
scale their inputs down there with `scale()`.

oomlint is started by a small launcher (a fresh Python that forks and execs
it, then reports its rusage on a pipe), not by this process directly: on
Linux, exec records the peak RSS of the memory it replaces, so a process
forked from a test runner that has grown to hundreds of MB would report that
size as oomlint's peak.
"""
import json
import os
import signal
import subprocess
import sys
import time

import harness


class Measured:
    def __init__(self, code, out, err, cpu, rss_mb, wall):
        self.code, self.out, self.err = code, out, err
        self.cpu, self.rss_mb, self.wall = cpu, rss_mb, wall

    def __repr__(self):
        return (f"exit {self.code}, {self.cpu:.1f} s CPU, {self.rss_mb:.0f} MB peak RSS, {self.wall:.1f} s wall\n"
                f"--- stdout\n{self.out[:2000]}\n--- stderr\n{self.err[-2000:]}")


def sanitized():
    return os.sep + "san" + os.sep in harness.BIN


def scale(size):
    """Input sizes for sanitizer builds: a quarter, as they run 3-5x slower."""
    return size / 4 if sanitized() else size


# argv: [write fd, program, args...]. Exits as the program did (a signal as
# 128 + its number, and the signal on the pipe).
LAUNCHER = r"""
import json, os, sys
fd = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.close(fd)
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
os.write(fd, json.dumps({"cpu": ru.ru_utime + ru.ru_stime, "maxrss_kb": ru.ru_maxrss, "signal": sig}).encode())
os.close(fd)
sys.exit(128 + sig if sig else os.WEXITSTATUS(status))
"""


def launcher_python():
    """The system's Python where there is one: a test may drop to another user
    (preexec_fn) who cannot read a Python installed under root's home."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def run(*args, cwd=None, env=None, timeout=300, stdin=None, preexec_fn=None, binary=None):
    """Runs oomlint (or `binary`), returns a Measured. A run past `timeout`
    seconds of wall time is killed (with its children) and fails the test."""
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.pop("FORCE_COLOR", None)
    if sanitized() and "ASAN_OPTIONS" not in full_env:
        # AddressSanitizer keeps up to 256 MB of freed memory in quarantine by
        # default: a memory bound would measure that, not oomlint
        full_env["ASAN_OPTIONS"] = "quarantine_size_mb=16"
    if env:
        full_env.update(env)
    start = time.time()
    out_path = os.path.join(cwd or "/tmp", f".measure-out-{os.getpid()}")
    err_path = out_path + ".err"
    report_r, report_w = os.pipe()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            proc = subprocess.Popen([launcher_python(), "-c", LAUNCHER, str(report_w), binary or harness.BIN, *args],
                                    cwd=cwd, env=full_env, stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL if stdin is None else stdin, preexec_fn=preexec_fn,
                                    start_new_session=True, pass_fds=(report_w,))
        finally:
            os.close(report_w)
        deadline = start + timeout
        status = None
        while status is None:
            pid, st, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = st
                break
            if time.time() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                os.close(report_r)
                raise AssertionError(f"oomlint ran past {timeout} s: {args}")
            time.sleep(0.05)
    with os.fdopen(report_r, "rb") as f:
        report = json.loads(f.read().decode() or "null")
    if report is None:
        raise AssertionError(f"the launcher did not report (exit {os.waitstatus_to_exitcode(status)}): {args}")
    proc.returncode = -report["signal"] if report["signal"] else os.waitstatus_to_exitcode(status)
    wall = time.time() - start
    with open(out_path, "rb") as f:
        stdout = f.read().decode("utf-8", "replace")
    with open(err_path, "rb") as f:
        stderr = f.read().decode("utf-8", "replace")
    os.unlink(out_path)
    os.unlink(err_path)
    m = Measured(proc.returncode, stdout, stderr, report["cpu"], report["maxrss_kb"] / 1024.0, wall)
    if m.code < 0 or m.code > 2:
        raise AssertionError(f"oomlint crashed or exited oddly: {args}\n{m!r}")
    if "ERROR: AddressSanitizer" in stderr or "runtime error:" in stderr or "LeakSanitizer" in stderr:
        raise AssertionError(f"sanitizer report for {args}:\n{stderr[-4000:]}")
    return m


def assert_linear(what, small, big, factor=8, slack=1.0):
    """The CPU seconds of a run at N and at 4N: a linear path does about 4
    times the work, and stays under `factor` times plus `slack` seconds (for
    start-up and noise) on a loaded machine; a quadratic one does 16 times.
    Comparing two runs of the same build on the same machine keeps the bound
    independent of how fast that machine or that build (sanitized) is."""
    assert big < factor * small + slack, (f"{what}: {small:.2f} s of CPU at N, {big:.2f} s at 4N "
                                          f"(a linear path stays under {factor}x + {slack} s)")


def xfail(reason):
    """Marks a test as expected to fail until `reason` is dealt with: its
    failure passes (with a note), and its passing fails, so the marker is
    removed as soon as it is no longer true."""
    def wrap(fn):
        def run_expecting_failure():
            try:
                fn()
            except AssertionError as e:
                print(f"  (expected failure: {reason}: {str(e).splitlines()[0][:160]})", flush=True)
                return
            raise AssertionError(f"passes now: remove the xfail marker ({reason})")
        return run_expecting_failure
    return wrap
