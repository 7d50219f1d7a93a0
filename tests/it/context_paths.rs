//! `context` takes a shortcut on untangled sessions: path facts stored at ingest let it walk only
//! from the leaf back to the newest compaction's `firstKeptEntryId`. This test builds random
//! session trees (branches, compactions with kept entries on and off the path or missing,
//! model/thinking changes, context edits, entries pi throws on) and checks that, at every entry
//! as leaf, the shortcut gives exactly what the whole-path walk gives.

use crate::common;

use std::fmt::Write as _;

use pidx::query::context::build_context;
use pidx::query::resolve::Resolved;
use pidx::store::Store;

/// A small deterministic generator (64-bit LCG), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// One session file: a random tree of `n` entries after the header.
fn session(seed: u64, n: usize) -> String {
    let mut rng = Rng(seed);
    let mut out = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
    );
    out.push('\n');
    let mut ids: Vec<String> = Vec::new();
    for i in 0..n {
        let id = format!("e{i:04}");
        // Mostly extend the newest entry; sometimes branch from an older one.
        let parent = match (ids.len(), rng.below(10)) {
            (0, _) => "null".to_string(),
            (len, 0) => format!("\"{}\"", ids[rng.below(len as u64) as usize]),
            (len, _) => format!("\"{}\"", ids[len - 1]),
        };
        let ts = format!("2026-01-01T00:{:02}:{:02}.000Z", i / 60 % 60, i % 60);
        let head = format!(r#""id":"{id}","parentId":{parent},"timestamp":"{ts}""#);
        let pick = |rng: &mut Rng| {
            ids[rng.below(ids.len().max(1) as u64) as usize % ids.len().max(1)].clone()
        };
        let line = match rng.below(20) {
            0 | 1 if !ids.is_empty() => {
                // firstKeptEntryId: usually a recent ancestor, sometimes any entry or none.
                let kept = match rng.below(4) {
                    0 => format!("\"{}\"", pick(&mut rng)),
                    1 => "null".into(),
                    _ => format!(
                        "\"{}\"",
                        ids[ids.len().saturating_sub(1 + rng.below(5) as usize)]
                    ),
                };
                format!(
                    r#"{{"type":"compaction",{head},"summary":"sum {i}","firstKeptEntryId":{kept},"tokensBefore":{i}}}"#
                )
            }
            2 => format!(r#"{{"type":"model_change",{head},"provider":"p{i}","modelId":"m{i}"}}"#),
            3 => format!(r#"{{"type":"thinking_level_change",{head},"thinkingLevel":"high{i}"}}"#),
            4 if !ids.is_empty() => format!(
                r#"{{"type":"context_edit",{head},"targetId":"{}","replacement":{{"content":"edited {i}"}}}}"#,
                pick(&mut rng)
            ),
            5 => {
                format!(r#"{{"type":"branch_summary",{head},"fromId":"x","summary":"branch {i}"}}"#)
            }
            6 if rng.below(8) == 0 => format!(r#"{{"type":"message",{head}}}"#),
            7 => format!(
                r#"{{"type":"custom_message",{head},"customType":"c","content":"custom {i}","display":true}}"#
            ),
            8..=10 => format!(
                r#"{{"type":"message",{head},"message":{{"role":"assistant","content":[{{"type":"text","text":"a{i}"}}],"provider":"ap{i}","model":"am{i}","usage":{{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{{"total":0.5}}}},"stopReason":"stop","timestamp":{i}}}}}"#
            ),
            _ => format!(
                r#"{{"type":"message",{head},"message":{{"role":"user","content":"u{i}","timestamp":{i}}}}}"#
            ),
        };
        writeln!(out, "{line}").unwrap();
        ids.push(id);
    }
    out
}

#[test]
fn shortcut_equals_the_whole_path_walk_at_every_leaf() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("sessions").join("--p--");
    std::fs::create_dir_all(&project).unwrap();
    let sessions = 12;
    for seed in 0..sessions {
        let name = format!("2026-01-01T00-00-00-000Z_s{seed}.jsonl");
        std::fs::write(project.join(name), session(seed + 1, 300)).unwrap();
    }
    let (store, _) = common::indexed(&tmp.path().join("sessions"), &tmp.path().join("index.db"));
    let conn = &store.conn;
    let tangled: i64 = conn
        .query_row("SELECT count(*) FROM sessions WHERE tangled", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(tangled, 0, "generated sessions are untangled");

    let files: Vec<(i64, String)> = common::pairs(conn, "SELECT id, path FROM files ORDER BY id");
    assert_eq!(files.len(), sessions as usize);
    let mut compared = 0;
    let mut cut = 0;
    let mut errors = 0;
    for (file_id, path) in files {
        let session = Resolved {
            file_id,
            path,
            source: None,
        };
        let leaves: Vec<(String, bool)> = conn
            .prepare(
                "SELECT id, compaction_seq IS NOT NULL FROM entries WHERE file_id = ?1 ORDER BY seq",
            )
            .unwrap()
            .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (leaf, has_compaction) in leaves {
            let render = |conn: &rusqlite::Connection| {
                build_context(conn, &session, Some(&leaf))
                    .map(|c| (c.to_json(), c.path_len))
                    .map_err(|e| e.to_string())
            };
            let fast = render(conn);
            conn.execute(
                "UPDATE sessions SET tangled = 1 WHERE file_id = ?1",
                [file_id],
            )
            .unwrap();
            let full = render(conn);
            conn.execute(
                "UPDATE sessions SET tangled = 0 WHERE file_id = ?1",
                [file_id],
            )
            .unwrap();
            assert_eq!(fast, full, "{} at leaf {leaf}", session.path);
            compared += 1;
            cut += usize::from(has_compaction);
            errors += usize::from(full.is_err());
        }
    }
    // The generator must exercise both the shortcut and pi's throwing entries.
    assert_eq!(compared, 12 * 300);
    assert!(
        cut > compared / 2,
        "only {cut} of {compared} leaves had a compaction"
    );
    assert!(errors > 0, "no leaf hit an entry pi throws on");
}

/// (seq, depth, compaction, thinking, model, throws) of every entry.
type Facts = (i64, i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>);

fn facts_of(store: &Store) -> Vec<Facts> {
    store
        .conn
        .prepare(
            "SELECT seq, depth, compaction_seq, thinking_seq, model_seq, throws_seq
             FROM entries ORDER BY file_id, seq",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn synced(dir: &std::path::Path, db: &str) -> Store {
    common::indexed(&dir.join("sessions"), &dir.join(db)).0
}

#[test]
fn facts_from_appends_equal_facts_from_one_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("sessions").join("--p--");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-01-01T00-00-00-000Z_s.jsonl");
    let text = session(7, 400);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&file, lines[..150].concat()).unwrap();
    let mut appended = synced(tmp.path(), "a.db");
    std::fs::write(&file, text.as_bytes()).unwrap();
    common::resync(&mut appended, &tmp.path().join("sessions"));
    let fresh = synced(tmp.path(), "b.db");
    assert_eq!(facts_of(&appended).len(), 400);
    assert_eq!(facts_of(&appended), facts_of(&fresh));
}

#[test]
fn forward_references_and_repeated_ids_tangle_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("sessions").join("--p--");
    std::fs::create_dir_all(&project).unwrap();
    let header = r#"{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let msg = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"x"}}}}"#
        )
    };
    let files = [
        ("clean", vec![msg("a", "null"), msg("b", "\"a\"")]),
        ("forward", vec![msg("b", "\"a\""), msg("a", "null")]),
        ("repeat", vec![msg("a", "null"), msg("a", "null")]),
        ("orphan", vec![msg("a", "\"gone\"")]),
    ];
    for (name, body) in &files {
        let text = format!("{header}\n{}\n", body.join("\n"));
        std::fs::write(project.join(format!("{name}.jsonl")), text).unwrap();
    }
    let store = synced(tmp.path(), "i.db");
    let tangled: Vec<(String, bool)> = common::pairs(
        &store.conn,
        "SELECT f.name, s.tangled FROM files f JOIN sessions s ON s.file_id = f.id ORDER BY f.name",
    );
    let expect = [
        ("clean", false),
        ("forward", true),
        ("orphan", true),
        ("repeat", true),
    ];
    let expect: Vec<(String, bool)> = expect
        .iter()
        .map(|(n, t)| (format!("{n}.jsonl"), *t))
        .collect();
    assert_eq!(tangled, expect);
}

