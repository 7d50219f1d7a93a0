-- Two lookups every gateway transcript makes when it is listed or filtered.
--
-- Its key, by the `sessionFile` that names it before its session id (the `gw_files` view,
-- migration 0006): only `gw_keys_by_id (dir, session_id)` covered the folder, so that lookup
-- read every key of the folder, for every transcript. A view of 6,000 transcripts among 6,000
-- keys took 3.4-4.9 s (`list --all`, any search with `--channel` or `--key`), and it grows
-- with the square of a gateway's size. Here the folder and file name lead to the key directly.
CREATE INDEX IF NOT EXISTS gw_keys_by_file ON gw_keys(dir, session_file);

-- Its first silent (NO_REPLY) turn, which decides its first message (src/query/list.rs
-- add_gateway): without an index this read every entry row of the transcript. Only the
-- silent rows are in it.
CREATE INDEX IF NOT EXISTS entries_silent ON entries(file_id, seq) WHERE silent = 1;
