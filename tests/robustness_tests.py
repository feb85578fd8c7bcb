"""Robustness: every kind of input a linter meets in the wild gets a clear
answer naming the file, and never a crash, a hang or a corrupted file."""
import json
import os

from harness import Workspace, run, test

BAD_LOOP = """import torch.nn as nn
model = nn.Linear(4, 2).cuda()
crit = nn.MSELoss()
def train(loader):
    total = 0
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        total += loss
"""


def findings(*paths, **kw):
    r = run("--format", "json", *paths, **kw)
    return r, r.json()


@test("robust: a syntax error is OOM002 and the rest of the file is still analyzed")
def _():
    with Workspace() as ws:
        src = "def broken(:\n    pass\n\n" + BAD_LOOP
        r, data = findings(ws.write("a.py", src))
        codes = [(f["code"], f["line"]) for f in data]
        assert ("OOM002", 1) in codes, codes
        assert ("OOM101", 12) in codes, codes
        assert r.code == 1


@test("robust: Python 2 code does not crash")
def _():
    with Workspace() as ws:
        src = 'print "hello"\nexec "x = 1"\ntry:\n    pass\nexcept Exception, e:\n    print e\nx = 0777\n'
        r, data = findings(ws.write("py2.py", src))
        assert r.code in (0, 1)


@test("robust: a Python 2 file is OOM002 saying it is Python 2, construct by construct")
def _():
    cases = [('print "hello"\n', "a print statement"), ("print >>f, x\n", "a print statement"),
             ('exec "x = 1"\n', "an exec statement"),
             ("try:\n    pass\nexcept Exception, e:\n    log(e)\n", "`except E, e:`"),
             ("y = `x`\n", "backquotes"), ("if x <> 1:\n    pass\n", "the `<>` operator"),
             ("x = 0777\n", "an octal literal without `0o`"), ("x = 10L\n", "a long integer literal"),
             ('z = ur"abc"\n', "a `ur` string prefix"), ('raise ValueError, "m"\n', "`raise E, value`"),
             ("f = lambda (a, b): a\n", "a tuple parameter"), ("def g((a, b)):\n    pass\n", "a tuple parameter")]
    with Workspace() as ws:
        for src, what in cases:
            r, data = findings(ws.write("py2.py", "import torch\n" + src))
            assert r.code == 1 and [d["code"] for d in data] == ["OOM002"], (src, data)
            assert data[0]["message"] == f"Python 2 syntax: {what}, which Python 3 cannot parse", (src, data)
            assert data[0]["line"] == (4 if "except" in src else 2), (src, data)
            assert data[0]["end_line"] == data[0]["line"] and "written for Python 2" in data[0]["help"], (src, data)
        # one finding for the file, counting the rest
        r, data = findings(ws.write("py2.py", 'print "a"\nx = 0777\ny = `x`\n'))
        assert [d["message"] for d in data] == ["Python 2 syntax: a print statement, which Python 3 cannot parse "
                                                "(and 2 more Python 2 constructs in this file)"], data
        # a syntax error of its own gets the hint too
        r, data = findings(ws.write("py2.py", 'import torch\nprint "x"\ndef f(:\n    pass\n'))
        other = [d for d in data if d["line"] == 3]
        assert other and "looks like Python 2 (a print statement at line 2)" in other[0]["help"], data
        # Python 3 that looks alike is not Python 2
        py3 = ("print(x)\nprint (x)\nx = 0o777 + 00 + 0_0 + 0x1F + 0.5 + 10\ny = u'a' + rb'b' + R'c'\n"
               "raise ValueError('m')\nf = lambda a, b: a\nif x != 1:\n    pass\n"
               "try:\n    pass\nexcept KeyError, TypeError:\n    pass\nexcept (A, B) as e:\n    log(e)\n")
        r, data = findings(ws.write("py3.py", py3))
        assert data == [], data
        # a Markdown fence pasted into the code is a syntax error, not Python 2's backquotes
        r, data = findings(ws.write("fence.py", "import torch\n```python\nx = 1\n```\n"))
        assert data and all("Python 2" not in d["message"] + d.get("help", "") for d in data), data


