-- pg 0015: a raw line's long strings that are pieces of its entry's searchable texts
-- (`entry_text.body`) are no longer stored twice. Push leaves each out of the stored line as a
-- marker naming the text's kind and the piece's bytes, after checking that the line put back
-- together is the line, byte for byte; such a line's `raw_z` starts with a 0 byte before its
-- zstd frame (`pg::lines`), and pidx's `context` reads the entry's texts with it
-- (`reads::context`). Lines pushed before are read as they are. Nothing to rewrite; the schema
-- version tells an older pidx, which would show the markers, to stop.
COMMENT ON COLUMN entries.raw_z IS
    'the raw JSONL line, zstd; with a leading 0 byte, its long strings taken from the entry''s entry_text bodies: read it with pidx (pg::lines::line_with)';
