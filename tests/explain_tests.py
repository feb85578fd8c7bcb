"""`oomlint explain`: from the out-of-memory error a job died of to the line to change.

The inputs are under tests/explain/: forms/ holds a log for every form the
message takes (PyTorch 1.0's, 1.x's, 2.1's, 2.x's with and without process
clauses, the container case, private pools, MPS, cudaMallocAsync, cuBLAS,
cuDNN, CUDA errors, the host's allocator and OOM killer, several ranks,
colour and progress bars, a truncated traceback, a re-wrapped message,
IPython's frames, a loop that catches the error and goes on), each written
from PyTorch's own format strings and labelled so in its first line: none was
recorded on a GPU. leak/, script/ and pkg/ are small projects with a log of
a crash in them, whose findings must come first. Snapshots are built here
with Python's pickle module in the shapes torch.cuda.memory._snapshot()
returns (no PyTorch needed). The large-input checks compare peak memory at
two sizes (a ratio, never a time)."""
import json
import math
import os
import pickle
import random
import re
import subprocess
import sys
import tempfile

import harness
from harness import ROOT, Workspace, run, test

DATA = os.path.join(ROOT, "tests", "explain")
FORMS = os.path.join(DATA, "forms")
UNITS = {"bytes": 0, "KiB": 10, "MiB": 20, "GiB": 30, "KB": 10, "MB": 20, "GB": 30}


def size(text):
    """A size as PyTorch prints it, in bytes, rounded as oomlint rounds it."""
    number, unit = text.split()
    return int(math.floor(float(number) * 2 ** UNITS[unit] + 0.5))


def near(a, b, slack=8 << 20):
    return a is not None and abs(a - b) <= slack


def explain(*args, **kw):
    return run("explain", *args, **kw)


def explain_json(*args, **kw):
    r = explain("--format", "json", *args, **kw)
    assert r.code in (0, 1), r
    return r, r.json()


def form(name):
    return os.path.join(FORMS, name)


def kinds(error):
    return [v["kind"] for v in error["verdicts"]]


# ---- every form of the message -------------------------------------------------------------

FORMS_EXPECTED = {
    # file: (kind, exception, device, {figure: size text or bytes}, verdict kinds that must be there)
    "v2_this_process.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "3.15 GiB", "total": "39.56 GiB", "free": "2.80 GiB", "this_process": "36.61 GiB",
        "allocated": "31.66 GiB", "reserved_unallocated": "4.11 GiB"}, ["fragmentation"]),
    "v2_other_process.log": ("cuda", "torch.cuda.OutOfMemoryError", 0, {
        "requested": "1.16 GiB", "total": "31.36 GiB", "free": "471.69 MiB", "this_process": "16.63 GiB",
        "allocated": "15.03 GiB", "reserved_unallocated": "1.00 GiB"}, ["other-process"]),
    "v2_container.log": ("cuda", "torch.OutOfMemoryError", 1, {
        "requested": "1.25 GiB", "total": "93.02 GiB", "free": "1.18 GiB", "this_process": None,
        "allocated": "90.63 GiB", "reserved_unallocated": "120.54 MiB"}, ["container-process", "live-tensors"]),
    "v2_container_and_other.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "2.00 GiB", "total": "79.15 GiB", "free": "1.05 GiB", "allocated": "57.20 GiB",
        "reserved_unallocated": "300.00 MiB"}, ["container-process", "other-process"]),
    "v21_capacty.log": ("cuda", "torch.cuda.OutOfMemoryError", 0, {
        "requested": "8.00 GiB", "total": "23.69 GiB", "free": "7.11 GiB", "this_process": "16.31 GiB",
        "allocated": "16.01 GiB", "reserved_unallocated": "7.47 MiB"}, ["huge-request"]),
    "v2_no_process_info.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "20.00 MiB", "total": "15.77 GiB", "free": "9.50 GiB", "this_process": None,
        "allowed": "6.00 GiB", "allocated": "5.93 GiB", "reserved_unallocated": "50.00 MiB"}, ["memory-fraction"]),
    "v2_private_pools.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "512.00 MiB", "total": "79.19 GiB", "free": "402.00 MiB", "this_process": "78.78 GiB",
        "allocated": "74.50 GiB", "private_pools": "6.00 GiB", "reserved_unallocated": "3.30 GiB"}, ["fragmentation"]),
    "v1_reserved.log": ("cuda", "RuntimeError", 0, {
        "requested": "20.00 MiB", "total": "15.78 GiB", "free": "3.12 MiB", "allocated": "14.56 GiB",
        "reserved": "14.71 GiB", "this_process": None}, ["live-tensors"]),
    "v1_allowed.log": ("cuda", "torch.cuda.OutOfMemoryError", 0, {
        "requested": "2.00 GiB", "total": "11.91 GiB", "free": "10.38 GiB", "allowed": "2.00 GiB",
        "allocated": "1.34 GiB", "reserved": "1.36 GiB"}, ["memory-fraction"]),
    "v1_cached.log": ("cuda", "RuntimeError", 0, {
        "requested": "1.12 MiB", "total": "22.37 GiB", "free": "3.56 MiB", "allocated": "15.87 GiB",
        "reserved_unallocated": "787.74 MiB"}, ["outside-pytorch"]),
    "mps.log": ("mps", "RuntimeError", None, {
        "requested": "256.00 MB", "allocated": "18.04 GB", "other_allocations": "5.21 MB", "allowed": "18.13 GB",
        "total": None}, ["mps-limit"]),
    "async.log": ("cuda-malloc-async", "torch.OutOfMemoryError", 0, {
        "allocated": "9.43 GiB", "requested": "640.00 MiB", "total": "11.59 GiB", "free": "7.12 MiB",
        "allowed": None}, ["live-tensors"]),
    "ansi.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "2.30 GiB", "total": "23.55 GiB", "free": "1.02 GiB", "this_process": "22.52 GiB",
        "allocated": "20.11 GiB", "reserved_unallocated": "1.96 GiB"}, ["fragmentation"]),
    "truncated.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "900.00 MiB", "total": "11.76 GiB", "free": "310.44 MiB"}, ["live-tensors"]),
    "wrapped.log": ("cuda", "torch.OutOfMemoryError", 0, {
        "requested": "1.16 GiB", "total": "31.36 GiB", "free": "471.69 MiB", "this_process": "16.63 GiB",
        "allocated": "15.03 GiB", "reserved_unallocated": "1.00 GiB"}, ["other-process", "fragmentation"]),
    "ipython.log": ("cuda", "OutOfMemoryError", 0, {
        "requested": "64.00 MiB", "total": "14.75 GiB", "free": "3.06 MiB", "allocated": "14.22 GiB"},
        ["live-tensors"]),
}