@test("robust: non-UTF-8 without a declaration is OOM001 naming the file and the byte")
def _():
    with Workspace() as ws:
        f = ws.write("latin.py", b"x = 1\ny = 'caf\xe9'\n", "wb")
        r, data = findings(f, ws.write("ok.py", BAD_LOOP))
        io = [d for d in data if d["code"] == "OOM001"]
        assert len(io) == 1 and "latin.py" in io[0]["message"] and "0xE9" in io[0]["message"], data
        assert any(d["code"] == "OOM101" for d in data), "the run must go on"


@test("robust: declared latin-1 and gbk sources are analyzed, columns in characters")
def _():
    with Workspace() as ws:
        src = "# -*- coding: latin-1 -*-\n" + BAD_LOOP.replace("total += loss", "total += loss  # caf\xe9")
        f = ws.write("l1.py", src.encode("latin-1"), "wb")
        _, data = findings(f)
        assert [(d["code"], d["line"]) for d in data] == [("OOM101", 10)], data
        gsrc = "# coding: gbk\n# 训练循环\n" + BAD_LOOP
        g = ws.write("zh.py", gsrc.encode("gbk"), "wb")
        _, data = findings(g)
        assert [(d["code"], d["line"]) for d in data] == [("OOM101", 11)], data


@test("robust: every encoding name Python accepts is read (its alias table, normalised as Python does)")
def _():
    # (declared name, Python codec): aliases, module names, odd case and punctuation
    names = [("mac_roman", "mac_roman"), ("macintosh", "mac_roman"), ("u8", "utf-8"), ("UTF8", "utf-8"),
             ("latin_1", "latin-1"), ("Latin-1", "latin-1"), ("l1", "latin-1"), ("iso_8859_15", "iso8859_15"),
             ("ISO-8859-15", "iso8859_15"), ("windows-1251", "cp1251"), ("cp1251", "cp1251"),
             ("ms932", "cp932"), ("sjis", "shift_jis"), ("s_jis", "shift_jis"), ("eucjp", "euc_jp"),
             ("koi8_r", "koi8_r"), ("utf-8-unix", "utf-8"), ("iso-8859-1-unix", "latin-1"),
             ("euc_kr", "euc_kr"), ("big5-tw", "big5"), ("maccyrillic", "mac_cyrillic"), ("ptcp154", "ptcp154")]
    sample = {"mac_roman": "caf\xe9 \u2020", "utf-8": "caf\xe9 \u2603", "latin-1": "caf\xe9",
              "iso8859_15": "\u20ac", "cp1251": "\u0416", "cp932": "\u65e5\u672c", "shift_jis": "\u65e5",
              "euc_jp": "\u65e5", "koi8_r": "\u0416", "euc_kr": "\ud55c", "big5": "\u4e2d",
              "mac_cyrillic": "\u0416", "ptcp154": "\u0416"}
    with Workspace() as ws:
        for i, (name, codec) in enumerate(names):
            src = f"# -*- coding: {name} -*-\n# {sample[codec]}\n" + BAD_LOOP
            compile(src.encode(codec), name, "exec")  # Python itself reads it
            f = ws.write(f"e{i}.py", src.encode(codec), "wb")
            r, data = findings(f)
            assert [(d["code"], d["line"]) for d in data] == [("OOM101", 11)], (name, data)
        # what Python refuses stays an error naming the name
        for bad in ("utf-16", "rot13", "base64", "no-such-codec", "cp037"):
            f = ws.write("bad.py", f"# coding: {bad}\nx = 1\n")
            r, data = findings(f)
            assert r.code == 2 and data[0]["code"] == "OOM001" and f"'{bad}'" in data[0]["message"], (bad, data)


