"""Real clients driving `oomlint server`, and the editor setups in editors/:
Node with vscode-languageserver-protocol (tests/lsp/client_test.js), headless
Neovim 0.7 with editors/nvim (tests/editors/nvim_test.lua), Vim with ALE and
editors/vim, Emacs with eglot and editors/emacs, the VS Code extension (its
logic, and its packaging with vsce), and Helix's languages.toml. The tools
come from tests/editors.mk (`make test` installs them)."""
import json
import os
import shutil
import subprocess
import tempfile
import tomllib
import xml.etree.ElementTree as ET
import zipfile

import harness
from harness import test, Workspace
import lsp_client as L

ROOT = harness.ROOT
EDITORS = os.path.join(ROOT, "editors")
LSP_MODULES = os.path.join(ROOT, "build", "tools", "lsp", "node_modules")
VSCODE_BUILD = os.path.join(ROOT, "build", "editors", "vscode")

# Findings of several kinds, three of them with safe fixes.
NVIM_BAD = '''import torch
import torch.nn as nn
from torch.cuda.amp import autocast


def train(model, loader, optimizer, rank):
    criterion = nn.CrossEntropyLoss()
    total = 0
    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)
        with autocast():
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss
    state = torch.load("ckpt.pt")
    return total, state
'''


def run_tool(cmd, env=None, cwd=None, timeout=180):
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=full, cwd=cwd, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p


def editor_env(ws, result):
    return {"OOMLINT_BIN": harness.BIN, "OOMLINT_EDITORS": EDITORS, "OOMLINT_FILE": os.path.join(ws.path, "train.py"),
            "OOMLINT_RESULT": result, "HOME": ws.path}


@test("editors: Node drives the server through vscode-languageserver-protocol")
def _():
    ws = Workspace()
    p = run_tool(["node", os.path.join(ROOT, "tests", "lsp", "client_test.js"), harness.BIN, ws.path],
                 env={"NODE_PATH": LSP_MODULES})
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("ok   ") >= 12, p.stdout


@test("editors: headless Neovim (0.7, vim.lsp.start_client) with editors/nvim: diagnostics, fixes, hover, shutdown")
def _():
    ws = Workspace()
    ws.write("train.py", NVIM_BAD)
    ws.write("pyproject.toml", "[tool.oomlint]\n")
    result = os.path.join(ws.path, "result")
    p = run_tool(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "--cmd",
                  "set rtp^=" + os.path.join(EDITORS, "nvim"),
                  "-c", "luafile " + os.path.join(ROOT, "tests", "editors", "nvim_test.lua")],
                 env=editor_env(ws, result), cwd=ws.path)
    out = open(result).read() if os.path.exists(result) else ""
    assert p.returncode == 0 and out.rstrip().endswith("PASS"), f"{out}\n{p.stdout}\n{p.stderr}"


