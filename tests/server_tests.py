"""Wire-level tests of `oomlint server`: the lifecycle, the bad inputs a
language server must survive (malformed JSON, unknown methods, bad params,
bad framing, partial and batched writes, huge messages, a vanishing client),
and the protocol features end to end with a small client of our own
(tests/lsp_client.py). The Node and Neovim suites drive the same server
through real client libraries."""
import json
import os
import time

import harness
from harness import test, Workspace
import lsp_client as L

ROOT = harness.ROOT
BAD = '''import torch
import torch.nn as nn


def train(model, loader, optimizer, rank):
    criterion = nn.CrossEntropyLoss()
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        total += loss
    state = torch.load("ckpt.pt")
    return total, state
'''


def start(ws=None, args=(), **init):
    s = L.Server(harness.BIN, args=args, cwd=ws.path if ws else ROOT)
    if init is not None:
        s.initialize(root=ws.path if ws else None, **init)
    return s


def open_doc(s, path, text, version=1, language="python"):
    s.notify("textDocument/didOpen", {"textDocument": {"uri": L.uri(path), "languageId": language,
                                                        "version": version, "text": text}})


def error_code(resp):
    assert "error" in resp, resp
    return resp["error"]["code"]


def cli_as_lsp(path, *args):
    """The CLI's JSON findings for path, as (code, range, message, severity)."""
    r = harness.run("--format", "json", *args, path)
    sev = {"error": 1, "warning": 2, "info": 3}
    return sorted((f["code"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1, f["message"],
                   sev[f["severity"]]) for f in r.json())


def lsp_as_tuples(diags):
    return sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"], d["message"], d["severity"])
                  for d in diags)


def apply_edits(text, edits):
    """Applies LSP TextEdits (UTF-16 positions) to text."""
    lines = text.split("\n")

    def offset(pos):
        line = lines[pos["line"]] if pos["line"] < len(lines) else ""
        units = 0
        i = 0
        while i < len(line) and units < pos["character"]:
            units += 2 if ord(line[i]) > 0xFFFF else 1
            i += 1
        return sum(len(x) + 1 for x in lines[:pos["line"]]) + i

    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        a, b = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
        lines = text.split("\n")
    return text


# ---- lifecycle ------------------------------------------------------------------

@test("server: initialize announces capabilities and the version; shutdown + exit is status 0")
def _():
    s = L.Server(harness.BIN)
    try:
        r = s.request("initialize", {"processId": None, "capabilities": {}, "rootUri": None})
        caps = r["result"]["capabilities"]
        assert caps["textDocumentSync"]["change"] == 2, caps
        assert caps["hoverProvider"] is True
        assert "source.fixAll.oomlint" in caps["codeActionProvider"]["codeActionKinds"]
        assert caps["positionEncoding"] == "utf-16"
        assert caps["notebookDocumentSync"]["notebookSelector"]
        version = harness.run("--version").out.split()[1]
        assert r["result"]["serverInfo"] == {"name": "oomlint", "version": version}, r
        s.notify("initialized", {})
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: exit without shutdown is status 1; end of input ends it either way")
def _():
    s = start()
    try:
        s.notify("exit")
        assert s.wait() == 1
    finally:
        s.kill()
    s = start()
    try:
        s.request("shutdown")
        s.proc.stdin.close()
        assert s.wait() == 0
    finally:
        s.kill()
    s = L.Server(harness.BIN)
    try:
        s.proc.stdin.close()
        assert s.wait() == 1
    finally:
        s.kill()


@test("server: requests before initialize get -32002; notifications are dropped")
def _():
    s = L.Server(harness.BIN)
    try:
        assert error_code(s.request("textDocument/hover", {"textDocument": {"uri": "file:///x.py"},
                                                           "position": {"line": 0, "character": 0}})) == -32002
        open_doc(s, "/tmp/early.py", BAD)
        s.initialize()
        assert error_code(s.request("initialize", {"capabilities": {}})) == -32600
        s.drain(0.5)
        assert not [m for m in s.pending if m.get("method") == "textDocument/publishDiagnostics"], s.pending
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: requests after shutdown get -32600")
def _():
    s = start()
    try:
        s.request("shutdown")
        assert error_code(s.request("textDocument/hover", {})) == -32600
        s.notify("exit")
        assert s.wait() == 0
    finally:
        s.kill()


# ---- bad input --------------------------------------------------------------------

