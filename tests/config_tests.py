"""Configuration tests: [tool.oomlint] in pyproject.toml, found upward from
each file; --config, --isolated and --show-settings; every key; command-line
flags layered over the file; and every kind of bad configuration, which must
stop the run (exit 2) with the file and line, never lint with other rules."""
import os
import re

from cli_tests import AMP, BAD  # BAD: OOM101 at line 13 (`total += loss`); AMP: OOM502 at line 1
from harness import Workspace, run, test

BOTH = AMP + BAD


def findings(*args, cwd=None, stdin=None):
    """{(path, code)} reported by a JSON run; asserts the run itself worked."""
    r = run("--format", "json", *args, cwd=cwd, stdin=stdin)
    assert r.code in (0, 1), r
    return {(f["path"], f["code"]) for f in r.json()}


def codes(*args, cwd=None):
    return sorted({code for _, code in findings(*args, cwd=cwd)})


def config_error(r, where, text):
    """The run stopped on a configuration error naming `where` (file:line)."""
    assert r.code == 2, r
    assert r.out == "", f"a bad configuration must not lint anything:\n{r}"
    line = r.err.strip().splitlines()[0]
    assert line.startswith(f"oomlint: error: {where}: "), r
    assert text in line, r


# ---- finding the configuration -----------------------------------------------------

@test("config: pyproject.toml in the current directory applies")
def _():
    with Workspace() as ws:
        ws.write("train.py", BOTH)
        assert codes(".", cwd=ws.path) == ["OOM101", "OOM502"]
        ws.write("pyproject.toml", '[project]\nname = "x"\n\n[tool.oomlint]\nignore = ["OOM502"]\n')
        assert codes(".", cwd=ws.path) == ["OOM101"]
        assert codes("train.py", cwd=ws.path) == ["OOM101"]


@test("config: searched upward from each file; the nearest wins")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM101"]\n')
        ws.write("a/b/c/deep.py", BOTH)
        ws.write("top.py", BOTH)
        ws.write("sub/pyproject.toml", '[tool.oomlint]\nselect = ["OOM502"]\n')
        ws.write("sub/inner/x.py", BOTH)
        got = findings(".", cwd=ws.path)
        assert got == {("a/b/c/deep.py", "OOM101"), ("top.py", "OOM101"),
                       ("sub/inner/x.py", "OOM502")}, got
        # named from elsewhere: still the file's own directories that count
        other = os.path.join(ws.path, "a")
        got = findings(os.path.join(ws.path, "sub", "inner", "x.py"), "b/c/deep.py", cwd=other)
        assert {c for _, c in got} == {"OOM101", "OOM502"}
        assert ("b/c/deep.py", "OOM101") in got, got


@test("config: files in different subprojects use their own configs in one run")
def _():
    with Workspace() as ws:
        ws.write("proj_a/pyproject.toml", '[tool.oomlint]\nignore = ["OOM101"]\n')
        ws.write("proj_b/pyproject.toml", '[tool.oomlint]\nignore = ["OOM502"]\n')
        for i in range(5):
            ws.write(f"proj_a/m{i}.py", BOTH)
            ws.write(f"proj_b/m{i}.py", BOTH)
        got = findings("-j", "4", ".", cwd=ws.path)
        assert {c for p, c in got if p.startswith("proj_a/")} == {"OOM502"}, got
        assert {c for p, c in got if p.startswith("proj_b/")} == {"OOM101"}, got
        assert len(got) == 10, got


@test("config: a pyproject.toml without [tool.oomlint] is passed over")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM502"]\n')
        ws.write("pkg/pyproject.toml", '[project]\nname = "pkg"\n[tool.black]\nline-length = 100\n')
        ws.write("pkg/train.py", BOTH)
        assert codes("pkg/train.py", cwd=ws.path) == ["OOM101"]
        r = run("--show-settings", "pkg/train.py", cwd=ws.path)
        assert "Config file: pyproject.toml\n" in r.out, r


