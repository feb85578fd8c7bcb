"""The supervisor (analyzer/supervise.h): one file's crash, hang or exhausted
memory never takes a run's report with it. The file is set aside with an
OOM001 finding that says what happened, every other file is reported in
every format, and the exit status is 2. Failures are injected with
OOMLINT_TEST_FAULT (read only by the command line's supervisor), and for
memory also for real, under an address-space limit."""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

import bigfiles
import harness
import measure
from harness import Workspace, run, test

LOAD = "import torch\nstate = torch.load('model.pt')\nstate = {k: v.cuda() for k, v in state.items()}\n"
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


def project(ws, count=24):
    paths = []
    for i in range(count):
        paths.append(ws.write(f"pkg/m{i:02d}.py", LOAD if i % 2 else BAD_LOOP))
    return paths


def by_file(findings):
    out = {}
    for f in findings:
        out.setdefault(os.path.basename(f["path"]), []).append(f["code"])
    return out


def sanitized():
    return "/san/" in harness.BIN


@test("supervise: a crash in one file: the others are reported, the file gets OOM001, exit 2")
def _():
    with Workspace() as ws:
        project(ws)
        clean = run("--format", "json", "-j", "4", "pkg", cwd=ws.path)
        want = by_file(clean.json())
        r = run("--format", "json", "-j", "4", "pkg", cwd=ws.path, env={"OOMLINT_TEST_FAULT": "segv:m07.py"})
        assert r.code == 2, r
        got = by_file(r.json())
        assert got.pop("m07.py") == ["OOM001"], got
        want.pop("m07.py")
        assert got == want, (got, want)
        crash = [f for f in r.json() if f["code"] == "OOM001"][0]
        assert "crashed (SIGSEGV" in crash["message"] and "report it" in crash["message"], crash
        assert "pkg/m07.py" in r.err and "crashed" in r.err, r.err


@test("supervise: threads' bystanders are not blamed: each suspect is re-run alone")
def _():
    with Workspace() as ws:
        project(ws, 60)
        for threads in ("1", "3", "8"):
            r = run("--format", "json", "-j", threads, "pkg", cwd=ws.path, env={"OOMLINT_TEST_FAULT": "abort:m3"})
            assert r.code == 2, r
            failed = sorted(os.path.basename(f["path"]) for f in r.json() if f["code"] == "OOM001")
            # m3.py does not exist: m30..m39 do, each fails alone
            assert failed == [f"m{i}.py" for i in range(30, 40)], (threads, failed)
            assert len(by_file(r.json())) == 60
            assert all("aborted (SIGABRT" in f["message"] for f in r.json() if f["code"] == "OOM001")


@test("supervise: every report format survives a crash")
def _():
    with Workspace() as ws:
        project(ws, 6)
        env = {"OOMLINT_TEST_FAULT": "segv:m02.py"}
        sarif = run("--format", "sarif", "pkg", cwd=ws.path, env=env)
        assert sarif.code == 2, sarif
        results = json.loads(sarif.out)["runs"][0]["results"]
        assert {r["ruleId"] for r in results} == {"OOM001", "OOM101", "OOM302"}, results
        gh = run("--format", "github", "pkg", cwd=ws.path, env=env)
        assert gh.code == 2 and "file=pkg/m02.py" in gh.out and "title=OOM001" in gh.out, gh
        assert gh.out.count("::") >= 12, gh
        text = run("pkg", cwd=ws.path, env=env)
        assert text.code == 2 and "pkg/m02.py:1:1: OOM001 [error] oomlint crashed" in text.out, text
        assert "Found 6 findings." in text.out, text
        out = os.path.join(ws.path, "report.json")
        r = run("--format", "json", "-o", out, "pkg", cwd=ws.path, env=env)
        assert r.code == 2 and r.out == "", r
        with open(out) as f:
            assert len(json.load(f)) == 6


@test("supervise: a crashed run prints nothing of its own; the report appears once")
def _():
    with Workspace() as ws:
        project(ws, 8)
        r = run("--format", "json", "pkg", cwd=ws.path, env={"OOMLINT_TEST_FAULT": "segv:m05.py"})
        json.loads(r.out)  # one document, not a partial one followed by another
        assert r.out.count('"code": "OOM001"') == 1, r


