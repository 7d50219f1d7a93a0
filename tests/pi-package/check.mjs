// The pidx pi package in the real pi, headless over RPC (see run.sh for the set-up).
//
//   node check.mjs PI_CLI_JS PIDX_BIN REPO
//
// HOME and PI_CODING_AGENT_DIR must already point at a temp folder. pi writes the sessions
// itself (a fake provider answers, no network); then: /history finds a known entry and
// switching lands on it (get_state's sessionFile, get_entries' leafId), --pidx-entry resumes at
// an entry, /sessions lists what `pidx list --all` lists, errors stay one line, `pidx pi
// install` makes the package load without -e and registers `pidx mcp`, which answers
// tools/list through pi's own MCP client (`pi mcp list --json`) when this pi has one.
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, renameSync, existsSync, readFileSync, writeFileSync, unlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { startRegistry } from "./registry.mjs";

const [piCli, pidxBin, repo] = process.argv.slice(2);
const home = process.env.HOME;
const ext = join(repo, "integrations/pi");
const fake = join(repo, "tests/pi-package/fake-provider.ts");
const piVersion = execFileSync(process.execPath, [piCli, "--version"], { encoding: "utf8" }).trim();
let failures = 0;
let passes = 0;

function check(ok, what, detail = "") {
  if (ok) {
    passes++;
    console.log(`ok    ${what}`);
  } else {
    failures++;
    console.log(`FAIL  ${what}${detail ? `\n      ${detail}` : ""}`);
  }
}

/** A pi in RPC mode: JSONL split on LF only (pi's records may hold U+2028). */
class Pi {
  constructor(cwd, args, env = {}) {
    this.records = [];
    this.waiters = [];
    this.stderr = "";
    this.n = 0;
    this.proc = spawn(process.execPath, [piCli, "--mode", "rpc", ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let buf = Buffer.alloc(0);
    this.proc.stdout.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      let i;
      while ((i = buf.indexOf(10)) >= 0) {
        const line = buf.subarray(0, i).toString("utf8").replace(/\r$/, "");
        buf = buf.subarray(i + 1);
        if (line.trim()) this.push(JSON.parse(line));
      }
    });
    this.proc.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((r) => this.proc.on("close", r));
  }
  push(r) {
    this.records.push(r);
    for (const w of [...this.waiters]) if (w.test(r)) w.resolve(r);
  }
  /** The first record (seen or coming) that satisfies test. */
  next(test, what, ms = 30000) {
    const seen = this.records.find((r) => !r._used && test(r));
    if (seen) {
      seen._used = true;
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const w = {
        test,
        resolve: (r) => {
          r._used = true;
          clearTimeout(timer);
          this.waiters.splice(this.waiters.indexOf(w), 1);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`timed out waiting for ${what}; pi stderr: ${this.stderr.slice(-800)}`));
      }, ms);
      this.waiters.push(w);
    });
  }
  send(obj) {
    this.proc.stdin.write(JSON.stringify(obj) + "\n");
  }
  async command(type, fields = {}) {
    const id = `c${++this.n}`;
    this.send({ id, type, ...fields });
    const r = await this.next((r) => r.type === "response" && r.id === id, type);
    if (!r.success) throw new Error(`${type} failed: ${r.error}`);
    return r.data;
  }
  /** Sends a prompt without waiting for its response (commands may ask the UI first). */
  prompt(message) {
    const id = `c${++this.n}`;
    this.send({ id, type: "prompt", message });
    return this.next((r) => r.type === "response" && r.id === id, `the response to ${message}`, 60000);
  }
  ui(method, what) {
    return this.next((r) => r.type === "extension_ui_request" && r.method === method, what);
  }
  answer(req, fields) {
    this.send({ type: "extension_ui_response", id: req.id, ...fields });
  }
  async close() {
    this.proc.stdin.end();
    const t = setTimeout(() => this.proc.kill("SIGKILL"), 10000);
    await this.exited;
    clearTimeout(t);
  }
}

const base = (extra = []) => ["-e", fake, ...extra, "--provider", "pidx-fake", "--model", "fake-1"];
const withPkg = (extra = []) => base(["-e", ext, ...extra]);

async function talk(cwd, prompts) {
  const pi = new Pi(cwd, base());
  for (const p of prompts) {
    const settled = pi.next((r) => r.type === "agent_settled", `the answer to ${p}`);
    await pi.prompt(p);
    await settled;
  }
  const state = await pi.command("get_state");
  const { entries, leafId } = await pi.command("get_entries");
  await pi.close();
  return { file: state.sessionFile, entries, leafId };
}

