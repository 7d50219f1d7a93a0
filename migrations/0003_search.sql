-- Full-text search. Each entry's searchable text of one kind (user, assistant, thinking, tool,
-- bash, custom, summary, name: see src/ingest/search_text.rs) is one FTS row whose rowid is
-- entries.rid * 8 + kind. Both indexes are contentless: the text stays in the JSONL, and
-- literal matches and snippets are checked against the line itself.
ALTER TABLE entries ADD COLUMN text_kinds INTEGER NOT NULL DEFAULT 0; -- bit k: has text of kind k

-- Words (case- and accent-insensitive) for ranked search.
CREATE VIRTUAL TABLE fts USING fts5(
    body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
-- Trigrams, without positions: candidates for literal (substring) search.
CREATE VIRTUAL TABLE fts_tri USING fts5(
    body, content = '', contentless_delete = 1, detail = none, tokenize = 'trigram'
);

-- Ingest speed: fewer, larger segments (merged once at the end of a sync, see sync.rs).
INSERT INTO fts(fts, rank) VALUES ('automerge', 16);
INSERT INTO fts_tri(fts_tri, rank) VALUES ('automerge', 16);
INSERT INTO fts(fts, rank) VALUES ('hashsize', 33554432);
INSERT INTO fts_tri(fts_tri, rank) VALUES ('hashsize', 33554432);
