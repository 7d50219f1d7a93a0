//! One session from the server: `context` (pi's `buildSessionContext` over the raw lines the
//! server holds, the same code as the local answer), `tree` (`getTree`) and a `show` summary.

use std::collections::HashMap;

use postgres::Transaction;

use super::Found;
use crate::error::{Error, Result};
use crate::query::context::{context_of_path, Context, Lines, PathEntry};
use crate::query::tree::{tree_of, Node, Tree};
use crate::store::pg::server_err;

/// The raw lines of the entries on a path, by seq.
struct RawLines {
    raw: HashMap<i64, String>,
    version: i64,
    path: String,
}

impl Lines for RawLines {
    fn line(&self, e: &PathEntry) -> Result<String> {
        self.raw.get(&e.seq).cloned().ok_or_else(|| Error::Stale {
            path: self.path.clone().into(),
        })
    }

    fn version(&self) -> i64 {
        self.version
    }
}

/// The leaf-to-root walk on the server (`store::schema::ANCESTORS` with each entry's raw line);
/// `depth < $4` bounds it on a cycle.
const ANCESTORS: &str = "
WITH RECURSIVE walk(depth, seq, id, parent_id, type, role, first_kept, target_id, provider, model,
                    thinking, byte_offset, len, ts_ms, raw) AS (
    SELECT 0::bigint, seq, id, parent_id, type, role, first_kept, target_id, provider, model, thinking,
           byte_offset, len, ts_ms, raw
    FROM entries WHERE source = $1 AND fid = $2 AND seq = $3
    UNION ALL
    SELECT w.depth + 1, e.seq, e.id, e.parent_id, e.type, e.role, e.first_kept, e.target_id,
           e.provider, e.model, e.thinking, e.byte_offset, e.len, e.ts_ms, e.raw
    FROM walk w JOIN entries e
      ON e.source = $1 AND e.fid = $2 AND e.id = w.parent_id AND NOT e.shadowed
    WHERE w.parent_id <> '' AND w.depth < $4
)
SELECT seq, id, type, role, first_kept, target_id, provider, model, thinking, byte_offset, len,
       ts_ms, raw
FROM walk ORDER BY depth";

/// Whether pi can open it, its version, entry count and default leaf (`query::context`).
fn loadability(tx: &mut Transaction, s: &Found) -> Result<(bool, i64, i64, Option<i64>)> {
    let r = tx
        .query_one(
            "SELECT loadable OR (parsed_values = 0 AND size = 0), coalesce(version, 1),
                    entry_count, leaf_seq
             FROM sessions WHERE source = $1 AND fid = $2",
            &[&s.source, &s.fid],
        )
        .map_err(server_err)?;
    Ok((r.get(0), r.get(1), r.get(2), r.get(3)))
}

/// pi's context at `leaf` (an entry id; `None`: the last entry).
///
/// # Errors
/// `Invalid` when pi cannot open the session, `NoEntry` for an unknown leaf, server errors.
pub fn context(tx: &mut Transaction, s: &Found, leaf: Option<&str>) -> Result<Context> {
    let (openable, version, entry_count, default_leaf) = loadability(tx, s)?;
    if !openable {
        return Err(Error::Invalid(format!(
            "pi cannot open {}: its first JSON line is not a session header with an id",
            s.path
        )));
    }
    let leaf_seq = match leaf {
        Some(id) => Some(
            tx.query_opt(
                "SELECT seq FROM entries WHERE source = $1 AND fid = $2 AND id = $3 AND NOT shadowed",
                &[&s.source, &s.fid, &id],
            )
            .map_err(server_err)?
            .map(|r| r.get::<_, i64>(0))
            .ok_or_else(|| Error::NoEntry {
                session: s.path.clone(),
                entry: id.to_string(),
            })?,
        ),
        None => default_leaf,
    };
    let Some(leaf_seq) = leaf_seq else {
        return Ok(Context {
            thinking_level: Some("off".into()),
            ..Context::default()
        });
    };
    let rows = tx
        .query(ANCESTORS, &[&s.source, &s.fid, &leaf_seq, &entry_count])
        .map_err(server_err)?;
    let mut lines = RawLines {
        raw: HashMap::new(),
        version,
        path: s.path.clone(),
    };
    let mut seen = std::collections::HashSet::new();
    let mut path = Vec::new();
    let mut cycle = false;
    for r in &rows {
        let seq: i64 = r.get(0);
        if !seen.insert(seq) {
            cycle = true;
            break;
        }
        lines.raw.insert(seq, r.get(12));
        path.push(PathEntry {
            seq,
            id: r.get(1),
            kind: r.get(2),
            role: r.get(3),
            first_kept: r.get(4),
            target_id: r.get(5),
            provider: r.get(6),
            model: r.get(7),
            thinking: r.get(8),
            offset: r.get(9),
            len: r.get(10),
            ts_ms: r.get(11),
        });
    }
    path.reverse();
    context_of_path(&path, cycle, &lines)
}

/// pi's `getTree` of the session.
///
/// # Errors
/// Server errors.
pub fn tree(tx: &mut Transaction, s: &Found) -> Result<Tree> {
    if !loadability(tx, s)?.0 {
        return Ok(Tree {
            unopenable: true,
            ..Tree::default()
        });
    }
    let rows = tx
        .query(
            "SELECT seq, id, parent_id, type, role, ts, ts_ms, substr(text, 1, 400), label, target_id
             FROM entries WHERE source = $1 AND fid = $2 ORDER BY seq",
            &[&s.source, &s.fid],
        )
        .map_err(server_err)?;
    tree_of(rows.iter().map(|r| {
        Ok::<_, Error>((
            Node {
                seq: r.get(0),
                id: r.get(1),
                parent_id: r.get(2),
                kind: r.get(3),
                role: r.get(4),
                ts: r.get(5),
                ts_ms: r.get(6),
                text: r.get(7),
                label: None,
                label_ts: None,
                children: Vec::new(),
            },
            r.get(8),
            r.get(9),
        ))
    }))
}

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
