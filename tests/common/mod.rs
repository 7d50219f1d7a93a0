//! Helpers shared by the integration tests: temp corpora (never the real ~/.pi), lenient JSON
//! parsing (pi writes lone surrogate escapes), and a pidx command bound to a temp index.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub mod live;
pub mod openclaw;
pub mod rollups;

/// The committed conformance corpus, or `$PIDX_CONFORMANCE_DIR` (a fresh one from live.sh).
pub fn conformance_dir() -> PathBuf {
    std::env::var_os("PIDX_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance"))
}

/// Copies `src` to `dst` recursively, keeping symlinks as symlinks.
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let ft = entry.file_type().unwrap();
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from).unwrap(), &to).unwrap();
        } else if ft.is_dir() {
            copy_tree(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap();
        }
    }
}

/// A temp copy of the conformance corpus with its recorded mtimes; returns (tempdir, root).
pub fn conformance_copy() -> (tempfile::TempDir, PathBuf) {
    let src = conformance_dir();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    copy_tree(&src.join("sessions"), &root);
    apply_mtimes(&src.join("mtimes.json"), &root);
    (tmp, root)
}

/// The conformance corpus without the files whose names do not carry their id as pi names
/// files (`<time>_<uuid>.jsonl`), which stop a first answer (see
/// `first_answer.rs`, `hand_named_files_elsewhere_are_read_before_answering`).
pub fn pi_named_copy() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = conformance_copy();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() || dir.is_symlink() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            if path.is_file()
                && pidx::ingest::sync::id_of_name(&path.file_name().unwrap().to_string_lossy())
                    .is_none()
            {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    (tmp, root)
}

/// Sets every file's mtime from a `{relative path: epoch ms}` manifest.
pub fn apply_mtimes(manifest: &Path, root: &Path) {
    let text = std::fs::read_to_string(manifest).unwrap();
    let map: BTreeMap<String, f64> = serde_json::from_str(&text).unwrap();
    for (rel, ms) in map {
        let path = root.join(&rel);
        let Ok(file) = std::fs::OpenOptions::new().append(true).open(&path) else {
            continue;
        };
        // Fractions of a millisecond kept: one file tests Node's rounding of mtimeMs.
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos((ms * 1e6).round() as u64);
        file.set_modified(t).unwrap();
    }
}

/// Parses JSON as `JSON.parse` would (lone surrogates accepted, as U+FFFD; no depth limit:
/// pi's trees nest one level per entry of a linear session).
pub fn parse_lenient(text: &str) -> Value {
    let parse = |t: &str| {
        let mut de = serde_json::Deserializer::from_str(t);
        de.disable_recursion_limit();
        serde::Deserialize::deserialize(&mut de)
    };
    parse(text)
        .or_else(|e| match pidx::pi::js::replace_lone_surrogates(text) {
            Some(fixed) => parse(&fixed),
            None => Err(e),
        })
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", &text[..text.len().min(300)]))
}

pub fn read_json(path: &Path) -> Value {
    parse_lenient(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

/// A `pidx` command on a temp index. Nothing of the person running the tests reaches it: `HOME`
/// is a folder beside the index that does not exist (so no real `~/.pi`, `~/.config/pidx` or
/// models folder is read, and a test that writes to its home must say which), and the variables
/// that would name a config, a model, roots or a team server are unset. A test that needs a home
/// of its own sets `HOME` again after this.
pub fn pidx(db: &Path, root: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("pidx").unwrap();
    let home = db
        .parent()
        .unwrap_or(Path::new("."))
        .join("no-home-of-the-test");
    cmd.env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("PIDX_CONFIG")
        .env_remove("PIDX_MODEL")
        .env_remove("PIDX_ROOTS")
        .env_remove("PIDX_PG")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env("NO_COLOR", "1")
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root);
    cmd
}

/// Syncs the tree root `root` (pi's layout) into `store` and returns the scope seeing it.
pub fn resync(store: &mut pidx::store::Store, root: &Path) -> pidx::store::Scope {
    let roots = vec![pidx::pi::layout::Root {
        path: root.to_path_buf(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    pidx::ingest::sync::sync(store, &roots, pidx::ingest::sync::SyncOptions::default()).unwrap();
    pidx::store::Scope::new(&store.conn, &roots).unwrap()
}

/// A new index at `db` holding the tree root `root`, and the scope seeing it.
pub fn indexed(root: &Path, db: &Path) -> (pidx::store::Store, pidx::store::Scope) {
    let mut store = pidx::store::Store::open(db).unwrap();
    let scope = resync(&mut store, root);
    (store, scope)
}

/// Every regular file under `root` with its bytes hash and mtime.
pub fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime, u64)> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let meta = entry.metadata().unwrap();
            out.insert(
                entry.path().to_path_buf(),
                (
                    xxhash_rust::xxh3::xxh3_64(&bytes),
                    meta.modified().unwrap(),
                    meta.len(),
                ),
            );
        } else if entry.file_type().is_dir() || entry.file_type().is_symlink() {
            out.insert(entry.path().to_path_buf(), (0, std::time::UNIX_EPOCH, 0));
        }
    }
    out
}

