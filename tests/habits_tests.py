"""What users coming from Ruff reach for: the summary lines, test-file
exemptions that show, .gitignore, --extend-exclude, --show-files,
--add-noqa, misspelt flags, `oomlint version`, a run with nothing to lint,
the GitLab Code Quality and JUnit reports, and the man page's synopsis."""
import json
import os
import re
import subprocess
import sys

from harness import ROOT, Workspace, run, test

LEAK = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)
criterion = nn.MSELoss()


def train(loader):
    total = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        total += loss
    return total
"""
CLEAN = "import torch\nx = torch.zeros(3)\n"


# ---- the man page ------------------------------------------------------------------

@test("ruff habits: the man page's synopsis is the usage forms only, and no description is cut")
def _():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "build-aux", "manpage.py"), "--bin",
                           __import__("harness").BIN], capture_output=True, text=True, check=True)
    page = proc.stdout
    synopsis = page.split(".SH SYNOPSIS\n", 1)[1].split(".SH ", 1)[0]
    forms = [l for l in synopsis.split("\n") if l and l != ".br"]
    assert forms and all(l.startswith("\\fBoomlint\\fR") for l in forms), forms
    # each usage line of --help whose description wraps is whole in the page
    help_text = run("--help").out
    usage = help_text.split("Usage:\n", 1)[1].split("\n\n", 1)[0]
    flat = re.sub(r"\s+", " ", page.replace("\\-", "-"))
    for entry in re.split(r"\n  (?=\S)", "\n" + usage):
        parts = re.split(r"\s{2,}", entry.strip(), maxsplit=1)
        if len(parts) == 2:
            what = re.sub(r"\s+", " ", parts[1])
            assert what in flat, f"{what!r} is not whole in the man page"


# ---- test code: a default of per-file-ignores that shows -----------------------------

@test("ruff habits: test files are exempt by a default per-file-ignores that --show-settings prints and the summary counts")
def _():
    with Workspace() as ws:
        ws.write("test_train.py", LEAK)
        r = run("test_train.py", cwd=ws.path)
        assert r.code == 0, r
        assert "All checks passed!" in r.out, r
        assert "1 finding in test code not shown" in r.out, r
        shown = run("--show-settings", "test_train.py", cwd=ws.path).out
        assert '"test_*.py" = ["OOM1", ' in shown and "(default: test code" in shown, shown
        enabled = shown.split("Enabled rules:\n")[1].split("\n\n")[0]
        assert "OOM101" not in enabled, shown
        assert "OOM101  tensor-accumulated-with-graph (test code" in shown, shown
        # a file in a tests/ directory is test code too; a noqa'd finding is not counted
        ws.write("tests/helpers.py", LEAK.replace("total += loss", "total += loss  # noqa: OOM101"))
        r = run("tests", cwd=ws.path)
        assert r.code == 0 and "not shown" not in r.out, r
        # per-file-ignores replaces the default: the test file is linted in full
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"scripts/*" = ["OOM302"]\n')
        r = run("test_train.py", cwd=ws.path)
        assert r.code == 1 and "OOM101" in r.out and "not shown" not in r.out, r
        assert "replaces the default for test code" in run("--show-settings", "test_train.py", cwd=ws.path).out
        # extend-per-file-ignores keeps it, and an ignore of one's own is not counted
        ws.write("pyproject.toml", '[tool.oomlint.extend-per-file-ignores]\n"test_*.py" = ["OOM101"]\n')
        r = run("test_train.py", cwd=ws.path)
        assert r.code == 0 and "not shown" not in r.out, r
        ws.write("pyproject.toml", '[tool.oomlint.extend-per-file-ignores]\n"scripts/*" = ["OOM302"]\n')
        r = run("test_train.py", cwd=ws.path)
        assert r.code == 0 and "1 finding in test code not shown" in r.out, r
        # --isolated keeps the defaults
        r = run("--isolated", "test_train.py", cwd=ws.path)
        assert r.code == 0 and "1 finding in test code not shown" in r.out, r


# ---- the summary, in Ruff's words ---------------------------------------------------

EVAL = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)


def evaluate(loader):
    model.eval()
    for x in loader:
        print(model(x).argmax())
"""


