-- 0024: search by meaning. Passages of entries' searchable texts, embedded by a static model
-- (src/meaning) as int8 vectors with one scale each, keyed to their entry: the vectors of a
-- file's entries go when the entries go (rewrite, truncation, deletion, forget) by ON DELETE
-- CASCADE, so no writer has to remember them. `embedded` marks the entries already embedded
-- (a text may give no passage). The model the vectors belong to is `embed_model`'s one row; another
-- model's vectors are never compared with them (ingest/embed.rs drops them all first).
-- IF NOT EXISTS: tests (and a downgraded index) run migrations again over a newer schema.
CREATE TABLE IF NOT EXISTS passages (
    id       INTEGER PRIMARY KEY,
    rid      INTEGER NOT NULL REFERENCES entries(rid) ON DELETE CASCADE,
    kind     INTEGER NOT NULL,  -- the text kind (pi::text::TextKind): full-text rowid rid*8+kind
    file_id  INTEGER NOT NULL,
    scale    REAL NOT NULL,     -- the vector is vec[i] * scale
    vec      BLOB NOT NULL      -- int8 components
);
CREATE INDEX IF NOT EXISTS passages_by_rid ON passages(rid);
CREATE INDEX IF NOT EXISTS passages_by_file ON passages(file_id);

CREATE TABLE IF NOT EXISTS embedded (
    rid  INTEGER PRIMARY KEY REFERENCES entries(rid) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS embed_model (
    id  TEXT NOT NULL           -- StaticModel::id: folder name, hash of its files, dimensions
);
