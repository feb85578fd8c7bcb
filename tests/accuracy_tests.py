"""The precision measurement (scripts/accuracy/measure.py) on a corpus made
here: findings are joined with labels, precision is counted per rule, new
findings, unsampled ones and labels whose finding is gone are told apart, and
the committed corpus files are well formed. The recall measurement
(scripts/accuracy/recall.py) on fixes made here: a fix found before and gone
after is a HIT, one still reported after is STUCK, one not found is a MISS."""
import json
import os
import subprocess
import sys

import harness
from harness import ROOT, Workspace, test

SCRIPT = os.path.join(ROOT, "scripts", "accuracy", "measure.py")
RECALL = os.path.join(ROOT, "scripts", "accuracy", "recall.py")

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


# The recall measurement. Commits are made-up 40-digit names of directories
# (corpus/me+train/COMMIT); git is needed only by the --mirrors test.
PARENT, FIX = "a" * 40, "b" * 40
BEFORE = """import torch
model = torch.nn.Linear(4, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train(loader):
    total = 0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()),
                                            y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
    state = \\
        torch.load("a.pt")
    torch.cuda.empty_cache()
    return total
"""
# OOM101 at 12; OOM302 reported at 14, in the statement of lines 13-14
AFTER = BEFORE.replace("total += loss", "total += loss.item()").replace('"a.pt")', '"a.pt", map_location="cpu")')
RECALL_HEADER = ("repo\tfix_commit\tparent\tpath\tbefore_line\trule\tafter_line\tdescription\tother_lines\t"
                 "miss_mechanism\n")


def recall_case(before_line, rule, after_line, other="", why=""):
    return f"me/train\t{FIX}\t{PARENT}\ttrain.py\t{before_line}\t{rule}\t{after_line}\tfixed\t{other}\t{why}\n"


def recall(ws, cases, before=BEFORE, after=AFTER, *extra):
    ws.write(f"corpus/me+train/{PARENT}/train.py", before)
    ws.write(f"corpus/me+train/{FIX}/train.py", after)
    ws.write("recall.tsv", "# a comment\n" + RECALL_HEADER + "".join(cases))
    return subprocess.run([sys.executable, RECALL, "--bin", harness.BIN, "--corpus", ws.path + "/corpus",
                           "--set", ws.path + "/recall.tsv", "--json", ws.path + "/out.json", *extra],
                          capture_output=True, text=True, timeout=300)


def outcomes(ws, context="file"):
    import json
    with open(os.path.join(ws.path, "out.json"), encoding="utf-8") as f:
        return [(c["rule"], c["before_line"], c["outcome"]) for c in json.load(f)[context]]


@test("recall: a fix found before and gone after is a HIT; a continuation line of the statement counts")
def _():
    with Workspace() as ws:
        p = recall(ws, [recall_case(12, "OOM101", 12), recall_case(13, "OOM302", 13)])
        assert p.returncode == 0, p.stderr
        assert outcomes(ws) == [("OOM101", "12", "HIT"), ("OOM302", "13", "HIT")], p.stdout
        assert outcomes(ws, "repo") == outcomes(ws), p.stdout
        assert row(p.stdout, "all")[1:] == ["2", "2", "0", "0", "100.0%"], p.stdout
        assert "Not found" not in p.stdout, p.stdout


@test("recall: a finding still at the fixed line is STUCK; none before is a MISS, listed with its mechanism")
def _():
    with Workspace() as ws:
        p = recall(ws, [recall_case(12, "OOM101", 12), recall_case(7, "OOM201", 7, why="no evaluation here"),
                        recall_case(11, "OOM101", 11)], BEFORE, BEFORE)
        assert p.returncode == 0, p.stderr
        assert outcomes(ws) == [("OOM101", "12", "STUCK"), ("OOM201", "7", "MISS"), ("OOM101", "11", "MISS")], p.stdout
        assert row(p.stdout, "OOM101")[1:] == ["2", "0", "1", "1", "0.0%"], p.stdout
        assert row(p.stdout, "all")[1:] == ["3", "0", "1", "2", "0.0%"], p.stdout
        assert "MISS  OOM201 me/train bbbbbbbbbb train.py:7 - no evaluation here" in p.stdout, p.stdout
        assert "MISS  OOM101 me/train bbbbbbbbbb train.py:11 - (not read yet)" in p.stdout, p.stdout


