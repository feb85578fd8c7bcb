"""Scaling: oomlint's cost grows linearly with its input, for real shapes of
training code and for degenerate ones (tests/bigfiles.py). Each bound is
generous (several times what a linear run takes on a busy 2-core machine)
and would still be missed by far by a path gone quadratic: before these
paths were made linear, 0.5 MB of training code took 11 s, 2,000 autocast
import/use pairs over 300 s, and 20 MB would have taken hours. Time is CPU
time (tests/measure.py), so a loaded machine does not fail them."""
import os

import bigfiles
import harness
import measure
from harness import Workspace, test

# seconds of CPU, and bytes of peak memory per byte of source (plus a base)
CPU_LIMIT = 40
RSS_PER_BYTE = 300
RSS_BASE_MB = 200


def lint_generated(kind, megabytes, cpu_limit=CPU_LIMIT):
    with Workspace() as ws:
        text = bigfiles.KINDS[kind](megabytes)
        path = ws.write(f"{kind}.py", text)
        m = measure.run("--isolated", "--select", "ALL", "--format", "json", "-q", path, cwd=ws.path, timeout=600)
        assert m.code in (0, 1), m
        assert m.cpu < cpu_limit, f"{kind}, {len(text) / 1e6:.1f} MB: {m.cpu:.1f} s of CPU (limit {cpu_limit})"
        rss_limit = RSS_BASE_MB + RSS_PER_BYTE * len(text) / 1e6
        assert m.rss_mb < rss_limit, f"{kind}: {m.rss_mb:.0f} MB peak memory (limit {rss_limit:.0f})"
        return m


@test("scaling: 20 MB of training code (classes, train and eval loops) in bounded time and memory")
def _():
    m = lint_generated("training", measure.scale(20))
    assert '"OOM101"' in m.out and '"OOM502"' in m.out, m.out[:500]


@test("scaling: 2,000 autocast import/use pairs (OOM502's fix)")
def _():
    with Workspace() as ws:
        text = "".join(f"from torch.cuda.amp import autocast\nwith autocast():\n    y{i} = f(x)\n" for i in range(2000))
        path = ws.write("pairs.py", text)
        m = measure.run("--isolated", "--format", "json", path, cwd=ws.path)
        assert m.code == 1 and m.out.count('"OOM502"') == 4000, m
        assert m.cpu < 10, m
        # and --fix rewrites every pair
        m = measure.run("--isolated", "--fix", path, cwd=ws.path)
        assert m.cpu < 20, m
        fixed = ws.read("pairs.py")
        assert fixed.count('autocast("cuda")') == 2000 and "torch.cuda.amp" not in fixed, fixed[:300]


for _kind, _mb in (("one_function", 4), ("module_level", 4), ("expression", 4), ("imports", 3),
                   ("autocast", 4), ("torch_load", 4), ("nested_calls", 4)):
    def _check(kind=_kind, mb=_mb):
        lint_generated(kind, measure.scale(mb))
    test(f"scaling: degenerate shape '{_kind}', {_mb} MB, in bounded time and memory")(_check)


@test("scaling: 40,000 consecutive comment lines (the Python scanner reads ahead over them)")
def _():
    with Workspace() as ws:
        lines = int(measure.scale(40000))
        head = "import torch.nn as nn\nmodel = nn.Linear(4, 2).cuda()\ncrit = nn.MSELoss()\n"
        body = ("def train(loader):\n    total = 0\n" + "    # old code\n" * lines +
                "    for x, y in loader:\n        loss = crit(model(x), y)\n        loss.backward()\n"
                "        total += loss  # noqa: OOM101\n        total += loss\n")
        tail = "# " + "\n# ".join(["note"] * lines) + "\n"
        path = ws.write("comments.py", head + body + tail)
        m = measure.run("--isolated", "--format", "json", path, cwd=ws.path)
        assert m.cpu < 10, m
        import json
        found = [(f["code"], f["line"]) for f in json.loads(m.out)]
        # analyzed (no parse timeout), the suppression on a line after the run still honoured
        assert found == [("OOM101", lines + 10)], found


# ---- paths that were superlinear: the cost at N and at 4N --------------------------------------
#
# Each of these took time growing with the square (or worse) of its input:
# the work at 4N is compared with the work at N, in CPU seconds. A linear
# path does about 4 times the work; the bound (8 times, plus a second for
# start-up and noise) passes that on a loaded machine and fails a quadratic
# one (16 times; and the 4N run of each took minutes before).

