-- 0032: the failed tool results, indexed apart (a partial index: a few thousand rows of 340,000
-- entries). `stats --by model`'s errors and the usage page by model charge each failure to the
-- model of the assistant message before it (src/query/activity.rs), which no rollup keys by;
-- finding the failures read every entry (100 ms of a 200 ms page at 10,000 sessions). The
-- condition is the query's own, term for term, so SQLite can use the index.
CREATE INDEX IF NOT EXISTS entries_failed_results ON entries(file_id, seq)
    WHERE type = 'message' AND role = 'toolResult' AND is_error;
