"""Behaviour Ruff users expect on day one: --fail-on and the exit status,
runs whose every path is excluded, --output-format (concise, full) and the
`output-format` / `fail-on` configuration keys, --statistics in Ruff's
columns, warnings for unknown codes in suppression comments, and OOM003
(unused-noqa) with its fix; references on every rule page, and help lines that
make sense. And the one list of rules (rules/rules.def), what derives from it
(the README's table), and the script that adds a rule (scripts/add_rule.py)."""
import json
import os
import re
import shutil
import subprocess
import sys

import harness
from cli_tests import AMP, BAD, CLEAN
from harness import ROOT, Workspace, run, test

# A CUDA training loop without mixed precision: one OOM501 finding (info) when
# the opt-in rule is selected, nothing by default.
INFO_ONLY = """import torch
import torch.nn as nn

model = nn.Linear(8, 2).cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train(loader):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
"""

# Evaluation with autograd on: OOM201 (warning), whose only fix is unsafe.
EVAL = """import torch
import torch.nn as nn

model = nn.Linear(8, 2).cuda()


def evaluate(loader):
    model.eval()
    return [model(x).argmax(1) for x, _ in loader]
"""


def codes(r):
    return sorted(f["code"] for f in r.json())


# ---- --fail-on ------------------------------------------------------------------

@test("conventions: info findings are shown but do not fail the run; --fail-on info makes them fail")
def _():
    with Workspace() as ws:
        f = ws.write("train.py", INFO_ONLY)
        sel = ("--extend-select", "OOM501")
        r = run(*sel, f)
        assert r.code == 0 and "OOM501 [info]" in r.out, r
        assert run(*sel, "--format", "json", f).json()[0]["severity"] == "info"
        r = run(*sel, "--fail-on", "info", f)
        assert r.code == 1 and "OOM501" in r.out, r
        r = run(*sel, "--fail-on=warning", f)
        assert r.code == 0, r


@test("conventions: OOM501 (advice that fits most GPU scripts) is opt-in: silent by default")
def _():
    with Workspace() as ws:
        f = ws.write("train.py", INFO_ONLY)
        assert run("--format", "json", f).json() == []
        assert run("--select", "OOM5", "--format", "json", f).json() == []
        assert [d["code"] for d in run("--select", "OOM501", "--format", "json", f).json()] == ["OOM501"]


@test("conventions: --fail-on error lets warnings pass and still fails on errors")
def _():
    with Workspace() as ws:
        warn = ws.write("amp.py", AMP)            # OOM502: warning
        err = ws.write("bad.py", BAD)             # OOM101: error
        assert run(warn).code == 1
        assert run("--fail-on", "error", warn).code == 0
        assert run("--fail-on", "error", err).code == 1
        assert run("--fail-on", "error", "--exit-zero", err).code == 0
        # an unreadable file (OOM001) always fails, and as a run that did not do its job
        r = run("--fail-on", "error", warn, os.path.join(ws.path, "missing.py"))
        assert r.code == 2 and "OOM001" in r.out, r
        r = run("--fail-on", "fatal", warn)
        assert r.code == 2 and "'fatal'" in r.err and "error, warning, info" in r.err, r


@test("conventions: `fail-on` in [tool.oomlint] is used unless --fail-on is given")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nfail-on = "info"\nextend-select = ["OOM501"]\n')
        ws.write("train.py", INFO_ONLY)
        assert run("train.py", cwd=ws.path).code == 1
        assert run("--fail-on", "warning", "train.py", cwd=ws.path).code == 0
        assert run("--isolated", "train.py", cwd=ws.path).code == 0
        ws.write("pyproject.toml", '[tool.oomlint]\nfail-on = "sometimes"\n')
        r = run("train.py", cwd=ws.path)
        assert r.code == 2 and "pyproject.toml:2" in r.err and "'fail-on' must be one of" in r.err, r
        ws.write("pyproject.toml", '[tool.oomlint]\nfail_on = "info"\n')
        r = run("train.py", cwd=ws.path)
        assert r.code == 2 and "did you mean 'fail-on'" in r.err, r


