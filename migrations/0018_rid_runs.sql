-- Runs of consecutive entry rows (rids) written together for one session file, with the newest
-- timestamp among them. A literal or regex search shows its hits newest first; with tens of
-- thousands of candidates (`--literal _line`: 50,652 texts on a 1 GB corpus) it joined every
-- one to its entry row, a scattered page read each, only to sort them. Instead it finds each
-- candidate's run here (a small table: one row per file and batch written) and joins the
-- candidates run by run, newest run first, until no run left can hold anything newer than what
-- it has found (src/query/search/newest.rs). A rid in no run (never expected) is joined first.
--
-- Kept by the writer: a row per batch of entries inserted (store/writer/entries.rs), deleted
-- with the file's entries. Filled here from the entries of an existing index: rids that follow
-- each other within a file form one run.
CREATE TABLE rid_runs(
    lo      INTEGER PRIMARY KEY,   -- first rid of the run
    hi      INTEGER NOT NULL,      -- last rid of the run
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    max_ts  INTEGER                -- the newest ts_ms of its entries; NULL when none has one
);
CREATE INDEX rid_runs_by_file ON rid_runs(file_id);

INSERT INTO rid_runs(lo, hi, file_id, max_ts)
    SELECT min(rid), max(rid), file_id, max(ts_ms)
    FROM (SELECT rid, file_id, ts_ms,
                 rid - row_number() OVER (PARTITION BY file_id ORDER BY rid) AS run
          FROM entries)
    GROUP BY file_id, run;
