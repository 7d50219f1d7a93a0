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
    #[error("no session matches {0:?}")]
    NotFound(String),
    #[error("{query:?} matches {} sessions; use more of the id:\n{}", candidates.len(), candidates.join("\n"))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "session file {path} changed since it was indexed; run `pidx sync` (or drop --no-sync)"
    )]
    Stale { path: PathBuf },
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

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// What to check when the index cannot be written.
fn write_hint(e: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode::{DiskFull, ReadOnly, SystemIoFailure};
    match e.sqlite_error_code() {
        Some(DiskFull | SystemIoFailure) => {
            " (is the disk full, or the index file over a size limit? nothing was half-written)"
        }
        Some(ReadOnly) => " (the index file or its folder is read-only; nothing was written)",
        _ => "",
    }
}
