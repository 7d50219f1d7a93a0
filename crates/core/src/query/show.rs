//! `show`: everything the index knows about one session file: its listing row (or why pi would
//! hide it), header, counts by role, labels, the current leaf, skipped lines, and pi's own
//! `/session` figures (`getSessionStats`, docs/pi-format.md §8.5) with a per-model cost breakdown.

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::pi::js;
use crate::query::resolve::Resolved;
use crate::query::{handle, Reader};
use crate::store::schema::{MODIFIED, USAGE_SUMS, USAGE_SUMS_LEN};
use crate::store::Scope;

/// pi's `getSessionStats` figures, over every entry of the file (all branches).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    pub user_messages: i64,
    pub assistant_messages: i64,
    pub tool_calls: i64,
    pub tool_results: i64,
    pub total_messages: i64,
    pub tokens: Tokens,
    pub cost: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub total: i64,
}

/// Cost and tokens under one key of pi's per-model breakdown.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    pub model: String,
    pub tokens: i64,
    pub cost: f64,
}

/// Everything `pidx show` prints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDetail {
    /// The machine it came from, on the team server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub path: String,
    pub header: Option<Value>,
    pub id: Option<String>,
    /// What a person copies to name this session again (`query::handle`).
    pub handle: String,
    pub cwd: String,
    pub name: Option<String>,
    pub created: Option<String>,
    pub modified: Option<String>,
    /// `null` when pi lists it; otherwise why `/resume` would not show it.
    pub hidden_because: Option<String>,
    pub loadable: bool,
    pub version: i64,
    pub entries: i64,
    pub messages_by_role: Vec<(String, i64)>,
    pub labels: Vec<(String, String)>,
    pub leaf_id: Option<String>,
    pub parent_session_path: Option<Value>,
    pub stats: SessionStats,
    pub models: Vec<ModelUsage>,
    pub bad_lines: Vec<(i64, String)>,
    /// Gateway transcripts: the agent, the session key and what `sessions.json` says of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<Value>,
}

/// pi's `/session` figures for one file: the usage sums plus every message entry.
fn stats_sql() -> String {
    format!(
        "SELECT {USAGE_SUMS}, coalesce(sum(e.type = 'message'), 0) FROM entries e WHERE e.file_id = ?1"
    )
}

/// pi's per-model keys: assistant usage under `provider/(responseModel ?? model)`, `usage`
/// entries under `provider/model`, the rest under `Tools/summaries`.
const MODELS: &str = "
SELECT CASE
         WHEN type = 'message' AND role = 'assistant'
           THEN coalesce(provider, 'undefined') || '/' || coalesce(response_model, model, 'undefined')
         WHEN type = 'usage' THEN coalesce(provider, 'undefined') || '/' || coalesce(model, 'undefined')
         ELSE 'Tools/summaries'
       END AS key,
       sum(coalesce(input, 0) + coalesce(output, 0) + coalesce(cache_read, 0) + coalesce(cache_write, 0)),
       sum(coalesce(cost, 0))
FROM entries
WHERE file_id = ?1 AND input IS NOT NULL
GROUP BY key ORDER BY 3 DESC, 1";

/// pi's `/session` figures for one file.
///
/// # Errors
/// Index errors only.
pub fn session_stats(conn: &Connection, file_id: i64) -> Result<SessionStats> {
    Ok(conn
        .prepare_cached(&stats_sql())?
        .query_row([file_id], |r| {
            let tokens = Tokens {
                input: r.get(4)?,
                output: r.get(5)?,
                cache_read: r.get(6)?,
                cache_write: r.get(7)?,
                total: 0,
            };
            Ok(SessionStats {
                user_messages: r.get(0)?,
                assistant_messages: r.get(1)?,
                tool_results: r.get(2)?,
                tool_calls: r.get(3)?,
                total_messages: r.get(USAGE_SUMS_LEN)?,
                tokens: Tokens {
                    total: tokens.input + tokens.output + tokens.cache_read + tokens.cache_write,
                    ..tokens
                },
                cost: r.get(8)?,
            })
        })?)
}

