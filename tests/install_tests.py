"""Installing oomlint the ways users and packagers do, for real:
`make install` / `make uninstall` into a staging DESTDIR, the generated man
page (linted with groff, man and lexgrog), `make wheel` installed with pip
into a fresh venv, `make dist` (source tarball, binary tarball, checksums),
and `pip install` of the source tarball with build isolation and no package
index, as pre-commit's `language: python` hook does. Every one of them carries
oomlint's LICENSE and the THIRD_PARTY_NOTICES of what its binary bundles, and
every binary names its version and the commit it was built from.

make runs here without the calling make's variables (MAKEFLAGS, SANITIZE):
these are the release and everyday builds, whatever the suite runs against.
The source builds use this checkout's fetched sources (DEPS=build/deps), so
nothing is fetched; `make release` fetches cJSON's Debian source package once
(build/deps/cjson-*), through apt."""
import base64
import csv
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import tarfile
import zipfile

from cli_tests import BAD
from harness import ROOT, Workspace, run, test

sys.path.insert(0, os.path.join(ROOT, "build-aux"))
import release  # noqa: E402  (build-aux/release.py)

with open(os.path.join(ROOT, "analyzer", "version.h"), encoding="utf-8") as _f:
    VERSION = re.search(r'#define OL_VERSION "([^"]+)"', _f.read()).group(1)
DEPS = os.path.join(ROOT, "build", "deps")
with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as _f:
    LICENSE_TEXT = _f.read()
with open(os.path.join(ROOT, "THIRD_PARTY_NOTICES"), encoding="utf-8") as _f:
    NOTICES_TEXT = _f.read()
# what the binaries have compiled in, as THIRD_PARTY_NOTICES names each: (name, version)
BUNDLED = re.findall(r"^-{20,}\n(\S+) (\d[\w.]*)\n", NOTICES_TEXT, re.M)


def version_line(commit=None):
    """What `oomlint --version` prints for a build of this checkout made now (or of the
    given commit): `oomlint 0.2.0 (commit 1a2b3c4d5e6f)`."""
    return f"oomlint {VERSION} (commit {commit or release.commit(ROOT)})\n"


def make_var(directory, name):
    """A variable of the Makefile in `directory` as make computes it there (make -p-free:
    a rule given on the command line prints it)."""
    proc = subprocess.run(["make", "-s", "-C", directory, "--eval", f"print-var: ; @echo '$({name})'", "print-var"],
                          capture_output=True, text=True, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip()


def unpacked_sdist(ws):
    """This checkout's source tarball, written by release.py and unpacked: (its top, COMMIT's text)."""
    path = release.write_sdist(os.path.join(ws.path, "sdist"))
    with tarfile.open(path) as t:
        t.extractall(ws.path, filter="data") if sys.version_info >= (3, 12) else t.extractall(ws.path)
    top = os.path.join(ws.path, f"oomlint-{VERSION}")
    with open(os.path.join(top, "COMMIT"), encoding="utf-8") as f:
        return top, f.read()


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MAKE", "MFLAGS", "PIP_")) and k not in ("SANITIZE", "RELEASE")}
    # never the network: the build backend looks for a release wheel there first
    # (port 9 on loopback refuses at once, as a missing release would)
    env.update(NO_COLOR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1",
               OOMLINT_RELEASE_URL="http://127.0.0.1:9/none", **extra)
    return env


def make(*args, timeout=900, env=None):
    proc = subprocess.run(["make", "-C", ROOT, "-s", "-j2", *args], capture_output=True, text=True,
                          env=env or clean_env(), timeout=timeout)
    assert proc.returncode == 0, f"make {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def sh(*args, cwd=None, env=None, timeout=600, check=True):
    proc = subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, env=env or clean_env(),
                          timeout=timeout)
    if check:
        assert proc.returncode == 0, f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


def venv(path):
    """A fresh virtualenv with pip, as a user makes one."""
    sh(sys.executable, "-m", "venv", path, timeout=300)
    return os.path.join(path, "bin")


