//! What the team server's halves of the queries share: pi's `modified` over the server's rows
//! and its conditions over `sessions s`, bound as every query binds them (`store::filter::Where`,
//! numbered for PostgreSQL by `Where::pg_sql`).

use pidx_core::query::resolve::Resolved;
use pidx_core::store::filter::{text, Where};

/// pi's `modified` over the server's `sessions s` (as `store::schema::MODIFIED`).
pub const MODIFIED: &str = "CASE WHEN s.last_activity_ms > 0 THEN s.last_activity_ms
                              WHEN s.header_ts_ms IS NOT NULL THEN s.header_ts_ms
                              ELSE s.mtime_ms END";

/// A session on the server: (source, fid), its key there.
///
/// # Panics
/// For a session of the local index (no source): a server query was given a local session.
pub fn key(s: &Resolved) -> (&str, i64) {
    let source = s
        .source
        .as_deref()
        .expect("a session on the team server has a source");
    (source, s.file_id)
}

/// Only `source`'s sessions, when one is given.
pub fn source(source: Option<&str>) -> Where {
    let mut w = Where::default();
    if let Some(s) = source {
        w.and("s.source = ?", [text(s)]);
    }
    w
}

/// pi's `list(cwd)` rule over the server's rows: the cwd's folder in tree roots, header cwd
/// equality elsewhere (as `query::list::cwd_filter`).
pub fn cwd(w: &mut Where, cwd: &str) {
    let resolved = pidx_core::pi::layout::absolute(std::path::Path::new(cwd));
    let cwd = resolved.to_string_lossy().into_owned();
    let folder = pidx_core::pi::layout::encode_cwd(&cwd);
    w.and(
        "((s.layout = 'tree' AND s.dir = s.root || '/' || ?)
          OR (s.layout = 'gateway' AND starts_with(s.dir, s.root || '/agents/') AND s.cwd = ?)
          OR (s.layout NOT IN ('tree', 'gateway') AND s.dir = s.root AND s.cwd = ?))",
        [text(folder), text(cwd.clone()), text(cwd)],
    );
}

/// Whether the reader is a limited one (`team add-member --reads`, `--reads-project`): its
/// row-level policies keep rows from it, so the ways that read every row of a table it may
/// not see whole are not open to it.
///
/// # Errors
/// Server errors.
pub fn read_limited(tx: &mut postgres::Transaction) -> pidx_core::error::Result<bool> {
    Ok(crate::pg::typed::query_one(tx, "SELECT pidx_read_limited(current_user)", &[])?.get(0))
}

/// `w`'s values to bind on PostgreSQL, in placeholder order (`Where::pg_sql` numbers them),
/// for a statement prepared first (`pg::typed::where_params` for one sent with their types).
pub fn params(w: &Where) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    crate::pg::typed::where_params(w, &[])
        .into_iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect()
}
