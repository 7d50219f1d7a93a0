//! File events of the roots gathered as they come, for a long-running reader that syncs on
//! demand instead of continuously (`pidx mcp`): [`Changes::take`] says which project folders
//! changed since it was last asked, or that everything must be checked (events were lost).
//!
//! A file written just before `take` must be in its answer, but its event reaches us through
//! the watcher's own thread, which a busy machine may not have run yet. So `take` first writes
//! a file of its own into a private folder the same watcher follows, and waits for that file's
//! event: the kernel queues a watcher's events in the order they happen and the watcher
//! forwards them in that order, so every earlier write's event has arrived by then.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use super::watch::{start_watcher, take, Event, Links};
use crate::pi::layout::Root;

/// How long `take` waits for its own file's event before it asks for a full check instead.
const FENCE_WAIT: Duration = Duration::from_secs(1);

pub struct Changes {
    watcher: notify::RecommendedWatcher,
    /// Symlinked session files and project folders, watched at their targets (as `pidx watch`
    /// does): an append to a target outside the roots makes no event under them.
    links: Links,
    rx: mpsc::Receiver<Event>,
    /// The private folder of the fence files; `None` when it could not be made or watched
    /// (then every `take` asks for a full check).
    fence: Option<tempfile::TempDir>,
    /// The number of the last fence file.
    fences: u64,
}

/// What changed since the last [`Changes::take`].
#[derive(Debug, Default)]
pub struct Dirty {
    /// Project folders with changed files.
    pub dirs: HashSet<PathBuf>,
    /// Events were lost or carried no path: check every file.
    pub full: bool,
}

impl Changes {
    /// Starts watching `roots` as `pidx watch` does.
    ///
    /// # Errors
    /// Why file events are not available (then every check is a full one).
    pub fn start(roots: &[Root]) -> std::result::Result<Changes, String> {
        let (tx, rx) = mpsc::channel();
        let mut watcher = start_watcher(roots, move |ev| {
            let _ = tx.send(ev);
        })?;
        let fence = tempfile::Builder::new()
            .prefix("pidx-events-")
            .tempdir()
            .ok()
            .filter(|dir| {
                watcher
                    .watch(dir.path(), RecursiveMode::NonRecursive)
                    .is_ok()
            });
        let mut links = Links::default();
        links.follow(&mut watcher, roots, None);
        Ok(Changes {
            watcher,
            links,
            rx,
            fence,
            fences: 0,
        })
    }

    /// The changes made before this call, since the last one. Links in the changed folders are
    /// followed from now on, before the caller's sync reads them.
    pub fn take(&mut self, roots: &[Root]) -> Dirty {
        let dirty = self.gather(roots);
        let dirs = (!dirty.full).then_some(&dirty.dirs);
        self.links.follow(&mut self.watcher, roots, dirs);
        dirty
    }

    fn gather(&mut self, roots: &[Root]) -> Dirty {
        let mut dirty = Dirty::default();
        let fence = self.fence.as_ref().and_then(|dir| {
            self.fences += 1;
            let path = dir.path().join(self.fences.to_string());
            std::fs::File::create(&path).ok().map(|_| path)
        });
        let Some(fence) = fence else {
            dirty.full = true;
            self.drain(roots, &mut dirty);
            return dirty;
        };
        let deadline = Instant::now() + FENCE_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Ok(ev)) if ev.paths.contains(&fence) => break,
                // Events of earlier fence files.
                Ok(Ok(ev)) if self.is_fence(&ev) => {}
                Ok(ev) => {
                    take(ev, roots, &mut dirty.dirs, &mut dirty.full);
                }
                Err(_) => {
                    dirty.full = true;
                    break;
                }
            }
        }
        let _ = std::fs::remove_file(&fence);
        dirty
    }

    fn is_fence(&self, ev: &notify::Event) -> bool {
        self.fence
            .as_ref()
            .is_some_and(|dir| ev.paths.iter().all(|p| p.parent() == Some(dir.path())))
            && !ev.paths.is_empty()
    }

    fn drain(&self, roots: &[Root], dirty: &mut Dirty) {
        while let Ok(ev) = self.rx.try_recv() {
            if !matches!(&ev, Ok(ev) if self.is_fence(ev)) {
                take(ev, roots, &mut dirty.dirs, &mut dirty.full);
            }
        }
    }
}