function pidx(args) {
  return JSON.parse(execFileSync(pidxBin, args, { encoding: "utf8" }) || "[]");
}

/** Text as pi's UI gets it from the package: control characters as spaces, spaces collapsed. */
const flat = (t) => String(t).replace(/[\u0000-\u001f\u007f-\u009f]/g, " ").replace(/\s+/g, " ").trim();
const text = (e) => (e.message?.content ?? []).map((b) => b.text ?? "").join(" ");

async function main() {
  console.log(`pi ${piVersion} (node ${process.version})`);
  const projA = join(home, "projects/parser");
  const projB = join(home, "projects/deploy");
  mkdirSync(projA, { recursive: true });
  mkdirSync(projB, { recursive: true });

  // Sessions written by pi itself.
  const a = await talk(projA, ["why do flamingo quotes break the parser", "and the zebra tokens"]);
  const b = await talk(projB, ["set up the walrus deploy pipeline"]);
  const c = await talk(projA, ["the parser fails on nested quotes again", "write notes.txt"]);
  const d = await talk(projB, ["write ../parser/notes.txt"]);
  check(existsSync(join(projA, "notes.txt")) && d.file, "the fake model's write calls went through pi's write tool");
  await talk(projB, ["octopus \u001b]0;retitled\u0007 and \u001b[31mred\u001b[0m escapes"]);
  const answerA1 = a.entries.find((e) => e.message?.role === "assistant" && text(e).includes("flamingo"));
  check(a.file && answerA1 && a.leafId !== answerA1.id, "pi wrote a two-turn session (its first answer is not its leaf)");
  execFileSync(pidxBin, ["sync"], { stdio: "ignore" });

  // /history: the hit, then "open at this entry".
  let pi = new Pi(projB, withPkg());
  const cmds = await pi.command("get_commands");
  const names = cmds.commands.map((c) => c.name);
  check(["history", "sessions", "related", "files"].every((n) => names.includes(n)), "the extension's commands are registered", names.join(" "));
  check(names.includes("skill:pidx"), "the repository's skill loads through the package manifest", names.join(" "));
  let done = pi.prompt("/history flamingo");
  let sel = await pi.ui("select", "the /history hits");
  const hitOption = sel.options.find((o) => o.includes("assistant:") && o.includes("fake answer"));
  check(!!hitOption, "/history lists the assistant entry holding the word", JSON.stringify(sel.options));
  pi.answer(sel, { value: hitOption });
  sel = await pi.ui("select", "what to do with the hit");
  pi.answer(sel, { value: sel.options.find((o) => o.startsWith("Open")) });
  await done;
  let state = await pi.command("get_state");
  let leaf = (await pi.command("get_entries")).leafId;
  check(state.sessionFile === a.file, "choosing the hit switched pi to its session", `${state.sessionFile} != ${a.file}`);
  check(leaf === answerA1.id, "and pi's leaf is the hit's entry", `${leaf} != ${answerA1.id}`);

  // The quote action puts the excerpt in the editor.
  done = pi.prompt("/history walrus");
  sel = await pi.ui("select", "the walrus hits");
  pi.answer(sel, { value: sel.options[0] });
  sel = await pi.ui("select", "what to do with the walrus hit");
  pi.answer(sel, { value: sel.options.find((o) => o.startsWith("Insert")) });
  const editor = await pi.ui("set_editor_text", "the quoted excerpt");
  await done;
  check(/^> .*walrus/.test(editor.text), "or quoting it fills the editor", JSON.stringify(editor.text));

  // Escape sequences from a transcript never reach pi's UI.
  done = pi.prompt("/history octopus");
  sel = await pi.ui("select", "the octopus hits");
  check(sel.options.length > 0 && sel.options.every((o) => !/[\u0000-\u001f\u007f-\u009f]/.test(o)), "transcript text reaches pi's UI without control characters", JSON.stringify(sel.options));
  pi.answer(sel, { cancelled: true });
  await done;

  // /sessions lists what `pidx list --all` lists, in its order.
  const listed = pidx(["list", "--all", "--json"]);
  done = pi.prompt("/sessions");
  sel = await pi.ui("select", "the /sessions list");
  const same =
    sel.options.length === listed.length &&
    listed.every((s, i) => sel.options[i].includes(flat(s.name || s.firstMessage).slice(0, 40)));
  check(same && listed.length >= 2, `/sessions lists the ${listed.length} sessions of \`pidx list --all\`, in order`, JSON.stringify({ options: sel.options, listed: listed.map((s) => s.firstMessage) }));
  pi.answer(sel, { cancelled: true });
  await done;

  // A session gone since the search: one line, pi goes on.
  done = pi.prompt("/history zebra");
  sel = await pi.ui("select", "the zebra hits");
  renameSync(a.file, a.file + ".away");
  pi.answer(sel, { value: sel.options[0] });
  sel = await pi.ui("select", "what to do with the zebra hit");
  pi.answer(sel, { value: sel.options.find((o) => o.startsWith("Open")) });
  let note = await pi.ui("notify", "the gone notice");
  await done;
  renameSync(a.file + ".away", a.file);
  check(/file is gone/.test(note.message) && !note.message.includes("\n"), "a session deleted since the search is one line", note.message);
  state = await pi.command("get_state");
  check(state.sessionFile === a.file, "and pi stays where it was");
  await pi.close();

  // No pidx: one line, pi answers the next command.
  pi = new Pi(projB, withPkg(), { PIDX_BIN: join(home, "no-such-pidx") });
  done = pi.prompt("/sessions");
  note = await pi.ui("notify", "the no-pidx notice");
  await done;
  check(/pidx is not on PATH/.test(note.message), "no pidx binary is one line in pi's UI", note.message);
  check(!!(await pi.command("get_state")), "and pi is still running");
  await pi.close();

  // An index pidx refuses (here: a file that is not one): pidx's own line, pi goes on.
  const badDb = join(home, "not-an-index.db");
  writeFileSync(badDb, "not an SQLite database\n");
  pi = new Pi(projB, withPkg(), { PIDX_DB: badDb });
  done = pi.prompt("/history walrus");
  note = await pi.ui("notify", "the bad index notice");
  await done;
  check(/not a pidx index/.test(note.message) && !note.message.includes("\n"), "an index pidx cannot use is one line in pi's UI", note.message);
  check(!!(await pi.command("get_state")), "and pi is still running");
  await pi.close();

  // --pidx-entry: pi opens the session at that entry, not its last.
  pi = new Pi(projA, withPkg(["--session", a.file, "--pidx-entry", answerA1.id]));
  let moved = false;
  for (let i = 0; i < 100 && !moved; i++) {
    moved = (await pi.command("get_entries")).leafId === answerA1.id;
    if (!moved) await new Promise((r) => setTimeout(r, 100));
  }
  state = await pi.command("get_state");
  check(moved && state.sessionFile === a.file, "--pidx-entry resumes the session at the entry");
  // Switching away later leaves the flag behind: no second move, no notice.
  done = pi.prompt("/history walrus");
  sel = await pi.ui("select", "the walrus hits, after --pidx-entry");
  pi.answer(sel, { value: sel.options[0] });
  sel = await pi.ui("select", "what to do with it");
  pi.answer(sel, { value: sel.options.find((o) => o.startsWith("Open")) });
  await done;
  state = await pi.command("get_state");
  await new Promise((r) => setTimeout(r, 500));
  const notices = pi.records.filter((r) => r.method === "notify").map((r) => r.message);
  check(state.sessionFile === b.file && notices.length === 0, "a later switch is not moved to the flag's entry", JSON.stringify(notices));
  await pi.close();
  pi = new Pi(projA, withPkg(["--session", a.file, "--pidx-entry", "nope1234"]));
  note = await pi.ui("notify", "the unknown entry notice");
  leaf = (await pi.command("get_entries")).leafId;
  check(/not in this session/.test(note.message) && leaf === a.leafId, "an unknown --pidx-entry is one line and the session opens at its last entry", note.message);
  await pi.close();

  // The recall notice, asked for with --pidx-recall: one line in the UI, not in the session.
  pi = new Pi(projA, withPkg(["--pidx-recall"]));
  note = await pi.ui("notify", "the recall notice");
  const inSession = JSON.stringify((await pi.command("get_entries")).entries).includes("recent here");
  check(/^pidx: recent here: .*(nested quotes|flamingo)/.test(note.message) && !note.message.includes("\n") && !inSession, "--pidx-recall names this project's recent sessions in one line, outside the session", note.message);
  await pi.close();
  // Off by default; on for every run with `"pidx": {"recall": true}` in pi's settings.
  pi = new Pi(projA, withPkg());
  await pi.command("get_state");
  await new Promise((r) => setTimeout(r, 1500));
  const quiet = !pi.records.some((r) => r.type === "extension_ui_request" && r.method === "notify");
  await pi.close();
  const settingsFile = join(process.env.PI_CODING_AGENT_DIR, "settings.json");
  writeFileSync(settingsFile, JSON.stringify({ pidx: { recall: true } }));
  pi = new Pi(projA, withPkg());
  note = await pi.ui("notify", "the recall notice from settings");
  await pi.close();
  unlinkSync(settingsFile);
  check(quiet && /^pidx: recent here: /.test(note.message), "recall is off by default and on with the setting", note.message);

  // /related from the flamingo session: the other parser session (same project, shared
  // words), one line each; the walrus session shares neither.
  pi = new Pi(projA, withPkg(["--session", a.file]));
  done = pi.prompt("/related");
  const related = [];
  for (;;) {
    const r = await pi.next((r) => r.type === "extension_ui_request" && (r.method === "select" || r.method === "notify"), "the /related answer");
    related.push(r);
    if (r.method === "select") break;
  }
  sel = related[related.length - 1];
  check(
    sel.options.some((o) => o.includes("same project") && o.includes("nested quotes")) && !sel.options.some((o) => o.includes("walrus")),
    "/related lists the other session of the project, one line each, and not an unrelated one",
    JSON.stringify(sel.options),
  );
  const filesNote = related.find((r) => r.method === "notify");
  if (filesNote) console.log(`note  /related: ${filesNote.message}`);
  pi.answer(sel, { cancelled: true });
  await done;
  await pi.close();

  // /files in the session that wrote notes.txt: the files, or one line when this pidx has no
  // \`pidx files\` (it comes with file history).
  pi = new Pi(projA, withPkg(["--session", c.file]));
  done = pi.prompt("/files");
  const f = await pi.next((r) => r.type === "extension_ui_request" && (r.method === "select" || r.method === "notify"), "the /files answer");
  const withFiles = f.method === "select";
  if (withFiles) {
    check(f.options.some((o) => o.includes("notes.txt") && o.includes("also 1")), "/files lists the file this session wrote and the other session that wrote it", JSON.stringify(f.options));
    pi.answer(f, { cancelled: true });
  } else {
    check(/pidx files/.test(f.message) && !f.message.includes("\n"), "/files without `pidx files` is one line", f.message);
  }
  await done;
  // /related there: the other project's session that wrote the same file comes first.
  done = pi.prompt("/related");
  const rel = [];
  for (;;) {
    const r = await pi.next((r) => r.type === "extension_ui_request" && (r.method === "select" || r.method === "notify"), "the /related answer");
    rel.push(r);
    if (r.method === "select") break;
  }
  const relSel = rel[rel.length - 1];
  if (withFiles) {
    check(/^ *1\. same file notes\.txt, .*write \.\.\/parser\/notes\.txt/.test(relSel.options[0] ?? ""), "/related puts the session that changed the same file first", JSON.stringify(relSel.options));
  } else {
    const n = rel.find((r) => r.method === "notify");
    check(n && /same files: unavailable/.test(n.message) && !n.message.includes("\n"), "/related without `pidx files` says so in one line and lists the rest", n?.message);
  }
  pi.answer(relSel, { cancelled: true });
  await done;
  check(!!(await pi.command("get_state")), "and pi is still running");
  await pi.close();

  // `pidx pi install`: the copy built into pidx, installed with pi's own command; pi then
  // loads it (commands and skill) without -e.
  execFileSync(pidxBin, ["pi", "install", "--no-mcp"], { stdio: "ignore" });
  check(execFileSync(process.execPath, [piCli, "list"], { encoding: "utf8" }).includes("pi-package"), "`pidx pi install` puts its built-in copy in `pi list`");
  pi = new Pi(projB, base());
  const builtIn = (await pi.command("get_commands")).commands.map((c) => c.name);
  check(["history", "sessions", "related", "files", "skill:pidx"].every((n) => builtIn.includes(n)), "pi loads the built-in copy: its commands and skill", builtIn.join(" "));
  await pi.close();
  execFileSync(pidxBin, ["pi", "uninstall"], { stdio: "ignore" });

  // The checkout's package (--from), and the MCP server.
  const out = execFileSync(pidxBin, ["pi", "install", "--from", ext], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const listedPkgs = execFileSync(process.execPath, [piCli, "list"], { encoding: "utf8" });
  check(listedPkgs.includes("integrations/pi"), "`pidx pi install` put the package in `pi list`", listedPkgs + out);
  pi = new Pi(projB, base());
  const installedNames = (await pi.command("get_commands")).commands.map((c) => c.name);
  check(installedNames.includes("history") && installedNames.includes("skill:pidx"), "an installed pi loads the package without -e", installedNames.join(" "));
  await pi.close();
  const [maj, min] = piVersion.split(".").map(Number);
  if (maj > 0 || min >= 99) {
    let mcp;
    try {
      mcp = execFileSync(process.execPath, [piCli, "mcp", "list", "--json"], { encoding: "utf8" });
    } catch (e) {
      mcp = String(e.stdout ?? "") + String(e.stderr ?? "");
    }
    const tools = JSON.stringify(mcp);
    check(tools.includes("search_sessions") && tools.includes("list_sessions"), "the `pidx mcp` server registered by `pidx pi install` answers tools/list through pi's MCP client", mcp.slice(0, 1500));
  } else {
    console.log(`note  pi ${piVersion} has no MCP client (\`pi mcp\` came in 0.99.0): the MCP check runs with the newer pi`);
  }
  execFileSync(pidxBin, ["pi", "uninstall"], { stdio: "ignore" });
  const after = execFileSync(process.execPath, [piCli, "list"], { encoding: "utf8" });
  const mcpFile = join(process.env.PI_CODING_AGENT_DIR, "mcp.json");
  const mcpLeft = existsSync(mcpFile) && readFileSync(mcpFile, "utf8").includes('"pidx"');
  check(!after.includes("integrations/pi") && !mcpLeft, "`pidx pi uninstall` removes the package and the MCP server", after);

  // The npm package (packaging/build.sh's tarballs), installed as a user would once it is
  // published: `pi install npm:pidx` from a registry holding the packed tarballs, with no pidx
  // on PATH and no PIDX_BIN, so /history can only answer through the binary npm brought.
  const artifacts = process.env.PIDX_PACKAGE_OUT;
  if (!artifacts) {
    console.log("SKIPPED: the npm package in pi (`pi install npm:pidx`, /history through its binary): PIDX_PACKAGE_OUT is not set (tests/packaging/run.sh makes the tarballs)");
    return;
  }
  const registry = await startRegistry(artifacts);
  try {
    await npmPackage(registry, projB, a, answerA1);
  } finally {
    await registry.close();
  }
}

/** Runs a command without blocking this process (the registry answers from it). */
function run(cmd, args, env) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => resolve({ code, out }));
  });
}

