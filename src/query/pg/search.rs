//! `pidx --pg URL search`: full text on the server. Words go through PostgreSQL's
//! `websearch_to_tsquery('simple', ...)` over the `tsvector` column (GIN); `--literal` is a
//! substring match under the trigram index. Each hit names its source.
//!
//! Differences from the local FTS5 search, by design of the server's text search: words are
//! split by PostgreSQL's parser (no accent folding; `main.rs` is one token), and hits rank by
//! `ts_rank` then recency rather than bm25.

use postgres::Transaction;
use serde::Serialize;

use super::Conds;
use crate::error::Result;
use crate::pi::text::TextKind;
use crate::store::pg::server_err;

#[derive(Debug, Clone, Default)]
pub struct PgSearch {
    pub query: String,
    pub literal: bool,
    pub source: Option<String>,
    pub cwd: Option<String>,
    pub kinds: Vec<TextKind>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub limit: usize,
}

/// One matching text of an entry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PgHit {
    pub source: String,
    pub path: String,
    pub session_id: Option<String>,
    pub cwd: String,
    pub entry_id: Option<String>,
    pub line: i64,
    pub kind: &'static str,
    pub role: Option<String>,
    pub timestamp: Option<String>,
    pub score: f64,
    pub snippet: String,
}

/// Runs the search, best first.
///
/// # Errors
/// Server errors (a query PostgreSQL cannot parse is reported as such).
pub fn search(tx: &mut Transaction, q: &PgSearch) -> Result<Vec<PgHit>> {
    let mut c = Conds::source(q.source.as_deref());
    if let Some(cwd) = &q.cwd {
        c.cwd(cwd);
    }
    let score = if q.literal {
        let pattern = format!(
            "%{}%",
            q.query
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        c.and("t.body LIKE ?", vec![Box::new(pattern)]);
        "0::float8".to_string()
    } else {
        c.and(
            "t.tsv @@ websearch_to_tsquery('simple', ?)",
            vec![Box::new(q.query.clone())],
        );
        format!(
            "ts_rank(t.tsv, websearch_to_tsquery('simple', ${}))::float8",
            c.params.len()
        )
    };
    if !q.kinds.is_empty() {
        let kinds: Vec<i16> = q.kinds.iter().map(|k| *k as i16).collect();
        c.and("t.kind = ANY(?)", vec![Box::new(kinds)]);
    }
    if let Some(t) = q.since_ms {
        c.and("e.ts_ms >= ?", vec![Box::new(t)]);
    }
    if let Some(t) = q.until_ms {
        c.and("e.ts_ms < ?", vec![Box::new(t)]);
    }
    let sql = format!(
        "SELECT s.source, s.path, s.session_id, s.cwd, e.id, e.line, t.kind, e.role, e.ts,
                {score} AS score, left(t.body, 4000)
         FROM entry_text t
         JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
         JOIN sessions s ON s.source = t.source AND s.fid = t.fid
         WHERE {} ORDER BY score DESC, e.ts_ms DESC NULLS LAST, s.path, e.seq, t.kind
         LIMIT {}",
        c.sql(),
        q.limit
    );
    let rows = tx.query(&sql, &c.params()).map_err(server_err)?;
    Ok(rows
        .iter()
        .map(|r| {
            let body: String = r.get(10);
            PgHit {
                source: r.get(0),
                path: r.get(1),
                session_id: r.get(2),
                cwd: r.get(3),
                entry_id: r.get(4),
                line: r.get(5),
                kind: TextKind::from_bits(i64::from(r.get::<_, i16>(6))).name(),
                role: r.get(7),
                timestamp: r.get(8),
                score: r.get(9),
                snippet: snippet(&body, &q.query),
            }
        })
        .collect())
}

/// Up to ~160 characters of `body` around the first place a query word occurs.
fn snippet(body: &str, query: &str) -> String {
    let lower = body.to_lowercase();
    let at = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter_map(|w| lower.find(&w.to_lowercase()))
        .min()
        .unwrap_or(0);
    let start = body[..at.min(body.len())]
        .char_indices()
        .rev()
        .nth(60)
        .map_or(0, |(i, _)| i);
    let text: String = body[start..].chars().take(160).collect();
    crate::term::one_line(&text)
}