@test("server: malformed JSON is -32700, a batch or a bad id -32600, and the server goes on")
def _():
    s = start()
    try:
        s.send_raw(b"Content-Length: 9\r\n\r\n{\"jsonrp\"")
        r = s.take(lambda m: "error" in m)
        assert r["error"]["code"] == -32700 and r["id"] is None, r
        body = b'[{"jsonrpc":"2.0","id":7,"method":"shutdown"}]'
        s.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        assert s.take(lambda m: "error" in m)["error"]["code"] == -32600
        s.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"})
        assert s.take(lambda m: "error" in m)["error"]["code"] == -32600
        deep = b"[" * 5000 + b"]" * 5000
        s.send_raw(b"Content-Length: %d\r\n\r\n" % len(deep) + deep)
        assert s.take(lambda m: "error" in m)["error"]["code"] == -32700
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: unknown methods are -32601 for requests and ignored as notifications")
def _():
    s = start()
    try:
        s.notify("oomlint/noSuchNotification", {"x": 1})
        s.notify("$/cancelRequest", {"id": 99})
        assert error_code(s.request("oomlint/noSuchMethod", {})) == -32601
        assert error_code(s.request("$/noSuchRequest", {})) == -32601
        assert not [m for m in s.pending if "error" in m], s.pending
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: invalid params are -32602")
def _():
    s = L.Server(harness.BIN)
    try:
        assert error_code(s.request("initialize", [1, 2])) == -32602
        s.initialize()
        assert error_code(s.request("textDocument/hover", {"textDocument": {"uri": "file:///a.py"}})) == -32602
        assert error_code(s.request("textDocument/codeAction", {"textDocument": {}, "range": 3})) == -32602
        assert error_code(s.request("textDocument/diagnostic", {"textDocument": 5})) == -32602
        # a broken notification is logged, not fatal
        s.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
        s.notify("textDocument/didChange", {"textDocument": {"uri": "file:///nope.py", "version": 2},
                                            "contentChanges": [{"text": "x"}]})
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: framing survives partial reads, several messages per write and a header without Content-Length")
def _():
    ws = Workspace()
    path = ws.write("train.py", BAD)
    s = start(ws)
    try:
        msg = L.frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": {"uri": L.uri(path), "languageId": "python", "version": 1,
                                                   "text": BAD}}})
        for i in range(0, len(msg), 7):
            s.send_raw(msg[i:i + 7])
            time.sleep(0.002)
        assert len(s.diagnostics(L.uri(path), 1)) == 2
        # three messages in one write
        many = b"".join(L.frame({"jsonrpc": "2.0", "id": 100 + i, "method": "oomlint/none"}) for i in range(3))
        s.send_raw(many)
        for i in range(3):
            assert error_code(s.response(100 + i)) == -32601
        # a header without Content-Length, then lenient line ends, then a good message
        s.send_raw(b"Content-Type: application/vscode-jsonrpc\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}")
        body = json.dumps({"jsonrpc": "2.0", "id": 200, "method": "oomlint/none"}).encode()
        s.send_raw(b"Content-Length: %d\n\n" % len(body) + body)
        assert error_code(s.response(200)) == -32601
        s.send_raw(b"Content-Length: twelve\r\n\r\n")
        s.send({"jsonrpc": "2.0", "id": 201, "method": "oomlint/none"})
        assert error_code(s.response(201)) == -32601
        assert "without Content-Length" in s.err()
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: an absurd Content-Length is refused and reading goes on")
def _():
    s = start()
    try:
        s.send_raw(b"Content-Length: 99999999999999999999999\r\n\r\n{\"jsonrpc\":\"2.0\"}")
        s.send({"jsonrpc": "2.0", "id": 300, "method": "oomlint/none"})
        assert error_code(s.response(300)) == -32601
        s.send_raw(b"Content-Length: 4294967296\r\n\r\n")
        s.send({"jsonrpc": "2.0", "id": 301, "method": "oomlint/none"})
        assert error_code(s.response(301)) == -32601
        assert "refused" in s.err(), s.err()
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a large document (8 MB) is read and linted", slow=True)
def _():
    ws = Workspace()
    path = os.path.join(ws.path, "big.py")
    filler = "".join(f"value_{i} = {i}  # {'x' * 40}\n" for i in range(150000))
    text = filler + BAD
    s = start(ws)
    try:
        open_doc(s, path, text)
        diags = s.diagnostics(L.uri(path), 1, timeout=60)
        assert sorted(d["code"] for d in diags) == ["OOM101", "OOM302"], diags
        assert diags[0]["range"]["start"]["line"] >= 150000
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: garbage and a client that vanishes mid-message end the server cleanly")
def _():
    s = start()
    try:
        s.send_raw(bytes(range(256)) * 64)
        s.send_raw(b"Content-Length: 500\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\"")
        s.proc.stdin.close()
        assert s.wait() == 1
    finally:
        s.kill()


# ---- documents and diagnostics --------------------------------------------------------

