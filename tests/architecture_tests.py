"""The house's plan, checked: the folders are the architecture, and the
arrows between them (a file's includes, and the functions an object file
calls in another, read with `nm` from the build) run one way.

  cli/       the program's entry: may use everything below
  server/    the language server  \\
  probe/     the probe             > tools built on the linter: may use analyzer/ and rules/,
  explain/   oomlint explain      /  not each other, not cli/
  analyzer/  the linter: may use rules/ (the registry), nothing above
  rules/     one file per rule: include rule.h and nothing else; compiled with
             rules/ and analyzer/public/ alone on the include path, so rule.h
             reaches only the engine's public headers (the door, the syntax
             and model a rule walks, findings, the small utilities), and each
             of those includes only its public neighbours

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
               "analyzer/saves", "analyzer/paths", "analyzer/hostuse"]),
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


# The engine's public headers: the rule-facing half of each header rules reach
# (the private half of the same name in analyzer/ includes it), and the door.
PUBLIC = "analyzer/public"


def sources(folder):
    """The sources of a folder and of its subfolders (analyzer/public/)."""
    out = []
    for d, _, files in os.walk(os.path.join(ROOT, folder)):
        rel = os.path.relpath(d, ROOT)
        out += [os.path.join(rel, f) for f in files if f.endswith((".c", ".h", ".def"))]
    return sorted(out)


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
    evaluator's, as eval.c is, and public/eval.h too), or None."""
    stem = os.path.splitext(path)[0].replace(PUBLIC + "/", "analyzer/")
    if stem.endswith("_internal"):
        stem = stem[: -len("_internal")]
    return engine_layer_of(stem)


@test("architecture: the engine's files include no header of a higher layer (ENGINE_LAYERS)")
def _():
    bad = []
    for folder in ("analyzer", "rules"):
        for path in sources(folder):
            layer = engine_layer_of_file(path)
            if layer is None:
                continue
            for inc in includes(path):
                header = resolve_include(path, inc)
                above = engine_layer_of_file(header) if header else None
                if above is not None and above > layer:
                    bad.append(f"{path} ({ENGINE_LAYERS[layer][0]}) includes {inc} ({ENGINE_LAYERS[above][0]}): "
                               f"an arrow up")
    assert not bad, "\n".join(bad)


def resolve_include(includer, inc):
    """The file of the tree a quoted #include names, as the compiler finds it
    for an engine or rule file: the includer's own folder first, then
    analyzer/, analyzer/public/ and rules/ (the Makefile's order); None for a
    system or generated header."""
    for d in (os.path.dirname(includer), "analyzer", PUBLIC, "rules"):
        path = os.path.normpath(os.path.join(d, inc))
        if os.path.isfile(os.path.join(ROOT, path)):
            return path
    return None


def public_headers():
    d = os.path.join(ROOT, PUBLIC)
    assert os.path.isdir(d), f"no {PUBLIC}/: the rules' headers are the engine's private ones"
    return sorted(f for f in os.listdir(d) if f.endswith(".h"))


@test("architecture: the public headers (analyzer/public/) include one another and no private header")
def _():
    bad = []
    for name in public_headers():
        path = f"{PUBLIC}/{name}"
        for inc in includes(path):
            if "/" in inc or not os.path.isfile(os.path.join(ROOT, PUBLIC, inc)):
                bad.append(f"{path} includes {inc}, which is not a header of {PUBLIC}/")
    with open(os.path.join(ROOT, "rules", "rule.h"), encoding="utf-8") as f:
        for inc in INCLUDE.findall(f.read()):
            if "/" in inc or not os.path.isfile(os.path.join(ROOT, PUBLIC, inc)):
                bad.append(f"rules/rule.h includes {inc}, which is not a header of {PUBLIC}/")
    assert not bad, "\n".join(bad)


def make_variable(name):
    """The words of a `NAME = ...` line of the Makefile."""
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        m = re.search(rf"^{name}\s*:?=(.*)$", f.read(), re.M)
    assert m, f"the Makefile sets no {name}"
    return m.group(1).split()


@test("architecture: the rules' include path (INC_rules) is rules/ and analyzer/public/ alone")
def _():
    words = make_variable("INC_rules")
    assert sorted(words) == ["-Ianalyzer/public", "-Irules"], (
        f"INC_rules = {' '.join(words)}: a rule must reach the engine only through rule.h and {PUBLIC}/"
        + (" (-Ianalyzer opens every private header to the rules)" if "-Ianalyzer" in words else ""))


@test("architecture: every rule compiles with rules/ and analyzer/public/ alone on its include path")
def _():
    public_headers()
    rules = [p for p in sources("rules") if p.endswith(".c")]
    cc = os.environ.get("CC", "cc")
    # a call of a function no public header declares is an error, not C's implicit declaration
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-Werror=implicit-function-declaration",
                        "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE", "-Irules", f"-I{PUBLIC}"] + rules,
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{cc} -fsyntax-only -Irules -I{PUBLIC} rules/*.c:\n{r.stderr[:4000]}"


PROTOTYPE = re.compile(r"^(?![#\s]|static\b|typedef\b|/?\*)[^;{}()]*?\b(ol_\w+)\s*\(", re.M)


@test("architecture: each function the rules may call is declared once, in its public header")
def _():
    public = {}
    for name in public_headers():
        with open(os.path.join(ROOT, PUBLIC, name), encoding="utf-8") as f:
            for fn in PROTOTYPE.findall(f.read()):
                public[fn] = f"{PUBLIC}/{name}"
    bad = []
    for path in sources("analyzer") + sources("rules"):
        if not path.endswith(".h") or path.startswith(PUBLIC + "/"):
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        for fn in PROTOTYPE.findall(text):
            if fn in public:
                bad.append(f"{path} declares {fn}, already declared in {public[fn]}")
        # a private half includes its public half
        name = os.path.basename(path)
        if os.path.dirname(path) == "analyzer" and os.path.isfile(os.path.join(ROOT, PUBLIC, name)):
            if f"public/{name}" not in INCLUDE.findall(text):
                bad.append(f"{path} does not include public/{name}, its rule-facing half")
    assert public, f"{PUBLIC}/ declares no function"
    assert not bad, "\n".join(bad)
