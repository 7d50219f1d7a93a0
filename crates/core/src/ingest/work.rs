//! What a sync works on and reports, shared by its stages (`sync` plans, `pipeline` runs,
//! `file` and `read` read each file): the batch bounds, the options, the report and a file's
//! part of it, and the queue's item.

use std::path::PathBuf;
use std::time::Duration;

use crate::ingest::discover::Found;
use crate::store::writer::FileRow;
use crate::term::{plural, thousands};

/// Lines per transaction are bounded by bytes and rows, so one huge file never holds a huge
/// batch in memory and a crash loses at most one batch of work.
pub(super) const BATCH_BYTES: usize = 8 << 20;
pub(super) const BATCH_ROWS: usize = 20_000;

/// How a sync reports progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncOptions {
    /// Draw a progress bar on stderr (only when it is a terminal and the work is large).
    pub progress: bool,
    /// From this many bytes to read, the words table is filled from the full-text vocabulary
    /// at the end instead of word by word (`None`: [`super::sync::WORDS_FROM_VOCABULARY`]).
    pub words_from_vocabulary: Option<u64>,
    /// Leave a full text being built aside (`store::aside`) for the sync that follows (a
    /// first answer's background sync) instead of copying it in: a first answer needs no
    /// full text, and the sync of the rest then builds all of it on the second core.
    pub hand_over: bool,
    /// Texts a word must be in to get impact blocks (`None`: `store::impacts::MIN_TEXTS`, or
    /// `PIDX_IMPACT_MIN_TEXTS`): tests make small corpora use them.
    pub impact_min_texts: Option<i64>,
}

impl SyncOptions {
    /// The defaults, with a progress bar.
    pub fn with_progress() -> SyncOptions {
        SyncOptions {
            progress: true,
            ..SyncOptions::default()
        }
    }
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
    /// Files or folders skipped (the rest was indexed), as `path: reason`: they could not be
    /// read, or their batch could not be written and was rolled back alone.
    pub errors: Vec<String>,
    /// The session files among `errors`, which a watcher tries again.
    pub skipped: Vec<PathBuf>,
    /// Things to fix that lost nothing (a gateway's malformed `sessions.json`).
    pub warnings: Vec<String>,
    /// Whether the full text was built aside on a thread of its own (a big first sync,
    /// `store::aside`).
    pub full_text_aside: bool,
    pub elapsed: Duration,
}

impl SyncReport {
    /// Whether the sync changed the index or has something to say.
    pub fn changed_anything(&self) -> bool {
        self.new + self.changed + self.removed > 0
            || !self.errors.is_empty()
            || !self.warnings.is_empty()
    }

    /// The one-line summary `pidx sync` prints.
    pub fn summary(&self) -> String {
        let files = self.new + self.changed + self.unchanged;
        let mut s = format!(
            "{} file{}: {} new, {} changed, {} removed, {} unchanged; {} entr{}, {} bad line{}, {:.1} MB read in {:.2}s",
            thousands(files as i128),
            plural(files),
            thousands(self.new as i128),
            thousands(self.changed as i128),
            thousands(self.removed as i128),
            thousands(self.unchanged as i128),
            thousands(self.entries),
            if self.entries == 1 { "y" } else { "ies" },
            thousands(self.bad.len() as i128),
            plural(self.bad.len()),
            self.bytes as f64 / 1e6,
            self.elapsed.as_secs_f64()
        );
        if !self.errors.is_empty() {
            s.push_str(&format!(
                "; {} skipped",
                thousands(self.errors.len() as i128)
            ));
        }
        s
    }
}

/// What one file added to the report (undone when its group rolls back).
#[derive(Debug, Clone, Copy)]
pub(super) struct Counted {
    pub(super) new: bool,
    pub(super) entries: i64,
    pub(super) bytes: u64,
    pub(super) bad: usize,
}

impl Counted {
    pub(super) fn apply(&self, report: &mut SyncReport, sign: i64) {
        if self.new {
            report.new = (report.new as i64 + sign) as usize;
        } else {
            report.changed = (report.changed as i64 + sign) as usize;
        }
        report.entries += sign * self.entries;
        report.bytes = (report.bytes as i64 + sign * self.bytes as i64) as u64;
    }
}

/// A file to read, with its root and what the index held of it before this sync (boxed: a first
/// sync holds one per file and has none).
pub(super) type Work = (i64, bool, Found, Option<Box<FileRow>>);