@test("explain: every form of the message gives its figures (1.0, 1.x, 2.1, 2.x, container, pools, MPS, async)")
def _():
    for name, (kind, exc, device, figures, verdicts) in FORMS_EXPECTED.items():
        r, d = explain_json(form(name))
        e = d["errors"][0]
        assert e["kind"] == kind and e["exception"] == exc and e["figures"]["device"] == device, (name, e)
        for key, want in figures.items():
            got = e["figures"][key]
            if want is None:
                assert got is None, (name, key, got)
            else:
                want = size(want) if isinstance(want, str) else want
                assert got == want, (name, key, got, want)
        f = e["figures"]
        if f["allocated"] is not None and f["reserved_unallocated"] is not None:
            assert f["reserved"] == f["allocated"] + f["reserved_unallocated"], (name, f)
        for v in verdicts:
            assert v in kinds(e), (name, v, kinds(e))
        for v in e["verdicts"]:
            assert v["message"] and v["figures"] is not None, (name, v)


@test("explain: the processes of a message, and the container's own process told from another one")
def _():
    _, d = explain_json(form("v2_other_process.log"))
    e = d["errors"][0]
    assert e["figures"]["processes"] == [{"pid": 19239, "bytes": size("14.26 GiB")}], e["figures"]
    other = next(v for v in e["verdicts"] if v["kind"] == "other-process")
    # total - free - this process, or the listed process when that is more
    expect = size("31.36 GiB") - size("471.69 MiB") - size("16.63 GiB")
    assert near(other["figures"]["others"], max(expect, size("14.26 GiB"))), other
    assert "Process 19239" in other["message"] and "nvidia-smi" in other["advice"], other
    assert "would have fit" in other["message"], other

    _, d = explain_json(form("v2_container.log"))
    e = d["errors"][0]
    assert "other-process" not in kinds(e), kinds(e)
    own = next(v for v in e["verdicts"] if v["kind"] == "container-process")
    assert own["figures"]["pid"] == 2752205 and own["figures"]["process_bytes"] == size("91.82 GiB"), own
    assert "another PID namespace" in own["message"], own

    _, d = explain_json(form("v2_container_and_other.log"))
    e = d["errors"][0]
    own = next(v for v in e["verdicts"] if v["kind"] == "container-process")
    other = next(v for v in e["verdicts"] if v["kind"] == "other-process")
    assert own["figures"]["pid"] == 1207, own
    assert "Process 3391" in other["message"] and other["figures"]["others"] >= size("20.10 GiB"), other


@test("explain: cuBLAS, cuDNN, CUDA errors, the host's allocator and its OOM killer are read and told apart")
def _():
    _, d = explain_json(form("libraries.log"))
    got = [(e["kind"], e["line"], kinds(e)[0]) for e in d["errors"]]
    assert got == [("cublas", 2, "library-allocation"), ("cudnn", 3, "cudnn-workspace"),
                   ("cuda-error", 4, "cuda-error"), ("cpu", 6, "host-memory"),
                   ("host-oom-killer", 7, "host-oom-killer")], got
    assert d["errors"][3]["figures"]["requested"] == 1073741824
    # the first device error is the one explained
    assert d["errors"][0]["primary"] is True


