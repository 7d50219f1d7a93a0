//! A first answer before a long first sync: `list` of one project reads that project's folder,
//! answers, and leaves the other files to a `pidx sync` started in the background. The answer
//! (rows and handles) must be the one a complete index gives, and the index must end up equal
//! to a rebuild. `PIDX_FIRST_ANSWER_BYTES=0` makes any amount of pending work "long".

mod common;

use std::path::{Path, PathBuf};

use common::live::{assert_equals_rebuild, on};

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
        .find(|id| id.len() > 24 && id.is_ascii())
        .expect("a session with a uuid");
    let twin = format!("{}{}", &id[..20], "0".repeat(id.len() - 20));
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
    let out = on(db, root, &args)
        .env("PIDX_FIRST_ANSWER_BYTES", threshold)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits for the background sync: `pidx sync` waits for the writer lock, then finds nothing
/// left (or reads what is).
fn finish(db: &Path, root: &Path) {
    let out = on(db, root, &["sync"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_project_listed_before_the_first_sync_is_done_answers_as_a_complete_index() {
    let (tmp, root) = common::conformance_copy();
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
        finish(&first, &root);
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
    finish(&only, &root);
    assert!(
        note.contains(&format!("the {others} other file")),
        "{others} files outside {}: {note}",
        dir.display()
    );
}
