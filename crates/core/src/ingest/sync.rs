//! `sync`: brings the index up to date with the files on disk. A stat pass compares every file
//! with its row (new / grown / rewritten / gone); grown files are read from their stored offset,
//! whole lines only; rewritten ones (inode change, shrink, head or tail hash mismatch) are read
//! again from byte 0. Each batch of entries commits together with the file's new offset, so an
//! interrupted sync resumes exactly where it stopped.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use rusqlite::{Connection, TransactionBehavior};

use super::pipeline::ingest_all;
use super::work::Work;
pub use super::work::{BadLine, SyncOptions, SyncReport};
use crate::error::Result;
use crate::ingest::discover::{self, discover, Found, Root};
use crate::ingest::gateway;
use crate::ingest::openclaw;
use crate::pi::layout::project_dir_of;
use crate::store::writer::{self, Stamp, Stamps};
use crate::store::Store;
use crate::store::{aside, impacts, words};

/// Brings the index up to date with `roots`.
///
/// # Errors
/// Index errors (disk full, read-only, corrupt). Unreadable session files are not errors:
/// they are listed in the report and skipped.
pub fn sync(store: &mut Store, roots: &[Root], opts: SyncOptions) -> Result<SyncReport> {
    sync_scoped(store, roots, opts, None)
}

/// Like [`sync`], for some project folders only (a watcher's dirty set): files there are
/// stat'ed and ingested, files gone from there are removed, the rest is not looked at.
///
/// # Errors
/// As [`sync`].
pub fn sync_dirs(
    store: &mut Store,
    roots: &[Root],
    opts: SyncOptions,
    dirs: &HashSet<PathBuf>,
) -> Result<SyncReport> {
    sync_scoped(store, roots, opts, Some(dirs))
}

/// [`sync`] for a screen that can show one project before the rest (the picker on a new
/// index): when at least `threshold` bytes are to be read, the files in `dirs` are read and
/// committed first and `first_done` is told what is left, then everything else is read. The
/// report counts both passes.
///
/// # Errors
/// As [`sync`].
pub fn sync_first(
    store: &mut Store,
    roots: &[Root],
    opts: SyncOptions,
    dirs: &HashSet<PathBuf>,
    threshold: u64,
    first_done: &mut dyn FnMut(&Deferred),
) -> Result<SyncReport> {
    let mut plan = plan(store, roots, None)?;
    let later = (plan.pending_bytes() >= threshold)
        .then(|| plan.keep_only(dirs))
        .filter(|later| later.files > 0);
    let Some(later) = later else {
        // Nothing was left for later: one pass reads it all.
        return plan.ingest(store, opts);
    };
    // The first files' full text is built with the rest's (`store::aside`).
    let first = plan.ingest(
        store,
        SyncOptions {
            hand_over: true,
            ..opts
        },
    )?;
    first_done(&later);
    let mut rest = sync(store, roots, opts)?;
    rest.new += first.new;
    rest.changed += first.changed;
    rest.removed += first.removed;
    rest.entries += first.entries;
    rest.bytes += first.bytes;
    rest.bad.extend(first.bad);
    rest.errors.extend(first.errors);
    rest.skipped.extend(first.skipped);
    rest.warnings.extend(first.warnings);
    Ok(rest)
}

fn sync_scoped(
    store: &mut Store,
    roots: &[Root],
    opts: SyncOptions,
    only: Option<&HashSet<PathBuf>>,
) -> Result<SyncReport> {
    plan(store, roots, only)?.ingest(store, opts)
}

/// A sync whose stat pass is done: the gone files are removed and a gateway's metadata is up
/// to date; the new and grown files are still to be read.
pub struct Plan {
    started: Instant,
    report: SyncReport,
    work: Vec<Work>,
}

/// The files a [`Plan`] was told to leave for later, and their session ids as their names say
/// (`<time>_<id>.jsonl`), so the handles shown meanwhile stay unique once they are read.
#[derive(Debug, Default)]
pub struct Deferred {
    pub files: usize,
    pub bytes: u64,
    pub ids: Vec<String>,
}

