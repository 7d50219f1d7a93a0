-- Words for literal search. A literal needle that starts inside a word (`parse_line`,
-- `fn main`: the text may say `reparse_line`) could only ask FTS5 for its later words, which in
-- code are everywhere (`"line"*` matched 141k texts of 325k entries, each read back from the
-- JSONL). This table holds every run of ASCII letters and digits of every indexed text,
-- lowercased and stored reversed, so the words that end with the needle's first piece are one
-- index range: the candidates become the phrase of each such word with the needle's other
-- words. `flags` says when a run touched a non-ASCII character (1 before it, 2 after it): the
-- word FTS5 indexed may then be longer, and the lookup gives up (src/store/words.rs).
--
-- Kept at ingest: a sync with little to read collects the runs on its parser thread and writes
-- them with the entries; a big one (64 MB or more to read) adds the full-text vocabulary once
-- at its end instead (a quarter less sync time than word by word). Rows are never deleted: a
-- word whose texts are gone only adds a phrase that matches nothing.
CREATE TABLE words(
    rev TEXT PRIMARY KEY,
    flags INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- A row here while the table may lack words of indexed texts: a big sync fills the table
-- from the full-text vocabulary once at its end instead of word by word, and marks it stale
-- until then (readers then do without it; a sync after a crash refills it).
CREATE TABLE words_stale(since_ms INTEGER NOT NULL);

-- An index built before this table: its full-text vocabulary is exactly the set of indexed
-- words (a walk of the whole index, once).
INSERT INTO words(rev, flags) SELECT pidx_reverse(term), 0 FROM fts_vocab WHERE true
    ON CONFLICT(rev) DO NOTHING;
