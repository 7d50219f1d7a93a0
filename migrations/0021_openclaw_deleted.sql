-- Session windows of an OpenClaw store whose key OpenClaw no longer lists: a deleted key
-- (OpenClaw tombstones it: `session_nodes.entry_json` becomes `{}`, `entry_valid` -1, and its
-- windows and rows stay) or any node whose entry OpenClaw's own listing drops
-- (`listSessionEntriesReadOnly`: no string `sessionId`, no numeric `updatedAt` equal to the
-- node's). Their copies are indexed like every window, and `list`, `search` and `stats` leave
-- them out unless `--include-deleted`: one primary-key seek per file (src/query/mod.rs).
-- Kept by the store pass (src/store/writer/gateway.rs save_windows) with the windows.
CREATE TABLE IF NOT EXISTS oc_deleted (
    dir         TEXT NOT NULL,   -- the mirror folder holding the copy (gw_keys.dir)
    name        TEXT NOT NULL,   -- the copy's file name, <sessionId>.jsonl (files.name)
    session_key TEXT NOT NULL,
    PRIMARY KEY (dir, name)
) WITHOUT ROWID;
