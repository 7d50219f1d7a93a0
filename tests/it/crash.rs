//! `kill -9` of `pidx sync` part-way: every batch commits with its file's new offset in one
//! transaction, so the next sync must end with exactly the index a fresh `--rebuild` gives (no
//! entry lost, none duplicated), whenever the kill lands.

use crate::common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A corpus big enough for a debug-build sync to take a while, with one file large enough to
/// need several batches (pidx commits every 20,000 rows).
fn corpus(root: &Path) {
    let line = |i: usize, parent: Option<usize>, text: &str| {
        let parent = parent.map_or("null".to_string(), |p| format!("\"e{p}\""));
        format!(
            r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{text} {i}","timestamp":{i}}}}}"#
        )
    };
    for p in 0..4 {
        let dir = root.join(format!("--home-u-p{p}--"));
        std::fs::create_dir_all(&dir).unwrap();
        for s in 0..30 {
            let entries = if p == 0 && s == 0 { 45_000 } else { 300 };
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(dir.join(format!("2026-01-01T00-00-00-000Z_p{p}s{s}.jsonl")))
                    .unwrap(),
            );
            writeln!(
                f,
                r#"{{"type":"session","version":3,"id":"p{p}s{s}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p{p}"}}"#
            )
            .unwrap();
            for i in 0..entries {
                writeln!(f, "{}", line(i, i.checked_sub(1), "some words to index")).unwrap();
            }
        }
    }
}

fn entries_in(db: &Path) -> i64 {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
        .unwrap_or(0)
}

/// What a search finds in the full-text tables: the texts holding a word, the literal
/// candidates of the joints index, whether a first sync's aside build is still marked, and the
/// words literal search looks pieces of needles up in.
fn full_text_in(db: &Path) -> (i64, i64, i64, i64, i64) {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let one = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    (
        one("SELECT count(*) FROM fts WHERE fts MATCH 'index'"),
        one("SELECT count(*) FROM fts_docsize"),
        one("SELECT count(*) FROM joints_docsize"),
        one("SELECT count(*) FROM text_aside"),
        one("SELECT count(*) FROM words"),
    )
}

/// `bulk`: every sync takes the big sync's path (full text built aside, `store::aside`).
fn sync_cmd(db: &Path, root: &Path, bulk: bool) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("pidx"));
    if bulk {
        // Every batch committed in the file built aside too: a kill then lands after some of
        // its commits, and the next sync goes on from the last one.
        cmd.env("PIDX_SYNC_BULK_BYTES", "0")
            .env("PIDX_TEXT_COMMIT_BYTES", "1");
    }
    // Impact blocks for the words of every text (`some`, `words`, `to`, `index`): built at the
    // sync's end, where a kill can land too.
    cmd.env("PIDX_IMPACT_MIN_TEXTS", "1000")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("sync")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

#[test]
fn sync_killed_at_any_point_then_resumed_equals_a_rebuild() {
    killed_then_resumed(false);
}

/// The same with the first sync's full text built aside and copied in at its end: a kill
/// before the copy leaves the mark, and the next sync goes on from the build's last commit.
#[test]
fn a_first_sync_building_full_text_aside_killed_then_resumed_equals_a_rebuild() {
    killed_then_resumed(true);
}

fn killed_then_resumed(bulk: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root);
    let before = common::fingerprint(&root);

    let reference = tmp.path().join("reference.db");
    let status = sync_cmd(&reference, &root, bulk)
        .arg("--rebuild")
        .status()
        .unwrap();
    assert!(status.success());
    let expected = common::index_dump(&reference);
    let expected_text = full_text_in(&reference);
    let expected_words = common::live::fts_dump(&reference, &reference);
    assert_eq!(
        expected_text.0,
        45_000 + 119 * 300,
        "every text holds `index`"
    );
    assert_eq!(expected_text.3, 0);
    assert!(common::live::check_impact_blocks(&reference) >= 4);
    let total = entries_in(&reference);
    assert_eq!(total, 45_000 + 119 * 300);

    // Kill once some entries are committed: early, a third in, two thirds in.
    let mut kills = Vec::new();
    let mut went_on = 0;
    for (n, target) in [1, total / 3, 2 * total / 3].into_iter().enumerate() {
        let db = tmp.path().join(format!("killed-{n}.db"));
        let mut child = sync_cmd(&db, &root, bulk).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen = 0;
        while seen < target && Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
            seen = entries_in(&db);
        }
        let finished_first = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let at_kill = entries_in(&db);
        kills.push((target, at_kill, finished_first));
        eprintln!("kill {n}: aimed at {target}, {at_kill} of {total} entries committed, finished first: {finished_first}");

        let out = sync_cmd(&db, &root, bulk)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the sync after the kill failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stderr);
        eprintln!("after kill {n}: {said}");
        went_on += usize::from(said.contains("going on from where it was committed"));
        assert_eq!(
            common::index_dump(&db),
            expected,
            "killed with {at_kill} of {total} entries committed"
        );
        assert_eq!(
            full_text_in(&db),
            expected_text,
            "full text after a kill with {at_kill} of {total} entries committed"
        );
        assert!(
            common::live::fts_dump(&db, &reference) == expected_words,
            "every word's texts after a kill with {at_kill} of {total} entries committed"
        );
        assert_eq!(
            common::live::check_impact_blocks(&db),
            common::live::check_impact_blocks(&reference),
            "words with impact blocks after a kill with {at_kill} of {total} entries committed"
        );
    }
    // The kills must have landed part-way, or the test proved nothing.
    assert!(
        kills
            .iter()
            .any(|&(_, at, done)| !done && at > 0 && at < total),
        "no kill landed mid-sync: {kills:?}"
    );
    if bulk {
        assert!(went_on > 0, "no sync went on from a build's last commit");
    }
    assert_eq!(common::fingerprint(&root), before, "a session file changed");
}
