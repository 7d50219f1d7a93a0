//! Context building and tree walking over fuzzed entry sequences: the input drives a small
//! session file (branches, duplicate and missing ids, self-parents, compactions keeping any
//! entry, edits, labels, v1/v2 headers, odd values, broken lines) that is synced into a fresh
//! index. Then `tree` and `context` at every entry end (libFuzzer's timeout catches a hang), fail
//! only with a one-line `Invalid`/`NoEntry`, never an SQL or I/O error; the walk visits no node
//! twice on one path; every context entry lies on the leaf's path (the parent chain, ids
//! resolved as pi's map resolves them: the last entry with an id wins); and the shortcut over
//! stored path facts (taken where ingest left the session untangled) gives exactly what the
//! whole-path walk gives.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pidx::error::Error;
use pidx::pi::layout::{Layout, Root};
use pidx::query::context::{build_context, plan_context};
use pidx::query::resolve::Resolved;
use pidx::query::tree::{build_tree, walk_tree, Event};
use pidx::store::Store;

/// Reads choices from the input; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.byte() as usize % n
        }
    }
    /// A short string taken from the input as is (to reach odd characters and broken JSON).
    fn raw(&mut self) -> String {
        let n = self.below(12);
        let take = n.min(self.0.len());
        let (s, rest) = self.0.split_at(take);
        self.0 = rest;
        String::from_utf8_lossy(s).into_owned()
    }
}

/// A JSON value a field may hold where pi writes a string id.
fn id_value(b: &mut Bytes, ids: &[String]) -> String {
    match b.below(10) {
        0 => "null".into(),
        1 => "42".into(),
        2 => "[\"a\"]".into(),
        3 => format!("\"{}\"", b.raw().escape_default()),
        4 => "\"missing\"".into(),
        _ if ids.is_empty() => "null".into(),
        _ => format!("\"{}\"", ids[b.below(ids.len())]),
    }
}

