#!/usr/bin/env node
// make-corpus.mjs OUTDIR [--sessions N] [--seed S] [--sizes small|bench]
//
// Writes a pi sessions root into OUTDIR/sessions/ (folders `--<encoded cwd>--/`):
//   1. pi-written sessions, produced by pi's real SessionManager (create, appendMessage,
//      appendModelChange, appendThinkingLevelChange, appendCompaction, branch,
//      branchWithSummary, resetLeaf, appendLabelChange, appendSessionInfo,
//      appendCustomEntry, appendCustomMessageEntry, appendContextEdit, appendUsage,
//      createBranchedSession, forkFrom), with PI_CODING_AGENT_DIR=OUTDIR;
//   2. hand-written files (edge cases pi tolerates or chokes on), written as bytes;
//   3. discovery cases (root-level file, .JSONL, nested folders, symlinked and dangling
//      project folders);
// then OUTDIR/mtimes.json ({"<path relative to sessions/>": mtime epoch ms}) and sets each
// file's mtime accordingly (git does not keep mtimes; consumers reapply the manifest).
//
// Deterministic: pi's clock and random sources are seeded (lib/oracle.mjs), so the same
// --seed/--sessions/--sizes give byte-identical output. Only pi's inputs are controlled.
// The absolute generation path in `parentSession` headers (forks, branched sessions) is
// rewritten to the stable fake agent dir /home/user/.pi/agent.
//
// OUTDIR/sessions and OUTDIR/mtimes.json are replaced; nothing else in OUTDIR is touched.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { importPi, installDeterminism, makeRng, RealDate, relSlash, setMtime } from "./lib/oracle.mjs";

// ---------------------------------------------------------------------------------------
// arguments
// ---------------------------------------------------------------------------------------
const argv = process.argv.slice(2);
let outArg;
let nSessions = 40;
let seed = 20260301;
let sizes;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--sessions") nSessions = Number.parseInt(argv[++i], 10);
  else if (a === "--seed") seed = Number.parseInt(argv[++i], 10);
  else if (a === "--sizes") sizes = argv[++i];
  else if (a === "-h" || a === "--help") {
    console.log("usage: make-corpus.mjs OUTDIR [--sessions N] [--seed S] [--sizes small|bench]");
    process.exit(0);
  } else if (!outArg) outArg = a;
  else throw new Error(`unexpected argument ${a}`);
}
if (!outArg || !Number.isFinite(nSessions) || !Number.isFinite(seed)) {
  console.error("usage: make-corpus.mjs OUTDIR [--sessions N] [--seed S] [--sizes small|bench]");
  process.exit(2);
}
sizes ??= nSessions > 200 ? "bench" : "small";
const OUT = resolve(outArg);
const ROOT = join(OUT, "sessions");
const FAKE_AGENT_DIR = "/home/user/.pi/agent";

// ---------------------------------------------------------------------------------------
// determinism + pi
// ---------------------------------------------------------------------------------------
const BASE = RealDate.UTC(2026, 2, 2, 8, 0, 0); // 2026-03-02T08:00:00Z
const { clock } = installDeterminism(seed, BASE);
const rng = makeRng(seed ^ 0x5bd1e995);
rmSync(ROOT, { recursive: true, force: true });
rmSync(join(OUT, "mtimes.json"), { force: true });
mkdirSync(ROOT, { recursive: true });
process.env.PI_CODING_AGENT_DIR = OUT; // pi's sessions root = OUT/sessions
delete process.env.PI_CODING_AGENT_SESSION_DIR;
const pi = await importPi();
const { SessionManager } = pi;

const iso = (ms) => new RealDate(ms).toISOString();
const tick = (minS, maxS) => clock.advance(rng.int(minS * 1000, maxS * 1000) + rng.int(0, 999));

// ---------------------------------------------------------------------------------------
// content generators
// ---------------------------------------------------------------------------------------
const PROJECTS = [
  "/home/user/projects/café app",
  "/home/user/проект/sub dir",
  "/home/user/projects/pidx",
  "/home/user/work/api-server",
  "/home/user/work/api/server", // same folder as api-server: pi's cwd encoding is lossy
  "/home/user/日本語/プロジェクト",
  "/home/user/projects/emoji 🚀 app",
  "/srv/data:mnt/x.y",
];
const LINKED_CWD = "/home/user/linked";
const HAND_CWD = "/home/user/handwritten";