# ---- every path excluded ---------------------------------------------------------------

@test("conventions: a run whose every path is excluded exits 0 with a notice (pre-commit --force-exclude)")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["legacy"]\n')
        ws.write("legacy/old.py", BAD)
        ws.write("legacy/older.py", BAD)
        r = run("--force-exclude", "legacy/old.py", "legacy/older.py", cwd=ws.path)
        assert r.code == 0 and "OOM101" not in r.out, r
        assert "every path given is excluded" in r.err, r
        # the same with --exclude on the command line, a directory, JSON output
        r = run("--exclude", "legacy", "--format", "json", "legacy", cwd=ws.path)
        assert r.code == 0 and r.json() == [] and "excluded" in r.err, r
        r = run("-q", "--force-exclude", "legacy/old.py", cwd=ws.path)
        assert r.code == 0 and r.err == "", r
        # without --force-exclude a named file is linted
        assert run("legacy/old.py", cwd=ws.path).code == 1
        # an excluded file beside a linted one changes nothing
        ws.write("ok.py", CLEAN)
        assert run("--force-exclude", "legacy/old.py", "ok.py", cwd=ws.path).code == 0
        # nothing excluded and nothing found is a warning, as in Ruff
        os.makedirs(os.path.join(ws.path, "empty"))
        r = run("empty", cwd=ws.path)
        assert r.code == 0 and "warning: no Python files" in r.err, r


# ---- --output-format --------------------------------------------------------------------

@test("conventions: --output-format concise is one line per finding, as Ruff prints it")
def _():
    with Workspace() as ws:
        f = ws.write("both.py", BAD + AMP)
        r = run("--output-format", "concise", f)
        lines = r.out.splitlines()
        assert r.code == 1, r
        assert lines == [
            f"{f}:13:9: OOM101 [*] `total` accumulates `loss`, which carries the autograd graph; backward() has "
            "freed what it saved, but every iteration's graph nodes stay alive in `total` (host memory that grows "
            "each step)",
            f"{f}:15:1: OOM502 [*] `from torch.cuda.amp import autocast` imports the CUDA AMP API deprecated "
            "since PyTorch 2.4",
            f"{f}:16:6: OOM502 [*] `autocast` is `torch.cuda.amp.autocast`, deprecated since PyTorch 2.4; it warns "
            "on every use and will be removed",
            "Found 3 findings.",
            "[*] 3 fixable with the `--fix` option.",
        ], r
        # full (the default) and text are the same output; --format is the same option
        full = run("--output-format", "full", f).out
        assert full == run(f).out == run("--format", "text", f).out == run("--format=full", f).out
        assert "^^^" in full and "^^^" not in r.out
        assert run("--format", "concise", f).out == r.out
        # no `[*]` where the only fix is unsafe, unless --unsafe-fixes
        e = ws.write("eval.py", EVAL)
        r = run("--output-format", "concise", e)
        assert r.out.startswith(f"{e}:9:13: OOM201 `model(...)` in evaluation function"), r
        r = run("--output-format", "concise", "--unsafe-fixes", e)
        assert r.out.startswith(f"{e}:9:13: OOM201 [*] `model(...)` in evaluation function"), r


