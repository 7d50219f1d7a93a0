-- 0026: a first sync builds its full-text indexes (`fts`, `joints`) aside, in a file of their
-- own written by a thread of its own (src/store/aside.rs), and copies them in at its end. A row
-- here while that is under way: until the copy commits (with the row's removal), the index has
-- entries whose texts are not searchable, and a sync that finds the row starts the index over,
-- unless `handed` says the sync before left its file complete for the next one to go on with
-- (a first answer's, before the background sync of the rest).
CREATE TABLE IF NOT EXISTS text_aside (
    since_ms INTEGER NOT NULL,
    handed   INTEGER NOT NULL DEFAULT 0,
    -- Files left the index while the build was aside: drop their texts before copying in.
    orphans  INTEGER NOT NULL DEFAULT 0
);
