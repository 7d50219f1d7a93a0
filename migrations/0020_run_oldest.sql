-- The oldest timestamp of each run of entry rows (`rid_runs`, 0018), beside its newest: a search
-- with `--until` keeps only the runs that hold an entry older than its end, as `--since` keeps
-- those holding one newer than its start (src/query/search/span.rs). Without it `--until`
-- narrowed nothing: a search ranked the best matches of every time, and when too few were
-- older than the end, joined every match to its entry row (`function --until` a date before
-- every entry: ~200 ms for no hits on a 1 GB corpus). NULL when no entry of the run has a time.
-- Kept by the writer with the run (store/writer/entries.rs); filled here from the entries.
ALTER TABLE rid_runs ADD COLUMN min_ts INTEGER;
UPDATE rid_runs SET min_ts = (SELECT min(ts_ms) FROM entries WHERE rid BETWEEN rid_runs.lo AND rid_runs.hi);
