//! `pidx watch`: keeps the index within a fraction of a second of pi's writes. The watcher only
//! produces dirty project folders; the same sync code ingests them (only new bytes are read).
//!
//! Order: the caller holds the writer lock; the file watcher starts first, then a full
//! reconcile runs (so nothing written in between is missed), then events are coalesced and
//! drained every `debounce`. Events without paths (inotify queue overflow) and the periodic
//! safety reconcile run a full (stat-only when nothing changed) sync. Our own reads produce
//! Access events, which are ignored. When the watcher cannot start (no inotify, the watch
//! limit reached) it falls back to polling with a message that says why. Errors while syncing
//! (disk full, read-only database) are reported and retried with a growing pause.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use crate::error::Result;
use crate::ingest::sync::{sync, sync_dirs, SyncOptions, SyncReport};
use crate::pi::layout::{project_dir_of, Layout, Root};
use crate::store::Store;

/// How to watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Poll every this long instead of using file events.
    pub poll: Option<Duration>,
    /// A full stat-only reconcile this often, whatever the events say.
    pub reconcile_every: Duration,
    /// Events are gathered for this long before the dirty folders are synced.
    pub debounce: Duration,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            poll: None,
            reconcile_every: Duration::from_secs(300),
            debounce: Duration::from_millis(150),
        }
    }
}

/// What the watcher tells its caller.
pub enum Notice<'a> {
    /// A sync that changed something (or found problems).
    Synced(&'a SyncReport),
    /// A sync failed; it is retried after `retry_in`.
    Failed(&'a crate::error::Error, Duration),
    /// Something the user should know (fell back to polling, ...).
    Info(String),
}

/// Why the watcher returned.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// `stop` was set.
    Stopped,
    /// The index file was deleted or replaced under the watcher: its connection must not be
    /// closed (SQLite would delete `-wal`/`-shm` by name, which may now belong to a new index).
    IndexReplaced,
}

/// Watches `roots` until `stop` is set, syncing into `store`. Checks once a second that the
/// index file is still the one it writes.
///
/// # Errors
/// Only errors of the first reconcile; later ones are reported through `notice` and retried.
pub fn watch(
    store: &mut Store,
    roots: &[Root],
    opts: &WatchOptions,
    stop: &AtomicBool,
    mut notice: impl FnMut(Notice),
) -> Result<Ended> {
    let (tx, rx) = mpsc::channel();
    let (watcher, poll) = match opts.poll {
        Some(every) => (None, Some(every)),
        None => match start_watcher(roots, tx) {
            Ok(w) => (Some(w), None),
            Err(why) => {
                notice(Notice::Info(format!("{why}; polling every 2s instead")));
                (None, Some(Duration::from_secs(2)))
            }
        },
    };
    let quiet = SyncOptions::default();
    let first = sync(store, roots, SyncOptions::with_progress())?;
    notice(Notice::Synced(&first));
    let mut last_full = Instant::now();
    let mut dirty: HashSet<PathBuf> = HashSet::new();
    let mut full = false;
    let mut backoff = Duration::ZERO;
    let mut last_check = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        if last_check.elapsed() >= Duration::from_secs(1) {
            if store.is_replaced() {
                return Ok(Ended::IndexReplaced);
            }
            last_check = Instant::now();
        }
        match poll {
            Some(every) => {
                sleep_unless_stopped(every, stop);
                full = true;
            }
            None => {
                if gather(&rx, roots, opts.debounce, &mut dirty, &mut full) {
                    notice(Notice::Info(
                        "file events were lost (the kernel's event queue overflowed; if this repeats, raise fs.inotify.max_queued_events); checking every file".into(),
                    ));
                }
            }
        }
        full |= last_full.elapsed() >= opts.reconcile_every;
        if !full && dirty.is_empty() {
            continue;
        }
        if !backoff.is_zero() {
            sleep_unless_stopped(backoff, stop);
        }
        let result = if full {
            sync(store, roots, quiet)
        } else {
            sync_dirs(store, roots, quiet, &dirty)
        };
        match result {
            Ok(report) => {
                if full {
                    last_full = Instant::now();
                }
                full = false;
                dirty.clear();
                backoff = Duration::ZERO;
                if report.changed_anything() {
                    notice(Notice::Synced(&report));
                }
            }
            Err(e) => {
                // Keep the dirty set; try again after a growing pause.
                backoff = (backoff * 2).clamp(Duration::from_secs(1), Duration::from_secs(60));
                notice(Notice::Failed(&e, backoff));
            }
        }
    }
    drop(watcher);
    Ok(Ended::Stopped)
}

