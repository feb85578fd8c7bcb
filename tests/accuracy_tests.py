"""The precision measurement (scripts/accuracy/measure.py) on a corpus made
here: findings are joined with labels, precision is counted per rule, new
findings, unsampled ones and labels whose finding is gone are told apart, and
the committed corpus files are well formed. The recall measurement
(scripts/accuracy/recall.py) on fixes made here: a fix found before and gone
after is a HIT, one still reported after is STUCK, one not found is a MISS.
docs/accuracy.md, the page a user reads, stays short, its tables agree with
what measure.py computes from the committed files, and every link of it and
of the notes it sends to (docs/accuracy/) resolves; docs/accuracy/changes.md
counts what changes.tsv lists and names every regression that stands."""
import csv
import json
import os
import re
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
        # beside the frozen findings, each round's notes (roundN.md, checked with the page)
        if name.endswith(".md"):
            assert name[len("round"):-len(".md")].isdigit() and name.startswith("round"), name
            continue
        n = name[len("round"):-len("-firstlook.tsv")]
        assert name.startswith("round") and name.endswith("-firstlook.tsv") and n.isdigit(), name
        frozen = rows(os.path.join("rounds", name))
        assert frozen and all(rounds.get(r["repo"]) == n and r["default"] in ("yes", "no") for r in frozen), name


# ---- docs/accuracy.md and its notes ----------------------------------------------------------

PAGE = os.path.join(ROOT, "docs", "accuracy.md")
DEPRECATIONS = ("OOM502", "OOM703", "OOM704")
# neither memory nor deprecation: files that cannot be read or parsed, unused suppressions
FILE_LEVEL = ("OOM001", "OOM002", "OOM003")


