//! The sync's two threads: a parser thread reads and folds files (`read.rs`) while this thread
//! writes the previous batches (`file.rs`), so JSON parsing and text extraction run on the
//! second core while SQLite inserts. Batches travel through a bounded channel (memory stays
//! bounded) in file order, and every write still happens on this thread in the same groups and
//! transactions as a one-thread sync: crash safety and "equals a rebuild" do not change.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::{Condvar, Mutex};

use rusqlite::Connection;

use super::file::{plan, FileJob, Group, Writing};
use super::read::{read_file, Piece, Start};
use super::work::{BadLine, Counted, SyncOptions, SyncReport, Work, BATCH_BYTES};
use crate::error::{Error, Result};
use crate::store::words::Vocabulary;
use crate::store::writer;

/// Files opened and handed to the parser ahead of the one being written.
const FILES_AHEAD: usize = 4;
/// Batches the parser may hold ready ahead of the writer (each at most `BATCH_BYTES` of lines).
const PIECES_AHEAD: usize = 2;

/// A piece holding a line this big is written before the parser reads on: two huge lines (a
/// screenshot after a pasted log) are then never in memory at once.
const HUGE_PIECE: usize = 2 * BATCH_BYTES;

/// How many pieces the writer has written, for the parser to wait on after a huge one; closed
/// when the writer stops (then nobody waits).
#[derive(Default)]
struct Written {
    state: Mutex<(u64, bool)>,
    changed: Condvar,
}

impl Written {
    fn update(&self, f: impl FnOnce(&mut (u64, bool))) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut state);
        self.changed.notify_all();
    }

    /// Waits until `n` pieces are written; `false` when the writer stopped first.
    fn wait_for(&self, n: u64) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.0 < n && !state.1 {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.0 >= n
    }
}

/// Closes `Written` however the writer's loop ends.
struct CloseOnDrop<'a>(&'a Written);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.update(|s| s.1 = true);
    }
}

/// What the writer hands the parser: a file to read, or the error planning it met (passed
/// through so it reaches the writer in file order).
enum Job {
    Read(usize, Box<Start>, std::path::PathBuf),
    Failed(usize, Error),
}

/// What the parser hands back, in file order.
enum Msg {
    Piece(Box<Piece>),
    Failed(usize, Error),
}

/// A queued file: its index in the work list, and whether it is being done again after a
/// rollback (it then starts from what the index holds now, not from before this sync).
type Queued = (usize, bool);

/// Reads every queued file in write groups. A file that cannot be read or written (an error of
/// its own, `Error::is_one_files`, or a panic) is reported, noted and skipped, and its group
/// rolled back; the group's other files are read again. One file never costs the others.
///
/// # Errors
/// Index errors that every file would meet (a full disk, a lock, a damaged index).
///
/// `collect_words`: gather the words of the texts for `store::words` as they are read (else the
/// caller fills the table from the full-text vocabulary afterwards).
pub(super) fn ingest_all(
    conn: &Connection,
    work: &[Work],
    opts: SyncOptions,
    collect_words: bool,
    aside: Option<std::sync::mpsc::SyncSender<crate::store::writer::Batch>>,
    report: &mut SyncReport,
) -> Result<()> {
    let total: u64 = work
        .iter()
        .map(|(_, _, f, p)| {
            f.stat
                .len
                .saturating_sub(p.as_ref().map_or(0, |p| p.offset as u64))
        })
        .sum();
    let bar = progress_bar(opts.progress && total > 32 << 20, total);
    let mut group = Group::new(conn);
    if let Some(aside) = aside {
        group.build_aside(aside);
    }
    let had_skipped = writer::skipped::any(group.reader())?;
    if had_skipped {
        writer::skipped::clear_gone(group.reader())?;
    }
    let mut queue: VecDeque<Queued> = (0..work.len()).map(|i| (i, false)).collect();
    while !queue.is_empty() {
        let mut run = Run {
            group: &mut group,
            work,
            queue: &mut queue,
            report,
            bar: &bar,
            collect_words,
            had_skipped,
        };
        run.pipeline()?;
    }
    group.commit()?;
    bar.finish_and_clear();
    Ok(())
}

