//! `pidx search`: literal search finds exactly what a plain scan of the same text finds, ranked
//! search puts the expected hit first, filters combine, and nothing a user types reaches FTS5 as
//! syntax.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pidx::pi::text::texts;
use pidx::query::search::{parse, search, search_until, SearchOptions};
use pidx::store::Scope;
use pidx::store::Store;
use serde_json::Value;

/// (path, line, kind) of a hit or of a text.
type Key = (String, i64, String);

/// Every searchable text of the corpus, read straight from the JSONL files: the text of each
/// entry pi's loader keeps (every JSON object after the first value, which pi takes as the
/// header whatever it is, and other than further headers).
fn corpus_texts(root: &Path) -> Vec<(Key, String)> {
    let mut out = Vec::new();
    let files = walkdir::WalkDir::new(root)
        .min_depth(2)
        .max_depth(2)
        .follow_links(true)
        .sort_by_file_name();
    for entry in files {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        if !path.to_string_lossy().ends_with(".jsonl") || !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(path).unwrap();
        let mut first = true;
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            // Parsed as pi's JSON.parse takes it (lone surrogates from cut emoji included).
            let pidx::pi::line::Line::Value(value) = pidx::pi::line::parse_line(line) else {
                continue;
            };
            if std::mem::take(&mut first) {
                continue;
            }
            let Value::Object(obj) = value else { continue };
            if obj.get("type").and_then(Value::as_str) == Some("session") {
                continue;
            }
            for (kind, t) in texts(&obj) {
                let key = (
                    path.to_string_lossy().into_owned(),
                    i as i64 + 1,
                    kind.name().to_string(),
                );
                out.push((key, t));
            }
        }
    }
    out
}

struct Indexed {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    store: Store,
    scope: Scope,
}

fn index(root: PathBuf, tmp: tempfile::TempDir) -> Indexed {
    let (store, scope) = common::indexed(&root, &tmp.path().join("index.db"));
    Indexed {
        _tmp: tmp,
        root,
        store,
        scope,
    }
}

fn options(query: &str, literal: bool) -> SearchOptions {
    SearchOptions::everywhere(parse(query, literal).unwrap(), usize::MAX)
}