@test("robust: old-Mac line endings (CR alone) are lines, as Python reads them: findings, frames, noqa")
def _():
    with Workspace() as ws:
        lf = "# a header comment\n" + BAD_LOOP
        # the comment no longer swallows the file: the finding, on its own line
        f = ws.write("cr.py", lf.replace("\n", "\r").encode(), "wb")
        r, data = findings(f)
        assert [(d["code"], d["line"], d["column"]) for d in data] == [("OOM101", 10, 9)], data
        r = run(f)
        assert r.code == 1 and "10 |         total += loss" in r.out and "\r" not in r.out, r
        # a noqa comment covers its own line only
        sup = lf.replace("total += loss", "total += loss  # noqa: OOM101")
        r, data = findings(ws.write("sup.py", sup.replace("\n", "\r").encode(), "wb"))
        assert r.code == 0 and data == [], data
        early = lf.replace("total = 0", "total = 0  # noqa: OOM101")
        r, data = findings(ws.write("early.py", early.replace("\n", "\r").encode(), "wb"))
        assert [(d["code"], d["line"]) for d in data] == [("OOM101", 10)], data
        # mixed endings, as Python reads them: CR, LF and CRLF each end a line
        mixed = "# one\rimport torch\r\n" + BAD_LOOP.replace("\n", "\r", 3)
        r, data = findings(ws.write("mixed.py", mixed.encode(), "wb"))
        assert [(d["code"], d["line"]) for d in data] == [("OOM101", 11)], data
        assert data[0]["line"] == next(i for i, l in enumerate(mixed.splitlines(), 1) if "total +=" in l)


@test("robust: --fix on a CR-only file keeps its CRs, on changed lines and inserted ones")
def _():
    with Workspace() as ws:
        lf = "# a header comment\n" + BAD_LOOP
        raw = lf.replace("\n", "\r").encode()
        f = ws.write("cr.py", raw, "wb")
        r = run("--fix", f)
        assert r.code == 0, r
        with open(f, "rb") as fh:
            got = fh.read()
        assert got == raw.replace(b"total += loss", b"total += loss.item()"), got
        # a fix that inserts a line (OOM201's decorator) writes it with CR too
        with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "OOM201", "fix_function.py"), "rb") as fh:
            src = fh.read()
        with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "OOM201",
                               "fix_function.unsafe-fixed.py"), "rb") as fh:
            want = fh.read()
        g = ws.write("fn.py", src.replace(b"\n", b"\r"), "wb")
        # (selected by its code, as the fixture harness does: the fixture names no device)
        r = run("--fix", "--unsafe-fixes", "--extend-select", "OOM201", g)
        with open(g, "rb") as fh:
            got = fh.read()
        assert got == want.replace(b"\n", b"\r"), got
        # --diff shows lines, not one line holding CRs
        ws.write("d.py", raw, "wb")
        r = run("--diff", os.path.join(ws.path, "d.py"))
        assert "-        total += loss\n+        total += loss.item()\n" in r.out, r


LOAD = "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(2, 2).cuda()\nmodel.load_state_dict(torch.load('w.pt'))\n"


@test("robust: --fix changes only the bytes of its edits, in every encoding (CP932's duplicate codes kept)")
def _():
    # (codec, text that codec writes in more than one way or that iconv may
    # write back differently, if any, as raw bytes; a line of ordinary text)
    cases = [("cp932", b"\xee\xe0 \xed\x40 \x87\x54 \xfa\x40", "\u65e5\u672c\u8a9e"),
             ("shift_jis", b"", "\u65e5\u672c\u8a9e"), ("euc_jp", b"", "\u65e5\u672c\u8a9e"),
             ("gbk", b"", "\u8bad\u7ec3"), ("gb18030", b"", "\u8bad\u7ec3"), ("big5", b"", "\u8a13\u7df4"),
             ("euc_kr", b"", "\ud6c8\ub828"), ("cp949", b"", "\ud6c8\ub828"), ("latin-1", b"", "caf\xe9"),
             ("cp1252", b"", "\u20ac caf\xe9"), ("koi8_r", b"", "\u0416"), ("mac_roman", b"", "caf\xe9 \u2020"),
             ("iso8859_15", b"", "\u20ac")]
    with Workspace() as ws:
        for i, (codec, odd, text) in enumerate(cases):
            for eol in (b"\n", b"\r\n", b"\r"):
                head = f"# -*- coding: {codec} -*-\n# {text}\n".encode(codec).replace(b"\n", eol)
                body = LOAD.encode(codec).replace(b"\n", eol)
                tail = f"# {text} after\n".encode(codec).replace(b"\n", eol)
                raw = head + (b"# " + odd + eol if odd else b"") + body + tail
                f = ws.write(f"e{i}.py", raw, "wb")
                r = run("--fix", f)
                assert r.code == 0 and "(1 fixed, 0 remaining)" in r.out, (codec, eol, r)
                with open(f, "rb") as fh:
                    got = fh.read()
                want = raw.replace(b"torch.load('w.pt')", b"torch.load('w.pt', map_location=\"cpu\")")
                assert got == want, (codec, eol, got)


