-- 0033: the usage page by model charges each failed tool result to the model of the assistant
-- message before it (crates/core/src/query/activity.rs). Both lookups now stay inside small
-- indexes: the failures' own (0032's, with the copies left out in its condition, so no entry
-- row is read to test `dup`) and one of assistant messages holding their models (129,000 of
-- 339,000 entries at 10,000 sessions: 3.6 MB). Before, each of 7,571 failures read its entry
-- and its assistant's from the 700 MB entries table: 36 of the page's 94 ms of CPU.
DROP INDEX IF EXISTS entries_failed_results;
CREATE INDEX entries_failed_results ON entries(file_id, seq)
    WHERE type = 'message' AND role = 'toolResult' AND is_error AND dup = 0;
CREATE INDEX IF NOT EXISTS entries_assistant_models ON entries(file_id, seq, response_model, model)
    WHERE type = 'message' AND role = 'assistant';
