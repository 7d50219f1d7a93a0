-- pg 0003: pi's `allMessagesText` (what `pidx --pg URL list --query` matches) joins a
-- transcript's texts in line order, and one physical line can hold several JSON values, each
-- with its own listing text. Their order within the line was not sent, so the server could not
-- rebuild the text exactly: `n` is the text's position among its line's (0 for most lines).
-- Transcripts with such lines are sent again by the next push (`ino = -1` never matches a
-- file, so each counts as rewritten).
ALTER TABLE listing_text ADD COLUMN n int NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS listing_text_by_file;
CREATE INDEX listing_text_by_file ON listing_text (source, fid, line, n);
UPDATE sessions SET ino = -1
WHERE (source, fid) IN (SELECT source, fid FROM listing_text GROUP BY source, fid, line
                        HAVING count(*) > 1);

-- Usage rollups, as the local index's (migrations/0009_usage_rollup.sql): `stats` summed every
-- entry row of every source (6.2 s over 100,000 sessions). These rows hold the same figures per
-- (source, transcript, quarter hour, model key, provider key, copy flag); a quarter hour lies
-- inside one calendar day in every real time zone, so day, week and month groupings, distinct
-- sessions and active days come out exact (src/query/pg/stats.rs falls back to the entries for
-- tools, a range boundary inside a quarter hour and an odd fixed offset, as locally).
-- Kept by statement triggers on `entries` (their transition tables): rows pushed, rows removed,
-- and copy flags that change when forks re-rank (`dup`), whatever statement does it.
CREATE TABLE usage_rollup (
    source         text NOT NULL,
    fid            bigint NOT NULL,
    t              bigint NOT NULL,  -- start of the quarter hour (epoch ms); i64::MIN: no time
    model          text NOT NULL,
    provider       text NOT NULL,
    dup            boolean NOT NULL,
    n              bigint NOT NULL,  -- entries summed here (a row at 0 is deleted)
    user_msgs      bigint NOT NULL,
    assistant_msgs bigint NOT NULL,
    tool_results   bigint NOT NULL,
    tool_calls     bigint NOT NULL,
    input          bigint NOT NULL,
    output         bigint NOT NULL,
    cache_read     bigint NOT NULL,
    cache_write    bigint NOT NULL,
    cost           numeric NOT NULL,  -- exact: sums of sums, and subtractions, drift otherwise
    tool_errors    bigint NOT NULL,
    compactions    bigint NOT NULL,
    ts_ms          bigint GENERATED ALWAYS AS (nullif(t, -9223372036854775808)) STORED,
    PRIMARY KEY (source, fid, t, model, provider, dup)
);
-- Rows whose entries all went (deleted after each change; normally none).
CREATE INDEX usage_rollup_empty ON usage_rollup (source) WHERE n = 0;

-- One entry's contribution (times `sign`) with its group keys, over relation `rel` (entries or
-- a trigger's transition table): the local `usage_facts` view.
CREATE FUNCTION pidx_usage_facts(rel text, sign int) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT format($q$
SELECT source, fid, dup,
       coalesce(ts_ms - ((ts_ms %% 900000) + 900000) %% 900000, -9223372036854775808) AS t,
       CASE WHEN input IS NULL AND role IS DISTINCT FROM 'assistant'
              THEN '(no model: user messages / tool results / compactions)'
            WHEN type = 'message' AND role = 'assistant'
              THEN coalesce(response_model, model, '?')
            WHEN type = 'usage' THEN coalesce(model, '?')
            ELSE 'tools/summaries' END AS model,
       coalesce(provider, '-') AS provider,
       %1$s AS n,
       %1$s * coalesce((type = 'message' AND role = 'user'), false)::int AS user_msgs,
       %1$s * coalesce((type = 'message' AND role = 'assistant'), false)::int AS assistant_msgs,
       %1$s * coalesce((type = 'message' AND role = 'toolResult'), false)::int AS tool_results,
       %1$s * CASE WHEN type = 'message' AND role = 'assistant' THEN coalesce(tool_calls, 0)
                   ELSE 0 END AS tool_calls,
       %1$s * coalesce(input, 0) AS input, %1$s * coalesce(output, 0) AS output,
       %1$s * coalesce(cache_read, 0) AS cache_read, %1$s * coalesce(cache_write, 0) AS cache_write,
       %1$s * coalesce(cost, 0)::numeric AS cost,
       %1$s * coalesce(type = 'message' AND role = 'toolResult' AND is_error, false)::int
         AS tool_errors,
       %1$s * coalesce((type = 'compaction'), false)::int AS compactions
FROM %2$s$q$, sign, rel)
$f$;

-- The statement adding the facts `src` selects to the rollups.
CREATE FUNCTION pidx_rollup_sql(src text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT format($q$
WITH f AS (%s)
INSERT INTO usage_rollup AS r (source, fid, t, model, provider, dup, n, user_msgs,
        assistant_msgs, tool_results, tool_calls, input, output, cache_read, cache_write, cost,
        tool_errors, compactions)
    SELECT source, fid, t, model, provider, dup, sum(n), sum(user_msgs), sum(assistant_msgs),
           sum(tool_results), sum(tool_calls), sum(input), sum(output), sum(cache_read),
           sum(cache_write), sum(cost), sum(tool_errors), sum(compactions)
    FROM f GROUP BY source, fid, t, model, provider, dup
    ON CONFLICT (source, fid, t, model, provider, dup) DO UPDATE SET
        n = r.n + excluded.n,
        user_msgs = r.user_msgs + excluded.user_msgs,
        assistant_msgs = r.assistant_msgs + excluded.assistant_msgs,
        tool_results = r.tool_results + excluded.tool_results,
        tool_calls = r.tool_calls + excluded.tool_calls,
        input = r.input + excluded.input,
        output = r.output + excluded.output,
        cache_read = r.cache_read + excluded.cache_read,
        cache_write = r.cache_write + excluded.cache_write,
        cost = r.cost + excluded.cost,
        tool_errors = r.tool_errors + excluded.tool_errors,
        compactions = r.compactions + excluded.compactions$q$, src)
$f$;

CREATE FUNCTION pidx_rollup_entries() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE pidx_rollup_sql(pidx_usage_facts('new_rows', 1));
    ELSIF TG_OP = 'DELETE' THEN
        EXECUTE pidx_rollup_sql(pidx_usage_facts('old_rows', -1));
    ELSE
        -- Only the copy flag moves an entry between rollup rows.
        EXECUTE pidx_rollup_sql(
            pidx_usage_facts('(SELECT o.* FROM old_rows o JOIN new_rows n USING (source, fid, seq)
                               WHERE o.dup <> n.dup) o', -1)
            || ' UNION ALL ' ||
            pidx_usage_facts('(SELECT n.* FROM new_rows n JOIN old_rows o USING (source, fid, seq)
                               WHERE o.dup <> n.dup) n', 1));
    END IF;
    DELETE FROM usage_rollup WHERE n = 0;
    RETURN NULL;
END
$f$;

CREATE TRIGGER entries_rollup_insert AFTER INSERT ON entries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_entries();
CREATE TRIGGER entries_rollup_delete AFTER DELETE ON entries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_entries();
CREATE TRIGGER entries_rollup_update AFTER UPDATE ON entries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_entries();

DO $$ BEGIN EXECUTE pidx_rollup_sql(pidx_usage_facts('entries', 1)); END $$;