@test("explain: several ranks in one log keep their own tracebacks (torchrun, srun --label, Open MPI)")
def _():
    _, d = explain_json(os.path.join(DATA, "pkg", "torchrun.log"), "--root", os.path.join(DATA, "pkg"))
    ranks = [(e["rank"], e["figures"]["device"], e["line"]) for e in d["errors"]]
    assert ranks == [("rank0", 0, 19), ("rank1", 1, 20)], ranks
    for e in d["errors"]:
        files = [(os.path.basename(t["file"]), t["line"]) for t in e["traceback"]]
        assert files == [("train.py", 14), ("evaluation.py", 10), ("modeling_llama.py", 1190)], files
        assert e["traceback"][2]["user"] is False and e["traceback"][2]["code"] == "logits = self.lm_head(hidden_states)"

    _, d = explain_json(form("labels.log"))
    got = [(e["rank"], e["figures"]["device"], [(t["line"], t["code"]) for t in e["traceback"]]) for e in d["errors"]]
    assert got == [("1", 1, [(120, "fake = generator(z)")]), ("0", 0, [(131, "d_loss.backward()")]),
                   ("1,0", 0, [])], got
    assert d["errors"][1]["phase"] == "backward", d["errors"][1]


@test("explain: colour, progress bars, a truncated traceback, a re-wrapped message, IPython's frames")
def _():
    _, d = explain_json(form("ansi.log"))
    e = d["errors"][0]
    assert [(t["file"], t["line"], t["function"], t["code"]) for t in e["traceback"]] == \
        [("/home/carol/vit/train.py", 88, "step", "logits = model(images)")], e["traceback"]
    assert "\x1b" not in e["message"] and e["step"] == 420 and e["steps_total"] == 1200, e
    assert "late-step" in kinds(e), kinds(e)

    _, d = explain_json(form("truncated.log"))
    e = d["errors"][0]
    assert e["traceback_truncated"] is True and e["traceback"][0]["line"] == 41, e
    assert d["missing_files"] == ["/home/dave/seg/engine.py"], d["missing_files"]

    _, d = explain_json(form("wrapped.log"))
    assert len(d["errors"]) == 1 and "Location" not in d["errors"][0]["message"], d["errors"]

    _, d = explain_json(form("ipython.log"))
    tb = [(t["file"], t["line"], t["function"], t["user"]) for t in d["errors"][0]["traceback"]]
    assert tb == [("<Cell In[12]>", 3, "<cell>", True), ("~/notebooks/helpers.py", 27, "run_epoch", True)], tb
    r = explain(form("ipython.log"))
    assert "a notebook cell" in r.out, r


@test("explain: errors caught and retried with PyTorch's allocation rising are growth, step to step")
def _():
    _, d = explain_json(form("repeated.log"))
    assert len(d["errors"]) == 3
    growth = next(v for v in d["errors"][0]["verdicts"] if v["kind"] == "growth")
    assert growth["figures"]["first_allocated"] == size("10.02 GiB"), growth
    assert growth["figures"]["last_allocated"] == size("15.51 GiB"), growth
    assert "OOM104" in growth["advice"], growth


@test("explain: no out-of-memory error, an empty log, garbage, a directory, a missing file: exit 2, said plainly")
def _():
    r = explain(form("none.log"))
    assert r.code == 2 and "no out-of-memory error found" in r.err and "5 lines read" in r.err, r
    with Workspace() as ws:
        empty = ws.write("empty.log", "")
        r = explain(empty)
        assert r.code == 2 and "no out-of-memory error found" in r.err, r
        rng = random.Random(37)
        garbage = ws.write("garbage.bin", bytes(rng.randrange(256) for _ in range(1 << 20)), "wb")
        r = explain(garbage)
        assert r.code == 2 and "no out-of-memory error found" in r.err, r
        r = explain(ws.path)
        assert r.code == 2 and "is a directory" in r.err, r
        r = explain(os.path.join(ws.path, "missing.log"))
        assert r.code == 2 and "cannot read" in r.err and "missing.log" in r.err, r


# ---- linking to the code ---------------------------------------------------------------------