@test("editors: Neovim 0.11's lsp/oomlint.lua is a config vim.lsp.config accepts")
def _():
    ws = Workspace()
    out = os.path.join(ws.path, "out.json")
    script = ("local c = dofile('%s'); vim.fn.writefile({vim.fn.json_encode(c)}, '%s'); vim.cmd('qall!')"
              % (os.path.join(EDITORS, "nvim", "lsp", "oomlint.lua"), out))
    p = run_tool(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c", "lua " + script], env={"HOME": ws.path})
    assert p.returncode == 0, p.stderr
    cfg = json.load(open(out))
    assert cfg["cmd"] == ["oomlint", "server"] and cfg["filetypes"] == ["python"], cfg
    assert "pyproject.toml" in cfg["root_markers"], cfg
    # the command it names is what starts the server
    s = L.Server(harness.BIN, args=cfg["cmd"][2:], cwd=ws.path)
    try:
        s.initialize()
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("editors: Vim with ALE loads editors/vim, starts the server and shows its findings")
def _():
    ws = Workspace()
    ws.write("train.py", NVIM_BAD)
    result = os.path.join(ws.path, "result")
    p = run_tool(["vim", "-N", "-u", "NONE", "-i", "NONE", "-n", "--not-a-term", "-S",
                  os.path.join(ROOT, "tests", "editors", "vim_test.vim")], env=editor_env(ws, result), cwd=ws.path,
                 timeout=120)
    got = open(result).read().split() if os.path.exists(result) else []
    want = [f"{f['code']}:{f['line']}:{f['column']}"
            for f in harness.run("--format", "json", "--ignore", "OOM504", os.path.join(ws.path, "train.py")).json()]
    assert sorted(got) == sorted(want), (got, want, p.stdout[-2000:], p.stderr[-2000:])


@test("editors: Emacs with eglot loads editors/emacs, starts the server and flymake gets its findings")
def _():
    ws = Workspace()
    ws.write("train.py", NVIM_BAD)
    result = os.path.join(ws.path, "result")
    p = run_tool(["emacs", "--batch", "-l", os.path.join(ROOT, "tests", "editors", "emacs_test.el")],
                 env=editor_env(ws, result), cwd=ws.path, timeout=120)
    lines = open(result).read().split() if os.path.exists(result) else []
    assert lines and lines[-1] == "PASS", (lines, p.stderr[-3000:])
    want = sorted(f"{f['code']}:{f['line']}"
                  for f in harness.run("--format", "json", "--ignore", "OOM504",
                                       os.path.join(ws.path, "train.py")).json())
    assert sorted(lines[:-1]) == want, (lines, want)


@test("editors: Helix's languages.toml starts the server with its command, args and config")
def _():
    with open(os.path.join(EDITORS, "helix", "languages.toml"), "rb") as f:
        cfg = tomllib.load(f)
    server = cfg["language-server"]["oomlint"]
    assert server["command"] == "oomlint" and server["args"] == ["server"], server
    [python] = [lang for lang in cfg["language"] if lang["name"] == "python"]
    assert "oomlint" in python["language-servers"], python
    ws = Workspace()
    path = ws.write("train.py", NVIM_BAD)
    s = L.Server(harness.BIN, args=server["args"][1:], cwd=ws.path)
    try:
        s.initialize(options=server.get("config"))
        s.notify("textDocument/didOpen", {"textDocument": {"uri": L.uri(path), "languageId": "python", "version": 1,
                                                           "text": NVIM_BAD}})
        assert len(s.diagnostics(L.uri(path), 1)) == 6
        assert s.shutdown() == 0
    finally:
        s.kill()


@test("editors: the VS Code extension finds the binary and starts the server with its settings")
def _():
    ws = Workspace()
    p = run_tool(["node", os.path.join(ROOT, "tests", "lsp", "vscode_test.js"), os.path.join(EDITORS, "vscode"),
                  ws.path], env={"NODE_PATH": os.path.join(VSCODE_BUILD, "node_modules")})
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("ok   ") == 3, p.stdout


@test("editors: the VS Code extension packages with vsce, offline, into a .vsix with a valid manifest")
def _():
    for name in ("extension.js", "server-path.js", "README.md", ".vscodeignore"):
        shutil.copy(os.path.join(EDITORS, "vscode", name), VSCODE_BUILD)
    out = os.path.join(tempfile.mkdtemp(prefix="oomlint-vsix-"), "oomlint.vsix")
    # no network: an unreachable proxy makes any request fail
    p = run_tool([os.path.join(VSCODE_BUILD, "node_modules", ".bin", "vsce"), "package", "--skip-license", "--out",
                  out], cwd=VSCODE_BUILD, env={"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                                               "npm_config_offline": "true"})
    assert p.returncode == 0, p.stdout + p.stderr
    manifest = json.load(open(os.path.join(EDITORS, "vscode", "package.json")))
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        for need in ("extension.vsixmanifest", "[Content_Types].xml", "extension/package.json",
                     "extension/extension.js", "extension/server-path.js", "extension/readme.md",
                     "extension/node_modules/vscode-languageclient/node.js",
                     "extension/node_modules/vscode-languageserver-protocol/package.json"):
            assert need in names, (need, sorted(names)[:40])
        assert not any("node_modules/@vscode/vsce/" in n for n in names), "the packager itself is shipped"
        assert not any(n.startswith("extension/bin/") for n in names), "the generic .vsix bundles a binary"
        assert "extension/.installed" not in names, "the build's npm stamp is shipped"
        packed = json.loads(z.read("extension/package.json"))
        vsix = ET.fromstring(z.read("extension.vsixmanifest"))
    ns = {"v": "http://schemas.microsoft.com/developer/vsx-schema/2011"}
    ident = vsix.find("v:Metadata/v:Identity", ns)
    assert ident.get("Id") == "oomlint" and ident.get("Publisher") == "oomlint", ident.attrib
    assert ident.get("Version") == manifest["version"]
    engine = vsix.find("v:Metadata/v:Properties/v:Property[@Id='Microsoft.VisualStudio.Code.Engine']", ns)
    assert engine.get("Value") == manifest["engines"]["vscode"]
    # the manifest: what VS Code needs to activate and configure the extension
    assert packed["main"] == "./extension.js" and packed["engines"]["vscode"].startswith("^1.")
    assert "onLanguage:python" in packed["activationEvents"]
    props = packed["contributes"]["configuration"]["properties"]
    for key in ("oomlint.path", "oomlint.args", "oomlint.enable", "oomlint.select", "oomlint.ignore",
                "oomlint.extendSelect", "oomlint.unsafeFixes", "oomlint.failOn"):
        assert key in props and "description" in props[key], key
    assert props["oomlint.failOn"]["enum"] == ["error", "warning", "info"]
    version = harness.run("--version").out.split()[1]  # oomlint 0.2.0 (commit ...)
    assert manifest["version"] == version, (manifest["version"], version)


@test("editors: make vsix-platform bundles this platform's binary in a .vsix targeted at that platform")
def _():
    target = "linux-arm64" if os.uname().machine in ("aarch64", "arm64") else "linux-x64"
    out = os.path.join(ROOT, "build", f"oomlint-vscode-{target}.vsix")
    if os.path.exists(out):
        os.unlink(out)
    p = run_tool(["make", "-s", "-C", ROOT, "vsix-platform", f"VSIX_TARGET={target}", f"VSIX_BIN={harness.BIN}"],
                 env={"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                      "npm_config_offline": "true"})
    assert p.returncode == 0, p.stdout + p.stderr
    with zipfile.ZipFile(out) as z:
        info = z.getinfo("extension/bin/oomlint")
        assert (info.external_attr >> 16) & 0o111, "the bundled binary is not executable"
        with open(harness.BIN, "rb") as f:
            assert z.read("extension/bin/oomlint") == f.read(), "not the binary given"
        assert "extension/server-path.js" in z.namelist()
        assert "extension/.installed" not in z.namelist(), "the build's npm stamp is shipped"
        vsix = ET.fromstring(z.read("extension.vsixmanifest"))
    ns = {"v": "http://schemas.microsoft.com/developer/vsx-schema/2011"}
    assert vsix.find("v:Metadata/v:Identity", ns).get("TargetPlatform") == target
    # no .vsix for a platform oomlint is not released for
    p = run_tool(["make", "-s", "-C", ROOT, "vsix-platform", "VSIX_TARGET=win32-x64", f"VSIX_BIN={harness.BIN}"])
    assert p.returncode != 0 and "VSIX_TARGET: one of" in p.stderr, p.stdout + p.stderr