/// Everything about one session.
///
/// # Errors
/// Index errors only.
pub fn show_session(conn: &Connection, session: &Resolved) -> Result<SessionDetail> {
    show_session_among(conn, session, &[])
}

/// [`show_session`] with a handle unique also among `unread` (`handle::handles_among`).
///
/// # Errors
/// Index errors only.
pub fn show_session_among(
    conn: &Connection,
    session: &Resolved,
    unread: &[String],
) -> Result<SessionDetail> {
    let row = summary_row(conn, session)?;
    let (
        state,
        excluded,
        loadable,
        version,
        header,
        id,
        cwd,
        name,
        created,
        modified,
        entries,
        leaf_id,
    ) = row;
    let header: Option<Value> = header.and_then(|h| serde_json::from_str(&h).ok());
    let hidden_because = match state {
        1 => None,
        0 => Some("the file has no JSON line yet (no session header)".to_string()),
        _ => excluded,
    };
    Ok(SessionDetail {
        source: None,
        path: session.path.clone(),
        parent_session_path: header.as_ref().and_then(|h| h.get("parentSession").cloned()),
        header,
        handle: handle_of(conn, session, id.as_deref(), unread)?,
        id,
        cwd,
        name,
        created: created.map(js::iso),
        modified: (state == 1).then(|| js::iso(modified)),
        hidden_because,
        loadable,
        version: version.unwrap_or(1),
        entries,
        messages_by_role: pairs(
            conn,
            "SELECT coalesce(role, '(none)'), count(*) FROM entries WHERE file_id = ?1 AND type = 'message'
             GROUP BY 1 ORDER BY 2 DESC, 1",
            session.file_id,
        )?,
        labels: labels(conn, session.file_id)?,
        leaf_id,
        stats: session_stats(conn, session.file_id)?,
        models: models(conn, session.file_id)?,
        bad_lines: pairs(
            conn,
            "SELECT line, reason FROM bad_lines WHERE file_id = ?1 ORDER BY line",
            session.file_id,
        )?,
        gateway: gateway(conn, session.file_id)?,
    })
}

/// Everything about one session of the local index or the team server.
///
/// # Errors
/// Index or server errors.
pub fn show(reader: &mut Reader, session: &Resolved) -> Result<SessionDetail> {
    match reader {
        Reader::Local { conn, unread, .. } => show_session_among(conn, session, unread),
        Reader::Server(server) => server.show(session),
    }
}

/// A session's summary columns, as [`show_session_among`] reads them.
type SummaryRow = (
    i64,
    Option<String>,
    bool,
    Option<i64>,
    Option<String>,
    Option<String>,
    String,
    Option<String>,
    Option<i64>,
    i64,
    i64,
    Option<String>,
);

fn summary_row(conn: &Connection, session: &Resolved) -> Result<SummaryRow> {
    conn.query_row(
        &format!(
            "SELECT s.state, s.excluded, s.loadable, s.version, s.header, s.session_id, s.cwd,
                        s.name, s.created_ms, {MODIFIED}, s.entry_count, s.leaf_id
                 FROM sessions s JOIN files f ON f.id = s.file_id WHERE s.file_id = ?1"
        ),
        [session.file_id],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<i64>>(8)?,
                r.get::<_, i64>(9)?,
                r.get::<_, i64>(10)?,
                r.get::<_, Option<String>>(11)?,
            ))
        },
    )
    .optional()?
    .ok_or_else(|| Error::NotFound(session.path.clone()))
}

/// The handle of one session (`query::handle`).
fn handle_of(
    conn: &Connection,
    session: &Resolved,
    id: Option<&str>,
    unread: &[String],
) -> Result<String> {
    let one = handle::Session {
        file_id: session.file_id,
        id,
        path: &session.path,
    };
    Ok(handle::handles_among(conn, [one], unread)?
        .remove(&session.file_id)
        .unwrap_or_default())
}