@test("explain: a leak in the loop around the failing line is ranked first, with the log's growth")
def _():
    root = os.path.join(DATA, "leak")
    r, d = explain_json(os.path.join(root, "slurm-1234.out"), "--root", root)
    assert r.code == 1, r
    e = d["errors"][0]
    assert e["phase"] == "backward" and kinds(e)[:2] == ["growth", "backward"], kinds(e)
    growth = e["verdicts"][0]
    assert growth["figures"]["first_bytes"] == size("7.52 GiB") and growth["figures"]["last_bytes"] == size("28.84 GiB")
    first = d["findings"][0]
    assert (first["code"], first["line"], first["relation"], first["stack_line"], first["in_stack_loop"]) == \
        ("OOM102", 21, "function", 24, True), first
    assert first["path"] == os.path.join(root, "train.py"), first
    later = {f["code"]: f["relation"] for f in d["findings"][1:]}
    assert later.get("OOM201") == "file", later
    assert e["traceback"][-4]["found"] == os.path.join(root, "train.py"), e["traceback"]

    text = explain(os.path.join(root, "slurm-1234.out"), "--root", root).out
    order = [text.index(s) for s in ("CUDA out of memory on GPU 0", "verdict: Memory grew", "\n  total capacity",
                                     "traceback (most recent call last)", "[1] in `train`", "OOM102 [error]",
                                     "outputs.append(out)", "OOM201 [warning]")]
    assert order == sorted(order), text


@test("explain: a script's top-level loop is the loop around the failing line; another process is named")
def _():
    root = os.path.join(DATA, "script")
    r, d = explain_json(os.path.join(root, "job.log"), "--root", root)
    assert r.code == 1, r
    e = d["errors"][0]
    assert kinds(e)[0] == "other-process" and e["phase"] == "forward", kinds(e)
    first = d["findings"][0]
    assert (first["code"], first["relation"], first["stack_line"]) == ("OOM101", "loop", 14), first
    assert e["traceback"][0]["found"] == os.path.join(root, "finetune.py"), e["traceback"]


@test("explain: a finding on the failing line comes first, in evaluation, in a package found under --root")
def _():
    root = os.path.join(DATA, "pkg")
    r, d = explain_json(os.path.join(root, "torchrun.log"), "--root", root)
    assert r.code == 1, r
    e = d["errors"][0]
    assert e["phase"] == "evaluation" and "evaluation" in kinds(e), kinds(e)
    lead = [(f["code"], f["relation"], f["stack_line"]) for f in d["findings"][:2]]
    assert sorted(lead) == [("OOM102", "line", 10), ("OOM201", "line", 10)], lead
    assert d["findings"][0]["path"].endswith("src/project/evaluation.py"), d["findings"][0]
    stack = {f["path"] for f in d["files"] if f["on_stack"]}
    assert {os.path.basename(p) for p in stack} == {"train.py", "evaluation.py"}, d["files"]


@test("explain: a frame's file is found by its longest trailing path under each --root")
def _():
    leak = "import torch\n\ndef f(xs, model):\n    total = 0\n    for x in xs:\n        loss = model(x).sum()\n" \
           "        loss.backward()\n        total += loss\n    return total\n"
    log = ("Traceback (most recent call last):\n  File \"/nodes/n7/home/u/proj/train.py\", line 7, in f\n"
           "    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
           "total capacity of 15.77 GiB of which 1.00 GiB is free.\n")
    with Workspace() as ws:
        ws.write("a/train.py", "x = 1\n")            # only the file name matches
        ws.write("b/proj/train.py", leak)           # two components match
        ws.write("job.log", log)
        _, d = explain_json("job.log", "--root", "a", "--root", "b", cwd=ws.path)
        found = d["errors"][0]["traceback"][0]["found"]
        assert found == os.path.join("b", "proj", "train.py"), found
        assert d["findings"][0]["code"] == "OOM101" and d["findings"][0]["relation"] == "function", d["findings"]
        # by default, under the current directory
        _, d = explain_json(os.path.join(ws.path, "job.log"), cwd=os.path.join(ws.path, "b"))
        assert d["errors"][0]["traceback"][0]["found"] == os.path.join("proj", "train.py"), d["errors"][0]


@test("explain: a trailing path never climbs out of --root with '..'")
def _():
    log = ("Traceback (most recent call last):\n  File \"/srv/job/../outside.py\", line 1, in <module>\n    f()\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           "15.77 GiB of which 1.00 GiB is free.\n")
    with Workspace() as ws:
        ws.write("outside.py", "import torch\n")
        os.makedirs(os.path.join(ws.path, "root"))
        ws.write("job.log", log)
        _, d = explain_json("job.log", "--root", "root", cwd=ws.path)
        assert d["errors"][0]["traceback"][0]["found"] is None, d["errors"][0]["traceback"]
        assert d["missing_files"] == ["/srv/job/../outside.py"], d["missing_files"]


@test("explain: the innermost function that trains or evaluates names the phase (train_and_evaluate is not evaluation)")
def _():
    frames = ('  File "/u/run.py", line {}, in {}\n    {}\n')
    message = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
               "of 15.77 GiB of which 1.00 GiB is free.\n")
    training = ("Traceback (most recent call last):\n" + frames.format(9, "train_and_evaluate", "train_one_epoch(m)")
                + frames.format(20, "train_one_epoch", "out = m(x)") + message)
    evaluating = ("Traceback (most recent call last):\n" + frames.format(9, "train_and_evaluate", "evaluate(m)")
                  + frames.format(30, "evaluate", "out = m(x)") + message)
    _, d = explain_json("-", stdin=training)
    assert d["errors"][0]["phase"] != "evaluation", d["errors"][0]["phase"]
    _, d = explain_json("-", stdin=evaluating)
    assert d["errors"][0]["phase"] == "evaluation", d["errors"][0]["phase"]


