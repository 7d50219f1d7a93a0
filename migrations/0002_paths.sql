-- Path facts, computed at ingest from each entry's parent, so `context` walks only the part of
-- the path it returns (from the leaf back to the newest compaction's firstKeptEntryId) instead
-- of every ancestor. Valid only while the session is not `tangled`.
ALTER TABLE entries ADD COLUMN depth INTEGER;          -- ancestors on the path (root: 0)
ALTER TABLE entries ADD COLUMN compaction_seq INTEGER; -- newest compaction on the path, self included
ALTER TABLE entries ADD COLUMN thinking_seq INTEGER;   -- newest thinking_level_change on the path
ALTER TABLE entries ADD COLUMN model_seq INTEGER;      -- newest model_change or assistant message
ALTER TABLE entries ADD COLUMN throws_seq INTEGER;     -- oldest message entry without a message (pi throws)

-- 1 when some entry's parent was not an earlier entry of the file (forward reference, orphan,
-- self-parent), an id repeats, or an entry has no id: path facts may be wrong, so `context`
-- walks the whole path as pi does.
ALTER TABLE sessions ADD COLUMN tangled INTEGER NOT NULL DEFAULT 0;
