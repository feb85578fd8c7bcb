"""pre-commit: the hooks in .pre-commit-hooks.yaml, run for real.

`pre-commit try-repo` (pre-commit 3.0, Debian's package, installed by `make
test`) clones this checkout, with its uncommitted changes, and runs a hook
in a throwaway git repository, exactly as a user's `pre-commit run` would; it
needs no network. HOME and PRE_COMMIT_HOME point at temporary directories so
nothing depends on the user's cache. OOMLINT_BIN hands the hook the binary
under test; one test leaves it unset so the hook builds oomlint in its clone
(with the fetched sources of this checkout, so still offline)."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import harness
from cli_tests import AMP, BAD, CLEAN
from github_tests import load_yaml
from harness import ROOT, test

HOOKS = os.path.join(ROOT, ".pre-commit-hooks.yaml")
FIXED = BAD.replace("total += loss", "total += loss.item()")


def clean_env(**extra):
    """The environment of a user's shell: none of make's, git's or our variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MAKE", "MFLAGS", "GIT_", "PRE_COMMIT", "OOMLINT_")) and k != "SANITIZE"}
    # a checkout owned by another user must not stop git (safe.directory), as in CI containers
    env.update(NO_COLOR="1", GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="safe.directory", GIT_CONFIG_VALUE_0="*",
               # never the network: a release server only where a test serves one
               # (port 9 on loopback refuses at once, as a missing release would)
               OOMLINT_RELEASE_URL="http://127.0.0.1:9/none")
    env.update(extra)
    return env


class Sandbox:
    """A git repository to commit into, and a HOME and pre-commit cache of its own."""

    def __init__(self, prebuilt=True, extra_env=None):
        self.root = tempfile.mkdtemp(prefix="oomlint-precommit-")
        self.repo = os.path.join(self.root, "repo")
        self.cache = os.path.join(self.root, "cache")
        home = os.path.join(self.root, "home")
        for d in (self.repo, self.cache, home):
            os.makedirs(d)
        env = dict(HOME=home, PRE_COMMIT_HOME=self.cache, **(extra_env or {}))
        if prebuilt:
            env["OOMLINT_BIN"] = harness.BIN
        self.env = clean_env(**env)
        self.git("init", "-q")
        self.git("config", "user.email", "test@oomlint.invalid")
        self.git("config", "user.name", "oomlint test")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args):
        proc = subprocess.run(["git", *args], cwd=self.repo, env=self.env, capture_output=True, text=True)
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
        return proc.stdout

    def write(self, rel, content, stage=True):
        path = os.path.join(self.repo, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        if stage:
            self.git("add", rel)

    def read(self, rel):
        with open(os.path.join(self.repo, rel), encoding="utf-8") as f:
            return f.read()

    def try_repo(self, hook, timeout=300):
        """`pre-commit try-repo <this checkout> HOOK` on the staged files."""
        proc = subprocess.run(["pre-commit", "try-repo", ROOT, hook, "--color", "never", "--verbose"],
                              cwd=self.repo, env=self.env, capture_output=True, text=True, timeout=timeout)
        out = proc.stdout + proc.stderr
        assert "Sanitizer" not in out and "runtime error:" not in out, f"sanitizer report:\n{out}"
        # the hook's verdict line, e.g. "oomlint.......Failed"
        verdicts = re.findall(r"^(oomlint(?: \(fix\))?)\.+(?:\([^)]*\))?(Passed|Failed|Skipped)$", out, re.M)
        return proc.returncode, out, verdicts

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.root, ignore_errors=True)


def require_pre_commit():
    assert shutil.which("pre-commit"), "pre-commit is not installed: `make test` installs it (apt-get)"


@test("pre-commit: .pre-commit-hooks.yaml defines the script and the python hooks, check and fix")
def _():
    with open(HOOKS, encoding="utf-8") as f:
        hooks = {h["id"]: h for h in load_yaml(f.read())}
    assert set(hooks) == {"oomlint", "oomlint-fix", "oomlint-python", "oomlint-python-fix"}, hooks.keys()
    for hook in hooks.values():
        assert hook["types_or"] == ["python", "jupyter"], hook
        assert hook["require_serial"] is True, hook
        # the configuration's excludes apply to the files pre-commit passes
        assert "--force-exclude" in hook["entry"].split(), hook
        assert ("--fix" in hook["entry"].split()) == hook["id"].endswith("-fix"), hook
    for hook_id in ("oomlint", "oomlint-fix"):
        hook = hooks[hook_id]
        assert hook["language"] == "script", hook
        script = hook["entry"].split()[0]
        assert os.access(os.path.join(ROOT, script), os.X_OK), f"{script} is not executable"
        # pre-commit clones the repository: the executable bit must be in git
        mode = subprocess.run(["git", "ls-files", "-s", script], cwd=ROOT, capture_output=True,
                              text=True).stdout.split(" ")[0]
        assert mode == "100755", f"{script} has mode {mode!r} in git (git update-index --chmod=+x)"
    for hook_id in ("oomlint-python", "oomlint-python-fix"):
        hook = hooks[hook_id]
        # pip installs this repository (pyproject.toml), which puts `oomlint` on the env's PATH
        assert hook["language"] == "python" and hook["entry"].split()[0] == "oomlint", hook
    assert os.path.isfile(os.path.join(ROOT, "pyproject.toml"))


