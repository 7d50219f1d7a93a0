//! `pidx --pg URL list`: pi's `SessionInfo` rows from the server's summaries, in pi's order
//! (`query::list`), each with its source.

use postgres::Transaction;
use serde_json::Value;

use super::on::{self as server, MODIFIED};
use crate::pg::{server_err, typed, LISTING_BODY, LISTING_TEXT};
use pidx_core::error::Result;
use pidx_core::pi::rawjson::member;
use pidx_core::query::list::{GatewayInfo, ProjectCount, SessionInfo};
use pidx_core::store::filter::int;

/// Lists sessions as pi would (`cwd`: `list(cwd)`, else `listAll()`), newest first.
///
/// # Errors
/// Server errors.
pub fn list_sessions(
    tx: &mut Transaction,
    source: Option<&str>,
    cwd: Option<&str>,
    limit: Option<usize>,
    with_text: bool,
) -> Result<Vec<SessionInfo>> {
    let mut c = server::source(source);
    c.and("s.state = 1", []);
    if let Some(cwd) = cwd {
        server::cwd(&mut c, cwd);
    }
    // Ties of `modified` are put in pi's order below (file names by pi's collation); the
    // limit is applied after, so fetch the whole tie group at the boundary.
    if let Some(n) = limit.filter(|n| *n > 0) {
        let sql = format!(
            "SELECT {MODIFIED} AS modified FROM sessions s WHERE {}
             ORDER BY modified DESC OFFSET {} LIMIT 1",
            c.pg_sql(),
            n - 1
        );
        if let Some(row) = typed::query_opt(tx, &sql, &typed::where_params(&c, &[]))? {
            let boundary: i64 = row.get(0);
            c.and(format!("{MODIFIED} >= ?"), [int(boundary)]);
        }
    }
    let sql = format!(
        "SELECT s.source, s.fid, s.path, s.header, s.cwd, s.name, s.created_ms, {MODIFIED} AS modified,
                s.message_count, s.first_message, s.mtime_ns, s.file_name,
                s.agent_id, s.session_key, s.key_current, s.channel, s.chat_type, s.peer,
                s.display_name, s.subject, s.thread_id
         FROM sessions s WHERE {} ORDER BY modified DESC, s.mtime_ns DESC",
        c.pg_sql()
    );
    let rows = typed::query(tx, &sql, &typed::where_params(&c, &[]))?;
    let mut out: Vec<(SessionInfo, i64, String)> = rows.iter().map(listed).collect();
    let by_name = cwd.is_some();
    out.sort_by(|a, b| {
        b.0.modified_ms
            .cmp(&a.0.modified_ms)
            .then_with(|| {
                if by_name {
                    std::cmp::Ordering::Equal
                } else {
                    b.1.cmp(&a.1)
                }
            })
            .then_with(|| pidx_core::pi::collate::compare(&b.2, &a.2))
            // A transcript in several sources (a copy: the same name, mtime and times) by its
            // sources' names, not by the order the server happened to return the rows in.
            .then_with(|| a.0.source.cmp(&b.0.source))
    });
    let out: Vec<SessionInfo> = out.into_iter().map(|x| x.0).collect();
    first_page(tx, out, limit, with_text)
}

/// Every (source, project) of the listing [`list_sessions`] reads, with its sessions and newest
/// `modified`: grouped on the server (`pidx --pg URL serve`'s first page read every listed row
/// of a million sessions and stopped at its time limit).
///
/// # Errors
/// Server errors.
pub fn projects(tx: &mut Transaction, source: Option<&str>) -> Result<Vec<(String, ProjectCount)>> {
    let mut c = server::source(source);
    c.and("s.state = 1", []);
    let sql = format!(
        "SELECT s.source, s.cwd, count(*), max({MODIFIED}) FROM sessions s WHERE {}
         GROUP BY s.source, s.cwd",
        c.pg_sql()
    );
    let rows = typed::query(tx, &sql, &typed::where_params(&c, &[]))?;
    Ok(rows
        .iter()
        .map(|r| {
            let project = ProjectCount {
                cwd: r.get(1),
                sessions: r.get(2),
                modified_ms: r.get(3),
            };
            (r.get(0), project)
        })
        .collect())
}

/// pi's `allMessagesText` (as `query::list::all_messages_text`): the entries' texts and the
/// texts only pi's listing reads, in line order (an entry's before a listing text of its line,
/// a line's listing texts in their order there), read row by row into one string a transcript.
/// One statement for every session of a listing ([`AllText::new`]): planned once, not per
/// session (planning it over the partitions cost more than running it); each run reads
/// several transcripts ([`AllText::of_many`]).
pub struct AllText(postgres::Statement);

/// Transcripts whose texts one statement reads, and the most messages among them: a statement
/// a transcript made `list --query` a round trip per session (2.8 s for 10,000 sessions), and
/// the messages bound what a run holds (a transcript's text is held whole either way, as pi's
/// filter reads it).
const TEXTS_AT_ONCE: usize = 64;
const MESSAGES_AT_ONCE: i64 = 4096;

impl AllText {
    /// # Errors
    /// Server errors.
    pub fn new(tx: &mut Transaction) -> Result<AllText> {
        let sql = format!(
            "SELECT u.i, t.text
             FROM unnest($1::text[], $2::int8[]) WITH ORDINALITY AS u(source, fid, i)
             CROSS JOIN LATERAL (
                 SELECT e.line, 0 AS k, e.seq AS n, {LISTING_TEXT} AS text
                 FROM entries e {LISTING_BODY}
                 WHERE e.source = u.source AND e.fid = u.fid AND e.text IS NOT NULL
                 UNION ALL
                 SELECT line, 1, n, text FROM listing_text
                 WHERE source = u.source AND fid = u.fid) t
             ORDER BY u.i, t.line, t.k, t.n"
        );
        Ok(AllText(tx.prepare(&sql).map_err(server_err)?))
    }