@test("supervise: a file that loops on the CPU is stopped by the watchdog for its CPU time and the run goes on")
def _():
    with Workspace() as ws:
        project(ws, 6)
        r = run("--format", "json", "-j", "2", "pkg", cwd=ws.path,
                env={"OOMLINT_TEST_FAULT": "spin:m03.py", "OOMLINT_FILE_TIMEOUT": "2"}, timeout=120)
        assert r.code == 2, r
        got = by_file(r.json())
        assert got["m03.py"] == ["OOM001"] and len(got) == 6, got
        msg = [f for f in r.json() if f["code"] == "OOM001"][0]["message"]
        assert "more than 2 s of CPU time" in msg and "bug in oomlint" in msg, msg


@test("supervise: a file that blocks without using the CPU is stopped at ten times the limit, as a timeout "
      "under load, not a bug")
def _():
    with Workspace() as ws:
        project(ws, 6)
        r = run("--format", "json", "-j", "2", "pkg", cwd=ws.path,
                env={"OOMLINT_TEST_FAULT": "hang:m03.py", "OOMLINT_FILE_TIMEOUT": "0.3"}, timeout=120)
        assert r.code == 2, r
        got = by_file(r.json())
        assert got["m03.py"] == ["OOM001"] and len(got) == 6, got
        msg = [f for f in r.json() if f["code"] == "OOM001"][0]["message"]
        assert "timed out under load" in msg and "bug in oomlint" not in msg, msg


@test("supervise: a busy machine does not get a file killed: the watchdog counts the file's CPU time")
def _():
    # Four processes spinning on the two cores slow the lint of a file whose
    # analysis takes about a second of CPU to several times that in wall
    # time; with a limit of twice its CPU time it must still be linted.
    import multiprocessing
    with Workspace() as ws:
        body = "".join(f"def f{i}(model, loader):\n    total = 0\n    for x, y in loader:\n"
                       f"        total += model(x.cuda()).sum()\n    return total\n" for i in range(6000))
        ws.write("big.py", "import torch\n" + body)
        base = measure.run("--format", "json", "-q", "big.py", cwd=ws.path, timeout=600)
        assert base.code == 1, base
        limit = max(2 * base.cpu, 0.5)
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(4)]
        for p in spinners:
            p.start()
        try:
            r = run("--format", "json", "-q", "big.py", cwd=ws.path, timeout=600,
                    env={"OOMLINT_FILE_TIMEOUT": f"{limit:.2f}"})
        finally:
            for p in spinners:
                p.kill()
        assert r.code == 1 and "OOM001" not in r.out, r


def _spin():
    while True:
        pass


@test("supervise: running out of memory on one file is reported for that file")
def _():
    with Workspace() as ws:
        project(ws, 4)
        r = run("--format", "json", "pkg", cwd=ws.path, env={"OOMLINT_TEST_FAULT": "oom:m01.py"})
        assert r.code == 2 and "out of memory" in r.err, r
        assert by_file(r.json())["m01.py"] == ["OOM001"]


@test("supervise: a real memory limit: the file too big for it is set aside, the rest reported")
def _():
    if sanitized():
        return  # ASan reserves terabytes of address space: a limit on it cannot work there
    with Workspace() as ws:
        project(ws, 4)
        # 3 MB of one expression: the parse needs far more than the limit allows
        ws.write("pkg/huge.py", "x = [" + "f(a, b), " * 350000 + "]\n")
        limit = 300 * 1024 * 1024

        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        env = dict(os.environ, NO_COLOR="1")
        proc = subprocess.run([harness.BIN, "--format", "json", "-j", "1", "pkg"], cwd=ws.path, env=env,
                              capture_output=True, text=True, timeout=300, preexec_fn=cap)
        assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
        got = by_file(json.loads(proc.stdout))
        assert got.pop("huge.py") == ["OOM001"], got
        assert len(got) == 4, got