@test("pre-commit: the hook fails on a bad file, passes once fixed, skips non-Python, runs with nothing staged")
def _():
    require_pre_commit()
    with Sandbox() as sb:
        sb.write("train.py", BAD)
        sb.write("clean.py", CLEAN)
        sb.write("notes.txt", BAD)           # bad code, but not Python: never linted
        sb.write("docs/nb.ipynb", json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": CLEAN,
                                                         "outputs": [], "execution_count": None}],
                                              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 1 and verdicts == [("oomlint", "Failed")], out
        assert "train.py:13:9: OOM101 [error]" in out, out
        assert "notes.txt" not in out, out

        sb.write("train.py", FIXED)
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 0 and verdicts == [("oomlint", "Passed")], out

        sb.git("commit", "-q", "-m", "clean")
        sb.write("notes.txt", BAD + "\n# more\n")  # only a non-Python file staged
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 0 and verdicts == [("oomlint", "Skipped")] and "(no files to check)" in out, out

        sb.git("commit", "-q", "-m", "notes")      # nothing staged at all
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 0 and verdicts == [("oomlint", "Skipped")], out


@test("pre-commit: notebooks are linted and reported by cell")
def _():
    require_pre_commit()
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Train"},
                    {"cell_type": "code", "metadata": {}, "source": BAD, "outputs": [], "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    with Sandbox() as sb:
        sb.write("train.ipynb", json.dumps(nb, indent=1))
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 1 and verdicts == [("oomlint", "Failed")], out
        assert "train.ipynb:cell 2:13:9: OOM101" in out, out


@test("pre-commit: oomlint-fix fixes the staged file, fails that once, then passes")
def _():
    require_pre_commit()
    with Sandbox() as sb:
        sb.write("amp.py", AMP)
        code, out, verdicts = sb.try_repo("oomlint-fix")
        assert code == 1 and verdicts == [("oomlint (fix)", "Failed")], out
        assert "files were modified by this hook" in out, out
        fixed = 'from torch.amp import autocast\nwith autocast("cuda"):\n    pass\n'
        assert sb.read("amp.py") == fixed, sb.read("amp.py")
        sb.git("add", "amp.py")
        code, out, verdicts = sb.try_repo("oomlint-fix")
        assert code == 0 and verdicts == [("oomlint (fix)", "Passed")], out


@test("pre-commit: with no OOMLINT_BIN the hook builds oomlint in its clone")
def _():
    require_pre_commit()
    deps = os.path.join(ROOT, "build", "deps")
    assert os.path.isdir(deps), f"{deps} is missing: run make first"
    # the checkout's fetched sources keep the build offline; -O0 keeps it quick
    with Sandbox(prebuilt=False, extra_env={"MAKEFLAGS": f"DEPS={deps} OPT=-O0 -j2"}) as sb:
        sb.write("train.py", BAD)
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 1 and verdicts == [("oomlint", "Failed")], out
        assert "building oomlint" in out and "train.py:13:9: OOM101" in out, out
        # try-repo clones into a store of its own each time, so this builds again
        sb.write("train.py", FIXED)
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 0 and verdicts == [("oomlint", "Passed")], out


@test("pre-commit: the README's config uses this repository's hooks")
def _():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    configs = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repos:" in b]
    assert configs, "README.md has no .pre-commit-config.yaml example"
    with open(HOOKS, encoding="utf-8") as f:
        ids = {h["id"] for h in load_yaml(f.read())}
    for block in configs:
        [repo] = load_yaml(block)["repos"]
        assert repo["repo"] == "https://github.com/oomlint/oomlint" and repo["rev"], repo
        used = {h["id"] for h in repo["hooks"]}
        assert used and used <= ids, (used, ids)
        assert_real_ref(str(repo["rev"]))


def assert_real_ref(ref):
    """A pinned ref is a full commit hash or a vX.Y.Z tag, and (unless this clone is shallow)
    names a commit this repository has: never a tag that does not exist."""
    assert re.fullmatch(r"[0-9a-f]{40}|v\d+\.\d+\.\d+", ref), f"{ref!r} is neither a commit hash nor a release tag"
    from github_tests import action_version
    if ref == f"v{action_version()}":
        return  # this version's release tag, made when it is released (docs: ... pin ... this version's tag)
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()
    if shallow == "false":
        proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", ref + "^{commit}"], cwd=ROOT,
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{ref} is not a commit of this repository"


@test("pre-commit: the README and docs/github.md pin the Action to a real ref")
def _():
    for doc in ("README.md", os.path.join("docs", "github.md")):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            refs = re.findall(r"uses: oomlint/oomlint@(\S+)", f.read())
        assert refs, f"{doc} shows no `uses: oomlint/oomlint@...`"
        for ref in refs:
            assert_real_ref(ref)


@test("pre-commit: a commit whose files are all excluded by [tool.oomlint] passes (--force-exclude)")
def _():
    require_pre_commit()
    with Sandbox() as sb:
        sb.write("pyproject.toml", '[tool.oomlint]\nexclude = ["legacy"]\n')
        sb.write("legacy/old.py", BAD)
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 0 and verdicts == [("oomlint", "Passed")], out
        sb.write("train.py", BAD)
        code, out, verdicts = sb.try_repo("oomlint")
        assert code == 1 and verdicts == [("oomlint", "Failed")], out
        assert "train.py:13:9: OOM101" in out and "legacy/old.py" not in out, out


@test("pre-commit: the language: python hook installs oomlint with pip (offline) and runs it")
def _():
    require_pre_commit()
    deps = os.path.join(ROOT, "build", "deps")
    assert os.path.isdir(deps), f"{deps} is missing: run make first"
    # pip builds this repository with make; the checkout's fetched sources keep it offline, and
    # PIP_NO_INDEX shows that nothing comes from a package index
    env = {"MAKEFLAGS": f"DEPS={deps} OPT=-O0 -j2", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    with Sandbox(prebuilt=False, extra_env=env) as sb:
        sb.write("train.py", BAD)
        code, out, verdicts = sb.try_repo("oomlint-python", timeout=600)
        assert code == 1 and verdicts == [("oomlint", "Failed")], out
        assert "train.py:13:9: OOM101" in out, out
        # no oomlint on the user's PATH: the one that ran is the one pip put in the hook's env
        assert shutil.which("oomlint", path=sb.env.get("PATH", "")) is None
        assert "building oomlint" not in out, out
        sb.write("amp.py", AMP)
        code, out, verdicts = sb.try_repo("oomlint-python-fix", timeout=600)
        assert verdicts == [("oomlint (fix)", "Failed")] and "files were modified by this hook" in out, out
        assert sb.read("amp.py") == 'from torch.amp import autocast\nwith autocast("cuda"):\n    pass\n'


# ---- hooks without a compiler ------------------------------------------------------------

FAKE_MAKE = """#!/bin/sh
# a stand-in for make: what it prints, and whether it works, as the test says
echo "make $*" >> "$FAKE_MAKE_LOG"
echo "  CC      analyzer/lint.c"
echo "analyzer/lint.c:1:1: warning: a compiler's chatter" >&2
[ "${FAKE_MAKE_FAILS:-}" = 1 ] && { echo "analyzer/lint.c:2:1: error: it broke" >&2; exit 2; }
for a in "$@"; do case $a in -C) ;; *) ;; esac; done
mkdir -p "$FAKE_REPO/build" && cp "$FAKE_BIN" "$FAKE_REPO/build/oomlint"
"""


def fake_make_env(root, repo, fails=False):
    bindir = os.path.join(root, "fakebin")
    os.makedirs(bindir, exist_ok=True)
    with open(os.path.join(bindir, "make"), "w") as f:
        f.write(FAKE_MAKE)
    os.chmod(os.path.join(bindir, "make"), 0o755)
    return clean_env(PATH=bindir + os.pathsep + os.environ.get("PATH", ""), FAKE_MAKE_LOG=os.path.join(root, "make.log"),
                     FAKE_REPO=repo, FAKE_BIN=harness.BIN, FAKE_MAKE_FAILS="1" if fails else "")


@test("pre-commit: the script hook says one line while it builds, and the build's output only when it fails")
def _():
    root = tempfile.mkdtemp(prefix="oomlint-hook-")
    try:
        repo = os.path.join(root, "clone")
        os.makedirs(os.path.join(repo, "scripts"))
        shutil.copy(os.path.join(ROOT, "scripts", "pre-commit-hook"), os.path.join(repo, "scripts"))
        with open(os.path.join(root, "bad.py"), "w") as f:
            f.write(BAD)
        hook = [os.path.join(repo, "scripts", "pre-commit-hook"), "bad.py"]
        p = subprocess.run(hook, cwd=root, env=fake_make_env(root, repo), capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, p
        assert p.stderr == f"oomlint: building oomlint in {repo} (once per hook version)\n", p.stderr
        assert p.stdout.startswith("bad.py:13:9: OOM101"), p.stdout
        # built once: the next commit runs it straight away, silently
        p = subprocess.run(hook, cwd=root, env=fake_make_env(root, repo), capture_output=True, text=True, timeout=60)
        assert p.returncode == 1 and p.stderr == "", p.stderr
        with open(os.path.join(root, "make.log")) as f:
            assert len(f.read().splitlines()) == 1
        # a failed build shows what the build said, then why the hook stops
        shutil.rmtree(os.path.join(repo, "build"))
        p = subprocess.run(hook, cwd=root, env=fake_make_env(root, repo, fails=True), capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2, p
        assert "error: it broke" in p.stderr and "  CC      analyzer/lint.c" in p.stderr, p.stderr
        assert p.stderr.rstrip().endswith("or set OOMLINT_BIN to an oomlint binary"), p.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)


@test("pre-commit: a first build that cannot fetch its sources says so, with npm's error, not to install the tools")
def _():
    assert shutil.which("npm") and shutil.which("make") and shutil.which("git"), "the build's tools are missing"
    root = tempfile.mkdtemp(prefix="oomlint-hook-offline-")
    try:
        clone = os.path.join(root, "clone")
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", ROOT, clone], check=True, capture_output=True,
                       env=clean_env())
        # the hook and the fetch script as they are in this checkout, uncommitted changes too
        for rel in ("scripts/pre-commit-hook", "grammar/fetch.sh"):
            shutil.copy(os.path.join(ROOT, rel), os.path.join(clone, rel))
        with open(os.path.join(root, "bad.py"), "w") as f:
            f.write(BAD)
        # offline: npm may only use its cache, and its cache is empty
        cache = os.path.join(root, "npm-cache")
        env = clean_env(HOME=root, npm_config_cache=cache, npm_config_offline="true",
                        HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
        p = subprocess.run([os.path.join(clone, "scripts", "pre-commit-hook"), "bad.py"], cwd=root, env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 2 and p.stdout == "", p
        err = p.stderr
        assert "npm error" in err, err                       # npm's own error output
        assert re.search(r"`npm pack tree-sitter@[\d.]+` failed", err), err  # the command that failed
        assert "needs the network or npm's cache" in err, err
        assert "install gcc" not in err and "libcjson-dev" not in err, err
        assert err.rstrip().endswith("or set OOMLINT_BIN to an oomlint binary"), err
    finally:
        shutil.rmtree(root, ignore_errors=True)


def serve_wheels(folder, tags, payload, checksum_of=None):
    """Writes a release folder: a wheel for each platform tag (each holding
    payload as its oomlint script) and SHA256SUMS; checksum_of maps a tag to
    a wrong checksum to list instead."""
    import hashlib
    import sys
    sys.path.insert(0, os.path.join(ROOT, "build-aux"))
    import release
    script = os.path.join(folder, "oomlint")
    with open(script, "w") as f:
        f.write(payload)
    os.chmod(script, 0o755)
    lines = []
    for tag in tags:
        path = release.write_wheel(folder, script, tag=tag)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        lines.append(f"{(checksum_of or {}).get(tag, digest)}  {os.path.basename(path)}\n")
    os.unlink(script)
    with open(os.path.join(folder, "SHA256SUMS"), "w") as f:
        f.writelines(lines)


def backend_build_wheel(root, url, make_fails=True):
    """Calls the PEP 517 backend's build_wheel as pip does, with a make that
    only records that it ran: (exit code, stderr, wheel files written, make ran)."""
    out = os.path.join(root, "wheelhouse")
    os.makedirs(out, exist_ok=True)
    env = fake_make_env(root, os.path.join(root, "nowhere"), fails=make_fails)
    env["OOMLINT_RELEASE_URL"] = url
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import oomlint_backend as b; "
            "print(b.build_wheel(sys.argv[2]))")
    p = subprocess.run([sys_python(), "-c", code, os.path.join(ROOT, "build-aux"), out], env=env,
                       capture_output=True, text=True, timeout=120)
    return p, sorted(os.listdir(out)), os.path.exists(os.path.join(root, "make.log"))


def sys_python():
    import sys
    return sys.executable


def this_arch():
    import platform
    return {"arm64": "aarch64", "amd64": "x86_64"}.get(platform.machine().lower(), platform.machine().lower())


@test("pre-commit: the python hook's build takes the release wheel that fits this machine, checked, no compiler")
def _():
    import platform
    from github_tests import ReleaseServer, action_version
    assert platform.libc_ver()[0] == "glibc", "this test picks among glibc wheels"
    arch, ver = this_arch(), action_version()
    root = tempfile.mkdtemp(prefix="oomlint-wheel-")
    try:
        rel = os.path.join(root, "release")
        os.makedirs(rel)
        fits, too_new = f"manylinux_2_17_{arch}", f"manylinux_2_999_{arch}"
        serve_wheels(rel, [fits, too_new, f"musllinux_1_2_{arch}", "macosx_11_0_arm64", "manylinux_2_17_ppc64le"],
                     "#!/bin/sh\necho prebuilt\n")
        with ReleaseServer(rel) as srv:
            p, files, made = backend_build_wheel(root, srv.url)
        want = f"oomlint-{ver}-py3-none-{fits}.whl"
        assert p.returncode == 0 and p.stdout.strip() == want, p
        assert files == [want], files
        assert not made, "make ran although a release wheel fits"
        with open(os.path.join(rel, want), "rb") as a, open(os.path.join(root, "wheelhouse", want), "rb") as b:
            assert a.read() == b.read(), "the wheel is not the release's"
        assert p.stderr == f"oomlint: the release wheel {want}, no build needed\n", p.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)


@test("pre-commit: a release wheel that fails its SHA256SUMS check stops the install; none that fits, a build")
def _():
    from github_tests import ReleaseServer, action_version
    arch, ver = this_arch(), action_version()
    root = tempfile.mkdtemp(prefix="oomlint-wheel-")
    try:
        rel = os.path.join(root, "release")
        os.makedirs(rel)
        tag = f"manylinux_2_17_{arch}"
        serve_wheels(rel, [tag], "#!/bin/sh\necho tampered\n", checksum_of={tag: "0" * 64})
        with ReleaseServer(rel) as srv:
            p, files, made = backend_build_wheel(root, srv.url)
        assert p.returncode != 0 and "does not match its SHA256SUMS line" in p.stderr, p
        assert files == [] and not made, (files, made)

        shutil.rmtree(rel)
        os.makedirs(rel)
        serve_wheels(rel, ["macosx_11_0_arm64", "manylinux_2_17_ppc64le"], "#!/bin/sh\n")
        with ReleaseServer(rel) as srv:
            p, files, made = backend_build_wheel(root, srv.url)
        assert made, "no fitting wheel, yet no build"
        assert f"oomlint: no release wheel of {ver} for this platform; building from source" in p.stderr, p.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)


@test("pre-commit: the language: python hook installs the release wheel, served over loopback, and runs it")
def _():
    import platform
    require_pre_commit()
    from github_tests import ReleaseServer
    assert platform.libc_ver()[0] == "glibc", "this test serves a glibc wheel"
    root = tempfile.mkdtemp(prefix="oomlint-wheel-")
    try:
        rel = os.path.join(root, "release")
        os.makedirs(rel)
        marker = os.path.join(root, "ran")
        serve_wheels(rel, [f"manylinux_2_17_{this_arch()}"],
                     f'#!/bin/sh\necho prebuilt >> "{marker}"\nexec "{harness.BIN}" "$@"\n')
        with ReleaseServer(rel) as srv:
            # the marker tells the release wheel's oomlint from one pip built
            env = {"OOMLINT_RELEASE_URL": srv.url, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
            with Sandbox(prebuilt=False, extra_env=env) as sb:
                sb.write("train.py", BAD)
                code, out, verdicts = sb.try_repo("oomlint-python", timeout=600)
        assert code == 1 and verdicts == [("oomlint", "Failed")], out
        assert "train.py:13:9: OOM101" in out, out
        with open(marker) as f:
            assert f.read() == "prebuilt\n", "the release wheel's oomlint did not run"
    finally:
        shutil.rmtree(root, ignore_errors=True)