@test("config: a broken pyproject.toml on the way up is an error even without [tool.oomlint]")
def _():
    with Workspace() as ws:
        ws.write("pkg/pyproject.toml", '[project]\nname = "pkg\n')
        ws.write("pkg/train.py", BAD)
        config_error(run("pkg/train.py", cwd=ws.path), "pkg/pyproject.toml:2", "invalid TOML")


@test("config: no configuration anywhere means the defaults")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.ruff]\nselect = ["E"]\n')
        ws.write("train.py", BOTH)
        assert codes(".", cwd=ws.path) == ["OOM101", "OOM502"]
        r = run("--show-settings", "train.py", cwd=ws.path)
        assert "Config file: none" in r.out, r


@test("config: stdin uses --stdin-filename's directory, else the current directory")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM101"]\n')
        ws.write("sub/pyproject.toml", '[tool.oomlint]\nignore = ["OOM502"]\n')
        got = findings("-", cwd=ws.path, stdin=BOTH)
        assert {c for _, c in got} == {"OOM502"}, got
        got = findings("--stdin-filename", "sub/train.py", "-", cwd=ws.path, stdin=BOTH)
        assert got == {("sub/train.py", "OOM101")}, got
        # per-file-ignores match the name given to stdin
        ws.write("sub/pyproject.toml", '[tool.oomlint.per-file-ignores]\n"tests/*" = ["OOM1"]\n')
        got = findings("--stdin-filename", "sub/tests/t.py", "-", cwd=ws.path, stdin=BOTH)
        assert got == {("sub/tests/t.py", "OOM502")}, got


@test("config: --config names the file for every input; its directory anchors patterns")
def _():
    with Workspace() as ws:
        ws.write("proj/pyproject.toml", '[tool.oomlint]\nselect = ["OOM502"]\n')
        ws.write("proj/a.py", BOTH)
        ws.write("conf/oomlint.toml",
                 '[tool.oomlint]\nselect = ["OOM101"]\n[tool.oomlint.per-file-ignores]\n"skip.py" = ["ALL"]\n')
        ws.write("elsewhere/b.py", BOTH)
        ws.write("elsewhere/skip.py", BOTH)
        got = findings("--config", "conf/oomlint.toml", "proj", "elsewhere", cwd=ws.path)
        assert got == {("proj/a.py", "OOM101"), ("elsewhere/b.py", "OOM101")}, got
        # the same config found by its own name would not apply here
        assert codes("proj", cwd=ws.path) == ["OOM502"]


@test("config: --config errors: missing file, no [tool.oomlint] table, with --isolated")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        r = run("--config", "nope.toml", "a.py", cwd=ws.path)
        assert r.code == 2 and "nope.toml" in r.err and "no such file" in r.err, r
        ws.write("other.toml", '[tool.ruff]\nselect = ["E"]\n')
        r = run("--config", "other.toml", "a.py", cwd=ws.path)
        assert r.code == 2 and "other.toml" in r.err and "[tool.oomlint]" in r.err, r
        ws.write("good.toml", '[tool.oomlint]\n')
        r = run("--config", "good.toml", "--isolated", "a.py", cwd=ws.path)
        assert r.code == 2 and "--isolated" in r.err, r


@test("config: --isolated ignores every configuration file, even a broken one")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM502"]\nexclude = ["gen"]\n')
        ws.write("a.py", BOTH)
        ws.write("gen/g.py", BAD)
        assert findings(".", cwd=ws.path) == {("a.py", "OOM502")}
        got = findings("--isolated", ".", cwd=ws.path)
        assert got == {("a.py", "OOM101"), ("a.py", "OOM502"), ("gen/g.py", "OOM101")}, got
        ws.write("pyproject.toml", '[tool.oomlint\nselect = ["OOM502"]\n')
        assert run(".", cwd=ws.path).code == 2
        assert codes("--isolated", ".", cwd=ws.path) == ["OOM101", "OOM502"]


