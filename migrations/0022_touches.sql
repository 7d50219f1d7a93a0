-- File touches (issue 34): one row per file a tool call of an assistant message touched, read
-- from the call's arguments at ingest (src/pi/touches.rs). The edits' text is not copied here:
-- blame and commits read it back from the transcript line (`entries.offset`/`len`), which keeps
-- the index small and the JSONL canonical. Written in the same transaction as the entries and
-- removed with them (src/store/writer/touches.rs). IF NOT EXISTS: tests that fake an older index
-- by lowering user_version run it again over the tables.
CREATE TABLE IF NOT EXISTS touches (
    rid      INTEGER NOT NULL, -- entries.rid of the assistant message
    file_id  INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    block    INTEGER NOT NULL, -- the toolCall's index in the message content
    call_id  TEXT,             -- toolCall.id, answered by touch_results.call_id
    tool     TEXT NOT NULL,
    kind     TEXT NOT NULL,    -- read | edit | write | list | search | bash
    path     TEXT NOT NULL,    -- absolute, normalised, '/' separators
    rel      TEXT,             -- inside the git work tree of the session's cwd, when there was one
    ts_ms    INTEGER,
    added    INTEGER,          -- edit, write: lines put in
    removed  INTEGER           -- edit: lines taken out
);
CREATE INDEX IF NOT EXISTS touches_by_path ON touches(path);
CREATE INDEX IF NOT EXISTS touches_by_file ON touches(file_id);

-- The result of a call that touched files: whether it failed. A result can arrive in a later
-- batch than its call, so the status is joined at query time, never stored on the touch.
CREATE TABLE IF NOT EXISTS touch_results (
    file_id  INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    call_id  TEXT NOT NULL,
    rid      INTEGER NOT NULL, -- entries.rid of the toolResult
    is_error INTEGER NOT NULL,
    line     INTEGER           -- edit: pi's details.firstChangedLine, where blame looks first
);
CREATE INDEX IF NOT EXISTS touch_results_by_call ON touch_results(file_id, call_id);

-- The public, stable view (README "SQL views"): copies made by forks are left out; `status` is
-- 'ok', 'error' or NULL while no result has been written.
CREATE VIEW IF NOT EXISTS v_file_touches AS
SELECT f.path AS session_path, s.session_id, e.id AS entry_id, t.call_id, t.tool, t.kind,
       t.path, t.rel, t.ts_ms, t.added, t.removed,
       CASE r.is_error WHEN 0 THEN 'ok' WHEN 1 THEN 'error' END AS status
FROM touches t JOIN entries e ON e.rid = t.rid JOIN files f ON f.id = t.file_id
JOIN sessions s ON s.file_id = t.file_id
LEFT JOIN touch_results r ON r.file_id = t.file_id AND r.call_id = t.call_id
WHERE e.dup = 0;