const MODELS = [
  { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", price: [3, 15, 0.3, 3.75] },
  { api: "openai-responses", provider: "openai", model: "gpt-5", price: [1.25, 10, 0.125, 0] },
  { api: "google-generative-ai", provider: "google", model: "gemini-2.5-pro", price: [1.25, 10, 0.31, 0] },
];
const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh"];
const PNG_1x1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const PNG_2x2 =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";
const GIF_1x1 = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";

const USER_ASKS = [
  "Can you look at why the build fails on CI?",
  "Refactor the session loader so it streams lines instead of reading the whole file.",
  "Add a unit test for the empty-input case.",
  "What does `parse_header` return when the first line is blank?",
  "Please rename `foo_bar` to `fooBar` everywhere.",
  "Fix the flaky test in tests/integration.rs",
  "Explain the difference between `list` and `listAll`.",
  "Write a README section about configuration.",
  "Why is the café menu rendering the accents wrong? é vs é",
  "Проверь, пожалуйста, обработку ошибок в модуле импорта.",
  "このファイルのバグを直してください。",
  "Bump the dependency and update the lockfile 🚀",
  "Run the benchmarks and summarise the numbers.",
  "Is there a race between the watcher and the indexer?",
  "Make the CLI print JSON when --json is passed.",
  "Let's add tab completion for the `pidx tree` command.",
];
const ASSISTANT_SAYS = [
  "I'll start by reading the relevant files.",
  "The failure comes from a missing feature flag in Cargo.toml.",
  "Done. The loader now streams line by line and keeps memory flat.",
  "I added the test; it passes locally.",
  "Here is a summary of the changes:\n\n- renamed the function\n- updated 4 call sites\n- ran the tests",
  "The header parser skips blank lines, so it returns the first JSON object.",
  "Looks like the encoding is NFC vs NFD; normalising on input fixes it.",
  "Готово: ошибки теперь пробрасываются с контекстом.",
  "修正しました。テストも追加しています。",
  "All 128 tests pass. ✅",
  "I could not reproduce the race; the watcher debounces events for 50 ms.",
  "`listAll` walks every project folder; `list` only reads one.",
];
const THOUGHTS = [
  "The user wants a minimal change. Let me check the call sites first.",
  "I should verify the file exists before editing it.",
  "Two options: patch the parser or pre-filter lines. Patching is cleaner.",
  "Need to be careful about CRLF handling here.",
];
const TOOLS = [
  { name: "read", args: () => ({ path: rng.pick(["src/main.rs", "src/lib.rs", "Cargo.toml", "README.md", "src/store/mod.rs"]) }) },
  { name: "bash", args: () => ({ command: rng.pick(["cargo test", "cargo build --release", "ls -la", "git status", "rg -n TODO src"]) }) },
  { name: "edit", args: () => ({ path: "src/lib.rs", oldText: "fn foo_bar()", newText: "fn fooBar()" }) },
  { name: "write", args: () => ({ path: "notes/todo.md", content: "- [ ] index sessions\n- [x] parse headers\n" }) },
  { name: "grep", args: () => ({ pattern: "parentId", path: "src" }) },
];
const OUTPUTS = [
  "   Compiling pidx v0.1.0 (/home/user/projects/pidx)\n    Finished `release` profile [optimized] target(s) in 12.34s",
  "running 12 tests\ntest parse::header ... ok\ntest parse::torn_line ... ok\n\ntest result: ok. 12 passed; 0 failed",
  'fn main() {\n    println!("hello");\n}\n',
  "total 24\ndrwxr-xr-x  5 user user 4096 Mar  2 08:00 .\n-rw-r--r--  1 user user  812 Mar  2 08:00 Cargo.toml",
  "src/lib.rs:12:    parentId: Option<String>,\nsrc/store/mod.rs:88:        parent_id TEXT",
  "error[E0308]: mismatched types\n  --> src/main.rs:4:18\n   |\n 4 |     let x: u32 = \"a\";\n   |                  ^^^ expected `u32`, found `&str`",
];

const hex = (n) => Array.from(rng.bytes(n), (b) => b.toString(16).padStart(2, "0")).join("");
function usage(model, scale = 1) {
  const input = Math.round(rng.int(150, 4000) * scale);
  const output = Math.round(rng.int(10, 1500) * scale);
  const cacheRead = rng.chance(0.6) ? Math.round(rng.int(1000, 60000) * scale) : 0;
  const cacheWrite = rng.chance(0.3) ? Math.round(rng.int(100, 5000) * scale) : 0;
  const [pi_, po, pr, pw] = model.price;
  const cost = {
    input: (input * pi_) / 1e6,
    output: (output * po) / 1e6,
    cacheRead: (cacheRead * pr) / 1e6,
    cacheWrite: (cacheWrite * pw) / 1e6,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}
function bigText(targetBytes) {
  const parts = [];
  let n = 0;
  while (n < targetBytes) {
    const line = `${rng.pick(OUTPUTS)}\n`;
    parts.push(line);
    n += line.length;
  }
  return parts.join("");
}

/** Thin wrapper around a SessionManager that advances pi's clock between appends. */
class Conv {
  constructor(sm, model = MODELS[0]) {
    this.sm = sm;
    this.model = model;
    this.scale = 1;
  }
  get file() {
    return this.sm.getSessionFile();
  }
  user(content, { ts, gap = [5, 90] } = {}) {
    tick(...gap);
    return this.sm.appendMessage({ role: "user", content, timestamp: ts ?? clock.now() });
  }
  assistant(content, { ts, stopReason, extra, model } = {}) {
    tick(2, 40);
    const m = model ?? this.model;
    const hasCall = content.some((b) => b.type === "toolCall");
    return this.sm.appendMessage({
      role: "assistant",
      content,
      api: m.api,
      provider: m.provider,
      model: m.model,
      usage: usage(m, this.scale),
      stopReason: stopReason ?? (hasCall ? "toolUse" : "stop"),
      timestamp: ts ?? clock.now(),
      ...extra,
    });
  }
  toolCall(tool = rng.pick(TOOLS)) {
    return { type: "toolCall", id: `toolu_${hex(12)}`, name: tool.name, arguments: tool.args() };
  }
  toolResult(call, content, { isError = false, details } = {}) {
    tick(0, 8);
    return this.sm.appendMessage({
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: typeof content === "string" ? [{ type: "text", text: content }] : content,
      ...(details ? { details } : {}),
      isError,
      timestamp: clock.now(),
    });
  }
  system(content, extra = {}) {
    tick(0, 1);
    return this.sm.appendMessage({ role: "system", content, ...extra, timestamp: clock.now() });
  }
  /** user ask → (thinking+toolCall → toolResult)* → final text. Returns {userId, lastId}. */
  turn(ask = rng.pick(USER_ASKS), nTools = rng.int(0, 2), { outBytes } = {}) {
    const userId = this.user(ask);
    let lastId = userId;
    for (let k = 0; k < nTools; k++) {
      const call = this.toolCall();
      const blocks = [];
      if (rng.chance(0.6)) blocks.push({ type: "thinking", thinking: rng.pick(THOUGHTS), thinkingSignature: `sig_${hex(8)}` });
      if (rng.chance(0.5)) blocks.push({ type: "text", text: rng.pick(ASSISTANT_SAYS) });
      blocks.push(call);
      this.assistant(blocks);
      const out = outBytes ? bigText(outBytes) : rng.pick(OUTPUTS);
      lastId = this.toolResult(call, out, { isError: rng.chance(0.1) });
    }
    const final = [];
    if (rng.chance(0.3)) final.push({ type: "thinking", thinking: rng.pick(THOUGHTS), thinkingSignature: `sig_${hex(8)}` });
    final.push({ type: "text", text: rng.pick(ASSISTANT_SAYS) });
    lastId = this.assistant(final);
    return { userId, lastId };
  }
}

const SYSTEM_PROMPT =
  "You are pi, a coding agent. You help the user by reading files, running commands and editing code.";
const TOOL_DECLS = [
  { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "bash", description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

// Sessions are started one after another; each start is a few minutes to hours later.
let nextStart = BASE;
function startSession(cwd, { at, model, thinking, system = true } = {}) {
  nextStart += rng.int(20 * 60_000, 9 * 3_600_000);
  clock.set(at ?? nextStart);
  const sm = SessionManager.create(cwd);
  const c = new Conv(sm, model ?? rng.pick(MODELS));
  clock.advance(rng.int(0, 900));
  sm.appendModelChange(c.model.provider, c.model.model);
  if (thinking !== null) sm.appendThinkingLevelChange(thinking ?? rng.pick(THINKING));
  if (system) c.system(SYSTEM_PROMPT, { toolsAdded: TOOL_DECLS });
  return c;
}

const piFiles = []; // absolute paths of every pi-written file
const track = (c) => {
  const f = typeof c === "string" ? c : c.file;
  if (!piFiles.includes(f)) piFiles.push(f);
  return f;
};
const forcedMtime = new Map(); // abs path -> mtime (ties)

// ---------------------------------------------------------------------------------------
// hand-written files (written first: the v1 file is also a fork source)
// ---------------------------------------------------------------------------------------
const handFiles = new Map(); // abs path -> mtime
const J = (o) => JSON.stringify(o);
function writeHand(rel, content, mtime) {
  const p = join(ROOT, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, content);
  handFiles.set(p, mtime);
  return p;
}
const H = "--home-user-handwritten--";
const HB = RealDate.UTC(2026, 1, 10, 9, 0, 0); // 2026-02-10T09:00:00Z
const hts = (min, s = 0) => HB + min * 60_000 + s * 1000;
const hdr = (id, min, extra = {}) => ({ type: "session", version: 3, id, timestamp: iso(hts(min)), cwd: HAND_CWD, ...extra });
const U = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0.0003, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.0006 } };
const uMsg = (content, ms) => ({ role: "user", content, timestamp: ms });
const aMsg = (text, ms, extra = {}) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage: U,
  stopReason: "stop",
  timestamp: ms,
  ...extra,
});
const ent = (type, id, parentId, ms, fields) => ({ type, id, parentId, timestamp: typeof ms === "string" ? ms : iso(ms), ...fields });
const msg = (id, parentId, ms, message) => ent("message", id, parentId, ms, { message });
const lines = (...objs) => objs.map((o) => (typeof o === "string" ? o : J(o))).join("\n") + "\n";
/** A small valid linear conversation starting at minute `min`, ids prefixed with p. */
function convo(p, min, n = 2, first = null) {
  const out = [];
  let parent = first;
  for (let i = 0; i < n; i++) {
    const t1 = hts(min, 10 + i * 20);
    const t2 = hts(min, 20 + i * 20);
    out.push(msg(`${p}u${i}`, parent, t1, uMsg(`${p}: question ${i}`, t1)));
    out.push(msg(`${p}a${i}`, `${p}u${i}`, t2, aMsg(`${p}: answer ${i}`, t2)));
    parent = `${p}a${i}`;
  }
  return out;
}

