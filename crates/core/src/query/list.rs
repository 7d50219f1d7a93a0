//! `list`: pi's `SessionInfo` rows (docs/pi-format.md §5.3) in pi's order (§5.4), read from the `sessions`
//! summary only. `--all` is `listAll()`; the default is `list(cwd)`, which reads the cwd's own
//! folder in a tree root (no header filtering, as pi) and filters flat roots by header cwd.

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use crate::pi::layout::{absolute, encode_cwd, Layout};
use crate::pi::rawjson::member;
use crate::query::Reader;
use crate::store::big;
use crate::store::filter::{int, text, Where};
use crate::store::schema::{ENTRY_TEXT, MODIFIED};
use crate::store::Scope;

pub use super::session_info::{GatewayInfo, SessionInfo};

/// Which sessions `list` shows.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `None` lists every project (`listAll`); `Some(cwd)` one project (`list(cwd)`).
    pub cwd: Option<String>,
    pub limit: Option<usize>,
    /// Include `allMessagesText`.
    pub with_text: bool,
}

/// Narrows a first page of `n` to the rows that can be on it, found through the
/// `sessions_listing_order` index instead of by sorting every row. Nearly every session is
/// modified when its last activity was; one whose last activity is below the `n`-th highest
/// has `n` sessions after it for sure, so it is left out. Sessions without activity (modified
/// by their header or file time) always stay candidates; ties at the bound stay too, and the
/// exact order is then sorted among the candidates.
fn page_candidates(w: &mut Where, n: usize, rows: &str) {
    let inner = w.clone();
    let offset = int(i64::try_from(n - 1).unwrap_or(i64::MAX));
    w.and_nested(
        &format!(
            "(s.last_activity_ms >= coalesce((SELECT s.last_activity_ms FROM {rows}
               WHERE {{}} AND s.last_activity_ms > 0
               ORDER BY s.last_activity_ms DESC LIMIT 1 OFFSET ?), 0)
          OR s.last_activity_ms IS NULL OR s.last_activity_ms <= 0)"
        ),
        &inner,
        [offset],
    );
}

/// Every session with its file.
const EVERY_SESSION: &str = "sessions s JOIN files f ON f.id = s.file_id";

/// The sessions of the project folders a `cwd_filter` of tree roots names (`f.dir = ?`), found
/// by folder: left to itself SQLite read every session through `sessions_listing_order` and
/// looked each file up (a project with no sessions: 12 ms of 17 for 10,000 sessions; its
/// page bound is 0, so every session was a candidate).
const BY_FOLDER: &str = "files f INDEXED BY files_by_dir CROSS JOIN sessions s ON s.file_id = f.id";

/// The rows a listing of `opts` reads (see [`BY_FOLDER`]).
fn rows_of(scope: &Scope, opts: &ListOptions) -> &'static str {
    let trees = scope.roots.iter().all(|r| r.layout == Layout::Tree);
    if opts.cwd.is_some() && !scope.roots.is_empty() && trees {
        BY_FOLDER
    } else {
        EVERY_SESSION
    }
}

/// The columns of a [`SessionInfo`] over `sessions s JOIN files f` (`modified` given apart).
const INFO: &str = "f.id, f.path, s.header, s.cwd, s.name, s.created_ms, {modified},
    s.message_count, s.first_message, s.first_message_line";

/// A [`SessionInfo`] from a row of [`INFO`].
fn info(conn: &Connection, r: &rusqlite::Row) -> rusqlite::Result<SessionInfo> {
    let header: Option<String> = r.get(2)?;
    let header = header.unwrap_or_default();
    let field =
        |k: &str| member(&header, k).and_then(|raw| serde_json::from_str::<Value>(raw).ok());
    Ok(SessionInfo {
        file_id: r.get(0)?,
        source: None,
        path: r.get(1)?,
        id: field("id"),
        cwd: r.get(3)?,
        name: r.get(4)?,
        parent_session_path: field("parentSession"),
        created_ms: r.get(5)?,
        modified_ms: r.get(6)?,
        message_count: r.get(7)?,
        first_message: match r.get::<_, Option<i64>>(9)? {
            // Huge: the session row holds its title only (migration 0015).
            Some(line) => big::first_message(conn, r.get(0)?, line)?.or(r.get(8)?),
            None => r.get(8)?,
        }
        .unwrap_or_else(|| "(no messages)".into()),
        all_messages_text: None,
        gateway: None,
    })
}

