//! Answers from the team server (`pidx --pg URL ...`), every one in a `READ ONLY` transaction.
//! The server holds what push sent (`store::pg`): the same summary and entry columns as the
//! local index plus each entry's raw line, so these queries reuse the local projections (pi's
//! listing row, `buildSessionContext` over raw lines, `getTree`) and differ only in their SQL.
//! Every row carries its `source`; `--source` restricts to one.

pub mod list;
pub mod search;
pub mod session;
pub mod stats;

use postgres::types::ToSql;
use postgres::Transaction;

use crate::error::{Error, Result};
use crate::store::pg::server_err;

/// pi's `modified` over the server's `sessions s` (as `store::schema::MODIFIED`).
pub const MODIFIED: &str = "CASE WHEN s.last_activity_ms > 0 THEN s.last_activity_ms
                              WHEN s.header_ts_ms IS NOT NULL THEN s.header_ts_ms
                              ELSE s.mtime_ms END";

/// Bound conditions over `sessions s` (PostgreSQL `$n` placeholders).
#[derive(Default)]
pub struct Conds {
    parts: Vec<String>,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Conds {
    /// Adds a condition; `?` in it stands for the next parameter.
    pub fn and(&mut self, cond: &str, values: Vec<Box<dyn ToSql + Sync>>) {
        let mut out = String::new();
        let mut n = self.params.len();
        for c in cond.chars() {
            if c == '?' {
                n += 1;
                out.push_str(&format!("${n}"));
            } else {
                out.push(c);
            }
        }
        self.parts.push(out);
        self.params.extend(values);
    }

    /// The conditions joined by AND (`true` when there are none).
    pub fn sql(&self) -> String {
        if self.parts.is_empty() {
            "true".into()
        } else {
            self.parts.join(" AND ")
        }
    }

    pub fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }

    /// Only `source`, when one is given.
    pub fn source(source: Option<&str>) -> Conds {
        let mut c = Conds::default();
        if let Some(s) = source {
            c.and("s.source = ?", vec![Box::new(s.to_string())]);
        }
        c
    }

    /// pi's `list(cwd)` rule over the server's rows: the cwd's folder in tree roots, header cwd
    /// equality elsewhere (as `query::list::cwd_filter`).
    pub fn cwd(&mut self, cwd: &str) {
        let resolved = crate::pi::layout::absolute(std::path::Path::new(cwd));
        let cwd = resolved.to_string_lossy().into_owned();
        let folder = crate::pi::layout::encode_cwd(&cwd);
        self.and(
            "((s.layout = 'tree' AND s.dir = s.root || '/' || ?)
              OR (s.layout = 'gateway' AND starts_with(s.dir, s.root || '/agents/') AND s.cwd = ?)
              OR (s.layout NOT IN ('tree', 'gateway') AND s.dir = s.root AND s.cwd = ?))",
            vec![Box::new(folder), Box::new(cwd.clone()), Box::new(cwd)],
        );
    }
}

/// A session on the server.
#[derive(Debug, Clone)]
pub struct Found {
    pub source: String,
    pub fid: i64,
    pub path: String,
}

/// Finds the session SESSION means: a path, a full session id or a unique id prefix.
///
/// # Errors
/// `NotFound`, `Ambiguous` (naming source and path), server errors.
pub fn resolve(tx: &mut Transaction, source: Option<&str>, arg: &str) -> Result<Found> {
    if arg.trim().is_empty() {
        return Err(Error::Invalid(
            "empty session id: give a session file, an id or a unique id prefix".into(),
        ));
    }
    let mut c = Conds::source(source);
    let prefix = format!(
        "{}%",
        arg.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    c.and(
        "(s.path = ? OR s.session_id = ? OR s.session_id LIKE ?)",
        vec![
            Box::new(arg.to_string()),
            Box::new(arg.to_string()),
            Box::new(prefix),
        ],
    );
    let sql = format!(
        "SELECT s.source, s.fid, s.path, s.path = ${n} OR s.session_id = ${n} AS exact
         FROM sessions s WHERE {} ORDER BY exact DESC, s.source, s.path LIMIT 11",
        c.sql(),
        n = c.params.len() + 1
    );
    let mut params = c.params();
    let arg_owned = arg.to_string();
    params.push(&arg_owned);
    let rows = tx.query(&sql, &params).map_err(server_err)?;
    let found: Vec<(Found, bool)> = rows
        .iter()
        .map(|r| {
            (
                Found {
                    source: r.get(0),
                    fid: r.get(1),
                    path: r.get(2),
                },
                r.get(3),
            )
        })
        .collect();
    let exact: Vec<&Found> = found.iter().filter(|f| f.1).map(|f| &f.0).collect();
    let candidates: Vec<&Found> = if exact.is_empty() {
        found.iter().map(|f| &f.0).collect()
    } else {
        exact
    };
    match candidates.as_slice() {
        [] => Err(Error::NotFound(arg.to_string())),
        [one] => Ok((*one).clone()),
        many => Err(Error::Ambiguous {
            query: arg.to_string(),
            count: many.len(),
            shown: many
                .iter()
                .map(|f| format!("{}  {}", f.source, f.path))
                .collect(),
        }),
    }
}
