//! A first answer before a long first sync: `list` of one project reads that project's folder,
//! answers, and leaves the other files to a `pidx sync` started in the background. The answer
//! (rows and handles) must be the one a complete index gives, and the index must end up equal
//! to a rebuild. `PIDX_FIRST_ANSWER_BYTES=0` makes any amount of pending work "long".

use crate::common;

use std::path::{Path, PathBuf};

use common::live::{assert_equals_rebuild, finish_sync, first_answer, on};

/// The project folder with the most session files, and a cwd that names it.
fn biggest_project(root: &Path) -> (PathBuf, String) {
    let mut dirs: Vec<(usize, PathBuf)> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| (std::fs::read_dir(&p).unwrap().count(), p))
        .collect();
    dirs.sort();
    let (_, dir) = dirs.pop().unwrap();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    for file in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap_or_default();
        let first = text.lines().next().unwrap_or_default();
        let header: serde_json::Value = serde_json::from_str(first).unwrap_or_default();
        if let Some(cwd) = header["cwd"].as_str() {
            if pidx::pi::layout::encode_cwd(cwd) == name {
                return (dir, cwd.to_string());
            }
        }
    }
    panic!("no header in {} names its folder", dir.display());
}

/// A session in another project whose id shares its first 20 characters with one of `dir`'s:
/// that session's handle must outlast it even while the twin is not read yet.
fn near_twin(root: &Path, dir: &Path) {
    let id = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f.unwrap().path()).ok()?;
            let header: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
            Some(header["id"].as_str()?.to_string())
        })
        .find(|id| uuid::Uuid::try_parse(id).is_ok())
        .expect("a session with a uuid");
    let tail: String = id[20..]
        .chars()
        .map(|c| if c == '-' { '-' } else { '0' })
        .collect();
    let twin = format!("{}{tail}", &id[..20]);
    let twin = if twin == id {
        format!("{}1", &id[..id.len() - 1])
    } else {
        twin
    };
    let other = root.join("--p-other--");
    std::fs::create_dir_all(&other).unwrap();
    let lines = [
        common::live::HEADER
            .replace("\"ID\"", &format!("\"{twin}\""))
            .replace("\"/p\"", "\"/p/other\""),
        common::live::user("u1", None, "twin"),
    ];
    std::fs::write(
        other.join(format!("2026-01-01T00-00-00-000Z_{twin}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

fn list(db: &Path, root: &Path, cwd: &str, json: bool, threshold: &str) -> (String, String) {
    let mut args = vec!["list", "--cwd", cwd];
    if json {
        args.push("--json");
    }
    first_answer(db, root, &args, threshold)
}

#[test]
fn a_project_listed_before_the_first_sync_is_done_answers_as_a_complete_index() {
    let (tmp, root) = common::pi_named_copy();
    let (dir, cwd) = biggest_project(&root);
    near_twin(&root, &dir);
    let total = std::fs::read_dir(&root).unwrap().count();
    assert!(total > 2, "the corpus has several projects");
    for json in [true, false] {
        let first = tmp.path().join(format!("first-{json}.db"));
        let (answer, note) = list(&first, &root, &cwd, json, "0");
        assert!(
            note.contains("in the background"),
            "the answer says the rest is being read: {note}"
        );
        let complete = tmp.path().join(format!("complete-{json}.db"));
        let (expected, quiet) = list(&complete, &root, &cwd, json, "1000000000000");
        assert!(!quiet.contains("background"), "{quiet}");
        assert!(!expected.trim().is_empty() && expected.trim() != "[]");
        assert_eq!(answer, expected, "list --cwd {cwd} (json: {json})");
        finish_sync(&first, &root);
        assert_equals_rebuild(&first, &root);
    }
    // Only the project's folder was read before answering: the note counts the others.
    let others: usize = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && *p != dir)
        .flat_map(|p| std::fs::read_dir(p).unwrap())
        .filter(|f| {
            let f = f.as_ref().unwrap();
            f.file_name().to_string_lossy().ends_with(".jsonl") && f.path().is_file()
        })
        .count();
    let only = tmp.path().join("only.db");
    let (_, note) = list(&only, &root, &cwd, true, "0");
    finish_sync(&only, &root);
    assert!(
        note.contains(&format!("the {others} other file")),
        "{others} files outside {}: {note}",
        dir.display()
    );
}

#[test]
fn a_session_shown_before_the_first_sync_is_done_is_the_complete_index_s() {
    let (tmp, root) = common::pi_named_copy();
    let (dir, _) = biggest_project(&root);
    near_twin(&root, &dir);
    let twin_dir = root.join("--p-other--");
    let twin = std::fs::read_dir(&twin_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let name = twin.file_name().to_string_lossy().into_owned();
    let id = name
        .trim_end_matches(".jsonl")
        .rsplit('_')
        .next()
        .unwrap()
        .to_string();
    let run = |db: &Path, args: &[&str], threshold: &str| {
        let out = on(db, &root, args)
            .env("PIDX_FIRST_ANSWER_BYTES", threshold)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The full id, its upper-case prefix, and a prefix it shares with its near twin.
    let upper = id[..12].to_uppercase();
    for (i, arg) in [id.as_str(), upper.as_str(), &id[..20]]
        .into_iter()
        .enumerate()
    {
        for command in ["context", "show", "tree"] {
            let first = tmp.path().join(format!("first-{i}-{command}.db"));
            let complete = tmp.path().join(format!("complete-{i}-{command}.db"));
            let (code, answer, note) = run(&first, &["--json", command, arg], "0");
            let (code2, expected, _) = run(&complete, &["--json", command, arg], "1000000000000");
            assert_eq!(
                (code, &answer),
                (code2, &expected),
                "{command} {arg}: {note}"
            );
            assert!(
                note.contains("in the background"),
                "{command} {arg}: {note}"
            );
            finish_sync(&first, &root);
        }
    }
    let first = tmp.path().join("ambiguous.db");
    let (code, _, note) = run(&first, &["show", &id[..20]], "0");
    finish_sync(&first, &root);
    assert_ne!(
        code,
        Some(0),
        "a prefix two sessions share is ambiguous: {note}"
    );
    assert!(note.contains("in the background"), "{note}");
}

/// A new file elsewhere whose name does not carry its session id (an import, a renamed file)
/// is read with the first answer's own files, so handles shown meanwhile stay unique; the
/// rest still waits for the background (it once made the first answer read everything).
#[test]
fn hand_named_files_elsewhere_are_read_with_the_first_answer() {
    let (tmp, root) = common::pi_named_copy();
    let (dir, cwd) = biggest_project(&root);
    let other = root.join("--p-hand--");
    std::fs::create_dir_all(&other).unwrap();
    let header = common::live::HEADER.replace("\"ID\"", "\"hand-named\"");
    let user = common::live::user("u1", None, "hand");
    std::fs::write(other.join("notes.jsonl"), format!("{header}\n{user}\n")).unwrap();
    let db = tmp.path().join("hand.db");
    let (answer, note) = list(&db, &root, &cwd, true, "0");
    assert!(note.contains("in the background"), "{note}");
    let complete = tmp.path().join("complete.db");
    assert_eq!(
        answer,
        list(&complete, &root, &cwd, true, "1000000000000").0
    );
    let all = common::live::listed(&db, &root);
    assert!(
        all.iter()
            .any(|(rel, _, _)| rel == "--p-hand--/notes.jsonl"),
        "read before answering"
    );
    assert!(dir.starts_with(&root));
    finish_sync(&db, &root);
}

/// The picker's sync on a new index (`sync_first`): this project's folder is read and committed
/// before anything else, the callback is told how many files are left, then the rest is read;
/// the index ends equal to a rebuild.
#[test]
fn the_pickers_first_sync_reads_this_project_first() {
    let (_tmp, root) = common::pi_named_copy();
    let (dir, _) = biggest_project(&root);
    let db = root.with_file_name("first.db");
    let roots = vec![pidx::pi::layout::Root {
        path: root.clone(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    let count = |sql: &str| -> i64 {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    };
    let files_here = std::fs::read_dir(&dir).unwrap().count() as i64;
    let dirs = std::collections::HashSet::from([dir.clone()]);
    let mut store = pidx::store::Store::open(&db).unwrap();
    let mut told = None;
    let report = pidx::ingest::sync::sync_first(
        &mut store,
        &roots,
        Default::default(),
        &dirs,
        0,
        &mut |later| {
            // What another connection (the picker's) sees at this point: this project only.
            let dir_sql = dir.to_string_lossy().replace('\'', "''");
            let here = count(&format!(
                "SELECT count(*) FROM files WHERE dir = '{dir_sql}'"
            ));
            let elsewhere = count(&format!(
                "SELECT count(*) FROM files WHERE dir <> '{dir_sql}'"
            ));
            told = Some((here, elsewhere, later.files));
        },
    )
    .unwrap();
    let (here, elsewhere, left) = told.expect("the project was read first");
    assert_eq!((here, elsewhere), (files_here, 0));
    // Both passes counted: the project's files and the ones left, every file once.
    assert_eq!(report.new as i64, files_here + left as i64);
    assert!(left > 0);
    drop(store);
    assert_equals_rebuild(&db, &root);

    // An index already up to date reads nothing first and says nothing.
    let mut store = pidx::store::Store::open(&db).unwrap();
    let mut called = false;
    pidx::ingest::sync::sync_first(
        &mut store,
        &roots,
        Default::default(),
        &dirs,
        0,
        &mut |_| called = true,
    )
    .unwrap();
    assert!(!called);
}

/// A first page of every project (`list --all --limit N`) on a new index with a hand-named
/// file among pi's: the page comes from the newest files and that one, and the rest is left to
/// the background, with the same rows a complete index gives.
#[test]
fn a_first_page_with_hand_named_files_still_answers_first() {
    let (tmp, root) = common::pi_named_copy();
    let other = root.join("--p-hand--");
    std::fs::create_dir_all(&other).unwrap();
    let header = common::live::HEADER.replace("\"ID\"", "\"hand-named\"");
    let user = common::live::user("u1", None, "hand");
    std::fs::write(other.join("imported.jsonl"), format!("{header}\n{user}\n")).unwrap();
    let args = ["--json", "list", "--all", "--limit", "3"];
    let db = tmp.path().join("page.db");
    let (answer, note) = first_answer(&db, &root, &args, "0");
    assert!(note.contains("in the background"), "{note}");
    let complete = tmp.path().join("complete.db");
    assert_eq!(
        answer,
        first_answer(&complete, &root, &args, "1000000000000").0
    );
    finish_sync(&db, &root);
}

#[test]
fn a_first_page_that_file_times_cannot_settle_says_it_read_everything() {
    // Every file touched now, as a copy without its times leaves them: no file's time is
    // older than the sessions listed, so the newest-first rounds read to the end.
    let (tmp, root) = common::pi_named_copy();
    let now = std::time::SystemTime::now();
    for f in walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
    {
        if f.file_type().is_file() {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(f.path())
                .unwrap();
            file.set_modified(now).unwrap();
        }
    }
    let args = ["--json", "list", "--all", "--limit", "3"];
    let db = tmp.path().join("page.db");
    let (answer, note) = first_answer(&db, &root, &args, "0");
    assert!(
        note.contains("modification times did not tell which sessions are newest"),
        "{note}"
    );
    assert!(!note.contains("in the background"), "{note}");
    let complete = tmp.path().join("complete.db");
    assert_eq!(
        answer,
        first_answer(&complete, &root, &args, "1000000000000").0
    );
    assert_equals_rebuild(&db, &root);
}
