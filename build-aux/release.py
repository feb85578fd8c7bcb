#!/usr/bin/env python3
"""release.py - oomlint's distributable files, written with the standard
library only (PyPI is not needed to build them).

  release.py wheel   --bin B --man M --out DIR [--license NAME=FILE ...]
      dist/oomlint-VERSION-py3-none-PLATFORM.whl: the binary as the wheel's
      script (`oomlint-VERSION.data/scripts/oomlint`, as Ruff ships its own),
      the man page under data/share/man/man1, METADATA, WHEEL and RECORD with
      sha256 hashes, and under dist-info/licenses oomlint's LICENSE, the
      THIRD_PARTY_NOTICES of what the binary has compiled in and each --license
      file. The platform tag is read off the binary (platform_tag).
  release.py bindist --bin B --man M --out DIR [--license NAME=FILE ...]
      dist/oomlint-VERSION-TARGET.tar.gz (TARGET: x86_64-linux, aarch64-linux,
      x86_64-linux-musl, aarch64-macos, ... read off the binary): bin/oomlint,
      share/man/man1, the README, LICENSE, THIRD_PARTY_NOTICES and the
      third-party licenses under licenses/.
  release.py sdist   --out DIR [--commit C]
      dist/oomlint-VERSION.tar.gz: the tracked files (LICENSE and
      THIRD_PARTY_NOTICES among them), PKG-INFO, and COMMIT, the commit it was
      made from (C, else git's), which a build of the unpacked tarball prints
      in `oomlint version`; also what `pip install oomlint-VERSION.tar.gz`
      builds from.
  release.py tag     --bin B
      the platform tag the binary earns, and why.

The PEP 517 backend (oomlint_backend.py) uses the same functions.
"""
import argparse
import base64
import csv
import gzip
import hashlib
import io
import os
import platform
import re
import struct
import subprocess
import sys
import tarfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binfmt  # noqa: E402  (build-aux/binfmt.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "oomlint"
HOME = "https://github.com/oomlint/oomlint"
# oomlint's licence (LICENSE), and the notices of the third-party code its
# binaries have compiled in (tree-sitter, its Python and TOML grammars, cJSON):
# both ship in every wheel, tarball and platform .vsix
LICENSE = "MIT"
LICENSE_FILES = ("LICENSE", "THIRD_PARTY_NOTICES")
# the file of an unpacked source tarball that names the commit it was made from
COMMIT_FILE = "COMMIT"

# Libraries a manylinux wheel may link against (PEP 600, policy of
# auditwheel): the C library and its parts, which every glibc system has.
MANYLINUX_LIBS = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libutil.so.1",
    "libresolv.so.2", "libnsl.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}


def version():
    """OL_VERSION from analyzer/version.h: the one place the version lives."""
    with open(os.path.join(ROOT, "analyzer", "version.h"), encoding="utf-8") as f:
        m = re.search(r'#define OL_VERSION "([^"]+)"', f.read())
    if not m:
        raise SystemExit("release.py: no OL_VERSION in analyzer/version.h")
    return m.group(1)


def commit(root=ROOT):
    """The commit a build of `root` names in `oomlint version`, as the Makefile
    finds it: git's short hash (with -dirty for a changed tree) in a checkout,
    the COMMIT file of an unpacked source tarball, else "unknown"."""
    if os.path.exists(os.path.join(root, ".git")):
        try:
            out = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty", "--abbrev=12",
                                  "--exclude=*"], capture_output=True, text=True, check=True).stdout
            if out.strip():
                return _commit_word(out)
        except (OSError, subprocess.CalledProcessError):
            pass
    try:
        with open(os.path.join(root, COMMIT_FILE), encoding="utf-8", errors="replace") as f:
            return _commit_word(f.readline()) or "unknown"
    except OSError:
        return "unknown"


def _commit_word(text):
    """What the Makefile keeps of a commit name: letters, digits, '.', '_', '-'."""
    return re.sub(r"[^A-Za-z0-9._-]", "", text.strip())