@test("conventions: --output-format concise names notebook cells and honours --quiet")
def _():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Train"},
                    {"cell_type": "code", "metadata": {}, "source": BAD, "outputs": [], "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    with Workspace() as ws:
        f = ws.write("train.ipynb", json.dumps(nb))
        r = run("--output-format", "concise", "-q", f)
        assert r.code == 1 and r.out.splitlines() == [
            f"{f}:cell 2:13:9: OOM101 [*] `total` accumulates `loss`, which carries the autograd graph; "
            "backward() has freed what it saved, but every iteration's graph nodes stay alive in `total` (host "
            "memory that grows each step)"], r


@test("conventions: `output-format` in [tool.oomlint] is used unless the command line names one")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\noutput-format = "concise"\n')
        ws.write("amp.py", AMP)
        r = run("amp.py", cwd=ws.path)
        assert r.out.startswith("amp.py:1:1: OOM502 [*] ") and "^^^" not in r.out, r
        assert run("--format", "json", "amp.py", cwd=ws.path).json()[0]["code"] == "OOM502"
        assert "^^^" in run("--output-format", "full", "amp.py", cwd=ws.path).out
        # the configuration of the current directory decides, as for Ruff's run-wide settings
        ws.write("sub/pyproject.toml", '[tool.oomlint]\noutput-format = "json"\n')
        ws.write("sub/amp.py", AMP)
        assert run("sub/amp.py", cwd=ws.path).out.startswith("sub/amp.py:1:1: OOM502")
        assert run("amp.py", cwd=os.path.join(ws.path, "sub")).out.startswith("[\n")
        ws.write("pyproject.toml", '[tool.oomlint]\noutput-format = "xml"\n')
        r = run("amp.py", cwd=ws.path)
        assert r.code == 2 and "pyproject.toml:2: 'output-format' must be one of" in r.err, r


# ---- --statistics -------------------------------------------------------------------------

@test("conventions: --statistics marks [*] only for rules whose every finding has a fix that applies")
def _():
    with Workspace() as ws:
        f = ws.write("eval.py", EVAL)
        a = ws.write("amp.py", AMP)
        r = run("--statistics", f, a)
        assert r.out.splitlines()[:2] == ["2\tOOM502\t[*] deprecated-cuda-amp",
                                          "1\tOOM201\t[ ] eval-without-no-grad"], r
        r = run("--statistics", "--unsafe-fixes", f)
        assert r.out.splitlines()[0] == "1\tOOM201\t[*] eval-without-no-grad", r
        # nothing fixable: no marker column at all
        r = run("--statistics", f)
        assert r.out.splitlines()[0] == "1\tOOM201\teval-without-no-grad", r
        r = run("--statistics", "--format", "json", f, a)
        assert r.json() == [{"code": "OOM502", "name": "deprecated-cuda-amp", "count": 2, "fixable": True,
                             "fixable_count": 2},
                            {"code": "OOM201", "name": "eval-without-no-grad", "count": 1, "fixable": False,
                             "fixable_count": 0}], r


@test("conventions: --statistics marks [~] for a rule where some findings have a fix, as Ruff does")
def _():
    with Workspace() as ws:
        # the import from the private submodule is flagged and not fixed; the other two are fixed
        f = ws.write("amp.py", AMP + "from torch.cuda.amp.autocast_mode import autocast as ac\n")
        r = run("--statistics", f)
        assert r.out.splitlines()[0] == "3\tOOM502\t[~] deprecated-cuda-amp", r
        [row] = run("--statistics", "--format", "json", f).json()
        assert row["count"] == 3 and row["fixable_count"] == 2 and row["fixable"] is False, row


# ---- suppression comments ---------------------------------------------------------------------

@test("conventions: unknown oomlint codes in noqa warn on stderr with file:line; other linters' codes do not")
def _():
    with Workspace() as ws:
        src = AMP.replace("autocast\n", "autocast  # noqa: OOM5O2, E501\n", 1) + \
            "x = 1  # oomlint: disable=OOM999\ny = 2  # noqa: F401, B950\n"
        f = ws.write("amp.py", src)
        r = run(f)
        assert r.err.splitlines() == [
            f"oomlint: warning: {f}:1: unknown rule code 'OOM5O2' in '# noqa' (see 'oomlint rules')",
            f"oomlint: warning: {f}:4: unknown rule code 'OOM999' in '# oomlint: disable' (see 'oomlint rules')",
        ], r
        # a warning, not a finding: the exit status is the findings'
        assert r.code == 1 and "OOM502" in r.out, r
        assert run("-q", f).err == ""
        assert run("--format", "json", f).json()[0]["code"] == "OOM502"


@test("conventions: OOM003 is opt-in and reports what suppresses nothing, after every other rule")
def _():
    src = BAD.replace("        total += loss\n",
                      "        total += loss  # noqa: OOM101\n"
                      "        total += 1  # noqa: OOM101, E501\n"
                      "        total -= 1  # noqa: OOM502, OOM777\n"
                      "        total *= 1  # noqa\n"
                      "        # oomlint: disable=OOM102\n"
                      "        total /= 1\n")
    with Workspace() as ws:
        f = ws.write("train.py", src)
        r = run(f)
        assert r.code == 0 and run("--format", "json", f).json() == [], r
        r = run("--extend-select", "OOM003", "--format", "json", f)
        got = [(x["line"], x["message"]) for x in r.json()]
        assert got == [
            (14, "Unused `noqa` directive (unused: `OOM101`)"),
            (15, "Unused `noqa` directive (unused: `OOM502`; unknown: `OOM777`)"),
            (17, "Unused `oomlint: disable` directive (unused: `OOM102`)"),
        ], r
        assert r.code == 1 and all(x["fix"]["applicability"] == "safe" for x in r.json()), r
        # a rule that is not enabled makes its codes "non-enabled", as in Ruff
        r = run("--extend-select", "OOM003", "--ignore", "OOM101", "--format", "json", f)
        assert (13, "Unused `noqa` directive (non-enabled: `OOM101`)") in \
            [(x["line"], x["message"]) for x in r.json()], r
        # OOM003 can itself be suppressed, by code; a blanket directive does not hide its own report
        g = ws.write("g.py", "x = 1  # noqa: OOM101, OOM003\ny = 2  # noqa: OOM101  # oomlint: disable=OOM003\n")
        r = run("--extend-select", "OOM003", g)
        assert r.code == 0, r
        h = ws.write("h.py", "x = 1  # oomlint: disable\n")
        r = run("--extend-select", "OOM003", "--output-format", "concise", h)
        assert r.out.startswith(f"{h}:1:8: OOM003 [*] Unused blanket `oomlint: disable` directive"), r
        # not in a file whose parse failed: the rules saw only part of it
        k = ws.write("k.py", "x = 1  # noqa: OOM101\ndef f(:\n")
        assert codes(run("--extend-select", "OOM003", "--format", "json", k)) == ["OOM002"]


@test("conventions: OOM003's fix removes unused codes, or the directive, keeping everything else")
def _():
    src = BAD.replace("        total += loss\n",
                      "        total += loss  # noqa: OOM101\n"
                      "        total += 1  # noqa: OOM101, E501\n"
                      "        total -= 1  # noqa:OOM502,OOM101  # keep this note\n"
                      "        total *= 1  # noqa: OOM101 because reasons\n"
                      "        # oomlint: disable=OOM102\n"
                      "        total /= 1  # type: ignore  # oomlint: disable\n")
    want = BAD.replace("        total += loss\n",
                       "        total += loss  # noqa: OOM101\n"
                       "        total += 1  # noqa: E501\n"
                       "        total -= 1  # keep this note\n"
                       "        total *= 1  # because reasons\n"
                       "        total /= 1  # type: ignore\n")
    with Workspace() as ws:
        f = ws.write("train.py", src)
        r = run("--extend-select", "OOM003", "--fix", f)
        assert r.code == 0, r
        assert ws.read("train.py") == want, ws.read("train.py")
        # the diff shows the same, and a second run has nothing to do
        assert run("--extend-select", "OOM003", f).code == 0


@test("conventions: OOM003 in a notebook: reported by cell, fixed line for line, unknown codes named by cell")
def _():
    cell = "import torch\n# oomlint: disable=OOM502\nx = 1  # noqa: OOM101, OOM9\n"
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Notes"},
                    {"cell_type": "code", "metadata": {}, "source": cell, "outputs": [], "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    with Workspace() as ws:
        f = ws.write("nb.ipynb", json.dumps(nb, indent=1))
        r = run("--extend-select", "OOM003", "--output-format", "concise", f)
        assert r.out.splitlines()[:2] == [
            f"{f}:cell 2:2:1: OOM003 [*] Unused `oomlint: disable` directive (unused: `OOM502`)",
            f"{f}:cell 2:3:8: OOM003 [*] Unused `noqa` directive (unused: `OOM101`; unknown: `OOM9`)"], r
        assert f"oomlint: warning: {f}:cell 2:3: unknown rule code 'OOM9'" in r.err, r
        r = run("--extend-select", "OOM003", "--fix", f)
        assert r.code == 0, r
        fixed = json.loads(ws.read("nb.ipynb"))
        source = fixed["cells"][1]["source"]
        assert "".join(source) == "import torch\n\nx = 1\n", source


# ---- rule documentation -------------------------------------------------------------------------

@test("conventions: every rule's page has references, in the terminal, Markdown and SARIF")
def _():
    rules = run("rules", "--format", "json").json()
    for rule in rules:
        code = rule["code"]
        page = run("rule", code).out
        assert "\nReferences\n  - " in page, f"{code} has no references:\n{page}"
        urls = re.findall(r"^    (\S+)$", page.split("\nReferences\n", 1)[1], re.M)
        assert urls and all(u.startswith("https://") for u in urls), (code, urls)
        md = run("rule", code, "--markdown").out
        assert "\n## References\n\n- [" in md and all(f"]({u})" in md for u in urls), (code, md)
    with Workspace() as ws:
        f = ws.write("amp.py", AMP)
        log = json.loads(run("--format", "sarif", f).out)
        driver = log["runs"][0]["tool"]["driver"]
        for r in driver["rules"]:
            assert "References" in r["help"]["text"] and "## References" in r["help"]["markdown"], r["id"]


@test("conventions: every rule with a fix documents its fix safety; every unsafe fix says why it is unsafe")
def _():
    rules = run("rules", "--format", "json").json()
    with_fix = 0
    for rule in rules:
        code = rule["code"]
        md = run("rule", code, "--markdown").out
        if "\n## Fix\n" not in md:
            assert "Fix safety" not in md, code
            continue
        with_fix += 1
        assert "\n## Fix safety\n\n" in md, f"{code} has a fix but no Fix safety section"
        safety = md.split("\n## Fix safety\n\n", 1)[1].split("\n## ", 1)[0]
        assert re.search(r"\b(Safe|safe|Unsafe|unsafe)\b", safety), (code, safety)
        assert "\nFix safety\n  " in run("rule", code).out, code
        with open(os.path.join(ROOT, "docs", "rules", f"{code}.md"), encoding="utf-8") as f:
            assert f.read() == md, f"docs/rules/{code}.md is stale: run `make docs`"
    assert with_fix >= 10, with_fix
    # every unsafe fix the fixtures produce carries its reason, in JSON and text
    unsafe = 0
    for d in sorted(os.listdir(os.path.join(ROOT, "fixtures"))):
        r = run("--format", "json", "--select", "ALL", os.path.join(ROOT, "fixtures", d))
        for f in r.json():
            fix = f.get("fix")
            if fix and fix["applicability"] == "unsafe":
                unsafe += 1
                assert fix.get("unsafe_reason"), (f["code"], f["path"], f["line"], fix)
            elif fix:
                assert "unsafe_reason" not in fix, fix
    assert unsafe >= 20, unsafe


@test("conventions: help lines never suggest `.cpu()` on a value that is still in the graph or a number")
def _():
    # OOM102's help once read "(`loss.item()`, or `.cpu()` after it ...)": `.item()` is a Python number
    src = BAD.replace("total = 0\n", "total = 0\n    seen = []\n").replace(
        "        total += loss\n", "        seen.append(loss)\n        outs = [model(x) for x, _ in loader]\n")
    with Workspace() as ws:
        f = ws.write("collect.py", src)
        helps = [x["help"] for x in run("--format", "json", f).json() if x["code"] == "OOM102"]
        assert len(helps) == 2, helps
        for h in helps:
            assert ".item()`, or `.cpu()" not in h and "/ `.cpu()`" not in h, h
            assert ".cpu()" not in h or ".detach().cpu()" in h, h


# ---- one list of rules, and what derives from it ---------------------------------------------------

LISTED = re.compile(r"^OL_RULE\((\w+), (\w+)\)$", re.M)


def rule_values():
    """{ol_rule value: file} for every ol_rule defined in rules/."""
    found = {}
    for name in sorted(os.listdir(os.path.join(ROOT, "rules"))):
        if name.endswith(".c"):
            with open(os.path.join(ROOT, "rules", name), encoding="utf-8") as f:
                for value in re.findall(r"^const ol_rule (ol_rule_\w+) = \{", f.read(), re.M):
                    assert value not in found, f"{value} is defined in {found[value]} and {name}"
                    found[value] = name
    return found


@test("conventions: rules/rules.def lists every rule once, in code order, and the registry is that list")
def _():
    with open(os.path.join(ROOT, "rules", "rules.def"), encoding="utf-8") as f:
        listed = LISTED.findall(f.read())
    codes = [code for code, _ in listed]
    assert len(codes) >= 28 and codes == sorted(set(codes)), codes
    for code, value in listed:
        assert value == f"ol_rule_{code.lower()}", (code, value)
    defined = rule_values()
    assert sorted(value for _, value in listed) == sorted(defined), \
        f"defined in rules/ but not listed: {sorted(set(defined) - {v for _, v in listed})}; " \
        f"listed but not defined: {sorted({v for _, v in listed} - set(defined))}"
    registry = run("rules", "--format", "json").json()
    assert [r["code"] for r in registry] == codes, [r["code"] for r in registry]


@test("conventions: the README's rule table is the registry's (`make docs` writes it)")
def _():
    table = [sys.executable, os.path.join(ROOT, "scripts", "rule_table.py"), "--bin", harness.BIN]
    r = subprocess.run(table + ["--check"], capture_output=True, text=True)
    assert r.returncode == 0, f"README.md's rule table is stale: run `make docs`\n{r.stderr}"
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for rule in run("rules", "--format", "json").json():
        assert f"| {rule['code']} | {rule['name']} | {rule['severity']}" in readme, rule["code"]
    # the check fails on a table that drifted, and a rewrite mends it
    with Workspace() as ws:
        copy = ws.write("README.md", re.sub(r"^\| OOM702 \|.*\n", "", readme, flags=re.M))
        r = subprocess.run(table + ["--check", "--readme", copy], capture_output=True, text=True)
        assert r.returncode == 1 and "run `make docs`" in r.stderr, (r.returncode, r.stderr)
        r = subprocess.run(table + ["--readme", copy], capture_output=True, text=True)
        assert r.returncode == 0 and ws.read("README.md") == readme, r.stderr


def copy_checkout(dest):
    """The repository's files as git sees them (tracked, and new files it does not
    ignore) copied to dest with their times, and the build's fetched sources and
    objects beside them, so that make there fetches nothing and compiles only what
    changed."""
    proc = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          capture_output=True)
    if proc.returncode != 0:
        raise harness.Skip("not a git checkout: the copy is made from git's list of files")
    for rel in proc.stdout.decode().split("\0"):
        src = os.path.join(ROOT, rel)
        if rel and os.path.isfile(src) and not os.path.islink(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))
    for part in ("deps", "pgo", "gen", "obj"):
        if os.path.isdir(os.path.join(ROOT, "build", part)):
            shutil.copytree(os.path.join(ROOT, "build", part), os.path.join(dest, "build", part), symlinks=True)


