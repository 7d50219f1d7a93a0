//! Literal and regex needles that start inside a word (`parse_line` may be the end of
//! `reparse_line`) take their candidates from the words table (`migrations/0013_words.sql`),
//! and literal needles with a `_` from the joints index (`migrations/0016_joints.sql`): they
//! must still find every text a plain scan finds, whatever sits before the word (ASCII,
//! accented or CJK letters), after more lines are appended, and on an index built before the
//! tables existed.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use pidx::query::search::{parse, search, SearchOptions};
use pidx::store::Scope;
use pidx::store::Store;

const TEXTS: &[&str] = &[
    "call reparse_line here",
    "fn parse_line(buf: &str)",
    "PARSE_LINE in capitals",
    "\u{e9}parse_line after an accent",
    "\u{65e5}\u{672c}parse_line after CJK letters",
    "sparse_lines and sparse matrices",
    "parse line as two words",
    "a parse_header, not the line",
    "fn main() { parse_line(x) }",
    "tokenizer, detokenize, TOKENIZED",
    "caf\u{e9}tokenize is one word to FTS5",
    // More words ending with `parse` than are asked for as one phrase each.
    "alphaparse betaparse gammaparse deltaparse epsparse zetaparse etaparse thetaparse",
    "iotaparse lambdaparse muparse kappaparse_lineage",
];

const NEEDLES: &[&str] = &[
    "parse_line",
    "arse_line",
    "e_lin",
    "parse_",
    "arse",
    "rse_li",
    "fn parse",
    "n main",
    "\u{e9}parse_line",
    "okeniz",
    "tokeniz",
    "tokenize",
    "ARSE_LINE",
    "unparse_line",
    "arse line",
    "zzq_none",
    "_line",
    "_header,",
    "_li",
];

fn write_session(root: &Path, name: &str, texts: &[&str]) {
    let dir = root.join("--home-u-words--");
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{name}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/words"}}"#
    )];
    let mut parent = "null".to_string();
    for (i, text) in texts.iter().enumerate() {
        let id = format!("{name}{i:04}");
        lines.push(format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-02T10:00:{:02}.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#,
            i % 60
        ));
        parent = format!("\"{id}\"");
    }
    std::fs::write(
        dir.join(format!("2026-01-01T00-00-00-000Z_{name}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

/// Each text with the id of its entry in `write_session`'s file `name`.
fn ids<'a>(name: &str, texts: &[&'a str]) -> Vec<(String, &'a str)> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("{name}{i:04}"), *t))
        .collect()
}

/// The entries whose text holds each needle, by a plain scan, against what search returns.
fn check(store: &Store, scope: &Scope, texts: &[(String, &str)], regex: bool) {
    check_needles(store, scope, texts, regex, NEEDLES);
}

fn check_needles(
    store: &Store,
    scope: &Scope,
    texts: &[(String, &str)],
    regex: bool,
    needles: &[&str],
) {
    for needle in needles {
        let query = if regex {
            format!("re:{}", regex::escape(needle))
        } else {
            needle.to_string()
        };
        let opts = SearchOptions::everywhere(parse(&query, !regex).unwrap(), usize::MAX);
        let got: BTreeSet<String> = search(&store.conn, scope, &opts)
            .unwrap()
            .into_iter()
            .map(|h| h.entry_id.unwrap())
            .collect();
        let expected: BTreeSet<String> = texts
            .iter()
            .filter(|(_, t)| {
                // `re:` matches ignoring case (Unicode's folding).
                if regex {
                    t.to_lowercase().contains(&needle.to_lowercase())
                } else {
                    t.contains(needle)
                }
            })
            .map(|(id, _)| id.clone())
            .collect();
        assert_eq!(got, expected, "{query:?}");
    }
}

#[test]
fn needles_inside_words_find_every_text_across_appends_and_an_upgrade() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let db = tmp.path().join("index.db");
    write_session(&root, "first", TEXTS);
    let (mut store, scope) = common::indexed(&root, &db);
    let first = ids("first", TEXTS);
    check(&store, &scope, &first, false);
    check(&store, &scope, &first, true);

    // New words arrive with a second file: the words table follows.
    let more = ["then unparse_line came", "and Arse_lineage too"];
    write_session(&root, "second", &more);
    let scope = common::resync(&mut store, &root);
    let all: Vec<(String, &str)> = first.into_iter().chain(ids("second", &more)).collect();
    check(&store, &scope, &all, false);

    // An index from before the words table: opening it fills the table from FTS5's vocabulary.
    store
        .conn
        .execute_batch(&format!(
            "{}
             DROP INDEX sessions_by_cwd; DROP INDEX files_by_root;
             DROP TABLE words; DROP TABLE words_stale; PRAGMA user_version = 12;",
            common::UNDO_HUGE_TEXTS
        ))
        .unwrap();
    drop(store);
    let store = Store::open(&db).unwrap();
    let words: i64 = store
        .conn
        .query_row("SELECT count(*) FROM words", [], |r| r.get(0))
        .unwrap();
    assert!(words > 20, "{words} words after the upgrade");
    // Its texts have no joints: literal search does without them until a rebuild.
    let stale: i64 = store
        .conn
        .query_row("SELECT count(*) FROM joints_stale", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stale, 1);
    let rights: i64 = store
        .conn
        .query_row("SELECT count(*) FROM joint_rights_stale", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rights, 1);
    check(&store, &scope, &all, false);
    check(&store, &scope, &all, true);
}

