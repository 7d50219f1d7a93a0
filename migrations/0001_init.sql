-- 0001: the core index. One row per discovered JSONL file (sync state), one listing summary per
-- file (pi's SessionInfo, maintained incrementally at ingest), one row per entry (tree links,
-- context inputs and usage facts). Message bodies stay in the JSONL: entries keep the byte range
-- of their line so `context` can return pi's exact message objects without copying them here.

CREATE TABLE roots (
    id      INTEGER PRIMARY KEY,
    path    TEXT NOT NULL UNIQUE,
    layout  TEXT NOT NULL            -- 'tree' (per-cwd folders) or 'flat' (files directly inside)
);

CREATE TABLE files (
    id          INTEGER PRIMARY KEY,
    root_id     INTEGER NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
    path        TEXT NOT NULL UNIQUE, -- join(dir, name) exactly as discovered (pi's SessionInfo.path)
    dir         TEXT NOT NULL,        -- the folder it was found in
    name        TEXT NOT NULL,        -- basename, for pi's tie order
    dev         INTEGER NOT NULL,
    ino         INTEGER NOT NULL,
    size        INTEGER NOT NULL,     -- size at the last sync
    mtime_ms    INTEGER NOT NULL,     -- mtime at the last sync
    offset      INTEGER NOT NULL,     -- bytes ingested; always just past a '\n' unless torn = 1
    lines       INTEGER NOT NULL,     -- physical lines ingested (line numbers of later lines)
    torn        INTEGER NOT NULL,     -- the last ingested line was a complete JSON value with no '\n' yet
    head_hash   INTEGER NOT NULL,     -- xxh3 of bytes [0, min(offset, 4096))
    tail_hash   INTEGER NOT NULL,     -- xxh3 of the 4096 bytes before offset
    bad_lines   INTEGER NOT NULL,
    synced_at   INTEGER NOT NULL      -- epoch ms
);

CREATE TABLE sessions (
    file_id           INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    state             INTEGER NOT NULL, -- 0: nothing parsed yet, 1: header seen, 2: pi drops it from listings
    excluded          TEXT,             -- why pi would drop it (state 2)
    loadable          INTEGER NOT NULL, -- pi's loader accepts it (first entry is a header with a string id)
    version           INTEGER,          -- header.version ?? 1
    header            TEXT,             -- the header line as JSON (small; exact id/cwd/parentSession values)
    session_id        TEXT,             -- header.id when it is a string
    cwd               TEXT NOT NULL DEFAULT '',
    created_ms        INTEGER,          -- new Date(header.timestamp), NULL when invalid
    header_ts_ms      INTEGER,          -- the same, only when header.timestamp is a string (pi's `modified` fallback)
    name              TEXT,             -- latest session_info name, trimmed; NULL when unset or cleared
    message_count     INTEGER NOT NULL DEFAULT 0,
    first_message     TEXT,
    last_activity_ms  INTEGER,          -- max user/assistant activity time, NULL when none
    parsed_values     INTEGER NOT NULL DEFAULT 0, -- JSON values parsed so far, header included (v1 indexes)
    entry_count       INTEGER NOT NULL DEFAULT 0,
    leaf_seq          INTEGER,          -- seq of the last entry (pi's default leaf)
    leaf_id           TEXT              -- its id (v1 migration chains new entries to it)
);
CREATE INDEX sessions_by_id ON sessions(session_id);

CREATE TABLE entries (
    rid           INTEGER PRIMARY KEY,
    file_id       INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,     -- position in pi's getEntries() (headers excluded)
    line          INTEGER NOT NULL,     -- 1-based physical line in the file
    offset        INTEGER NOT NULL,
    len           INTEGER NOT NULL,
    id            TEXT,
    parent_id     TEXT,
    shadowed      INTEGER NOT NULL DEFAULT 0, -- a later entry of this file has the same id (pi keeps the last)
    type          TEXT,
    role          TEXT,
    ts            TEXT,                 -- entry.timestamp as written
    ts_ms         INTEGER,              -- new Date(entry.timestamp), NULL when invalid
    first_kept    TEXT,                 -- compaction.firstKeptEntryId
    target_id     TEXT,                 -- label / context_edit target
    label         TEXT,                 -- label entries: the label, NULL when it clears
    provider      TEXT,                 -- model_change, assistant message, usage entry
    model         TEXT,
    thinking      TEXT,                 -- thinking_level_change
    response_model TEXT,
    stop_reason   TEXT,
    input         INTEGER,
    output        INTEGER,
    cache_read    INTEGER,
    cache_write   INTEGER,
    cost          REAL,
    tool_calls    INTEGER,
    is_error      INTEGER,
    text          TEXT                  -- user/assistant text as pi's listing extracts it
);
CREATE UNIQUE INDEX entries_by_seq ON entries(file_id, seq);
CREATE INDEX entries_by_id ON entries(file_id, id) WHERE shadowed = 0;

-- Text pi's listing reads from a line the loader cannot parse: pi's listing splits lines at a lone
-- '\r' too (docs/pi-format.md §5.2), so such a line can hold messages only `allMessagesText` sees.
CREATE TABLE listing_text (
    file_id  INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line     INTEGER NOT NULL,
    text     TEXT NOT NULL
);
CREATE INDEX listing_text_by_file ON listing_text(file_id, line);

CREATE TABLE bad_lines (
    file_id  INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line     INTEGER NOT NULL,
    reason   TEXT NOT NULL,
    PRIMARY KEY (file_id, line)
) WITHOUT ROWID;

CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT
) WITHOUT ROWID;
