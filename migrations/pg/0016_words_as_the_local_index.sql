-- pg 0016: the server's words are the local index's for every character. Push took Rust's
-- classes of letters and digits, which differ from the local index's FTS5 tokenizer for many
-- characters past ASCII (emoji of recent Unicode versions, private use characters, some marks,
-- some folds such as `µ`), and it split a redacted text's words from its markers rather than
-- from the text the local index holds; such a text's words and length, so its bm25 and every
-- total of its source, differed. Push now classes each character as FTS5 does
-- (crates/team/src/pg/chars.rs) and counts a redacted text's length and positions from the
-- original, without the secret's words. Only a text holding a character past ASCII or a marker
-- splits differently: the transcripts holding one are sent again by the next push (`ino = -1`
-- never matches a file, as pg 0005), and the schema version tells an older pidx to stop.
UPDATE sessions s SET ino = -1
WHERE EXISTS (SELECT 1 FROM entry_text t
              WHERE t.source = s.source AND t.fid = s.fid
                AND (t.body ~ '[^\x01-\x7f]' OR strpos(t.body, '[redacted: ') > 0));
