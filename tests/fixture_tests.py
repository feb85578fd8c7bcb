"""The fixture harness: every fixture's findings must match its `# expect:`
markers exactly, every `.fixed.py` must be what --fix makes of its
fixture, and every fixture's snapshot (`x.py.snap`, snapshots.py) must be
what oomlint reports now: message, range, help and fix; and every memory
finding must carry its evidence (a note at another place). A directory named
`project_*` is one project: its files are linted in one run and their
markers checked together. Which files are fixtures and how each is linted is
fixture_set.py's to say. Adding fixtures needs no change here; `make
snapshots` writes their snapshots."""
import os
import shutil
import stat
import subprocess
import sys

import harness
import snapshots
from fixture_set import (FIXTURES, RULE_DIR, fixture_files, invocation, project_args, project_dirs,
                         project_files)
from harness import Workspace, expected_markers, reported, run, test


# Rules that are neither memory rules nor correctness rules of a training
# loop: files that cannot be read or parsed, unused suppressions, and the
# deprecations (a deprecated call is its own evidence).
WITHOUT_EVIDENCE = ("OOM001", "OOM002", "OOM003", "OOM502", "OOM703", "OOM704")


def assert_evidence(findings, rel):
    """Every memory finding carries at least one fact it stands on (a note
    at another place: the loop, the forward, the device, the caller)."""
    bare = [f"  {f['code']} line {f['line']}: {f['message']}" for f in findings
            if f["code"] not in WITHOUT_EVIDENCE and not f.get("evidence")]
    assert not bare, f"{rel}: findings without evidence:\n" + "\n".join(bare)


def make_fixture_test(path):
    rel = os.path.relpath(path, FIXTURES)

    def check():
        args, cwd, target = invocation(path)
        result = run(*args, target, cwd=cwd)
        findings = result.json()
        notebook = path.endswith(".ipynb")
        got = reported(findings, notebook)
        want = expected_markers(path)
        missing = sorted(want - got)
        extra = sorted(got - want)
        if missing or extra:
            lines = []
            for item in missing:
                lines.append(f"  missing {item}")
            for item in extra:
                msg = next((f["message"] for f in findings
                            if (f["code"], f["line"]) == (item[0], item[-1])), "")
                lines.append(f"  extra   {item}: {msg}")
            raise AssertionError(f"{rel}:\n" + "\n".join(lines))
        assert_evidence(findings, rel)
        # info findings are shown but do not fail the run (--fail-on warning)
        assert result.code == (1 if harness.failing(findings) else 0), f"exit code {result.code} for {rel}"

    test(f"fixture: {rel}")(check)


def make_project_test(root):
    """Lints the whole directory in one run (so files see each other's
    functions) and checks every file's markers together, with any number of
    threads."""
    rel = os.path.relpath(root, FIXTURES)
    files = project_files(root)

    def check():
        args = project_args(root)
        result = run(*args, ".", cwd=root)
        findings = result.json()
        got = {(os.path.normpath(f["path"]), f["code"], f["line"]) for f in findings}
        want = set()
        for name in files:
            for code, line in expected_markers(os.path.join(root, name)):
                want.add((os.path.normpath(name), code, line))
        missing = sorted(want - got)
        extra = sorted(got - want)
        if missing or extra:
            lines = [f"  missing {item}" for item in missing]
            for item in extra:
                msg = next((f["message"] for f in findings
                            if (os.path.normpath(f["path"]), f["code"], f["line"]) == item), "")
                lines.append(f"  extra   {item}: {msg}")
            raise AssertionError(f"{rel}:\n" + "\n".join(lines))
        # info findings are shown but do not fail the run (--fail-on warning)
        assert result.code == (1 if harness.failing(findings) else 0), f"exit code {result.code} for {rel}"
        assert_evidence(findings, rel)
        # the verdicts do not depend on how many threads share the work
        for threads in ("1", "3"):
            again = run(*args, "--threads", threads, ".", cwd=root)
            assert {(os.path.normpath(f["path"]), f["code"], f["line"]) for f in again.json()} == got, \
                f"{rel}: findings differ with --threads {threads}"
        # nor on the memory kept for summaries: with a budget of 1 KB every
        # summary is dropped when the next one comes, and built again from
        # its file when it is asked for
        for threads in ("1", "2"):
            tight = run(*args, "--threads", threads, "--timings", ".", cwd=root,
                        env={"OOMLINT_SUMMARY_BUDGET_KB": "1"})
            assert {(os.path.normpath(f["path"]), f["code"], f["line"]) for f in tight.json()} == got, \
                f"{rel}: findings differ with summaries dropped for the budget (--threads {threads})"
            assert "dropped for the budget" in tight.err, tight.err

    test(f"fixture: {rel}/")(check)


