// pidx inside pi: /history, /sessions, /related, /files, the --pidx-entry flag (resume a
// session at one entry) and an optional recall notice at startup. Every answer comes from the
// pidx binary (`pidx ... --json`); failures are one line in pi's UI, never an exception.
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { homedir } from "node:os";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { ago, keyWords, oneLine, pidxJson, project, type Ran } from "./pidx.ts";
import { pickLine } from "./picker.ts";

type Hit = {
  path: string;
  sessionId?: string;
  cwd?: string;
  sessionName?: string | null;
  entryId?: string | null;
  role?: string | null;
  kind?: string;
  timestamp?: string | null;
  snippet?: { text?: string };
};
type Session = {
  path: string;
  id?: string;
  cwd?: string;
  name?: string | null;
  modified?: string | null;
  messageCount?: number;
  firstMessage?: string;
};
type Ctx = ExtensionContext | ExtensionCommandContext;

const SEARCH_LIMIT = "40";
const RESUME = "Open the session at this entry";
const QUOTE = "Insert a quoted excerpt into the editor";

function say(ctx: Ctx, text: string, level: "info" | "warning" | "error" = "info") {
  const line = `pidx: ${text}`;
  if (ctx.hasUI) ctx.ui.notify(line, level);
  else console.error(line);
}

/** pi's agent folder, as pi reads it. */
function agentDir(): string {
  const env = process.env.PI_CODING_AGENT_DIR;
  if (env) return resolve(env.replace(/^~(?=$|\/)/, homedir()));
  return join(homedir(), ".pi", "agent");
}

/** The recall notice is off unless settings.json says `"pidx": {"recall": true}` (or the flag). */
function recallOn(pi: ExtensionAPI): boolean {
  if (pi.getFlag("pidx-recall") === true) return true;
  try {
    const settings = JSON.parse(readFileSync(join(agentDir(), "settings.json"), "utf8"));
    return settings?.pidx?.recall === true;
  } catch {
    return false;
  }
}

async function choose<T>(ctx: Ctx, title: string, items: T[], label: (t: T) => string): Promise<T | undefined> {
  const i = await pickLine(ctx, title, items.map(label));
  return i === undefined ? undefined : items[i];
}

/** Moves the current session to `entryId` (pi's /tree: a user message goes back to the editor). */
async function goTo(ctx: ExtensionCommandContext, entryId: string): Promise<boolean> {
  if (!ctx.sessionManager.getEntry(entryId)) {
    say(ctx, `entry ${oneLine(entryId, 40)} is not in this session (changed since it was indexed?); staying at its last entry`, "warning");
    return false;
  }
  try {
    const r = await ctx.navigateTree(entryId);
    if (r.cancelled) say(ctx, "moving to that entry was cancelled", "warning");
    return !r.cancelled;
  } catch (e) {
    say(ctx, `cannot move to entry ${oneLine(entryId, 40)}: ${oneLine((e as Error)?.message ?? String(e), 160)}`, "error");
    return false;
  }
}

/** Opens `path` at `entryId` (or its last entry): the same session only moves. */
async function resumeAt(ctx: ExtensionCommandContext, path: string, entryId?: string | null) {
  if (!existsSync(path)) {
    say(ctx, `that session's file is gone (deleted or moved since it was indexed): ${oneLine(path, 160)}`, "error");
    return;
  }
  if (ctx.sessionManager.getSessionFile() === resolve(path)) {
    if (entryId) await goTo(ctx, entryId);
    return;
  }
  try {
    const r = await ctx.switchSession(resolve(path), {
      withSession: async (fresh) => {
        if (entryId) await goTo(fresh, entryId);
      },
    });
    if (r.cancelled) say(ctx, "switching sessions was cancelled", "warning");
  } catch (e) {
    say(ctx, `cannot open ${oneLine(path, 120)}: ${oneLine((e as Error)?.message ?? String(e), 160)}`, "error");
  }
}

function hitLabel(h: Hit): string {
  const who = h.role || h.kind || "";
  const where = project(h.cwd);
  return `${ago(h.timestamp)} ${where} ${who}: ${oneLine(h.snippet?.text, 90)}`.trim();
}

function sessionLabel(s: Session): string {
  const title = s.name || s.firstMessage || "(no messages)";
  return `${ago(s.modified)} ${project(s.cwd)} (${s.messageCount ?? 0}) ${oneLine(title, 80)}`.trim();
}

