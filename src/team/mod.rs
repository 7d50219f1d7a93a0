//! The team tier: the server's answers to every query (`reads`, behind `query::TeamReads`) and
//! sending this machine's index to the server (`push`). The server's storage is `store::pg`.
//! Nothing here knows the command line.

pub mod push;
pub mod reads;