# ---- each key ------------------------------------------------------------------------

@test("config: select runs only the rules it names (codes or prefixes)")
def _():
    with Workspace() as ws:
        ws.write("a.py", BOTH)
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM5"]\n')
        assert codes(".", cwd=ws.path) == ["OOM502"]
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["oom101"]\n')
        assert codes(".", cwd=ws.path) == ["OOM101"]
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = []\n')
        r = run(".", cwd=ws.path)
        assert r.code == 0, r


@test("config: ignore turns rules off; the more specific selector wins")
def _():
    with Workspace() as ws:
        ws.write("a.py", BOTH)
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM502"]\n')
        assert codes(".", cwd=ws.path) == ["OOM101"]
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM"]\nignore = ["OOM1"]\n')
        assert codes(".", cwd=ws.path) == ["OOM502"]
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM101"]\nignore = ["OOM1"]\n')
        assert codes(".", cwd=ws.path) == ["OOM101"]


@test("config: extend-select adds to the default set or to select")
def _():
    with Workspace() as ws:
        ws.write("a.py", BOTH)
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM502"]\nextend-select = ["OOM101"]\n')
        assert codes(".", cwd=ws.path) == ["OOM101", "OOM502"]
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM1"]\nextend-select = ["OOM101"]\n')
        assert codes(".", cwd=ws.path) == ["OOM101", "OOM502"]
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM101"]\nextend-select = ["OOM1"]\n')
        assert codes(".", cwd=ws.path) == ["OOM502"]


@test("config: per-file-ignores by directory glob, relative to the config's directory")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml",
                 '[tool.oomlint.per-file-ignores]\n"tests/*" = ["OOM101"]\n"scripts" = ["OOM5"]\n')
        for f in ("tests/t.py", "tests/unit/u.py", "scripts/s.py", "src/tests/x.py", "src/a.py"):
            ws.write(f, BOTH)
        want = {("src/a.py", "OOM101"), ("src/a.py", "OOM502"),
                ("src/tests/x.py", "OOM101"), ("src/tests/x.py", "OOM502"),  # not the top tests/
                ("tests/t.py", "OOM502"), ("tests/unit/u.py", "OOM502"),
                ("scripts/s.py", "OOM101")}
        assert findings(".", cwd=ws.path) == want
        # relative to the config file, not to where oomlint runs
        got = findings(".", cwd=os.path.join(ws.path, "tests"))
        assert got == {("t.py", "OOM502"), ("unit/u.py", "OOM502")}, got


@test("config: per-file-ignores by file name, ** and {a,b} patterns")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml",
                 "[tool.oomlint.per-file-ignores]\n"
                 '"test_*.py" = ["OOM101"]\n'
                 '"**/gen/*.py" = ["ALL"]\n'
                 '"{tools,bench}/*.py" = ["OOM502"]\n')
        for f in ("test_top.py", "pkg/deep/test_x.py", "pkg/deep/model.py", "gen/a.py", "pkg/gen/b.py",
                  "tools/t.py", "bench/b.py", "other/o.py"):
            ws.write(f, BOTH)
        got = findings(".", cwd=ws.path)
        want = {("test_top.py", "OOM502"), ("pkg/deep/test_x.py", "OOM502"),
                ("pkg/deep/model.py", "OOM101"), ("pkg/deep/model.py", "OOM502"),
                ("tools/t.py", "OOM101"), ("bench/b.py", "OOM101"),
                ("other/o.py", "OOM101"), ("other/o.py", "OOM502")}
        assert got == want, got ^ want


@test("config: per-file-ignores cannot hide a file that could not be read (OOM001)")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"*.py" = ["ALL"]\n')
        ws.write("bad.py", b"x = '\xff'\n", "wb")
        ws.write("ok.py", BOTH)
        r = run("--format", "json", ".", cwd=ws.path)
        assert r.code == 2, r  # a file that was not linted fails the run
        got = {(f["path"], f["code"]) for f in r.json()}
        assert got == {("bad.py", "OOM001")}, got


