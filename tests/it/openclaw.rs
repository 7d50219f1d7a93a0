//! OpenClaw's SQLite session store, on a state folder written by OpenClaw 2026.9.6's own code
//! (tests/openclaw/make-store.mjs; the committed copy is tests/fixtures/openclaw, or
//! `$PIDX_OPENCLAW_DIR` from tests/openclaw/live.sh): the reader sees every session window once
//! with its key, every entry in `seq` order (compressed rows and cold archives included), never
//! leaves a file beside the store, and refuses a schema it does not know.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::openclaw::{agents, db_of, fixture_dir, manifest, read_json, snapshot, state_copy};
use pidx::ingest::openclaw::{Reader, DB_NAME};
use serde_json::Value;

#[test]
fn every_session_window_is_read_once_with_its_key_and_agent() {
    let (_tmp, root) = state_copy();
    let mut seen = BTreeMap::new();
    for agent in agents(&root) {
        let name = agent.file_name().unwrap().to_string_lossy().into_owned();
        let reader = Reader::open(&db_of(&agent)).unwrap();
        let info = reader.info().unwrap();
        assert_eq!(info.schema_version, 23);
        assert_eq!(info.agent_id.as_deref(), Some(name.as_str()));
        assert!(info.app_version.is_some());
        for w in reader.windows().unwrap() {
            let old = seen.insert(w.session_id.clone(), (name.clone(), w.session_key.clone()));
            assert!(old.is_none(), "{} read twice", w.session_id);
        }
        assert!(reader.finish());
    }
    assert_eq!(seen, manifest());
}

