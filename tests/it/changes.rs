//! `ingest::changes::Changes` (what `pidx mcp` follows between calls): a write that returned
//! before `take` is in its answer, however soon after the write `take` runs.

use pidx::ingest::changes::Changes;
use pidx::pi::layout::{Layout, Root};

#[test]
fn a_write_just_before_take_is_in_its_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("--home-u-p--");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-01-01T00-00-00-000Z_a.jsonl");
    std::fs::write(&file, "{}\n").unwrap();
    let roots = vec![Root {
        path: tmp.path().to_path_buf(),
        layout: Layout::Tree,
    }];
    let mut changes = Changes::start(&roots).unwrap();
    let first = changes.take(&roots);
    assert!(!first.full && first.dirs.is_empty(), "{first:?}");
    for i in 0..200 {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        writeln!(f, "{{\"n\":{i}}}").unwrap();
        drop(f);
        let dirty = changes.take(&roots);
        assert!(
            dirty.dirs.contains(&project) && !dirty.full,
            "append {i}: {dirty:?}"
        );
        // Nothing is left over for the next call.
        let after = changes.take(&roots);
        assert!(
            after.dirs.is_empty() && !after.full,
            "after append {i}: {after:?}"
        );
    }
}

/// A session file that is a symlink to a file outside the roots (pi lists it), and a project
/// folder linked in later: appends to their targets are in the next `take`, as under
/// `pidx watch`.
#[test]
fn appends_to_symlinked_targets_are_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let project = root.join("--home-u-p--");
    let outside = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(outside.join("linked-project")).unwrap();
    let target = outside.join("target.jsonl");
    std::fs::write(&target, "{}\n").unwrap();
    std::os::unix::fs::symlink(&target, project.join("2026-01-01T00-00-00-000Z_a.jsonl")).unwrap();
    let roots = vec![Root {
        path: root.clone(),
        layout: Layout::Tree,
    }];
    let append = |file: &std::path::Path| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
        writeln!(f, "{{\"n\":1}}").unwrap();
    };
    let mut changes = Changes::start(&roots).unwrap();
    assert!(changes.take(&roots).dirs.is_empty());
    append(&target);
    let dirty = changes.take(&roots);
    assert!(dirty.dirs.contains(&project) && !dirty.full, "{dirty:?}");
    // A project folder linked in: its link is an event; from then on its files' appends are.
    let linked = root.join("--home-u-q--");
    std::os::unix::fs::symlink(outside.join("linked-project"), &linked).unwrap();
    let dirty = changes.take(&roots);
    assert!(dirty.dirs.contains(&linked) || dirty.full, "{dirty:?}");
    let inside = outside.join("linked-project/2026-01-01T00-00-00-000Z_b.jsonl");
    std::fs::write(&inside, "{}\n").unwrap();
    let dirty = changes.take(&roots);
    assert!(dirty.dirs.contains(&linked) && !dirty.full, "{dirty:?}");
    append(&inside);
    let dirty = changes.take(&roots);
    assert!(dirty.dirs.contains(&linked) && !dirty.full, "{dirty:?}");
}
