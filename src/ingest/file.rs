//! One file's ingest: read from its stored offset (or from 0 when it was rewritten), fold the
//! lines, and commit them in batches through the writer, each batch with the file's new offset
//! and hashes, inside the sync's current write group.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

use rusqlite::Connection;
use serde_json::Value;

use super::discover::Found;
use super::sync::{Counted, BATCH_BYTES, BATCH_ROWS};
use super::tail::{Chunk, LineReader, Windows};
use crate::error::{Error, Result};
use crate::pi::entry::LineOutcome;
use crate::pi::line::{listing_segments, parse_line, Line};
use crate::pi::model::{EntryRow, SessionState};
use crate::store::writer::{self, FileRow, WriteTx};

/// Batches of several files commit together: every commit (and every savepoint) makes FTS5
/// write a new segment, and one per small file made a first sync several times slower. A group
/// is one transaction, so a crash loses at most one group (about `BATCH_BYTES` of reading) and
/// never leaves half a file; a file that fails part-way rolls its group back and the group's
/// other files are done again. Dropped uncommitted (an error), it rolls back.
pub(super) struct Group<'c> {
    tx: WriteTx<'c>,
    bytes: usize,
    rows: usize,
    /// Files completed in the open transaction (index into the work list).
    pub(super) members: Vec<(usize, Counted)>,
}

impl<'c> Group<'c> {
    pub(super) fn new(conn: &'c Connection) -> Group<'c> {
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

    pub(super) fn commit(&mut self) -> Result<()> {
        self.tx.commit()?;
        self.bytes = 0;
        self.rows = 0;
        self.members.clear();
        Ok(())
    }

    /// Undoes the open transaction; returns the files completed in it.
    pub(super) fn rollback(&mut self) -> Result<Vec<(usize, Counted)>> {
        self.tx.rollback()?;
        self.bytes = 0;
        self.rows = 0;
        Ok(std::mem::take(&mut self.members))
    }
}

/// What ingesting one file did.
pub(super) struct FileDone {
    pub(super) entries: i64,
    pub(super) bytes: u64,
    pub(super) bad: Vec<(i64, String)>,
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
pub(super) struct FileJob<'a> {
    pub(super) root_id: i64,
    /// A gateway transcript: mark `NO_REPLY` turns silent (gateway::mark_silent).
    pub(super) silent_turns: bool,
    pub(super) found: &'a Found,
}

pub(super) fn sync_file(
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
                if !takes_fragment(&reader.buf) {
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
        row.mtime_ns = mtime_ns(meta);
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

/// Whether a last line without its newline is taken as it is (and marked torn: if the file
/// then grows by anything but that newline, it is read again from the start). pi's listing
/// reads a last line at end of file as a line (docs/pi-format.md §5.2), so a line that is a whole
/// JSON object, or one that pi's listing splits at lone `\r`s into JSON values (a file with no
/// `\n` at all), is taken; anything else is a half-written line and waits.
fn takes_fragment(buf: &[u8]) -> bool {
    if matches!(parse_line(buf), Line::Value(Value::Object(_))) {
        return true;
    }
    listing_segments(buf)
        .is_some_and(|segs| segs.iter().any(|s| matches!(parse_line(s), Line::Value(_))))
}

/// A file's mtime as Node gives pi `stats.mtime`: `Math.round(mtimeMs)` (docs/pi-format.md §5.3),
/// so half a millisecond or more rounds up.
pub(super) fn mtime_ms(meta: &std::fs::Metadata) -> i64 {
    (mtime_ns(meta) + 500_000).div_euclid(1_000_000)
}

/// A file's exact mtime in nanoseconds since the epoch.
pub(super) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.mtime() * 1_000_000_000 + meta.mtime_nsec()
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