@test("server: diagnostics equal the CLI's JSON, carry the version, code, link and source, and clear on close")
def _():
    path = os.path.join(ROOT, "examples", "train.py")
    text = open(path).read()
    s = start()
    try:
        open_doc(s, path, text, version=7)
        diags = s.diagnostics(L.uri(path), 7)
        assert lsp_as_tuples(diags) == cli_as_lsp(path), (lsp_as_tuples(diags), cli_as_lsp(path))
        for d in diags:
            assert d["source"] == "oomlint"
            assert d["codeDescription"]["href"].endswith(f"/docs/rules/{d['code']}.md"), d
        s.notify("textDocument/didClose", {"textDocument": {"uri": L.uri(path)}})
        assert s.diagnostics(L.uri(path)) == []
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: incremental edits in UTF-16 columns (accents, CJK, surrogate pairs), CRLF and full replacement")
def _():
    ws = Workspace()
    path = ws.write("edit.py", "")
    text = "# 😀 é 中\nimport torch; device = 'cuda'\nx = '😀😀'; state = torch.load('a.pt')\n"
    s = start(ws)
    try:
        open_doc(s, path, text)
        [d] = s.diagnostics(L.uri(path), 1)
        # `torch.load(...)` starts after x = '😀😀'; (2 surrogate pairs = 4 units)
        line = "x = '😀😀'; state = torch.load('a.pt')"
        col16 = len(line[:line.index("torch.load")].encode("utf-16-le")) // 2
        assert d["range"]["start"] == {"line": 2, "character": col16}, d
        # insert before the emoji on line 2 and check the finding moves by UTF-16 units
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 7}}, "text": "é中"},
        ]})
        [d] = s.diagnostics(L.uri(path), 2)
        assert d["range"]["start"] == {"line": 2, "character": col16}, d  # 2 units replaced by 2 units
        # add the map_location inside the call: the finding goes away
        end = {"line": 2, "character": col16 + len("torch.load('a.pt'")}
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 3}, "contentChanges": [
            {"range": {"start": end, "end": end}, "text": ", map_location='cpu'"},
        ]})
        assert s.diagnostics(L.uri(path), 3) == []
        # several changes in one message, applied in order, then a CRLF document in full
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 4}, "contentChanges": [
            {"text": "import torch; device = 'cuda'\r\nm = torch.load('b')\r\n"},
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "\r\n"},
        ]})
        [d] = s.diagnostics(L.uri(path), 4)
        assert d["range"] == {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 19}}, d
        # a position past the end of a line and a line past the end are clamped
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 5}, "contentChanges": [
            {"range": {"start": {"line": 99, "character": 0}, "end": {"line": 99, "character": 5}}, "text": "\n# end"},
        ]})
        assert len(s.diagnostics(L.uri(path), 5)) == 1
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a burst of didChange is linted once for the latest version")
def _():
    ws = Workspace()
    path = ws.write("burst.py", BAD)
    s = start(ws)
    try:
        open_doc(s, path, BAD)
        s.diagnostics(L.uri(path), 1)
        burst = b"".join(L.frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": L.uri(path), "version": v},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                "text": "#\n"}]}}) for v in range(2, 202))
        s.send_raw(burst)
        diags = s.diagnostics(L.uri(path), 201, timeout=30)
        assert {d["range"]["start"]["line"] for d in diags} == {12 + 200, 13 + 200}, diags
        published = [m for m in s.pending if m.get("method") == "textDocument/publishDiagnostics"]
        assert len(published) < 20, len(published)
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a client that pulls diagnostics gets them from textDocument/diagnostic and none pushed")
def _():
    ws = Workspace()
    path = ws.write("pull.py", BAD)
    s = L.Server(harness.BIN, cwd=ws.path)
    try:
        s.initialize(capabilities={"textDocument": {"diagnostic": {"dynamicRegistration": False}}})
        open_doc(s, path, BAD)
        r = s.request("textDocument/diagnostic", {"textDocument": {"uri": L.uri(path)}})
        assert r["result"]["kind"] == "full"
        assert sorted(d["code"] for d in r["result"]["items"]) == ["OOM101", "OOM302"]
        s.drain(0.3)
        assert not [m for m in s.pending if m.get("method") == "textDocument/publishDiagnostics"]
        r = s.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///not/open.py"}})
        assert r["result"] == {"kind": "full", "items": []}
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a syntax error is OOM002 and the rest is still analyzed; non-Python documents are left alone")
def _():
    ws = Workspace()
    path = ws.write("broken.py", "")
    s = start(ws)
    try:
        open_doc(s, path, BAD + "def broken(:\n")
        codes = sorted(d["code"] for d in s.diagnostics(L.uri(path), 1))
        assert codes == ["OOM002", "OOM101", "OOM302"], codes
        open_doc(s, os.path.join(ws.path, "notes.md"), "torch.load('x')", language="markdown")
        s.drain(0.3)
        assert not [m for m in s.pending if m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"].endswith("notes.md")]
        assert s.shutdown() == 0
    finally:
        s.kill()


# ---- configuration and settings ----------------------------------------------------------

@test("server: the nearest pyproject.toml applies, and is re-read when it changes")
def _():
    ws = Workspace()
    ws.write("pyproject.toml", "[tool.oomlint]\nignore = [\"OOM302\"]\n")
    path = ws.write("pkg/train.py", BAD)
    s = start(ws)
    try:
        open_doc(s, path, BAD)
        assert [d["code"] for d in s.diagnostics(L.uri(path), 1)] == ["OOM101"]
        # a nearer pyproject.toml appears; the save makes the server look
        time.sleep(0.01)
        ws.write("pkg/pyproject.toml", "[tool.oomlint]\nignore = [\"OOM101\"]\n")
        s.notify("textDocument/didSave", {"textDocument": {"uri": L.uri(path)}})
        assert [d["code"] for d in s.diagnostics(L.uri(path))] == ["OOM302"]
        # an edit to it, announced by a file watcher
        ws.write("pkg/pyproject.toml", "[tool.oomlint]\nselect = [\"OOM1\", \"OOM3\"]\nignore = []\n")
        s.notify("workspace/didChangeWatchedFiles",
                 {"changes": [{"uri": L.uri(os.path.join(ws.path, "pkg/pyproject.toml")), "type": 2}]})
        assert sorted(d["code"] for d in s.diagnostics(L.uri(path))) == ["OOM101", "OOM302"]
        # a broken one: the error is shown, not a wrong rule set
        ws.write("pkg/pyproject.toml", "[tool.oomlint]\nselct = 1\n")
        s.notify("textDocument/didSave", {"textDocument": {"uri": L.uri(path)}})
        [d] = s.diagnostics(L.uri(path))
        assert "selct" in d["message"] and "code" not in d, d
        shown = s.take(lambda m: m.get("method") == "window/showMessage")
        assert "selct" in shown["params"]["message"], shown
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: settings from initializationOptions and didChangeConfiguration (select, ignore, failOn)")
def _():
    ws = Workspace()
    path = ws.write("train.py", BAD)
    s = L.Server(harness.BIN, cwd=ws.path)
    try:
        s.initialize(options={"ignore": ["OOM101"]})
        open_doc(s, path, BAD)
        assert [d["code"] for d in s.diagnostics(L.uri(path), 1)] == ["OOM302"]
        # the last didChangeConfiguration goes on top of initializationOptions, key by key
        s.notify("workspace/didChangeConfiguration", {"settings": {"oomlint": {"select": ["OOM1"], "ignore": []}}})
        assert [d["code"] for d in s.diagnostics(L.uri(path))] == ["OOM101"]
        # failOn: error shows only errors (OOM302 is a warning)
        s.notify("workspace/didChangeConfiguration", {"settings": {"ignore": [], "failOn": "error"}})
        assert [d["code"] for d in s.diagnostics(L.uri(path))] == ["OOM101"]
        s.notify("workspace/didChangeConfiguration", {"settings": {"oomlint": {"ignore": [],
                                                                              "extendSelect": ["OOM401"]}}})
        assert sorted(d["code"] for d in s.diagnostics(L.uri(path))) == ["OOM101", "OOM302"]
        # an empty configuration leaves the initial options in force
        s.notify("workspace/didChangeConfiguration", {"settings": {}})
        assert [d["code"] for d in s.diagnostics(L.uri(path))] == ["OOM302"]
        # a bad setting is reported and changes nothing
        s.notify("workspace/didChangeConfiguration", {"settings": {"oomlint": {"ignore": ["OOM999"]}}})
        shown = s.take(lambda m: m.get("method") == "window/showMessage")
        assert "OOM999" in shown["params"]["message"], shown
        s.notify("workspace/didChangeConfiguration", {"settings": {"oomlint": {"failOn": "fatal"}}})
        assert "failOn" in s.take(lambda m: m.get("method") == "window/showMessage")["params"]["message"]
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: the command line of `oomlint server` selects rules too (--ignore, --isolated, --stdio)")
def _():
    ws = Workspace()
    ws.write("pyproject.toml", "[tool.oomlint]\nignore = [\"OOM101\"]\n")
    path = ws.write("train.py", BAD)
    s = start(ws, args=("--isolated", "--ignore", "OOM302", "--stdio"))
    try:
        open_doc(s, path, BAD)
        assert [d["code"] for d in s.diagnostics(L.uri(path), 1)] == ["OOM101"]
        assert s.shutdown() == 0
    finally:
        s.kill()
    r = harness.run("server", "train.py")
    assert r.code == 2 and "takes no paths" in r.err, r


# ---- code actions and hover ---------------------------------------------------------------

def actions(s, path, rng, only=None):
    ctx = {"diagnostics": []}
    if only:
        ctx["only"] = only
    r = s.request("textDocument/codeAction", {"textDocument": {"uri": L.uri(path)}, "range": rng, "context": ctx})
    return r["result"]


@test("server: quick fixes, fix-all (the same as --fix) and the noqa action")
def _():
    ws = Workspace()
    path = ws.write("train.py", BAD)
    s = start(ws)
    try:
        open_doc(s, path, BAD)
        diags = {d["code"]: d for d in s.diagnostics(L.uri(path), 1)}
        acts = actions(s, path, diags["OOM101"]["range"])
        titles = [a["title"] for a in acts]
        fix = [a for a in acts if a["title"].startswith("OOM101:")][0]
        assert fix["kind"] == "quickfix" and fix["isPreferred"] is True, fix
        assert fix["diagnostics"][0]["code"] == "OOM101"
        fixed = apply_edits(BAD, fix["edit"]["changes"][L.uri(path)])
        assert "total += loss.item()" in fixed, fixed
        assert "Disable OOM101 for this line" in titles, titles
        noqa = [a for a in acts if a["title"] == "Disable OOM101 for this line"][0]
        text = apply_edits(BAD, noqa["edit"]["changes"][L.uri(path)])
        assert "total += loss  # noqa: OOM101\n" in text, text
        # fix-all is what `oomlint --fix -` makes of the buffer
        [fa] = actions(s, path, diags["OOM101"]["range"], only=["source.fixAll"])
        assert fa["kind"] == "source.fixAll.oomlint"
        want = harness.run("--fix", "-", "--stdin-filename", path, stdin=BAD).out
        assert apply_edits(BAD, fa["edit"]["changes"][L.uri(path)]) == want
        assert actions(s, path, diags["OOM101"]["range"], only=["refactor"]) == []
        # the noqa action merges into a noqa comment already on the line
        merged = BAD.replace("total += loss\n", "total += loss  # noqa: E501\n")
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 2},
                                            "contentChanges": [{"text": merged}]})
        d = [d for d in s.diagnostics(L.uri(path), 2) if d["code"] == "OOM101"][0]
        noqa = [a for a in actions(s, path, d["range"]) if a["title"].startswith("Disable")][0]
        text = apply_edits(merged, noqa["edit"]["changes"][L.uri(path)])
        assert "total += loss  # noqa: E501, OOM101\n" in text, text
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 3},
                                            "contentChanges": [{"text": text}]})
        assert [d["code"] for d in s.diagnostics(L.uri(path), 3)] == ["OOM302"]
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: unsafe fixes are labelled and left out of fix-all unless unsafeFixes is on")
def _():
    ws = Workspace()
    src = ("import torch\n\n\ndef train(model, loader, opt):\n    outs = []\n    for x in loader:\n"
           "        opt.zero_grad()\n        out = model(x.cuda())\n        loss = out.sum()\n        loss.backward()\n"
           "        opt.step()\n        outs.append(out)\n    return outs\n")
    path = ws.write("collect.py", src)
    s = start(ws)
    try:
        open_doc(s, path, src)
        [d] = [d for d in s.diagnostics(L.uri(path), 1) if d["code"] == "OOM102"]
        [fix] = [a for a in actions(s, path, d["range"]) if a["title"].startswith("OOM102:")]
        assert fix["title"].endswith("(unsafe)") and "isPreferred" not in fix, fix
        assert actions(s, path, d["range"], only=["source.fixAll.oomlint"]) == []
        s.notify("workspace/didChangeConfiguration", {"settings": {"unsafeFixes": True}})
        s.diagnostics(L.uri(path))
        [fa] = actions(s, path, d["range"], only=["source.fixAll.oomlint"])
        want = harness.run("--fix", "--unsafe-fixes", "-", "--stdin-filename", path, stdin=src).out
        assert apply_edits(src, fa["edit"]["changes"][L.uri(path)]) == want
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: hover on a finding shows its message, help and the rule's page")
def _():
    ws = Workspace()
    path = ws.write("train.py", BAD)
    s = start(ws)
    try:
        open_doc(s, path, BAD)
        d = [d for d in s.diagnostics(L.uri(path), 1) if d["code"] == "OOM302"][0]
        h = s.request("textDocument/hover", {"textDocument": {"uri": L.uri(path)},
                                             "position": d["range"]["start"]})["result"]
        value = h["contents"]["value"]
        assert h["contents"]["kind"] == "markdown" and h["range"] == d["range"], h
        page = harness.run("rule", "OOM302", "--markdown").out
        assert d["message"] in value and page.strip() in value, value
        # the measured cost quotes the GPU's figures before the CPU's
        assert "| NVIDIA H200 |" in value and value.index("| NVIDIA H200 |") < value.index("| cpu |"), value
        h = s.request("textDocument/hover", {"textDocument": {"uri": L.uri(path)},
                                             "position": {"line": 0, "character": 0}})
        assert h["result"] is None, h
        assert s.shutdown() == 0
    finally:
        s.kill()


