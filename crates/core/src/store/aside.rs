//! The full-text indexes of a first sync, built aside. FTS5's inserts, flushes and merges are
//! most of a sync's writer thread (a profile of a 300 MB first sync: 40% of all its CPU), so
//! a big sync into an empty index hands each batch's texts, once its transaction has
//! committed, to a thread of its own that writes them into a file beside the index
//! (`<index>-text`: tables `fts` and `joints` made by the index's own statements, with its
//! settings); the writer goes on with the next batch on the other core. At the end the
//! finished tables' rows are copied into the index's empty ones, their structure records
//! last, in the transaction that drops the `text_aside` mark (migration 0026).
//!
//! Crash safety: the mark is committed before the first batch. Until the copy's last
//! transaction commits, the index's own full-text tables stay as empty as FTS5 sees them (a
//! segment is only read through the structure record, copied last), so readers find no text
//! rather than a part of it. The builder's file is journaled and each of its commits records
//! the last entry it holds texts for; a sync that finds the mark of a killed or failed one
//! goes on from there ([`recover`]: the files past it are read again), or starts the index
//! over when the file is lost. Either way `sync` after `kill -9` equals a fresh build.
//!
//! A first answer (a few files read before the rest goes to a background sync) hands its
//! build over instead of copying it in (`SyncOptions::hand_over`), and the background sync
//! goes on with it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use rusqlite::{params, Connection};

use crate::error::{Error, Result};
use crate::store::writer::{Batch, Op};
use crate::store::{aside_path, remove_db_files};
use crate::store::{big, fts5};

/// The full-text tables built aside, in the order they are written.
const TABLES: [&str; 2] = ["fts", "joints"];

/// Batches the writer may have sent ahead of the builder (each one transaction's texts, about
/// `BATCH_BYTES` of lines): memory stays bounded when the builder is the slower thread.
const AHEAD: usize = 1;

/// Text the builder writes in one transaction (`PIDX_TEXT_COMMIT_BYTES` sets it: the crash
/// trials commit every batch).
const COMMIT_BYTES: usize = 16 << 20;