def lint_man(page):
    """groff's and man's warnings (none allowed) and lexgrog's NAME line."""
    proc = sh("groff", "-man", "-ww", "-z", page)
    assert proc.stderr == "", f"groff warns about {page}:\n{proc.stderr}"
    for width in ("60", "80", "132"):
        proc = sh("man", "--warnings", "-l", page, env=clean_env(MANWIDTH=width, LC_ALL="C.UTF-8", MANPAGER="cat",
                                                                   PAGER="cat"))
        assert proc.stderr == "", f"man --warnings at width {width}:\n{proc.stderr}"
        assert "oomlint - find the PyTorch training code" in proc.stdout, proc.stdout[:500]
    proc = sh("lexgrog", page)
    assert '"oomlint - find the PyTorch training code that runs GPUs out of memory"' in proc.stdout, proc.stdout
    return sh("man", "-l", page, env=clean_env(MANWIDTH="100", LC_ALL="C.UTF-8", MANPAGER="cat")).stdout


def needed_libs(binary):
    out = sh("objdump", "-p", binary).stdout
    return re.findall(r"^\s+NEEDED\s+(\S+)", out, re.M), re.findall(r"GLIBC_([0-9.]+)", out)


# ---- make install ---------------------------------------------------------------------------

@test("install: make install PREFIX DESTDIR stages the binary and the man page; make uninstall removes them")
def _():
    with Workspace() as ws:
        stage = os.path.join(ws.path, "stage")
        make("install", "PREFIX=/usr/local", f"DESTDIR={stage}")
        binary = os.path.join(stage, "usr/local/bin/oomlint")
        page = os.path.join(stage, "usr/local/share/man/man1/oomlint.1")
        assert stat.S_IMODE(os.stat(binary).st_mode) == 0o755, oct(os.stat(binary).st_mode)
        assert stat.S_IMODE(os.stat(page).st_mode) == 0o644, oct(os.stat(page).st_mode)
        assert sh(binary, "--version").stdout == version_line()
        assert "OOM101" in sh(binary, "rule", "OOM101").stdout
        lint_man(page)
        # a packager's own layout
        make("install", "PREFIX=/usr", "MANDIR=/usr/share/man", f"DESTDIR={stage}/pkg")
        assert os.path.isfile(os.path.join(stage, "pkg/usr/bin/oomlint"))
        assert os.path.isfile(os.path.join(stage, "pkg/usr/share/man/man1/oomlint.1"))
        make("uninstall", "PREFIX=/usr/local", f"DESTDIR={stage}")
        left = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(stage, "usr")) for f in fs]
        assert left == [], left


@test("install: the man page is generated from --help and the rule docs, and lints clean")
def _():
    make("man")
    page = os.path.join(ROOT, "build", "oomlint.1")
    text = lint_man(page)
    help_text = run("--help").out
    for flag in sorted(set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]+)", help_text, re.M))):
        assert re.search(rf"^\s+(?:-\w, )?{re.escape(flag)}\b", text, re.M), f"{flag} is not in the man page"
    for rule in run("rules", "--format", "json").json():
        assert f"{rule['code']} {rule['name']} ({rule['severity']}" in text, rule["code"]
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "RULES", "References", "COPYRIGHT"):
        assert re.search(rf"^\s*{section}$", text, re.M), section
    # the licence, and every third-party part the binary bundles, from LICENSE and THIRD_PARTY_NOTICES
    copyright_ = " ".join(text.split("\nCOPYRIGHT\n", 1)[1].split("\nSEE ALSO\n", 1)[0].split())
    holder = next(line for line in LICENSE_TEXT.splitlines() if line.startswith("Copyright"))
    assert holder in copyright_ and "MIT License" in copyright_ and "THIRD_PARTY_NOTICES" in copyright_, copyright_
    assert len(BUNDLED) == 4, BUNDLED
    for name, version in BUNDLED:
        assert f"{name} {version}" in copyright_.replace("- ", "-"), (name, copyright_)
    # every reference URL of a rule page survives into the man page (line breaks aside)
    flat = re.sub(r"\s+", "", text)
    page_md = run("rule", "OOM104", "--markdown").out
    for url in re.findall(r"\]\((https://[^)]+)\)", page_md):
        assert url in flat, url


# ---- the wheel --------------------------------------------------------------------------------