/// Stats every file of `roots` (or of the `only` folders) against the index.
///
/// # Errors
/// As [`sync`].
pub fn plan(store: &mut Store, roots: &[Root], only: Option<&HashSet<PathBuf>>) -> Result<Plan> {
    let started = Instant::now();
    let mut report = SyncReport::default();
    let mut work = Vec::new();
    // A first sync stopped before its full text was copied in left entries without texts:
    // this sync goes on from the build's last commit (the files past it are read again), or,
    // when its file is lost, starts the index over.
    let only = match aside::left(&store.conn)? {
        aside::Left::Interrupted => {
            match aside::recover(&store.conn, &store.path)? {
                Some(again) => crate::term::say(&format!(
                    "pidx: the last sync stopped while building the full text; going on from where it was committed ({again} file{} read again)",
                    crate::term::plural(again)
                )),
                None => {
                    crate::term::say(
                        "pidx: the last sync stopped while building the full text, and what it built is lost; starting the index over",
                    );
                    store.start_over()?;
                }
            }
            None
        }
        _ => only,
    };
    for root in roots {
        plan_root(store, root, only, &mut report, &mut work)?;
    }
    Ok(Plan {
        started,
        report,
        work,
    })
}

impl Plan {
    /// The bytes still to read: a grown file's new bytes, a new or rewritten file's all.
    pub fn pending_bytes(&self) -> u64 {
        self.work.iter().map(pending_bytes).sum()
    }

    /// The folders of the files still to read that `wanted` picks, if it picks any.
    pub fn dirs_where(&self, wanted: impl Fn(&Found) -> bool) -> Option<HashSet<PathBuf>> {
        let dirs: HashSet<PathBuf> = self
            .work
            .iter()
            .filter(|w| wanted(&w.2))
            .map(|w| w.2.dir().to_path_buf())
            .collect();
        (!dirs.is_empty()).then_some(dirs)
    }

    /// Leaves the files outside `dirs` for later (the next sync reads them), except the new
    /// ones whose names do not carry a session id as pi names files (`<time>_<uuid>.jsonl`:
    /// imports, renamed files, links): handles shown meanwhile must stay unique among the
    /// files left, and only a name tells a file's id unread, so those few are read now with
    /// `dirs` (all of them once made a first answer read everything).
    pub fn keep_only(&mut self, dirs: &HashSet<PathBuf>) -> Deferred {
        let mut ids = Vec::new();
        let (later, keep): (Vec<Work>, Vec<Work>) =
            std::mem::take(&mut self.work).into_iter().partition(|w| {
                if dirs.contains(w.2.dir()) {
                    return false;
                }
                // Files the index already holds keep their ids there.
                if w.3.is_some() {
                    return true;
                }
                id_of_name(w.2.name()).map(|id| ids.push(id)).is_some()
            });
        ids.sort_unstable();
        self.work = keep;
        Deferred {
            files: later.len(),
            bytes: later.iter().map(pending_bytes).sum(),
            ids,
        }
    }

    /// Moves the `k` files still to read with the newest mtimes into a plan of their own, which
    /// also takes this plan's report (its stat errors and removals are told once); this plan
    /// keeps the others, newest first.
    pub fn take_newest(&mut self, k: usize) -> Plan {
        self.work
            .sort_by_key(|w| std::cmp::Reverse(w.2.stat.mtime_ns));
        let rest = self.work.split_off(k.min(self.work.len()));
        Plan {
            started: self.started,
            report: std::mem::take(&mut self.report),
            work: std::mem::replace(&mut self.work, rest),
        }
    }

    /// The mtime (ms) of the newest file still to read.
    pub fn newest_left_ms(&self) -> Option<i64> {
        self.work.iter().map(|w| w.2.stat.mtime_ms()).max()
    }

