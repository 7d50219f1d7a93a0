//! Answers from the index. Each module owns its SQL, next to the function that runs it; none
//! of them parses the corpus (context reads single lines back by their stored byte range).

pub mod activity;
pub mod context;
pub mod files;
pub mod handle;
pub mod list;
pub mod per_session;

pub mod picker;
mod reader;
pub mod resolve;
pub mod search;
pub mod secrets;
mod session_info;
pub mod shape;
pub mod show;
pub mod similar;
pub mod sql;
pub mod stats;
pub mod status;

pub mod tree;

pub use reader::{Reader, TeamOpener, TeamReads, TeamServer, Watch};
