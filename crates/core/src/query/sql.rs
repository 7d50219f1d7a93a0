//! `pidx sql`: one read-only statement against the index. The connection is opened read-only
//! (the file cannot change), and an authorizer refuses anything but reading: no writes, no
//! ATTACH/DETACH, no PRAGMA that sets a value, no transactions.

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::query::Reader;

/// Column names and rows of a query's result.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// PRAGMAs that only describe the schema, allowed with an argument (a table or index name), as
/// statements and as table-valued functions (`pragma_table_info('v_usage')`).
const DESCRIBING: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "collation_list",
    "function_list",
    "pragma_list",
    "database_list",
    "compile_options",
];

/// Columns that hold transcript text: read as NULL when text is hidden.
const TEXT_COLUMNS: &[(&str, &str)] = &[
    ("entries", "text"),
    ("sessions", "first_message"),
    ("big_texts", "body"),
    ("listing_text", "text"),
    ("bad_lines", "reason"),
];

/// Tables of the full-text indexes and their vocabulary (a secret's words are in them): not
/// read at all when text is hidden.
fn indexes_text(table: &str) -> bool {
    table.starts_with("fts")
        || table.starts_with("joint")
        || table.starts_with("words")
        || table.starts_with("impact_")
}

/// [`authorize`], with transcript text hidden: its columns read as NULL, the full-text
/// indexes refused (`Limits::hide_text`).
fn authorize_hiding_text(ctx: AuthContext<'_>) -> Authorization {
    if let AuthAction::Read {
        table_name,
        column_name,
    } = ctx.action
    {
        if indexes_text(table_name) {
            return Authorization::Deny;
        }
        if TEXT_COLUMNS.contains(&(table_name, column_name)) {
            return Authorization::Ignore;
        }
    }
    authorize(ctx)
}

fn authorize(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select
        | AuthAction::Read { .. }
        | AuthAction::Function { .. }
        | AuthAction::Recursive => Authorization::Allow,
        AuthAction::Pragma {
            pragma_value: None, ..
        } => Authorization::Allow,
        AuthAction::Pragma { pragma_name, .. }
            if DESCRIBING.contains(&pragma_name.to_ascii_lowercase().as_str()) =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

/// Runs `sql` (exactly one statement) read-only.
///
/// # Errors
/// `Invalid` for anything that is not a single read-only statement, SQL errors as `Invalid`.
pub fn run(conn: &Connection, sql: &str, limit: Duration) -> Result<Table> {
    let limits = Limits {
        time: limit,
        ..Limits::default()
    };
    match run_capped(conn, sql, &limits) {
        Ok((table, _)) => Ok(table),
        Err(e @ Error::TimeLimit { .. }) => Err(Error::Invalid(format!(
            "{e} (raise the limit with --timeout SECS)"
        ))),
        Err(e) => Err(e),
    }
}

/// Runs one read-only statement on the local index or the team server, stopped after
/// `limit`.
///
/// # Errors
/// As [`run`]; server errors.
pub fn query(reader: &mut Reader, sql: &str, limit: Duration) -> Result<Table> {
    match reader {
        Reader::Local { conn, .. } => run(conn, sql, limit),
        Reader::Server(server) => server.sql(sql, limit),
    }
}

/// Which rows of a result to keep, and what stops a query early.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Rows to pass over first (a later page).
    pub skip: usize,
    /// Rows to keep at most; the rest are not read.
    pub cap: usize,
    pub time: Duration,
    /// Set by another thread to stop the query (a cancelled MCP call).
    pub stop: Option<Arc<AtomicBool>>,
    /// Read transcript text columns as NULL and refuse the full-text indexes (`pidx mcp`: an
    /// answer must not hold a secret, nor say where one is).
    pub hide_text: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            skip: 0,
            cap: usize::MAX,
            time: Duration::from_secs(30),
            stop: None,
            hide_text: false,
        }
    }
}

/// Runs `sql` read-only as [`run`] does within `limits`; the flag says whether rows followed
/// the kept ones.
///
/// # Errors
/// As [`run`].
pub fn run_capped(conn: &Connection, sql: &str, limits: &Limits) -> Result<(Table, bool)> {
    if sql.trim().trim_matches(';').trim().is_empty() {
        return Err(Error::Invalid(
            "empty query: give one SELECT statement (the views are v_sessions, v_entries, v_messages, v_usage, v_tool_calls, v_file_touches)".into(),
        ));
    }
    let started = Instant::now();
    let (limit, stop) = (limits.time, limits.stop.clone());
    let stopped = move || {
        started.elapsed() > limit || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    };
    conn.progress_handler(10_000, Some(stopped))?;
    if limits.hide_text {
        conn.authorizer(Some(authorize_hiding_text))?;
    } else {
        conn.authorizer(Some(authorize))?;
    }
    let result = run_authorized(conn, sql, limits.skip, limits.cap).map_err(|e| match e {
        Error::Refused(msg) if limits.hide_text => Error::Refused(format!("{msg}; here transcript text reads as NULL and the full-text tables (fts*, joints*, words*, impact_*) cannot be read: search_sessions and get_context show text, with secrets redacted")),
        Error::Interrupted => Error::TimeLimit {
            secs: limit.as_secs_f64(),
        },
        other => other,
    });
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>)?;
    conn.progress_handler(0, None::<fn() -> bool>)?;
    result
}

fn run_authorized(conn: &Connection, sql: &str, skip: usize, cap: usize) -> Result<(Table, bool)> {
    let refuse = |why: String| Error::Refused(format!("sql only runs read-only statements: {why}"));
    // An interrupt is the time limit or a cancelled call (`run_capped` says which); every other
    // failure is the statement's.
    let failed = |e: rusqlite::Error| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            Error::Interrupted
        }
        other => Error::Invalid(format!("SQL error: {other}")),
    };
    let mut stmt = conn.prepare(sql).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, Some(msg))
            if f.code == rusqlite::ErrorCode::AuthorizationForStatementDenied =>
        {
            refuse(format!("this statement would change something ({msg})"))
        }
        rusqlite::Error::MultipleStatement => refuse("give one statement at a time".into()),
        other => failed(other),
    })?;
    if !stmt.readonly() {
        return Err(refuse("this statement would change something".into()));
    }
    let columns: Vec<String> = stmt
        .column_names()
        .iter()
        .map(|c| (*c).to_string())
        .collect();
    let n = columns.len();
    let mut rows = Vec::new();
    let mut cursor = stmt.query([]).map_err(failed)?;
    let mut seen = 0usize;
    while let Some(row) = cursor.next().map_err(failed)? {
        seen += 1;
        if seen <= skip {
            continue;
        }
        if rows.len() == cap {
            return Ok((Table { columns, rows }, true));
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(match row.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(v) => v.into(),
                ValueRef::Real(v) => v.into(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                ValueRef::Blob(b) => b
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect::<String>()
                    .into(),
            });
        }
        rows.push(out);
    }
    Ok((Table { columns, rows }, false))
}