/// Every line the index skipped in the files in scope, as (path, line, reason).
///
/// # Errors
/// Index errors only.
pub fn bad_lines_in(conn: &Connection, scope: &Scope) -> Result<Vec<(String, i64, String)>> {
    let w = scope.filter();
    let sql = format!(
        "SELECT f.path, b.line, b.reason FROM bad_lines b JOIN files f ON f.id = b.file_id
         WHERE {} ORDER BY f.path, b.line",
        w.sql()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The gateway metadata of a transcript, when it lives in a gateway root.
fn gateway(conn: &Connection, file_id: i64) -> Result<Option<Value>> {
    let row = conn
        .query_row(
            "SELECT agent_id, session_key, current, channel, chat_type, peer, display_name,
                    subject, thread_id, meta,
                    EXISTS (SELECT 1 FROM files f JOIN oc_deleted d ON d.dir = f.dir
                            AND d.name = f.name WHERE f.id = ?1)
             FROM gw_files WHERE file_id = ?1",
            [file_id],
            |r| {
                let meta: Option<String> = r.get(9)?;
                let mut g = serde_json::json!({
                    "agentId": r.get::<_, String>(0)?,
                    "sessionKey": r.get::<_, Option<String>>(1)?,
                    "current": r.get::<_, Option<bool>>(2)?,
                    "channel": r.get::<_, Option<String>>(3)?,
                    "chatType": r.get::<_, Option<String>>(4)?,
                    "peer": r.get::<_, Option<String>>(5)?,
                    "displayName": r.get::<_, Option<String>>(6)?,
                    "subject": r.get::<_, Option<String>>(7)?,
                    "threadId": r.get::<_, Option<String>>(8)?,
                    "entry": meta.and_then(|m| serde_json::from_str::<Value>(&m).ok()),
                });
                // a session of a key OpenClaw no longer lists
                if r.get::<_, bool>(10)? {
                    g["deleted"] = true.into();
                }
                Ok(g)
            },
        )
        .optional()?;
    Ok(row)
}

fn pairs<A: rusqlite::types::FromSql, B: rusqlite::types::FromSql>(
    conn: &Connection,
    sql: &str,
    file_id: i64,
) -> Result<Vec<(A, B)>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// pi's label map (docs/pi-format.md §6.6): label entries in file order, the last one per target wins and a
/// falsy label clears it.
pub fn labels(conn: &Connection, file_id: i64) -> Result<Vec<(String, String)>> {
    let rows: Vec<(Option<String>, Option<String>)> = pairs(
        conn,
        "SELECT target_id, label FROM entries WHERE file_id = ?1 AND type = 'label' ORDER BY seq",
        file_id,
    )?;
    Ok(fold_labels(rows))
}

/// pi's label map from the label entries' (target, label) in file order.
pub fn fold_labels(rows: Vec<(Option<String>, Option<String>)>) -> Vec<(String, String)> {
    let mut map: indexmap_like::Ordered = indexmap_like::Ordered::default();
    for (target, label) in rows {
        let target = target.unwrap_or_default();
        match label {
            Some(l) => map.set(target, l),
            None => map.remove(&target),
        }
    }
    map.into_vec()
}

fn models(conn: &Connection, file_id: i64) -> Result<Vec<ModelUsage>> {
    let mut stmt = conn.prepare_cached(MODELS)?;
    let rows = stmt.query_map([file_id], |r| {
        Ok(ModelUsage {
            model: r.get(0)?,
            tokens: r.get(1)?,
            cost: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// A tiny insertion-ordered map, as JavaScript's `Map` iterates.
mod indexmap_like {
    #[derive(Default)]
    pub struct Ordered(Vec<(String, String)>);

    impl Ordered {
        pub fn set(&mut self, k: String, v: String) {
            match self.0.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => self.0.push((k, v)),
            }
        }
        pub fn remove(&mut self, k: &str) {
            self.0.retain(|(key, _)| key != k);
        }
        pub fn into_vec(self) -> Vec<(String, String)> {
            self.0
        }
    }
}
