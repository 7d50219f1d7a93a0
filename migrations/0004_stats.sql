-- Analytics facts extracted at ingest (no JSON is parsed at query time).
ALTER TABLE entries ADD COLUMN tool_name TEXT;    -- toolResult: toolName
ALTER TABLE entries ADD COLUMN exit_code INTEGER; -- bashExecution: exitCode
-- 1 when this entry is a copy (same id and timestamp) of an entry of an earlier session: forks
-- and clones copy entries, and analytics count each once. The canonical copy is the one in the
-- session with the earliest header timestamp (then the smallest path).
ALTER TABLE entries ADD COLUMN dup INTEGER NOT NULL DEFAULT 0;
CREATE INDEX entries_by_copy ON entries(id, ts) WHERE id IS NOT NULL;

-- One row per toolCall block of an assistant message.
CREATE TABLE tool_uses (
    rid      INTEGER NOT NULL, -- entries.rid of the assistant message
    file_id  INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name     TEXT NOT NULL
);
CREATE INDEX tool_uses_by_rid ON tool_uses(rid);
CREATE INDEX tool_uses_by_file ON tool_uses(file_id);

-- The public, stable views (README: "SQL views"). Copies made by forks are left out.
CREATE VIEW v_sessions AS
SELECT f.path, s.session_id AS id, s.cwd, s.name, s.created_ms, s.last_activity_ms,
       s.message_count, s.first_message, s.entry_count, s.state = 1 AS listed, f.size AS bytes
FROM sessions s JOIN files f ON f.id = s.file_id;

CREATE VIEW v_entries AS
SELECT f.path, s.session_id, e.seq, e.line, e.id, e.parent_id, e.type, e.role, e.ts, e.ts_ms,
       e.provider, e.model, e.response_model, e.stop_reason, e.input, e.output, e.cache_read,
       e.cache_write, e.cost, e.tool_calls, e.tool_name, e.is_error, e.exit_code, e.label,
       e.dup AS is_copy
FROM entries e JOIN files f ON f.id = e.file_id JOIN sessions s ON s.file_id = e.file_id;

CREATE VIEW v_messages AS
SELECT path, session_id, seq, id, parent_id, role, ts, ts_ms, provider, model, response_model,
       stop_reason, tool_calls, tool_name, is_error, exit_code
FROM v_entries WHERE type = 'message' AND is_copy = 0;

CREATE VIEW v_usage AS
SELECT path, session_id, id, type, role, ts, ts_ms, provider,
       coalesce(response_model, model) AS model, input, output, cache_read, cache_write,
       input + output + cache_read + cache_write AS total_tokens, cost
FROM v_entries WHERE input IS NOT NULL AND is_copy = 0;

CREATE VIEW v_tool_calls AS
SELECT f.path, s.session_id, e.id AS entry_id, e.ts, e.ts_ms, t.name
FROM tool_uses t JOIN entries e ON e.rid = t.rid JOIN files f ON f.id = t.file_id
JOIN sessions s ON s.file_id = t.file_id
WHERE e.dup = 0;
