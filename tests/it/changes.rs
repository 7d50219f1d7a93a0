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
