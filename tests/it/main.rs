//! The integration tests, as one binary (one link of the library, one copy on disk): a module
//! per area, each driving the library or the `pidx` binary in temp folders (never the real
//! `~/.pi`). `cargo test --test it -- AREA::` runs one area; the team server's tests are
//! `#[ignore]`d without a server (`bash tests/pg/run.sh` runs them).

#[path = "../common/mod.rs"]
mod common;
#[path = "../pg/support.rs"]
mod pg_support;
#[path = "../../examples/bench_secrets/plant.rs"]
mod plant;

mod aside;
mod changes;
mod cli;
mod conformance;
mod context_paths;
mod crash;
mod daily;
mod export;
mod faults;
mod files;
mod files_doors;
mod first_answer;
mod first_page;
mod forget;
mod fresh_answers;
mod gateway;
mod huge_lines;
mod list_narrowed;
mod meaning;
mod mutated;
mod newcomer;
mod openclaw;
mod openclaw_cli;
mod openclaw_watch;
mod overflow;
mod pg;
mod pg_many;
mod pg_meaning;
mod pg_rank;
mod pg_reads;
mod pg_scale;
mod pi_package;
mod pick;
mod read_only;
mod readme;
mod readme_home;
mod report;
mod search;
mod search_newest;
mod search_raw;
mod search_span;
mod search_top;
mod search_words;
mod secrets;
mod serve;
mod serve_pg;
mod shape;
mod skill;
mod stats;
mod stats_rollups;
mod team_rights;
mod watch;
