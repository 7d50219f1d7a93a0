-- The `meta` table of 0001 was never read or written: drop it. (Also a correction to 0001's
-- comment on `roots.layout`, which a shipped migration cannot get: the column holds one of four
-- layouts, 'tree', 'flat', 'gateway' or 'gateway agent'; see src/pi/layout.rs.)
DROP TABLE IF EXISTS meta;
