#!/usr/bin/env node
// pi-listall-bench.mjs ROOT [--runs N] [--warmup W]
//
// Times pi's own `SessionManager.listAll()` (default layout, no argument) over the sessions
// root ROOT (a folder of `--<encoded cwd>--/` project folders) and prints
//   {"runs_ms":[...], "median_ms":..., "sessions":N, ...}
// If ROOT is named "sessions", PI_CODING_AGENT_DIR is set to its parent; otherwise a temp
// agent dir whose `sessions` is a symlink to ROOT is used. ROOT is only read.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { importPi } from "./lib/oracle.mjs";

const argv = process.argv.slice(2);
let rootArg;
let runs = 5;
let warmup = 1;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--runs") runs = Number.parseInt(argv[++i], 10);
  else if (argv[i] === "--warmup") warmup = Number.parseInt(argv[++i], 10);
  else if (!rootArg) rootArg = argv[i];
  else throw new Error(`unexpected argument ${argv[i]}`);
}
if (!rootArg || !(runs > 0) || !(warmup >= 0)) {
  console.error("usage: pi-listall-bench.mjs ROOT [--runs N] [--warmup W]");
  process.exit(2);
}
const ROOT = resolve(rootArg);
let tmp;
if (basename(ROOT) === "sessions") process.env.PI_CODING_AGENT_DIR = dirname(ROOT);
else {
  tmp = mkdtempSync(join(tmpdir(), "pidx-pi-bench-"));
  symlinkSync(ROOT, join(tmp, "sessions"));
  process.env.PI_CODING_AGENT_DIR = tmp;
}
delete process.env.PI_CODING_AGENT_SESSION_DIR;
process.on("exit", () => tmp && rmSync(tmp, { recursive: true, force: true }));

const pi = await importPi();
const { SessionManager } = pi;
let sessions = 0;
for (let i = 0; i < warmup; i++) sessions = (await SessionManager.listAll()).length;
const runs_ms = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const r = await SessionManager.listAll();
  runs_ms.push(Math.round((performance.now() - t0) * 1000) / 1000);
  sessions = r.length;
}
const sorted = [...runs_ms].sort((a, b) => a - b);
const mid = sorted.length >> 1;
const median_ms = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
console.log(JSON.stringify({ runs_ms, median_ms, sessions, warmup, pi: pi.piVersion, node: process.version }));