def slug(heading):
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[`*_\[\]]|\]\([^)]*\)", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    names, seen, fence = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"^#{1,6} (.+)$", line.rstrip("\n"))
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                names.add(base if n == 0 else f"{base}-{n}")
    return names


def first_look_report():
    """measure.py --first-look over the committed files: {round: {rule or 'all': (default, labeled, TP, FP, debatable)}}
    and each round's default-output shares line."""
    proc = subprocess.run([sys.executable, SCRIPT, "--first-look"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rounds, shares, current = {}, {}, None
    for line in proc.stdout.splitlines():
        m = re.match(r"round (\d+) ", line)
        if m:
            current = int(m.group(1))
            continue
        m = re.match(r"  (OOM\d+|all)\s+\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", line)
        if m and current:
            rounds.setdefault(current, {})[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
        m = re.search(r"default output: .*\(([\d.]+)%\), wrong .*\(([\d.]+)%\), debatable .*\(([\d.]+)%\)", line)
        if m and current:
            shares[current] = m.groups()
    return rounds, shares


def page_tables(page=None):
    """The page's tables as lists of cell rows, by the header's first cells."""
    with open(page or PAGE, encoding="utf-8") as f:
        text = f.read()
    tables = {}
    for block in re.findall(r"((?:^\|.*\|\n)+)", text, re.M):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block.strip().split("\n")]
        tables[tuple(rows[0][:2])] = [r for r in rows[2:]]
    return text, tables


def pct(num, den):
    return f"{100 * num / den:.1f}%".replace(".0%", "%") if den else "-"


@test("accuracy: docs/accuracy.md is a short page; its first-look tables are what measure.py computes")
def _():
    text, tables = page_tables()
    assert len(text.splitlines()) < 200, len(text.splitlines())
    for heading in ("## First look: each round before its fixes", "## The labeling standard",
                    "## Recall on real fixes", "## What each rule still gets wrong"):
        assert heading in text, heading
    # the standard, with the restore clause of OOM302
    assert "doubles the peak at load" in text and "debatable" in text and "deprecation" in text
    rounds, shares = first_look_report()
    headline = tables[("round", "repositories")]
    assert [int(r[0]) for r in headline] == sorted(rounds), (headline, sorted(rounds))
    for r in headline:
        default, labeled, tp, fp, deb = rounds[int(r[0])]["all"]
        assert (r[3], r[4], r[5], r[6]) == (str(labeled), str(tp), str(fp), str(deb)), r
        assert r[7] == f"{100 * tp / (tp + fp):.1f}%", r
        assert r[8].startswith(" / ".join(f"{x}%" for x in shares[int(r[0])])), (r, shares[int(r[0])])
    # memory rules and deprecation rules apart, from the same per-rule counts
    split = tables[("round", "memory rules: TP / FP / debatable")]
    assert [int(r[0]) for r in split] == sorted(rounds), split
    for r in split:
        rules = rounds[int(r[0])]
        memory = [v for code, v in rules.items() if code != "all" and code not in DEPRECATIONS + FILE_LEVEL]
        dep = [v for code, v in rules.items() if code in DEPRECATIONS]
        tp, fp, deb = (sum(v[i] for v in memory) for i in (2, 3, 4))
        assert r[1] == f"{tp} / {fp} / {deb}" and r[2] == f"{100 * tp / (tp + fp):.1f}%", (r, tp, fp, deb)
        # the memory rules' default findings that are real: each rule's default count times its TP share
        default = sum(v[0] for v in memory if v[1])
        real = sum(v[0] * v[2] / v[1] for v in memory if v[1])
        assert r[3].startswith(f"{100 * real / default:.1f}% of {default}"), (r, real, default)
        dtp, dfp = sum(v[2] for v in dep), sum(v[3] for v in dep)
        assert r[4] == f"{dtp} / {dfp}" and r[5] == pct(dtp, dtp + dfp), (r, dtp, dfp)
    # per rule: rounds 8 and 9, labeled whole, as the frozen files and labels give them (on their own page)
    per_rule = page_tables(os.path.join(ROOT, "docs", "accuracy", "per-rule.md"))[1][("rule", "round 3")]
    listed = {r[0].split()[0] for r in per_rule}
    for rnd in (8, 9):
        labeled = {code for code, v in rounds[rnd].items() if code != "all" and v[1]}
        assert labeled <= listed, (rnd, labeled - listed)
    for r in per_rule:
        code = r[0].split()[0]
        for col, rnd in ((9, 8), (10, 9)):
            v = rounds[rnd].get(code)
            want = f"{v[2]} / {v[3]} / {v[4]}" if v and v[1] else None
            if want:
                assert r[col] == want, (code, rnd, r[col], want)
            else:
                assert r[col] in ("—", "not labeled"), (code, rnd, r[col])


def fresh_recall(name):
    """{rule: [HIT, cases]} of a fresh recall set, within the repository, every rule."""
    out = {}
    with open(os.path.join(ROOT, "docs", "accuracy", name), encoding="utf-8") as f:
        for r in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"):
            v = out.setdefault(r["rule"], [0, 0])
            v[0] += r["outcome_repo"] == "HIT"
            v[1] += 1
    return out


@test("accuracy: the page leads with each rule's first look on the last two rounds and its recall on the fresh fixes")
def _():
    text, tables = page_tables()
    assert text.index("## In short") < text.index("## First look"), "the per-rule table leads the page"
    rounds, _ = first_look_report()
    last, before = sorted(rounds)[-1], sorted(rounds)[-2]
    lead = tables.get(("rule", f"round {last}: right / wrong / debatable"))
    assert lead, f"the lead table's columns are rounds {last} and {before}"
    sets = (fresh_recall("recall-fresh2.tsv"), fresh_recall("recall-fresh.tsv"))

    def labels(code, rnd):
        v = rounds[rnd].get(code)
        if not v or not v[1]:
            return ["—", "—"]
        return [f"{v[2]} / {v[3]} / {v[4]}", pct(v[2], v[2] + v[3]) if v[2] + v[3] else "—"]

    rows = {r[0].split()[0].strip("*"): r for r in lead}
    wanted = {c for rnd in (last, before) for c, v in rounds[rnd].items()
              if c != "all" and v[1] and c not in FILE_LEVEL} | set(sets[0]) | set(sets[1])
    assert wanted <= set(rows), wanted - set(rows)
    for code in wanted:
        r = rows[code]
        want = labels(code, last) + labels(code, before) + \
            [f"{s[code][0]} of {s[code][1]}" if code in s else "—" for s in sets]
        assert r[1:] == want, (code, r, want)
    for name, codes in (("memory", [c for c in wanted if c not in DEPRECATIONS]),
                        ("deprecation", [c for c in wanted if c in DEPRECATIONS])):
        r = rows[name]
        for col, rnd in ((1, last), (3, before)):
            t = [sum(rounds[rnd].get(c, (0,) * 5)[i] for c in codes) for i in (2, 3, 4)]
            assert r[col] == f"{t[0]} / {t[1]} / {t[2]}", (name, rnd, r[col], t)
        for col, s in ((5, sets[0]), (6, sets[1])):
            hit, n = sum(s[c][0] for c in codes if c in s), sum(s[c][1] for c in codes if c in s)
            assert r[col] == f"{hit} of {n} ({pct(hit, n)})", (name, r[col], hit, n)


@test("accuracy: each round's notes are under docs/accuracy/rounds/, and every link of the page and the notes resolves")
def _():
    notes = os.path.join(ROOT, "docs", "accuracy")
    pages = [PAGE] + [os.path.join(notes, f) for f in sorted(os.listdir(notes)) if f.endswith(".md")]
    pages += [os.path.join(notes, "rounds", f"round{n}.md") for n in range(1, 10)]
    checked = 0
    for page in pages:
        assert os.path.isfile(page), page
        with open(page, encoding="utf-8") as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            assert os.path.exists(full), f"{os.path.relpath(page, ROOT)} links to {target}: no such file"
            if anchor:
                assert full.endswith(".md") and anchor in anchors(full), \
                    f"{os.path.relpath(page, ROOT)} links to {target}: no such heading"
            checked += 1
    assert checked > 50, checked
    # the page sends the reader to every round's notes
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    for n in range(1, 11):
        assert f"(accuracy/rounds/round{n}.md)" in text, n


CHANGES = os.path.join(ROOT, "docs", "accuracy", "changes.tsv")
CHANGE_VERDICTS = {"right-to-go": "right", "right-to-add": "right", "regression": "regression",
                   "debatable": "debatable", "restored": "restored", "not-read": "not read"}


def change_rows():
    with open(CHANGES, encoding="utf-8") as f:
        return list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))


def slash(*counts):
    return " / ".join(str(c) for c in counts)


@test("accuracy: changes.md counts what changes.tsv lists, by rule and by mechanism, and names each standing regression")
def _():
    rows = change_rows()
    # two steps, the second starting where the first ends
    steps = {r["step"] for r in rows}
    first = [s for s in steps if any(s.split("..")[1] == t.split("..")[0] for t in steps)]
    assert len(steps) == 2 and len(first) == 1, steps
    first, second = first[0], (steps - set(first)).pop()
    seen = {}
    for r in rows:
        assert r["selection"] in ("default", "all") and r["change"] in ("gone", "new"), r
        assert r["label"] in ("TP", "FP", "debatable", "unlabeled") and r["verdict"] in CHANGE_VERDICTS, r
        assert r["mechanism"] and r["line"].isdigit() and r["rule"].startswith("OOM"), r
        k = (r["repo"], r["path"], r["line"], r["rule"], r["selection"])
        assert (k, r["step"]) not in seen, (k, r["step"])
        seen[k, r["step"]] = r
    # a finding that changed in both steps went and came back (or the reverse): net unchanged; else net is the change
    for (k, step), r in seen.items():
        other = seen.get((k, second if step == first else first))
        if other:
            assert other["change"] != r["change"] and r["net"] == other["net"] == "unchanged", (r, other)
        else:
            assert r["net"] == r["change"], r
    _, tables = page_tables(os.path.join(ROOT, "docs", "accuracy", "changes.md"))
    with open(os.path.join(ROOT, "docs", "accuracy", "changes.md"), encoding="utf-8") as f:
        text = f.read()

    def count(sel, rule=None, mech=None, step=None, net=False):
        pick = [r for r in rows if r["selection"] == sel and rule in (None, r["rule"]) and mech in (None, r["mechanism"])
                and step in (None, r["step"]) and (not net or r["net"] != "unchanged")]
        return slash(sum(r["change"] == "gone" for r in pick), sum(r["change"] == "new" for r in pick))

    per_rule = tables[("rule", "step 1, default: gone / new")]
    listed = {r[0].strip("*") for r in per_rule}
    assert listed == {r["rule"] for r in rows} | {"all"}, listed
    for r in per_rule:
        rule = None if r[0].strip("*") == "all" else r[0].strip("*")
        want = [count(sel, rule, step=s) for sel in ("default", "all") for s in (first, second, None)]
        want[2], want[5] = count("default", rule, net=True), count("all", rule, net=True)
        assert [c.strip("*") for c in r[1:]] == want, (r, want)
    # labeled default findings: what changed between the two ends is what the net rows add and take away
    labeled = tables[("rule", "919a1a7: TP / FP / debatable")]
    for r in labeled:
        rule = None if r[0].strip("*") == "all" else r[0].strip("*")
        before = [int(x) for x in r[1].strip("*").split(" / ")]
        after = [int(x) for x in r[2].strip("*").split(" / ")]
        net = [x for x in rows if x["selection"] == "default" and x["net"] != "unchanged" and rule in (None, x["rule"])]
        delta = [sum(1 if x["change"] == "new" else -1 for x in net if x["label"] == lab)
                 for lab in ("TP", "FP", "debatable")]
        assert [a - b for a, b in zip(after, before)] == delta, (r, delta)
        assert r[3].strip("*") == " / ".join(f"{d:+d}" if d else "0" for d in delta), (r, delta)
    mechs = tables[("mechanism", "commit")]
    assert {r[0].strip("`") for r in mechs} == {r["mechanism"] for r in rows}, mechs
    for r in mechs:
        mech = r[0].strip("`")
        assert r[1].strip("`") == ", ".join(sorted({x["commits"] for x in rows if x["mechanism"] == mech})), r
        assert [r[2], r[3]] == [count("default", mech=mech), count("all", mech=mech)], r
        verdicts = {}
        for x in rows:
            if x["mechanism"] == mech:
                v = CHANGE_VERDICTS[x["verdict"]]
                verdicts[v] = verdicts.get(v, 0) + 1
        order = ("right", "regression", "debatable", "restored", "not read")
        want = ", ".join(f"{v} {verdicts[v]}" for v in order if v in verdicts)
        assert r[4] == want, (r, want)
    # the regressions that stand at the later end are listed at the top, by file and line
    top = text.split("\n## ")[1]
    assert top.startswith("Regressions"), top[:40]
    standing = {f"{r['path']}:{r['line']}" for r in rows if r["verdict"] == "regression" and r["net"] != "unchanged"}
    listed = set(re.findall(r"^- `([^`]+:\d+)`", top, re.M))
    assert standing == listed, (standing - listed, listed - standing)


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