/// Waits up to 100 ms for an event, then coalesces what arrives within the debounce window into
/// the dirty set (or `full`). Returns whether events were lost.
fn gather(
    rx: &mpsc::Receiver<notify::Result<notify::Event>>,
    roots: &[Root],
    debounce: Duration,
    dirty: &mut HashSet<PathBuf>,
    full: &mut bool,
) -> bool {
    let Ok(first) = rx.recv_timeout(Duration::from_millis(100)) else {
        return false;
    };
    let mut lost = take(first, roots, dirty, full);
    let until = Instant::now() + debounce;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(ev) => lost |= take(ev, roots, dirty, full),
            Err(_) => break,
        }
    }
    lost
}

fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::SeqCst) {
        let Some(left) = until.checked_duration_since(Instant::now()) else {
            return;
        };
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

pub(super) type Event = notify::Result<notify::Event>;

pub(super) fn start_watcher(
    roots: &[Root],
    tx: mpsc::Sender<Event>,
) -> std::result::Result<notify::RecommendedWatcher, String> {
    let mut w = notify::recommended_watcher(move |ev| {
        let _ = tx.send(ev);
    })
    .map_err(|e| format!("cannot watch files ({e})"))?;
    for root in roots {
        // A gateway's state folder holds much more than transcripts (workspaces, media): only
        // its agents are watched.
        let agents = root.path.join("agents");
        let target = match root.layout {
            Layout::Gateway if agents.is_dir() => agents,
            _ => root.path.clone(),
        };
        if !target.exists() {
            continue;
        }
        if let Err(e) = w.watch(&target, RecursiveMode::Recursive) {
            return Err(match e.kind {
                notify::ErrorKind::MaxFilesWatch => format!(
                    "the inotify watch limit is reached watching {} (raise it: sudo sysctl fs.inotify.max_user_watches=524288)",
                    root.path.display()
                ),
                _ => format!("cannot watch {} ({e})", root.path.display()),
            });
        }
    }
    Ok(w)
}

/// A metadata change of an SQLite store's `-wal`/`-shm` says nothing was written: SQLite sets
/// their owner on every open when it runs as root, so pidx's own read of an OpenClaw store
/// would otherwise wake the watcher again and again. Writes show up as modifications.
fn is_sqlite_sidecar_metadata(ev: &notify::Event) -> bool {
    use notify::event::ModifyKind;
    matches!(ev.kind, EventKind::Modify(ModifyKind::Metadata(_)))
        && !ev.paths.is_empty()
        && ev.paths.iter().all(|p| {
            let name = p.as_os_str().as_encoded_bytes();
            name.ends_with(b"-wal") || name.ends_with(b"-shm")
        })
}

/// Adds an event's project folders to `dirty`; an event without paths means a full reconcile.
/// Returns whether the event says events were lost (inotify's queue overflowed).
pub(super) fn take(
    ev: Event,
    roots: &[Root],
    dirty: &mut HashSet<PathBuf>,
    full: &mut bool,
) -> bool {
    let Ok(ev) = ev else {
        *full = true;
        return false;
    };
    if matches!(ev.kind, EventKind::Access(_)) || is_sqlite_sidecar_metadata(&ev) {
        return false;
    }
    if ev.need_rescan() || ev.paths.is_empty() {
        *full = true;
        return ev.need_rescan();
    }
    for path in &ev.paths {
        for root in roots {
            if let Some(dir) = project_dir_of(root, path) {
                dirty.insert(dir);
            }
        }
    }
    false
}