fn session(b: &mut Bytes) -> String {
    let header = match b.below(8) {
        0 => r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        1 => {
            r#"{"type":"session","version":2,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#
        }
        2 => r#"{"type":"session","version":3,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        3 => r#"{"type":"message","id":"x","message":{"role":"user","content":"no header"}}"#,
        _ => {
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#
        }
    };
    let mut out = format!("{header}\n");
    let mut ids: Vec<String> = Vec::new();
    let n = b.below(40);
    for i in 0..n {
        // Few distinct ids, so duplicates happen.
        let id = match b.below(8) {
            0 if !ids.is_empty() => ids[b.below(ids.len())].clone(),
            1 => format!("d{}", b.below(4)),
            _ => format!("e{i}"),
        };
        let parent = match b.below(8) {
            0 => format!("\"{id}\""),
            1 | 2 => id_value(b, &ids),
            _ => ids.last().map_or("null".into(), |p| format!("\"{p}\"")),
        };
        let ts = match b.below(10) {
            0 => "\"not a date\"".into(),
            1 => "12345".into(),
            _ => format!(
                "\"2026-01-01T00:{:02}:{:02}.000Z\"",
                b.below(60),
                b.below(60)
            ),
        };
        let head = if b.below(12) == 0 {
            format!(r#""timestamp":{ts}"#)
        } else {
            format!(r#""id":"{id}","parentId":{parent},"timestamp":{ts}"#)
        };
        let target = id_value(b, &ids);
        let text = format!("\"{}\"", b.raw().escape_default());
        let line = match b.below(20) {
            0 => format!(
                r#"{{"type":"compaction",{head},"summary":{text},"firstKeptEntryId":{target},"tokensBefore":1}}"#
            ),
            1 => format!(
                r#"{{"type":"compaction",{head},"summary":{text},"firstKeptEntryIndex":{}}}"#,
                b.below(50)
            ),
            2 => format!(r#"{{"type":"model_change",{head},"provider":{text},"modelId":"m{i}"}}"#),
            3 => format!(r#"{{"type":"thinking_level_change",{head},"thinkingLevel":{text}}}"#),
            4 => format!(
                r#"{{"type":"context_edit",{head},"targetId":{target},"replacement":{{"content":{text}}}}}"#
            ),
            5 => {
                format!(r#"{{"type":"branch_summary",{head},"fromId":{target},"summary":{text}}}"#)
            }
            6 => format!(r#"{{"type":"label",{head},"targetId":{target},"label":{text}}}"#),
            7 => format!(
                r#"{{"type":"custom_message",{head},"customType":"c","content":{text},"display":true}}"#
            ),
            8 => format!(r#"{{"type":"message",{head},"message":null}}"#),
            9 => format!(r#"{{"type":"message",{head}}}"#),
            10 => format!(r#"{{"type":"message",{head},"message":{text}}}"#),
            11 => format!(r#"{{"type":"session_info",{head},"name":{text}}}"#),
            12 => format!(r#"{{"type":{text},{head}}}"#),
            13 => format!(
                r#"{{"type":"message",{head},"message":{{"role":"toolResult","toolCallId":"t","toolName":"bash","content":[{{"type":"text","text":{text}}}],"isError":false}}}}"#
            ),
            14 => format!(
                r#"{{"type":"message",{head},"message":{{"role":"assistant","content":[{{"type":"text","text":{text}}},{{"type":"toolCall","id":"t","name":"bash","arguments":{{"command":{text}}}}}],"provider":"p","model":"m","usage":{{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{{"total":0.5}}}},"stopReason":"stop","timestamp":{i}}}}}"#
            ),
            15 => b.raw(),
            _ => format!(
                r#"{{"type":"message",{head},"message":{{"role":"user","content":{text},"timestamp":{i}}}}}"#
            ),
        };
        out.push_str(&line);
        out.push('\n');
        ids.push(id);
    }
    if b.below(4) == 0 {
        // a last line without its newline
        out.push_str(&b.raw());
    }
    out
}

struct Template {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    empty_db: Vec<u8>,
}

/// A freshly migrated empty index, made once: each input starts from a copy of it.
fn template() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let db = dir.join("empty.db");
        drop(Store::open(&db).unwrap());
        let empty_db = std::fs::read(&db).unwrap();
        Template {
            _tmp: tmp,
            dir,
            empty_db,
        }
    })
}

fn allowed(e: &Error) -> bool {
    matches!(e, Error::Invalid(_) | Error::NoEntry { .. })
}

fuzz_target!(|data: &[u8]| {
    let t = template();
    let work = tempfile::tempdir_in(&t.dir).unwrap();
    let db = work.path().join("index.db");
    std::fs::write(&db, &t.empty_db).unwrap();
    let root = work.path().join("sessions");
    let project = root.join("--p--");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-01-01T00-00-00-000Z_00000000-0000-4000-8000-000000000000.jsonl");
    std::fs::write(&file, session(&mut Bytes(data))).unwrap();

    let mut store = Store::open(&db).unwrap();
    let roots = vec![Root {
        path: root,
        layout: Layout::Tree,
    }];
    pidx::ingest::sync::sync(&mut store, &roots, Default::default()).expect("sync");
    let conn = &store.conn;
    let Ok(file_id) = conn.query_row("SELECT id FROM files", [], |r| r.get::<_, i64>(0)) else {
        return;
    };
    let session = Resolved {
        file_id,
        path: file.to_string_lossy().into_owned(),
        source: None,
    };

    let tree = build_tree(conn, &session).expect("tree");
    let mut on_path = HashSet::new();
    walk_tree(&tree, |ev| match ev {
        Event::Enter(n, _, _) => assert!(on_path.insert(n), "node {n} entered inside itself"),
        Event::Leave(n) => assert!(on_path.remove(&n), "node {n} left without entering"),
    });
    let _ = tree.to_json();

    // (seq, id, parent id) of every entry, and pi's id map (the last entry with an id wins).
    let rows: Vec<(i64, Option<String>, Option<String>)> = conn
        .prepare("SELECT seq, id, parent_id FROM entries WHERE file_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let by_id: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.1.as_deref().map(|id| (id, i)))
        .collect();
    let mut leaves: Vec<Option<&str>> = vec![None];
    leaves.extend(
        rows.iter()
            .filter_map(|r| r.1.as_deref())
            .take(30)
            .map(Some),
    );
    // The shortcut is taken only where ingest left the session untangled; forcing it on a
    // tangled one compares facts ingest itself declared untrustworthy (the first finding).
    let tangled: bool = conn
        .query_row(
            "SELECT tangled FROM sessions WHERE file_id = ?1",
            [file_id],
            |r| r.get(0),
        )
        .unwrap();
    for leaf in leaves {
        let fast = build_context(conn, &session, leaf);
        if let Err(e) = &fast {
            assert!(allowed(e), "context at {leaf:?}: {e}");
            assert!(!e.to_string().contains('\n'), "not one line: {e}");
        }
        conn.execute(
            "UPDATE sessions SET tangled = 1 WHERE file_id = ?1",
            [file_id],
        )
        .unwrap();
        let full = build_context(conn, &session, leaf);
        let plan = plan_context(conn, &session, leaf);
        conn.execute(
            "UPDATE sessions SET tangled = ?2 WHERE file_id = ?1",
            rusqlite::params![file_id, tangled],
        )
        .unwrap();
        let show = |r: &Result<pidx::query::context::Context, Error>| {
            r.as_ref()
                .map(|c| (c.to_json(), c.path_len, c.cycle))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            show(&fast),
            show(&full),
            "shortcut and walk differ at leaf {leaf:?}"
        );
        let Ok(plan) = plan else { continue };
        // The leaf's path by the parent chain, ids resolved through pi's map.
        let mut on_chain = HashSet::new();
        let start = match leaf {
            Some(id) => by_id.get(id).copied(),
            None => rows.len().checked_sub(1),
        };
        let mut at = start;
        while let Some(i) = at {
            if !on_chain.insert(i) {
                break;
            }
            at = rows[i].2.as_deref().and_then(|p| by_id.get(p).copied());
        }
        let chain_ids: HashSet<&str> = on_chain
            .iter()
            .filter_map(|&i| rows[i].1.as_deref())
            .collect();
        for i in 0..plan.len() {
            if let Some(id) = plan.entry_id(i) {
                assert!(
                    chain_ids.contains(id),
                    "context entry {id} at leaf {leaf:?} is not on the leaf's path"
                );
            }
        }
    }
});