fn commit_bytes() -> usize {
    std::env::var("PIDX_TEXT_COMMIT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(COMMIT_BYTES)
}

/// Data rows copied in one transaction (FTS5 pages of about 4 KB): the WAL stays near 80 MB
/// instead of growing by the whole text index.
const COPY_ROWS: i64 = 20_000;

/// FTS5's rowids of the averages and the structure record in `<table>_data`.
const RECORDS: &str = "(1, 10)";

/// What an earlier sync left of an aside build.
#[derive(Debug, PartialEq)]
pub enum Left {
    Nothing,
    /// Handed over complete (`SyncOptions::hand_over`): this sync goes on with it.
    HandedOver,
    /// Stopped part-way (killed, or the sync failed): [`recover`] it, or start the index over.
    Interrupted,
}

/// What an earlier sync left of an aside build.
///
/// # Errors
/// SQLite errors.
pub fn left(conn: &Connection) -> rusqlite::Result<Left> {
    use rusqlite::OptionalExtension;
    let handed: Option<bool> = conn
        .prepare_cached("SELECT handed <> 0 FROM text_aside")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(match handed {
        None => Left::Nothing,
        Some(true) => Left::HandedOver,
        Some(false) => Left::Interrupted,
    })
}

/// Takes an interrupted build up where its file's last commit left it: the files with entries
/// past that point (their texts are not all in the file) leave the index, to be read again by
/// this sync, and the texts of entries no longer in the index leave the file; the build is
/// then handed over to this sync. How many files will be read again; `None` when the file is
/// missing, unsound or holds no commit (then the index must start over).
///
/// # Errors
/// SQLite errors in the index.
pub fn recover(conn: &Connection, db: &Path) -> Result<Option<usize>> {
    let path = aside_path(db);
    if !path.exists() {
        return Ok(None);
    }
    let name = utf8(&path)?;
    conn.execute("ATTACH DATABASE ?1 AS aside", [name])?;
    let done = recover_attached(conn);
    let detached = conn.execute_batch("DETACH DATABASE aside");
    let again = done?;
    detached?;
    Ok(again)
}

fn recover_attached(conn: &Connection) -> Result<Option<usize>> {
    let sound = conn
        .query_row("PRAGMA aside.quick_check", [], |r| r.get::<_, String>(0))
        .is_ok_and(|ok| ok == "ok");
    let upto: Option<i64> = if sound {
        conn.query_row("SELECT max(rid) FROM aside.aside_upto", [], |r| r.get(0))
            .unwrap_or(None)
    } else {
        None
    };
    let Some(upto) = upto else {
        return Ok(None);
    };
    drop_orphans(conn, Some(upto))?;
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    let files: Vec<i64> = tx
        .prepare("SELECT DISTINCT file_id FROM entries WHERE rid > ?1")?
        .query_map([upto], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for &file in &files {
        crate::store::writer::delete_file(&tx, file)?;
    }
    tx.execute("UPDATE text_aside SET handed = 1, orphans = 0", [])?;
    tx.commit()?;
    Ok(Some(files.len()))
}

/// Deletes from the attached build the texts of entries no longer in the index (and, given
/// `past`, of entries after it): one transaction on the build's file.
fn drop_orphans(conn: &Connection, past: Option<i64>) -> Result<()> {
    let past = past.unwrap_or(i64::MAX);
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    for table in TABLES {
        let gone: Vec<i64> = tx
            .prepare(&format!(
                "SELECT id FROM aside.{table}_docsize d
                  WHERE (d.id >> 3) > ?1
                     OR NOT EXISTS (SELECT 1 FROM main.entries e WHERE e.rid = d.id >> 3)"
            ))?
            .query_map([past], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut delete = tx.prepare(&format!("DELETE FROM aside.{table} WHERE rowid = ?1"))?;
        for rowid in gone {
            delete.execute([rowid])?;
        }
    }
    Ok(tx.commit()?)
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str()
        .ok_or_else(|| Error::Invalid(format!("{}: not a UTF-8 path", path.display())))
}

/// Whether the full-text tables are empty, so they can be built aside.
///
/// # Errors
/// SQLite errors.
pub fn fits(conn: &Connection) -> rusqlite::Result<bool> {
    for table in TABLES {
        let used: bool = conn.query_row(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM {table}_docsize)
                     OR EXISTS (SELECT 1 FROM {table}_data WHERE id NOT IN {RECORDS})"
            ),
            [],
            |r| r.get(0),
        )?;
        if used {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A running aside build.
pub struct Aside {
    path: PathBuf,
    sender: Option<SyncSender<Batch>>,
    thread: Option<JoinHandle<rusqlite::Result<()>>>,
}

impl Aside {
    /// Marks the index (committed at once) and starts the builder on a fresh file beside
    /// `db`, whose tables are made as the index's are.
    ///
    /// # Errors
    /// SQLite errors; I/O errors removing an old file.
    pub fn start(conn: &Connection, db: &Path) -> Result<Aside> {
        let path = aside_path(db);
        remove_db_files(&path)?;
        let mut made = Vec::new();
        for table in TABLES {
            let sql: String = conn.query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )?;
            let mut settings = conn.prepare(&format!(
                "SELECT k, v FROM {table}_config WHERE k <> 'version'"
            ))?;
            let settings = settings
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, rusqlite::types::Value>(1)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            made.push((table, sql, settings));
        }
        let out = open_file(&path)?;
        out.execute_batch("CREATE TABLE aside_upto(rid INTEGER NOT NULL)")?;
        for (table, sql, settings) in made {
            out.execute_batch(&sql)?;
            for (k, v) in settings {
                out.execute(
                    &format!("INSERT INTO {table}({table}, rank) VALUES (?1, ?2)"),
                    params![k, v],
                )?;
            }
        }
        conn.execute(
            "INSERT INTO text_aside(since_ms) VALUES (?1)",
            [chrono::Utc::now().timestamp_millis()],
        )?;
        Aside::spawn(out, db, path)
    }

    /// Goes on with the build the last sync handed over (its file, as it left it), marked as
    /// under way again.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn resume(conn: &Connection, db: &Path) -> Result<Aside> {
        let path = aside_path(db);
        let out = open_file(&path)?;
        conn.execute("UPDATE text_aside SET handed = 0", [])?;
        Aside::spawn(out, db, path)
    }

    fn spawn(out: Connection, db: &Path, path: PathBuf) -> Result<Aside> {
        // The index, for its huge texts: FTS5 reads one from `big_texts` in SQL, as the
        // writer's own `big::index` does, so the only copy is SQLite's (read through a String
        // and bound as a parameter, which SQLite copies, one was three: 365 MB at the peak of
        // a first sync of a 100 MB text line and a 100 MB image line).
        out.execute("ATTACH DATABASE ?1 AS idx", [utf8(db)?])?;
        out.busy_timeout(std::time::Duration::from_secs(10))?;
        let (sender, batches) = sync_channel(AHEAD);
        let thread = std::thread::Builder::new()
            .name("pidx-text".into())
            .spawn(move || build(&out, &batches))
            .map_err(|e| Error::io(path.clone(), e))?;
        Ok(Aside {
            path,
            sender: Some(sender),
            thread: Some(thread),
        })
    }

    /// Where the writer sends each committed transaction's changes.
    pub fn sender(&self) -> Option<SyncSender<Batch>> {
        self.sender.clone()
    }

    /// Waits for the builder, copies its tables into the index's and drops the mark.
    ///
    /// # Errors
    /// The builder's SQLite errors; SQLite errors copying.
    pub fn finish(mut self, conn: &Connection) -> Result<()> {
        self.stop()?;
        copy_in(conn, &self.path)?;
        remove_db_files(&self.path)
    }

    /// Waits for the builder and leaves its file for the next sync (`SyncOptions::hand_over`).
    ///
    /// # Errors
    /// The builder's SQLite errors; SQLite errors.
    pub fn hand_over(mut self, conn: &Connection) -> Result<()> {
        self.stop()?;
        conn.execute("UPDATE text_aside SET handed = 1", [])?;
        Ok(())
    }

    /// Waits for the builder to stop; its error, if it failed.
    fn stop(&mut self) -> Result<()> {
        self.sender = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(done)) => Ok(done?),
            Some(Err(_)) => Err(Error::Invalid("the full-text builder panicked".into())),
            None => Ok(()),
        }
    }
}

