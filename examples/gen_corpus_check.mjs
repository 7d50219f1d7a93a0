// Validates a corpus written by `examples/gen_corpus.rs` with pi's own SessionManager.
//
// Run (Node >= 20; pi's package installed with `npm install @earendil-works/pi-coding-agent@0.87.1`):
//
//   cargo run --release --example gen_corpus -- --out /tmp/pi-sample --sessions 60 --seed 3
//   node examples/gen_corpus_check.mjs /tmp/pi-sample \
//       [--pi /tmp/pi-oracle/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js] \
//       [--max-open N]
//
// It never touches ~/.pi: PI_CODING_AGENT_DIR is pointed at a fresh temp dir before pi is imported,
// the corpus is copied to <temp>/sessions, and every file pi opens is a copy. Checks:
//   1. every line re-serialises byte-identically with JSON.stringify (compact, same key order,
//      same number and string formatting as pi writes); entry ids unique per file; every parentId,
//      label targetId, compaction firstKeptEntryId and branch_summary fromId names an earlier entry;
//   2. SessionManager.listAll() lists every file, with the header id/cwd/parentSession and a
//      messageCount equal to the number of `message` lines;
//   3. SessionManager.open(copy).buildSessionContext() works for every file (or the first N), the
//      active branch runs from the leaf up to the root, and opening does not rewrite the file.
// Exits 1 on any failure.

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const DEFAULT_PI = "/tmp/pi-oracle/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";

function parseArgs(argv) {
	const args = { corpus: undefined, pi: DEFAULT_PI, maxOpen: Infinity };
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--pi") args.pi = argv[++i];
		else if (argv[i] === "--max-open") args.maxOpen = Number(argv[++i]);
		else args.corpus = argv[i];
	}
	if (!args.corpus) {
		console.error("usage: node examples/gen_corpus_check.mjs CORPUS_DIR [--pi session-manager.js] [--max-open N]");
		process.exit(2);
	}
	return args;
}

const failures = [];
function fail(msg) {
	if (failures.length < 20) console.error("FAIL:", msg);
	failures.push(msg);
}

/** Lists `<root>/<dir>/*.jsonl` the way listAll() discovers files. */
function sessionFiles(root) {
	const out = [];
	for (const d of readdirSync(root, { withFileTypes: true })) {
		if (!d.isDirectory()) continue;
		for (const f of readdirSync(join(root, d.name))) if (f.endsWith(".jsonl")) out.push(join(root, d.name, f));
	}
	return out.sort();
}

/** Check 1: exact serialisation and tree references; returns per-file facts for later checks. */
function checkFile(path) {
	const text = readFileSync(path, "utf8");
	if (!text.endsWith("\n")) fail(`${path}: no trailing newline`);
	const lines = text.slice(0, -1).split("\n");
	const ids = new Set();
	let header;
	let messages = 0;
	lines.forEach((line, i) => {
		let obj;
		try {
			obj = JSON.parse(line);
		} catch (e) {
			return fail(`${path}:${i + 1}: invalid JSON (${e.message})`);
		}
		if (JSON.stringify(obj) !== line) fail(`${path}:${i + 1}: not byte-identical to JSON.stringify output`);
		if (i === 0) {
			header = obj;
			if (obj.type !== "session" || obj.version !== 3) fail(`${path}: bad header`);
			const stamp = obj.timestamp.replace(/[:.]/g, "-");
			if (basename(path) !== `${stamp}_${obj.id}.jsonl`) fail(`${path}: file name does not match header`);
			return;
		}
		if (!/^[0-9a-f]{8}$/.test(obj.id) || ids.has(obj.id)) fail(`${path}:${i + 1}: bad or duplicate id ${obj.id}`);
		const known = (id) => ids.has(id);
		if (obj.parentId !== null && !known(obj.parentId)) fail(`${path}:${i + 1}: parentId ${obj.parentId} not earlier`);
		if (obj.type === "label" && !known(obj.targetId)) fail(`${path}:${i + 1}: label target unknown`);
		if (obj.type === "compaction" && !known(obj.firstKeptEntryId) && obj.firstKeptEntryId !== obj.id)
			fail(`${path}:${i + 1}: firstKeptEntryId unknown`);
		if (obj.type === "branch_summary" && obj.fromId !== "root" && !known(obj.fromId)) fail(`${path}:${i + 1}: fromId unknown`);
		if (obj.type === "message") messages++;
		ids.add(obj.id);
	});
	return { header, messages, entries: lines.length - 1 };
}

async function main() {
	const args = parseArgs(process.argv.slice(2));
	const corpus = resolve(args.corpus);
	const agentDir = mkdtempSync(join(tmpdir(), "pi-agent-"));
	process.env.PI_CODING_AGENT_DIR = agentDir; // before pi is imported: never ~/.pi
	const sessionsRoot = join(agentDir, "sessions");
	const scratch = join(agentDir, "open-copies");
	try {
		cpSync(corpus, sessionsRoot, { recursive: true });
		cpSync(corpus, scratch, { recursive: true });
		const { SessionManager } = await import(resolve(args.pi));

		const files = sessionFiles(sessionsRoot);
		const facts = new Map(files.map((f) => [f, checkFile(f)]));
		let bytes = 0;
		for (const f of files) bytes += statSync(f).size;

		// 2. listing
		const listed = await SessionManager.listAll();
		const byPath = new Map(listed.map((s) => [s.path, s]));
		if (listed.length !== files.length) fail(`listAll returned ${listed.length} sessions for ${files.length} files`);
		for (const [f, fact] of facts) {
			const s = byPath.get(f);
			if (!s) {
				fail(`${f}: not listed by listAll()`);
				continue;
			}
			if (!fact.header) continue;
			if (s.id !== fact.header.id || s.cwd !== fact.header.cwd) fail(`${f}: listed id/cwd differ from header`);
			if (s.parentSessionPath !== fact.header.parentSession) fail(`${f}: parentSessionPath differs`);
			if (s.messageCount !== fact.messages) fail(`${f}: messageCount ${s.messageCount} != ${fact.messages}`);
		}

		// 3. opening copies
		let opened = 0;
		let contextMessages = 0;
		let maxDepth = 0;
		for (const f of files.slice(0, args.maxOpen)) {
			const copy = join(scratch, f.slice(sessionsRoot.length + 1));
			const before = readFileSync(copy);
			try {
				const sm = SessionManager.open(copy);
				const ctx = sm.buildSessionContext();
				const branch = sm.getBranch();
				if (ctx.messages.length === 0) fail(`${f}: empty context`);
				if (branch.length === 0 || branch[0].parentId !== null) fail(`${f}: active branch does not reach a root`);
				if (sm.getEntries().length !== facts.get(f).entries) fail(`${f}: entry count differs after open`);
				contextMessages += ctx.messages.length;
				maxDepth = Math.max(maxDepth, branch.length);
				opened++;
			} catch (e) {
				fail(`${f}: open/buildSessionContext threw: ${e.message}`);
			}
			if (!before.equals(readFileSync(copy))) fail(`${f}: pi rewrote the file on open`);
		}
		console.log(
			`checked ${files.length} files (${(bytes / 1048576).toFixed(1)} MiB): listAll listed ${listed.length}, ` +
				`opened ${opened} (${contextMessages} context messages, deepest active branch ${maxDepth}); ` +
				`${failures.length === 0 ? "OK" : `${failures.length} FAILURES`}`,
		);
	} finally {
		rmSync(agentDir, { recursive: true, force: true });
	}
	process.exit(failures.length === 0 ? 0 : 1);
}

await main();