/// The texts a search found: each hit's, and each copy of its entry in the sessions it names
/// (`alsoIn`: a fork's copied entry is one hit). No entry is shown twice.
fn hit_keys(ix: &Indexed, opts: &SearchOptions) -> BTreeSet<Key> {
    let conn = &ix.store.conn;
    let mut keys = BTreeSet::new();
    for h in search(conn, &ix.scope, opts).unwrap() {
        let kind = h.kind.to_string();
        for path in &h.also_in {
            let mut copies = conn
                .prepare(
                    "SELECT c.line FROM entries e JOIN files f ON f.id = e.file_id
                     JOIN entries c ON c.id = e.id AND c.ts = e.ts
                     JOIN files cf ON cf.id = c.file_id AND cf.path = ?3
                     WHERE f.path = ?1 AND e.line = ?2",
                )
                .unwrap();
            let lines: Vec<i64> = copies
                .query_map(rusqlite::params![h.path, h.line, path], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(lines.len(), 1, "{path} holds one copy of {h:?}");
            assert!(
                keys.insert((path.clone(), lines[0], kind.clone())),
                "{h:?} shown twice"
            );
        }
        assert!(keys.insert((h.path, h.line, kind)), "a text shown twice");
    }
    keys
}

/// Needles drawn from the corpus itself: substrings of every length from 1 character up,
/// identifiers, paths, hashes and non-ASCII words, plus some that occur nowhere.
fn needles(texts: &[(Key, String)]) -> Vec<String> {
    let mut out = BTreeSet::new();
    let mut pick = 0usize;
    for (i, (_, t)) in texts.iter().enumerate().step_by(7) {
        let chars: Vec<char> = t.chars().collect();
        if chars.is_empty() {
            continue;
        }
        pick = pick.wrapping_mul(31).wrapping_add(i + 17);
        let len = 1 + pick % 12;
        let start = pick % chars.len();
        let end = (start + len).min(chars.len());
        out.insert(chars[start..end].iter().collect::<String>());
        for word in t.split(|c: char| c.is_whitespace() || c == '"' || c == '`') {
            let interesting = word.contains('_')
                || word.contains('/')
                || (word.len() >= 6 && word.chars().all(|c| c.is_ascii_hexdigit()))
                || !word.is_ascii();
            if interesting && word.chars().count() <= 40 {
                out.insert(word.to_string());
            }
        }
    }
    out.extend(["zzq-not-there".to_string(), "NOT_ANYWHERE_42".to_string()]);
    out.into_iter().filter(|n| !n.is_empty()).collect()
}

#[test]
fn literal_search_equals_a_plain_scan() {
    let (tmp, root) = common::conformance_copy();
    let ix = index(root, tmp);
    let texts = corpus_texts(&ix.root);
    assert!(texts.len() > 300, "corpus too small: {}", texts.len());
    let needles = needles(&texts);
    assert!(needles.len() > 80, "only {} needles", needles.len());
    let mut failures = Vec::new();
    let mut total_hits = 0;
    for needle in &needles {
        let expected: BTreeSet<Key> = texts
            .iter()
            .filter(|(_, t)| t.contains(needle.as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        let got = hit_keys(&ix, &options(needle, true));
        total_hits += got.len();
        if got != expected {
            failures.push(format!(
                "{needle:?}: pidx {} hits, scan {}; missing {:?}; extra {:?}",
                got.len(),
                expected.len(),
                expected.difference(&got).take(3).collect::<Vec<_>>(),
                got.difference(&expected).take(3).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} needles differ:\n{}",
        failures.len(),
        needles.len(),
        failures.join("\n")
    );
    assert!(
        total_hits > needles.len(),
        "the needles found almost nothing"
    );
}

/// A small corpus with known answers, for ranking and filters.
/// `re:` candidates come from the literal runs of the pattern: the hits equal those of the
/// same pattern inside a capture group (no runs: every text is scanned), and include every
/// text a plain scan of the JSONL matches.
#[test]
fn regex_search_equals_a_scan_of_every_text() {
    let (tmp, root) = common::conformance_copy();
    let ix = index(root, tmp);
    let texts = corpus_texts(&ix.root);
    // The query is trimmed, so needles with spaces at an end would change meaning.
    let patterns: Vec<String> = needles(&texts)
        .iter()
        .filter(|n| n.trim() == n.as_str())
        .step_by(3)
        .flat_map(|n| {
            let lit = regex::escape(n);
            [lit.clone(), format!(r"{lit}\w*"), format!(r"\w{lit}\s")]
        })
        .collect();
    assert!(patterns.len() > 60, "only {} patterns", patterns.len());
    let mut failures = Vec::new();
    let mut total_hits = 0;
    for pattern in &patterns {
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .unwrap();
        let plain: BTreeSet<Key> = texts
            .iter()
            .filter(|(_, t)| re.is_match(t))
            .map(|(k, _)| k.clone())
            .collect();
        let scanned = hit_keys(&ix, &options(&format!("re:({pattern})"), false));
        let got = hit_keys(&ix, &options(&format!("re:{pattern}"), false));
        total_hits += got.len();
        if got != scanned || !plain.is_subset(&got) {
            failures.push(format!(
                "{pattern:?}: pidx {} hits, every text scanned {}, plain scan {}; extra {:?}",
                got.len(),
                scanned.len(),
                plain.len(),
                got.difference(&scanned).take(3).collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        total_hits > patterns.len(),
        "the patterns found almost nothing"
    );
}

fn small_corpus(dir: &Path) -> PathBuf {
    let root = dir.join("sessions");
    let write = |project: &str, name: &str, cwd: &str, lines: &[String]| {
        let p = root.join(project);
        std::fs::create_dir_all(&p).unwrap();
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{name}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"}}"#
        );
        let body: Vec<String> = std::iter::once(header)
            .chain(lines.iter().cloned())
            .collect();
        std::fs::write(
            p.join(format!("2026-01-01T00-00-00-000Z_{name}.jsonl")),
            body.join("\n") + "\n",
        )
        .unwrap();
    };
    let user = |id: &str, parent: Option<&str>, ts: &str, text: &str| {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    let assistant = |id: &str, parent: &str, ts: &str, model: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"pondering {text}"}},{{"type":"text","text":"{text}"}},{{"type":"toolCall","id":"t","name":"bash","arguments":{{"command":"grep -r {text} src/"}}}}],"provider":"p","model":"{model}","timestamp":2}}}}"#
        )
    };
    write(
        "--home-u-alpha--",
        "alpha",
        "/home/u/alpha",
        &[
            user(
                "a1",
                None,
                "2026-01-02T10:00:00.000Z",
                "the tokenizer tokenizer tokenizer breaks",
            ),
            assistant(
                "a2",
                "a1",
                "2026-01-02T10:01:00.000Z",
                "claude-x",
                "fixed the tokenizer",
            ),
            // A branch off a1: not on the current path (the last entry's).
            user(
                "a3",
                Some("a1"),
                "2026-01-03T10:00:00.000Z",
                "abandoned branch about RESTAURANT_SIGNALS",
            ),
            user(
                "a4",
                Some("a2"),
                "2026-01-04T10:00:00.000Z",
                "current branch about RESTAURANT_SIGNALS",
            ),
        ],
    );
    write(
        "--home-u-beta--",
        "beta",
        "/home/u/beta",
        &[
            user("b1", None, "2026-02-01T10:00:00.000Z", "a long rambling message that mentions the tokenizer once among many many other words about unrelated things like lunch and weather and trains"),
            assistant("b2", "b1", "2026-02-01T10:01:00.000Z", "gpt-y", "caf\u{e9} r\u{e9}sum\u{e9} and RESTAURANT_SIGNALS"),
        ],
    );
    root
}

