-- A gateway transcript finds its key by the `sessionFile` that names it before trying its
-- session id (the `gw_files` view, migration 0006). Only `gw_keys_by_id (dir, session_id)`
-- covered the folder, so that lookup read every key of the folder, for every transcript: a
-- view of 6,000 transcripts among 6,000 keys took 3.4-4.9 s (`list --all`, any search with
-- `--channel` or `--key`), and it grows with the square of a gateway's size. Here the folder
-- and file name lead to the key directly.
CREATE INDEX IF NOT EXISTS gw_keys_by_file ON gw_keys(dir, session_file);
