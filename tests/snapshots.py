#!/usr/bin/env python3
"""Snapshots of what users read: beside every fixture, a `.snap` file with
each finding's code, severity, range, message, help, the evidence it stands
on (each note's place and words, and what it guesses from) and fix (its
applicability, message, why it is unsafe, and a diff of what it changes),
rendered from oomlint's JSON output. A `# expect:` marker pins a code on a
line; the snapshot pins the words, the range and the edit, so that a change
to any of them shows in the diff of the commit that made it (ruff's `.snap`
files and clang-tidy's CHECK-MESSAGES/CHECK-FIXES are the models).

    fixtures/OOM101/fix.py          ->  fixtures/OOM101/fix.py.snap
    fixtures/OOM101/project_meter/  ->  fixtures/OOM101/project_meter.snap

The run is the fixture harness's own (fixture_set.py: --isolated, the
default set plus the rule of the directory), from the fixture's directory,
so no absolute path or timing reaches the text. The fixture group of the
test suite compares every snapshot (fixture_tests.py); this script writes
them:

    python3 tests/snapshots.py --bin build/oomlint            # all (`make snapshots`)
    python3 tests/snapshots.py --bin build/oomlint PATH ...   # these fixtures only
    python3 tests/snapshots.py --bin build/oomlint --check    # compare, write nothing

Writing also removes the snapshots whose fixture is gone, and says how many
snapshots changed."""
import argparse
import difflib
import io
import json
import os
import shlex
import subprocess
import sys
import tokenize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fixture_set import FIXTURES, fixture_files, invocation, project_dirs, project_files  # noqa: E402

SUFFIX = ".snap"
HEADER = "# Written by `make snapshots` (tests/snapshots.py) from the JSON output; review changes as a diff."


class SnapshotError(Exception):
    """oomlint could not produce a snapshot: it crashed or printed no JSON."""


def snapshot_path(target):
    """Where the snapshot of a fixture file or project directory lives."""
    return os.path.normpath(target) + SUFFIX


def targets(root=FIXTURES):
    """Every fixture that has a snapshot: the files, then the projects."""
    return sorted(list(fixture_files(root)) + list(project_dirs(root)))


def lint(binary, target, root=FIXTURES):
    """oomlint's findings on target (a list of JSON objects) and its warnings on stderr."""
    args, cwd, path = invocation(target, root)
    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    env["NO_COLOR"] = "1"
    proc = subprocess.run([binary, *args, path], cwd=cwd, env=env, capture_output=True, text=True,
                          errors="replace", timeout=300)
    if proc.returncode not in (0, 1, 2):
        raise SnapshotError(f"{target}: oomlint exited {proc.returncode}\n{proc.stderr[-3000:]}")
    try:
        findings = json.loads(proc.stdout)
    except ValueError as e:
        raise SnapshotError(f"{target}: the output is not JSON ({e}):\n{proc.stdout[:2000]}{proc.stderr[-2000:]}")
    return findings, proc.stderr


# ---- applying a fix's edits, for its diff ----------------------------------------------------------

def read_python(path):
    """A Python file's text as oomlint reads it: decoded by its PEP 263 declaration."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except (SyntaxError, LookupError):
        # a codec Python does not know (future-fstrings): oomlint reads UTF-8 there
        encoding = "utf-8-sig"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        return None


def cell_sources(path):
    """A notebook's cells' source texts, by cell number (1-based); None if unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            cells = json.load(f).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return None
    out = {}
    for index, cell in enumerate(cells, start=1):
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        out[index] = "".join(src) if isinstance(src, list) else str(src)
    return out