def make_fix_test(path, fixed_path, unsafe):
    rel = os.path.relpath(fixed_path, FIXTURES)

    def check():
        with Workspace() as ws:
            name = os.path.basename(path)
            target = os.path.join(ws.path, name)
            shutil.copyfile(path, target)
            # the project's declared dependencies travel with it: OOM502 reads
            # the torch floor from them (fixtures/OOM502/requirements.txt)
            for dep in ("requirements.txt", "pyproject.toml", "setup.cfg"):
                if os.path.exists(os.path.join(os.path.dirname(path), dep)):
                    shutil.copyfile(os.path.join(os.path.dirname(path), dep), os.path.join(ws.path, dep))
            rule = os.path.basename(os.path.dirname(path))
            args = ["--isolated", "--fix"] + (["--extend-select", rule] if RULE_DIR.match(rule) else [])
            if unsafe:
                args.append("--unsafe-fixes")
            first = run(*args, target)
            with open(target, "rb") as f:
                got = f.read()
            with open(fixed_path, "rb") as f:
                want = f.read()
            if got != want:
                import difflib
                diff = "".join(difflib.unified_diff(
                    want.decode("utf-8", "replace").splitlines(True),
                    got.decode("utf-8", "replace").splitlines(True), "expected", "got"))
                raise AssertionError(f"{rel}: --fix result differs:\n{diff}\n{first}")
            # a second run finds nothing more to fix
            run(*args, target)
            with open(target, "rb") as f:
                again = f.read()
            assert again == got, f"{rel}: a second --fix changed the file again"

    test(f"fix: {rel}")(check)


for fixture in fixture_files():
    make_fixture_test(fixture)
    stem = fixture[:-3] if fixture.endswith(".py") else None
    if stem:
        for suffix, unsafe in ((".fixed.py", False), (".unsafe-fixed.py", True)):
            if os.path.exists(stem + suffix):
                make_fix_test(fixture, stem + suffix, unsafe)

for project in project_dirs():
    make_project_test(project)


# ---- snapshots: what users read, pinned beside each fixture ------------------------------------------

def make_snapshot_test(target):
    rel = os.path.relpath(snapshots.snapshot_path(target), FIXTURES)

    def check():
        problem = snapshots.compare(harness.BIN, target)
        assert problem is None, problem

    test(f"fixture: {rel}")(check)


for target in snapshots.targets():
    make_snapshot_test(target)


@test("fixture: every snapshot has its fixture")
def _():
    gone = [os.path.relpath(p, FIXTURES) for p in snapshots.orphans()]
    assert not gone, f"snapshots without a fixture (run `make snapshots` to remove them): {gone}"


TAMPER = """import json, subprocess, sys
proc = subprocess.run([{real!r}] + sys.argv[1:], capture_output=True, text=True)
findings = json.loads(proc.stdout)
first = findings[0]
{change}
sys.stdout.write(json.dumps(findings))
sys.stderr.write(proc.stderr)
sys.exit(proc.returncode)
"""

