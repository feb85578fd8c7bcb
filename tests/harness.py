"""Shared helpers for oomlint's Python-driven tests: test registration, running
the binary, temporary workspaces, and reading `# expect:` markers."""
import json
import os
import re
import shutil
import subprocess
import tempfile

BIN = None  # set by run.py
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "fixtures")
TESTS = []


class Skip(Exception):
    """Raised by a test that cannot run on this machine (a GPU test where PyTorch
    sees none): counted and printed as skipped with its reason, never as passed."""

EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


# Groups that belong to the slow suite (`make check`): inputs of tens of
# megabytes, the probe's PyTorch runs, real editors, pip into fresh venvs,
# pre-commit cloning the checkout. `make test` runs everything else.
SLOW_GROUPS = {"pathological", "scaling", "probe", "install", "editors", "pre-commit"}


class TestCase:
    """A registered test: its name (`group: what it checks`), its function,
    and whether it belongs to the slow suite."""

    def __init__(self, name, fn, slow):
        self.name, self.fn = name, fn
        self.group = name.split(":", 1)[0]
        self.slow = slow or self.group in SLOW_GROUPS

    def __iter__(self):  # (name, fn), as the runner's older callers unpack it
        return iter((self.name, self.fn))


def test(name, slow=False):
    """Registers a test function under `group: name`. slow=True puts one test
    of a fast group in the slow suite (`make check`): a test whose cost is
    the size of its input or a real tool's start-up, not oomlint's logic."""
    def wrap(fn):
        TESTS.append(TestCase(name, fn, slow))
        return fn
    return wrap


class Result:
    def __init__(self, proc):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        try:
            return json.loads(self.out)
        except ValueError as e:
            raise AssertionError(f"output is not JSON ({e}):\n{self.out[:2000]}")

    def __repr__(self):
        return f"exit {self.code}\n--- stdout\n{self.out[:4000]}\n--- stderr\n{self.err[:4000]}"


def run(*args, stdin=None, cwd=None, env=None, timeout=120, binary_input=None):
    """Runs oomlint with args; never raises on exit status."""
    full_env = dict(os.environ)
    full_env.pop("FORCE_COLOR", None)
    full_env["NO_COLOR"] = "1"
    if env:
        full_env.update(env)
    if binary_input is not None:
        proc = subprocess.run([BIN, *args], input=binary_input, capture_output=True, cwd=cwd,
                              env=full_env, timeout=timeout)
        proc.stdout = proc.stdout.decode("utf-8", "replace")
        proc.stderr = proc.stderr.decode("utf-8", "replace")
    else:
        proc = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True, cwd=cwd,
                              env=full_env, timeout=timeout)
    if proc.returncode < 0 or proc.returncode > 2:
        raise AssertionError(f"oomlint crashed or exited oddly: {proc.returncode}\n"
                             f"args: {args}\nstderr: {proc.stderr[-3000:]}")
    # sanitizer reports on stderr mean a defect even when the exit code looks fine
    if "ERROR: AddressSanitizer" in proc.stderr or "runtime error:" in proc.stderr or \
            "LeakSanitizer" in proc.stderr:
        raise AssertionError(f"sanitizer report for {args}:\n{proc.stderr[-4000:]}")
    return Result(proc)


class Workspace:
    """A temporary directory; files are written relative to it."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="oomlint-test-")

    def write(self, rel, content, mode="w"):
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, mode) as f:
            f.write(content)
        return full

    def read(self, rel, mode="r"):
        with open(os.path.join(self.path, rel), mode) as f:
            return f.read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def expected_markers(path):
    """(code, line) pairs from `# expect:` markers; for notebooks (code, cell, line)."""
    found = set()
    if path.endswith(".ipynb"):
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        for index, cell in enumerate(nb.get("cells", []), start=1):
            if cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            text = "".join(src) if isinstance(src, list) else src
            for lineno, line in enumerate(text.split("\n"), start=1):
                m = EXPECT.search(line)
                if m:
                    for code in re.split(r"\s*,\s*", m.group(1).strip()):
                        found.add((code, index, lineno))
        return found
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8", "replace")
    for lineno, line in enumerate(text.split("\n"), start=1):
        m = EXPECT.search(line)
        if m:
            for code in re.split(r"\s*,\s*", m.group(1).strip()):
                found.add((code, lineno))
    return found


SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


def failing(findings, fail_on="warning"):
    """Would these JSON findings fail a run with --fail-on fail_on (exit 1)?"""
    return any(SEVERITY_RANK[f["severity"]] <= SEVERITY_RANK[fail_on] for f in findings)


def reported(findings, notebook=False):
    if notebook:
        return {(f["code"], f.get("cell"), f["line"]) for f in findings}
    return {(f["code"], f["line"]) for f in findings}