/// One run of the two threads over the queue; it ends when the queue is done, or after a file
/// that could not be read (the queue then holds what must be done again).
struct Run<'r, 'c> {
    group: &'r mut Group<'c>,
    work: &'r [Work],
    queue: &'r mut VecDeque<Queued>,
    report: &'r mut SyncReport,
    bar: &'r indicatif::ProgressBar,
    collect_words: bool,
    /// Whether the index noted skipped files when the sync began (each file indexed whole
    /// then clears its note).
    had_skipped: bool,
}

impl Run<'_, '_> {
    fn pipeline(&mut self) -> Result<()> {
        let written = Written::default();
        let written = &written;
        std::thread::scope(|s| {
            let (jobs, job_rx) = channel::<Job>();
            let (msg_tx, msgs) = sync_channel::<Msg>(PIECES_AHEAD);
            let words = self.collect_words.then(Vocabulary::default);
            s.spawn(move || parse_jobs(job_rx, msg_tx, written, words));
            let _close = CloseOnDrop(written);
            self.write_all(&jobs, &msgs, written)
        })
    }

    /// Keeps the parser `FILES_AHEAD` files ahead and writes what it sends back.
    fn write_all(
        &mut self,
        jobs: &std::sync::mpsc::Sender<Job>,
        msgs: &Receiver<Msg>,
        written: &Written,
    ) -> Result<()> {
        let mut ahead: VecDeque<(Queued, Writing)> = VecDeque::new();
        loop {
            while ahead.len() < FILES_AHEAD {
                let Some(queued) = self.queue.pop_front() else {
                    break;
                };
                let (job, writing) = self.plan(queued)?;
                ahead.push_back((queued, writing));
                // The parser only stops early after this thread is gone.
                let _ = jobs.send(job);
            }
            let Some((queued, writing)) = ahead.front_mut() else {
                return Ok(());
            };
            let msg = msgs
                .recv()
                .map_err(|_| Error::Invalid("the sync's parser thread stopped".into()))?;
            match msg {
                Msg::Piece(piece) => {
                    let last = piece.last;
                    let (group, bar) = (&mut *self.group, self.bar);
                    let wrote =
                        catch_unwind(AssertUnwindSafe(|| writing.write(group, *piece, bar)))
                            .unwrap_or_else(|panic| Err(Error::from_panic(panic)));
                    match wrote {
                        Ok(()) => {}
                        Err(e) if e.is_one_files() => {
                            let i = queued.0;
                            return self.skip(i, e, ahead);
                        }
                        Err(e) => return Err(e),
                    }
                    written.update(|s| s.0 += 1);
                    if last {
                        let (queued, writing) = ahead.pop_front().expect("the file written");
                        self.complete(queued.0, writing)?;
                    }
                }
                Msg::Failed(i, e) if i == queued.0 && e.is_one_files() => {
                    return self.skip(i, e, ahead);
                }
                Msg::Failed(_, e) => return Err(e),
            }
        }
    }

    /// Opens a queued file and decides where it starts (a failure is passed on in order).
    fn plan(&mut self, (i, retried): Queued) -> Result<(Job, Writing)> {
        let (root_id, gateway, found, first_prev) = &self.work[i];
        let prev = if retried {
            writer::file_by_path(self.group.reader(), &found.path.to_string_lossy())?
        } else {
            first_prev.as_deref().cloned()
        };
        let job = FileJob {
            root_id: *root_id,
            silent_turns: *gateway,
            found,
        };
        Ok(match plan(self.group.reader(), &job, prev) {
            Ok(start) => {
                let writing = Writing::new(&start, &job);
                (Job::Read(i, Box::new(start), found.path.clone()), writing)
            }
            Err(e) => (Job::Failed(i, e), Writing::failed(&job)),
        })
    }

