//! The one write path: every row ingest produces goes through here, inside a write transaction
//! (`WriteTx`, or rusqlite's `Transaction` for one-shot writes) that rolls back when dropped
//! uncommitted, so a batch of entries, the session summary and the file's new offset always
//! commit together, and an error never leaves a connection inside a transaction.

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use crate::pi::model::{Listing, SessionState};
use crate::pi::text::TextKind;
use std::sync::mpsc::SyncSender;

use crate::store::copies;
use crate::store::fts5;

mod entries;
mod files;
pub mod gateway;
mod rollups;
pub mod skipped;
mod touches;

pub use files::{file_by_id, file_by_path, stamps_of_root, Stamp, Stamps};

pub use entries::insert_entries;

/// One committed transaction's full-text changes, and the highest entry rid the index held
/// once it committed: what the builder has committed up to, should a crash come.
#[derive(Debug, Default)]
pub struct Batch {
    pub ops: Vec<Op>,
    pub upto: i64,
    /// Told when the builder has applied the batch: a batch with a huge text is waited for.
    pub done: Option<SyncSender<()>>,
}

/// One change to the full-text tables, in the order the writer made it.
#[derive(Debug)]
pub enum Op {
    /// A row of `fts`: rowid and text.
    Words(i64, String),
    /// A row of `joints`: rowid and the text's joints.
    Joints(i64, String),
    /// A row of `big_texts` (its id) indexed as `fts` row `rowid` (`store::big::index`).
    Big(i64, i64),
    /// Both tables' rows of this rowid deleted (a file read again from its start).
    Delete(i64),
}

/// The sync state of one JSONL file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileRow {
    pub id: i64,
    pub root_id: i64,
    pub path: String,
    pub dir: String,
    pub name: String,
    pub dev: i64,
    pub ino: i64,
    pub size: i64,
    /// `Math.round` of Node's `mtimeMs` (pi's `stats.mtime`).
    pub mtime_ms: i64,
    /// The exact mtime, for `listAll`'s pre-sort by the fractional `mtimeMs`.
    pub mtime_ns: i64,
    pub offset: i64,
    pub lines: i64,
    pub torn: bool,
    pub head_hash: i64,
    pub tail_hash: i64,
    pub bad_lines: i64,
}

/// A write transaction opened on demand (`BEGIN IMMEDIATE`: a read-then-write transaction
/// would fail with "database is locked" despite the busy timeout) and rolled back when dropped
/// uncommitted. Full-text rows wait in [`Staged`] and go into the index just before the commit.
pub struct WriteTx<'c> {
    conn: &'c Connection,
    tx: Option<Transaction<'c>>,
    staged: Staged,
    /// Where each committed transaction's full-text changes go when the tables are built
    /// aside (`store::aside`) instead of written here.
    aside: Option<SyncSender<Batch>>,
}

/// The texts of a transaction's entries, waiting for its commit: FTS5 writes its pending terms
/// to disk (a new segment, later merged) at every statement savepoint once it is part of a
/// transaction, and the statements that write entries open them (their triggers). So the texts
/// are held here, moved out of the parsed entries, and inserted one after another, in rowid
/// order, just before the commit: FTS5 also writes a segment whenever a rowid is not above the
/// one before. (They were staged in a temporary table until 2026-11-26: each text was copied
/// into it and read back out.)
#[derive(Default)]
pub struct Staged {
    /// Full-text rows (`fts`): rowid and text.
    texts: Vec<(i64, String)>,
    /// Joints rows (`joints`, `store::joints`): rowid and the text's joints.
    joints: Vec<(i64, String)>,
    /// The transaction's full-text changes in order, when the tables are built aside: every
    /// change that would be written to them goes here instead.
    aside: Option<Vec<Op>>,
}

impl<'c> WriteTx<'c> {
    pub fn new(conn: &'c Connection) -> WriteTx<'c> {
        WriteTx {
            conn,
            tx: None,
            staged: Staged::default(),
            aside: None,
        }
    }

    /// Sends each committed transaction's full-text changes to `aside` from now on.
    pub fn build_aside(&mut self, aside: SyncSender<Batch>) {
        self.aside = Some(aside);
        self.staged = self.fresh_staged();
    }

    fn fresh_staged(&self) -> Staged {
        Staged {
            aside: self.aside.as_ref().map(|_| Vec::new()),
            ..Staged::default()
        }
    }

    /// The connection, inside the transaction (begun now if none is open).
    ///
    /// # Errors
    /// SQLite errors (busy, read-only, disk full).
    pub fn conn(&mut self) -> rusqlite::Result<&'c Connection> {
        Ok(self.parts()?.0)
    }

