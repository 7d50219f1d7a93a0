#!/usr/bin/env node
// oc-answers.mjs STATEDIR OUT.json
//
// OpenClaw's own answers on a state folder (make-store.mjs), each from the OpenClaw function
// that is the oracle for it:
//   - keys: listSessionEntriesReadOnly({agentId, storePath, projection: "list"}), what
//     `openclaw sessions` lists: each key with its current sessionId and its entry's subject,
//     displayName, chatType and channel, and `shown`: the name the gateway's session list
//     gives it (resolveGatewaySessionDisplayName(key, entry)). A deleted key (tombstoned) is
//     not among them.
//   - context of every session window of a listed key, as OpenClaw builds it:
//     scanSessionTranscriptTree -> selectSessionTranscriptTreePathNodes(tree, tree.leafId) ->
//     normalizeSessionContextEntryBoundaries -> buildSessionContext (agent-core session.ts),
//     the same chain its withTranscriptContextSnapshot runs on the store; for a hot window the
//     messages are also read through readSessionTranscriptContextMessages (its store reader)
//     and must agree.
//   - messages: the user and assistant messages of each window, and over the windows of listed
//     keys each message once (copies that branch switches and rewinds make keep their entries'
//     ids and timestamps; pidx's `stats` counts a copied entry once), for `stats` totals.
// OUT.json: {openclaw, schemaVersions: {agent}, keys: {agent: [{key, sessionId, ...}]},
//            sessions: {sessionId: {agent, key, listed, context, user, assistant}},
//            totals: {sessions, user, assistant}}.
// The state folder is only read (OpenClaw's read-only views); HOME stays inside its parent.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { zstdDecompressSync } from "node:zlib";
import { accessor, agentDb, locateOpenClaw, ocFn, openClawVersion } from "./lib/openclaw.mjs";

const [stateArg, outArg] = process.argv.slice(2);
if (!stateArg || !outArg) {
  console.error("usage: oc-answers.mjs STATEDIR OUT.json");
  process.exit(2);
}
const STATE = resolve(stateArg);
process.env.HOME = join(dirname(STATE), "home");
process.env.OPENCLAW_STATE_DIR = STATE;

const acc = await accessor();
const withReadOnly = await ocFn("withOpenClawAgentDatabaseReadOnly", "openclaw-agent-db-readonly-");
const readCold = await ocFn("readSessionColdTranscript", "session-cold-storage-state-");
const readArchive = await ocFn("readVerifiedSessionColdArchive", "session-cold-storage-codec-");
const scanTree = await ocFn("scanSessionTranscriptTree", "transcript-tree-");
const selectPath = await ocFn("selectSessionTranscriptTreePathNodes", "transcript-tree-");
const normalizeBoundaries = await ocFn("normalizeSessionContextEntryBoundaries", "session-entry-navigation-");
const readContextMessages = await ocFn("readSessionTranscriptContextMessages", "session-accessor.sqlite-model-context-");
const buildSessionContext = await agentCoreBuildSessionContext();
const shownName = await ocFn("resolveGatewaySessionDisplayName", "session-utils-display-");

/** agent-core's buildSessionContext(pathEntries) (dist/ has another one, pi's codec's). */
async function agentCoreBuildSessionContext() {
  const dist = join(locateOpenClaw(), "dist");
  for (const f of readdirSync(dist).sort()) {
    if (!f.endsWith(".mjs")) continue;
    const src = readFileSync(join(dist, f), "utf8");
    if (!src.includes("//#region packages/agent-core/src/harness/session/session.ts")) continue;
    const m = src.match(/export \{[^}]*\bbuildSessionContext as (\w+)/);
    if (m) return (await import(pathToFileURL(join(dist, f)).href))[m[1]];
  }
  throw new Error("openclaw's agent-core buildSessionContext was not found in dist/");
}

