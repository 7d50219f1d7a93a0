//! pidx's core: an SQLite index over pi's session transcripts, without any front door.
//!
//! `pi` is pure knowledge of pi's files; `store` opens and writes the SQLite index; `ingest`
//! discovers session files by pi's rules, reads each from its stored byte offset (complete lines
//! only) and commits each batch together with the file's new offset; `query` answers every
//! question from the index (or, through `query::TeamReads`, from the team server the `pidx-team`
//! crate reads) exactly as pi would; `app` opens the index with fresh answers for every front
//! door. The JSONL files are never written. This crate builds without clap, ratatui, tokio or
//! PostgreSQL: the compiler holds the floors.

pub mod app;
pub mod error;
pub mod ingest;
pub mod meaning;
pub mod pi;
pub mod query;
pub mod redact;
pub mod store;
pub mod term;

pub use error::{Error, Result};
