-- pg 0013: each entry's time and silence in an index by its key, so a search that reads every
-- match of a word (`reads::bounded`: key, time and length of each) takes an entry's time from
-- the index alone (an index-only scan) instead of its row, which sits on a page of raw lines:
-- at a million sessions (29 GB on a 24 GB machine) that probe was a page read from disk for
-- most of `regression`'s 186,800 matches, 4.8 of the statement's 5.7 s (with the index
-- 1.7 s of 3.6 s). About 50 bytes an entry.
CREATE INDEX entries_times_by_key ON entries (source, fid, seq) INCLUDE (ts_ms, silent);