function writeHandWritten() {
  // -- v1 file: no version, no entry ids; compaction uses firstKeptEntryIndex (an index into
  //    the parsed entries with the header at 0; the blank line does not count).
  {
    const t = (s) => HB - 90 * 86_400_000 + s * 1000; // 2025-11-12
    const v1 = [
      J({ type: "session", id: "5d0c4a52-8f0e-4b7a-9a43-0f1a2b3c4d5e", timestamp: iso(t(0)), cwd: HAND_CWD, provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "off" }),
      J({ type: "message", timestamp: iso(t(5)), message: uMsg("v1: list the files please", t(5)) }),
      J({ type: "message", timestamp: iso(t(9)), message: { role: "assistant", content: [{ type: "text", text: "Listing." }, { type: "toolCall", id: "toolu_v1a", name: "bash", arguments: { command: "ls" } }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: U, stopReason: "toolUse", timestamp: t(9) } }),
      J({ type: "message", timestamp: iso(t(10)), message: { role: "toolResult", toolCallId: "toolu_v1a", toolName: "bash", content: [{ type: "text", text: "Cargo.toml\nsrc" }], isError: false, timestamp: t(10) } }),
      "",
      J({ type: "message", timestamp: iso(t(14)), message: aMsg("v1: there are two entries.", t(14)) }),
      J({ type: "thinking_level_change", timestamp: iso(t(20)), thinkingLevel: "medium" }),
      J({ type: "message", timestamp: iso(t(30)), message: uMsg("v1: now refactor src", t(30)) }),
      J({ type: "message", timestamp: iso(t(50)), message: aMsg("v1: refactored.", t(50)) }),
      J({ type: "compaction", timestamp: iso(t(60)), summary: "v1 summary: listed files, refactored src.", firstKeptEntryIndex: 6, tokensBefore: 12345 }),
      J({ type: "model_change", timestamp: iso(t(70)), provider: "openai", modelId: "gpt-5" }),
      J({ type: "message", timestamp: iso(t(80)), message: uMsg("v1: after the compaction", t(80)) }),
      J({ type: "message", timestamp: iso(t(95)), message: aMsg("v1: still here.", t(95), { provider: "openai", model: "gpt-5", api: "openai-responses" }) }),
    ];
    writeHand(`${H}/v1-session.jsonl`, v1.join("\n") + "\n", hts(-500));
    // v1 with a compaction index pointing at the header (→ no firstKeptEntryId) and branchedFrom
    const t2 = (s) => HB - 80 * 86_400_000 + s * 1000;
    writeHand(
      `${H}/v1-bad-index.jsonl`,
      lines(
        { type: "session", id: "6e1d5b63-9f1f-4c8b-8b54-1f2a3b4c5d6e", timestamp: iso(t2(0)), cwd: HAND_CWD, branchedFrom: "/home/user/.pi/agent/sessions/--home-user-handwritten--/v1-session.jsonl" },
        { type: "message", timestamp: iso(t2(5)), message: uMsg("v1b: hello", t2(5)) },
        { type: "message", timestamp: iso(t2(9)), message: aMsg("v1b: hi", t2(9)) },
        { type: "compaction", timestamp: iso(t2(20)), summary: "v1b summary", firstKeptEntryIndex: 0, tokensBefore: 500 },
        { type: "message", timestamp: iso(t2(25)), message: uMsg("v1b: more", t2(25)) },
        { type: "message", timestamp: iso(t2(29)), message: aMsg("v1b: ok", t2(29)) },
        { type: "compaction", timestamp: iso(t2(40)), summary: "v1b second summary (index out of range)", firstKeptEntryIndex: 99, tokensBefore: 900 },
        { type: "message", timestamp: iso(t2(45)), message: uMsg("v1b: last", t2(45)) },
      ),
      hts(-400),
    );
  }
  // -- v2 file with a hookMessage role (migrates to custom)
  writeHand(
    `${H}/v2-hookmessage.jsonl`,
    lines(
      { type: "session", version: 2, id: "7f2e6c74-a020-4d9c-9c65-2a3b4c5d6e7f", timestamp: iso(hts(1)), cwd: HAND_CWD },
      msg("b2000001", null, hts(1, 5), uMsg("v2: start", hts(1, 5))),
      msg("b2000002", "b2000001", hts(1, 9), { role: "hookMessage", customType: "todo-hook", content: "Remember: tests first.", display: true, details: { n: 1 }, timestamp: hts(1, 9) }),
      msg("b2000003", "b2000002", hts(1, 15), aMsg("v2: answer", hts(1, 15))),
      msg("b2000004", "b2000003", hts(1, 20), { role: "hookMessage", customType: "todo-hook", content: [{ type: "text", text: "array hook" }], display: false, timestamp: hts(1, 20) }),
    ),
    hts(2),
  );
  // -- torn last line: partial JSON fragment (no trailing newline)
  writeHand(
    `${H}/torn-fragment.jsonl`,
    lines(hdr("torn-fragment-0001", 3), ...convo("tf", 3)) +
      '{"type":"message","id":"tfu9","parentId":"tfa1","timestamp":"2026-02-10T09:03:59.000Z","message":{"role":"user","content":"this line was cut o',
    hts(4),
  );
  // -- torn last line that is complete JSON (no trailing newline)
  writeHand(
    `${H}/torn-valid.jsonl`,
    lines(hdr("torn-valid-0001", 5), ...convo("tv", 5)) +
      J(msg("tvu9", "tva1", hts(5, 59), uMsg("complete line without newline", hts(5, 59)))),
    hts(6),
  );
  // -- CRLF line endings
  writeHand(`${H}/crlf.jsonl`, lines(hdr("crlf-0001", 7), ...convo("cr", 7, 2)).replace(/\n/g, "\r\n"), hts(8));
  // -- lone CR separators (listing splits on them, loading does not)
  writeHand(`${H}/lone-cr.jsonl`, lines(hdr("lone-cr-0001", 9), ...convo("lc", 9, 1)).replace(/\n/g, "\r").replace(/\r$/, "\n"), hts(10));
  // -- lone CR separators and no \n at all: pi's listing reads the last line at end of file,
  //    so it lists the file; the loader sees one line that is not JSON
  writeHand(`${H}/lone-cr-no-lf.jsonl`, lines(hdr("lone-cr-nolf-0001", 90), ...convo("ln", 90, 1)).replace(/\n/g, "\r"), hts(91));
  // -- a `modified` that falls back to the file's mtime, with a fraction of a millisecond
  //    (Node's stats.mtime is Math.round(mtimeMs): .7 rounds up)
  {
    const h = hdr("mtime-fraction-0001", 92);
    delete h.timestamp;
    writeHand(`${H}/mtime-fraction.jsonl`, lines(h, ent("custom", "mf1", null, hts(92), { customType: "note", data: {} })), hts(93) + 0.7);
  }
  // -- malformed middle lines
  {
    const c = convo("mm", 11, 2);
    writeHand(`${H}/malformed-middle.jsonl`, lines(hdr("malformed-0001", 11), c[0], '{"type":"message","id":"mmX",', "not json at all", c[1], c[2], "}{", c[3]), hts(12));
  }
  // -- duplicate header (the ≤0.58 re-flush bug: header and first entry written twice)
  {
    const h = hdr("dup-header-0001", 13);
    const c = convo("dh", 13, 2);
    writeHand(`${H}/duplicate-header.jsonl`, lines(h, c[0], h, c[0], c[1], { ...h, id: "dup-header-0002", timestamp: iso(hts(13, 50)) }, c[2], c[3]), hts(14));
  }
  // -- unknown entry type in the chain
  {
    const c = convo("uk", 15, 2);
    writeHand(
      `${H}/unknown-type.jsonl`,
      lines(hdr("unknown-type-0001", 15), c[0], c[1], ent("future_thing", "ukX", "uka0", hts(15, 35), { payload: { answer: 42 } }), { ...c[2], parentId: "ukX" }, c[3]),
      hts(16),
    );
  }
  // -- self-parented entry (parentId === id) in the middle of the chain
  writeHand(
    `${H}/self-parent.jsonl`,
    lines(
      hdr("self-parent-0001", 17),
      msg("sp000001", null, hts(17, 5), uMsg("sp: first", hts(17, 5))),
      msg("sp000002", "sp000001", hts(17, 10), aMsg("sp: second", hts(17, 10))),
      msg("sp000003", "sp000003", hts(17, 20), uMsg("sp: I am my own parent", hts(17, 20))),
      msg("sp000004", "sp000003", hts(17, 30), aMsg("sp: child of the loop", hts(17, 30))),
    ),
    hts(18),
  );
  // -- two-entry cycle (c1 -> c2 -> c1); the file's last entry is outside the cycle
  writeHand(
    `${H}/two-cycle.jsonl`,
    lines(
      hdr("two-cycle-0001", 19),
      msg("cy000001", null, hts(19, 5), uMsg("cy: root", hts(19, 5))),
      msg("cy000002", "cy000001", hts(19, 10), aMsg("cy: reply", hts(19, 10))),
      msg("cyc00001", "cyc00002", hts(19, 20), uMsg("cy: loop a", hts(19, 20))),
      msg("cyc00002", "cyc00001", hts(19, 30), aMsg("cy: loop b", hts(19, 30))),
      msg("cy000003", "cy000002", hts(19, 40), uMsg("cy: outside the loop", hts(19, 40))),
    ),
    hts(20),
  );
  // -- user message with content: null (listing drops the session; context uses [])
  writeHand(`${H}/null-content.jsonl`, lines(hdr("null-content-0001", 21), ...convo("nc", 21, 1), msg("ncX", "nca0", hts(21, 50), { role: "user", content: null, timestamp: hts(21, 50) })), hts(22));
  // -- message: null (listing drops it; context throws on paths through it)
  writeHand(`${H}/message-null.jsonl`, lines(hdr("message-null-0001", 23), ...convo("mn", 23, 1), { type: "message", id: "mnX", parentId: "mna0", timestamp: iso(hts(23, 50)), message: null }, msg("mnY", "mnX", hts(23, 55), uMsg("after the null", hts(23, 55)))), hts(24));
  // -- null block inside a content array
  writeHand(`${H}/null-block.jsonl`, lines(hdr("null-block-0001", 25), ...convo("nb", 25, 1), msg("nbX", "nba0", hts(25, 50), uMsg([{ type: "text", text: "before null" }, null], hts(25, 50)))), hts(26));
  // -- non-string session_info.name
  writeHand(`${H}/name-number.jsonl`, lines(hdr("name-number-0001", 27), ...convo("nn", 27, 1), ent("session_info", "nnX", "nna0", hts(27, 50), { name: 42 })), hts(28));
  // -- UTF-8 BOM before the header
  writeHand(`${H}/bom.jsonl`, "\uFEFF" + lines(hdr("bom-0001", 29), ...convo("bo", 29, 1)), hts(30));
  // -- header without id (listed with no id; open refuses it)
  {
    const h = hdr("x", 31);
    delete h.id;
    writeHand(`${H}/header-no-id.jsonl`, lines(h, ...convo("ni", 31, 1)), hts(32));
  }
  // -- header only; empty file
  writeHand(`${H}/header-only.jsonl`, lines(hdr("header-only-0001", 33)), hts(34));
  writeHand(`${H}/empty.jsonl`, "", hts(35));
  // -- blank, garbage and falsy JSON lines before the header
  writeHand(`${H}/garbage-before-header.jsonl`, lines("", "   ", "garbage text", "null", "false", "0", '""', "{not json", hdr("garbage-0001", 36), ...convo("gb", 36, 1)), hts(37));
  // -- valid JSON entry before the header (invalidates the file)
  writeHand(`${H}/entry-before-header.jsonl`, lines(msg("ebX", null, hts(38), uMsg("too early", hts(38))), hdr("entry-before-0001", 38), ...convo("eb", 38, 1)), hts(39));
  // -- lone surrogates (JSON escapes; pi itself writes these when a string is cut mid-emoji)
  writeHand(
    `${H}/lone-surrogate.jsonl`,
    lines(
      hdr("lone-surrogate-0001", 40),
      '{"type":"message","id":"ls000001","parentId":null,"timestamp":"2026-02-10T09:40:05.000Z","message":{"role":"user","content":"cut \\ud83d","timestamp":1770716405000}}',
      '{"type":"message","id":"ls000002","parentId":"ls000001","timestamp":"2026-02-10T09:40:09.000Z","message":{"role":"assistant","content":[{"type":"text","text":"low \\udc00 half, pair \\ud83d\\ude80 ok"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1770716409000}}',
      '{"type":"session_info","id":"ls000003","parentId":"ls000002","timestamp":"2026-02-10T09:40:10.000Z","name":"name \\ud800 cut"}',
    ),
    hts(41),
  );
  // -- invalid UTF-8 bytes inside strings (pi decodes them as U+FFFD)
  {
    const h = Buffer.from(lines(hdr("invalid-utf8-0001", 42)));
    const pre = Buffer.from('{"type":"message","id":"iu000001","parentId":null,"timestamp":"2026-02-10T09:42:05.000Z","message":{"role":"user","content":"caf');
    const bad = Buffer.from([0xc3, 0x20, 0x80, 0x20, 0xff, 0x20, 0xe2, 0x82, 0x20, 0xc0, 0xaf, 0x20, 0xed, 0xa0, 0x80]);
    const post = Buffer.from(' end","timestamp":1770716525000}}\n');
    const rest = Buffer.from(lines(msg("iu000002", "iu000001", hts(42, 9), aMsg("ok", hts(42, 9)))));
    writeHand(`${H}/invalid-utf8.jsonl`, Buffer.concat([h, pre, bad, post, rest]), hts(43));
  }
  // -- duplicate entry ids in one file (the later one wins in pi's id map)
  writeHand(
    `${H}/duplicate-ids.jsonl`,
    lines(
      hdr("duplicate-ids-0001", 44),
      msg("dd000001", null, hts(44, 5), uMsg("dd: first", hts(44, 5))),
      msg("dd000002", "dd000001", hts(44, 10), aMsg("dd: original reply", hts(44, 10))),
      msg("dd000003", "dd000002", hts(44, 20), uMsg("dd: follow-up", hts(44, 20))),
      msg("dd000002", "dd000001", hts(44, 30), aMsg("dd: REPLACEMENT reply with the same id", hts(44, 30))),
      msg("dd000004", "dd000002", hts(44, 40), uMsg("dd: after the duplicate", hts(44, 40))),
    ),
    hts(45),
  );
  // -- context_edit entries (content replacement, string for assistant, null removal, on a custom_message; branch-relative)
  writeHand(
    `${H}/context-edit.jsonl`,
    lines(
      hdr("context-edit-0001", 46),
      msg("ce000001", null, hts(46, 5), uMsg("ce: read the log", hts(46, 5))),
      msg("ce000002", "ce000001", hts(46, 9), { ...aMsg("reading", hts(46, 9)), content: [{ type: "toolCall", id: "toolu_ce1", name: "read", arguments: { path: "big.log" } }], stopReason: "toolUse" }),
      msg("ce000003", "ce000002", hts(46, 10), { role: "toolResult", toolCallId: "toolu_ce1", toolName: "read", content: [{ type: "text", text: "HUGE LOG ".repeat(20) }], isError: false, timestamp: hts(46, 10) }),
      msg("ce000004", "ce000003", hts(46, 15), aMsg("ce: the log is huge", hts(46, 15))),
      ent("custom_message", "ce000005", "ce000004", hts(46, 16), { customType: "ext-note", content: "note before edit", display: true }),
      ent("context_edit", "ce000006", "ce000005", hts(46, 20), { targetId: "ce000003", replacement: { content: [{ type: "text", text: "[log elided]" }] } }),
      ent("context_edit", "ce000007", "ce000006", hts(46, 21), { targetId: "ce000001", replacement: { content: "ce: (edited question)" } }),
      ent("context_edit", "ce000008", "ce000007", hts(46, 22), { targetId: "ce000004", replacement: { content: "assistant text given as a string" } }),
      ent("context_edit", "ce000009", "ce000008", hts(46, 23), { targetId: "ce000005", replacement: null }),
      ent("context_edit", "ce00000a", "ce000009", hts(46, 24), { targetId: "ce000003", replacement: { content: "later edit of the same target wins" } }),
      msg("ce00000b", "ce00000a", hts(46, 30), uMsg("ce: continue", hts(46, 30))),
      msg("ce00000c", "ce00000b", hts(46, 35), aMsg("ce: continuing", hts(46, 35))),
      ent("context_edit", "ce00000d", "ce00000c", hts(46, 40), { targetId: "ce00000c", replacement: null }),
      // a sibling branch from ce000004 without the edits
      msg("ce00000e", "ce000004", hts(46, 50), uMsg("ce: other branch, no edits", hts(46, 50))),
    ),
    hts(47),
  );
  // -- compaction with systemMessage plus persisted system messages before and after it
  writeHand(
    `${H}/compaction-system.jsonl`,
    lines(
      hdr("compaction-system-0001", 48),
      ent("model_change", "cs000001", null, hts(48, 1), { provider: "anthropic", modelId: "claude-sonnet-4-5" }),
      msg("cs000002", "cs000001", hts(48, 2), { role: "system", content: SYSTEM_PROMPT, sections: { env: "cwd=/home/user/handwritten" }, toolsAdded: TOOL_DECLS, timestamp: hts(48, 2) }),
      msg("cs000003", "cs000002", hts(48, 5), uMsg("cs: one", hts(48, 5))),
      msg("cs000004", "cs000003", hts(48, 9), aMsg("cs: two", hts(48, 9))),
      msg("cs000005", "cs000004", hts(48, 10), { role: "system", content: "", sections: { env: "cwd=/tmp" }, toolsRemoved: [{ name: "bash" }], timestamp: hts(48, 10) }),
      msg("cs000006", "cs000005", hts(48, 15), uMsg("cs: three", hts(48, 15))),
      msg("cs000007", "cs000006", hts(48, 19), aMsg("cs: four", hts(48, 19))),
      ent("compaction", "cs000008", "cs000007", hts(48, 30), {
        summary: "cs: summary of one..four",
        firstKeptEntryId: "cs000005",
        tokensBefore: 4321,
        details: { readFiles: ["a.rs"], modifiedFiles: [] },
        systemMessage: { role: "system", content: SYSTEM_PROMPT, sections: { env: "cwd=/tmp" }, toolsAdded: [TOOL_DECLS[0]], timestamp: hts(48, 30) },
      }),
      msg("cs000009", "cs000008", hts(48, 31), { role: "system", content: "Extra instructions after compaction.", timestamp: hts(48, 31) }),
      msg("cs00000a", "cs000009", hts(48, 35), uMsg("cs: five", hts(48, 35))),
      msg("cs00000b", "cs00000a", hts(48, 39), { role: "system", timestamp: hts(48, 39) }),
      msg("cs00000c", "cs00000b", hts(48, 45), aMsg("cs: six", hts(48, 45))),
    ),
    hts(49),
  );
  // -- usage entry; branch_summary with empty and missing summary; message timestamp 0
  writeHand(
    `${H}/usage-entry.jsonl`,
    lines(
      hdr("usage-entry-0001", 50),
      ...convo("ue", 50, 1),
      ent("usage", "ue000001", "uea0", hts(50, 40), { kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: U, note: "keep-alive ping" }),
      msg("ue000002", "ue000001", hts(50, 45), uMsg("ue: after usage", hts(50, 45))),
    ),
    hts(51),
  );
  writeHand(
    `${H}/branch-summary-empty.jsonl`,
    lines(
      hdr("branch-summary-empty-0001", 52),
      ...convo("bs", 52, 2),
      ent("branch_summary", "bs000001", "bsa0", hts(52, 60), { fromId: "bsa1", summary: "" }),
      msg("bs000002", "bs000001", hts(52, 65), uMsg("bs: after empty summary", hts(52, 65))),
      ent("branch_summary", "bs000003", null, hts(52, 70), { fromId: "bs000002" }),
      msg("bs000004", "bs000003", hts(52, 75), uMsg("bs: after missing summary, new root", hts(52, 75))),
      ent("branch_summary", "bs000005", "bs000004", hts(52, 80), { fromId: "root", summary: "bs: a real summary" }),
      msg("bs000006", "bs000005", hts(52, 85), aMsg("bs: done", hts(52, 85))),
    ),
    hts(53),
  );
  writeHand(
    `${H}/timestamp-zero.jsonl`,
    lines(
      hdr("timestamp-zero-0001", 54),
      msg("tz000001", null, hts(54, 5), uMsg("tz: epoch zero", 0)),
      msg("tz000002", "tz000001", hts(54, 9), aMsg("tz: zero too", 0)),
      msg("tz000003", "tz000002", hts(54, 12), { role: "toolResult", toolCallId: "x", toolName: "bash", content: [], isError: false, timestamp: hts(54, 12) }),
    ),
    hts(55),
  );
  // -- unparseable header timestamps: with messages (modified from messages) and without
  //    (modified falls back to the file mtime)
  writeHand(`${H}/bad-header-timestamp.jsonl`, lines({ ...hdr("bad-ts-0001", 56), timestamp: "not a date" }, ...convo("bt", 56, 1)), hts(57));
  writeHand(
    `${H}/bad-header-timestamp-nomsg.jsonl`,
    lines({ ...hdr("bad-ts-0002", 58), timestamp: "2026-13-45T99:00:00Z" }, ent("model_change", "bn000001", null, "garbage", { provider: "openai", modelId: "gpt-5" })),
    RealDate.UTC(2026, 2, 20, 12, 34, 56, 789), // lands between pi-written sessions
  );
  {
    const h = hdr("no-ts-0001", 59);
    delete h.timestamp;
    writeHand(`${H}/missing-header-timestamp.jsonl`, lines(h, msg("nt000001", null, "also not a date", uMsg("nt: timestamps are strings", "2026-02-10T09:59:00Z"))), hts(60));
  }
  // -- header cwd that is not a string; header cwd with a trailing slash
  writeHand(`${H}/header-cwd-number.jsonl`, lines({ ...hdr("cwd-number-0001", 61), cwd: 12 }, ...convo("cn", 61, 1)), hts(62));
  writeHand(
    "--home-user-projects-pidx--/handwritten-trailing-slash.jsonl",
    lines({ ...hdr("trailing-slash-0001", 63), cwd: "/home/user/projects/pidx/" }, ...convo("tr", 63, 1)),
    hts(64),
  );
  // -- orphans, a missing parentId key, labels (unknown target, cleared with null / ""), names
  writeHand(
    `${H}/orphans-labels-names.jsonl`,
    lines(
      hdr("orphans-0001", 65),
      ...convo("ol", 65, 2),
      msg("ol000001", "no-such-parent", hts(65, 90), uMsg("ol: orphan (parent missing)", hts(65, 90))),
      { type: "message", id: "ol000002", timestamp: iso(hts(65, 95)), message: aMsg("ol: no parentId key", hts(65, 95)) },
      ent("label", "ol000003", "ol000002", hts(65, 100), { targetId: "olu0", label: "start" }),
      ent("label", "ol000004", "ol000003", hts(65, 101), { targetId: "ola1", label: "end" }),
      ent("label", "ol000005", "ol000004", hts(65, 102), { targetId: "nonexistent", label: "dangling" }),
      ent("label", "ol000006", "ol000005", hts(65, 103), { targetId: "ola1", label: null }),
      ent("label", "ol000007", "ol000006", hts(65, 104), { targetId: "olu1", label: "mid" }),
      ent("label", "ol000008", "ol000007", hts(65, 105), { targetId: "olu1", label: "" }),
      ent("label", "ol000009", "ol000008", hts(65, 106), { targetId: "ola0", label: "first answer" }),
      ent("label", "ol00000a", "ol000009", hts(65, 107), { targetId: "ola0", label: "first answer (renamed)" }),
      ent("session_info", "ol00000b", "ol00000a", hts(65, 110), { name: "First name" }),
      ent("session_info", "ol00000c", "ol00000b", hts(65, 111), {}),
      ent("session_info", "ol00000d", "ol00000c", hts(65, 112), { name: "  Multi\nline\r\nname  " }),
    ),
    hts(66),
  );
  // -- odd message shapes that pi accepts
  writeHand(
    `${H}/role-variety.jsonl`,
    lines(
      hdr("role-variety-0001", 67),
      msg("rv000001", null, hts(67, 5), { role: "user", timestamp: hts(67, 5) }),
      msg("rv000002", "rv000001", hts(67, 9), { ...aMsg("x", hts(67, 9)), content: "assistant content as a plain string" }),
      msg("rv000003", "rv000002", hts(67, 12), uMsg([{ type: "text", text: null }, { type: "text", text: 5 }, { type: "image", data: PNG_1x1, mimeType: "image/png" }, { type: "text", text: "tail" }], "2026-02-10T10:07:12.000Z")),
      msg("rv000004", "rv000003", hts(67, 15), { ...aMsg("x", hts(67, 15)), content: [] }),
      msg("rv000005", "rv000004", hts(67, 18), { ...aMsg("x", hts(67, 18)), content: [{ type: "thinking", thinking: "only thinking", redacted: false }] }),
      msg("rv000006", "rv000005", hts(67, 20), uMsg("   ", hts(67, 20))),
      msg("rv000007", "rv000006", hts(67, 22), { role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, cancelled: false, truncated: false, timestamp: hts(67, 22) }),
      msg("rv000008", "rv000007", hts(67, 24), { role: "mystery", content: "unknown role", timestamp: hts(67, 24) }),
      msg("rv000009", "rv000008", hts(67, 26), { role: "toolResult", toolCallId: "t", toolName: "read", isError: false, timestamp: hts(67, 26) }),
      msg("rv00000a", "rv000009", hts(67, 28), { role: "system", timestamp: hts(67, 28) }),
    ),
    hts(68),
  );
  // -- non-object JSON values as entries (pi keeps them; a trailing scalar empties the default context)
  writeHand(`${H}/bogus-scalars.jsonl`, lines(hdr("bogus-0001", 69), ...convo("bg", 69, 1), '"a string line"', "[1,2]", msg("bg000001", "bga0", hts(69, 50), uMsg("bg: after bogus", hts(69, 50))), "5"), hts(70));

  // -- identical modified + identical mtime: order falls back to localeCompare of the names
  const TIE_DIR = "--home-user-ties--";
  const tieMs = RealDate.UTC(2026, 1, 12, 12, 0, 0);
  const tieMtime = RealDate.UTC(2026, 1, 12, 12, 5, 0);
  for (const name of ["tie-a", "tie-B", "tie_c", "tie.d", "tie-ä", "tie-10", "tie-9", "tie-b"]) {
    writeHand(
      `${TIE_DIR}/${name}.jsonl`,
      lines(
        { type: "session", version: 3, id: `tie-${Buffer.from(name).toString("hex")}`, timestamp: iso(tieMs - 60_000), cwd: "/home/user/ties" },
        msg("ti000001", null, tieMs - 30_000, uMsg(`I am ${name}`, tieMs - 30_000)),
        msg("ti000002", "ti000001", tieMs, aMsg(`reply from ${name}`, tieMs)),
      ),
      tieMtime,
    );
  }
  // -- same folder as pi's api-server sessions, but a different header cwd (list(cwd) does not filter)
  writeHand("--home-user-work-api-server--/handwritten-foreign-cwd.jsonl", lines({ ...hdr("foreign-cwd-0001", 71), cwd: "/home/user/work/api-server-OTHER" }, ...convo("fc", 71, 1)), hts(72));
  // -- file names that are not pi's <ts>_<id> pattern
  writeHand(`${H}/my session é.jsonl`, lines(hdr("odd-name-0001", 73), ...convo("on", 73, 1)), hts(74));

  // -- discovery cases (all of these are ignored by listAll)
  writeHand("stray-root.jsonl", lines({ ...hdr("stray-root-0001", 75), cwd: "/home/user/ignored" }, ...convo("sr", 75, 1)), hts(76));
  writeHand(`${H}/UPPER.JSONL`, lines({ ...hdr("upper-0001", 77), cwd: "/home/user/ignored" }, ...convo("up", 77, 1)), hts(78));
  writeHand(`${H}/nested/n.jsonl`, lines({ ...hdr("nested-0001", 79), cwd: "/home/user/ignored" }, ...convo("ne", 79, 1)), hts(80));
  writeHand(`${H}/nested/deeper/nn.jsonl`, lines({ ...hdr("nested-0002", 81), cwd: "/home/user/ignored" }, ...convo("nd", 81, 1)), hts(82));
  writeHand(`${H}/notes.txt`, "not a session\n", hts(83));
}
writeHandWritten();

// ---------------------------------------------------------------------------------------
// pi-written feature sessions
// ---------------------------------------------------------------------------------------
const [CAFE, RU, PIDX, API1, API2, JA, EMOJI, SRV] = PROJECTS;
const features = [];

// F1: a full tour of one conversation (system, thinking, tool calls, images, usage entry, name, label)
features.push(() => {
  const c = startSession(CAFE, { model: MODELS[0], thinking: "high" });
  const u1 = c.user("Why is the café menu rendering the accents wrong? é vs é");
  const call = c.toolCall(TOOLS[0]);
  c.assistant([{ type: "thinking", thinking: "Probably NFC vs NFD.", thinkingSignature: `sig_${hex(8)}` }, { type: "text", text: "Let me read the template." }, call], { extra: { responseId: `msg_${hex(10)}` } });
  c.toolResult(call, '<h1>Café</h1>\n<p>Crème brûlée</p>\n', { details: { lines: 2 } });
  const call2 = c.toolCall(TOOLS[1]);
  c.assistant([call2]);
  c.toolResult(call2, [{ type: "text", text: "screenshot attached" }, { type: "image", data: PNG_2x2, mimeType: "image/png" }]);
  c.assistant([{ type: "text", text: "It's NFD input; normalising to NFC fixes it." }], { extra: { durationMs: 5321, responseModel: "claude-sonnet-4-5-20250929" } });
  c.sm.appendUsage("cache_warm", c.model.provider, c.model.model, usage(c.model, 0.1), "keep-alive");
  c.sm.appendSessionInfo("Café accents\nbug"); // pi replaces the newline with a space
  c.sm.appendLabelChange(u1, "question");
  c.user([{ type: "text", text: "Here is what I see:" }, { type: "image", data: PNG_1x1, mimeType: "image/png" }, { type: "text", text: "(see the red pixel)" }]);
  c.assistant([{ type: "text", text: "Thanks, that confirms it." }]);
  track(c);
});

// F2: branches, branch summaries, labels and names set/changed/cleared, resetLeaf, clock skew
features.push(() => {
  const c = startSession(RU, { model: MODELS[1] });
  const t1 = c.turn("Проверь, пожалуйста, обработку ошибок в модуле импорта.", 1);
  const t2 = c.turn("Теперь добавь тесты.", 0);
  const t3 = c.turn("And make it faster.", 1);
  c.sm.appendSessionInfo("Импорт: ошибки");
  c.sm.appendLabelChange(t2.userId, "tests");
  c.sm.appendLabelChange(t3.userId, "perf");
  // branch back to the end of turn 1 and try another direction (leaf 2)
  c.sm.branch(t1.lastId);
  const b1 = c.turn("Actually, skip the tests; document the errors instead.", 0);
  c.sm.appendLabelChange(t3.userId, undefined); // clear: no `label` key on disk
  // branch with a summary of the abandoned path (fromId = the leaf we came from)
  tick(5, 20);
  c.sm.branchWithSummary(t2.lastId, "Tried documenting errors instead of tests; abandoned.", { readFiles: ["src/import.rs"] }, false, usage(c.model, 0.2));
  const b2 = c.turn("Back to the tests, please.", 1);
  c.sm.appendLabelChange(b1.userId, "docs-branch");
  c.sm.appendLabelChange(b1.userId, ""); // clear with "" (key present, empty)
  c.sm.appendSessionInfo("Импорт: тесты");
  // clock skew: a child appended later in the file but with an earlier timestamp
  const save = clock.now();
  c.sm.branch(t1.userId);
  clock.set(save - 3 * 3_600_000);
  c.sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "(clock-skewed sibling reply)" }], api: c.model.api, provider: c.model.provider, model: c.model.model, usage: usage(c.model), stopReason: "stop", timestamp: clock.now() });
  clock.set(save);
  // a second root: resetLeaf, then a new conversation start
  c.sm.resetLeaf();
  tick(30, 60);
  c.turn("Start over: what is this module for?", 0);
  // branch summary at the root (branchWithSummary(null) → parentId null)
  tick(10, 20);
  c.sm.branchWithSummary(null, "Restarted from scratch twice; nothing useful.");
  c.turn("Third root conversation.", 0);
  c.sm.appendSessionInfo("   "); // whitespace-only name clears it
  c.sm.branch(b2.lastId); // leave the leaf on an inner branch; the file still ends elsewhere
  c.turn("Final question on the tests branch.", 0);
  track(c);
});

