-- Joints of needles that start with their `_` (`_line`, `_missing`): the text's word before
-- the `_` is unknown, and FTS5 finds a token by its start only. So each `_` with letters or
-- digits on both sides is indexed a second time with its right side alone (`_line` beside
-- `parse_line`, src/store/joints.rs), and such a needle asks for `_line*`. A needle like
-- `_line` took 213 ms on a 1 GB corpus (the words plan: every text with a word starting
-- `line`, read back from the JSONL), slower than `rg -l`; the second token costs about 4 MB of
-- index per GB of JSONL.
--
-- Texts indexed before this migration lack the right sides: marked here until
-- `pidx sync --rebuild`, and searches do without them meanwhile.
CREATE TABLE joint_rights_stale(since_ms INTEGER NOT NULL);
INSERT INTO joint_rights_stale(since_ms)
    SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)
    WHERE EXISTS (SELECT 1 FROM entries WHERE text_kinds <> 0);