impl Drop for Aside {
    /// An unfinished build (the sync failed): the builder stops after what it was sent, and
    /// the mark stays for the next sync.
    fn drop(&mut self) {
        if self.thread.is_some() {
            // Kept: a sync after this one goes on from the file's last commit (`recover`).
            let _ = self.stop();
        }
    }
}

/// The builder: applies the batches in order, in transactions of about [`COMMIT_BYTES`] of
/// text. FTS5 writes a segment at every commit and merges them as they pile up; the index's
/// own tables commit every batch (about 8 MB of lines) because a crash must keep what was
/// committed, which a build that is started over anyway need not.
fn build(out: &Connection, batches: &Receiver<Batch>) -> rusqlite::Result<()> {
    let mut words = out.prepare("INSERT INTO fts(rowid, body) VALUES (?1, ?2)")?;
    let mut joints = out.prepare("INSERT INTO joints(rowid, body) VALUES (?1, ?2)")?;
    let mut gone = fts5::Gone::default();
    let mut gone_joints = out.prepare("DELETE FROM joints WHERE rowid = ?1")?;
    let mut upto = out.prepare("INSERT OR REPLACE INTO aside_upto(rowid, rid) VALUES (1, ?1)")?;
    let (mut open, mut in_tx, every) = (0usize, false, commit_bytes());
    while let Ok(batch) = batches.recv() {
        if !in_tx {
            out.execute_batch("BEGIN")?;
            in_tx = true;
        }
        for op in batch.ops {
            match op {
                Op::Words(rowid, text) => {
                    open += text.len();
                    words.execute(params![rowid, text])?;
                }
                Op::Joints(rowid, text) => {
                    open += text.len();
                    joints.execute(params![rowid, text])?;
                }
                Op::Big(rowid, id) => {
                    // Committed before the batch was sent; a later batch may have removed it
                    // (its file read again), and then deletes the row too. Its statement
                    // commits alone: a read of the index inside the open transaction would keep
                    // that snapshot (missing later batches' rows) until the commit. A commit
                    // before the batch's end is safe: a recovery drops the texts past the last
                    // entry `aside_upto` records.
                    fts5::settle(out, "fts", &mut gone)?;
                    out.execute_batch("COMMIT")?;
                    // Not a kept statement: it would hold the text it read.
                    out.execute(
                        "INSERT INTO main.fts(rowid, body)
                         SELECT ?1, CAST(body AS TEXT) FROM idx.big_texts WHERE id = ?2",
                        params![rowid, id],
                    )?;
                    big::trim_heap();
                    out.execute_batch("BEGIN")?;
                    open = 0;
                }
                Op::Delete(rowid) => {
                    fts5::delete(out, "fts", rowid, &mut gone)?;
                    gone_joints.execute([rowid])?;
                }
            }
            // A prepared statement keeps its last text until it runs again.
            words.clear_bindings();
        }
        fts5::settle(out, "fts", &mut gone)?;
        // Committed with the batch's texts: what a recovery can trust the file to hold.
        upto.execute([batch.upto])?;
        if let Some(done) = batch.done {
            // The writer waits for a huge text (the receiver gone is no error here).
            let _ = done.send(());
        }
        if open >= every {
            out.execute_batch("COMMIT")?;
            (open, in_tx) = (0, false);
        }
    }
    if in_tx {
        out.execute_batch("COMMIT")?;
    }
    Ok(())
}

