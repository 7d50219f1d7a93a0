//! The one write path to the server (`pidx push`): each transcript's change in one transaction,
//! so a push killed at any point leaves every transcript as it was before or after, and the
//! next push completes it. Copies made by forks are re-ranked inside the same transaction
//! (the SQLite rule of `store::copies`, per source: the session with the earliest header time,
//! then the smallest path, holds the canonical copy).

use postgres::types::ToSql;
use postgres::{Client, Transaction};

use super::server_err;
use super::values::{unnest_insert, Col, Ty, Val};
use crate::error::Result;

/// The server's `sessions` columns and the SQLite expression each comes from (over `files f`,
/// `roots r`, `sessions s` and the `gw_files g` view).
pub const SESSION_COLS: &[(&str, &str, Ty)] = &[
    ("path", "f.path", Ty::Text),
    ("root", "r.path", Ty::Text),
    ("layout", "r.layout", Ty::Text),
    ("dir", "f.dir", Ty::Text),
    ("file_name", "f.name", Ty::Text),
    ("ino", "f.ino", Ty::Int),
    ("size", "f.size", Ty::Int),
    ("mtime_ms", "f.mtime_ms", Ty::Int),
    ("mtime_ns", "f.mtime_ns", Ty::Int),
    ("byte_offset", "f.offset", Ty::Int),
    ("head_hash", "f.head_hash", Ty::Int),
    ("tail_hash", "f.tail_hash", Ty::Int),
    ("lines", "f.lines", Ty::Int),
    ("bad_line_count", "f.bad_lines", Ty::Int),
    ("state", "s.state", Ty::Int4),
    ("excluded", "s.excluded", Ty::Text),
    ("loadable", "s.loadable", Ty::Bool),
    ("version", "s.version", Ty::Int),
    ("header", "s.header", Ty::Text),
    ("session_id", "s.session_id", Ty::Text),
    ("cwd", "s.cwd", Ty::Text),
    ("created_ms", "s.created_ms", Ty::Int),
    ("header_ts_ms", "s.header_ts_ms", Ty::Int),
    ("name", "s.name", Ty::Text),
    ("message_count", "s.message_count", Ty::Int),
    ("first_message", "s.first_message", Ty::Text),
    ("last_activity_ms", "s.last_activity_ms", Ty::Int),
    ("parsed_values", "s.parsed_values", Ty::Int),
    ("entry_count", "s.entry_count", Ty::Int),
    ("leaf_seq", "s.leaf_seq", Ty::Int),
    ("leaf_id", "s.leaf_id", Ty::Text),
    ("tangled", "s.tangled", Ty::Bool),
    ("agent_id", "g.agent_id", Ty::Text),
    ("session_key", "g.session_key", Ty::Text),
    ("key_current", "g.current", Ty::Bool),
    ("channel", "g.channel", Ty::Text),
    ("chat_type", "g.chat_type", Ty::Text),
    ("peer", "g.peer", Ty::Text),
    ("display_name", "g.display_name", Ty::Text),
    ("subject", "g.subject", Ty::Text),
    ("thread_id", "g.thread_id", Ty::Text),
];

/// The server's `entries` columns and their SQLite expressions (over `entries e`); `raw` comes
/// last and is read from the JSONL by push.
pub const ENTRY_COLS: &[(&str, &str, Ty)] = &[
    ("seq", "e.seq", Ty::Int),
    ("line", "e.line", Ty::Int),
    ("byte_offset", "e.offset", Ty::Int),
    ("len", "e.len", Ty::Int),
    ("id", "e.id", Ty::Text),
    ("parent_id", "e.parent_id", Ty::Text),
    ("shadowed", "e.shadowed", Ty::Bool),
    ("type", "e.type", Ty::Text),
    ("role", "e.role", Ty::Text),
    ("ts", "e.ts", Ty::Text),
    ("ts_ms", "e.ts_ms", Ty::Int),
    ("first_kept", "e.first_kept", Ty::Text),
    ("target_id", "e.target_id", Ty::Text),
    ("label", "e.label", Ty::Text),
    ("provider", "e.provider", Ty::Text),
    ("model", "e.model", Ty::Text),
    ("thinking", "e.thinking", Ty::Text),
    ("response_model", "e.response_model", Ty::Text),
    ("stop_reason", "e.stop_reason", Ty::Text),
    ("input", "e.input", Ty::Int),
    ("output", "e.output", Ty::Int),
    ("cache_read", "e.cache_read", Ty::Int),
    ("cache_write", "e.cache_write", Ty::Int),
    ("cost", "e.cost", Ty::Float),
    ("tool_calls", "e.tool_calls", Ty::Int),
    ("is_error", "e.is_error", Ty::Bool),
    ("text", "e.text", Ty::Text),
    ("tool_name", "e.tool_name", Ty::Text),
    ("exit_code", "e.exit_code", Ty::Int),
    ("dup", "e.dup", Ty::Bool),
    ("silent", "e.silent", Ty::Bool),
    ("raw", "NULL", Ty::Text),
];

