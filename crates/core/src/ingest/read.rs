//! The reading half of a file's ingest, run on the sync's parser thread: from a file's planned
//! start, read whole lines, fold them (`crate::pi`) and hand each full batch, with the file row
//! and session summary as of its last line, to the writer (`file.rs`) through a bounded channel.
//! Nothing here touches the index.

use std::fs::File;

use serde_json::Value;

use super::discover::Stat;
use super::tail::{Chunk, LineReader, Windows};
use super::work::{BATCH_BYTES, BATCH_ROWS};
use crate::error::{Error, Result};
use crate::pi::entry::LineOutcome;
use crate::pi::line::{listing_segments, parse_line, Line};
use crate::pi::model::{EntryRow, SessionState};
use crate::store::writer::FileRow;

/// Where one file's reading starts (decided by the writer, which can read the index): its row
/// as the index holds it (or a fresh one), the session state to continue, and the hash windows
/// over what has been read.
pub(super) struct Start {
    pub(super) row: FileRow,
    pub(super) state: SessionState,
    pub(super) windows: Windows,
    /// Everything ingested from this file so far must go (the file was rewritten).
    pub(super) rewrite: bool,
    pub(super) file: File,
    pub(super) meta: std::fs::Metadata,
}

/// Lines read since the last piece.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) rows: Vec<EntryRow>,
    pub(super) bad: Vec<(i64, String)>,
    pub(super) texts: Vec<(i64, String)>,
    /// Words of the rows' texts new to this sync (`store::words`), filled just before sending.
    pub(super) words: Vec<crate::store::words::Word>,
    pub(super) bytes: usize,
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
}

/// One batch of a file, ready to write: the file row (its `id` is the writer's business) and
/// the session summary as they stand after the batch's last line.
pub(super) struct Piece {
    pub(super) batch: Batch,
    pub(super) row: FileRow,
    pub(super) state: SessionState,
    /// The file's last piece of this pass: its row gets the real size (earlier ones store -1,
    /// so a crash before the last piece is seen as unfinished work).
    pub(super) last: bool,
    /// On the last piece: the bytes this pass read.
    pub(super) bytes: u64,
}

/// Reads a file from its start, calling `send` with each piece in order; stops early (`Ok`)
/// when `send` says the writer is gone.
///
/// # Errors
/// `Io` when the file cannot be read.
pub(super) fn read_file(
    start: Start,
    path: &std::path::Path,
    send: &mut dyn FnMut(Piece) -> bool,
) -> Result<()> {
    let io = |e| Error::io(path, e);
    let Start {
        mut row,
        mut state,
        mut windows,
        rewrite,
        file,
        meta,
    } = start;
    state.no_touches = super::repo::touches_off();
    let mut reader = LineReader::new(file, row.offset as u64).map_err(io)?;
    if row.torn && !rewrite && reader.peek_byte().map_err(io)? == Some(b'\n') {
        // The newline that completes the line taken as whole last time.
        reader.skip_byte();
        windows.push(b"\n");
        row.torn = false;
    }
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
        row.lines += 1;
        windows.push(&reader.buf);
        if !torn {
            windows.push(b"\n");
        }
        let len = reader.buf.len();
        // A huge line is parsed in its own buffer (`pi::huge`), which it then leaves empty.
        let mut outcome = state.apply_owned_line(&mut reader.buf, row.lines, line_offset as i64);
        if let Some(e) = outcome.entry.as_mut() {
            super::repo::relate(e, &state.cwd);
        }
        batch.push(outcome, row.lines, len + 1);
        row.torn = torn;
        reader.release();
        if batch.is_full() {
            row.offset = reader.offset as i64;
            let batch = std::mem::take(&mut batch);
            if !send(piece(batch, &mut row, &state, &windows, &meta, false, 0)) {
                return Ok(());
            }
        }
    }
    row.offset = reader.offset as i64;
    let bytes = reader.offset - start_offset.min(reader.offset);
    send(piece(batch, &mut row, &state, &windows, &meta, true, bytes));
    Ok(())
}

/// The piece for a batch: the row's stat fields, hashes and bad-line count brought up to date.
fn piece(
    batch: Batch,
    row: &mut FileRow,
    state: &SessionState,
    windows: &Windows,
    meta: &std::fs::Metadata,
    last: bool,
    bytes: u64,
) -> Piece {
    let stat = Stat::of(meta);
    row.dev = stat.dev as i64;
    row.ino = stat.ino as i64;
    row.size = if last { stat.len as i64 } else { -1 };
    row.mtime_ms = stat.mtime_ms();
    row.mtime_ns = stat.mtime_ns;
    row.head_hash = windows.head_hash();
    row.tail_hash = windows.tail_hash();
    row.bad_lines += batch.bad.len() as i64;
    Piece {
        batch,
        row: row.clone(),
        state: state.clone(),
        last,
        bytes,
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
