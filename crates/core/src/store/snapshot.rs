//! Read snapshots: one read transaction across many statements, for a query that runs many
//! small lookups (a search) or reads a database that is not pidx's (a gateway's store). The
//! write transactions are `writer`'s; these never write.

use rusqlite::Connection;

/// Starts a read snapshot on a connection that only reads (a gateway's own database, opened
/// read-only): every query until [`end_read`] sees the same state. Read transaction control
/// lives here, so no other module spells it.
///
/// # Errors
/// SQLite errors.
pub fn begin_read(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA query_only = 1; BEGIN DEFERRED")
}

/// Ends a read snapshot begun by [`begin_read`].
///
/// # Errors
/// SQLite errors.
pub fn end_read(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("COMMIT")
}

/// A read transaction held while a query runs many small statements (a search's lookups, one
/// per candidate): outside a transaction each statement takes and drops SQLite's shared lock
/// (`fcntl` calls, a `stat` of the WAL), a quarter of a common literal's time. It also gives the
/// query one snapshot throughout. Ended when dropped; `None` when a transaction is already open.
pub struct Snapshot<'c>(&'c Connection);

impl<'c> Snapshot<'c> {
    /// Begins a read transaction on `conn` unless one is open.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn begin(conn: &'c Connection) -> rusqlite::Result<Option<Snapshot<'c>>> {
        if !conn.is_autocommit() {
            return Ok(None);
        }
        conn.execute_batch("BEGIN DEFERRED")?;
        Ok(Some(Snapshot(conn)))
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        // Nothing was written: ending it cannot lose anything, and an error leaves no lock
        // (SQLite drops the read lock when the connection next ends a statement).
        let _ = end_read(self.0);
    }
}
