-- pg 0029: a push's words and statistics made cheaper for transcripts with many distinct words
-- (issue 52). The 862 published transcripts of docs/performance.md (115 MB) hold 232,000
-- distinct words (runs of Chinese characters, hashes, numbers: each one FTS5 token), against a
-- few hundred in generated sessions, and two costs of a push showed there:
--
-- Each source's count of texts per word (`word_texts`, pg 0019) had three indexes: its key
-- (term, source), the words by their first bytes (`word_texts_by_prefix`, pg 0026) and by their
-- last (pg 0028): 43 of its 59 MB, and its `INSERT` the largest statement of a push (3.4 s of
-- the server's 14). One unique index of (term `text_pattern_ops`, source) serves the key (its
-- `=` and `ON CONFLICT (term, source)`) and the prefixes (`LIKE 'abc%'` as a range whatever the
-- database's collation): 189,051 words of one source inserted in 1.45 s against 1.77 s,
-- again (each a conflict) 2.5 s against 3.1 s, the indexes 31 MB against 45 MB.
ALTER TABLE word_texts DROP CONSTRAINT word_texts_pkey;
DROP INDEX IF EXISTS word_texts_by_prefix;
CREATE UNIQUE INDEX word_texts_by_term ON word_texts (term text_pattern_ops, source);

-- No planner statistics of each text's words (`entry_text.tsv`) and each entry's compressed
-- line (`entries.raw_z`). No plan filters or joins on either: since pg 0026 no index holds the
-- words, so a `tsv @@ query` is a filter on rows found by key or time, and the raw line is only
-- read back. Yet every `ANALYZE` of those tables (a push that grows a table by half or more
-- runs one, `push::analyze_parents`) read and sorted a sample of them: on the published
-- transcripts `ANALYZE entry_text` took 0.76-1.0 s with the words' statistics and 0.29 s
-- without. Set on the partitioned tables, so on every partition (and autovacuum's analyses).
ALTER TABLE entry_text ALTER COLUMN tsv SET STATISTICS 0;
ALTER TABLE entries ALTER COLUMN raw_z SET STATISTICS 0;
