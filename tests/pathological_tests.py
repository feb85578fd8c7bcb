"""Pathological inputs, built at test time (nothing here is committed): huge
files, a million lines, 10,000-deep nesting, a 10 MB line, NUL bytes and
invalid UTF-8, symlink loops, unreadable files, 100,000 small files, FIFOs
and a full disk (ulimit -f). Each must end with a clear answer naming the
file, within a bounded time and memory (CPU time and peak RSS, from
tests/measure.py), with the right exit status, and without hurting the rest
of the run. Sizes are a quarter in sanitizer builds (measure.scale)."""
import json
import os
import pwd
import resource
import shutil
import subprocess

import bigfiles
import harness
import measure
from harness import Workspace, test

BAD_LOOP = """import torch.nn as nn
model = nn.Linear(4, 2).cuda()
crit = nn.MSELoss()
def train(loader):
    total = 0
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        total += loss
"""


def codes(m):
    return [(os.path.basename(f["path"]), f["code"]) for f in json.loads(m.out)]


def rss_limit(megabytes):
    """Peak memory allowed for linting this much source: proportional."""
    return 200 + 300 * megabytes


@test("pathological: a 50 MB file is linted whole, in bounded time and memory")
def _():
    with Workspace() as ws:
        mb = measure.scale(50)
        path = ws.write("huge.py", bigfiles.training(mb))
        m = measure.run("--format", "json", "-q", path, cwd=ws.path, timeout=900)
        assert m.code == 1, m
        assert m.cpu < 120, m
        assert m.rss_mb < rss_limit(mb), m
        found = codes(m)
        assert ("huge.py", "OOM101") in found and ("huge.py", "OOM002") not in found, found[:5]


