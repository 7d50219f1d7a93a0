//! FTS5 as pidx uses it today: building the same contentless table (migration 0003's settings)
//! from the dump, for its build rate and size alone, and querying pidx's own index database
//! (read-only) with the query pidx runs (`query/search/ranked.rs`): the window of the best
//! `max(limit x 50, 1000)` by bm25, each joined to its entry for its time, best first, until no
//! later match can reach the top once blended.

use std::path::Path;

use rusqlite::{params, Connection, OpenFlags};

use crate::dump::Dump;
use crate::rank::{blend, TopK};

/// Builds a contentless FTS5 table of `dump` in a new database `path`, one transaction per
/// `batch` bytes of JSONL.
pub fn build(dump: &Dump, path: &Path, batch: u64) -> usize {
    let _ = std::fs::remove_file(path);
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         CREATE VIRTUAL TABLE fts USING fts5(
             body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
         INSERT INTO fts(fts, rank) VALUES ('automerge', 16);
         INSERT INTO fts(fts, rank) VALUES ('hashsize', 33554432);",
    )
    .unwrap();
    let (mut since, mut commits, mut from) = (0u64, 0usize, 0usize);
    conn.execute_batch("BEGIN").unwrap();
    {
        let mut ins = conn
            .prepare("INSERT INTO fts(rowid, body) VALUES (?1, ?2)")
            .unwrap();
        for i in 0..dump.len() {
            let doc = dump.doc(i);
            ins.execute(params![doc.rowid, doc.text]).unwrap();
            since += doc.jsonl_len as u64;
            if since >= batch {
                conn.execute_batch("COMMIT; BEGIN").unwrap();
                dump.forget(from, i + 1);
                from = i + 1;
                commits += 1;
                since = 0;
            }
        }
    }
    conn.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    commits + 1
}

pub struct Engine {
    conn: Connection,
}

/// FTS5 syntax of the elements, as pidx quotes them: `("w1") AND ("w2 w3")`.
pub fn match_arg(els: &[Vec<String>]) -> String {
    els.iter()
        .map(|e| format!("(\"{}\")", e.join(" ")))
        .collect::<Vec<_>>()
        .join(" AND ")
}

impl Engine {
    pub fn open(db: &Path) -> Engine {
        let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        Engine { conn }
    }

    pub fn ranked(&self, dump: &Dump, els: &[Vec<String>], k: usize, now: i64) -> Vec<usize> {
        let window = (k * 50).max(1000);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT rowid AS r, bm25(fts) AS score FROM fts WHERE fts MATCH ?1
                 ORDER BY score LIMIT ?2",
            )
            .unwrap();
        let matches: Vec<(i64, f64)> = st
            .query_map(params![match_arg(els), window as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let mut join = self
            .conn
            .prepare_cached("SELECT ts_ms FROM entries WHERE rid = ?1")
            .unwrap();
        let mut top = TopK::new(k);
        for (rowid, score) in matches {
            let raw = -score;
            if raw < top.floor() {
                break;
            }
            let ts: Option<i64> = join.query_row([rowid >> 3], |r| r.get(0)).unwrap_or(None);
            let Some(d) = dump.doc_of(rowid) else {
                continue;
            };
            let ts = ts.unwrap_or(crate::dump::NO_TS);
            top.add(raw * blend(ts, now), d);
        }
        top.docs()
    }

    pub fn candidates(&self, dump: &Dump, els: &[Vec<String>]) -> Vec<usize> {
        let mut st = self
            .conn
            .prepare_cached("SELECT rowid FROM fts WHERE fts MATCH ?1")
            .unwrap();
        st.query_map([match_arg(els)], |r| r.get::<_, i64>(0))
            .unwrap()
            .filter_map(|r| r.ok().and_then(|rowid| dump.doc_of(rowid)))
            .collect()
    }
}