@test("robust: every name in the codec table decodes on this system, and the table is what the generator writes")
def _():
    import re
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "analyzer", "codec_table.h"), encoding="utf-8") as f:
        table = f.read()
    names = re.findall(r'\{"([a-z0-9_.]+)", "[A-Z0-9_-]+"\}', table)
    assert len(names) > 300, len(names)
    with Workspace() as ws:
        for i, name in enumerate(names):
            ws.write(f"c{i:03d}.py", f"# coding: {name}\nx = 1\n")
        r = run("--format", "json", ws.path)
        assert r.code == 0 and r.json() == [], r.out[:3000]
    version = re.search(r"Python (\d+)\.(\d+)", table)
    if (int(version.group(1)), int(version.group(2))) != sys.version_info[:2]:
        print(f"SKIPPED: the table was generated by Python {version.group(1)}.{version.group(2)}, "
              f"this is {sys.version_info[0]}.{sys.version_info[1]}; not compared", flush=True)
        return
    p = subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "gen_codecs.py")],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == table, "analyzer/codec_table.h is stale: run scripts/gen_codecs.py"


@test("robust: a binary file is OOM001")
def _():
    with Workspace() as ws:
        f = ws.write("blob.py", bytes(range(256)) * 64, "wb")
        r, data = findings(f)
        assert r.code == 2 and data[0]["code"] == "OOM001" and "NUL" in data[0]["message"], data


@test("robust: truncated files and merge-conflict markers are OOM002")
def _():
    with Workspace() as ws:
        t = ws.write("trunc.py", "def f(x):\n    for a in\n")
        c = ws.write("conflict.py", "<<<<<<< HEAD\nx = 1\n=======\nx = 2\n>>>>>>> other\n")
        _, data = findings(t, c)
        assert {d["path"].rsplit("/", 1)[1] for d in data if d["code"] == "OOM002"} == {"trunc.py", "conflict.py"}


@test("robust: empty and comment-only files are clean")
def _():
    with Workspace() as ws:
        r = run(ws.write("e.py", ""), ws.write("c.py", "# nothing\n"))
        assert r.code == 0, r


@test("robust: deep nesting does not crash or hang")
def _():
    with Workspace() as ws:
        parens = "x = " + "(" * 20000 + "1" + ")" * 20000 + "\n"
        lists = "x = " + "[" * 50000 + "]" * 50000 + "\n"
        calls = "x = " + "f(" * 5000 + ")" * 5000 + "\n"
        # 99 levels: the most CPython accepts; the accumulation inside is still found
        ifs = "import torch.nn as nn\nm = nn.Linear(1, 1).cuda()\nc = nn.MSELoss()\nt = 0\nfor x, y in loader:\n" + \
            "".join("    " * (i + 1) + "if x:\n" for i in range(97)) + \
            "    " * 98 + "l = c(m(x), y)\n" + "    " * 98 + "l.backward()\n" + "    " * 98 + "t += l\n"
        binop = "x = " + " + ".join(["a"] * 100000) + "\n"
        paths = [ws.write(n, s) for n, s in
                 (("p.py", parens), ("l.py", lists), ("c.py", calls), ("i.py", ifs), ("b.py", binop))]
        r, data = findings(*paths, timeout=120)
        assert ("OOM101", 105) in [(d["code"], d["line"]) for d in data if d["path"].endswith("i.py")], data


