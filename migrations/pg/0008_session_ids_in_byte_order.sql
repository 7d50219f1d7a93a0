-- pg 0008: handles without reading every session id (issue 52). A handle is the shortest id
-- prefix unique against the id's two neighbours in byte order (`query::handle`), and `pidx --pg
-- URL list --all --limit 50` read and sorted every session id on the server to find them
-- (191 ms of its 271 ms at 300,000 sessions). crates/team/src/reads/handle.rs now looks up each
-- listed id's neighbours: the greatest id below it and the least above it, in byte order
-- (`COLLATE "C"`, as Rust's `str` and SQLite's BINARY order them), which the index on
-- `session_id` of pg 0001 does not give on a server whose collation is not "C". These do, over
-- every source and within one (`--source`). Member rights hold unchanged: an index carries no
-- policy, its table's (pg 0004) apply to every row read through it.
CREATE INDEX sessions_by_id_bytes ON sessions (session_id COLLATE "C");
CREATE INDEX sessions_by_source_id_bytes ON sessions (source, session_id COLLATE "C");
