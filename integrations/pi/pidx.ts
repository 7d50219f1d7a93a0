// Running the pidx binary and shaping what it prints for pi's UI. Everything here calls
// `pidx ... --json`; nothing re-implements an index query.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";

/**
 * The binary: `$PIDX_BIN` (tests, unusual installs), else the one the npm package `pidx`
 * brought (`pi install npm:pidx`: its platform package, found as its `pidx` command finds it),
 * else `pidx` on PATH.
 */
export function pidxBin(): string {
  if (process.env.PIDX_BIN) return process.env.PIDX_BIN;
  if (bundled === undefined) bundled = bundledBinary();
  return bundled ?? "pidx";
}

let bundled: string | null | undefined;

/** The npm package's binary, or null outside that package (a checkout, `pidx pi install`). */
function bundledBinary(): string | null {
  try {
    const require = createRequire(import.meta.url);
    const { platformPackage, binaryIn } = require("../bin/platform.js");
    const chosen = platformPackage();
    if (!chosen.name) return null;
    const bin = binaryIn(dirname(require.resolve(`${chosen.name}/package.json`)));
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

export type Ran<T> = { ok: true; value: T; code: number } | { ok: false; error: string };

const TIMEOUT_MS = 120_000;

/**
 * Runs `pidx ARGS` and parses its stdout as JSON. Exit 1 is pidx's "nothing found" (its JSON
 * is still printed); any other failure becomes one line for pi's UI, never an exception.
 */
export function pidxJson<T>(args: string[], cwd?: string): Promise<Ran<T>> {
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    let settled = false;
    const done = (r: Ran<T>) => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    let child;
    try {
      child = spawn(pidxBin(), args, {
        cwd,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, NO_COLOR: "1" },
      });
    } catch (e) {
      done({ ok: false, error: notFound(e) });
      return;
    }
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      done({ ok: false, error: `pidx ${args[0]} took longer than ${TIMEOUT_MS / 1000}s; stopped it` });
    }, TIMEOUT_MS);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (out += d));
    child.stderr.on("data", (d: string) => (err += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      done({ ok: false, error: notFound(e) });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0 && code !== 1 && code !== 3) {
        done({ ok: false, error: failure(args, err, code) });
        return;
      }
      try {
        const parsed = JSON.parse(out.trim() || "[]");
        // `--no-wait` answers from an index still catching up: `{complete: false, results}`.
        const value = parsed && !Array.isArray(parsed) && "results" in parsed ? parsed.results : parsed;
        done({ ok: true, value: value as T, code: code ?? 0 });
      } catch {
        done({ ok: false, error: failure(args, err || "its output is not JSON", code) });
      }
    });
  });
}

function notFound(e: unknown): string {
  const code = (e as { code?: string })?.code;
  if (code === "ENOENT") {
    return `pidx is not on PATH (install it, or set PIDX_BIN to its path)`;
  }
  return `cannot run pidx: ${oneLine(String((e as Error)?.message ?? e), 160)}`;
}

/** One line for a failed command: pidx's own first error line, or what clap said. */
function failure(args: string[], stderr: string, code: number | null): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter(Boolean);
  const first = lines.find((l) => /^(pidx: |error: )/.test(l)) ?? lines[0] ?? `exit ${code}`;
  if (/unrecognized subcommand/.test(first)) {
    return `this pidx has no \`pidx ${args[0]}\` (a newer pidx has it)`;
  }
  if (/unexpected argument/.test(first)) {
    return `this pidx is older than the pi package (\`pidx ${args[0]}\`: ${oneLine(first.replace(/^error: /, ""), 100)})`;
  }
  return oneLine(first.replace(/^pidx: /, "").replace(/^error: /, ""), 200);
}

/**
 * Transcript text for one line of pi's UI: control characters (escape sequences included)
 * become spaces, runs of space collapse, long text is cut with an ellipsis.
 */
export function oneLine(text: string | null | undefined, max: number): string {
  const flat = String(text ?? "")
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  const chars = Array.from(flat);
  return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : flat;
}

/** "3h ago" style, from an ISO time or epoch milliseconds. */
export function ago(when: string | number | null | undefined, now = Date.now()): string {
  if (when === null || when === undefined || when === "") return "";
  const t = typeof when === "number" ? when : Date.parse(when);
  if (!Number.isFinite(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 90) return "just now";
  const m = Math.round(s / 60);
  if (m < 90) return `${m}m ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h}h ago`;
  const d = Math.round(h / 24);
  if (d < 60) return `${d}d ago`;
  return new Date(t).toISOString().slice(0, 10);
}

/** The last folder of a project path (the whole path is in the session list anyway). */
export function project(cwd: string | null | undefined): string {
  const parts = String(cwd ?? "").split(/[\\/]/).filter(Boolean);
  return oneLine(parts[parts.length - 1] ?? "", 30);
}

/** Words of a first message worth searching for: no stop words, no short ones, at most 8. */
export function keyWords(text: string): string[] {
  const stop = new Set(
    "the and for with that this from have what when where which into your about there would could should please make sure then than them they their were will just also like some more only over such here been being does done want need".split(
      " ",
    ),
  );
  const seen = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}_]{4,}/gu) ?? []) {
    if (!stop.has(w)) seen.add(w);
    if (seen.size >= 8) break;
  }
  return [...seen];
}