@test("ruff habits: the summary lines say what Ruff's say, and never count what is not there")
def _():
    with Workspace() as ws:
        f = ws.write("train.py", LEAK)
        r = run(f)
        assert r.out.splitlines()[-2:] == ["Found 1 finding.", "[*] 1 fixable with the `--fix` option."], r
        assert "more" not in r.out, r
        e = ws.write("eval.py", EVAL)
        r = run(e)
        assert r.code == 1, r
        assert r.out.splitlines()[-2:] == [
            "Found 1 finding.",
            "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."], r
        r = run(f, e)
        assert r.out.splitlines()[-2:] == [
            "Found 2 findings.",
            "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)."], r
        r = run("--unsafe-fixes", f, e)
        assert r.out.splitlines()[-1] == "[*] 2 fixable with the `--fix` option.", r
        # --diff: on stderr, as Ruff words it
        r = run("--diff", e)
        assert r.err == "No findings would be fixed (1 fix available with `--unsafe-fixes`).\n", r
        r = run("--diff", f, e)
        assert r.err == "Would fix 1 finding (1 additional fix available with `--unsafe-fixes`).\n", r
        c = ws.write("clean.py", CLEAN)
        r = run("--diff", c)
        assert r.code == 0 and r.err == "No findings would be fixed.\n", r
        # --fix: how many were found, fixed and left
        r = run("--fix", f, e)
        assert r.code == 1, r
        assert r.out.splitlines()[-2:] == [
            "Found 2 findings (1 fixed, 1 remaining).",
            "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."], r


# ---- the command line ------------------------------------------------------------------

@test("ruff habits: nothing to lint is a warning and exit 0; a path that does not exist stays exit 2")
def _():
    with Workspace() as ws:
        os.makedirs(os.path.join(ws.path, "empty"))
        ws.write("docs/README.md", "hi\n")
        for path in ("empty", "docs"):
            r = run(path, cwd=ws.path)
            assert r.code == 0 and "warning: no Python files" in r.err, r
            r = run("--format", "json", path, cwd=ws.path)
            assert r.code == 0 and r.json() == [], r
        r = run("missing", cwd=ws.path)
        assert r.code == 2, r
        r = run("-q", "empty", cwd=ws.path)
        assert r.code == 0 and r.err == "", r


@test("ruff habits: `oomlint version`, -o in --help, and did-you-mean for a misspelt flag")
def _():
    r = run("version")
    assert r.code == 0 and r.out == run("--version").out and r.out.startswith("oomlint "), r
    assert run("version", "x").code == 2
    help_text = run("--help").out
    assert re.search(r"^  -o, --output-file PATH ", help_text, re.M), help_text
    assert re.search(r"^  oomlint version ", help_text, re.M), help_text
    for typo, meant in (("--unsafe-fix", "--unsafe-fixes"), ("--exlude", "--exclude"), ("--show-setings", "--show-settings"),
                        ("--outpt-format", "--output-format"), ("--fixx", "--fix")):
        r = run(typo, "x.py")
        assert r.code == 2 and f"did you mean '{meant}'?" in r.err, (typo, r)
    r = run("--frobnicate", "x.py")
    assert r.code == 2 and "did you mean" not in r.err, r


@test("ruff habits: --show-files lists what a run would lint; --extend-exclude adds to the excludes")
def _():
    with Workspace() as ws:
        ws.write("a.py", CLEAN)
        ws.write("pkg/b.py", CLEAN)
        ws.write("pkg/gen/c.py", CLEAN)
        ws.write("legacy/d.py", CLEAN)
        ws.write("notes.txt", "x\n")
        ws.write("pyproject.toml", '[tool.oomlint]\nextend-exclude = ["legacy"]\n')
        r = run("--show-files", ".", cwd=ws.path)
        assert r.code == 0 and r.out == "a.py\npkg/b.py\npkg/gen/c.py\n", r
        r = run("--show-files", "--extend-exclude", "gen", ".", cwd=ws.path)
        assert r.code == 0 and r.out == "a.py\npkg/b.py\n", r
        r = run("--show-files", "missing.py", cwd=ws.path)
        assert r.code == 2 and "missing.py" in r.err and r.out == "", r
