"""The probe (`oomlint probe`), on the CPU with Debian's python3-torch:

  - every scenario runs; bad and fixed agree; the graph-retention rules are
    confirmed with the growth (or peak) their tensor sizes predict: the
    expectations are computed here from the sizes each scenario reports, not
    taken from a run;
  - a scenario that crashes, hangs or writes garbage is reported as such and
    the others still run; an interrupted probe stops its children and removes
    its temporary folder;
  - --script confirms findings at their lines in a leaking training script
    and sees nothing in its fixed twin;
  - the committed figures are what `oomlint rule` and SARIF quote;
  - usage errors, a Python without torch, a missing GPU: one message, exit 2.

The full scenario run is shared by the tests that read it (one run, 8
iterations per variant, two variants at a time)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import harness
from harness import ROOT, Workspace, run, test

PROBE_DIR = os.path.join(ROOT, "probe")
ITERATIONS = "8"
_full = {}


def torch_python():
    """The interpreter the probe will pick, as the test checks it."""
    for cand in ("/usr/bin/python3", shutil.which("python3")):
        if cand and subprocess.run([cand, "-c", "import torch"], capture_output=True).returncode == 0:
            return cand
    raise AssertionError("no python3 that imports torch: `make test` installs python3-torch (as root)")


def full_run():
    """`oomlint probe --device cpu` over every scenario, once."""
    if "doc" not in _full:
        with Workspace() as ws:
            svg = os.path.join(ws.path, "probe.svg")
            t0 = time.time()
            r = run("probe", "--device", "cpu", "--format", "json", "--iterations", ITERATIONS, "--jobs", "2",
                    "--plot", svg, timeout=3000)
            _full["seconds"] = time.time() - t0
            print(f"probe: every scenario on the CPU, {ITERATIONS} iterations: {_full['seconds']:.0f} s", flush=True)
            _full["result"] = r
            _full["svg"] = open(svg).read() if os.path.exists(svg) else None
            assert r.code == 0, r
            _full["doc"] = r.json()
    return _full["doc"]


def scenario(doc, ident):
    rule, name = ident.split("/")
    for s in doc["scenarios"]:
        if s["rule"] == rule and s["scenario"] == name:
            return s
    raise AssertionError(f"no scenario {ident} in the probe's output")


def within(value, expected, lo, hi, what):
    assert expected > 0, what
    ratio = value / expected
    assert lo <= ratio <= hi, f"{what}: measured {value:.0f}, expected {expected:.0f} from the sizes " \
                              f"(ratio {ratio:.2f}, allowed {lo}..{hi})"


# ---- what the sizes predict --------------------------------------------------------------

F32 = 4


def mlp_saved(p):
    """A training step of the MLP saves the input, two hidden activations, the
    log-softmax output and the int64 targets."""
    b = p["batch"]
    return F32 * b * (p["features"] + 2 * p["hidden"] + p["classes"]) + 8 * b


def mlp_params(p):
    f, h, c = p["features"], p["hidden"], p["classes"]
    return F32 * (f * h + h + h * h + h + h * c + c)


# autograd nodes a step of the 3-layer MLP adds: per Linear an addmm and a
# transpose of the weight, a ReLU between layers; cross-entropy is
# log_softmax + nll_loss; `+=` adds one more
MLP_FORWARD_NODES = 3 * 2 + 2
CE_NODES = 2


@test("probe: every scenario runs on the CPU, and bad and fixed agree")
def _():
    doc = full_run()
    assert doc["device"] == "cpu" and doc["torch"], doc
    listed = {(s["rule"], s["scenario"]) for s in doc["scenarios"]}
    for rule in ("OOM101", "OOM102", "OOM103", "OOM104", "OOM105", "OOM106", "OOM201", "OOM301", "OOM302", "OOM303",
                 "OOM401", "OOM501", "OOM503", "OOM504", "OOM603", "OOM701", "OOM702", "OOM705"):
        assert any(r == rule for r, _ in listed), f"no scenario for {rule}"
    for s in doc["scenarios"]:
        ident = f"{s['rule']}/{s['scenario']}"
        assert s["agree"] is True, f"{ident}: variants disagree: {s.get('agree_detail')}"
        assert "error" not in s, f"{ident}: {s['error']}"
        assert s["verdict"] in ("confirmed", "no measurable cost", "needs a GPU"), (ident, s["verdict"])
        if s["verdict"] == "needs a GPU":
            assert s["bad"] is None and s["fixed"] is None, f"{ident}: a figure where it needs a GPU"
        else:
            for side in ("bad", "fixed"):
                assert s[side]["iterations"] == int(ITERATIONS), (ident, s[side])


@test("probe: the CPU says 'needs a GPU' for costs only a GPU has, with no figure")
def _():
    doc = full_run()
    for ident in ("OOM301/dataset", "OOM302/resume", "OOM303/mask", "OOM501/transformer", "OOM503/transformer",
                  "OOM504/finetune", "OOM701/transformer", "OOM702/cnn"):
        s = scenario(doc, ident)
        assert s["verdict"] == "needs a GPU", (ident, s["verdict"])


@test("probe: OOM101 accumulation is confirmed, by the graph in training and by memory in evaluation")
def _():
    doc = full_run()
    s = scenario(doc, "OOM101/train")
    assert s["verdict"] == "confirmed" and "graph growth" in s["confirmed_by"], s
    within(s["bad"]["graph_nodes_per_step"], MLP_FORWARD_NODES + CE_NODES + 1, 0.9, 1.1, "OOM101/train nodes")
    assert abs(s["fixed"]["graph_nodes_per_step"]) < 0.1, s["fixed"]
    # backward freed what was saved: the memory kept for backward does not grow
    assert abs(s["bad"]["growth_bytes_per_step"]) < 0.01 * mlp_saved(s["params"]), s["bad"]
    assert s["bad"]["graph_held_by"]["name"] == "running", s["bad"]
    s = scenario(doc, "OOM101/eval")
    assert s["verdict"] == "confirmed" and "memory growth" in s["confirmed_by"], s
    within(s["bad"]["growth_bytes_per_step"], mlp_saved(s["params"]), 0.9, 1.1, "OOM101/eval growth")
    assert abs(s["fixed"]["growth_bytes_per_step"]) < 0.01 * mlp_saved(s["params"]), s["fixed"]


@test("probe: OOM102 collection is confirmed, by the graph in training and by memory in evaluation")
def _():
    doc = full_run()
    s = scenario(doc, "OOM102/train")
    assert s["verdict"] == "confirmed" and "graph growth" in s["confirmed_by"], s
    within(s["bad"]["graph_nodes_per_step"], MLP_FORWARD_NODES, 0.9, 1.1, "OOM102/train nodes")
    s = scenario(doc, "OOM102/eval")
    p = s["params"]
    assert s["verdict"] == "confirmed" and "memory growth" in s["confirmed_by"], s
    within(s["bad"]["growth_bytes_per_step"], F32 * p["batch"] * (p["features"] + 2 * p["hidden"]), 0.9, 1.1,
           "OOM102/eval growth")


@test("probe: OOM103 retain_graph keeps a step's saved tensors into the next: peak")
def _():
    s = scenario(full_run(), "OOM103/train")
    assert s["verdict"] == "confirmed" and "peak" in s["confirmed_by"], s
    within(s["bad"]["peak_bytes"] - s["fixed"]["peak_bytes"], mlp_saved(s["params"]), 0.8, 1.25, "OOM103 peak")


@test("probe: OOM104 a retry inside `except` runs on top of the failed attempt: peak")
def _():
    s = scenario(full_run(), "OOM104/retry")
    p = s["params"]
    half = p["batch"] // 2
    # the fixed variant's peak is the failed attempt; the bad one's adds the retry's first half batch
    retry = F32 * half * (2 * p["hidden"] + p["classes"]) + 8 * half
    assert s["verdict"] == "confirmed" and "peak" in s["confirmed_by"], s
    within(s["bad"]["peak_bytes"] - s["fixed"]["peak_bytes"], retry, 0.7, 1.4, "OOM104 peak")


@test("probe: OOM105 a hidden state carried without detach grows by each batch's recurrent activations")
def _():
    s = scenario(full_run(), "OOM105/lm")
    p = s["params"]
    t, b = p["seq"], p["batch"]
    expected = F32 * t * b * (p["embed"] + p["hidden"]) + 8 * t * b
    assert s["verdict"] == "confirmed" and "memory growth" in s["confirmed_by"], s
    within(s["bad"]["growth_bytes_per_step"], expected, 0.8, 1.25, "OOM105 growth")
    assert abs(s["fixed"]["growth_bytes_per_step"]) < 0.01 * expected, s["fixed"]


@test("probe: OOM106 create_graph with gradients zeroed in place grows by at least the forward activations")
def _():
    s = scenario(full_run(), "OOM106/gradient-penalty")
    p = s["params"]
    forward = F32 * p["batch"] * (p["features"] + p["hidden"])
    assert s["verdict"] == "confirmed" and "memory growth" in s["confirmed_by"], s
    within(s["bad"]["growth_bytes_per_step"], forward, 1.0, 4.0, "OOM106 growth")


@test("probe: OOM201 evaluation with autograd on keeps a forward's activations: peak")
def _():
    s = scenario(full_run(), "OOM201/eval")
    p = s["params"]
    b, c, n = p["batch"], p["channels"], p["image"]
    h = n // 2
    # input, conv1's ReLU output, max-pool indices (int64) and output, conv2's ReLU output
    forward = F32 * b * (3 * n * n + c * n * n + c * h * h + 2 * c * h * h) + 8 * b * c * h * h
    assert s["verdict"] == "confirmed" and "peak" in s["confirmed_by"], s
    assert s["fixed"]["peak_bytes"] == 0, s["fixed"]
    within(s["bad"]["peak_bytes"], forward, 0.9, 2.5, "OOM201 peak")


@test("probe: OOM401 an out-of-place update under no_grad costs one more buffer at the peak")
def _():
    s = scenario(full_run(), "OOM401/normalize")
    p = s["params"]
    assert s["verdict"] == "confirmed" and "resident peak" in s["confirmed_by"], s
    within(s["bad"]["rss_peak_bytes"] - s["fixed"]["rss_peak_bytes"], F32 * p["rows"] * p["cols"], 0.75, 1.5,
           "OOM401 resident peak")


@test("probe: OOM603 zero-filled gradients raise the peak by what the forward overlaps with them")
def _():
    s = scenario(full_run(), "OOM603/train")
    p = s["params"]
    assert s["verdict"] == "confirmed" and "peak" in s["confirmed_by"], s
    within(s["bad"]["peak_bytes"] - s["fixed"]["peak_bytes"], min(mlp_saved(p), mlp_params(p)), 0.5, 1.05,
           "OOM603 peak")


@test("probe: OOM705 anomaly detection makes each step slower")
def _():
    s = scenario(full_run(), "OOM705/transformer")
    assert s["verdict"] == "confirmed" and "time" in s["confirmed_by"], s
    assert s["bad"]["fastest_step_s"] > 1.1 * s["fixed"]["fastest_step_s"], s


@test("probe: --plot draws one panel per scenario, bad against fixed")
def _():
    doc = full_run()
    svg = _full["svg"]
    assert svg, "no plot written"
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text or "" for t in root.iter(ns + "text")]
    for s in doc["scenarios"]:
        assert any(t.startswith(f"{s['rule']} {s['scenario']}") for t in texts), (s["rule"], s["scenario"])
    measured = sum(1 for s in doc["scenarios"] if s["bad"])
    assert len(list(root.iter(ns + "polyline"))) >= 2 * measured
    # every legend off its panel's figures; a scenario without figures says so, with no axis
    panels = plot_panels(root, with_figures=False)
    assert len(panels) == len(doc["scenarios"]), len(panels)
    assert sum(1 for p in panels if p["data"]) == measured, [p["title"] for p in panels]
    assert all("no figures" in p["texts"] for p in panels if not p["data"]), panels


@test("probe: the text table lists every scenario with its verdict")
def _():
    r = run("probe", "--device", "cpu", "--rules", "OOM102", "--iterations", "4", timeout=600)
    assert r.code == 0, r
    assert re.search(r"^OOM102\s+eval\s+confirmed\s+yes", r.out, re.M), r
    assert re.search(r"^OOM102\s+train\s+confirmed\s+yes", r.out, re.M), r
    assert "the graph is held by `outputs`" in r.out, r


@test("probe: a progress line on a terminal, none otherwise")
def _():
    import pty
    master, slave = pty.openpty()
    env = dict(os.environ, NO_COLOR="1", TERM="xterm")
    proc = subprocess.Popen([harness.BIN, "probe", "--device", "cpu", "--rules", "OOM106", "--iterations", "4"],
                            env=env, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=600)
    os.close(master)
    assert proc.returncode == 0, seen
    text = seen.decode("utf-8", "replace")
    assert "\r\x1b[K[1/2] OOM106/gradient-penalty bad" in text or "\r\x1b[K[2/2] OOM106/" in text, text
    assert re.search(r"step \d/4, \d+\.\d s", text), text
    assert "OOM106" in out and "\r" not in out, out
    r = run("probe", "--device", "cpu", "--rules", "OOM106", "--iterations", "4", timeout=600)
    assert r.code == 0 and "\r" not in r.err, r


# ---- robustness ----------------------------------------------------------------------

FAULTS = '''"""Scenarios that misbehave, for the probe's tests."""
import os
import sys
import time

