//! The application floor, between the front doors (the command line, the picker, the MCP
//! server) and the engine: which roots and index a run uses (`config`, `Options`), opening the
//! index with fresh answers (`env`: sync first, defer to a watcher, a first answer from a few
//! folders with the rest in the `background`; `fresh`: event-driven freshness for long-running
//! servers), and how a run ends (`outcome`: the exit codes). Every front door opens the index
//! through here; none of them holds a freshness rule of its own.

pub mod background;
pub mod config;
pub mod dates;
pub mod env;
pub mod fresh;
pub mod meaning;
pub mod outcome;
pub mod pi_agent;
pub mod reader;

pub use env::{Env, Options};
pub use outcome::Outcome;