@test("explain: a frame whose file is not on disk is named, and the run goes on (exit 0)")
def _():
    with Workspace() as ws:
        r, d = explain_json(form("v1_reserved.log"), cwd=ws.path)
        assert r.code == 0 and d["missing_files"] == ["train.py"] and d["findings"] == [], d
        assert "train.py" in r.err and "not on disk" in r.err, r
        r = explain(form("v1_reserved.log"), cwd=ws.path)
        assert r.code == 0 and "not found on disk" in r.out and "--root DIR" in r.out, r


# ---- snapshots ----------------------------------------------------------------------------

MiB = 1 << 20
LEAK_FILE = "/home/alice/leak/train.py"


def frame(path, line, name):
    return {"filename": path, "line": line, "name": name}


TORCH = [frame("/opt/conda/lib/python3.11/site-packages/torch/nn/modules/linear.py", 116, "forward"),
         frame("/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", 1541, "_call_impl")]
FORWARD = TORCH + [frame(LEAK_FILE, 20, "train"), frame(LEAK_FILE, 33, "main"), frame(LEAK_FILE, 38, "<module>")]
LOSS = [frame(LEAK_FILE, 22, "train"), frame(LEAK_FILE, 33, "main"), frame(LEAK_FILE, 38, "<module>")]
FAILING = [frame("/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py", 768, "_engine_run_backward"),
           frame(LEAK_FILE, 24, "train"), frame(LEAK_FILE, 33, "main"), frame(LEAK_FILE, 38, "<module>")]


def leak_snapshot():
    """30 blocks of 100 MiB alive from line 20, one of 7 MiB allocated at line
    22 and freed after the OOM (alive at it), one of 50 MiB allocated after
    the OOM (not alive at it), and 40 MiB free in the reserve in two blocks."""
    blocks, addr = [], 1 << 40
    for _ in range(30):
        blocks.append({"address": addr, "size": 100 * MiB, "requested_size": 100 * MiB, "state": "active_allocated",
                       "frames": FORWARD})
        addr += 100 * MiB
    late = addr
    blocks.append({"address": late, "size": 50 * MiB, "requested_size": 50 * MiB, "state": "active_allocated",
                   "frames": LOSS})
    addr += 50 * MiB
    freed = addr
    for size_mib in (7, 25, 15):
        blocks.append({"address": addr, "size": size_mib * MiB, "requested_size": 0, "state": "inactive",
                       "frames": []})
        addr += size_mib * MiB
    segment = {"device": 0, "address": 1 << 40, "total_size": addr - (1 << 40), "allocated_size": 3050 * MiB,
               "active_size": 3050 * MiB, "requested_size": 3050 * MiB, "stream": 0, "segment_type": "large",
               "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks}
    trace = [{"action": "segment_alloc", "addr": 1 << 40, "size": addr - (1 << 40), "stream": 0, "time_us": 1,
              "frames": FORWARD},
             {"action": "alloc", "addr": freed, "size": 7 * MiB, "stream": 0, "time_us": 2, "frames": LOSS},
             {"action": "oom", "addr": 600 * MiB, "size": 1 << 30, "stream": 0, "time_us": 3, "device_free": 600 * MiB,
              "frames": FAILING},
             {"action": "free_requested", "addr": freed, "size": 7 * MiB, "stream": 0, "time_us": 4, "frames": []},
             {"action": "free_completed", "addr": freed, "size": 7 * MiB, "stream": 0, "time_us": 5, "frames": []},
             {"action": "alloc", "addr": late, "size": 50 * MiB, "stream": 0, "time_us": 6, "frames": LOSS},
             {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 7, "frames": []}]
    return {"segments": [segment], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0, "expandable_segments": False}}


