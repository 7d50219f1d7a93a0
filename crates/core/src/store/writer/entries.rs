//! Entry rows: each batch of folded entries with its path facts, fork-copy marks, tool uses and
//! full-text rows, in the caller's write transaction.

use rusqlite::{params, Connection, OptionalExtension, Statement, ToSql};

use crate::pi::huge::{self, HUGE_TEXT};
use crate::pi::model::{EntryRow, SessionState};
use crate::pi::paths::{self, PathFacts};
use crate::store::joints::{self, Joints};
use crate::store::schema::{entry_insert_sql, entry_values, fts_rowid, path_facts, PATH_FACTS};
use crate::store::{big, copies};

use super::{Op, Staged};

/// The `INSERT` of an entry (`schema::entry_insert_sql`), made once.
static INSERT: std::sync::LazyLock<String> = std::sync::LazyLock::new(entry_insert_sql);

/// Inserts a batch of entries with their path facts (parents looked up among the file's rows,
/// this transaction's included). An id seen before in the same file shadows the earlier entry,
/// as pi's `byId` map keeps the last one (docs/pi-format.md §4.4). Sets `state.tangled` when
/// the facts cannot be trusted.
///
/// # Errors
/// SQLite errors.
pub fn insert_entries(
    tx: &Connection,
    staged: &mut Staged,
    file_id: i64,
    rows: &mut [EntryRow],
    state: &mut SessionState,
) -> rusqlite::Result<()> {
    let mut shadow = tx.prepare_cached(
        "UPDATE entries SET shadowed = 1 WHERE file_id = ?1 AND id = ?2 AND shadowed = 0",
    )?;
    let mut insert = tx.prepare_cached(&INSERT)?;
    let mut tool_use =
        tx.prepare_cached("INSERT INTO tool_uses(rid, file_id, name) VALUES (?1, ?2, ?3)")?;
    let mut direct = tx.prepare_cached("INSERT INTO fts(rowid, body) VALUES (?1, ?2)")?;
    let key = copies::file_key(tx, file_id, state.created_ms)?;
    let first_seq = rows.first().map(|e| e.seq);
    let mut run = Run::default();
    for e in rows.iter_mut() {
        match &e.id {
            Some(id) => state.tangled |= shadow.execute(params![file_id, id])? > 0,
            None => state.tangled = true,
        }
        let parent = parent_facts(tx, file_id, e.parent_id.as_deref(), state)?;
        let facts = PathFacts::of(e, parent.as_ref());
        let dup = copies::is_copy(tx, file_id, &key, e.id.as_deref(), e.ts.as_deref())?;
        // A huge text (`pi::huge`) goes into `big_texts`, not into the row.
        let huge = e.huge.take();
        let big_text = match (&huge, &e.text) {
            (Some(_), Some(t)) if huge::holds_token(t) => e.text.take(),
            _ => None,
        };
        insert_row(&mut insert, file_id, e, &facts, dup)?;
        if e.text.take().is_some_and(|t| t.len() >= HUGE_TEXT) {
            // A cached statement keeps its bound values (SQLite's copy of them) until reused.
            insert.clear_bindings();
        }
        let rid = tx.last_insert_rowid();
        run.add(rid, e.ts_ms);
        if let (Some(h), Some(t)) = (&huge, &big_text) {
            big::write(tx, -rid, file_id, &h.pieces(t).unwrap_or_default())?;
        }
        for name in &e.tool_uses {
            tool_use.execute(params![rid, file_id, name])?;
        }
        super::touches::insert(tx, rid, file_id, e)?;
        let mut from_big = Vec::new();
        // Each text is dropped once written: a huge one is not kept while the next is inserted.
        for (kind, text) in std::mem::take(&mut e.texts) {
            let rowid = fts_rowid(rid, kind);
            let pieces = huge.as_ref().and_then(|h| h.pieces(&text));
            // A text standing for a huge one (`pi::huge`) is not looked through for joints.
            let found = match pieces {
                Some(_) => Joints::Unknown,
                None => joints::of(&text),
            };
            index_joints(tx, staged, rowid, found)?;
            if let Some(pieces) = pieces {
                if big_text.as_deref() == Some(text.as_str()) {
                    from_big.push((rowid, -rid));
                } else {
                    big::write(tx, rowid, file_id, &pieces)?;
                    from_big.push((rowid, rowid));
                }
            } else if let Some(ops) = staged.aside() {
                ops.push(Op::Words(rowid, text));
            } else if text.len() >= HUGE_TEXT {
                // Straight into the index: staged (`writer::Staged`), it would be held until the
                // commit while the rest of the batch is written; one more FTS5 segment is
                // nothing beside a text of 16 MB. (A huge text its line gave up, above, never
                // comes here.)
                direct.execute(params![rowid, text])?;
                direct.clear_bindings();
            } else {
                staged.text(rowid, text);
            }
        }
        // The huge text is in `big_texts` now: let it go before FTS5 reads it back.
        drop((huge, big_text));
        for (rowid, id) in from_big {
            match staged.aside() {
                Some(ops) => ops.push(Op::Big(rowid, id)),
                None => big::index(tx, rowid, id)?,
            }
        }
    }
    run.write(tx, file_id)?;
    super::rollups::add(tx, file_id, first_seq)
}

