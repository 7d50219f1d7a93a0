#!/usr/bin/env node
// mutate.mjs STATEDIR OP ARGS...   (OpenClaw's own accessor changes a store; one process per
// change, so OpenClaw closes the database, and its -wal/-shm, when it exits)
//   append AGENT KEY TEXT        a user message and a reply in KEY's current session
//   rewrite AGENT KEY KEEP       OpenClaw's replaceTranscriptEvents: keep the first KEEP events
//                                (a rewrite: the generation changes)
//   delete AGENT KEY             remove KEY (its current session window and transcript go)
//   tombstone AGENT KEY          delete KEY as the gateway's delete does by default
//                                (deleteSessionEntryLifecycle: the key is tombstoned, its
//                                windows and rows stay)
//   write-loop AGENT KEY MS      append one message at a time for MS milliseconds, keeping the
//                                database open; prints {appends, maxMs} (the longest append)
// Prints one JSON line with what it did (session ids, counts).
import { accessor, agentDb } from "./lib/openclaw.mjs";
import { dirname, join, resolve } from "node:path";

const [stateArg, op, agentId, sessionKey, arg] = process.argv.slice(2);
const STATE = resolve(stateArg ?? "");
process.env.HOME = join(dirname(STATE), "home");
process.env.OPENCLAW_STATE_DIR = STATE;
const acc = await accessor();
const scope = () => {
  const entry = acc.loadSessionEntry({ agentId, sessionKey });
  if (!entry?.sessionId) throw new Error(`no session for ${sessionKey}`);
  return { agentId, sessionKey, sessionId: entry.sessionId };
};
const message = (role, text) => ({
  message: role === "user"
    ? { role, content: text, timestamp: Date.now() }
    : { role, content: [{ type: "text", text }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop", timestamp: Date.now() },
});

let out;
switch (op) {
  case "append": {
    const s = scope();
    await acc.appendTranscriptMessages(s, { messages: [message("user", arg), message("assistant", `ack: ${arg}`)] });
    out = { sessionId: s.sessionId };
    break;
  }
  case "rewrite": {
    const s = scope();
    const events = acc.loadTranscriptEventsSync(s);
    await acc.replaceTranscriptEvents(s, events.slice(0, Number(arg)));
    out = { sessionId: s.sessionId, before: events.length, after: Number(arg) };
    break;
  }
  case "delete": {
    const s = scope();
    const r = await acc.applySessionEntryLifecycleMutation({ agentId, storePath: agentDb(STATE, agentId), removals: [{ sessionKey }] });
    out = { sessionId: s.sessionId, removed: r.removedSessionKeys };
    break;
  }
  case "tombstone": {
    const s = scope();
    const r = await acc.deleteSessionEntryLifecycle({ agentId, storePath: agentDb(STATE, agentId), target: { canonicalKey: sessionKey, storeKeys: [sessionKey] } });
    out = { sessionId: s.sessionId, deleted: r.deleted };
    break;
  }
  case "write-loop": {
    const s = scope();
    const until = Date.now() + Number(arg);
    let appends = 0;
    let maxMs = 0;
    while (Date.now() < until) {
      const t = performance.now();
      await acc.appendTranscriptMessages(s, { messages: [message("user", `loop message ${appends}`)] });
      if (appends > 0) maxMs = Math.max(maxMs, performance.now() - t); // the first one warms up
      appends++;
    }
    out = { sessionId: s.sessionId, appends, maxMs: Math.round(maxMs) };
    break;
  }
  default:
    console.error("usage: mutate.mjs STATEDIR append|rewrite|delete|tombstone|write-loop AGENT KEY ARG");
    process.exit(2);
}
console.log(JSON.stringify(out));
process.exit(0);