from . import scenario

SIZES = dict(n=4)


@scenario("TEST901", "crash", claims=("growth",), sizes=SIZES, scale=lambda p: 1024, summary="crashes")
def crash(run, bad):
    for _ in run.steps():
        if bad:
            raise RuntimeError("boom from the bad variant")
        run.checksum(1.0)


@scenario("TEST902", "hang", claims=("growth",), sizes=SIZES, scale=lambda p: 1024, summary="hangs")
def hang(run, bad):
    for _ in run.steps():
        if bad:
            time.sleep(3600)
        run.checksum(1.0)


@scenario("TEST903", "garbage", claims=("growth",), sizes=SIZES, scale=lambda p: 1024, summary="garbage")
def garbage(run, bad):
    for _ in run.steps():
        if bad:
            run.out.write("this is not a record\\n")
            run.out.flush()
        run.checksum(1.0)


@scenario("TEST904", "disagree", claims=("growth",), sizes=SIZES, scale=lambda p: 1024, summary="disagrees")
def disagree(run, bad):
    for _ in run.steps():
        run.checksum(2.0 if bad else 1.0)


@scenario("TEST905", "fine", claims=("growth",), sizes=SIZES, scale=lambda p: 1024, summary="fine")
def fine(run, bad):
    for _ in run.steps():
        run.checksum(1.0)