@test("config: exclude skips matching files and directories in directory walks")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["legacy", "src/gen/*", "*_pb2.py"]\n')
        for f in ("src/a.py", "src/gen/g.py", "src/gen/sub/h.py", "src/legacy/l.py", "legacy/m.py",
                  "src/api_pb2.py", "other/gen/keep.py"):
            ws.write(f, BAD)
        paths = {p for p, _ in findings(".", cwd=ws.path)}
        assert paths == {"src/a.py", "other/gen/keep.py"}, paths
        # from a subdirectory, patterns stay relative to the config file
        paths = {p for p, _ in findings(".", cwd=os.path.join(ws.path, "src"))}
        assert paths == {"a.py"}, paths
        # a file named on the command line is linted anyway, unless --force-exclude
        assert findings("src/gen/g.py", cwd=ws.path) == {("src/gen/g.py", "OOM101")}
        r = run("--force-exclude", "src/gen/g.py", "legacy/m.py", "src/a.py", "--format", "json", cwd=ws.path)
        assert {f["path"] for f in r.json()} == {"src/a.py"}, r


@test("config: exclude with {a,b} alternatives: nested, holding '/', '**', empty and anchored alternatives")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["{gen,out/{tmp,cache}}/**", "{,x}legacy{,_v{1,2}}", '
                                   '"/%s/{abs,elsewhere}"]\n' % ws.path.strip("/"))
        for f in ("gen/a.py", "gen/deep/b.py", "out/tmp/c.py", "out/cache/d.py", "out/keep.py", "legacy/e.py",
                  "xlegacy/f.py", "src/legacy_v2/g.py", "legacy_v3/h.py", "abs/i.py", "sub/abs/j.py", "k.py"):
            ws.write(f, BAD)
        paths = {p for p, _ in findings(".", cwd=ws.path)}
        assert paths == {"out/keep.py", "legacy_v3/h.py", "sub/abs/j.py", "k.py"}, paths


@test("config: a pattern nested or long past the bounds is a configuration error naming the file and line")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        deep = "{a," * 9 + "b" + "}" * 9
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM1"]\nexclude = ["legacy", "%s"]\n' % deep)
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:3", "'exclude' item 2 nests {...} groups more than 8 deep")
        # eight levels are fine
        ok = "{a," * 8 + "b" + "}" * 8
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["%s"]\n' % ok)
        assert findings("a.py", cwd=ws.path) == {("a.py", "OOM101")}
        ws.write("pyproject.toml", '[tool.oomlint]\nextend-exclude = ["%s"]\n' % ("x" * 4097))
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:2", "'extend-exclude' item 1 is longer than 4096 bytes")
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"%s" = ["OOM101"]\n' % deep)
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:2",
                     "'per-file-ignores' has a pattern that nests {...} groups more than 8 deep")
        # a brace pattern of 48 KB (it took 0.65 GB to expand, in the process no timeout watches)
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["%s"]\n' % ("{" * 24576 + "a" + "}" * 24576))
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:2", "is longer than 4096 bytes")


@test("config: each subproject's exclude applies below it, relative to it")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["top_only"]\n')
        ws.write("sub/pyproject.toml", '[tool.oomlint]\nexclude = ["gen"]\n')
        for f in ("top_only/a.py", "gen/b.py", "sub/gen/c.py", "sub/top_only/d.py", "sub/e.py"):
            ws.write(f, BAD)
        paths = {p for p, _ in findings(".", cwd=ws.path)}
        assert paths == {"gen/b.py", "sub/top_only/d.py", "sub/e.py"}, paths


@test("config: --exclude on the command line adds to the config's exclude")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nexclude = ["a"]\n')
        for f in ("a/x.py", "b/y.py", "c/z.py"):
            ws.write(f, BAD)
        paths = {p for p, _ in findings("--exclude", "b", ".", cwd=ws.path)}
        assert paths == {"c/z.py"}, paths