def free_code():
    """A rule code no rule has (the scaffold test's own), from OOM799 down."""
    with open(os.path.join(ROOT, "rules", "rules.def"), encoding="utf-8") as f:
        taken = {code for code, _ in LISTED.findall(f.read())}
    return next(f"OOM{n}" for n in range(799, 99, -1) if f"OOM{n}" not in taken)


def register_slow(name):
    try:
        return test(name, slow=True)
    except TypeError:  # a harness without the slow suite runs it with the rest
        return test(name)


@register_slow("conventions: scripts/add_rule.py writes a rule that builds, is registered and passes its tests")
def _():
    code = free_code()
    name = "scaffold-placeholder-rule"
    with Workspace() as ws:
        repo = os.path.join(ws.path, "repo")
        copy_checkout(repo)

        def add_rule(*args):
            return subprocess.run([sys.executable, "scripts/add_rule.py", *args], cwd=repo,
                                  capture_output=True, text=True, timeout=900)

        def files():
            return sorted(os.path.relpath(os.path.join(d, f), repo) for d, _, names in os.walk(repo)
                          for f in names if not os.path.relpath(d, repo).startswith("build"))

        # refused, naming why, and nothing written
        before = files()
        for args, why in ((("OOM101", name), "OOM101 exists"), ((code, "data-parallel"), "is OOM702's"),
                          (("OOM70", name), "is not a rule code"), (("OOM042", name), "is not a rule code"),
                          ((code, "Some_Name"), "is not a rule name"),
                          ((code, name, "--pattern", "backward"), "already called in fixtures/")):
            r = add_rule(*args, "--no-build")
            assert r.returncode == 2 and why in r.stderr, (args, r.returncode, r.stderr)
        assert files() == before, sorted(set(files()) ^ set(before))

        # a plain build of the copy, as a contributor's shell runs it: not the variables of a make
        # this suite may run under (`make check` passes SANITIZE=1 down through MAKEFLAGS)
        plain = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SANITIZE")}
        r = subprocess.run(["make", "--no-print-directory", "rule"], cwd=repo, capture_output=True, text=True,
                           env=plain)
        assert r.returncode != 0 and "usage: make rule CODE=" in r.stderr, r
        # through make, as its users run it: a summary with a quote reaches the script whole
        r = subprocess.run(["make", "--no-print-directory", "rule", f"CODE={code}", f"NAME={name}",
                            "SUMMARY=Calls of the scaffold's placeholder."], cwd=repo, capture_output=True,
                           text=True, timeout=900, env=plain)
        assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
        assert "warning:" not in r.stdout + r.stderr, f"the skeleton does not build warning-free:\n{r.stderr}"
        source = f"rules/{code.lower()}_{name.replace('-', '_')}.c"
        for rel in (source, f"fixtures/{code}/positive.py", f"fixtures/{code}/negative.py", "rules/rules.def",
                    "analyzer/references.c"):
            assert rel in r.stdout, (rel, r.stdout)
        for rel in (f"docs/rules/{code}.md", f"fixtures/{code}/positive.py.snap", f"fixtures/{code}/negative.py.snap"):
            assert os.path.exists(os.path.join(repo, rel)), rel
        with open(os.path.join(repo, source), encoding="utf-8") as f:
            includes = re.findall(r"^#include .*$", f.read(), re.M)
        assert includes == ['#include "rule.h"'], includes
        with open(os.path.join(repo, "rules", "rules.def"), encoding="utf-8") as f:
            listed = [c for c, _ in LISTED.findall(f.read())]
        assert code in listed and listed == sorted(listed), listed

        # the copy's binary has the rule: listed, documented, and reporting its pattern
        binary = os.path.join(repo, "build", "oomlint")
        rules = json.loads(subprocess.run([binary, "rules", "--format", "json"], capture_output=True,
                                          text=True).stdout)
        mine = [x for x in rules if x["code"] == code]
        assert mine and mine[0]["name"] == name and mine[0]["severity"] == "warning" \
            and mine[0]["summary"] == "Calls of the scaffold's placeholder.", mine
        assert f"| {code} | {name} | warning |" in open(os.path.join(repo, "README.md"), encoding="utf-8").read()

        # its tests pass there, with the tests of what derives from rules.def
        def tests(*args):
            return subprocess.run([sys.executable, "tests/run.py", "--bin", binary, *args], cwd=repo,
                                  capture_output=True, text=True, timeout=900)
        r = tests("--groups", "fixture", "-k", f"{code}/")
        assert r.returncode == 0 and "4 passed, 0 failed" in r.stdout, r.stdout[-3000:]
        for k in ("rules/rules.def lists every rule", "README's rule table", "docs/rules pages match",
                  "every rule's page has references", "every snapshot has its fixture"):
            r = tests("-k", k)
            assert r.returncode == 0 and "1 passed, 0 failed" in r.stdout, (k, r.stdout[-3000:])

        # a second time the code is taken
        r = add_rule(code, "another-name", "--no-build")
        assert r.returncode == 2 and f"{code} exists" in r.stderr, r.stderr