    /// The connection inside the transaction (begun now if none is open), and where its texts
    /// wait for the commit.
    ///
    /// # Errors
    /// As [`WriteTx::conn`].
    pub fn parts(&mut self) -> rusqlite::Result<(&'c Connection, &mut Staged)> {
        if self.tx.is_none() {
            let tx = Transaction::new_unchecked(self.conn, TransactionBehavior::Immediate)?;
            self.tx = Some(tx);
        }
        Ok((self.conn, &mut self.staged))
    }

    /// The connection for reads, inside the transaction if one is open.
    pub fn reader(&self) -> &'c Connection {
        self.conn
    }

    /// Whether a transaction is open.
    pub fn is_open(&self) -> bool {
        self.tx.is_some()
    }

    /// Commits the open transaction, if any, full text included.
    ///
    /// # Errors
    /// SQLite errors; the transaction is then rolled back.
    pub fn commit(&mut self) -> rusqlite::Result<()> {
        if let Some(tx) = self.tx.take() {
            // Taken whatever happens: a failed commit leaves nothing for the next transaction.
            let fresh = self.fresh_staged();
            let staged = std::mem::replace(&mut self.staged, fresh);
            let aside = flush_texts(&tx, staged)?;
            tx.commit()?;
            if let (Some(ops), Some(to)) = (aside, &self.aside) {
                // The index's highest entry row after this commit, which the builder records
                // with its own commit (`aside::recover`): the rowid b-tree's last key, one
                // descent a batch, where tracking it would touch every insert path.
                let upto =
                    self.conn
                        .query_row("SELECT coalesce(max(rid), 0) FROM entries", [], |r| {
                            r.get(0)
                        })?;
                // A huge text is indexed before this commit returns, as it is in place: the
                // parser reads the next huge line only once it is (pipeline::HUGE_PIECE), so
                // two are never in memory at once.
                let big = ops.iter().any(|op| matches!(op, Op::Big(..)));
                let (done, applied) = std::sync::mpsc::sync_channel(1);
                // A builder that stopped has its error, which the sync reports at its end.
                let sent = to.send(Batch {
                    ops,
                    upto,
                    done: big.then_some(done),
                });
                if big && sent.is_ok() {
                    // Err: the builder stopped (its error comes at the end).
                    let _ = applied.recv();
                }
            }
        }
        Ok(())
    }

    /// Undoes the open transaction, if any.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn rollback(&mut self) -> rusqlite::Result<()> {
        let fresh = self.fresh_staged();
        self.staged = fresh;
        match self.tx.take() {
            Some(tx) => tx.rollback(),
            None => Ok(()),
        }
    }
}

/// Returns the id of a root, creating it.
pub fn upsert_root(conn: &Connection, path: &str, layout: &str) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO roots(path, layout) VALUES (?1, ?2)
         ON CONFLICT(path) DO UPDATE SET layout = excluded.layout",
        params![path, layout],
    )?;
    conn.query_row("SELECT id FROM roots WHERE path = ?1", [path], |r| r.get(0))
}

/// Inserts or updates a file's sync state; returns its id.
pub fn save_file(tx: &Connection, f: &FileRow, now_ms: i64) -> rusqlite::Result<i64> {
    if f.id == 0 {
        tx.execute(
            "INSERT INTO files(root_id, path, dir, name, dev, ino, size, mtime_ms, offset, lines,
                               torn, head_hash, tail_hash, bad_lines, synced_at, mtime_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                f.root_id,
                f.path,
                f.dir,
                f.name,
                f.dev,
                f.ino,
                f.size,
                f.mtime_ms,
                f.offset,
                f.lines,
                f.torn,
                f.head_hash,
                f.tail_hash,
                f.bad_lines,
                now_ms,
                f.mtime_ns
            ],
        )?;
        return Ok(tx.last_insert_rowid());
    }
    tx.execute(
        "UPDATE files SET dev = ?2, ino = ?3, size = ?4, mtime_ms = ?5, offset = ?6, lines = ?7,
                          torn = ?8, head_hash = ?9, tail_hash = ?10, bad_lines = ?11, synced_at = ?12,
                          mtime_ns = ?13
         WHERE id = ?1",
        params![
            f.id, f.dev, f.ino, f.size, f.mtime_ms, f.offset, f.lines, f.torn, f.head_hash,
            f.tail_hash, f.bad_lines, now_ms, f.mtime_ns
        ],
    )?;
    Ok(f.id)
}

