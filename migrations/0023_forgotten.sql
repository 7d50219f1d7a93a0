-- Sessions the user told pidx to forget (`pidx forget`): their rows are gone from the index, and
-- these rows keep every later sync and watcher from indexing the transcript again (pi owns the
-- JSONL file: pidx never deletes it). `pidx forget --undo` removes a run's rows (`batch`) and
-- the next sync reads the files back. Matched by the path as discovered (files.path).
CREATE TABLE IF NOT EXISTS forgotten (
    path         TEXT PRIMARY KEY,
    session_id   TEXT,
    cwd          TEXT,
    name         TEXT,             -- the session's name or first message, for `forget --list`
    modified_ms  INTEGER,
    forgotten_ms INTEGER NOT NULL,
    batch        INTEGER NOT NULL  -- one per `pidx forget` run
) WITHOUT ROWID;
