#!/usr/bin/env python3
"""Measures oomlint's recall on real fixes: commits of public repositories that
fixed a GPU memory leak or waste.

Each row of the set (docs/accuracy/recall.tsv) names a repository, the fix
commit and its parent, the file, the line of the parent's file where the
problem is, the rule that should report it and the line of the fix commit's
file where the problem was (the fixed statement; '-' when the fix deleted
it). other_lines may name more lines of the file before the fix where a
report of the rule also counts: the call that hands the value to the method
that keeps it, or the call of the evaluation function the fix wrapped in
no_grad. A case is

  - HIT   when the rule reports the problem in the file before the fix and not
          at the fixed line after it;
  - STUCK when it reports the problem before the fix but still reports it at
          the fixed line after it (the fix is not recognised);
  - MISS  when it does not report the problem before the fix.

Recall is HIT / cases, per rule and overall. "Reports the problem" means a
finding of the expected rule whose lines overlap the statement that holds the
named line (a multi-line call, or the header of a `with`/`for`; the whole
line alone when the file does not parse as Python 3). After a deleting fix,
the after file passes when it has fewer findings of the rule than the before
file.

Each case is linted twice: the file alone, and the file within the checkout
of its whole repository (oomlint then follows imports between the project's
files). Misses are listed with the mechanism written in the set's
miss_mechanism column (why the engine misses it, found by reading).

Checkouts are read from DIR/owner+name/COMMIT (a tree of the repository at
that commit). With --mirrors MDIR, missing ones are written there from git
repositories MDIR/owner+name (or MDIR/owner+name/repo) with `git archive`,
Python files only.

    scripts/accuracy/recall.py --corpus DIR [--mirrors MDIR] [--bin PATH]
                               [--rules all|codes|default]

Rules are selected as the precision measurement does (ALL and the opt-in
ones); --rules codes names every rule by its code (a rule may keep findings on
code that runs once only when it is selected by code), --rules default lints
with the default set.

The exit status is 0 when every case could be linted, 2 otherwise; the
numbers are printed, not judged.
"""
import argparse
import ast
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COLUMNS = ("repo", "fix_commit", "parent", "path", "before_line", "rule", "after_line", "description",
           "other_lines", "miss_mechanism")
CONTEXTS = ("file", "repo")
OUTCOMES = ("HIT", "STUCK", "MISS")


def read_set(path):
    """Rows of the recall set; '#' lines are comments. Returns (rows, problems)."""
    rows, problems, header = [], [], None
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
                missing = [c for c in COLUMNS if c not in header]
                if missing:
                    problems.append(f"{path}:{lineno}: missing columns {', '.join(missing)}")
                    return [], problems
                continue
            cells += [""] * (len(header) - len(cells))
            row = dict(zip(header, cells))
            row["_where"] = f"{path}:{lineno}"
            bad = [c for c in ("fix_commit", "parent") if len(row[c]) != 40]
            others = [x for x in row["other_lines"].split(",") if x.strip()]
            if bad or not row["before_line"].isdigit() or not (row["after_line"].isdigit() or
                                                                 row["after_line"] == "-") \
                    or not all(x.strip().isdigit() for x in others):
                problems.append(f"{row['_where']}: commits must be 40 hex digits, before_line a number, "
                                f"after_line a number or '-', other_lines numbers separated by commas")
                continue
            rows.append(row)
    return rows, problems


