#!/usr/bin/env python3
"""manpage.py --bin OOMLINT: writes oomlint(1) in man(7) roff to stdout.

The page is generated, never written by hand, from what the binary itself
says: `oomlint --help` gives the synopsis and the options (each `--flag`
line of the help becomes an option entry), and `oomlint rules --format json`
with `oomlint rule CODE --markdown` give one section per rule, from the same
renderer as docs/rules/. So the page cannot drift from the program; the tests
lint it with groff and lexgrog. Its COPYRIGHT section comes from LICENSE and
THIRD_PARTY_NOTICES at the top of the source tree. Only the standard library
is used.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HOME = "https://github.com/oomlint/oomlint"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(binary, *args):
    proc = subprocess.run([binary, *args], capture_output=True, text=True, check=True)
    return proc.stdout


def esc(text):
    """Escapes prose for roff: backslashes, and a leading '.' or "'"."""
    text = text.replace("\\", "\\e")
    return text


def code(text):
    """Literal text (options, code): backslashes escaped, '-' as a real minus."""
    return esc(text).replace("-", "\\-")


def inline(text):
    """Markdown inline markup to roff: `code`, **bold**, [text](url)."""
    out = []
    pos = 0
    pattern = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)")
    for m in pattern.finditer(text):
        out.append(esc(text[pos:m.start()]))
        if m.group(1) is not None:
            # a long span such as `torch.zeros/ones/.../randperm(...)` may break after a '/'
            out.append("\\fB" + code(m.group(1)).replace("/", "/\\:") + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fB" + esc(m.group(2)) + "\\fR")
        else:
            # \: lets a long URL break after '/', '#' or '-' rather than overflow the line
            url = re.sub(r"([/#]|\\-)", r"\1\\:", code(m.group(4)))
            out.append(esc(m.group(3)) + " <\\fI" + url + "\\fR>")
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def line(text):
    """One output line: a roff request character at its start is made literal."""
    return "\\&" + text if text.startswith((".", "'")) else text


# `-j, --threads N`, `--color WHEN`, `--fix`: flags, each with at most one argument
OPTION_TERM = re.compile(r"^-{1,2}[A-Za-z][\w-]*(?:[ =][A-Z][A-Z_.]*)?(?:, -{1,2}[A-Za-z][\w-]*(?:[ =][A-Z][A-Z_.]*)?)*$")


def parse_help(text):
    """Splits --help into (title, usage lines, [(section, [entries])], tail paragraphs).
    An entry is ("option", term, description) or ("text", paragraph)."""
    lines = text.rstrip("\n").split("\n")
    title = lines[0]
    sections = []
    usage = []
    tail = []
    current = None
    for raw in lines[1:]:
        if not raw.strip():
            current = None if current is not None and current[0] != "Usage" else current
            continue
        m = re.match(r"^([A-Z][A-Za-z ]*):$", raw)
        if m:
            current = (m.group(1), [])
            if m.group(1) != "Usage":
                sections.append(current)
            continue
        if current is None:
            tail.append(raw.strip())
            continue
        name, entries = current
        if name == "Usage":
            if raw.startswith(" " * 4) and usage:
                # the wrapped end of the line above's description, not a synopsis form
                form, what = usage[-1]
                usage[-1] = (form, (what + " " + raw.strip()).strip())
                continue
            parts = re.split(r"\s{2,}", raw.strip(), maxsplit=1)
            usage.append((parts[0], parts[1] if len(parts) > 1 else ""))
            continue
        opt = re.match(r"^  (-\S.*?)(?:\s{2,}(\S.*))?$", raw)
        if opt and not OPTION_TERM.match(opt.group(1)):
            opt = None  # prose that happens to start with a flag
        if opt:
            entries.append(["option", opt.group(1), opt.group(2) or ""])
        elif raw.startswith(" " * 4) and entries and entries[-1][0] == "option":
            entries[-1][2] = (entries[-1][2] + " " + raw.strip()).strip()
        elif entries and entries[-1][0] == "text":
            entries[-1][1] += " " + raw.strip()
        else:
            entries.append(["text", raw.strip()])
    # the help's closing lines are paragraphs separated by blank lines
    paragraphs = []
    for raw in text.rstrip("\n").split("\n\n")[-3:]:
        if not re.search(r"^\S.*:$", raw, re.M) and not raw.startswith("oomlint "):
            paragraphs.append(" ".join(l.strip() for l in raw.split("\n")))
    return title, usage, sections, paragraphs


def option_term(term):
    """`-j, --threads N` -> bold flags, italic arguments."""
    out = []
    for i, piece in enumerate(term.split(", ")):
        words = piece.split(" ", 1)
        s = "\\fB" + code(words[0]) + "\\fR"
        if len(words) > 1:
            s += " \\fI" + code(words[1]) + "\\fR"
        out.append(s)
    return ", ".join(out)


def markdown_body(md):
    """A rule page's Markdown (after its title) as roff paragraphs."""
    out = []
    in_code = False
    paragraph = []

    def flush():
        if paragraph:
            out.append(".PP")
            out.append(line(inline(" ".join(paragraph))))
            paragraph.clear()

    for raw in md.split("\n"):
        if raw.startswith("```"):
            flush()
            if in_code:
                out += [".fi", ".RE"]
            else:
                out += [".RS 4", ".nf"]
            in_code = not in_code
            continue
        if in_code:
            out.append(line(code(raw)) if raw else "")
            continue
        if raw.startswith("## "):
            flush()
            out.append(".TP")
            out.append("\\fI" + esc(raw[3:]) + "\\fR")
            out.append(".PD 0")
            out.append(".PP")
            out.append(".PD")
            continue
        if raw.startswith("- "):
            flush()
            out.append(".IP \\(bu 2")
            out.append(line(inline(raw[2:])))
            continue
        if not raw.strip():
            flush()
            continue
        paragraph.append(raw.strip())
    flush()
    if in_code:
        out += [".fi", ".RE"]
    return out


