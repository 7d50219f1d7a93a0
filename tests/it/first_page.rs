//! A first page of every project (`list --all --limit N`) before a long first sync: the files
//! are read newest mtime first, in doubling batches, until no file left can change the page
//! (a file's `modified` is at most its mtime), the answer is given, and the rest is left to a
//! `pidx sync` in the background. The answer must be a complete index's, and the index must end
//! equal to a rebuild. `PIDX_FIRST_ANSWER_BYTES=0` makes any pending work "long".

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use common::live::{assert_equals_rebuild, finish_sync, first_answer, on};

const HOUR_MS: i64 = 3_600_000;
/// 2026-06-01T00:00:00Z.
const BASE_MS: i64 = 1_780_272_000_000;

/// `n` sessions in 7 project folders; session i's three messages are i hours before
/// [`BASE_MS`], and its file was last written 5 ms after its last message, as pi leaves it.
fn store(root: &Path, n: usize) {
    for i in 0..n {
        let path = session(root, i, BASE_MS - i as i64 * HOUR_MS);
        set_mtime(&path, BASE_MS - i as i64 * HOUR_MS + 2 * 60_000 + 5);
    }
}

/// Session `i` (id, folder) with three user messages a minute apart from `start`.
fn session(root: &Path, i: usize, start: i64) -> PathBuf {
    {
        let dir = root.join(format!("--p-{}--", i % 7));
        std::fs::create_dir_all(&dir).unwrap();
        let id = format!("00000000-0000-4000-8000-{i:012}");
        let mut lines = vec![format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":"/p/{}"}}"#,
            pidx::pi::js::iso(start),
            i % 7
        )];
        let mut parent = "null".to_string();
        for m in 0..3 {
            let ms = start + m * 60_000;
            let ts = pidx::pi::js::iso(ms);
            lines.push(format!(
                r#"{{"type":"message","id":"m{m}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":"session {i} message {m}","timestamp":{ms}}}}}"#
            ));
            parent = format!("\"m{m}\"");
        }
        let path = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }
}

/// 16 sessions whose messages are 2.5 hours before [`BASE_MS`] (between sessions 2 and 3) in
/// files written a day after it (rewritten, or copied): the newest files, yet not the newest
/// sessions, so the first batch (16 files for a page of 5) cannot settle the page: session 0's
/// file, unread, is newer than its last row.
fn rewritten(root: &Path) {
    for i in 1000..1016 {
        let path = session(root, i, BASE_MS - 2 * HOUR_MS - HOUR_MS / 2);
        set_mtime(&path, BASE_MS + 24 * HOUR_MS);
    }
}

fn set_mtime(path: &Path, ms: i64) {
    let file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.set_modified(UNIX_EPOCH + Duration::from_millis(ms as u64))
        .unwrap();
}

fn list_all(db: &Path, root: &Path, limit: usize, json: bool, threshold: &str) -> (String, String) {
    let limit = limit.to_string();
    let mut args = vec!["list", "--all", "--limit", &limit];
    if json {
        args.push("--json");
    }
    first_answer(db, root, &args, threshold)
}

#[test]
fn a_first_page_of_every_project_is_read_from_the_newest_files_and_is_a_complete_indexs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    store(&root, 300);
    rewritten(&root);
    // 5 rows: the first batch (16 files, the rewritten ones) leaves session 0 unread, newer
    // than the page's last row; the second (32 more) settles it. 20 rows: the first batch (40)
    // settles it. 200 rows: the first batch (400) is every file.
    for (limit, json, left) in [(5, true, 268), (20, false, 276), (200, true, 0)] {
        let first = tmp.path().join(format!("first-{limit}.db"));
        let (answer, note) = list_all(&first, &root, limit, json, "0");
        if left > 0 {
            assert!(
                note.contains(&format!("the {left} other files")),
                "{limit} rows: {note}"
            );
        } else {
            assert!(!note.contains("background"), "{limit} rows: {note}");
        }
        let complete = tmp.path().join(format!("complete-{limit}.db"));
        let (expected, quiet) = list_all(&complete, &root, limit, json, "1000000000000");
        assert!(!quiet.contains("background"), "{quiet}");
        assert_eq!(answer.lines().count(), expected.lines().count());
        assert_eq!(
            answer, expected,
            "list --all --limit {limit} (json: {json})"
        );
        finish_sync(&first, &root);
        assert_equals_rebuild(&first, &root);
    }
    // Without --limit every file is needed: no first page.
    let db = tmp.path().join("all.db");
    let out = on(&db, &root, &["list", "--all", "--json"])
        .env("PIDX_FIRST_ANSWER_BYTES", "0")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("background"));
}

#[test]
fn a_file_written_after_its_mtime_says_mtimes_cannot_be_trusted_and_everything_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    store(&root, 300);
    // Session 3's file claims to be older than its last message (times set back), yet it is
    // still among the newest 16 by mtime: once it is read, the bound is known not to hold here.
    let three =
        root.join("--p-3--/2026-01-01T00-00-00-000Z_00000000-0000-4000-8000-000000000003.jsonl");
    set_mtime(&three, BASE_MS - 3 * HOUR_MS + 60_000);
    let db = tmp.path().join("first.db");
    let (answer, note) = list_all(&db, &root, 5, true, "0");
    assert!(
        !note.contains("background"),
        "everything read first: {note}"
    );
    let complete = tmp.path().join("complete.db");
    assert_eq!(
        answer,
        list_all(&complete, &root, 5, true, "1000000000000").0
    );
    assert_equals_rebuild(&db, &root);
}

/// pi's own files (the conformance corpus: forks, branches, compactions, odd and old versions)
/// read newest first for a first page: the page is a complete index's, and after the
/// background sync the index equals a rebuild whatever order the files were read in. (A page
/// of 1 or 5 rows is answered with 24 files left; 30 rows need every file.)
#[test]
fn pis_files_read_newest_first_end_as_a_rebuild() {
    let (tmp, root) = common::pi_named_copy();
    for (limit, left) in [(1, true), (5, true), (30, false)] {
        let first = tmp.path().join(format!("first-{limit}.db"));
        let (answer, note) = list_all(&first, &root, limit, true, "0");
        assert_eq!(
            note.contains("in the background"),
            left,
            "{limit} rows: {note}"
        );
        let complete = tmp.path().join(format!("complete-{limit}.db"));
        let (expected, _) = list_all(&complete, &root, limit, true, "1000000000000");
        assert!(expected.trim() != "[]");
        assert_eq!(answer, expected, "list --all --limit {limit}");
        finish_sync(&first, &root);
        assert_equals_rebuild(&first, &root);
    }
}