# ---- notebooks ----------------------------------------------------------------------------

@test("server: a notebook is linted as one program and findings land in their cells")
def _():
    ws = Workspace()
    nb = os.path.join(ws.path, "nb.ipynb")
    cells = [
        (1, "# Training"),
        (2, "%matplotlib inline\nimport torch\nimport torch.distributed as dist\nimport torch.nn as nn"),
        (2, "def train(model, loader, optimizer):\n    crit = nn.MSELoss()\n    total = 0\n"
            "    for x, y in loader:\n        optimizer.zero_grad()\n        loss = crit(model(x), y)\n"
            "        loss.backward()\n        optimizer.step()\n        total += loss\n    return total"),
        (2, "ckpt = torch.load('m.pt')"),
    ]
    uris = [f"vscode-notebook-cell:{nb}#c{i}" for i in range(len(cells))]
    s = start(ws)
    try:
        s.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": L.uri(nb), "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": k, "document": u} for (k, _), u in zip(cells, uris)]},
            "cellTextDocuments": [{"uri": u, "languageId": "markdown" if k == 1 else "python", "version": 1,
                                   "text": t} for (k, t), u in zip(cells, uris)]})
        got = {}
        for u in uris[1:]:
            got[u] = s.diagnostics(u)
        assert got[uris[1]] == [], got
        [d] = got[uris[2]]
        assert d["code"] == "OOM101" and d["range"]["start"] == {"line": 8, "character": 8}, d
        [d] = got[uris[3]]
        assert d["code"] == "OOM302" and d["range"]["start"]["line"] == 0, d
        # the fix for the cell maps onto the cell
        r = s.request("textDocument/codeAction", {"textDocument": {"uri": uris[3]}, "range": d["range"],
                                                  "context": {"diagnostics": []}})
        fix = [a for a in r["result"] if a["title"].startswith("OOM302")][0]
        assert list(fix["edit"]["changes"]) == [uris[3]], fix
        assert "map_location" in apply_edits(cells[3][1], fix["edit"]["changes"][uris[3]]), fix
        # edit a cell: the finding in it goes away
        s.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": L.uri(nb), "version": 2},
            "change": {"cells": {"textContent": [{"document": {"uri": uris[3], "version": 2}, "changes": [
                {"range": {"start": {"line": 0, "character": 24}, "end": {"line": 0, "character": 24}},
                 "text": ", map_location='cpu'"}]}]}}})
        assert s.diagnostics(uris[3], 2) == []
        # delete the training cell: its diagnostics are cleared
        s.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": L.uri(nb), "version": 3},
            "change": {"cells": {"structure": {"array": {"start": 2, "deleteCount": 1},
                                               "didClose": [{"uri": uris[2]}]}}}})
        s.take(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uris[2]
               and m["params"]["diagnostics"] == [])
        # insert a cell after the imports: it is linted in its place
        new = f"vscode-notebook-cell:{nb}#new"
        s.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": L.uri(nb), "version": 4},
            "change": {"cells": {"structure": {
                "array": {"start": 2, "deleteCount": 0, "cells": [{"kind": 2, "document": new}]},
                "didOpen": [{"uri": new, "languageId": "python", "version": 1,
                             "text": "net = torch.nn.DataParallel(torch.nn.Linear(2, 2)).train()"}]}}}})
        [d] = s.diagnostics(new, 1)
        assert d["code"] == "OOM702" and d["range"]["start"] == {"line": 0, "character": 6}, d
        s.drain(0.3)
        s.pending.clear()
        s.notify("notebookDocument/didClose", {"notebookDocument": {"uri": L.uri(nb)},
                                               "cellTextDocuments": [{"uri": u} for u in uris + [new]
                                                                     if u != uris[2]]})
        s.take(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uris[3]
               and m["params"]["diagnostics"] == [])
        assert s.shutdown() == 0
    finally:
        s.kill()