/// A page of the list: the order and the page come from narrow columns first
/// (`sessions_listing_order` covers them, migration 0010), and only the page's rows are read
/// whole: a session row carries its header and first message, so sorting whole rows read every
/// one of them (14 MB at 10k sessions) to print 50. Ties sort the same way in both steps.
fn page(
    conn: &Connection,
    w: &Where,
    rows: &str,
    order: &str,
    limit: &str,
) -> rusqlite::Result<Vec<SessionInfo>> {
    let sql = format!(
        "SELECT {}
         FROM (SELECT s.file_id AS id, {MODIFIED} AS modified
               FROM {rows}
               WHERE {}
               ORDER BY {order} {limit}) k
         JOIN sessions s ON s.file_id = k.id JOIN files f ON f.id = k.id
         ORDER BY {}",
        INFO.replace("{modified}", "k.modified"),
        w.sql(),
        order.replacen("modified", "k.modified", 1)
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(w.params(), |r| info(conn, r))?;
    rows.collect()
}

/// Every session of the list, read in table order and sorted here: a lookup of each row by its
/// place in the order (10,000 of them) took a third of `list --all`, and SQLite's sorter would
/// copy every whole row. `listAll()` (`all`) breaks ties of `modified` by the fractional mtime,
/// then both orders by the file name (pi's collation), descending.
fn every(
    conn: &Connection,
    w: &Where,
    rows: &str,
    all: bool,
) -> rusqlite::Result<Vec<SessionInfo>> {
    let sql = format!(
        "SELECT {}, f.mtime_ns, f.name FROM {rows} WHERE {}",
        INFO.replace("{modified}", MODIFIED),
        w.sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok((
            info(conn, r)?,
            r.get::<_, Option<i64>>(10)?,
            r.get::<_, String>(11)?,
        ))
    })?;
    // Room for every session up front, and the rows sorted by their places: growing the vector
    // and sorting whole rows moved 4 MB around, into fresh pages each time (page faults were a
    // quarter of `list --all --json`).
    let sessions: i64 = conn.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
    let mut found = Vec::with_capacity(usize::try_from(sessions).unwrap_or(0));
    for row in rows {
        found.push(row?);
    }
    let mut order: Vec<usize> = (0..found.len()).collect();
    order.sort_by(|&a, &b| {
        let ((a, a_ns, a_name), (b, b_ns, b_name)) = (&found[a], &found[b]);
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| {
                if all {
                    b_ns.cmp(a_ns)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| crate::pi::collate::compare(b_name, a_name))
    });
    let mut found: Vec<Option<SessionInfo>> =
        found.into_iter().map(|(info, _, _)| Some(info)).collect();
    Ok(order.into_iter().filter_map(|i| found[i].take()).collect())
}

/// Lists sessions as pi would.
///
/// # Errors
/// Index errors only.
pub fn list_sessions(
    conn: &Connection,
    scope: &Scope,
    opts: &ListOptions,
) -> rusqlite::Result<Vec<SessionInfo>> {
    let mut w = scope.filter();
    if opts.limit.is_some() {
        w.and("s.state = 1", []);
    } else {
        // Not through `sessions_listing_order`: its order is not the one wanted, and reading
        // whole rows in it is a seek each (41 against 19 ms for 10,000 sessions in file order).
        w.and("+s.state = 1", []);
    }
    if let Some(cwd) = &opts.cwd {
        cwd_filter(scope, cwd, &mut w);
    }
    let order = pi_order(opts);
    let rows = rows_of(scope, opts);
    let mut out = match opts.limit {
        Some(n) if n > 0 => {
            page_candidates(&mut w, n, rows);
            let limit = w.limit(Some(n));
            page(conn, &w, rows, order, limit)?
        }
        Some(_) => Vec::new(),
        None => every(conn, &w, rows, opts.cwd.is_none())?,
    };
    if scope.has_gateway() {
        for info in &mut out {
            add_gateway(conn, info, scope.include_silent)?;
        }
    }
    if opts.with_text {
        for info in &mut out {
            info.all_messages_text = Some(all_messages_text(conn, info.file_id)?);
        }
    }
    Ok(out)
}

/// pi's order of a listing over `sessions s JOIN files f`, by the alias `modified`.
fn pi_order(opts: &ListOptions) -> &'static str {
    match opts.cwd {
        // listAll(): pre-sorted by the fractional mtimeMs desc, then basename desc; the sort by
        // modified is stable.
        None => "modified DESC, f.mtime_ns DESC, f.name COLLATE pi DESC",
        // list(cwd): pre-sorted by file name desc.
        Some(_) => "modified DESC, f.name COLLATE pi DESC",
    }
}