def metadata(ver):
    """The core metadata (METADATA in a wheel, PKG-INFO in an sdist)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {ver}",
        "Summary: Find the PyTorch training code that runs GPUs out of memory",
        f"Home-page: {HOME}",
        f"Project-URL: Source, {HOME}",
        f"Project-URL: Documentation, {HOME}#readme",
        f"Project-URL: Changelog, {HOME}/blob/main/CHANGELOG.md",
        f"License: {LICENSE}",
        "Keywords: pytorch,linter,static-analysis,cuda,out-of-memory,pre-commit",
        "Classifier: Development Status :: 4 - Beta",
        "Classifier: Environment :: Console",
        "Classifier: Intended Audience :: Developers",
        "Classifier: Intended Audience :: Science/Research",
        "Classifier: License :: OSI Approved :: MIT License",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: C",
        "Classifier: Topic :: Software Development :: Quality Assurance",
        "Requires-Python: >=3.7",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


# ---- the platform tag ---------------------------------------------------------------------

def elf_needs(binary):
    """(NEEDED libraries, highest GLIBC_x.y symbol version) from `objdump -p`."""
    out = subprocess.run(["objdump", "-p", binary], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"^\s+NEEDED\s+(\S+)", out, re.M)
    versions = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"\bGLIBC_(\d+\.\d+(?:\.\d+)?)\b", out)]
    return needed, max(versions) if versions else None


def platform_tag(binary):
    """(tag, reason), read off the binary, whatever machine builds the wheel
    (binfmt.py reads the format, CPU and libraries). A Linux binary that needs
    nothing but the C library (and its parts) earns manylinux_X_Y for the
    newest glibc symbol version it uses, as PEP 600 defines it; a fully static
    one (musl) musllinux_1_2; a macOS one macosx_X_Y for the oldest macOS it
    names; anything else (a dynamically linked libcjson, say) is linux_ARCH,
    a wheel for this machine only."""
    try:
        info = binfmt.read(binary)
    except (OSError, ValueError, IndexError, struct.error) as e:
        arch = platform.machine() or "x86_64"
        return f"{sys.platform}_{arch}".replace("-", "_"), f"could not read the binary ({e})"
    arch = info["arch"]
    if info["os"] == "macos":
        major, minor = info["macos_min"] or (11, 0)
        if major >= 11:
            minor = 0  # pip matches macosx_11_0 and up, never 11_N
        return (f"macosx_{major}_{minor}_{'arm64' if arch == 'aarch64' else arch}",
                f"a macOS {arch} binary for {major}.{minor} and later")
    if info["static"]:
        return f"musllinux_1_2_{arch}", "fully static: needs no shared library at all"
    try:
        needed, glibc = elf_needs(binary)
    except (OSError, subprocess.CalledProcessError) as e:
        return f"linux_{arch}", f"could not read the binary with objdump ({e})"
    others = [lib for lib in needed if lib not in MANYLINUX_LIBS]
    if others:
        return f"linux_{arch}", "links " + ", ".join(others) + ", which a manylinux wheel may not"
    if glibc is None:
        return f"manylinux_2_17_{arch}", "needs no versioned glibc symbol"
    major, minor = glibc[0], glibc[1]
    return (f"manylinux_{major}_{minor}_{arch}",
            f"needs only {', '.join(needed) or 'nothing'}; newest symbol version GLIBC_{major}.{minor}")


# ---- wheels -------------------------------------------------------------------------------------

def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _date_time():
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, zip's first day
    return time.gmtime(max(epoch, 315532800))[:6]


def write_wheel(out_dir, binary, manpage=None, licenses=(), tag=None):
    """Writes the wheel; returns its path."""
    ver = version()
    tag = tag or platform_tag(binary)[0]
    data = f"{NAME}-{ver}.data"
    info = f"{NAME}-{ver}.dist-info"
    with open(binary, "rb") as f:
        bin_bytes = f.read()
    files = [(f"{data}/scripts/{NAME}", bin_bytes, 0o755)]
    # `python -m oomlint`: a package whose __main__ runs the binary
    package = os.path.join(ROOT, "build-aux", "python", NAME)
    for module in ("__init__.py", "__main__.py"):
        with open(os.path.join(package, module), "rb") as f:
            files.append((f"{NAME}/{module}", f.read(), 0o644))
    if manpage:
        with open(manpage, "rb") as f:
            files.append((f"{data}/data/share/man/man1/{NAME}.1", f.read(), 0o644))
    for name, path in _licenses(licenses):
        with open(path, "rb") as f:
            files.append((f"{info}/licenses/{name}", f.read(), 0o644))
    files.append((f"{info}/METADATA", metadata(ver).encode("utf-8"), 0o644))
    wheel = ("Wheel-Version: 1.0\n"
             "Generator: oomlint build-aux/release.py\n"
             "Root-Is-Purelib: false\n"
             f"Tag: py3-none-{tag}\n")
    files.append((f"{info}/WHEEL", wheel.encode("utf-8"), 0o644))
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, content, _ in files:
        writer.writerow([name, _hash(content), len(content)])
    writer.writerow([f"{info}/RECORD", "", ""])
    files.append((f"{info}/RECORD", record.getvalue().encode("utf-8"), 0o644))

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{NAME}-{ver}-py3-none-{tag}.whl")
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content, mode in files:
            zi = zipfile.ZipInfo(name, date_time=_date_time())
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100000 | mode) << 16
            z.writestr(zi, content)
    os.replace(tmp, path)
    return path


# ---- tarballs ----------------------------------------------------------------------------------

def _tar_add(tar, arcname, data, mode, mtime):
    ti = tarfile.TarInfo(arcname)
    ti.size = len(data)
    ti.mode = mode
    ti.mtime = mtime
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    tar.addfile(ti, io.BytesIO(data))


def _write_targz(path, entries):
    """entries: (arcname, bytes, mode); written atomically, reproducibly."""
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0")) or int(time.time())
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for arcname, data, mode in entries:
                    _tar_add(tar, arcname, data, mode, mtime)
    os.replace(tmp, path)
    return path


def _licenses(extra=()):
    """(name, path): oomlint's LICENSE and THIRD_PARTY_NOTICES, then the given ones."""
    return [(name, os.path.join(ROOT, name)) for name in LICENSE_FILES] + list(extra)


