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

# The engine's layers, bottom first: a file may call into its own layer and
# the layers below it, never above. Where a lower layer needs an answer from
# a higher one at run time (the per-file facts asking the whole run), it asks
# through the model's links (ol_links in model.h), hooks the run fills in.
# Entries are sources without ".c"; a trailing "*" matches a prefix.
ENGINE_LAYERS = [
    ("syntax", ["analyzer/syntax", "analyzer/syntax_gaps", "analyzer/parse_arena"]),
    # the model's walk and the lookups that need no values; a name's spelling
    ("model", ["analyzer/model", "analyzer/names"]),
    # the bindings that reach a use, and what flows from them
    ("dataflow", ["analyzer/dataflow"]),
    # what an expression is: values, the known callables, grad mode, and the
    # model's second pass (resolve) that needs them
    ("evaluator", ["analyzer/eval", "analyzer/callables", "analyzer/classes", "analyzer/elements",
                   "analyzer/grad", "analyzer/resolve", "analyzer/steps"]),
    # per-file facts about training code
    ("facts", ["analyzer/facts", "analyzer/flows", "analyzer/moves", "analyzer/hardware",
               "analyzer/saves", "analyzer/hostuse"]),
    # the whole run: summaries of every file, the project's modules
    ("run", ["analyzer/summarize", "analyzer/summary", "analyzer/project"]),
    # the door: the questions rules ask, with their reasons
    ("door", ["analyzer/ask*"]),
    ("rules", ["rules/*"]),
]
# files beneath the engine that any layer may call (they call no engine file)
ENGINE_BASE = {"analyzer/util", "analyzer/portable", "analyzer/diag", "analyzer/source", "analyzer/torchfloor",
               "analyzer/words"}
# the most lines a source file of the tree may have (split along its sections past it)
MAX_LINES = 2000


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


def object_symbols():
    """{source without .c: (defined, used)} for the project's objects."""
    base = object_dir()
    if not os.path.isdir(base):
        raise harness.Skip(f"no objects under {base}: build first")
    out = {}
    for folder in FOLDERS:
        d = os.path.join(base, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            # an object whose source is gone (moved, deleted) is an old build's
            if f.endswith(".o") and os.path.exists(os.path.join(ROOT, folder, f[:-2] + ".c")):
                out[f"{folder}/{f[:-2]}"] = symbols(os.path.join(d, f))
    return out


def engine_layer_of(src):
    """The index in ENGINE_LAYERS of a source's layer, or None."""
    for i, (_, members) in enumerate(ENGINE_LAYERS):
        for member in members:
            if src == member or (member.endswith("*") and src.startswith(member[:-1])):
                return i
    return None


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


@test("architecture: the engine's layers (ENGINE_LAYERS) call downward only (nm of the build)")
def _():
    objects = object_symbols()
    home = {}
    for src, (defined, _) in objects.items():
        for sym in defined:
            home[sym] = src
    bad = []
    for src, (_, used) in sorted(objects.items()):
        layer = engine_layer_of(src)
        if layer is None:
            continue
        for sym in sorted(used):
            callee = home.get(sym)
            above = engine_layer_of(callee) if callee else None
            if above is not None and above > layer:
                bad.append(f"{src} ({ENGINE_LAYERS[layer][0]}) calls {sym} of {callee} ({ENGINE_LAYERS[above][0]}): "
                           f"an arrow up")
    assert not bad, "\n".join(bad)


@test("architecture: every file the engine calls is in one of its layers or the base under it")
def _():
    sources = set(object_symbols())
    bad = []
    for i, (name, members) in enumerate(ENGINE_LAYERS):
        for member in members:
            matches = [s for s in sources if s == member or (member.endswith("*") and s.startswith(member[:-1]))]
            if not matches:
                bad.append(f"layer {name} lists {member}, which builds no object (renamed? update ENGINE_LAYERS)")
            for src in matches:
                if engine_layer_of(src) != i:
                    bad.append(f"{src} is in two layers")
    for src, callees in sorted(call_graph().items()):
        if engine_layer_of(src) is None:
            continue
        for callee in sorted(callees):
            if engine_layer_of(callee) is None and callee not in ENGINE_BASE and not callee.startswith("rules/"):
                bad.append(f"{src} calls into {callee}, which is in no engine layer: add it to ENGINE_LAYERS "
                           f"or ENGINE_BASE")
    assert not bad, "\n".join(bad)


@test(f"architecture: no source file is longer than {MAX_LINES} lines")
def _():
    long = []
    for folder in ("analyzer", "rules", "cli", "server", "probe", "explain"):
        for path in sources(folder):
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                long.append(f"{path}: {n} lines (split it along its sections)")
    assert not long, "\n".join(long)


def engine_layer_of_file(path):
    """The layer of a source or header of the tree (`eval_internal.h` is the
    evaluator's, as eval.c is), or None."""
    stem = os.path.splitext(path)[0]
    if stem.endswith("_internal"):
        stem = stem[: -len("_internal")]
    return engine_layer_of(stem)


@test("architecture: the engine's files include no header of a higher layer (ENGINE_LAYERS)")
def _():
    homes = {}
    for folder in ("analyzer", "rules"):
        for path in sources(folder):
            if path.endswith(".h"):
                homes[os.path.basename(path)] = path
    bad = []
    for folder in ("analyzer", "rules"):
        for path in sources(folder):
            layer = engine_layer_of_file(path)
            if layer is None:
                continue
            for inc in includes(path):
                header = homes.get(os.path.basename(inc))
                above = engine_layer_of_file(header) if header else None
                if above is not None and above > layer:
                    bad.append(f"{path} ({ENGINE_LAYERS[layer][0]}) includes {inc} ({ENGINE_LAYERS[above][0]}): "
                               f"an arrow up")
    assert not bad, "\n".join(bad)
