-- pg 0014: an entry's listing text (`entries.text`, pi's `extractTextContent` of a user or
-- assistant message) is nearly always the same string as the entry's searchable text of its
-- role's kind (`entry_text.body`, kind 0 for a user message, 1 for an assistant's): 99% of
-- them, 20.8 of 21.1 MB at 10,000 generated sessions, about 7% of the server. Push now sends
-- the empty string in its place when the two are equal (a listing text is never empty: an
-- entry without one has NULL), and the server's readers take the body then (`pg::LISTING_TEXT`).
-- Rows pushed before keep their text and read as before. Nothing to rewrite; the schema
-- version tells an older pidx, which would read the empty string as the text, to stop.
COMMENT ON COLUMN entries.text IS
    'pi''s listing text of a user or assistant message; '''' when it equals the entry''s entry_text.body of kind 0 (user) or 1 (assistant): read it with pg::LISTING_TEXT';
