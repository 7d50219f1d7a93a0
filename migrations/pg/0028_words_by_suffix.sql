-- pg 0028: each source's words by their last bytes (issue 52). A literal that starts inside a
-- word (`filter is` may start inside `myfilter`: every needle starting with a letter or a
-- digit) drops its first piece from its words (`reads::search`), so `--literal 'filter is'`
-- took its candidates from every text holding a word starting with `is` (a quarter of the
-- texts) and read their bodies a chunk at a time. The words ending with that piece, looked up
-- here (`LIKE` on the reversed word, whatever the database's collation), narrow it to the
-- texts holding one of them as well.
CREATE INDEX IF NOT EXISTS word_texts_by_suffix ON word_texts (reverse(term) text_pattern_ops);
