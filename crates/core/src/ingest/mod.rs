//! From files on disk to rows in the index: discovery (pi's rules), tailing by byte offset, the
//! sync that folds lines (`crate::pi`) and hands them to `store::writer`, the watcher, and the
//! gateway metadata files.

pub mod behind;
pub mod changes;
pub mod discover;
pub mod embed;
mod file;
pub mod gateway;
pub mod openclaw;
mod pipeline;
mod read;
mod repo;
pub mod sync;
pub mod tail;
pub mod watch;
mod work;
