#!/usr/bin/env node
// pi-answers.mjs STATEDIR OUT.json
//
// pi's own answers for every transcript of an OpenClaw state folder made by make-store.mjs:
// OpenClaw's accessor reads each session's entries (decompressing and reading cold archives
// the way OpenClaw does), they are written to a scratch <sessionId>.jsonl, and pi's
// SessionManager (PIDX_PI_SM) answers on that file: the listing row (SessionManager.list), the
// context at the current leaf (buildSessionContext) and the tree (getTree).
// OUT.json: {openclaw, pi, sessions: {sessionId: {agent, key, entries, info, context, tree}}},
// one per session window of every agent store.
// The state folder is only read (the accessor's read-only views); HOME stays inside its parent.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { zstdDecompressSync } from "node:zlib";
import { accessor, agentDb, ocFn, openClawVersion } from "./lib/openclaw.mjs";

const [stateArg, outArg] = process.argv.slice(2);
if (!stateArg || !outArg) {
  console.error("usage: pi-answers.mjs STATEDIR OUT.json");
  process.exit(2);
}
const STATE = resolve(stateArg);
process.env.HOME = join(dirname(STATE), "home");
process.env.OPENCLAW_STATE_DIR = STATE;
const WORK = mkdtempSync(join(tmpdir(), "pidx-oc-answers-"));
process.env.PI_CODING_AGENT_DIR = join(WORK, "pi-agent");

const { SessionManager } = await import(pathToFileURL(process.env.PIDX_PI_SM ?? "").href);
const piVersion = JSON.parse(readFileSync(join(dirname(process.env.PIDX_PI_SM), "../../package.json"), "utf8")).version;
const acc = await accessor();

const withReadOnly = await ocFn("withOpenClawAgentDatabaseReadOnly", "openclaw-agent-db-readonly-");
const readCold = await ocFn("readSessionColdTranscript", "session-cold-storage-state-");
const readArchive = await ocFn("readVerifiedSessionColdArchive", "session-cold-storage-codec-");

/** A hot transcript through OpenClaw's reader; a cold one from its verified archive (OpenClaw
 * refuses to read a cold transcript without restoring it, which would write). */
async function readEvents(agentId, sessionKey, sessionId) {
  try {
    return acc.loadTranscriptEventsSync({ agentId, sessionKey, sessionId });
  } catch (e) {
    if (e?.code !== "TRANSCRIPT_COLD") throw e;
  }
  const storePath = agentDb(STATE, agentId);
  const archive = withReadOnly((db) => readCold(db.db, sessionId), { agentId, path: storePath }).value;
  const bytes = await readArchive({ archive, storePath });
  const records = zstdDecompressSync(bytes).toString("utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  return records.filter((r) => r.kind === "event").sort((a, b) => a.row.seq - b.row.seq).map((r) => JSON.parse(r.row.event_json));
}

const out = { openclaw: openClawVersion(), pi: piVersion, sessions: {} };
/** Every session window of every agent store, through OpenClaw's read-only open. */
function windows() {
  const out = [];
  for (const agent of readdirSync(join(STATE, "agents")).sort()) {
    const path = agentDb(STATE, agent);
    if (!existsSync(path)) continue;
    const rows = withReadOnly((db) => db.db.prepare("SELECT session_id, session_key FROM session_windows ORDER BY session_id").all(), { agentId: agent, path });
    for (const r of rows.value ?? []) out.push([r.session_id, { agent, key: r.session_key }]);
  }
  return out;
}

/** pi's tree as plain data, or null for a tree deeper than JSON tools nest: the live check's
 * write-load phase appends a chain of thousands of entries, which overflows JSON.stringify's
 * recursion (and serde_json's nesting limit). Only the committed fixture's trees are compared. */
function plainTree(roots) {
  const MAX_DEPTH = 500;
  const stack = roots.map((n) => [n, 1]);
  while (stack.length) {
    const [node, depth] = stack.pop();
    if (depth > MAX_DEPTH) return null;
    for (const child of node.children ?? []) stack.push([child, depth + 1]);
  }
  return JSON.parse(JSON.stringify(roots));
}

for (const [sessionId, { agent, key }] of windows()) {
  const events = await readEvents(agent, key, sessionId);
  if (!Array.isArray(events) || events.length === 0) throw new Error(`openclaw read no events for ${sessionId}`);
  const dir = join(WORK, sessionId);
  mkdirSync(dir);
  const file = join(dir, `${sessionId}.jsonl`);
  writeFileSync(file, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  const [info] = await SessionManager.listAll(dir);
  if (!info) throw new Error(`pi lists nothing for ${sessionId}`);
  const sm = SessionManager.open(file, dir);
  const { path: _path, ...row } = JSON.parse(JSON.stringify(info));
  out.sessions[sessionId] = {
    agent,
    key,
    entries: events.length,
    info: row,
    leafId: sm.getLeafId(),
    context: sm.buildSessionContext(),
    tree: plainTree(sm.getTree()),
  };
}
writeFileSync(resolve(outArg), JSON.stringify(out) + "\n");
rmSync(WORK, { recursive: true, force: true });
console.error(`pi-answers: ${Object.keys(out.sessions).length} sessions, openclaw ${out.openclaw}, pi ${out.pi}`);
process.exit(0);