const TEXT_COLS: &[(&str, Ty)] = &[("seq", Ty::Int), ("kind", Ty::Int4), ("body", Ty::Text)];
const TOOL_COLS: &[(&str, Ty)] = &[("seq", Ty::Int), ("n", Ty::Int4), ("name", Ty::Text)];
const LINE_COLS: &[(&str, Ty)] = &[("line", Ty::Int), ("text", Ty::Text)];
const BAD_COLS: &[(&str, Ty)] = &[("line", Ty::Int), ("reason", Ty::Text)];

/// Rows of a table as columns, built in the order of its column list.
#[derive(Debug, Clone)]
pub struct Rows(pub Vec<Col>);

impl Rows {
    pub fn new(types: impl IntoIterator<Item = Ty>) -> Rows {
        Rows(types.into_iter().map(Col::new).collect())
    }

    pub fn push(&mut self, row: Vec<Val>) {
        for (c, v) in self.0.iter_mut().zip(row) {
            c.push(v);
        }
    }

    pub fn len(&self) -> usize {
        self.0.first().map_or(0, Col::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What changed in one transcript since the server last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// New, rewritten or replaced: everything the server holds for it is replaced.
    Full,
    /// Grown: entries after `after_seq` and lines from `from_line` on are new.
    Append { after_seq: i64, from_line: i64 },
    /// Only the summary row changed (a name from sessions.json, a touched mtime).
    Summary,
}

/// One transcript's rows to send.
pub struct FileRows {
    /// [`SESSION_COLS`] values, then the summary hash.
    pub session: Vec<Val>,
    pub summary_hash: i64,
    /// [`ENTRY_COLS`].
    pub entries: Rows,
    /// (seq, kind, body) of full-text rows.
    pub texts: Rows,
    /// (seq, n, name) of tool calls.
    pub tools: Rows,
    /// (line, text) of pi's listing text from unparsable lines.
    pub listing: Rows,
    /// (line, reason).
    pub bad: Rows,
    /// For an append: the older entries that are now shadowed or silent (these flags change
    /// when later lines arrive).
    pub shadowed: Vec<i64>,
    pub silent: Vec<i64>,
}

impl FileRows {
    pub fn empty() -> FileRows {
        FileRows {
            session: Vec::new(),
            summary_hash: 0,
            entries: Rows::new(ENTRY_COLS.iter().map(|c| c.2)),
            texts: Rows::new(TEXT_COLS.iter().map(|c| c.1)),
            tools: Rows::new(TOOL_COLS.iter().map(|c| c.1)),
            listing: Rows::new(LINE_COLS.iter().map(|c| c.1)),
            bad: Rows::new(BAD_COLS.iter().map(|c| c.1)),
            shadowed: Vec::new(),
            silent: Vec::new(),
        }
    }
}

/// Applies one transcript's change in one transaction.
///
/// # Errors
/// Server errors (the transaction is rolled back: the server keeps the previous state).
pub fn write_file(
    client: &mut Client,
    source: &str,
    rows: &FileRows,
    change: Change,
) -> Result<()> {
    let mut tx = client.transaction().map_err(server_err)?;
    let path = match &rows.session[0] {
        Val::Text(Some(p)) => p.clone(),
        _ => unreachable!("the first session column is the path"),
    };
    let old = fid_of(&mut tx, source, &path)?;
    let mut old_groups = (Vec::new(), Vec::new());
    if let (Some(fid), Change::Full) = (old, change) {
        old_groups = copy_groups(&mut tx, source, fid)?;
        delete_children(&mut tx, source, fid, None)?;
    }
    let fid = upsert_session(&mut tx, source, rows)?;
    let after = match change {
        Change::Full => -1,
        Change::Append {
            after_seq,
            from_line,
        } => {
            delete_children(&mut tx, source, fid, Some(from_line))?;
            set_flags(&mut tx, source, fid, after_seq, rows)?;
            after_seq
        }
        Change::Summary => i64::MAX,
    };
    if change != Change::Summary {
        insert(
            &mut tx,
            "entries",
            ENTRY_COLS.iter().map(|c| (c.0, c.2)),
            source,
            fid,
            &rows.entries,
        )?;
        insert(
            &mut tx,
            "entry_text",
            TEXT_COLS.iter().copied(),
            source,
            fid,
            &rows.texts,
        )?;
        insert(
            &mut tx,
            "tool_uses",
            TOOL_COLS.iter().copied(),
            source,
            fid,
            &rows.tools,
        )?;
        insert(
            &mut tx,
            "listing_text",
            LINE_COLS.iter().copied(),
            source,
            fid,
            &rows.listing,
        )?;
        insert(
            &mut tx,
            "bad_lines",
            BAD_COLS.iter().copied(),
            source,
            fid,
            &rows.bad,
        )?;
        rank_copies(&mut tx, source, fid, &old_groups, after)?;
    }
    tx.commit().map_err(server_err)
}

/// Removes a transcript that is gone from the source machine.
///
/// # Errors
/// Server errors.
pub fn delete_file(client: &mut Client, source: &str, fid: i64) -> Result<()> {
    let mut tx = client.transaction().map_err(server_err)?;
    let groups = copy_groups(&mut tx, source, fid)?;
    delete_children(&mut tx, source, fid, None)?;
    tx.execute(
        "DELETE FROM sessions WHERE source = $1 AND fid = $2",
        &[&source, &fid],
    )
    .map_err(server_err)?;
    rank_copies(&mut tx, source, fid, &groups, i64::MAX)?;
    tx.commit().map_err(server_err)
}

fn fid_of(tx: &mut Transaction, source: &str, path: &str) -> Result<Option<i64>> {
    Ok(tx
        .query_opt(
            "SELECT fid FROM sessions WHERE source = $1 AND path = $2",
            &[&source, &path],
        )
        .map_err(server_err)?
        .map(|r| r.get(0)))
}

/// Deletes a transcript's rows (all of them, or for an append the lines from `from_line` on:
/// a torn last line can be read again).
fn delete_children(
    tx: &mut Transaction,
    source: &str,
    fid: i64,
    from_line: Option<i64>,
) -> Result<()> {
    match from_line {
        None => {
            for table in [
                "entries",
                "entry_text",
                "tool_uses",
                "listing_text",
                "bad_lines",
            ] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE source = $1 AND fid = $2"),
                    &[&source, &fid],
                )
                .map_err(server_err)?;
            }
        }
        Some(line) => {
            for table in ["listing_text", "bad_lines"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE source = $1 AND fid = $2 AND line >= $3"),
                    &[&source, &fid, &line],
                )
                .map_err(server_err)?;
            }
        }
    }
    Ok(())
}

