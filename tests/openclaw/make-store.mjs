#!/usr/bin/env node
// make-store.mjs STATEDIR
//
// Builds an OpenClaw gateway state folder whose SQLite session stores
// (STATEDIR/agents/<agentId>/agent/openclaw-agent.sqlite) are written by OpenClaw's own code:
//   1. pi's SessionManager (the conformance oracle, PIDX_PI_SM) writes legacy gateway
//      transcripts (agents/<id>/sessions/<sessionId>.jsonl + sessions.json): two agents, a
//      branch with a label, a compaction, a session name, a fork (pi's forkFrom), and a long
//      session whose big tool results OpenClaw stores zstd-compressed;
//   2. `openclaw doctor --fix --non-interactive` imports them into SQLite (OpenClaw's importer);
//   3. OpenClaw's own maintenance and session accessor (imported from its dist/): cold storage
//      of every idle transcript; a reset of agent:main:main into a new session window; a reset
//      in place (2026.9.6's reset: same session id, a `reset` entry, the chat goes on after
//      it); a branch switch and a rewind (a copy ending with a `leaf` entry); a key deleted
//      (tombstoned, its rows kept) and a cold session deleted with its transcript archived.
// A third agent (support) holds channel sessions whose entries carry a subject.
// Writes STATEDIR/manifest.json: {openclaw, schema, sessions: {sessionId: {agent, key}}}, every
// session window of every store.
// Needs Node >= 24.16 (OpenClaw refuses older runtimes) with PIDX_OC and PIDX_PI_SM set.
// HOME is pointed inside STATEDIR's parent: nothing outside the given folder is touched.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";
import { accessor, agentDb, locateOpenClaw, ocFn, openClawVersion } from "./lib/openclaw.mjs";

const stateArg = process.argv[2];
if (!stateArg) {
  console.error("usage: make-store.mjs STATEDIR");
  process.exit(2);
}
const STATE = resolve(stateArg);
const HOME = join(dirname(STATE), "home");
mkdirSync(HOME, { recursive: true });
process.env.HOME = HOME;
process.env.OPENCLAW_STATE_DIR = STATE;
process.env.PI_CODING_AGENT_DIR = join(HOME, ".pi-unused");

const pi = await import(pathToFileURL(process.env.PIDX_PI_SM ?? "").href).catch((e) => {
  throw new Error(`pi's session-manager.js not importable (PIDX_PI_SM): ${e.message}`);
});
const { SessionManager } = pi;

const CWD = "/home/bot/workspace";
const MODEL = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };
const usage = (n) => ({
  input: 100 * n, output: 20 * n, cacheRead: 0, cacheWrite: 0, totalTokens: 120 * n,
  cost: { input: 0.0003 * n, output: 0.0003 * n, cacheRead: 0, cacheWrite: 0, total: 0.0006 * n },
});
let clock = Date.UTC(2026, 9, 1, 9, 0, 0);
const now = () => (clock += 7_000);

/** A pi session in one agent's legacy folder, renamed as OpenClaw names them. */
class Conv {
  constructor(agent, sm) {
    this.agent = agent;
    this.sm = sm;
  }
  static start(agent) {
    const dir = join(STATE, "agents", agent, "sessions");
    mkdirSync(dir, { recursive: true });
    const sm = SessionManager.create(CWD, dir);
    sm.appendModelChange(MODEL.provider, MODEL.model);
    sm.appendThinkingLevelChange("medium");
    return new Conv(agent, sm);
  }
  get id() {
    return this.sm.getSessionId();
  }
  user(text) {
    return this.sm.appendMessage({ role: "user", content: text, timestamp: now() });
  }
  assistant(content, stopReason = "stop") {
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
    return this.sm.appendMessage({ role: "assistant", content: blocks, ...MODEL, usage: usage(1), stopReason, timestamp: now() });
  }
  turn(ask, answer) {
    const u = this.user(ask);
    return { userId: u, lastId: this.assistant(answer) };
  }
  tool(name, args, output) {
    const id = `toolu_${Math.random().toString(16).slice(2, 14)}`;
    this.assistant([{ type: "toolCall", id, name, arguments: args }], "toolUse");
    return this.sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: output }], isError: false, timestamp: now() });
  }
  /** OpenClaw's legacy layout names a transcript `<sessionId>.jsonl`. */
  finish() {
    const file = this.sm.getSessionFile();
    const target = join(dirname(file), `${this.id}.jsonl`);
    renameSync(file, target);
    return target;
  }
}

const logLine = (i) => `2026-10-01T09:${String(i % 60).padStart(2, "0")}:00Z build step ${i}: compiling crate module_${i % 17} (release, lto=thin) ok\n`;
const bigLog = (n) => Array.from({ length: n }, (_, i) => logLine(i)).join("");

