//! `sync`: brings the index up to date with the files on disk. A stat pass compares every file
//! with its row (new / grown / rewritten / gone); grown files are read from their stored offset,
//! whole lines only; rewritten ones (inode change, shrink, head or tail hash mismatch) are read
//! again from byte 0. Each batch of entries commits together with the file's new offset, so an
//! interrupted sync resumes exactly where it stopped.

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::ingest::discover::{self, discover, Found, Root};
use crate::ingest::gateway;
use crate::ingest::tail::{Chunk, LineReader, Windows};
use crate::pi::entry::LineOutcome;
use crate::pi::line::{parse_line, Line};
use crate::pi::model::{EntryRow, SessionState};
use crate::store::writer::{self, FileRow, WriteTx};
use crate::store::Store;

/// Lines per transaction are bounded by bytes and rows, so one huge file never holds a huge
/// batch in memory and a crash loses at most one batch of work.
const BATCH_BYTES: usize = 8 << 20;
const BATCH_ROWS: usize = 20_000;

/// How a sync reports progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncOptions {
    /// Draw a progress bar on stderr (only when it is a terminal and the work is large).
    pub progress: bool,
}

/// A skipped line, reported as `path:line: reason`.
#[derive(Debug, Clone)]
pub struct BadLine {
    pub path: PathBuf,
    pub line: i64,
    pub reason: String,
}

/// What a sync did.
#[derive(Debug, Default)]
pub struct SyncReport {
    pub new: usize,
    pub changed: usize,
    pub removed: usize,
    pub unchanged: usize,
    pub entries: i64,
    pub bytes: u64,
    pub bad: Vec<BadLine>,
    /// Files or folders that could not be read (skipped; the rest was indexed).
    pub errors: Vec<String>,
    /// Things to fix that lost nothing (a gateway's malformed `sessions.json`).
    pub warnings: Vec<String>,
    pub elapsed: Duration,
}

impl SyncReport {
    /// The one-line summary `pidx sync` prints.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} files: {} new, {} changed, {} removed, {} unchanged; {} entries, {} bad lines, {:.1} MB read in {:.2}s",
            self.new + self.changed + self.unchanged,
            self.new,
            self.changed,
            self.removed,
            self.unchanged,
            self.entries,
            self.bad.len(),
            self.bytes as f64 / 1e6,
            self.elapsed.as_secs_f64()
        );
        if !self.errors.is_empty() {
            s.push_str(&format!("; {} unreadable", self.errors.len()));
        }
        s
    }
}

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

