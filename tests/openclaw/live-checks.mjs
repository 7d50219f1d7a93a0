#!/usr/bin/env node
// live-checks.mjs WORKDIR PIDX_BIN
//
// pidx against a gateway whose stores OpenClaw's own code keeps changing (WORKDIR/state from
// make-store.mjs, pi's answers in WORKDIR/pi-answers.json, OpenClaw's own in
// WORKDIR/oc-answers.json: oc-answers.mjs names the OpenClaw function behind each). Each change
// is made by mutate.mjs in its own process (OpenClaw closes the store when it exits):
//   1. sync, list (the sessions of the keys OpenClaw lists, pi's listing row for each), context
//      for every session (= OpenClaw's), search, stats, show, status: the gateway's files
//      byte-identical after each command, no -wal/-shm left that were not there;
//   2. an append picked up by `sync`;
//   3. under `pidx watch`: an append, a rewrite (OpenClaw's replaceTranscriptEvents), a
//      deletion and a deletion that tombstones the key, each seen without a sync;
//   4. OpenClaw appending for 5 s while `pidx sync` runs over and over: every append succeeds
//      (the slowest append is printed, with and without pidx running, not judged: it is the
//      machine's load, OpenClaw's appends never wait on a pidx reader);
//   5. pi's and OpenClaw's answers recorded again on the changed store: every context equal to
//      OpenClaw's, the deleted sessions gone.
// Exits 1 with the first difference.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const [workArg, pidxBin] = process.argv.slice(2);
const WORK = resolve(workArg);
const STATE = join(WORK, "state");
const DB = join(WORK, "index", "index.db");
const env = { ...process.env, NO_COLOR: "1", HOME: join(WORK, "home") };
delete env.PI_CODING_AGENT_DIR;
delete env.PI_CODING_AGENT_SESSION_DIR;

let failures = 0;
const check = (ok, what, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok || !detail ? "" : `\n     ${detail}`}`);
  if (!ok) failures++;
};

/** Every file under agents/ with its bytes (the gateway's side pidx must not touch). */
function snapshot(dir = join(STATE, "agents"), out = new Map()) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) snapshot(p, out);
    else out.set(p, readFileSync(p).toString("base64"));
  }
  return out;
}
const sameFiles = (a, b) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

function pidx(args, { untouched = true } = {}) {
  const before = untouched ? snapshot() : null;
  const r = spawnSync(pidxBin, ["--db", DB, "--root", STATE, ...args], { env, encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`pidx ${args.join(" ")}: exit ${r.status}: ${r.stderr}`);
  if (untouched) check(sameFiles(before, snapshot()), `gateway files unchanged by pidx ${args.join(" ")}`);
  return r.stdout;
}
const pidxJson = (args, opts) => JSON.parse(pidx([...args, "--json"], opts) || "null");

function mutate(...args) {
  const r = spawnSync(process.execPath, ["--no-warnings", join(here, "mutate.mjs"), STATE, ...args], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mutate ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

async function waitFor(what, cond, ms = 20_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (cond()) return check(true, what);
    await new Promise((r) => setTimeout(r, 200));
  }
  check(false, what, `not within ${ms} ms`);
}

const found = (word) => pidx(["--no-sync", "search", word, "--json"], { untouched: false }).includes(word);
const listed = (extra = []) => new Map(pidxJson(["list", "--all", ...extra], { untouched: false }).map((r) => [r.id, r]));

function compareWithAnswers(piPath, ocPath, label) {
  const answers = JSON.parse(readFileSync(piPath, "utf8"));
  const oc = JSON.parse(readFileSync(ocPath, "utf8"));
  const live = Object.entries(oc.sessions).filter(([, s]) => s.listed);
  const rows = listed(["--no-sync"]);
  check(rows.size === live.length, `${label}: ${rows.size} sessions listed, OpenClaw lists keys of ${live.length}`);
  for (const [id, ours] of live) {
    const pi = answers.sessions[id];
    const row = rows.get(id);
    check(row?.gateway?.sessionKey === ours.key && row?.gateway?.agentId === ours.agent, `${label}: ${id} listed with key ${ours.key}`);
    const fields = ["id", "cwd", "name", "created", "modified", "messageCount", "firstMessage"];
    check(row && fields.every((f) => isDeepStrictEqual(row[f], pi.info[f])), `${label}: ${id} listing row = pi's`, JSON.stringify([row, pi.info]).slice(0, 400));
    const ctx = pidxJson(["--no-sync", "context", id], { untouched: false });
    check(isDeepStrictEqual(ctx, ours.context), `${label}: ${id} context = OpenClaw's (buildSessionContext on its tree's path)`, JSON.stringify([ctx.messages.length, ours.context.messages.length]));
  }
  const current = [...rows.values()].filter((r) => r.gateway?.current).map((r) => [r.gateway.sessionKey, r.id, r.gateway.subject ?? null]).sort();
  const keys = Object.values(oc.keys).flat().map((k) => [k.key, k.sessionId, k.subject]).sort();
  check(isDeepStrictEqual(current, keys), `${label}: current keys, sessions and subjects = listSessionEntriesReadOnly's`, JSON.stringify([current, keys]).slice(0, 600));
  const stats = pidxJson(["--no-sync", "stats"], { untouched: false })[0] ?? {};
  check(stats.sessions === oc.totals.sessions && stats.userMessages === oc.totals.user && stats.assistantMessages === oc.totals.assistant,
    `${label}: stats totals = OpenClaw's transcripts of listed keys (${oc.totals.sessions} sessions, ${oc.totals.user} user, ${oc.totals.assistant} assistant messages)`, JSON.stringify(stats));
}

