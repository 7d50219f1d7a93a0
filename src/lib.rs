//! pidx: an SQLite index over pi's session transcripts.
//!
//! This crate is the binary's: the front doors (`cli`, the picker `pick`, the MCP server `mcp`,
//! the web server `web`) and the presentation they share (`present`). The index, its queries
//! and the app floor are `pidx-core`'s, the team server is `pidx-team`'s; both are re-exported
//! under their usual names so a front door writes `crate::store`, `crate::query`, `crate::team`.

pub use pidx_core::{app, error, ingest, meaning, pi, query, redact, store, term};
pub use pidx_core::{Error, Result};
pub use pidx_team as team;

pub mod cli;
pub mod mcp;
pub mod pick;
pub mod present;
pub mod web;