fn small() -> Indexed {
    let tmp = tempfile::tempdir().unwrap();
    let root = small_corpus(tmp.path());
    index(root, tmp)
}

#[test]
fn ranked_search_puts_the_most_relevant_hit_first() {
    let ix = small();
    let hits = search(&ix.store.conn, &ix.scope, &options("tokenizer", false)).unwrap();
    assert!(hits.len() >= 3);
    assert_eq!(hits[0].entry_id.as_deref(), Some("a1"), "{hits:#?}");
    // Hits of one session stay together.
    let files: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    let mut seen = Vec::new();
    for f in &files {
        if seen.last() != Some(f) {
            assert!(!seen.contains(f), "session hits are not grouped: {files:?}");
            seen.push(f);
        }
    }
    // Accents and case do not matter to words; a phrase must be contiguous.
    let cafe = search(&ix.store.conn, &ix.scope, &options("CAFE resume", false)).unwrap();
    let kinds: BTreeSet<_> = cafe
        .iter()
        .map(|h| (h.entry_id.clone().unwrap(), h.kind))
        .collect();
    let b2 = |k| ("b2".to_string(), k);
    assert_eq!(
        kinds,
        BTreeSet::from([b2("assistant"), b2("thinking"), b2("tool")])
    );
    assert!(search(
        &ix.store.conn,
        &ix.scope,
        &options("\"tokenizer fixed\"", false)
    )
    .unwrap()
    .is_empty());
    let phrase = search(
        &ix.store.conn,
        &ix.scope,
        &options("\"fixed the tokenizer\"", false),
    )
    .unwrap();
    // The phrase is in a2's text, its thinking and its tool call.
    assert_eq!(phrase.len(), 3);
    assert!(phrase.iter().all(|h| h.entry_id.as_deref() == Some("a2")));
    // Prefix, exclusion, OR.
    let pre = hit_keys(&ix, &options("token*", false));
    assert!(pre.len() >= 3);
    let excl = search(
        &ix.store.conn,
        &ix.scope,
        &options("tokenizer -lunch", false),
    )
    .unwrap();
    assert!(excl.iter().all(|h| h.entry_id.as_deref() != Some("b1")));
    let either = search(
        &ix.store.conn,
        &ix.scope,
        &options("weather OR abandoned", false),
    )
    .unwrap();
    let ids: BTreeSet<_> = either.iter().filter_map(|h| h.entry_id.clone()).collect();
    assert_eq!(ids, BTreeSet::from(["a3".to_string(), "b1".to_string()]));
    // The snippet marks the match.
    let s = &hits[0].snippet;
    let (a, b) = s.marks[0];
    assert_eq!(s.text[a..b].to_lowercase(), "tokenizer");
}

