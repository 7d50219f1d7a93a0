// Which platform package holds the binary for this machine: shared by the `pidx` launcher and
// the pi extension (pi/pidx.ts finds the binary through it). The supported platforms are this
// package's optionalDependencies, so the list lives in one place: package.json.
"use strict";
const { join } = require("node:path");
const manifest = require("../package.json");

const SCOPE = "@pidx/";

/** glibc or musl, on Linux (the prebuilt Linux binaries need glibc). */
function libc() {
  if (process.platform !== "linux") return "";
  try {
    const header = process.report.getReport().header;
    return header.glibcVersionRuntime ? "glibc" : "musl";
  } catch {
    return "glibc";
  }
}

/** `{key, name}` of this machine's platform package, or `{key, error}` when none is built. */
function platformPackage() {
  const key = `${process.platform}-${process.arch}`;
  const known = Object.keys(manifest.optionalDependencies || {})
    .filter((n) => n.startsWith(SCOPE))
    .map((n) => n.slice(SCOPE.length));
  if (!known.includes(key)) {
    return {
      key,
      error:
        `no prebuilt pidx for this platform (${key}); prebuilt: ${known.join(", ")}. ` +
        `Build it from source instead: cargo install --locked --path . in a checkout (docs/releasing.md)`,
    };
  }
  if (libc() === "musl") {
    return {
      key,
      error:
        `no prebuilt pidx for this platform (${key} with musl libc; the prebuilt Linux binaries need glibc). ` +
        `Build it from source instead: cargo install --locked --path . in a checkout`,
    };
  }
  return { key, name: SCOPE + key };
}

/** The binary inside a platform package's folder. */
function binaryIn(dir) {
  return join(dir, "bin", process.platform === "win32" ? "pidx.exe" : "pidx");
}

module.exports = { platformPackage, binaryIn };