# ---- precedence ------------------------------------------------------------------------

@test("config: select = [\"ALL\"] in [tool.oomlint] turns on the opt-in rules too")
def _():
    with Workspace() as ws:
        ws.write("a.py", "import torch\nx = torch.zeros(3)  # noqa: OOM101\n")
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["ALL"]\n')
        r = run("--format", "json", "a.py", cwd=ws.path)
        assert [f["code"] for f in r.json()] == ["OOM003"], r


@test("config: command-line --select replaces the config's rule set")
def _():
    with Workspace() as ws:
        ws.write("a.py", BOTH)
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM502"]\nignore = ["OOM101"]\n')
        assert codes(".", cwd=ws.path) == ["OOM502"]
        assert codes("--select", "OOM101", ".", cwd=ws.path) == ["OOM101"]
        assert codes("--select", "ALL", ".", cwd=ws.path) == ["OOM101", "OOM502"]


@test("config: command-line --ignore and --extend-select apply on top of the config and win")
def _():
    with Workspace() as ws:
        ws.write("a.py", BOTH)
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM101", "OOM502"]\n')
        assert codes("--ignore", "OOM502", ".", cwd=ws.path) == ["OOM101"]
        # the command line wins even with a broader selector than the file's
        assert codes("--ignore", "OOM1", ".", cwd=ws.path) == ["OOM502"]
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM502"]\n')
        assert codes("--extend-select", "OOM5", ".", cwd=ws.path) == ["OOM101", "OOM502"]
        # within the command line, the more specific selector still wins
        assert codes("--extend-select", "OOM5", "--ignore", "OOM502", ".", cwd=ws.path) == ["OOM101"]


@test("config: per-file-ignores win over command-line selection")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"legacy/*" = ["OOM101"]\n')
        ws.write("legacy/a.py", BOTH)
        assert codes("--select", "OOM101,OOM502", ".", cwd=ws.path) == ["OOM502"]


# ---- TOML forms --------------------------------------------------------------------------

@test("config: dotted keys, multi-line arrays, literal strings, escapes, comments")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml",
                 "# project file\r\n"
                 "[project]\r\n"
                 "name = 'demo'\r\n"
                 "\r\n"
                 "[tool]\r\n"
                 "oomlint.select = [\r\n"
                 "    'OOM1',        # a literal string\r\n"
                 "    \"OOM\\u0035\",  # an escape: OOM5\r\n"
                 "]\r\n"
                 "oomlint.per-file-ignores.'tests/*' = ['OOM502',]\r\n"
                 "oomlint.exclude = [\"\"\"\r\nold\"\"\", '''gen''']\r\n")
        ws.write("a.py", BOTH)
        ws.write("tests/x.py", BOTH)
        ws.write("old/o.py", BOTH)
        ws.write("gen/g.py", BOTH)
        got = findings(".", cwd=ws.path)
        assert got == {("a.py", "OOM101"), ("a.py", "OOM502"), ("tests/x.py", "OOM101")}, got


@test("config: inline tables and a byte order mark")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml",
                 '\ufeff[tool]\noomlint = { ignore = ["OOM101"], per-file-ignores = { "t/*" = ["OOM502"] } }\n')
        ws.write("a.py", BOTH)
        ws.write("t/b.py", BOTH)
        assert findings(".", cwd=ws.path) == {("a.py", "OOM502")}


# ---- --show-settings ------------------------------------------------------------------------