#[test]
fn filters_combine() {
    let ix = small();
    let ids = |opts: &SearchOptions| -> BTreeSet<String> {
        search(&ix.store.conn, &ix.scope, opts)
            .unwrap()
            .into_iter()
            .map(|h| format!("{}:{}", h.entry_id.unwrap_or_default(), h.kind))
            .collect()
    };
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let mut o = options("RESTAURANT_SIGNALS", true);
    let b2 = ["b2:assistant", "b2:thinking", "b2:tool"];
    assert_eq!(ids(&o), set(&[&["a3:user", "a4:user"][..], &b2].concat()));
    o.branch = true;
    assert_eq!(ids(&o), set(&[&["a4:user"][..], &b2].concat()));
    o.cwd = Some("/home/u/alpha".into());
    assert_eq!(ids(&o), set(&["a4:user"]));
    o.branch = false;
    o.until_ms = Some(1_767_434_400_000); // 2026-01-03T10:00Z: a3 is at that instant, excluded
    assert_eq!(ids(&o), set(&[]));
    o.until_ms = None;
    o.since_ms = Some(1_767_434_400_000);
    assert_eq!(ids(&o), set(&["a3:user", "a4:user"]));

    let mut o = options("tokenizer", false);
    o.kinds = vec![pidx::pi::text::TextKind::Thinking];
    assert_eq!(ids(&o), set(&["a2:thinking"]));
    o.kinds = vec![pidx::pi::text::TextKind::Tool];
    assert_eq!(ids(&o), set(&["a2:tool"]));
    o.kinds.clear();
    o.model = Some("gpt".into());
    assert_eq!(ids(&o), set(&["b1:user"]));
    let mut o = options("re:restaurant_\\w+", false);
    o.model = Some("claude".into());
    o.limit = 1;
    assert_eq!(ids(&o), set(&["a4:user"]), "regex hits come newest first");
}

#[test]
fn rewritten_files_leave_no_stale_text() {
    let tmp = tempfile::tempdir().unwrap();
    let root = small_corpus(tmp.path());
    let mut ix = index(root.clone(), tmp);
    let beta = root.join("--home-u-beta--/2026-01-01T00-00-00-000Z_beta.jsonl");
    let text = std::fs::read_to_string(&beta)
        .unwrap()
        .replace("rambling", "wandering");
    std::fs::write(&beta, text).unwrap();
    common::resync(&mut ix.store, &root);
    assert!(hit_keys(&ix, &options("rambling", false)).is_empty());
    assert_eq!(hit_keys(&ix, &options("wandering", false)).len(), 1);
    std::fs::remove_file(&beta).unwrap();
    common::resync(&mut ix.store, &root);
    assert!(hit_keys(&ix, &options("wandering", false)).is_empty());
    let fts_rows: i64 = ix
        .store
        .conn
        .query_row(
            "SELECT count(*) FROM fts_vocab WHERE term = 'wandering'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fts_rows, 0);
}

/// A file deleted after it was indexed, searched before the next sync: its lines cannot be read
/// back, so it has no hits, and the other files' hits still come (no error).
#[test]
fn a_file_deleted_since_the_sync_is_left_out_of_literal_hits() {
    let tmp = tempfile::tempdir().unwrap();
    let root = small_corpus(tmp.path());
    let ix = index(root.clone(), tmp);
    let word = options("tokenizer", true);
    let before = hit_keys(&ix, &word);
    let beta = root.join("--home-u-beta--/2026-01-01T00-00-00-000Z_beta.jsonl");
    let in_beta = |k: &&Key| k.0.ends_with("_beta.jsonl");
    assert!(before.iter().any(|k| in_beta(&k)), "{before:?}");
    std::fs::remove_file(&beta).unwrap();
    let after = hit_keys(&ix, &word);
    let rest: BTreeSet<Key> = before.iter().filter(|k| !in_beta(k)).cloned().collect();
    assert!(!rest.is_empty());
    assert_eq!(after, rest);
}

#[test]
fn whatever_the_user_types_gets_results_or_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let root = small_corpus(tmp.path());
    let db = tmp.path().join("i.db");
    let long = "tokenizer ".repeat(1100);
    let nasty = [
        "main.rs",
        "foo(",
        "\"unbalanced",
        "-",
        "🦀",
        "((",
        "a OR",
        "OR",
        "NOT",
        "AND tokenizer",
        "NEAR(a b)",
        "*",
        "\"\"",
        "col:tokenizer",
        "^tokenizer",
        "tokenizer\"",
        "-\"x\"",
        &long,
    ];
    for q in nasty {
        let out = common::pidx(&db, &root)
            .args(["search", q])
            .output()
            .unwrap();
        let code = out.status.code().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            code == 0 || code == 1 || (code == 2 && err.lines().count() == 1),
            "{q:.40}: exit {code}: {err}"
        );
        assert!(
            !err.to_lowercase().contains("fts5") && !err.contains("syntax error"),
            "{q:.40}: {err}"
        );
    }
    let out = common::pidx(&db, &root)
        .args(["search", &long])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "10 KB of words still finds the tokenizer entry"
    );
    for (q, extra) in [
        ("re:(", "--literal"),
        ("x", "--in=nothing"),
        ("x", "--since=tomorrow"),
    ] {
        let args: Vec<&str> = if extra == "--literal" {
            vec!["search", q]
        } else {
            vec!["search", q, extra]
        };
        let out = common::pidx(&db, &root).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{q} {extra}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim().lines().count(),
            1
        );
    }
    let out = common::pidx(&db, &root)
        .args(["search", "--jsonl", "RESTAURANT_SIGNALS"])
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert!(lines.iter().all(|h| h["snippet"]["text"]
        .as_str()
        .unwrap()
        .contains("RESTAURANT_SIGNALS")));
}

