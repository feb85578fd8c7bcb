// client_test.js - drives `oomlint server` through vscode-languageserver-protocol
// and vscode-jsonrpc, the libraries under VS Code's language client.
//
//   node tests/lsp/client_test.js BIN WORKDIR
//
// BIN is the oomlint binary, WORKDIR an empty scratch directory. Prints one
// line per check and exits non-zero at the first failure. Run by
// tests/editor_tests.py with NODE_PATH pointing at build/tools/lsp.
'use strict';

const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const path = require('path');
const rpc = require('vscode-jsonrpc/node');
const P = require('vscode-languageserver-protocol');

const [bin, work] = process.argv.slice(2);
const uriOf = (p) => 'file://' + p;

// A bad file with non-ASCII text before the findings on their lines.
const BAD = [
  'import torch',
  'import torch.nn as nn',
  '',
  '',
  'def train(model, loader, optimizer, rank):',
  '    criterion = nn.CrossEntropyLoss()',
  '    total = 0  # Σ of the losses',
  '    for x, y in loader:',
  '        optimizer.zero_grad()',
  '        loss = criterion(model(x), y)',
  '        loss.backward()',
  '        optimizer.step()',
  '        name = "😀é"; total += loss',
  '    state = torch.load("ckpt-中文.pt")',
  '    return total, state',
  '',
].join('\n');

function cli(args, input) {
  const r = cp.spawnSync(bin, args, { input, encoding: 'utf8', cwd: work });
  return r.stdout;
}

// The CLI's JSON findings as LSP tuples: code-point columns become UTF-16.
function cliFindings(file, text) {
  const lines = text.split('\n');
  const u16 = (line, col) => [...lines[line - 1]].slice(0, col - 1).join('').length;
  return JSON.parse(cli(['--format', 'json', file])).map((f) => [f.code, f.line - 1, u16(f.line, f.column),
    f.end_line - 1, u16(f.end_line, f.end_column), f.message]).sort();
}

const asTuples = (diags) => diags.map((d) => [d.code, d.range.start.line, d.range.start.character,
  d.range.end.line, d.range.end.character, d.message]).sort();

// Applies LSP TextEdits to text; JavaScript strings are UTF-16, as LSP columns are.
function applyEdits(text, edits) {
  const offset = (pos) => {
    const lines = text.split('\n');
    let at = 0;
    for (let i = 0; i < pos.line; i++) at += lines[i].length + 1;
    return at + Math.min(pos.character, (lines[pos.line] || '').length);
  };
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  return text;
}

