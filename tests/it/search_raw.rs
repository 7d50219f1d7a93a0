//! A literal no word of the index narrows (`=>>>`, `::<`) is searched in the raw bytes of each
//! run of lines first (`src/query/search/raw.rs`, `Plan::RawScan`): its hits must be exactly
//! the plain scan's, in the same order, for needles spelt raw or JSON-escaped, inside tool
//! arguments (re-serialised, with whitespace and numbers the line writes differently), across
//! the blocks of one message, with filters and limits. The plain scan is the same search as a
//! regular expression, which reads and parses every text.

use crate::common;

use std::io::Write;
use std::path::Path;

use pidx::pi::text::TextKind;
use pidx::query::search::{parse, search_explained, Plan, SearchOptions};
use pidx::store::Scope;
use pidx::store::Store;

/// JSON string bodies (already escaped as a line writes them) the texts are made of.
const PIECES: &[&str] = &[
    "=>>>",
    "=>",
    ">>",
    ">",
    "=",
    "->",
    "-",
    "::<",
    "::",
    ":",
    "<",
    "?;",
    "?",
    ";",
    "\\u003e",
    "\\u003E",
    "\\u003d",
    "\\u003a",
    "\\u003c",
    "\\u003f",
    "\\u003b",
    "\\u002d",
    "\\u001b[0m",
    "\\/",
    "/",
    "\\/*",
    "/*",
    "é",
    "x",
    " ",
    "1",
    "\\n",
    "\\\"",
    "\\\\",
    "fn",
    "Vec",
];

/// A small deterministic generator (xorshift), so a failure is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A JSON string body of a few pieces.
    fn body(&mut self) -> String {
        let n = 1 + self.below(6);
        (0..n).map(|_| PIECES[self.below(PIECES.len())]).collect()
    }
}

/// One entry's JSON (without id, parent and timestamp), of a kind picked by `rng`.
fn message(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => format!(
            r#""message":{{"role":"user","content":"{}","timestamp":1}}"#,
            rng.body()
        ),
        // Several blocks: one text, joined by newlines.
        1 => format!(
            r#""message":{{"role":"user","content":[{{"type":"text","text":"{}"}},{{"type":"image","data":"QUJD","mimeType":"image/png"}},{{"type":"text","text":"{}"}}],"timestamp":1}}"#,
            rng.body(),
            rng.body()
        ),
        // Tool arguments: re-serialised compactly, the line with spaces, odd numbers and keys
        // that hold the needle too.
        2 => format!(
            r#""message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}},{{"type":"toolCall","id":"c1","name":"bash","arguments":{{ "{}" : "{}", "n": -1.50e0, "list" : [ 1, -2, "{}" ] }}}}],"timestamp":1}}"#,
            rng.body(),
            rng.body(),
            rng.body(),
            rng.body()
        ),
        3 => format!(
            r#""message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"{}"}},{{"type":"toolCall","id":"c2","name":"edit","arguments":"{}"}}],"timestamp":1}}"#,
            rng.body(),
            rng.body()
        ),
        4 => format!(
            r#""message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":"{}"}}],"isError":false,"timestamp":1}}"#,
            rng.body()
        ),
        _ => format!(
            r#""message":{{"role":"bashExecution","command":"{}","output":"{}","exitCode":0,"timestamp":1}}"#,
            rng.body(),
            rng.body()
        ),
    }
}

fn path(root: &Path, project: &str, file: &str) -> std::path::PathBuf {
    root.join(format!("--home-u-{project}--"))
        .join(format!("2026-03-01T00-00-00-000Z_{file}.jsonl"))
}

/// Appends `n` entries to `file` (created with its header when new), numbered from `*seq`.
fn add(root: &Path, project: &str, file: &str, n: usize, seq: &mut i64, rng: &mut Rng) {
    let p = path(root, project, file);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let new = !p.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .unwrap();
    if new {
        writeln!(
            f,
            r#"{{"type":"session","version":3,"id":"{file}","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/home/u/{project}"}}"#
        )
        .unwrap();
    }
    for _ in 0..n {
        *seq += 1;
        // Minutes in no order across files and appends; some entries have no time.
        let ts = if *seq % 11 == 0 {
            String::new()
        } else {
            let m = *seq * 37 % 1439;
            format!(
                r#""timestamp":"2026-03-01T{:02}:{:02}:00.000Z","#,
                m / 60,
                m % 60
            )
        };
        writeln!(
            f,
            r#"{{"type":"message","id":"{file}-{seq}","parentId":null,{ts}{}}}"#,
            message(rng)
        )
        .unwrap();
    }
}