fn sync_scoped(
    store: &mut Store,
    roots: &[Root],
    opts: SyncOptions,
    only: Option<&HashSet<PathBuf>>,
) -> Result<SyncReport> {
    let started = Instant::now();
    let mut report = SyncReport::default();
    let mut work = Vec::new();
    for root in roots {
        let mine: Vec<PathBuf> = only
            .map(|dirs| {
                dirs.iter()
                    .filter(|d| {
                        crate::pi::layout::project_dir_of(root, d).as_deref() == Some(d.as_path())
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if only.is_some() && mine.is_empty() {
            continue;
        }
        let root_path = root.path.to_string_lossy().into_owned();
        let root_id = writer::upsert_root(&store.conn, &root_path, root.layout.as_str())?;
        let mut known = writer::files_of_root(&store.conn, root_id)?;
        let (found, errors) = match only {
            None => discover(root),
            Some(_) => {
                let dirs: HashSet<String> = mine
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect();
                known.retain(|_, f| dirs.contains(&f.dir));
                discover::discover_dirs(&mine)
            }
        };
        report.errors.extend(
            errors
                .into_iter()
                .map(|e| format!("{}: {}", e.path.display(), e.error)),
        );
        let mut seen = HashSet::new();
        for f in found {
            let key = f.path.to_string_lossy().into_owned();
            seen.insert(key.clone());
            let prev = known.remove(&key);
            if is_unchanged(prev.as_ref(), &f) {
                report.unchanged += 1;
            } else {
                work.push((root_id, root.layout.is_gateway(), f, prev));
            }
        }
        remove_gone(&mut store.conn, known.into_values(), &mut report)?;
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
    }
    let total: u64 = work
        .iter()
        .map(|(_, _, f, p)| {
            f.meta
                .len()
                .saturating_sub(p.as_ref().map_or(0, |p| p.offset as u64))
        })
        .sum();
    let bar = progress_bar(opts.progress && total > 32 << 20, total);
    let mut group = Group::new(&store.conn);
    let mut queue: std::collections::VecDeque<usize> = (0..work.len()).collect();
    let mut retried = HashSet::new();
    while let Some(i) = queue.pop_front() {
        let (root_id, gateway, found, first_prev) = &work[i];
        // A retried file starts from what the index holds now, not from before this sync.
        let prev = if retried.contains(&i) {
            writer::file_by_path(&store.conn, &found.path.to_string_lossy())?
        } else {
            first_prev.clone()
        };
        let is_new = prev.is_none();
        let file = FileJob {
            root_id: *root_id,
            silent_turns: *gateway,
            found,
        };
        match sync_file(&mut group, &file, prev, &bar) {
            Ok(done) => {
                let counted = Counted {
                    new: is_new,
                    entries: done.entries,
                    bytes: done.bytes,
                    bad: done.bad.len(),
                };
                counted.apply(&mut report, 1);
                report
                    .bad
                    .extend(done.bad.into_iter().map(|(line, reason)| BadLine {
                        path: found.path.clone(),
                        line,
                        reason,
                    }));
                group.members.push((i, counted));
            }
            Err(Error::Io { path, source }) => {
                report.errors.push(format!("{}: {source}", path.display()));
                // The failed file's partial rows share the open group with other files: undo
                // the group and do those files again.
                for (j, counted) in group.rollback()?.into_iter().rev() {
                    counted.apply(&mut report, -1);
                    let keep = report.bad.len() - counted.bad;
                    report.bad.truncate(keep);
                    retried.insert(j);
                    queue.push_front(j);
                }
            }
            Err(e) => return Err(e),
        }
    }
    group.commit()?;
    bar.finish_and_clear();
    report.elapsed = started.elapsed();
    Ok(report)
}

fn progress_bar(show: bool, total: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !show || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} indexing {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn is_unchanged(prev: Option<&FileRow>, f: &Found) -> bool {
    prev.is_some_and(|p| {
        p.dev == f.meta.dev() as i64
            && p.ino == f.meta.ino() as i64
            && p.size == f.meta.len() as i64
            && p.mtime_ms == mtime_ms(&f.meta)
    })
}

fn mtime_ms(meta: &std::fs::Metadata) -> i64 {
    meta.mtime() * 1000 + meta.mtime_nsec() / 1_000_000
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn remove_gone(
    conn: &mut Connection,
    gone: impl Iterator<Item = FileRow>,
    report: &mut SyncReport,
) -> Result<()> {
    let gone: Vec<FileRow> = gone.collect();
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

/// What one file added to the report (undone when its group rolls back).
#[derive(Debug, Clone, Copy)]
struct Counted {
    new: bool,
    entries: i64,
    bytes: u64,
    bad: usize,
}

impl Counted {
    fn apply(&self, report: &mut SyncReport, sign: i64) {
        if self.new {
            report.new = (report.new as i64 + sign) as usize;
        } else {
            report.changed = (report.changed as i64 + sign) as usize;
        }
        report.entries += sign * self.entries;
        report.bytes = (report.bytes as i64 + sign * self.bytes as i64) as u64;
    }
}

/// Batches of several files commit together: every commit (and every savepoint) makes FTS5
/// write a new segment, and one per small file made a first sync several times slower. A group
/// is one transaction, so a crash loses at most one group (about `BATCH_BYTES` of reading) and
/// never leaves half a file; a file that fails part-way rolls its group back and the group's
/// other files are done again. Dropped uncommitted (an error), it rolls back.
struct Group<'c> {
    tx: WriteTx<'c>,
    bytes: usize,
    rows: usize,
    /// Files completed in the open transaction (index into the work list).
    members: Vec<(usize, Counted)>,
}

impl<'c> Group<'c> {
    fn new(conn: &'c Connection) -> Group<'c> {
        Group {
            tx: WriteTx::new(conn),
            bytes: 0,
            rows: 0,
            members: Vec::new(),
        }
    }

    /// Counts a released batch; commits the group once it is full.
    fn add(&mut self, bytes: usize, rows: usize) -> Result<()> {
        self.bytes += bytes;
        self.rows += rows;
        if self.bytes >= BATCH_BYTES || self.rows >= BATCH_ROWS {
            self.commit()?;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.tx.commit()?;
        self.bytes = 0;
        self.rows = 0;
        self.members.clear();
        Ok(())
    }

    /// Undoes the open transaction; returns the files completed in it.
    fn rollback(&mut self) -> Result<Vec<(usize, Counted)>> {
        self.tx.rollback()?;
        self.bytes = 0;
        self.rows = 0;
        Ok(std::mem::take(&mut self.members))
    }
}

/// What ingesting one file did.
struct FileDone {
    entries: i64,
    bytes: u64,
    bad: Vec<(i64, String)>,
}

/// One file's ingest in progress: its index row, the session state, the hash windows over what
/// has been read, and whether what was ingested before must go. Starts where the last pass
/// stopped (or at 0); each batch commit moves it on.
struct Pass {
    row: FileRow,
    state: SessionState,
    windows: Windows,
    /// Everything ingested from this file so far must go (the file was rewritten); cleared by
    /// the first commit.
    rewrite: bool,
}

fn plan_start(
    conn: &Connection,
    file: &File,
    meta: &std::fs::Metadata,
    root_id: i64,
    found: &Found,
    prev: Option<FileRow>,
) -> Result<Pass> {
    let io = |e| Error::io(&found.path, e);
    let fresh = |id: i64| FileRow {
        id,
        root_id,
        path: found.path.to_string_lossy().into_owned(),
        dir: found.dir.to_string_lossy().into_owned(),
        name: found.name.clone(),
        ..FileRow::default()
    };
    let Some(prev) = prev else {
        return Ok(Pass {
            row: fresh(0),
            state: SessionState::default(),
            windows: Windows::default(),
            rewrite: false,
        });
    };
    let same_file = prev.dev == meta.dev() as i64 && prev.ino == meta.ino() as i64;
    if same_file && meta.len() >= prev.offset as u64 {
        let windows = Windows::read(file, prev.offset as u64).map_err(io)?;
        // After a torn line was taken as complete, only its newline may follow it.
        let torn_ok = !prev.torn
            || crate::store::jsonl::read_at(file, prev.offset as u64, 1)
                .map_err(io)?
                .first()
                .is_none_or(|&b| b == b'\n');
        if torn_ok && windows.head_hash() == prev.head_hash && windows.tail_hash() == prev.tail_hash
        {
            let state = writer::load_session(conn, prev.id)?;
            return Ok(Pass {
                row: prev,
                state,
                windows,
                rewrite: false,
            });
        }
    }
    Ok(Pass {
        row: fresh(prev.id),
        state: SessionState::default(),
        windows: Windows::default(),
        rewrite: true,
    })
}

/// One file to bring up to date.
struct FileJob<'a> {
    root_id: i64,
    /// A gateway transcript: mark `NO_REPLY` turns silent (gateway::mark_silent).
    silent_turns: bool,
    found: &'a Found,
}

fn sync_file(
    group: &mut Group,
    job: &FileJob,
    prev: Option<FileRow>,
    bar: &indicatif::ProgressBar,
) -> Result<FileDone> {
    let (root_id, found) = (job.root_id, job.found);
    let io = |e| Error::io(&found.path, e);
    let file = File::open(&found.path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let mut pass = plan_start(group.tx.reader(), &file, &meta, root_id, found, prev)?;
    let mut reader = LineReader::new(file, pass.row.offset as u64).map_err(io)?;
    if pass.row.torn && !pass.rewrite && reader.peek_byte().map_err(io)? == Some(b'\n') {
        // The newline that completes the line taken as whole last time.
        reader.skip_byte();
        pass.windows.push(b"\n");
        pass.row.torn = false;
    }
    let mut done = FileDone {
        entries: 0,
        bytes: 0,
        bad: Vec::new(),
    };
    let mut batch = Batch::default();
    let start_offset = reader.offset;
    while let Some(chunk) = reader.next_chunk().map_err(io)? {
        let (line_offset, torn) = match chunk {
            Chunk::Line { offset } => (offset, false),
            Chunk::Fragment { offset } => {
                if !matches!(parse_line(&reader.buf), Line::Value(Value::Object(_))) {
                    // A half-written line: wait for its newline.
                    reader.offset = offset;
                    break;
                }
                (offset, true)
            }
        };
        pass.row.lines += 1;
        let outcome = pass
            .state
            .apply_line(&reader.buf, pass.row.lines, line_offset as i64);
        batch.push(outcome, pass.row.lines, reader.buf.len() + 1);
        pass.windows.push(&reader.buf);
        if !torn {
            pass.windows.push(b"\n");
        }
        pass.row.torn = torn;
        if batch.is_full() {
            pass.row.offset = reader.offset as i64;
            pass.commit(group, &batch, &meta, false, job.silent_turns)?;
            batch.drain_into(&mut done, bar);
        }
    }
    pass.row.offset = reader.offset as i64;
    pass.commit(group, &batch, &meta, true, job.silent_turns)?;
    batch.drain_into(&mut done, bar);
    done.bytes = reader.offset - start_offset.min(reader.offset);
    Ok(done)
}

/// Lines read since the last commit.
#[derive(Default)]
struct Batch {
    rows: Vec<EntryRow>,
    bad: Vec<(i64, String)>,
    texts: Vec<(i64, String)>,
    bytes: usize,
}

impl Batch {
    fn push(&mut self, outcome: LineOutcome, line: i64, bytes: usize) {
        self.rows.extend(outcome.entry);
        if let Some(reason) = outcome.bad {
            self.bad.push((line, reason));
        }
        self.texts
            .extend(outcome.listing_texts.into_iter().map(|t| (line, t)));
        self.bytes += bytes;
    }

    fn is_full(&self) -> bool {
        self.bytes >= BATCH_BYTES || self.rows.len() >= BATCH_ROWS
    }

    /// Accounts for a committed batch and empties it.
    fn drain_into(&mut self, done: &mut FileDone, bar: &indicatif::ProgressBar) {
        bar.inc(self.bytes as u64);
        done.entries += self.rows.len() as i64;
        done.bad.append(&mut self.bad);
        *self = Batch::default();
    }
}

impl Pass {
    /// Commits one batch: the file row (inserted on first sight), its entries and bad lines,
    /// and the session summary, in the current group's transaction. Only the `last` batch of a
    /// pass stores the file's size; earlier batches store -1 so a crash before the last batch
    /// is seen as unfinished work.
    fn commit(
        &mut self,
        group: &mut Group,
        batch: &Batch,
        meta: &std::fs::Metadata,
        last: bool,
        silent_turns: bool,
    ) -> Result<()> {
        let tx = group.tx.conn()?;
        let Pass {
            row,
            state,
            windows,
            rewrite,
        } = self;
        if std::mem::take(rewrite) && row.id != 0 {
            writer::clear_file(tx, row.id)?;
        }
        row.dev = meta.dev() as i64;
        row.ino = meta.ino() as i64;
        row.size = if last { meta.len() as i64 } else { -1 };
        row.mtime_ms = mtime_ms(meta);
        row.head_hash = windows.head_hash();
        row.tail_hash = windows.tail_hash();
        row.bad_lines += batch.bad.len() as i64;
        row.id = writer::save_file(tx, row, now_ms())?;
        // Gateway transcripts: where this batch's rows start, to mark its silent turns.
        let first_rid: Option<i64> = if silent_turns && !batch.rows.is_empty() {
            Some(
                tx.query_row("SELECT coalesce(max(rid), 0) + 1 FROM entries", [], |r| {
                    r.get(0)
                })?,
            )
        } else {
            None
        };
        writer::insert_entries(tx, row.id, &batch.rows, state)?;
        if let Some(first_rid) = first_rid {
            writer::gateway::mark_silent(tx, row.id, first_rid)?;
        }
        writer::insert_bad_lines(tx, row.id, &batch.bad)?;
        writer::insert_listing_texts(tx, row.id, &batch.texts)?;
        writer::save_session(tx, row.id, state)?;
        group.add(batch.bytes, batch.rows.len())
    }
}
