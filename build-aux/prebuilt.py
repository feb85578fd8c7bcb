"""prebuilt.py - the release wheel that fits this Python, fetched instead of a
build (oomlint_backend.py's build_wheel, so pre-commit's `language: python`
hook and `pip install` need no compiler where a release exists).

The release of version V (the GitHub release vV, or $OOMLINT_RELEASE_URL)
lists its files in SHA256SUMS. The wheels there are tagged py3-none-PLATFORM;
the best one for this machine is picked (manylinux_X_Y up to this glibc,
musllinux on musl, macosx_X_Y up to this macOS, on this CPU), downloaded,
and checked against its SHA256SUMS line. No release, no fitting wheel or no
network: None, and the caller builds. A wheel that fails its check is an
error, never installed and never quietly replaced by a build.
"""
import hashlib
import os
import platform
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.request

DEFAULT_URL = "https://github.com/oomlint/oomlint/releases/download/v{version}"


class ChecksumError(Exception):
    pass


def _arch():
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64", "x86_64": "x86_64"}.get(m, m)


def platform_rank(tag):
    """How well a wheel's platform tag fits this machine: a sortable key,
    higher is better, or None when it does not run here."""
    arch = _arch()
    if sys.platform == "darwin":
        m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", tag)
        if not m or {"arm64": "aarch64"}.get(m.group(3), m.group(3)) != arch:
            return None
        have = tuple(int(x) for x in (platform.mac_ver()[0] or "0.0").split(".")[:2])
        want = (int(m.group(1)), int(m.group(2)))
        return want if want <= have else None
    if not sys.platform.startswith("linux"):
        return None
    libc, ver = platform.libc_ver()
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
    if m and libc == "glibc" and m.group(3) == arch:
        want = (int(m.group(1)), int(m.group(2)))
        have = tuple(int(x) for x in ver.split(".")[:2])
        return (1,) + want if want <= have else None
    m = re.fullmatch(r"musllinux_(\d+)_(\d+)_(\w+)", tag)
    if m and m.group(3) == arch:
        # a static binary: the only wheel for musl, the last resort on glibc
        return (2 if libc != "glibc" else 0, int(m.group(1)), int(m.group(2)))
    return None


def pick(names, name, version):
    """The best wheel among the file names for this machine, or None."""
    best = None
    for n in names:
        m = re.fullmatch(re.escape(f"{name}-{version}-py3-none-") + r"(\S+)\.whl", n)
        if not m:
            continue
        rank = max((r for r in (platform_rank(t) for t in m.group(1).split(".")) if r is not None), default=None)
        if rank is not None and (best is None or rank > best[0]):
            best = (rank, n)
    return best[1] if best else None


def _get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def fetch_wheel(name, version, out_dir):
    """Downloads the fitting release wheel into out_dir: its path, or None.
    Raises ChecksumError when the download does not match SHA256SUMS."""
    if os.environ.get("OOMLINT_BUILD_FROM_SOURCE", "") not in ("", "0"):
        return None
    base = os.environ.get("OOMLINT_RELEASE_URL") or DEFAULT_URL.format(version=version)
    try:
        sums = _get(base + "/SHA256SUMS").decode("utf-8", "replace")
    except (OSError, urllib.error.URLError, ValueError):
        return None
    listed = {}
    for line in sums.splitlines():
        parts = line.split()
        if len(parts) == 2:
            listed[parts[1].lstrip("*")] = parts[0].lower()
    wheel = pick(listed, name, version)
    if not wheel:
        return None
    try:
        data = _get(f"{base}/{wheel}", timeout=120)
    except (OSError, urllib.error.URLError, ValueError):
        return None
    got = hashlib.sha256(data).hexdigest()
    if got != listed[wheel]:
        raise ChecksumError(f"{wheel} from {base} does not match its SHA256SUMS line ({listed[wheel]}, got {got})")
    os.makedirs(out_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_dir, suffix=".part")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    path = os.path.join(out_dir, wheel)
    shutil.move(tmp, path)
    return path
