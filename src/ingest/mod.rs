//! From files on disk to rows in the index: discovery (pi's rules), tailing by byte offset,
//! pure line parsing and folding, and the sync that ties them together.

pub mod discover;
pub mod fold;
pub mod gateway;
pub mod parse;
pub mod paths;
pub mod search_text;
pub mod sync;
pub mod tail;
pub mod watch;