def split_lines(text):
    """text as lines that keep their "\\n", split where oomlint counts lines (a form
    feed or U+2028 inside a line does not end it, as str.splitlines would)."""
    parts = text.split("\n")
    lines = [x + "\n" for x in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def offset(lines, line, column):
    """Offset of a 1-based (line, column in code points) position in the text split
    into lines (ends kept); None when the position is not in the text."""
    if line == len(lines) + 1 and column == 1:
        return sum(len(x) for x in lines)
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    content = len(text.rstrip("\r\n"))
    if not 1 <= column <= content + 1:
        return None
    return sum(len(x) for x in lines[:line - 1]) + column - 1


def apply_edits(text, edits):
    """text with the edits (JSON objects) applied, or None when one does not fit it."""
    lines = split_lines(text)
    spans = []
    for e in edits:
        start = offset(lines, e["line"], e["column"])
        end = offset(lines, e["end_line"], e["end_column"])
        if start is None or end is None or end < start:
            return None
        spans.append((start, end, e["content"]))
    spans.sort()
    for (s1, e1, _), (s2, _, _) in zip(spans, spans[1:]):
        if s2 < e1:
            return None
    for start, end, content in reversed(spans):
        text = text[:start] + content + text[end:]
    return text


def diff_lines(before, after):
    """The changed lines as unified-diff hunks with a line of context, file headers dropped."""
    diff = list(difflib.unified_diff(split_lines(before), split_lines(after), n=1, lineterm=""))
    return [line.rstrip("\r\n") for line in diff[2:]]  # [2:]: the ---/+++ file lines


def fix_lines(fix, texts, cell=None):
    """The lines that show a fix: its diff against the text it edits (per cell in a
    notebook), or its edits one by one when they do not apply to the text read here."""
    out = []
    by_cell = {}
    for e in fix.get("edits", []):
        by_cell.setdefault(e.get("cell"), []).append(e)
    for edit_cell in sorted(by_cell, key=lambda c: c or 0):
        edits = by_cell[edit_cell]
        before = texts.get(edit_cell) if texts is not None else None
        after = apply_edits(before, edits) if before is not None else None
        if len(by_cell) > 1 or (cell is not None and edit_cell != cell):
            out.append(f"in cell {edit_cell}:")
        if after is not None:
            out.extend(diff_lines(before, after))
        else:
            for e in edits:
                out.append(f"edit {e['line']}:{e['column']}-{e['end_line']}:{e['end_column']}: "
                           f"{json.dumps(e['content'], ensure_ascii=False)}")
    return out


# ---- rendering -------------------------------------------------------------------------------------

def labelled(label, text):
    """`label: text`, continuation lines of a multi-line text indented under it."""
    lines = str(text).split("\n")
    return [f"  {label}: {lines[0]}"] + [f"    {x}" for x in lines[1:]]


def render_finding(f, texts):
    where = f"{f['line']}:{f['column']}-{f['end_line']}:{f['end_column']}"
    if f.get("cell"):
        where = f"cell {f['cell']}, {where}"
    out = [f"{f['code']} [{f['severity']}] {where}"]
    out += labelled("message", f["message"])
    if f.get("help") is not None:
        out += labelled("help", f["help"])
    for e in f.get("evidence", []):
        at = f"{e['line']}:{e['column']}" if e.get("column") else f"{e['line']}"
        if e.get("cell"):
            at = f"cell {e['cell']}, {at}"
        out += labelled(f"{e['kind']} {e['path']}:{at}", e["message"])
    if f.get("guessed_from"):
        out += labelled("guess", f["guessed_from"])
    fix = f.get("fix")
    if fix:
        out += labelled(f"fix ({fix['applicability']})", fix["message"])
        if fix.get("unsafe_reason"):
            out += labelled("unsafe because", fix["unsafe_reason"])
        out += [f"    {x}" for x in fix_lines(fix, texts, f.get("cell"))]
    return out


def texts_of(path):
    """The texts a fix can edit in path, keyed by cell (None for a plain file)."""
    if path.endswith(".ipynb"):
        return cell_sources(path)
    text = read_python(path)
    return None if text is None else {None: text}


def command_line(target, root):
    """The run a snapshot shows, as a shell command from the repository's root."""
    args, cwd, path = invocation(target, root)
    shown = [a for a in args if a not in ("--format", "json")]
    line = "oomlint " + " ".join(shlex.quote(a) for a in shown + [path])
    if os.path.isdir(target):
        top = os.path.dirname(os.path.normpath(os.path.abspath(root)))
        line = f"cd {shlex.quote(os.path.relpath(cwd, top).replace(os.sep, '/'))} && {line}"
    return line


def render(target, findings, stderr, root=FIXTURES):
    """The snapshot text of target from its findings and warnings."""
    project = os.path.isdir(target)
    out = [f"# {command_line(target, root)}", HEADER]
    warnings = [x for x in stderr.splitlines() if x.startswith("oomlint: ")]
    if warnings:
        out.append("")
        out += [f"stderr: {x}" for x in warnings]
    if project:
        by_file = {}
        for f in findings:
            by_file.setdefault(os.path.normpath(f["path"]).replace(os.sep, "/"), []).append(f)
        names = sorted(set(project_files(target)) | set(by_file))
        for name in names:
            got = by_file.get(name, [])
            out.append("")
            out.append(f"== {name}" + ("" if got else " (no findings)"))
            texts = texts_of(os.path.join(target, name))
            for i, f in enumerate(got):
                out += ([""] if i else []) + render_finding(f, texts)
    else:
        if not findings:
            out += ["", "no findings"]
        texts = texts_of(target)
        for f in findings:
            out.append("")
            out += render_finding(f, texts)
    # no line ends in blanks (a blank context line of a diff would): editors and
    # `git diff --check` strip or flag them, and a snapshot must survive an edit
    return "\n".join(x.rstrip() for x in out) + "\n"


def current(binary, target, root=FIXTURES):
    """What target's snapshot should say now."""
    findings, stderr = lint(binary, target, root)
    return render(target, findings, stderr, root)


def compare(binary, target, root=FIXTURES):
    """None when target's snapshot is what oomlint reports now, else what differs
    (a unified diff from the snapshot to the output)."""
    path = snapshot_path(target)
    rel = os.path.relpath(path, os.path.dirname(root)).replace(os.sep, "/")
    now = current(binary, target, root)
    if not os.path.exists(path):
        return f"{rel} is missing: run `make snapshots` and review what it wrote"
    with open(path, encoding="utf-8", newline="") as f:
        saved = f.read()
    if saved == now:
        return None
    diff = "".join(difflib.unified_diff(saved.splitlines(True), now.splitlines(True),
                                        f"{rel} (committed)", f"{rel} (oomlint now)"))
    return f"{rel} differs from what oomlint reports (run `make snapshots` if the change is meant):\n{diff}"


def orphans(root=FIXTURES):
    """Snapshots whose fixture is gone (or is no longer a fixture)."""
    wanted = {snapshot_path(t) for t in targets(root)}
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.endswith(SUFFIX) and os.path.normpath(path) not in wanted:
                found.append(path)
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the oomlint binary")
    ap.add_argument("--check", action="store_true", help="compare only: print what differs, write nothing")
    ap.add_argument("--root", default=FIXTURES, help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help="fixtures (files, project directories or directories of them);"
                    " default: every fixture")
    args = ap.parse_args(argv)
    binary = os.path.abspath(args.bin)
    root = os.path.abspath(args.root)
    every = targets(root)
    if args.paths:
        chosen = []
        for p in args.paths:
            p = os.path.normpath(os.path.abspath(p))
            inside = [t for t in every if t == p or t.startswith(p + os.sep)]
            if not inside:
                print(f"snapshots: {p} is not a fixture and holds none", file=sys.stderr)
                return 2
            chosen += [t for t in inside if t not in chosen]
    else:
        chosen = every
    changed = new = 0
    problems = []
    for target in chosen:
        try:
            now = current(binary, target, root)
        except SnapshotError as e:
            problems.append(str(e))
            continue
        path = snapshot_path(target)
        saved = None
        if os.path.exists(path):
            with open(path, encoding="utf-8", newline="") as f:
                saved = f.read()
        if saved == now:
            continue
        if args.check:
            problems.append(compare(binary, target, root) or f"{path} changed while being read")
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(now)
        if saved is None:
            new += 1
        else:
            changed += 1
    gone = orphans(root) if not args.paths else []
    for path in gone:
        if args.check:
            problems.append(f"{os.path.relpath(path, os.path.dirname(root))} has no fixture")
        else:
            os.remove(path)
    for p in problems:
        print(p, file=sys.stderr)
    verb = "differ" if args.check else "changed"
    print(f"snapshots: {len(chosen)} checked, {changed} {verb}, {new} new, {len(gone)} without a fixture"
          + (" (removed)" if gone and not args.check else "")
          + (f", {len(problems)} problems" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