#[test]
fn entries_come_in_seq_order_with_compressed_rows_and_cold_archives_decoded() {
    let (_tmp, root) = state_copy();
    let answers = read_json(&fixture_dir().join("pi-answers.json"));
    let (mut compressed, mut cold, mut total) = (0, 0, 0);
    for agent in agents(&root) {
        let db = db_of(&agent);
        let raw = rusqlite::Connection::open_with_flags(
            format!("file:{}?immutable=1", db.display()),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        compressed += raw
            .query_row(
                "SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap();
        drop(raw);
        let reader = Reader::open(&db).unwrap();
        for w in reader.windows().unwrap() {
            cold += usize::from(w.hot_last_seq.is_none() && w.cold.is_some());
            let mut seqs = Vec::new();
            let mut entries = Vec::new();
            reader
                .events(&w, None, |e| {
                    seqs.push(e.seq);
                    entries.push(serde_json::from_str::<Value>(&e.json).unwrap());
                    Ok(())
                })
                .unwrap();
            assert!(seqs.windows(2).all(|p| p[0] < p[1]), "{seqs:?}");
            assert_eq!(entries[0]["type"], "session");
            assert_eq!(entries[0]["id"], w.session_id.as_str());
            let want = &answers["sessions"][&w.session_id]["entries"];
            assert_eq!(
                entries.len() as u64,
                want.as_u64().unwrap(),
                "{}",
                w.session_id
            );
            assert_eq!(w.last_seq(), seqs.last().copied());
            total += entries.len();
            // only the entries after a seq
            let mut tail = 0;
            reader
                .events(&w, Some(seqs[seqs.len() - 2]), |_| {
                    tail += 1;
                    Ok(())
                })
                .unwrap();
            assert_eq!(tail, 1);
        }
        assert!(reader.finish());
    }
    assert!(
        compressed > 0,
        "the fixture has no zstd rows: regenerate it"
    );
    assert!(cold > 0, "the fixture has no cold session: regenerate it");
    assert!(total > 100);
}

#[test]
fn reading_leaves_the_store_byte_identical_and_creates_nothing_beside_it() {
    let (_tmp, root) = state_copy();
    let before = snapshot(&root);
    for agent in agents(&root) {
        let reader = Reader::open(&db_of(&agent)).unwrap();
        for w in reader.windows().unwrap() {
            reader.events(&w, None, |_| Ok(())).unwrap();
        }
        assert!(reader.finish());
    }
    assert_eq!(snapshot(&root), before);
}

#[test]
fn an_immutable_read_does_not_hold_when_the_store_changes_under_it() {
    let (_tmp, root) = state_copy();
    let db = db_of(&agents(&root)[0]);
    let reader = Reader::open(&db).unwrap();
    reader.windows().unwrap();
    // a gateway opening the store creates its write-ahead log
    std::fs::write(format!("{}-wal", db.display()), b"").unwrap();
    assert!(!reader.finish());
}

/// Changes a store copy's `schema_meta` with `sql` and leaves it checkpointed, without a
/// write-ahead log, for `Reader::open`.
fn set_meta(db: &Path, sql: &str, params: impl rusqlite::Params) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(sql, params).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
        .unwrap();
}

#[test]
fn an_unknown_schema_is_refused_in_one_line_naming_it() {
    let (_tmp, root) = state_copy();
    let db = db_of(&agents(&root)[0]);
    set_meta(
        &db,
        "UPDATE schema_meta SET schema_version = 31, app_version = '2027.3.1'",
        [],
    );
    let err = Reader::open(&db)
        .err()
        .expect("schema 31 must be refused")
        .to_string();
    assert!(err.contains("schema 31"), "{err}");
    assert!(err.contains("2027.3.1"), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

#[test]
fn a_damaged_stores_own_values_reach_the_error_as_one_clean_line() {
    // What the fuzzer found (tests/fixtures/fuzz/openclaw/role-with-control-bytes): a role and
    // a version text holding line breaks and escape sequences.
    let (_tmp, root) = state_copy();
    let db = db_of(&agents(&root)[0]);
    set_meta(
        &db,
        "UPDATE schema_meta SET role = ?1",
        ["gate\nway\u{1b}[31m red\u{7}"],
    );
    let err = Reader::open(&db).err().expect("refused").to_string();
    assert!(err.contains("not an agent store"), "{err}");
    assert!(
        !err.chars().any(|c| c.is_control()),
        "a control character survived: {err:?}"
    );
    set_meta(
        &db,
        "UPDATE schema_meta SET role = 'agent', schema_version = 31, app_version = ?1",
        ["2027\n\u{1b}]0;title\u{7}"],
    );
    let err = Reader::open(&db).err().expect("refused").to_string();
    assert!(err.contains("schema 31"), "{err}");
    assert!(
        !err.chars().any(|c| c.is_control()),
        "a control character survived: {err:?}"
    );
}

#[test]
fn a_file_that_is_not_an_openclaw_store_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join(DB_NAME);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let err = Reader::open(&db).err().expect("refused").to_string();
    assert!(err.contains("not an OpenClaw agent store"), "{err}");
}

/// Opens a copy of a store for writing, as a stand-in for OpenClaw in the mirror tests (the
/// live check, tests/openclaw/live.sh, makes the same changes through OpenClaw's own code).
fn write_conn(db: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn
}

fn close_clean(conn: rusqlite::Connection) {
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    drop(conn);
}

#[test]
fn the_mirror_copies_every_transcript_then_follows_appends_rewrites_and_deletions() {
    use pidx::ingest::openclaw::mirror;
    let (tmp, root) = state_copy();
    let db = db_of(&root.join("agents/main"));
    let dir = tmp.path().join("mirror");
    let first = mirror::sync(&db, &dir).unwrap();
    let ids: Vec<String> = first.windows.iter().map(|w| w.session_id.clone()).collect();
    assert_eq!((first.rewritten, first.appended), (ids.len(), 0));
    for w in &first.windows {
        let text = std::fs::read_to_string(dir.join(format!("{}.jsonl", w.session_id))).unwrap();
        let head: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(head["id"], w.session_id.as_str());
    }
    let again = mirror::sync(&db, &dir).unwrap();
    assert_eq!((again.rewritten, again.appended, again.removed), (0, 0, 0));

    // an append: one more row after the last seq
    let target = &first.windows[0];
    let path = dir.join(format!("{}.jsonl", target.session_id));
    let before = std::fs::read(&path).unwrap();
    let conn = write_conn(&db);
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at)
         VALUES (?1, ?2, '{\"type\":\"custom\",\"id\":\"zz\",\"parentId\":null,\"customType\":\"x\"}', 0)",
        rusqlite::params![target.session_id, target.last_seq().unwrap() + 1],
    )
    .unwrap();
    close_clean(conn);
    let out = mirror::sync(&db, &dir).unwrap();
    assert_eq!((out.appended, out.rewritten), (1, 0));
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(String::from_utf8_lossy(&after[before.len()..]).contains("\"id\":\"zz\""));

    // a rewrite: the generation changes, the copy is written again as a new file
    let ino = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let old_ino = ino(&path);
    let conn = write_conn(&db);
    conn.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1 AND seq > 2",
        [&target.session_id],
    )
    .unwrap();
    conn.execute(
        "INSERT OR REPLACE INTO transcript_rewrite_watermarks VALUES (?1, 'g2', 0)",
        [&target.session_id],
    )
    .unwrap();
    close_clean(conn);
    let out = mirror::sync(&db, &dir).unwrap();
    assert_eq!((out.appended, out.rewritten), (0, 1));
    assert_ne!(ino(&path), old_ino);
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);

    // a deletion: the window goes, and its copy with it
    let conn = write_conn(&db);
    conn.execute(
        "DELETE FROM session_windows WHERE session_id = ?1",
        [&target.session_id],
    )
    .unwrap();
    close_clean(conn);
    let out = mirror::sync(&db, &dir).unwrap();
    assert_eq!(out.removed, 1);
    assert!(!path.exists());
}

#[test]
fn a_copy_that_is_not_what_pidx_wrote_is_written_again() {
    use pidx::ingest::openclaw::mirror;
    let (tmp, root) = state_copy();
    let db = db_of(&root.join("agents/ops"));
    let dir = tmp.path().join("mirror");
    let first = mirror::sync(&db, &dir).unwrap();
    let path = dir.join(format!("{}.jsonl", first.windows[0].session_id));
    let good = std::fs::read(&path).unwrap();
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let out = mirror::sync(&db, &dir).unwrap();
    assert_eq!(out.rewritten, 1);
    assert_eq!(std::fs::read(&path).unwrap(), good);
}

#[test]
fn a_leftover_wal_without_shm_is_read_without_creating_the_shm() {
    let (_tmp, root) = state_copy();
    let db = db_of(&agents(&root)[0]);
    // a gateway that crashed can leave its -wal (here empty) without a -shm
    std::fs::write(format!("{}-wal", db.display()), b"").unwrap();
    let before = snapshot(&root);
    let reader = Reader::open(&db).unwrap();
    assert!(!reader.windows().unwrap().is_empty());
    assert!(reader.finish());
    assert_eq!(snapshot(&root), before);
}
