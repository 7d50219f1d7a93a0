//! `show` on the team server: the same [`SessionDetail`] from the server's session row and
//! entries (what the local index keeps and push sends), plus the session's source.

use postgres::types::FromSql;
use postgres::Transaction;
use serde_json::Value;

use super::on::key;
use super::on::MODIFIED;
use crate::pg::typed;
use pidx_core::error::{Error, Result};
use pidx_core::pi::js;
use pidx_core::query::resolve::Resolved;
use pidx_core::query::show::{fold_labels, ModelUsage, SessionDetail, SessionStats, Tokens};

/// pi's per-model keys (as the local `MODELS`), keys in byte order.
const MODELS: &str = "
SELECT key, tokens, cost FROM (
SELECT CASE
         WHEN type = 'message' AND role = 'assistant'
           THEN coalesce(provider, 'undefined') || '/' || coalesce(response_model, model, 'undefined')
         WHEN type = 'usage' THEN coalesce(provider, 'undefined') || '/' || coalesce(model, 'undefined')
         ELSE 'Tools/summaries'
       END AS key,
       sum(coalesce(input, 0) + coalesce(output, 0) + coalesce(cache_read, 0) + coalesce(cache_write, 0))::bigint AS tokens,
       sum(coalesce(cost, 0))::float8 AS cost
FROM entries
WHERE source = $1 AND fid = $2 AND input IS NOT NULL
GROUP BY key) m
ORDER BY cost DESC, key COLLATE \"C\"";

/// pi's `/session` figures (as `store::schema::USAGE_SUMS`, then the message count).
const STATS: &str = "
SELECT count(*) FILTER (WHERE type = 'message' AND role = 'user'),
       count(*) FILTER (WHERE type = 'message' AND role = 'assistant'),
       count(*) FILTER (WHERE type = 'message' AND role = 'toolResult'),
       coalesce(sum(tool_calls) FILTER (WHERE type = 'message' AND role = 'assistant'), 0)::bigint,
       coalesce(sum(input), 0)::bigint, coalesce(sum(output), 0)::bigint,
       coalesce(sum(cache_read), 0)::bigint, coalesce(sum(cache_write), 0)::bigint,
       coalesce(sum(cost), 0)::float8,
       count(*) FILTER (WHERE type = 'message')
FROM entries WHERE source = $1 AND fid = $2";

/// Everything `show` prints of a server session; `handle` as `query::handle::server` gives it.
///
/// # Errors
/// `NotFound` when it is gone; server errors.
pub fn show(tx: &mut Transaction, s: &Resolved, handle: String) -> Result<SessionDetail> {
    let (source, fid) = key(s);
    let r = typed::query_opt(
        tx,
        &format!(
            "SELECT s.state, s.excluded, s.loadable, s.version, s.header, s.session_id, s.cwd,
                    s.name, s.created_ms, {MODIFIED}, s.entry_count, s.leaf_id
             FROM sessions s WHERE s.source = $1 AND s.fid = $2"
        ),
        &[&source, &fid],
    )?
    .ok_or_else(|| Error::NotFound(s.path.clone()))?;
    let state: i32 = r.get(0);
    let header: Option<Value> = r
        .get::<_, Option<String>>(4)
        .and_then(|h| serde_json::from_str(&h).ok());
    Ok(SessionDetail {
        source: Some(source.to_string()),
        path: s.path.clone(),
        parent_session_path: header
            .as_ref()
            .and_then(|h| h.get("parentSession").cloned()),
        header,
        handle,
        id: r.get(5),
        cwd: r.get(6),
        name: r.get(7),
        created: r.get::<_, Option<i64>>(8).map(js::iso),
        modified: (state == 1).then(|| js::iso(r.get(9))),
        hidden_because: match state {
            1 => None,
            0 => Some("the file has no JSON line yet (no session header)".to_string()),
            _ => r.get(1),
        },
        loadable: r.get(2),
        version: r.get::<_, Option<i64>>(3).unwrap_or(1),
        entries: r.get(10),
        messages_by_role: pairs(
            tx,
            "SELECT r, n FROM (
                 SELECT coalesce(role, '(none)') AS r, count(*) AS n FROM entries
                 WHERE source = $1 AND fid = $2 AND type = 'message' GROUP BY r) m
             ORDER BY n DESC, r COLLATE \"C\"",
            s,
        )?,
        labels: fold_labels(pairs(
            tx,
            "SELECT target_id, label FROM entries
             WHERE source = $1 AND fid = $2 AND type = 'label' ORDER BY seq",
            s,
        )?),
        leaf_id: r.get(11),
        stats: stats(tx, s)?,
        models: typed::query(tx, MODELS, &[&source, &fid])?
            .iter()
            .map(|r| ModelUsage {
                model: r.get(0),
                tokens: r.get(1),
                cost: r.get(2),
            })
            .collect(),
        bad_lines: pairs(
            tx,
            "SELECT line, reason FROM bad_lines WHERE source = $1 AND fid = $2 ORDER BY line",
            s,
        )?,
        gateway: gateway(tx, s)?,
    })
}

fn stats(tx: &mut Transaction, s: &Resolved) -> Result<SessionStats> {
    let (source, fid) = key(s);
    let r = typed::query_one(tx, STATS, &[&source, &fid])?;
    let tokens = Tokens {
        input: r.get(4),
        output: r.get(5),
        cache_read: r.get(6),
        cache_write: r.get(7),
        total: 0,
    };
    Ok(SessionStats {
        user_messages: r.get(0),
        assistant_messages: r.get(1),
        tool_results: r.get(2),
        tool_calls: r.get(3),
        total_messages: r.get(9),
        tokens: Tokens {
            total: tokens.input + tokens.output + tokens.cache_read + tokens.cache_write,
            ..tokens
        },
        cost: r.get(8),
    })
}

/// A gateway transcript's metadata (the server is not sent OpenClaw's own `sessions.json`
/// entry, nor which keys it deleted).
fn gateway(tx: &mut Transaction, s: &Resolved) -> Result<Option<Value>> {
    let (source, fid) = key(s);
    let r = typed::query_one(
        tx,
        "SELECT agent_id, session_key, key_current, channel, chat_type, peer, display_name,
                subject, thread_id
         FROM sessions WHERE source = $1 AND fid = $2",
        &[&source, &fid],
    )?;
    Ok(r.get::<_, Option<String>>(0).map(|agent| {
        serde_json::json!({
            "agentId": agent,
            "sessionKey": r.get::<_, Option<String>>(1),
            "current": r.get::<_, Option<bool>>(2),
            "channel": r.get::<_, Option<String>>(3),
            "chatType": r.get::<_, Option<String>>(4),
            "peer": r.get::<_, Option<String>>(5),
            "displayName": r.get::<_, Option<String>>(6),
            "subject": r.get::<_, Option<String>>(7),
            "threadId": r.get::<_, Option<String>>(8),
            "entry": null,
        })
    }))
}

fn pairs<A, B>(tx: &mut Transaction, sql: &str, s: &Resolved) -> Result<Vec<(A, B)>>
where
    A: for<'a> FromSql<'a>,
    B: for<'a> FromSql<'a>,
{
    let (source, fid) = key(s);
    Ok(typed::query(tx, sql, &[&source, &fid])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}
