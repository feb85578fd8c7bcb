"""oomlint_backend - the PEP 517 build backend of pyproject.toml, in the
tree, so that `pip install .` (and pre-commit's `language: python` hook,
which runs it) needs nothing from PyPI: `requires = []`.

build_wheel first looks for the release's wheel for this machine
(prebuilt.py: the GitHub release of this version, or $OOMLINT_RELEASE_URL;
checked against the release's SHA256SUMS) and returns it as the build: no
compiler needed. Only where there is none (no release of this version, no
wheel for this platform, no network, or OOMLINT_BUILD_FROM_SOURCE=1) it runs
`make` (the same build as everywhere: the pinned
tree-sitter sources are fetched with npm on first use, cJSON is the system's
libcjson-dev) and packs build/oomlint and its man page into a wheel with
release.py. Such a wheel links the system's libcjson, so it is tagged for
this machine (linux_ARCH); the portable manylinux wheel is `make wheel`.
build_sdist writes the source tarball `make dist` writes.

Make settings pass through the environment as usual (MAKEFLAGS, e.g.
`MAKEFLAGS="DEPS=/path/to/fetched/sources -j2" pip install .`).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import prebuilt  # noqa: E402
import release  # noqa: E402


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _make(*targets):
    cmd = ["make", "-C", release.ROOT, "-s"]
    if not re.search(r"(^|\s)-j|--jobs|jobserver", os.environ.get("MAKEFLAGS", "")):
        cmd.append(f"-j{max(1, min(os.cpu_count() or 1, 4))}")
    # the everyday build, whatever a calling make asked for
    cmd += ["SANITIZE=", "RELEASE=", *targets]
    proc = subprocess.run(cmd, stdout=sys.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"oomlint: `{' '.join(cmd)}` failed (exit {proc.returncode}); the build needs gcc, "
                         "make, npm and libcjson-dev")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    try:
        path = prebuilt.fetch_wheel(release.NAME, release.version(), wheel_directory)
    except prebuilt.ChecksumError as e:
        raise SystemExit(f"oomlint: {e}; not installing it")
    if path:
        print(f"oomlint: the release wheel {os.path.basename(path)}, no build needed", file=sys.stderr)
        return os.path.basename(path)
    print(f"oomlint: no release wheel of {release.version()} for this platform; building from source",
          file=sys.stderr)
    _make("build/oomlint", "build/oomlint.1")
    path = release.write_wheel(wheel_directory, os.path.join(release.ROOT, "build", "oomlint"),
                               os.path.join(release.ROOT, "build", "oomlint.1"))
    return os.path.basename(path)


def build_sdist(sdist_directory, config_settings=None):
    return os.path.basename(release.write_sdist(sdist_directory))