/// A listing narrowed by what pidx keeps of each session beside pi's row (its figures,
/// `session_figures`) and ordered by them: the sessions page's own filters and orders.
#[derive(Debug, Clone, Default)]
pub struct Narrow {
    /// Only sessions whose most used model contains this, in any case (of ASCII letters:
    /// SQLite's `lower`; model names are ASCII).
    pub model: Option<String>,
    /// Only sessions modified at or after / before these (epoch ms).
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only sessions with a failed tool call.
    pub errors: bool,
    pub order: NarrowOrder,
}

/// The orders a [`Narrow`] offers; each keeps pi's order among equals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NarrowOrder {
    /// pi's order.
    #[default]
    Newest,
    /// pi's order reversed.
    Oldest,
    /// The most expensive first.
    Cost,
    /// The most messages first.
    Messages,
}

/// The sessions of the listing `opts` names (one project or every one; `limit` and
/// `with_text` are not used) that pass `narrow`, as file ids in its order, and how many the
/// listing holds before it. Reads narrow columns only, in one query: the page then reads its
/// own rows whole ([`sessions_by_id`]).
///
/// # Errors
/// Index errors only.
pub fn narrowed(
    conn: &Connection,
    scope: &Scope,
    opts: &ListOptions,
    narrow: &Narrow,
) -> rusqlite::Result<(Vec<i64>, usize)> {
    let rows = format!(
        "{} LEFT JOIN session_figures g ON g.file_id = s.file_id",
        rows_of(scope, opts)
    );
    let mut w = project_files(scope, opts.cwd.as_deref());
    w.and("+s.state = 1", []);
    let before: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM {rows} WHERE {}", w.sql()))?
        .query_row(w.params(), |r| r.get(0))?;
    if let Some(m) = narrow
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        w.and("instr(lower(g.model), ?) > 0", [text(m.to_lowercase())]);
    }
    if narrow.errors {
        w.and("g.tool_errors > 0", []);
    }
    if let Some(t) = narrow.since_ms {
        w.and(format!("{MODIFIED} >= ?"), [int(t)]);
    }
    if let Some(t) = narrow.until_ms {
        w.and(format!("{MODIFIED} < ?"), [int(t)]);
    }
    let pi = pi_order(opts);
    let order = match narrow.order {
        NarrowOrder::Newest => pi.to_string(),
        NarrowOrder::Oldest => pi.replace(" DESC", " ASC"),
        NarrowOrder::Cost => format!("coalesce(g.cost, 0) DESC, {pi}"),
        NarrowOrder::Messages => format!("s.message_count DESC, {pi}"),
    };
    let sql = format!(
        "SELECT s.file_id, {MODIFIED} AS modified FROM {rows} WHERE {} ORDER BY {order}",
        w.sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let ids = stmt.query_map(w.params(), |r| r.get(0))?;
    Ok((
        ids.collect::<rusqlite::Result<_>>()?,
        usize::try_from(before).unwrap_or(0),
    ))
}

