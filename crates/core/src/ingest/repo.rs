//! The git work tree of a session's cwd, so each touch also gets its path inside the
//! repository (`touches.rel`): the same file is found again from a clone elsewhere, and
//! `pidx commits` matches a commit's paths to it. Found by looking for `.git` (a folder, or a
//! file in a linked work tree) in the cwd and its parents, once per cwd per process.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::pi::model::EntryRow;

/// cwd -> its work tree's root, `None` when it is in none (or no longer exists).
fn cache() -> &'static Mutex<HashMap<String, Option<String>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn work_tree(cwd: &str) -> Option<String> {
    let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = map.get(cwd) {
        return found.clone();
    }
    let found = Path::new(cwd)
        .ancestors()
        .find(|d| d.join(".git").exists())
        .and_then(|d| d.to_str())
        .map(str::to_string);
    map.insert(cwd.to_string(), found.clone());
    found
}

/// Sets `rel` on the touches of `row` that lie inside the work tree of `cwd`.
pub(super) fn relate(row: &mut EntryRow, cwd: &str) {
    if row.touches.is_empty() || !cwd.starts_with('/') {
        return;
    }
    let Some(root) = work_tree(cwd) else { return };
    for t in &mut row.touches {
        t.rel = t
            .path
            .strip_prefix(root.trim_end_matches('/'))
            .and_then(|r| r.strip_prefix('/'))
            .filter(|r| !r.is_empty())
            .map(str::to_string);
    }
}

/// `PIDX_BENCH_NO_TOUCHES=1`: ingest without file touches, the baseline of
/// examples/bench_files.rs's ingest-cost figures. Not a user setting.
pub(super) fn touches_off() -> bool {
    static OFF: OnceLock<bool> = OnceLock::new();
    *OFF.get_or_init(|| std::env::var_os("PIDX_BENCH_NO_TOUCHES").is_some_and(|v| v == "1"))
}
