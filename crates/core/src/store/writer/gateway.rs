//! Writes of gateway metadata: the state of each agent folder's `sessions.json`, its
//! (key, sessionId) pairs with what the key says (`pi::gateway::parse_key`), the same pairs
//! from an OpenClaw SQLite store's session windows with what the store says of it, and the
//! silent `NO_REPLY` turns of a transcript's new entries.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};

use crate::error::Result;
use crate::pi::gateway::parse_key;

/// The `stat` of a `sessions.json` as last read; all `None` when it was missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirStat {
    pub size: Option<i64>,
    pub mtime_ms: Option<i64>,
    pub ino: Option<i64>,
}

/// What the index last saw of `dir`'s `sessions.json`, if it looked before.
pub fn dir_stat(conn: &Connection, dir: &str) -> Result<Option<DirStat>> {
    Ok(conn
        .query_row(
            "SELECT size, mtime_ms, ino FROM gw_dirs WHERE dir = ?1",
            [dir],
            |r| {
                Ok(DirStat {
                    size: r.get(0)?,
                    mtime_ms: r.get(1)?,
                    ino: r.get(2)?,
                })
            },
        )
        .optional()?)
}

/// Records the state of `dir`'s `sessions.json` (and why it could not be used, if so).
pub fn save_dir(
    tx: &Connection,
    dir: &str,
    agent: &str,
    stat: DirStat,
    problem: Option<&String>,
) -> Result<()> {
    tx.execute(
        "INSERT INTO gw_dirs (dir, agent_id, size, mtime_ms, ino, problem)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (dir) DO UPDATE SET size = ?3, mtime_ms = ?4, ino = ?5, problem = ?6",
        params![dir, agent, stat.size, stat.mtime_ms, stat.ino, problem],
    )?;
    Ok(())
}

/// Replaces the current (key, sessionId) pairs of `dir` by those of `map`; older pairs stay,
/// no longer current. Returns how many entries were unusable.
pub fn save_keys(conn: &Connection, dir: &str, map: &Map<String, Value>) -> Result<usize> {
    conn.execute("UPDATE gw_keys SET current = 0 WHERE dir = ?1", [dir])?;
    let mut upsert = conn.prepare_cached(
        "INSERT INTO gw_keys (dir, session_key, session_id, session_file, current, updated_at,
                              agent_key, channel, chat_type, peer, display_name, subject, meta)
         VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (dir, session_key, session_id) DO UPDATE SET
             session_file = ?4, current = 1, updated_at = ?5, agent_key = ?6, channel = ?7,
             chat_type = ?8, peer = ?9, display_name = ?10, subject = ?11, meta = ?12",
    )?;
    let mut skipped = 0;
    for (key, entry) in map {
        let Some(sid) = entry.get("sessionId").and_then(Value::as_str) else {
            skipped += 1;
            continue;
        };
        let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
        let parts = parse_key(key);
        let chat_type = text("chatType")
            .filter(|t| matches!(t.as_str(), "direct" | "group" | "room"))
            .or_else(|| parts.chat_type.map(str::to_string));
        let channel = parts.channel.or_else(|| text("channel"));
        upsert.execute(params![
            dir,
            key,
            sid,
            text("sessionFile"),
            entry.get("updatedAt").and_then(Value::as_i64),
            parts.agent,
            channel,
            chat_type,
            parts.peer,
            text("displayName"),
            text("subject"),
            entry.to_string(),
        ])?;
    }
    Ok(skipped)
}

/// One session window of an OpenClaw store: the pair (key, sessionId) and what the store says
/// of its chat.
#[derive(Debug, Clone, Default)]
pub struct WindowKey {
    pub session_key: String,
    pub session_id: String,
    /// The key's node names this window as its current session.
    pub current: bool,
    pub updated_at: i64,
    /// `direct`, `group` or `channel` (a room, in pidx's words).
    pub chat_type: Option<String>,
    pub channel: Option<String>,
    pub display_name: Option<String>,
    /// The entry's `subject` (a group's or channel's title).
    pub subject: Option<String>,
    /// Whether OpenClaw lists the key (false once it is deleted: `oc_deleted`, migration 0021).
    pub listed: bool,
    /// The key's store entry (`session_nodes.entry_json`), else `{}`.
    pub meta: String,
}

