// Writes the third-party licences of what the pidx binary links, from `cargo metadata` (the
// crates the `pidx` package reaches through normal dependencies on the target, as Cargo.lock
// pins them) and the licence files each crate ships in its source:
//
//   node packaging/third-party-licenses.mjs TARGET > THIRD-PARTY-LICENSES.txt
//
// Build-only dependencies (build scripts' helpers) are left out: none of their code is in the
// binary. Proc-macro crates are kept, since code they generate is. Identical licence texts are
// printed once, with every crate that ships them. Exits 1, naming them, when a crate has neither
// a licence file nor a `license` field: the list would be incomplete.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

const target = process.argv[2];
if (!target) {
  console.error("usage: node packaging/third-party-licenses.mjs TARGET");
  process.exit(2);
}
const meta = JSON.parse(
  execFileSync(
    "cargo",
    ["metadata", "--format-version", "1", "--locked", "--filter-platform", target],
    { encoding: "utf8", maxBuffer: 256 << 20 },
  ),
);
const packages = new Map(meta.packages.map((p) => [p.id, p]));
const nodes = new Map(meta.resolve.nodes.map((n) => [n.id, n]));
const workspace = new Set(meta.workspace_members);
const root = meta.packages.find((p) => p.name === "pidx" && workspace.has(p.id));

// Every package the binary's code comes from: normal dependencies, transitively.
const seen = new Set([root.id]);
const queue = [root.id];
while (queue.length) {
  const node = nodes.get(queue.pop());
  for (const dep of node.deps) {
    const normal = dep.dep_kinds.some((k) => k.kind === null);
    if (normal && !seen.has(dep.pkg)) {
      seen.add(dep.pkg);
      queue.push(dep.pkg);
    }
  }
}
const linked = [...seen]
  .filter((id) => !workspace.has(id))
  .map((id) => packages.get(id))
  .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));

const LICENCE_FILE = /^(licen[cs]e|copying|notice|unlicense|copyright)([-._].*)?$/i;
// The crate's own licence files, and those one folder down: a -sys crate's bundled C library
// (libgit2/COPYING, zstd/LICENSE) keeps its licence beside its sources.
function licenceFiles(pkg) {
  const dir = dirname(pkg.manifest_path);
  const found = [];
  const look = (sub) => {
    let names = [];
    try {
      names = readdirSync(join(dir, sub)).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const path = join(dir, sub, n);
      let st;
      try {
        st = statSync(path);
      } catch {
        continue;
      }
      if (st.isFile() && LICENCE_FILE.test(n)) {
        found.push({ name: sub ? `${sub}/${n}` : n, text: readFileSync(path, "utf8").trimEnd() });
      } else if (st.isDirectory() && !sub && !n.startsWith(".") && !["src", "tests", "benches", "examples"].includes(n)) {
        look(n);
      }
    }
  };
  look("");
  return found;
}

const texts = new Map(); // text -> [crate file labels]
const missing = [];
const withoutFiles = [];
const rows = [];
for (const pkg of linked) {
  const files = licenceFiles(pkg);
  const licence = pkg.license || (pkg.license_file ? `see ${pkg.license_file}` : "");
  if (!licence && !files.length) missing.push(`${pkg.name} ${pkg.version}`);
  if (!files.length) withoutFiles.push(`${pkg.name} ${pkg.version} (${licence})`);
  rows.push(`${pkg.name} ${pkg.version}  ${licence || "?"}  ${pkg.repository || ""}`.trimEnd());
  for (const f of files) {
    const label = `${pkg.name} ${pkg.version}: ${f.name}`;
    if (!texts.has(f.text)) texts.set(f.text, []);
    texts.get(f.text).push(label);
  }
}
if (missing.length) {
  console.error(`third-party-licenses: no licence file and no license field: ${missing.join(", ")}`);
  process.exit(1);
}

const out = [];
out.push(`Third-party software in the pidx ${root.version} binary (${target})`);
out.push("");
out.push(
  `pidx itself is MIT-licensed (LICENSE). The binary links the ${linked.length} crates below, as ` +
    "Cargo.lock pins them (listed by `cargo metadata`: normal dependencies of the pidx package, " +
    "build-only ones left out). Some compile C code they bundle into the binary; the licence " +
    "files of that code are below under the crate's name with their folder (for example " +
    "libgit2-sys: libgit2/COPYING, zstd-sys: zstd/LICENSE). libsqlite3-sys bundles SQLite, " +
    "which is in the public domain (https://sqlite.org/copyright.html) and ships no licence file; " +
    "a crate may also ship the licence of bundled code it does not compile (libsqlite3-sys: sqlcipher/LICENSE).",
);
out.push("");
out.push("crate version  licence (Cargo.toml)  repository");
out.push(...rows);
if (withoutFiles.length) {
  out.push("");
  out.push(
    "These crates ship no licence file in their published source; their Cargo.toml licence " +
      "expression above is their licence, and the standard texts of those licences follow among the others:",
  );
  out.push(...withoutFiles.map((w) => `  ${w}`));
}
out.push("");
out.push("Licence texts, as each crate ships them (an identical text is printed once, under every crate that ships it):");
for (const [text, labels] of texts) {
  out.push("");
  out.push("=".repeat(78));
  out.push(...labels);
  out.push("-".repeat(78));
  out.push(text);
}
process.stdout.write(out.join("\n") + "\n");
console.error(
  `third-party-licenses: ${linked.length} crates, ${texts.size} distinct licence texts, ` +
    `${withoutFiles.length} crates without a licence file`,
);
