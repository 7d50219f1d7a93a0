-- `list` sorts by pi's `modified` (src/store/schema.rs MODIFIED) before it can print a first
-- page; this index holds the session columns of that sort, so the sort reads it instead of the
-- session rows, which carry each header and first message (src/query/list.rs).
CREATE INDEX sessions_listing_order ON sessions(state, last_activity_ms, header_ts_ms);