async function main() {
  const server = cp.spawn(bin, ['server'], { cwd: work, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  const logged = [];
  const logger = { error: (m) => logged.push(m), warn: () => {}, info: () => {}, log: () => {} };
  const conn = P.createProtocolConnection(new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin), logger);
  const published = [];
  const waiters = [];
  conn.onNotification(P.PublishDiagnosticsNotification.type, (p) => {
    published.push(p);
    for (const w of [...waiters]) {
      if (w.test(p)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(p);
      }
    }
  });
  conn.onNotification(P.LogMessageNotification.type, () => {});
  conn.onNotification(P.ShowMessageNotification.type, () => {});
  conn.listen();
  const diagnostics = (uri, version) => {
    const test = (p) => p.uri === uri && (version === undefined || p.version === version);
    const seen = published.find(test);
    if (seen) {
      published.splice(published.indexOf(seen), 1);
      return Promise.resolve(seen.diagnostics);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no diagnostics for ${uri} v${version}\n${stderr}`)), 20000);
      waiters.push({ test, resolve: (p) => { clearTimeout(timer); published.splice(published.indexOf(p), 1); resolve(p.diagnostics); } });
    });
  };
  const expectError = async (promise, code, what) => {
    try {
      await promise;
    } catch (e) {
      assert.strictEqual(e.code, code, `${what}: ${e.message}`);
      console.log(`ok   ${what} -> ${code}`);
      return;
    }
    throw new Error(`${what}: no error`);
  };

  // ---- errors before initialize, then the lifecycle
  await expectError(conn.sendRequest(P.HoverRequest.type, { textDocument: { uri: 'file:///x.py' },
    position: { line: 0, character: 0 } }), -32002, 'a request before initialize');
  const init = await conn.sendRequest(P.InitializeRequest.type, {
    processId: process.pid, rootUri: uriOf(work), capabilities: {},
    workspaceFolders: [{ uri: uriOf(work), name: 'work' }],
  });
  assert.strictEqual(init.serverInfo.name, 'oomlint');
  assert.strictEqual(init.capabilities.textDocumentSync.change, P.TextDocumentSyncKind.Incremental);
  conn.sendNotification(P.InitializedNotification.type, {});
  console.log(`ok   initialize: oomlint ${init.serverInfo.version}`);

  await expectError(conn.sendRequest('oomlint/unknown', {}), P.ErrorCodes.MethodNotFound, 'an unknown method');
  await expectError(conn.sendRequest(P.HoverRequest.type, { textDocument: { uri: 'file:///x.py' } }),
    P.ErrorCodes.InvalidParams, 'hover without a position');
  // malformed JSON between two good messages: the server answers with a parse
  // error (id null, which the library reports) and goes on
  server.stdin.write('Content-Length: 5\r\n\r\n{bad}');
  await expectError(conn.sendRequest('oomlint/unknown2', {}), P.ErrorCodes.MethodNotFound, 'a request after bad JSON');
  assert.ok(logged.some((m) => /without id|Parse|not valid JSON/i.test(String(m))), `logged: ${logged}`);
  console.log('ok   malformed JSON answered with a parse error');

  // ---- a bad file: diagnostics equal the CLI's
  const file = path.join(work, 'train.py');
  fs.writeFileSync(file, BAD);
  const uri = uriOf(file);
  conn.sendNotification(P.DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'python', version: 1, text: BAD } });
  let diags = await diagnostics(uri, 1);
  assert.deepStrictEqual(asTuples(diags), cliFindings(file, BAD));
  assert.deepStrictEqual(diags.map((d) => d.code).sort(), ['OOM101', 'OOM302']);
  const d101 = diags.find((d) => d.code === 'OOM101');
  assert.strictEqual(d101.range.start.character, '        name = "😀é"; '.length); // UTF-16 units
  assert.strictEqual(d101.codeDescription.href, 'https://github.com/oomlint/oomlint/blob/main/docs/rules/OOM101.md');
  console.log('ok   diagnostics equal the CLI JSON (UTF-16 columns)');

  // ---- incremental edits with non-ASCII text
  let text = BAD;
  const edit = (version, range, newText) => {
    text = applyEdits(text, [{ range, newText }]);
    conn.sendNotification(P.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version }, contentChanges: [{ range, text: newText }] });
  };
  edit(2, { start: { line: 12, character: 8 }, end: { line: 12, character: 8 } }, '𝔁 = "ü"; ');
  diags = await diagnostics(uri, 2);
  assert.strictEqual(diags.find((d) => d.code === 'OOM101').range.start.character,
    '        𝔁 = "ü"; name = "😀é"; '.length);
  // delete the emoji (one surrogate pair) and the é
  const line12 = text.split('\n')[12];
  const at = line12.indexOf('😀');
  edit(3, { start: { line: 12, character: at }, end: { line: 12, character: at + 3 } }, '');
  diags = await diagnostics(uri, 3);
  assert.deepStrictEqual(asTuples(diags), (fs.writeFileSync(file, text), cliFindings(file, text)));
  console.log('ok   incremental edits with non-ASCII text');

  // ---- code actions
  let d = diags.find((x) => x.code === 'OOM101');
  let actions = await conn.sendRequest(P.CodeActionRequest.type, { textDocument: { uri }, range: d.range,
    context: { diagnostics: [d] } });
  const quick = actions.find((a) => a.kind === 'quickfix' && a.title.startsWith('OOM101'));
  assert.ok(quick && quick.edit.changes[uri], JSON.stringify(actions));
  assert.ok(applyEdits(text, quick.edit.changes[uri]).includes('total += loss.item()'));
  const disable = actions.find((a) => a.title === 'Disable OOM101 for this line');
  assert.ok(applyEdits(text, disable.edit.changes[uri]).includes('total += loss  # noqa: OOM101\n'));
  actions = await conn.sendRequest(P.CodeActionRequest.type, { textDocument: { uri }, range: d.range,
    context: { diagnostics: [], only: [P.CodeActionKind.SourceFixAll] } });
  assert.strictEqual(actions.length, 1);
  assert.strictEqual(actions[0].kind, 'source.fixAll.oomlint');
  const fixedAll = applyEdits(text, actions[0].edit.changes[uri]);
  assert.strictEqual(fixedAll, cli(['--fix', '-', '--stdin-filename', file], text));
  console.log('ok   quick fix, noqa and fix-all (equal to --fix)');
  edit(4, { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } }, fixedAll);
  diags = await diagnostics(uri, 4);
  assert.deepStrictEqual(diags.map((x) => x.code), ['OOM302']); // its fix is unsafe here

  // ---- hover and pull
  edit(5, { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, 'import torch\nm = torch.load("x")\n');
  diags = await diagnostics(uri, 5);
  d = diags.find((x) => x.code === 'OOM302');
  const hover = await conn.sendRequest(P.HoverRequest.type, { textDocument: { uri }, position: d.range.start });
  assert.strictEqual(hover.contents.kind, 'markdown');
  assert.ok(hover.contents.value.includes('# OOM302 torch-load-without-map-location'), hover.contents.value);
  const pulled = await conn.sendRequest(P.DocumentDiagnosticRequest.type, { textDocument: { uri } });
  assert.strictEqual(pulled.kind, 'full');
  assert.deepStrictEqual(asTuples(pulled.items), asTuples(diags));
  console.log('ok   hover and pulled diagnostics');

  // ---- a notebook
  const nb = path.join(work, 'nb.ipynb');
  const cells = [
    [P.NotebookCellKind.Markup, '# Notes'],
    [P.NotebookCellKind.Code, '!pip install torch\nimport torch\nimport torch.distributed as dist'],
    [P.NotebookCellKind.Code, 'x = "é😀"; ckpt = torch.load("m.pt")'],
  ];
  const cellUri = (i) => `vscode-notebook-cell:${nb}#W${i}`;
  conn.sendNotification(P.DidOpenNotebookDocumentNotification.type, {
    notebookDocument: { uri: uriOf(nb), notebookType: 'jupyter-notebook', version: 1,
      cells: cells.map(([kind], i) => ({ kind, document: cellUri(i) })) },
    cellTextDocuments: cells.map(([kind, t], i) => ({ uri: cellUri(i),
      languageId: kind === P.NotebookCellKind.Code ? 'python' : 'markdown', version: 1, text: t })),
  });
  assert.deepStrictEqual(await diagnostics(cellUri(1)), []);
  const cellDiags = await diagnostics(cellUri(2));
  assert.strictEqual(cellDiags.length, 1);
  assert.strictEqual(cellDiags[0].code, 'OOM302');
  assert.deepStrictEqual(cellDiags[0].range.start, { line: 0, character: 'x = "é😀"; ckpt = '.length });
  conn.sendNotification(P.DidChangeNotebookDocumentNotification.type, {
    notebookDocument: { uri: uriOf(nb), version: 2 },
    change: { cells: { textContent: [{ document: { uri: cellUri(2), version: 2 }, changes: [
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: 'import os\n' }] }] } },
  });
  const moved = await diagnostics(cellUri(2), 2);
  assert.strictEqual(moved[0].range.start.line, 1);
  conn.sendNotification(P.DidCloseNotebookDocumentNotification.type, {
    notebookDocument: { uri: uriOf(nb) }, cellTextDocuments: cells.map((_, i) => ({ uri: cellUri(i) })) });
  assert.deepStrictEqual(await diagnostics(cellUri(2)), []);
  console.log('ok   notebook document: findings in their cells, UTF-16 columns, cleared on close');

  // ---- close, shutdown, exit
  conn.sendNotification(P.DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  assert.deepStrictEqual(await diagnostics(uri), []);
  await conn.sendRequest(P.ShutdownRequest.type);
  await expectError(conn.sendRequest(P.HoverRequest.type, { textDocument: { uri }, position: { line: 0, character: 0 } }),
    P.ErrorCodes.InvalidRequest, 'a request after shutdown');
  conn.sendNotification(P.ExitNotification.type);
  const code = await exited;
  assert.strictEqual(code, 0, stderr);
  assert.ok(!/Sanitizer|runtime error:/.test(stderr), stderr);
  console.log('ok   shutdown + exit: status 0');
  conn.dispose();
}

main().then(() => process.exit(0), (e) => {
  console.error(`FAIL ${e.stack || e}`);
  process.exit(1);
});