def server_cpu(server):
    """CPU seconds (user + system) the language server process has used."""
    with open(f"/proc/{server.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@test("scaling: many findings on one long line, in every output format (10,000 and 40,000 findings)")
def _():
    import json
    with Workspace() as ws:
        sizes = [int(measure.scale(10000)), int(measure.scale(40000))]
        paths = [ws.write(f"line{n}.py", "import torch\n" + "torch.load('a');" * n + "\n") for n in sizes]
        for fmt in ("full", "concise", "json", "sarif", "github"):
            cpu = []
            for n, path in zip(sizes, paths):
                m = measure.run("--isolated", "--output-format", fmt, path, cwd=ws.path, timeout=120)
                assert m.code == 1, m
                if fmt == "json":
                    found = json.loads(m.out)
                    assert len(found) == n and found[-1]["column"] == 1 + 16 * (n - 1), found[-1]
                cpu.append(m.cpu)
            measure.assert_linear(f"--output-format {fmt}", *cpu)


@test("scaling: a script of 20,000 and 80,000 distinct calls linted with another file of its project")
def _():
    # each distinct name a call reaches is looked up in the run's summaries
    # once (it was searched for in a list of every name asked before), and a
    # method call's module is looked for among the eval()/train() calls
    # before it (it was every call before it)
    with Workspace() as ws:
        ws.write("helper.py", "class Thing:\n    def m(self, v):\n        self.s += v\n")
        cpu = []
        for n in (int(measure.scale(20000)), int(measure.scale(80000))):
            calls = "".join(f"obj.m{i}(x)\ntorch.f{i}(x)\n" for i in range(n // 2))
            ws.write("script.py", "import torch\nimport helper\nobj = helper.Thing()\nx = torch.ones(3)\n" + calls)
            m = measure.run("--isolated", "--format", "json", "-q", ".", cwd=ws.path, timeout=600)
            assert m.code == 0 and m.out.strip() == "[]", m
            cpu.append(m.cpu)
        measure.assert_linear("distinct calls in a project", *cpu)


@test("scaling: one function (or class) of N and 4N forwards: under no_grad, between eval() and train(), in a loop, moved, kept, in methods")
def _():
    # OOM201 asks of each forward whether its function computes gradients
    # (kept per function now) and whether the code from the last eval() to
    # the next train() does (searched from the eval(), not from the top)
    # (N: where the time the old paths took grows past the bound's slack)
    shapes = {
        "no_grad": (5000, lambda i: f"    with torch.no_grad():\n        y{i} = model(x)\n"),
        "eval_train": (10000, lambda i: f"    model.eval()\n    y{i} = model(x)\n    model.train()\n"),
        "loop": (5000, lambda i: f"        y{i} = obj.m{i}(model(x))\n"),
        # OOM303 asks of every move whether `device` is used as a tensor, and
        # OOM102 of every append whether the function empties the list
        "moves": (8000, lambda i: f"    t{i} = torch.zeros(3).to(device)\n    y{i} = model(t{i})\n"),
        "appends": (8000, lambda i: f"        o{i} = model(x)\n        outs.append(o{i})\n"),
        # a class of N methods, each calling the next: each call's method
        # was searched for in the class's list of them
        "methods": (3000, lambda i: f"    def m{i}(self, x):\n        return self.m{i + 1}(model(x))\n"),
    }
    with Workspace() as ws:
        for name, (size, line) in shapes.items():
            cpu = []
            for n in (int(measure.scale(size)), int(measure.scale(4 * size))):
                head = "import torch\nmodel = torch.nn.Linear(3, 3)\ndevice = 'cuda'\n"
                if name in ("loop", "appends"):
                    head += "def main(obj, loader):\n    outs = []\n    for x in loader:\n"
                elif name == "methods":
                    head += "class T:\n"
                else:
                    head += "def main(x):\n"
                path = ws.write(f"{name}{n}.py", head + "".join(line(i) for i in range(n)))
                m = measure.run("--isolated", "--format", "json", "-q", path, cwd=ws.path, timeout=600)
                assert m.code in (0, 1), m
                cpu.append(m.cpu)
            measure.assert_linear(f"forwards in one function ({name})", *cpu)


@test("scaling: one function of N and 4N random tensors moved, losses stepped, models run; a class of N and 4N methods")
def _():
    # each path read the whole function (or class) once per statement of it:
    # OOM301 every node of the file for each moved binding's uses, OOM303
    # every statement before each random draw for a `manual_seed`, OOM101
    # every backward of the loop for each loss added to a total, OOM501 the
    # whole loop at each of its backwards and every call before it at each
    # forward, and the evaluator a class's list of members at each
    # `self.m(...)` (N: where the old paths' time passes the bound's slack)
    head = "import torch\nmodel = torch.nn.Linear(3, 3)\ndevice = 'cuda'\n"
    shapes = {
        "moves": (3000, ("OOM301", "OOM303"), lambda n: "def main(x):\n" + "".join(
            f"    a{i} = torch.randn(3).cuda()\n    b{i} = a{i}.to('cuda')\n" for i in range(n))),
        "steps": (3000, ("ALL",), lambda n: "def main(loader, opt):\n    total = 0\n    for x in loader:\n" + "".join(
            f"        loss{i} = model(x).sum()\n        loss{i}.backward()\n        opt.step()\n"
            f"        total += loss{i}\n" for i in range(n))),
        "cpu_loop": (3000, ("OOM501",), lambda n: "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                     "x = torch.ones(3).to(device)\n" + "".join(f"z{i} = model.f{i}(x)\n" for i in range(n)) +
                     "for x in loader:\n" + "".join(f"    out{i} = model(x)\n" for i in range(n)) +
                     "    out0.sum().backward()\n    opt.step()\n"),
        "members": (8000, ("ALL",), lambda n: "class T:\n" + "".join(
            f"    def m{i}(self, x):\n        return self.m{i + 1}(model(x))\n" for i in range(n))),
    }
    with Workspace() as ws:
        for name, (size, rules, text) in shapes.items():
            cpu = []
            for n in (int(measure.scale(size)), int(measure.scale(4 * size))):
                path = ws.write(f"{name}{n}.py", head + text(n))
                m = measure.run("--isolated", "--select", ",".join(rules), "--format", "json", "-q", path,
                                cwd=ws.path, timeout=600)
                assert m.code in (0, 1), m
                cpu.append(m.cpu)
            measure.assert_linear(f"one function of many statements ({name})", *cpu)


@test("scaling: fixtures repeated N and 4N times, at the top level or one copy per function")
def _():
    # a name's uses were read in every function of the file (OOM301), an
    # attribute's in every class, the loops over a use among every loop,
    # and each checkpoint path's literals again for every save (OOM302)
    import textwrap
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
    shapes = {"OOM301/index_variables.py": ("function", 100), "OOM303/moved_later.py": ("function", 100),
              "OOM201/model_class_handed_in.py": ("top", 100), "OOM302/writer_shapes.py": ("top", 50)}
    with Workspace() as ws:
        for name, (where, size) in shapes.items():
            with open(os.path.join(fixtures, name), encoding="utf-8") as f:
                src = f.read()
            cpu = []
            for n in (int(measure.scale(size)), int(measure.scale(4 * size))):
                if where == "function":
                    text = "".join(f"def f{i}():\n" + textwrap.indent(src, "    ") + "\n" for i in range(n))
                else:
                    text = (src + "\n") * n
                path = ws.write(f"copies{n}.py", text)
                m = measure.run("--isolated", "--select", "ALL", "--format", "json", "-q", path, cwd=ws.path,
                                timeout=600)
                assert m.code in (0, 1), m
                cpu.append(m.cpu)
            measure.assert_linear(f"{name} repeated ({where})", *cpu)


@test("scaling: 5,000 and 20,000 names bound to a factory and moved by the next statement (OOM303)")
def _():
    import json
    with Workspace() as ws:
        cpu = []
        for n in (int(measure.scale(5000)), int(measure.scale(20000))):
            text = "import torch\n" + "".join(f"b{i} = torch.zeros(4)\ny{i} = b{i}.cuda()\n" for i in range(n))
            path = ws.write(f"moved{n}.py", text)
            m = measure.run("--isolated", "--select", "OOM303", "--format", "json", path, cwd=ws.path, timeout=300)
            assert m.code == 1, m
            assert len(json.loads(m.out)) == n, m.out[:300]
            cpu.append(m.cpu)
        measure.assert_linear("bound-then-moved names", *cpu)


@test("scaling: an exclude pattern of many '**' components against a deep tree is polynomial")
def _():
    with Workspace() as ws:
        cpu = []
        for pairs in (5, 20):
            root = os.path.join(ws.path, f"p{pairs}")
            deep = os.path.join(root, *[f"d{i}" for i in range(40)])
            os.makedirs(deep)
            with open(os.path.join(deep, "x.py"), "w") as f:
                f.write("import torch\nstate = torch.load('m.pt')\n")
            with open(os.path.join(root, "pyproject.toml"), "w") as f:
                f.write('[tool.oomlint]\nexclude = ["%s"]\n' % ("**/*/" * pairs + "nomatch"))
            m = measure.run(".", cwd=root, timeout=60)
            # nothing matched, so the file is linted
            assert m.code == 1 and "OOM302" in m.out, m
            cpu.append(m.cpu)
        measure.assert_linear("'**/*/' x 5 and x 20 on a 40-deep tree", *cpu)
        # and the command line's --exclude, a whole-path wildcard of many stars
        name = "a" * 200
        os.makedirs(os.path.join(ws.path, "w", name))
        with open(os.path.join(ws.path, "w", name, "x.py"), "w") as f:
            f.write("import torch\nstate = torch.load('m.pt')\n")
        m = measure.run("--isolated", "--exclude", "*a" * 30 + "*b", "w", cwd=ws.path, timeout=60)
        assert m.code == 1 and "OOM302" in m.out and m.cpu < 5, m


def _notebook_publish_cpu(n):
    import lsp_client as L
    import harness
    with Workspace() as ws:
        nb = os.path.join(ws.path, "nb.ipynb")
        uris = [f"vscode-notebook-cell:{nb}#c{i}" for i in range(n)]
        # a notebook of a job of several processes: each load is reported by default
        texts = ["import torch.distributed"] + [f"m{i} = torch.load('m{i}.pt')" for i in range(1, n)]
        s = L.Server(harness.BIN, cwd=ws.path)
        try:
            s.initialize()
            before = server_cpu(s)
            s.notify("notebookDocument/didOpen", {
                "notebookDocument": {"uri": L.uri(nb), "notebookType": "jupyter-notebook", "version": 1,
                                     "cells": [{"kind": 2, "document": u} for u in uris]},
                "cellTextDocuments": [{"uri": u, "languageId": "python", "version": 1, "text": t}
                                      for u, t in zip(uris, texts)]})
            [d] = s.diagnostics(uris[-1], timeout=120)
            assert d["code"] == "OOM302", d
            # an edit of one cell publishes every cell again
            s.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": L.uri(nb), "version": 2},
                "change": {"cells": {"textContent": [{"document": {"uri": uris[1], "version": 2}, "changes": [
                    {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                     "text": "# edited\n"}]}]}}})
            s.diagnostics(uris[-1], timeout=120)
            # and new data (kinds) for every cell
            s.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": L.uri(nb), "version": 3},
                "change": {"cells": {"data": [{"kind": 2, "document": u} for u in uris]}}})
            [d] = s.diagnostics(uris[-1], timeout=120)
            assert d["code"] == "OOM302", d
            cpu = server_cpu(s) - before
            assert s.shutdown(60) == 0
            return cpu
        finally:
            s.kill()


