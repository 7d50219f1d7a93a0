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
//! rather than a part of it, and a sync that finds the mark (the last one was killed or
//! failed) starts the index over: `sync` after `kill -9` still equals a fresh build.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use rusqlite::{params, Connection, OpenFlags};

use crate::error::{Error, Result};

/// The full-text tables built aside, in the order they are written.
const TABLES: [&str; 2] = ["fts", "joints"];

/// Batches the writer may have sent ahead of the builder (each one transaction's texts, about
/// `BATCH_BYTES` of lines): memory stays bounded when the builder is the slower thread.
const AHEAD: usize = 1;

/// Text the builder writes in one transaction.
const COMMIT_BYTES: usize = 16 << 20;

/// Data rows copied in one transaction (FTS5 pages of about 4 KB): the WAL stays near 80 MB
/// instead of growing by the whole text index.
const COPY_ROWS: i64 = 20_000;

/// FTS5's rowids of the averages and the structure record in `<table>_data`.
const RECORDS: &str = "(1, 10)";

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

/// Whether an interrupted aside build left index `db` without its full text (then the index
/// is started over): a build under way, or one handed over whose file is gone.
///
/// # Errors
/// SQLite errors.
pub fn interrupted(conn: &Connection, db: &Path) -> rusqlite::Result<bool> {
    Ok(match mark(conn)? {
        None => false,
        Some(handed) => !handed || !path_of(db).exists(),
    })
}

/// Whether the last sync handed its full text over to this one (`SyncOptions::hand_over`).
///
/// # Errors
/// SQLite errors.
pub fn handed(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(mark(conn)? == Some(true))
}

/// The mark, if any: whether its build was handed over.
fn mark(conn: &Connection) -> rusqlite::Result<Option<bool>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached("SELECT handed <> 0 FROM text_aside")?
        .query_row([], |r| r.get(0))
        .optional()
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

/// Where the tables are built beside index `db`.
pub fn path_of(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-text");
    PathBuf::from(p)
}

/// A running aside build.
pub struct Aside {
    path: PathBuf,
    sender: Option<SyncSender<Vec<Op>>>,
    thread: Option<JoinHandle<rusqlite::Result<()>>>,
}

impl Aside {
    /// Marks the index (committed at once) and starts the builder on a fresh file beside
    /// `db`, whose tables are made as the index's are.
    ///
    /// # Errors
    /// SQLite errors; I/O errors removing an old file.
    pub fn start(conn: &Connection, db: &Path) -> Result<Aside> {
        let path = path_of(db);
        remove(&path)?;
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
        let path = path_of(db);
        let out = open_file(&path)?;
        conn.execute("UPDATE text_aside SET handed = 0", [])?;
        Aside::spawn(out, db, path)
    }

    fn spawn(out: Connection, db: &Path, path: PathBuf) -> Result<Aside> {
        let main = Connection::open_with_flags(
            db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| Error::at_open(db, e))?;
        main.busy_timeout(std::time::Duration::from_secs(10))?;
        let (sender, batches) = sync_channel(AHEAD);
        let thread = std::thread::Builder::new()
            .name("pidx-text".into())
            .spawn(move || build(&out, &main, &batches))
            .map_err(|e| Error::io(path.clone(), e))?;
        Ok(Aside {
            path,
            sender: Some(sender),
            thread: Some(thread),
        })
    }

    /// Where the writer sends each committed transaction's changes.
    pub fn sender(&self) -> Option<SyncSender<Vec<Op>>> {
        self.sender.clone()
    }

    /// Waits for the builder, copies its tables into the index's and drops the mark.
    ///
    /// # Errors
    /// The builder's SQLite errors; SQLite errors copying.
    pub fn finish(mut self, conn: &Connection) -> Result<()> {
        self.stop()?;
        copy_in(conn, &self.path)?;
        remove(&self.path)
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
    /// An unfinished build (the sync failed) is given up: the mark stays for the next sync.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop();
            let _ = remove(&self.path);
        }
    }
}

/// The builder: applies the batches in order, in transactions of about [`COMMIT_BYTES`] of
/// text. FTS5 writes a segment at every commit and merges them as they pile up; the index's
/// own tables commit every batch (about 8 MB of lines) because a crash must keep what was
/// committed, which a build that is started over anyway need not.
fn build(out: &Connection, main: &Connection, batches: &Receiver<Vec<Op>>) -> rusqlite::Result<()> {
    let mut big = main.prepare("SELECT CAST(body AS TEXT) FROM big_texts WHERE id = ?1")?;
    let mut words = out.prepare("INSERT INTO fts(rowid, body) VALUES (?1, ?2)")?;
    let mut joints = out.prepare("INSERT INTO joints(rowid, body) VALUES (?1, ?2)")?;
    let mut gone_words = out.prepare("DELETE FROM fts WHERE rowid = ?1")?;
    let mut gone_joints = out.prepare("DELETE FROM joints WHERE rowid = ?1")?;
    let mut open = 0usize;
    while let Ok(ops) = batches.recv() {
        if open == 0 {
            out.execute_batch("BEGIN")?;
        }
        for op in ops {
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
                    // (its file read again), and then deletes the row too.
                    let text: Option<String> = big
                        .query_row([id], |r| r.get(0))
                        .map(Some)
                        .or_else(|e| match e {
                            rusqlite::Error::QueryReturnedNoRows => Ok(None),
                            e => Err(e),
                        })?;
                    if let Some(text) = text {
                        open += text.len();
                        words.execute(params![rowid, text])?;
                    }
                }
                Op::Delete(rowid) => {
                    gone_words.execute([rowid])?;
                    gone_joints.execute([rowid])?;
                }
            }
            // A prepared statement keeps its last text until it runs again.
            words.clear_bindings();
        }
        if open >= COMMIT_BYTES {
            out.execute_batch("COMMIT")?;
            open = 0;
        }
    }
    if open > 0 {
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

/// The file built aside, opened for writing: a crash loses it anyway, so no journal.
fn open_file(path: &Path) -> Result<Connection> {
    let out = Connection::open(path).map_err(|e| Error::at_open(path, e))?;
    out.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192;",
    )?;
    Ok(out)
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path.to_path_buf(), e)),
    }
}
