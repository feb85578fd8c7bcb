"""Crash regressions: every input in tests/crashers/ once crashed, hung or
tripped a sanitizer. Each is linted with every rule in every output format,
then diffed and fixed with unsafe fixes on, and must come out clean: an exit
status of 0, 1 or 2 (harness.run fails on a signal or a sanitizer report)
within a bounded time, and output the format's consumer can parse."""
import json
import os
import shutil

from harness import ROOT, Workspace, run, test

CRASHERS = os.path.join(ROOT, "tests", "crashers")
FORMATS = ("text", "json", "sarif", "github")


def crasher_files():
    for name in sorted(os.listdir(CRASHERS)):
        if name.endswith((".py", ".ipynb", ".toml")):
            yield os.path.join(CRASHERS, name)


def lint_everything(path, cwd=None):
    for fmt in FORMATS:
        r = run("--isolated", "--select", "ALL", "--format", fmt, path, cwd=cwd, timeout=60)
        assert r.code in (0, 1, 2), r
        if fmt in ("json", "sarif"):
            json.loads(r.out)
    r = run("--isolated", "--select", "ALL", "--diff", "--unsafe-fixes", path, cwd=cwd, timeout=60)
    assert r.code in (0, 1, 2), r
    r = run("--isolated", "--select", "ALL", "--fix", "--unsafe-fixes", path, cwd=cwd, timeout=60)
    assert r.code in (0, 1, 2), r


def make_test(path):
    name = os.path.basename(path)

    def check():
        with Workspace() as ws:
            if name.endswith(".toml"):
                shutil.copy(path, os.path.join(ws.path, "pyproject.toml"))
                src = ws.write("train.py", "import torch\nx = torch.load('m.pt')\n")
                for fmt in FORMATS:
                    r = run("--format", fmt, src, cwd=ws.path, timeout=60)
                    assert r.code in (0, 1, 2), r
                r = run("--show-settings", src, cwd=ws.path, timeout=60)
                assert r.code in (0, 2), r
                return
            copy = os.path.join(ws.path, name)
            shutil.copy(path, copy)
            lint_everything(copy, cwd=ws.path)

    test(f"crasher: {name}")(check)


for _path in crasher_files():
    make_test(_path)
