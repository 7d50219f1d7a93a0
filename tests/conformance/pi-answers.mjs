#!/usr/bin/env node
// pi-answers.mjs CORPUSDIR OUTDIR
//
// Records pi's own answers for a corpus made by make-corpus.mjs (CORPUSDIR/sessions +
// CORPUSDIR/mtimes.json) as JSON files in OUTDIR:
//   list_all.json  SessionManager.listAll() (default layout), in pi's order
//   list_cwd.json  {cwd: SessionManager.list(cwd)} for every distinct header cwd
//   sessions.json  {relpath: {leafId, leafIndex, name, header, labels, labelTimestamps,
//                   entryCount, fileChangedByOpen} | {error}} from SessionManager.open
//   context.json   {relpath: {default, leaves: [{index, id, context|cycle|error}]} | {error}}
//   tree.json      {relpath: [node...] | {error} | {cycle: true}} from getTree()
//   meta.json      pi version, node version, counts
// Paths (SessionInfo.path, map keys) are relative to the sessions root, with "/".
// Every pi call runs on a private copy: the corpus is never modified (open() rewrites old
// files, repairs torn lines and initialises empty files; list(cwd) creates folders).
// pi's clock and random ids are seeded (lib/oracle.mjs) so that reruns give identical
// output; v1 files still get ids that differ from any other tool's, so compare them by index.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { ensureCollationLocale, hash32, importPi, installDeterminism, RealDate, relSlash, setMtime } from "./lib/oracle.mjs";

ensureCollationLocale();

const [corpusArg, outArg] = process.argv.slice(2);
if (!corpusArg || !outArg) {
  console.error("usage: pi-answers.mjs CORPUSDIR OUTDIR");
  process.exit(2);
}
const CORPUS = resolve(corpusArg);
const OUT = resolve(outArg);
const SRC = join(CORPUS, "sessions");
if (!existsSync(SRC)) throw new Error(`${SRC} does not exist`);
const MTIMES = JSON.parse(readFileSync(join(CORPUS, "mtimes.json"), "utf8"));

// The entries whose context is recorded: every one, or with PIDX_ORACLE_LEAVES=N at most N
// spread evenly with the last among them. Every entry's context of a long real session (a
// published corpus of chats with images) is quadratic in its length and overflows a string.
const MAX_LEAVES = Number.parseInt(process.env.PIDX_ORACLE_LEAVES ?? "", 10);
function atLeaves(n) {
  const all = [...Array(n).keys()];
  if (!(MAX_LEAVES > 0) || n <= MAX_LEAVES) return all;
  const picked = new Set([n - 1]);
  for (let k = 0; k < MAX_LEAVES - 1; k++) picked.add(Math.floor((k * n) / (MAX_LEAVES - 1)));
  return [...picked].sort((a, b) => a - b);
}

// A fixed clock/seed: only open() of an empty file creates a header (id, timestamp) and
// only v1 migration creates entry ids; both come out the same on every run.
const FIXED_NOW = RealDate.UTC(2030, 0, 1, 0, 0, 0);
const { reseed } = installDeterminism(1, FIXED_NOW);
process.chdir("/"); // open() of an empty file uses process.cwd() as the header cwd
delete process.env.PI_CODING_AGENT_SESSION_DIR;
const pi = await importPi();
const { SessionManager, buildSessionContext } = pi;

