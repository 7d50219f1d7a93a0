//! `pidx watch`: keeps the index within a fraction of a second of pi's writes. The watcher only
//! produces dirty project folders; the same sync code ingests them (only new bytes are read).
//!
//! Order: the caller holds the writer lock; the file watcher starts first, then a full
//! reconcile runs (so nothing written in between is missed), then events are coalesced for
//! `debounce` from the first one that matters, timed from its arrival (not from when the loop,
//! busy syncing, got to it). Events without paths (inotify queue overflow) and the periodic
//! safety reconcile run a full (stat-only when nothing changed) sync. Reads (ours, a query's)
//! produce Access events, which are ignored. Symlinked session files and project folders are
//! watched at their targets too: an append to a target outside the roots makes no event in
//! them. When the watcher cannot start (no inotify, the watch limit reached) it falls back to
//! polling with a message that says why. Errors while syncing (disk full, read-only database)
//! are reported and retried with a growing pause.

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
    /// Events are gathered for at most this long (from the first write) before the dirty
    /// folders are synced...
    pub debounce: Duration,
    /// ... and no longer than until this long passes without a write: one append is synced at
    /// once, a burst (pi writing a turn's entries) together.
    pub quiet: Duration,
    /// Embed new texts after each sync with this model (search by meaning).
    pub embed: Option<std::sync::Arc<crate::meaning::Model>>,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            poll: None,
            reconcile_every: Duration::from_secs(300),
            debounce: Duration::from_millis(150),
            quiet: Duration::from_millis(30),
            embed: None,
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
    let send = move |ev| {
        let _ = tx.send((Instant::now(), ev));
    };
    let (mut watcher, poll) = match opts.poll {
        Some(every) => (None, Some(every)),
        None => match start_watcher(roots, send) {
            Ok(w) => (Some(w), None),
            Err(why) => {
                notice(Notice::Info(format!("{why}; polling every 2s instead")));
                (None, Some(Duration::from_secs(2)))
            }
        },
    };
    let quiet = SyncOptions::default();
    // Links' targets are watched before the first sync, like the roots: an append to a target
    // between that sync and its watch would make no event.
    let mut links = Links::default();
    if let Some(w) = watcher.as_mut() {
        links.follow(w, roots, None);
    }
    let first = sync(store, roots, SyncOptions::with_progress())?;
    notice(Notice::Synced(&first));
    // Entries left to embed: the loop embeds a slice whenever no change waits.
    let mut owed = embed_new(store, opts, &mut notice);
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
                if gather(&rx, roots, opts.debounce, opts.quiet, &mut dirty, &mut full) {
                    notice(Notice::Info(
                        "file events were lost (the kernel's event queue overflowed; if this repeats, raise fs.inotify.max_queued_events); checking every file".into(),
                    ));
                }
            }
        }
        full |= last_full.elapsed() >= opts.reconcile_every;
        if !full && dirty.is_empty() {
            if owed {
                owed = embed_new(store, opts, &mut notice);
            }
            continue;
        }
        if !backoff.is_zero() {
            sleep_unless_stopped(backoff, stop);
        }
        // Before the sync that reads them, as at start.
        if let Some(w) = watcher.as_mut() {
            links.follow(w, roots, (!full).then_some(&dirty));
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
                // A file skipped for an error of its own is read again after a growing pause
                // (the index may be fixed, or the error passing): no event may ever name it
                // again.
                backoff = if report.skipped.is_empty() {
                    Duration::ZERO
                } else {
                    dirty.extend(
                        report
                            .skipped
                            .iter()
                            .filter_map(|p| p.parent())
                            .map(PathBuf::from),
                    );
                    (backoff * 2).clamp(Duration::from_secs(1), Duration::from_secs(60))
                };
                if report.changed_anything() {
                    notice(Notice::Synced(&report));
                    owed = embed_new(store, opts, &mut notice);
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

/// Waits up to 100 ms for an event that matters (a write, not a read), then coalesces what
/// arrives into the dirty set (or `full`) until `quiet` passes without a write, or `debounce`
/// after that first event arrived. Returns whether events were lost.
///
/// Both are timed from when events arrived, not from when this loop got to them: an event that
/// came while the last sync ran has waited already. Before, the window was a whole `debounce`
/// from when the loop took its first event, whatever that was (reads included), so a write
/// that came during a sync waited for the sync, then a full window, then the next sync.
fn gather(
    rx: &mpsc::Receiver<(Instant, Event)>,
    roots: &[Root],
    debounce: Duration,
    quiet: Duration,
    dirty: &mut HashSet<PathBuf>,
    full: &mut bool,
) -> bool {
    let mut lost = false;
    let deadline = Instant::now() + Duration::from_millis(100);
    let opened = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((at, ev)) = rx.recv_timeout(left) else {
            return lost;
        };
        let matters = !is_noise(&ev);
        lost |= take(ev, roots, dirty, full);
        if matters {
            break at;
        }
    };
    let until = opened + debounce;
    let mut last = opened;
    loop {
        let close = until.min(last + quiet);
        let Some(left) = close.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok((at, ev)) => {
                if !is_noise(&ev) {
                    last = last.max(at);
                }
                lost |= take(ev, roots, dirty, full);
            }
            Err(_) => break,
        }
    }
    // What came before the window closed but was not read yet (the window had passed).
    while let Ok((_, ev)) = rx.try_recv() {
        lost |= take(ev, roots, dirty, full);
    }
    lost
}