@test("explain: a snapshot's bytes alive at the failure, by line, taken back to the OOM and crossed with the findings")
def _():
    root = os.path.join(DATA, "leak")
    with Workspace() as ws:
        snap = ws.write("snapshot.pickle", pickle.dumps(leak_snapshot(), protocol=4), "wb")
        r, d = explain_json(os.path.join(root, "slurm-1234.out"), snap, "--root", root)
        s = d["snapshot"]
        assert s["format"] == "segments+device_traces" and s["at_oom"] is True and s["partial"] is False, s
        assert s["alive"] == 3007 * MiB and s["alive_blocks"] == 31, s
        assert s["oom_requested"] == 1 << 30 and s["largest_free_block"] == 25 * MiB, s
        top = s["lines"][0]
        assert (top["file"], top["line"], top["bytes"], top["blocks"], top["allocated_here"]) == \
            (LEAK_FILE, 20, 3000 * MiB, 30, True), top
        assert top["found"] == os.path.join(root, "train.py") and top["code"] == "out = model(x.cuda())", top
        assert {(f["code"], f["line"]) for f in top["findings"]} >= {("OOM102", 21)}, top
        freed = next(l for l in s["lines"] if l["line"] == 22 and l["allocated_here"])
        assert freed["bytes"] == 7 * MiB, freed
        lead = d["findings"][0]
        assert lead["code"] == "OOM102" and lead["alive_bytes"] == 3007 * MiB and lead["alive_line"] == 20, lead

        text = explain(os.path.join(root, "slurm-1234.out"), snap, "--root", root).out
        assert "alive at the failure (" in text and "OOM102 at line 21 (`outputs.append(out)`)" in text, text
        assert "snapshot: 2.94 GiB alive at the failure was allocated under this code (most at line 20" in text, text

        # every protocol reads the same, positional or --snapshot
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            path = ws.write(f"p{protocol}.pickle", pickle.dumps(leak_snapshot(), protocol=protocol), "wb")
            _, other = explain_json(os.path.join(root, "slurm-1234.out"), "--snapshot", path, "--root", root)
            other["snapshot"]["path"] = s["path"]
            assert other["snapshot"] == s, protocol


@test("explain: a snapshot alone is explained from its OOM entry; PyTorch 1.13's list of segments reads too")
def _():
    root = os.path.join(DATA, "leak")
    with Workspace() as ws:
        snap = ws.write("only.pickle", pickle.dumps(leak_snapshot()), "wb")
        r, d = explain_json(snap, "--root", root)
        assert r.code == 1, r
        e = d["errors"][0]
        assert e["source"] == "snapshot" and e["figures"]["requested"] == 1 << 30, e
        assert e["figures"]["free"] == 600 * MiB and e["phase"] == "backward", e
        assert [t["line"] for t in e["traceback"] if t["user"]] == [38, 33, 24], e["traceback"]
        assert d["findings"][0]["code"] == "OOM102", d["findings"]

        legacy = [{"device": 0, "address": 0, "total_size": 200 * MiB, "stream": 0,
                   "blocks": [{"size": 120 * MiB, "state": "active_allocated",
                               "history": [{"addr": 0, "real_size": 120 * MiB, "frames": FORWARD}]},
                              {"size": 80 * MiB, "state": "inactive", "history": []}]}]
        old = ws.write("legacy.pickle", pickle.dumps(legacy, protocol=2), "wb")
        _, d = explain_json(old, "--root", root)
        s = d["snapshot"]
        assert s["format"] == "1.13 list" and s["alive"] == 120 * MiB and s["inactive"] == 80 * MiB, s
        assert s["lines"][0]["line"] == 20 and s["at_oom"] is False, s


class Custom:
    pass


@test("explain: pickles that are not snapshots (objects, recursion, deep nesting, cuts, garbage, a zip): a clear error")
def _():
    with Workspace() as ws:
        recursive = []
        recursive.append(recursive)
        deep = b"\x80\x04" + b"]" * 200000 + b"a" * 199999 + b"."
        cases = {
            "object.pickle": (pickle.dumps({"segments": [Custom()]}, protocol=4), "opcode STACK_GLOBAL"),
            "object2.pickle": (pickle.dumps({"segments": [Custom()]}, protocol=2), "opcode GLOBAL"),
            "recursive.pickle": (pickle.dumps(recursive, protocol=4), "recursive structure"),
            "deep.pickle": (deep, "nested deeper than 100 levels"),
            "cut.pickle": (pickle.dumps(leak_snapshot())[:-40], "ends"),
            "garbage.pickle": (bytes(random.Random(5).randrange(256) for _ in range(100000)), "at byte"),
            "checkpoint.pickle": (b"PK\x03\x04" + b"\x00" * 100, "zip archive"),
            "dict.pickle": (pickle.dumps({"weights": [1, 2, 3]}), "not a memory snapshot"),
            "number.pickle": (pickle.dumps(3), "not a memory snapshot"),
        }
        for name, (data, why) in cases.items():
            path = ws.write(name, data, "wb")
            r = explain(form("v2_this_process.log"), "--snapshot", path)
            assert r.code == 2 and why in r.err and name in r.err, (name, r)
            assert r.out == "", (name, r.out[:300])
        r = explain(form("v2_this_process.log"), "--snapshot", os.path.join(ws.path, "absent.pickle"))
        assert r.code == 2 and "cannot read" in r.err, r