/// The listing rows of the sessions `file_ids`, in that order (ids not listed are left out),
/// with their gateway metadata as [`list_sessions`] gives it, for showing their titles: a huge
/// first message is its first `huge::TITLE_CHARS` characters, as the session row keeps it,
/// not read whole from `big_texts` (100 MB to show a line of it).
///
/// # Errors
/// Index errors only.
pub fn sessions_by_id(
    conn: &Connection,
    scope: &Scope,
    file_ids: &[i64],
) -> rusqlite::Result<Vec<SessionInfo>> {
    let ids = serde_json::to_string(file_ids).unwrap_or_else(|_| "[]".into());
    let sql = format!(
        "SELECT {} FROM {EVERY_SESSION}
         WHERE s.file_id IN (SELECT value FROM json_each(?1)) AND s.state = 1",
        INFO.replace("{modified}", MODIFIED)
            .replace("s.first_message_line", "NULL")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut found: std::collections::HashMap<i64, SessionInfo> = stmt
        .query_map([ids], |r| info(conn, r).map(|s| (s.file_id, s)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out: Vec<SessionInfo> = file_ids.iter().filter_map(|id| found.remove(id)).collect();
    if scope.has_gateway() {
        for info in &mut out {
            add_gateway(conn, info, scope.include_silent)?;
        }
    }
    Ok(out)
}

/// `pidx list`'s rows from the local index or the team server: pi's listing, filtered and
/// ordered as pi's `/resume` picker does for typed text when `query` is given (then `limit`
/// applies after ordering), with every text redacted when `redact` (locally before the query
/// ranks the rows: a redacted listing is not found by a secret either). Also how many rows
/// there were before the query.
///
/// # Errors
/// Index or server errors.
pub fn listing(
    reader: &mut Reader,
    opts: &ListOptions,
    query: Option<&str>,
    redact: bool,
) -> crate::Result<(Vec<SessionInfo>, usize)> {
    let (mut sessions, before) = match reader {
        Reader::Local { conn, scope, .. } => {
            let every = ListOptions {
                limit: opts.limit.filter(|_| query.is_none()),
                with_text: opts.with_text || query.is_some(),
                ..opts.clone()
            };
            let mut sessions = list_sessions(conn, scope, &every)?;
            if redact {
                sessions.iter_mut().for_each(redacted);
            }
            let before = sessions.len();
            if let Some(q) = query {
                sessions = crate::query::picker::filter_and_sort(sessions, q);
                if let Some(n) = opts.limit {
                    sessions.truncate(n);
                }
                if !opts.with_text {
                    sessions.iter_mut().for_each(|s| s.all_messages_text = None);
                }
            }
            return Ok((sessions, before));
        }
        Reader::Server(server) => {
            server.list(opts.cwd.as_deref(), query, opts.limit, opts.with_text)?
        }
    };
    if redact {
        sessions.iter_mut().for_each(redacted);
    }
    Ok((sessions, before))
}

/// A listing row with its texts' secrets redacted (before a table cuts them to width).
pub fn redacted(s: &mut SessionInfo) {
    fn clean(t: &str) -> String {
        crate::redact::redact(t).into_owned()
    }
    s.first_message = clean(&s.first_message);
    s.name = s.name.as_deref().map(clean);
    s.all_messages_text = s.all_messages_text.as_deref().map(clean);
}

/// A project of the listing: its cwd, how many sessions it has and its newest `modified`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectCount {
    pub cwd: String,
    pub sessions: i64,
    pub modified_ms: i64,
}

/// Every project the listing holds (the sessions `list_sessions` lists, grouped by cwd), newest
/// first: what a front door shows before a project is chosen, read from narrow columns without
/// building a whole row of every session (`pidx serve`'s first page).
///
/// # Errors
/// Index errors only.
pub fn projects(conn: &Connection, scope: &Scope) -> rusqlite::Result<Vec<ProjectCount>> {
    let mut w = scope.filter();
    w.and("+s.state = 1", []);
    let sql = format!(
        "SELECT s.cwd, count(*), max({MODIFIED}) FROM {EVERY_SESSION} WHERE {}
         GROUP BY s.cwd ORDER BY 3 DESC, 1",
        w.sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok(ProjectCount {
            cwd: r.get(0)?,
            sessions: r.get(1)?,
            modified_ms: r.get(2)?,
        })
    })?;
    rows.collect()
}

/// Whether some listed session's `modified` is later than its file's mtime (times set back,
/// or messages stamped ahead of the file system's clock): then mtimes do not bound `modified`
/// in this index, and a first page cannot be told from the newest files alone.
pub fn modified_after_mtime(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM sessions s JOIN files f ON f.id = s.file_id
                            WHERE s.state = 1 AND {MODIFIED} > f.mtime_ms)"
        ),
        [],
        |r| r.get(0),
    )
}

/// Fills in a gateway transcript's key metadata and, unless `include_silent`, takes its first
/// message from the first user message outside a silent (`NO_REPLY`) turn.
pub fn add_gateway(
    conn: &Connection,
    info: &mut SessionInfo,
    include_silent: bool,
) -> rusqlite::Result<()> {
    let row = conn
        .prepare_cached(
            "SELECT agent_id, session_key, current, channel, chat_type, peer, display_name,
                    subject, thread_id,
                    EXISTS (SELECT 1 FROM files f JOIN oc_deleted d ON d.dir = f.dir
                            AND d.name = f.name WHERE f.id = ?1)
             FROM gw_files WHERE file_id = ?1",
        )?
        .query_row([info.file_id], |r| {
            Ok(GatewayInfo {
                agent_id: r.get(0)?,
                session_key: r.get(1)?,
                current: r.get::<_, Option<i64>>(2)?.map(|c| c == 1),
                channel: r.get(3)?,
                chat_type: r.get(4)?,
                peer: r.get(5)?,
                display_name: r.get(6)?,
                subject: r.get(7)?,
                thread_id: r.get(8)?,
                deleted: r.get(9)?,
            })
        });
    match row {
        Ok(g) => info.gateway = Some(Box::new(g)),
        Err(rusqlite::Error::QueryReturnedNoRows) => return Ok(()),
        Err(e) => return Err(e),
    }
    if include_silent {
        return Ok(());
    }
    let first_silent: Option<i64> = conn
        .prepare_cached("SELECT min(seq) FROM entries WHERE file_id = ?1 AND silent = 1")?
        .query_row([info.file_id], |r| r.get(0))?;
    if first_silent.is_some() {
        let first: Option<String> = conn
            .prepare_cached(&format!(
                "SELECT {ENTRY_TEXT} AS t FROM entries e
                     WHERE file_id = ?1 AND type = 'message' AND role = 'user' AND silent = 0
                       AND t <> ''
                     ORDER BY seq LIMIT 1"
            ))?
            .query_row([info.file_id], |r| r.get(0))
            .optional()?;
        info.first_message = first.unwrap_or_else(|| "(no messages)".into());
    }
    Ok(())
}

