-- 0030: files a sync skipped, and why: a file that could not be read, or whose batch could
-- not be written (any SQLite error that is the file's own, or a panic caught at the file's
-- boundary), is rolled back alone and the sync goes on (src/ingest/pipeline.rs). The reason
-- outlives the sync's own output so `pidx status` and `pidx sync --verbose` can say why a
-- session is missing. Each sync tries such a file again; the row goes once it is indexed or
-- gone.
CREATE TABLE IF NOT EXISTS skipped_files (
    path   TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at_ms  INTEGER NOT NULL
) WITHOUT ROWID;