def statement_span(source, line):
    """The lines of the innermost statement holding `line`: a simple statement
    whole, a compound one by its header only. (line, line) when the source
    does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return (line, line)
    best = (line, line)
    best_len = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        start, end = node.lineno, node.end_lineno or node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            first = body[0].lineno
            decorators = getattr(node, "decorator_list", [])
            start = min([start] + [d.lineno for d in decorators])
            end = max(start, first - 1) if first > node.lineno else node.lineno
        if start <= line <= end and (best_len is None or end - start < best_len):
            best, best_len = (start, end), end - start
    return best


def on_span(findings, code, span):
    lo, hi = span
    return [f for f in findings if f["code"] == code and f["line"] <= hi and f.get("end_line", f["line"]) >= lo]


def score_case(row, before_src, before_findings, after_src, after_findings):
    """HIT, STUCK or MISS for one case, given the findings of each file."""
    code = row["rule"]
    lines = [int(row["before_line"])] + [int(x) for x in row.get("other_lines", "").split(",") if x.strip()]
    found = [f for line in lines for f in on_span(before_findings, code, statement_span(before_src, line))]
    if not found:
        return "MISS"
    if row["after_line"] == "-":
        before_n = sum(1 for f in before_findings if f["code"] == code)
        after_n = sum(1 for f in after_findings if f["code"] == code)
        return "HIT" if after_n < before_n else "STUCK"
    still = on_span(after_findings, code, statement_span(after_src, int(row["after_line"])))
    return "STUCK" if still else "HIT"


def tally(results):
    """Per-rule counts of outcomes, with an 'all' row: {rule: Counter}."""
    per_rule = collections.defaultdict(collections.Counter)
    for row, outcome in results:
        per_rule[row["rule"]][outcome] += 1
        per_rule["all"][outcome] += 1
    return per_rule


def recall_text(c):
    n = sum(c[o] for o in OUTCOMES)
    return f"{100.0 * c['HIT'] / n:.1f}%" if n else "-"


def checkout(corpus, mirrors, repo, commit):
    base = os.path.join(corpus, repo.replace("/", "+"), commit)
    if os.path.isdir(base):
        return base
    if not mirrors:
        return None
    for cand in (os.path.join(mirrors, repo.replace("/", "+"), "repo"), os.path.join(mirrors, repo.replace("/", "+"))):
        if os.path.isdir(cand):
            git = cand
            break
    else:
        return None
    os.makedirs(base)
    archive = subprocess.run(["git", "-C", git, "archive", "--format=tar", commit, "--", ":(glob)**/*.py"],
                             capture_output=True)
    if archive.returncode != 0:
        os.rmdir(base)
        print(f"recall: {repo}: no commit {commit} in {git}: {archive.stderr.decode(errors='replace').strip()}",
              file=sys.stderr)
        return None
    subprocess.run(["tar", "-x", "-C", base], input=archive.stdout, check=True)
    return base


def selection_args(binary, selection):
    """The rule selection: every rule (ALL and the opt-in ones, as the
    precision measurement does), every rule named by its code (rules that keep
    some findings only when selected by code report them all), or the default
    set."""
    if selection == "default":
        return []
    proc = subprocess.run([binary, "rules", "--format", "json"], capture_output=True, text=True, check=True)
    rules = json.loads(proc.stdout)
    if selection == "codes":
        return ["--select", ",".join(r["code"] for r in rules)]
    return ["--select", "ALL"] + [a for r in rules if r.get("opt_in") for a in ("--extend-select", r["code"])]


def lint(binary, target, selection):
    args = [binary, "--isolated", "--exit-zero", "-q", "--format", "json"] + selection
    proc = subprocess.run(args + [target], capture_output=True, text=True, timeout=1800)
    # Exit 2 with a report is a file oomlint could not read (OOM001, in the
    # report): for recall that is a miss, not a failed measurement.
    if proc.returncode not in (0, 2) or not proc.stdout.lstrip().startswith("["):
        raise RuntimeError(f"oomlint failed on {target} (exit {proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


class Linter:
    """Findings per file, the file alone or within its checkout (each checkout linted once)."""

    def __init__(self, binary, selection):
        self.binary = binary
        self.selection = selection_args(binary, selection)
        self.trees = {}

    def file_alone(self, base, path):
        return lint(self.binary, os.path.join(base, path), self.selection)

    def in_repo(self, base, path):
        if base not in self.trees:
            by_path = collections.defaultdict(list)
            for f in lint(self.binary, base, self.selection):
                by_path[os.path.relpath(f["path"], base)].append(f)
            self.trees[base] = by_path
        return self.trees[base].get(os.path.normpath(path), [])


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="directory holding the checkouts (owner+name/COMMIT)")
    ap.add_argument("--mirrors", help="directory of git repositories to write missing checkouts from")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--set", default=os.path.join(ROOT, "docs", "accuracy", "recall.tsv"))
    ap.add_argument("--context", choices=CONTEXTS + ("both",), default="both")
    ap.add_argument("--rules", choices=("all", "codes", "default"), default="all",
                    help="every rule (default), every rule named by its code, or the default set")
    ap.add_argument("--json", metavar="FILE", help="write every case with its outcome as JSON")
    args = ap.parse_args()

    try:
        rows, problems = read_set(args.set)
    except (OSError, UnicodeDecodeError) as e:
        print(f"recall: cannot read {args.set}: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"recall: {p}", file=sys.stderr)
    contexts = CONTEXTS if args.context == "both" else (args.context,)
    try:
        linter = Linter(args.bin, args.rules)
    except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as e:
        print(f"recall: cannot list the rules of {args.bin}: {e}", file=sys.stderr)
        return 2
    results = {c: [] for c in contexts}
    failed = bool(problems)
    for row in rows:
        before = checkout(args.corpus, args.mirrors, row["repo"], row["parent"])
        after = checkout(args.corpus, args.mirrors, row["repo"], row["fix_commit"])
        if before is None or after is None or not os.path.isfile(os.path.join(before, row["path"])) \
                or not os.path.isfile(os.path.join(after, row["path"])):
            print(f"recall: {row['_where']}: no checkout of {row['repo']} {row['path']} at "
                  f"{row['parent'][:10]} and {row['fix_commit'][:10]}", file=sys.stderr)
            failed = True
            continue
        before_src = read(os.path.join(before, row["path"]))
        after_src = read(os.path.join(after, row["path"]))
        for ctx in contexts:
            get = linter.file_alone if ctx == "file" else linter.in_repo
            try:
                outcome = score_case(row, before_src, get(before, row["path"]), after_src, get(after, row["path"]))
            except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
                print(f"recall: {row['_where']}: {e}", file=sys.stderr)
                failed = True
                continue
            results[ctx].append((row, outcome))

    for ctx in contexts:
        title = "the file alone" if ctx == "file" else "the file within its repository"
        print(f"\nRecall, {title}, rules: {args.rules} ({len(results[ctx])} cases)")
        print(f"{'rule':8} {'cases':>6} {'HIT':>5} {'STUCK':>6} {'MISS':>5} {'recall':>8}")
        per_rule = tally(results[ctx])
        for code in sorted(k for k in per_rule if k != "all") + ["all"]:
            c = per_rule[code]
            print(f"{code:8} {sum(c[o] for o in OUTCOMES):>6} {c['HIT']:>5} {c['STUCK']:>6} {c['MISS']:>5} "
                  f"{recall_text(c):>8}")
        not_hit = [(r, o) for r, o in results[ctx] if o != "HIT"]
        if not_hit:
            print(f"\nNot found ({ctx}):")
            for r, o in not_hit:
                why = r.get("miss_mechanism", "").strip() or "(not read yet)"
                print(f"  {o:5} {r['rule']} {r['repo']} {r['fix_commit'][:10]} {r['path']}:{r['before_line']}"
                      f" - {why}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({ctx: [{k: v for k, v in r.items() if not k.startswith("_")} | {"outcome": o}
                             for r, o in results[ctx]] for ctx in contexts}, f, indent=1)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
