#!/usr/bin/env python3
"""Writes the skeleton of a new rule, ready to build and pass the tests, for
its author to fill in (ruff's scripts/add_rule.py and clang-tidy's
add_new_check.py are the models):

    python3 scripts/add_rule.py OOM706 some-rule-name --severity warning --summary "..."
    make rule CODE=OOM706 NAME=some-rule-name          # the same

writes
    rules/oom706_some_rule_name.c      the rule: its documentation (TODO text) and
                                       a check that reports every call of
                                       `some_rule_name(...)` (--pattern), a working
                                       placeholder to replace with the real logic
    rules/rules.def                    its line, in code order (the registry, the
                                       docs and the README's table come from it)
    analyzer/references.c              a placeholder reference for its page
    fixtures/OOM706/positive.py        a call of the pattern, `# expect: OOM706`
    fixtures/OOM706/negative.py        code the rule must leave alone
and then builds oomlint and regenerates what derives from the list: the
rule's page in docs/rules/ and the README's table (`make docs`), and the
fixtures' snapshots. --no-build writes the files only and says what to run.

It refuses a malformed code, a code or name that exists, and a pattern that
is already called in the fixtures or examples/ (the new rule would report
there, and their expectations would fail)."""
import argparse
import keyword
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = re.compile(r"^OOM([1-9]\d\d)$")
NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
SEVERITIES = {"error": "OL_SEV_ERROR", "warning": "OL_SEV_WARNING", "info": "OL_SEV_INFO"}
LISTED = re.compile(r"^OL_RULE\((OOM\d{3}), (\w+)\)$", re.M)


class Refused(Exception):
    pass


def c_string(text):
    """text as a C string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def write(rel, text, written):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(rel)


def existing_names():
    """The names of the rules in rules/, from their ol_rule values."""
    names = {}
    for entry in sorted(os.listdir(os.path.join(ROOT, "rules"))):
        if entry.endswith(".c"):
            for code, name in re.findall(r'\.code = "(OOM\d{3})",\s*\.name = "([^"]+)"', read(f"rules/{entry}")):
                names[name] = code
    return names


def check_request(code, name, pattern):
    """Raises Refused with the reason when the rule cannot be added as asked."""
    if not CODE.match(code):
        raise Refused(f"'{code}' is not a rule code: OOM and three digits, OOM100 to OOM999 "
                      "(OOM001-OOM099 are oomlint's own reports)")
    if not NAME.match(name):
        raise Refused(f"'{name}' is not a rule name: lowercase words joined by hyphens, such as "
                      "tensor-accumulated-with-graph")
    listed = dict(LISTED.findall(read("rules/rules.def")))
    if code in listed:
        raise Refused(f"{code} exists: rules/rules.def lists it ({listed[code]})")
    for rel in (f"fixtures/{code}", f"docs/rules/{code}.md"):
        if os.path.exists(os.path.join(ROOT, rel)):
            raise Refused(f"{code} exists: {rel} is there")
    stem = code.lower() + "_"
    clash = [e for e in os.listdir(os.path.join(ROOT, "rules")) if e.startswith(stem)]
    if clash:
        raise Refused(f"{code} exists: rules/{clash[0]} is there")
    names = existing_names()
    if name in names:
        raise Refused(f"the name '{name}' is {names[name]}'s")
    if not pattern.isidentifier() or keyword.iskeyword(pattern):
        raise Refused(f"the pattern '{pattern}' is not a Python function name")
    called = re.compile(r"\b" + re.escape(pattern) + r"\s*\(")
    for dirpath, dirnames, filenames in (w for top in ("fixtures", "examples")
                                         for w in os.walk(os.path.join(ROOT, top))):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(".py") or f.endswith(".ipynb"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    if called.search(fh.read()):
                        rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                        raise Refused(f"`{pattern}(` is already called in {rel}: the new rule would report "
                                      "there; choose another --pattern")


def rule_source(code, name, severity, summary, pattern, opt_in):
    low = code.lower()
    summary = summary or f"TODO: one sentence on what {code} flags."
    head = textwrap.fill(
        "TODO: a paragraph on why the pattern costs GPU memory (or time), what the check looks at, and "
        "what it leaves alone on purpose. Until then the check is a working placeholder written by "
        f"scripts/add_rule.py: it reports every plain call of `{pattern}(...)`, so that fixtures/{code}/ "
        "has something to pin. Replace the check, then the fixtures, the snapshots (`make snapshots`) "
        "and the documentation below (`make docs` writes the pages).",
        width=74, initial_indent=" * ", subsequent_indent=" * ", break_on_hyphens=False)
    return f"""/*
 * {code} {name}: TODO: the pattern this rule flags, in a few words.
 *
{head}
 */
#include "rule.h"

/* The placeholder's pattern: a call of this function by its bare name. */
#define PLACEHOLDER_CALL "{pattern}"

static void check(ol_check *c)
{{
    ol_model *m = c->model;
    ol_sym placeholder = ol_model_intern(m, PLACEHOLDER_CALL);
    for (size_t i = 0; i < m->calls.len; i++) {{
        const ol_call *call = &m->calls.items[i];
        if (call->receiver != OL_NONE || call->name != placeholder)
            continue;
        ol_diag *d = ol_report_node(c, call->node, "`" PLACEHOLDER_CALL "(...)` is called here (TODO: say what "
                                                   "it costs, with the names involved)");
        ol_diag_help(d, "TODO: say what to write instead, in one line");
        /* the facts the finding stands on, shown as its evidence: ask the
         * door (analyzer/public/ask.h), here how often the call runs */
        ol_reasons why = {{0}};
        ol_how_often(m, call->node, &why);
        if (why.len == 0)
            ol_because(&why, m, call->node, "TODO: the fact this finding stands on");
        ol_diag_because(d, m, &why);
    }}
}}