// --- 1. legacy transcripts written by pi -------------------------------------------------
const store = { main: {}, ops: {}, support: {} };
const sessions = {};
const remember = (c, key) => {
  sessions[c.id] = { agent: c.agent, key };
};

// main: the direct chat, with a branch and a label (its current transcript after the import)
const m1 = Conv.start("main");
const t1 = m1.turn("what is the weather like in Lisbon?", "Sunny, 24°C.");
m1.turn("and tomorrow?", "Clouds in the afternoon.");
m1.sm.branch(t1.lastId);
const alt = m1.turn("actually, Porto?", "Rain in Porto.");
m1.sm.appendLabelChange(alt.userId, "porto");
m1.finish();
store.main["agent:main:main"] = { sessionId: m1.id, updatedAt: clock, chatType: "direct" };
remember(m1, "agent:main:main");

// main: a Telegram group, named, with a compaction
const g1 = Conv.start("main");
const gt1 = g1.turn("family dinner on Sunday?", "I'll set a reminder for Sunday 19:00.");
const gt2 = g1.turn("who brings dessert?", "Ana said she would bring a cake.");
g1.turn("and drinks?", "Rui brings drinks.");
g1.sm.appendCompaction("Dinner planned on Sunday 19:00; Ana brings cake, Rui drinks.", gt2.userId, 5400);
g1.turn("remind me what we agreed", "Sunday 19:00: cake from Ana, drinks from Rui.");
g1.sm.appendSessionInfo("Family group");
g1.finish();
store.main["agent:main:telegram:group:-1001234"] = { sessionId: g1.id, updatedAt: clock, chatType: "group", displayName: "Family group" };
remember(g1, "agent:main:telegram:group:-1001234");

// ops: a long session whose big tool outputs OpenClaw compresses (> 1 KiB, compressible)
const o1 = Conv.start("ops");
for (let i = 0; i < 8; i++) {
  o1.user(`run the nightly build #${i}`);
  o1.tool("bash", { command: `cargo build --release # run ${i}` }, bigLog(14 + i));
  o1.assistant(`Build #${i} finished: ${14 + i} steps, all ok.`);
}
const o1Path = o1.finish();
store.ops["agent:ops:main"] = { sessionId: o1.id, updatedAt: clock, chatType: "direct" };
remember(o1, "agent:ops:main");

// ops: a Slack channel session forked (pi's forkFrom) from the long one
const forkDir = join(STATE, "agents", "ops", "sessions");
const f1 = new Conv("ops", SessionManager.forkFrom(o1Path, CWD, forkDir));
f1.turn("summarise the last build for #ops", "All 8 nightly builds passed.");
f1.finish();
store.ops["agent:ops:slack:channel:c042"] = { sessionId: f1.id, updatedAt: clock, chatType: "channel" };
remember(f1, "agent:ops:slack:channel:c042");

// support: a Discord channel with a branch (switched to by OpenClaw below), a WhatsApp group
// reset in place below, and a Telegram direct chat deleted below; their entries carry the
// channel's title as `subject`, as OpenClaw's channel plugins write it
const d1 = Conv.start("support");
const da = d1.turn("how do I reset my password?", "Use the 'forgot password' link on the login page.");
const db = d1.turn("it says my account is locked", "I unlocked it: try again in a minute.");
d1.sm.branch(da.lastId);
d1.turn("and how do I enable two-factor login?", "Settings, then Security, then Two-factor.");
d1.finish();
store.support["agent:support:discord:channel:987"] = { sessionId: d1.id, updatedAt: clock, chatType: "channel", channel: "discord", subject: "#help-desk", displayName: "Help desk" };
remember(d1, "agent:support:discord:channel:987");

const w1 = Conv.start("support");
for (let i = 0; i < 5; i++) w1.turn(`grocery list item ${i}: what else do we need?`, `Added item ${i} to the list.`);
w1.finish();
store.support["agent:support:whatsapp:group:1203@g.us"] = { sessionId: w1.id, updatedAt: clock, chatType: "group", channel: "whatsapp", subject: "Groceries" };
remember(w1, "agent:support:whatsapp:group:1203@g.us");

const tg = Conv.start("support");
tg.turn("book the zeppelin tour for Friday", "Booked: zeppelin tour, Friday 10:00.");
tg.finish();
store.support["agent:support:telegram:direct:555"] = { sessionId: tg.id, updatedAt: clock, chatType: "direct", channel: "telegram" };
remember(tg, "agent:support:telegram:direct:555");

// support: a cron job's session, left idle (it stays in its cold archive)
const c1 = Conv.start("support");
c1.turn("weekly report: open tickets?", "Seven open tickets, two urgent.");
c1.finish();
store.support["agent:support:cron:weekly-report"] = { sessionId: c1.id, updatedAt: clock };
remember(c1, "agent:support:cron:weekly-report");