// F3: compactions (on-path firstKept, off-path firstKept, retain none) with system messages
features.push(() => {
  const c = startSession(PIDX, { model: MODELS[0], thinking: "medium" });
  const t1 = c.turn("Add a unit test for the empty-input case.", 1);
  const t2 = c.turn("Run the benchmarks and summarise the numbers.", 2);
  c.system("", { sections: { env: "branch=feature/x" } }); // a later system patch
  const t3 = c.turn("Make the CLI print JSON when --json is passed.", 1);
  tick(10, 30);
  c.sm.appendCompaction("Summary 1: added tests, ran benchmarks.", t2.userId, 18234, { readFiles: ["src/lib.rs"], modifiedFiles: ["tests/a.rs"] }, false, usage(c.model, 0.5));
  const t4 = c.turn("Now the --json flag for `tree`.", 1);
  // a side branch before the compaction
  c.sm.branch(t1.lastId);
  const side = c.turn("Side question: what's the MSRV?", 0);
  // back after the compaction; compact again with a firstKeptEntryId that is on another branch
  c.sm.branch(t4.lastId);
  c.turn("Continue with the JSON output.", 1);
  tick(10, 30);
  c.sm.appendCompaction("Summary 2 (firstKept is off the current path).", side.userId, 25000, undefined, true);
  c.turn("After the second compaction.", 0);
  c.system("Be terse.", {});
  tick(10, 30);
  c.sm.appendCompaction("Summary 3: retain none.", null, 9000, { note: "retain none" });
  c.turn("After the retain-none compaction.", 1);
  c.sm.appendLabelChange(t3.userId, "json");
  track(c);
});

