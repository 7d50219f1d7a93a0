//! Schema facts shared by the writer and the queries, so each is written once: how full-text
//! rows are keyed (in Rust and in SQL), pi's `modified` as an expression, the ancestor walk, and
//! the usage sums `show` and `stats` both report.

use crate::pi::paths::PathFacts;
use crate::pi::text::TextKind;

/// The FTS rowid of an entry's text of one kind: the entry's rowid times 8 plus the kind, so an
/// entry's texts are found from its rowid and a hit's entry and kind from the FTS rowid.
pub fn fts_rowid(rid: i64, kind: TextKind) -> i64 {
    rid * 8 + kind as i64
}

/// [`fts_rowid`] as SQL over the columns or expressions `rid` and `kind`.
pub fn fts_rowid_sql(rid: &str, kind: &str) -> String {
    format!("({rid} * 8 + {kind})")
}

/// The entry rowid of FTS rowid `r`, as SQL.
pub fn fts_entry_sql(r: &str) -> String {
    format!("({r} >> 3)")
}

/// The text kind of FTS rowid `r`, as SQL.
pub fn fts_kind_sql(r: &str) -> String {
    format!("({r} & 7)")
}

/// The entry rowid and kind of an FTS rowid (the inverse of [`fts_rowid`]).
pub fn fts_entry(rowid: i64) -> (i64, TextKind) {
    (rowid >> 3, TextKind::from_bits(rowid))
}

/// pi's `modified` (docs/pi-format.md §5.3) over `sessions s JOIN files f`: the last
/// user/assistant activity, else the header time, else the file's mtime.
pub const MODIFIED: &str = "CASE WHEN s.last_activity_ms > 0 THEN s.last_activity_ms
                              WHEN s.header_ts_ms IS NOT NULL THEN s.header_ts_ms
                              ELSE f.mtime_ms END";

/// A session's title for display over `sessions s`: its name, else its first user message, cut
/// to 1000 characters in SQL (a first message can be 100 MB; a title shows one line of it).
pub const TITLE: &str = "substr(coalesce(s.name, s.first_message), 1, 1000)";

/// An entry's listing text over `entries e`: `e.text`, or the huge text kept in `big_texts`
/// (migration 0015). Only the huge ones are read from there.
pub const ENTRY_TEXT: &str = "coalesce(e.text,
    (SELECT CAST(b.body AS TEXT) FROM big_texts b WHERE b.id = -e.rid))";

/// The first `chars` characters (an SQL expression) of an entry's listing text over `entries`,
/// a huge one's cut from `big_texts` in bytes first (at most 4 a character, so the bytes hold
/// every character the outer cut keeps).
pub fn entry_text_start(chars: &str) -> String {
    format!(
        "substr(coalesce(entries.text,
            (SELECT CAST(substr(b.body, 1, {chars} * 4) AS TEXT) FROM big_texts b
             WHERE b.id = -entries.rid)), 1, {chars})"
    )
}

/// A session's whole first message over `sessions s`: a huge one is its entry's text
/// (migration 0015); `s.first_message` holds only its title then.
pub const FIRST_MESSAGE: &str = "CASE WHEN s.first_message_line IS NULL THEN s.first_message
    ELSE coalesce(
        (SELECT CAST(b.body AS TEXT) FROM entries fe JOIN big_texts b ON b.id = -fe.rid
         WHERE fe.file_id = s.file_id AND fe.line = s.first_message_line),
        s.first_message) END";

/// The message and usage sums over `entries e`, in this order: user, assistant and toolResult
/// messages, tool calls, input, output, cache-read and cache-write tokens, cost. What pi's
/// `getSessionStats` sums for `/session` (assistant and toolResult usage, `usage` entries,
/// compaction and branch-summary usage) is every usage column that is set, so a plain sum is it.
pub const USAGE_SUMS: &str = "
    coalesce(sum(e.type = 'message' AND e.role = 'user'), 0),
    coalesce(sum(e.type = 'message' AND e.role = 'assistant'), 0),
    coalesce(sum(e.type = 'message' AND e.role = 'toolResult'), 0),
    coalesce(sum(CASE WHEN e.type = 'message' AND e.role = 'assistant' THEN e.tool_calls END), 0),
    coalesce(sum(e.input), 0), coalesce(sum(e.output), 0),
    coalesce(sum(e.cache_read), 0), coalesce(sum(e.cache_write), 0),
    coalesce(sum(e.cost), 0.0)";

/// The number of columns [`USAGE_SUMS`] yields.
pub const USAGE_SUMS_LEN: usize = 9;

/// The walk from a leaf (`?2`, a seq of file `?1`) to the root, nearest first, carrying every column it needs so the recursive step stays
/// on the (file_id, id) index. `depth < ?3` bounds it on a cycle. `CROSS JOIN` pins the join
/// order: SQLite 3.51's planner otherwise puts `entries` outside the one-row `walk` step and
/// scans the file's whole index per step (minutes on a 200k-entry path).
pub const ANCESTORS: &str = "
WITH RECURSIVE walk(depth, seq, id, parent_id, type, role, first_kept, target_id, provider, model,
                    thinking, offset, len, ts_ms) AS (
    SELECT 0, seq, id, parent_id, type, role, first_kept, target_id, provider, model, thinking,
           offset, len, ts_ms
    FROM entries WHERE file_id = ?1 AND seq = ?2
    UNION ALL
    SELECT w.depth + 1, e.seq, e.id, e.parent_id, e.type, e.role, e.first_kept, e.target_id,
           e.provider, e.model, e.thinking, e.offset, e.len, e.ts_ms
    FROM walk w CROSS JOIN entries e ON e.file_id = ?1 AND e.id = w.parent_id AND e.shadowed = 0
    WHERE w.parent_id <> '' AND w.depth < ?3
)
SELECT seq, id, type, role, first_kept, target_id, provider, model, thinking, offset, len, ts_ms
FROM walk ORDER BY depth";

/// An entry's stored path facts: select [`PATH_FACTS`] first, then map the row with
/// [`path_facts`].
pub const PATH_FACTS: &str = "depth, compaction_seq, thinking_seq, model_seq, throws_seq";

/// The [`PathFacts`] of a row whose first columns are [`PATH_FACTS`].
///
/// # Errors
/// A column of the wrong type.
pub fn path_facts(r: &rusqlite::Row) -> rusqlite::Result<PathFacts> {
    Ok(PathFacts {
        depth: r.get(0)?,
        compaction: r.get(1)?,
        thinking: r.get(2)?,
        model: r.get(3)?,
        throws: r.get(4)?,
    })
}