# one change to the output per field a snapshot pins, and a line the diff must show
TAMPERED = {
    "message": ('first["message"] = first["message"].replace("accumulates", "adds up")', "+  message: `total` adds up"),
    "range": ('first["end_column"] += 1', "+OOM101 [error] 14:9-14:23"),
    "help": ('first["help"] = "call .item() here"', "+  help: call .item() here"),
    "fix": ('first["fix"]["edits"][0]["content"] = ".detach()"', "+    +        total += loss.detach()"),
    "fix safety": ('first["fix"]["applicability"] = "unsafe"', "+  fix (unsafe): Accumulate"),
}


@test("fixture: a snapshot fails when a message, range, help or fix changes, or is missing")
def _():
    with Workspace() as ws:
        # a copy of one rule directory, as the fixtures of a repository of its own
        root = os.path.join(ws.path, "fixtures")
        os.makedirs(os.path.join(root, "OOM101"))
        for name in ("fix.py", "fix.py.snap"):
            shutil.copyfile(os.path.join(FIXTURES, "OOM101", name), os.path.join(root, "OOM101", name))
        target = os.path.join(root, "OOM101", "fix.py")
        assert snapshots.compare(harness.BIN, target, root) is None, "the copy must match before it is tampered with"
        for what, (change, shown) in TAMPERED.items():
            fake = ws.write(f"oomlint-{what.replace(' ', '-')}", "#!" + sys.executable + "\n" +
                            TAMPER.format(real=harness.BIN, change=change))
            os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
            problem = snapshots.compare(fake, target, root)
            assert problem and "differs from what oomlint reports" in problem, (what, problem)
            assert shown in problem, f"the diff for a changed {what} does not show {shown!r}:\n{problem}"
            # the writer says so too: --check fails, a rewrite reports one change and then matches
            cmd = [sys.executable, snapshots.__file__, "--bin", fake, "--root", root]
            check = subprocess.run(cmd + ["--check"], capture_output=True, text=True)
            assert check.returncode == 1 and shown in check.stderr, (what, check.stdout, check.stderr)
            write = subprocess.run(cmd, capture_output=True, text=True)
            assert write.returncode == 0 and "1 changed" in write.stdout, (what, write.stdout, write.stderr)
            assert snapshots.compare(fake, target, root) is None, what
            shutil.copyfile(os.path.join(FIXTURES, "OOM101", "fix.py.snap"), target + ".snap")
        # a fixture without its snapshot fails; a snapshot without its fixture too
        os.remove(target + ".snap")
        problem = snapshots.compare(harness.BIN, target, root)
        assert problem and "fix.py.snap is missing" in problem, problem
        orphan = os.path.join(root, "OOM101", "gone.py.snap")
        shutil.copyfile(os.path.join(FIXTURES, "OOM101", "fix.py.snap"), orphan)
        assert snapshots.orphans(root) == [orphan], snapshots.orphans(root)
        write = subprocess.run([sys.executable, snapshots.__file__, "--bin", harness.BIN, "--root", root],
                               capture_output=True, text=True)
        assert write.returncode == 0 and "1 new, 1 without a fixture (removed)" in write.stdout, write.stdout
        assert not os.path.exists(orphan) and snapshots.compare(harness.BIN, target, root) is None


# Values that still depend on where a cycle is entered (see the test below):
# each is a binding that reads itself around a loop, where the value read
# through the cut is not the same from the two ends.
ORDER_DEPENDENT = {
    # `w -= lr * w.grad` in a loop: entered at the product, the cut falls on
    # `w`'s own binding; entered at `w` before the loop, on the product
    "OOM501/positives_manual_update.py:13:18: `lr * w.grad`",
    # `state = state.predict(dt)` in a loop: the instance's class read
    # through the cut differs by entry
    "OOM201/project_role_from_callers/likelihood.py:16:21: `state`",
}


