//! pi's `buildSessionContext` on the team server: the same plan as the local answer
//! (`ContextPlan`, paged the same way) over the raw lines the server holds.

use std::collections::HashMap;

use postgres::Transaction;

use super::on::key;
use crate::pg::lines::{line_with, lines_without_texts};
use crate::pg::server_err;
use pidx_core::error::{Error, Result};
use pidx_core::query::context::{empty_plan, ContextPlan, Lines, PathEntry};
use pidx_core::query::resolve::Resolved;

/// A line as the server holds it: `raw`, `raw_z`, and the entry's texts by kind when the line
/// was stored without their pieces (`pg::lines`).
type Held = (Option<String>, Option<Vec<u8>>, Vec<(i16, String)>);

/// The raw lines of the entries on a path, by seq, as the server holds them: a line is
/// decompressed only when the page asks for it.
struct RawLines {
    raw: HashMap<i64, Held>,
    version: i64,
    path: String,
}

impl Lines for RawLines {
    fn line(&self, e: &PathEntry) -> Result<String> {
        let (raw, raw_z, texts) = self.raw.get(&e.seq).ok_or_else(|| Error::Stale {
            path: self.path.clone().into(),
        })?;
        line_with(raw.clone(), raw_z.as_deref(), texts)
    }

    fn version(&self) -> i64 {
        self.version
    }
}

/// The leaf-to-root walk on the server (`store::schema::ANCESTORS` with each entry's raw line,
/// compressed in `raw_z` or, pushed before pg 0007, as text in `raw`: `pg::lines`);
/// `depth < $4` bounds it on a cycle.
const ANCESTORS: &str = "
WITH RECURSIVE walk(depth, seq, id, parent_id, type, role, first_kept, target_id, provider, model,
                    thinking, byte_offset, len, ts_ms, raw, raw_z) AS (
    SELECT 0::bigint, seq, id, parent_id, type, role, first_kept, target_id, provider, model, thinking,
           byte_offset, len, ts_ms, raw, raw_z
    FROM entries WHERE source = $1 AND fid = $2 AND seq = $3
    UNION ALL
    SELECT w.depth + 1, e.seq, e.id, e.parent_id, e.type, e.role, e.first_kept, e.target_id,
           e.provider, e.model, e.thinking, e.byte_offset, e.len, e.ts_ms, e.raw, e.raw_z
    FROM walk w JOIN entries e
      ON e.source = $1 AND e.fid = $2 AND e.id = w.parent_id AND NOT e.shadowed
    WHERE w.parent_id <> '' AND w.depth < $4
)
SELECT seq, id, type, role, first_kept, target_id, provider, model, thinking, byte_offset, len,
       ts_ms, raw, raw_z
FROM walk ORDER BY depth";

/// The texts of the entries whose lines were stored without their pieces (`pg::lines`), in one
/// statement after the walk (a lookup per entry inside it took 35% longer for a path of 6,000).
const TEXTS: &str = "SELECT seq, kind, body FROM entry_text
WHERE source = $1 AND fid = $2 AND seq = ANY($3)";

/// Whether pi can open it, its version, entry count and default leaf (`query::context`).
pub(crate) fn loadability(
    tx: &mut Transaction,
    s: &Resolved,
) -> Result<(bool, i64, i64, Option<i64>)> {
    let (source, fid) = key(s);
    let r = tx
        .query_one(
            "SELECT loadable OR (parsed_values = 0 AND size = 0), coalesce(version, 1),
                    entry_count, leaf_seq
             FROM sessions WHERE source = $1 AND fid = $2",
            &[&source, &fid],
        )
        .map_err(server_err)?;
    Ok((r.get(0), r.get(1), r.get(2), r.get(3)))
}

/// pi's context at `leaf` (an entry id; `None`: the last entry), its path's lines read with it.
///
/// # Errors
/// `Invalid` when pi cannot open the session, `NoEntry` for an unknown leaf, server errors.
pub fn plan(tx: &mut Transaction, s: &Resolved, leaf: Option<&str>) -> Result<ContextPlan> {
    let (source, fid) = key(s);
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
                &[&source, &fid, &id],
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
        return Ok(empty_plan());
    };
    let rows = tx
        .query(ANCESTORS, &[&source, &fid, &leaf_seq, &entry_count])
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
        lines.raw.insert(seq, (r.get(12), r.get(13), Vec::new()));
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
    let short: Vec<i64> = lines
        .raw
        .iter()
        .filter(|(_, held)| held.1.as_deref().is_some_and(lines_without_texts))
        .map(|(seq, _)| *seq)
        .collect();
    if !short.is_empty() {
        for r in tx
            .query(TEXTS, &[&source, &fid, &short])
            .map_err(server_err)?
        {
            if let Some(held) = lines.raw.get_mut(&r.get::<_, i64>(0)) {
                held.2.push((r.get(1), r.get(2)));
            }
        }
    }
    ContextPlan::of_path(path, cycle, Box::new(lines))
}
