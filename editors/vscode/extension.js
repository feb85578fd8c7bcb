// extension.js - the oomlint extension for VS Code: starts `oomlint server`
// and connects it with vscode-languageclient. The server does the work
// (diagnostics for Python files and Jupyter notebooks, quick fixes, fix-all
// as `source.fixAll.oomlint`, hovers with the rule docs); this file finds
// the binary, passes the settings, and restarts the server when the
// settings that start it change.
'use strict';

const path = require('path');
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');
const { findServer, binName } = require('./server-path');

let client = null;

function serverSettings(cfg) {
  return {
    select: cfg.get('select', []),
    extendSelect: cfg.get('extendSelect', []),
    ignore: cfg.get('ignore', []),
    unsafeFixes: cfg.get('unsafeFixes', false),
    failOn: cfg.get('failOn', 'info'),
  };
}

// The interpreter the Python extension selected, when it is installed.
async function selectedInterpreter() {
  try {
    const python = vscode.extensions.getExtension('ms-python.python');
    if (!python) return undefined;
    const api = python.isActive ? python.exports : await python.activate();
    const env = api && api.environments;
    if (!env) return undefined;
    const active = env.getActiveEnvironmentPath();
    const resolved = active && (await env.resolveEnvironment(active));
    return (resolved && resolved.executable && resolved.executable.uri && resolved.executable.uri.fsPath) ||
      (active && active.path);
  } catch (e) {
    return undefined;
  }
}

async function start() {
  const cfg = vscode.workspace.getConfiguration('oomlint');
  if (!cfg.get('enable', true)) return;
  const folders = (vscode.workspace.workspaceFolders || []).map((f) => f.uri.fsPath);
  const command = findServer({
    setting: cfg.get('path', ''),
    interpreter: await selectedInterpreter(),
    env: process.env,
    folders,
    bundled: path.join(__dirname, 'bin', binName(process.platform)),
  });
  if (!command) {
    const setting = cfg.get('path', '');
    vscode.window.showErrorMessage(setting
      ? `oomlint: ${setting} (oomlint.path) is not an executable file.`
      : 'oomlint: no oomlint binary in the Python environment or on PATH; install it or set oomlint.path.');
    return;
  }
  const serverOptions = { command, args: ['server', ...cfg.get('args', [])], options: { cwd: folders[0] } };
  const clientOptions = {
    documentSelector: [{ language: 'python' }],
    synchronize: { configurationSection: 'oomlint' },
    initializationOptions: serverSettings(cfg),
  };
  client = new LanguageClient('oomlint', 'oomlint', serverOptions, clientOptions);
  await client.start();
}

async function stop() {
  if (client) {
    const c = client;
    client = null;
    await c.stop();
  }
}

async function activate(context) {
  context.subscriptions.push(vscode.commands.registerCommand('oomlint.restart', async () => {
    await stop();
    await start();
  }));
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (e) => {
    // the rest reaches the running server as didChangeConfiguration
    if (['oomlint.enable', 'oomlint.path', 'oomlint.args'].some((k) => e.affectsConfiguration(k))) {
      await stop();
      await start();
    }
  }));
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