// F4: bash executions, custom role messages, custom entries, custom_message entries
features.push(() => {
  const c = startSession(API1, { model: MODELS[2], thinking: "off" });
  c.turn("Is there a race between the watcher and the indexer?", 1);
  tick(5, 10);
  c.sm.appendMessage({ role: "bashExecution", command: "cargo test watcher", output: "test watcher::debounce ... ok\n", exitCode: 0, cancelled: false, truncated: false, timestamp: clock.now() });
  tick(5, 10);
  c.sm.appendMessage({ role: "bashExecution", command: "tail -f /var/log/syslog", output: "…", exitCode: null, cancelled: true, truncated: true, fullOutputPath: "/tmp/pi-bash-1.log", excludeFromContext: true, timestamp: clock.now() });
  tick(1, 3);
  c.sm.appendMessage({ role: "custom", customType: "reminder", content: "Remember to update the CHANGELOG.", display: true, details: { source: "ext" }, timestamp: clock.now() });
  tick(1, 3);
  c.sm.appendCustomEntry("ext-state", { counter: 3, files: ["a", "b"] });
  tick(1, 3);
  c.sm.appendCustomEntry("ext-empty");
  tick(1, 3);
  c.sm.appendCustomMessageEntry("ext-note", "A note injected into the context.", true, { k: "v" });
  tick(1, 3);
  c.sm.appendCustomMessageEntry("ext-image", [{ type: "text", text: "diagram:" }, { type: "image", data: GIF_1x1, mimeType: "image/gif" }], false);
  c.turn("Thanks. Anything else?", 0);
  track(c);
});