async function npmPackage(registry, cwd, a, hit) {
  const noPidx = process.env.PATH.split(delimiter)
    .filter((d) => d && !existsSync(join(d, "pidx")))
    .join(delimiter);
  const env = { PATH: noPidx, PIDX_BIN: "", npm_config_registry: registry.url, npm_config_audit: "false", npm_config_fund: "false" };
  const full = { ...process.env, ...env };
  const installed = await run(process.execPath, [piCli, "install", "npm:pidx"], full);
  check(installed.code === 0, `\`pi install npm:pidx\` installs the packed package (registry serving ${registry.names.join(", ")})`, installed.out.slice(-1500));
  const listed = await run(process.execPath, [piCli, "list"], full);
  check(listed.out.includes("npm:pidx"), "`pi list` shows npm:pidx", listed.out);
  const binary = join(process.env.PI_CODING_AGENT_DIR, "npm/node_modules/@pidx/linux-x64/bin/pidx");
  check(existsSync(binary), "npm installed the platform package beside it, with the binary", binary);
  const pi = new Pi(cwd, base(), env);
  const names = (await pi.command("get_commands")).commands.map((c) => c.name);
  check(["history", "sessions", "related", "files", "skill:pidx"].every((n) => names.includes(n)), "pi loads the npm package without -e: /history, /sessions, /related, /files and the skill", names.join(" "));
  const done = pi.prompt("/history flamingo");
  let sel = await pi.ui("select", "the /history hits from the npm-installed pidx");
  const option = sel.options.find((o) => o.includes("assistant:") && o.includes("fake answer"));
  check(!!option, "/history answers through the npm package's own binary (no pidx on PATH, no PIDX_BIN)", JSON.stringify(sel.options));
  pi.answer(sel, { value: option ?? sel.options[0] });
  sel = await pi.ui("select", "what to do with the hit");
  pi.answer(sel, { value: sel.options.find((o) => o.startsWith("Open")) });
  await done;
  const state = await pi.command("get_state");
  const leaf = (await pi.command("get_entries")).leafId;
  check(state.sessionFile === a.file && leaf === hit.id, "and opening the hit lands on its entry", `${state.sessionFile} ${leaf}`);
  await pi.close();
  const removed = await run(process.execPath, [piCli, "remove", "npm:pidx"], full);
  const left = await run(process.execPath, [piCli, "list"], full);
  check(removed.code === 0 && !left.out.includes("npm:pidx"), "`pi remove npm:pidx` removes it", removed.out + left.out);
}

main()
  .catch((e) => {
    failures++;
    console.log(`FAIL  ${e.stack ?? e}`);
  })
  .finally(() => {
    console.log(`pi ${piVersion}: ${passes} passed, ${failures} failed`);
    process.exit(failures ? 1 : 0);
  });