    /// Reads the planned files into the index.
    ///
    /// # Errors
    /// As [`sync`].
    pub fn ingest(mut self, store: &mut Store, opts: SyncOptions) -> Result<SyncReport> {
        // A big sync leaves the words table to the full-text vocabulary at its end (seconds per
        // GB of index) instead of gathering the words of every text as it reads (a quarter
        // more sync time): the table is marked stale first, so readers and a sync after a crash
        // know not to trust it until then.
        let at = opts
            .words_from_vocabulary
            .or_else(bulk_from_env)
            .unwrap_or(WORDS_FROM_VOCABULARY);
        let bulk = self.pending_bytes() >= at || words::is_stale(&store.conn)?;
        if bulk {
            words::mark_stale(&store.conn)?;
        }
        // A big sync into empty full-text tables builds them on the second core; so does a
        // first answer's, whose background sync goes on with it.
        let aside = if aside::left(&store.conn)? == aside::Left::HandedOver {
            Some(aside::Aside::resume(&store.conn, &store.path)?)
        } else if (bulk || opts.hand_over)
            && !self.work.is_empty()
            // SQLite attaches the builder's file by a UTF-8 name.
            && store.path.to_str().is_some()
            && aside::fits(&store.conn)?
        {
            Some(aside::Aside::start(&store.conn, &store.path)?)
        } else {
            None
        };
        let to = aside.as_ref().and_then(aside::Aside::sender);
        ingest_all(&store.conn, &self.work, opts, !bulk, to, &mut self.report)?;
        let mut text_in = true;
        if let Some(aside) = aside {
            if opts.hand_over {
                aside.hand_over(&store.conn)?;
                text_in = false;
            } else {
                aside.finish(&store.conn)?;
                store.reopen()?;
                self.report.full_text_aside = true;
            }
        }
        // The words of a full text still aside are filled once it is in (still marked stale).
        // The frequent words' blocks, once the full text is in: built or extended (seconds per
        // GB of JSONL on a big sync; nothing on most small ones).
        if text_in {
            let min_texts = opts
                .impact_min_texts
                .or_else(impact_min_texts_from_env)
                .unwrap_or(impacts::MIN_TEXTS);
            let frequent = if bulk {
                Some(words::refill(&store.conn, min_texts)?)
            } else {
                None
            };
            impacts::update(&store.conn, frequent, min_texts)?;
        }
        self.report.elapsed = self.started.elapsed();
        Ok(self.report)
    }
}

/// Copies in a full text the last sync handed over and left (a first answer that read every
/// file after all, so no background sync goes on with it).
///
/// # Errors
/// As [`sync`].
pub fn settle_full_text(store: &mut Store) -> Result<()> {
    if aside::left(&store.conn)? == aside::Left::HandedOver {
        let report = Plan {
            started: Instant::now(),
            report: SyncReport::default(),
            work: Vec::new(),
        }
        .ingest(store, SyncOptions::default())?;
        debug_assert!(report.full_text_aside);
    }
    Ok(())
}

/// From this many bytes to read, a sync fills the words table from the full-text vocabulary
/// once at its end instead of word by word (`store::words`).
pub const WORDS_FROM_VOCABULARY: u64 = 64 << 20;

/// `PIDX_SYNC_BULK_BYTES`: where a sync starts to count as big (bytes to read), in place of
/// [`WORDS_FROM_VOCABULARY`]: the crash trials make a small corpus take the big sync's path.
fn bulk_from_env() -> Option<u64> {
    std::env::var("PIDX_SYNC_BULK_BYTES").ok()?.parse().ok()
}

/// `PIDX_IMPACT_MIN_TEXTS`: the texts a word must be in to get impact blocks, in place of
/// [`impacts::MIN_TEXTS`]: the crash trials give the words of a small corpus blocks.
fn impact_min_texts_from_env() -> Option<i64> {
    std::env::var("PIDX_IMPACT_MIN_TEXTS").ok()?.parse().ok()
}

fn pending_bytes(w: &Work) -> u64 {
    let size = w.2.stat.len;
    match &w.3 {
        Some(prev) if prev.ino == w.2.stat.ino as i64 && prev.size <= size as i64 => {
            size.saturating_sub(u64::try_from(prev.offset).unwrap_or(0))
        }
        _ => size,
    }
}

/// The session id in a file name pi gave (`<time>_<uuid>.jsonl`), if it has one.
pub fn id_of_name(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".jsonl")?;
    let (_, id) = stem.rsplit_once('_')?;
    uuid::Uuid::try_parse(id).ok().map(|_| id.to_string())
}