// F5: images in user content and tool results (folder shared with F4 via lossy encoding)
features.push(() => {
  const c = startSession(API2, { model: MODELS[0], thinking: "low" });
  c.user([{ type: "image", data: PNG_1x1, mimeType: "image/png" }]); // image only: no text
  c.assistant([{ type: "text", text: "I see a single pixel." }]);
  c.user([{ type: "text", text: "And this one?" }, { type: "image", data: PNG_2x2, mimeType: "image/png" }]);
  const call = c.toolCall({ name: "screenshot", args: () => ({ url: "http://localhost:3000" }) });
  c.assistant([call]);
  c.toolResult(call, [{ type: "image", data: PNG_2x2, mimeType: "image/png" }, { type: "text", text: "1280x720" }]);
  c.assistant([{ type: "text", text: "Rendered fine." }]);
  track(c);
});

// F6: context edits through the API (branch-relative)
features.push(() => {
  const c = startSession(JA, { model: MODELS[0] });
  const u = c.user("このファイルのバグを直してください。");
  const call = c.toolCall(TOOLS[0]);
  const a = c.assistant([{ type: "text", text: "読みます。" }, call]);
  const tr = c.toolResult(call, "x".repeat(300));
  const a2 = c.assistant([{ type: "text", text: "修正しました。" }]);
  tick(1, 2);
  c.sm.appendContextEdit(tr, { content: "[elided 300 bytes]" }); // string → [{type:text}] for toolResult
  tick(1, 2);
  c.sm.appendContextEdit(u, { content: [{ type: "text", text: "(edited) バグを直して" }] });
  tick(1, 2);
  const before = c.sm.getLeafId();
  c.sm.appendContextEdit(a, null);
  c.turn("テストも追加して", 0);
  c.sm.branch(before);
  c.turn("別のブランチ (no null edit here)", 0);
  c.sm.branch(a2);
  c.turn("edits are branch-relative: none here", 0);
  track(c);
});

