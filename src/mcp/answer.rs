//! What each tool answers, synchronously, from one read-only connection: arguments checked
//! (each problem one sentence), the `query` function the CLI command calls, and the result cut
//! to the call's budget with a cursor. `get_context` lives in `context`.

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rusqlite::Connection;
use serde_json::{json, Map, Value};

use super::args::{ListArgs, SearchArgs, SessionArgs, SqlArgs, StatsArgs, TreeArgs};
use super::page::{budget, fill_rows, row_offset};
use super::segments::Nodes;
use crate::pi::layout::absolute;
use crate::pi::text::TextKind;
use crate::query::resolve::{self, Resolved};
use crate::query::search::{self, SearchOptions};
use crate::query::stats::{self, StatsOptions};
use crate::query::{list, picker, shape, show, sql, tree, Reader};
use crate::store::Scope;

/// One call's view of the index: the local one, or the team server's (`pidx --pg URL mcp`),
/// read through the same `query::Reader` entry points as the CLI.
pub struct Call<'a> {
    reader: RefCell<Reader<'a>>,
    /// Set when the call is cancelled or runs out of time.
    pub stop: &'a AtomicBool,
}

/// A library error as one line (candidates of an ambiguous id joined on it).
pub fn sentence(e: impl std::fmt::Display) -> String {
    e.to_string().lines().collect::<Vec<_>>().join(", ")
}

impl<'a> Call<'a> {
    pub fn new(reader: Reader<'a>, stop: &'a AtomicBool) -> Call<'a> {
        Call {
            reader: RefCell::new(reader),
            stop,
        }
    }

    /// Ends the call's read (on the team server, its read-only transaction).
    pub fn finish(self) -> Result<(), String> {
        self.reader.into_inner().finish().map_err(sentence)
    }

    /// Asks the index, local or the team server's, through a `query` entry point.
    pub fn ask<T>(&self, f: impl FnOnce(&mut Reader) -> crate::Result<T>) -> crate::Result<T> {
        f(&mut self.reader.borrow_mut())
    }

    /// [`Call::ask`], its error one sentence.
    pub fn read<T>(&self, f: impl FnOnce(&mut Reader) -> crate::Result<T>) -> Result<T, String> {
        self.ask(f).map_err(sentence)
    }

    /// The local index and its scope, unless the call reads the team server.
    pub fn index(&self) -> Option<(&'a Connection, Scope)> {
        match &*self.reader.borrow() {
            Reader::Local { conn, scope, .. } => Some((*conn, scope.clone())),
            Reader::Server(_) => None,
        }
    }

    /// [`Call::index`] for a tool that reads only this machine's index (`tool`, saying what it
    /// reads): on the team server, one sentence.
    pub fn local(&self, tool: &str, reads: &str) -> Result<(&'a Connection, Scope), String> {
        self.index().ok_or_else(|| format!(
            "{tool} reads {reads}, which the team server does not hold: run it on the machine whose sessions it asks about (pidx mcp without --pg)"
        ))
    }

    pub fn is_server(&self) -> bool {
        self.reader.borrow().is_server()
    }
}

/// A tool's answer, or one sentence saying why there is none.
pub type Answer = Result<Value, String>;

impl Call<'_> {
    /// The session a caller means, or a sentence saying which handles are accepted.
    pub fn session(&self, arg: &str) -> Result<Resolved, String> {
        resolve::resolve(&mut self.reader.borrow_mut(), arg).map_err(|e| match e {
            crate::Error::NotFound(_) => format!(
                "no indexed session matches {arg:?}: give a session file path, a full session id or a unique id prefix (list_sessions and search_sessions show them)"
            ),
            other => sentence(other),
        })
    }
}

pub(super) fn in_range(
    what: &str,
    v: Option<usize>,
    default: usize,
    max: usize,
) -> Result<usize, String> {
    let n = v.unwrap_or(default);
    if (1..=max).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{what} must be between 1 and {max}"))
    }
}