@test("scaling: a notebook of 1,000 and 4,000 cells with a finding each, opened and edited in the server")
def _():
    measure.assert_linear("notebook cells", _notebook_publish_cpu(int(measure.scale(1000))),
                          _notebook_publish_cpu(int(measure.scale(4000))))


def _storm_cpu(ws, n, tag):
    import lsp_client as L
    import harness
    root = os.path.join(ws.path, tag)
    os.makedirs(os.path.join(root, "pkg"))
    with open(os.path.join(root, "train.py"), "w") as f:
        f.write("import torch\nstate = torch.load('m.pt')\n")
    paths = [os.path.join(root, "pkg", f"m{i}.py") for i in range(n)]
    s = L.Server(harness.BIN, cwd=root)
    try:
        s.initialize(root=root)
        train = os.path.join(root, "train.py")
        s.notify("textDocument/didOpen", {"textDocument": {"uri": L.uri(train), "languageId": "python",
                                                           "version": 1, "text": "import torch\nx = torch.load('a')\n"}})
        s.diagnostics(L.uri(train), 1)  # the workspace's store is built
        # then the files appear (a checkout, a code generator) and the events come
        for p in paths:
            with open(p, "w") as f:
                f.write("def f():\n    return 1\n")
        before = server_cpu(s)
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": L.uri(p), "type": 1} for p in paths]})
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": L.uri(p), "type": 2} for p in paths]})
        assert s.request("oomlint/none", timeout=120)["error"]["code"] == -32601
        cpu = server_cpu(s) - before
        assert s.shutdown(60) == 0
        return cpu
    finally:
        s.kill()