@test("config: --show-settings prints the file's resolved settings and exits 0")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml",
                 '[tool.oomlint]\nignore = ["OOM502"]\nexclude = ["legacy"]\n\n'
                 '[tool.oomlint.per-file-ignores]\n"tests/*" = ["OOM101"]\n"docs/*" = ["OOM1"]\n')
        ws.write("tests/t.py", BOTH)
        r = run("--show-settings", "--exclude", "tmp", "tests/t.py", cwd=ws.path)
        assert r.code == 0 and r.err == "", r
        out = r.out
        assert out.startswith("Settings for: tests/t.py\nConfig file: pyproject.toml\n"), out
        assert '  ignore = ["OOM502"]\n' in out, out
        assert '  "tests/*" = ["OOM101"]  (pyproject.toml:6, per-file-ignores)\n' in out, out
        assert "docs/*" not in out, out
        enabled = re.findall(r"OOM\d+", out.split("Enabled rules:\n")[1].split("\n\n")[0])
        disabled = re.findall(r"OOM\d+", out.split("Disabled rules:\n")[1].split("\n\n")[0])
        every = [d["code"] for d in run("rules", "--format", "json").json()]
        opt_in = [d["code"] for d in run("rules", "--format", "json").json() if d["opt_in"]]
        assert sorted(enabled + disabled) == sorted(every), (enabled, disabled)
        assert {"OOM001", "OOM002"} <= set(enabled), enabled
        assert sorted(disabled) == sorted(["OOM101", "OOM502"] + opt_in), disabled
        assert '  "legacy"  (pyproject.toml, relative to ' in out, out
        assert '  "tmp"  (--exclude)\n' in out, out
        # stable: the same answer twice
        assert run("--show-settings", "--exclude", "tmp", "tests/t.py", cwd=ws.path).out == out
        # nothing was linted
        assert "OOM101 [" not in out and "Found" not in out


@test("config: --show-settings shows command-line selection and --isolated")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM502"]\n')
        r = run("--show-settings", "--select", "OOM101", "a.py", cwd=ws.path)
        assert r.code == 0, r
        assert '  --select = ["OOM101"]\n' in r.out, r
        enabled = r.out.split("Enabled rules:\n")[1].split("\n\n")[0]
        assert "OOM101" in enabled and "OOM502" not in enabled, r.out
        r = run("--show-settings", "--isolated", "a.py", cwd=ws.path)
        assert "Config file: none (--isolated)" in r.out, r
        assert "OOM502" in r.out.split("Enabled rules:\n")[1].split("\n\n")[0], r.out


@test("config: --show-settings reports a bad configuration like linting does")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nselct = []\n')
        config_error(run("--show-settings", "a.py", cwd=ws.path), "pyproject.toml:2", "unknown key 'selct'")


# ---- errors --------------------------------------------------------------------------------

@test("config: a near-miss rule code or name in a selector list gets a suggestion")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM1"]\nignore = ["OOM1O2"]\n')
        r = run("a.py", cwd=ws.path)
        config_error(r, "pyproject.toml:3", "unknown rule code or prefix 'OOM1O2' in 'ignore'")
        assert "did you mean 'OOM102' (tensor-collected-in-loop)?" in r.err, r
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"*.py" = ["data-parallel"]\n')
        r = run("a.py", cwd=ws.path)
        assert r.code == 2 and "did you mean 'OOM702' (data-parallel)?" in r.err, r


