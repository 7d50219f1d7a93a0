//! The writer lock: one process at a time ingests into an index (a `watch`, or a command's own
//! sync). It is an advisory lock on `<db>.lock`, released by the OS when the holder dies, so a
//! `kill -9` never leaves a stale lock. The file records who holds it for `pidx status`.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// A held writer lock; dropping it releases the lock.
pub struct WriterLock {
    file: File,
    pub path: PathBuf,
    note: String,
}

/// Who holds the lock, as its holder wrote it ("<pid> <command>"), and whether it said it has
/// caught up with the files on disk (a watcher past its first reconcile).
#[derive(Debug, Clone)]
pub struct LockHolder(pub String, bool);

/// The line a watcher adds to its note once its first reconcile is done.
const CAUGHT_UP: &str = "caught up";

impl LockHolder {
    /// Whether the holder is a watcher: it keeps the index fresh for as long as it runs, so
    /// waiting for it is pointless.
    pub fn is_watcher(&self) -> bool {
        self.0.contains("(watch)")
    }

    /// Whether the holder said it has caught up with the files on disk (see
    /// [`WriterLock::caught_up`]).
    pub fn is_caught_up(&self) -> bool {
        self.1
    }

    fn read(file: &mut File) -> LockHolder {
        let mut who = String::new();
        let _ = file.read_to_string(&mut who);
        let mut lines = who.lines().map(str::trim);
        let name = lines.next().unwrap_or_default();
        let caught_up = lines.any(|l| l == CAUGHT_UP);
        LockHolder(
            if name.is_empty() {
                "another pidx process".to_string()
            } else {
                name.to_string()
            },
            caught_up,
        )
    }
}

impl WriterLock {
    fn lock_path(db: &Path) -> PathBuf {
        let mut p = db.as_os_str().to_owned();
        p.push(".lock");
        PathBuf::from(p)
    }

    /// Takes the lock without waiting. `Ok(Err(holder))` when another process has it.
    ///
    /// # Errors
    /// `Io` when the lock file cannot be created.
    pub fn try_acquire(
        db: &Path,
        command: &str,
    ) -> Result<std::result::Result<WriterLock, LockHolder>> {
        let path = Self::lock_path(db);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(Err(LockHolder::read(&mut file))),
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let note = format!("pid {} ({command})\n", std::process::id());
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = file.write_all(note.as_bytes());
        Ok(Ok(WriterLock { file, path, note }))
    }

    /// Says in the lock file that the holder (a watcher) has caught up with the files on disk,
    /// so queries trust its index as fresh instead of waiting for it. The note is extended in
    /// place, never emptied first: a reader sees the old note or the new one, never nothing.
    pub fn caught_up(&mut self) {
        use std::os::unix::fs::FileExt;
        let note = format!("{}{CAUGHT_UP}\n", self.note);
        let _ = self.file.write_all_at(note.as_bytes(), 0);
    }

    /// Takes the lock, waiting while a process that is not a watcher holds it (a command's own
    /// sync, a `pidx status` looking at the lock): up to `patience`, or for as long as it takes
    /// when `None`. A watcher's hold is returned at once. `waiting` is called once, when the
    /// wait passes half a second.
    ///
    /// # Errors
    /// `Io` when the lock file cannot be created.
    pub fn acquire(
        db: &Path,
        command: &str,
        patience: Option<Duration>,
        mut waiting: impl FnMut(&LockHolder),
    ) -> Result<std::result::Result<WriterLock, LockHolder>> {
        let started = Instant::now();
        let mut said = false;
        loop {
            match Self::try_acquire(db, command)? {
                Ok(lock) => return Ok(Ok(lock)),
                Err(holder) if holder.is_watcher() => return Ok(Err(holder)),
                Err(holder) if patience.is_some_and(|p| started.elapsed() >= p) => {
                    return Ok(Err(holder))
                }
                Err(holder) => {
                    if !said && started.elapsed() >= Duration::from_millis(500) {
                        waiting(&holder);
                        said = true;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// Who holds the lock right now, or `None` when it is free. Looks with a shared lock and
    /// writes nothing (a writer that starts at that instant waits for it: see [`Self::acquire`]).
    pub fn holder(db: &Path) -> Option<LockHolder> {
        let mut file = File::open(Self::lock_path(db)).ok()?;
        match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                None
            }
            Err(TryLockError::WouldBlock) => Some(LockHolder::read(&mut file)),
            Err(TryLockError::Error(_)) => None,
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}