@test("scaling: watched-file storms of 2,500 and 10,000 created and changed files in the server")
def _():
    with Workspace() as ws:
        measure.assert_linear("watched-file events", _storm_cpu(ws, int(measure.scale(2500)), "small"),
                              _storm_cpu(ws, int(measure.scale(10000)), "big"))


def _one_line_server_cpu(n):
    import lsp_client as L
    import harness
    with Workspace() as ws:
        path = os.path.join(ws.path, "line.py")
        text = "import torch\n" + "torch.load('a');" * n + "\n"
        s = L.Server(harness.BIN, cwd=ws.path)
        try:
            s.initialize()
            before = server_cpu(s)
            s.notify("textDocument/didOpen", {"textDocument": {"uri": L.uri(path), "languageId": "python",
                                                               "version": 1, "text": text}})
            diags = s.diagnostics(L.uri(path), 1, timeout=120)
            assert len(diags) == n and diags[-1]["range"]["start"] == {"line": 1, "character": 16 * (n - 1)}, \
                diags[-1]
            r = s.request("textDocument/hover", {"textDocument": {"uri": L.uri(path)},
                                                 "position": {"line": 1, "character": 16 * (n - 1) + 3}}, timeout=120)
            assert "OOM302" in r["result"]["contents"]["value"], r
            # code actions over the line: a fix and a noqa action per finding (the line parsed once, not per finding)
            r = s.request("textDocument/codeAction", {"textDocument": {"uri": L.uri(path)},
                                                      "range": {"start": {"line": 1, "character": 0},
                                                                "end": {"line": 1, "character": 16 * n}},
                                                      "context": {"diagnostics": [], "only": ["quickfix"]}},
                          timeout=120)
            assert len(r["result"]) == 2 * n, len(r["result"])
            cpu = server_cpu(s) - before
            assert s.shutdown(60) == 0
            return cpu
        finally:
            s.kill()