@test("config: unknown key is exit 2 naming file:line and the key")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        ws.write("pyproject.toml", '[project]\nname = "x"\n\n[tool.oomlint]\nselect = ["OOM1"]\n\nselct = ["OOM101"]\n')
        r = run("a.py", cwd=ws.path)
        config_error(r, "pyproject.toml:7", "unknown key 'selct' in [tool.oomlint]")
        assert "did you mean 'select'" in r.err, r
        ws.write("pyproject.toml", '[tool.oomlint]\n\n[tool.oomlint.per_file_ignores]\n"x" = []\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:3", "unknown key 'per_file_ignores'")


@test("config: unknown rule code is exit 2 naming the line of the code")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = [\n  "OOM502",\n  "E501",\n]\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:4", "unknown rule code or prefix 'E501' in 'ignore'")
        ws.write("pyproject.toml", '[tool.oomlint]\nextend-select = ["OOM999"]\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:2", "'OOM999'")
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"a.py" = ["OOM101"]\n"b.py" = ["OOM101,OOM502"]\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:3", "'OOM101,OOM502'")


@test("config: an empty rule code is an error in every selector list, as on the command line")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        # "" is a prefix of every code: read as a selector it would turn every rule off
        for key in ("select", "extend-select", "ignore"):
            for value in ('[""]', '["OOM101", ""]', '["  "]'):
                ws.write("pyproject.toml", f'[tool.oomlint]\n{key} = {value}\n')
                config_error(run("a.py", cwd=ws.path), "pyproject.toml:2", f"'{key}' has an empty rule code")
        ws.write("pyproject.toml", '[tool.oomlint.per-file-ignores]\n"a.py" = [""]\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:2", "empty rule code")
        r = run("--ignore", "", "a.py", cwd=ws.path)
        assert r.code == 2 and "--ignore" in r.err and r.out == "", r


@test("config: a value of the wrong type is exit 2 naming the line and both types")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        cases = [
            ('[tool.oomlint]\nselect = "OOM101"\n', "pyproject.toml:2", "'select' must be an array", "got a string"),
            ('[tool.oomlint]\nignore = [\n  "OOM502",\n  101,\n]\n', "pyproject.toml:4", "'ignore'",
             "item 2 is an integer"),
            ('[tool.oomlint]\nexclude = "legacy"\n', "pyproject.toml:2", "'exclude' must be an array", "got a string"),
            ('[tool.oomlint]\nper-file-ignores = ["tests/*"]\n', "pyproject.toml:2", "'per-file-ignores' must be a table",
             "got an array"),
            ('[tool.oomlint.per-file-ignores]\n"tests/*" = "OOM101"\n', "pyproject.toml:2",
             "'per-file-ignores.\"tests/*\"' must be an array", "got a string"),
            ('[tool]\noomlint = true\n', "pyproject.toml:2", "'tool.oomlint' must be a table", "got a boolean"),
            ('[tool.oomlint]\nexclude = [["x"]]\n', "pyproject.toml:2", "'exclude'", "item 1 is an array"),
        ]
        for text, where, what, got in cases:
            ws.write("pyproject.toml", text)
            r = run("a.py", cwd=ws.path)
            config_error(r, where, what)
            assert got in r.err, (text, r)


@test("config: a TOML syntax error is exit 2 naming the line")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        cases = [
            ('[tool.oomlint]\nselect = ["OOM101"]\n\n\nignore = = ["OOM502"]\n', "pyproject.toml:5"),
            ('[project]\nname = "x"\n[tool.oomlint\nselect = []\n', "pyproject.toml:3"),
            ('[tool.oomlint]\nselect = ["OOM101"\nignore = []\n', "pyproject.toml:3"),
            ('[tool.oomlint]\nselect = ["OOM101"]\nexclude = ["a\\q"]\n', "pyproject.toml:3"),
            ('a = 1\nb = "\\uD800"\n[tool.oomlint]\n', "pyproject.toml:2"),
        ]
        for text, where in cases:
            ws.write("pyproject.toml", text)
            config_error(run("a.py", cwd=ws.path), where, "invalid TOML")
        ws.write("pyproject.toml", b'[tool.oomlint]\nselect = ["OOM1"]\n# caf\xe9\n', "wb")
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:3", "not valid UTF-8")


@test("config: keys and tables defined twice are errors naming both lines")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM1"]\nselect = ["OOM5"]\n')
        r = run("a.py", cwd=ws.path)
        config_error(r, "pyproject.toml:3", "defined twice")
        assert "line 2" in r.err, r
        ws.write("pyproject.toml", '[tool.oomlint]\nselect = ["OOM1"]\n[project]\n[tool.oomlint]\nignore = []\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:4", "table [tool.oomlint] is defined twice")
        ws.write("pyproject.toml", '[tool]\noomlint = {select = ["OOM1"]}\n[tool.oomlint.per-file-ignores]\n')
        config_error(run("a.py", cwd=ws.path), "pyproject.toml:3", "inline table")


@test("config: a broken config shared by many files is reported once")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nselct = []\n')
        for i in range(20):
            ws.write(f"pkg{i % 4}/m{i}.py", BAD)
        r = run(".", cwd=ws.path)
        config_error(r, "pyproject.toml:2", "unknown key 'selct'")
        assert len(r.err.strip().splitlines()) == 1, r


@test("config: an unreadable pyproject.toml is an error, not a silent default")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        # too large to be a configuration: a read error oomlint reports
        ws.write("pyproject.toml", "[tool.oomlint]\n" + "#" * (17 * 1024 * 1024) + "\n")
        r = run("a.py", cwd=ws.path)
        assert r.code == 2 and r.out == "", r
        assert "cannot read pyproject.toml: file is larger than" in r.err, r
        p = ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM101"]\n')
        os.chmod(p, 0)
        try:
            if not os.access(p, os.R_OK):  # (root reads every file)
                r = run("a.py", cwd=ws.path)
                assert r.code == 2 and r.out == "", r
                assert "cannot read pyproject.toml: permission denied" in r.err, r
        finally:
            os.chmod(p, 0o644)


@test("config: a pyproject.toml that is a dangling symlink is an error, not the parent's configuration")
def _():
    with Workspace() as ws:
        ws.write("pyproject.toml", '[tool.oomlint]\nignore = ["OOM101"]\n')
        ws.write("sub/a.py", BAD)
        link = os.path.join(ws.path, "sub", "pyproject.toml")
        os.symlink("../shared/pyproject.toml", link)
        r = run("sub/a.py", cwd=ws.path)
        config_error(r, "cannot read sub/pyproject.toml",
                     "it is a symbolic link to '../shared/pyproject.toml', which does not exist")
        for extra in (["--show-settings"], ["--show-files"], ["--exit-zero"]):
            r = run(*extra, "sub", cwd=ws.path)
            assert r.code == 2 and "symbolic link" in r.err and r.out == "", (extra, r)
        os.remove(link)
        os.symlink("pyproject.toml", link)  # a link to itself
        r = run("sub/a.py", cwd=ws.path)
        assert r.code == 2 and "leads back to itself" in r.err, r
        # without configuration files there is nothing to read
        r = run("--isolated", "sub/a.py", cwd=ws.path)
        assert r.code == 1 and "OOM101" in r.out, r
        # a link to a real file is that file
        os.remove(link)
        ws.write("shared/pyproject.toml", '[tool.oomlint]\nselect = ["OOM101"]\n')
        os.symlink("../shared/pyproject.toml", link)
        r = run("sub/a.py", cwd=ws.path)
        assert r.code == 1 and "OOM101" in r.out, r


@test("config: a pyproject.toml that is not a regular file is passed over; --config of one is an error")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        os.mkfifo(os.path.join(ws.path, "pyproject.toml"))  # reading it would block forever
        ws.write("sub/pyproject.toml/x.txt", "a directory named pyproject.toml\n")
        ws.write("sub/b.py", BAD)
        r = run(".", cwd=ws.path, timeout=30)
        assert r.code == 1 and "OOM101" in r.out, r
        r = run("--config", "sub/pyproject.toml", "a.py", cwd=ws.path, timeout=30)
        assert r.code == 2 and "sub/pyproject.toml" in r.err and "directory" in r.err, r


@test("config: --help documents --config, --isolated and --show-settings")
def _():
    r = run("--help")
    assert r.code == 0, r
    for flag in ("--config PATH", "--isolated", "--show-settings"):
        assert flag in r.out, flag
    assert "pyproject.toml" in r.out and "[tool.oomlint]" in r.out, r.out
