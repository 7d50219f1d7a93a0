//! Broken files the corpus mutation check (examples/mutate_corpus.rs) found costing the sync:
//! each kept file of tests/fixtures/fuzz/mutate takes the place of its conformance original,
//! and the sync must still succeed with every other file indexed exactly as without it.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

/// Entries and bad lines per file path (entry rows and their text, not their ids).
fn per_file(store: &pidx::store::Store) -> BTreeMap<String, (i64, i64, Option<String>)> {
    common::pairs::<String, String>(
        &store.conn,
        "SELECT f.path, (SELECT count(*) FROM entries e WHERE e.file_id = f.id) || ' ' ||
                (SELECT count(*) FROM bad_lines b WHERE b.file_id = f.id) || ' ' ||
                coalesce((SELECT session_id FROM sessions s WHERE s.file_id = f.id), '-')
         FROM files f",
    )
    .into_iter()
    .map(|(path, facts)| {
        let mut it = facts.split(' ');
        let n = |s: Option<&str>| s.and_then(|s| s.parse().ok()).unwrap_or(-1);
        let entries = n(it.next());
        let bad = n(it.next());
        let id = it.next().filter(|s| *s != "-").map(str::to_string);
        (path, (entries, bad, id))
    })
    .collect()
}

#[test]
fn a_kept_broken_file_beside_untouched_ones_costs_nothing_else() {
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/mutate");
    let mut files: Vec<_> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for broken in files {
        // `tie-9-type-false-alone.jsonl` replaces `--home-user-ties--/tie-9.jsonl`.
        let name = broken.file_name().unwrap().to_string_lossy().into_owned();
        let original = name.split('-').take(2).collect::<Vec<_>>().join("-") + ".jsonl";
        let (tmp, root) = common::conformance_copy();
        let target = walk(&root)
            .into_iter()
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy() == original)
            })
            .unwrap_or_else(|| panic!("{name}: no {original} in the conformance corpus"));
        std::fs::remove_file(&target).unwrap();
        let (clean, _) = common::indexed(&root, &tmp.path().join("clean.db"));
        let want = per_file(&clean);

        std::fs::copy(&broken, &target).unwrap();
        let mut store = pidx::store::Store::open(&tmp.path().join("index.db")).unwrap();
        let roots = vec![pidx::pi::layout::Root {
            path: root.clone(),
            layout: pidx::pi::layout::Layout::Tree,
        }];
        let synced = pidx::ingest::sync::sync(&mut store, &roots, Default::default());
        assert!(
            synced.is_ok(),
            "{name}: the sync failed: {}",
            synced.err().unwrap()
        );
        let got = per_file(&store);
        for (path, facts) in &want {
            assert_eq!(got.get(path), Some(facts), "{name}: {path} lost or changed");
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