    /// A file that could not be read or written: reported by path and noted for `status`, and
    /// its group rolled back (its partial rows share the open transaction with other files,
    /// which are done again); the sync goes on without it. Each later sync tries it again.
    fn skip(&mut self, i: usize, e: Error, mut ahead: VecDeque<(Queued, Writing)>) -> Result<()> {
        ahead.pop_front();
        let path = &self.work[i].2.path;
        let reason = match e {
            Error::Io { source, .. } => source.to_string(),
            e => format!("could not be indexed: {e}"),
        };
        self.report
            .errors
            .push(format!("{}: {reason}", path.display()));
        self.report.skipped.push(path.clone());
        self.roll_back(ahead)?;
        let now = chrono::Utc::now().timestamp_millis();
        writer::skipped::note(self.group.reader(), &path.to_string_lossy(), &reason, now)?;
        Ok(())
    }

    /// A file is written whole: its counts join the report and the open group, and a reason it
    /// was once skipped goes.
    fn complete(&mut self, i: usize, writing: Writing) -> Result<()> {
        let (_, _, found, _) = &self.work[i];
        if self.had_skipped {
            writer::skipped::clear(self.group.reader(), &found.path.to_string_lossy())?;
        }
        let done = writing.done;
        let counted = Counted {
            new: self.work[i].3.is_none(),
            entries: done.entries,
            bytes: done.bytes,
            bad: done.bad.len(),
        };
        counted.apply(self.report, 1);
        self.report
            .bad
            .extend(done.bad.into_iter().map(|(line, reason)| BadLine {
                path: found.path.clone(),
                line,
                reason,
            }));
        self.group.members.push((i, counted));
        Ok(())
    }

    /// After a file that could not be read: its partial rows share the open group with other
    /// files, so the group is undone and those files are done again, then the files the parser
    /// had been given, then the rest.
    fn roll_back(&mut self, ahead: VecDeque<(Queued, Writing)>) -> Result<()> {
        for (queued, _) in ahead.into_iter().rev() {
            self.queue.push_front(queued);
        }
        for (j, counted) in self.group.rollback()?.into_iter().rev() {
            counted.apply(self.report, -1);
            let keep = self.report.bad.len() - counted.bad;
            self.report.bad.truncate(keep);
            self.queue.push_front((j, true));
        }
        Ok(())
    }
}

/// The parser thread: reads each file it is given, in order, until the writer hangs up.
fn parse_jobs(
    jobs: Receiver<Job>,
    msgs: SyncSender<Msg>,
    written: &Written,
    mut vocabulary: Option<Vocabulary>,
) {
    let mut sent = 0;
    // A rolled-back group loses its words with it: the run ends there and the next one starts
    // with a new parser thread, so nothing remembered here was lost.
    let mut send = |mut piece: Piece| {
        let batch = &mut piece.batch;
        if let Some(vocabulary) = &mut vocabulary {
            for row in &batch.rows {
                for (_, text) in &row.texts {
                    match row.huge.as_ref().and_then(|h| h.pieces(text)) {
                        Some(pieces) => vocabulary.collect_pieces(&pieces, &mut batch.words),
                        None => vocabulary.collect(text, &mut batch.words),
                    }
                }
            }
        }
        let huge = piece.batch.bytes >= HUGE_PIECE;
        if msgs.send(Msg::Piece(Box::new(piece))).is_err() {
            return false;
        }
        sent += 1;
        !huge || written.wait_for(sent)
    };
    for job in jobs {
        let failed = match job {
            // A panic here is this file's (its bytes found a bug): caught at its boundary, it
            // is passed on like a read error, and the writer skips the file.
            Job::Read(i, start, path) => {
                catch_unwind(AssertUnwindSafe(|| read_file(*start, &path, &mut send)))
                    .unwrap_or_else(|panic| Err(Error::from_panic(panic)))
                    .err()
                    .map(|e| (i, e))
            }
            Job::Failed(i, e) => Some((i, e)),
        };
        if let Some((i, e)) = failed {
            if msgs.send(Msg::Failed(i, e)).is_err() {
                return;
            }
        }
    }
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
