-- pg 0018: each text carries its entry's time and silence, so a search that reads every match
-- of a word (`reads::bounded`, `reads::ranked::every_match`) takes both from the text's own row
-- instead of probing the entry by its key for each match. At 100,000 sessions on the server
-- that probe was half of the read: `function` 1,335-1,804 ms with it, 659-866 ms with the
-- time on the text; `regression` 322-412 against 130-174 ms (docs/performance.md). About ten
-- bytes a text. An entry's time never changes after it is written; its silence can (a later
-- `NO_REPLY` reply), and push sets it on both tables in one transaction (`writer::set_flags`).
ALTER TABLE entry_text ADD COLUMN ts_ms bigint, ADD COLUMN silent boolean NOT NULL DEFAULT false;
UPDATE entry_text t SET ts_ms = e.ts_ms, silent = e.silent
FROM entries e
WHERE e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
  AND (e.ts_ms IS NOT NULL OR e.silent);