# ---- whole-program facts: the workspace's other files ----------------------------------------

UTILS = '''import torch.nn.functional as F


def step(model, x, y):
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    return loss
'''

TRAIN = '''from utils import step


def train(model, loader, optimizer):
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = step(model, x.cuda(), y.cuda())
        optimizer.step()
        total += loss
    return total
'''


def cli_dir_as_lsp(ws, rel):
    """The CLI's findings for file rel when linting the whole workspace, as cli_as_lsp gives them."""
    r = harness.run("--format", "json", ".", cwd=ws.path)
    sev = {"error": 1, "warning": 2, "info": 3}
    return sorted((f["code"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1, f["message"],
                   sev[f["severity"]]) for f in r.json() if f["path"] == rel)


def publishes(s, uri):
    return [m for m in s.pending if m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri]


@test("server: a helper in another file of the workspace counts, as on the command line; a save refreshes it")
def _():
    ws = Workspace()
    utils = ws.write("utils.py", UTILS)
    train = ws.write("train.py", TRAIN)
    expected = cli_dir_as_lsp(ws, "train.py")
    assert [e[0] for e in expected] == ["OOM101"], expected  # the CLI sees it through the call
    assert cli_as_lsp(train) == []                            # and not in train.py alone
    s = start(ws)
    try:
        open_doc(s, train, TRAIN)
        diags = s.diagnostics(L.uri(train), 1)
        assert lsp_as_tuples(diags) == expected
        # fix-all fixes it as `oomlint --fix .` would
        [fa] = actions(s, train, diags[0]["range"], only=["source.fixAll.oomlint"])
        ws2 = Workspace()
        ws2.write("utils.py", UTILS)
        ws2.write("train.py", TRAIN)
        harness.run("--fix", ".", cwd=ws2.path)
        assert apply_edits(TRAIN, fa["edit"]["changes"][L.uri(train)]) == ws2.read("train.py")
        assert "total += loss.item()" in ws2.read("train.py")
        # utils.py opened and edited: the helper returns a Python number. Typing alone
        # does not re-lint train.py; the save does, and its finding goes away.
        open_doc(s, utils, UTILS)
        assert s.diagnostics(L.uri(utils), 1) == []
        fixed = UTILS.replace("return loss\n", "return loss.item()\n")
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(utils), "version": 2},
                                            "contentChanges": [{"text": fixed}]})
        s.diagnostics(L.uri(utils), 2)
        s.drain(0.3)
        assert publishes(s, L.uri(train)) == [], s.pending
        ws.write("utils.py", fixed)
        s.notify("textDocument/didSave", {"textDocument": {"uri": L.uri(utils)}})
        assert s.diagnostics(L.uri(train)) == []
        assert cli_dir_as_lsp(ws, "train.py") == []
        # typing in train.py now reads the buffer's summary of utils.py: back to the graph, unsaved
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(utils), "version": 3},
                                            "contentChanges": [{"text": UTILS}]})
        s.diagnostics(L.uri(utils), 3)
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(train), "version": 2},
                                            "contentChanges": [{"text": TRAIN + "\n"}]})
        assert [d["code"] for d in s.diagnostics(L.uri(train), 2)] == ["OOM101"]
        # closing utils.py unsaved: the disk's text (returns .item()) counts again
        s.notify("textDocument/didClose", {"textDocument": {"uri": L.uri(utils)}})
        assert s.diagnostics(L.uri(train)) == []
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a neighbour changed on disk (didChangeWatchedFiles) re-lints the open files; a new file counts")
def _():
    ws = Workspace()
    ws.write("utils.py", UTILS.replace("return loss\n", "return loss.item()\n"))
    train = ws.write("train.py", TRAIN)
    s = start(ws)
    try:
        open_doc(s, train, TRAIN)
        assert s.diagnostics(L.uri(train), 1) == []
        utils = ws.write("utils.py", UTILS)
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": L.uri(utils), "type": 2}]})
        assert [d["code"] for d in s.diagnostics(L.uri(train))] == ["OOM101"]
        # a module that did not exist when the workspace was read
        text = TRAIN.replace("from utils import step", "from helpers import step")
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(train), "version": 2},
                                            "contentChanges": [{"text": text}]})
        assert s.diagnostics(L.uri(train), 2) == []
        helpers = ws.write("helpers.py", UTILS)
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": L.uri(helpers), "type": 1}]})
        assert [d["code"] for d in s.diagnostics(L.uri(train))] == ["OOM101"]
        os.unlink(helpers)
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": L.uri(helpers), "type": 3}]})
        assert s.diagnostics(L.uri(train)) == []
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: no workspace, or a file outside it, is linted alone as before")
def _():
    ws = Workspace()
    ws.write("utils.py", UTILS)
    train = ws.write("train.py", TRAIN)
    inside = ws.write("sub/inner.py", "")
    for root in (None, os.path.dirname(inside)):
        s = L.Server(harness.BIN, cwd=ws.path)
        try:
            s.initialize(root=root)
            open_doc(s, train, TRAIN)
            assert s.diagnostics(L.uri(train), 1) == [], root
            assert s.shutdown() == 0
        finally:
            s.kill()
    # an untitled buffer in a workspace
    s = start(ws)
    try:
        s.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:Untitled-1", "languageId": "python",
                                                           "version": 1, "text": TRAIN}})
        assert s.diagnostics("untitled:Untitled-1", 1) == []
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: broken, binary, unreadable and looping neighbours do not break the workspace")
def _():
    ws = Workspace()
    ws.write("utils.py", UTILS)
    ws.write("broken.py", "def h(x:\n    return (\n")
    ws.write("binary.py", b"\x00\x01\x02\xff\xfe", mode="wb")
    ws.write("locked.py", "def k(x):\n    return x\n")
    os.chmod(os.path.join(ws.path, "locked.py"), 0)
    os.symlink("nowhere.py", os.path.join(ws.path, "dangling.py"))
    os.mkfifo(os.path.join(ws.path, "fifo.py"))
    ws.write("a.py", "from b import g\n\ndef f(x):\n    return g(x)\n")
    ws.write("b.py", "from a import f\n\ndef g(x):\n    return f(x)\n")
    text = ("from broken import h\nfrom binary import k0\nfrom locked import k\nfrom dangling import d\n"
            "from fifo import q\nfrom a import f\n" + TRAIN)
    train = ws.write("train.py", text)
    s = start(ws)
    try:
        open_doc(s, train, text)
        assert [d["code"] for d in s.diagnostics(L.uri(train), 1)] == ["OOM101"]
        broken = os.path.join(ws.path, "broken.py")
        open_doc(s, broken, "def h(x:\n    return (\n")
        assert {d["code"] for d in s.diagnostics(L.uri(broken), 1)} == {"OOM002"}
        s.notify("textDocument/didSave", {"textDocument": {"uri": L.uri(broken)}})
        assert [d["code"] for d in s.diagnostics(L.uri(train))] == ["OOM101"]
        assert s.shutdown() == 0
    finally:
        s.kill()
        os.chmod(os.path.join(ws.path, "locked.py"), 0o644)


