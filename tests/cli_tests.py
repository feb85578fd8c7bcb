"""CLI tests: exit codes, every flag, suppressions, stdin, directories, bad
paths, the JSON shape, the text output snapshot, fixes, and the rule docs."""
import json
import os
import re
import stat
import subprocess

from harness import ROOT, Workspace, run, test

BAD = """import torch
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

AMP = "from torch.cuda.amp import autocast\nwith autocast():\n    pass\n"
CLEAN = "import torch\nx = torch.zeros(3)\n"
GOLDEN = os.path.join(ROOT, "tests", "golden")


# ---- exit codes ---------------------------------------------------------------

@test("cli: exit 0 on a clean file")
def _():
    with Workspace() as ws:
        r = run(ws.write("ok.py", CLEAN))
        assert r.code == 0, r
        assert "All checks passed!" in r.out, r


@test("cli: exit 1 on findings")
def _():
    with Workspace() as ws:
        r = run(ws.write("bad.py", BAD))
        assert r.code == 1, r
        assert "OOM101" in r.out, r


@test("cli: --exit-zero exits 0 but still reports")
def _():
    with Workspace() as ws:
        r = run("--exit-zero", ws.write("bad.py", BAD))
        assert r.code == 0 and "OOM101" in r.out, r


@test("cli: unknown flag is exit 2 naming the flag")
def _():
    r = run("--frobnicate", "x.py")
    assert r.code == 2, r
    assert "--frobnicate" in r.err, r


@test("cli: flag missing its value is exit 2")
def _():
    r = run("--select")
    assert r.code == 2 and "--select" in r.err, r


@test("cli: bad --format value is exit 2")
def _():
    r = run("--format", "yaml", "x.py")
    assert r.code == 2 and "yaml" in r.err, r


@test("cli: bad --color value is exit 2")
def _():
    r = run("--color", "sometimes", "x.py")
    assert r.code == 2 and "sometimes" in r.err, r


@test("cli: unknown selector is exit 2")
def _():
    r = run("--select", "OOM999", "x.py")
    assert r.code == 2 and "OOM999" in r.err, r
    r = run("--ignore", "E501", "x.py")
    assert r.code == 2 and "E501" in r.err, r


@test("cli: a missing path is OOM001 and exit 2 when nothing was linted")
def _():
    with Workspace() as ws:
        r = run(os.path.join(ws.path, "nope.py"))
        assert r.code == 2, r
        assert "OOM001" in r.out and "nope.py" in r.out, r


@test("cli: a missing path among good ones: reported, run goes on, exit 2 (also with --exit-zero)")
def _():
    with Workspace() as ws:
        good = ws.write("bad.py", BAD)
        r = run("--format", "json", os.path.join(ws.path, "nope.py"), good)
        assert r.code == 2, r
        assert run("--exit-zero", os.path.join(ws.path, "nope.py"), good).code == 2
        codes = sorted(f["code"] for f in r.json())
        assert codes == ["OOM001", "OOM101"], codes


@test("cli: a directory with no Python files is a warning and exit 0, as in Ruff")
def _():
    with Workspace() as ws:
        ws.write("README.md", "hi\n")
        r = run(ws.path)
        assert r.code == 0 and "warning: no Python files" in r.err, r


@test("cli: a misspelt subcommand that names no file is a usage error with a suggestion")
def _():
    with Workspace() as ws:
        ws.write("ok.py", CLEAN)
        for typo, meant in (("chek", "check"), ("rulez", "rules"), ("versoin", "version"), ("serve", "server"),
                            ("prob", "probe"), ("explian", "explain")):
            r = run(typo, ".", cwd=ws.path)
            assert r.code == 2 and f"unknown command '{typo}' (did you mean '{meant}'?)" in r.err, (typo, r)
            assert r.out == "", r
        # a file or directory of that name is linted, as any path is
        ws.write("chek/a.py", CLEAN)
        r = run("chek", cwd=ws.path)
        assert r.code == 0 and "All checks passed!" in r.out, r
        # far from every subcommand, or shaped like a file: a missing path as before
        for missing in ("train", "chek.py"):
            r = run(missing, cwd=ws.path)
            assert r.code == 2 and "OOM001" in r.out and "did you mean" not in r.err, (missing, r)


@test("cli: a long option with one dash (-fix) is refused with the option meant")
def _():
    with Workspace() as ws:
        f = ws.write("bad.py", BAD)
        for typo, meant in (("-fix", "--fix"), ("-quiet", "--quiet"), ("-output-format", "--output-format"),
                            ("-output-file", "--output-file"), ("-statistic", "--statistics")):
            r = run(typo, "json", f, cwd=ws.path)
            assert r.code == 2 and f"unknown option '{typo}' (did you mean '{meant}'?)" in r.err, (typo, r)
        # -o took `utput-file` for a file name and wrote the report there
        assert not os.path.exists(os.path.join(ws.path, "utput-file")) and \
            not os.path.exists(os.path.join(ws.path, "utput-format"))
        # short options with a value attached still work
        out = os.path.join(ws.path, "report.txt")
        assert run("-j2", "-o" + out, f).code == 1 and os.path.exists(out)


@test("cli: near-miss rule codes and rule names get a suggestion (--select, --ignore, `rule`)")
def _():
    for args, bad, meant in ((["--select", "OOM1011"], "OOM1011", "OOM101"),
                             (["--select", "OOM1O1"], "OOM1O1", "OOM101"),
                             (["--ignore", "oom7O3"], "OOM7O3", "OOM703"),
                             (["--extend-select", "tensor-accumulated-with-graph"], "TENSOR-ACCUMULATED-WITH-GRAPH",
                              "OOM101"),
                             (["--ignore", "eval_without_nograd"], "EVAL_WITHOUT_NOGRAD", "OOM201")):
        r = run(*args, "x.py")
        assert r.code == 2 and f"unknown rule selector '{bad}'; did you mean '{meant}' (" in r.err, (args, r)
    # nothing near, or several equally near: no guess
    for sel in ("OOM999", "OOM109", "E501"):
        r = run("--select", sel, "x.py")
        assert r.code == 2 and "did you mean" not in r.err and "see 'oomlint rules'" in r.err, (sel, r)
    r = run("rule", "OOM1011")
    assert r.code == 2 and "did you mean 'OOM101' (tensor-accumulated-with-graph)?" in r.err, r
    r = run("rule", "torch-load-without-maplocation")
    assert r.code == 2 and "did you mean 'OOM302' (torch-load-without-map-location)?" in r.err, r
    r = run("rule", "OOM999")
    assert r.code == 2 and "did you mean" not in r.err, r


@test("cli: a misspelt probe flag names the flag meant")
def _():
    for args, meant in ((["--scrpt", "x.py"], "--script"), (["-script", "x.py"], "--script"),
                        (["--iteration", "5"], "--iterations"), (["--memroy", "8GiB"], "--memory")):
        r = run("probe", *args)
        assert r.code == 2 and f"(did you mean '{meant}'?)" in r.err, (args, r)
    r = run("probe", "train.py")
    assert r.code == 2 and "takes no paths" in r.err and "did you mean" not in r.err, r


# ---- selection --------------------------------------------------------------------

@test("cli: --select ALL is every rule: the opt-in ones and the findings kept for selection by code")
def _():
    rules = run("rules", "--format", "json").json()
    every = ",".join(r["code"] for r in rules)
    opt_in = {r["code"] for r in rules if r["opt_in"]}
    assert opt_in >= {"OOM003", "OOM107", "OOM401", "OOM501"}, opt_in
    fixtures = os.path.join(ROOT, "fixtures")

    def found(*args):
        r = run("--format", "json", "--isolated", *args, fixtures, timeout=300)
        assert r.code == 1, r
        return sorted((f["path"], f["line"], f["column"], f["code"]) for f in r.json())
    by_code = found("--select", every)
    assert {c for *_, c in by_code} >= opt_in, "the fixtures no longer show every opt-in rule"
    assert found("--select", "ALL") == by_code
    assert found("--extend-select", "ALL") == by_code
    # ALL is the least specific selector: any code or prefix ignored wins over it
    assert found("--select", "ALL", "--ignore", "OOM4") == [f for f in by_code if not f[3].startswith("OOM4")]
    prefix = found("--select", "OOM")
    assert len(prefix) < len(by_code) and not {c for *_, c in prefix} & opt_in, prefix
    help_text = run("--help").out
    assert "Opt-in rules (" + ", ".join(sorted(opt_in)) + ")" in help_text, help_text
    assert "by ALL (every rule)" in help_text, help_text


@test("cli: --select limits rules, by code or prefix")
def _():
    with Workspace() as ws:
        f = ws.write("both.py", BAD + AMP)
        codes = lambda *a: sorted({x["code"] for x in run("--format", "json", *a, f).json()})
        assert codes() == ["OOM101", "OOM502"]
        assert codes("--select", "OOM502") == ["OOM502"]
        assert codes("--select", "OOM1") == ["OOM101"]
        assert codes("--select=oom5,OOM101") == ["OOM101", "OOM502"]


@test("cli: --ignore and --extend-select, more specific selector wins")
def _():
    with Workspace() as ws:
        f = ws.write("both.py", BAD + AMP)
        codes = lambda *a: sorted({x["code"] for x in run("--format", "json", *a, f).json()})
        assert codes("--ignore", "OOM5") == ["OOM101"]
        assert codes("--ignore", "OOM", "--extend-select", "OOM101") == ["OOM101"]
        assert codes("--select", "OOM502", "--extend-select", "OOM101") == ["OOM101", "OOM502"]
        r = run("--ignore", "OOM101,OOM502", f)
        assert r.code == 0, r


# ---- output ------------------------------------------------------------------------

@test("cli: JSON has the documented shape and order")
def _():
    with Workspace() as ws:
        ws.write("b.py", AMP)
        ws.write("a.py", BAD)
        r = run("--format", "json", ws.path)
        data = r.json()
        assert isinstance(data, list) and len(data) == 3, data
        keys = {"code", "name", "severity", "path", "line", "column", "end_line", "end_column",
                "message", "help", "url", "fix", "evidence", "confidence"}
        for f in data:
            assert set(f) == keys, set(f) ^ keys
            assert isinstance(f["line"], int) and f["line"] >= 1
            assert isinstance(f["column"], int) and f["column"] >= 1
            assert (f["end_line"], f["end_column"]) >= (f["line"], f["column"])
            assert f["severity"] in ("error", "warning", "info")
            assert f["url"].endswith(f["code"] + ".md")
            if f["fix"] is not None:
                assert f["fix"]["applicability"] in ("safe", "unsafe")
                for e in f["fix"]["edits"]:
                    assert set(e) >= {"line", "column", "end_line", "end_column", "content"}
        order = [(f["path"], f["line"], f["column"]) for f in data]
        assert order == sorted(order), order
        first = data[0]
        assert first["path"].endswith("a.py") and first["code"] == "OOM101"
        assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (13, 9, 13, 22)
        assert first["fix"]["edits"] == [
            {"line": 13, "column": 22, "end_line": 13, "end_column": 22, "content": ".item()"}]


@test("cli: JSON columns count code points")
def _():
    with Workspace() as ws:
        # 'é' is two bytes; the import starts at code point 8 of its line
        f = ws.write("u.py", "s='é'; from torch.cuda.amp import autocast\n")
        data = run("--format", "json", f).json()
        assert data[0]["column"] == 8, data[0]


@test("cli: text output matches the snapshot")
def _():
    r = run("--color", "never", "examples/train.py", cwd=ROOT)
    with open(os.path.join(GOLDEN, "demo.txt")) as f:
        want = f.read()
    assert r.out == want, "text output changed:\n" + r.out


@test("cli: --add-noqa says how many directives it added, not that all checks passed")
def _():
    with Workspace() as ws:
        f = ws.write("bad.py", BAD)
        for added in ("Added 1 noqa directive.", "Added 0 noqa directives."):
            r = run("--add-noqa", f)
            assert r.code == 0 and r.out == "" and r.err.strip() == added, r


@test("cli: --statistics explains [~] where it shows one, and --help explains the markers")
def _():
    with Workspace() as ws:
        f = ws.write("amp.py", AMP + "from torch.cuda.amp.autocast_mode import autocast as ac\n")
        r = run("--statistics", f)
        lines = r.out.splitlines()
        assert lines[0] == "3\tOOM502\t[~] deprecated-cuda-amp", r
        assert lines[1] == "[~] marks a rule only some of whose findings `--fix` can fix.", r
        # only where a [~] is shown, and not with -q
        assert "marks a rule" not in run("--statistics", ws.write("all.py", AMP)).out
        assert "marks a rule" not in run("--statistics", "-q", f).out
    help_text = run("--help").out
    assert "[*] before a" in help_text and "[~] some" in help_text, help_text


@test("cli: a finding over several lines is underlined from each line's code, not its indentation")
def _():
    with Workspace() as ws:
        f = ws.write("load.py", 'import torch\nweights = torch.load(\n    "weights.pt",\n\n\tweights_only=True)\n')
        r = run("--select", "OOM302", f)  # by its code: shown off the GPU too
        frame = r.out.split("\n")[1:9]
        assert frame == ["  |",
                         "1 | import torch",
                         "2 | weights = torch.load(",
                         "  |           ^^^^^^^^^^^",
                         '3 |     "weights.pt",',
                         "  |     ^^^^^^^^^^^^^",
                         "4 | ",
                         "5 |     weights_only=True)"], r.out
        assert r.out.split("\n")[9] == "  |     ^^^^^^^^^^^^^^^^^^", r.out  # a tab is shown as four spaces


@test("cli: --quiet drops the summary, --statistics counts")
def _():
    with Workspace() as ws:
        f = ws.write("both.py", BAD + AMP)
        q = run("--quiet", f)
        assert "Found" not in q.out and "OOM101" in q.out, q
        s = run("--statistics", f)
        lines = [l for l in s.out.splitlines() if "OOM" in l]
        # Ruff's columns: count, code, [*] when every finding has a safe fix, name
        assert lines[:2] == ["2\tOOM502\t[*] deprecated-cuda-amp", "1\tOOM101\t[*] tensor-accumulated-with-graph"], s
        assert "^^^" not in s.out, s


@test("cli: --color always colours, never does not")
def _():
    with Workspace() as ws:
        f = ws.write("bad.py", BAD)
        assert "\x1b[" in run("--color", "always", f).out
        assert "\x1b[" not in run("--color", "never", f).out
        assert "\x1b[" not in run(f).out  # auto, not a terminal


@test("cli: --version and --help")
def _():
    r = run("--version")
    assert r.code == 0 and re.match(r"oomlint \d+\.\d+\.\d+", r.out), r
    r = run("--help")
    assert r.code == 0 and "--select" in r.out and "Exit status" in r.out, r


# ---- suppressions ------------------------------------------------------------------------

@test("cli: noqa forms suppress exactly what they name")
def _():
    src = BAD.replace("total += loss", "total += loss  # noqa: OOM101")
    src2 = BAD.replace("total += loss", "total += loss  # noqa: OOM999")
    src3 = BAD.replace("total += loss", "total += loss  # NOQA")
    src4 = BAD.replace("total += loss", "total += loss  # oomlint: disable=OOM101")
    src5 = "# Copyright\n# oomlint: disable-file\n" + BAD
    with Workspace() as ws:
        assert run(ws.write("a.py", src)).code == 0
        assert run(ws.write("b.py", src2)).code == 1
        assert run(ws.write("c.py", src3)).code == 0
        assert run(ws.write("d.py", src4)).code == 0
        assert run(ws.write("e.py", src5)).code == 0


@test("cli: a directive on its own line covers the rest of its block")
def _():
    src = BAD.replace("        loss.backward()\n", "        # oomlint: disable=OOM101\n        loss.backward()\n")
    with Workspace() as ws:
        assert run(ws.write("a.py", src)).code == 0
        after = src + "\n\nfor x, y in loader:\n    l = criterion(model(x), y)\n    l.backward()\n    t += l\n"
        r = run("--format", "json", ws.write("b.py", "t = 0\n" + after))
        assert [f["code"] for f in r.json()] == ["OOM101"], r


@test("cli: a malformed suppression is reported on stderr with its file and line, as Ruff warns")
def _():
    def check(comment, line_text, suppressed, ws, name):
        src = BAD.replace("total += loss", "total += loss  " + comment) if comment else BAD
        r = run("--format", "json", ws.write(name, src), cwd=ws.path)
        assert (r.json() == []) == suppressed, (comment, r)
        warnings = [l for l in r.err.splitlines() if l.startswith("oomlint: warning:")]
        assert len(warnings) == 1 and f"{name}:13: " in warnings[0] and line_text in warnings[0], (comment, r.err)
        return warnings[0]

    with Workspace() as ws:
        # no colon: a blanket noqa, as flake8 and Ruff read it, and a warning saying so
        w = check("# noqa OOM102", "expected `:`", True, ws, "a.py")
        assert "blanket" in w, w
        check("# noqa:", "expected a comma-separated list of codes", True, ws, "b.py")
        # an unknown oomlint word suppresses nothing, and the warning names the right spelling
        w = check("# oomlint: ignore=OOM101", "unknown `# oomlint:` directive `ignore`", False, ws, "c.py")
        assert "disable=" in w, w
        check("# oomlint: disable=", "expected a comma-separated list of codes", True, ws, "d.py")
        # the file-level form after code suppresses nothing
        check("# oomlint: noqa", "must be on a line of its own", False, ws, "e.py")
        # well-formed directives and other comments say nothing
        for ok in ("# noqa", "# noqa: OOM101", "# noqa  # the loss is a float here", "# oomlint: disable=OOM101",
                   "# see the oomlint: docs", "# type: ignore"):
            r = run(ws.write("ok.py", BAD.replace("total += loss", "total += loss  " + ok)))
            assert "warning" not in r.err, (ok, r)
        # disable-file below the first statement is ignored, and now says so
        r = run("--format", "json", ws.write("late.py", BAD + "# oomlint: disable-file\n"))
        assert len(r.json()) == 1 and "late.py:15: `# oomlint: disable-file` is honoured only" in r.err, r
        # a crafted comment cannot forge a warning line
        r = run(ws.write("esc.py", BAD.replace("total += loss", "total += loss  # oomlint: \x1b[31m")))
        assert "\x1b" not in r.err, r


@test("cli: `# oomlint: noqa` on a line of its own exempts the whole file, as `# ruff: noqa` does")
def _():
    with Workspace() as ws:
        # anywhere in the file, even after code
        for place in ("top", "middle", "end"):
            lines = BAD.splitlines(keepends=True)
            at = {"top": 0, "middle": 7, "end": len(lines)}[place]
            src = "".join(lines[:at] + ["# oomlint: noqa\n"] + lines[at:]) + AMP
            r = run("--format", "json", ws.write(f"{place}.py", src))
            assert r.code == 0 and r.json() == [] and r.err == "", (place, r)
        # with codes: only those, in the whole file
        src = BAD + AMP + "    # oomlint: noqa: OOM502\n"
        r = run("--format", "json", ws.write("codes.py", src))
        assert [f["code"] for f in r.json()] == ["OOM101"], r
        # OOM003 judges it like any directive of oomlint's own
        src = "# oomlint: noqa: OOM702\n" + BAD
        r = run("--format", "json", "--extend-select", "OOM003", ws.write("unused.py", src))
        got = {(f["code"], f["line"]) for f in r.json()}
        assert got == {("OOM101", 14), ("OOM003", 1)}, got
        r = run("--fix", "--extend-select", "OOM003", "--select", "OOM003", ws.write("unused2.py", src))
        assert ws.read("unused2.py") == BAD, ws.read("unused2.py")


@test("cli: noqa text inside a string does not suppress")
def _():
    src = BAD.replace("total += loss", "total += loss; s = '# noqa'")
    with Workspace() as ws:
        assert run(ws.write("a.py", src)).code == 1


# ---- inputs ------------------------------------------------------------------------------

@test("cli: stdin with --stdin-filename")
def _():
    r = run("--format", "json", "--stdin-filename", "pkg/train.py", "-", stdin=BAD)
    data = r.json()
    assert r.code == 1 and data[0]["path"] == "pkg/train.py", r
    r = run("-", stdin=CLEAN)
    assert r.code == 0, r


@test("cli: directories recurse and skip hidden, caches, venvs and excludes")
def _():
    with Workspace() as ws:
        ws.write("src/a.py", BAD)
        ws.write("src/sub/b.py", BAD)
        ws.write("src/nb.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": BAD}],
                                             "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
        ws.write(".git/x.py", BAD)
        ws.write("src/.hidden/c.py", BAD)
        ws.write("src/__pycache__/d.py", BAD)
        ws.write("venv/lib/e.py", BAD)
        ws.write("myenv/pyvenv.cfg", "home = /usr\n")
        ws.write("myenv/lib/f.py", BAD)
        ws.write("src/legacy/g.py", BAD)
        ws.write("src/notes.txt", BAD)
        r = run("--format", "json", "--exclude", "legacy", ".", cwd=ws.path)
        paths = sorted({f["path"] for f in r.json()})
        assert paths == ["src/a.py", "src/nb.ipynb", "src/sub/b.py"], paths


@test("cli: an explicitly named file is linted even if excluded, unless --force-exclude")
def _():
    with Workspace() as ws:
        f = ws.write("gen/a.py", BAD)
        assert run("--exclude", "gen", f).code == 1
        assert run("--exclude", "gen", "--force-exclude", f, ws.write("ok.py", CLEAN)).code == 0


@test("cli: the same file named twice is reported once")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        r = run("--format", "json", "a.py", "./a.py", ".", cwd=ws.path)
        assert len(r.json()) == 1, r


@test("cli: results do not depend on the number of threads")
def _():
    with Workspace() as ws:
        for i in range(12):
            ws.write(f"m{i:02}.py", BAD if i % 2 else AMP)
        one = run("--format", "json", "-j", "1", ws.path).out
        many = run("--format", "json", "--threads=8", ws.path).out
        assert one == many


# ---- fixes ---------------------------------------------------------------------------------

FSTRING_LOSS = ("import torch.nn as nn\n"
                "a = f\"{nn.MSELoss(size_average=False)}\"\n"
                "b = f\"\"\"{nn.MSELoss(size_average=False)}\"\"\"\n"
                "c = f\"{f'{nn.MSELoss(size_average=False)}'}\"\n")


@test("cli: a fix inside an f-string takes the other quote; one no quote fits is not offered before 3.12")
def _():
    import sys
    with Workspace() as ws:
        f = ws.write("losses.py", FSTRING_LOSS)
        r = run("--fix", f)
        assert r.code == 1 and "2 fixed, 1 remaining" in r.out, r
        fixed = ws.read("losses.py")
        assert fixed.split("\n")[1:4] == ["a = f\"{nn.MSELoss(reduction='sum')}\"",
                                          "b = f\"\"\"{nn.MSELoss(reduction=\"sum\")}\"\"\"",
                                          "c = f\"{f'{nn.MSELoss(size_average=False)}'}\""], fixed
        # the finding stays, without a fix that would not parse before Python 3.12
        assert "losses.py:4:22: OOM703" in r.out and "(fix available)" not in r.out, r
        if sys.version_info < (3, 12):  # this Python's grammar is the judge
            compile(fixed, "losses.py", "exec")
            try:
                compile(FSTRING_LOSS.replace("size_average=False", 'reduction="sum"'), "x.py", "exec")
                raise AssertionError("Python before 3.12 parsed a quote reused inside an f-string")
            except SyntaxError:
                pass
        # a project that requires Python 3.12 takes the nested fix as it is
        ws.write("pyproject.toml", '[project]\nname = "p"\nrequires-python = ">=3.12"\n')
        ws.write("losses.py", FSTRING_LOSS)
        r = run("--diff", "losses.py", cwd=ws.path)
        assert r.code == 1 and "Would fix 3 findings." in r.err, r
        assert "+c = f\"{f'{nn.MSELoss(reduction=\"sum\")}'}\"" in r.out, r



@test("cli: --fix writes safe fixes and keeps the file's mode")
def _():
    with Workspace() as ws:
        f = ws.write("a.py", AMP)
        os.chmod(f, 0o751)
        r = run("--fix", f)
        assert r.code == 0, r
        assert ws.read("a.py") == 'from torch.amp import autocast\nwith autocast("cuda"):\n    pass\n'
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o751
        assert [n for n in os.listdir(ws.path) if n.startswith(".oomlint")] == []


@test("cli: --fix leaves unsafe fixes unless --unsafe-fixes")
def _():
    src = BAD.replace("total += loss", "total += model(x)")
    with Workspace() as ws:
        f = ws.write("a.py", src)
        r = run("--fix", f)
        assert r.code == 1 and ws.read("a.py") == src, r
        r = run("--fix", "--unsafe-fixes", f)
        assert "total += model(x).detach()" in ws.read("a.py"), ws.read("a.py")


@test("cli: --diff prints a diff and writes nothing")
def _():
    with Workspace() as ws:
        f = ws.write("a.py", AMP)
        r = run("--diff", "a.py", cwd=ws.path)
        assert r.code == 1, r
        assert ws.read("a.py") == AMP
        assert r.out.startswith("--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n"), r.out
        assert "-from torch.cuda.amp import autocast\n-with autocast():\n+from torch.amp import autocast\n" in r.out, r.out
        assert run("--diff", ws.write("ok.py", CLEAN)).code == 0


@test("cli: --fix on stdin prints the fixed code")
def _():
    r = run("--fix", "-", stdin=AMP)
    assert r.out == 'from torch.amp import autocast\nwith autocast("cuda"):\n    pass\n', r
    r = run("--fix", "-", stdin=CLEAN)
    assert r.out == CLEAN and r.code == 0, r


@test("cli: --fix keeps CRLF line endings, the BOM and a latin-1 encoding")
def _():
    with Workspace() as ws:
        crlf = "\ufeff" + AMP.replace("\n", "\r\n")
        f = ws.write("a.py", crlf.encode("utf-8"), "wb")
        run("--fix", f)
        got = ws.read("a.py", "rb")
        assert got == ('\ufefffrom torch.amp import autocast\r\nwith autocast("cuda"):\r\n    pass\r\n').encode(), got
        latin = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + AMP).encode("latin-1")
        g = ws.write("b.py", latin, "wb")
        run("--fix", g)
        assert ws.read("b.py", "rb") == latin.replace(b"torch.cuda.amp", b"torch.amp").replace(
            b"autocast()", b'autocast("cuda")')


# ---- rule docs ---------------------------------------------------------------------------------

@test("cli: `oomlint rule` wraps its prose at 100 columns and leaves the code examples as written")
def _():
    codes = [r["code"] for r in run("rules", "--format", "json").json()]
    wrapped = 0
    for code in codes:
        text = run("rule", code).out
        md = run("rule", code, "--markdown").out
        section = None
        for line in text.split("\n"):
            if line and not line.startswith(" "):
                section = line
                continue
            if section in ("Example", "Use instead"):
                continue
            # a single word (a URL) longer than the room keeps its line
            assert len(line) <= 100 or " " not in line.strip(), (code, section, line)
        # the prose says the same words, and the examples are the markdown's code verbatim
        what = text.split("\nWhat it does\n", 1)[1].split("\n\n", 1)[0]
        md_what = md.split("\n## What it does\n\n", 1)[1].split("\n\n", 1)[0]
        assert what.split() == md_what.split(), code
        wrapped += what.count("\n")
        example = text.split("\nExample\n", 1)[1].split("\n\n", 1)[0]
        md_example = md.split("## Example\n\n```python\n", 1)[1].split("\n```", 1)[0]
        assert example == "\n".join("    " + l if l else "    " for l in md_example.split("\n")), code
    assert wrapped > len(codes), "no paragraph was wrapped"



@test("cli: rules lists every rule; rule CODE explains one")
def _():
    r = run("rules")
    assert r.code == 0 and "OOM101" in r.out and "OOM502" in r.out, r
    data = run("rules", "--format", "json").json()
    assert {d["code"] for d in data} >= {"OOM001", "OOM002", "OOM101", "OOM502"}
    r = run("rule", "oom502")
    assert r.code == 0 and "Why is this bad?" in r.out and "Use instead" in r.out, r
    r = run("rule", "tensor-accumulated-with-graph")
    assert r.code == 0 and r.out.startswith("OOM101"), r
    r = run("rule", "OOM999")
    assert r.code == 2 and "OOM999" in r.err, r


@test("cli: docs/rules pages match the rule docs in the binary")
def _():
    data = run("rules", "--format", "json").json()
    for d in data:
        path = os.path.join(ROOT, "docs", "rules", d["code"] + ".md")
        assert os.path.exists(path), f"missing {path}: run `make docs`"
        with open(path) as f:
            want = f.read()
        got = run("rule", d["code"], "--markdown").out
        assert got == want, f"{path} is stale: run `make docs`"


@test("cli: --fix on a notebook rewrites only the fixed lines, magics kept")
def _():
    src = os.path.join(ROOT, "fixtures", "notebooks", "training.ipynb")
    with open(src, encoding="utf-8") as f:
        original = f.read()
    with Workspace() as ws:
        nb = ws.write("t.ipynb", original)
        r = run("--fix", nb)
        fixed = ws.read("t.ipynb")
        json.loads(fixed)  # still a notebook
        want = original.replace("from torch.cuda.amp import autocast", "from torch.amp import autocast")
        want = want.replace("with autocast():", 'with autocast(\\"cuda\\"):')
        want = want.replace("total += loss  #", "total += loss.item()  #")
        assert fixed == want, "\n".join(difflib_lines(want, fixed))
        assert "%%time" in fixed and "!pip install" in fixed and "%%bash" in fixed
        # the JSON report keeps cell numbering
        data = run("--format", "json", nb).json()
        assert {(d["code"], d["cell"], d["line"]) for d in data} == {
            ("OOM102", 7, 1), ("OOM201", 7, 1), ("OOM504", 5, 5)}, data


@test("cli: --fix on a notebook saved with CRLF (or CR) line breaks keeps them in the rewritten cell")
def _():
    src = os.path.join(ROOT, "fixtures", "notebooks", "training.ipynb")
    with open(src, "rb") as f:
        original = f.read()
    assert b"\r" not in original
    with Workspace() as ws:
        for newline in (b"\r\n", b"\r"):
            nb = ws.write("t.ipynb", original.replace(b"\n", newline), "wb")
            r = run("--fix", nb)
            assert r.code in (0, 1) and " fixed" in r.out, r
            fixed = ws.read("t.ipynb", "rb")
            json.loads(fixed)
            assert fixed != original.replace(b"\n", newline), "nothing was fixed"
            stray = fixed.replace(newline, b"")
            assert b"\n" not in stray and b"\r" not in stray, f"line breaks other than {newline!r} written"
            assert fixed.replace(newline, b"\n") == run_fix_lf(ws, original), "different fixes than with LF"


def run_fix_lf(ws, original):
    path = ws.write("lf.ipynb", original, "wb")
    run("--fix", path)
    return ws.read("lf.ipynb", "rb")


TOTAL_USED_AS_TENSOR = """import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4, device=device), torch.randn(8, 1, device=device)) for _ in range(3)]
total_loss = 0
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss
print("mean", total_loss.item() / len(loader))
"""


@test("cli: OOM101's fix keeps a total that is used as a tensor later a tensor, says why it is unsafe, and runs")
def _():
    with Workspace() as ws:
        f = ws.write("train.py", TOTAL_USED_AS_TENSOR)
        [d] = run("--format", "json", f).json()
        fix = d["fix"]
        assert d["code"] == "OOM101" and fix["applicability"] == "unsafe", d
        assert [e["content"] for e in fix["edits"]] == [".detach()"], fix
        assert "total_loss" in fix["unsafe_reason"] and "gradient" in fix["unsafe_reason"], fix
        # the text output's help line says what to write and why the fix is unsafe
        r = run(f)
        help_line = [l for l in r.out.splitlines() if "help:" in l][0]
        assert "`total_loss += loss.detach()`" in help_line and "(unsafe fix: `.detach()` keeps" in help_line, r
        r = run("--fix", "--unsafe-fixes", f)
        assert r.code == 0 and ws.read("train.py") == TOTAL_USED_AS_TENSOR.replace(
            "total_loss += loss\n", "total_loss += loss.detach()\n"), ws.read("train.py")
        # the fixed script still runs (a float total would raise AttributeError at .item())
        python = "/usr/bin/python3"
        probe = subprocess.run([python, "-c", "import torch"], capture_output=True) if os.path.exists(python) else None
        if probe is None or probe.returncode != 0:
            print("SKIPPED: no python with torch at /usr/bin/python3; the fixed script was not run", flush=True)
        else:
            p = subprocess.run([python, f], capture_output=True, text=True, timeout=120)
            assert p.returncode == 0 and p.stdout.startswith("mean "), p.stderr[-2000:]
        # without the later use: `.item()`, a safe fix, with no reason attached
        g = ws.write("plain.py", TOTAL_USED_AS_TENSOR.replace("total_loss.item()", "total_loss"))
        [d] = run("--format", "json", g).json()
        assert d["fix"]["applicability"] == "safe" and "unsafe_reason" not in d["fix"], d
        assert [e["content"] for e in d["fix"]["edits"]] == [".item()"], d


def difflib_lines(a, b):
    import difflib
    return list(difflib.unified_diff(a.splitlines(), b.splitlines(), "want", "got", lineterm=""))


# ---- projects: files that see each other's functions ----------------------------

METER = """class Meter:
    def __init__(self):
        self.total = 0

    def update(self, value):
        self.total += value
