"""The precision measurement (scripts/accuracy/measure.py) on a corpus made
here: findings are joined with labels, precision is counted per rule, new
findings, unsampled ones and labels whose finding is gone are told apart, and
the committed corpus files are well formed."""
import os
import subprocess
import sys

import harness
from harness import ROOT, Workspace, test

SCRIPT = os.path.join(ROOT, "scripts", "accuracy", "measure.py")

TRAIN = """import torch
import torch.nn as nn
model = nn.Linear(4, 2).cuda()
crit = nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train(loader):
    total = 0
    for x, y in loader:
        loss = crit(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
state = torch.load("a.pt")
other = torch.load("b.pt")
"""
# OOM101 at line 13, OOM302 at 14 and 15, OOM501 at 11


def measure(ws, *extra):
    proc = subprocess.run([sys.executable, SCRIPT, "--bin", harness.BIN, "--corpus", ws.path + "/corpus",
                           "--repos", ws.path + "/repos.tsv", "--labels", ws.path + "/labels.tsv",
                           "--baseline", ws.path + "/findings.tsv", *extra],
                          capture_output=True, text=True, timeout=300)
    return proc


def corpus(ws, labels, baseline=None):
    ws.write("corpus/me+train/train.py", TRAIN)
    ws.write("repos.tsv", "# a comment\nrepo\tcommit\tkind\nme/train\tabc123\ttest\n")
    rows = "".join(f"me/train\tabc123\ttrain.py\t{line}\t{code}\t{verdict}\t{reason}\n"
                   for line, code, verdict, reason in labels)
    ws.write("labels.tsv", "repo\tcommit\tpath\tline\tcode\tverdict\treason\n" + rows)
    if baseline is not None:
        ws.write("findings.tsv", "repo\tpath\tline\tcode\n" +
                 "".join(f"me/train\ttrain.py\t{line}\t{code}\n" for line, code in baseline))


def row(out, code):
    for line in out.splitlines():
        if line.split()[:1] == [code]:
            return line.split()
    raise AssertionError(f"no row for {code} in:\n{out}")


@test("accuracy: precision per rule counts TP and FP; debatable only in the worst case")
def _():
    with Workspace() as ws:
        corpus(ws, [(13, "OOM101", "TP", "graph kept"), (14, "OOM302", "TP", "ckpt"),
                    (15, "OOM302", "FP", "host data"), (11, "OOM501", "debatable", "tiny model")],
               baseline=[(13, "OOM101"), (14, "OOM302"), (15, "OOM302"), (11, "OOM501")])
        p = measure(ws)
        assert p.returncode == 0, p.stderr
        assert row(p.stdout, "OOM302")[1:] == ["2", "2", "1", "1", "0", "50.0%", "50.0%"], p.stdout
        assert row(p.stdout, "OOM501")[1:] == ["1", "1", "0", "0", "1", "-", "0.0%"], p.stdout
        assert "new findings" not in p.stdout and "no longer" not in p.stdout, p.stdout


@test("accuracy: new findings are listed to label, unsampled baseline ones only counted")
def _():
    with Workspace() as ws:
        corpus(ws, [(13, "OOM101", "TP", "graph kept")], baseline=[(13, "OOM101"), (14, "OOM302")])
        p = measure(ws, "--emit-unlabeled", ws.path + "/todo.tsv")
        assert p.returncode == 0, p.stderr
        assert "1 baseline findings outside the sample: OOM302 1" in p.stdout, p.stdout
        assert "2 new findings to label" in p.stdout, p.stdout
        todo = ws.read("todo.tsv").splitlines()
        assert todo[0].startswith("repo\tcommit\tpath\tline\tcode\tverdict"), todo
        assert sorted(r.split("\t")[3] + r.split("\t")[4] for r in todo[1:]) == ["11OOM501", "15OOM302"], todo


@test("accuracy: a label whose finding is gone is reported, TP as a regression")
def _():
    with Workspace() as ws:
        corpus(ws, [(13, "OOM101", "TP", "graph kept"), (20, "OOM201", "TP", "eval"),
                    (21, "OOM201", "FP", "not eval")], baseline=[])
        p = measure(ws)
        assert "train.py:20 OOM201 was TP (a real problem is missed now)" in p.stdout, p.stdout
        assert "train.py:21 OOM201 was FP (noise removed)" in p.stdout, p.stdout


@test("accuracy: malformed labels and missing checkouts fail the run")
def _():
    with Workspace() as ws:
        corpus(ws, [(13, "OOM101", "maybe", "?"), (14, "OOM302", "debatable", "")], baseline=[])
        p = measure(ws)
        assert p.returncode == 2, p
        assert "verdict must be one of" in p.stderr and "needs a reason" in p.stderr, p.stderr
    with Workspace() as ws:
        corpus(ws, [], baseline=[])
        ws.write("repos.tsv", "repo\tcommit\tkind\nme/train\tabc123\ttest\nme/absent\tdef456\ttest\n")
        p = measure(ws)
        assert p.returncode == 2 and "no checkout of me/absent" in p.stderr, p


@test("accuracy: --write-baseline records every finding of the run")
def _():
    with Workspace() as ws:
        corpus(ws, [])
        p = measure(ws, "--write-baseline")
        assert p.returncode == 0, p.stderr
        lines = [line for line in ws.read("findings.tsv").splitlines() if not line.startswith("#")]
        assert lines[0] == "repo\tpath\tline\tcode", lines
        assert "me/train\ttrain.py\t13\tOOM101" in lines and len(lines) == 5, lines
        assert "new findings" not in measure(ws).stdout


@test("accuracy: the committed corpus files agree with each other")
def _():
    import csv
    def rows(name):
        with open(os.path.join(ROOT, "docs", "accuracy", name), encoding="utf-8") as f:
            return list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))
    repos = {r["repo"]: r["commit"] for r in rows("repos.tsv")}
    assert len(repos) >= 10 and all(len(c) == 40 for c in repos.values()), repos
    seen = set()
    for r in rows("labels.tsv"):
        assert repos.get(r["repo"]) == r["commit"], r
        assert r["verdict"] in ("TP", "FP", "debatable") and r["reason"].strip(), r
        key = (r["repo"], r["path"], r["line"], r["code"])
        assert key not in seen, key
        seen.add(key)
    baseline = {(r["repo"], r["path"], r["line"], r["code"]) for r in rows("findings.tsv")}
    assert baseline and {r["repo"] for r in rows("findings.tsv")} <= set(repos)
