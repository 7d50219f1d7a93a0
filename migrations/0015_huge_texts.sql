-- Texts of 16 MB or more (a pasted log, a tool's output) are kept out of `entries.text` and
-- `sessions.first_message` (src/pi/huge.rs): written into a value SQLite copies twice (the bound
-- value, then the record) while pidx holds it once, a 100 MB text took 300 MB to store. Here
-- the text is written in pieces into a zero-filled value that is the row's last column (SQLite
-- writes that without building it in memory), and the full-text index reads it from there.
--   id = -entries.rid     the entry's text (`entries.text` is NULL then)
--   id = fts rowid        one kind of its searchable text (rid * 8 + kind), when it differs
-- Readers use store::schema::ENTRY_TEXT and FIRST_MESSAGE, which fall back to this table.
CREATE TABLE big_texts (
    id       INTEGER PRIMARY KEY,
    file_id  INTEGER NOT NULL,
    body     BLOB NOT NULL      -- UTF-8; last, so zeroblob() is written without a buffer
);
CREATE INDEX big_texts_by_file ON big_texts(file_id);

-- A huge first message keeps its first 1000 characters in `first_message` (every title is
-- `substr(..., 1, 1000)`) and the line of its entry here.
ALTER TABLE sessions ADD COLUMN first_message_line INTEGER;

DROP VIEW v_sessions;
CREATE VIEW v_sessions AS
SELECT f.path, s.session_id AS id, s.cwd, s.name, s.created_ms, s.last_activity_ms,
       s.message_count,
       CASE WHEN s.first_message_line IS NULL THEN s.first_message
       ELSE coalesce((SELECT CAST(b.body AS TEXT) FROM entries e JOIN big_texts b ON b.id = -e.rid
                      WHERE e.file_id = s.file_id AND e.line = s.first_message_line),
                     s.first_message) END AS first_message,
       s.entry_count, s.state = 1 AS listed, f.size AS bytes
FROM sessions s JOIN files f ON f.id = s.file_id;