/// Compares one root's files (or, for a watcher, its dirty folders) with the index: unchanged
/// files are counted, changed and new ones queued, gone ones removed; a gateway's metadata
/// files are brought up to date.
fn plan_root(
    store: &mut Store,
    root: &Root,
    only: Option<&HashSet<PathBuf>>,
    report: &mut SyncReport,
    work: &mut Vec<Work>,
) -> Result<()> {
    let mine: Vec<PathBuf> = only
        .map(|dirs| {
            dirs.iter()
                .filter(|d| project_dir_of(root, d).as_deref() == Some(d.as_path()))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    if only.is_some() && mine.is_empty() {
        return Ok(());
    }
    let root_path = root.path.to_string_lossy().into_owned();
    let root_id = writer::upsert_root(&store.conn, &root_path, root.layout.as_str())?;
    let (found, mut known) =
        discover_root(store, root, root_id, only.map(|_| mine.as_slice()), report)?;
    for f in found {
        let prev = known.remove(f.path.to_string_lossy().as_ref());
        if is_unchanged(prev.as_ref(), &f) {
            report.unchanged += 1;
        } else {
            let prev = match prev {
                Some(stamp) => writer::file_by_id(&store.conn, stamp.id)?.map(Box::new),
                None => None,
            };
            work.push((root_id, root.layout.is_gateway(), f, prev));
        }
    }
    remove_gone(&mut store.conn, known.into_values(), report)?;
    if root.layout.is_gateway() {
        let dirs = match only {
            Some(_) => mine,
            None => discover::gateway_dirs(root),
        };
        let tx = store
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for dir in dirs {
            report.warnings.extend(gateway::sync_store(&tx, &dir)?);
        }
        tx.commit()?;
    }
    Ok(())
}

/// The session files of a root (or of its `only` folders), with the JSONL copies of its
/// OpenClaw stores brought up to date first, and what the index holds of them; a legacy
/// transcript of a session a store holds is left out (the store's copy is that session).
/// The files are stat'ed on other threads while this one reads the index's stamps.
fn discover_root(
    store: &mut Store,
    root: &Root,
    root_id: i64,
    only: Option<&[PathBuf]>,
    report: &mut SyncReport,
) -> Result<(Vec<Found>, Stamps)> {
    let stores = openclaw_stores(store, root, only)?;
    report.errors.extend(stores.errors.iter().cloned());
    let dirs: Option<Vec<String>> = only.map(|mine| {
        mine.iter()
            .chain(&stores.dirs)
            .map(|d| d.to_string_lossy().into_owned())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect()
    });
    let conn = &store.conn;
    let ((mut found, errors), known) = std::thread::scope(|s| {
        let finding = s.spawn(|| match only {
            None => discover(root),
            Some(mine) => discover::discover_dirs(mine),
        });
        let known = writer::stamps_of_root(conn, root_id, dirs.as_deref());
        (finding.join().expect("the stat pass does not panic"), known)
    });
    let known = known?;
    let forgotten = crate::store::forgotten::paths(conn)?;
    found.retain(|f| !openclaw::stores::is_in_store(&stores, f.dir(), f.name()));
    let (copies, copy_errors) = discover::discover_dirs(&stores.dirs);
    found.extend(copies);
    // A forgotten session stays out of the index (`pidx forget`) until `forget --undo`.
    found.retain(|f| !forgotten.contains(f.path.to_string_lossy().as_ref()));
    report.errors.extend(
        errors
            .into_iter()
            .chain(copy_errors)
            .map(|e| format!("{}: {}", e.path.display(), e.error)),
    );
    Ok((found, known))
}

/// Copies the OpenClaw stores of a gateway root (or those of the `only` agent folders) and
/// records their windows, in one write transaction.
fn openclaw_stores(
    store: &mut Store,
    root: &Root,
    only: Option<&[PathBuf]>,
) -> Result<openclaw::stores::StorePass> {
    if !root.layout.is_gateway() {
        return Ok(Default::default());
    }
    let only: Option<HashSet<PathBuf>> = only.map(|v| v.iter().cloned().collect());
    let tx = store
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)?;
    let pass = openclaw::stores::sync_stores(&tx, &store.path, root, only.as_ref())?;
    tx.commit()?;
    Ok(pass)
}

fn is_unchanged(prev: Option<&Stamp>, f: &Found) -> bool {
    prev.is_some_and(|p| {
        p.dev == f.stat.dev as i64
            && p.ino == f.stat.ino as i64
            && p.size == f.stat.len as i64
            && p.mtime_ms == f.stat.mtime_ms()
            && p.mtime_ns == f.stat.mtime_ns
    })
}

fn remove_gone(
    conn: &mut Connection,
    gone: impl Iterator<Item = Stamp>,
    report: &mut SyncReport,
) -> Result<()> {
    let gone: Vec<Stamp> = gone.collect();
    if gone.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for f in &gone {
        writer::delete_file(&tx, f.id)?;
    }
    tx.commit()?;
    report.removed += gone.len();
    Ok(())
}