@test("explain: a snapshot whose memo repeats one list a million times is read within its bound")
def _():
    # a list of 1,000 references to one list of 1,000 references to one block:
    # 10^6 blocks to count from a pickle of a few kilobytes
    block = {"size": 1, "state": "active_allocated",
             "frames": [frame("/u/train.py", 3, "f")]}
    blocks = [block] * 1000
    segment = {"device": 0, "total_size": 1000, "blocks": blocks}
    data = pickle.dumps({"segments": [segment] * 1000}, protocol=4)
    assert len(data) < 20000
    with Workspace() as ws:
        path = ws.write("memo.pickle", data, "wb")
        r, d = explain_json(path)
        s = d["snapshot"]
        assert s["alive"] == s["alive_blocks"] and 0 < s["alive"] <= 1000 * 1000, s
        assert s["lines"][0]["line"] == 3, s


# ---- bounds ------------------------------------------------------------------------------

PEAK = """import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_kib(args):
    """The peak resident memory of one oomlint run, in KiB, from a fresh
    parent (RUSAGE_CHILDREN covers only its own children)."""
    proc = subprocess.run([sys.executable, "-c", PEAK, harness.BIN, *args], capture_output=True, text=True,
                          timeout=900, check=True)
    return int(proc.stdout.strip())


def write_log(path, megabytes):
    """A training log of about this size: progress bars redrawn with CRs,
    logging lines with memory figures, then the leak's crash."""
    bar = "".join(f"Epoch 1: {p:3d}%|{'#' * (p // 10):<10}| {p}/100 [00:{p:02d}<01:00, 6.2it/s, loss=0.41]\r"
                  for p in range(0, 100, 10)) + "\n"
    info = "2024-06-12 10:14:02 INFO trainer: step 450 loss 0.4123 lr 3.0e-4 mem 10.52 GiB\n"
    chunk = ((bar + info) * 2000).encode()
    with open(path, "wb") as f:
        written = 0
        while written < megabytes << 20:
            f.write(chunk)
            written += len(chunk)
        with open(os.path.join(DATA, "leak", "slurm-1234.out"), "rb") as tail:
            f.write(tail.read())


@test("explain: a 200 MB log is read in bounded memory: peak memory as for a 2 MB one, the crash at its end found")
def _():
    root = os.path.join(DATA, "leak")
    with tempfile.TemporaryDirectory(prefix="oomlint-explain-") as tmp:
        small, big = os.path.join(tmp, "small.log"), os.path.join(tmp, "big.log")
        write_log(small, 2)
        write_log(big, 200)
        r, d = explain_json(big, "--root", root, timeout=900)
        e = d["errors"][0]
        assert d["log"]["bytes"] == os.path.getsize(big) and e["line"] == d["log"]["lines"] - 1, d["log"]
        assert [t["line"] for t in e["traceback"] if t["user"]] == [38, 33, 24], e["traceback"]
        assert d["findings"][0]["code"] == "OOM102", d["findings"][:1]
        small_kib = peak_kib(["explain", "--format", "json", small, "--root", root])
        big_kib = peak_kib(["explain", "--format", "json", big, "--root", root])
        print(f"  explain: peak memory {small_kib} KiB for a 2 MB log, {big_kib} KiB for a 200 MB one", flush=True)
        assert big_kib < small_kib * 1.5, (small_kib, big_kib)


@test("explain: a 20 MB line without a newline, the message inside it, is read in pieces and found")
def _():
    message = open(form("v2_this_process.log")).read().split("\n")[1]
    with Workspace() as ws:
        noise = "x" * (10 << 20)
        path = ws.write("one-line.log", noise + " " + message + " " + noise)
        _, d = explain_json(path)
        assert len(d["errors"]) == 1 and d["errors"][0]["figures"]["requested"] == size("3.15 GiB"), d["errors"]
        assert d["log"]["lines"] == 0, d["log"]


# ---- the command line ------------------------------------------------------------------------

@test("explain: exit status: 1 findings on the stack, 0 with --fail-on error or --exit-zero or none, 2 usage")
def _():
    root = os.path.join(DATA, "pkg")
    log = os.path.join(root, "torchrun.log")
    assert explain(log, "--root", root).code == 1
    assert explain(log, "--root", root, "--exit-zero").code == 0
    # OOM201 (warning) and OOM102 (error) are on the stack: --fail-on error still fails
    assert explain(log, "--root", root, "--fail-on", "error").code == 1
    with Workspace() as ws:
        ws.write("src/project/evaluation.py", "import torch\n\n\ndef evaluate(model, loader, device):\n"
                 "    with torch.no_grad():\n        return [model(b.to(device)) for b in loader]\n")
        assert explain(log, "--root", ws.path).code == 0
    for args, why in ((["--format", "github", log], "expected: text, json, sarif"),
                      (["--frobnicate", log], "unknown option '--frobnicate'"),
                      ([log, log], "reads one log and one snapshot"),
                      (["--fail-on", "fatal", log], "invalid value 'fatal'"),
                      (["--root"], "needs a value")):
        r = explain(*args)
        assert r.code == 2 and why in r.err and "oomlint explain --help" in r.err, (args, r)
    r = explain("--help")
    assert r.code == 0 and "Usage: oomlint explain" in r.out and "--snapshot FILE" in r.out, r
    top = run("--help").out
    assert "oomlint explain LOG [SNAPSHOT]" in top and "your job died?" in top, top


