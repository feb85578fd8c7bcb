#!/usr/bin/env python3
"""oomlint's benchmark: measures and prints, asserts nothing.

On one corpus of real Python (Debian's python3-torch sources and CPython's
standard library, fetched with `apt-get download` and cached under
build/bench/, never committed), at 1 thread and at one per CPU, it times
three whole processes:

  parse     bench/parse.c: read each file, parse it with the same pinned
            tree-sitter runtime and grammar, delete the tree (plain -O2,
            tree-sitter's own allocator: the baseline)
  oomlint   every rule, opt-in ones included (--select ALL); its parser
            is built as the Makefile builds it (profile-guided with PGO)
  oomlint, default rules
            the same binary with the rules a user gets without --select:
            the set the speed target (within 10% of the bare parse) is for
  parse on oomlint's parser build
            bench/parse.c again, linked with oomlint's parser objects: what
            the parser's build buys, apart from the rest of oomlint
  ast-grep  @ast-grep/cli (pinned in bench/tools) scanning
            bench/ast-grep/rules.yml, patterns for six of oomlint's rules

Runs are interleaved (parse, oomlint, ast-grep, parse, ...) and medians
reported, because the machine is shared; the CPU ratios are also given for
each tool's fastest run, since another process on the machine only ever
adds to a run's CPU time (cache, frequency), never takes from it. Then the
latency of one small file and of a dense 2,000-line training file (whole
process, median of many runs), oomlint's own phase breakdown (--timings),
and, as an extra, oomlint on a generated corpus of training code
(build/bench/corpus).

    make bench                           # the default corpus
    make bench BENCH_CORPUS=/path/code   # any directory of .py files instead
    make bench BENCH_ARGS=--callgrind    # instruction counts on a sample instead
    make bench BENCH_ARGS="--runs 13 --threads 1 --cpu 3"
                                         # one thread only, each run held to CPU 3
    python3 bench/run.py --help          # run counts, skipping parts

It then measures the language server (`oomlint server`): the time from a
didChange on a 2,000-line buffer to the diagnostics for that version
(p50/p95), and the server's memory over 10,000 didChange messages. The
buffer lies in a workspace folder of 2,000 other modules and calls a helper
of one of them, so the server's whole-program facts are part of the figures
(the first lint, which indexes the folder, is reported on its own).
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH_DIR = os.path.join(ROOT, "build", "bench")

# The real corpus: Debian package, name under build/bench/real, the directory
# in the package whose .py files are taken.
PACKAGES = [
    ("python3-torch", "torch", "usr/lib/python3/dist-packages"),
    ("libpython3.11-stdlib", "stdlib", "usr/lib/python3.11"),
]
# Directory names oomlint skips while walking (analyzer/discover.c). Such a
# directory in the corpus is renamed so every tool reads the same files.
SKIPPED_DIRS = {"__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
                "site-packages", "venv"}

# ---- corpora -----------------------------------------------------------------


def prepare_real(bench_dir):
    """Fetches and unpacks the Debian packages once; returns (corpus dir,
    [package versions]) or (None, reason)."""
    real = os.path.join(bench_dir, "real")
    debs = os.path.join(bench_dir, "debs")
    stamp = os.path.join(real, ".prepared")
    if os.path.exists(stamp):
        with open(stamp) as f:
            return real, f.read().split()
    os.makedirs(debs, exist_ok=True)
    shutil.rmtree(real, ignore_errors=True)
    versions = []
    for package, name, root in PACKAGES:
        have = [d for d in os.listdir(debs) if d.startswith(package + "_") and d.endswith(".deb")]
        if not have:
            print(f"fetching {package} with apt-get download", flush=True)
            proc = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True, text=True)
            have = [d for d in os.listdir(debs) if d.startswith(package + "_") and d.endswith(".deb")]
            if proc.returncode != 0 or not have:
                return None, f"`apt-get download {package}` failed: {proc.stderr.strip()[-300:]}"
        deb = sorted(have)[-1]
        versions.append(deb[:-len(".deb")])
        unpacked = tempfile.mkdtemp(dir=bench_dir)
        try:
            subprocess.run(["dpkg-deb", "-x", os.path.join(debs, deb), unpacked], check=True)
            src_root = os.path.join(unpacked, root)
            for dirpath, dirnames, filenames in os.walk(src_root):
                dirnames.sort()
                for fname in sorted(filenames):
                    if not fname.endswith(".py") or os.path.islink(os.path.join(dirpath, fname)):
                        continue
                    rel = os.path.relpath(os.path.join(dirpath, fname), src_root).split(os.sep)
                    rel = [c + "_" if c in SKIPPED_DIRS else c for c in rel[:-1]] + rel[-1:]
                    dest = os.path.join(real, name, *rel)
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    shutil.copyfile(os.path.join(dirpath, fname), dest)
        finally:
            shutil.rmtree(unpacked, ignore_errors=True)
    with open(stamp, "w") as f:
        f.write(" ".join(versions))
    return real, versions


TRAIN = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class {Model}(nn.Module):
    def __init__(self, width={width}):
        super().__init__()
        self.layers = nn.Sequential(
{layers}
        )
        self.head = nn.Linear(width, {classes})

    def forward(self, x):
        return self.head(self.layers(x))


def train_{name}(model, loader, optimizer, device, epochs={epochs}):
    criterion = nn.CrossEntropyLoss()
    history = []
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            logits = model(x)
            loss = criterion(logits, y)
            loss.backward()
            optimizer.step()
            running += {accumulate}
            if step % {log_every} == 0:
                print(epoch, step, running / (step + 1))
        history.append(running)
    return history


def evaluate_{name}(model, loader, device):
    model.eval()
    correct = total = 0
{eval_body}
    return correct / max(total, 1)
'''

EVAL_GUARDED = '''    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1)
            correct += (pred == y.to(device)).sum().item()
            total += y.numel()'''

EVAL_UNGUARDED = '''    for x, y in loader:
        pred = model(x.to(device)).argmax(1)
        correct += (pred == y.to(device)).sum().item()
        total += y.numel()'''

UTIL = '''def {name}_{i}(values, scale={scale}):
    """Helper {i}: plain Python that a training repository also contains."""
    out = []
    for v in values:
        if v > {threshold}:
            out.append(v * scale)
        else:
            out.append(v / (scale + 1))
    return sum(out) / max(len(out), 1)

'''

# One step of a dense training script: every line is code the model and the
# rules look at (calls, loops, with-blocks, accumulations).
DENSE_STEP = '''

def run_{i}(model, loader, optimizer, scheduler, scaler, device, epochs={epochs}):
    criterion = nn.CrossEntropyLoss(label_smoothing=0.{smooth})
    losses, accuracies, grads = [], [], []
    best = float("inf")
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for step, (inputs, targets) in enumerate(loader):
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.{dtype}):
                outputs = model(inputs)
                loss = criterion(outputs, targets) / {accum}
            scaler.scale(loss).backward()
            if (step + 1) % {accum} == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm={clip}.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
            total += {accumulate}
            losses.append({collect})
            grads.append(sum(p.grad.norm().item() for p in model.parameters() if p.grad is not None))
            if step % {log_every} == 0:
                print(f"epoch {{epoch}} step {{step}} loss {{total / (step + 1):.4f}}")
        model.eval()
        correct = seen = 0
        {guard}
            for inputs, targets in loader:
                preds = model(inputs.to(device)).argmax(dim=1)
                correct += (preds == targets.to(device)).sum().item()
                seen += targets.numel()
        accuracies.append(correct / max(seen, 1))
        if total < best:
            best = total
            torch.save({{"model": model.state_dict(), "epoch": epoch}}, "ckpt_{i}.pt")
    state = torch.load("ckpt_{i}.pt"{map_location})
    model.load_state_dict(state["model"])
    return losses, accuracies, grads
'''

DENSE_HEAD = '''"""A dense training script (generated by bench/run.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
'''


def dense_file(path, lines=2000, seed=7):
    """Writes a deterministic training file of exactly `lines` lines."""
    rng = random.Random(seed)
    text = DENSE_HEAD
    i = 0
    while text.count("\n") < lines:
        text += DENSE_STEP.format(
            i=i, epochs=rng.randint(1, 90), smooth=rng.randint(0, 2), dtype=rng.choice(["float16", "bfloat16"]),
            accum=rng.choice([1, 2, 4, 8]), clip=rng.randint(1, 5),
            accumulate=rng.choice(["loss.item()", "loss.detach()", "loss"]),
            collect=rng.choice(["loss.item()", "loss", "outputs.detach().cpu()"]),
            log_every=rng.choice([10, 50, 100]),
            guard=rng.choice(["with torch.no_grad():", "with torch.inference_mode():", "if True:"]),
            map_location=rng.choice(["", ', map_location="cpu"']))
        i += 1
    text = "".join(text.splitlines(True)[:lines])
    with open(path, "w") as f:
        f.write(text)
    return path


def layer_lines(rng):
    lines = []
    for _ in range(rng.randint(2, 6)):
        lines.append(f"            nn.Linear(width, width), nn.{rng.choice(['ReLU', 'GELU', 'SiLU'])}(),")
    return "\n".join(lines)


def generate_synthetic(corpus, files, seed=1234):
    """The generated corpus of training code (scripts, utilities, notebooks)."""
    rng = random.Random(seed)
    os.makedirs(corpus, exist_ok=True)
    marker = os.path.join(corpus, ".generated")
    if os.path.exists(marker) and open(marker).read() == f"{files} {seed}":
        return
    for i in range(files):
        sub = os.path.join(corpus, f"pkg{i % 20:02d}")
        os.makedirs(sub, exist_ok=True)
        kind = rng.random()
        if kind < 0.55:
            text = TRAIN.format(
                Model=f"Net{i}", width=rng.choice([64, 128, 256]), layers=layer_lines(rng),
                classes=rng.choice([2, 10, 100]), name=f"m{i}", epochs=rng.randint(1, 50),
                accumulate=rng.choice(["loss.item()", "loss.item() * x.size(0)", "loss"]),
                log_every=rng.choice([10, 50, 100]),
                eval_body=EVAL_GUARDED if rng.random() < 0.8 else EVAL_UNGUARDED)
            text += "".join(UTIL.format(name="helper", i=k, scale=rng.randint(1, 9),
                                        threshold=rng.randint(0, 100)) for k in range(rng.randint(5, 60)))
            path = os.path.join(sub, f"train_{i}.py")
        elif kind < 0.95:
            text = "import math\n\n" + "".join(
                UTIL.format(name="util", i=k, scale=rng.randint(1, 9), threshold=rng.randint(0, 100))
                for k in range(rng.randint(20, 200)))
            path = os.path.join(sub, f"utils_{i}.py")
        else:
            code = TRAIN.format(Model=f"Nb{i}", width=64, layers=layer_lines(rng), classes=10, name=f"nb{i}",
                                epochs=3, accumulate="loss.item()", log_every=10, eval_body=EVAL_GUARDED)
            cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                      "source": chunk.splitlines(True)} for chunk in code.split("\n\n\n")]
            text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
            path = os.path.join(sub, f"nb_{i}.ipynb")
        with open(path, "w") as f:
            f.write(text)
    with open(marker, "w") as f:
        f.write(f"{files} {seed}")


def corpus_size(corpus, suffixes=(".py", ".ipynb")):
    """(files, bytes, lines) of the sources oomlint would read."""
    total = count = lines = 0
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS]
        for name in filenames:
            if name.endswith(suffixes):
                with open(os.path.join(dirpath, name), "rb") as f:
                    data = f.read()
                total += len(data)
                lines += data.count(b"\n")
                count += 1
    return count, total, lines


# ---- running -----------------------------------------------------------------


def oomlint_argv(binary, path, threads=1, every_rule=True, extra=(), as_json=True):
    """oomlint's command line as the benchmark runs it: the project's own
    settings ignored (--isolated), every rule or the default set, quiet, the
    report as JSON (only its size matters), on `threads` threads (None: as
    oomlint chooses)."""
    argv = [binary] + (["--select", "ALL"] if every_rule else []) + ["--isolated"]
    argv += (["--format", "json"] if as_json else []) + ["-q"]
    argv += ["-j", str(threads)] if threads is not None else []
    return argv + list(extra) + [path]


def run_once(argv, env=None, cpu=None):
    """Runs argv to completion; returns (wall seconds, peak RSS in KiB, exit
    status, stdout, stderr, CPU seconds). Peak RSS is this child's own (wait4),
    not the largest child so far. cpu: the one CPU the child may run on (None:
    any)."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, preexec_fn=pin)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (wall, usage.ru_maxrss, proc.returncode, out.read(), err.read().decode(errors="replace"),
                usage.ru_utime + usage.ru_stime)


def quick_wall(argv):
    """Wall time of one short process, with as little harness as possible."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status = os.waitpid(pid, 0)
        wall = time.perf_counter() - start
    finally:
        os.close(devnull)
    code = os.waitstatus_to_exitcode(status)
    return wall, code


class Tool:
    pin = None  # --cpu: the CPU every one-thread run is held to

    def __init__(self, name, label, argv_for, ok_codes, count_findings):
        self.name, self.label, self.argv_for = name, label, argv_for
        self.ok_codes, self.count_findings = ok_codes, count_findings
        self.samples = {}  # threads -> [(wall, rss, cpu)]
        self.findings = {}

    def run(self, threads):
        wall, rss, code, out, err, cpu = run_once(self.argv_for(threads), cpu=Tool.pin if threads == 1 else None)
        if code not in self.ok_codes:
            sys.exit(f"{self.name} failed (exit {code}): {' '.join(self.argv_for(threads))}\n{err[-2000:]}")
        self.samples.setdefault(threads, []).append((wall, rss, cpu))
        self.findings[threads] = self.count_findings(out, err)
        return err


def fmt_mb(kib):
    return f"{kib / 1024:.0f} MB"


def median_ms(samples):
    return statistics.median(samples) * 1000


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def sample_corpus(corpus, every):
    """Every `every`-th .py file of corpus (sorted), copied to build/bench/sample."""
    names = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS]
        names += [os.path.join(dirpath, f) for f in filenames if f.endswith(".py")]
    # valgrind runs 50-100x slower, and oomlint's parse budget is CPU
    # time: the largest files would be cut short, so the sample leaves them out
    names = [n for n in names if os.path.getsize(n) <= 256 * 1024]
    sample = os.path.join(BENCH_DIR, "sample")
    shutil.rmtree(sample, ignore_errors=True)
    for path in sorted(names)[::every]:
        dest = os.path.join(sample, os.path.relpath(path, corpus))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(path, dest)
    return sample


def callgrind(args, corpus):
    """Instruction counts (valgrind's callgrind), repeatable where wall time is
    not: the bare parse and oomlint on one thread over a sample of the corpus."""
    if not shutil.which("valgrind"):
        sys.exit("--callgrind needs valgrind (apt-get install valgrind)")
    sample = sample_corpus(corpus, args.callgrind_every)
    files, size, lines = corpus_size(sample, (".py",))
    print(f"callgrind sample: every {args.callgrind_every}th file under 256 KB of {corpus}: {files} files, "
          f"{size / 1e6:.2f} MB, {lines:,} lines")
    totals, estimates = {}, {}
    sim = ["--cache-sim=yes", "--branch-sim=yes"] if args.callgrind_sim else []
    for name, argv in (("parse", [args.parse, "-j", "1", sample]),
                       ("oomlint", oomlint_argv(args.bin, sample)),
                       ("default", oomlint_argv(args.bin, sample, every_rule=False))):
        # oomlint lints in a child process under its supervisor: each process
        # writes its own file, and the total counts both
        for old in glob.glob(os.path.join(BENCH_DIR, f"callgrind.{name}.out*")):
            os.remove(old)
        out = os.path.join(BENCH_DIR, f"callgrind.{name}.out.%p")
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + sim + argv,
                              capture_output=True, text=True)
        counts = [int(c) for c in re.findall(r"Collected : (\d+)", proc.stderr)]
        if not counts:
            sys.exit(f"callgrind failed on {name}: {proc.stderr[-2000:]}")
        outs = sorted(glob.glob(os.path.join(BENCH_DIR, f"callgrind.{name}.out.*")), key=os.path.getsize)
        out = outs[-1]  # the process that did the work
        if name != "parse" and "parsing took longer" in proc.stdout:
            # the parse budget is CPU time, which valgrind multiplies: a
            # file cut short does less work and the count means nothing
            print("  warning: a file ran past oomlint's parse time limit under valgrind; "
                  "this count is too low (run again on a quieter machine)")
        totals[name] = sum(counts)
        print(f"  {name:8} {totals[name]:>15,} instructions  {totals[name] / size:8.1f} per byte   "
              f"(callgrind_annotate {os.path.relpath(out, ROOT)})")
        if sim:
            estimates[name] = sum(cycle_estimate(o) for o in outs)
            print(f"  {'':8} {estimates[name]:>15,} estimated cycles (Ir + 10 x (L1 misses + mispredicted "
                  f"branches) + 100 x LL misses)")
    for name, what in (("oomlint", "every rule"), ("default", "default rules")):
        print(f"  oomlint ({what}) / parse: {totals[name] / totals['parse']:.3f} in instructions" +
              (f", {estimates[name] / estimates['parse']:.3f} in estimated cycles" if sim else ""))


def cycle_estimate(path):
    """KCachegrind's cycle estimate from a callgrind file with cache and
    branch simulation: a deterministic stand-in for time on a busy machine."""
    events = totals = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:") or line.startswith("summary:"):
                totals = [int(x) for x in line.split()[1:]]
    v = dict(zip(events or [], totals or []))
    l1 = v.get("I1mr", 0) + v.get("D1mr", 0) + v.get("D1mw", 0)
    ll = v.get("ILmr", 0) + v.get("DLmr", 0) + v.get("DLmw", 0)
    return v.get("Ir", 0) + 10 * (l1 + v.get("Bcm", 0) + v.get("Bim", 0)) + 100 * ll


SERVER_BLOCK = '''

def train_{i}(model, loader, optimizer, device):
    criterion = nn.CrossEntropyLoss()
    total = 0.0  # running loss of block {i}
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += {acc}
        if step % 100 == 0:
            print(step, total / (step + 1))
    return total


def evaluate_{i}(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct
'''


HELPERS = '''import torch.nn.functional as F


def train_step(model, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return loss
'''


def server_buffer(lines=2000):
    text = "import torch\nimport torch.nn as nn\nfrom helpers import train_step\n"
    i = 0
    while True:
        block = SERVER_BLOCK.format(i=i, acc="loss" if i % 10 == 0 else "loss.item()")
        if i % 10 == 5:
            # the loss comes from the helper in helpers.py: a finding through the call
            block = block.replace("loss = criterion(model(x), y)\n        loss.backward()",
                                  "loss = train_step(model, x, y)").replace("loss.item()", "loss")
        if text.count("\n") + block.count("\n") > lines:
            break
        text += block
        i += 1
    # pad with assignments to exactly `lines` lines, so the buffer parses cleanly
    while text.count("\n") < lines:
        text += f"setting_{text.count(chr(10))} = {i}\n"
    return text


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_bench(binary, edits=300, messages=10000):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import lsp_client as L
    binary = os.path.abspath(binary)  # the server runs in the buffer's directory
    text = server_buffer()
    folder = os.path.join(ROOT, "build", "bench", "workspace")
    path = os.path.join(folder, "server_buffer.py")
    modules = 2000
    for k in range(modules):
        os.makedirs(os.path.join(folder, "lib", f"pkg{k // 100}"), exist_ok=True)
        with open(os.path.join(folder, "lib", f"pkg{k // 100}", f"mod{k}.py"), "w") as f:
            f.write(f"def helper_{k}(x):\n    return x * {k}\n")
    with open(os.path.join(folder, "helpers.py"), "w") as f:
        f.write(HELPERS)
    with open(path, "w") as f:
        f.write(text)
    uri = L.uri(path)
    s = L.Server(os.path.abspath(binary), cwd=folder)
    try:
        s.initialize(root=folder)
        t0 = time.perf_counter()
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": text}})
        findings = len(s.diagnostics(uri, 1, timeout=60))
        first = (time.perf_counter() - t0) * 1000
        lines = text.split("\n")
        # an edit in code: a digit typed into `% 100` near the middle, then taken back
        code_line = next(i for i in range(1000, len(lines)) if "% 100 ==" in lines[i])
        code_col = lines[code_line].index("% 100 ==") + len("% 100")
        # an edit in a comment: a character typed at the end of a line
        comment_line = 1000
        comment_col = len(lines[comment_line])

        def change(version, where="code"):
            # typed, then taken back: the text stays the same size
            line, col, ch = (code_line, code_col, "0") if where == "code" else (comment_line, comment_col, "#")
            start = {"line": line, "character": col}
            if version % 2 == 0:
                return {"range": {"start": start, "end": start}, "text": ch}
            return {"range": {"start": start, "end": {"line": line, "character": col + 1}}, "text": ""}

        print(f"language server: a {text.count(chr(10))}-line buffer ({len(text) / 1000:.0f} kB, {findings} findings) "
              f"in a workspace of {modules + 2} files; first lint (didOpen -> diagnostics) {first:.1f} ms")
        version = 1
        for where in ("code", "comment"):
            latencies = []
            cpu0 = cpu_seconds(s.proc.pid)
            for _ in range(edits):
                version += 1
                t0 = time.perf_counter()
                s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                    "contentChanges": [change(version, where)]})
                s.diagnostics(uri, version)
                latencies.append((time.perf_counter() - t0) * 1000)
                s.pending.clear()
            cpu = (cpu_seconds(s.proc.pid) - cpu0) * 1000 / edits
            latencies.sort()
            p50 = latencies[len(latencies) // 2]
            p95 = latencies[int(len(latencies) * 0.95)]
            print(f"  didChange -> diagnostics, {edits} edits one at a time, typing in {where:7}: p50 {p50:.1f} ms, "
                  f"p95 {p95:.1f} ms, max {latencies[-1]:.1f} ms; server CPU per edit {cpu:.1f} ms")
        rss = [rss_kb(s.proc.pid)]
        sent = 0
        t0 = time.perf_counter()
        while sent < messages:
            # ten edits per write, as a fast typist's client would queue them
            burst = []
            for _ in range(10):
                version += 1
                burst.append(L.frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version}, "contentChanges": [change(version)]}}))
            s.send_raw(b"".join(burst))
            sent += 10
            s.diagnostics(uri, version)
            s.pending.clear()
            if sent % 1000 == 0:
                rss.append(rss_kb(s.proc.pid))
        wall = time.perf_counter() - t0
        print(f"  {messages} didChange in bursts of 10 ({wall:.1f} s, linted once per burst): "
              f"RSS {rss[0] / 1024:.1f} MB at the start, then per 1,000: "
              + " ".join(f"{r / 1024:.1f}" for r in rss[1:]) + " MB")
        s.shutdown()
    finally:
        s.kill()


def main():
    sys.stdout.reconfigure(line_buffering=True)  # progress shows while it runs, also through a pipe
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--parse", default=os.path.join(BENCH_DIR, "parse"), help="the bare parse (bench/parse.c)")
    ap.add_argument("--parse-oomlint", default=None, help="bench/parse.c linked with oomlint's parser objects")
    ap.add_argument("--parser-build", default="", help="how oomlint's parser was compiled (for the heading)")
    ap.add_argument("--ast-grep", default=None, help="the ast-grep binary (default: the one under build/bench/tools)")
    ap.add_argument("--corpus", default=os.environ.get("BENCH_CORPUS") or None,
                    help="a directory of .py files instead of the Debian corpus")
    ap.add_argument("--runs", type=int, default=5, help="interleaved runs per tool and thread count")
    ap.add_argument("--latency-runs", type=int, default=41)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="the second thread count (1: only the one-thread column)")
    ap.add_argument("--cpu", type=int, default=None, metavar="N",
                    help="hold the one-thread runs (the table's and the --timings run) to CPU N, so that no "
                         "run is moved between CPUs or shares one with another of the runs' threads")
    ap.add_argument("--synthetic-files", type=int, default=3000, help="size of the extra generated corpus")
    ap.add_argument("--no-synthetic", action="store_true", help="skip the generated corpus")
    ap.add_argument("--no-ast-grep", action="store_true")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=BINARY",
                    help="time another oomlint build as well, in the same interleaved runs")
    ap.add_argument("--callgrind", action="store_true",
                    help="instead: count instructions of the parse and oomlint on a sample (valgrind)")
    ap.add_argument("--callgrind-every", type=int, default=10, help="the sample takes every Nth file")
    ap.add_argument("--callgrind-sim", action="store_true",
                    help="with --callgrind: simulate caches and branches too, and estimate cycles")
    ap.add_argument("--server-only", action="store_true", help="measure only the language server")
    ap.add_argument("--no-server", action="store_true", help="skip the language server")
    args = ap.parse_args()
    if args.server_only:
        server_bench(args.bin)
        return

    os.makedirs(BENCH_DIR, exist_ok=True)
    if args.corpus:
        corpus, about = args.corpus, "given with --corpus"
    else:
        corpus, versions = prepare_real(BENCH_DIR)
        if corpus is None:
            sys.exit(f"cannot build the real corpus: {versions}\n(run with --corpus DIR to use any directory)")
        about = ", ".join(versions)
    if args.callgrind:
        callgrind(args, corpus)
        return
    ast_grep = args.ast_grep
    if not ast_grep and not args.no_ast_grep:
        mods = os.path.join(BENCH_DIR, "tools", "node_modules", "@ast-grep")
        found = sorted(os.path.join(mods, d, "ast-grep") for d in (os.listdir(mods) if os.path.isdir(mods) else [])
                       if d.startswith("cli-"))
        ast_grep = next((f for f in found if os.access(f, os.X_OK)), None)
        if not ast_grep:
            print("ast-grep is not installed (make bench installs it); its row is left out\n")
    rules_yml = os.path.join(HERE, "ast-grep", "rules.yml")

    if args.cpu is not None:
        if args.cpu not in os.sched_getaffinity(0):
            sys.exit(f"--cpu {args.cpu}: this process may not run there (it may use {sorted(os.sched_getaffinity(0))})")
        Tool.pin = args.cpu
    files, size, lines = corpus_size(corpus, (".py",))
    thread_counts = sorted({1, max(1, args.threads)})
    print(f"corpus:  {corpus} ({about})")
    print(f"         {files} .py files, {size / 1e6:.1f} MB, {lines:,} lines")
    print(f"machine: {os.cpu_count()} CPUs; load average {load_average():.2f} at start; "
          f"{args.runs} interleaved runs per cell, medians"
          + (f"; one-thread runs held to CPU {args.cpu}" if args.cpu is not None else ""))
    if args.parser_build:
        print(f"oomlint's parser: {args.parser_build.strip()}; the bare parse: plain, as the Makefile's CC and OPT")

    def oomlint_findings(out, err):
        return len(json.loads(out or b"[]"))

    def parse_count(out, err):
        m = re.search(r"parse: (\d+) files", err)
        return f"{m.group(1)} files" if m else "?"

    tools = [
        Tool("parse", "bare parse (plain -O2)", lambda j: [args.parse, "-j", str(j), corpus], (0,), parse_count),
        Tool("oomlint", "oomlint --select ALL",
             lambda j: oomlint_argv(args.bin, corpus, j),
             (0, 1), oomlint_findings),
        Tool("oomlint-default", "oomlint, default rules",
             lambda j: oomlint_argv(args.bin, corpus, j, every_rule=False),
             (0, 1), oomlint_findings),
    ]
    for extra in args.also:
        label, _, binary = extra.partition("=")
        tools.append(Tool(label, label, lambda j, binary=binary: oomlint_argv(binary, corpus, j),
                          (0, 1), oomlint_findings))
    if args.parse_oomlint:
        tools.append(Tool("parse-oomlint", "parse, oomlint's parser", lambda j: [args.parse_oomlint, "-j", str(j), corpus],
                          (0,), parse_count))
    if ast_grep:
        tools.append(Tool("ast-grep", "ast-grep, 6 rules",
                          lambda j: [ast_grep, "scan", "--rule", rules_yml, "--json=stream", "-j", str(j),
                                     "--no-ignore", "vcs", "--no-ignore", "parent", "--no-ignore", "dot",
                                     "--no-ignore", "exclude", "--no-ignore", "global", "--globs", "*.py", corpus],
                          (0, 1), lambda out, err: len(out.splitlines())))

    for tool in tools:  # warm the page cache and the binaries, unmeasured
        run_once(tool.argv_for(1))
    for _ in range(args.runs):
        for threads in thread_counts:
            for tool in tools:
                tool.run(threads)

    print()
    head = f"{'':24}" + "".join(f"{f'{t} thread' + ('s' if t > 1 else ''):>36}" for t in thread_counts)
    print(head)
    print(f"{'':24}" + "".join(f"{'wall s':>10}{'MB/s':>8}{'cpu s':>8}{'peak RSS':>10}" for _ in thread_counts))
    medians = {}
    for tool in tools:
        row = f"{tool.label:24}"
        for t in thread_counts:
            wall = statistics.median(s[0] for s in tool.samples[t])
            rss = statistics.median(s[1] for s in tool.samples[t])
            cpu = statistics.median(s[2] for s in tool.samples[t])
            medians[(tool.name, t)] = wall
            medians[(tool.name, t, "cpu")] = cpu
            row += f"{wall:>10.3f}{size / 1e6 / wall:>8.1f}{cpu:>8.2f}{fmt_mb(rss):>10}"
        print(row)
    names = {t.name for t in tools}
    pairs = [("oomlint", other) for other in ("parse", "parse-oomlint", "ast-grep") if other in names]
    pairs.insert(1, ("oomlint-default", "parse"))
    pairs += [(label.partition("=")[0], "parse") for label in args.also]
    fastest = {(tool.name, t): min(s[2] for s in tool.samples[t]) for tool in tools for t in thread_counts}
    tool_by = {tool.name: tool for tool in tools}
    for mine, other in pairs:
        row = f"{mine + ' / ' + other:24}"
        for t in thread_counts:
            row += f"{medians[(mine, t)] / medians[(other, t)]:>17.2f}x"
            row += f"{medians[(mine, t, 'cpu')] / medians[(other, t, 'cpu')]:>7.2f}x"
            row += f"{f'({fastest[(mine, t)] / fastest[(other, t)]:.2f}x)':>10}"
            # each round runs every tool once, back to back: a run over the other tool's run of its own
            # round cancels what drifts between rounds (a neighbour's load, the clock)
            paired = statistics.median(a[2] / b[2] for a, b in zip(tool_by[mine].samples[t], tool_by[other].samples[t]))
            row += f"{f'[{paired:.2f}x]':>9}"
        print(row.rstrip())
    spread = "; ".join(f"{tool.name} {min(s[0] for s in tool.samples[t]):.2f}-{max(s[0] for s in tool.samples[t]):.2f} s"
                       f" ({t}t)" for tool in tools for t in thread_counts)
    print("(ratios: of the median wall times, under `wall s`, and of the median CPU times, under `cpu s`;\n"
          " in parentheses, of the CPU times of each tool's fastest run; in brackets, the median over the rounds\n"
          " of one run's CPU time over the other tool's in the same round, which load that comes and goes\n"
          " between rounds moves least)")
    print(f"\nrange of wall times: {spread}")
    print("findings: " + "; ".join(f"{tool.name} {tool.findings[thread_counts[0]]}" for tool in tools))

    # latency: whole process, one file
    small = os.path.join(ROOT, "examples", "train.py")
    dense = dense_file(os.path.join(BENCH_DIR, "dense_train.py"))
    lat = {}
    cases = [("small", small), ("dense", dense)]
    for _ in range(args.latency_runs):
        for name, path in cases:
            lat.setdefault(("oomlint", name), []).append(
                quick_wall(oomlint_argv(args.bin, path, None, as_json=False))[0])
            lat.setdefault(("parse", name), []).append(quick_wall([args.parse, path])[0])
    print(f"\nlatency, whole process, median of {args.latency_runs} runs:")
    small_lines = open(small).read().count("\n")
    print(f"  one small file ({os.path.relpath(small, ROOT)}, {small_lines} lines):"
          f"  oomlint {median_ms(lat[('oomlint', 'small')]):.2f} ms, bare parse {median_ms(lat[('parse', 'small')]):.2f} ms")
    print(f"  a dense 2,000-line training file (build/bench/dense_train.py):"
          f"  oomlint {median_ms(lat[('oomlint', 'dense')]):.2f} ms, bare parse {median_ms(lat[('parse', 'dense')]):.2f} ms")

    # where oomlint's time goes, one thread
    print("\nwhere the time goes (oomlint --timings, one thread, this corpus):")
    err = run_once(oomlint_argv(args.bin, corpus, extra=["--timings"]), cpu=Tool.pin)[4]
    print("".join("  " + line + "\n" for line in err.strip().splitlines()))

    if not args.no_synthetic:
        syn = os.path.join(BENCH_DIR, "corpus")
        generate_synthetic(syn, args.synthetic_files)
        sfiles, ssize, slines = corpus_size(syn)
        print(f"extra: the generated corpus ({syn}): {sfiles} files, {ssize / 1e6:.1f} MB, {slines:,} lines")
        for threads in thread_counts:
            walls, rsss = [], []
            for _ in range(3):
                result = run_once(oomlint_argv(args.bin, syn, threads))
                walls.append(result[0])
                rsss.append(result[1])
            wall = statistics.median(walls)
            print(f"  oomlint, {threads} thread{'s' if threads > 1 else ''}: {wall:.3f} s, "
                  f"{ssize / 1e6 / wall:.1f} MB/s, {fmt_mb(statistics.median(rsss))} peak RSS")
    print(f"\nload average at the end: {load_average():.2f}")

    if not args.no_server:
        print()
        server_bench(args.bin)


if __name__ == "__main__":
    main()