const WORK = mkdtempSync(join(tmpdir(), "pidx-pi-answers-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));

/** Fresh copy of the sessions root as <agentDir>/sessions, mtimes reapplied. */
let copies = 0;
function freshAgentDir() {
  const agentDir = join(WORK, `agent-${copies++}`);
  const root = join(agentDir, "sessions");
  mkdirSync(agentDir, { recursive: true });
  cpSync(SRC, root, { recursive: true, verbatimSymlinks: true });
  for (const [rel, ms] of Object.entries(MTIMES)) {
    setMtime(join(root, rel), ms);
  }
  return { agentDir, root };
}

const errMsg = (e) => (e instanceof Error ? e.message : String(e));
const sortKeys = (obj) => Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
function infoJson(root, info) {
  // JSON.stringify semantics (Dates → ISO or null, undefined dropped), path made relative
  const o = JSON.parse(JSON.stringify(info));
  o.path = relSlash(root, info.path);
  return o;
}

// --- listAll --------------------------------------------------------------------------
const A = freshAgentDir();
process.env.PI_CODING_AGENT_DIR = A.agentDir;
const listAll = (await SessionManager.listAll()).map((i) => infoJson(A.root, i));

// --- discovery (the same rules as listAll: direct subdirs or symlinks, *.jsonl) -------------
const discovered = [];
for (const d of readdirSync(A.root, { withFileTypes: true })) {
  if (!d.isDirectory() && !d.isSymbolicLink()) continue;
  let files;
  try {
    files = readdirSync(join(A.root, d.name));
  } catch {
    continue;
  }
  for (const f of files) if (f.endsWith(".jsonl")) discovered.push(`${d.name}/${f}`);
}
discovered.sort();

// --- open every discovered file (a private copy each time) ------------------------------
function openCopy(rel) {
  const dir = join(WORK, "open", String(hash32(rel)));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const p = join(dir, basename(rel));
  cpSync(join(SRC, rel), p, { dereference: true });
  const before = readFileSync(p);
  reseed(hash32(rel));
  let sm;
  try {
    sm = SessionManager.open(p);
  } catch (e) {
    // keep error messages free of the temp path: name the file by its corpus path
    throw new Error(errMsg(e).split(p).join(rel));
  }
  const changed = !before.equals(readFileSync(p));
  return { sm, changed, emptyFile: before.length === 0 };
}

/** Mirrors buildSessionPath's walk (leaf choice + parentId chain); true if it would loop. */
function pathHasCycle(entries, byId, leafId) {
  if (leafId === null) return false;
  let leaf;
  if (leafId) leaf = byId.get(leafId);
  leaf ??= entries[entries.length - 1];
  const seen = new Set();
  let cur = leaf;
  while (cur) {
    if (seen.has(cur)) return true;
    seen.add(cur);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
  }
  return false;
}

/** Mirrors getTree's node graph; true if a cycle is reachable from a root (getTree would hang). */
function treeHasReachableCycle(entries) {
  const node = new Map();
  for (const e of entries) node.set(e.id, { children: [] });
  const roots = [];
  for (const e of entries) {
    const n = node.get(e.id);
    if (e.parentId === null || e.parentId === e.id) roots.push(n);
    else {
      const p = node.get(e.parentId);
      if (p) p.children.push(n);
      else roots.push(n);
    }
  }
  const state = new Map(); // 1 = on stack, 2 = done
  const visit = (n) => {
    if (state.get(n) === 1) return true;
    if (state.get(n) === 2) return false;
    state.set(n, 1);
    for (const c of n.children) if (visit(c)) return true;
    state.set(n, 2);
    return false;
  };
  return roots.some(visit);
}

// Without recursion: a linear session nests one level per entry, and a published one of 6,514
// entries (3,164 deep) overflowed the stack of a recursive projection.
function projectTree(roots, indexOf) {
  const proj = (n) => {
    const o = { index: indexOf.get(n.entry), id: n.entry?.id, parentId: n.entry?.parentId, type: n.entry?.type };
    if (n.label !== undefined) o.label = n.label;
    if (n.labelTimestamp !== undefined) o.labelTimestamp = n.labelTimestamp;
    o.children = [];
    return o;
  };
  const out = roots.map(proj);
  const todo = roots.map((n, i) => [n, out[i]]);
  while (todo.length > 0) {
    const [n, o] = todo.pop();
    for (const c of n.children) {
      const co = proj(c);
      o.children.push(co);
      todo.push([c, co]);
    }
  }
  return out;
}

const cwds = new Set(); // distinct header cwds, for list(cwd)
const sessions = {};
const context = {};
const tree = {};
let nLeaves = 0;
let nCycleLeaves = 0;
let nErrorLeaves = 0;
for (const rel of discovered) {
  let sm;
  let changed;
  let emptyFile;
  try {
    ({ sm, changed, emptyFile } = openCopy(rel));
  } catch (e) {
    sessions[rel] = { error: errMsg(e) };
    context[rel] = { error: errMsg(e) };
    tree[rel] = { error: errMsg(e) };
    continue;
  }
  const entries = sm.getEntries();
  const byId = sm.byId;
  const indexOf = new Map(entries.map((e, i) => [e, i]));

  // sessions.json
  const leafId = sm.getLeafId();
  let leafIndex = null;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]?.id === leafId && leafId !== null) {
      leafIndex = i;
      break;
    }
  }
  const s = { leafId: leafId ?? null, leafIndex };
  try {
    s.name = sm.getSessionName() ?? null;
  } catch (e) {
    s.name = null;
    s.nameError = errMsg(e);
  }
  s.header = sm.getHeader();
  s.labels = Object.fromEntries(sm.labelsById);
  s.labelTimestamps = Object.fromEntries(sm.labelTimestampsById);
  s.entryCount = entries.length;
  s.fileChangedByOpen = changed;
  sessions[rel] = s;
  const hcwd = s.header?.cwd;
  if (!emptyFile && typeof hcwd === "string" && hcwd !== "") cwds.add(hcwd); // not pi's fresh header

  // context.json
  const ctx = (leaf) => {
    if (pathHasCycle(entries, byId, leaf)) return { cycle: true };
    try {
      return { context: buildSessionContext(entries, leaf, byId) };
    } catch (e) {
      return { error: errMsg(e) };
    }
  };
  const def = ctx(leafId);
  const c = { default: def.context ?? (def.cycle ? { cycle: true } : { error: def.error }) };
  c.leaves = atLeaves(entries.length).map((index) => {
    const e = entries[index];
    const r = ctx(e?.id);
    nLeaves++;
    if (r.cycle) nCycleLeaves++;
    if (r.error !== undefined) nErrorLeaves++;
    return { index, id: e?.id ?? null, ...r };
  });
  context[rel] = c;

  // tree.json
  if (treeHasReachableCycle(entries)) tree[rel] = { cycle: true };
  else {
    try {
      tree[rel] = projectTree(sm.getTree(), indexOf);
    } catch (e) {
      tree[rel] = { error: errMsg(e) };
    }
  }
}

