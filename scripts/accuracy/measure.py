#!/usr/bin/env python3
"""Measures oomlint's precision on real training code, against hand labels.

The corpus is a list of public repositories pinned at exact commits
(docs/accuracy/repos.tsv); the labels are one line per finding that a person
has read and judged (docs/accuracy/labels.tsv: repo, commit, path, line,
code, verdict TP/FP/debatable, reason). This script lints each checkout with
every rule (each selected by its code, which is what `--select ALL` does too:
opt-in rules, and the findings some rules report only when selected by code,
such as OOM302 and OOM303 on code that runs once), joins the findings with the
labels and prints, per rule:
findings, how many are labeled, TP / FP / debatable and the precision
TP / (TP + FP) (debatable findings are left out of the ratio and counted in
a worst case where they are wrong). It then lists

  - new findings: reported now, unlabeled, and absent from the baseline (the
    findings of the run the labels were made on, docs/accuracy/findings.tsv).
    After an engine change only these need reading: `--emit-unlabeled FILE`
    writes them as label lines to fill in. Findings of the baseline that were
    left out of the sample of a frequent rule are only counted;
  - labels whose finding is gone: a gone FP is noise removed, a gone TP is a
    real problem no longer found (a regression to look at).

A finding is identified by (repo, path, line, code), with the notebook cell for
.ipynb files (`path#cell`): the code is pinned, so lines do not move.

    scripts/accuracy/measure.py --corpus DIR            # checkouts in DIR/owner+name
    scripts/accuracy/measure.py --corpus DIR --clone    # clone missing ones first
    scripts/accuracy/measure.py --corpus DIR --default  # the default rule set only
    scripts/accuracy/measure.py --corpus DIR --write-baseline   # after labeling
    scripts/accuracy/measure.py --first-look            # each round's first look

A repository whose `path` column in repos.tsv names a folder (a big project's
`examples/`) is linted there only; finding paths stay relative to the checkout.

The first look of a round is what the engine reported on the round's
repositories before any fix of that round: docs/accuracy/rounds.tsv says which
round added each repository, and docs/accuracy/rounds/round<N>-firstlook.tsv
freezes that round's findings (repo, path, line, code, default: whether the
default rule set reports it). `--first-look` joins them with the labels and
prints, per round and rule, TP / FP / debatable, the precision among the
findings that are not debatable, and the share of the default output that is a
real problem: a rule whose findings were sampled contributes its default
findings times its sampled TP ratio (said so in the report). It needs neither
the binary nor the checkouts, so the numbers stay computable after the engine
changes.

Checkouts may be named DIR/owner+name or DIR/owner/name. With --clone, missing
ones are fetched from GitHub at the pinned commit (needs git and network).
The exit status is 0 when every listed repository was linted, 2 otherwise;
the numbers are printed, not judged.
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERDICTS = ("TP", "FP", "debatable")


def read_tsv(path):
    """Rows of a tab-separated file as dicts keyed by its header; '#' lines are comments."""
    rows = []
    with open(path, encoding="utf-8") as f:
        header = None
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
                continue
            if len(cells) < len(header):
                cells += [""] * (len(header) - len(cells))
            row = dict(zip(header, cells))
            row["_where"] = f"{path}:{lineno}"
            rows.append(row)
    return rows


def checkout_dir(corpus, repo):
    for cand in (os.path.join(corpus, repo.replace("/", "+")), os.path.join(corpus, repo)):
        if os.path.isdir(cand):
            return cand
    return None


def clone(corpus, repo, commit):
    dest = os.path.join(corpus, repo.replace("/", "+"))
    url = f"https://github.com/{repo}.git"
    steps = [["git", "init", "-q", dest],
             ["git", "-C", dest, "fetch", "-q", "--depth", "1", url, commit],
             ["git", "-C", dest, "checkout", "-q", "FETCH_HEAD"]]
    for cmd in steps:
        if subprocess.run(cmd).returncode != 0:
            print(f"measure: could not fetch {repo} at {commit}", file=sys.stderr)
            return None
    return dest


def finding_key(repo, f, base):
    path = os.path.relpath(f["path"], base)
    if f.get("cell") is not None:
        path = f"{path}#{f['cell']}"
    return (repo, path, int(f["line"]), f["code"])


def all_rules(binary):
    proc = subprocess.run([binary, "rules", "--format", "json"], capture_output=True, text=True, check=True)
    return [r["code"] for r in json.loads(proc.stdout)]


def lint(binary, base, every_rule, subtree=""):
    """Findings of one checkout (or of its folder `subtree`): every rule, each
    selected by its code (so opt-in rules and the findings a rule keeps for
    an exact selection are counted too), or the default set."""
    args = [binary, "--isolated", "--exit-zero", "-q", "--format", "json"]
    if every_rule:
        args += ["--select", ",".join(all_rules(binary))]
    target = os.path.join(base, subtree) if subtree else base
    if not os.path.isdir(target):
        raise RuntimeError(f"{base} has no folder {subtree}")
    proc = subprocess.run(args + [target], capture_output=True, text=True, timeout=1800)
    # Exit 2 with a report is a file oomlint could not read, an OOM001 finding
    # of the report (--exit-zero is about findings and leaves it 2)
    if proc.returncode not in (0, 2) or not proc.stdout.lstrip().startswith("["):
        raise RuntimeError(f"oomlint failed on {base} (exit {proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def label_key(row):
    return (row["repo"], row["path"], int(row["line"]), row["code"])


def first_look(rounds_rows, rounds_dir, labels):
    """Per round: its repositories, the frozen findings file (None where the
    round kept none) and per rule counts of findings, default findings and the
    verdicts of the labeled ones among them."""
    members = collections.OrderedDict()
    for row in rounds_rows:
        members.setdefault(row["round"], []).append(row["repo"])
    reports = []
    for rnd, repos in sorted(members.items(), key=lambda kv: (len(kv[0]), kv[0])):
        path = os.path.join(rounds_dir, f"round{rnd}-firstlook.tsv")
        report = {"round": rnd, "repos": repos, "file": path if os.path.exists(path) else None,
                  "rules": collections.defaultdict(collections.Counter), "problems": []}
        reports.append(report)
        if report["file"] is None:
            continue
        inside = set(repos)
        seen = set()
        for f in read_tsv(path):
            key = label_key(f)
            if key in seen:
                report["problems"].append(f"{f['_where']}: duplicate finding {key}")
                continue
            seen.add(key)
            if f["repo"] not in inside:
                report["problems"].append(f"{f['_where']}: {f['repo']} is not a repository of round {rnd}")
                continue
            if f.get("default") not in ("yes", "no"):
                report["problems"].append(f"{f['_where']}: default must be yes or no")
                continue
            c = report["rules"][f["code"]]
            default = f["default"] == "yes"
            c["findings"] += 1
            c["default"] += default
            row = labels.get(key)
            if row is not None:
                c["labeled"] += 1
                c[row["verdict"]] += 1
                if default:
                    c["labeled_default"] += 1
                    c["default_" + row["verdict"]] += 1
    return reports


def default_share(rules):
    """The default output split into real problems, wrong and debatable
    findings, each rule's default findings weighted by its labeled ratio;
    rules with default findings but no label are counted apart."""
    est = collections.Counter()
    sampled, unlabeled = [], []
    for code, c in sorted(rules.items()):
        if not c["default"]:
            continue
        est["default"] += c["default"]
        if not c["labeled_default"]:
            unlabeled.append(code)
            est["unlabeled"] += c["default"]
            continue
        if c["labeled_default"] < c["default"]:
            sampled.append(f"{code} {c['labeled_default']} of {c['default']}")
        for v in VERDICTS:
            est[v] += c["default"] * c["default_" + v] / c["labeled_default"]
    return est, sampled, unlabeled


def print_first_look(reports, out=sys.stdout):
    for rep in reports:
        n = len(rep["repos"])
        if rep["file"] is None:
            print(f"round {rep['round']} ({n} repositories): no first-look findings were kept", file=out)
            continue
        print(f"round {rep['round']} ({n} repositories, first-look findings in {os.path.relpath(rep['file'], ROOT)})",
              file=out)
        print(f"  {'rule':8} {'findings':>8} {'default':>7} {'labeled':>7} {'TP':>4} {'FP':>4} {'debat.':>6} "
              f"{'precision':>9}", file=out)
        totals = collections.Counter()
        for code in sorted(rep["rules"]):
            c = rep["rules"][code]
            totals.update(c)
            print("  " + first_look_row(code, c), file=out)
        print("  " + first_look_row("all", totals), file=out)
        est, sampled, unlabeled = default_share(rep["rules"])
        if est["default"]:
            d = est["default"]
            print(f"  default output: {d} findings; real problems {est['TP']:.1f} ({100.0 * est['TP'] / d:.1f}%), "
                  f"wrong {est['FP']:.1f} ({100.0 * est['FP'] / d:.1f}%), "
                  f"debatable {est['debatable']:.1f} ({100.0 * est['debatable'] / d:.1f}%)", file=out)
            if sampled:
                print("  extrapolated from samples (each rule's default findings times its sampled ratios): " +
                      ", ".join(sampled), file=out)
            if unlabeled:
                print(f"  not labeled, left out of the shares ({est['unlabeled']} findings): " +
                      ", ".join(unlabeled), file=out)
        else:
            print("  default output: no findings", file=out)
    print("precision = TP / (TP + FP) among the labeled findings; debatable ones are left out of it", file=out)


def first_look_row(code, c):
    judged = c["TP"] + c["FP"]
    prec = f"{100.0 * c['TP'] / judged:.1f}%" if judged else "-"
    return (f"{code:8} {c['findings']:>8} {c['default']:>7} {c['labeled']:>7} {c['TP']:>4} {c['FP']:>4} "
            f"{c['debatable']:>6} {prec:>9}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="directory holding the checkouts")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "oomlint"))
    ap.add_argument("--repos", default=os.path.join(ROOT, "docs", "accuracy", "repos.tsv"))
    ap.add_argument("--labels", default=os.path.join(ROOT, "docs", "accuracy", "labels.tsv"))
    ap.add_argument("--baseline", default=os.path.join(ROOT, "docs", "accuracy", "findings.tsv"),
                    help="the findings the labels were made on")
    ap.add_argument("--write-baseline", action="store_true", help="make this run's findings the baseline")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list unsampled baseline findings")
    ap.add_argument("--default", action="store_true", help="lint with the default rule set, not every rule")
    ap.add_argument("--clone", action="store_true", help="clone missing checkouts from GitHub")
    ap.add_argument("--emit-unlabeled", metavar="FILE", help="write unlabeled findings as label lines")
    ap.add_argument("--json", metavar="FILE", help="write every finding with its verdict as JSON")
    ap.add_argument("--first-look", action="store_true",
                    help="report each round's first look from its frozen findings and the labels; lints nothing")
    ap.add_argument("--rounds", default=os.path.join(ROOT, "docs", "accuracy", "rounds.tsv"),
                    help="the round that added each repository")
    ap.add_argument("--rounds-dir", default=os.path.join(ROOT, "docs", "accuracy", "rounds"),
                    help="the folder of round<N>-firstlook.tsv files")
    args = ap.parse_args()
    if not args.first_look and not args.corpus:
        ap.error("--corpus is needed unless --first-look is given")

    repos = read_tsv(args.repos)
    labels = {}
    problems = []
    for row in read_tsv(args.labels):
        if row.get("verdict") not in VERDICTS:
            problems.append(f"{row['_where']}: verdict must be one of {', '.join(VERDICTS)}")
            continue
        if row["verdict"] == "debatable" and not row.get("reason", "").strip():
            problems.append(f"{row['_where']}: a debatable label needs a reason")
        key = label_key(row)
        if key in labels:
            problems.append(f"{row['_where']}: duplicate label for {key}")
        labels[key] = row
    pinned = {r["repo"]: r["commit"] for r in repos}
    for key, row in labels.items():
        if pinned.get(row["repo"]) != row["commit"]:
            problems.append(f"{row['_where']}: {row['repo']} is pinned at {pinned.get(row['repo'])}, "
                            f"the label names {row['commit']}")

    if args.first_look:
        rounds_rows = read_tsv(args.rounds)
        for row in rounds_rows:
            if row["repo"] not in pinned:
                problems.append(f"{row['_where']}: {row['repo']} is not in {args.repos}")
            if not re.fullmatch(r"[0-9]+", row.get("round", "")):
                problems.append(f"{row['_where']}: a round is a number")
        reports = first_look(rounds_rows, args.rounds_dir, labels)
        for rep in reports:
            problems += rep["problems"]
        for p in problems:
            print(f"measure: {p}", file=sys.stderr)
        print_first_look(reports)
        return 2 if problems else 0

    for p in problems:
        print(f"measure: {p}", file=sys.stderr)

    findings = {}
    missing = []
    for r in repos:
        base = checkout_dir(args.corpus, r["repo"])
        if base is None and args.clone:
            base = clone(args.corpus, r["repo"], r["commit"])
        if base is None:
            missing.append(r["repo"])
            continue
        for f in lint(args.bin, base, not args.default, r.get("path", "").strip()):
            findings[finding_key(r["repo"], f, base)] = f
    if missing:
        print(f"measure: no checkout of {', '.join(missing)} in {args.corpus}", file=sys.stderr)

    baseline = set()
    if os.path.exists(args.baseline):
        baseline = {label_key(r) for r in read_tsv(args.baseline)}

    per_rule = collections.defaultdict(collections.Counter)
    unlabeled = []
    for key in sorted(findings):
        code = key[3]
        per_rule[code]["findings"] += 1
        row = labels.get(key)
        if row is None:
            unlabeled.append(key)
        else:
            per_rule[code][row["verdict"]] += 1
    checked = {r["repo"] for r in repos} - set(missing)
    gone = [k for k in sorted(labels) if k not in findings and k[0] in checked]

    print(f"{'rule':8} {'findings':>8} {'labeled':>8} {'TP':>5} {'FP':>5} {'debat.':>6} "
          f"{'precision':>10} {'worst':>7}")
    totals = collections.Counter()
    for code in sorted(per_rule):
        c = per_rule[code]
        totals.update(c)
        print(row_text(code, c))
    print(row_text("all", totals))
    print("precision = TP / (TP + FP); worst = TP / labeled (debatable counted as wrong)")

    new = [k for k in unlabeled if k not in baseline]
    unsampled = collections.Counter(k[3] for k in unlabeled if k in baseline)
    if unsampled:
        print(f"\n{sum(unsampled.values())} baseline findings outside the sample: " +
              ", ".join(f"{code} {n}" for code, n in sorted(unsampled.items())))
        if args.verbose:
            for key in unlabeled:
                if key in baseline:
                    print(f"  {key[0]} {key[1]}:{key[2]} {key[3]}  {findings[key]['message']}")
    if new:
        print(f"\n{len(new)} new findings to label:")
        for key in new:
            f = findings[key]
            print(f"  {key[0]} {key[1]}:{key[2]} {key[3]}  {f['message']}")
    if gone:
        print(f"\n{len(gone)} labeled findings no longer reported:")
        for key in gone:
            row = labels[key]
            what = "a real problem is missed now" if row["verdict"] == "TP" else "noise removed"
            print(f"  {key[0]} {key[1]}:{key[2]} {key[3]} was {row['verdict']} ({what})")

    if args.emit_unlabeled:
        with open(args.emit_unlabeled, "w", encoding="utf-8") as out:
            out.write("repo\tcommit\tpath\tline\tcode\tverdict\treason\n")
            for key in new:
                out.write(f"{key[0]}\t{pinned[key[0]]}\t{key[1]}\t{key[2]}\t{key[3]}\t\t"
                          f"{findings[key]['message']}\n")
    if args.write_baseline:
        with open(args.baseline, "w", encoding="utf-8") as out:
            out.write("# Every finding of the run the labels were made on (scripts/accuracy/measure.py\n"
                      "# --write-baseline); findings not listed here are new and need a label.\n")
            out.write("repo\tpath\tline\tcode\n")
            for key in sorted(findings):
                out.write(f"{key[0]}\t{key[1]}\t{key[2]}\t{key[3]}\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            rows = []
            for key in sorted(findings):
                row = labels.get(key)
                rows.append({"repo": key[0], "path": key[1], "line": key[2], "code": key[3],
                             "verdict": row["verdict"] if row else None,
                             "reason": row.get("reason") if row else None,
                             "message": findings[key]["message"],
                             "confidence": findings[key].get("confidence")})
            json.dump(rows, out, indent=1)
    return 2 if missing or problems else 0


def row_text(code, c):
    labeled = c["TP"] + c["FP"] + c["debatable"]
    judged = c["TP"] + c["FP"]
    prec = f"{100.0 * c['TP'] / judged:.1f}%" if judged else "-"
    worst = f"{100.0 * c['TP'] / labeled:.1f}%" if labeled else "-"
    return (f"{code:8} {c['findings']:>8} {labeled:>8} {c['TP']:>5} {c['FP']:>5} {c['debatable']:>6} "
            f"{prec:>10} {worst:>7}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    sys.exit(main())