def check_record(z, info):
    """RECORD lists every file with its sha256 (urlsafe base64, unpadded) and size."""
    names = set(z.namelist())
    rows = list(csv.reader(io.StringIO(z.read(f"{info}/RECORD").decode("utf-8"))))
    listed = {r[0] for r in rows}
    assert listed == names, (listed ^ names)
    for name, digest, size in rows:
        if name == f"{info}/RECORD":
            assert digest == "" and size == "", (name, digest, size)
            continue
        data = z.read(name)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == want and int(size) == len(data), (name, digest, want, size, len(data))


@test("install: make wheel builds a manylinux wheel of the release binary, which needs only glibc")
def _():
    out = make("wheel", timeout=1800)
    wheels = [f for f in os.listdir(os.path.join(ROOT, "dist")) if f.endswith(".whl")]
    wheel = next((w for w in wheels if w.startswith(f"oomlint-{VERSION}-py3-none-")), None)
    assert wheel, (wheels, out)
    tag = wheel[len(f"oomlint-{VERSION}-py3-none-"):-len(".whl")]
    release_bin = os.path.join(ROOT, "build", "release", "oomlint")
    needed, glibc = needed_libs(release_bin)
    # cJSON and tree-sitter are compiled in: the C library is all the release binary needs
    assert needed == ["libc.so.6"], needed
    newest = max(tuple(int(x) for x in v.split(".")) for v in glibc)
    assert tag == f"manylinux_{newest[0]}_{newest[1]}_{os.uname().machine}", (tag, newest)
    with zipfile.ZipFile(os.path.join(ROOT, "dist", wheel)) as z:
        info = f"oomlint-{VERSION}.dist-info"
        data = f"oomlint-{VERSION}.data"
        assert z.read(f"{data}/scripts/oomlint") == open(release_bin, "rb").read()
        mode = z.getinfo(f"{data}/scripts/oomlint").external_attr >> 16
        assert mode & 0o111, oct(mode)
        assert f"{data}/data/share/man/man1/oomlint.1" in z.namelist()
        assert {"oomlint/__init__.py", "oomlint/__main__.py"} <= set(z.namelist())
        meta = z.read(f"{info}/METADATA").decode("utf-8")
        assert "Metadata-Version: 2.1\nName: oomlint\n" in meta and f"\nVersion: {VERSION}\n" in meta, meta[:400]
        assert "Description-Content-Type: text/markdown" in meta and "# oomlint" in meta
        wheel_file = z.read(f"{info}/WHEEL").decode("utf-8")
        assert "Root-Is-Purelib: false\n" in wheel_file and f"Tag: py3-none-{tag}\n" in wheel_file, wheel_file
        licenses = {n.rsplit("/", 1)[1] for n in z.namelist() if "/licenses/" in n}
        assert licenses == {"LICENSE", "THIRD_PARTY_NOTICES", "cJSON.LICENSE", "tree-sitter.LICENSE",
                            "tree-sitter-python.LICENSE", "tree-sitter-toml.LICENSE"}, licenses
        assert z.read(f"{info}/licenses/LICENSE").decode("utf-8") == LICENSE_TEXT
        assert z.read(f"{info}/licenses/THIRD_PARTY_NOTICES").decode("utf-8") == NOTICES_TEXT
        assert "\nLicense: MIT\n" in meta and "\nClassifier: License :: OSI Approved :: MIT License\n" in meta, meta[:900]
        check_record(z, info)