@test("pathological: 1,000,000 lines, the finding at the end on its right line")
def _():
    with Workspace() as ws:
        lines = int(measure.scale(1000000))
        text = "x = 1\n" * (lines // 2) + "# comment\n" * (lines // 2) + BAD_LOOP
        path = ws.write("lines.py", text)
        m = measure.run("--format", "json", path, cwd=ws.path)
        assert m.code == 1 and m.cpu < 60, m
        data = json.loads(m.out)
        assert [(d["code"], d["line"]) for d in data] == [("OOM101", lines // 2 * 2 + 9)], data


@test("pathological: 10,000-deep nesting of every kind of expression, and deep blocks")
def _():
    with Workspace() as ws:
        d = 10000
        shapes = {
            "parens.py": "x = " + "(" * d + "1" + ")" * d + "\n",
            "lists.py": "x = " + "[" * d + "]" * d + "\n",
            "dicts.py": "x = " + "{1: " * d + "1" + "}" * d + "\n",
            "calls.py": "x = " + "f(" * d + ")" * d + "\n",
            "subscripts.py": "x = " + "a[" * d + "0" + "]" * d + "\n",
            "attributes.py": "x = a" + ".b" * d + "\n",
            "methods.py": "x = loss" + ".detach()" * d + "\n",
            "unary.py": "x = " + "-" * d + "1\n",
            "nots.py": "x = " + "not " * d + "y\n",
            "lambdas.py": "f = " + "lambda: " * d + "0\n",
            "ternary.py": "x = " + "a if b else " * d + "c\n",
            "binop.py": "x = " + " + ".join(["loss"] * d) + "\n",
            "power.py": "x = " + "2 ** " * d + "2\n",
            "comprehension.py": "x = " + "[" * d + "y for y in z" + "]" * d + "\n",
            "strings.py": "x = " + 'f"{' * 200 + "y" + '}"' * 200 + "\n",
            # blocks: one space of indent per level (CPython stops at 100 levels)
            "blocks.py": "".join(" " * i + "if x:\n" for i in range(3000)) + " " * 3000 + "total += loss\n",
            "defs.py": "".join(" " * i + f"def f{i}(loss):\n" for i in range(3000)) + " " * 3000 + "return loss\n",
            "loops.py": "".join(" " * i + "for x, y in loader:\n" for i in range(3000)) + " " * 3000 + "t += m(x)\n",
        }
        paths = [ws.write(name, text) for name, text in shapes.items()] + [ws.write("good.py", BAD_LOOP)]
        m = measure.run("--format", "json", "--select", "ALL", *paths, cwd=ws.path, timeout=600)
        assert m.code == 1, m
        assert m.cpu < 120 and m.rss_mb < 3000, m
        assert ("good.py", "OOM101") in codes(m), "the run must go on"
        assert all(c != "OOM001" for _, c in codes(m)), [x for x in codes(m) if x[1] == "OOM001"]
        # and each again with every fix applied
        m = measure.run("--fix", "--unsafe-fixes", "--select", "ALL", *paths, cwd=ws.path, timeout=600)
        assert m.code in (0, 1), m


@test("pathological: a 10 MB line: linted, and its code frame is a window, not 10 MB")
def _():
    with Workspace() as ws:
        mb = measure.scale(10)
        stmt = "loss = crit(model(x), y); loss.backward(); "
        line = "for x, y in loader: " + stmt * int(mb * 1e6 / len(stmt)) + "total += loss\n"
        head = "import torch.nn as nn\nmodel = nn.Linear(4, 2).cuda()\ncrit = nn.MSELoss()\ntotal = 0\n"
        path = ws.write("line.py", head + line)
        comment = ws.write("comment.py", "# " + "x" * int(mb * 1e6) + "\n" + BAD_LOOP)
        literal = ws.write("literal.py", "s = '" + "y" * int(mb * 1e6) + "'\n" + BAD_LOOP)
        m = measure.run("--color", "never", path, comment, literal, cwd=ws.path, timeout=600)
        assert m.code == 1 and m.cpu < 90 and m.rss_mb < rss_limit(3 * mb), m
        assert "line.py:5:" in m.out and "OOM101" in m.out, m
        assert len(m.out) < 20000, f"the report is {len(m.out)} bytes"


@test("pathological: NUL bytes and invalid UTF-8 are OOM001 naming the file; the rest is linted")
def _():
    with Workspace() as ws:
        bad = {
            "nul.py": b"x = 1\n\x00\ny = 2\n",
            "nul_in_string.py": b"s = 'a\x00b'\n",
            "latin.py": b"s = 'caf\xe9'\n",
            "truncated.py": b"s = '\xe2\x82'",
            "overlong.py": b"s = '\xc0\xaf'\n",
            "surrogate.py": b"s = '\xed\xa0\x80'\n",
            "notebook.ipynb": b'{"cells": [{"cell_type": "code", "source": ["x = \'\xff\'"]}]}',
        }
        paths = [ws.write(name, data, "wb") for name, data in bad.items()] + [ws.write("good.py", BAD_LOOP)]
        m = measure.run("--format", "json", *paths, cwd=ws.path)
        assert m.code == 2, m  # files that were not linted fail the run
        found = codes(m)
        assert sorted(n for n, c in found if c == "OOM001") == sorted(bad), found
        assert ("good.py", "OOM101") in found
        assert "NUL" in m.out, m.out


@test("pathological: symlink loops, given and met in a walk, end with an error, not a hang")
def _():
    with Workspace() as ws:
        os.symlink("b.py", os.path.join(ws.path, "a.py"))
        os.symlink("a.py", os.path.join(ws.path, "b.py"))
        ws.write("tree/good.py", BAD_LOOP)
        os.symlink("..", os.path.join(ws.path, "tree", "up"))
        os.symlink(".", os.path.join(ws.path, "tree", "self"))
        os.symlink("loop2", os.path.join(ws.path, "tree", "loop1"))
        os.symlink("loop1", os.path.join(ws.path, "tree", "loop2"))
        m = measure.run("--format", "json", "a.py", "tree", cwd=ws.path, timeout=60)
        assert m.code == 2 and m.cpu < 10, m
        found = codes(m)
        assert ("a.py", "OOM001") in found, found
        assert found.count(("good.py", "OOM101")) == 1, found


def as_nobody():
    """preexec_fn that drops root, so that file permissions apply."""
    nobody = pwd.getpwnam("nobody")

    def drop():
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)
    return drop


@test("pathological: unreadable files and directories are OOM001 or skipped, named, and the run goes on")
def _():
    with Workspace() as ws:
        os.chmod(ws.path, 0o755)
        secret = ws.write("secret.py", BAD_LOOP)
        os.chmod(secret, 0)
        ws.write("closed/inner.py", BAD_LOOP)
        os.chmod(os.path.join(ws.path, "closed"), 0)
        good = ws.write("good.py", BAD_LOOP)
        # root reads anything: run as nobody so the permissions are real. The
        # clone may sit under a home nobody cannot enter, so nobody runs a copy.
        preexec, binary = None, None
        if os.geteuid() == 0:
            preexec = as_nobody()
            binary = os.path.join(ws.path, "oomlint-copy")
            shutil.copy(harness.BIN, binary)
            os.chmod(binary, 0o755)
        try:
            m = measure.run("--format", "json", secret, ".", good, cwd=ws.path,
                            preexec_fn=preexec, binary=binary)
        finally:
            os.chmod(os.path.join(ws.path, "closed"), 0o755)
        assert m.code == 2, m  # secret.py was not linted
        found = codes(m)
        assert ("secret.py", "OOM001") in found and ("good.py", "OOM101") in found, found
        secret_msg = [f["message"] for f in json.loads(m.out) if f["code"] == "OOM001"][0]
        assert "permission denied" in secret_msg.lower(), secret_msg
        assert "closed" in m.err or any("closed" in f["path"] for f in json.loads(m.out)), m


@test("pathological: 100,000 small files in bounded time and memory")
def _():
    with Workspace() as ws:
        count = int(measure.scale(100000))
        for d in range(100):
            os.makedirs(os.path.join(ws.path, "proj", f"d{d:02d}"))
        for i in range(count):
            with open(os.path.join(ws.path, "proj", f"d{i % 100:02d}", f"m{i}.py"), "w") as f:
                f.write(BAD_LOOP)
        m = measure.run("--statistics", "proj", cwd=ws.path, timeout=900)
        assert m.code == 1, m
        assert f"{count}" in m.out and "OOM101" in m.out, m
        assert m.cpu < 300, m
        assert m.rss_mb < 600, m


@test("pathological: a FIFO is skipped with a message naming it, and the run goes on (no hang)")
def _():
    with Workspace() as ws:
        fifo = os.path.join(ws.path, "pipe.py")
        os.mkfifo(fifo)
        os.mkfifo(os.path.join(ws.path, "dir_pipe.py"))
        good = ws.write("good.py", BAD_LOOP)
        m = measure.run("--format", "json", fifo, ".", good, cwd=ws.path, timeout=30)
        assert m.code == 2, m
        assert "pipe.py" in m.out + m.err, m
        assert ("good.py", "OOM101") in codes(m), m


def fsize_limit(limit):
    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return cap


@test("pathological: a full disk (ulimit -f): the report is not half-written, exit 2 names what failed")
def _():
    with Workspace() as ws:
        good = ws.write("good.py", BAD_LOOP)
        # the report to a file
        m = measure.run("-o", "report.txt", good, cwd=ws.path, preexec_fn=fsize_limit(100))
        assert m.code == 2 and "report.txt" in m.err and "too large" in m.err.lower(), m
        # and to standard output redirected to a file
        with open(os.path.join(ws.path, "stdout.txt"), "wb") as out:
            proc = subprocess.run([harness.BIN, good], cwd=ws.path, stdout=out, stderr=subprocess.PIPE,
                                  preexec_fn=fsize_limit(100), timeout=60)
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 2 and "standard output" in err and "too large" in err.lower(), (proc.returncode,
                                                                                                   err)


@test("pathological: a full disk (ulimit -f) during --fix: the file is intact, no temporary left, exit 2")
def _():
    with Workspace() as ws:
        amp = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n" + "# padding\n" * 20
        path = ws.write("amp.py", amp)
        m = measure.run("--fix", path, cwd=ws.path, preexec_fn=fsize_limit(64))
        assert ws.read("amp.py") == amp, ws.read("amp.py")
        assert [f for f in os.listdir(ws.path) if f.startswith(".oomlint")] == [], os.listdir(ws.path)
        # the captured stderr is itself a file under the same 64-byte limit:
        # the message is cut after its start (safety tests check it whole)
        assert "cannot write the fixes" in m.err, m
        assert m.code == 2, m
