//! A big first sync builds its full text aside (`store::aside`): a thread of its own writes the
//! `fts` and `joints` tables into a file beside the index, copied in at the end. The index must
//! hold the same full text as a sync that writes it in place: every word at every position of
//! every text, every joint, the huge texts kept once in `big_texts`, and the same hits.

use crate::common;

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

/// The conformance corpus plus texts every path of the full text meets: identifiers (joints),
/// a huge tool output (`big_texts`, joints unknown) and a huge user text.
fn corpus(root: &Path) {
    common::copy_tree(Path::new("tests/fixtures/conformance/sessions"), root);
    let dir = root.join("--home-user-aside--");
    std::fs::create_dir_all(&dir).unwrap();
    let id = "0000aaaa-0000-4000-8000-00000000a51d";
    let output =
        "compiling crate_x\\n".repeat((17 << 20) / 18) + "error: fn parse_line_tail failed";
    let mut said = String::new();
    while said.len() < 17 << 20 {
        said.push_str("alpha bravo_charlie delta ");
    }
    said.push_str("zanzibarword");
    let lines = [
        format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/user/aside"}}"#),
        r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"build it with SUM_ONLY_MESSAGE and src/main.rs:42","timestamp":1767225601000}}"#.to_string(),
        format!(r#"{{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":"{output}"}}],"isError":false,"timestamp":1767225602000}}}}"#),
        format!(r#"{{"type":"message","id":"b3","parentId":"b2","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"user","content":[{{"type":"text","text":"{said}"}}],"timestamp":1767225603000}}}}"#),
    ];
    std::fs::write(
        dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

/// Syncs `root` into `db`, every sync counting as big (`aside`) or none; whether the full
/// text was built aside, as `sync --json` says.
fn sync(db: &Path, root: &Path, big: bool) -> bool {
    let out = common::succeeded(
        common::pidx(db, root)
            .env(
                "PIDX_SYNC_BULK_BYTES",
                if big { "0" } else { "1000000000000" },
            )
            .args(["--json", "sync"])
            .output()
            .unwrap(),
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["fullTextAside"].as_bool().unwrap()
}

/// The full-text tables' contents: for each word of each index, how many instances, in how
/// many texts, and sums over their texts and positions (a huge text has millions of
/// instances: one row a word keeps the comparison small and still sensitive to any one
/// instance moved); the texts whose joints are not indexed, the huge texts and every text's
/// length in words. (The words table is filled differently by a big sync, from the
/// vocabulary at its end, than by a small one: `words_from_the_vocabulary` checks it.)
fn full_text(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.fi USING fts5vocab(main, fts, instance);
         CREATE VIRTUAL TABLE temp.ji USING fts5vocab(main, joints, instance);",
    )
    .unwrap();
    let mut out = Vec::new();
    for sql in [
        "SELECT 'fts', term, count(*), count(DISTINCT doc), sum(doc) || ' ' || sum(offset)
           || ' ' || sum((doc % 65521) * (offset % 65521)) FROM temp.fi GROUP BY term",
        "SELECT 'joints', term, count(*), count(DISTINCT doc), sum(doc) || ' ' || sum(offset)
           || ' ' || sum((doc % 65521) * (offset % 65521)) FROM temp.ji GROUP BY term",
        "SELECT 'unknown', rowid, '', '', '' FROM joints_unknown",
        "SELECT 'big', id, file_id, length(body), '' FROM big_texts",
        "SELECT 'sizes', id, sz, '', '' FROM fts_docsize",
        // bm25's totals (rows, tokens), which FTS5 keeps apart from the rows' sizes.
        "SELECT 'totals', hex(block), '', '', '' FROM fts_data WHERE id = 1",
        "SELECT 'mark', since_ms, '', '', '' FROM text_aside",
    ] {
        let mut stmt = conn
            .prepare(&format!("{sql} ORDER BY 1, 2, 3, 4, 5"))
            .unwrap();
        let rows = stmt
            .query_map([], |r| {
                Ok((0..5)
                    .map(|i| match r.get_ref(i).unwrap() {
                        rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into(),
                        other => format!("{other:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" "))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

/// A big sync fills the words table (literal search) from the full-text vocabulary once the
/// full text is in: every indexed word, reversed.
fn words_from_the_vocabulary(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let strings = |sql: &str| -> HashSet<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let vocabulary = strings("SELECT term FROM fts_vocab");
    let words = strings("SELECT rev FROM words");
    assert!(vocabulary.len() > 100);
    let missing: Vec<_> = vocabulary
        .iter()
        .filter(|t| {
            !words.contains(
                &t.chars()
                    .rev()
                    .map(|c| c.to_ascii_lowercase())
                    .collect::<String>(),
            )
        })
        .take(5)
        .collect();
    assert!(
        missing.is_empty(),
        "words missing from the words table: {missing:?}"
    );
}

fn hits(db: &Path, root: &Path, query: &[&str]) -> Vec<String> {
    let out = common::pidx(db, root)
        .args(["--json", "--no-sync", "search", "--limit", "50"])
        .args(query)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)));
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| format!("{} {} {}", h["path"], h["entryId"], h["snippet"]))
        .collect()
}

#[test]
fn full_text_built_aside_equals_full_text_written_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root);
    let before = common::fingerprint(&root);
    let aside = tmp.path().join("aside.db");
    let in_place = tmp.path().join("in-place.db");
    assert!(sync(&aside, &root, true), "a big first sync builds aside");
    assert!(!sync(&in_place, &root, false));
    let (a, b) = (full_text(&aside), full_text(&in_place));
    assert!(a.len() > 1000, "the corpus has full text: {} rows", a.len());
    assert!(a.iter().any(|r| r.starts_with("big ")), "a huge text");
    assert!(a.iter().any(|r| r.starts_with("joints ")), "joints");
    let (sa, sb): (HashSet<_>, HashSet<_>) = (a.iter().collect(), b.iter().collect());
    let only_a: Vec<_> = a.iter().filter(|r| !sb.contains(r)).take(20).collect();
    let only_b: Vec<_> = b.iter().filter(|r| !sa.contains(r)).take(20).collect();
    assert!(
        a == b,
        "built aside only: {only_a:?}\nwritten in place only: {only_b:?}"
    );
    assert!(
        !beside(&aside, "-text").exists(),
        "the file built aside is removed"
    );
    for query in [
        &["parse_line_tail"][..],
        &["zanzibarword"],
        &["--literal", "SUM_ONLY_MESSAGE"],
        &["--literal", "src/main.rs:42"],
        &["re:parse_\\w+_tail"],
        &["\"bravo charlie\""],
        &["session"],
    ] {
        let found = hits(&aside, &root, query);
        assert!(!found.is_empty(), "{query:?} finds something");
        assert_eq!(found, hits(&in_place, &root, query), "{query:?}");
    }
    words_from_the_vocabulary(&aside);
    // The index is no longer empty: a sync after it writes in place, and finds nothing new.
    assert!(!sync(&aside, &root, true));
    assert_eq!(common::fingerprint(&root), before, "a session file changed");
}

fn beside(db: &Path, suffix: &str) -> std::path::PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(suffix);
    p.into()
}