/// What identifies a hit, in order.
fn hits(store: &Store, scope: &Scope, opts: &SearchOptions) -> (Vec<String>, Plan) {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (hits, explain) = search_explained(&store.conn, scope, opts, &stop).unwrap();
    let ids = hits
        .into_iter()
        .map(|h| format!("{}:{}:{}", h.path, h.line, h.kind))
        .collect();
    (ids, explain.plan)
}

fn check(store: &Store, scope: &Scope, at: &str) -> usize {
    let mut found = 0;
    let needles = ["=>>>", "->", "::<", "?;", "/*", "é", "=>>>=>>>"];
    type Filter = Box<dyn Fn(&mut SearchOptions)>;
    let filters: Vec<(&str, Filter)> = vec![
        ("none", Box::new(|_| {})),
        (
            "--since",
            Box::new(|o| o.since_ms = Some(1_772_323_200_000 + 6 * 3_600_000)),
        ),
        ("--cwd", Box::new(|o| o.cwd = Some("/home/u/two".into()))),
        ("--in tool", Box::new(|o| o.kinds = vec![TextKind::Tool])),
    ];
    for needle in needles {
        for (name, filter) in &filters {
            for limit in [1, 100_000] {
                let mut lit = SearchOptions::everywhere(parse(needle, true).unwrap(), limit);
                filter(&mut lit);
                let re = format!("re:{}", regex::escape(needle));
                let mut plain = SearchOptions::everywhere(parse(&re, false).unwrap(), limit);
                filter(&mut plain);
                let (got, plan) = hits(store, scope, &lit);
                let (want, plain_plan) = hits(store, scope, &plain);
                assert_eq!(got, want, "{at}: {needle:?} {name} limit {limit}");
                if *name == "none" {
                    assert_eq!(plan, Plan::RawScan, "{at}: {needle:?}");
                    assert_eq!(plain_plan, Plan::Scan, "{at}: {needle:?}");
                }
                if limit == 100_000 {
                    found += got.len();
                }
            }
        }
    }
    found
}

#[test]
fn a_raw_scan_finds_exactly_what_the_plain_scan_finds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut seq = 0;
    // More rows per project than a narrowed search reads whole (`READ_WHOLE_ROWS`), so
    // `--cwd` and `--since` scan too.
    let files = [
        ("one", "a"),
        ("one", "b"),
        ("one", "e"),
        ("two", "c"),
        ("two", "d"),
        ("two", "f"),
    ];
    for (project, file) in files {
        add(&root, project, file, 180, &mut seq, &mut rng);
    }
    let db = tmp.path().join("index.db");
    let (mut store, scope) = common::indexed(&root, &db);
    let first = check(&store, &scope, "first sync");
    // Appends make runs of their own between other files' runs.
    for round in 0..1 {
        for (project, file) in &files[1..] {
            add(&root, project, file, 20, &mut seq, &mut rng);
        }
        common::resync(&mut store, &root);
        check(&store, &scope, &format!("append round {round}"));
    }
    // The needles are found, and not everywhere: the test compares something.
    assert!(first > 100, "{first} hits");
    // A session of plain words: its run cannot hold the needle and is skipped unread.
    let quiet = path(&root, "three", "q");
    std::fs::create_dir_all(quiet.parent().unwrap()).unwrap();
    std::fs::write(
        &quiet,
        concat!(
            r#"{"type":"session","version":3,"id":"q","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/home/u/three"}"#,
            "\n",
            r#"{"type":"message","id":"q1","parentId":null,"timestamp":"2026-03-02T00:00:00.000Z","message":{"role":"user","content":"plain => words","timestamp":1}}"#,
            "\n"
        ),
    )
    .unwrap();
    common::resync(&mut store, &root);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let opts = SearchOptions::everywhere(parse("=>>>=>>>", true).unwrap(), 10);
    let (_, explain) = search_explained(&store.conn, &scope, &opts, &stop).unwrap();
    let raw = explain.raw.unwrap();
    assert!(raw.skipped > 0 && raw.skipped < raw.runs, "{raw:?}");
}

#[test]
fn a_raw_scan_is_not_used_where_redaction_can_write_the_needle() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let mut rng = Rng(7);
    let mut seq = 0;
    add(&root, "one", "a", 5, &mut seq, &mut rng);
    let (store, scope) = common::indexed(&root, &tmp.path().join("index.db"));
    let mut opts = SearchOptions::everywhere(parse("=>>>", true).unwrap(), 10);
    opts.redact = true;
    assert_eq!(hits(&store, &scope, &opts).1, Plan::Scan);
}
