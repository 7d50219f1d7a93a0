#!/usr/bin/env node
// pi-picker.mjs CORPUSDIR OUTFILE
//
// Records the order pi's session picker (/resume) shows for typed queries: listAll() on a copy
// of CORPUSDIR/sessions (mtimes from CORPUSDIR/mtimes.json), then pi's own
// filterAndSortSessions(sessions, query, "threaded", "all") from the installed package (the
// picker's default sort mode) for every query below. Writes
//   {"pi": version, "queries": {query: [relative session path, ...]}}
// The corpus is never modified.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureCollationLocale, importPi, RealDate, relSlash, setMtime } from "./lib/oracle.mjs";

ensureCollationLocale();
const [corpusArg, outArg] = process.argv.slice(2);
if (!corpusArg || !outArg) {
  console.error("usage: pi-picker.mjs CORPUSDIR OUTFILE");
  process.exit(2);
}
const CORPUS = resolve(corpusArg);
const MTIMES = JSON.parse(readFileSync(join(CORPUS, "mtimes.json"), "utf8"));
const WORK = mkdtempSync(join(tmpdir(), "pidx-pi-picker-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));
const agentDir = join(WORK, "agent");
const root = join(agentDir, "sessions");
mkdirSync(agentDir, { recursive: true });
cpSync(join(CORPUS, "sessions"), root, { recursive: true, verbatimSymlinks: true });
for (const [rel, ms] of Object.entries(MTIMES)) setMtime(join(root, rel), ms);
process.env.PI_CODING_AGENT_DIR = agentDir;
delete process.env.PI_CODING_AGENT_SESSION_DIR;

const pi = await importPi();
const searchJs = join(dirname(pi.sessionManagerPath), "../modes/interactive/components/session-selector-search.js");
const { filterAndSortSessions } = await import(pathToFileURL(searchJs).href);
const sessions = await pi.SessionManager.listAll();

// Hand-picked queries for every rule, then words taken from the corpus itself.
const queries = new Set([
  "", "   ", "a", "e", "rs", "api", "API", "cafe", "café", "日本", "проект", "server", "fix", "test",
  "hello world", "\"hello world\"", "\"unbalanced", "say \"hi", "re:", "re:^019c", "re:ser(ver|vice)",
  "re:[", "re:café|日本", "v2", "2v", "abc123", "123abc", "019c", "home user", "/home/user", "-", "_",
  ".", "zzzz-nothing", "tie", "\"fixed the\"", "rename foo", "src/main.rs", "  spaced   out  ",
]);
for (const s of sessions) {
  const words = `${s.name ?? ""} ${s.firstMessage}`.split(/\s+/).filter((w) => w.length > 2);
  for (const w of words.slice(0, 2)) queries.add(w);
  if (s.name) queries.add(`"${s.name}"`);
}
const out = {};
for (const q of [...queries].sort()) {
  out[q] = filterAndSortSessions(sessions, q, "threaded", "all").map((s) => relSlash(root, s.path));
}
writeFileSync(resolve(outArg), JSON.stringify({ pi: pi.piVersion, queries: out }, null, 1) + "\n");
console.error(`pi-picker.mjs: ${Object.keys(out).length} queries over ${sessions.length} sessions -> ${outArg}`);
