// vscode_test.js - the VS Code extension's own logic, without VS Code:
// server-path.js finds the binary (setting, Python environment, PATH), and
// extension.js, loaded with a stand-in `vscode` module and language client,
// starts `oomlint server` with the configured arguments and settings and
// restarts it when oomlint.path / args / enable change.
//
//   node tests/lsp/vscode_test.js EXTENSION_DIR WORKDIR
'use strict';

const assert = require('assert');
const fs = require('fs');
const Module = require('module');
const path = require('path');

const [extDir, work] = process.argv.slice(2);
const { findServer } = require(path.join(extDir, 'server-path.js'));

function exe(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\n');
  fs.chmodSync(file, 0o755);
  return file;
}

// ---- finding the binary
const onPath = exe(path.join(work, 'path-bin', 'oomlint'));
const inVenv = exe(path.join(work, 'venv-env', 'bin', 'oomlint'));
const inConda = exe(path.join(work, 'conda-env', 'bin', 'oomlint'));
const project = path.join(work, 'project');
const inDotVenv = exe(path.join(project, '.venv', 'bin', 'oomlint'));
const interp = exe(path.join(work, 'selected', 'bin', 'python3'));
const nextToInterp = exe(path.join(work, 'selected', 'bin', 'oomlint'));
const plainFile = path.join(work, 'not-executable');
fs.writeFileSync(plainFile, '');
const PATH = [path.join(work, 'empty'), path.dirname(onPath)].join(':');

assert.strictEqual(findServer({ setting: onPath, env: {} }), onPath);
assert.strictEqual(findServer({ setting: plainFile, env: { PATH } }), null, 'a setting that is no executable');
assert.strictEqual(findServer({ interpreter: interp, env: { VIRTUAL_ENV: path.dirname(path.dirname(inVenv)), PATH } }),
  nextToInterp);
assert.strictEqual(findServer({ env: { VIRTUAL_ENV: path.dirname(path.dirname(inVenv)), PATH } }), inVenv);
assert.strictEqual(findServer({ env: { CONDA_PREFIX: path.dirname(path.dirname(inConda)), PATH } }), inConda);
assert.strictEqual(findServer({ env: { PATH }, folders: [project] }), inDotVenv);
assert.strictEqual(findServer({ env: { PATH }, folders: [work] }), onPath);
assert.strictEqual(findServer({ env: { PATH: path.join(work, 'empty') } }), null);
// a platform .vsix's own binary: used when the environment has none, never before it
const bundled = exe(path.join(work, 'extension', 'bin', 'oomlint'));
assert.strictEqual(findServer({ env: { PATH: path.join(work, 'empty') }, bundled }), bundled);
assert.strictEqual(findServer({ env: { PATH }, bundled }), onPath, 'PATH before the bundled binary');
assert.strictEqual(findServer({ env: { PATH: path.join(work, 'empty') }, bundled: plainFile }), null);
assert.strictEqual(findServer({ setting: plainFile, env: {}, bundled }), null, 'a bad setting is not papered over');
console.log('ok   server-path: setting, interpreter, VIRTUAL_ENV, CONDA_PREFIX, .venv, PATH, bundled, none');

// ---- extension.js with stand-ins for vscode and the language client
const config = {
  enable: true, path: onPath, args: ['--isolated'], select: [], extendSelect: ['OOM401'], ignore: ['OOM5'],
  unsafeFixes: true, failOn: 'warning',
};
const started = [];
const stopped = [];
const commands = {};
let configListener = null;
const errors = [];
const vscode = {
  workspace: {
    workspaceFolders: [{ uri: { fsPath: project } }],
    getConfiguration: (section) => {
      assert.strictEqual(section, 'oomlint');
      return { get: (key, dflt) => (key in config ? config[key] : dflt) };
    },
    onDidChangeConfiguration: (fn) => { configListener = fn; return { dispose() {} }; },
  },
  extensions: { getExtension: () => undefined },
  window: { showErrorMessage: (m) => errors.push(m) },
  commands: { registerCommand: (name, fn) => { commands[name] = fn; return { dispose() {} }; } },
};
class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions });
  }
  async start() { started.push(this); }
  async stop() { stopped.push(this); }
}
const realLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  if (request === 'vscode') return vscode;
  if (request === 'vscode-languageclient/node') return { LanguageClient };
  return realLoad.call(this, request, parent, isMain);
};
const ext = require(path.join(extDir, 'extension.js'));

(async () => {
  const context = { subscriptions: [] };
  await ext.activate(context);
  assert.strictEqual(started.length, 1);
  const c = started[0];
  assert.strictEqual(c.serverOptions.command, onPath);
  assert.deepStrictEqual(c.serverOptions.args, ['server', '--isolated']);
  assert.deepStrictEqual(c.clientOptions.documentSelector, [{ language: 'python' }]);
  assert.strictEqual(c.clientOptions.synchronize.configurationSection, 'oomlint');
  assert.deepStrictEqual(c.clientOptions.initializationOptions, {
    select: [], extendSelect: ['OOM401'], ignore: ['OOM5'], unsafeFixes: true, failOn: 'warning' });
  assert.ok(commands['oomlint.restart']);
  console.log('ok   activate: starts `oomlint server` with the args and settings');

  // a change to oomlint.ignore goes to the running server; oomlint.path restarts it
  await configListener({ affectsConfiguration: (k) => k === 'oomlint.ignore' });
  assert.strictEqual(started.length, 1);
  config.path = '';
  process.env.PATH = PATH;
  await configListener({ affectsConfiguration: (k) => k === 'oomlint.path' });
  assert.strictEqual(stopped.length, 1);
  assert.strictEqual(started.length, 2);
  assert.strictEqual(started[1].serverOptions.command, inDotVenv);
  // disabled: stops and starts nothing; no binary: an error message
  config.enable = false;
  await configListener({ affectsConfiguration: (k) => k === 'oomlint.enable' });
  assert.strictEqual(started.length, 2);
  config.enable = true;
  config.path = plainFile;
  await commands['oomlint.restart']();
  assert.strictEqual(started.length, 2);
  assert.ok(errors.length === 1 && errors[0].includes('oomlint.path'), errors);
  await ext.deactivate();
  console.log('ok   settings changes restart or reconfigure; a missing binary is reported');
})().catch((e) => {
  console.error(`FAIL ${e.stack || e}`);
  process.exit(1);
});