/// The symlinked session files and project folders watched at their targets, by link path.
#[derive(Default)]
pub(super) struct Links {
    followed: HashSet<PathBuf>,
}

impl Links {
    /// Watches the targets of the links in `dirs` (a sync's dirty project folders, the folders
    /// themselves included), or in every root when `None`; stops watching links gone from
    /// the folders looked at. A target that cannot be watched is left to the periodic
    /// reconcile, as before.
    pub(super) fn follow(
        &mut self,
        w: &mut notify::RecommendedWatcher,
        roots: &[Root],
        dirs: Option<&HashSet<PathBuf>>,
    ) {
        let (looked, found): (HashSet<PathBuf>, _) = match dirs {
            Some(dirs) => (dirs.clone(), links_in(dirs.iter())),
            None => {
                let dirs = project_dirs(roots);
                let found = links_in(dirs.iter());
                (dirs.into_iter().collect(), found)
            }
        };
        self.followed.retain(|link| {
            let here = looked.contains(link) || link.parent().is_some_and(|p| looked.contains(p));
            let keep = !here || found.iter().any(|(l, _)| l == link);
            if !keep {
                let _ = w.unwatch(link);
            }
            keep
        });
        for (link, is_dir) in found {
            if self.followed.contains(&link) {
                continue;
            }
            let mode = if is_dir {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            if w.watch(&link, mode).is_ok() {
                self.followed.insert(link);
            }
        }
    }
}

/// Every project folder of pi-layout roots (a flat root is its own folder).
fn project_dirs(roots: &[Root]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for root in roots {
        match root.layout {
            Layout::Flat => dirs.push(root.path.clone()),
            Layout::Tree => dirs.extend(
                std::fs::read_dir(&root.path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir()),
            ),
            // A gateway's agents folder is watched whole; its layout has no links of pi's.
            Layout::Gateway | Layout::Agent => {}
        }
    }
    dirs
}

/// The symlinks among `dirs` (to folders) and among their `.jsonl` entries (to files), each
/// with whether it points to a folder.
fn links_in<'a>(dirs: impl Iterator<Item = &'a PathBuf>) -> Vec<(PathBuf, bool)> {
    let mut found = Vec::new();
    for dir in dirs {
        if dir.is_symlink() && dir.is_dir() {
            found.push((dir.clone(), true));
        }
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            let path = entry.path();
            if is_link && path.extension().is_some_and(|e| e == "jsonl") && path.is_file() {
                found.push((path, false));
            }
        }
    }
    found
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

/// A watcher of `roots` that hands every event to `send`.
pub(super) fn start_watcher(
    roots: &[Root],
    send: impl Fn(Event) + Send + 'static,
) -> std::result::Result<notify::RecommendedWatcher, String> {
    let mut w =
        notify::recommended_watcher(send).map_err(|e| format!("cannot watch files ({e})"))?;
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

/// Whether an event says nothing was written: a read, or an SQLite sidecar's metadata.
fn is_noise(ev: &Event) -> bool {
    matches!(ev, Ok(ev) if matches!(ev.kind, EventKind::Access(_)) || is_sqlite_sidecar_metadata(ev))
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

/// How long the watcher embeds before it looks for changes again: a whole transformer's
/// backlog takes hours, and new files must not wait for it.
const EMBED_SLICE: Duration = Duration::from_secs(2);

/// Embeds what the last sync added when the watcher embeds, for [`EMBED_SLICE`] at most;
/// returns whether entries are left to embed. A failure is told, not fatal (the next change
/// tries again).
fn embed_new(store: &mut Store, opts: &WatchOptions, notice: &mut impl FnMut(Notice)) -> bool {
    let Some(model) = &opts.embed else {
        return false;
    };
    let pass = crate::ingest::embed::Pass {
        deadline: Some(Instant::now() + EMBED_SLICE),
        progress: false,
    };
    match crate::ingest::embed::embed_pending_with(&mut store.conn, model, pass) {
        Ok(r) => r.more,
        Err(e) => {
            notice(Notice::Info(format!("embedding failed: {e}")));
            false
        }
    }
}