def unit_over_fixtures(flag):
    """oomlint-unit FLAG over every fixture's .py file, run from the fixtures folder."""
    unit = harness.BIN + "-unit"
    assert os.path.exists(unit), f"the unit-test binary is missing: {unit}"
    files = sorted(os.path.relpath(os.path.join(d, f), FIXTURES) for d, _, names in os.walk(FIXTURES)
                   for f in names if f.endswith(".py"))
    return subprocess.run([unit, flag] + files, capture_output=True, text=True, cwd=FIXTURES, timeout=600)


@test("fixture: a value reaches an expression by the kept walk exactly when a walk made for it alone says so")
def _():
    # ol_value_reaches walks once from each expression asked about (a return value, a backward()
    # operand) and answers every call of the function from what that walk read; for every such
    # pair of every fixture, the answer must equal a walk that stops at the one value
    # (oomlint-unit --reach-check). A wrong lookup answered no to every question, and only
    # OOM201's fixtures showed it.
    proc = unit_over_fixtures("--reach-check")
    assert proc.returncode == 0 and not proc.stderr, f"exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
    last = proc.stdout.splitlines()[-1]
    checked = int(last.split(" of ")[1].split()[0])
    reached = int(last.split("(")[1].split()[0])
    # enough pairs, and enough of them reaching, that a walk answering no (or yes) to all fails
    assert checked > 5000 and 500 < reached < checked - 500, last


@test("fixture: the evaluator gives an expression the same value whichever expression was asked first")
def _():
    # for every expression of every fixture, its value asked first (every value forgotten before)
    # must equal its value asked in the order of the text (oomlint-unit --order-check). Values
    # computed from a value still being evaluated (a loop's `total += loss` reads itself) used to
    # stay cached, so a value depended on which rule asked what before it (38 of the
    # 49,012 values here did).
    proc = unit_over_fixtures("--order-check")
    assert proc.returncode in (0, 1) and not proc.stderr, f"exit {proc.returncode}\n{proc.stderr[-2000:]}"
    lines = proc.stdout.splitlines()
    found = {line.split(" is kind ")[0] for line in lines[:-1]}
    checked = int(lines[-1].split(" of ")[1].split()[0])
    assert checked > 40000, lines[-1]
    new = sorted(found - ORDER_DEPENDENT)
    assert not new, "values that depend on which was asked first:\n  " + "\n  ".join(
        line for line in lines if line.split(" is kind ")[0] in new)
    gone = sorted(ORDER_DEPENDENT - found)
    assert not gone, f"no longer order-dependent (remove from ORDER_DEPENDENT): {gone}"


@test("fixture: the door gives every rule the same answer to the same question at the same node")
def _():
    # OOMLINT_DOOR_AUDIT makes the door write each answer it gives (file, node, question, answer,
    # the rule asking); over every fixture, each rule with every rule on, no node may get two answers
    import collections
    with Workspace() as ws:
        log = os.path.join(ws.path, "audit.tsv")
        r = run("--isolated", "--select", "ALL", "--exit-zero", "-q", FIXTURES, env={"OOMLINT_DOOR_AUDIT": log},
                timeout=600)
        assert r.code == 0, r
        answers, askers = collections.defaultdict(set), collections.defaultdict(set)
        with open(log, encoding="utf-8") as f:
            for line in f:
                path, start, end, question, answer, rule = line.rstrip("\n").split("\t")
                answers[(path, start, end, question)].add(answer)
                askers[(path, start, end, question)].add(rule)
    split = {k: (v, askers[k]) for k, v in answers.items() if len(v) > 1}
    assert not split, f"{len(split)} nodes answered two ways, e.g. {sorted(split.items())[:5]}"
    questions = {k[3] for k in answers}
    assert {"grad", "often", "graph", "gpu"} <= questions, questions
    # the check means something: rules do share nodes they ask about
    shared = sum(1 for k, rules in askers.items() if len(rules - {"-"}) > 1)
    assert shared >= 10, shared