/** A hot transcript through OpenClaw's reader; a cold one from its verified archive. */
async function readEvents(agentId, sessionKey, sessionId) {
  try {
    return { events: acc.loadTranscriptEventsSync({ agentId, sessionKey, sessionId }), cold: false };
  } catch (e) {
    if (e?.code !== "TRANSCRIPT_COLD") throw e;
  }
  const storePath = agentDb(STATE, agentId);
  const archive = withReadOnly((db) => readCold(db.db, sessionId), { agentId, path: storePath }).value;
  const bytes = await readArchive({ archive, storePath });
  const records = zstdDecompressSync(bytes).toString("utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  const events = records.filter((r) => r.kind === "event").sort((a, b) => a.row.seq - b.row.seq).map((r) => JSON.parse(r.row.event_json));
  return { events, cold: true };
}

function openClawContext(events) {
  const tree = scanTree(events);
  const path = selectPath(tree, tree.leafId).map(({ entry, parentId }) => ({ ...entry, parentId }));
  return buildSessionContext(normalizeBoundaries(path, tree.nodes));
}

const plain = (v) => JSON.parse(JSON.stringify(v));
const out = { openclaw: openClawVersion(), schemaVersions: {}, keys: {}, sessions: {}, totals: { sessions: 0, user: 0, assistant: 0 } };
const listedTranscripts = [];
for (const agent of readdirSync(join(STATE, "agents")).sort()) {
  const storePath = agentDb(STATE, agent);
  if (!existsSync(storePath)) continue;
  const meta = withReadOnly((db) => db.db.prepare("SELECT schema_version FROM schema_meta WHERE meta_key = 'primary'").get(), { agentId: agent, path: storePath }).value;
  out.schemaVersions[agent] = meta.schema_version;
  const listed = acc.listSessionEntriesReadOnly({ agentId: agent, storePath, projection: "list" });
  out.keys[agent] = listed.map(({ sessionKey, entry }) => ({
    key: sessionKey,
    sessionId: entry.sessionId,
    subject: entry.subject ?? null,
    displayName: entry.displayName ?? null,
    // the name OpenClaw's gateway lists the key by (its session list rows' displayName)
    shown: shownName(sessionKey, entry) ?? null,
    chatType: entry.chatType ?? null,
    channel: entry.channel ?? null,
  }));
  const live = new Set(listed.map(({ sessionKey }) => sessionKey));
  const windows = withReadOnly((db) => db.db.prepare("SELECT session_id, session_key FROM session_windows ORDER BY session_id").all(), { agentId: agent, path: storePath }).value ?? [];
  for (const { session_id: sessionId, session_key: key } of windows) {
    const row = { agent, key, listed: live.has(key) };
    if (row.listed) {
      const { events, cold } = await readEvents(agent, key, sessionId);
      row.context = plain(openClawContext(events));
      if (!cold) {
        const messages = readContextMessages({ agentId: agent, sessionKey: key, sessionId }, (m) => plain(Array.from(m)));
        if (JSON.stringify(messages) !== JSON.stringify(row.context.messages)) {
          throw new Error(`${sessionId}: OpenClaw's store reader and its context chain disagree`);
        }
      }
      const messages = events.filter((e) => e.type === "message");
      row.user = messages.filter((e) => e.message?.role === "user").length;
      row.assistant = messages.filter((e) => e.message?.role === "assistant").length;
      listedTranscripts.push({ created: Date.parse(events[0]?.timestamp ?? ""), sessionId, entries: events.filter((e) => e.type !== "session") });
    }
    out.sessions[sessionId] = row;
  }
}
// Each copied entry once, in its earliest session (by header time): a session counts when it
// holds an entry no earlier session has.
const counted = new Set();
listedTranscripts.sort((a, b) => (a.created - b.created) || (a.sessionId < b.sessionId ? -1 : 1));
for (const { entries } of listedTranscripts) {
  let fresh = false;
  for (const e of entries) {
    const once = JSON.stringify([e.id, e.timestamp]);
    if (counted.has(once)) continue;
    counted.add(once);
    fresh = true;
    const role = e.type === "message" ? e.message?.role : undefined;
    if (role === "user" || role === "assistant") out.totals[role] += 1;
  }
  out.totals.sessions += Number(fresh);
}
writeFileSync(resolve(outArg), JSON.stringify(out) + "\n");
const n = Object.values(out.sessions);
console.error(`oc-answers: ${n.length} session windows (${n.filter((s) => s.listed).length} of listed keys), openclaw ${out.openclaw}, agent schema ${[...new Set(Object.values(out.schemaVersions))].join(",")}`);
process.exit(0);