'''


def probe_copy(ws, extra=None):
    dest = os.path.join(ws.path, "probe")
    shutil.copytree(PROBE_DIR, dest, ignore=shutil.ignore_patterns("__pycache__", "results"))
    if extra:
        with open(os.path.join(dest, "scenarios", "zz_faults.py"), "w") as f:
            f.write(extra)
    return dest


@test("probe: a scenario that crashes, hangs or writes garbage is reported; the others still run")
def _():
    with Workspace() as ws:
        d = probe_copy(ws, FAULTS)
        t0 = time.time()
        r = run("probe", "--device", "cpu", "--rules", "TEST9", "--iterations", "4", "--timeout", "40", "--jobs", "5",
                "--format", "json", env={"OOMLINT_PROBE_DIR": d}, timeout=600)
        took = time.time() - t0
        assert r.code == 1, r
        doc = r.json()
        got = {s["rule"]: s for s in doc["scenarios"]}
        assert set(got) == {"TEST901", "TEST902", "TEST903", "TEST904", "TEST905"}, got.keys()
        assert got["TEST901"]["verdict"] == "crashed", got["TEST901"]
        assert "boom from the bad variant" in got["TEST901"]["error"], got["TEST901"]
        assert got["TEST902"]["verdict"] == "timed out", got["TEST902"]
        assert got["TEST903"]["verdict"] == "bad output", got["TEST903"]
        assert "this is not a record" in got["TEST903"]["error"], got["TEST903"]
        assert got["TEST904"]["agree"] is False and "iteration 0" in got["TEST904"]["agree_detail"], got["TEST904"]
        assert got["TEST905"]["agree"] is True and got["TEST905"]["verdict"] == "no measurable cost", got["TEST905"]
        assert took < 300, f"the hung variant was not stopped in time ({took:.0f} s)"


@test("probe: interrupted, it stops its children and removes its temporary folder")
def _():
    with Workspace() as ws:
        tmp = os.path.join(ws.path, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ, NO_COLOR="1", TMPDIR=tmp)
        env.pop("OOMLINT_PROBE_DIR", None)
        # the embedded files (no OOMLINT_PROBE_DIR): the temporary folder is ours to check
        proc = subprocess.Popen([harness.BIN, "probe", "--device", "cpu", "--rules", "OOM105", "--iterations", "2000"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 300
        made = []
        while time.time() < deadline and not made:
            time.sleep(0.5)
            made = [n for n in os.listdir(tmp) if n.startswith("oomlint-probe-")]
        assert made, "the probe made no temporary folder"
        folder = os.path.join(tmp, made[0])
        # wait until a variant runs: a child whose command line is `.../harness.py run ...`
        children = []
        while time.time() < deadline and not children:
            time.sleep(0.5)
            children = processes_mentioning(folder + "/harness.py\0run\0")
        assert children, "no variant started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, (proc.returncode, err)
        assert "interrupted" in err, repr(err)
        assert not os.path.exists(folder), f"{folder} left behind"
        time.sleep(0.5)
        assert not processes_mentioning(folder), "children left running"


def processes_mentioning(text):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmd:
            found.append(int(pid))
    return found


@test("probe: the installed binary carries its Python files (no source tree needed)")
def _():
    with Workspace() as ws:
        binary = os.path.join(ws.path, "oomlint")
        shutil.copy(harness.BIN, binary)
        tmp = os.path.join(ws.path, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ, NO_COLOR="1", TMPDIR=tmp)
        env.pop("OOMLINT_PROBE_DIR", None)
        proc = subprocess.run([binary, "probe", "--device", "cpu", "--rules", "OOM106", "--iterations", "4",
                               "--format", "json"], cwd=ws.path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert [s["rule"] for s in doc["scenarios"]] == ["OOM106"], doc
        assert os.listdir(tmp) == [], f"temporary files left: {os.listdir(tmp)}"


@test("probe: usage errors exit 2 and name the problem")
def _():
    cases = [
        (["probe", "--device", "tpu"], "--device"),
        (["probe", "--iterations", "2"], "--iterations"),
        (["probe", "--frobnicate"], "--frobnicate"),
        (["probe", "--steps", "5"], "--script"),
        (["probe", "--script", "x.py", "--rules", "OOM101"], "--rules"),
        (["probe", "train.py"], "--script"),
        (["probe", "--format", "sarif"], "--format"),
        (["probe", "--script"], "needs a value"),
        (["probe", "--", "a"], "--script"),
    ]
    for args, needle in cases:
        r = run(*args)
        assert r.code == 2, (args, r)
        assert needle in r.err, (args, r)
    r = run("probe", "--help")
    assert r.code == 0 and "--script" in r.out and "needs a GPU" in r.out, r
    r = run("--help")
    assert "oomlint probe" in r.out, r


@test("probe: a Python without torch, or none at all, is one clear message and exit 2")
def _():
    with Workspace() as ws:
        fake = ws.write("python3", "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
        os.chmod(fake, 0o755)
        r = run("probe", "--python", fake)
        assert r.code == 2, r
        assert "No module named 'torch'" in r.err and fake in r.err, r
        assert r.err.count("error:") == 1, r
        r = run("probe", "--python", os.path.join(ws.path, "missing-python"))
        assert r.code == 2 and "missing-python" in r.err, r
        r = run("probe", "--plot", os.path.join(ws.path, "no", "such", "dir", "p.svg"))
        assert r.code == 2 and "cannot write the plot" in r.err, r


@test("probe: --device cuda without a GPU says what is missing, exit 2")
def _():
    py = torch_python()
    has_cuda = subprocess.run([py, "-c", "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
                              capture_output=True).returncode == 0
    r = run("probe", "--device", "cuda", "--rules", "OOM101", timeout=600)
    if has_cuda:
        assert r.code in (0, 1), r
    else:
        assert r.code == 2, r
        assert "sees no CUDA device" in r.err, r


# ---- --script ---------------------------------------------------------------------------

LEAK = '''import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
crit = nn.CrossEntropyLoss()
history = []
running = 0.0
for step in range(1000):
    x = torch.randn(32, 64)
    y = torch.randint(10, (32,))
    opt.zero_grad()
    out = model(x)
    loss = crit(out, y)
    loss.backward()
    opt.step()
    running += loss
    history.append(out)
print("done", float(running))
'''
FIXED = LEAK.replace("running += loss\n", "running += loss.item()\n").replace(
    "history.append(out)\n", "history.append(out.detach())\n")

RNN = '''import torch
from torch import nn


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.cell = nn.RNNCell(32, 64)
        self.out = nn.Linear(64, 100)

    def forward(self, tokens, hidden):
        outs = []
        for t in range(tokens.shape[0]):
            hidden = self.cell(self.embed(tokens[t]), hidden)
            outs.append(hidden)
        return self.out(torch.stack(outs)), hidden


def train():
    torch.manual_seed(0)
    model = LM()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    crit = nn.CrossEntropyLoss()
    hidden = torch.zeros(8, 64)
    for step in range(1000):
        tokens = torch.randint(100, (13, 8))
        opt.zero_grad()
        output, hidden = model(tokens[:-1], hidden)
        loss = crit(output.reshape(-1, 100), tokens[1:].reshape(-1))
        loss.backward(retain_graph=True)
        opt.step()


