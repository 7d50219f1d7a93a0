// Helpers for driving OpenClaw's own session-store code from the pidx test scripts.
//
// - locateOpenClaw(): the installed `openclaw` package folder (env PIDX_OC, checked).
// - accessor(): OpenClaw's session accessor barrel (dist/session-accessor-<hash>.mjs, the one
//   module that re-exports the SQLite session API under its real names), found by content so a
//   new build hash does not break it.
// - ocFn(name): a function defined in one of dist/'s bundles and exported under a minified
//   alias, found by its source name.
// - agentDb(stateDir, agentId): where OpenClaw keeps an agent's SQLite store.
// Only OpenClaw's inputs are chosen here (state dir, session keys, messages); its code runs
// unmodified.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export function locateOpenClaw() {
  const dir = process.env.PIDX_OC;
  if (!dir || !existsSync(join(dir, "package.json"))) {
    throw new Error(`openclaw package not found (PIDX_OC=${dir ?? ""}); run tests/openclaw/setup.sh`);
  }
  return dir;
}

export function openClawVersion() {
  return JSON.parse(readFileSync(join(locateOpenClaw(), "package.json"), "utf8")).version;
}

export function agentDb(stateDir, agentId) {
  return join(stateDir, "agents", agentId, "agent", "openclaw-agent.sqlite");
}

let barrel;
export async function accessor() {
  if (barrel) return barrel;
  const dist = join(locateOpenClaw(), "dist");
  for (const f of readdirSync(dist)) {
    if (!/^session-accessor-[A-Za-z0-9_-]+\.mjs$/.test(f)) continue;
    const src = readFileSync(join(dist, f), "utf8");
    if (/export \{[^}]*\bappendTranscriptMessages,/.test(src)) {
      barrel = await import(pathToFileURL(join(dist, f)).href);
      return barrel;
    }
  }
  throw new Error("openclaw's session accessor module was not found in dist/");
}

export async function ocFn(name, prefix = "") {
  const dist = join(locateOpenClaw(), "dist");
  for (const f of readdirSync(dist)) {
    if (!f.endsWith(".mjs") || !f.startsWith(prefix)) continue;
    const src = readFileSync(join(dist, f), "utf8");
    const m = src.match(new RegExp(`export \\{[^}]*\\b${name} as (\\w+)`));
    if (m && new RegExp(`(function|const|class) ${name}\\b`).test(src)) {
      const mod = await import(pathToFileURL(join(dist, f)).href);
      return mod[m[1]];
    }
  }
  throw new Error(`openclaw's ${name} was not found in dist/`);
}