"""

USES_METER = """import torch.nn as nn
from meters import Meter

model = nn.Linear(4, 2).cuda()
criterion = nn.MSELoss()


def train(loader, optimizer):
    meter = Meter()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        meter.update(loss)
"""


@test("cli: a directory is one project; a file linted alone does not read its neighbours")
def _():
    with Workspace() as ws:
        ws.write("meters.py", METER)
        ws.write("train.py", USES_METER)
        together = run("--isolated", "--format", "json", ".", cwd=ws.path).json()
        assert [(f["path"], f["line"], f["code"]) for f in together] == [("train.py", 15, "OOM101")], together
        assert "Meter.update" in together[0]["message"], together
        alone = run("--isolated", "--format", "json", "train.py", cwd=ws.path).json()
        assert alone == [], alone
        # two files named on the command line are one project too
        named = run("--isolated", "--format", "json", "train.py", "meters.py", cwd=ws.path).json()
        assert [(f["path"], f["line"]) for f in named] == [("train.py", 15)], named


@test("cli: projects with import cycles, unreadable and broken files finish with any thread count")
def _():
    with Workspace() as ws:
        ws.write("a.py", "from b import g\nimport a\n\ndef f(x):\n    return g(x)\n")
        ws.write("b.py", "from a import f\n\ndef g(x):\n    return f(x)\n")
        ws.write("c.py", "from a import f\nfrom broken import h\nfrom binary import k\n\n"
                         "def run(loader, m):\n    for x in loader:\n        f(x)\n        h(x)\n        k(x)\n")
        ws.write("broken.py", "def h(x:\n    return (\n")
        ws.write("binary.py", b"\x00\x01\x02\xff\xfe", mode="wb")
        results = set()
        for threads in ("1", "2", "4"):
            r = run("--isolated", "--format", "json", "-j", threads, ".", cwd=ws.path, timeout=60)
            assert r.code == 2, r  # binary.py was not linted
            results.add(json.dumps(r.json(), sort_keys=True))
        assert len(results) == 1, results
        codes = {f["code"] for f in json.loads(results.pop())}
        assert codes == {"OOM001", "OOM002"}, codes


@test("cli: a long chain of imports gives the same findings on one thread as on many")
def _():
    with Workspace() as ws:
        for i in range(24):
            nxt = f"from m{i + 1} import Meter{i + 1}\n" if i < 23 else ""
            body = (f"{nxt}import torch.nn as nn\n\nmodel = nn.Linear(2, 2).cuda()\n\n\n"
                    f"class Meter{i}:\n    def __init__(self):\n        self.total = 0\n\n"
                    f"    def update(self, value):\n        self.total += value\n")
            if i < 23:
                body += (f"\n\ndef train(loader, optimizer):\n    meter = Meter{i + 1}()\n"
                         f"    for x in loader:\n        optimizer.zero_grad()\n"
                         f"        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
                         f"        meter.update(loss)\n")
            ws.write(f"m{i}.py", body)
        seen = set()
        for threads in ("1", "2", "5"):
            r = run("--isolated", "--format", "json", "-j", threads, ".", cwd=ws.path, timeout=60)
            findings = sorted((f["path"], f["line"], f["code"]) for f in r.json())
            assert len([f for f in findings if f[2] == "OOM101"]) == 23, findings
            seen.add(tuple(findings))
        assert len(seen) == 1, seen


@test("cli: OOM102 says the activations are kept only where no backward frees them")
def _():
    # Measured by the probe: after backward a stored tensor keeps its graph's
    # nodes but no saved bytes; without backward it keeps the activations.
    src = ("import torch\n\n\ndef train(model, loader, opt, crit):\n    seen = []\n    for x, y in loader:\n"
           "        opt.zero_grad()\n        out = model(x)\n        crit(out, y).backward()\n"
           "        opt.step()\n        seen.append(out)\n    return seen\n\n\n"
           "def evaluate(model, loader):\n    preds = []\n    for x, y in loader:\n"
           "        preds.append(model(x))\n    return preds\n")
    with Workspace() as ws:
        r = run("--isolated", "--select", "OOM102", "--format", "json", ws.write("t.py", src))
        msgs = {f["line"]: f["message"] for f in r.json()}
        assert set(msgs) == {11, 18}, r
        assert msgs[11].endswith("keeps every iteration's graph alive"), msgs
        assert msgs[18].endswith("keeps every iteration's graph and the activations it saved alive"), msgs


@test("cli: OOM101 says backward() freed the saved tensors only where the summed value's own graph was backwarded")
def _():
    # Measured on an H200 (probe/results): a loss summed after its backward
    # keeps 0 B of GPU memory per step, its graph's nodes on the host; a sum
    # with no backward keeps a batch's activations per step.
    src = ("import torch\n\n\ndef train(model, loader, opt, crit, scaler):\n    a = b = c = 0\n"
           "    for x, y in loader:\n        opt.zero_grad()\n        loss = crit(model(x), y)\n"
           "        loss.backward()\n        opt.step()\n        a += loss\n"
           "        out = model(x)\n        scaler.scale(crit(out, y)).backward()\n        b += out.sum()\n"
           "        l2 = crit(out, y)\n        scaler.scale(l2).backward()\n        c += l2\n"
           "    return a, b, c\n\n\n"
           "def evaluate(model, loader, crit):\n    total = 0\n    for x, y in loader:\n"
           "        total += crit(model(x), y)\n    return total\n")
    freed = "backward() has freed what it saved, but every iteration's graph nodes stay alive in"
    with Workspace() as ws:
        r = run("--isolated", "--select", "OOM101", "--format", "json", ws.write("t.py", src))
        msgs = {f["line"]: f["message"] for f in r.json()}
        assert set(msgs) == {11, 14, 17, 24}, r
        assert freed in msgs[11] and freed in msgs[17], msgs
        # out.sum() is a new node over out's graph; the backward ran on another expression
        assert freed not in msgs[14] and msgs[14].endswith("every iteration's graph stays alive in `b`"), msgs
        assert msgs[24].endswith("every iteration's graph stays alive in `total`"), msgs


@test("cli: OOM102 names the member of a stored tuple that carries the graph, also through a method")
def _():
    # the shortened text of a long tuple cuts off where `h_in` is; the
    # harmless `.item()` member must not be what the user reads about
    src = ("import torch\n\n\nclass Buffer:\n    def __init__(self):\n        self.data = []\n\n"
           "    def put(self, item):\n        self.data.append(item)\n\n\n"
           "def run(model, loader, opt):\n    buf, seen = Buffer(), []\n    for x, y in loader:\n"
           "        opt.zero_grad()\n        out, h_in = model(x)\n        out.sum().backward()\n"
           "        opt.step()\n        buf.put((x.shape[0], y.shape[0], out.sum().item(), out.mean().item(), h_in))\n"
           "        seen.append((out.sum().item(), out.mean().item(), x.shape[0], y.shape[0], h_in))\n"
           "    return buf, seen\n")
    with Workspace() as ws:
        r = run("--isolated", "--select", "OOM102", "--format", "json", ws.write("t.py", src))
        found = {f["line"]: f for f in r.json()}
        assert set(found) == {19, 20}, r
        for line in (19, 20):
            assert "whose member `h_in` carries the autograd graph" in found[line]["message"], found[line]
            assert "`h_in.detach()`" in json.dumps(found[line]), found[line]


@test("cli: OOM101 on a sum that is backwarded after the loop advises a backward per batch and offers no fix")
def _():
    src = ("import torch\n\n\ndef train(model, loader, opt, crit):\n    opt.zero_grad()\n    total = 0\n"
           "    for x, y in loader:\n        total += crit(model(x), y)\n    total.backward()\n    opt.step()\n")
    with Workspace() as ws:
        f = ws.write("t.py", src)
        r = run("--isolated", "--select", "OOM101", "--format", "json", f)
        found = r.json()
        assert [d["line"] for d in found] == [8], r
        assert "backward()` on each batch's loss" in json.dumps(found[0]), found[0]
        assert not found[0].get("fix"), found[0]
        r = run("--isolated", "--select", "OOM101", "--fix", "--unsafe-fixes", f)
        with open(f) as fh:
            assert fh.read() == src, r


# ---- documentation links ------------------------------------------------------------------

def github_slug(heading):
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    return {github_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


@test("cli: links to a section of the README or docs/ name a heading that exists (the VS Code README's too)")
def _():
    pages = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "editors", "vscode", "README.md")]
    pages += [os.path.join(ROOT, "docs", n) for n in sorted(os.listdir(os.path.join(ROOT, "docs"))) if n.endswith(".md")]
    checked = 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        links = re.findall(r"\]\((https://github\.com/oomlint/oomlint(?:/blob/main/)?([^)#\s]*)#([^)\s]+))\)", text)
        links += [(m[0], m[1], m[2]) for m in re.findall(r"\]\((([^)#\s:]*)#([^)\s]+))\)", text)]
        for link, target, anchor in links:
            if "github.com" in link:
                dest = os.path.join(ROOT, target or "README.md")
            else:
                dest = os.path.normpath(os.path.join(os.path.dirname(page), target)) if target else page
            if not dest.endswith(".md") or not os.path.isfile(dest):
                continue
            assert anchor in anchors(dest), f"{os.path.relpath(page, ROOT)}: {link} names no heading of {dest}"
            checked += 1
    assert checked >= 3, checked


@test("cli: make vsix-platform is documented with the installs: its variables and every platform it packs")
def _():
    with open(os.path.join(ROOT, "docs", "install.md"), encoding="utf-8") as f:
        install = f.read()
    with open(os.path.join(ROOT, "tests", "editors.mk"), encoding="utf-8") as f:
        targets = re.findall(r"^VSIX_RELEASE_([\w-]+)\s*:=", f.read(), re.M)
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        header = f.read().split("\n\n", 1)[0]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert len(targets) >= 6, targets
    flat = " ".join(install.split())
    for need in ["make vsix-platform", "VSIX_TARGET=", "VSIX_BIN=", "VSIX_FROM="] + [f"`{t}`" for t in targets]:
        assert need in flat, need
    assert "make vsix-platform" in readme and "VSIX_FROM" in header and "VSIX_BIN" in header


# ---- evidence: the notes a finding stands on ----------------------------------------------

EVAL = """import torch
import torch.nn as nn