@test("supervise: standard input survives a retry")
def _():
    with Workspace() as ws:
        project(ws, 3)
        r = run("--format", "json", "-", "pkg", "--stdin-filename", "from_stdin.py", stdin=BAD_LOOP,
                cwd=ws.path, env={"OOMLINT_TEST_FAULT": "segv:m01.py"})
        assert r.code == 2, r
        got = by_file(r.json())
        assert got["from_stdin.py"] == ["OOM101"] and got["m01.py"] == ["OOM001"], got
        # --fix on stdin: the fixed text comes out once, whole
        fixed = run("--fix", "-", "--stdin-filename", "s.py", stdin="from torch.cuda.amp import GradScaler\n"
                    "s = GradScaler()\n", cwd=ws.path, env={"OOMLINT_TEST_FAULT": "segv:nothing-matches"})
        assert fixed.out == "from torch.amp import GradScaler\ns = GradScaler(\"cuda\")\n", fixed
        # and when linting stdin itself crashes, the code comes back as it came, the finding on stderr
        code = "from torch.cuda.amp import GradScaler\ns = GradScaler()\n"
        crashed = run("--fix", "-", "--stdin-filename", "s.py", stdin=code, cwd=ws.path,
                      env={"OOMLINT_TEST_FAULT": "segv:s.py"})
        assert crashed.code == 2 and crashed.out == code and "OOM001" in crashed.err, crashed


@test("supervise: --fix around a crash fixes the other files and leaves the culprit alone")
def _():
    with Workspace() as ws:
        amp = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
        for i in range(6):
            ws.write(f"pkg/a{i}.py", amp)
        r = run("--fix", "-j", "3", "pkg", cwd=ws.path, env={"OOMLINT_TEST_FAULT": "segv:a4.py"})
        assert r.code == 2, r
        for i in range(6):
            text = ws.read(f"pkg/a{i}.py")
            assert (text == amp) == (i == 4), (i, text)


@test("supervise: without a crash the output is exactly the unsupervised one")
def _():
    fixtures = sorted(os.path.join(harness.FIXTURES, d) for d in os.listdir(harness.FIXTURES))
    for fmt in ("text", "json", "sarif", "github"):
        args = ("--isolated", "--format", fmt, "--color", "always", *fixtures)
        a = run(*args)
        b = run(*args, env={"OOMLINT_NO_SUPERVISOR": "1"})
        assert (a.code, a.out) == (b.code, b.out), fmt


@test("supervise: a report streamed while files are linted is not taken for a hang, and arrives whole", slow=True)
def _():
    # the watchdog reads the clock, then the threads' slots: a file begun in
    # between is younger than the clock says, not 2^64 ns old. The report
    # streams in while files are linted, so the supervisor looks many times.
    # (4,000 files with 28 findings each made it happen in most runs.)
    with Workspace() as ws:
        count = 4000 if "/san/" not in harness.BIN else 1000
        for i in range(count):
            ws.write(f"pkg/d{i % 40:02d}/m{i}.py", "".join(bigfiles.TRAINING.format(i=i * 4 + k) for k in range(4)))
        for fmt in ("sarif", "json"):
            r = run("--isolated", "-q", "--threads", "2", "--output-format", fmt, "pkg", cwd=ws.path, timeout=600)
            assert r.code == 1 and "timeout" not in r.err and "bug in oomlint" not in r.err, (fmt, r.code, r.err[-500:])
            found = json.loads(r.out)
            if fmt == "sarif":
                found = found["runs"][0]["results"]
            assert len(found) == 28 * count, (fmt, len(found))