// Keys whose name OpenClaw keeps in the entry's `label` (and copies into
// session_windows.display_name), not its `displayName`: a dashboard chat (reset below, so its
// name must reach an earlier window too), a cron job, a Gmail hook and a subagent; a dashboard
// chat without a name (OpenClaw shows none); a group known only by its id (OpenClaw's compact
// name) and an entry named by its gateway's `autoLabel`.
const named = (agent, key, entry, ask, answer) => {
  const c = Conv.start(agent);
  c.turn(ask, answer);
  c.finish();
  store[agent][key] = { sessionId: c.id, updatedAt: clock, ...entry };
  remember(c, key);
  return c;
};
const TRIP = "agent:main:dashboard:7f0c2d9e-1b4a-4c1e-9a57-3d2f8e6b1c40";
named("main", TRIP, { label: "Trip planning" }, "plan a weekend in Porto", "Day 1: Ribeira; day 2: Serralves.");
named("main", "agent:main:dashboard:0b6e1f52-6a3c-4d7e-8f10-2c9a4b5d6e71", {}, "hello from the dashboard", "Hello!");
named("ops", "agent:ops:cron:nightly-backup", { label: "nightly backup" }, "run the nightly backup", "Backup done: 12 GB.");
named("main", "agent:main:hook:gmail:msg-18c2f", { label: "Gmail: Rechnung März" }, "new mail: Rechnung März", "Filed the invoice.");
named("main", "agent:main:subagent:3c1d9a70-52be-4f0e-b6a1-9e8d7c6b5a42", { label: "flight search", spawnedBy: "agent:main:main" }, "find flights to Porto", "Three flights on Friday.");
named("support", "agent:support:telegram:group:-100777", { chatType: "group" }, "anyone there?", "Yes.");
named("support", "agent:support:dashboard:5d4c3b2a-1f0e-4a9b-8c7d-6e5f4a3b2c1d", { autoLabel: "Password help" }, "forgot my password", "Use the reset link.");

for (const [agent, entries] of Object.entries(store)) {
  writeFileSync(join(STATE, "agents", agent, "sessions", "sessions.json"), JSON.stringify(entries, null, 2));
}

// --- 2. OpenClaw's importer writes the SQLite stores ---------------------------------------
const doctor = spawnSync(process.execPath, [join(locateOpenClaw(), "openclaw.mjs"), "doctor", "--fix", "--non-interactive"], {
  env: { ...process.env, NO_COLOR: "1" },
  encoding: "utf8",
  timeout: 300_000,
});
if (doctor.status !== 0 || !["main", "ops", "support"].every((a) => existsSync(agentDb(STATE, a)))) {
  console.error(doctor.stdout, doctor.stderr);
  throw new Error(`openclaw doctor --fix did not write both agent stores (exit ${doctor.status})`);
}

// --- 3. OpenClaw's own maintenance and accessor -------------------------------------------
// Every imported transcript is idle, so cold storage (afterDays 0) moves all four into
// zstd archives under agents/<id>/sessions/cold/. The operations below restore the ones they
// touch (OpenClaw restores a cold transcript before writing to it); the Slack fork stays cold.
const runCold = await ocFn("runSessionColdStorageMaintenance", "session-cold-storage-");
const agentsConfig = { agents: { list: [{ id: "main" }, { id: "ops" }, { id: "support" }] } };
const cold = await runCold({ config: { ...agentsConfig, session: { maintenance: { coldStorage: { enabled: true, afterDays: 0 } } } } });
if (cold.archivedTranscripts < 1) throw new Error(`openclaw cold storage archived nothing: ${JSON.stringify(cold)}`);

const acc = await accessor();
const say = (text) => ({ message: { role: "user", content: text, timestamp: Date.now() } });
const reply = (text) => ({ message: { role: "assistant", content: [{ type: "text", text }], ...MODEL, usage: usage(1), stopReason: "stop", timestamp: Date.now() } });

// a reset of the main chat: OpenClaw appends a `reset` entry to the old transcript and opens
// a new session window for the same key
const before = acc.loadSessionEntry({ agentId: "main", sessionKey: "agent:main:main" });
const m2 = randomUUID();
await acc.persistSessionResetLifecycle({
  agentId: "main", sessionKey: "agent:main:main", storePath: agentDb(STATE, "main"),
  nextEntry: { ...before, sessionId: m2, updatedAt: Date.now() }, workspaceDir: CWD,
});
await acc.appendTranscriptMessages({ agentId: "main", sessionKey: "agent:main:main", sessionId: m2 }, {
  cwd: CWD, messages: [say("fresh start after the reset: what's on today?"), reply("Nothing scheduled today.")],
});

