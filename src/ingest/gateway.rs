//! Agent gateways (OpenClaw and its rebrands): their `agents/<agentId>/sessions/` folders hold pi
//! transcripts next to `sessions.json`, an object mapping each session key to its current
//! transcript (`sessionId`, optional `sessionFile`) and chat metadata. That file is small,
//! mutable and rewritten whole: it is read again whenever its `stat` changes, and every
//! (key, sessionId) pair it ever held is kept, so a transcript left behind by a reset keeps its
//! key. A missing or malformed file is a warning: the transcripts are indexed regardless.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};

use crate::error::Result;

/// The name gateways give their metadata store.
pub const STORE: &str = "sessions.json";

/// What a session key says about its chat.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeyParts {
    pub agent: Option<String>,
    pub channel: Option<String>,
    pub chat_type: Option<&'static str>,
    pub peer: Option<String>,
}

/// Splits a session key: `agent:<agentId>:<mainKey>` (a direct chat),
/// `agent:<agentId>:<channel>[:<account>]:group|channel|room|dm:<id>`, `cron:<jobId>`,
/// `hook:<uuid>`, `agent:<agentId>:subagent:<uuid>`.
pub fn parse_key(key: &str) -> KeyParts {
    let mut parts = KeyParts::default();
    let tokens: Vec<&str> = key.split(':').collect();
    let rest: &[&str] = match tokens.as_slice() {
        ["agent", agent, rest @ ..] => {
            parts.agent = Some((*agent).to_string());
            rest
        }
        all => all,
    };
    let marker = rest
        .iter()
        .position(|t| matches!(*t, "group" | "channel" | "room" | "dm" | "direct"));
    match marker {
        Some(i) => {
            parts.chat_type = Some(match rest[i] {
                "group" => "group",
                "channel" | "room" => "room",
                _ => "direct",
            });
            if i > 0 {
                parts.channel = Some(rest[0].to_string());
            }
            let peer = rest[i + 1..].join(":");
            parts.peer = (!peer.is_empty()).then_some(peer);
        }
        None if rest.len() == 1 && parts.agent.is_some() => parts.chat_type = Some("direct"),
        None if rest.len() >= 2 => parts.channel = Some(rest[0].to_string()),
        None => {}
    }
    parts
}

/// The agent a gateway sessions folder belongs to: `agents/<agentId>/sessions`.
pub fn agent_of(dir: &Path) -> String {
    dir.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Brings the index's copy of `dir/sessions.json` up to date. Returns a warning when the file
/// is missing, unreadable or malformed (only when that state is new, so it is said once).
pub fn sync_store(conn: &Connection, dir: &Path) -> Result<Option<String>> {
    let dir_s = dir.to_string_lossy();
    let path = dir.join(STORE);
    let meta = std::fs::metadata(&path).ok();
    // (size, mtime, inode) of sessions.json now; all NULL when it is missing.
    let now: (Option<i64>, Option<i64>, Option<i64>) =
        meta.as_ref().map_or((None, None, None), |m| {
            (
                Some(m.len() as i64),
                Some(m.mtime() * 1000 + m.mtime_nsec() / 1_000_000),
                Some(m.ino() as i64),
            )
        });
    let known: Option<(Option<i64>, Option<i64>, Option<i64>)> = conn
        .query_row(
            "SELECT size, mtime_ms, ino FROM gw_dirs WHERE dir = ?1",
            [dir_s.as_ref()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    if known == Some(now) {
        return Ok(None);
    }
    let read = match &meta {
        None => Err(format!("no {STORE}")),
        Some(_) => std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                serde_json::from_slice::<Value>(&bytes).map_err(|e| format!("malformed: {e}"))
            })
            .and_then(|v| match v {
                Value::Object(map) => Ok(map),
                _ => Err("malformed: not a JSON object".into()),
            }),
    };
    let (size, mtime, ino) = now;
    let problem = read.as_ref().err().cloned();
    conn.execute(
        "INSERT INTO gw_dirs (dir, agent_id, size, mtime_ms, ino, problem)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (dir) DO UPDATE SET size = ?3, mtime_ms = ?4, ino = ?5, problem = ?6",
        params![dir_s, agent_of(dir), size, mtime, ino, problem],
    )?;
    let map = match read {
        Ok(map) => map,
        // A missing folder store is normal for a fresh agent: no warning for that.
        Err(_) if meta.is_none() => return Ok(None),
        // Keep what the last good read said (a gateway may be mid-rewrite).
        Err(why) => {
            return Ok(Some(format!(
                "{}: {why}; its transcripts are indexed without key metadata",
                path.display()
            )))
        }
    };
    let skipped = save_keys(conn, &dir_s, &map)?;
    Ok((skipped > 0).then(|| {
        format!(
            "{}: {skipped} entr{} without a string sessionId skipped",
            path.display(),
            if skipped == 1 { "y" } else { "ies" }
        )
    }))
}

/// Replaces the current (key, sessionId) pairs of `dir` by those of `map`; older pairs stay,
/// no longer current. Returns how many entries were unusable.
fn save_keys(conn: &Connection, dir: &str, map: &Map<String, Value>) -> Result<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(
        agent: Option<&str>,
        channel: Option<&str>,
        chat: Option<&'static str>,
        peer: Option<&str>,
    ) -> KeyParts {
        KeyParts {
            agent: agent.map(str::to_string),
            channel: channel.map(str::to_string),
            chat_type: chat,
            peer: peer.map(str::to_string),
        }
    }

    #[test]
    fn keys_split_into_agent_channel_chat_type_and_peer() {
        assert_eq!(
            parse_key("agent:main:main"),
            parts(Some("main"), None, Some("direct"), None)
        );
        assert_eq!(
            parse_key("agent:ops:telegram:group:-1001234"),
            parts(
                Some("ops"),
                Some("telegram"),
                Some("group"),
                Some("-1001234")
            )
        );
        assert_eq!(
            parse_key("agent:ops:discord:channel:42"),
            parts(Some("ops"), Some("discord"), Some("room"), Some("42"))
        );
        assert_eq!(
            parse_key("agent:main:slack:room:C1:thread:9"),
            parts(
                Some("main"),
                Some("slack"),
                Some("room"),
                Some("C1:thread:9")
            )
        );
        assert_eq!(
            parse_key("agent:main:telegram:default:dm:user1"),
            parts(
                Some("main"),
                Some("telegram"),
                Some("direct"),
                Some("user1")
            )
        );
        assert_eq!(
            parse_key("cron:nightly"),
            parts(None, Some("cron"), None, None)
        );
        assert_eq!(
            parse_key("hook:0b9e"),
            parts(None, Some("hook"), None, None)
        );
        assert_eq!(
            parse_key("agent:main:subagent:ab-cd"),
            parts(Some("main"), Some("subagent"), None, None)
        );
        assert_eq!(parse_key("global"), parts(None, None, None, None));
    }

    #[test]
    fn the_agent_is_the_folder_above_sessions() {
        assert_eq!(
            agent_of(Path::new("/x/.openclaw/agents/ops/sessions")),
            "ops"
        );
    }
}