def source_files(root=ROOT):
    """The files of a source distribution: in a git checkout, the tracked files
    and the untracked ones git does not ignore, as they are in the work tree;
    elsewhere (an unpacked sdist) every file but build outputs."""
    if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git")):
        try:
            cmd = ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
            out = subprocess.run(cmd, capture_output=True, check=True).stdout
            names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
            # a COMMIT file left in a checkout is not the stamp write_sdist adds
            return sorted(n for n in names if os.path.isfile(os.path.join(root, n)) and n != COMMIT_FILE)
        except (OSError, subprocess.CalledProcessError):
            pass
    skip = {".git", "build", "dist", "__pycache__", "node_modules"}
    names = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for f in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, f), root)
            if rel not in ("PKG-INFO", COMMIT_FILE):
                names.append(rel)
    return names


def write_sdist(out_dir, root=ROOT, commit_name=None):
    ver = version()
    top = f"{NAME}-{ver}"
    entries = []
    for rel in source_files(root):
        full = os.path.join(root, rel)
        with open(full, "rb") as f:
            data = f.read()
        mode = 0o755 if os.access(full, os.X_OK) else 0o644
        entries.append((f"{top}/{rel}", data, mode))
    entries.append((f"{top}/PKG-INFO", metadata(ver).encode("utf-8"), 0o644))
    stamp = _commit_word(commit_name or "") or commit(root)
    entries.append((f"{top}/{COMMIT_FILE}", (stamp + "\n").encode("utf-8"), 0o644))
    os.makedirs(out_dir, exist_ok=True)
    return _write_targz(os.path.join(out_dir, f"{top}.tar.gz"), entries)


def write_bindist(out_dir, binary, manpage, licenses=()):
    ver = version()
    top = f"{NAME}-{ver}-{binfmt.target_of(binary)}"
    entries = []
    with open(binary, "rb") as f:
        entries.append((f"{top}/bin/{NAME}", f.read(), 0o755))
    with open(manpage, "rb") as f:
        entries.append((f"{top}/share/man/man1/{NAME}.1", f.read(), 0o644))
    for name in ("README.md",) + LICENSE_FILES:
        with open(os.path.join(ROOT, name), "rb") as f:
            entries.append((f"{top}/{name}", f.read(), 0o644))
    for name, path in licenses:
        with open(path, "rb") as f:
            entries.append((f"{top}/licenses/{name}", f.read(), 0o644))
    os.makedirs(out_dir, exist_ok=True)
    return _write_targz(os.path.join(out_dir, f"{top}.tar.gz"), entries)


def _license(spec):
    name, sep, path = spec.partition("=")
    if not sep or not name or not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"--license wants NAME=FILE of an existing file, got {spec!r}")
    return name, path


def main():
    ap = argparse.ArgumentParser(description="oomlint's distributable files")
    ap.add_argument("what", choices=["wheel", "bindist", "sdist", "tag"])
    ap.add_argument("--bin", help="the oomlint binary")
    ap.add_argument("--man", help="the man page")
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"), help="output directory")
    ap.add_argument("--license", action="append", type=_license, default=[], metavar="NAME=FILE",
                    help="a third-party license to ship (repeatable)")
    ap.add_argument("--commit", help="sdist: the commit to stamp into COMMIT (default: git's)")
    args = ap.parse_args()
    if args.what in ("wheel", "bindist", "tag") and not args.bin:
        ap.error(f"{args.what} needs --bin")
    if args.what == "tag":
        tag, why = platform_tag(args.bin)
        print(f"{tag}  ({why})")
    elif args.what == "wheel":
        tag, why = platform_tag(args.bin)
        path = write_wheel(args.out, args.bin, args.man, args.license, tag)
        print(f"{os.path.relpath(path)}  (tag {tag}: {why})")
    elif args.what == "bindist":
        if not args.man:
            ap.error("bindist needs --man")
        print(os.path.relpath(write_bindist(args.out, args.bin, args.man, args.license)))
    else:
        print(os.path.relpath(write_sdist(args.out, commit_name=args.commit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
