//! pidx's team tier: the PostgreSQL server's store (`pg`: connections, migrations, rights, the
//! one write path), the server's answers to every query (`reads`, behind
//! `pidx_core::query::TeamReads`, so the core's entry points serve `--pg` unchanged) and
//! sending this machine's index to the server (`push`). Nothing here knows the command line.

pub mod pg;
pub mod push;
pub mod reads;
