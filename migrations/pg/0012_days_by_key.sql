-- pg 0012: pg 0011's `pidx_days_again` computes the touched days again by their keys. Planned
-- once a session for a `jsonb` argument of unknown length (taken as 100 rows), its two
-- statements joined the days by hash, and the `INSERT`'s hash join read every row of
-- `usage_by_source` each time a rollup changed: 948,200 rows, 488 ms of an incremental push's
-- 0.8 s at a million sessions (`auto_explain` of the push's trigger statements), for the one
-- day a push of 100 grown transcripts touches. Nested loops are the only joins left to it, so
-- each day is read through the primary keys: at most 96 rows of `usage_by_source` a day and
-- copy flag, one row of `usage_days`, however large the tables grow. The body stays 0011's.
ALTER FUNCTION pidx_days_again(jsonb) SET enable_hashjoin = off SET enable_mergejoin = off;