model = nn.Linear(8, 2).cuda()


def evaluate(loader):
    model.eval()
    outs = []
    for x, y in loader:
        outs.append(model(x).argmax(1))
    return outs
"""


def eval_notebook():
    """A notebook whose OOM201 finding (cell 3) stands on `model.eval()` in cell 2."""
    cells = [("markdown", "# Eval\n"),
             ("code", "import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 2)\nmodel.eval()\n"),
             ("code", "preds = []\nfor x, y in loader:\n    preds.append(model(x))\n")]
    nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    for kind, text in cells:
        cell = {"cell_type": kind, "metadata": {}, "source": text.splitlines(True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        nb["cells"].append(cell)
    return json.dumps(nb, indent=1) + "\n"


@test("cli: evidence: a note under the code frame names its place and underlines its line; concise and github stay one line")
def _():
    with Workspace() as ws:
        ws.write("ev.py", EVAL)
        r = run("--isolated", "--select", "OOM201", "ev.py", cwd=ws.path)
        assert r.code == 1, r
        want = ("   = help: evaluate under `torch.no_grad()` (or `torch.inference_mode()`): decorate the function or "
                "wrap the loop (unsafe fix: under `no_grad()` nothing the function computes carries a gradient: a "
                "caller that calls `backward()` on its result, or needs gradients from it, would fail)\n"
                "   = note: `evaluate()` is evaluation code: named for it, and it computes no gradient\n"
                "       --> ev.py:7:5\n"
                "      7 | def evaluate(loader):\n"
                "        |     --------\n"
                "   = note: runs every step of the loop over `loader`\n"
                "       --> ev.py:10:5\n"
                "     10 |     for x, y in loader:\n"
                "        |     -------------------\n"
                "   = note: this file puts data on a GPU: `nn.Linear(8, 2).cuda()`\n"
                "       --> ev.py:4:9\n"
                "      4 | model = nn.Linear(8, 2).cuda()\n"
                "        |         ----------------------\n"
                "   = note: this finding rests on a guess (a function's name)\n"
                "\n")
        assert want in r.out, r
        for fmt, prefix in (("concise", "ev.py:"), ("github", "::")):
            r = run("--isolated", "--select", "OOM201", "--output-format", fmt, "ev.py", cwd=ws.path)
            lines = [line for line in r.out.splitlines() if line.startswith(prefix)]
            assert len(lines) == 1 and "is evaluation code" not in r.out, (fmt, r)


@test("cli: evidence: JSON gives every finding an evidence list and a confidence")
def _():
    with Workspace() as ws:
        ws.write("ev.py", EVAL)
        ws.write("bad.py", BAD)
        r = run("--isolated", "--select", "OOM101,OOM201", "--format", "json", "bad.py", "ev.py", cwd=ws.path)
        found = {f["code"]: f for f in r.json()}
        assert set(found) == {"OOM101", "OOM201"}, r
        assert found["OOM201"]["evidence"][0] == {
            "kind": "fact", "path": "ev.py", "line": 7, "column": 5, "end_line": 7, "end_column": 13,
            "message": "`evaluate()` is evaluation code: named for it, and it computes no gradient"}, found["OOM201"]
        assert found["OOM201"]["confidence"] == "low", found["OOM201"]
        assert found["OOM201"]["guessed_from"] == "a function's name", found["OOM201"]
        # OOM101 stands on where the graph is made, the loop it outlives and the device
        messages = [e["message"] for e in found["OOM101"]["evidence"]]
        assert messages[0].startswith("the graph is made here: `criterion(model(x), y)`"), messages
        assert any("outlives this loop" in m for m in messages), messages
        assert any("puts data on a GPU" in m for m in messages), messages
        assert all(e["path"] == "bad.py" for e in found["OOM101"]["evidence"]), found["OOM101"]
        assert found["OOM101"]["confidence"] == "high" and "guessed_from" not in found["OOM101"], found["OOM101"]


@test("cli: evidence: a note in a notebook is placed in its own cell, in text, JSON and SARIF")
def _():
    with Workspace() as ws:
        nb = eval_notebook()
        ws.write("nb.ipynb", nb)
        r = run("--isolated", "--select", "OOM201", "nb.ipynb", cwd=ws.path)
        assert ("nb.ipynb:cell 3:3:18: OOM201" in r.out and
                "  = note: `model.eval()` switches the model to evaluation before this forward\n"
                "     --> nb.ipynb:cell 2:4:1\n"
                "    4 | model.eval()\n"
                "      | ------------\n" in r.out), r
        [f] = run("--isolated", "--select", "OOM201", "--format", "json", "nb.ipynb", cwd=ws.path).json()
        assert (f["cell"], f["line"]) == (3, 3), f
        assert f["evidence"][0] == {"kind": "fact", "path": "nb.ipynb", "cell": 2, "line": 4, "column": 1,
                                    "end_line": 4, "end_column": 13,
                                    "message": "`model.eval()` switches the model to evaluation before this forward"}, f
        log = run("--isolated", "--select", "OOM201", "--format", "sarif", "nb.ipynb", cwd=ws.path).json()
        [res] = log["runs"][0]["results"]
        rel = res["relatedLocations"][0]
        line = next(i for i, text in enumerate(nb.split("\n"), start=1) if '"model.eval()' in text)
        assert rel["physicalLocation"]["region"] == {"startLine": line, "endLine": line}, rel
        assert rel["message"]["text"] == ("`model.eval()` switches the model to evaluation before this forward "
                                          "(cell 2, line 4)"), rel


@test("cli: --timings: who calls a function is asked only of the files that import its module, through re-exports")
def _():
    # `fit` of apkg/sub/core.py keeps each batch's graph unless every caller
    # runs it under no_grad. Its two callers reach it through re-exports: a
    # relative import two packages up (`from .. import train_fit`, an alias)
    # and a module passed on under another name (`import apkg.sub.core as
    # engine`, then `engine.fit`). Thirty other files call a `fit` of their
    # own: the question linted every one of them ahead of its turn (35 files)
    # although none imports the module.
    core = ("import torch\n\n\ndef fit(model, batches):\n    kept = []\n    for x in batches:\n"
            "        out = model(x)\n        kept.append(out)\n    return kept\n")
    runner = ("import torch\nfrom .. import train_fit\n\n\ndef evaluate(model, batches):\n"
              "    with torch.no_grad():\n        return train_fit(model, batches)\n")
    evalmod = ("import torch\nfrom reexport import engine\n\n\ndef evaluate2(model, batches):\n"
               "    with torch.no_grad():\n        return engine.fit(model, batches)\n")
    with Workspace() as ws:
        ws.write("apkg/__init__.py", "from .sub import train_fit\n")
        ws.write("apkg/sub/__init__.py", "from .core import fit as train_fit\n")
        ws.write("apkg/sub/core.py", core)
        ws.write("apkg/zz/__init__.py", "")
        ws.write("apkg/zz/runner.py", runner)
        ws.write("zz/evalmod.py", evalmod)
        ws.write("zz/reexport.py", "import apkg.sub.core as engine\n")
        decoys = 30
        for i in range(decoys):
            ws.write(f"m_decoy{i:02d}.py", "def fit(a):\n    return a\n\n\ndef go(x):\n    return fit(x)\n")
        r = run("--isolated", "--select", "ALL", "--format", "json", "--timings", "-j", "1", ".", cwd=ws.path)
        assert json.loads(r.out) == [], r
        ahead = re.search(r"ahead +(\d+) files linted inside another's turn, (\d+) only summarized", r.err)
        assert ahead, r.err  # the files on the way are linted ahead of their turn
        brought = int(ahead.group(1)) + int(ahead.group(2))
        assert brought < 10, f"{brought} files brought ahead of their turn for 7 on the way\n{r.err}"
        for threads in ("2", "5"):
            again = run("--isolated", "--select", "ALL", "--format", "json", "-j", threads, ".", cwd=ws.path)
            assert again.out == r.out, f"-j {threads}: the findings differ from -j 1's"
        # either caller with autograd on is found: the graph is kept in core.py
        for path, text in (("apkg/zz/runner.py", runner), ("zz/evalmod.py", evalmod)):
            ws.write(path, text.replace("with torch.no_grad():", "if True:"))
            r = run("--isolated", "--select", "ALL", "--format", "json", "-j", "1", ".", cwd=ws.path)
            found = [(d["path"], d["code"]) for d in json.loads(r.out)]
            assert ("apkg/sub/core.py", "OOM102") in found, f"{path} with autograd on: {found}"
            ws.write(path, text)


@test("cli: a caller summarized before the question is followed through a package it reaches by re-export")
def _():
    # runner.py evaluates an `Engine` it receives as a parameter under
    # no_grad, naming the class through pkg/models/__init__.py's re-export.
    # When a file linted earlier (a_data.py, whose `collect` runner.py also
    # calls) had runner.py summarized already, the question "who calls
    # Engine.forward_test_scores?" found no file left to summarize and never
    # followed runner.py's call through the package: OOM201 reported the
    # forward as run with autograd on, with one thread always and with two
    # depending on timing. The data module named after the engine (z_data.py)
    # is the other path order, where the question summarizes runner.py itself.
    engine = ("import torch\nfrom torch import nn\n\n\nclass Engine(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.net = nn.Linear(4, 4)\n\n"
              "    def predict_scores(self, x):\n        return self.net(x).argmax(1)\n\n"
              "    def forward_test_scores(self, x):\n        return self.predict_scores(x)\n")
    data = ("import torch\n\n\ndef collect(model, loader):\n    kept = []\n    for x in loader:\n"
            "        kept.append(model(x))\n    return kept\n")
    runner = ("import torch\nfrom .models import Engine\nfrom .{data} import collect\n\n\n"
              "def evaluate(model, batches):\n    with torch.no_grad():\n        outs = collect(model, batches)\n"
              "        for b in batches:\n            outs.append(model.forward_test_scores(b))\n    return outs\n")
    for data_name in ("a_data", "z_data"):
        with Workspace() as ws:
            ws.write("pkg/__init__.py", "")
            ws.write("pkg/a_engine.py", engine)
            ws.write("pkg/models/__init__.py", "from pkg.a_engine import Engine\n")
            ws.write(f"pkg/{data_name}.py", data)
            ws.write("pkg/runner.py", runner.format(data=data_name))
            for threads in ("1", "2", "5"):
                r = run("--isolated", "--select", "ALL", "--format", "concise", "-q", "-j", threads, ".", cwd=ws.path)
                assert "a_engine.py" not in r.out, (data_name, threads, r)
            # with autograd on at the caller, the forward is reported
            ws.write("pkg/runner.py", runner.format(data=data_name).replace("with torch.no_grad():", "if True:"))
            for threads in ("1", "2"):
                r = run("--isolated", "--select", "ALL", "--format", "concise", "-q", "-j", threads, ".", cwd=ws.path)
                assert "pkg/a_engine.py:11:16: OOM201 `self.net(...)`" in r.out, (data_name, threads, r)


@test("cli: files named through a linked directory are one project with their imports: a caller in another file decides grad mode")
def _():
    # the project knows a file by its real path, worked out from its
    # directory's (project.c, canonical_input): `link` is a symbolic link to
    # `real`, and the files named through it, one at a time or by walking the
    # link, resolve `from pkg.a_engine import Engine` as the files under
    # `real` do. runner.py evaluates the engine under no_grad: no finding;
    # with autograd on there, its forward is reported, which takes knowing
    # from a_engine.py that an Engine is a module.
    engine = ("import torch\nfrom torch import nn\n\n\nclass Engine(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.net = nn.Linear(4, 4)\n\n"
              "    def forward_test_scores(self, x):\n        return self.net(x).argmax(1)\n")
    runner = ("import torch\nfrom pkg.a_engine import Engine\n\n\n"
              "def evaluate(model: Engine, batches):\n    outs = []\n    with torch.no_grad():\n"
              "        for b in batches:\n            outs.append(model.forward_test_scores(b))\n    return outs\n")
    with Workspace() as ws:
        ws.write("real/pkg/__init__.py", "")
        ws.write("real/pkg/a_engine.py", engine)
        ws.write("real/pkg/runner.py", runner)
        os.symlink("real", os.path.join(ws.path, "link"))
        named = ["link/pkg/__init__.py", "link/pkg/a_engine.py", "link/pkg/runner.py"]
        for args in (["real"], ["link"], named):
            r = run("--isolated", "--select", "ALL", "--format", "concise", "-q", "-j", "1", *args, cwd=ws.path)
            assert "OOM201" not in r.out, (args, r)
        ws.write("real/pkg/runner.py", runner.replace("with torch.no_grad():", "if True:"))
        for args, shown in ((["real"], "real"), (["link"], "link"), (named, "link")):
            r = run("--isolated", "--select", "ALL", "--format", "concise", "-q", "-j", "1", *args, cwd=ws.path)
            assert f"{shown}/pkg/runner.py:9:25: OOM201 `model.forward_test_scores(...)`" in r.out, (args, r)


@test("cli: --timings: OOM107 asks whether a file runs on a GPU (its callers, when it names no device) only for a store it would report")
def _():
    # a_evalloop.py keeps a language model's logits for every batch and names
    # no device: the one that decides is its caller's, in caller.py. a_plain.py
    # has a loop and nothing OOM107 looks for; thirty files call its `count`
    # with data on a GPU. Asking the device question of every file with a loop
    # linted all thirty ahead of their turn to answer it for a_plain.py.
    evalloop = ("import torch\nfrom transformers import AutoModelForCausalLM\n\n"
                "lm = AutoModelForCausalLM.from_pretrained(\"gpt2\")\n\n\n@torch.no_grad()\n"
                "def evaluate(loader):\n    kept = []\n    for input_ids in loader:\n"
                "        kept.append(lm(input_ids).logits)\n    return torch.cat(kept)\n")
    caller = ("import torch\nfrom a_evalloop import evaluate\n\n"
              "print(evaluate([torch.zeros(2, 3, dtype=torch.long).cuda()]))\n")
    with Workspace() as ws:
        ws.write("a_evalloop.py", evalloop)
        ws.write("a_plain.py", "def count(loader):\n    n = 0\n    for batch in loader:\n"
                               "        n += len(batch)\n    return n\n")
        ws.write("caller.py", caller)
        for i in range(30):
            ws.write(f"user_{i:02d}.py", "import torch\nfrom a_plain import count\n\n"
                                         "print(count([torch.zeros(2).cuda()]))\n")
        r = run("--isolated", "--select", "OOM107", "--format", "concise", "--timings", "-j", "1", ".", cwd=ws.path)
        assert r.out.startswith("a_evalloop.py:11:9: OOM107 `kept` keeps `lm(input_ids).logits`"), r
        assert r.out.count("OOM107") == 1, r
        ahead = re.search(r"ahead +(\d+) files linted inside another's turn, (\d+) only summarized", r.err)
        assert ahead, r.err
        brought = int(ahead.group(1)) + int(ahead.group(2))
        assert brought <= 2, f"{brought} files brought ahead of their turn; only caller.py decides a finding\n{r.err}"
        # the caller's data on the CPU: no GPU, no finding
        ws.write("caller.py", caller.replace(".cuda()", ""))
        r = run("--isolated", "--select", "OOM107", "--format", "concise", "-j", "1", ".", cwd=ws.path)
        assert "OOM107" not in r.out, r


@test("cli: --timings: OOM101, OOM102 and OOM401 ask the callers of a function only for a call or an update they could report")
def _():
    # a_lib.run hands its parameter `meter` a length and counts with an int:
    # nothing with a graph, no tensor. Thirty files call it. OOM101 and OOM102
    # asked what `meter.update` keeps (the class the callers pass for `meter`) and
    # OOM401 whether autograd is on at `n = n + 1` (the callers' grad mode):
    # both linted the thirty files ahead of their turn. a_fit.fit hands
    # `meter.update` a loss, and only caller.py's `Meter()` says what it keeps.
    with Workspace() as ws:
        ws.write("a_lib.py", "import torch\n\n\ndef run(meter, loader):\n    n = 0\n    for x in loader:\n"
                             "        meter.update(len(x))\n        n = n + 1\n    return meter, n\n")
        ws.write("a_fit.py", "import torch\n\n\ndef fit(model, meter, loader):\n    for x, y in loader:\n"
                             "        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n"
                             "        meter.update(loss)\n")
        ws.write("caller.py", "import torch\nfrom meters import Meter\nfrom a_fit import fit\n\n"
                              "fit(torch.nn.Linear(2, 1), Meter(), [])\n")
        ws.write("meters.py", "class Meter:\n    def __init__(self):\n        self.total = 0\n\n"
                              "    def update(self, v):\n        self.total += v\n")
        for i in range(30):
            ws.write(f"user_{i:02d}.py", "import torch\nfrom meters import Meter\nfrom a_lib import run\n\n"
                                         "print(run(Meter(), [torch.zeros(2)]))\n")
        for rule, expect in (("OOM101", ["a_fit.py:8:9: OOM101 `meter.update(...)` adds `loss`"]), ("OOM102", []),
                             ("OOM401", [])):
            r = run("--isolated", "--select", rule, "--format", "concise", "-q", "--timings", "-j", "1", ".",
                    cwd=ws.path)
            lines = r.out.splitlines()
            assert len(lines) == len(expect) and all(a.startswith(e) for a, e in zip(lines, expect)), (rule, r)
            ahead = re.search(r"ahead +(\d+) files linted inside another's turn, (\d+) only summarized", r.err)
            brought = int(ahead.group(1)) + int(ahead.group(2)) if ahead else 0
            assert brought <= 3, f"{rule}: {brought} files brought ahead of their turn\n{r.err}"


@test("cli: --timings: the words read from other files for a rule's question are a phase of their own, not the asking rule's time")
def _():
    # the first question about callers reads the words of every file of the
    # run (project.c), once: timed as `words`, not as the time of whichever
    # rule asked first (OOM301's line took 0.13 s of reading on the benchmark
    # corpus while its checks took 0.06). A file alone asks nothing of others.
    with Workspace() as ws:
        ws.write("a_lib.py", "import torch\n\n\ndef run(meter, loader):\n    for x in loader:\n"
                             "        meter.update(len(x))\n")
        for i in range(20):
            ws.write(f"user_{i:02d}.py", "import torch\nfrom a_lib import run\n\nrun(None, [torch.zeros(2)])\n")
        for threads in ("1", "2"):
            r = run("--isolated", "--select", "ALL", "--format", "json", "--timings", "-j", threads, ".", cwd=ws.path)
            phases = re.findall(r"^  (\S+) +\d+\.\d+ s +\d+\.\d%", r.err, re.M)
            assert phases[:6] == ["read+decode", "parse", "model", "summarize", "words", "rules"], (threads, r.err)
        r = run("--isolated", "--select", "ALL", "--format", "json", "--timings", "a_lib.py", cwd=ws.path)
        phases = re.findall(r"^  (\S+) +\d+\.\d+ s +\d+\.\d%", r.err, re.M)
        assert "words" not in phases and "rules" in phases, r.err


@test("cli: --timings: files linted one inside another hold at most 128 KB of text; past it only summaries are built")
def _():
    # a.py's rules ask about b.py, b.py's about c.py, c.py's about d.py: each
    # file linted inside another keeps its tree and model until the one it
    # waits on is done. Past 128 KB of them in the chain (two files of 67 KB),
    # the next is only summarized, its tree kept for its turn; every file is
    # still parsed once, and d.py's finding, whose graph c.py's call decides,
    # is the same however the files are interleaved.
    with Workspace() as ws:
        names = ["a", "b", "c", "d"]
        for k, n in enumerate(names):
            lines = ["import torch"]
            if k + 1 < len(names):
                lines.append(f"from {names[k + 1]} import step_{names[k + 1]}")
            lines.append("")
            lines += [f"def helper_{n}_{i}(model, x):\n    out = model(x)\n    return out.sum() * {i}\n"
                      for i in range(900)]
            if n == "d":
                lines.append("def step_d(model, loader):\n    kept = []\n    for x in loader:\n"
                             "        out = model(x)\n        kept.append(out)\n    return kept\n")
            else:
                lines.append(f"def step_{n}(model, loader):\n    return step_{names[k + 1]}(model, loader)\n")
            ws.write(f"{n}.py", "\n".join(lines))
        assert all(64 * 1024 < os.path.getsize(os.path.join(ws.path, f"{n}.py")) < 128 * 1024 for n in names)
        r = run("--isolated", "--select", "ALL", "--format", "json", "--timings", "-j", "1", ".", cwd=ws.path)
        found = [(d["path"], d["code"]) for d in json.loads(r.out)]
        assert ("d.py", "OOM102") in found, found
        ahead = re.search(r"ahead +(\d+) files linted inside another's turn, (\d+) only summarized", r.err)
        assert ahead and int(ahead.group(2)) >= 1 and int(ahead.group(1)) + int(ahead.group(2)) == 3, r.err
        parsed = re.search(r"oomlint timings: (\d+) files", r.err)
        assert parsed and int(parsed.group(1)) == 4, r.err
        # the file summarized ahead has its model built again in its turn: a
        # part of the model phase, which the summaries are not
        model = re.search(r"^  model +(\d+\.\d+) s", r.err, re.M)
        rebuilt = re.search(r"their models built again there: (\d+\.\d+) s of the model's time", r.err)
        summarize = re.search(r"^  summarize +(\d+\.\d+) s", r.err, re.M)
        assert model and rebuilt and summarize and float(rebuilt.group(1)) <= float(model.group(1)), r.err
        for threads in ("2", "4"):
            again = run("--isolated", "--select", "ALL", "--format", "json", "-j", threads, ".", cwd=ws.path)
            assert again.out == r.out, f"-j {threads}: the findings differ from -j 1's"


@test("cli: parts of the report made ahead of their turn wait on disk past the memory bound, and the report is the same")
def _():
    # a_util.py's OOM201 asks who calls evaluate(): every b*.py is linted
    # inside a_util.py's turn, and their parts wait until a_util.py is done.
    # On the generated corpus of bench/ 6.8 of 7.5 MB of JSON waited at once;
    # past OOMLINT_REPORT_MEMORY_KB (256 KB by default) they wait in a
    # temporary file, and in memory again where none can be written.
    with Workspace() as ws:
        ws.write("a_util.py", "import torch\n\n\ndef evaluate(model, loader):\n    model.eval()\n"
                              "    for x, y in loader:\n        out = model(x)\n")
        for i in range(6):
            ws.write(f"b{i}.py", "import torch\nfrom a_util import evaluate\n\n\ndef run(model, loader):\n"
                                 "    model.cuda()\n    evaluate(model, loader)\n    total = 0\n"
                                 "    for x, y in loader:\n        loss = model(x.cuda()).sum()\n"
                                 "        loss.backward()\n        total += loss\n")
        missing = os.path.join(ws.path, "no-such-dir")
        for fmt in ("text", "concise", "json", "sarif", "github", "junit", "gitlab"):
            ref = run("--isolated", "--format", fmt, "-j", "1", ".", cwd=ws.path)
            assert ref.code == 1 and ref.out.count("OOM101") >= 6 and "OOM201" in ref.out, ref
            for threads in ("1", "2"):
                disk = run("--isolated", "--format", fmt, "--timings", "-j", threads, ".", cwd=ws.path,
                           env={"OOMLINT_REPORT_MEMORY_KB": "0"})
                assert (disk.code, disk.out) == (ref.code, ref.out), f"{fmt}, -j {threads}: the report differs"
                if threads == "1":
                    waited = re.search(r"report +([0-9.]+) KB waited for the files before them on disk", disk.err)
                    assert waited and float(waited.group(1)) > 0, disk.err
                # no temporary file can be made: the parts wait in memory, and nothing fails
                mem = run("--isolated", "--format", fmt, "--timings", "-j", threads, ".", cwd=ws.path,
                          env={"OOMLINT_REPORT_MEMORY_KB": "0", "TMPDIR": missing})
                assert (mem.code, mem.out) == (ref.code, ref.out), f"{fmt}, -j {threads}, no TMPDIR: the report differs"
                assert "waited for the files before them on disk" not in mem.err and "error" not in mem.err, mem.err
        # a child that crashes on a file linted ahead of its turn takes its temporary file with it: the
        # supervisor's next child writes the same report as one that kept every part in memory
        crash = {"OOMLINT_TEST_FAULT": "segv:b3.py"}
        ref = run("--isolated", "--format", "json", "-j", "1", ".", cwd=ws.path, env=crash)
        codes = sorted((d["path"], d["code"]) for d in json.loads(ref.out))
        assert ref.code == 2 and ("b3.py", "OOM001") in codes and [c for _, c in codes].count("OOM101") == 5, ref
        disk = run("--isolated", "--format", "json", "-j", "1", ".", cwd=ws.path,
                   env=dict(crash, OOMLINT_REPORT_MEMORY_KB="0"))
        assert (disk.code, disk.out) == (ref.code, ref.out), disk


@test("cli: evidence: a suppressed finding takes its notes with it")
def _():
    with Workspace() as ws:
        ws.write("ev.py", EVAL)
        r = run("--isolated", "--select", "OOM201", "ev.py", cwd=ws.path)
        assert "= note: `evaluate()` is evaluation code" in r.out, r
        ws.write("ev.py", EVAL.replace(".argmax(1))", ".argmax(1))  # noqa: OOM201"))
        r = run("--isolated", "--select", "OOM201", "ev.py", cwd=ws.path)
        assert r.code == 0 and "note:" not in r.out and "OOM201" not in r.out, r


@test("cli: --timings: a run parses each of its files once when their rules ask about callers in other files")
def _():
    # Each file's rules ask who calls its functions. The first such question
    # summarized every file of the run; past 16 files linted one inside
    # another only a summary was built, and those files were parsed again in
    # their turn: 50 parses for these 33 files.
    with Workspace() as ws:
        n = 30
        for i in range(n):
            body = "import torch\n"
            if i + 1 < n:
                body += f"from m{i + 1:02d} import step{i + 1:02d}\n"
            body += f"\n\ndef step{i:02d}(model, x):\n    out = model(x)\n"
            body += (f"    return step{i + 1:02d}(model, out)\n" if i + 1 < n else "    return out.to('cuda')\n")
            ws.write(f"m{i:02d}.py", body)
        # a caller that spells the function only through a package's alias
        ws.write("pkg/__init__.py", "from .impl import step00 as first_step\n")
        ws.write("pkg/impl.py", "from m00 import step00\n")
        ws.write("main.py", "import torch\nfrom pkg import first_step\n\n\n"
                            "def go(model, x):\n    with torch.no_grad():\n        return first_step(model, x)\n")
        files = n + 3
        plain = run("--isolated", "--select", "ALL", "--format", "json", "-j", "1", ".", cwd=ws.path)
        r = run("--isolated", "--select", "ALL", "--format", "json", "--timings", "-j", "1", ".", cwd=ws.path)
        assert r.out == plain.out, r
        parsed = re.search(r"oomlint timings: (\d+) files", r.err)
        assert parsed and int(parsed.group(1)) == files, f"{parsed and parsed.group(1)} parses of {files} files\n{r.err}"
        # the same findings whatever the threads
        for threads in ("2", "5"):
            again = run("--isolated", "--select", "ALL", "--format", "json", "-j", threads, ".", cwd=ws.path)
            assert again.out == plain.out, f"-j {threads}: the findings differ from -j 1's"