@test("robust: 1000-deep indentation is a clear OOM002, as in CPython")
def _():
    with Workspace() as ws:
        src = "".join("    " * i + "if x:\n" for i in range(1000)) + "    " * 1000 + "pass\n"
        r, data = findings(ws.write("deep.py", src), timeout=120)
        assert data and data[0]["code"] == "OOM002", data


@test("robust: a large file is linted")
def _():
    with Workspace() as ws:
        body = "".join(f"def f{i}(loader):\n    t = 0\n    for x in loader:\n        t += x.item()\n    return t\n\n"
                       for i in range(40000))
        r, data = findings(ws.write("big.py", body + BAD_LOOP), timeout=300)
        assert [d["code"] for d in data] == ["OOM101"], data[:3]


@test("robust: unreadable paths are OOM001 and the run goes on")
def _():
    with Workspace() as ws:
        os.symlink(os.path.join(ws.path, "missing.py"), os.path.join(ws.path, "dangling.py"))
        notdir = ws.write("plain.py", "x = 1\n")
        good = ws.write("good.py", BAD_LOOP)
        r, data = findings(os.path.join(ws.path, "dangling.py"), notdir + "/child.py", good)
        io = sorted(d["path"].rsplit("/", 1)[1] for d in data if d["code"] == "OOM001")
        assert io == ["child.py", "dangling.py"], data
        assert any(d["code"] == "OOM101" for d in data)


@test("robust: one file named twice (a symlink beside its target) is linted once, and no other file is lost")
def _():
    with Workspace() as ws:
        ws.write("pkg/res/lib.py", "x = 1\n")
        os.makedirs(os.path.join(ws.path, "pkg", "extra"))
        os.symlink("../res/lib.py", os.path.join(ws.path, "pkg", "extra", "lib.py"))
        ws.write("scripts/train.py", BAD_LOOP)
        for args in (["pkg/extra/lib.py", "pkg/res/lib.py", "scripts/train.py"],
                     ["pkg/res/lib.py", "pkg/extra/lib.py", "scripts/train.py"], ["pkg", "scripts"]):
            r, data = findings(*args, cwd=ws.path)
            assert r.code == 1 and [(d["path"], d["code"]) for d in data] == [("scripts/train.py", "OOM101")], (args, r)
        # a file on disk also given on standard input under its name
        with open(os.path.join(ws.path, "scripts", "train.py")) as f:
            r = run("--format", "json", "--stdin-filename", "scripts/train.py", "-", "scripts/train.py",
                    "pkg/res/lib.py", cwd=ws.path, stdin=f.read())
        assert [d["code"] for d in r.json()] == ["OOM101", "OOM101"], r


@test("robust: a directory named like a source file is searched, not read")
def _():
    with Workspace() as ws:
        ws.write("pkg.py/inner.py", BAD_LOOP)
        _, data = findings(os.path.join(ws.path, "pkg.py"))
        assert [d["code"] for d in data] == ["OOM101"], data


@test("robust: malformed notebooks are OOM001")
def _():
    with Workspace() as ws:
        bad = [ws.write("a.ipynb", "{not json"), ws.write("b.ipynb", "[1, 2]"),
               ws.write("c.ipynb", '{"cells": 5}'), ws.write("d.ipynb", "[" * 100000),
               ws.write("e.ipynb", b"\xff\xfe{", "wb")]
        good = ws.write("f.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": [BAD_LOOP]}]}))
        r, data = findings(*bad, good)
        io = sorted(d["path"].rsplit("/", 1)[1] for d in data if d["code"] == "OOM001")
        assert io == ["a.ipynb", "b.ipynb", "c.ipynb", "d.ipynb", "e.ipynb"], data
        assert [d["cell"] for d in data if d["code"] == "OOM101"] == [1], data