@test("explain: standard input (- or none given), and -o writes the report to a file")
def _():
    text = open(form("v2_other_process.log")).read()
    r = explain("-", "--format", "json", stdin=text)
    assert r.code == 0 and r.json()["errors"][0]["figures"]["processes"][0]["pid"] == 19239, r
    r = explain("--format", "json", stdin=text)
    assert r.code == 0 and r.json()["log"]["path"] == "-", r
    r = explain(stdin=text)
    assert "Other processes hold" in r.out and "<stdin>:2:" in r.out, r
    with Workspace() as ws:
        out = os.path.join(ws.path, "report.json")
        r = explain(form("v2_other_process.log"), "--format", "json", "-o", out)
        assert r.code == 0 and r.out == "", r
        with open(out) as f:
            assert json.load(f)["errors"][0]["kind"] == "cuda"
        r = explain(form("v2_other_process.log"), "-o", os.path.join(ws.path, "no", "such", "dir", "r.txt"))
        assert r.code == 2 and "cannot write" in r.err, r


@test("explain: --color always colours the text; the default under NO_COLOR does not")
def _():
    plain = explain(form("v2_this_process.log")).out
    coloured = explain(form("v2_this_process.log"), "--color", "always").out
    assert plain.startswith("CUDA out of memory on GPU 0") and "\nverdict: " in plain, plain[:300]
    assert "\x1b[" not in plain and "\x1b[" in coloured, coloured[:200]
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


@test("explain: SARIF has the findings on the stack in rank order and validates (ajv, the Multitool with GitHub's rules)")
def _():
    from sarif_tests import CANARY_MULTITOOL, SCHEMA, GITHUB_RULES, require, run_ajv, run_multitool
    for path in (SCHEMA, GITHUB_RULES):
        require(path, "a SARIF test file")
    logs = []
    with Workspace() as ws:
        for name, log, extra in (("leak", "slurm-1234.out", []), ("pkg", "torchrun.log", []),
                                 ("script", "job.log", []), ("leak", "slurm-1234.out", ["snap"])):
            args = [os.path.join("tests", "explain", name, log), "--root", os.path.join("tests", "explain", name)]
            if extra:
                args.append(ws.write("snap.pickle", pickle.dumps(leak_snapshot()), "wb"))
            r = explain("--format", "sarif", *args, cwd=ROOT)
            assert r.code == 1, r
            sarif = r.json()
            results = sarif["runs"][0]["results"]
            ranks = [res["properties"]["explain"]["rank"] for res in results]
            assert ranks == list(range(1, len(results) + 1)) and results, ranks
            json_findings = [f for f in explain_json(*args, cwd=ROOT)[1]["findings"] if f["relation"] != "run"]
            assert [res["ruleId"] for res in results] == [f["code"] for f in json_findings]
            loc = results[0]["locations"][0]["physicalLocation"]
            assert loc["artifactLocation"]["uri"].startswith(f"tests/explain/{name}/"), loc
            assert loc["region"]["startLine"] == json_findings[0]["line"], loc
            assert sarif["runs"][0]["properties"]["explainErrors"][0]["verdicts"], sarif["runs"][0]["properties"]
            path = os.path.join(ws.path, f"{name}-{len(logs)}.sarif")
            with open(path, "w") as f:
                f.write(r.out)
            logs.append(path)
        verdicts = run_ajv(logs)
        bad = {os.path.basename(p): e for p, e in verdicts.items() if e}
        assert not bad, "schema errors (ajv):\n" + json.dumps(bad, indent=1)
        canary = os.path.join(ws.path, "canary.sarif")
        with open(canary, "w") as f:
            json.dump(CANARY_MULTITOOL, f)
        report, console = run_multitool(logs + [canary], os.path.join(ws.path, "multitool.sarif"))
        found = {}
        for res in report["runs"][0]["results"]:
            uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            found.setdefault(os.path.basename(uri), []).append(res["ruleId"])
        assert any(rule == "GH1001" for rule in found.pop("canary.sarif", [])), console
        assert not found, json.dumps(found, indent=1)


@test("explain: docs/explain.md's examples are what oomlint prints for them, word for word")
def _():
    with open(os.path.join(ROOT, "docs", "explain.md"), encoding="utf-8") as f:
        doc = f.read()
    examples = re.findall(r"<!-- run in (\S+) -->\n```console\n\$ (oomlint explain [^\n]+)\n(.*?)\n```", doc, re.S)
    assert len(examples) >= 3, examples
    for where, command, shown in examples:
        r = explain(*command.split()[2:], cwd=os.path.join(ROOT, where))
        assert r.out.rstrip("\n") == shown, f"{where}: `{command}` prints:\n{r.out}"
