//! The library's error type. Messages are lowercase and say how to fix the problem when they can;
//! the binary maps `NotFound`/`Ambiguous` to exit code 1 or 2 and everything else to 2.

use std::path::PathBuf;

/// Everything that can go wrong inside pidx.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("index: {0}{hint}", hint = write_hint(.0))]
    Sqlite(#[from] rusqlite::Error),
    #[error("{path} is not a pidx index ({why}); refusing to touch it. Point --db (or PIDX_DB) elsewhere")]
    NotAnIndex { path: PathBuf, why: String },
    #[error("index {path} is corrupt ({why}); run `pidx sync --rebuild` to rebuild it from the session files")]
    Corrupt { path: PathBuf, why: String },
    #[error("index {path} cannot be written ({why}); `pidx sync` and `pidx watch` need a writable index: point --db (or PIDX_DB) at a writable place")]
    ReadOnly { path: PathBuf, why: String },
    #[error("no session matches {0:?}")]
    NotFound(String),
    #[error("session {session} has no entry {entry:?} (`pidx tree` lists its entry ids)")]
    NoEntry { session: String, entry: String },
    #[error("{query:?} matches {count} sessions; use more of the id, or one of these handles:\n  {}{}", shown.join("\n  "), more(*count, shown.len()))]
    Ambiguous {
        query: String,
        count: usize,
        /// The first candidates, one line each.
        shown: Vec<String>,
    },
    #[error("{0}")]
    Invalid(String),
    /// The team server (PostgreSQL); messages never hold a password.
    #[error("server: {0}")]
    Server(String),
    #[error(
        "session file {path} changed since it was indexed; run `pidx sync` (or drop --no-sync)"
    )]
    Stale { path: PathBuf },
    /// A statement pidx refuses to run (`pidx sql`: anything that would write).
    #[error("{0}")]
    Refused(String),
    /// SQLite stopped a statement at pidx's request (the time limit or a cancel); the caller
    /// says which ([`Error::TimeLimit`] or [`Error::Stopped`]).
    #[error("interrupted")]
    Interrupted,
    /// A query ran longer than its limit and was stopped.
    #[error("the query ran longer than {secs} s and was stopped")]
    TimeLimit { secs: f64 },
    /// A reader was told to stop (a cancelled or timed-out call) before it finished.
    #[error("stopped before it finished (cancelled or out of time)")]
    Stopped,
    /// Code that handled one file panicked (a pidx bug that file's bytes trigger); the sync
    /// caught it at the file's boundary.
    #[error("pidx bug (please report it): {0}")]
    Panicked(String),
}

fn more(count: usize, shown: usize) -> String {
    if count > shown {
        format!("\n  ... and {} more", count - shown)
    } else {
        String::new()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an SQLite error met while opening the index at `path`, recognising corruption.
    pub fn at_open(path: impl Into<PathBuf>, source: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(e, ref msg) = source {
            if matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) {
                let why = msg.clone().unwrap_or_else(|| e.to_string());
                return Error::Corrupt {
                    path: path.into(),
                    why,
                };
            }
        }
        Error::Sqlite(source)
    }

    /// Whether this error means the index at `db`, its folder or its lock file cannot be
    /// written (a read-only mount, missing write permission). A session file that cannot be
    /// read is not that.
    pub fn is_unwritable(&self, db: &std::path::Path) -> bool {
        use rusqlite::ErrorCode::{CannotOpen, ReadOnly};
        use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
        match self {
            Error::Io { source, path } => {
                matches!(source.kind(), ReadOnlyFilesystem | PermissionDenied)
                    && db.parent().is_some_and(|dir| path.starts_with(dir))
            }
            Error::Sqlite(e) => matches!(e.sqlite_error_code(), Some(ReadOnly | CannotOpen)),
            Error::ReadOnly { .. } => true,
            _ => false,
        }
    }

    /// This error, said as "the index at `db` cannot be written" when that is what it means.
    pub fn for_writing(self, db: &std::path::Path) -> Error {
        match self {
            Error::ReadOnly { .. } => self,
            e if e.is_unwritable(db) => Error::ReadOnly {
                path: db.to_path_buf(),
                why: match &e {
                    Error::Io { source, .. } => source.to_string(),
                    Error::Sqlite(s) => s.to_string(),
                    other => other.to_string(),
                },
            },
            e => e,
        }
    }

    /// Whether this error is one file's own (its bytes, or a pidx bug they trigger) rather than
    /// the index's or the machine's: a sync then rolls back that file alone, reports it and
    /// goes on with the rest. A full disk, a lock, a damaged or read-only index, memory or an
    /// interrupt would fail every file alike: those stop the sync, as before.
    pub fn is_one_files(&self) -> bool {
        use rusqlite::ErrorCode as C;
        match self {
            Error::Io { .. } | Error::Panicked(_) => true,
            Error::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => !matches!(
                e.code,
                C::DatabaseBusy
                    | C::DatabaseLocked
                    | C::OutOfMemory
                    | C::ReadOnly
                    | C::OperationInterrupted
                    | C::SystemIoFailure
                    | C::DatabaseCorrupt
                    | C::DiskFull
                    | C::CannotOpen
                    | C::FileLockingProtocolFailed
                    | C::SchemaChanged
                    | C::ApiMisuse
                    | C::NoLargeFileSupport
                    | C::NotADatabase
                    | C::PermissionDenied
                    | C::AuthorizationForStatementDenied
            ),
            // A value that does not convert (a number out of range, text that is not UTF-8):
            // the data's, not the index's.
            Error::Sqlite(e) => !matches!(
                e,
                rusqlite::Error::SqliteSingleThreadedMode
                    | rusqlite::Error::ExecuteReturnedResults
                    | rusqlite::Error::InvalidQuery
                    | rusqlite::Error::MultipleStatement
            ),
            _ => false,
        }
    }

    /// The error a panic caught at a file's boundary becomes.
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Error::Panicked(why)
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// What to check when the index cannot be written.
/// What to do about an SQLite error, said after it: the same rebuild hint for a damaged index
/// wherever the damage is met, and what a failed write means.
pub fn write_hint(e: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode::{DatabaseCorrupt, DiskFull, NotADatabase, ReadOnly, SystemIoFailure};
    match e.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => {
            "; the index is damaged: run `pidx sync --rebuild` to rebuild it from the session files (they are never touched)"
        }
        Some(DiskFull | SystemIoFailure) => {
            " (is the disk full, or the index file over a size limit? nothing was half-written)"
        }
        Some(ReadOnly) => " (the index file or its folder is read-only; nothing was written)",
        _ => "",
    }
}
