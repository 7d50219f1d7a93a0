#!/usr/bin/env node
// pi-context.mjs FILE LEAF_ID [--runs N] [--warmup W]
//
// Times what pi does to show the context at one leaf of a session: `SessionManager.open(FILE)`
// (parses the whole file) and `buildSessionContext(entries, LEAF_ID, byId)`. Prints
//   {"runs_ms":[...], "median_ms":..., "messages":N, "peak_rss_mb":..., ...}
// FILE should be a copy: pi's open() rewrites files of older format versions in place.
import { performance } from "node:perf_hooks";
import { importPi } from "../tests/conformance/lib/oracle.mjs";

const argv = process.argv.slice(2);
const pos = [];
let runs = 3;
let warmup = 0;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--runs") runs = Number.parseInt(argv[++i], 10);
  else if (argv[i] === "--warmup") warmup = Number.parseInt(argv[++i], 10);
  else pos.push(argv[i]);
}
if (pos.length !== 2 || !(runs > 0) || !(warmup >= 0)) {
  console.error("usage: pi-context.mjs FILE LEAF_ID [--runs N] [--warmup W]");
  process.exit(2);
}
const [file, leaf] = pos;
const pi = await importPi();
const { SessionManager, buildSessionContext } = pi;

function once() {
  const sm = SessionManager.open(file);
  return buildSessionContext(sm.getEntries(), leaf, sm.byId).messages.length;
}
let messages = 0;
for (let i = 0; i < warmup; i++) messages = once();
const runs_ms = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  messages = once();
  runs_ms.push(Math.round((performance.now() - t0) * 1000) / 1000);
}
const sorted = [...runs_ms].sort((a, b) => a - b);
const mid = sorted.length >> 1;
const median_ms = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
const peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(JSON.stringify({ runs_ms, median_ms, messages, peak_rss_mb, pi: pi.piVersion, node: process.version }));
