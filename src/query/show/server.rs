//! `show` on the team server.

use postgres::Transaction;

use crate::error::Result;
use crate::query::resolve::server::Found;
use crate::store::pg::server_err;

/// What `show` prints of a server session: its summary row and usage sums, as JSON.
///
/// # Errors
/// Server errors.
pub fn show(tx: &mut Transaction, s: &Found) -> Result<serde_json::Value> {
    let r = tx
        .query_one(
            "SELECT s.source, s.path, s.session_id, s.cwd, s.name, s.created_ms, s.last_activity_ms,
                    s.message_count, s.entry_count, s.first_message, s.size, s.bad_line_count,
                    s.leaf_id, s.state = 1, s.excluded, s.pushed_at::text,
                    count(e.seq) FILTER (WHERE e.type = 'message' AND e.role = 'user'),
                    count(e.seq) FILTER (WHERE e.type = 'message' AND e.role = 'assistant'),
                    count(e.seq) FILTER (WHERE e.type = 'message' AND e.role = 'toolResult'),
                    coalesce(sum(e.tool_calls) FILTER (WHERE e.type = 'message' AND e.role = 'assistant'), 0)::bigint,
                    coalesce(sum(e.input), 0)::bigint, coalesce(sum(e.output), 0)::bigint,
                    coalesce(sum(e.cache_read), 0)::bigint, coalesce(sum(e.cache_write), 0)::bigint,
                    coalesce(sum(e.cost), 0)::float8
             FROM sessions s LEFT JOIN entries e ON e.source = s.source AND e.fid = s.fid
             WHERE s.source = $1 AND s.fid = $2
             GROUP BY s.source, s.fid",
            &[&s.source, &s.fid],
        )
        .map_err(server_err)?;
    Ok(serde_json::json!({
        "source": r.get::<_, String>(0),
        "path": r.get::<_, String>(1),
        "id": r.get::<_, Option<String>>(2),
        "cwd": r.get::<_, String>(3),
        "name": r.get::<_, Option<String>>(4),
        "createdMs": r.get::<_, Option<i64>>(5),
        "lastActivityMs": r.get::<_, Option<i64>>(6),
        "messageCount": r.get::<_, i64>(7),
        "entryCount": r.get::<_, i64>(8),
        "firstMessage": r.get::<_, Option<String>>(9),
        "bytes": r.get::<_, i64>(10),
        "badLines": r.get::<_, i64>(11),
        "leafId": r.get::<_, Option<String>>(12),
        "listed": r.get::<_, bool>(13),
        "excluded": r.get::<_, Option<String>>(14),
        "pushedAt": r.get::<_, String>(15),
        "userMessages": r.get::<_, i64>(16),
        "assistantMessages": r.get::<_, i64>(17),
        "toolResults": r.get::<_, i64>(18),
        "toolCalls": r.get::<_, i64>(19),
        "tokens": {
            "input": r.get::<_, i64>(20),
            "output": r.get::<_, i64>(21),
            "cacheRead": r.get::<_, i64>(22),
            "cacheWrite": r.get::<_, i64>(23),
        },
        "cost": r.get::<_, f64>(24),
    }))
}
