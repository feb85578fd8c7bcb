// server-path.js - where the oomlint binary is, for the extension.
//
// Kept free of the `vscode` module so it can be tested with plain Node
// (tests/lsp/vscode_test.js). The order: the oomlint.path setting; the
// Python environment the user works in (the interpreter the Python extension
// selected, $VIRTUAL_ENV, $CONDA_PREFIX, a .venv or venv in a workspace
// folder), since `pip install` puts oomlint next to its python; then PATH;
// last, the binary bundled in a platform-specific .vsix (bin/oomlint in the
// extension), so that installing the extension alone is enough.
'use strict';

const fs = require('fs');
const path = require('path');

function executable(file) {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch (e) {
    return false;
  }
}

function binName(platform) {
  return platform === 'win32' ? 'oomlint.exe' : 'oomlint';
}

function envDirs(prefix, platform) {
  return platform === 'win32' ? [path.join(prefix, 'Scripts'), prefix] : [path.join(prefix, 'bin')];
}

// Returns the binary to run, or null. options:
//   setting      the oomlint.path setting ('' or undefined when unset)
//   interpreter  the selected Python interpreter's path, if known
//   env          environment variables (process.env)
//   folders      workspace folder paths
//   platform     process.platform
//   bundled      the binary a platform-specific .vsix ships, if any
function findServer(options) {
  const env = options.env || {};
  const platform = options.platform || process.platform;
  const name = binName(platform);
  const setting = (options.setting || '').trim();
  if (setting) {
    const expanded = setting.replace(/^~(?=$|[\\/])/, env.HOME || '');
    return executable(expanded) ? path.resolve(expanded) : null;
  }
  const candidates = [];
  if (options.interpreter) candidates.push(path.join(path.dirname(options.interpreter), name));
  for (const v of ['VIRTUAL_ENV', 'CONDA_PREFIX']) {
    if (env[v]) for (const d of envDirs(env[v], platform)) candidates.push(path.join(d, name));
  }
  for (const folder of options.folders || []) {
    for (const venv of ['.venv', 'venv']) {
      for (const d of envDirs(path.join(folder, venv), platform)) candidates.push(path.join(d, name));
    }
  }
  const sep = platform === 'win32' ? ';' : ':';
  for (const d of (env.PATH || '').split(sep)) {
    if (d) candidates.push(path.join(d, name));
  }
  if (options.bundled) candidates.push(options.bundled);
  for (const c of candidates) {
    if (executable(c)) return c;
  }
  return null;
}

module.exports = { findServer, binName };
