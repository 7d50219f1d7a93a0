-- pg 0005: the local ranking on the server (`pidx --pg URL search`). bm25 needs each text's
-- length in the local index's tokens (FTS5 `unicode61 remove_diacritics 2`: runs of letters and
-- digits), and its mean over every text; the server's `tsvector` cannot give it (positions stop
-- at 16,383 and at 256 per word, a word over 2,047 bytes is not kept). Push now sends it,
-- counted with the same tokenizer as the words (crates/team/src/pg/words.rs).
-- Rows pushed before have no length until pushed again: `ino = -1` never matches a file, so the
-- next push sends every transcript again (as pg 0002 did).
ALTER TABLE entry_text ADD COLUMN ntok int;
UPDATE sessions SET ino = -1;
