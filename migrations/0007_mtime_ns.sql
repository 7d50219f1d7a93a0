-- Node gives pi a file's mtime two ways: `stats.mtime` is `Math.round(mtimeMs)` (pi's `modified`
-- falls back to it) and `listAll()` pre-sorts by the fractional `mtimeMs`. `files.mtime_ms` now
-- holds the rounded value (it was truncated) and `mtime_ns` the exact one for that order. Old
-- rows get 0, which no file has, so the next sync looks at each file once (a stat and two hash
-- windows, nothing re-read) and stores both.
ALTER TABLE files ADD COLUMN mtime_ns INTEGER NOT NULL DEFAULT 0;

-- The `meta` table of 0001 was never read or written. (Also a correction to 0001's comment on
-- `roots.layout`, which a shipped migration cannot get: the column holds one of four layouts,
-- 'tree', 'flat', 'gateway' or 'gateway agent'; see src/pi/layout.rs.)
DROP TABLE IF EXISTS meta;