/// Copies the built tables into the index's empty ones: data pages, the term index and the
/// document sizes in transactions of [`COPY_ROWS`], then the averages and structure records,
/// with the mark's removal, in the last.
fn copy_in(conn: &Connection, path: &Path) -> Result<()> {
    let name = path
        .to_str()
        .ok_or_else(|| Error::Invalid(format!("{}: not a UTF-8 path", path.display())))?;
    conn.execute("ATTACH DATABASE ?1 AS aside", [name])?;
    let copied = copy_rows(conn);
    let detached = conn.execute_batch("DETACH DATABASE aside");
    copied?;
    Ok(detached?)
}

fn copy_rows(conn: &Connection) -> Result<()> {
    for table in TABLES {
        let mut last = i64::MIN;
        loop {
            let tx = rusqlite::Transaction::new_unchecked(
                conn,
                rusqlite::TransactionBehavior::Immediate,
            )?;
            let upto: Option<i64> = tx.query_row(
                &format!(
                    "SELECT max(id) FROM (SELECT id FROM aside.{table}_data
                      WHERE id > ?1 AND id NOT IN {RECORDS} ORDER BY id LIMIT ?2)"
                ),
                params![last, COPY_ROWS],
                |r| r.get(0),
            )?;
            let Some(upto) = upto else { break };
            tx.execute(
                &format!(
                    "INSERT INTO {table}_data SELECT * FROM aside.{table}_data
                      WHERE id > ?1 AND id <= ?2 AND id NOT IN {RECORDS}"
                ),
                params![last, upto],
            )?;
            tx.commit()?;
            last = upto;
        }
        let tx =
            rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
        tx.execute_batch(&format!(
            "INSERT INTO {table}_idx SELECT * FROM aside.{table}_idx;
             INSERT INTO {table}_docsize SELECT * FROM aside.{table}_docsize;"
        ))?;
        tx.commit()?;
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    for table in TABLES {
        tx.execute_batch(&format!(
            "INSERT OR REPLACE INTO {table}_data SELECT * FROM aside.{table}_data
              WHERE id IN {RECORDS};"
        ))?;
    }
    tx.execute("DELETE FROM text_aside", [])?;
    Ok(tx.commit()?)
}

/// The file built aside, opened for writing, journaled as the index is: after a crash its last
/// commit is whole, and [`recover`] goes on from there.
fn open_file(path: &Path) -> Result<Connection> {
    let out = Connection::open(path).map_err(|e| Error::at_open(path, e))?;
    out.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192;
         PRAGMA wal_autocheckpoint = 16384;",
    )?;
    Ok(out)
}
