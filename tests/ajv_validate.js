// ajv_validate.js - validates JSON files against one JSON schema with ajv,
// compiling the schema once, for the SARIF tests (tests/sarif_tests.py). The
// schema is read in the draft its "$schema" names: draft-04 (the official
// SARIF 2.1.0 schema) through ajv-draft-04, anything later through ajv.
//
//   NODE_PATH=build/tools/node_modules node tests/ajv_validate.js SCHEMA FILE...
//
// Prints one JSON object mapping each FILE to its list of errors ([] when it
// is valid; a file that is not JSON gets its parse error) and exits 0 when
// every file is valid, 1 otherwise, 2 when the schema cannot be used. String
// formats (uri, uri-reference, date-time) are checked too, with ajv-formats.
"use strict";
const fs = require("fs");
const Ajv = require("ajv");
const AjvDraft04 = require("ajv-draft-04");
const addFormats = require("ajv-formats");

const [schemaPath, ...files] = process.argv.slice(2);
if (!schemaPath || files.length === 0) {
    process.stderr.write("usage: ajv_validate.js SCHEMA FILE...\n");
    process.exit(2);
}

let validate;
try {
    const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
    const draft04 = /draft-04/.test(schema.$schema || "");
    const ajv = draft04 ? new AjvDraft04({ allErrors: true }) : new Ajv({ allErrors: true });
    addFormats(ajv);
    validate = ajv.compile(schema);
} catch (e) {
    process.stderr.write(`ajv_validate.js: cannot use ${schemaPath}: ${e.message}\n`);
    process.exit(2);
}

const report = {};
let bad = 0;
for (const file of files) {
    let doc;
    try {
        // fatal: invalid UTF-8 is an error, not a silent U+FFFD
        const text = new TextDecoder("utf-8", { fatal: true }).decode(fs.readFileSync(file));
        doc = JSON.parse(text);
    } catch (e) {
        report[file] = [`not JSON: ${e.message}`];
        bad++;
        continue;
    }
    if (validate(doc)) {
        report[file] = [];
    } else {
        report[file] = validate.errors.map(
            (e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
        bad++;
    }
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(bad ? 1 : 0);
