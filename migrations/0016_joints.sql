-- Joints for literal search of identifiers (src/store/joints.rs). `parse_line` was the slowest
-- literal: the words index splits it at `_`, and its words are everywhere in code, so its
-- candidates were every text with "parse" (or a word ending with it) before a word starting
-- with "line": 5,023 texts of a 1 GB corpus, each read back from the JSONL, where 10 held it.
-- Here each `_` of a text is one token with the letters and digits on both sides of it (up to
-- 32 on each), so the needle's joint is asked for directly. Once per text, without positions:
-- about 1% of the index.
CREATE VIRTUAL TABLE joints USING fts5(
    body, content = '', contentless_delete = 1, detail = none,
    tokenize = 'unicode61 remove_diacritics 2 tokenchars ''_'''
);
INSERT INTO joints(joints, rank) VALUES ('automerge', 16);
INSERT INTO joints(joints, rank) VALUES ('hashsize', 8388608);

-- Texts whose joints are not indexed (16 MB or more, or too many joints): a search that asks
-- the joints index reads these back too. Rowids as the full-text index's.
CREATE TABLE joints_unknown(rowid INTEGER PRIMARY KEY);

-- A row here when the index holds texts from before the joints table: searches do without it
-- until `pidx sync --rebuild`.
CREATE TABLE joints_stale(since_ms INTEGER NOT NULL);
INSERT INTO joints_stale(since_ms)
    SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)
    WHERE EXISTS (SELECT 1 FROM entries WHERE text_kinds <> 0);