@test("install: pip installs the wheel into a fresh venv (no index); oomlint is on the venv's PATH and lints")
def _():
    dist = os.path.join(ROOT, "dist")
    wheels = [f for f in os.listdir(dist) if f.startswith(f"oomlint-{VERSION}-py3-none-manylinux")] \
        if os.path.isdir(dist) else []
    if not wheels:
        make("wheel", timeout=1800)
        wheels = [f for f in os.listdir(dist) if f.startswith(f"oomlint-{VERSION}-py3-none-manylinux")]
    with Workspace() as ws:
        bindir = venv(os.path.join(ws.path, "venv"))
        sh(os.path.join(bindir, "pip"), "install", "--no-index", os.path.join(dist, wheels[0]))
        oomlint = os.path.join(bindir, "oomlint")
        line = sh(oomlint, "--version").stdout
        assert re.fullmatch(rf"oomlint {re.escape(VERSION)} \(commit [0-9a-f]{{12}}(-dirty)?\)\n", line), line
        assert sh(os.path.join(bindir, "python"), "-m", "oomlint", "--version").stdout == line
        src = ws.write("train.py", BAD)
        env = clean_env(PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        # found by name on the venv's PATH, as a user's shell finds it after `source venv/bin/activate`
        proc = sh("oomlint", "--output-format", "concise", src, env=env, check=False)
        assert proc.returncode == 1 and f"{src}:13:9: OOM101" in proc.stdout, proc
        assert os.path.isfile(os.path.join(ws.path, "venv", "share", "man", "man1", "oomlint.1"))
        shown = sh(os.path.join(bindir, "pip"), "show", "-f", "oomlint").stdout
        assert f"Version: {VERSION}" in shown and "bin/oomlint" in shown, shown
        sh(os.path.join(bindir, "pip"), "uninstall", "-y", "oomlint")
        assert not os.path.exists(oomlint)


# ---- make dist, and pip install from source -------------------------------------------------------

@test("install: make dist writes the source tarball, the binary tarball and checksums that match")
def _():
    make("dist", timeout=1800)
    dist = os.path.join(ROOT, "dist")
    sums = {}
    with open(os.path.join(dist, "SHA256SUMS")) as f:
        for line in f:
            digest, name = line.split()
            sums[name] = digest
    arch = os.uname().machine
    for name in (f"oomlint-{VERSION}.tar.gz", f"oomlint-{VERSION}-{arch}-linux.tar.gz"):
        assert name in sums, (name, sums)
    for name, digest in sums.items():
        with open(os.path.join(dist, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == digest, name
    with tarfile.open(os.path.join(dist, f"oomlint-{VERSION}.tar.gz")) as t:
        names = set(t.getnames())
        top = f"oomlint-{VERSION}/"
        for must in ("PKG-INFO", "pyproject.toml", "Makefile", "README.md", "build-aux/oomlint_backend.py",
                     "cli/main.c", "rules/registry.c", "grammar/pins.mk", "scripts/pre-commit-hook"):
            assert top + must in names, must
        assert not any("/build/" in n or n.startswith(top + "dist/") or n.endswith(".o") for n in names)
        hook = t.getmember(top + "scripts/pre-commit-hook")
        assert hook.mode & 0o111, oct(hook.mode)
        assert t.extractfile(top + "LICENSE").read().decode("utf-8") == LICENSE_TEXT
        assert t.extractfile(top + "THIRD_PARTY_NOTICES").read().decode("utf-8") == NOTICES_TEXT
        assert "\nLicense: MIT\n" in t.extractfile(top + "PKG-INFO").read().decode("utf-8")
        # the commit a build of the tarball names: this checkout's, as make dist found it
        assert t.extractfile(top + "COMMIT").read().decode("utf-8") == release.commit(ROOT) + "\n"
    with tarfile.open(os.path.join(dist, f"oomlint-{VERSION}-{arch}-linux.tar.gz")) as t:
        top = f"oomlint-{VERSION}-{arch}-linux/"
        names = set(t.getnames())
        assert {top + "bin/oomlint", top + "share/man/man1/oomlint.1", top + "README.md", top + "LICENSE",
                top + "THIRD_PARTY_NOTICES", top + "licenses/cJSON.LICENSE"} <= names, names
        assert t.extractfile(top + "LICENSE").read().decode("utf-8") == LICENSE_TEXT
        with Workspace() as ws:
            t.extractall(ws.path, filter="data") if sys.version_info >= (3, 12) else t.extractall(ws.path)
            binary = os.path.join(ws.path, top, "bin", "oomlint")
            assert sh(binary, "--version").stdout == version_line()
            assert needed_libs(binary)[0] == ["libc.so.6"]


@test("install: pip installs the source tarball with build isolation and no index (it runs make)")
def _():
    sdist = os.path.join(ROOT, "dist", f"oomlint-{VERSION}.tar.gz")
    if not os.path.isfile(sdist):
        make("dist", timeout=1800)
    with Workspace() as ws:
        bindir = venv(os.path.join(ws.path, "venv"))
        # DEPS: the checkout's fetched tree-sitter sources, so the build fetches nothing
        env = clean_env(MAKEFLAGS=f"DEPS={DEPS} OPT=-O0 -j2")
        proc = sh(os.path.join(bindir, "pip"), "install", "--no-index", sdist, env=env, timeout=900)
        oomlint = os.path.join(bindir, "oomlint")
        # built where there is no .git: the commit is the one the tarball was stamped with
        with tarfile.open(sdist) as t:
            stamp = t.extractfile(f"oomlint-{VERSION}/COMMIT").read().decode("utf-8").strip()
        assert stamp not in ("", "unknown") and sh(oomlint, "--version").stdout == version_line(stamp), proc.stdout
        src = ws.write("train.py", BAD)
        r = sh(oomlint, "--format", "json", src, check=False)
        assert r.returncode == 1 and [f["code"] for f in json.loads(r.stdout)] == ["OOM101"], r


@test("install: pyproject.toml is valid, names the in-tree backend, and oomlint's config search passes it over")
def _():
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    if sys.version_info >= (3, 11):
        import tomllib
        data = tomllib.loads(text)
        assert data["build-system"] == {"requires": [], "build-backend": "oomlint_backend",
                                        "backend-path": ["build-aux"]}, data["build-system"]
        assert data["project"]["name"] == "oomlint" and "tool" not in data, data
    # no [tool.oomlint]: the fixtures and examples here are linted with the defaults
    r = run("--show-settings", "examples/train.py", cwd=ROOT)
    assert r.code == 0 and "Config file: none" in r.out, r
    assert run("--isolated", "examples/train.py", cwd=ROOT).out == run("examples/train.py", cwd=ROOT).out


# ---- the licence, the version and the commit ------------------------------------------------

@test("install: every wheel and tarball release.py writes carries LICENSE and THIRD_PARTY_NOTICES, whatever the binary")
def _():
    with Workspace() as ws:
        page = ws.write("oomlint.1", ".TH OOMLINT 1\n")
        # a wheel and a tarball of this machine's everyday build, given no third-party licence files
        wheel = release.write_wheel(os.path.join(ws.path, "dist"), harness_bin(), page, tag="linux_x86_64")
        with zipfile.ZipFile(wheel) as z:
            info = f"oomlint-{VERSION}.dist-info"
            assert z.read(f"{info}/licenses/LICENSE").decode("utf-8") == LICENSE_TEXT
            assert z.read(f"{info}/licenses/THIRD_PARTY_NOTICES").decode("utf-8") == NOTICES_TEXT
            assert "\nLicense: MIT\n" in z.read(f"{info}/METADATA").decode("utf-8")
            check_record(z, info)
        with tarfile.open(release.write_bindist(os.path.join(ws.path, "dist"), harness_bin(), page)) as t:
            top = t.getnames()[0].split("/")[0]
            assert t.extractfile(f"{top}/LICENSE").read().decode("utf-8") == LICENSE_TEXT
            assert t.extractfile(f"{top}/THIRD_PARTY_NOTICES").read().decode("utf-8") == NOTICES_TEXT
        top, stamp = unpacked_sdist(ws)
        for name, text in (("LICENSE", LICENSE_TEXT), ("THIRD_PARTY_NOTICES", NOTICES_TEXT)):
            with open(os.path.join(top, name), encoding="utf-8") as f:
                assert f.read() == text, name
        assert stamp == release.commit(ROOT) + "\n", stamp


@test("install: THIRD_PARTY_NOTICES holds each bundled source's licence as fetched, at the version pinned")
def _():
    with open(os.path.join(ROOT, "grammar", "pins.mk"), encoding="utf-8") as f:
        pins = dict(re.findall(r"^(\w+)\s*:=\s*(\S+)", f.read(), re.M))
    sources = {"tree-sitter": ("TS_RUNTIME_VERSION", "tree-sitter"),
               "tree-sitter-python": ("TS_PYTHON_VERSION", "tree-sitter-python"),
               "tree-sitter-toml": ("TS_TOML_VERSION", "tree-sitter-toml"),
               "cJSON": ("CJSON_VERSION", "cjson")}
    assert dict(BUNDLED) == {name: pins[pin] for name, (pin, _) in sources.items()}, BUNDLED
    flat = " ".join(NOTICES_TEXT.split())
    checked = 0
    for name, (pin, folder) in sources.items():
        # the licence as the fetched package ships it (cJSON's once `make release` has fetched it)
        path = os.path.join(DEPS, f"{folder}-{pins[pin]}", "LICENSE")
        if name != "cJSON":
            assert os.path.isfile(path), f"{path} is missing: run make first"
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                assert " ".join(f.read().split()) in flat, f"THIRD_PARTY_NOTICES lacks {name}'s licence as {path} has it"
            checked += 1
    assert checked >= 3


@test("install: the commit a build names is git's in a checkout, the source tarball's COMMIT without .git, else unknown")
def _():
    assert make_var(ROOT, "OOMLINT_COMMIT") == release.commit(ROOT)
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", release.commit(ROOT)), release.commit(ROOT)
    # the binary the everyday build made prints what the Makefile wrote for it
    with open(os.path.join(ROOT, "build", "gen", "commit.h"), encoding="utf-8") as f:
        stamped = re.search(r'#define OL_COMMIT "([^"]*)"', f.read()).group(1)
    r = run("--version")
    assert r.code == 0 and re.fullmatch(rf"oomlint {re.escape(VERSION)} \(commit [\w.-]+\)\n", r.out), r.out
    if os.path.realpath(harness_bin()).startswith(os.path.realpath(os.path.join(ROOT, "build")) + os.sep):
        assert r.out == version_line(stamped), (r.out, stamped)
    assert run("version").out == r.out
    with Workspace() as ws:
        top, stamp = unpacked_sdist(ws)
        assert not os.path.exists(os.path.join(top, ".git"))
        assert make_var(top, "OOMLINT_COMMIT") == stamp.strip() == release.commit(top)
        # what a stamp holds is kept to a commit's characters, by make and release.py alike
        with open(os.path.join(top, "COMMIT"), "w", encoding="utf-8") as f:
            f.write("abc123'\"; echo x $(id)\nsecond line\n")
        assert make_var(top, "OOMLINT_COMMIT") == release.commit(top) == "abc123echoxid", release.commit(top)
        os.unlink(os.path.join(top, "COMMIT"))
        assert make_var(top, "OOMLINT_COMMIT") == release.commit(top) == "unknown"
        # a release job names it where its checkout has no .git
        env = clean_env(OOMLINT_COMMIT="0123456789ab")
        proc = subprocess.run(["make", "-s", "-C", top, "--eval", "p: ; @echo '$(OOMLINT_COMMIT)'", "p"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.stdout.strip() == "0123456789ab", proc


@test("install: every file that states oomlint's version or licence agrees with analyzer/version.h and LICENSE")
def _():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    # pyproject.toml takes the version from version.h (the build backend reads it there)
    assert project["dynamic"] == ["version"] and "version" not in project, project
    assert project["license"] == {"text": "MIT"}, project.get("license")
    meta = release.metadata(VERSION)
    head = meta.split("\n\n", 1)[0].split("\n")
    assert [l[len("Classifier: "):] for l in head if l.startswith("Classifier: ")] == project["classifiers"]
    assert "License: MIT" in head and f"Version: {VERSION}" in head, head
    assert LICENSE_TEXT.startswith("MIT License\n") and "Copyright (c) 2026 the oomlint authors\n" in LICENSE_TEXT
    vscode = os.path.join(ROOT, "editors", "vscode")
    with open(os.path.join(vscode, "package.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    with open(os.path.join(vscode, "package-lock.json"), encoding="utf-8") as f:
        lock = json.load(f)
    assert manifest["version"] == lock["version"] == lock["packages"][""]["version"] == VERSION, manifest["version"]
    assert manifest["license"] == lock["packages"][""]["license"] == "MIT", manifest.get("license")
    # the changelog has this version's section, below Unreleased, and the release before it under it
    with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as f:
        heads = re.findall(r"^## (\S+)", f.read(), re.M)
    assert heads[0] == "Unreleased" and heads[1] == VERSION, heads
    versions = [tuple(int(x) for x in h.split(".")) for h in heads[1:]]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions), heads
    # no release file name of another version in the install docs
    with open(os.path.join(ROOT, "docs", "install.md"), encoding="utf-8") as f:
        named = set(re.findall(r"oomlint-(\d+\.\d+\.\d+)", f.read()))
    assert named == {VERSION}, named


@test("install: make editors packs LICENSE into the .vsix; make vsix-platform adds THIRD_PARTY_NOTICES beside the binary")
def _():
    offline = clean_env(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9", npm_config_offline="true")
    vsix = os.path.join(ROOT, "build", "oomlint-vscode.vsix")
    if os.path.exists(vsix):
        os.unlink(vsix)
    make("editors", env=offline)
    target = "linux-arm64" if os.uname().machine in ("aarch64", "arm64") else "linux-x64"
    make("vsix-platform", f"VSIX_TARGET={target}", f"VSIX_BIN={harness_bin()}", env=offline)
    for path, notices in ((vsix, False), (os.path.join(ROOT, "build", f"oomlint-vscode-{target}.vsix"), True)):
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            # vsce ships the extension's LICENSE as LICENSE.txt and names it in the manifest
            assert z.read("extension/LICENSE.txt").decode("utf-8") == LICENSE_TEXT, path
            assert "<License>extension/LICENSE.txt</License>" in z.read("extension.vsixmanifest").decode("utf-8")
            assert json.loads(z.read("extension/package.json"))["license"] == "MIT"
            if notices:
                assert "extension/bin/oomlint" in names
                assert z.read("extension/THIRD_PARTY_NOTICES").decode("utf-8") == NOTICES_TEXT, path
            else:
                assert not any(n.startswith("extension/bin/") for n in names), path


# ---- platform tags of the other platforms' binaries ----------------------------------------

def _macho(cpu, minos):
    """A minimal 64-bit Mach-O executable header: LC_BUILD_VERSION and LC_LOAD_DYLIB libSystem."""
    import struct
    name = b"/usr/lib/libSystem.B.dylib\0"
    dylib = struct.pack("<IIIIII", 0xC, 24 + len(name) + (-len(name) % 8), 24, 2, 0, 0) + name + b"\0" * (-len(name) % 8)
    build = struct.pack("<IIIIII", 0x32, 24, 1, minos, minos, 0)
    cmds = build + dylib
    return struct.pack("<IiiIIIII", 0xFEEDFACF, cpu, 0, 2, 2, len(cmds), 0, 0) + cmds


def _static_elf(machine):
    """A minimal static 64-bit ELF executable: one PT_LOAD, no PT_INTERP, no PT_DYNAMIC."""
    import struct
    ehdr = (b"\x7fELF\x02\x01\x01" + b"\0" * 9 +
            struct.pack("<HHIQQQIHHHHHH", 2, machine, 1, 0x400000, 64, 0, 0, 64, 56, 1, 64, 0, 0))
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x400000, 0x400000, 120, 120, 0x1000)
    return ehdr + phdr


@test("install: wheel tags are read off the binary: macosx for Mach-O, musllinux for a static ELF, by its CPU")
def _():
    with Workspace() as ws:
        cases = {
            "mac-arm": (_macho(0x0100000C, 11 << 16 | 7 << 8), "macosx_11_0_arm64", "aarch64-macos"),
            "mac-x86": (_macho(0x01000007, 10 << 16 | 15 << 8), "macosx_10_15_x86_64", "x86_64-macos"),
            "musl-arm": (_static_elf(183), "musllinux_1_2_aarch64", "aarch64-linux-musl"),
            "musl-x86": (_static_elf(62), "musllinux_1_2_x86_64", "x86_64-linux-musl"),
        }
        for name, (data, tag, target) in cases.items():
            ws.write(name, data, "wb")
            path = os.path.join(ws.path, name)
            assert release.platform_tag(path)[0] == tag, (name, release.platform_tag(path))
            assert release.binfmt.target_of(path) == target, (name, release.binfmt.target_of(path))
        ws.write("text", "#!/bin/sh\n")
        assert release.platform_tag(os.path.join(ws.path, "text"))[1].startswith("could not read the binary")
    # this machine's everyday build links the system's libcjson: a wheel for here only
    tag, why = release.platform_tag(harness_bin())
    assert tag == f"linux_{os.uname().machine}" and "libcjson" in why, (tag, why)


def harness_bin():
    import harness
    return harness.BIN