// F7: forkFrom into another project (then continue the fork)
features.push(() => {
  const c = startSession(CAFE, { model: MODELS[1] });
  c.turn("Write a README section about configuration.", 1);
  const mid = c.turn("Add an example config.", 0);
  c.sm.appendLabelChange(mid.userId, "example");
  c.sm.appendSessionInfo("README work");
  c.turn("Looks good.", 0);
  track(c);
  tick(3600, 7200);
  const fork = SessionManager.forkFrom(c.file, RU);
  const f = new Conv(fork, MODELS[1]);
  track(f);
  f.turn("(in the fork) translate the README section to Russian.", 0);
  fork.appendSessionInfo("README fork");
  // fork of the fork target back into yet another project, without continuing it
  tick(60, 600);
  track(SessionManager.forkFrom(f.file, SRV).getSessionFile());
});

// F8: createBranchedSession (labels re-chained; compaction pointing at a label re-pointed)
features.push(() => {
  const c = startSession(PIDX, { model: MODELS[0] });
  const t1 = c.turn("Let's add tab completion for the `pidx tree` command.", 1);
  c.sm.appendLabelChange(t1.userId, "completion");
  const lab = c.sm.appendLabelChange(t1.lastId, "done-1");
  const t2 = c.turn("Also for `pidx list`.", 0);
  tick(5, 10);
  c.sm.appendCompaction("Summary: completion for tree and list.", lab, 7777);
  const t3 = c.turn("And zsh support.", 1);
  c.sm.branch(t2.lastId);
  c.turn("Alternative: use clap_complete.", 0);
  const file1 = track(c);
  tick(60, 300);
  const newFile = c.sm.createBranchedSession(t3.lastId);
  if (!newFile || !existsSync(newFile)) throw new Error("createBranchedSession did not write a file");
  track(newFile);
  c.turn("(in the branched session) continue here.", 0);
  if (c.file === file1) throw new Error("expected the manager to move to the branched file");
});

// F9: identical `modified` across sessions (same last activity timestamp)
features.push(() => {
  const a = startSession(PIDX, { model: MODELS[0] });
  const start = clock.now();
  a.turn("Tie A: first turn", 1);
  a.turn("Tie A: second turn", 0);
  const T = clock.now() + 60_000;
  a.user("Tie A: last", { ts: T - 30_000 });
  a.assistant([{ type: "text", text: "Tie A done" }], { ts: T });
  track(a);
  let fileB;
  for (const [cwd, label] of [[PIDX, "B"], [EMOJI, "C"], [PIDX, "D"]]) {
    const b = startSession(cwd, { model: MODELS[0], at: start + rng.int(1000, 5000) });
    b.user(`Tie ${label}: only turn`);
    if (clock.now() >= T) throw new Error("tie session ran past T");
    b.assistant([{ type: "text", text: `Tie ${label} done` }], { ts: T });
    track(b);
    if (label === "B") fileB = b.file;
    clock.set(T + 120_000);
  }
  // A and B share mtime too (order by file name); C and D get their own mtimes
  forcedMtime.set(a.file, T + 5_000);
  forcedMtime.set(fileB, T + 5_000);
});

