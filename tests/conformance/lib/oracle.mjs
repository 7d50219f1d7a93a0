// Shared helpers for the pi conformance scripts.
//
// - locateSessionManager(): where pi's session-manager.js is (env PIDX_PI_SM, else
//   ${PIDX_PI_DIR:-<repo>/.oracle}/node_modules/...), checked to exist.
// - installDeterminism(seed): replaces the clock (Date, Date.now) and the randomness pi
//   uses for ids (crypto.randomUUID for entry ids, crypto.getRandomValues for UUIDv7
//   session ids) with seeded, controllable versions. Must run BEFORE pi is imported.
//   pi's code is untouched; only its inputs (clock, random source) are controlled, so
//   the corpus and the goldens are reproducible byte for byte.
// - ensureCollationLocale(): re-executes the script under LC_ALL=en_US.UTF-8 so
//   String#localeCompare (used by pi to order file names) does not depend on the
//   caller's locale.
import { spawnSync } from "node:child_process";
import { existsSync, utimesSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const PI_PACKAGE = "@earendil-works/pi-coding-agent";
export const RealDate = globalThis.Date;

export function locateSessionManager() {
  const candidates = [];
  if (process.env.PIDX_PI_SM) candidates.push(process.env.PIDX_PI_SM);
  const prefix = process.env.PIDX_PI_DIR || join(REPO, ".oracle");
  candidates.push(join(prefix, "node_modules", PI_PACKAGE, "dist/core/session-manager.js"));
  for (const c of candidates) if (existsSync(c)) return resolve(c);
  throw new Error(
    `pi's session-manager.js not found (tried ${candidates.join(", ")}); run tests/conformance/setup-pi.sh ` +
      "and pass its output in PIDX_PI_SM",
  );
}

export async function importPi() {
  const path = locateSessionManager();
  const mod = await import(pathToFileURL(path).href);
  const pkgJson = join(dirname(path), "../../package.json");
  const version = existsSync(pkgJson) ? require(pkgJson).version : "unknown";
  return { ...mod, piVersion: version, sessionManagerPath: path };
}

/** Small seeded PRNG (splitmix32-ish / mulberry32). */
export function makeRng(seed) {
  let a = (Number(seed) >>> 0) || 0x9e3779b9;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    bytes(n) {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
      return out;
    },
  };
}

export function installDeterminism(seed, startMs) {
  let rng = makeRng(seed);
  let now = startMs;
  const clock = {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
      return now;
    },
  };
  class FakeDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(now);
      else super(...args);
    }
    static now() {
      return now;
    }
  }
  globalThis.Date = FakeDate;

  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const cryptoCjs = require("node:crypto");
  cryptoCjs.randomUUID = () => {
    const b = rng.bytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = hex(b);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  syncBuiltinESMExports(); // updates `import { randomUUID } from "crypto"` bindings
  const realGetRandomValues = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
  globalThis.crypto.getRandomValues = (arr) => {
    if (!(arr instanceof Uint8Array)) return realGetRandomValues(arr);
    arr.set(rng.bytes(arr.length));
    return arr;
  };
  // reseed(s): restart the id stream (pi-answers reseeds per file so one file's random
  // ids do not depend on which files were processed before it).
  const reseed = (s) => {
    rng = makeRng(s);
  };
  return { clock, reseed };
}

/** Stable 32-bit hash of a string (FNV-1a), for per-file seeds. */
export function hash32(str) {
  let h = 0x811c9dc5;
  for (const ch of Buffer.from(str, "utf8")) {
    h ^= ch;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function ensureCollationLocale() {
  const want = "en_US.UTF-8";
  if (process.env.LC_ALL === want || process.env.PIDX_LOCALE_REEXEC) return;
  const r = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, LC_ALL: want, LANG: want, PIDX_LOCALE_REEXEC: "1" },
  });
  process.exit(r.status ?? 1);
}

/** Relative path with forward slashes. */
export function relSlash(root, p) {
  const rel = p.startsWith(root + "/") ? p.slice(root.length + 1) : p;
  return rel.split("\\").join("/");
}

/** Sets a file's atime and mtime to `ms` epoch milliseconds, fractions included (a Date would
 *  drop them: the corpus has a file whose mtime is a fraction of a millisecond past a whole one). */
export function setMtime(path, ms) {
  utimesSync(path, ms / 1000, ms / 1000);
}