@test("scaling: many findings on one long line in the server (10,000 and 40,000 diagnostics, a hover, code actions)")
def _():
    measure.assert_linear("one-line document in the server", _one_line_server_cpu(int(measure.scale(10000))),
                          _one_line_server_cpu(int(measure.scale(40000))))


# ---- the run's whole-program facts: cost, parses, and answers that do not depend on the schedule --------

def write_eval_packages(root, count):
    """count packages, each with utils.py defining `evaluate()` (the same
    name in every package), a main.py moving the model to the GPU and calling
    it (under no_grad in the even ones) and, in every third, an __init__.py
    re-exporting it. Returns how
    many `evaluate()`s the run calls with autograd on (each one OOM201)."""
    for i in range(count):
        d = os.path.join(root, f"pkg{i}")
        os.makedirs(d)
        reexport = i % 3 == 0
        with open(os.path.join(d, "__init__.py"), "w") as f:
            f.write("from .utils import evaluate\n" if reexport else "")
        with open(os.path.join(d, "utils.py"), "w") as f:
            f.write("import torch\n\n\ndef evaluate(model, loader):\n    model.eval()\n"
                    "    for x, y in loader:\n        out = model(x)\n")
        imp = f"from pkg{i} import evaluate" if reexport else f"from pkg{i}.utils import evaluate"
        body = ("    with torch.no_grad():\n        evaluate(model, loader)\n" if i % 2 == 0
                else "    evaluate(model, loader)\n")
        with open(os.path.join(d, "main.py"), "w") as f:
            f.write(f"import torch\n{imp}\n\n\ndef run(model, loader):\n    model.cuda()\n{body}")
    return count // 2