/// What the `context` fuzz target found (tests/fixtures/fuzz/context/): a model change `e0` on
/// a line that is not JSON (skipped, as pi skips it), a compaction `e1` whose parent is `e0`, a
/// later compaction that takes the id `e0` with itself as parent, and compactions without ids.
/// pi's map sends `e1`'s parent to the later `e0`, whose parent is itself: pi never returns;
/// pidx stops at the repeat with a path of two. The stored facts, made line by line, see no
/// parent for `e1` (depth 0), so the session must be tangled for `context` to walk, not cut.
#[test]
fn an_id_taken_after_its_child_tangles_the_session_and_the_walk_counts_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("sessions").join("--p--");
    std::fs::create_dir_all(&project).unwrap();
    let compaction = |head: &str| {
        format!(
            r#"{{"type":"compaction",{head}"timestamp":"not a date","summary":"","firstKeptEntryId":"e0","tokensBefore":1}}"#
        )
    };
    let mut lines = vec![
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        r#"{"type":"model_change","id":"e0","parentId":null,"timestamp":"2026-01-01T00:15:40.000Z","provider":"\u{1c}","modelId":"m0"}"#.to_string(),
        compaction(r#""id":"e1","parentId":"e0","#),
        compaction(""),
        compaction(r#""id":"e0","parentId":"e0","#),
    ];
    lines.extend(std::iter::repeat_n(compaction(""), 11));
    let file = project.join("2026-01-01T00-00-00-000Z_s.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let store = synced(tmp.path(), "i.db");
    let conn = &store.conn;
    let (file_id, tangled): (i64, bool) = conn
        .query_row("SELECT file_id, tangled FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(tangled, "a shadowed id and a parent not yet seen tangle it");
    let session = Resolved {
        file_id,
        path: file.to_string_lossy().into_owned(),
        source: None,
    };
    let ctx = build_context(conn, &session, Some("e1")).unwrap();
    assert_eq!(
        ctx.to_json(),
        r#"{"messages":[{"role":"compactionSummary","summary":"","tokensBefore":1,"timestamp":null}],"thinkingLevel":"off","model":null}"#
    );
    assert_eq!((ctx.path_len, ctx.cycle), (2, true));
}