// F10: errors, aborts, model overrides, whitespace first message, NUL and lone surrogate in pi-written text
features.push(() => {
  const c = startSession(EMOJI, { model: MODELS[0], thinking: "xhigh" });
  c.user("   ");
  c.assistant([], { stopReason: "error", extra: { errorMessage: "529 overloaded" } });
  c.user("Bump the dependency and update the lockfile 🚀");
  c.assistant([{ type: "text", text: "Partial answer bef" }], { stopReason: "aborted" });
  tick(1, 5);
  c.sm.appendModelChange("openai", "gpt-5"); // overrides the model of the last assistant
  c.sm.appendThinkingLevelChange("minimal");
  const call = c.toolCall(TOOLS[1]);
  c.assistant([{ type: "text", text: "retrying with gpt-5" }, call], { model: MODELS[1] });
  c.toolResult(call, "binary\u0000output\u0001\u001f and a cut emoji: \ud83d", { isError: true });
  c.user("cut \ud83d in the user text too");
  c.assistant([{ type: "text", text: "Noted 👍 — done." }], { model: MODELS[1] });
  tick(1, 5);
  c.sm.appendModelChange("google", "gemini-2.5-pro");
  track(c);
});

// F11: sessions of a project whose folder becomes a symlink (see finishing steps)
features.push(() => {
  for (let k = 0; k < 2; k++) {
    const c = startSession(LINKED_CWD, { model: MODELS[k % 3] });
    c.turn(k === 0 ? "Linked project: first session" : "Linked project: second session", 1);
    track(c);
  }
});

// F12: forkFrom a hand-written v1 file (pi copies the id-less entries verbatim)
features.push(() => {
  nextStart += 3_600_000;
  clock.set(nextStart);
  const fork = SessionManager.forkFrom(join(ROOT, H, "v1-session.jsonl"), PIDX);
  track(fork.getSessionFile());
});

// F13: a longer session (size variety; many turns, a few branches)
features.push(() => {
  const c = startSession(SRV, { model: MODELS[2] });
  const ids = [];
  for (let k = 0; k < 8; k++) ids.push(c.turn(undefined, rng.int(0, 1)).lastId);
  c.sm.branch(ids[3]);
  for (let k = 0; k < 2; k++) c.turn(undefined, 1);
  c.sm.appendSessionInfo("Long session on /srv");
  track(c);
});

// F14: sessions with no custom name and only a model change + one exchange, no system message
features.push(() => {
  const c = startSession(JA, { model: MODELS[0], thinking: null, system: false });
  c.user("Short one.");
  c.assistant([{ type: "text", text: "Short answer." }]);
  track(c);
});

// ---------------------------------------------------------------------------------------
// filler sessions
// ---------------------------------------------------------------------------------------
function filler(i) {
  const cwd = rng.pick(PROJECTS);
  const c = startSession(cwd, { system: rng.chance(0.7) });
  let turns;
  let outBytes;
  if (sizes === "bench") {
    const r = rng.next();
    if (r < 0.6) turns = rng.int(1, 10);
    else if (r < 0.9) turns = rng.int(10, 60);
    else if (r < 0.99) turns = rng.int(60, 250);
    else turns = rng.int(250, 600);
    if (rng.chance(0.15)) outBytes = rng.int(2_000, 40_000);
    c.scale = turns > 60 ? 5 : 1;
  } else {
    turns = rng.int(1, 4);
  }
  const ids = [];
  for (let k = 0; k < turns; k++) {
    const t = c.turn(undefined, rng.int(0, sizes === "bench" ? 3 : 1), { outBytes });
    ids.push(t);
    if (k > 0 && rng.chance(0.08)) c.sm.branch(rng.pick(ids).lastId);
    if (rng.chance(0.05)) {
      tick(10, 30);
      c.sm.appendCompaction(`Filler summary ${i}.${k}`, rng.pick(ids).userId, rng.int(10_000, 150_000));
    }
    if (rng.chance(0.06)) c.sm.appendLabelChange(rng.pick(ids).userId, `mark-${k}`);
    if (rng.chance(0.04)) {
      tick(1, 5);
      c.sm.appendModelChange(rng.pick(MODELS).provider, rng.pick(MODELS).model);
    }
  }
  if (rng.chance(0.25)) c.sm.appendSessionInfo(`Filler ${i}: ${rng.pick(USER_ASKS).slice(0, 30)}`);
  track(c);
}

for (const f of features) f();
const nFillers = Math.max(0, nSessions - piFiles.length);
for (let i = 0; i < nFillers; i++) filler(i);

// ---------------------------------------------------------------------------------------
// finishing: parentSession paths, symlinked folder, mtimes
// ---------------------------------------------------------------------------------------
for (const f of piFiles) {
  const text = readFileSync(f, "utf8");
  const nl = text.indexOf("\n");
  const header = JSON.parse(text.slice(0, nl));
  if (typeof header.parentSession === "string" && header.parentSession.startsWith(OUT + "/")) {
    header.parentSession = FAKE_AGENT_DIR + header.parentSession.slice(OUT.length);
    writeFileSync(f, JSON.stringify(header) + text.slice(nl));
  }
}

// Per-file mtime: pi-written → just after the last entry was written (unless forced).
function lastEntryMs(file) {
  let max = Number.NEGATIVE_INFINITY;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const t = RealDate.parse(JSON.parse(line).timestamp);
    if (!Number.isNaN(t)) max = Math.max(max, t);
  }
  return max;
}
const mtimes = new Map();
for (const f of piFiles) mtimes.set(f, forcedMtime.get(f) ?? lastEntryMs(f) + rng.int(1, 2500));
for (const [f, m] of handFiles) mtimes.set(f, m);

// symlinked project folder: move the linked sessions into _targets/linked and link to it
const linkedDir = join(ROOT, "--home-user-linked--");
const targetDir = join(ROOT, "_targets", "linked");
mkdirSync(dirname(targetDir), { recursive: true });
renameSync(linkedDir, targetDir);
symlinkSync("_targets/linked", linkedDir);
for (const [f, m] of [...mtimes]) {
  if (f.startsWith(linkedDir + "/")) {
    mtimes.delete(f);
    mtimes.set(join(targetDir, basename(f)), m);
  }
}
symlinkSync("_targets/does-not-exist", join(ROOT, "--home-user-gone--")); // dangling: ignored

// every regular file must be in the manifest
const manifest = {};
(function walk(dir) {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isSymbolicLink()) continue;
    if (d.isDirectory()) walk(p);
    else if (d.isFile()) {
      const m = mtimes.get(p);
      if (m === undefined) throw new Error(`no mtime chosen for ${p}`);
      manifest[relSlash(ROOT, p)] = m;
    }
  }
})(ROOT);
const sortedManifest = Object.fromEntries(Object.entries(manifest).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
for (const [rel, m] of Object.entries(sortedManifest)) {
  const p = join(ROOT, rel);
  setMtime(p, m);
  const st = statSync(p);
  if (st.mtime.getTime() !== Math.round(m) || Math.abs(st.mtimeMs - m) > 0.001) throw new Error(`mtime did not stick on ${rel}: ${st.mtimeMs} vs ${m}`);
}
writeFileSync(join(OUT, "mtimes.json"), JSON.stringify(sortedManifest, null, 1) + "\n");

const nPi = piFiles.length;
const nHand = handFiles.size;
const bytes = Object.keys(sortedManifest).reduce((s, r) => s + statSync(join(ROOT, r)).size, 0);
console.error(
  `make-corpus: pi ${pi.piVersion}: ${nPi} pi-written + ${nHand} hand-written files (${(bytes / 1e6).toFixed(2)} MB) in ${ROOT}`,
);