async function history(query: string, ctx: ExtensionCommandContext) {
  let q = query.trim();
  if (!q && ctx.hasUI) q = (await ctx.ui.input("pidx: search every session for", "words, \"a phrase\", prefix*"))?.trim() ?? "";
  if (!q) {
    say(ctx, "usage: /history WORDS (searches every project)", "warning");
    return;
  }
  const r = await pidxJson<Hit[]>(["search", "--json", "--all", "--limit", SEARCH_LIMIT, "--", q], ctx.cwd);
  if (!r.ok) return say(ctx, r.error, "error");
  const hits = r.value.filter((h) => h && h.path);
  if (hits.length === 0) return say(ctx, `nothing matches ${JSON.stringify(oneLine(q, 60))}`);
  const hit = await choose(ctx, `pidx: ${hits.length} hits for ${oneLine(q, 60)}`, hits, hitLabel);
  if (!hit) return;
  const action = await ctx.ui.select(oneLine(hit.snippet?.text, 120), [RESUME, QUOTE]);
  if (action === QUOTE) {
    const quoted = oneLine(hit.snippet?.text, 400);
    const source = `${project(hit.cwd)} ${hit.timestamp ?? ""}`.trim();
    const current = ctx.ui.getEditorText?.() ?? "";
    ctx.ui.setEditorText(`${current}${current ? "\n" : ""}> ${quoted}\n> (${source}, pidx)\n`);
  } else if (action === RESUME) {
    await resumeAt(ctx, hit.path, hit.entryId);
  }
}

async function sessions(filter: string, ctx: ExtensionCommandContext) {
  const args = ["list", "--all", "--json"];
  if (filter.trim()) args.push("--query", filter.trim());
  const r = await pidxJson<Session[]>(args, ctx.cwd);
  if (!r.ok) return say(ctx, r.error, "error");
  const list = r.value.filter((s) => s && s.path);
  if (list.length === 0) return say(ctx, filter.trim() ? `no session matches ${JSON.stringify(oneLine(filter, 60))}` : "the index has no sessions");
  const s = await choose(ctx, `pidx: ${list.length} sessions, every project (type to filter)`, list, sessionLabel);
  if (s) await resumeAt(ctx, s.path);
}

function firstUserText(ctx: Ctx): string {
  for (const e of ctx.sessionManager.getEntries() as any[]) {
    if (e?.type === "message" && e.message?.role === "user") {
      const c = e.message.content;
      return typeof c === "string" ? c : (c ?? []).filter((b: any) => b?.type === "text").map((b: any) => b.text).join(" ");
    }
  }
  return "";
}

type Line = { path: string; line: string };

/** Other sessions whose edits or writes changed the files this one changed (`pidx files`). */
async function sameFiles(ctx: ExtensionCommandContext, mine: string[]): Promise<Ran<Map<string, { id: string; name: string; file: string }[]>>> {
  const myId = ctx.sessionManager.getSessionId();
  const byFile = new Map<string, { id: string; name: string; file: string }[]>();
  for (const path of mine.slice(0, 15)) {
    const r = await pidxJson<any[]>(["files", path, "--kind", "edit,write", "--json", "--limit", "50"], ctx.cwd);
    if (!r.ok) return r;
    const others = new Map<string, { id: string; name: string; file: string }>();
    for (const row of r.value) {
      const id = row?.sessionId ?? row?.session_id;
      if (id && id !== myId && !others.has(id)) others.set(id, { id, name: row.name || row.session || id, file: path });
    }
    byFile.set(path, [...others.values()]);
  }
  return { ok: true, value: byFile, code: 0 };
}

/** Related: same files changed, same project (newest), sessions sharing words with this
 * one's first message; one line each. */
async function related(ctx: ExtensionCommandContext) {
  const me = ctx.sessionManager.getSessionFile();
  const lines: Line[] = [];
  const seen = new Set<string>(me ? [me] : []);
  const add = (path: string, line: string) => {
    if (!seen.has(path)) {
      seen.add(path);
      lines.push({ path, line });
    }
  };
  const mine = changedHere(ctx);
  if (mine.length > 0) {
    const files = await sameFiles(ctx, mine);
    if (!files.ok) say(ctx, `same files: unavailable (${files.error})`, "warning");
    else {
      const ids = new Set([...files.value.values()].flat().map((o) => o.id));
      const every = ids.size ? await pidxJson<Session[]>(["list", "--all", "--json"], ctx.cwd) : undefined;
      const byId = new Map((every?.ok ? every.value : []).map((s) => [s.id, s]));
      for (const [file, others] of files.value) {
        for (const o of others) {
          const s = byId.get(o.id);
          if (s) add(s.path, `same file ${oneLine(basename(file), 40)}, ${sessionLabel(s)}`);
        }
      }
    }
  }
  const here = await pidxJson<Session[]>(["list", "--json", "--cwd", ctx.cwd, "--limit", "8"], ctx.cwd);
  if (!here.ok) return say(ctx, here.error, "error");
  for (const s of here.value) add(s.path, `same project, ${sessionLabel(s)}`);
  const words = keyWords(firstUserText(ctx));
  if (words.length > 0) {
    const r = await pidxJson<Hit[]>(["search", "--json", "--all", "--limit", "60", "--", words.join(" OR ")], ctx.cwd);
    if (r.ok) for (const h of r.value) if (lines.length < 30) add(h.path, `shares words, ${hitLabel(h)}`);
  }
  if (lines.length === 0) return say(ctx, "no related sessions in the index");
  const pick = await choose(ctx, "pidx: related sessions", lines, (l) => l.line);
  if (pick) await resumeAt(ctx, pick.path);
}