@test("recall: other_lines count as the problem; a deleted line passes when the after file has fewer findings")
def _():
    with Workspace() as ws:
        loop = BEFORE.replace("        total += loss\n", "        total += loss\n        torch.cuda.empty_cache()\n")
        p = recall(ws, [recall_case(5, "OOM101", 5, other="12"), recall_case(13, "OOM701", "-")], loop, AFTER)
        assert p.returncode == 0, p.stderr
        assert outcomes(ws) == [("OOM101", "5", "HIT"), ("OOM701", "13", "HIT")], p.stdout
        p = recall(ws, [recall_case(5, "OOM101", 5), recall_case(13, "OOM701", "-")], loop, loop)
        assert outcomes(ws) == [("OOM101", "5", "MISS"), ("OOM701", "13", "STUCK")], p.stdout


@test("recall: --rules picks every rule, every rule by its code, or the default set (no opt-in rule)")
def _():
    with Workspace() as ws:
        noqa = BEFORE.replace("    total = 0\n", "    total = 0  # noqa: OOM302\n")
        for rules, outcome in (("all", "HIT"), ("codes", "HIT"), ("default", "MISS")):
            p = recall(ws, [recall_case(5, "OOM003", 5), recall_case(12, "OOM101", 12)], noqa, AFTER,
                       "--rules", rules, "--context", "file")
            assert p.returncode == 0, p.stderr
            assert outcomes(ws) == [("OOM003", "5", outcome), ("OOM101", "12", "HIT")], (rules, p.stdout)
            assert f"rules: {rules} (2 cases)" in p.stdout, p.stdout


@test("recall: malformed rows and missing checkouts fail the run; --mirrors writes checkouts from git")
def _():
    with Workspace() as ws:
        p = recall(ws, [recall_case("x", "OOM101", 12), recall_case(12, "OOM101", 12)])
        assert p.returncode == 2 and "before_line a number" in p.stderr, p
        assert outcomes(ws) == [("OOM101", "12", "HIT")], p.stdout
        ws.write("recall.tsv", RECALL_HEADER + recall_case(12, "OOM101", 12).replace("me/train", "me/absent"))
        p = subprocess.run([sys.executable, RECALL, "--bin", harness.BIN, "--corpus", ws.path + "/corpus",
                            "--set", ws.path + "/recall.tsv"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 2 and "no checkout of me/absent" in p.stderr, p
        for extra, said in ((["--set", ws.path + "/absent.tsv"], "cannot read"),
                            (["--set", ws.path + "/recall.tsv", "--bin", ws.path + "/absent"], "cannot list the rules")):
            p = subprocess.run([sys.executable, RECALL, "--bin", harness.BIN, "--corpus", ws.path + "/corpus", *extra],
                               capture_output=True, text=True, timeout=300)
            assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, p
    with Workspace() as ws:
        git = ["git", "-C", ws.path + "/mirrors/me+train", "-c", "user.name=t", "-c", "user.email=t@t"]
        ws.write("mirrors/me+train/train.py", BEFORE)
        subprocess.run(git + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "train.py"], check=True)
        subprocess.run(git + ["commit", "-qm", "before"], check=True)
        ws.write("mirrors/me+train/train.py", AFTER)
        subprocess.run(git + ["commit", "-qam", "fix"], check=True)
        parent, fix = subprocess.run(git + ["rev-list", "HEAD"], capture_output=True, text=True,
                                     check=True).stdout.split()[::-1]
        ws.write("recall.tsv", RECALL_HEADER + recall_case(12, "OOM101", 12).replace(FIX, fix).replace(PARENT, parent))
        p = subprocess.run([sys.executable, RECALL, "--bin", harness.BIN, "--corpus", ws.path + "/corpus",
                            "--mirrors", ws.path + "/mirrors", "--set", ws.path + "/recall.tsv", "--context", "file"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert row(p.stdout, "all")[1:] == ["1", "1", "0", "0", "100.0%"], p.stdout
        assert os.path.isfile(ws.path + f"/corpus/me+train/{parent}/train.py"), os.listdir(ws.path + "/corpus")


@test("recall: the committed recall set is well formed and names real fixes")
def _():
    import csv
    with open(os.path.join(ROOT, "docs", "accuracy", "recall.tsv"), encoding="utf-8") as f:
        rows = list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))
    assert len(rows) >= 30, len(rows)
    rules = {r["code"] for r in harness.run("rules", "--format", "json").json()}
    seen = set()
    for r in rows:
        assert len(r["fix_commit"]) == 40 and len(r["parent"]) == 40 and r["fix_commit"] != r["parent"], r
        assert r["rule"] in rules and r["before_line"].isdigit(), r
        assert r["after_line"].isdigit() or r["after_line"] == "-", r
        assert r["description"].strip(), r
        key = (r["repo"], r["fix_commit"], r["path"])
        assert key not in seen, key
        seen.add(key)
