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


@test("accuracy: a repository's path column lints only that folder, paths stay relative to the checkout")
def _():
    with Workspace() as ws:
        corpus(ws, [])
        ws.write("corpus/me+train/examples/train.py", TRAIN)
        ws.write("repos.tsv", "repo\tcommit\tkind\tpath\nme/train\tabc123\ttest\texamples\n")
        p = measure(ws, "--write-baseline")
        assert p.returncode == 0, p.stderr
        lines = [line for line in ws.read("findings.tsv").splitlines() if not line.startswith("#")]
        assert "me/train\texamples/train.py\t13\tOOM101" in lines, lines
        assert not any("\ttrain.py\t" in line for line in lines), lines
        ws.write("repos.tsv", "repo\tcommit\tkind\tpath\nme/train\tabc123\ttest\tabsent\n")
        p = measure(ws)
        assert p.returncode != 0 and "has no folder absent" in p.stderr, p


def first_look(ws, frozen, labels, rounds="me/a\t1\nme/b\t1\nme/c\t2\n"):
    """A corpus of three repositories in two rounds; only round 1 kept its first look."""
    ws.write("repos.tsv", "repo\tcommit\tkind\nme/a\tc1\ttest\nme/b\tc2\ttest\nme/c\tc3\ttest\n")
    ws.write("rounds.tsv", "# which round added each\nrepo\tround\n" + rounds)
    ws.write("rounds/round1-firstlook.tsv", "# frozen\nrepo\tpath\tline\tcode\tdefault\tmessage\n" +
             "".join(f"{r}\t{p}\t{l}\t{c}\t{d}\tm\n" for r, p, l, c, d in frozen))
    commit = {"me/a": "c1", "me/b": "c2", "me/c": "c3"}
    ws.write("labels.tsv", "repo\tcommit\tpath\tline\tcode\tverdict\treason\n" +
             "".join(f"{r}\t{commit[r]}\t{p}\t{l}\t{c}\t{v}\twhy\n" for r, p, l, c, v in labels))
    return subprocess.run([sys.executable, SCRIPT, "--first-look", "--repos", ws.path + "/repos.tsv",
                           "--labels", ws.path + "/labels.tsv", "--rounds", ws.path + "/rounds.tsv",
                           "--rounds-dir", ws.path + "/rounds", "--bin", "/nonexistent/oomlint"],
                          capture_output=True, text=True, timeout=60)


FROZEN = [("me/a", "t.py", 1, "OOM302", "yes"), ("me/a", "t.py", 2, "OOM302", "yes"),
          ("me/b", "u.py", 3, "OOM302", "yes"), ("me/b", "u.py", 4, "OOM302", "yes"),
          ("me/a", "t.py", 5, "OOM501", "yes"), ("me/b", "u.py", 6, "OOM501", "yes"),
          ("me/a", "t.py", 7, "OOM401", "no")]
LABELS = [("me/a", "t.py", 1, "OOM302", "TP"), ("me/b", "u.py", 3, "OOM302", "FP"),
          ("me/a", "t.py", 5, "OOM501", "TP"), ("me/b", "u.py", 6, "OOM501", "debatable"),
          ("me/a", "t.py", 7, "OOM401", "TP"),
          ("me/c", "v.py", 9, "OOM201", "FP")]  # round 2 kept no first look: not counted


@test("accuracy: --first-look counts each round's frozen findings and extrapolates the default output")
def _():
    with Workspace() as ws:
        p = first_look(ws, FROZEN, LABELS)
        assert p.returncode == 0, p.stderr
        out = p.stdout
        r1 = out[out.index("round 1 (2 repositories"):]
        assert row(r1, "OOM302")[1:] == ["4", "4", "2", "1", "1", "0", "50.0%"], out
        assert row(r1, "OOM501")[1:] == ["2", "2", "2", "1", "0", "1", "100.0%"], out
        assert row(r1, "OOM401")[1:] == ["1", "0", "1", "1", "0", "0", "100.0%"], out
        assert row(r1, "all")[1:] == ["7", "6", "5", "3", "1", "1", "75.0%"], out
        # default output 6: OOM302 4 x (1/2 TP, 1/2 FP), OOM501 2 x (1/2 TP, 1/2 debatable);
        # the opt-in OOM401's right finding is not part of it
        assert ("default output: 6 findings; real problems 3.0 (50.0%), wrong 2.0 (33.3%), "
                "debatable 1.0 (16.7%)") in out, out
        assert "extrapolated from samples" in out and "OOM302 2 of 4" in out, out
        assert "OOM501 2 of 2" not in out, out
        assert "round 2 (1 repositories): no first-look findings were kept" in out, out
        assert "OOM201" not in out, out


@test("accuracy: --first-look leaves unlabeled default rules out of the shares and says so")
def _():
    with Workspace() as ws:
        p = first_look(ws, FROZEN + [("me/a", "t.py", 8, "OOM303", "yes")], LABELS)
        assert p.returncode == 0, p.stderr
        assert "default output: 7 findings; real problems 3.0 (42.9%)" in p.stdout, p.stdout
        assert "not labeled, left out of the shares (1 findings): OOM303" in p.stdout, p.stdout


@test("accuracy: --first-look rejects a malformed round")
def _():
    with Workspace() as ws:
        p = first_look(ws, FROZEN + [("me/c", "v.py", 9, "OOM201", "yes"), ("me/a", "t.py", 10, "OOM201", "maybe"),
                                     ("me/a", "t.py", 1, "OOM302", "yes")], LABELS,
                       rounds="me/a\t1\nme/b\t1\nme/c\t2\nme/zz\tthree\n")
        assert p.returncode == 2, p
        assert "me/c is not a repository of round 1" in p.stderr, p.stderr
        assert "default must be yes or no" in p.stderr, p.stderr
        assert "duplicate finding" in p.stderr, p.stderr
        assert "me/zz is not in" in p.stderr and "a round is a number" in p.stderr, p.stderr


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
    rounds = {r["repo"]: r["round"] for r in rows("rounds.tsv")}
    assert set(rounds) == set(repos) and all(n.isdigit() for n in rounds.values()), set(repos) ^ set(rounds)
    frozen_dir = os.path.join(ROOT, "docs", "accuracy", "rounds")
    for name in sorted(os.listdir(frozen_dir)):
        n = name[len("round"):-len("-firstlook.tsv")]
        assert name.startswith("round") and name.endswith("-firstlook.tsv") and n.isdigit(), name
        frozen = rows(os.path.join("rounds", name))
        assert frozen and all(rounds.get(r["repo"]) == n and r["default"] in ("yes", "no") for r in frozen), name
