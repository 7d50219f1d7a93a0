-- pg 0026: no GIN index on every text's words (issue 52). A search finds the texts a `tsquery`
-- can match from its words' postings (`word_postings`, pg 0020: every text holding a word, by
-- key and time) and reads those texts by key (`reads::matching`); the index was a third of the
-- server's time in a first push (3.2 of 8-9 s at 1,000 sessions: every word of every text
-- inserted into it, then its pending list merged) and 21 MB of 348 (docs/performance.md).
-- `tsv` stays: a candidate is still confirmed on its words, and its counts are read from it.
--
-- Without it, a search whose sources do not all have postings yet (until each one's next
-- push) or by a limited reader (`--reads`, `--reads-project`: it reads no postings, whose keys
-- and times would tell of texts it may not see) reads every text it sees: correct, and as slow
-- as a scan of those texts (docs/team.md).
DROP INDEX IF EXISTS entry_text_words;

-- A prefix's words (`pre*`, a literal ending inside a word), looked up by their first bytes
-- whatever the database's collation (`LIKE 'pre%'`).
CREATE INDEX IF NOT EXISTS word_texts_by_prefix ON word_texts (term text_pattern_ops);