// a reset of the named dashboard chat: its earlier window keeps the key, and so its name
const trip = acc.loadSessionEntry({ agentId: "main", sessionKey: TRIP });
const trip2 = randomUUID();
await acc.persistSessionResetLifecycle({
  agentId: "main", sessionKey: TRIP, storePath: agentDb(STATE, "main"),
  nextEntry: { ...trip, sessionId: trip2, updatedAt: Date.now() }, workspaceDir: CWD,
});
await acc.appendTranscriptMessages({ agentId: "main", sessionKey: TRIP, sessionId: trip2 }, {
  cwd: CWD, messages: [say("and a day trip to Braga?"), reply("Braga: Bom Jesus in the morning.")],
});

// more turns in the group and in the long ops session (both restored from cold storage)
await acc.appendTranscriptMessages({ agentId: "main", sessionKey: "agent:main:telegram:group:-1001234", sessionId: g1.id }, {
  messages: [say("one more thing: bring chairs"), reply("Noted: chairs.")],
});
await acc.appendTranscriptMessages({ agentId: "ops", sessionKey: "agent:ops:main", sessionId: o1.id }, {
  messages: [say("and the build log of today?"), reply(bigLog(24))],
});

// 2026.9.6's reset of a chat (the runner's reset: same session id, a `reset` entry keeping the
// recent tail, the chat continuing after it)
const groceries = "agent:support:whatsapp:group:1203@g.us";
const wBefore = acc.loadSessionEntry({ agentId: "support", sessionKey: groceries });
await acc.persistSessionResetLifecycle({
  agentId: "support", sessionKey: groceries, storePath: agentDb(STATE, "support"),
  nextEntry: { ...wBefore, updatedAt: Date.now() }, workspaceDir: CWD,
});
await acc.appendTranscriptMessages({ agentId: "support", sessionKey: groceries, sessionId: w1.id }, {
  messages: [say("after the reset: add oat milk"), reply("Added oat milk.")],
});

// a branch switch (OpenClaw copies the transcript into a new window ending with a `leaf`
// entry naming the tip to continue from), then a turn on that branch
const help = "agent:support:discord:channel:987";
const switched = await acc.switchSessionBranch({ agentId: "support", sessionKey: help, storePath: agentDb(STATE, "support"), leafEntryId: db.lastId });
if (switched?.status !== "created") throw new Error(`switchSessionBranch: ${JSON.stringify(switched)}`);
const helpNow = acc.loadSessionEntry({ agentId: "support", sessionKey: help });
await acc.appendTranscriptMessages({ agentId: "support", sessionKey: help, sessionId: helpNow.sessionId }, {
  messages: [say("back on the locked account: still locked"), reply("Unlocked it again; wait five minutes.")],
});

// a rewind of the group chat to before its last user message (a new window ending with a
// `leaf` entry naming that message's parent)
const family = "agent:main:telegram:group:-1001234";
const famEvents = acc.loadTranscriptEventsSync({ agentId: "main", sessionKey: family, sessionId: g1.id });
const lastUser = famEvents.findLast((e) => e.type === "message" && e.message?.role === "user");
const rewound = await acc.rewindSessionToMessage({ agentId: "main", sessionKey: family, storePath: agentDb(STATE, "main"), entryId: lastUser.id });
if (rewound?.status !== "created") throw new Error(`rewindSessionToMessage: ${JSON.stringify(rewound)}`);

// deletions: a key deleted as the gateway and the plugin SDK do by default (the key is
// tombstoned, its rows kept), and the cold Slack fork deleted with its transcript archived
const deleteKey = async (agentId, key, archiveTranscript) =>
  await acc.deleteSessionEntryLifecycle({ agentId, storePath: agentDb(STATE, agentId), target: { canonicalKey: key, storeKeys: [key] }, archiveTranscript });
await deleteKey("support", "agent:support:telegram:direct:555", false);
await deleteKey("ops", "agent:ops:slack:channel:c042", true);

// every session window of every store, with its key
const withReadOnly = await ocFn("withOpenClawAgentDatabaseReadOnly", "openclaw-agent-db-readonly-");
const windows = {};
for (const agent of Object.keys(store)) {
  const rows = withReadOnly((db) => db.db.prepare("SELECT session_id, session_key FROM session_windows").all(), { agentId: agent, path: agentDb(STATE, agent) });
  for (const r of rows.value ?? []) windows[r.session_id] = { agent, key: r.session_key };
}
writeFileSync(join(STATE, "manifest.json"), JSON.stringify({ openclaw: openClawVersion(), sessions: windows }, null, 2));
process.exit(0); // OpenClaw keeps worker handles open
