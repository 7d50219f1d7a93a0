//! How far the index is behind the files on disk, read-only: the stat pass of a sync, without
//! its writes. A command that may not write (a watcher holds the writer lock, or `--no-wait`)
//! measures it once, then asks whether the writer has caught up with what it saw: an answer
//! from an index that is behind says so (exit 3) instead of passing for complete.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension};

use super::discover::{self, discover, Root};
use crate::error::Result;
use crate::store::{writer, WriterLock};

/// The files a stat pass found the index behind on: new, grown or rewritten files (with the
/// stat seen), and files gone from disk that the index still holds.
#[derive(Debug, Default)]
pub struct Behind {
    files: Vec<(String, Option<Seen>)>,
}

/// What the stat pass saw of a file on disk.
#[derive(Debug, Clone, Copy)]
struct Seen {
    ino: i64,
    size: i64,
    mtime_ns: i64,
}

impl Behind {
    /// Stats every session file of `roots` whose path `wanted` picks against the index,
    /// without writing it. A file that cannot be opened is left out (a sync skips it too, so
    /// no writer ever catches up with it). A gateway root's files are left out: its stores are
    /// copied by the sync itself.
    ///
    /// # Errors
    /// Index errors.
    pub fn measure(
        conn: &Connection,
        roots: &[Root],
        wanted: &dyn Fn(&Path) -> bool,
    ) -> Result<Behind> {
        let mut files = Vec::new();
        let forgotten = crate::store::forgotten::paths(conn)?;
        for root in roots.iter().filter(|r| !r.layout.is_gateway()) {
            let root_id: Option<i64> = conn
                .query_row(
                    "SELECT id FROM roots WHERE path = ?1",
                    [root.path.to_string_lossy()],
                    |r| r.get(0),
                )
                .optional()?;
            let mut known = match root_id {
                Some(id) => writer::stamps_of_root(conn, id, None)?,
                None => writer::Stamps::default(),
            };
            let (found, _) = discover(root);
            let kept = |f: &discover::Found| {
                wanted(&f.path) && !forgotten.contains(f.path.to_string_lossy().as_ref())
            };
            for f in found.into_iter().filter(kept) {
                let path = f.path.to_string_lossy().into_owned();
                let seen = Seen {
                    ino: f.stat.ino as i64,
                    size: f.stat.len as i64,
                    mtime_ns: f.stat.mtime_ns,
                };
                let same = known.remove(&path).is_some_and(|p| {
                    p.dev == f.stat.dev as i64 && holds(p.ino, p.size, p.mtime_ns, seen)
                });
                if !same && std::fs::File::open(&f.path).is_ok() {
                    files.push((path, Some(seen)));
                }
            }
            let gone = known.into_keys().filter(|p| wanted(Path::new(p)));
            files.extend(gone.map(|path| (path, None)));
        }
        Ok(Behind { files })
    }

    /// The newest mtime (ms) of the files left on disk, and whether a file left is gone from
    /// disk (its row can be in an answer that is still to change).
    pub fn newest_left_ms(&self) -> (Option<i64>, bool) {
        let newest = self
            .files
            .iter()
            .filter_map(|(_, seen)| seen.map(|s| (s.mtime_ns + 500_000).div_euclid(1_000_000)))
            .max();
        (newest, self.files.iter().any(|(_, seen)| seen.is_none()))
    }

    /// How many of the files measured the index has not caught up with yet (those that are
    /// stay measured; the others are dropped): a file on disk is caught up once its row holds
    /// at least what was seen (a later append counts too), a gone file once its row is removed.
    ///
    /// # Errors
    /// Index errors.
    pub fn left(&mut self, conn: &Connection) -> Result<usize> {
        let mut err = None;
        self.files.retain(|(path, seen)| {
            let row = match writer::file_by_path(conn, path) {
                Ok(row) => row,
                Err(e) => {
                    err.get_or_insert(e);
                    return true;
                }
            };
            !match (seen, row) {
                (Some(seen), Some(row)) => holds(row.ino, row.size, row.mtime_ns, *seen),
                (None, row) => row.is_none(),
                (Some(_), None) => false,
            }
        });
        match err {
            Some(e) => Err(e.into()),
            None => Ok(self.files.len()),
        }
    }
}

/// What waiting for another process's writes came to.
pub enum Caught {
    /// The index holds every change the stat pass saw.
    Up,
    /// The writer went away: the lock is this process's now, to sync itself.
    Lock(WriterLock),
    /// These many files are still behind: `wait` was false, or the writer committed nothing
    /// for [`STALL`] (it is stuck: failing to write, or unable to read them).
    Left(usize),
}

/// How long a writer may commit nothing, with files still behind, before waiting stops.
pub const STALL: Duration = Duration::from_secs(10);

/// Waits, when `wait`, until the process holding the writer lock of the index at `db` has
/// caught up with `behind` (appends made meanwhile are not waited for, so a busy session
/// cannot hold the wait forever), or until `enough` says what is left cannot change the answer.
/// `waiting` is told the files left once, when the wait passes half a second.
///
/// # Errors
/// Index errors; `Io` when the lock file cannot be created.
pub fn catch_up(
    conn: &Connection,
    db: &Path,
    mut behind: Behind,
    wait: bool,
    mut enough: impl FnMut(&Behind) -> Result<bool>,
    mut waiting: impl FnMut(usize),
) -> Result<Caught> {
    let started = Instant::now();
    let mut last_commit = (data_version(conn)?, Instant::now());
    let mut said = false;
    loop {
        let left = behind.left(conn)?;
        if left == 0 || enough(&behind)? {
            return Ok(Caught::Up);
        }
        if !wait {
            return Ok(Caught::Left(left));
        }
        if let Ok(lock) = WriterLock::try_acquire(db, "sync")? {
            return Ok(Caught::Lock(lock));
        }
        let version = data_version(conn)?;
        if version != last_commit.0 {
            last_commit = (version, Instant::now());
        } else if last_commit.1.elapsed() >= STALL {
            return Ok(Caught::Left(left));
        }
        if !said && started.elapsed() >= Duration::from_millis(500) {
            waiting(left);
            said = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SQLite's count of commits by other connections, as this connection sees it.
fn data_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// Whether a row stamped (`ino`, `size`, `mtime_ns`) holds what was `seen`: the same file, read
/// to the size seen or past it (a row mid-read has size -1).
fn holds(ino: i64, size: i64, mtime_ns: i64, seen: Seen) -> bool {
    ino == seen.ino && (size > seen.size || (size == seen.size && mtime_ns == seen.mtime_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_holds_what_was_seen_or_more_of_the_same_file() {
        let seen = Seen {
            ino: 7,
            size: 100,
            mtime_ns: 5,
        };
        let cases = [
            ((7, 100, 5), true),
            ((7, 120, 9), true),
            ((7, 100, 4), false),
            ((7, 60, 5), false),
            ((7, -1, 5), false),
            ((8, 100, 5), false),
        ];
        for ((ino, size, mtime), want) in cases {
            assert_eq!(holds(ino, size, mtime, seen), want, "{ino} {size} {mtime}");
        }
    }
}