/// The rids a batch's entries got and their oldest and newest timestamps (`rid_runs`,
/// migrations 0018 and 0020).
#[derive(Default)]
struct Run {
    rids: Option<(i64, i64)>,
    min_ts: Option<i64>,
    max_ts: Option<i64>,
}

impl Run {
    fn add(&mut self, rid: i64, ts_ms: Option<i64>) {
        self.rids = Some(
            self.rids
                .map_or((rid, rid), |(lo, hi)| (lo.min(rid), hi.max(rid))),
        );
        self.max_ts = self.max_ts.max(ts_ms);
        // `None` is below every time: the oldest is the least of the times there are.
        self.min_ts = match (self.min_ts, ts_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// Records the run. A batch's rows follow each other (nothing else is inserted into
    /// `entries` meanwhile), so every rid from `lo` to `hi` is one of them.
    fn write(&self, tx: &Connection, file_id: i64) -> rusqlite::Result<()> {
        let Some((lo, hi)) = self.rids else {
            return Ok(());
        };
        tx.prepare_cached(
            "INSERT INTO rid_runs(lo, hi, file_id, min_ts, max_ts) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![lo, hi, file_id, self.min_ts, self.max_ts])
        .map(drop)
    }
}

/// Indexes `found`, the joints of the text of full-text row `rowid` (`store::joints`): staged
/// with the texts, or listed as unknown.
fn index_joints(
    tx: &Connection,
    staged: &mut Staged,
    rowid: i64,
    found: Joints,
) -> rusqlite::Result<()> {
    match found {
        Joints::None => Ok(()),
        Joints::Body(body) => {
            staged.joints(rowid, body);
            Ok(())
        }
        Joints::Unknown => tx
            .prepare_cached("INSERT INTO joints_unknown(rowid) VALUES (?1)")?
            .execute([rowid])
            .map(drop),
    }
}

/// The path facts of an entry's parent, `None` for a root; a parent that is not an earlier
/// entry (a forward reference, an orphan or a cycle) marks the session tangled.
fn parent_facts(
    tx: &Connection,
    file_id: i64,
    parent_id: Option<&str>,
    state: &mut SessionState,
) -> rusqlite::Result<Option<PathFacts>> {
    if paths::is_root(parent_id) {
        return Ok(None);
    }
    let found = tx
        .prepare_cached(&format!(
            "SELECT {PATH_FACTS} FROM entries WHERE file_id = ?1 AND id = ?2 AND shadowed = 0"
        ))?
        .query_row(params![file_id, parent_id], path_facts)
        .optional()?;
    state.tangled |= found.is_none();
    Ok(found)
}

fn insert_row(
    insert: &mut Statement,
    file_id: i64,
    e: &EntryRow,
    facts: &PathFacts,
    dup: bool,
) -> rusqlite::Result<usize> {
    let text_kinds = e
        .texts
        .iter()
        .fold(0, |bits, (k, _)| bits | (1 << *k as i64));
    let fields = entry_values(e, dup);
    let facts: [&dyn ToSql; 5] = [
        &facts.depth,
        &facts.compaction,
        &facts.thinking,
        &facts.model,
        &facts.throws,
    ];
    let values = std::iter::once(&file_id as &dyn ToSql)
        .chain(fields.iter().map(|(_, v)| v as &dyn ToSql))
        .chain(facts)
        .chain([&text_kinds as &dyn ToSql]);
    insert.execute(rusqlite::params_from_iter(values))
}
