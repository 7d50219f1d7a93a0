//! `status`: where the index is and what it holds, per root, and who holds the writer lock.

use serde::Serialize;

use crate::error::Result;
use crate::pi::layout::Root;
use crate::store::{Store, WriterLock};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RootStatus {
    pub path: String,
    pub layout: String,
    pub exists: bool,
    pub files: i64,
    pub listed_sessions: i64,
    pub entries: i64,
    pub bad_lines: i64,
    pub last_sync: Option<String>,
    /// Gateway roots: one line per agent folder.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentStatus>,
    /// Gateway roots: each agent's OpenClaw SQLite store.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<StoreStatus>,
}

/// One agent's OpenClaw SQLite store, as last read.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreStatus {
    pub agent_id: String,
    pub db: String,
    pub schema_version: Option<i64>,
    /// The OpenClaw version that wrote it (its `schema_meta.app_version`).
    pub openclaw_version: Option<String>,
    pub sessions: i64,
    /// Sessions whose transcript is in a cold archive.
    pub cold: i64,
    /// Why the last read failed, if it did.
    pub problem: Option<String>,
}

/// The stores of a root, by agent.
const STORES: &str = "
SELECT agent_id, db, schema_version, app_version, sessions, cold, problem
FROM oc_stores WHERE root = ?1 ORDER BY agent_id, db";

fn stores(store: &Store, root: &str) -> Result<Vec<StoreStatus>> {
    let mut stmt = store.conn.prepare(STORES)?;
    let rows = stmt.query_map([root], |r| {
        Ok(StoreStatus {
            agent_id: r.get(0)?,
            db: r.get(1)?,
            schema_version: r.get(2)?,
            openclaw_version: r.get(3)?,
            sessions: r.get(4)?,
            cold: r.get(5)?,
            problem: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One gateway agent's sessions folder.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    pub agent_id: String,
    pub dir: String,
    /// Session keys `sessions.json` holds now.
    pub keys: i64,
    /// Why `sessions.json` is not used (missing, malformed), if so.
    pub problem: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub db: String,
    pub db_bytes: u64,
    pub roots: Vec<RootStatus>,
    /// The process holding the writer lock (a `pidx watch`), if any.
    pub writer: Option<String>,
    /// Whether every text's joints are indexed (`store::joints`), right sides alone included:
    /// not in an index built before them (migrations 0016, 0017), where literal search of
    /// identifiers with `_` reads more lines back.
    pub joints_indexed: bool,
    /// Files the last syncs skipped and why (each sync tries them again).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// Search by meaning: what is embedded, when anything is (`pidx sync --embed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<Embedded>,
}

/// A file a sync skipped (`migrations/0030_skipped_files.sql`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    pub path: String,
    pub reason: String,
    /// When the sync that skipped it ran (ISO 8601).
    pub at: String,
}

/// The skipped files, by path.
const SKIPPED: &str = "SELECT path, reason, at_ms FROM skipped_files ORDER BY path";

/// The files the syncs skipped (none in an index too old to note them, read as it is).
///
/// # Errors
/// Index errors.
pub fn skipped(store: &Store) -> Result<Vec<Skipped>> {
    let has = store.conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'skipped_files')",
        [],
        |r| r.get::<_, bool>(0),
    )?;
    if !has {
        return Ok(Vec::new());
    }
    let mut stmt = store.conn.prepare(SKIPPED)?;
    let rows = stmt.query_map([], |r| {
        Ok(Skipped {
            path: r.get(0)?,
            reason: r.get(1)?,
            at: crate::pi::js::iso(r.get(2)?),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How much of the index is embedded for search by meaning.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Embedded {
    pub model: String,
    /// Entries embedded, of those with text of the embedded kinds (copies of forks aside).
    pub entries: i64,
    pub of_entries: i64,
    pub passages: i64,
}

/// Entries holding user, assistant, custom, summary or name text (`ingest::embed`'s kinds),
/// not copies: what an embedding pass embeds.
const EMBEDDABLE: &str = "SELECT count(*) FROM entries WHERE text_kinds & 227 <> 0 AND dup = 0";

fn embedded(store: &Store) -> Result<Option<Embedded>> {
    use rusqlite::OptionalExtension;
    let conn = &store.conn;
    let Some(model) = conn
        .query_row("SELECT id FROM embed_model", [], |r| r.get::<_, String>(0))
        .optional()?
    else {
        return Ok(None);
    };
    Ok(Some(Embedded {
        model,
        entries: conn.query_row("SELECT count(*) FROM embedded", [], |r| r.get(0))?,
        of_entries: conn.query_row(EMBEDDABLE, [], |r| r.get(0))?,
        passages: conn.query_row("SELECT count(*) FROM passages", [], |r| r.get(0))?,
    }))
}

const PER_ROOT: &str = "
SELECT count(*), coalesce(sum(s.state = 1), 0), coalesce(sum(s.entry_count), 0),
       coalesce(sum(f.bad_lines), 0), max(f.synced_at)
FROM files f LEFT JOIN sessions s ON s.file_id = f.id
WHERE f.root_id = (SELECT id FROM roots WHERE path = ?1)";

fn agents(store: &Store, root: &str) -> Result<Vec<AgentStatus>> {
    let mut stmt = store.conn.prepare(
        "SELECT g.agent_id, g.dir, g.problem,
                (SELECT count(*) FROM gw_keys k WHERE k.dir = g.dir AND k.current = 1)
         FROM gw_dirs g WHERE g.dir = ?1 OR instr(g.dir, ?1 || '/') = 1 ORDER BY g.agent_id",
    )?;
    let rows = stmt.query_map([root], |r| {
        Ok(AgentStatus {
            agent_id: r.get(0)?,
            dir: r.get(1)?,
            problem: r.get(2)?,
            keys: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Reports on the index for `roots`.
///
/// # Errors
/// Index errors only.
pub fn status(store: &Store, roots: &[Root]) -> Result<Status> {
    let mut out = Vec::new();
    for root in roots {
        let path = root.path.to_string_lossy().into_owned();
        let (files, listed, entries, bad, last): (i64, i64, i64, i64, Option<i64>) =
            store.conn.query_row(PER_ROOT, [&path], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
        let (agents, stores) = if root.layout.is_gateway() {
            let stores = stores(store, &path)?;
            // An agent whose store holds its sessions has no sessions.json any more: that is
            // not a problem worth a line.
            let mut agents = agents(store, &path)?;
            agents.retain(|a| {
                a.problem.as_deref() != Some("no sessions.json")
                    || !stores.iter().any(|s| s.agent_id == a.agent_id)
            });
            (agents, stores)
        } else {
            (Vec::new(), Vec::new())
        };
        out.push(RootStatus {
            exists: root.path.is_dir(),
            path,
            layout: root.layout.as_str().to_string(),
            files,
            listed_sessions: listed,
            entries,
            bad_lines: bad,
            last_sync: last.map(crate::pi::js::iso),
            agents,
            stores,
        });
    }
    let db_bytes = ["", "-wal"]
        .iter()
        .filter_map(|s| {
            let mut p = store.path.as_os_str().to_owned();
            p.push(s);
            std::fs::metadata(p).ok()
        })
        .map(|m| m.len())
        .sum();
    Ok(Status {
        db: store.path.to_string_lossy().into_owned(),
        db_bytes,
        roots: out,
        writer: WriterLock::holder(&store.path).map(|h| h.0),
        skipped: skipped(store)?,
        joints_indexed: !crate::store::joints::is_stale(&store.conn)?
            && !crate::store::joints::lacks_rights(&store.conn)?,
        embedded: embedded(store)?,
    })
}