@test("server: pull clients are told findings depend on other files, and asked to pull again after a save")
def _():
    ws = Workspace()
    utils = ws.write("utils.py", UTILS)
    train = ws.write("train.py", TRAIN)
    s = L.Server(harness.BIN, cwd=ws.path)
    try:
        r = s.initialize(root=ws.path, capabilities={"textDocument": {"diagnostic": {}},
                                                      "workspace": {"diagnostics": {"refreshSupport": True}}})
        assert r["result"]["capabilities"]["diagnosticProvider"]["interFileDependencies"] is True, r
        open_doc(s, train, TRAIN)
        open_doc(s, utils, UTILS)
        pull = lambda: s.request("textDocument/diagnostic", {"textDocument": {"uri": L.uri(train)}})["result"]
        assert [d["code"] for d in pull()["items"]] == ["OOM101"]
        fixed = UTILS.replace("return loss\n", "return loss.item()\n")
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(utils), "version": 2},
                                            "contentChanges": [{"text": fixed}]})
        s.notify("textDocument/didSave", {"textDocument": {"uri": L.uri(utils)}, "text": fixed})
        s.take(lambda m: m.get("method") == "workspace/diagnostic/refresh")
        assert pull()["items"] == []
        assert s.shutdown() == 0
    finally:
        s.kill()


# ---- every version published, whatever lints it; bad bytes and numbers ------------------------

def _edit_then(s, path, version, method, params):
    """didChange to `version` and a request in one write, so the request is
    read (and lints) before the loop that pushes diagnostics runs."""
    change = L.frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": L.uri(path), "version": version},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                            "text": "#\n"}]}})
    s.next_id += 1
    req = L.frame({"jsonrpc": "2.0", "id": s.next_id, "method": method, "params": params})
    s.send_raw(change + req)
    return s.response(s.next_id)