/// A search given up by another thread (a cancelled or timed-out MCP call) stops before it
/// reads candidate lines back and says so, instead of reading on; the same search not stopped
/// answers.
#[test]
fn a_stopped_search_gives_up_reading_lines_back() {
    use std::sync::atomic::AtomicBool;
    let ix = small();
    for query in ["re:.", "tokenizer"] {
        let opts = options(query, query == "tokenizer");
        let answered = search_until(&ix.store.conn, &ix.scope, &opts, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        assert!(
            !answered.is_empty(),
            "{query} finds something in the corpus"
        );
        let stopped = search_until(&ix.store.conn, &ix.scope, &opts, &AtomicBool::new(true));
        let err = stopped.expect_err("a stopped search is an error");
        assert!(matches!(err, pidx::Error::Stopped), "{query}: {err}");
        assert!(err.to_string().contains("stopped"), "{query}: {err}");
    }
}

/// Words found through the index's accent folding are marked in the snippet, whichever side
/// carries the accents (`jalapeno` finds and marks "Jalapeño"; `"creme brulee"` marks the phrase).
#[test]
fn accent_folded_matches_are_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions/--p--");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a.jsonl"),
        concat!(
            r#"{"type":"session","version":3,"id":"acc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"add a Jalapeño pepper and crème brûlée, then jalapeno","timestamp":1}}"#,
            "\n"
        ),
    )
    .unwrap();
    let marked = |q: &str| -> Vec<String> {
        let out = common::pidx(&tmp.path().join("i.db"), &tmp.path().join("sessions"))
            .args(["search", "--json", q])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let s = &v[0]["snippet"];
        let text = s["text"].as_str().unwrap();
        let marks = s["marks"].as_array().unwrap();
        marks
            .iter()
            .map(|m| {
                text[m[0].as_u64().unwrap() as usize..m[1].as_u64().unwrap() as usize].to_string()
            })
            .collect()
    };
    assert_eq!(marked("jalapeno"), ["Jalapeño", "jalapeno"]);
    assert_eq!(marked("jalapeño"), ["Jalapeño", "jalapeno"]);
    assert_eq!(marked("\"creme brulee\""), ["crème brûlée"]);
}

