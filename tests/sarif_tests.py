"""SARIF output (`--format sarif`), checked against its real consumers.

The SARIF of every fixture, and of a set of hard cases (emoji before a
finding, notebooks, unreadable files, syntax errors, stdin, odd file names,
fixes, no findings), is validated in one batch by two independent tools:
ajv with the official SARIF 2.1.0 schema (draft-07 form) and Microsoft's SARIF
Multitool `validate` with its SARIF rules and GitHub's ingestion rules turned
on. The Multitool exits 0 even when rules fail, so its -o report is read; and
because one file it cannot load can silently empty that report, each tool also
gets a canary file that must fail, proving it really ran. The schema (the
official OASIS file) and the Multitool's GitHub-rules configuration are in
tests/sarif/ (see its README), the tools in build/tools (installed by `make
test`, see tests/tools.mk): nothing outside the repository is read.

The batch also holds a log of findings with every kind of evidence (notes in the
finding's own file, in other files of the run, a chain of steps, a guess), which
no rule makes yet: the unit-test binary writes it (`oomlint-unit
--evidence-sample sarif`) from the same emitter.

The other tests check what GitHub relies on field by field: the driver and its
rules, regions in UTF-16 units, relative URIs, notebook locations, fixes (applied
back to the source, they must give what --fix gives), evidence as related
locations linked from the message and steps as a code flow, and --output-file."""
import json
import os
import subprocess
import time
import urllib.parse

from cli_tests import AMP, BAD, CLEAN
from fixture_tests import fixture_files
import harness
from harness import ROOT, Workspace, run, test

SARIF_DIR = os.path.join(ROOT, "tests", "sarif")
SCHEMA = os.path.join(SARIF_DIR, "sarif-schema-2.1.0.json")
GITHUB_RULES = os.path.join(SARIF_DIR, "github-rules.xml")
TOOLS = os.path.join(ROOT, "build", "tools")
NODE_MODULES = os.path.join(TOOLS, "node_modules")
MULTITOOL = os.path.join(NODE_MODULES, "@microsoft", "sarif-multitool-linux", "Sarif.Multitool")
AJV_SCRIPT = os.path.join(ROOT, "tests", "ajv_validate.js")
DOCS_URL = "https://github.com/oomlint/oomlint/blob/main/docs/rules/"


def unit_binary():
    """The unit-test binary beside the oomlint under test (qemu-oomlint: qemu-oomlint-unit)."""
    return harness.BIN + "-unit"


