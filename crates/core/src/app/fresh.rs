//! Freshness for the server, as for every CLI query (`Env::open_synced`: new bytes synced,
//! skipped when a watcher holds the index), made cheap for a process that answers many calls:
//! the server follows file events of the roots from its start (`ingest::watch::Changes`, the
//! watcher's own event handling, without its lock), so a call syncs only the project folders
//! that changed since the last call, and nothing at all when none did. Every file is checked
//! on the first call, when events were lost or are not available, and at least every
//! [`RECHECK`]. A call waits for its sync at most [`WAIT`]; a sync still running then (a first
//! sync of a large store) goes on in its own thread, and the call answers from what is
//! committed so far and says so.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::env::Env;
use crate::ingest::changes::{Changes, Dirty};

/// The longest a call waits for the index to catch up.
pub const WAIT: Duration = Duration::from_secs(3);

/// Every file is checked at least this often, whatever the events said.
pub const RECHECK: Duration = Duration::from_secs(60);

/// A sync under way: whether it checks every file, and its outcome.
struct Job {
    full: bool,
    done: Receiver<Result<(), String>>,
}

#[derive(Default)]
struct State {
    /// `None` when file events are not available: every call checks every file.
    changes: Option<Changes>,
    job: Option<Job>,
    /// Changed folders not yet synced (a failed sync leaves `full` set).
    owed: Dirty,
    last_full: Option<Instant>,
}

/// The freshness step shared by every call of one server.
pub struct Fresh {
    env: Arc<Env>,
    state: Mutex<State>,
}

impl Fresh {
    pub fn new(env: Arc<Env>) -> Fresh {
        let changes = if env.global.no_sync {
            None
        } else {
            Changes::start(&env.roots)
                .map_err(|why| {
                    crate::term::say(&format!(
                        "pidx: {why}; every request checks every session file instead"
                    ));
                })
                .ok()
        };
        Fresh {
            env,
            state: Mutex::new(State {
                changes,
                ..State::default()
            }),
        }
    }

    /// Brings the index up to date (or waits for the sync under way), for at most [`WAIT`];
    /// a note for the answer when it could not.
    pub fn freshen(&self) -> Option<String> {
        if self.env.global.no_sync {
            return None;
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let job = match state.job.take() {
            Some(job) => job,
            None => self.start(&mut state)?,
        };
        match job.done.recv_timeout(WAIT) {
            Ok(result) => {
                if job.full && result.is_ok() {
                    state.last_full = Some(Instant::now());
                }
                result.err().map(|e| {
                    state.owed.full = true;
                    format!("the index could not be brought up to date ({e}); this answer is from it as it was")
                })
            }
            Err(RecvTimeoutError::Timeout) => {
                state.job = Some(job);
                Some(format!(
                    "the index is still catching up with new session files (waited {} s); this answer may miss the newest, ask again in a moment",
                    WAIT.as_secs()
                ))
            }
            Err(RecvTimeoutError::Disconnected) => {
                state.owed.full = true;
                Some(
                    "the index sync stopped unexpectedly; this answer is from the index as it was"
                        .into(),
                )
            }
        }
    }

    /// Starts the sync this call needs, or `None` when nothing changed since the last one.
    fn start(&self, state: &mut State) -> Option<Job> {
        if let Some(changes) = &mut state.changes {
            let new = changes.take(&self.env.roots);
            state.owed.full |= new.full;
            state.owed.dirs.extend(new.dirs);
        }
        let full = state.changes.is_none()
            || state.owed.full
            || state.last_full.is_none_or(|t| t.elapsed() >= RECHECK);
        if !full && state.owed.dirs.is_empty() {
            return None;
        }
        let owed = std::mem::take(&mut state.owed);
        let dirs: Option<HashSet<PathBuf>> = (!full).then_some(owed.dirs);
        let (tx, rx) = mpsc::channel();
        let env = Arc::clone(&self.env);
        std::thread::spawn(move || {
            let result = env
                .open_synced_in(dirs.as_ref())
                .map(drop)
                .map_err(|e| e.to_string());
            let _ = tx.send(result);
        });
        Some(Job { full, done: rx })
    }
}