train()
'''


def line_of(source, text):
    for i, line in enumerate(source.split("\n"), start=1):
        if text in line:
            return i
    raise AssertionError(text)


@test("probe: --script confirms OOM101 and OOM102 at their lines in a leaking training script")
def _():
    with Workspace() as ws:
        script = ws.write("train.py", LEAK)
        r = run("probe", "--script", script, "--steps", "8", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        assert "runs your code" in r.err, r
        doc = r.json()
        assert doc["steps"] == 8, doc
        got = {(f["code"], f["line"]): f for f in doc["findings"]}
        f101 = got.get(("OOM101", line_of(LEAK, "running += loss")))
        f102 = got.get(("OOM102", line_of(LEAK, "history.append(out)")))
        assert f101 and f101["status"] == "confirmed", doc
        assert f102 and f102["status"] == "confirmed", doc
        # Linear, ReLU, Linear: two addmm + two transposes + ReLU; cross-entropy two more; `+=` one
        within(f101["growth_nodes_per_step"], 5 + 2 + 1, 0.9, 1.1, "running's nodes per step")
        within(f102["growth_nodes_per_step"], 5, 0.9, 1.1, "history's nodes per step")
        assert f101["held_by"] == "running" and f102["held_by"] == "history", doc
        assert doc["unflagged"] == [], doc
        r = run("probe", "--script", script, "--steps", "8", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        assert re.search(r"train\.py:%d:\d+: OOM101 .*: confirmed \(\+8\.0 autograd nodes per step at line %d"
                         % (line_of(LEAK, "running += loss"), line_of(LEAK, "running += loss")), r.out), r
        assert "No growth at lines no rule flagged." in r.out, r


@test("probe: --script checks a script under tests/ against every rule; the default test-code ignores stay for the CLI")
def _():
    with Workspace() as ws:
        script = ws.write(os.path.join("tests", "smoke_train.py"), LEAK)
        lint = run("--format", "json", script, cwd=ws.path)
        assert not any(f["code"] == "OOM101" for f in lint.json()), lint
        r = run("probe", "--script", script, "--steps", "4", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        got = {(f["code"], f["line"]): f for f in r.json()["findings"]}
        f101 = got.get(("OOM101", line_of(LEAK, "running += loss")))
        assert f101 and f101["status"] == "confirmed", r.json()
        # the configuration's own per-file-ignores still apply
        ws.write("pyproject.toml", '[tool.oomlint]\nper-file-ignores = { "tests/**" = ["OOM101"] }\n')
        r = run("probe", "--script", script, "--steps", "4", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        assert not any(f["code"] == "OOM101" for f in r.json()["findings"]), r.json()


@test("probe: --script sees nothing in the fixed twin")
def _():
    with Workspace() as ws:
        script = ws.write("train.py", FIXED)
        r = run("probe", "--script", script, "--steps", "8", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        doc = r.json()
        assert all(f["status"] != "confirmed" for f in doc["findings"]), doc
        assert doc["unflagged"] == [], doc
        assert doc["total"]["saved_growth_bytes_per_step"] == 0, doc


@test("probe: --script attributes a carried hidden state's memory to the forward line")
def _():
    with Workspace() as ws:
        script = ws.write("lm.py", RNN)
        r = run("probe", "--script", script, "--steps", "8", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        doc = r.json()
        line = line_of(RNN, "output, hidden = model(")
        got = {(f["code"], f["line"]): f for f in doc["findings"]}
        f105 = got.get(("OOM105", line))
        assert f105 and f105["status"] == "confirmed", doc
        # per batch the chain keeps: 12 steps x 8 rows of embeddings (32) and states (64), float32, and the ids
        expected = 4 * 12 * 8 * (32 + 64) + 8 * 12 * 8
        within(f105["growth_bytes_per_step"], expected, 0.8, 1.3, "hidden chain growth")
        assert doc["unflagged"] == [], doc


@test("probe: --script passes arguments through and reports a script that fails before its first step")
def _():
    with Workspace() as ws:
        script = ws.write("args.py", "import sys\nimport torch\nraise SystemExit('bad args: ' + ' '.join(sys.argv[1:]))\n")
        r = run("probe", "--script", script, "--", "--lr", "0.1", cwd=ws.path, timeout=600)
        assert r.code == 1, r
        assert "made no optimizer step: it exited with status 1 (sys.exit('bad args: --lr 0.1'))" in r.err, r
        r = run("probe", "--script", os.path.join(ws.path, "missing.py"))
        assert r.code == 2 and "missing.py" in r.err, r
        r = run("probe", "--script", ws.path)
        assert r.code == 2 and "not a regular file" in r.err, r
        r = run("probe", "--script", ws.write("nb.ipynb", "{}"))
        assert r.code == 2 and "nbconvert" in r.err, r


# ---- a script written for CUDA, on the CPU ----------------------------------------------

CUDA_DIR = os.path.join(ROOT, "tests", "probe_scripts")
CUDA_STEPS = 6
# cuda_leak.py's model and batch
IN, HID, OUT, BATCH = 512, 1024, 1000, 64
PARAM_BYTES = F32 * (IN * HID + HID + HID * OUT + OUT)
# what one training step keeps for backward: the input and the ReLU output
# (saved by the two addmm and the ReLU), cross-entropy's log-softmax output and
# the int64 labels
SAVED_BYTES = F32 * BATCH * (IN + HID + OUT) + 8 * BATCH
LOGITS_BYTES = F32 * BATCH * OUT
# The budget's parts are tensor storages; the measured total is glibc's heap in
# use since the script started, which also holds autograd nodes, Python's
# larger objects and torch's own buffers: they agree within this margin.
MARGIN = lambda total: max(0.05 * total, 1 << 20)  # noqa: E731


def cuda_source(name):
    with open(os.path.join(CUDA_DIR, name)) as f:
        return f.read()


def probe_cuda_script(ws, name, *extra):
    script = ws.write(name, cuda_source(name))
    return run("probe", "--script", script, "--device", "cpu", "--steps", str(CUDA_STEPS), "--memory", "24GiB",
               *extra, cwd=ws.path, timeout=600)


@test("probe: a leaky script written for CUDA runs on the CPU, confirmed at its line with its growth in bytes")
def _():
    source = cuda_source("cuda_leak.py")
    with Workspace() as ws:
        r = probe_cuda_script(ws, "cuda_leak.py", "--output-format", "json")
        assert r.code == 0, r
        doc = r.json()
        assert doc["steps"] == CUDA_STEPS and "error" not in doc, doc
        mapped = doc["cuda_on_cpu"]
        calls = {c["what"]: c["count"] for c in mapped["calls"]}
        assert mapped["mapped"] and mapped["autocast"] == "off" and mapped["grad_scaler"] == "disabled", mapped
        for what in ('.to("cuda")', 'model.to("cuda")', 'device="cuda"', "GradScaler disabled",
                     "autocast(cuda) off", "pin_memory", "torch.cuda.synchronize"):
            assert calls.get(what, 0) >= 1, (what, calls)
        assert "needs_a_gpu" in mapped and "mixed precision" in mapped["needs_a_gpu"], mapped
        line = line_of(source, "seen.append(logits)")
        got = {(f["code"], f["line"]): f for f in doc["findings"]}
        f102 = got.get(("OOM102", line))
        assert f102 and f102["status"] == "confirmed" and f102["held_by"] == "seen", doc["findings"]
        within(f102["growth_bytes_per_step"], LOGITS_BYTES, 0.99, 1.01, "the kept logits per step")
        assert doc["unflagged"] == [], doc["unflagged"]
        # what grew, by the line that created it, and the finding it belongs to
        grew = doc["growth_by_line"]
        assert len(grew) == 1, grew
        g = grew[0]
        assert g["line"] == line_of(source, "logits = model(x)") and g["held_by"] == "seen", g
        assert g["finding"] == {"code": "OOM102", "line": line}, g
        assert g["bytes_since_first_step"] == (CUDA_STEPS - 1) * LOGITS_BYTES, g
        # the budget, from the sizes
        b = doc["budget"]
        back, end = b["at_backward"], b["at_step_end"]
        assert b["step"] == CUDA_STEPS, b
        assert back["parameters"] == end["parameters"] == PARAM_BYTES, b
        assert end["gradients"] == PARAM_BYTES and back["gradients"] == 0, b  # zero_grad(set_to_none=True)
        # AdamW: two moments per parameter, and a scalar step count per tensor
        assert 2 * PARAM_BYTES <= end["optimizer"] <= 2 * PARAM_BYTES + 64, b
        within(back["saved"], SAVED_BYTES, 0.99, 1.01, "kept for backward when backward starts")
        assert end["saved"] == 0, b
        assert b["grown_since_first_step"]["other"] == (CUDA_STEPS - 1) * LOGITS_BYTES, b
        for census in (back, end):
            parts = sum(census[k] for k in ("parameters", "gradients", "optimizer", "saved", "other"))
            assert parts == census["total"], census
            assert abs(census["measured"] - census["total"]) <= MARGIN(census["measured"]), census
        # when it runs out, from the reported figures
        p = doc["projection"]
        assert p["memory_bytes"] == 24 << 30 and p["peak_growth_bytes_per_step"] == LOGITS_BYTES, p
        expect = CUDA_STEPS + -(-(p["memory_bytes"] - p["peak_bytes_last_step"]) // LOGITS_BYTES)
        assert p["out_of_memory_at_step"] == expect, (p, expect)
        assert p["batch"] == BATCH and p["fixed_bytes"] == 4 * PARAM_BYTES + (end["optimizer"] - 2 * PARAM_BYTES), p
        # what scales with the batch: what is kept for backward, and the step's own logits (the
        # kept ones grew, and are counted by the step above)
        assert p["per_batch_bytes"] == back["saved"] + LOGITS_BYTES, p
        factor = (p["memory_bytes"] - p["fixed_bytes"]) / p["per_batch_bytes"]
        assert p["largest_batch"] == int(BATCH * factor), (p, factor)
        assert "linear" in p["assumptions"], p
        # the table and the plot
        svg = os.path.join(ws.path, "budget.svg")
        r = probe_cuda_script(ws, "cuda_leak.py", "--plot", svg)
        assert r.code == 0, r
        head = r.out.split("\n")[1]
        assert head.startswith("CUDA mapped to the CPU"), r.out
        assert "Needs a GPU, not measured here" in r.out, r.out
        assert re.search(r"cuda_leak\.py:%d:\d+: OOM102 .*: confirmed \(\+250\.0 KiB and \+5\.0 autograd nodes per "
                         r"step at line %d, held by `seen`\)" % (line, line), r.out), r.out
        table = r.out[r.out.index("Memory budget at step"):]
        assert all(len(x) <= 100 for x in table.split("\n")), table
        assert re.search(r"other live tensors +[\d.]+ [KM]iB +[\d.]+ [KM]iB +\+1\.2 MiB", table), table
        assert "cuda_leak.py:%d: +1.2 MiB (+250.0 KiB per step), kept by `seen`: OOM102 at line %d" % (
            line_of(source, "logits = model(x)"), line) in table, table
        assert "When it runs out (against 24.00 GiB, --memory):" in table, table
        tree = ET.parse(svg)
        ns = "{http://www.w3.org/2000/svg}"
        first = tree.getroot().findall(f"{ns}g")[0]
        assert "memory per step" in first.find(f"{ns}text").text, ET.tostring(first)[:300]
        # a layer per part that is not 0 throughout: kept for backward is 0 when each step ends
        assert len(first.findall(f"{ns}polygon")) == 4, ET.tostring(first)[:300]


@test("probe: the fixed twin written for CUDA is not confirmed, and nothing grows")
def _():
    with Workspace() as ws:
        r = probe_cuda_script(ws, "cuda_fixed.py", "--format", "json")
        assert r.code == 0, r
        doc = r.json()
        assert "error" not in doc and doc["cuda_on_cpu"]["mapped"], doc
        assert all(f["status"] != "confirmed" for f in doc["findings"]), doc["findings"]
        assert not any(f["code"] == "OOM102" for f in doc["findings"]), doc["findings"]
        assert doc["unflagged"] == [] and doc["growth_by_line"] == [], doc
        assert doc["budget"]["grown_since_first_step"]["total"] == 0, doc["budget"]
        assert doc["projection"]["out_of_memory_at_step"] is None, doc["projection"]
        end = doc["budget"]["at_step_end"]
        assert end["parameters"] == end["gradients"] == PARAM_BYTES, end


# ---- the plot's structure ------------------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def svg_box(el):
    return tuple(float(el.get(k)) for k in ("x", "y", "width", "height"))


def svg_points(el):
    return [tuple(float(v) for v in p.split(",")) for p in el.get("points").split()]


def overlaps(a, b):
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def plot_panels(root, with_figures=True):
    """Each panel of a probe plot: its title, plot area, figures and legend box.
    A panel with figures draws something off its baseline (no empty axis),
    and its legend box lies outside its plot area and covers no figure; a
    panel without them says so and draws no axis."""
    panels = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "panel":
            continue
        title = g.find(SVG + "text").text
        area = [r for r in g.iter(SVG + "rect") if r.get("class") == "plot-area"]
        assert len(area) == 1, title
        ax, ay, aw, ah = area = svg_box(area[0])
        data = [e for e in g.iter() if e.get("class") == "data"]
        boxes = [r for r in g.iter(SVG + "rect") if r.get("class") == "legend-box"]
        texts = [t.text or "" for t in g.iter(SVG + "text")]
        if not data:
            assert not with_figures, f"panel {title!r} is empty"
            assert not boxes and not any(t.endswith(" B") for t in texts), (title, texts)
            panels.append({"title": title, "area": area, "data": [], "texts": texts})
            continue
        points = [p for e in data for p in svg_points(e)]
        assert any(y < ay + ah - 0.5 for _, y in points), f"panel {title!r} draws nothing off its baseline"
        assert len(boxes) == 1, f"panel {title!r}: {len(boxes)} legend boxes"
        box = svg_box(boxes[0])
        assert not overlaps(box, area), f"panel {title!r}: its legend {box} sits on its plot area {area}"
        bx, by, bw, bh = box
        on = [(x, y) for x, y in points if bx <= x <= bx + bw and by <= y <= by + bh]
        assert not on, f"panel {title!r}: the legend covers figures at {on[:3]}"
        panels.append({"title": title, "area": area, "data": data, "texts": texts, "g": g})
    return panels


def check_script_plot(path, memory_label, oom_step):
    """A --script plot drawn against --memory: the budget panel first, no
    empty panel, the --memory line across the last panel's plot area and the
    run-out step up it."""
    root = ET.parse(path).getroot()
    panels = plot_panels(root)
    assert panels and panels[0]["title"].startswith("memory per step"), [p["title"] for p in panels]
    assert not any("saved for backward" in p["title"] for p in panels), [p["title"] for p in panels]
    last = panels[-1]
    ax, ay, aw, ah = last["area"]
    memory = [ln for ln in last["g"].iter(SVG + "line") if ln.get("class") == "memory"]
    assert len(memory) == 1, last["title"]
    y1, y2 = float(memory[0].get("y1")), float(memory[0].get("y2"))
    assert y1 == y2 and ay <= y1 <= ay + ah, memory[0].attrib
    assert float(memory[0].get("x1")) == ax and float(memory[0].get("x2")) == ax + aw, memory[0].attrib
    assert memory_label in last["texts"], last["texts"]
    runout = [ln for ln in last["g"].iter(SVG + "line") if ln.get("class") == "run-out"]
    assert len(runout) == 1 and f"runs out at step {oom_step:,}" in last["texts"], last["texts"]
    assert abs(float(runout[0].get("x1")) - (ax + aw)) < 0.5, runout[0].attrib  # the axis ends at that step
    assert f"{oom_step:,}" in last["texts"], last["texts"]
    return panels


@test("probe: --script plot: legends off the figures, no empty panel, each byte once, --memory and the run-out drawn")
def _():
    source = cuda_source("cuda_leak.py")
    with Workspace() as ws:
        svg = os.path.join(ws.path, "budget.svg")
        r = probe_cuda_script(ws, "cuda_leak.py", "--plot", svg, "--format", "json")
        assert r.code == 0, r
        doc = r.json()
        panels = check_script_plot(svg, "--memory 24.00 GiB", doc["projection"]["out_of_memory_at_step"])
        # the budget, what grows (the logits `seen` keeps, once: not again by the line that made them), when
        titles = [p["title"] for p in panels]
        assert titles[1:] == ["cuda_leak.py:%d `seen`: OOM102" % line_of(source, "seen.append(logits)"),
                              "when it runs out"], titles


@test("probe: the README's budget plot (docs/probe-budget.svg) is drawn by the current plotter")
def _():
    path = os.path.join(ROOT, "docs", "probe-budget.svg")
    with open(os.path.join(ROOT, "docs", "probe.md")) as f:
        doc = f.read()
    # the run the docs show made it: its projected step is the one the text gives
    step = int(re.search(r"At step ([\d,]+) at the current rate", doc).group(1).replace(",", ""))
    assert "--plot ../../docs/probe-budget.svg" in doc and "--memory 24GiB" in doc, "docs/probe.md's command"
    check_script_plot(path, "--memory 24.00 GiB", step)


# retain_graph_loop.py's model and batch, and what one step keeps for backward:
# the input, the ReLU output (saved by the ReLU and the second addmm), the
# log-softmax output, the int64 labels and nll_loss's total weight (a float32
# scalar)
R_IN, R_HID, R_OUT, R_BATCH = 256, 1024, 100, 128
R_SAVED = F32 * R_BATCH * (R_IN + R_HID + R_OUT) + 8 * R_BATCH + F32
R_PARAMS = F32 * (R_IN * R_HID + R_HID + R_HID * R_OUT + R_OUT)
R_STEPS = 6


@test("probe: OOM101 says backward freed what the graph saved only where that backward did not keep it")
def _():
    source = cuda_source("retain_graph_loop.py")
    with Workspace() as ws:
        for form, freed in (("loss.backward(retain_graph=True)", False), ("loss.backward(None, True)", False),
                            ("loss.backward(retain_graph=False)", True), ("loss.backward()", True)):
            script = ws.write("train.py", source.replace("loss.backward(retain_graph=True)", form))
            lint = run("--format", "json", script, cwd=ws.path)
            msgs = {f["code"]: f["message"] for f in lint.json()}
            assert "OOM101" in msgs, (form, msgs)
            assert ("freed what it saved" in msgs["OOM101"]) == freed, (form, msgs["OOM101"])
            assert "every iteration's graph" in msgs["OOM101"], (form, msgs["OOM101"])


@test("probe: backward(retain_graph=True) summed into a total: OOM103 and OOM101 confirmed with the growth, "
      "every message true")
def _():
    source = cuda_source("retain_graph_loop.py")
    backward_line = line_of(source, "loss.backward(retain_graph=True)")
    total_line = line_of(source, "total += loss")
    with Workspace() as ws:
        script = ws.write("retain_graph_loop.py", source)
        svg = os.path.join(ws.path, "retain.svg")
        args = ("probe", "--script", script, "--steps", str(R_STEPS), "--memory", "24GiB")
        r = run(*args, "--format", "json", "--plot", svg, cwd=ws.path, timeout=600)
        assert r.code == 0, r
        doc = r.json()
        got = {f["code"]: f for f in doc["findings"]}
        f103, f101 = got["OOM103"], got["OOM101"]
        assert f103["line"] == backward_line and f101["line"] == total_line, doc["findings"]
        # both confirmed, with the same growth: a step's saved tensors, kept by `total`
        for f in (f103, f101):
            assert f["status"] == "confirmed" and f["held_by"] == "total", f
            within(f["growth_bytes_per_step"], R_SAVED, 0.99, 1.01, f"{f['code']} growth per step")
        within(f103["kept_after_backward_bytes"], R_STEPS * R_SAVED, 0.99, 1.01, "kept after backward")
        assert doc["unflagged"] == [], doc["unflagged"]
        # what grew, by the line that made it, belongs to both findings
        grew = doc["growth_by_line"]
        assert grew and sum(g["bytes_since_first_step"] for g in grew) == (R_STEPS - 1) * R_SAVED, grew
        for g in grew:
            assert g["part"] == "saved" and g["held_by"] == "total", g
            assert {(x["code"], x["line"]) for x in g["findings"]} == {("OOM103", backward_line),
                                                                    ("OOM101", total_line)}, g
        # the budget is at the last step, and so is its growth
        b = doc["budget"]
        assert b["step"] == R_STEPS, b
        assert b["grown_since_first_step"]["saved"] == (R_STEPS - 1) * R_SAVED, b
        assert b["at_step_end"]["saved"] == R_STEPS * R_SAVED, b
        # the largest batch counts one batch's memory, not what leaked: docs/probe.md's formula
        p = doc["projection"]
        assert p["fixed_bytes"] == 3 * R_PARAMS, p  # parameters, gradients, momentum
        assert p["per_batch_bytes"] == R_SAVED, p
        assert p["largest_batch"] == int(R_BATCH * ((p["memory_bytes"] - p["fixed_bytes"]) / R_SAVED)), p
        assert p["largest_batch"] > 4_000_000, p
        check_script_plot(svg, "--memory 24.00 GiB", p["out_of_memory_at_step"])
        titles = [t["title"] for t in plot_panels(ET.parse(svg).getroot())]
        assert titles == ["memory per step, by part", f"retain_graph_loop.py:{total_line} `total`: OOM103, OOM101",
                          "when it runs out"], titles
        r = run(*args, cwd=ws.path, timeout=600)
        assert r.code == 0, r
        out = r.out
        assert re.search(r"OOM103 .*: confirmed \(\+691\.0 KiB per step at line %d: saved tensors this backward "
                         r"kept, held by `total`\)" % backward_line, out), out
        assert "not observed" not in out and "no line of yours" not in out, out
        assert "Memory budget at step %d," % R_STEPS in out and "Grew from step 1 to step %d," % R_STEPS in out, out
        assert re.search(r"kept for backward +[\d.]+ [KM]iB +[\d.]+ [KM]iB +\+3\.4 MiB", out), out
        # the fixed sum: the kept graph is dropped each step, a peak OOM103 still confirms
        fixed = ws.write("retain_item.py", source.replace("total += loss\n", "total += loss.item()\n"))
        r = run("probe", "--script", fixed, "--steps", str(R_STEPS), "--memory", "24GiB", "--format", "json",
                cwd=ws.path, timeout=600)
        assert r.code == 0, r
        doc = r.json()
        assert [f["code"] for f in doc["findings"]] == ["OOM103"], doc["findings"]
        f103 = doc["findings"][0]
        assert f103["status"] == "confirmed" and f103["growth_bytes_per_step"] == 0, f103
        within(f103["kept_after_backward_bytes"], R_SAVED, 0.99, 1.01, "one step's graph, kept after backward")
        assert doc["growth_by_line"] == [] and doc["projection"]["out_of_memory_at_step"] is None, doc
        assert doc["projection"]["per_batch_bytes"] == R_SAVED, doc["projection"]


@test("probe: the probe's own modules leave a script's harness.py, cudacpu.py and wrapper.py to it")
def _():
    with Workspace() as ws:
        ws.write("harness.py", "WHO = 'the script\\'s harness'\n\n\ndef run():\n    return 7\n")
        ws.write("cudacpu.py", "WHO = 'the script\\'s cudacpu'\n")
        ws.write("wrapper.py", "WHO = 'the script\\'s wrapper'\n")
        script = ws.write("train.py", """import torch
from torch import nn

import cudacpu
import harness
import wrapper
from harness import run

assert harness.WHO == "the script's harness" and run() == 7, harness.__file__
assert cudacpu.WHO == "the script's cudacpu" and wrapper.WHO == "the script's wrapper"
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    opt.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    opt.step()
""")
        r = run("probe", "--script", script, "--steps", "3", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 0, r
        doc = r.json()
        assert doc["steps"] == 3 and "error" not in doc, doc


EXITS = """import os
import torch
from torch import nn

model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    opt.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    opt.step()
    if step == 3:
        os._exit(3)
"""


@test("probe: a script that calls os._exit(3) is said to exit with status 3, after the step it reached")
def _():
    with Workspace() as ws:
        script = ws.write("exits.py", EXITS)
        exit_line = line_of(EXITS, "os._exit(3)")
        r = run("probe", "--script", script, "--steps", "10", "--format", "json", cwd=ws.path, timeout=600)
        assert r.code == 1, r
        assert f"exits.py exited with status 3 after step 4 of 10 (os._exit(3) at exits.py:{exit_line})" in r.err, r
        doc = r.json()
        assert doc["steps"] == 4, doc
        assert doc["end"] == {"reason": "exit", "after_step": 4, "exit_status": 3,
                              "detail": f"os._exit(3) at exits.py:{exit_line}"}, doc["end"]
        r = run("probe", "--script", script, "--steps", "10", cwd=ws.path, timeout=600)
        assert r.code == 1, r
        assert "The script exited with status 3 after step 4 of 10 (os._exit(3) at exits.py:%d)." % exit_line in r.out, r
        # an exit Python does not see reports no end: the status and the step still are said
        native = ws.write("native.py", EXITS.replace("os._exit(3)", "import posix; posix._exit(3)"))
        r = run("probe", "--script", native, "--steps", "10", cwd=ws.path, timeout=600)
        assert r.code == 1, r
        assert "native.py exited with status 3 after step 4 of 10" in r.err, r
        assert "made no optimizer step" not in r.err and "ran native.py for 4 optimizer steps" in r.out, r


@test("probe: torch.accelerator (current pytorch/examples) is CUDA on the CPU, with a module where torch has none")
def _():
    with Workspace() as ws:
        script = ws.write("accel.py", """import torch
import torch.accelerator
from torch import nn

use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
assert device.type == "cuda" and torch.accelerator.device_count() == 1
assert torch.accelerator.current_device_index() == 0
model = nn.Linear(8, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    x = torch.randn(4, 8).to(device)
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
    torch.accelerator.synchronize()
    assert torch.accelerator.memory.memory_allocated() > 0
    assert torch.accelerator.max_memory_allocated() >= torch.accelerator.memory_allocated()
""")
        r = run("probe", "--script", script, "--device", "cpu", "--steps", "3", "--format", "json", cwd=ws.path,
                timeout=600)
        assert r.code == 0, r
        doc = r.json()
        assert doc["steps"] == 3 and "error" not in doc, doc
        calls = {c["what"]: c["count"] for c in doc["cuda_on_cpu"]["calls"]}
        for what in ("torch.accelerator.is_available() True", "torch.accelerator.current_accelerator() cuda",
                     "torch.accelerator.synchronize", 'model.to("cuda")', '.to("cuda")'):
            assert calls.get(what, 0) >= 1, (what, calls)


@test("probe: distributed launches and CUDA extensions are out of scope on the CPU; --snapshot needs a GPU")
def _():
    with Workspace() as ws:
        # a script's `except Exception:` does not hide it
        dist = ws.write("ddp.py", "import torch\nimport torch.distributed as dist\n"
                                  "assert torch.ones(2).to(0).device.type == 'cpu'\n"
                                  "try:\n    dist.init_process_group('nccl')\nexcept Exception:\n    pass\n")
        r = run("probe", "--script", dist, "--device", "cpu", cwd=ws.path, timeout=600)
        assert r.code == 1, r
        assert "init_process_group) is out of scope on the CPU" in r.err, r
        ext = ws.write("ext.py", "from torch.utils.cpp_extension import load\n"
                                 "load(name='k', sources=['k.cpp', 'k_kernel.cu'])\n")
        r = run("probe", "--script", ext, "--device", "cpu", cwd=ws.path, timeout=600)
        assert r.code == 1 and "custom CUDA extension" in r.err and "out of scope" in r.err, r
        r = run("probe", "--script", ext, "--device", "cpu", "--snapshot", os.path.join(ws.path, "s.pickle"),
                cwd=ws.path, timeout=600)
        assert r.code == 2 and "--snapshot" in r.err and "needs a GPU" in r.err, r
        assert not os.path.exists(os.path.join(ws.path, "s.pickle")), r
        for args, needle in ((["--memory", "lots"], "--memory"), (["--memory", "0"], "--memory"),
                             (["--output-format", "sarif"], "--output-format")):
            r = run("probe", "--script", ext, *args)
            assert r.code == 2 and needle in r.err, (args, r)
        r = run("probe", "--memory", "24GiB")
        assert r.code == 2 and "--script" in r.err, r


DAEMONS = """import os
import sys
import time

pidfile = sys.argv[1]
# one daemon the classic way (fork, setsid, fork again, the middle one exits)
# and one that stays the script's own child in a session of its own
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        with open(pidfile + ".double", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(300)
    os._exit(0)
os.waitpid(first, 0)
if os.fork() == 0:
    os.setsid()
    with open(pidfile + ".single", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(300)
    os._exit(0)
while not (os.path.exists(pidfile + ".double") and os.path.exists(pidfile + ".single")):
    time.sleep(0.01)
raise SystemExit("started the daemons")
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@test("probe: a daemon the probed script starts with setsid() does not outlive the probe")
def _():
    with Workspace() as ws:
        script = ws.write("daemons.py", DAEMONS)
        pidfile = os.path.join(ws.path, "daemon.pid")
        r = run("probe", "--script", script, "--", pidfile, cwd=ws.path, timeout=600)
        assert "started the daemons" in r.err, r
        pids = []
        for kind in ("double", "single"):
            with open(f"{pidfile}.{kind}") as f:
                pids.append(int(f.read()))
        try:
            # the probe has exited: nothing it started may still run (it
            # killed and reaped them before exiting, so no grace period)
            assert not [p for p in pids if alive(p)], f"daemons {pids} outlived the probe"
        finally:
            for p in pids:
                if alive(p):
                    os.kill(p, signal.SIGKILL)


# ---- the committed figures ---------------------------------------------------------------

RESULTS = os.path.join(ROOT, "probe", "results", "cpu-torch1.13.json")


def committed():
    with open(RESULTS) as f:
        return json.load(f)


GPU_RESULTS = os.path.join(ROOT, "probe", "results", "h200-torch2.11.json")


def committed_gpu():
    with open(GPU_RESULTS) as f:
        return json.load(f)


@test("probe: the committed GPU results name their machine, agree everywhere, and account for every scenario")
def _():
    gpu, cpu = committed_gpu(), committed()
    assert gpu["device_kind"] == "cuda" and gpu["device"] == gpu["environment"]["gpu"], gpu["environment"]
    env = gpu["environment"]
    for key in ("driver", "torch", "cuda", "cudnn", "python"):
        assert env.get(key), (key, env)
    assert env["torch"] == gpu["torch"], env
    measured = {(s["rule"], s["scenario"]) for s in gpu["scenarios"]}
    missing = {(m["rule"], m["scenario"]) for m in gpu["not_measured"]}
    assert not measured & missing and all(m["why"] for m in gpu["not_measured"]), gpu["not_measured"]
    assert measured | missing == {(s["rule"], s["scenario"]) for s in cpu["scenarios"]}
    for s in gpu["scenarios"]:
        assert s["agree"] is True and s["verdict"] != "needs a GPU", s
        for side in ("bad", "fixed"):
            f = s[side]
            assert f["peak_bytes"] > 0 and f["reserved_peak_bytes"] >= f["peak_bytes"], s
            assert f["driver_peak_bytes"] >= f["reserved_peak_bytes"], s


@test("probe: the committed CPU results cover every scenario and were all in agreement")
def _():
    doc = committed()
    assert doc["device"] == "cpu" and doc["torch"].startswith("1.13"), doc["device"]
    current = {(s["rule"], s["scenario"]) for s in full_run()["scenarios"]}
    stored = {(s["rule"], s["scenario"]) for s in doc["scenarios"]}
    assert current == stored, f"rerun the probe and commit it: {sorted(current ^ stored)}"
    for s in doc["scenarios"]:
        assert s["agree"] is True, s


@test("probe: `oomlint rule` and SARIF quote the committed figures with device and torch version, the GPU's first")
def _():
    doc = committed()
    s = next(x for x in doc["scenarios"] if x["rule"] == "OOM101" and x["scenario"] == "eval")
    r = run("rule", "OOM101")
    assert r.code == 0, r
    assert "Measured (oomlint probe)" in r.out, r
    assert f"cpu, torch {doc['torch']}, scenario eval: {s['verdict']}" in r.out, r
    kib = s["bad"]["growth_bytes_per_step"] / 1024
    assert f"+{kib:.1f} KiB per step kept" in r.out, r
    gpu = committed_gpu()
    g = next(x for x in gpu["scenarios"] if x["rule"] == "OOM101" and x["scenario"] == "eval")
    head = f"{gpu['device']}, torch {gpu['torch']}, scenario eval: {g['verdict']}"
    assert head in r.out and r.out.index(head) < r.out.index("cpu, torch"), r.out
    mib = g["bad"]["growth_bytes_per_step"] / 2**20
    assert f"+{mib:.1f} MiB per step kept" in r.out and "the driver sees" in r.out, r.out
    assert "not measured yet" not in r.out, r.out
    md = run("rule", "OOM101", "--markdown").out
    assert "## Measured cost" in md and f"| cpu | {doc['torch']} | eval |" in md, md
    assert md.index(f"| {gpu['device']} | {gpu['torch']} | eval |") < md.index("| cpu |"), md
    assert md.count("- `eval`:") == 1, md
    # a scenario the GPU run did not reach says so, and why
    missing = {m["rule"]: m for m in gpu["not_measured"]}
    if missing:
        code, m = sorted(missing.items())[0]
        out = " ".join(run("rule", code).out.split())  # the text is wrapped to the terminal's width
        assert f"{gpu['device']}, torch {gpu['torch']}, scenario {m['scenario']}: not measured ({m['why']})" in out, out
    r = run("rule", "OOM601")
    assert "Measured" not in r.out, r
    with Workspace() as ws:
        r = run("--format", "sarif", ws.write("a.py", "import torch\n"))
        sarif = r.json()
        rules = {d["id"]: d for d in sarif["runs"][0]["tool"]["driver"]["rules"]}
        m = rules["OOM101"]["properties"]["measured"]
        assert any(x["device"] == "cpu" and x["torch"] == doc["torch"] and x["scenario"] == "eval" and
                   x["bad"]["growth_bytes_per_step"] == s["bad"]["growth_bytes_per_step"] for x in m), m
        assert m[0]["device"] == gpu["device"] and m[0]["bad"]["driver_peak_bytes"] > 0, m[0]
        assert m[0]["bad"]["growth_bytes_per_step"] == g["bad"]["growth_bytes_per_step"], m[0]
        assert "measured" not in rules["OOM601"]["properties"], rules["OOM601"]



# ---- on a live GPU: these run where PyTorch sees one and are skipped, visibly, where not ----

GPU_STEPS = 8
# gpu_*.py's model and batches: Linear(1024, 4096), ReLU, Linear(4096, 1000), batch 256
GPU_BATCH, GPU_HID, GPU_CLASSES = 256, 4096, 1000
# What one evaluation without no_grad keeps on the device until its total is
# dropped: the ReLU output (saved by the ReLU and the second addmm) and
# cross-entropy's log-softmax output. Its input, labels and weights are the
# same tensors every step.
GPU_EVAL_BYTES = F32 * GPU_BATCH * (GPU_HID + GPU_CLASSES)


def gpu_python():
    """The Python the probe will pick, where it sees a CUDA device; else Skip."""
    try:
        py = torch_python()
    except AssertionError as e:
        raise harness.Skip(f"no GPU: {e}")
    seen = subprocess.run([py, "-c", "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
                          capture_output=True).returncode == 0
    if not seen:
        raise harness.Skip(f"no GPU: PyTorch at {py} sees no CUDA device")
    return py


def probe_gpu_script(ws, name, *extra):
    script = ws.write(name, cuda_source(name))
    r = run("probe", "--script", script, "--device", "cuda", "--steps", str(GPU_STEPS), "--output-format", "json",
            *extra, cwd=ws.path, timeout=600)
    assert r.code == 0, r
    doc = r.json()
    assert doc["device"] == "cuda" and doc["steps"] == GPU_STEPS and "error" not in doc, doc
    assert "cuda_on_cpu" not in doc or not doc["cuda_on_cpu"].get("mapped"), doc["cuda_on_cpu"]
    return doc


def finding(doc, code, line):
    got = [f for f in doc["findings"] if f["code"] == code and f["line"] == line]
    assert len(got) == 1, (code, line, doc["findings"])
    return got[0]


def assert_twin_clean(doc):
    assert doc["findings"] == [] or all(f["status"] != "confirmed" for f in doc["findings"]), doc["findings"]
    assert doc["unflagged"] == [] and doc["growth_by_line"] == [], doc
    assert doc["total"]["cuda_growth_bytes_per_step"] < 4096, doc["total"]
    assert doc["projection"]["out_of_memory_at_step"] is None, doc["projection"]


@test("probe: GPU: an evaluation without no_grad summing its loss is confirmed at its line, in device bytes")
def _():
    gpu_python()
    source = cuda_source("gpu_eval_leak.py")
    with Workspace() as ws:
        snap = os.path.join(ws.path, "eval.pickle")
        doc = probe_gpu_script(ws, "gpu_eval_leak.py", "--snapshot", snap)
        f = finding(doc, "OOM101", line_of(source, "val_total += val_loss"))
        assert f["status"] == "confirmed" and f["held_by"] == "val_total", f
        within(f["growth_bytes_per_step"], GPU_EVAL_BYTES, 0.95, 1.1, "OOM101 growth on the device")
        within(doc["total"]["cuda_growth_bytes_per_step"], GPU_EVAL_BYTES, 0.95, 1.1, "allocated growth")
        assert os.path.getsize(snap) > 0, snap
        # the growing bytes were allocated by the evaluation's forward
        lines = {g["line"] for g in doc["growth_by_line"]}
        assert line_of(source, "val_loss = crit(model(val_x), val_y)") in lines, doc["growth_by_line"]
        assert doc["projection"]["out_of_memory_at_step"] is not None, doc["projection"]
    with Workspace() as ws:
        assert_twin_clean(probe_gpu_script(ws, "gpu_eval_fixed.py"))


@test("probe: GPU: a loss summed after backward() is confirmed by its graph; what the device keeps is measured")
def _():
    gpu_python()
    source = cuda_source("gpu_after_backward.py")
    with Workspace() as ws:
        doc = probe_gpu_script(ws, "gpu_after_backward.py")
        f = finding(doc, "OOM101", line_of(source, "running += loss"))
        assert f["status"] == "confirmed" and f["held_by"] == "running", f
        assert f["growth_nodes_per_step"] >= 4, f
        # backward() freed what the graph saved: the device keeps at most the
        # allocator's smallest blocks per step
        assert doc["total"]["cuda_growth_bytes_per_step"] < 4096, doc["total"]
    with Workspace() as ws:
        assert_twin_clean(probe_gpu_script(ws, "gpu_after_backward_fixed.py"))


@test("probe: GPU: stored logits under autocast and GradScaler are confirmed live; the twin is clean")
def _():
    gpu_python()
    source = cuda_source("cuda_leak.py")
    with Workspace() as ws:
        doc = probe_gpu_script(ws, "cuda_leak.py")
        f = finding(doc, "OOM102", line_of(source, "seen.append(logits)"))
        assert f["status"] == "confirmed" and f["growth_bytes_per_step"] > 0, f
    with Workspace() as ws:
        assert_twin_clean(probe_gpu_script(ws, "cuda_fixed.py"))


@test("probe: GPU: every scenario runs on the GPU, bad and fixed agree, with the driver's view")
def _():
    gpu_python()
    r = run("probe", "--device", "cuda", "--format", "json", timeout=3000)
    assert r.code == 0, r
    doc = r.json()
    assert doc["device_kind"] == "cuda" and doc["device"] != "cuda", doc
    assert {s["rule"] for s in doc["scenarios"]} == {s["rule"] for s in committed()["scenarios"]}, doc
    for s in doc["scenarios"]:
        assert s["agree"] is True and s["verdict"] != "needs a GPU", s
        for side in ("bad", "fixed"):
            assert s[side]["peak_bytes"] > 0 and s[side]["reserved_peak_bytes"] >= s[side]["peak_bytes"], s


@test("probe: docs/probe.md's GPU-against-CPU table and plot are what scripts/probe_compare.py makes of the results")
def _():
    with Workspace() as ws:
        doc = os.path.join(ws.path, "probe.md")
        svg = os.path.join(ws.path, "plot.svg")
        shutil.copy(os.path.join(ROOT, "docs", "probe.md"), doc)
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "probe_compare.py"), GPU_RESULTS, RESULTS,
                        "--write", doc, svg], check=True)
        for made, committed_path in ((doc, "probe.md"), (svg, "probe-gpu-cpu.svg")):
            with open(made) as a, open(os.path.join(ROOT, "docs", committed_path)) as b:
                assert a.read() == b.read(), f"rerun scripts/probe_compare.py: docs/{committed_path} is stale"
        root = ET.parse(svg).getroot()
        bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find(
            "{http://www.w3.org/2000/svg}title") is not None]
        gpu, cpu = committed_gpu(), committed()
        # a bar per measured device and scenario, for peak and time
        n_cpu = sum(1 for s in cpu["scenarios"] if isinstance(s.get("bad"), dict) and s["bad"].get("peak_bytes"))
        assert len(bars) == 2 * (len(gpu["scenarios"]) + n_cpu), len(bars)


@test("probe: scripts/probe_merge.py joins the GPU runs, names what no run reached, refuses disagreement")
def _():
    merge = os.path.join(ROOT, "scripts", "probe_merge.py")
    side = {"peak_bytes": 1, "growth_bytes_per_step": 0}

    def doc(*rules, agree=True, torch="2.11.0"):
        return json.dumps({"device": "GPU X", "device_kind": "cuda", "torch": torch, "iterations": 20,
                           "scenarios": [{"rule": r, "scenario": "s", "agree": agree, "bad": side, "fixed": side}
                                         for r in rules]})
    with Workspace() as ws:
        env = ws.write("env.txt", "2026-01-01T00:00:00Z\nname, driver_version, memory.total [MiB], pci.bus_id\n"
                                  "GPU X, 580.1, 1000 MiB, 0\npython 3.12.3\ntorch 2.11.0 cuda 13.0 cudnn 91900\n")
        a, b = ws.write("a.json", doc("OOM101")), ws.write("b.json", doc("OOM301"))
        out = os.path.join(ws.path, "out.json")
        r = subprocess.run([sys.executable, merge, out, env, a, b, "--missing", "OOM701/t=cut short"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(out) as f:
            m = json.load(f)
        assert [s["rule"] for s in m["scenarios"]] == ["OOM101", "OOM301"] and m["runs"] == 2, m
        assert m["environment"]["gpu"] == "GPU X" and m["environment"]["driver"] == "580.1", m["environment"]
        assert m["environment"]["cuda"] == "13.0" and m["not_measured"] == [
            {"rule": "OOM701", "scenario": "t", "why": "cut short"}], m
        for bad in (doc("OOM102", agree=False), doc("OOM101"), doc("OOM102", torch="2.10.0")):
            c = ws.write("c.json", bad)
            r = subprocess.run([sys.executable, merge, out + "2", env, a, c], capture_output=True, text=True)
            assert r.returncode != 0 and not os.path.exists(out + "2"), (bad, r)
