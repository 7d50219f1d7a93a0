//! Freshness for the server, as for every CLI query (`Env::open_synced`: a stat pass and the
//! new bytes, skipped when a watcher holds the index), with one difference: a call waits for it
//! at most [`WAIT`]. A sync still running then (a first sync of a large store) goes on in its
//! own thread; the call answers from what is committed so far and says so.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::super::env::Env;

/// The longest a call waits for the index to catch up.
pub const WAIT: Duration = Duration::from_secs(3);

/// The freshness step shared by every call of one server.
pub struct Fresh {
    env: Arc<Env>,
    /// A sync that outlived its call's wait, still running.
    pending: Mutex<Option<Receiver<Result<(), String>>>>,
}

impl Fresh {
    pub fn new(env: Arc<Env>) -> Fresh {
        Fresh {
            env,
            pending: Mutex::new(None),
        }
    }

    /// Brings the index up to date (or waits for the sync under way), for at most [`WAIT`];
    /// a note for the answer when it could not.
    pub fn freshen(&self) -> Option<String> {
        if self.env.global.no_sync {
            return None;
        }
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let rx = pending.take().unwrap_or_else(|| self.start());
        match rx.recv_timeout(WAIT) {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!(
                "the index could not be brought up to date ({e}); this answer is from it as it was"
            )),
            Err(RecvTimeoutError::Timeout) => {
                *pending = Some(rx);
                Some(format!(
                    "the index is still catching up with new session files (waited {} s); this answer may miss the newest, ask again in a moment",
                    WAIT.as_secs()
                ))
            }
            Err(RecvTimeoutError::Disconnected) => Some(
                "the index sync stopped unexpectedly; this answer is from the index as it was"
                    .into(),
            ),
        }
    }

    fn start(&self) -> Receiver<Result<(), String>> {
        let (tx, rx) = mpsc::channel();
        let env = Arc::clone(&self.env);
        std::thread::spawn(move || {
            let result = env.open_synced().map(drop).map_err(|e| e.to_string());
            let _ = tx.send(result);
        });
        rx
    }
}
