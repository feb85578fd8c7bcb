"""The house's plan, checked: the folders are the architecture, and the
arrows between them (a file's includes, and the functions an object file
calls in another, read with `nm` from the build) run one way.

  cli/       the program's entry: may use everything below
  server/    the language server  \\
  probe/     the probe             > tools built on the linter: may use analyzer/ and rules/,
  explain/   oomlint explain      /  not each other, not cli/
  analyzer/  the linter: may use rules/ (the registry), nothing above
  rules/     one file per rule: include rule.h and nothing else

and inside analyzer/, the engine's layers (syntax and model, the bindings'
dataflow, the evaluator, the per-file facts, the whole-run summaries, the
door rules ask) call downward only: see ENGINE_LAYERS.

A failure names the file and the arrow that breaks the plan."""
import os
import re
import subprocess

import harness
from harness import ROOT, test

FOLDERS = ("cli", "server", "probe", "explain", "analyzer", "rules")
# which folders each folder's code may reach (its own always)
MAY_USE = {
    "cli": {"server", "probe", "explain", "analyzer", "rules"},
    "server": {"analyzer", "rules"},
    "probe": {"analyzer", "rules"},
    "explain": {"analyzer", "rules"},
    "analyzer": {"rules"},
    "rules": {"analyzer"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(folder):
    d = os.path.join(ROOT, folder)
    return sorted(os.path.join(folder, f) for f in os.listdir(d) if f.endswith((".c", ".h", ".def")))


def header_homes():
    """Each of the project's headers, by name, to the folder that holds it."""
    homes = {}
    for folder in FOLDERS:
        for path in sources(folder):
            if path.endswith(".h") or path.endswith(".def"):
                homes[os.path.basename(path)] = folder
    return homes


def includes(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def object_dir():
    """Where the binary under test's objects are (build/obj, build/san/obj)."""
    return os.path.join(os.path.dirname(harness.BIN), "obj")


def symbols(obj):
    """(defined, used) external symbols of an object file."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRBC":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def call_graph():
    """{source without .c: {source it calls into}} for the project's objects."""
    base = object_dir()
    if not os.path.isdir(base):
        raise harness.Skip(f"no objects under {base}: build first")
    defined, used = {}, {}
    for folder in FOLDERS:
        d = os.path.join(base, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            # an object whose source is gone (moved, deleted) is an old build's
            if f.endswith(".o") and os.path.exists(os.path.join(ROOT, folder, f[:-2] + ".c")):
                src = f"{folder}/{f[:-2]}"
                defs, uses = symbols(os.path.join(d, f))
                used[src] = uses
                for s in defs:
                    defined[s] = src
    return {src: {defined[s] for s in uses if s in defined and defined[s] != src} for src, uses in used.items()}


@test("architecture: a rule includes rule.h and nothing else of the engine")
def _():
    bad = []
    for path in sources("rules"):
        if not path.endswith(".c"):
            continue
        for inc in includes(path):
            if inc != "rule.h" and not (os.path.basename(path) == "registry.c" and inc == "rules.def"):
                bad.append(f"{path} includes {inc}")
    assert not bad, "\n".join(bad)


@test("architecture: every #include of the project stays inside what its folder may use")
def _():
    homes = header_homes()
    bad = []
    for folder in FOLDERS:
        for path in sources(folder):
            for inc in includes(path):
                home = homes.get(os.path.basename(inc))
                if home is None or home == folder:
                    continue  # a system or generated header, or its own folder's
                if home not in MAY_USE[folder]:
                    bad.append(f"{path} includes {inc} of {home}/")
    assert not bad, "\n".join(bad)


@test("architecture: no object file calls into a folder its folder may not use (nm of the build)")
def _():
    bad = []
    for src, callees in sorted(call_graph().items()):
        folder = src.split("/", 1)[0]
        for callee in sorted(callees):
            other = callee.split("/", 1)[0]
            if other != folder and other not in MAY_USE[folder]:
                bad.append(f"{src} calls into {callee}")
    assert not bad, "\n".join(bad)
