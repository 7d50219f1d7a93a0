//! The team tier's engine: sending this machine's index to the team server (`push`). The
//! server's storage is `store::pg`; its answers are the local queries' server halves
//! (`query::*::server`, chosen by `query::Reader`). Nothing here knows the command line.

pub mod push;