@test("server: a hover, code action or pull request right after an edit still gets that version published")
def _():
    ws = Workspace()
    path = ws.write("eager.py", BAD)
    s = start(ws)
    try:
        open_doc(s, path, BAD)
        assert len(s.diagnostics(L.uri(path), 1)) == 2
        td = {"uri": L.uri(path)}
        requests = [("textDocument/hover", {"textDocument": td, "position": {"line": 13, "character": 8}}),
                    ("textDocument/codeAction", {"textDocument": td, "range": {"start": {"line": 0, "character": 0},
                                                                               "end": {"line": 0, "character": 0}},
                                                 "context": {"diagnostics": []}}),
                    ("textDocument/diagnostic", {"textDocument": td})]
        for k, (method, params) in enumerate(requests):
            version = 2 + k
            r = _edit_then(s, path, version, method, params)
            assert "result" in r, r
            diags = s.diagnostics(L.uri(path), version, timeout=10)
            # the edit added a line at the top each time: the findings moved down with it
            assert sorted(d["range"]["start"]["line"] for d in diags) == [12 + version - 1, 13 + version - 1], diags
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a message after blank lines is answered without waiting for more input")
def _():
    s = start()
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 400, "method": "oomlint/none"}).encode()
        s.send_raw(b"\n\n" + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        assert error_code(s.response(400, timeout=5)) == -32601
        s.send_raw(b"\r\n\r\n\r\n" + b"Content-Length: %d\r\n\r\n" % len(body) + body.replace(b"400", b"401"))
        assert error_code(s.response(401, timeout=5)) == -32601
        # a long run of them costs its length, and a message still follows
        s.send_raw(b"\n" * 300000 + L.frame({"jsonrpc": "2.0", "id": 402, "method": "oomlint/none"}))
        assert error_code(s.response(402, timeout=10)) == -32601
        assert s.shutdown() == 0
    finally:
        s.kill()


def _raw_exchange(data, timeout=20):
    """Runs the server on `data` (bytes, then end of input) and returns the
    message bodies it wrote, as bytes, and its stderr."""
    import subprocess
    proc = subprocess.run([harness.BIN, "server"], input=data, capture_output=True, timeout=timeout, cwd=ROOT)
    out, bodies = proc.stdout, []
    while out:
        head, sep, rest = out.partition(b"\r\n\r\n")
        assert sep, out[:200]
        n = int(head.split(b":")[1])
        bodies.append(rest[:n])
        out = rest[n:]
    return bodies, proc.stderr.decode("utf-8", "replace")


@test("server: a client's invalid UTF-8 is never echoed back: every message it writes is UTF-8")
def _():
    init = L.frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None,
                                                                                "capabilities": {}}})

    def raw(text):
        return b"Content-Length: %d\r\n\r\n" % len(text) + text
    data = (init + L.frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}) +
            raw(b'{"jsonrpc":"2.0","id":2,"method":"bad\xff\xfe/method"}') +
            raw(b'{"jsonrpc":"2.0","id":"id\xc3","method":"x"}') +
            raw(b'{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":'
                b'{"uri":"file:///nope\xed\xa0\x80.py","version":2},"contentChanges":[{"text":"x"}]}}') +
            raw(b'{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":'
                b'{"uri":"file:///tmp/bad\xff.py","languageId":"python","version":1,'
                b'"text":"import torch; d = \'cuda\'\\ntorch.load(\'\xff\')\\n"}}}') +
            raw(b'{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":'
                b'{"uri":"file:///tmp/bad\xff.py"},"position":{"line":1,"character":3}}}'))
    bodies, err = _raw_exchange(data)
    assert len(bodies) >= 5, bodies
    for b in bodies:
        b.decode("utf-8")  # raises on invalid UTF-8
        json.loads(b)
    text = b"".join(bodies).decode()
    assert "bad\ufffd\ufffd/method" in text, text[:2000]
    assert '"id":"id\ufffd"' in text, text[:2000]
    # the document with a bad byte in its URI and text was linted (its hover found the finding)
    assert '"id":3,"result":{"contents"' in text and "OOM302" in text, text[:3000]


@test("server: numbers like 1e300 from a client are clamped, not converted past an integer's range")
def _():
    ws = Workspace()
    path = ws.write("huge.py", BAD)
    nb = os.path.join(ws.path, "nb.ipynb")
    s = start(ws)
    try:
        s.notify("textDocument/didOpen", {"textDocument": {"uri": L.uri(path), "languageId": "python",
                                                           "version": 1e300, "text": BAD}})
        msg = s.take(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        # the largest version there is, not a negative number from an overflowed conversion
        assert msg["params"]["version"] >= 2 ** 62, msg["params"]
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": -1e300},
                                            "contentChanges": [{"range": {"start": {"line": 1e300, "character": 1e300},
                                                                          "end": {"line": 1e300, "character": -0.0}},
                                                                "text": "\n"}]})
        r = s.request("textDocument/hover", {"textDocument": {"uri": L.uri(path)},
                                             "position": {"line": 1e300, "character": 1e300}})
        assert "result" in r or r["error"]["code"] == -32602, r
        s.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": L.uri(nb), "notebookType": "jupyter-notebook", "version": 1e300,
                                 "cells": [{"kind": 2, "document": "cell:1"}]},
            "cellTextDocuments": [{"uri": "cell:1", "languageId": "python", "version": 1, "text": "x = 1\n"}]})
        s.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": L.uri(nb), "version": 2},
            "change": {"cells": {"structure": {"array": {"start": 1e300, "deleteCount": 1e300}}}}})
        r = s.request("textDocument/codeAction", {"textDocument": {"uri": L.uri(path)},
                                                  "range": {"start": {"line": 1e300, "character": 0},
                                                            "end": {"line": 1e300, "character": 1e300}},
                                                  "context": {"diagnostics": []}})
        assert "result" in r, r
        assert s.shutdown() == 0  # and no sanitizer report (checked by wait)
    finally:
        s.kill()


@test("server: a document past the lint limit is kept and edited but not linted; the client is told, and "
      "the server goes on")