@test("robust: BOM and CRLF sources report the right columns")
def _():
    with Workspace() as ws:
        src = "\ufeff" + BAD_LOOP.replace("\n", "\r\n")
        _, data = findings(ws.write("w.py", src.encode("utf-8"), "wb"))
        assert [(d["code"], d["line"], d["column"], d["end_column"]) for d in data] == [("OOM101", 9, 9, 22)], data


@test("robust: a file that is not valid UTF-8 is never rewritten by --fix")
def _():
    with Workspace() as ws:
        raw = b"from torch.cuda.amp import autocast\nx = '\xff'\n"
        f = ws.write("x.py", raw, "wb")
        r = run("--fix", f)
        assert ws.read("x.py", "rb") == raw
        assert r.code == 2, r


@test("robust: a `global` statement at module level does not hang the analysis")
def _():
    with Workspace() as ws:
        # legal Python (found in a real training repository): the module scope
        # names itself, and resolving `args` must not follow it forever
        src = ("import torch\nif __name__ == '__main__':\n    global args\n    args = parse()\n"
               "    args.run()\n" + BAD_LOOP)
        r, data = findings(ws.write("g.py", src), timeout=20)
        assert [d["code"] for d in data] == ["OOM101"], data


def _unreadable_dir_run(ws):
    """preexec_fn and binary for a run in which a chmod 0 directory cannot be
    read: root reads anything, so as root the run is nobody's, with a copy of
    the binary nobody can reach."""
    import pwd
    import shutil
    import harness
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")

    def drop():
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)
    copy = os.path.join(ws.path, "oomlint-copy")
    shutil.copy(harness.BIN, copy)
    os.chmod(copy, 0o755)
    return {"preexec_fn": drop, "binary": copy}


@test("robust: any file that was not linted fails the run with exit 2, also with --exit-zero; the rest is reported")
def _():
    import subprocess
    with Workspace() as ws:
        os.chmod(ws.path, 0o755)
        good = ws.write("good.py", BAD_LOOP)
        clean = ws.write("clean.py", "x = 1\n")
        cases = {
            "missing": os.path.join(ws.path, "missing.py"),
            "unknown encoding": ws.write("enc.py", "# -*- coding: klingon -*-\nx = 1\n"),
            "invalid UTF-8": ws.write("bytes.py", b"x = '\xff'\n", "wb"),
            "too large": ws.write("huge.py", ""),
        }
        os.truncate(cases["too large"], 65 * 1024 * 1024)  # sparse: over the 64 MiB limit
        fifo = os.path.join(ws.path, "pipe.py")
        os.mkfifo(fifo)
        cases["FIFO"] = fifo
        for what, path in cases.items():
            for extra in ([], ["--exit-zero"], ["--fail-on", "error"]):
                for others in ([good], [clean]):
                    r, data = findings(*extra, *others, path)
                    assert r.code == 2, (what, extra, others, r)
                    codes = sorted(d["code"] for d in data)
                    assert "OOM001" in codes, (what, codes)
                    assert ("OOM101" in codes) == (others == [good]), (what, codes)
                    assert "1 file was not linted" in r.err, (what, r.err)
        # a directory that cannot be listed, among files that can
        ws.write("closed/inner.py", BAD_LOOP)
        closed = os.path.join(ws.path, "closed")
        os.chmod(closed, 0)
        kw = _unreadable_dir_run(ws)
        try:
            proc = subprocess.run([kw.get("binary", __import__("harness").BIN), "--format", "json", "--exit-zero",
                                   closed, clean], capture_output=True, text=True, preexec_fn=kw.get("preexec_fn"),
                                  timeout=60, env=dict(os.environ, NO_COLOR="1"))
        finally:
            os.chmod(closed, 0o755)
        assert proc.returncode == 2, proc
        assert [d["code"] for d in json.loads(proc.stdout)] == ["OOM001"], proc.stdout
        # a run whose every path is excluded lints nothing and fails nothing
        r = run("--exclude", "good.py", "--force-exclude", good)
        assert r.code == 0 and "every path given is excluded" in r.err, r
