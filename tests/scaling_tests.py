"""Scaling: oomlint's cost grows linearly with its input, for real shapes of
training code and for degenerate ones (tests/bigfiles.py). Each bound is
generous (several times what a linear run takes on a busy 2-core machine)
and would still be missed by far by a path gone quadratic: before these
paths were made linear, 0.5 MB of training code took 11 s, 2,000 autocast
import/use pairs over 300 s, and 20 MB would have taken hours. Time is CPU
time (tests/measure.py), so a loaded machine does not fail them."""
import os

import bigfiles
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
        head = "import torch.nn as nn\nmodel = nn.Linear(4, 2)\ncrit = nn.MSELoss()\n"
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