    /// The texts of the transcripts `keys` (source and file id), in their order.
    ///
    /// # Errors
    /// Server errors.
    pub fn of_many(&self, tx: &mut Transaction, keys: &[(&str, i64)]) -> Result<Vec<String>> {
        use postgres::fallible_iterator::FallibleIterator;
        let (sources, fids): (Vec<&str>, Vec<i64>) = keys.iter().copied().unzip();
        let params: [&(dyn postgres::types::ToSql + Sync); 2] = [&sources, &fids];
        let mut rows = tx.query_raw(&self.0, params).map_err(server_err)?;
        let mut out = vec![String::new(); keys.len()];
        let mut started = vec![false; keys.len()];
        while let Some(r) = rows.next().map_err(server_err)? {
            let Some(at) = (usize::try_from(r.get::<_, i64>(0)).ok())
                .and_then(|i| i.checked_sub(1))
                .filter(|&at| at < keys.len())
            else {
                continue;
            };
            if std::mem::replace(&mut started[at], true) {
                out[at].push(' ');
            }
            out[at].push_str(r.get::<_, &str>(1));
        }
        Ok(out)
    }
}

/// pi's picker filter and order (`query::picker`) over listed rows, their texts read from the
/// server a few transcripts at a time ([`AllText::of_many`]) and dropped once scored; `limit`
/// after ordering, and the text kept on the rows only `with_text`.
///
/// # Errors
/// Server errors.
pub fn filter_and_sort(
    tx: &mut Transaction,
    rows: Vec<SessionInfo>,
    query: &str,
    limit: Option<usize>,
    with_text: bool,
) -> Result<Vec<SessionInfo>> {
    let all_text = AllText::new(tx)?;
    // The texts read ahead, from the listed row `from` on (the picker asks in order).
    let (mut from, mut ahead) = (0, std::collections::VecDeque::new());
    let order = pidx_core::query::picker::rank_streamed_at(&rows, query, |i| {
        if i < from || i >= from + ahead.len() {
            let mut end = i;
            let mut messages = 0;
            while end < rows.len() && end - i < TEXTS_AT_ONCE {
                messages += rows[end].message_count.max(1);
                if end > i && messages > MESSAGES_AT_ONCE {
                    break;
                }
                end += 1;
            }
            let keys: Vec<(&str, i64)> = (rows[i..end].iter())
                .map(|r| (r.source.as_deref().unwrap_or_default(), r.file_id))
                .collect();
            ahead = all_text.of_many(tx, &keys)?.into();
            from = i;
        }
        // Taken in order: what is before `i` was asked for already.
        while from < i {
            ahead.pop_front();
            from += 1;
        }
        from += 1;
        Ok::<_, pidx_core::Error>(ahead.pop_front().unwrap_or_default())
    })?;
    let mut slots: Vec<Option<SessionInfo>> = rows.into_iter().map(Some).collect();
    let out: Vec<SessionInfo> = order.into_iter().filter_map(|i| slots[i].take()).collect();
    first_page(tx, out, limit, with_text)
}

/// The first `limit` of `out`, with their messages' text when asked.
fn first_page(
    tx: &mut Transaction,
    mut out: Vec<SessionInfo>,
    limit: Option<usize>,
    with_text: bool,
) -> Result<Vec<SessionInfo>> {
    if let Some(n) = limit {
        out.truncate(n);
    }
    if with_text {
        let all_text = AllText::new(tx)?;
        let keys: Vec<(&str, i64)> = (out.iter())
            .map(|s| (s.source.as_deref().unwrap_or_default(), s.file_id))
            .collect();
        let mut texts = Vec::with_capacity(out.len());
        for some in keys.chunks(TEXTS_AT_ONCE) {
            texts.extend(all_text.of_many(tx, some)?);
        }
        for (s, text) in out.iter_mut().zip(texts) {
            s.all_messages_text = Some(text);
        }
    }
    Ok(out)
}

/// A listing row and its tie-breakers (the exact mtime and the file name).
fn listed(r: &postgres::Row) -> (SessionInfo, i64, String) {
    let header: Option<String> = r.get(3);
    let header = header.unwrap_or_default();
    let field =
        |k: &str| member(&header, k).and_then(|raw| serde_json::from_str::<Value>(raw).ok());
    let agent: Option<String> = r.get(12);
    let info = SessionInfo {
        file_id: r.get(1),
        source: Some(r.get(0)),
        path: r.get(2),
        id: field("id"),
        cwd: r.get(4),
        name: r.get(5),
        parent_session_path: field("parentSession"),
        created_ms: r.get(6),
        modified_ms: r.get(7),
        message_count: r.get(8),
        first_message: r
            .get::<_, Option<String>>(9)
            .unwrap_or_else(|| "(no messages)".into()),
        all_messages_text: None,
        gateway: agent.map(|agent_id| {
            Box::new(GatewayInfo {
                agent_id,
                session_key: r.get(13),
                current: r.get(14),
                channel: r.get(15),
                chat_type: r.get(16),
                peer: r.get(17),
                display_name: r.get(18),
                subject: r.get(19),
                thread_id: r.get(20),
                // the team server is not told which keys OpenClaw deleted
                deleted: false,
            })
        }),
    };
    (info, r.get(10), r.get(11))
}