/// Forgets a file that no longer exists (its session, entries and bad lines go with it).
pub fn delete_file(tx: &Connection, file_id: i64) -> rusqlite::Result<()> {
    clear_file(tx, file_id)?;
    // While a first sync's full text is built aside (`store::aside`), the file's texts already
    // sent there are taken out of it before it is copied in.
    tx.prepare_cached("UPDATE text_aside SET orphans = 1 WHERE orphans = 0")?
        .execute([])?;
    tx.execute("DELETE FROM files WHERE id = ?1", [file_id])?;
    Ok(())
}

/// Drops everything ingested from a file, before it is read again from byte 0.
pub fn clear_file(tx: &Connection, file_id: i64) -> rusqlite::Result<()> {
    clear_file_staged(tx, None, file_id)
}

/// [`clear_file`] inside a [`WriteTx`], whose full-text changes may be built aside.
pub fn clear_file_staged(
    tx: &Connection,
    staged: Option<&mut Staged>,
    file_id: i64,
) -> rusqlite::Result<()> {
    delete_texts(tx, staged.and_then(|s| s.aside.as_mut()), file_id)?;
    copies::promote_others(tx, file_id)?;
    tx.execute("DELETE FROM tool_uses WHERE file_id = ?1", [file_id])?;
    touches::clear(tx, file_id)?;
    tx.execute("DELETE FROM entries WHERE file_id = ?1", [file_id])?;
    super::impacts::after_removal(tx)?;
    tx.execute("DELETE FROM rid_runs WHERE file_id = ?1", [file_id])?;
    tx.execute("DELETE FROM big_texts WHERE file_id = ?1", [file_id])?;
    rollups::clear(tx, file_id)?;
    tx.execute("DELETE FROM bad_lines WHERE file_id = ?1", [file_id])?;
    tx.execute("DELETE FROM listing_text WHERE file_id = ?1", [file_id])?;
    tx.execute("DELETE FROM sessions WHERE file_id = ?1", [file_id])?;
    Ok(())
}

/// The saved summary of a file, or a fresh one.
pub fn load_session(conn: &Connection, file_id: i64) -> rusqlite::Result<SessionState> {
    conn.query_row(
        "SELECT state, excluded, loadable, version, header, session_id, cwd, created_ms, name,
                message_count, first_message, last_activity_ms, parsed_values, entry_count,
                leaf_seq, leaf_id, header_ts_ms, tangled, first_message_line
         FROM sessions WHERE file_id = ?1",
        [file_id],
        |r| {
            let listing = match r.get::<_, i64>(0)? {
                0 => Listing::Pending,
                1 => Listing::Listed,
                _ => Listing::Excluded(r.get::<_, Option<String>>(1)?.unwrap_or_default()),
            };
            Ok(SessionState {
                listing,
                loadable: r.get(2)?,
                version: r.get::<_, Option<i64>>(3)?.unwrap_or(1),
                header: r.get(4)?,
                session_id: r.get(5)?,
                cwd: r.get(6)?,
                created_ms: r.get(7)?,
                name: r.get(8)?,
                message_count: r.get(9)?,
                first_message: r.get(10)?,
                last_activity_ms: r.get(11)?,
                parsed_values: r.get(12)?,
                entry_count: r.get(13)?,
                leaf_seq: r.get(14)?,
                leaf_id: r.get(15)?,
                header_ts_ms: r.get(16)?,
                tangled: r.get(17)?,
                first_message_line: r.get(18)?,
                no_touches: false,
            })
        },
    )
    .optional()
    .map(Option::unwrap_or_default)
}

pub fn save_session(tx: &Connection, file_id: i64, s: &SessionState) -> rusqlite::Result<()> {
    let (state, excluded) = match &s.listing {
        Listing::Pending => (0, None),
        Listing::Listed => (1, None),
        Listing::Excluded(why) => (2, Some(why.as_str())),
    };
    let mut save = tx.prepare_cached(
        "INSERT OR REPLACE INTO sessions(file_id, state, excluded, loadable, version, header,
             session_id, cwd, created_ms, name, message_count, first_message, last_activity_ms,
             parsed_values, entry_count, leaf_seq, leaf_id, header_ts_ms, tangled,
             first_message_line)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 ?19, ?20)",
    )?;
    save.execute(params![
        file_id,
        state,
        excluded,
        s.loadable,
        s.version,
        s.header,
        s.session_id,
        s.cwd,
        s.created_ms,
        s.name,
        s.message_count,
        s.first_message,
        s.last_activity_ms,
        s.parsed_values,
        s.entry_count,
        s.leaf_seq,
        s.leaf_id,
        s.header_ts_ms,
        s.tangled,
        s.first_message_line
    ])?;
    // The statement is cached: do not keep SQLite's copy of a first message of 100 MB.
    save.clear_bindings();
    Ok(())
}