/// The files a command covers over `files f` (and `sessions s`): those in `scope` and, with a
/// `cwd`, in that project ([`cwd_filter`]).
pub(crate) fn project_files(scope: &Scope, cwd: Option<&str>) -> Where {
    let mut w = scope.filter();
    if let Some(cwd) = cwd {
        cwd_filter(scope, cwd, &mut w);
    }
    w
}

/// `list(cwd)`: the cwd's folder in tree roots; header cwd equality in flat roots.
pub(crate) fn cwd_filter(scope: &Scope, cwd: &str, w: &mut Where) {
    // pi resolves the cwd first (`path.resolve`: absolute, no trailing separator).
    let resolved = absolute(std::path::Path::new(cwd));
    let cwd: &str = &resolved.to_string_lossy();
    let mut parts = Vec::new();
    let mut values = Vec::new();
    for root in &scope.roots {
        let path = |p: &std::path::Path| text(p.to_string_lossy());
        match root.layout {
            Layout::Tree => {
                parts.push("f.dir = ?");
                values.push(path(&root.path.join(encode_cwd(cwd))));
            }
            Layout::Gateway => {
                let mut agents = root.path.join("agents").to_string_lossy().into_owned();
                agents.push('/');
                parts.push("(instr(f.dir, ?) = 1 AND s.cwd = ?)");
                values.extend([text(agents), text(cwd)]);
            }
            Layout::Flat | Layout::Agent => {
                parts.push("(f.dir = ? AND s.cwd = ?)");
                values.extend([path(&root.path), text(cwd)]);
            }
        }
    }
    if parts.is_empty() {
        w.and("0", []);
    } else {
        w.and(format!("({})", parts.join(" OR ")), values);
    }
}

/// pi's `allMessagesText`: every user/assistant text of the file, all branches, joined by a
/// space, in line order. The two sources (entries' texts, and the texts only pi's listing reads)
/// are each read in line order and merged here, row by row into one string: a single SQL
/// `group_concat(... ORDER BY line)` sorted and held the text several times over (228 MB peak
/// for a session with 50 MB of text).
pub fn all_messages_text(conn: &Connection, file_id: i64) -> rusqlite::Result<String> {
    // A huge text (`big_texts`) is appended straight from its blob, not read into a value.
    let mut entries = conn.prepare_cached(
        "SELECT e.line, e.text, e.rid FROM entries e LEFT JOIN big_texts b ON b.id = -e.rid
         WHERE e.file_id = ?1 AND (e.text IS NOT NULL OR b.id IS NOT NULL) ORDER BY e.seq",
    )?;
    let mut listing = conn
        .prepare_cached("SELECT line, text FROM listing_text WHERE file_id = ?1 ORDER BY line")?;
    let mut a = entries.query([file_id])?;
    let mut b = listing.query([file_id])?;
    let mut out = Vec::new();
    let (mut ra, mut rb) = (a.next()?, b.next()?);
    loop {
        let row = match (ra, rb) {
            (None, None) => break,
            (Some(x), Some(y)) if x.get::<_, i64>(0)? <= y.get::<_, i64>(0)? => x,
            (Some(x), None) => x,
            (_, Some(y)) => y,
        };
        if !out.is_empty() {
            out.push(b' ');
        }
        match row.get_ref(1)?.as_str_or_null()? {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            None => {
                big::append_entry_text(conn, row.get(2)?, &mut out)?;
            }
        }
        if ra.is_some_and(|x| std::ptr::eq(x, row)) {
            ra = a.next()?;
        } else {
            rb = b.next()?;
        }
    }
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()))
}
