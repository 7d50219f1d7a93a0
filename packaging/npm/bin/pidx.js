#!/usr/bin/env node
// The `pidx` command of the npm package: it starts the prebuilt binary of the platform package
// npm installed beside it (one of this package's optionalDependencies; npm installs only the
// one whose `os`, `cpu` and `libc` fit). Nothing is downloaded at install or run time.
"use strict";
const { spawn } = require("node:child_process");
const { dirname } = require("node:path");
const { constants } = require("node:os");
const { platformPackage, binaryIn } = require("./platform.js");

function fail(message) {
  process.stderr.write(`pidx: ${message}\n`);
  process.exit(2);
}

const chosen = platformPackage();
if (chosen.error) fail(chosen.error);
let dir;
try {
  dir = dirname(require.resolve(`${chosen.name}/package.json`));
} catch {
  fail(
    `the platform package ${chosen.name} for ${chosen.key} is not installed (npm skips optional ` +
      `dependencies with --omit=optional or --no-optional; install pidx again without it)`,
  );
}
const bin = binaryIn(dir);
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
// A signal sent to this launcher alone (kill PID, a service manager, a timeout) goes on to the
// binary, which would otherwise run on orphaned; a terminal's Ctrl-C reaches both anyway.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => child.kill(signal);
for (const s of forwarded) process.on(s, forward);
child.on("error", (e) => fail(`cannot start ${bin}: ${e.message}`));
child.on("exit", (code, signal) => {
  for (const s of forwarded) process.off(s, forward);
  if (signal) {
    // Die of the same signal, so a shell sees what the binary saw (Ctrl-C, a closed pipe).
    process.kill(process.pid, signal);
    // Node ignores some signals (SIGPIPE); then exit as a shell reports a signal's death.
    process.exit(128 + (constants.signals[signal] ?? 0));
  }
  process.exit(code ?? 2);
});