/// The common tail of a paged answer: cursor, truncation and notes.
pub(super) fn finish(mut body: Map<String, Value>, next: Option<String>, cut: usize) -> Value {
    let mut notes = Vec::new();
    if next.is_some() {
        notes.push("more results: call again with cursor set to nextCursor".to_string());
    }
    if cut > 0 {
        notes.push(format!(
            "{cut} long text field(s) were cut to fit max_chars; they end in a '… more characters cut]' marker"
        ));
    }
    body.insert("truncated".into(), (next.is_some() || cut > 0).into());
    body.insert("nextCursor".into(), next.into());
    body.insert("notes".into(), notes.into());
    Value::Object(body)
}

fn project(cwd: Option<&str>) -> Option<String> {
    cwd.map(|d| {
        absolute(std::path::Path::new(d))
            .to_string_lossy()
            .into_owned()
    })
}

pub fn search_sessions(c: &Call, a: SearchArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    let limit = in_range("limit", a.limit, 20, 500)?;
    let offset = row_offset(a.cursor.as_deref(), "search_sessions")?;
    if a.literal && a.regex {
        return Err("literal and regex cannot both be set: choose one".into());
    }
    let text = if a.regex {
        format!("re:{}", a.query)
    } else {
        a.query.clone()
    };
    let query = search::parse(&text, a.literal).map_err(sentence)?;
    let kinds = a
        .kinds
        .iter()
        .flatten()
        .map(|k| {
            TextKind::parse(k.trim()).ok_or_else(|| {
                format!("kinds: {k:?} is not a kind of text (user, assistant, thinking, tool, bash, custom, summary, name)")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let now = chrono::Utc::now().timestamp_millis();
    let (since_ms, until_ms) =
        crate::app::dates::date_range(a.since.as_deref(), a.until.as_deref(), now)
            .map_err(sentence)?;
    let file_id = match &a.session {
        Some(s) => Some(c.session(s)?.file_id),
        None => None,
    };
    let opts = SearchOptions {
        query,
        cwd: project(a.cwd.as_deref()),
        file_id,
        since_ms,
        until_ms,
        model: a.model.clone(),
        kinds,
        branch: a.branch_only,
        limit,
        redact: true,
    };
    // Every page runs the same search (the top `limit` hits, grouped by session) and skips
    // what earlier pages gave: a larger limit would rank and group a different set.
    let (hits, explain) = match by_meaning(c, &opts, &a)? {
        Some(hits) => (hits, None),
        None => c.read(|r| {
            // The local scope's own choice (gateway housekeeping turns hidden); the server's
            // rows carry the same flag.
            let silent = matches!(r, Reader::Local { scope, .. } if scope.include_silent);
            search::run(r, &opts, silent, c.stop)
        })?,
    };
    let total = hits.len();
    let rows = hits
        .iter()
        .skip(offset)
        .map(|h| serde_json::to_value(h).unwrap_or(Value::Null));
    let page = fill_rows(rows, budget);
    let next = page
        .left
        .then(|| format!("search_sessions:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("hitCount".into(), page.rows.len().into());
    body.insert("totalHits".into(), total.into());
    body.insert("sessions".into(), group_hits(page.rows).into());
    let mut v = finish(body, next, page.cut_strings);
    if let Some(Value::Array(notes)) = v.get_mut("notes") {
        if total == limit {
            notes.push(format!("these are the best {limit} hits; there may be more: raise limit (at most 500) or narrow the search").into());
        }
        if explain
            .as_ref()
            .is_some_and(search::Explain::scanned_everything)
        {
            notes.push("no word of the index narrows this query, so every text was read, which is slow on a large index: add a literal word to the pattern, or narrow with session, cwd or since".into());
        }
    }
    Ok(v)
}

/// Hits ranked by meaning (`meaning: true`) or fused (a words query when the index holds
/// vectors of the configured model); `None` when words alone rank. The choice is the CLI's and
/// the web page's (`app::meaning::ranked_by`); only the wording of a misuse is the tool's.
fn by_meaning(
    c: &Call,
    opts: &SearchOptions,
    a: &SearchArgs,
) -> Result<Option<Vec<search::Hit>>, String> {
    if a.meaning && !matches!(opts.query, search::Query::Words { .. }) {
        return Err("meaning ranks words by meaning: leave out literal and regex".into());
    }
    let how = crate::app::meaning::Ranking {
        text: &a.query,
        meaning: a.meaning,
        words_only: false,
        model: None,
        quiet: false,
        typing: false,
    };
    let mut reader = c.reader.borrow_mut();
    let silent = matches!(&*reader, Reader::Local { scope, .. } if scope.include_silent);
    crate::app::meaning::ranked_by(&mut reader, opts, silent, &how, c.stop)
        .map(|r| r.map(|(hits, _)| hits))
        .map_err(|e| format!("{e:#}"))
}

/// Hits grouped by session in the order sessions first appear (the search ranks a session's
/// hits together, best session first).
fn group_hits(hits: Vec<Value>) -> Vec<Value> {
    const SESSION_KEYS: [&str; 4] = ["path", "sessionId", "cwd", "sessionName"];
    let mut groups: Vec<Value> = Vec::new();
    for hit in hits {
        let Value::Object(mut h) = hit else { continue };
        let mut head = Map::new();
        for k in SESSION_KEYS {
            head.insert(k.into(), h.shift_remove(k).unwrap_or(Value::Null));
        }
        match groups.last_mut() {
            Some(g) if g["path"] == head["path"] => {
                if let Some(Value::Array(list)) = g.get_mut("hits") {
                    list.push(Value::Object(h));
                }
            }
            _ => {
                head.insert("hits".into(), vec![Value::Object(h)].into());
                groups.push(Value::Object(head));
            }
        }
    }
    groups
}

pub fn list_sessions(c: &Call, a: ListArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    let limit = in_range("limit", a.limit, 50, 500)?;
    let offset = row_offset(a.cursor.as_deref(), "list_sessions")?;
    if a.all && a.cwd.is_some() {
        return Err("all and cwd cannot both be set: choose one".into());
    }
    let cwd = match (&a.cwd, a.all) {
        (_, true) => None,
        (Some(d), false) => project(Some(d)),
        (None, false) => Some(
            std::env::current_dir()
                .map_err(|e| format!("cannot read the server's folder ({e}); pass cwd or all"))?
                .to_string_lossy()
                .into_owned(),
        ),
    };
    let opts = list::ListOptions {
        cwd: cwd.clone(),
        limit: a.query.is_none().then_some(offset + limit + 1),
        with_text: false,
    };
    let sessions = match c.index() {
        Some((conn, scope)) => list_local(c, conn, &scope, &opts, a.query.as_deref())?,
        None => {
            // The server filters and orders as pi's picker, and keeps the page's rows only.
            let opts = list::ListOptions {
                limit: Some(offset + limit + 1),
                ..opts
            };
            c.read(|r| list::listing(r, &opts, a.query.as_deref(), true))?
                .0
        }
    };
    let more = sessions.len() > offset + limit;
    let rows = sessions
        .iter()
        .skip(offset)
        .take(limit)
        .map(|s| s.to_json());
    let page = fill_rows(rows, budget);
    let next = (more || page.left).then(|| format!("list_sessions:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("project".into(), cwd.into());
    body.insert("sessions".into(), page.rows.into());
    Ok(finish(body, next, page.cut_strings))
}

/// The local listing, ordered as pi's picker for `query` with each session's text read,
/// redacted and scored one at a time (dropped once scored).
fn list_local(
    c: &Call,
    conn: &Connection,
    scope: &Scope,
    opts: &list::ListOptions,
    query: Option<&str>,
) -> Result<Vec<list::SessionInfo>, String> {
    let mut sessions = list::list_sessions(conn, scope, opts).map_err(sentence)?;
    if let Some(q) = query {
        let order = picker::rank_streamed(&sessions, q, |s| {
            if c.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(crate::Error::Invalid("stopped".into()));
            }
            let text = list::all_messages_text(conn, s.file_id)?;
            Ok(crate::redact::redact(&text).into_owned())
        })
        .map_err(sentence)?;
        let mut slots: Vec<Option<list::SessionInfo>> = sessions.into_iter().map(Some).collect();
        sessions = order.into_iter().filter_map(|i| slots[i].take()).collect();
    }
    Ok(sessions)
}

pub fn get_session(c: &Call, a: SessionArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    if a.cursor.is_some() {
        return Err("get_session answers in one page; call it without a cursor".into());
    }
    let session = c.session(&a.session)?;
    let detail = c.read(|r| show::show(r, &session))?;
    let mut v = serde_json::to_value(&detail).map_err(sentence)?;
    // As `pidx show --json`: the commits its edits ended up in, from the local index's file
    // touches (the team server holds none; a repository that cannot be read costs the list,
    // not the answer).
    let commits = match c.index() {
        Some((conn, _)) => {
            crate::query::files::commits::of_session(conn, session.file_id, &detail.cwd)
                .unwrap_or_default()
        }
        None => Vec::new(),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "commits".into(),
            serde_json::to_value(&commits).map_err(sentence)?,
        );
    }
    let mut notes: Vec<String> = Vec::new();
    for (key, keep) in [("badLines", 20), ("labels", 100)] {
        if serde_json::to_string(&v).map_or(0, |s| s.len()) <= budget {
            break;
        }
        if let Some(Value::Array(list)) = v.get_mut(key) {
            if list.len() > keep {
                notes.push(format!(
                    "{key}: the first {keep} of {} are shown (sql_query reads them all)",
                    list.len()
                ));
                list.truncate(keep);
            }
        }
    }
    let page = fill_rows([v], budget);
    let mut v = page.rows.into_iter().next().unwrap_or(Value::Null);
    if page.cut_strings > 0 {
        notes.push(format!(
            "{} long text field(s) were cut to fit max_chars",
            page.cut_strings
        ));
    }
    if let Value::Object(m) = &mut v {
        m.insert("truncated".into(), (!notes.is_empty()).into());
        m.insert("notes".into(), notes.into());
    }
    Ok(v)
}

pub fn get_tree(c: &Call, a: TreeArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    let limit = in_range("limit", a.limit, 200, 2000)?;
    let offset = row_offset(a.cursor.as_deref(), "get_tree")?;
    let session = c.session(&a.session)?;
    // Locally the shape only: no node ids or text (both are read for this page's segments);
    // the team server sends its tree whole.
    let held: tree::Tree;
    let (t, nodes) = match c.index() {
        Some((conn, _)) => (
            shape::build_shape(conn, &session).map_err(sentence)?,
            Nodes::Index {
                conn,
                file_id: session.file_id,
            },
        ),
        None => {
            held = c.read(|r| tree::tree(r, &session))?;
            (shape::Shape::of_tree(&held), Nodes::Tree(&held))
        }
    };
    if t.unopenable {
        return Err(format!(
            "pi cannot open {} (its first JSON line is not a session header with an id), so it has no tree; get_session says more",
            session.path
        ));
    }
    let leaf = match t.leaf {
        Some(i) => nodes.id(&t, i).map_err(sentence)?,
        None => None,
    };
    let all = super::segments::segments(&t);
    let total = all.len();
    let rows = all
        .iter()
        .skip(offset)
        .take(limit)
        .map(|g| g.to_json(&nodes, &t))
        .collect::<crate::Result<Vec<_>>>()
        .map_err(sentence)?;
    let page = fill_rows(rows, budget);
    let more = total > offset + page.rows.len();
    let next = more.then(|| format!("get_tree:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("path".into(), session.path.into());
    body.insert("entries".into(), t.len().into());
    body.insert("leaf".into(), leaf.into());
    body.insert("segmentCount".into(), total.into());
    body.insert("segments".into(), page.rows.into());
    Ok(finish(body, next, page.cut_strings))
}

pub fn usage_stats(c: &Call, a: StatsArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    let offset = row_offset(a.cursor.as_deref(), "usage_stats")?;
    let dims =
        a.by.iter()
            .flatten()
            .map(|d| stats::parse_dim(d.trim(), c.is_server()))
            .collect::<crate::Result<Vec<_>>>()
            .map_err(sentence)?;
    // As `pidx --pg URL stats`: the team server cannot know this machine's zone, so its
    // periods are UTC's unless `tz` names one.
    let zone = match &a.tz {
        None if c.is_server() => stats::Zone::Named(chrono_tz::UTC),
        tz => crate::app::dates::zone_arg(tz.as_deref()).map_err(sentence)?,
    };
    let now = chrono::Utc::now().timestamp_millis();
    let (since_ms, until_ms) =
        crate::app::dates::date_range(a.since.as_deref(), a.until.as_deref(), now)
            .map_err(sentence)?;
    let opts = StatsOptions {
        dims,
        since_ms,
        until_ms,
        cwd: project(a.cwd.as_deref()),
        zone,
    };
    let rows = c.read(|r| stats::figures(r, &opts))?;
    let total = rows.len();
    let values = rows
        .iter()
        .skip(offset)
        .map(|r| serde_json::to_value(r).unwrap_or(Value::Null));
    let page = fill_rows(values, budget);
    let next = page
        .left
        .then(|| format!("usage_stats:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("groups".into(), total.into());
    body.insert("rows".into(), page.rows.into());
    Ok(finish(body, next, page.cut_strings))
}

pub fn sql_query(c: &Call, a: SqlArgs, stop: &Arc<AtomicBool>) -> Answer {
    let budget = budget(a.max_chars)?;
    let max_rows = in_range("max_rows", a.max_rows, 100, 1000)?;
    let offset = row_offset(a.cursor.as_deref(), "sql_query")?;
    let limits = sql::Limits {
        skip: offset,
        cap: max_rows,
        time: super::TIME_LIMIT,
        stop: Some(Arc::clone(stop)),
        hide_text: true,
    };
    // The team server's SQL cannot read transcript text as NULL as the local one does, so an
    // agent's query there could carry secrets out unredacted in any column it builds.
    let (conn, _) = c.local("sql_query", "the local index").map_err(|_| {
        "sql_query is not offered over the team server: its SQL cannot hide transcript text (the local one reads it as NULL); use the other tools, or `pidx --pg URL sql` yourself".to_string()
    })?;
    let (table, more) = sql::run_capped(conn, &a.query, &limits).map_err(sentence)?;
    let rows = table
        .rows
        .into_iter()
        .map(|r| Value::Object(table.columns.iter().cloned().zip(r).collect::<Map<_, _>>()));
    let page = fill_rows(rows, budget);
    let next = (more || page.left).then(|| format!("sql_query:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("columns".into(), json!(table.columns));
    body.insert("rows".into(), page.rows.into());
    Ok(finish(body, next, page.cut_strings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_group_by_session_in_rank_order() {
        let hit = |p: &str, e: &str| json!({"path": p, "sessionId": p, "cwd": "/w", "sessionName": null, "entryId": e});
        let groups = group_hits(vec![hit("a", "1"), hit("a", "2"), hit("b", "3")]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0]["hits"].as_array().unwrap().len(), 2);
        assert_eq!(groups[1]["hits"][0], json!({"entryId": "3"}));
    }

    #[test]
    fn page_envelope_says_what_was_cut() {
        let v = finish(Map::new(), Some("x:1".into()), 0);
        assert_eq!(v["truncated"], json!(true));
        assert_eq!(v["nextCursor"], json!("x:1"));
        let done = finish(Map::new(), None, 0);
        assert_eq!(done["truncated"], json!(false));
    }
}