/// Replaces every (key, sessionId) pair of the mirror folder `dir` by the store's windows: the
/// store holds them all, earlier windows of a key included, so nothing is kept from before.
/// A window of a key OpenClaw no longer lists is no key's current window, and its copy is
/// recorded in `oc_deleted`.
pub fn save_windows(tx: &Connection, dir: &str, windows: &[WindowKey]) -> Result<()> {
    tx.execute("DELETE FROM gw_keys WHERE dir = ?1", [dir])?;
    tx.execute("DELETE FROM oc_deleted WHERE dir = ?1", [dir])?;
    let mut insert = tx.prepare_cached(
        "INSERT OR REPLACE INTO gw_keys (dir, session_key, session_id, session_file, current,
             updated_at, agent_key, channel, chat_type, peer, display_name, subject, meta)
         VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    let mut deleted = tx.prepare_cached(
        "INSERT OR REPLACE INTO oc_deleted (dir, name, session_key) VALUES (?1, ?2 || '.jsonl', ?3)",
    )?;
    for w in windows {
        let parts = parse_key(&w.session_key);
        let chat_type = match w.chat_type.as_deref() {
            Some("channel") => Some("room".to_string()),
            Some(t @ ("direct" | "group")) => Some(t.to_string()),
            _ => parts.chat_type.map(str::to_string),
        };
        insert.execute(params![
            dir,
            w.session_key,
            w.session_id,
            w.current && w.listed,
            w.updated_at,
            parts.agent,
            parts.channel.or_else(|| w.channel.clone()),
            chat_type,
            parts.peer,
            w.display_name,
            w.subject,
            w.meta,
        ])?;
        if !w.listed {
            deleted.execute(params![dir, w.session_id, w.session_key])?;
        }
    }
    Ok(())
}

/// What `status` says of an OpenClaw store after a read.
#[derive(Debug, Clone, Default)]
pub struct StoreRow {
    pub db: String,
    pub root: String,
    pub agent_id: String,
    pub mirror: String,
    pub schema_version: Option<i64>,
    pub app_version: Option<String>,
    pub sessions: i64,
    pub cold: i64,
    /// Why the read failed; on failure the other facts keep their last good values.
    pub problem: Option<String>,
    pub synced_at: i64,
}

/// Records the outcome of reading a store.
pub fn save_store(tx: &Connection, s: &StoreRow) -> Result<()> {
    if s.problem.is_some() {
        tx.execute(
            "INSERT INTO oc_stores (db, root, agent_id, mirror, problem) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (db) DO UPDATE SET problem = ?5",
            params![s.db, s.root, s.agent_id, s.mirror, s.problem],
        )?;
        return Ok(());
    }
    tx.execute(
        "INSERT INTO oc_stores (db, root, agent_id, mirror, schema_version, app_version,
                                sessions, cold, problem, synced_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, ?9)
         ON CONFLICT (db) DO UPDATE SET root = ?2, agent_id = ?3, mirror = ?4,
             schema_version = ?5, app_version = ?6, sessions = ?7, cold = ?8, problem = NULL,
             synced_at = ?9",
        params![
            s.db,
            s.root,
            s.agent_id,
            s.mirror,
            s.schema_version,
            s.app_version,
            s.sessions,
            s.cold,
            s.synced_at
        ],
    )?;
    Ok(())
}

/// Forgets the stores of `root` that are no longer there (their copies' files go with the
/// root's other vanished files). Returns the folders of their copies.
pub fn forget_stores(tx: &Connection, root: &str, keep: &[String]) -> Result<Vec<String>> {
    let mut stmt = tx.prepare_cached("SELECT db, mirror FROM oc_stores WHERE root = ?1")?;
    let rows: Vec<(String, String)> = stmt
        .query_map([root], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut gone = Vec::new();
    for (db, mirror) in rows.into_iter().filter(|(db, _)| !keep.contains(db)) {
        tx.execute("DELETE FROM oc_stores WHERE db = ?1", [&db])?;
        tx.execute("DELETE FROM gw_keys WHERE dir = ?1", [&mirror])?;
        tx.execute("DELETE FROM oc_deleted WHERE dir = ?1", [&mirror])?;
        tx.execute("DELETE FROM gw_dirs WHERE dir = ?1", [&mirror])?;
        gone.push(mirror);
    }
    Ok(gone)
}

/// Marks the silent turns among entries just inserted for `file_id`: assistant messages whose
/// text starts with `NO_REPLY`, and the turn leading to each: its ancestors through tool results
/// and tool-calling assistant messages, up to and including the user message it answers (a
/// finished assistant reply on the way ends the walk: that one was seen).
pub fn mark_silent(conn: &Connection, file_id: i64, first_rid: i64) -> Result<()> {
    conn.prepare_cached(
        "WITH RECURSIVE turn(rid, parent_id, role, depth) AS (
             SELECT rid, parent_id, role, 0 FROM entries
             WHERE file_id = ?1 AND rid >= ?2 AND type = 'message' AND role = 'assistant'
               AND ltrim(text, ' ' || char(9, 10, 13)) GLOB 'NO_REPLY*'
             UNION ALL
             SELECT e.rid, e.parent_id, e.role, t.depth + 1 FROM turn t
             JOIN entries e ON e.file_id = ?1 AND e.id = t.parent_id AND e.shadowed = 0
             WHERE t.role IS NOT 'user' AND t.depth < 200 AND e.type = 'message'
               AND (e.role IN ('user', 'toolResult')
                    OR (e.role = 'assistant' AND e.stop_reason = 'toolUse'))
         )
         UPDATE entries SET silent = 1 WHERE rid IN (SELECT rid FROM turn)",
    )?
    .execute(params![file_id, first_rid])?;
    Ok(())
}