@test("scaling: cross-file grad mode over 1,200 and 4,800 files whose packages all define `evaluate()`")
def _():
    # Each evaluate() asks how the run calls it; that question walked every
    # call named `evaluate` of the run and resolved each through a list of
    # summaries that grew with the project: N^3 (3,000 files 3.1 s, 6,000
    # 29.6 s, 20,000 618 s). Each call is now resolved once, into an index.
    import json
    with Workspace() as ws:
        cpu = []
        for n in (int(measure.scale(400)), int(measure.scale(1600))):
            root = os.path.join(ws.path, f"p{n}")
            flagged = write_eval_packages(root, n)
            m = measure.run("--isolated", "--format", "json", "-q", ".", cwd=root, timeout=600)
            found = json.loads(m.out)
            assert m.code == 1 and len(found) == flagged, m
            assert {(f["code"], os.path.basename(f["path"])) for f in found} == {("OOM201", "utils.py")}, found[:3]
            # the ones flagged are those their main.py calls with autograd on
            assert all(int(f["path"].split(os.sep)[0][3:]) % 2 == 1 for f in found), found[:3]
            cpu.append(m.cpu)
        measure.assert_linear("cross-file callers of 400 and 1,600 `evaluate()`s", *cpu)


def write_corpus_packages(root, count):
    """count copies of fixtures/OOM301/project_corpus/lm (a helper of one
    file moves whole splits to the GPU for the other; 3 findings each)."""
    import shutil
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "OOM301", "project_corpus", "lm")
    for i in range(count):
        shutil.copytree(src, os.path.join(root, f"lm{i}"))


@test("scaling: the same files give the same findings whatever the threads, the summary budget and the path order")
def _():
    # Under a small budget, a thread that wanted a dropped summary gave up
    # after three tries while other threads dropped it again, and a run lost
    # 1-3 findings that another run of the same tree kept. It came back at
    # 8 KB (and at 4 KB once summaries got smaller): what is published
    # while an acquire waits is now handed to it.
    import random
    with Workspace() as ws:
        write_corpus_packages(os.path.join(ws.path, "t"), 200)
        write_eval_packages(os.path.join(ws.path, "t"), 60)
        paths = sorted(os.path.relpath(os.path.join(d, f), ws.path)
                       for d, _, names in os.walk(os.path.join(ws.path, "t")) for f in names)
        shuffled = list(paths)
        random.Random(34).shuffle(shuffled)
        orders = {"sorted": paths, "reversed": paths[::-1], "shuffled": shuffled}
        reference = harness.run("--isolated", "--format", "json", "-j", "1", *paths, cwd=ws.path)
        assert reference.code == 1 and reference.out.count('"OOM301"') == 600, reference
        assert reference.out.count('"OOM201"') == 30, reference
        for threads in ("2", "8", "16"):
            for budget in (None, "1", "4", "8"):
                for name, order in orders.items():
                    env = {"OOMLINT_SUMMARY_BUDGET_KB": budget} if budget else None
                    r = harness.run("--isolated", "--format", "json", "-j", threads, *order, cwd=ws.path, env=env)
                    if r.out != reference.out:
                        import difflib
                        diff = "\n".join(list(difflib.unified_diff(reference.out.splitlines(), r.out.splitlines(),
                                                                   lineterm="", n=1))[:40])
                        raise AssertionError(f"-j {threads}, budget {budget or 'default'} KB, {name} paths: "
                                             f"the findings differ from -j 1's\n{diff}")


def parses(err):
    """The number of parses --timings counts, and the summaries it built again."""
    import re
    files = re.search(r"oomlint timings: (\d+) files", err)
    again = re.search(r"(\d+) built again", err)
    assert files, err
    return int(files.group(1)), int(again.group(1)) if again else 0


