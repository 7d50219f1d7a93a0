//! Answers from the index. Each module owns its SQL, next to the function that runs it; none
//! of them parses the corpus (context reads single lines back by their stored byte range).

pub mod context;
pub mod list;
pub mod picker;
mod rawjson;
pub mod resolve;
pub mod search;
pub mod show;
pub mod sql;
pub mod stats;
pub mod status;

pub mod tree;

use rusqlite::Connection;

use crate::ingest::discover::Root;

/// The roots a query sees: the index may hold other roots from other invocations.
#[derive(Debug, Clone)]
pub struct Scope {
    pub roots: Vec<Root>,
    root_ids: Vec<i64>,
}

impl Scope {
    /// Looks up the ids of `roots` (roots never synced have none and contribute nothing).
    pub fn new(conn: &Connection, roots: &[Root]) -> rusqlite::Result<Scope> {
        let mut stmt = conn.prepare_cached("SELECT id FROM roots WHERE path = ?1")?;
        let mut root_ids = Vec::new();
        for r in roots {
            let path = r.path.to_string_lossy();
            if let Ok(id) = stmt.query_row([path.as_ref()], |row| row.get(0)) {
                root_ids.push(id);
            }
        }
        Ok(Scope {
            roots: roots.to_vec(),
            root_ids,
        })
    }

    /// An SQL condition on `files` alias `f` restricting rows to these roots.
    pub fn sql(&self) -> String {
        let ids: Vec<String> = self.root_ids.iter().map(i64::to_string).collect();
        format!("f.root_id IN ({})", ids.join(","))
    }
}