// --- list(cwd) on a fresh copy (list creates missing folders) ---------------------------
const B = freshAgentDir();
process.env.PI_CODING_AGENT_DIR = B.agentDir;
for (const i of listAll) if (typeof i.cwd === "string" && i.cwd !== "") cwds.add(i.cwd);
const listCwd = {};
for (const cwd of [...cwds].sort()) {
  listCwd[cwd] = (await SessionManager.list(cwd)).map((i) => infoJson(B.root, i));
}

// JSON.stringify(value, null, 1); past the depth its recursion reaches (a tree 3,164 deep),
// the same JSON without the indentation, made without recursion.
function stringify(value) {
  try {
    return JSON.stringify(value, null, 1);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  const out = [];
  const todo = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === "string" && v.startsWith("\u0000raw:")) {
      out.push(v.slice(5));
    } else if (Array.isArray(v)) {
      const parts = ["\u0000raw:["];
      v.forEach((x, i) => {
        if (i > 0) parts.push("\u0000raw:,");
        parts.push(x === undefined || typeof x === "function" ? null : x);
      });
      parts.push("\u0000raw:]");
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else if (v !== null && typeof v === "object" && typeof v.toJSON !== "function") {
      const parts = ["\u0000raw:{"];
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === "function") continue;
        parts.push(`\u0000raw:${parts.length > 1 ? "," : ""}${JSON.stringify(k)}:`, x);
      }
      parts.push("\u0000raw:}");
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else {
      out.push(JSON.stringify(v) ?? "null");
    }
  }
  return out.join("");
}

// --- write ------------------------------------------------------------------------------
mkdirSync(OUT, { recursive: true });
const write = (name, value) => writeFileSync(join(OUT, name), stringify(value) + "\n");
write("list_all.json", listAll);
write("list_cwd.json", listCwd);
write("sessions.json", sortKeys(sessions));
write("context.json", sortKeys(context));
write("tree.json", sortKeys(tree));
const meta = {
  pi: `${pi.piVersion}`,
  node: process.version,
  collationLocale: new Intl.Collator().resolvedOptions().locale,
  discoveredFiles: discovered.length,
  listAllSessions: listAll.length,
  listCwdKeys: Object.keys(listCwd).length,
  openErrors: Object.values(sessions).filter((s) => s.error !== undefined).length,
  leaves: nLeaves,
  cycleLeaves: nCycleLeaves,
  errorLeaves: nErrorLeaves,
  trees: Object.values(tree).filter((t) => Array.isArray(t)).length,
};
write("meta.json", meta);
console.error(`pi-answers: ${JSON.stringify(meta)}`);
