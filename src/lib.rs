//! pidx: an SQLite index over pi's session transcripts.
//!
//! `ingest` discovers session files by pi's rules, reads each from its stored byte offset
//! (complete lines only), parses and folds the lines into entry rows and a per-file listing
//! summary, and `store::writer` commits each batch together with the file's new offset.
//! `query` answers `list`, `show`, `context` and `tree` from the index exactly as pi's
//! `SessionManager` would; `cli` renders the answers. The JSONL files are never written.

pub mod app;
pub mod error;
pub mod ingest;
pub mod meaning;
pub mod pi;
pub mod store;
pub mod team;
pub mod term;

pub use error::{Error, Result};
pub mod cli;
pub mod mcp;
pub mod pick;
pub mod present;
pub mod query;
pub mod redact;
pub mod web;
