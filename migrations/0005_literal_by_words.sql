-- Literal search no longer uses a trigram index: building it cost 3x the rest of ingest (6 MB/s
-- on 3 GB) and a quarter of the index size. Literal candidates now come from the words index
-- (exact inner words, a prefix for the last, vocabulary lookups for a single word), confirmed
-- against the JSONL line as before. See src/query/search/literal.rs.
DROP TABLE fts_tri;
CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, row);
