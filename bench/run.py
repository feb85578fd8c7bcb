#!/usr/bin/env python3
"""oomlint's benchmark: measures and prints, asserts nothing.

By default it generates a deterministic synthetic corpus of training code
(build/bench/corpus: scripts, model files, notebooks, in the shapes real
repositories have) and lints it on one thread and on every CPU, three runs
each, reporting the median wall time, throughput, files per second and peak
memory, plus oomlint's own phase breakdown (--timings). Point it at real code
with --corpus DIR (for example a checkout of pytorch/examples) to compare.

    make bench                          # synthetic corpus
    make bench BENCH_CORPUS=/path/code  # your corpus

It then measures the language server (`oomlint server`): the time from a
didChange on a 2,000-line buffer to the diagnostics for that version
(p50/p95), and the server's memory over 10,000 didChange messages. The
buffer lies in a workspace folder of 2,000 other modules and calls a helper
of one of them, so the server's whole-program facts are part of the figures
(the first lint, which indexes the folder, is reported on its own).
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

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


def layer_lines(rng, width):
    lines = []
    for _ in range(rng.randint(2, 6)):
        lines.append(f"            nn.Linear(width, width), nn.{rng.choice(['ReLU', 'GELU', 'SiLU'])}(),")
    return "\n".join(lines)


def generate(corpus, files, seed=1234):
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
                Model=f"Net{i}", width=rng.choice([64, 128, 256]), layers=layer_lines(rng, 64),
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
            code = TRAIN.format(Model=f"Nb{i}", width=64, layers=layer_lines(rng, 64), classes=10, name=f"nb{i}",
                                epochs=3, accumulate="loss.item()", log_every=10, eval_body=EVAL_GUARDED)
            cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                      "source": chunk.splitlines(True)} for chunk in code.split("\n\n\n")]
            text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
            path = os.path.join(sub, f"nb_{i}.ipynb")
        with open(path, "w") as f:
            f.write(text)
    with open(marker, "w") as f:
        f.write(f"{files} {seed}")


def corpus_size(corpus):
    total = count = 0
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".py") or name.endswith(".ipynb"):
                total += os.path.getsize(os.path.join(dirpath, name))
                count += 1
    return count, total


def run_once(binary, corpus, threads):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([binary, "--format", "json", "-q", "-j", str(threads), "--timings", corpus],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"oomlint failed ({proc.returncode}): {proc.stderr[-2000:]}")
    findings = len(json.loads(proc.stdout))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, findings, proc.stderr


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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--corpus", default=os.environ.get("BENCH_CORPUS") or None)
    ap.add_argument("--files", type=int, default=3000, help="synthetic corpus size in files")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--server-only", action="store_true", help="measure only the language server")
    args = ap.parse_args()
    if args.server_only:
        server_bench(args.bin)
        return

    corpus = args.corpus
    if not corpus:
        corpus = os.path.join(ROOT, "build", "bench", "corpus")
        generate(corpus, args.files)
    files, size = corpus_size(corpus)
    cpus = os.cpu_count() or 1
    print(f"corpus: {corpus}")
    print(f"        {files} files, {size / 1e6:.1f} MB of Python and notebooks")
    print(f"machine: {cpus} CPUs; {args.runs} runs each, median reported\n")
    print(f"{'threads':>7} {'wall s':>8} {'MB/s':>8} {'files/s':>9} {'cpu s':>7} {'peak RSS':>10} {'findings':>9}")
    timings = ""
    for threads in sorted({1, cpus}):
        results = [run_once(args.bin, corpus, threads) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        rss = max(r[2] for r in results)
        findings = results[0][3]
        print(f"{threads:>7} {wall:>8.3f} {size / 1e6 / wall:>8.1f} {files / wall:>9.0f} {cpu:>7.2f} "
              f"{rss / 1024:>8.1f} MB {findings:>9}")
        if threads == 1:
            timings = results[len(results) // 2][4]
    print("\nwhere the time goes (one thread, oomlint --timings):")
    print("".join("  " + line + "\n" for line in timings.strip().splitlines()))
    server_bench(args.bin)


if __name__ == "__main__":
    main()