def copyright_section(root=ROOT):
    """COPYRIGHT: the copyright line and licence of LICENSE, and the third-party
    code the binary has compiled in, as THIRD_PARTY_NOTICES names it (the first
    line of each of its sections, between two rules of dashes)."""
    with open(os.path.join(root, "LICENSE"), encoding="utf-8") as f:
        licence = f.read()
    title = licence.strip().split("\n", 1)[0].strip()
    holder = next((l.strip() for l in licence.split("\n") if l.strip().startswith("Copyright")), "")
    if not holder or "MIT" not in title:
        raise SystemExit("manpage.py: LICENSE has no MIT title or no Copyright line")
    with open(os.path.join(root, "THIRD_PARTY_NOTICES"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    bundled = [lines[i + 1].strip() for i in range(len(lines) - 1)
               if re.fullmatch(r"-{20,}", lines[i]) and lines[i + 1].strip() and not re.fullmatch(r"-+", lines[i + 1])
               and (i == 0 or not lines[i - 1].strip())]
    if not bundled:
        raise SystemExit("manpage.py: THIRD_PARTY_NOTICES names no third-party code")
    names = ", ".join(bundled[:-1]) + " and " + bundled[-1] if len(bundled) > 1 else bundled[0]
    return [".SH COPYRIGHT", ".PP", line(inline(f"{holder}. oomlint is free software under the {title}: "
                                               f"[LICENSE]({HOME}/blob/main/LICENSE), shipped with it.")),
            ".PP", line(inline(f"oomlint's binaries bundle third-party code, each under the MIT License: "
                               f"{names}. THIRD_PARTY_NOTICES, shipped with them, holds their notices and "
                               "says which build bundles which."))]


def page(binary):
    help_text = run(binary, "--help")
    # `oomlint 0.2.0 (commit 1a2b3c4d5e6f)`: the version is the second word
    version = run(binary, "--version").split()[1]
    rules = json.loads(run(binary, "rules", "--format", "json"))
    title, usage, sections, tail = parse_help(help_text)
    summary = title.split(" - ", 1)[1] if " - " in title else "a linter for PyTorch training code"

    out = [
        '.\\" Generated by build-aux/manpage.py from `oomlint --help` and the rule docs; do not edit.',
        f'.TH OOMLINT 1 "" "oomlint {esc(version)}" "User Commands"',
        # ragged right, no hyphenation: paths, URLs and rule names stay whole
        ".ad l",
        ".nh",
        ".SH NAME",
        "oomlint \\- " + esc(summary),
        ".SH SYNOPSIS",
    ]
    for i, (form, _) in enumerate(usage):
        if i:
            out.append(".br")
        words = form.split(" ")
        rest = " ".join(words[1:])
        rest = re.sub(r"\[([^\]]+)\]", lambda m: "[\\fI" + code(m.group(1)) + "\\fR]", rest)
        out.append("\\fB" + code(words[0]) + "\\fR " + rest)
    out += [".SH DESCRIPTION", ".PP",
            line(esc("oomlint reads Python training scripts and Jupyter notebooks, finds the patterns that make "
                     "GPU training run out of memory or waste it, explains each one, and fixes it where that is "
                     "safe. It reads files, directories (recursively: *.py and *.ipynb) or standard input (-), "
                     "and reports in text, JSON, SARIF 2.1.0, GitHub Actions annotations, GitLab Code Quality or JUnit XML."))]
    for form, what in usage:
        if what:
            out += [".TP", "\\fB" + code(form) + "\\fR", line(inline(what))]
    out.append(".SH OPTIONS")
    for name, entries in sections:
        out.append(f'.SS "{esc(name)}"')
        for entry in entries:
            if entry[0] == "option":
                out += [".TP", option_term(entry[1]), line(inline(entry[2]))]
            else:
                out += [".PP", line(inline(entry[1]))]
    out.append(".SH \"EXIT STATUS\"")
    exit_para = next((p for p in tail if p.startswith("Exit status")), "")
    out += [".PP", line(inline(exit_para or "0 no findings, 1 findings, 2 usage error."))]
    out.append(".SH \"SUPPRESSING FINDINGS\"")
    for p in tail:
        if not p.startswith("Exit status"):
            out += [".PP", line(inline(p))]
    out += [".SH CONFIGURATION", ".PP",
            line(inline("oomlint reads a `[tool.oomlint]` table from the nearest `pyproject.toml` above each "
                        "linted file (keys: `select`, `extend-select`, `ignore`, `per-file-ignores`, `exclude`, "
                        "`output-format`, `fail-on`); `--config` names one file for every input and "
                        "`--isolated` ignores them all. `oomlint --show-settings PATH` prints what applies."))]
    out.append(".SH RULES")
    out += [".PP", line(inline("Each rule has a stable code. Rules marked opt-in run only when selected by "
                               "their exact code (`--extend-select OOM401`). `oomlint rule CODE` prints a "
                               "rule's page."))]
    for rule in rules:
        md = run(binary, "rule", rule["code"], "--markdown")
        body = md.split("\n", 1)[1] if md.startswith("# ") else md
        head = f'{rule["code"]} {rule["name"]} ({rule["severity"]}{", opt-in" if rule["opt_in"] else ""})'
        out.append(f'.SS "{esc(head)}"')
        out += markdown_body(body.strip("\n"))
    out += [".SH FILES", ".TP", "\\fIpyproject.toml\\fR",
            line(inline("project configuration, the `[tool.oomlint]` table"))]
    out += copyright_section()
    out += [".SH \"SEE ALSO\"", ".PP", line(inline(f"{HOME}, and each rule's page under docs/rules/ there.")),
            ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the oomlint binary to document")
    args = ap.parse_args()
    sys.stdout.write(page(args.bin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