/** Paths this session's edit and write calls named (pi's own tool-call arguments). */
function changedHere(ctx: Ctx): string[] {
  const paths = new Set<string>();
  for (const e of ctx.sessionManager.getEntries() as any[]) {
    if (e?.type !== "message" || e.message?.role !== "assistant") continue;
    for (const b of e.message.content ?? []) {
      if (b?.type === "toolCall" && (b.name === "edit" || b.name === "write") && typeof b.arguments?.path === "string") {
        paths.add(resolve(ctx.sessionManager.getCwd(), b.arguments.path));
      }
    }
  }
  return [...paths];
}

async function files(ctx: ExtensionCommandContext) {
  const mine = changedHere(ctx);
  if (mine.length === 0) return say(ctx, "this session has changed no files");
  const r = await sameFiles(ctx, mine);
  if (!r.ok) return say(ctx, `/files needs \`pidx files\`: ${r.error}`, "warning");
  const lines = [...r.value].map(([path, others]) => {
    const names = others.map((o) => oneLine(o.name, 30));
    return `${oneLine(path, 70)}: ${names.length ? `also ${names.length}: ${names.slice(0, 4).join(", ")}` : "no other session"}`;
  });
  await choose(ctx, `pidx: ${mine.length} files this session changed`, lines, (l) => l);
}

/** The one-line notice of recent sessions in this project (never sent to the model). */
async function recall(ctx: ExtensionContext) {
  const me = ctx.sessionManager.getSessionFile();
  const r = await pidxJson<Session[]>(["list", "--json", "--cwd", ctx.cwd, "--limit", "4", "--no-wait"], ctx.cwd);
  if (!r.ok) return say(ctx, r.error, "warning");
  const recent = r.value.filter((s) => s.path !== me).slice(0, 3);
  if (recent.length === 0) return;
  say(ctx, `recent here: ${recent.map((s) => `${oneLine(s.name || s.firstMessage, 40)} (${ago(s.modified)})`).join("; ")} (/related for more)`);
}

export default function pidxExtension(pi: ExtensionAPI) {
  pi.registerFlag("pidx-entry", {
    description: "pidx: with --session, open the session at this entry id instead of its last entry",
    type: "string",
  });
  pi.registerFlag("pidx-recall", {
    description: "pidx: at startup, one line naming this project's recent sessions",
    type: "boolean",
    default: false,
  });
  pi.registerCommand("history", {
    description: "pidx: search every session; open a hit at its entry or quote it",
    handler: history,
  });
  pi.registerCommand("sessions", {
    description: "pidx: every session of every project from the index; open one",
    handler: sessions,
  });
  pi.registerCommand("related", {
    description: "pidx: sessions related to this one (same project, shared words, same files)",
    handler: (_args, ctx) => related(ctx),
  });
  pi.registerCommand("files", {
    description: "pidx: files this session changed and the other sessions that changed them",
    handler: (_args, ctx) => files(ctx),
  });
  pi.registerCommand("pidx-goto", {
    description: "pidx: move this session to an entry id (what --pidx-entry runs at startup)",
    handler: async (args, ctx) => {
      const id = args.trim();
      if (!id) return say(ctx, "usage: /pidx-goto ENTRY_ID", "warning");
      await goTo(ctx, id);
    },
  });

  pi.on("session_start", async (event, ctx) => {
    // Only pi's own start: a later switch or reload keeps the flag, not its meaning.
    if (event.reason !== "startup") return;
    const entry = pi.getFlag("pidx-entry");
    if (typeof entry === "string" && entry.trim()) {
      if (!ctx.sessionManager.getEntry(entry.trim())) {
        say(ctx, `entry ${oneLine(entry, 40)} is not in this session; it opens at its last entry`, "warning");
      } else {
        // Moving the leaf needs a command context (pi forbids it from lifecycle handlers), so
        // it runs as a command once startup is done.
        setTimeout(() => {
          Promise.resolve(pi.sendUserMessage(`/pidx-goto ${entry.trim()}`, { expandPromptTemplates: true })).catch((e) =>
            say(ctx, `cannot move to entry ${oneLine(entry, 40)}: ${oneLine(String(e?.message ?? e), 120)}`, "error"),
          );
        }, 0);
      }
    }
    if (recallOn(pi)) {
      recall(ctx).catch(() => {});
    }
  });
}