@test("scaling: a module whose summary exceeds the budget is parsed again at most once, however many import it")
def _():
    # Two generated modules, each summary past a 64 KB budget, imported by
    # every script: each importer parsed both again (32 parses for 12 files
    # with 10 scripts, and more with more scripts).
    with Workspace() as ws:
        module = "import torch\n\n" + "".join(f"def fn{i}(model, x, y, z):\n    out = model(x)\n"
                                              f"    return out.to('cuda')\n\n" for i in range(1500))
        counted = {}
        for scripts in (10, 40):
            root = os.path.join(ws.path, f"s{scripts}")
            os.makedirs(root)
            for name in ("gen_a", "gen_b"):
                with open(os.path.join(root, f"{name}.py"), "w") as f:
                    f.write(module)
            for s in range(scripts):
                with open(os.path.join(root, f"script{s}.py"), "w") as f:
                    f.write("import torch\nfrom gen_a import fn1\nfrom gen_b import fn2\n\n\n"
                            "def main(model, x):\n    return fn1(model, x, 1, 2), fn2(model, x, 1, 2)\n")
            plain = harness.run("--isolated", "--format", "json", ".", cwd=root)
            for threads in ("1", "4"):
                r = harness.run("--isolated", "--format", "json", "--timings", "-j", threads, ".", cwd=root,
                                env={"OOMLINT_SUMMARY_BUDGET_KB": "64"})
                assert r.out == plain.out, f"{scripts} scripts, -j {threads}: findings differ under the budget"
                total, again = parses(r.err)
                assert "dropped for the budget" in r.err, r.err
                # every file once, and each large module at most once more; with threads, a file
                # a chain of callers questions reaches past the nesting limit while another thread
                # lints it is parsed twice, but no file more than that, however many import it
                bound = scripts + 2 + 2 if threads == "1" else 2 * (scripts + 2)
                assert total <= bound and again <= 2, \
                    f"{scripts} scripts, -j {threads}: {total} parses of {scripts + 2} files ({again} built again)"
                counted[scripts, threads] = total - scripts
        # the extra parses do not grow with the number of importers: at most the two modules twice each
        # (fewer when an importer is handed the summary built for another before the budget drops it)
        assert max(counted[10, "1"], counted[40, "1"]) <= 4, counted


# ---- brace patterns in a configuration's exclude ---------------------------------------------------------

@test("scaling: exclude brace patterns cost the pattern's length per path, never its alternatives times its tail")
def _():
    # `{a0,...,aN}` followed by a long tail was written out per path: N
    # copies of the tail (200 alternatives and 3,000 bytes of tail: 34 s for
    # 2,000 files, where 50 and 700 took 1.8 s)
    with Workspace() as ws:
        cpu = []
        for n, tail in ((50, 700), (200, 2900)):
            root = os.path.join(ws.path, f"t{n}")
            pattern = "{" + ",".join(f"a{i}" for i in range(n)) + "}" + "/y" * (tail // 2)
            os.makedirs(root)
            with open(os.path.join(root, "pyproject.toml"), "w") as f:
                f.write('[tool.oomlint]\nexclude = ["%s", "{b,c}{d,e}{f,g}{h,i}{j,k}{l,m}{n,o}{p,q}{r,s}{t,u}"]\n'
                        % pattern)
            for k in range(int(measure.scale(2000))):
                sub = os.path.join(root, f"a{k % n}")
                os.makedirs(sub, exist_ok=True)
                with open(os.path.join(sub, f"m{k}.py"), "w") as f:
                    f.write("x = 1\n")
            m = measure.run("--show-files", ".", cwd=root, timeout=300)
            assert m.code == 0 and m.out.count(".py") == int(measure.scale(2000)), m
            cpu.append(m.cpu)
        measure.assert_linear("a 900-byte and a 3,800-byte brace pattern against 2,000 paths", *cpu)


@test("scaling: nested brace patterns of 12 KB and 48 KB are refused in bounded memory")
def _():
    # {{{...}}} of 48 KB took 0.65 GB (200 KB took 10 GB) to expand, in the
    # supervisor's process, which no timeout watches
    with Workspace() as ws:
        runs = []
        for kb in (12, 48):
            root = os.path.join(ws.path, f"n{kb}")
            os.makedirs(root)
            depth = kb * 1024 // 2
            with open(os.path.join(root, "pyproject.toml"), "w") as f:
                f.write('[tool.oomlint]\nexclude = ["%s"]\n' % ("{" * depth + "a" + "}" * depth))
            with open(os.path.join(root, "a.py"), "w") as f:
                f.write("import torch\nx = torch.load('a')\n")
            runs.append(measure.run(".", cwd=root, timeout=300))
        small, big = runs[0].rss_mb, runs[1].rss_mb
        assert big < 2 * small + 20, f"peak memory {small:.0f} MB for 12 KB, {big:.0f} MB for 48 KB"
        for m in runs:
            assert m.code == 2 and "pyproject.toml:2: 'exclude' item 1 is longer than" in m.err, m