/// A big sync fills the words table from the full-text vocabulary at its end (here every
/// sync is "big"); while the table is marked stale (a big sync under way, or one cut off)
/// searches do not use it and stay exact.
#[test]
fn the_table_filled_from_the_vocabulary_and_a_stale_table_give_the_same_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    write_session(&root, "first", TEXTS);
    let mut store = Store::open(&tmp.path().join("index.db")).unwrap();
    let roots = vec![pidx::pi::layout::Root {
        path: root.clone(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    let opts = pidx::ingest::sync::SyncOptions {
        words_from_vocabulary: Some(0),
        ..Default::default()
    };
    pidx::ingest::sync::sync(&mut store, &roots, opts).unwrap();
    let scope = Scope::new(&store.conn, &roots).unwrap();
    let count =
        |store: &Store, sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let stale = "SELECT count(*) FROM words_stale";
    assert_eq!(count(&store, stale), 0);
    assert!(count(&store, "SELECT count(*) FROM words") > 20);
    let first = ids("first", TEXTS);
    check(&store, &scope, &first, false);
    check(&store, &scope, &first, true);

    store
        .conn
        .execute_batch("INSERT INTO words_stale(since_ms) VALUES (0); DELETE FROM words;")
        .unwrap();
    check(&store, &scope, &first, false);
    check(&store, &scope, &first, true);
    // The next sync, even a small one, fills the table again and clears the mark.
    write_session(&root, "second", &["then unparse_line came"]);
    let opts = pidx::ingest::sync::SyncOptions::default();
    pidx::ingest::sync::sync(&mut store, &roots, opts).unwrap();
    assert_eq!(count(&store, stale), 0);
    let all: Vec<(String, &str)> = first
        .into_iter()
        .chain(ids("second", &["then unparse_line came"]))
        .collect();
    check(&store, &scope, &all, false);
}

/// Identifiers around `_`: sides longer than the index keeps, doubled and trailing `_`, needles
/// cut by punctuation, and a text with more joints than are indexed (read back instead).
#[test]
fn needles_with_underscores_find_every_text_through_the_joints() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (a40, b40) = ("a".repeat(40), "b".repeat(40));
    let long = format!("x {a40}_{b40} y");
    let longer = format!("{a40}_{}c", "b".repeat(35));
    let many: String = (0..500_000).map(|i| format!("w{i}_x ")).collect();
    let texts: Vec<&str> = vec![
        "let x = self.read_at(f, 0);",
        "READ_AT_MOST is a constant",
        "__init__ and __del__",
        "a__b and c___d",
        "trailing_ underscore",
        "_leading underscore",
        "unread_at_all, spread_attack, pre_read_at",
        "caf\u{e9}_au lait",
        &long,
        &longer,
        &many,
    ];
    write_session(&root, "joints", &texts);
    let (mut store, scope) = common::indexed(&root, &tmp.path().join("index.db"));
    let count = |sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT count(*) FROM joints_stale"), 0);
    assert_eq!(count("SELECT count(*) FROM joint_rights_stale"), 0);
    assert_eq!(count("SELECT count(*) FROM joints_unknown"), 1);
    assert!(count("SELECT count(*) FROM joints WHERE joints MATCH 'read_at'") >= 2);
    let (a35, b33, b38) = ("a".repeat(35), "b".repeat(33), "b".repeat(38));
    let long_needles = [
        format!("{a35}_{b38}"),
        format!("{a35}_{b38} y"),
        format!("{a35}_{b33}c"),
        format!("{a35}_{}c", "b".repeat(35)),
        "w499999_x".to_string(),
        "w1_x ".to_string(),
        format!("_{b40}"),
        format!("_{b33}c"),
    ];
    let mut needles = vec![
        "read_at",
        "self.read_at(",
        "x.read_at",
        "READ_AT",
        "ead_a",
        "_at_",
        "_init",
        "init__",
        "__",
        "a__b",
        "c__",
        "___d",
        "g_",
        "_lead",
        " _leading",
        "f\u{e9}_au",
        "_au",
        "zz_top",
        // Leading `_`: the right side alone, whatever stands before it in the text.
        "_attack",
        "_att",
        "_read_at",
        "_MOST",
        "_all,",
        "_del",
        "_x",
        "_zz",
    ];
    needles.extend(long_needles.iter().map(String::as_str));
    check_needles(&store, &scope, &ids("joints", &texts), false, &needles);

    // The file rewritten with other texts: the old ones leave both indexes, as a rebuild has.
    let rewritten = ["only one_joint now", "and no other"];
    write_session(&root, "joints", &rewritten);
    let scope = common::resync(&mut store, &root);
    let (rebuilt, _) = common::indexed(&root, &tmp.path().join("rebuilt.db"));
    for sql in [
        "SELECT count(*) FROM joints",
        "SELECT count(*) FROM joints_unknown",
    ] {
        let rows = |s: &Store| -> i64 { s.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(rows(&store), rows(&rebuilt), "{sql}");
    }
    check_needles(&store, &scope, &ids("joints", &rewritten), false, &needles);

    let roots = vec![pidx::pi::layout::Root {
        path: root.clone(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    let indexed = |s: &Store| {
        pidx::query::status::status(s, &roots)
            .unwrap()
            .joints_indexed
    };
    assert!(indexed(&store));

    // Texts indexed before the right sides alone (migration 0017): a needle that starts with
    // its `_` does without the joints. (Emptied here, they would give it no candidates.)
    store
        .conn
        .execute_batch("INSERT INTO joint_rights_stale(since_ms) VALUES (0); DELETE FROM joints;")
        .unwrap();
    assert!(!indexed(&store), "status says the right sides are missing");
    let alone = ["_joint", "_jo", "_joint now", "_other"];
    check_needles(&store, &scope, &ids("joints", &rewritten), false, &alone);
}
