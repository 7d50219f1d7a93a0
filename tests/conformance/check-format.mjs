#!/usr/bin/env node
// check-format.mjs CORPUSDIR GOLDENDIR
//
// Checks that files written by pidx's corpus generator (examples/gen_corpus.rs) are what pi
// itself would write: every line is exactly JSON.stringify(JSON.parse(line)) (pi writes each
// entry with JSON.stringify: same key order, number and string formats), every header is
// version 3, and pi's SessionManager.open() left every file unchanged (GOLDENDIR/sessions.json
// from pi-answers.mjs: nothing to migrate or repair). Exits 1 listing what differs.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const [corpus, golden] = process.argv.slice(2);
const root = join(corpus, "sessions");
const problems = [];
let files = 0;
let lines = 0;
for (const dir of readdirSync(root)) {
  const d = join(root, dir);
  if (!statSync(d).isDirectory()) continue;
  for (const name of readdirSync(d).filter((n) => n.endsWith(".jsonl"))) {
    files++;
    const text = readFileSync(join(d, name), "utf8");
    if (!text.endsWith("\n")) problems.push(`${dir}/${name}: no final newline`);
    text.split("\n").slice(0, -1).forEach((line, i) => {
      lines++;
      let v;
      try {
        v = JSON.parse(line);
      } catch (e) {
        problems.push(`${dir}/${name}:${i + 1}: not JSON (${e.message})`);
        return;
      }
      const again = JSON.stringify(v);
      if (again !== line) {
        let at = 0;
        while (at < line.length && line[at] === again[at]) at++;
        problems.push(`${dir}/${name}:${i + 1}: pi would write ...${again.slice(Math.max(0, at - 30), at + 30)}... not ...${line.slice(Math.max(0, at - 30), at + 30)}...`);
      }
      if (i === 0 && (v.type !== "session" || v.version !== 3)) {
        problems.push(`${dir}/${name}:1: not a version 3 session header`);
      }
    });
  }
}
const opened = JSON.parse(readFileSync(join(golden, "sessions.json"), "utf8"));
for (const [rel, s] of Object.entries(opened)) {
  if (s.error) problems.push(`${rel}: pi could not open it: ${s.error}`);
  else if (s.fileChangedByOpen) problems.push(`${rel}: pi's open() rewrote it`);
}
console.error(`check-format.mjs: ${files} files, ${lines} lines, ${problems.length} problems`);
for (const p of problems.slice(0, 50)) console.error(`  ${p}`);
process.exit(problems.length ? 1 : 0);
