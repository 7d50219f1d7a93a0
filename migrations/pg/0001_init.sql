-- pg 0001: the team tier (`pidx push`, `pidx --pg URL ...`). One database holds the indexes of
-- many machines, each a `source`; every table is keyed first by source and no foreign key
-- crosses sources, so the schema shards by source (Citus) unchanged. Unlike the SQLite index,
-- entries keep their raw JSON line (`raw`): readers have no JSONL to read back by offset.
-- pidx_schema (the applied versions) is created by src/store/pg/migrate.rs before this runs.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE sources (
    name       text PRIMARY KEY,   -- `--source NAME`, default user@host
    created_at timestamptz NOT NULL DEFAULT now(),
    last_push  timestamptz,        -- the end of the last complete push
    pidx       text                -- the pidx version that pushed last
);

-- One row per transcript: the SQLite `files` row (sync state, so a push knows what the server
-- has) and its `sessions` summary and gateway metadata, together.
CREATE TABLE sessions (
    source           text NOT NULL,
    fid              bigint GENERATED ALWAYS AS IDENTITY,
    path             text NOT NULL,   -- as discovered on the source machine
    root             text NOT NULL,   -- the root it was found under
    layout           text NOT NULL,   -- tree | flat | gateway | gateway agent
    dir              text NOT NULL,
    file_name        text NOT NULL,
    ino              bigint NOT NULL,
    size             bigint NOT NULL,
    mtime_ms         bigint NOT NULL,
    mtime_ns         bigint NOT NULL,
    byte_offset      bigint NOT NULL, -- bytes of the file the server holds
    head_hash        bigint NOT NULL, -- as the SQLite files row at that offset
    tail_hash        bigint NOT NULL,
    lines            bigint NOT NULL,
    bad_line_count   bigint NOT NULL,
    summary_hash     bigint NOT NULL, -- of the summary columns below (what push compares)
    state            int NOT NULL,
    excluded         text,
    loadable         boolean NOT NULL,
    version          bigint,
    header           text,
    session_id       text,
    cwd              text NOT NULL,
    created_ms       bigint,
    header_ts_ms     bigint,
    name             text,
    message_count    bigint NOT NULL,
    first_message    text,
    last_activity_ms bigint,
    parsed_values    bigint NOT NULL,
    entry_count      bigint NOT NULL,
    leaf_seq         bigint,
    leaf_id          text,
    tangled          boolean NOT NULL,
    agent_id         text,            -- gateway transcripts: the gw_files row
    session_key      text,
    key_current      boolean,
    channel          text,
    chat_type        text,
    peer             text,
    display_name     text,
    subject          text,
    thread_id        text,
    pushed_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, fid),
    UNIQUE (source, path)
);
CREATE INDEX sessions_by_session_id ON sessions (session_id);
CREATE INDEX sessions_by_modified ON sessions ((CASE WHEN last_activity_ms > 0 THEN last_activity_ms
    WHEN header_ts_ms IS NOT NULL THEN header_ts_ms ELSE mtime_ms END) DESC);

CREATE TABLE entries (
    source         text NOT NULL,
    fid            bigint NOT NULL,
    seq            bigint NOT NULL,
    line           bigint NOT NULL,
    byte_offset    bigint NOT NULL,
    len            bigint NOT NULL,
    id             text,
    parent_id      text,
    shadowed       boolean NOT NULL,
    type           text,
    role           text,
    ts             text,
    ts_ms          bigint,
    first_kept     text,
    target_id      text,
    label          text,
    provider       text,
    model          text,
    thinking       text,
    response_model text,
    stop_reason    text,
    input          bigint,
    output         bigint,
    cache_read     bigint,
    cache_write    bigint,
    cost           double precision,
    tool_calls     bigint,
    is_error       boolean,
    text           text,
    tool_name      text,
    exit_code      bigint,
    dup            boolean NOT NULL,  -- a copy of an entry of an earlier session of this source
    silent         boolean NOT NULL,
    raw            text NOT NULL,     -- the JSONL line, byte for byte (images cut unless --images)
    PRIMARY KEY (source, fid, seq)
);
CREATE INDEX entries_by_id ON entries (source, fid, id) WHERE NOT shadowed;
CREATE INDEX entries_by_copy ON entries (source, id, ts) WHERE id IS NOT NULL;
CREATE INDEX entries_by_ts ON entries (ts_ms);

-- Full text: one row per entry and text kind (src/pi/text.rs), words in a tsvector (GIN) and
-- the text itself under a trigram index for literal substrings.
CREATE TABLE entry_text (
    source text NOT NULL,
    fid    bigint NOT NULL,
    seq    bigint NOT NULL,
    kind   smallint NOT NULL,
    body   text NOT NULL,
    tsv    tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
    PRIMARY KEY (source, fid, seq, kind)
);
CREATE INDEX entry_text_words ON entry_text USING gin (tsv);
CREATE INDEX entry_text_trigrams ON entry_text USING gin (body gin_trgm_ops);

CREATE TABLE tool_uses (
    source text NOT NULL,
    fid    bigint NOT NULL,
    seq    bigint NOT NULL,   -- the assistant message's entry
    n      int NOT NULL,      -- its position among the message's tool calls
    name   text NOT NULL,
    PRIMARY KEY (source, fid, seq, n)
);

CREATE TABLE listing_text (
    source text NOT NULL,
    fid    bigint NOT NULL,
    line   bigint NOT NULL,
    text   text NOT NULL
);
CREATE INDEX listing_text_by_file ON listing_text (source, fid, line);

CREATE TABLE bad_lines (
    source text NOT NULL,
    fid    bigint NOT NULL,
    line   bigint NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (source, fid, line)
);

-- The public views, as in the SQLite index, with a `source` column. Copies made by forks are
-- left out.
CREATE VIEW v_sessions AS
SELECT s.source, s.path, s.session_id AS id, s.cwd, s.name, s.created_ms, s.last_activity_ms,
       s.message_count, s.first_message, s.entry_count, s.state = 1 AS listed, s.size AS bytes
FROM sessions s;

CREATE VIEW v_entries AS
SELECT s.source, s.path, s.session_id, e.seq, e.line, e.id, e.parent_id, e.type, e.role, e.ts,
       e.ts_ms, e.provider, e.model, e.response_model, e.stop_reason, e.input, e.output,
       e.cache_read, e.cache_write, e.cost, e.tool_calls, e.tool_name, e.is_error, e.exit_code,
       e.label, e.dup AS is_copy
FROM entries e JOIN sessions s ON s.source = e.source AND s.fid = e.fid;

CREATE VIEW v_messages AS
SELECT source, path, session_id, seq, id, parent_id, role, ts, ts_ms, provider, model,
       response_model, stop_reason, tool_calls, tool_name, is_error, exit_code
FROM v_entries WHERE type = 'message' AND NOT is_copy;

CREATE VIEW v_usage AS
SELECT source, path, session_id, id, type, role, ts, ts_ms, provider,
       coalesce(response_model, model) AS model, input, output, cache_read, cache_write,
       input + output + cache_read + cache_write AS total_tokens, cost
FROM v_entries WHERE input IS NOT NULL AND NOT is_copy;

CREATE VIEW v_tool_calls AS
SELECT s.source, s.path, s.session_id, e.id AS entry_id, e.ts, e.ts_ms, t.name
FROM tool_uses t
JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
JOIN sessions s ON s.source = t.source AND s.fid = t.fid
WHERE NOT e.dup;