/// Records skipped lines for `show` and `sync --verbose`.
pub fn insert_bad_lines(
    tx: &Connection,
    file_id: i64,
    bad: &[(i64, String)],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO bad_lines(file_id, line, reason) VALUES (?1, ?2, ?3)",
    )?;
    for (line, reason) in bad {
        stmt.execute(params![file_id, line, reason])?;
    }
    Ok(())
}

/// Records text only pi's listing sees (lines it splits at a lone `\r`).
pub fn insert_listing_texts(
    tx: &Connection,
    file_id: i64,
    texts: &[(i64, String)],
) -> rusqlite::Result<()> {
    let mut stmt =
        tx.prepare_cached("INSERT INTO listing_text(file_id, line, text) VALUES (?1, ?2, ?3)")?;
    for (line, text) in texts {
        stmt.execute(params![file_id, line, text])?;
    }
    Ok(())
}

impl Staged {
    /// The transaction's changes to the full-text tables, when they are built aside.
    pub fn aside(&mut self) -> Option<&mut Vec<Op>> {
        self.aside.as_mut()
    }

    /// Holds `text`, the text of full-text row `rowid`, for the commit.
    pub fn text(&mut self, rowid: i64, text: String) {
        self.texts.push((rowid, text));
    }

    /// Holds `joints`, the joints of full-text row `rowid`, for the commit.
    pub fn joints(&mut self, rowid: i64, joints: String) {
        self.joints.push((rowid, joints));
    }
}

/// Inserts the staged texts into the full-text and joints indexes, each in rowid order
/// (call last in the transaction). Each text is let go once inserted. Built aside, they are
/// added to the transaction's changes instead, which are returned.
fn flush_texts(conn: &Connection, staged: Staged) -> rusqlite::Result<Option<Vec<Op>>> {
    let mut aside = staged.aside;
    for (table, mut rows) in [("fts", staged.texts), ("joints", staged.joints)] {
        // Nearly in order already (an entry's rowids follow each other): a merge sort of runs.
        rows.sort_by_key(|(rowid, _)| *rowid);
        if let Some(ops) = &mut aside {
            let op = if table == "fts" {
                Op::Words
            } else {
                Op::Joints
            };
            ops.extend(rows.into_iter().map(|(rowid, body)| op(rowid, body)));
            continue;
        }
        let mut insert =
            conn.prepare_cached(&format!("INSERT INTO {table}(rowid, body) VALUES (?1, ?2)"))?;
        for (rowid, body) in rows {
            insert.execute(params![rowid, body])?;
        }
    }
    Ok(aside)
}

/// Removes a file's rows from the full-text and joints indexes (adds their removal to `aside`
/// when those are built aside).
fn delete_texts(
    tx: &Connection,
    mut aside: Option<&mut Vec<Op>>,
    file_id: i64,
) -> rusqlite::Result<()> {
    let mut rows = tx.prepare_cached(
        "SELECT rid, text_kinds FROM entries WHERE file_id = ?1 AND text_kinds <> 0",
    )?;
    let mut gone = fts5::Gone::default();
    let mut joints = tx.prepare_cached("DELETE FROM joints WHERE rowid = ?1")?;
    let mut unknown = tx.prepare_cached("DELETE FROM joints_unknown WHERE rowid = ?1")?;
    let found: Vec<(i64, i64)> = rows
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (rid, bits) in found {
        for kind in TextKind::ALL
            .into_iter()
            .filter(|k| bits & (1 << *k as i64) != 0)
        {
            let rowid = crate::store::schema::fts_rowid(rid, kind);
            match aside.as_deref_mut() {
                Some(ops) => ops.push(Op::Delete(rowid)),
                None => {
                    fts5::delete(tx, "fts", rowid, &mut gone)?;
                    joints.execute([rowid])?;
                }
            }
            unknown.execute([rowid])?;
        }
    }
    fts5::settle(tx, "fts", &mut gone)
}