@test("supervise: a large report arrives whole when no temporary file can hold it (no TMPDIR, a file size limit)", slow=True)
def _():
    # past 1 MB the supervisor holds a child's report in a temporary file;
    # where none can be made, or the file stops growing, memory takes the rest
    with Workspace() as ws:
        count = 200
        for i in range(count):
            ws.write(f"pkg/m{i}.py", "".join(bigfiles.TRAINING.format(i=i * 4 + k) for k in range(4)))
        want = run("--isolated", "--output-format", "json", "pkg", cwd=ws.path, env={"OOMLINT_NO_SUPERVISOR": "1"})
        assert want.code == 1 and len(want.out) > 3 * 1024 * 1024, len(want.out)
        nowhere = run("--isolated", "--output-format", "json", "pkg", cwd=ws.path,
                      env={"TMPDIR": os.path.join(ws.path, "missing")})
        assert (nowhere.code, nowhere.out) == (1, want.out), (nowhere.code, len(nowhere.out), nowhere.err[-300:])

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, 2 * 1024 * 1024))
        proc = subprocess.run([harness.BIN, "--isolated", "--output-format", "json", "pkg"], cwd=ws.path,
                              capture_output=True, text=True, preexec_fn=small_files, timeout=300,
                              env=dict(os.environ, TMPDIR=ws.path))
        assert (proc.returncode, proc.stdout) == (1, want.out), (proc.returncode, len(proc.stdout), proc.stderr[-300:])
        assert not [f for f in os.listdir(ws.path) if f.startswith("oomlint-report")], os.listdir(ws.path)


@test("supervise: SIGTERM to oomlint ends it and its child, with no report")
def _():
    with Workspace() as ws:
        project(ws, 3)
        env = dict(os.environ, OOMLINT_TEST_FAULT="hang:m01.py", OOMLINT_FILE_TIMEOUT="0")
        proc = subprocess.Popen([harness.BIN, "pkg"], cwd=ws.path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        children = []
        deadline = time.time() + 20
        while not children and time.time() < deadline:
            time.sleep(0.1)
            try:
                with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                    children = [int(x) for x in f.read().split()]
            except OSError:
                break
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == -signal.SIGTERM, proc.returncode
        assert out == b"", out
        assert children, "no child process was seen"
        for pid in children:
            for _ in range(50):
                if not os.path.exists(f"/proc/{pid}") or _zombie(pid):
                    break
                time.sleep(0.1)
            assert not os.path.exists(f"/proc/{pid}") or _zombie(pid), f"child {pid} outlived oomlint"


@test("supervise: SIGKILL to oomlint takes its child down too")
def _():
    with Workspace() as ws:
        project(ws, 3)
        env = dict(os.environ, OOMLINT_TEST_FAULT="hang:m01.py", OOMLINT_FILE_TIMEOUT="0")
        proc = subprocess.Popen([harness.BIN, "pkg"], cwd=ws.path, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        children = []
        deadline = time.time() + 20
        while not children and time.time() < deadline:
            time.sleep(0.1)
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                children = [int(x) for x in f.read().split()]
        proc.kill()
        proc.wait(timeout=20)
        assert children
        for pid in children:
            for _ in range(100):
                if not os.path.exists(f"/proc/{pid}") or _zombie(pid):
                    break
                time.sleep(0.1)
            assert not os.path.exists(f"/proc/{pid}") or _zombie(pid), f"child {pid} outlived oomlint"


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@test("supervise: OOMLINT_NO_SUPERVISOR=1 lints in process, as the library and server do")
def _():
    with Workspace() as ws:
        r = run("--format", "json", ws.write("a.py", BAD_LOOP), env={"OOMLINT_NO_SUPERVISOR": "1"})
        assert [f["code"] for f in r.json()] == ["OOM101"], r


@test("supervise: an OOMLINT_FILE_TIMEOUT that is not a number of seconds is an error, not ignored")
def _():
    with Workspace() as ws:
        project(ws, 2)
        for bad in ("garbage", "10s", "-1", "nan", "inf", "1e300", " "):
            r = run("pkg", cwd=ws.path, env={"OOMLINT_FILE_TIMEOUT": bad})
            assert r.code == 2 and r.out == "", (bad, r)
            assert "OOMLINT_FILE_TIMEOUT" in r.err and repr(bad)[1:-1] in r.err, (bad, r)
        for good in ("0", "2.5", "300", ""):
            r = run("pkg", cwd=ws.path, env={"OOMLINT_FILE_TIMEOUT": good})
            assert r.code == 1 and "OOM101" in r.out, (good, r)