def evidence_sample(cwd):
    """The SARIF log of the unit tests' findings with evidence, written from cwd."""
    unit = unit_binary()
    assert os.path.exists(unit), f"the unit-test binary is missing: {unit} (make {os.path.relpath(unit, ROOT)})"
    proc = subprocess.run([unit, "--evidence-sample", "sarif"], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert proc.returncode == 0, f"{unit} --evidence-sample sarif: exit {proc.returncode}\n{proc.stderr}"
    return proc.stdout


def sarif(*args, cwd=None, **kw):
    r = run("--format", "sarif", *args, cwd=cwd, **kw)
    return r, r.json()


def results_of(log):
    return log["runs"][0]["results"]


def region_of(result):
    return result["locations"][0]["physicalLocation"]["region"]


def artifact_of(result):
    return result["locations"][0]["physicalLocation"]["artifactLocation"]


def notebook(*cells):
    """An .ipynb text, indented like Jupyter writes it, with one source
    string per line so each code line has its own line in the file."""
    nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    for kind, text in cells:
        lines = text.splitlines(True)
        cell = {"cell_type": kind, "metadata": {}, "source": lines}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        nb["cells"].append(cell)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def ipynb_line(nb_text, needle):
    """1-based line of the .ipynb text holding needle."""
    for i, line in enumerate(nb_text.split("\n"), start=1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in the notebook")


def require(path, what):
    assert os.path.exists(path), f"{what} is missing: {path} (`make test` installs it; see tests/tools.mk)"


# ---- the consumers: ajv and the SARIF Multitool, over every fixture and the hard cases ----

CANARY_AJV = {  # schema-invalid: 'fatal' is no SARIF level
    "$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
    "runs": [{"tool": {"driver": {"name": "canary"}},
              "results": [{"ruleId": "C1", "level": "fatal", "message": {"text": "m"}}]}]}
CANARY_MULTITOOL = {  # schema-valid, but GitHub cannot place a result with no location (GH1001)
    "$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
    "runs": [{"tool": {"driver": {"name": "canary", "version": "1.0.0", "informationUri": "https://example.com/",
                                  "rules": [{"id": "C1", "shortDescription": {"text": "Canary."},
                                             "fullDescription": {"text": "Canary."},
                                             "help": {"text": "Canary."}}]}},
              "results": [{"ruleId": "C1", "ruleIndex": 0, "level": "error", "message": {"text": "No location."}}]}]}


def hard_cases(ws):
    """Writes inputs that stress the SARIF shape; returns (name, args, cwd, stdin, github_ok).
    The Multitool spends about 0.3 s on each file however small, so the cases
    share a few runs instead of one each."""
    cases = os.path.join(ws.path, "cases")
    ws.write("cases/emoji.py", "s = '\U0001F600'; from torch.cuda.amp import autocast\n"
             + BAD.replace("total = 0", "total = 0  # \U0001F525 hot"))
    nb_text = notebook(("markdown", "# Training \U0001F680\n"), ("code", "import torch\n"),
                       ("code", BAD.replace("total = 0", "total = 0  # caf\u00e9")), ("code", AMP))
    ws.write("cases/nb.ipynb", nb_text)
    ws.write("cases/latin.py", b"x = 1\ny = 'caf\xe9'\n", "wb")
    ws.write("cases/syntax.py", "def broken(:\n    pass\n\n" + BAD)
    ws.write("cases/clean.py", CLEAN)
    ws.write("cases/dir with space/a%b#c \u00e9.py", BAD)
    ws.write("cases/x:y,z.py", AMP)
    ws.write("cases/unsafe.py", BAD.replace("total += loss", "total += model(x)"))
    ws.write("cases/outside.py", BAD)
    os.makedirs(os.path.join(cases, "sub"), exist_ok=True)
    return [
        # every file above: emoji, a notebook, an undecodable file, a syntax error,
        # odd names, safe and unsafe fixes
        ("directory", ["."], cases, None, True),
        # a missing file, stdin, and an absolute path under the current directory
        ("mixed", ["missing.py", "--stdin-filename", "pkg/train.py", "-", os.path.join(cases, "emoji.py")],
         cases, BAD, True),
        ("clean", ["clean.py"], cases, None, True),
        # outside the current directory: an absolute file: URI, which is valid SARIF
        # but which GitHub cannot place (GH1006), so only the schema is checked
        ("outside", ["../outside.py"], os.path.join(cases, "sub"), None, False),
    ]


def run_ajv(files):
    require(os.path.join(NODE_MODULES, "ajv"), "ajv")
    env = dict(os.environ, NODE_PATH=NODE_MODULES)
    proc = subprocess.run(["node", AJV_SCRIPT, SCHEMA, *files], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode in (0, 1), f"ajv could not run (exit {proc.returncode}):\n{proc.stderr}"
    return json.loads(proc.stdout)


def run_multitool(files, report):
    require(MULTITOOL, "the SARIF Multitool")
    # self-contained .NET: no ICU needed, no telemetry. Rule SARIF2006 GETs every
    # http(s) URI in a log (its notes are below the levels checked here); a proxy
    # on a closed local port makes each attempt fail at once, so the suite never
    # touches the network and never waits on it.
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("no_proxy", "http_proxy", "https_proxy", "all_proxy")}
    dead_proxy = "http://127.0.0.1:9"
    env.update(DOTNET_SYSTEM_GLOBALIZATION_INVARIANT="1", DOTNET_CLI_TELEMETRY_OPTOUT="1",
               HTTP_PROXY=dead_proxy, HTTPS_PROXY=dead_proxy, ALL_PROXY=dead_proxy,
               http_proxy=dead_proxy, https_proxy=dead_proxy, all_proxy=dead_proxy)
    cmd = [MULTITOOL, "validate", "--log", "ForceOverwrite", "--rule-kind", "Sarif;Gh",
           "--config", GITHUB_RULES, "--json-schema", SCHEMA, "--level", "Error;Warning",
           "--output", report, *files]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    assert proc.returncode == 0, f"the Multitool failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    assert f"Done. {len(files)} files scanned." in proc.stdout, f"the Multitool did not scan every file:\n{proc.stdout}"
    assert os.path.exists(report), f"the Multitool wrote no report:\n{proc.stdout}"
    with open(report, encoding="utf-8-sig") as f:
        return json.load(f), proc.stdout


def write_logs(ws):
    """Writes the SARIF of every fixture and hard case under ws, checking each
    against the JSON output; returns (files GitHub must accept, files only the
    schema must accept, ajv's canary, the Multitool's canary)."""
    out = os.path.join(ws.path, "out")
    os.makedirs(out)
    github_files, schema_only = [], []

    for i, path in enumerate(fixture_files()):
        rel = os.path.relpath(path, ROOT)
        rule = os.path.basename(os.path.dirname(path))
        args = ["--extend-select", rule] if rule.startswith("OOM") else []
        r, log = sarif(*args, rel, cwd=ROOT)
        want = run("--format", "json", *args, rel, cwd=ROOT).json()
        got = results_of(log)
        assert r.code == (1 if harness.failing(want) else 0), f"{rel}: exit {r.code}"
        assert [x["ruleId"] for x in got] == [f["code"] for f in want], f"{rel}: SARIF and JSON disagree"
        for res, f in zip(got, want):
            if "cell" not in f:
                reg = region_of(res)
                assert (reg["startLine"], reg["endLine"]) == (f["line"], f["end_line"]), (rel, reg, f)
            assert artifact_of(res) == {"uri": urllib.parse.quote(rel), "uriBaseId": "%SRCROOT%"}, res
        name = os.path.join(out, f"fixture-{i:03}-{os.path.basename(path)}.sarif")
        with open(name, "w", encoding="utf-8") as f:
            f.write(r.out)
        github_files.append(name)
    assert len(github_files) >= 8, "the fixtures were not found"

    path = os.path.join(out, "case-evidence.sarif")
    with open(path, "w", encoding="utf-8") as f:
        f.write(evidence_sample(ws.path))
    github_files.append(path)

    for name, args, cwd, stdin, github_ok in hard_cases(ws):
        r = run("--format", "sarif", *args, cwd=cwd, stdin=stdin)
        log = r.json()
        assert bool(log["runs"][0]["results"]) == (name != "clean"), f"{name}:\n{r}"
        path = os.path.join(out, f"case-{name}.sarif")
        with open(path, "w", encoding="utf-8") as f:
            f.write(r.out)
        (github_files if github_ok else schema_only).append(path)

    canary_ajv = os.path.join(out, "canary-ajv.sarif")
    canary_multitool = os.path.join(out, "canary-multitool.sarif")
    with open(canary_ajv, "w") as f:
        json.dump(CANARY_AJV, f)
    with open(canary_multitool, "w") as f:
        json.dump(CANARY_MULTITOOL, f)
    return github_files, schema_only, canary_ajv, canary_multitool


@test("sarif: every fixture and hard case validates with ajv against the official schema")
def _():
    for path in (SCHEMA, GITHUB_RULES):
        require(path, "a SARIF test file")
    with Workspace() as ws:
        github_files, schema_only, canary_ajv, _ = write_logs(ws)
        verdicts = run_ajv(github_files + schema_only + [canary_ajv])
        assert any("level" in e for e in verdicts[canary_ajv]), f"ajv passed its canary: {verdicts[canary_ajv]}"
        bad = {os.path.basename(p): e for p, e in verdicts.items() if e and p != canary_ajv}
        assert not bad, "schema errors (ajv):\n" + json.dumps(bad, indent=1)


# The Multitool is a .NET program that takes minutes over the whole set on a
# busy machine: the slow suite runs it.
@test("sarif: every fixture and hard case validates with the SARIF Multitool (GitHub rules on)", slow=True)
def _():
    for path in (SCHEMA, GITHUB_RULES):
        require(path, "a SARIF test file")
    with Workspace() as ws:
        github_files, schema_only, _, canary_multitool = write_logs(ws)
        started = time.monotonic()
        report, console = run_multitool(github_files + [canary_multitool], os.path.join(ws.path, "multitool.sarif"))
        multitool_s = time.monotonic() - started
        run0 = report["runs"][0]
        assert run0["invocations"][0]["executionSuccessful"] is True, run0["invocations"]
        for key in ("toolExecutionNotifications", "toolConfigurationNotifications"):
            errs = [n for n in run0["invocations"][0].get(key, []) if n.get("level", "warning") != "note"]
            assert not errs, f"Multitool {key}:\n" + json.dumps(errs, indent=1)
        by_file = {}
        for res in run0["results"]:
            uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            msg = res["message"]
            text = msg.get("text") or f'{msg.get("id")} {", ".join(msg.get("arguments", []))}'
            by_file.setdefault(os.path.basename(urllib.parse.unquote(uri)), []).append(
                f'{res["ruleId"]} {res.get("level", "warning")}: {text}')
        canary = by_file.pop(os.path.basename(canary_multitool), [])
        assert any(line.startswith("GH1001") for line in canary), \
            f"the Multitool did not flag its canary, so its report cannot be trusted:\n{console}"
        assert not by_file, "Multitool findings:\n" + json.dumps(by_file, indent=1) + "\n" + console[-6000:]
        print(f"  sarif: {len(github_files) + len(schema_only)} SARIF files validated by the Multitool in "
              f"{multitool_s:.1f}s", flush=True)


# ---- the shape GitHub relies on ------------------------------------------------------

@test("sarif: the driver names oomlint and carries every rule with its docs")
def _():
    with Workspace() as ws:
        _, log = sarif(ws.write("ok.py", CLEAN))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json"), log.get("$schema")
    assert len(log["runs"]) == 1
    run0 = log["runs"][0]
    assert run0["columnKind"] == "utf16CodeUnits"
    assert run0["results"] == []
    driver = run0["tool"]["driver"]
    version = run("--version").out.split()[1]
    assert driver["name"] == "oomlint" and driver["semanticVersion"] == version, driver
    assert driver["informationUri"] == "https://github.com/oomlint/oomlint"
    registry = run("rules", "--format", "json").json()
    assert [r["id"] for r in driver["rules"]] == [r["code"] for r in registry]
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for rule, reg in zip(driver["rules"], registry):
        code = reg["code"]
        assert rule["name"] == reg["name"], rule
        assert rule["shortDescription"]["text"] == reg["summary"], rule
        assert len(rule["fullDescription"]["text"]) > 40, rule
        assert rule["help"]["markdown"] == run("rule", code, "--markdown").out, code
        assert "Why is this bad?" in rule["help"]["text"] and "Use instead" in rule["help"]["text"], code
        assert rule["helpUri"] == DOCS_URL + code + ".md", rule["helpUri"]
        assert rule["defaultConfiguration"] == {"level": levels[reg["severity"]]}, rule
        props = rule["properties"]
        # "measured": the probe's committed figures, for rules that have them
        assert {"tags", "precision"} <= set(props) <= {"tags", "precision", "measured"}, props
        for m in props.get("measured", []):
            assert m["device"] and m["torch"] and m["verdict"], m
        assert props["tags"] and all(t and t == t.strip() and "," not in t for t in props["tags"]), props
        assert props["precision"] in ("very-high", "high", "medium", "low"), props
        assert "security-severity" not in json.dumps(rule)
    oom101 = next(r for r in driver["rules"] if r["id"] == "OOM101")
    plain = {k: v for k, v in oom101["properties"].items() if k != "measured"}
    assert plain == {"tags": ["memory", "autograd"], "precision": "high"}, oom101


@test("sarif: a result has ruleId, ruleIndex, level, message, a relative URI and a full region")
def _():
    with Workspace() as ws:
        ws.write("src/bad.py", BAD)
        _, log = sarif("src/bad.py", cwd=ws.path)
        want = run("--format", "json", "src/bad.py", cwd=ws.path).json()[0]
        root = os.path.realpath(ws.path)
    run0 = log["runs"][0]
    assert run0["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file://" + urllib.parse.quote(root) + "/"}}
    [res] = run0["results"]
    assert res["ruleId"] == "OOM101" and res["level"] == "error", res
    assert run0["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "OOM101"
    assert res["message"]["text"] == want["message"] or res["message"]["text"].startswith(want["message"] + " (evidence: ["), res["message"]
    assert artifact_of(res) == {"uri": "src/bad.py", "uriBaseId": "%SRCROOT%"}
    assert region_of(res) == {"startLine": 13, "startColumn": 9, "endLine": 13, "endColumn": 22}, region_of(res)
    assert "partialFingerprints" not in res and "fingerprints" not in res
    assert "security-severity" not in json.dumps(log)


@test("sarif: columns count UTF-16 code units (an emoji before the finding counts two)")
def _():
    with Workspace() as ws:
        # '😀' is one code point and two UTF-16 units; 'é' one of each
        f = ws.write("u.py", "s = '\U0001F600'; t = '\u00e9'; from torch.cuda.amp import autocast\n")
        _, log = sarif(f)
        points = run("--format", "json", f).json()
    [res] = [r for r in results_of(log) if r["ruleId"] == "OOM502" and region_of(r)["startLine"] == 1][:1]
    [want] = [f for f in points if f["line"] == 1][:1]
    reg = region_of(res)
    assert want["column"] == 19 and reg["startColumn"] == 20, (want, reg)
    assert reg["endColumn"] == want["end_column"] + 1, (want, reg)
    # and the fix's regions are in UTF-16 units too
    edits = [e for e in want["fix"]["edits"] if e["line"] == 1]
    reps = [x for x in res["fixes"][0]["artifactChanges"][0]["replacements"] if x["deletedRegion"]["startLine"] == 1]
    assert [x["deletedRegion"]["startColumn"] for x in reps] == [e["column"] + 1 for e in edits], (reps, edits)


def apply_replacements(text, replacements):
    """Applies SARIF replacements (1-based lines, UTF-16 columns) to text."""
    lines = text.splitlines(True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line, col16):
        body = lines[line - 1] if line - 1 < len(lines) else ""
        units = i = 0
        while units < col16 - 1:
            units += 2 if ord(body[i]) > 0xFFFF else 1
            i += 1
        return starts[line - 1] + i

    spans = []
    for rep in replacements:
        d = rep["deletedRegion"]
        spans.append((offset(d["startLine"], d["startColumn"]), offset(d["endLine"], d["endColumn"]),
                      rep.get("insertedContent", {}).get("text", "")))
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


@test("sarif: fixes are artifactChanges whose replacements give what --fix gives")
def _():
    # emoji before edits on their line: replacement columns are UTF-16 units
    src = ("# \U0001F600 \U0001F600\nimport torch\n" + "s = '\U0001F600'; " + AMP
           + "x = '\U0001F525'; y = torch.cuda.amp.GradScaler()\n")
    with Workspace() as ws:
        ws.write("a.py", src)
        _, log = sarif("a.py", cwd=ws.path)
        fixed = run("--fix", "-", stdin=src).out
    assert fixed != src
    fixes = {}
    for res in results_of(log):
        for fix in res.get("fixes", []):
            fixes[json.dumps(fix, sort_keys=True)] = fix
    assert fixes, "no fixes in the SARIF"
    replacements = []
    for fix in fixes.values():
        assert fix["description"]["text"] and fix["properties"] == {"applicability": "safe"}, fix
        [change] = fix["artifactChanges"]
        assert change["artifactLocation"] == {"uri": "a.py", "uriBaseId": "%SRCROOT%"}, change
        replacements += change["replacements"]
    assert apply_replacements(src, replacements) == fixed, apply_replacements(src, replacements)


@test("sarif: unsafe fixes are included and marked unsafe")
def _():
    with Workspace() as ws:
        _, log = sarif(ws.write("a.py", BAD.replace("total += loss", "total += model(x)")))
    [res] = results_of(log)
    [fix] = res["fixes"]
    assert fix["properties"]["applicability"] == "unsafe", fix
    # and why: the reason travels with it
    assert set(fix["properties"]) == {"applicability", "unsafeReason"}, fix
    assert "`.detach()`" in fix["properties"]["unsafeReason"] and "gradient" in fix["properties"]["unsafeReason"], fix
    [rep] = fix["artifactChanges"][0]["replacements"]
    assert rep["insertedContent"]["text"] == ".detach()", rep


@test("sarif: an unreadable or undecodable file (OOM001) is located at its line 1")
def _():
    with Workspace() as ws:
        ws.write("latin.py", b"x = 1\ny = 'caf\xe9'\n", "wb")
        r, log = sarif("latin.py", "gone.py", cwd=ws.path)
    assert r.code == 2, r
    got = {artifact_of(x)["uri"]: x for x in results_of(log)}
    assert set(got) == {"latin.py", "gone.py"}, got
    for res in got.values():
        assert res["ruleId"] == "OOM001" and res["level"] == "error", res
        assert region_of(res) == {"startLine": 1}, res
        assert artifact_of(res)["uriBaseId"] == "%SRCROOT%"
        assert "fixes" not in res


@test("sarif: notebook results point at the .ipynb's lines and name the cell")
def _():
    nb_text = notebook(("markdown", "# Notes\n"), ("code", "import torch\n"), ("code", BAD))
    with Workspace() as ws:
        ws.write("nb.ipynb", nb_text)
        _, log = sarif("nb.ipynb", cwd=ws.path)
        want = run("--format", "json", "nb.ipynb", cwd=ws.path).json()
    [res] = results_of(log)
    assert want[0]["cell"] == 3 and want[0]["line"] == 13, want
    line = ipynb_line(nb_text, "total += loss")
    assert region_of(res) == {"startLine": line, "endLine": line}, (region_of(res), line)
    assert (res["message"]["text"] == want[0]["message"] + " (cell 3, line 13)" or
            res["message"]["text"].startswith(want[0]["message"] + " (cell 3, line 13) (evidence: [")), res["message"]
    assert artifact_of(res) == {"uri": "nb.ipynb", "uriBaseId": "%SRCROOT%"}
    assert "fixes" not in res, "notebook edits are in cell coordinates; they must not be offered as .ipynb edits"


@test("sarif: URIs are percent-encoded, relative under the current directory, absolute outside it")
def _():
    with Workspace() as ws:
        ws.write("dir with space/a%b#c \u00e9.py", BAD)
        ws.write("x:y.py", BAD)
        ws.write("outside.py", BAD)
        os.makedirs(os.path.join(ws.path, "sub"))
        _, log = sarif("dir with space", "./x:y.py", cwd=ws.path)
        uris = sorted(artifact_of(x)["uri"] for x in results_of(log))
        assert uris == ["dir%20with%20space/a%25b%23c%20%C3%A9.py", "x%3Ay.py"], uris
        _, log = sarif("../outside.py", "../sub/../outside.py", cwd=os.path.join(ws.path, "sub"))
        root = os.path.realpath(ws.path)
        for res in results_of(log):
            assert artifact_of(res) == {"uri": "file://" + urllib.parse.quote(root) + "/outside.py"}, res


@test("sarif: stdin results use --stdin-filename")
def _():
    _, log = sarif("--stdin-filename", "pkg/train.py", "-", stdin=BAD)
    [res] = results_of(log)
    assert artifact_of(res) == {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}, res


@test("sarif: --output-file writes the report there, keeps the exit code, fails cleanly")
def _():
    with Workspace() as ws:
        ws.write("bad.py", BAD)
        r = run("--format", "sarif", "--output-file", "out.sarif", "bad.py", cwd=ws.path)
        assert r.code == 1 and r.out == "", r
        direct = run("--format", "sarif", "bad.py", cwd=ws.path).out
        assert ws.read("out.sarif") == direct
        r = run("-o", "report.txt", "--color", "never", "bad.py", cwd=ws.path)
        assert r.out == "" and "OOM101" in ws.read("report.txt") and "\x1b[" not in ws.read("report.txt"), r
        ws.write("amp.py", AMP)
        r = run("--fix", "--output-file", os.path.join(ws.path, "no", "such", "dir", "x"), "amp.py", cwd=ws.path)
        assert r.code == 2 and "no/such/dir/x" in r.err, r
        assert ws.read("amp.py") == AMP, "a bad --output-file must stop the run before fixing"
        r = run("--output-file=", "bad.py", cwd=ws.path)
        assert r.code == 2 and "--output-file" in r.err, r


@test("cli: --format takes text, json, sarif and github; errors and --help list them")
def _():
    with Workspace() as ws:
        f = ws.write("bad.py", BAD)
        firsts = {fmt: run("--format", fmt, f).out[:2] for fmt in ("text", "json", "sarif", "github")}
    assert firsts["json"] == "[\n" and firsts["sarif"] == "{\n" and firsts["github"] == "::", firsts
    assert firsts["text"] not in ("[\n", "{\n", "::"), firsts
    r = run("--format", "xml", "x.py")
    assert r.code == 2 and "expected: full (or text), concise, json, sarif, github" in r.err, r
    r = run("--help")
    assert "sarif" in r.out and "github" in r.out and "--output-file" in r.out, r


# ---- evidence -------------------------------------------------------------------------

@test("sarif: evidence: notes are related locations linked from the message; steps are one code flow ending at the finding")
def _():
    with Workspace() as ws:
        log = json.loads(evidence_sample(ws.path))
    results = results_of(log)
    res = results[0]
    related = res["relatedLocations"]
    assert [rel["id"] for rel in related] == [1, 2, 3, 4], related
    # GitHub links the related locations named in the message; brackets of the text are escaped
    assert res["message"]["text"].endswith(
        "(evidence: [evaluation code: `evaluate()`](1); [`run()` calls `evaluate()` with autograd on](2); "
        "[each batch of `loader\\[1:\\]` runs the model](3); [the device is chosen here](4))"), res["message"]
    # a note in another file of the run: a relative URI, like the result's
    assert artifact_of(res) == {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}, res
    other = related[1]["physicalLocation"]
    assert other["artifactLocation"] == {"uri": "pkg/data.py", "uriBaseId": "%SRCROOT%"}, other
    assert other["region"] == {"startLine": 12, "endLine": 12}, other
    assert related[3]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/config.py", related[3]
    [flow] = res["codeFlows"]
    [thread] = flow["threadFlows"]
    steps = [step["location"] for step in thread["locations"]]
    assert [s["physicalLocation"]["artifactLocation"]["uri"] for s in steps] == \
        ["pkg/data.py", "pkg/train.py", "pkg/train.py"], steps
    assert steps[-1]["physicalLocation"]["region"] == region_of(res), steps[-1]
    assert res["properties"] == {"confidence": "low", "guessedFrom": "a name's spelling"}, res["properties"]
    # no evidence: nothing added but the confidence
    plain = results[1]
    assert "relatedLocations" not in plain and "codeFlows" not in plain, plain
    assert plain["properties"] == {"confidence": "high"}, plain


@test("sarif: evidence: an OOM201 finding's evaluation code is a related location in its file")
def _():
    from cli_tests import EVAL
    with Workspace() as ws:
        ws.write("src/ev.py", EVAL)
        _, log = sarif("--isolated", "--select", "OOM201", "src/ev.py", cwd=ws.path)
    [res] = results_of(log)
    rel = res["relatedLocations"][0]
    text = "`evaluate()` is evaluation code: named for it, and it computes no gradient"
    assert rel["id"] == 1 and rel["message"]["text"] == text, rel
    assert rel["physicalLocation"] == {"artifactLocation": {"uri": "src/ev.py", "uriBaseId": "%SRCROOT%"},
                                       "region": {"startLine": 7, "startColumn": 5, "endLine": 7,
                                                  "endColumn": 13}}, rel
    assert res["message"]["text"].endswith(" (evidence: [" + text + "](1); [runs every step of the loop over "
                                           "`loader`](2); [this file puts data on a GPU: `nn.Linear(8, 2).cuda()`]"
                                           "(3))"), res["message"]
    # it rests on the function's name: a guess, said so
    assert "codeFlows" not in res and res["properties"] == {"confidence": "low",
                                                            "guessedFrom": "a function's name"}, res
