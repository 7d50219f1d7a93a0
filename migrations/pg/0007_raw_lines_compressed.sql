-- pg 0007: keep the server small (issue 52). The raw JSONL lines took 65 MB for 94 MB of bytes
-- at 1,000 generated sessions: PostgreSQL compresses only a row over its fixed 2 KB TOAST
-- threshold, and most lines are shorter (`toast_tuple_target` does not lower it). No SQL on the
-- server reads a line, only pidx (`context`), so push now compresses each line itself (zstd,
-- crates/team/src/pg/lines.rs) into `raw_z`, and readers decompress it.
--
-- Rows pushed before keep their line as text in `raw`, which becomes nullable: a reader takes
-- `raw_z` when it is there, else `raw`. They are not sent again (no `ino = -1` as pg 0002, 0005
-- and 0006 did): nothing in them is wrong, only bigger, and sending every source again would cost
-- a full push of each for space alone. A transcript pushed again (rewritten) gets compressed
-- rows; to compress all at once, `UPDATE sessions SET ino = -1` then push (and `VACUUM FULL
-- entries` to give the space back). Member rights hold unchanged: the policies and grants of
-- pg 0004 are on the table, so they cover the new column.
ALTER TABLE entries ADD COLUMN raw_z bytea;
ALTER TABLE entries ALTER COLUMN raw DROP NOT NULL;
-- Every row holds its line one way or the other. NOT VALID: rows before all have `raw`, so
-- checking them would only read the whole table.
ALTER TABLE entries ADD CONSTRAINT entries_line CHECK (raw IS NOT NULL OR raw_z IS NOT NULL) NOT VALID;
-- zstd's output does not compress again: kept out of line when long, never recompressed.
ALTER TABLE entries ALTER COLUMN raw_z SET STORAGE EXTERNAL;