const ol_rule ol_rule_{low} = {{
    .code = "{code}",
    .name = "{name}",
    .severity = {SEVERITIES[severity]},
    .opt_in = {"true" if opt_in else "false"},
    .summary = {c_string(summary)},
    .what = "TODO: what the rule flags, and what it leaves alone. (For now: every call of "
            "`" PLACEHOLDER_CALL "(...)` by its bare name.)",
    .why = "TODO: why this pattern costs memory or time, and when; with numbers from `oomlint probe` "
           "once it has a scenario.",
    .example = PLACEHOLDER_CALL "(model)",
    .instead = "# TODO: what to write instead\\nmodel",
    .fix = NULL,
    .tags = "memory",
    .precision = "medium",
    .check = check,
}};
"""


def positive_fixture(code, name, pattern):
    return f'''# {code} {name}: code the rule must report, with an `# expect:` marker
# naming {code} on each line where it should. Written by scripts/add_rule.py
# around the placeholder pattern (a call of `{pattern}(...)`): replace it
# with the training code that shows the real pattern.


def {pattern}(model):
    return model


model = {pattern}(object())  # expect: {code}
'''


def negative_fixture(code, name, pattern):
    return f'''# {code} {name}: code the rule must leave alone (no marker: any finding
# here fails the fixture tests). Written by scripts/add_rule.py around the
# placeholder pattern: a method of that name and a mention that is not a
# call are not the pattern.


class Wrapper:
    def {pattern}(self, model):
        return model


wrapped = Wrapper().{pattern}(object())
also = {pattern} if False else None
'''


def add_listing(code, written):
    """rules/rules.def with the new rule's line in code order."""
    text = read("rules/rules.def")
    line = f"OL_RULE({code}, ol_rule_{code.lower()})"
    lines = text.split("\n")
    listed = [i for i, x in enumerate(lines) if LISTED.match(x)]
    at = next((i for i in listed if LISTED.match(lines[i]).group(1) > code), (listed[-1] + 1) if listed else len(lines))
    lines.insert(at, line)
    write("rules/rules.def", "\n".join(lines), written)


def add_reference(code, written):
    """A placeholder entry in analyzer/references.c (every rule's page has references)."""
    rel = "analyzer/references.c"
    text = read(rel)
    entry = (f'    {{"{code}",\n'
             f'     {{{{"TODO: the page that explains what {code}\'s pattern costs (placeholder: '
             f'CUDA semantics, memory management)",\n'
             f'       PT_DOCS "notes/cuda.html#memory-management"}},\n'
             f'      END}}}},\n')
    codes = [(m.start(), m.group(1)) for m in re.finditer(r'^    \{"(OOM\d{3})",$', text, re.M)]
    end = text.find("\n};", codes[-1][0]) + 1 if codes else -1
    if end <= 0:
        raise Refused(f"{rel} does not have the reference table this script knows how to extend")
    at = next((pos for pos, c in codes if c > code), end)
    write(rel, text[:at] + entry + text[at:], written)


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode == 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write the skeleton of a new rule: its source, its fixtures, "
                                 "its line in rules/rules.def.")
    ap.add_argument("code", help="the new rule's code, e.g. OOM706")
    ap.add_argument("name", help="its name, lowercase words joined by hyphens, e.g. some-rule-name")
    ap.add_argument("--severity", choices=sorted(SEVERITIES), default="warning")
    ap.add_argument("--summary", help="one sentence: what it flags (the README's table shows it)")
    ap.add_argument("--pattern", help="the function whose calls the placeholder check reports"
                    " (default: the name with underscores, e.g. some_rule_name)")
    ap.add_argument("--opt-in", action="store_true", help="run only when selected by its exact code")
    ap.add_argument("--no-build", action="store_true",
                    help="write the files only; do not build, regenerate the docs or write the snapshots")
    args = ap.parse_args(argv)
    code, name = args.code, args.name
    pattern = args.pattern or name.replace("-", "_")
    try:
        check_request(code, name, pattern)
    except Refused as why:
        print(f"add_rule: {why}", file=sys.stderr)
        return 2
    written = []
    source = f"rules/{code.lower()}_{name.replace('-', '_')}.c"
    write(source, rule_source(code, name, args.severity, args.summary, pattern, args.opt_in), written)
    write(f"fixtures/{code}/positive.py", positive_fixture(code, name, pattern), written)
    write(f"fixtures/{code}/negative.py", negative_fixture(code, name, pattern), written)
    add_listing(code, written)
    add_reference(code, written)
    print(f"add_rule: wrote {', '.join(written)}")
    steps = [["make", "--no-print-directory"], ["make", "--no-print-directory", "docs"],
             [sys.executable, "tests/snapshots.py", "--bin", "build/oomlint", f"fixtures/{code}"]]
    if args.no_build:
        print(f"add_rule: now run `make && make docs && make snapshots`: they build {code}, write "
              f"docs/rules/{code}.md and the README's table, and the snapshots of fixtures/{code}/")
        return 0
    for step in steps:
        if not run(step):
            print(f"add_rule: `{' '.join(step)}` failed; once it is fixed, run `make && make docs && "
                  "make snapshots`", file=sys.stderr)
            return 1
    print(f"add_rule: {code} {name} builds and is registered; docs/rules/{code}.md, README.md's table and "
          f"fixtures/{code}/*.snap written. Next: replace the placeholder check in {source}, the fixtures, "
          f"and every TODO (the rule's documentation, its reference in analyzer/references.c); "
          f"`make docs` and `make snapshots` rewrite what derives from them.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