/// The index's content as sorted text rows, file ids replaced by paths and sync times left out,
/// so two indexes of the same files compare equal however they were built.
pub fn index_dump(db: &Path) -> Vec<String> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut out = Vec::new();
    for table in ["files", "sessions", "entries", "bad_lines", "listing_text"] {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .filter(|c: &String| {
                !matches!(
                    c.as_str(),
                    "id" | "rid" | "file_id" | "root_id" | "synced_at"
                )
            })
            .filter(|c| !(table == "entries" && c == "id"))
            .collect();
        let key = if table == "files" {
            "t.id"
        } else {
            "t.file_id"
        };
        let mut select: Vec<String> = columns
            .iter()
            .map(|c| format!("quote(t.\"{c}\")"))
            .collect();
        if table == "entries" {
            select.push("quote(t.id)".into());
        }
        let sql = format!(
            "SELECT f.path || ' ' || {} FROM {table} t JOIN files f ON f.id = {key}",
            select.join(" || ' ' || ")
        );
        let rows = conn
            .prepare(&sql)
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|r| format!("{table}: {}", r.unwrap()))
            .collect::<Vec<_>>();
        out.extend(rows);
    }
    out.sort();
    out
}

/// The rows of a two-column query, in its order.
/// A command's output once it is known to have succeeded (else its stderr is the failure).
pub fn succeeded(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn pairs<A: rusqlite::types::FromSql, B: rusqlite::types::FromSql>(
    conn: &rusqlite::Connection,
    sql: &str,
) -> Vec<(A, B)> {
    conn.prepare(sql)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// SQL that takes an index back to before migrations 0015 (huge texts), 0016 (joints), 0017
/// (their right sides) and 0018 (rid runs), for upgrade tests that start from an older schema.
pub const UNDO_HUGE_TEXTS: &str = "DROP TABLE joints; DROP TABLE joints_unknown;
    DROP TABLE joints_stale; DROP TABLE joint_rights_stale; DROP TABLE rid_runs;
    DROP VIEW v_sessions; DROP TABLE big_texts;
    ALTER TABLE sessions DROP COLUMN first_message_line;
    CREATE VIEW v_sessions AS
    SELECT f.path, s.session_id AS id, s.cwd, s.name, s.created_ms, s.last_activity_ms,
           s.message_count, s.first_message, s.entry_count, s.state = 1 AS listed,
           f.size AS bytes
    FROM sessions s JOIN files f ON f.id = s.file_id;";

/// Writes a session of one question and one long answer (21,000 words: `answer_words` in 300
/// places, lorem ipsum between) into project folder `--home-user-long--` of `root`, in place
/// of the one written before (a rewrite of the file when the words change).
pub fn long_session(root: &Path, question: &str, answer_words: &str) {
    let dir = root.join("--home-user-long--");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for i in 0..7_000 {
        text.push_str(if i % 70 < 3 {
            answer_words
        } else {
            "lorem ipsum dolor"
        });
        text.push(' ');
    }
    let id = "0a1b2c3d-0000-7000-8000-00000000abcd";
    let lines = [
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-03-06T10:00:00.000Z","cwd":"/home/user/long"}}"#
        ),
        format!(
            r#"{{"type":"message","id":"l0000001","parentId":null,"timestamp":"2026-03-06T10:00:01.000Z","message":{{"role":"user","content":"{question}","timestamp":1772791201000}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"l0000002","parentId":"l0000001","timestamp":"2026-03-06T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"p","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{{"total":0.0}}}},"timestamp":1772791202000}}}}"#
        ),
    ];
    std::fs::write(
        dir.join(format!("2026-03-06T10-00-00-000Z_{id}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}