fn upsert_session(tx: &mut Transaction, source: &str, rows: &FileRows) -> Result<i64> {
    let names: Vec<&str> = SESSION_COLS.iter().map(|c| c.0).collect();
    let params: Vec<String> = (0..names.len()).map(|i| format!("${}", i + 2)).collect();
    let sets: Vec<String> = names
        .iter()
        .map(|n| format!("{n} = EXCLUDED.{n}"))
        .collect();
    let sql = format!(
        "INSERT INTO sessions (source, {}, summary_hash) VALUES ($1, {}, ${})
         ON CONFLICT (source, path) DO UPDATE SET {}, summary_hash = EXCLUDED.summary_hash,
             pushed_at = now()
         RETURNING fid",
        names.join(", "),
        params.join(", "),
        names.len() + 2,
        sets.join(", ")
    );
    let mut args: Vec<&(dyn ToSql + Sync)> = vec![&source];
    args.extend(rows.session.iter().map(|v| v as &(dyn ToSql + Sync)));
    args.push(&rows.summary_hash);
    Ok(tx.query_one(&sql, &args).map_err(server_err)?.get(0))
}

/// Older entries' flags that later lines change: `shadowed` (a later entry took the id) and
/// `silent` (a later `NO_REPLY` reply).
fn set_flags(
    tx: &mut Transaction,
    source: &str,
    fid: i64,
    upto: i64,
    rows: &FileRows,
) -> Result<()> {
    for (col, seqs) in [("shadowed", &rows.shadowed), ("silent", &rows.silent)] {
        tx.execute(
            &format!(
                "UPDATE entries SET {col} = (seq = ANY($3)) WHERE source = $1 AND fid = $2
                 AND seq <= $4 AND {col} <> (seq = ANY($3))"
            ),
            &[&source, &fid, seqs, &upto],
        )
        .map_err(server_err)?;
    }
    Ok(())
}

