//! The rest of a long first sync, read by a `pidx sync` started in the background once a
//! command has answered from the files it needed (`Env::open_fresh_first`: one project's or
//! one session's folders, or the newest files for a first page of every project). The new
//! user's first `pidx list` then answers in about a second on a store of gigabytes, where
//! reading everything first takes minutes; the next commands answer from what the background
//! sync has committed so far, with a note, until it is done.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::ingest::sync::Deferred;
use crate::term::{plural, thousands};

/// Bytes still to read above which a command that needs only some folders reads those first
/// (about two seconds of sync on the 2-core machine of docs/performance.md).
const FIRST_ANSWER_BYTES: u64 = 64 << 20;

/// [`FIRST_ANSWER_BYTES`], or `PIDX_FIRST_ANSWER_BYTES` when set to a number (`0` always
/// answers first; a huge number never does).
pub fn first_answer_bytes() -> u64 {
    std::env::var("PIDX_FIRST_ANSWER_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(FIRST_ANSWER_BYTES)
}

/// Starts `pidx sync` on the index `db` with the roots named on the command line, detached
/// from this terminal (its own process group: a Ctrl-C here does not stop it), and says so on
/// stderr.
pub fn sync_rest(db: &Path, roots: &[PathBuf], deferred: &Deferred) {
    let exe = std::env::current_exe().unwrap_or_else(|_| "pidx".into());
    let mut cmd = Command::new(exe);
    cmd.arg("--db").arg(db);
    for root in roots {
        cmd.arg("--root").arg(root);
    }
    cmd.arg("sync")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let what = format!(
        "{} other file{} ({:.0} MB)",
        thousands(deferred.files as i128),
        plural(deferred.files),
        deferred.bytes as f64 / 1e6
    );
    match cmd.spawn() {
        Ok(child) => crate::term::say(&format!(
            "pidx: answered from the files this needs first; the {what} are being indexed in the background (pid {}; `pidx status` shows it, `pidx sync` waits for it)",
            child.id()
        )),
        Err(e) => crate::term::say(&format!(
            "pidx: answered from the files this needs first; the {what} are not indexed yet (starting `pidx sync` in the background failed: {e}; run `pidx sync`)"
        )),
    }
}