/// A fork copies its source's entries with their ids and times: each copied entry is one hit
/// (naming the other session), as `stats` counts it once, for words, literals and patterns;
/// searched alone, the fork still finds its copy.
#[test]
fn a_forks_copied_entries_are_one_hit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions/--p--");
    std::fs::create_dir_all(&dir).unwrap();
    let header = |id: &str, ts: &str, parent: Option<&Path>| {
        let mut h =
            serde_json::json!({"type":"session","version":3,"id":id,"timestamp":ts,"cwd":"/p"});
        if let Some(p) = parent {
            h["parentSession"] = serde_json::json!(p);
        }
        h.to_string()
    };
    let user = |id: &str, parent: Option<&str>, ts: &str, text: &str| {
        serde_json::json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"user","content":text,"timestamp":1}})
        .to_string()
    };
    let copied = [
        user(
            "u1",
            None,
            "2026-01-01T00:00:01.000Z",
            "the wombat_cache needs a flush",
        ),
        user("u2", Some("u1"), "2026-01-01T00:00:02.000Z", "flushed"),
    ];
    let original = dir.join("2026-01-01T00-00-00-000Z_orig.jsonl");
    std::fs::write(
        &original,
        [
            header("orig", "2026-01-01T00:00:00.000Z", None),
            copied.join("\n"),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let fork = dir.join("2026-01-02T00-00-00-000Z_fork.jsonl");
    std::fs::write(
        &fork,
        [
            header("fork", "2026-01-02T00:00:00.000Z", Some(&original)),
            copied.join("\n"),
            user(
                "u3",
                Some("u2"),
                "2026-01-02T00:00:03.000Z",
                "the wombat_cache again, and the flush after it was not enough for it",
            ),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let (db, root) = (tmp.path().join("i.db"), tmp.path().join("sessions"));
    let hits = |args: &[&str]| -> Vec<Value> {
        let out = common::pidx(&db, &root)
            .args(["search", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    for q in [
        &["wombat_cache"][..],
        &["--literal", "wombat_cache"],
        &["re:wombat_c[a-z]+"],
    ] {
        let got = hits(q);
        let ids: Vec<(&str, &str)> = got
            .iter()
            .map(|h| {
                (
                    h["sessionId"].as_str().unwrap(),
                    h["entryId"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(got.len(), 2, "{q:?}: {ids:?}");
        let u1 = got.iter().find(|h| h["entryId"] == "u1").unwrap();
        assert_eq!(u1["sessionId"], "orig", "{q:?}: the first session's copy");
        assert_eq!(u1["alsoIn"], serde_json::json!([fork]), "{q:?}");
        assert!(got
            .iter()
            .any(|h| h["entryId"] == "u3" && h.get("alsoIn").is_none()));
    }
    // u1's two copies rank first (u3 is longer) and are one hit: the second is u3.
    let two = hits(&["wombat_cache", "--limit", "2"]);
    let ids: Vec<&str> = two.iter().map(|h| h["entryId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["u1", "u3"]);
    // The two copies of u1 tie, and the fork's row comes first on a tie: the limit falls
    // between them (words: u1 first; newest first: u3, then u1), and the copy shown is still
    // the first session's, the fork's named in `alsoIn`, as with a larger limit.
    for (q, limit, at) in [
        (&["wombat_cache"][..], "1", 0),
        (&["--literal", "wombat_cache"], "2", 1),
        (&["re:wombat_c[a-z]+"], "2", 1),
    ] {
        let got = hits(&[q, &["--limit", limit][..]].concat());
        assert_eq!(got.len(), at + 1, "{q:?}: {got:?}");
        assert_eq!(got[at]["entryId"], "u1", "{q:?}: {got:?}");
        assert_eq!(
            got[at]["sessionId"], "orig",
            "{q:?}: the first session's copy"
        );
        assert_eq!(got[at]["alsoIn"], serde_json::json!([fork]), "{q:?}");
    }
    let fork_s = fork.to_string_lossy().into_owned();
    let alone = hits(&["wombat_cache", "--session", &fork_s]);
    assert_eq!(alone.len(), 2, "{alone:?}");
    assert!(alone
        .iter()
        .all(|h| h["sessionId"] == "fork" && h.get("alsoIn").is_none()));
    // stats counts the copied user messages once too: 3 distinct user messages.
    let out = common::pidx(&db, &root)
        .args(["stats", "--json"])
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(stats.to_string().contains("\"userMessages\":3"), "{stats}");
    let out = common::pidx(&db, &root)
        .args(["search", "wombat_cache"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("also in 1 other session (copied by a fork)"),
        "{text}"
    );
}

/// Runs next to separator classes (`fn\s+`) and case classes (`[Qq]{3}`) are planned as word
/// edges and literals: every text a scan matches is still found, whatever the separator
/// (tab, no-break space, line separator) and wherever the run sits inside a longer word.
#[test]
fn regex_runs_planned_as_word_edges_miss_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("--p--");
    std::fs::create_dir_all(&dir).unwrap();
    let texts = [
        "fn\tparse_line(x)",
        "fn\u{a0}parse_line(x)",
        "fn\u{2028}read_line()",
        "xfn  split_line here",
        "fn_parse_line no",
        "fn, parse_line no",
        "a QqQ7 b",
        "zqqq9",
        "qq9 no",
    ];
    let mut lines = vec![
        r#"{"type":"session","version":3,"id":"edges","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
    ];
    for (i, t) in texts.iter().enumerate() {
        lines.push(
            serde_json::json!({"type":"message","id":format!("u{i}"),"parentId":null,
                "timestamp":"2026-01-01T00:00:01.000Z",
                "message":{"role":"user","content":t,"timestamp":1}})
            .to_string(),
        );
    }
    std::fs::write(dir.join("a.jsonl"), lines.join("\n") + "\n").unwrap();
    let ix = index(root, tmp);
    let scanned = corpus_texts(&ix.root);
    for pattern in [
        r"fn\s+\w+_line",
        r"fn\s\w",
        r"\s+parse_line\(",
        r"[Qq]{3}[0-9]",
        r"(?i)qqq\d",
    ] {
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .unwrap();
        let want: BTreeSet<Key> = scanned
            .iter()
            .filter(|(_, t)| re.is_match(t))
            .map(|(k, _)| k.clone())
            .collect();
        assert!(!want.is_empty(), "{pattern}");
        assert_eq!(
            hit_keys(&ix, &options(&format!("re:{pattern}"), false)),
            want,
            "{pattern}"
        );
    }
}

/// `search --explain` says how each class of query runs: ranked words, a literal with
/// punctuation from the joints index, a regex's required words, a read of a narrowed
/// session, a scan when no word can narrow it (which a plain search also says on stderr), and
/// nothing when no indexed word can hold the needle.
#[test]
fn explain_names_the_plan_of_each_class_of_query() {
    let (tmp, root) = common::conformance_copy();
    let db = tmp.path().join("index.db");
    let explain = |args: &[&str]| -> Value {
        let out = common::pidx(&db, &root)
            .args(["search", "--explain", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let session = "019ccf7f";
    for (args, kind) in [
        (&["parse header"][..], "words"),
        (&["--literal", "parse_line"], "joints"),
        (&["--literal", "src/main.rs"], "match"),
        (&[r"re:fn\s+\w+"], "match"),
        (&[r"re:\d+"], "scan"),
        (&[r"re:\d+", "--session", session], "readWhole"),
        (&["--literal", "zzqqxx"], "nothing"),
    ] {
        let e = explain(args);
        assert_eq!(e["plan"]["kind"], kind, "{args:?}: {e}");
        assert!(
            e["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{e}"
        );
    }
    let narrowed = explain(&[r"re:\d+", "--session", session]);
    assert!(narrowed["spanRows"].as_i64().unwrap() > 0, "{narrowed}");
    assert!(explain(&[r"re:\d+"])["spanRows"].is_null());
    let matched = explain(&[r"re:fn\s+\w+"]);
    assert_eq!(matched["plan"]["fts"], "(\"fn\")", "{matched}");
    assert!(
        matched["read"].as_u64() >= matched["hits"].as_u64(),
        "{matched}"
    );
    let out = common::pidx(&db, &root)
        .args(["search", r"re:\d+"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("every text was read"),
        "{out:?}"
    );
    let out = common::pidx(&db, &root)
        .args(["search", r"re:fn\s+\w+"])
        .output()
        .unwrap();
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// `pidx search --json` hits as (path under `root`, entry, kind, score).
fn scored_hits(db: &Path, root: &Path, query: &str) -> Vec<(String, String, String, f64)> {
    let out = common::succeeded(
        common::pidx(db, root)
            .args(["search", "--limit", "100", "--json", query])
            .output()
            .unwrap(),
    );
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    hits.iter()
        .map(|h| {
            let path = Path::new(h["path"].as_str().unwrap());
            (
                path.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                h["entryId"].as_str().unwrap_or_default().to_string(),
                h["kind"].as_str().unwrap().to_string(),
                h["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The same hits in the same order with the same scores (but for the recency weight's drift
/// between two runs a moment apart).
fn same_ranking(got: &[(String, String, String, f64)], fresh: &[(String, String, String, f64)]) {
    assert_eq!(got.len(), fresh.len());
    for (g, f) in got.iter().zip(fresh) {
        assert_eq!((&g.0, &g.1, &g.2), (&f.0, &f.1, &f.2));
        assert!(
            (g.3 - f.3).abs() <= 1e-9 * f.3.abs(),
            "{g:?} scored {f:?} in a fresh index"
        );
    }
}

/// FTS5's averages record of the index's full-text table (its rows and tokens).
fn averages_record(conn: &rusqlite::Connection) -> Vec<u8> {
    conn.query_row("SELECT block FROM fts_data WHERE id = 1", [], |r| r.get(0))
        .unwrap()
}

/// FTS5 keeps a deleted row of a contentless-delete table in the totals bm25 divides by: an
/// index that had deleted texts (a session rewritten, one removed, one forgotten) scored every
/// hit unlike an index synced afresh over the same files. Its scores must be the fresh one's;
/// and an index from before that was mended (its totals too high) is counted again on opening
/// (migration 0034).
#[test]
fn texts_taken_out_leave_the_ranking_of_a_fresh_index() {
    let (tmp, root) = common::conformance_copy();
    common::long_session(&root, "the long one", "the zebra tests");
    let db = tmp.path().join("index.db");
    common::succeeded(common::pidx(&db, &root).arg("sync").output().unwrap());

    common::long_session(&root, "the the the zebra, the end", "one zebra tests");
    let the = scored_hits(&db, &root, "the");
    let removed = &the
        .iter()
        .find(|h| !h.0.starts_with("--home-user-long"))
        .unwrap()
        .0;
    std::fs::remove_file(root.join(removed)).unwrap();
    let forgotten = the
        .iter()
        .map(|h| &h.0)
        .find(|p| !p.starts_with("--home-user-long") && p != &removed)
        .unwrap();
    common::succeeded(
        common::pidx(&db, &root)
            .args(["forget", root.join(forgotten).to_str().unwrap()])
            .output()
            .unwrap(),
    );

    let fresh_tmp = tempfile::tempdir().unwrap();
    let fresh_root = fresh_tmp.path().join("sessions");
    common::copy_tree(&root, &fresh_root);
    std::fs::remove_file(fresh_root.join(forgotten)).unwrap();
    let fresh_db = fresh_tmp.path().join("index.db");
    let queries = [
        "the",
        "zebra",
        "\"zebra tests\"",
        "the OR zebra",
        "lor*",
        "the -zebra",
    ];
    let ranked_as_fresh = || {
        for q in queries {
            same_ranking(
                &scored_hits(&db, &root, q),
                &scored_hits(&fresh_db, &fresh_root, q),
            );
        }
    };
    ranked_as_fresh();

    // An index of schema 33 whose totals still hold rows taken out.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let block = averages_record(&conn);
    let (mut at, fresh_block) = (0, block.clone());
    let rows = pidx::store::fts5::varint(&block, &mut at).unwrap();
    let tokens = pidx::store::fts5::varint(&block, &mut at).unwrap();
    conn.execute(
        "UPDATE fts_data SET block = ?1 WHERE id = 1",
        [pidx::store::fts5::averages(rows + 2, tokens + 21_003)],
    )
    .unwrap();
    conn.execute_batch("PRAGMA user_version = 33").unwrap();
    drop(conn);
    ranked_as_fresh();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let block = averages_record(&conn);
    assert_eq!(block, fresh_block);
}
