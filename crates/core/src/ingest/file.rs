//! The writing half of one file's ingest: where its reading starts (its stored offset, or 0 when
//! it was rewritten), and each batch the reader (`read.rs`) folded, committed through the writer
//! with the file's new offset and hashes, inside the sync's current write group.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

use rusqlite::Connection;

use super::discover::Found;
use super::read::{Piece, Start};
use super::tail::Windows;
use super::work::{Counted, BATCH_BYTES, BATCH_ROWS};
use crate::error::{Error, Result};
use crate::pi::model::SessionState;
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

    /// Sends the full-text changes of each committed transaction to `aside` (`store::aside`).
    pub(super) fn build_aside(
        &mut self,
        aside: std::sync::mpsc::SyncSender<crate::store::writer::Batch>,
    ) {
        self.tx.build_aside(aside);
    }

    /// The connection for reads, inside the open transaction if any.
    pub(super) fn reader(&self) -> &'c Connection {
        self.tx.reader()
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
#[derive(Default)]
pub(super) struct FileDone {
    pub(super) entries: i64,
    pub(super) bytes: u64,
    pub(super) bad: Vec<(i64, String)>,
}

/// Where a file's reading starts: where the last pass stopped (or 0), and whether what was
/// ingested before must go.
fn plan_start(
    conn: &Connection,
    file: &File,
    meta: &std::fs::Metadata,
    root_id: i64,
    found: &Found,
    prev: Option<FileRow>,
) -> Result<(FileRow, SessionState, Windows, bool)> {
    let io = |e| Error::io(&found.path, e);
    let fresh = |id: i64| FileRow {
        id,
        root_id,
        path: found.path.to_string_lossy().into_owned(),
        dir: found.dir().to_string_lossy().into_owned(),
        name: found.name().to_string(),
        ..FileRow::default()
    };
    let Some(prev) = prev else {
        return Ok((fresh(0), SessionState::default(), Windows::default(), false));
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
            return Ok((prev, state, windows, false));
        }
    }
    Ok((
        fresh(prev.id),
        SessionState::default(),
        Windows::default(),
        true,
    ))
}

/// One file to bring up to date.
pub(super) struct FileJob<'a> {
    pub(super) root_id: i64,
    /// A gateway transcript: mark `NO_REPLY` turns silent (gateway::mark_silent).
    pub(super) silent_turns: bool,
    pub(super) found: &'a Found,
}

/// Opens a file and decides where its reading starts (on the writer's thread: it reads the
/// index, inside the open write transaction).
///
/// # Errors
/// `Io` when the file cannot be opened or read; SQLite errors.
pub(super) fn plan(conn: &Connection, job: &FileJob, prev: Option<FileRow>) -> Result<Start> {
    let found = job.found;
    let io = |e| Error::io(&found.path, e);
    let file = File::open(&found.path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let (row, state, windows, rewrite) = plan_start(conn, &file, &meta, job.root_id, found, prev)?;
    Ok(Start {
        row,
        state,
        windows,
        rewrite,
        file,
        meta,
    })
}

/// The writer's side of one file in progress: its id once it has a row, whether its old rows
/// must still go, what insert found tangled, and what it did so far.
pub(super) struct Writing {
    id: i64,
    rewrite: bool,
    tangled: bool,
    silent_turns: bool,
    pub(super) done: FileDone,
}

impl Writing {
    pub(super) fn new(start: &Start, job: &FileJob) -> Writing {
        Writing {
            id: start.row.id,
            rewrite: start.rewrite,
            tangled: start.state.tangled,
            silent_turns: job.silent_turns,
            done: FileDone::default(),
        }
    }

    /// A file whose planning failed (its error follows it to the writer).
    pub(super) fn failed(job: &FileJob) -> Writing {
        Writing {
            id: 0,
            rewrite: false,
            tangled: false,
            silent_turns: job.silent_turns,
            done: FileDone::default(),
        }
    }

    /// Writes one piece: the file row (inserted on first sight), its entries and bad lines,
    /// and the session summary, in the current group's transaction.
    ///
    /// # Errors
    /// SQLite errors.
    pub(super) fn write(
        &mut self,
        group: &mut Group,
        mut piece: Piece,
        bar: &indicatif::ProgressBar,
    ) -> Result<()> {
        let (tx, staged) = group.tx.parts()?;
        if std::mem::take(&mut self.rewrite) && self.id != 0 {
            writer::clear_file_staged(tx, Some(staged), self.id)?;
        }
        piece.row.id = self.id;
        self.id = writer::save_file(tx, &piece.row, now_ms())?;
        let batch = &mut piece.batch;
        // Gateway transcripts: where this batch's rows start, to mark its silent turns.
        let first_rid: Option<i64> = if self.silent_turns && !batch.rows.is_empty() {
            Some(
                tx.query_row("SELECT coalesce(max(rid), 0) + 1 FROM entries", [], |r| {
                    r.get(0)
                })?,
            )
        } else {
            None
        };
        // What earlier pieces' inserts found tangled stays so.
        piece.state.tangled |= self.tangled;
        writer::insert_entries(tx, staged, self.id, &mut batch.rows, &mut piece.state)?;
        self.tangled = piece.state.tangled;
        if let Some(first_rid) = first_rid {
            writer::gateway::mark_silent(tx, self.id, first_rid)?;
        }
        writer::insert_bad_lines(tx, self.id, &batch.bad)?;
        writer::insert_listing_texts(tx, self.id, &batch.texts)?;
        crate::store::words::insert(tx, &mut batch.words)?;
        writer::save_session(tx, self.id, &piece.state)?;
        group.add(batch.bytes, batch.rows.len())?;
        bar.inc(batch.bytes as u64);
        self.done.entries += batch.rows.len() as i64;
        self.done.bad.append(&mut piece.batch.bad);
        if piece.last {
            self.done.bytes = piece.bytes;
        }
        Ok(())
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
