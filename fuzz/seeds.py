#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora (never committed; made at fuzz time).

lint: every fixture and example (*.py, *.ipynb), every crash regression in
tests/crashers/, and each Python seed wrapped as a notebook (one cell per
top-level block, with a magic line and a markdown cell), since the lint
fuzzer reads every input both as Python and as a notebook.
config: every pyproject.toml the configuration tests write (found by reading
tests/config_tests.py with ast), the crash regressions' *.toml, and a few
documents that exercise TOML itself (dotted keys, inline tables, arrays of
tables, multi-line and literal strings, escapes, dates).
explain: the logs under tests/explain/ (every form of PyTorch's out-of-memory
message), and memory snapshots in the shapes PyTorch writes (2.x with
device_traces, 1.13's list of segments) pickled with each protocol.
"""
import argparse
import ast
import hashlib
import json
import os
import pickle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOML_SEEDS = [
    '[tool.oomlint]\nselect = ["OOM1", "OOM5"]\nignore = ["OOM502"]\nextend-select = ["OOM401"]\n'
    'exclude = ["legacy", "src/gen/*", "**/{a,b}/[!x]?.py"]\n\n'
    '[tool.oomlint.per-file-ignores]\n"tests/*" = ["OOM101"]\n"test_*.py" = ["OOM1"]\n'
    '"**/notebooks/*.ipynb" = ["ALL"]\n',
    '[project]\nname = "x"\nversion = "1.0"\ndependencies = ["torch>=2", \'numpy\']\n'
    '[tool.oomlint]\nselect = [\n  "OOM101",  # comment\n  "OOM2",\n]\n',
    'tool.oomlint.select = ["ALL"]\ntool.oomlint.per-file-ignores = { "a/*.py" = ["OOM0"] }\n',
    '[[tool.other]]\nx = 1\n[[tool.other]]\ny = 2.5e3\nz = 1979-05-27T07:32:00Z\nw = 0x1F\n'
    '[tool.oomlint]\nexclude = [\'\'\'multi\nline\'\'\', """a\\\n   b""", "\\u00e9\\t"]\n',
    '[tool."oomlint"]\n"select" = ["OOM1"]\n[tool.oomlint."per-file-ignores"]\n\'x/**\' = ["OOM6"]\n',
    '[tool.oomlint]\nselct = ["OOM1"]\n',
    '[tool.oomlint]\nselect = "OOM1"\n',
]


def write(dirpath, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(dirpath, name), "wb") as f:
        f.write(data)


def python_files():
    for top in ("fixtures", "examples", os.path.join("tests", "crashers")):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".py", ".ipynb")):
                    yield os.path.join(dirpath, name)


def as_notebook(text):
    blocks, current = [], []
    for line in text.splitlines(keepends=True):
        if current and line[:1] not in (" ", "\t", "\n", "#", ")", "]", "}"):
            blocks.append(current)
            current = []
        current.append(line)
    if current:
        blocks.append(current)
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]}]
    for i, block in enumerate(blocks):
        source = (["%matplotlib inline\n"] if i == 0 else []) + block
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                      "source": source})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def toml_from_tests():
    path = os.path.join(ROOT, "tests", "config_tests.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write"
                and len(node.args) >= 2):
            continue
        try:
            name, text = ast.literal_eval(node.args[0]), ast.literal_eval(node.args[1])
        except ValueError:
            continue
        if isinstance(name, str) and name.endswith(".toml") and isinstance(text, str):
            yield text


def snapshots():
    """Snapshots shaped as torch.cuda.memory._snapshot() returns them."""
    def frame(path, line, name):
        return {"filename": path, "line": line, "name": name}
    user = [frame("/home/u/proj/train.py", 57, "train"), frame("/home/u/proj/train.py", 90, "<module>")]
    lib = [frame("/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 116, "forward")]
    blocks = [{"address": 4096 * i, "size": 2 << 20, "requested_size": 2 << 20, "state": state,
               "frames": lib + user} for i, state in enumerate(["active_allocated", "inactive", "active_pending_free"])]
    segment = {"device": 0, "address": 0, "total_size": 6 << 20, "stream": 0, "segment_type": "large",
               "segment_pool_id": (0, 0), "is_expandable": False, "blocks": blocks}
    trace = [{"action": "alloc", "addr": 0, "size": 2 << 20, "stream": 0, "frames": lib + user},
             {"action": "oom", "addr": 1 << 30, "size": 1 << 31, "device_free": 1 << 30, "stream": 0, "frames": user},
             {"action": "free_requested", "addr": 0, "size": 2 << 20, "stream": 0, "frames": []}]
    yield {"segments": [segment], "device_traces": [trace], "allocator_settings": {"expandable_segments": False,
                                                                                   "garbage_collection_threshold": 0.0}}
    legacy = dict(segment, blocks=[{"size": 2 << 20, "state": "active_allocated",
                                    "history": [{"addr": 0, "real_size": 2 << 20, "frames": user}]}])
    yield [legacy]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lint", required=True, help="directory for the lint fuzzer's seeds")
    ap.add_argument("--config", required=True, help="directory for the config fuzzer's seeds")
    ap.add_argument("--explain", help="directory for the explain fuzzer's seeds")
    args = ap.parse_args()
    os.makedirs(args.lint, exist_ok=True)
    os.makedirs(args.config, exist_ok=True)
    counts = [0, 0, 0]
    if args.explain:
        os.makedirs(args.explain, exist_ok=True)
        logs = os.path.join(ROOT, "tests", "explain")
        for dirpath, dirnames, filenames in os.walk(logs):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".log", ".out", ".txt")):
                    with open(os.path.join(dirpath, name), "rb") as f:
                        write(args.explain, f.read())
                    counts[2] += 1
        for snap in snapshots():
            for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
                write(args.explain, pickle.dumps(snap, protocol=protocol))
                counts[2] += 1
    for path in python_files():
        with open(path, "rb") as f:
            data = f.read()
        write(args.lint, data)
        counts[0] += 1
        if path.endswith(".py"):
            write(args.lint, as_notebook(data.decode("utf-8", "replace")))
            counts[0] += 1
    for text in list(toml_from_tests()) + TOML_SEEDS:
        write(args.config, text)
        counts[1] += 1
    crashers = os.path.join(ROOT, "tests", "crashers")
    for name in sorted(os.listdir(crashers)):
        if name.endswith(".toml"):
            with open(os.path.join(crashers, name), "rb") as f:
                write(args.config, f.read())
            counts[1] += 1
    print(f"seeds: {counts[0]} for the lint fuzzer, {counts[1]} for the config fuzzer, {counts[2]} for the explain fuzzer")


if __name__ == "__main__":
    main()