// 1. every command, with the gateway's files checked around each
const walBefore = readdirSync(join(STATE, "agents", "main", "agent"));
pidx(["sync"]);
compareWithAnswers(join(WORK, "pi-answers.json"), join(WORK, "oc-answers.json"), "fresh store");
check(!found("zeppelin") && pidx(["--no-sync", "search", "zeppelin", "--include-deleted", "--json"], { untouched: false }).includes("zeppelin"),
  "a key OpenClaw deleted (tombstoned, rows kept) is found only with --include-deleted");
const anyId = [...listed()][0][0];
for (const args of [["search", "nightly"], ["stats", "--by", "agent"], ["show", anyId], ["tree", anyId], ["status"], ["list", "--channel", "telegram"]]) pidx(args);
check(isDeepStrictEqual(readdirSync(join(STATE, "agents", "main", "agent")), walBefore), "no -wal/-shm left beside the store");

// 2. an append picked up by sync
mutate("append", "main", "agent:main:telegram:group:-1001234", "marmalade for the dinner");
pidx(["sync"]);
check(found("marmalade"), "an append by OpenClaw is found after `pidx sync`");

// 3. under watch: append, rewrite, deletion
const watch = spawn(pidxBin, ["--db", DB, "--root", STATE, "watch"], { env, stdio: ["ignore", "ignore", "pipe"] });
let watchErr = "";
watch.stderr.on("data", (d) => (watchErr += d));
await waitFor("watch started", () => /watch|synced|files/i.test(watchErr), 30_000);
mutate("append", "ops", "agent:ops:main", "pangolin deploy finished");
await waitFor("an append by OpenClaw is seen under watch", () => found("pangolin"));
const group = mutate("rewrite", "main", "agent:main:telegram:group:-1001234", "6");
await waitFor("a rewrite by OpenClaw is seen under watch", () => !found("marmalade") && (listed(["--no-sync"]).get(group.sessionId)?.messageCount ?? -1) < 10);
const gone = mutate("delete", "main", "agent:main:main");
await waitFor("a deletion by OpenClaw is seen under watch", () => !listed(["--no-sync"]).has(gone.sessionId));
const tomb = mutate("tombstone", "support", "agent:support:whatsapp:group:1203@g.us");
await waitFor("a deletion that tombstones the key is seen under watch", () => !listed(["--no-sync"]).has(tomb.sessionId) && !found("oat"));
watch.kill("SIGTERM");
await new Promise((r) => watch.on("exit", r));

// 4. OpenClaw writing while pidx syncs over and over (first alone, for the latencies it has
// without pidx on this machine)
const alone = mutate("write-loop", "ops", "agent:ops:main", "3000");
console.log(`     without pidx: ${alone.appends} appends in 3 s, slowest ${alone.maxMs} ms`);
const loop = spawn(process.execPath, ["--no-warnings", join(here, "mutate.mjs"), STATE, "write-loop", "ops", "agent:ops:main", "5000"], { env, stdio: ["ignore", "pipe", "pipe"] });
let loopOut = "";
let loopErr = "";
loop.stdout.on("data", (d) => (loopOut += d));
loop.stderr.on("data", (d) => (loopErr += d));
const loopDone = new Promise((r) => loop.on("exit", r));
let syncs = 0;
const t0 = Date.now();
while (Date.now() - t0 < 4500) {
  pidx(["sync"], { untouched: false });
  syncs++;
}
const code = await loopDone;
const stats = code === 0 ? JSON.parse(loopOut.trim().split("\n").pop()) : null;
check(code === 0 && stats.appends > 0, `OpenClaw's appends all succeeded during ${syncs} pidx syncs`, loopErr.split("\n").filter((l) => !/slow|Experimental/.test(l)).join(" ").slice(0, 400));
if (stats) console.log(`     with pidx syncing: ${stats.appends} appends in 5 s, slowest ${stats.maxMs} ms`);

// 5. pi's and OpenClaw's answers again, on the changed store
for (const script of ["pi-answers", "oc-answers"]) {
  const again = spawnSync(process.execPath, ["--no-warnings", join(here, `${script}.mjs`), STATE, join(WORK, `${script}-after.json`)], { env: { ...env, HOME: process.env.HOME }, encoding: "utf8" });
  if (again.status !== 0) throw new Error(`${script} after the changes: ${again.stderr}`);
}
pidx(["sync"]);
compareWithAnswers(join(WORK, "pi-answers-after.json"), join(WORK, "oc-answers-after.json"), "changed store");
check(statSync(join(STATE, "agents", "main", "agent", "openclaw-agent.sqlite")).isFile(), "the store is still there");

console.log(failures ? `${failures} live check(s) failed` : "all live checks passed");
process.exit(failures ? 1 : 0);