const CHUNK: usize = 4000;

fn insert(
    tx: &mut Transaction,
    table: &str,
    cols: impl Iterator<Item = (&'static str, Ty)>,
    source: &str,
    fid: i64,
    rows: &Rows,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let cols: Vec<(&str, Ty)> = cols.collect();
    let stmt = tx
        .prepare(&unnest_insert(table, &cols))
        .map_err(server_err)?;
    let mut start = 0;
    while start < rows.len() {
        let end = (start + CHUNK).min(rows.len());
        let chunk: Vec<Col> = rows.0.iter().map(|c| c.slice(start, end)).collect();
        let mut args: Vec<&(dyn ToSql + Sync)> = vec![&source, &fid];
        args.extend(chunk.iter().map(|c| c as &(dyn ToSql + Sync)));
        tx.execute(&stmt, &args).map_err(server_err)?;
        start = end;
    }
    Ok(())
}

/// The (id, ts) pairs of a transcript's entries: the copy groups its removal re-ranks.
fn copy_groups(tx: &mut Transaction, source: &str, fid: i64) -> Result<(Vec<String>, Vec<String>)> {
    let rows = tx
        .query(
            "SELECT DISTINCT id, ts FROM entries
             WHERE source = $1 AND fid = $2 AND id IS NOT NULL AND ts IS NOT NULL",
            &[&source, &fid],
        )
        .map_err(server_err)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).unzip())
}

/// Re-ranks the copy groups of `groups` and of the transcript's entries after `after`: in each
/// (id, ts) group of this source, every entry of a session later than the earliest is a copy.
const RANK_COPIES: &str = "
WITH g AS (
    SELECT id, ts FROM unnest($3::text[], $4::text[]) AS u(id, ts)
    UNION
    SELECT id, ts FROM entries
    WHERE source = $1 AND fid = $2 AND seq > $5 AND id IS NOT NULL AND ts IS NOT NULL
), r AS (
    SELECT e.fid, e.seq,
           rank() OVER (PARTITION BY e.id, e.ts
                        ORDER BY coalesce(s.created_ms, 9223372036854775807), s.path COLLATE \"C\") > 1
               AS copy
    FROM g JOIN entries e ON e.source = $1 AND e.id = g.id AND e.ts = g.ts
    JOIN sessions s ON s.source = e.source AND s.fid = e.fid
)
UPDATE entries e SET dup = r.copy FROM r
WHERE e.source = $1 AND e.fid = r.fid AND e.seq = r.seq AND e.dup <> r.copy";

fn rank_copies(
    tx: &mut Transaction,
    source: &str,
    fid: i64,
    groups: &(Vec<String>, Vec<String>),
    after: i64,
) -> Result<()> {
    tx.execute(RANK_COPIES, &[&source, &fid, &groups.0, &groups.1, &after])
        .map_err(server_err)?;
    Ok(())
}