def _():
    ws = Workspace()
    path = os.path.join(ws.path, "huge.py")
    line = "value = compute(1)  # " + "x" * 40 + "\n"
    text = BAD + line * (17 * 1024 * 1024 // len(line) + 1)  # past 16 MiB
    s = start(ws)
    try:
        open_doc(s, path, text)
        [d] = s.diagnostics(L.uri(path), 1, timeout=60)
        assert "did not lint" in d["message"] and "16 MiB" in d["message"], d
        shown = s.take(lambda m: m.get("method") == "window/showMessage")
        assert "huge.py is not linted" in shown["params"]["message"], shown
        # what one document may cost is bounded: about 30 times the text when linted, a few times here
        with open(f"/proc/{s.proc.pid}/status") as f:
            hwm_mb = int([x for x in f if x.startswith("VmHWM")][0].split()[1]) / 1024
        limit = 10 * len(text) / 1e6 + (400 if "/san/" in harness.BIN else 150)
        assert hwm_mb < limit, f"{hwm_mb:.0f} MB peak for a {len(text) / 1e6:.0f} MB document (limit {limit:.0f})"
        # the server still serves: another document is linted
        small = ws.write("small.py", BAD)
        open_doc(s, small, BAD)
        assert len(s.diagnostics(L.uri(small), 1)) == 2
        # cut the big one below the limit: it is linted again
        s.notify("textDocument/didChange", {"textDocument": {"uri": L.uri(path), "version": 2},
                                            "contentChanges": [{"text": BAD}]})
        assert sorted(d["code"] for d in s.diagnostics(L.uri(path), 2, timeout=30)) == ["OOM101", "OOM302"]
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: watched-file events for files that do not exist are ignored, and said so in the log")
def _():
    ws = Workspace()
    path = ws.write("train.py", BAD)
    real = ws.write("pkg/real.py", "def f():\n    return 1\n")
    s = start(ws)
    try:
        open_doc(s, path, BAD)
        s.diagnostics(L.uri(path), 1)
        ghosts = [os.path.join(ws.path, "pkg", f"ghost{i}.py") for i in range(3)]
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": L.uri(g), "type": 1} for g in ghosts] +
                                                     [{"uri": L.uri(real), "type": 1}]})
        log = s.take(lambda m: m.get("method") == "window/logMessage" and "do not exist" in m["params"]["message"])
        assert log["params"]["message"].startswith("3 files reported created"), log
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("server: a notebook cell turned from markdown into code (cell data) is linted, and cleared when turned back")
def _():
    ws = Workspace()
    nb = os.path.join(ws.path, "kinds.ipynb")
    uris = [f"vscode-notebook-cell:{nb}#k{i}" for i in range(3)]
    texts = ["import torch.distributed", "state = torch.load('m.pt')", "x = 1"]
    s = start(ws)
    try:
        s.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": L.uri(nb), "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": k, "document": u} for k, u in zip((2, 1, 2), uris)]},
            "cellTextDocuments": [{"uri": u, "languageId": "python", "version": 1, "text": t}
                                  for u, t in zip(uris, texts)]})
        assert s.diagnostics(uris[2]) == []
        s.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": L.uri(nb), "version": 2},
            "change": {"cells": {"data": [{"kind": 2, "document": uris[1]}]}}})
        [d] = s.diagnostics(uris[1])
        assert d["code"] == "OOM302", d
        s.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": L.uri(nb), "version": 3},
            "change": {"cells": {"data": [{"kind": 1, "document": uris[1]}, {"kind": 2, "document": uris[2]}]}}})
        assert s.diagnostics(uris[1]) == []
        assert s.shutdown() == 0
    finally:
        s.kill()


# ---- evidence ---------------------------------------------------------------------------------

RELATED = {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}}


def oom201(diags):
    [d] = [d for d in diags if d["code"] == "OOM201"]
    return d


@test("server: evidence: relatedInformation only for a client that shows it; the message is the CLI's either way")
def _():
    from cli_tests import EVAL
    ws = Workspace()
    path = ws.write("ev.py", EVAL)
    want = [f["message"] for f in harness.run("--format", "json", path).json() if f["code"] == "OOM201"]
    for caps in (RELATED, {}):
        s = start(ws, capabilities=caps)
        try:
            open_doc(s, path, EVAL)
            d = oom201(s.diagnostics(L.uri(path)))
            assert [d["message"]] == want, d
            text = "`evaluate()` is evaluation code: named for it, and it computes no gradient"
            if caps:
                assert d["relatedInformation"][0] == {
                    "location": {"uri": L.uri(path), "range": {"start": {"line": 6, "character": 4},
                                                               "end": {"line": 6, "character": 12}}},
                    "message": text}, d
            else:
                assert "relatedInformation" not in d, d
            # it rests on the function's name: the client is told, as JSON and SARIF say it
            assert d["data"] == {"confidence": "low", "guessedFrom": "a function's name"}, d
            # the hover lists the evidence for every client
            r = s.request("textDocument/hover", {"textDocument": {"uri": L.uri(path)}, "position": d["range"]["start"]})
            assert f"\nnote: {text} (line 7)\n" in r["result"]["contents"]["value"], r
            assert s.shutdown() == 0
        finally:
            s.kill()


@test("server: evidence: a note in another cell of a notebook points at that cell")
def _():
    from cli_tests import eval_notebook
    ws = Workspace()
    nb = os.path.join(ws.path, "nb.ipynb")
    cells = [(2 if c["cell_type"] == "code" else 1, "".join(c["source"])) for c in json.loads(eval_notebook())["cells"]]
    uris = [f"vscode-notebook-cell:{nb}#e{i}" for i in range(len(cells))]
    s = start(ws, capabilities=RELATED, options={"select": ["OOM201"]})
    try:
        s.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": L.uri(nb), "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": k, "document": u} for (k, _), u in zip(cells, uris)]},
            "cellTextDocuments": [{"uri": u, "languageId": "markdown" if k == 1 else "python", "version": 1,
                                   "text": t} for (k, t), u in zip(cells, uris)]})
        d = oom201(s.diagnostics(uris[2]))
        assert d["range"]["start"] == {"line": 2, "character": 17}, d
        text = "`model.eval()` switches the model to evaluation before this forward"
        assert d["relatedInformation"][0] == {
            "location": {"uri": uris[1], "range": {"start": {"line": 3, "character": 0},
                                                   "end": {"line": 3, "character": 12}}},
            "message": text}, d
        r = s.request("textDocument/hover", {"textDocument": {"uri": uris[2]}, "position": d["range"]["start"]})
        assert f"\nnote: {text} (cell 2, line 4)\n" in r["result"]["contents"]["value"], r
        assert s.shutdown() == 0
    finally:
        s.kill()
