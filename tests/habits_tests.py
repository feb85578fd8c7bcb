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

model = nn.Linear(4, 2).cuda()
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


@test("ruff habits: what counts as test code does not depend on where oomlint is run from")
def _():
    with Workspace() as ws:
        ws.write("repo/setup.py", "")
        ws.write("repo/tests/helpers.py", LEAK)
        ws.write("repo/pkg/train.py", "x = 1\n")
        ws.write("elsewhere/README", "")
        for cwd, arg in (("repo", "."), ("", "repo"), ("elsewhere", os.path.join(ws.path, "repo")),
                         ("repo/pkg", "../tests")):
            r = run(arg, cwd=os.path.join(ws.path, cwd))
            assert r.code == 0 and "1 finding in test code not shown" in r.out, (cwd, arg, r)
        # a project whose own folder is named tests is not test code throughout
        ws.write("tests/proj/pyproject.toml", "")
        ws.write("tests/proj/train.py", LEAK)
        r = run(os.path.join(ws.path, "tests", "proj"), cwd=os.path.join(ws.path, "elsewhere"))
        assert r.code == 1 and "OOM101" in r.out, r


# ---- the summary, in Ruff's words ---------------------------------------------------

EVAL = """import torch
import torch.nn as nn

model = nn.Linear(4, 2).cuda()


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


# ---- CI reports: GitLab Code Quality and JUnit XML, checked as their consumers read them ----

CI_DIR = os.path.join(ROOT, "tests", "ci")
NODE_MODULES = os.path.join(ROOT, "build", "tools", "node_modules")
# a notebook of a job of several processes: its load is reported by default
NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": ["import torch.distributed\n", "x = torch.load('a.pt')\n"]}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def ci_workspace(ws):
    """Fixtures plus the hard cases: a name with markup characters, a notebook,
    a file that cannot be read, the same message twice in one file."""
    from fixture_tests import fixture_files
    paths = []
    for src in fixture_files():
        with open(src, "rb") as f:
            paths.append(ws.write(os.path.relpath(src, ROOT), f.read(), mode="wb"))
    paths.append(ws.write("a&b<'c'>.py", LEAK))
    paths.append(ws.write("nb.ipynb", NOTEBOOK))
    paths.append(ws.write("twice.py", "import torch; device = 'cuda'\na = torch.load('a.pt')\nb = torch.load('a.pt')\n"))
    paths.append(os.path.join(ws.path, "missing.py"))
    return paths


def ajv(schema, files):
    assert os.path.isdir(os.path.join(NODE_MODULES, "ajv")), "ajv is missing (`make test` installs it)"
    proc = subprocess.run(["node", os.path.join(ROOT, "tests", "ajv_validate.js"), schema, *files],
                          capture_output=True, text=True, env=dict(os.environ, NODE_PATH=NODE_MODULES), timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@test("ruff habits: --output-format gitlab is a Code Quality report GitLab reads (schema, unique fingerprints)")
def _():
    schema = os.path.join(CI_DIR, "gitlab-codequality.schema.json")
    with Workspace() as ws:
        paths = ci_workspace(ws)
        report = ws.write("gl.json", "")
        r = run("--output-format", "gitlab", "-o", report, *paths, cwd=ws.path)
        assert r.code == 2, r  # missing.py was not linted
        with open(report) as f:
            issues = json.load(f)
        # the schema says something: a report with a bad severity fails it
        bad = ws.write("bad.json", json.dumps([dict(issues[0], severity="fatal")]))
        empty = ws.write("empty.json", run("--output-format", "gitlab", ws.write("ok.py", CLEAN)).out)
        verdict = ajv(schema, [report, bad, empty])
        assert verdict[report] == [] and verdict[empty] == [], verdict
        assert verdict[bad], verdict
        assert json.loads(open(empty).read()) == []
        fingerprints = [i["fingerprint"] for i in issues]
        assert len(set(fingerprints)) == len(fingerprints), "fingerprints are not unique"
        by_path = {}
        for i in issues:
            by_path.setdefault(i["location"]["path"], []).append(i)
        odd = [p for p in by_path if p.endswith("a&b<'c'>.py")][0]
        assert by_path[odd][0]["check_name"] == "OOM101" and by_path[odd][0]["location"]["lines"]["begin"] == 13
        assert by_path[odd][0]["severity"] == "critical"
        nb = [p for p in by_path if p.endswith("nb.ipynb")][0]
        assert "(cell 1, line 2)" in by_path[nb][0]["description"], by_path[nb]
        twice = [p for p in by_path if p.endswith("twice.py")][0]
        assert [i["location"]["lines"]["begin"] for i in by_path[twice]] == [2, 3], by_path[twice]
        # a fingerprint stays when lines above the finding move
        moved = run("--output-format", "gitlab", "twice.py", cwd=ws.path).json()
        ws.write("twice.py", "import torch; device = 'cuda'\n\n\na = torch.load('a.pt')\nb = torch.load('a.pt')\n")
        again = run("--output-format", "gitlab", "twice.py", cwd=ws.path).json()
        assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in again], (moved, again)
        # paths are relative to the project: $CI_PROJECT_DIR, else the current directory
        r = run("--output-format", "gitlab", os.path.join(ws.path, "twice.py"), cwd=ws.path)
        assert {i["location"]["path"] for i in r.json()} == {"twice.py"}, r
        r = run("--output-format", "gitlab", "twice.py", cwd=ws.path, env={"CI_PROJECT_DIR": os.path.dirname(ws.path)})
        assert {i["location"]["path"] for i in r.json()} == {os.path.basename(ws.path) + "/twice.py"}, r


@test("ruff habits: --output-format junit is JUnit XML that validates and says what a CI test report reads")
def _():
    import xml.etree.ElementTree as ET
    xsd = os.path.join(CI_DIR, "junit.xsd")
    with Workspace() as ws:
        paths = ci_workspace(ws)
        report = ws.write("junit.xml", "")
        r = run("--output-format", "junit", "-o", report, *paths, cwd=ws.path)
        assert r.code == 2, r  # missing.py was not linted
        clean = ws.write("clean.xml", run("--output-format", "junit", ws.write("ok.py", CLEAN)).out)
        for doc in (report, clean):
            proc = subprocess.run(["xmllint", "--noout", "--schema", xsd, doc], capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr[-2000:]
        # the schema says something: a case without a name fails it
        broken = ws.write("broken.xml", open(report).read().replace('<testcase name="', '<testcase nom="', 1))
        assert subprocess.run(["xmllint", "--noout", "--schema", xsd, broken], capture_output=True).returncode != 0
        json_findings = run("--format", "json", *paths, cwd=ws.path).json()
        root = ET.parse(report).getroot()
        assert root.tag == "testsuites", root.tag
        cases = [(s.get("name"), c) for s in root.iter("testsuite") for c in s.iter("testcase")]
        assert len(cases) == len(json_findings), (len(cases), len(json_findings))
        for suite in root.iter("testsuite"):
            assert int(suite.get("tests")) == int(suite.get("failures")) == len(suite.findall("testcase"))
        odd = [c for name, c in cases if name.endswith("a&b<'c'>.py")]
        assert odd and odd[0].get("name") == "OOM101 at 13:9" and odd[0].get("line") == "13", odd
        failure = odd[0].find("failure")
        assert failure.get("type") == "OOM101" and "accumulates" in failure.get("message"), failure.attrib
        assert "\nhelp: " in failure.text, failure.text
        nb = [c for name, c in cases if name.endswith("nb.ipynb")]
        assert nb and nb[0].get("name").startswith("OOM302 at cell 1, 2:"), nb[0].attrib
        # no findings: one passing case, so the report is never empty
        clean_root = ET.parse(clean).getroot()
        assert [c.find("failure") for c in clean_root.iter("testcase")] == [None], open(clean).read()


# ---- respect-gitignore ---------------------------------------------------------------------

GITIGNORE_TREE = {
    ".gitignore": "# generated\ngen/\n/out\n*_pb2.py\n!keep_pb2.py\na/**/skip.py\n\\#hash.py\ntrailing.py   \ndocs/*.py\n"
                  "**/deep/**\n!**/deep/\n",
    "sub/.gitignore": "local.py\n/anchored.py\n!root_only.py\n",
    "a/x.py": "", "a/skip.py": "", "a/b/skip.py": "", "a/b/c.py": "", "gen/g.py": "", "out/o.py": "",
    "sub/out/o.py": "", "keep/keep_pb2.py": "", "keep/m_pb2.py": "", "root.py": "", "root_only.py": "",
    "sub/local.py": "", "sub/anchored.py": "", "sub/x/anchored.py": "", "sub/root_only.py": "", "#hash.py": "",
    "trailing.py": "", "docs/d.py": "", "docs/more/d.py": "", "z/deep/y/q.py": "", "global.py": "",
    "sub/excluded_by_info.py": "",
}


def git_tree(ws):
    home = os.path.join(ws.path, "home")
    os.makedirs(home)
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write('[user]\n\tname = t\n[core]\n\texcludesFile = "~/global-ignore"\n')
    with open(os.path.join(home, "global-ignore"), "w") as f:
        f.write("global.py\n")
    env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, "xdg"), "GIT_CONFIG_NOSYSTEM": "1"}
    repo = os.path.join(ws.path, "repo")
    for rel, text in GITIGNORE_TREE.items():
        ws.write(os.path.join("repo", rel), text or "x = 1\n")
    subprocess.run(["git", "init", "-q", repo], check=True, env=dict(os.environ, **env))
    with open(os.path.join(repo, ".git", "info", "exclude"), "a") as f:
        f.write("excluded_by_info.py\n")
    return repo, env


@test("ruff habits: respect-gitignore skips what git ignores (git itself is the reference), and can be turned off")
def _():
    with Workspace() as ws:
        repo, env = git_tree(ws)
        git = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=repo, capture_output=True,
                             text=True, check=True, env=dict(os.environ, **env)).stdout.split("\n")
        expected = sorted(p for p in git if p.endswith(".py"))
        assert "a/x.py" in expected and "gen/g.py" not in expected and "global.py" not in expected, expected
        r = run("--show-files", ".", cwd=repo, env=env)
        assert r.code == 0 and r.out.split() == expected, (r.out.split(), expected)
        # from a subdirectory, the .gitignore files above it still apply
        sub = [p[len("sub/"):] for p in expected if p.startswith("sub/")]
        r = run("--show-files", ".", cwd=os.path.join(repo, "sub"), env=env)
        assert r.out.split() == sub, (r.out.split(), sub)
        # the lint run sees the same files
        r = run("--format", "json", "--select", "ALL", ".", cwd=repo, env=env)
        assert r.code in (0, 1), r
        everything = sorted(p for p in GITIGNORE_TREE if p.endswith(".py"))
        for off in (["--no-respect-gitignore"], []):
            if not off:
                ws.write("repo/pyproject.toml", "[tool.oomlint]\nrespect-gitignore = false\n")
            r = run("--show-files", *off, ".", cwd=repo, env=env)
            assert r.out.split() == everything, r
        # a file named on the command line is linted all the same
        r = run("--show-files", "gen/g.py", cwd=repo, env=env)
        assert r.out == "gen/g.py\n", r
        # outside a git work tree a .gitignore means nothing
        ws.write("plain/.gitignore", "*.py\n")
        ws.write("plain/p.py", "x = 1\n")
        r = run("--show-files", ".", cwd=os.path.join(ws.path, "plain"), env=env)
        assert r.out == "p.py\n", r


@test("ruff habits: a .gitignore pattern cannot make discovery backtrack exponentially")
def _():
    import measure
    with Workspace() as ws:
        deep = os.path.join(*["d"] * 40)
        ws.write(os.path.join(deep, "x.py"), "x = 1\n")
        ws.write(".gitignore", "/" + "**/*/" * 10 + "nomatch\n")
        os.makedirs(os.path.join(ws.path, ".git"))
        # CPU time, not wall time: a busy machine does not fail it; a
        # backtracking match of this pattern runs for hours
        m = measure.run("--show-files", ".", cwd=ws.path, env={"HOME": ws.path}, timeout=120)
        assert m.code == 0 and m.out.strip().endswith("x.py"), m
        assert m.cpu < 10, m


# ---- --add-noqa --------------------------------------------------------------------------------

@test("ruff habits: --add-noqa suppresses every finding in place, safely, and leaves what it cannot")
def _():
    with Workspace() as ws:
        f = ws.write("train.py", LEAK)
        s = ws.write("s.py", 'import torch; device = "cuda"\na = torch.load("x.pt")  # noqa: OOM303\n'
                             'b = torch.load("""x\n""")\nc = torch.load("y.pt") \\\n    if a else None\n')
        crlf = ws.write("crlf.py", "import torch.cuda\r\nd = torch.load('z.pt')\r\n", mode="w")
        with open(crlf, "wb") as fh:
            fh.write(b"import torch.cuda\r\nd = torch.load('z.pt')\r\n")
        nb = ws.write("nb.ipynb", NOTEBOOK)
        c = ws.write("clean.py", CLEAN)
        before = os.stat(c).st_mtime_ns
        r = run("--add-noqa", f, s, crlf, nb, c)
        assert "Added 4 noqa directives." in r.err, r
        assert "s.py:3: no noqa directive added" in r.err and "s.py:5: no noqa directive added" in r.err, r
        assert r.code == 1, r  # the two findings it could not suppress are reported
        with open(f) as fh:
            assert "        total += loss  # noqa: OOM101\n" in fh.read()
        with open(s) as fh:
            text = fh.read()
        assert 'a = torch.load("x.pt")  # noqa: OOM303, OOM302\n' in text, text
        assert 'b = torch.load("""x\n""")\nc = torch.load("y.pt") \\\n' in text, text
        with open(crlf, "rb") as fh:
            assert fh.read() == b"import torch.cuda\r\nd = torch.load('z.pt')  # noqa: OOM302\r\n"
        cell = json.load(open(nb))["cells"][0]["source"]
        assert cell == ["import torch.distributed\n", "x = torch.load('a.pt')  # noqa: OOM302\n"], cell
        assert os.stat(c).st_mtime_ns == before
        # afterwards the run is clean but for what could not be suppressed, and a second run adds nothing
        r = run("--format", "json", f, crlf, nb)
        assert r.code == 0 and r.json() == [], r
        r = run("--add-noqa", f, crlf, nb)
        assert r.code == 0 and "Added 0 noqa directives." in r.err, r
        # it writes files: not with --fix, --diff or standard input
        for extra in (["--fix"], ["--diff"], ["-"]):
            r = run("--add-noqa", *extra, stdin="x = 1\n")
            assert r.code == 2 and "--add-noqa" in r.err, r


# ---- python -m oomlint ---------------------------------------------------------------------

@test("ruff habits: `python -m oomlint` runs the binary where the wheel is installed (venv, --target)")
def _():
    sys.path.insert(0, os.path.join(ROOT, "build-aux"))
    import release
    import harness
    with Workspace() as ws:
        wheel = release.write_wheel(os.path.join(ws.path, "dist"), harness.BIN, tag="linux_" + os.uname().machine)
        subprocess.run([sys.executable, "-m", "venv", os.path.join(ws.path, "venv")], check=True, timeout=300)
        py = os.path.join(ws.path, "venv", "bin", "python")
        subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", wheel], check=True, timeout=300,
                       capture_output=True)
        f = ws.write("train.py", LEAK)
        version = run("--version").out
        proc = subprocess.run([py, "-m", "oomlint", "--version"], capture_output=True, text=True, cwd=ws.path)
        assert proc.returncode == 0 and proc.stdout == version, proc
        # the binary's exit status and output come through as they are
        proc = subprocess.run([py, "-m", "oomlint", "--output-format", "concise", f], capture_output=True, text=True)
        assert proc.returncode == 1 and f"{f}:13:9: OOM101" in proc.stdout, proc
        # pip install --target: the binary is in the bin/ beside the package
        target = os.path.join(ws.path, "target")
        subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--target", target, wheel], check=True,
                       timeout=300, capture_output=True)
        proc = subprocess.run([sys.executable, "-m", "oomlint", "version"], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=target), cwd=ws.path)
        assert proc.returncode == 0 and proc.stdout == version, proc


# ---- the README is the user's page ----------------------------------------------------------------

@test("ruff habits: the README is a user's page: short, every rule, install as root, CI snippets that work, docs linked")
def _():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert len(readme.splitlines()) < 300, len(readme.splitlines())
    assert "sudo" not in readme, "say 'as root': not every machine has sudo"
    # the commands CI and users run
    assert "make demo" in readme and "\nmake test " in readme, "the README's make demo / make test commands"
    for rule in run("rules", "--format", "json").json():
        assert f"| {rule['code']} | {rule['name']} |" in readme, rule["code"]
    # the code-scanning snippet grants what upload-sarif needs
    import yaml
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", readme, re.S)]
    upload = [b for b in blocks if "upload-sarif" in json.dumps(b)]
    assert upload, "no code-scanning snippet"
    for b in upload:
        job = next(iter(b["jobs"].values()))
        assert job["permissions"]["security-events"] == "write", job
    gitlab = [b for b in blocks if "oomlint" in b and "artifacts" in b.get("oomlint", {})]
    assert gitlab and set(gitlab[0]["oomlint"]["artifacts"]["reports"]) == {"codequality", "junit"}, gitlab
    # what moved out is linked, and every local link resolves (docs/probe.md is the probe's own page)
    for doc in ("docs/performance.md", "docs/how-it-works.md", "docs/accuracy.md", "docs/probe.md",
                "docs/output-formats.md", "docs/install.md"):
        assert f"]({doc})" in readme, doc
    for target in re.findall(r"\]\(((?:docs|editors)/[^)#]*)", readme):
        if target != "docs/probe.md":
            assert os.path.exists(os.path.join(ROOT, target)), target
    for gone in ("## Performance", "## How it works", "What each change bought"):
        assert gone not in readme, gone
    with open(os.path.join(ROOT, "docs", "performance.md"), encoding="utf-8") as f:
        assert "What each change bought" in f.read()
