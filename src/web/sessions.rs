//! The sessions page: every project with its session count, newest first; one project's
//! sessions (or every project's, `all=1`) in pi's order, filtered and ordered as `list --query`
//! (pi's `/resume` picker) as the user types. Gateway transcripts show their agent and channel.

use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup};
use serde::Deserialize;

use super::page::{self, enc, Nav};
use super::{blocking, App, Ctx, Fail};
use crate::query::list::{self, ListOptions, Narrow, NarrowOrder};
use crate::query::per_session::{self, SessionFigures};
use crate::query::picker::Typed;
use crate::query::{handle, picker, Reader, TeamReads};

/// Rows a page shows; typing narrows the rest.
const ROWS: usize = 300;

#[derive(Deserialize, Default)]
pub struct ListQuery {
    project: Option<String>,
    #[serde(default)]
    all: bool,
    #[serde(default)]
    q: String,
    /// One machine of the team server.
    source: Option<String>,
    /// Only sessions whose most used model contains this (any case).
    model: Option<String>,
    /// Only sessions modified on or after / before the end of this day (`YYYY-MM-DD`, local).
    since: Option<String>,
    until: Option<String>,
    /// Only sessions with a failed tool call.
    #[serde(default)]
    errors: bool,
    /// `cost`, `messages` or `oldest` (default: pi's order, newest first).
    sort: Option<String>,
    frag: Option<String>,
}

impl ListQuery {
    /// Whether a filter or order of this page's own (beyond pi's picker) is asked for: then the
    /// whole listing is read and each row's figures with it.
    fn narrowed(&self) -> bool {
        let set = |o: &Option<String>| o.as_deref().is_some_and(|s| !s.trim().is_empty());
        set(&self.model) || set(&self.since) || set(&self.until) || self.errors || set(&self.sort)
    }
}

/// The orders the page offers (`sort=`).
const SORTS: [(&str, &str); 4] = [
    ("", "newest"),
    ("oldest", "oldest"),
    ("cost", "cost"),
    ("messages", "messages"),
];

/// Epoch ms of local midnight starting `day` (`YYYY-MM-DD`), `days` later.
fn local_day(day: &str, days: i64) -> Result<Option<i64>, Fail> {
    let day = day.trim();
    if day.is_empty() {
        return Ok(None);
    }
    let d = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|_| Fail::Bad(format!("{day:?} is not a day (YYYY-MM-DD)")))?
        + chrono::Duration::days(days);
    let t = d
        .and_hms_opt(0, 0, 0)
        .and_then(|t| t.and_local_timezone(chrono::Local).earliest())
        .ok_or_else(|| Fail::Bad(format!("{day:?} has no midnight here")))?;
    Ok(Some(t.timestamp_millis()))
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<ListQuery>,
) -> Result<Html<String>, Fail> {
    let source = q.source.clone().filter(|s| !s.is_empty());
    let kept = Arc::clone(&app);
    blocking(&app, source, move |ctx, reader| {
        if q.project.is_none() && !q.all && q.q.trim().is_empty() {
            return projects(ctx, reader, q.source.as_deref());
        }
        let rows = sessions(ctx, reader, &q, &kept.typed)?;
        if q.q.trim().is_empty() {
            super::index::warm_typed(&kept);
        }
        if q.frag.is_some() {
            return Ok(Html(rows.into_string()));
        }
        let heading = match &q.project {
            Some(p) => ctx.clean(p).into_owned(),
            None => "every project".into(),
        };
        Ok(page::layout(
            "sessions",
            Nav::Top("sessions"),
            html! {
                h1 { (heading) @if let Some(s) = &q.source { " · " (ctx.clean(s)) } }
                form.filter method="get" action="/" {
                    @if let Some(p) = &q.project { input type="hidden" name="project" value=(p); }
                    @if q.project.is_none() { input type="hidden" name="all" value="true"; }
                    @if let Some(s) = &q.source { input type="hidden" name="source" value=(s); }
                    input #filter type="search" name="q" value=(q.q) placeholder="filter: words, \"phrases\", re:REGEX (press /)" autocomplete="off";
                    input #model type="search" name="model" value=(q.model.as_deref().unwrap_or_default()) placeholder="model" aria-label="model" autocomplete="off";
                    label { "from " input #since type="date" name="since" value=(q.since.as_deref().unwrap_or_default()); }
                    label { "to " input #until type="date" name="until" value=(q.until.as_deref().unwrap_or_default()); }
                    label { input #errors type="checkbox" name="errors" value="true" checked[q.errors]; " failed tool calls" }
                    select #sort name="sort" aria-label="order" {
                        @for (v, label) in SORTS { option value=(v) selected[q.sort.as_deref().unwrap_or_default() == v] { (label) } }
                    }
                    button type="submit" { "filter" }
                }
                div.panes {
                    div #rows { (rows) }
                    // Wide screens open a session here, beside the list (app.js).
                    section #pane aria-live="polite" { p.meta { "choose a session (j/k and Enter, / to filter)" } }
                }
            },
        ))
    })
    .await
}

/// Every project with its count, newest first: from the local index's narrow columns, or from
/// the team server's listing (with its sources, each a filter).
fn projects(ctx: &Ctx, reader: &mut Reader, source: Option<&str>) -> Result<Html<String>, Fail> {
    let (projects, sources) = match reader {
        Reader::Local { conn, scope, .. } => (list::projects(conn, scope)?, Vec::new()),
        Reader::Server(server) => server_projects(server.as_mut())?,
    };
    let total: i64 = projects.iter().map(|p| p.sessions).sum();
    let src = page::source_param('&', source);
    Ok(page::layout(
        "projects",
        Nav::Top("sessions"),
        html! {
            h1 { "Projects" @if let Some(s) = source { " · " (ctx.clean(s)) } }
            @if ctx.server {
                p.choices #sources { "sources: "
                    a href="/" class=[source.is_none().then_some("here")] { "all" } " "
                    @for (name, n) in &sources {
                        a href=(format!("/?source={}", enc(name))) class=[(source == Some(name.as_str())).then_some("here")] { (ctx.clean(name)) } " (" (page::num(*n)) ") "
                    }
                }
            }
            p { a href=(format!("/?all=true{src}")) { "every session of every project (" (page::num(total)) ")" } }
            // Narrows the rows in place (app.js); without the script the list is whole.
            form.filter { input #pfilter type="search" placeholder="filter projects" aria-label="filter projects" autocomplete="off"; }
            table.rows #projects {
                thead { tr { th { "project" } th.n { "sessions" } th { "latest" } } }
                tbody {
                    @for p in &projects {
                        tr {
                            td { a href=(format!("/?project={}{src}", enc(&p.cwd))) { (ctx.clean(&p.cwd)) } }
                            td.n { (page::num(p.sessions)) }
                            td { (page::ago(p.modified_ms)) }
                        }
                    }
                }
            }
            @if projects.is_empty() { p.meta { "no sessions in the index for these roots" } }
        },
    ))
}

/// Projects, and sources with their session counts.
type Counts = (Vec<list::ProjectCount>, Vec<(String, i64)>);

/// The team server's projects and sources (with their session counts), from its counts a
/// source and project.
fn server_projects(server: &mut dyn TeamReads) -> Result<Counts, Fail> {
    let mut projects: Vec<list::ProjectCount> = Vec::new();
    let mut at = std::collections::HashMap::new();
    let mut sources = std::collections::BTreeMap::<String, i64>::new();
    for (source, p) in server.projects()? {
        *sources.entry(source).or_default() += p.sessions;
        let i = *at.entry(p.cwd.clone()).or_insert_with(|| {
            projects.push(list::ProjectCount {
                sessions: 0,
                ..p.clone()
            });
            projects.len() - 1
        });
        projects[i].sessions += p.sessions;
        projects[i].modified_ms = projects[i].modified_ms.max(p.modified_ms);
    }
    projects.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(a.cwd.cmp(&b.cwd)));
    Ok((projects, sources.into_iter().collect()))
}

/// The page's own filters and orders over rows a typed filter already chose (and ranked): the
/// local index's [`list::narrowed`] decides which stay and, when an order is asked for, their
/// order. The team server keeps no figures a session: its rows are narrowed by date and
/// ordered by age or messages here, and a model or failed-calls filter leaves none.
fn narrow_found(
    reader: &mut Reader,
    opts: &ListOptions,
    narrow: &Narrow,
    sorted: bool,
    found: &mut Vec<list::SessionInfo>,
) -> Result<(), Fail> {
    if let Reader::Local { conn, scope, .. } = reader {
        return narrow_local(conn, scope, opts, narrow, sorted, found, |s| s.file_id);
    }
    let model = narrow
        .model
        .as_deref()
        .is_some_and(|m| !m.trim().is_empty());
    found.retain(|s| {
        !model
            && !narrow.errors
            && narrow.since_ms.is_none_or(|t| s.modified_ms >= t)
            && narrow.until_ms.is_none_or(|t| s.modified_ms < t)
    });
    match narrow.order {
        NarrowOrder::Messages => found.sort_by_key(|s| std::cmp::Reverse(s.message_count)),
        NarrowOrder::Oldest => found.reverse(),
        NarrowOrder::Newest | NarrowOrder::Cost => {}
    }
    Ok(())
}

/// [`narrow_found`] on the local index, over rows or ids (`id` reads a row's file id).
fn narrow_local<T>(
    conn: &rusqlite::Connection,
    scope: &crate::store::Scope,
    opts: &ListOptions,
    narrow: &Narrow,
    sorted: bool,
    found: &mut Vec<T>,
    id: impl Fn(&T) -> i64,
) -> Result<(), Fail> {
    let every = ListOptions {
        limit: None,
        ..opts.clone()
    };
    let (ids, _) = list::narrowed(conn, scope, &every, narrow)?;
    let place: std::collections::HashMap<i64, usize> =
        ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    found.retain(|s| place.contains_key(&id(s)));
    if sorted {
        found.sort_by_key(|s| place[&id(s)]);
    }
    Ok(())
}

fn sessions(
    ctx: &Ctx,
    reader: &mut Reader,
    q: &ListQuery,
    typed: &Mutex<Typed>,
) -> Result<Markup, Fail> {
    let query = q.q.trim();
    if let Some(why) = picker::query_problem(query) {
        return Ok(html! { p.error { (ctx.clean(&why)) } });
    }
    let narrow = Narrow {
        model: q.model.clone(),
        since_ms: local_day(q.since.as_deref().unwrap_or_default(), 0)?,
        until_ms: local_day(q.until.as_deref().unwrap_or_default(), 1)?,
        errors: q.errors,
        order: match q.sort.as_deref().unwrap_or_default() {
            "cost" => NarrowOrder::Cost,
            "messages" => NarrowOrder::Messages,
            "oldest" => NarrowOrder::Oldest,
            _ => NarrowOrder::Newest,
        },
    };
    // Every project without a filter: its first page only (pi's order through the listing
    // index); reading every row took 150 ms of 10,000 sessions.
    let first_page = q.project.is_none() && query.is_empty() && !q.narrowed();
    let opts = ListOptions {
        cwd: q.project.clone(),
        limit: first_page.then_some(ROWS),
        with_text: false,
    };
    let (mut found, total, before) = match reader {
        // The page's own filters and orders, without typed text: the matching ids in one
        // query over narrow rows, then the shown rows read whole.
        Reader::Local { conn, scope, .. } if q.narrowed() && query.is_empty() => {
            let (ids, before) = list::narrowed(conn, scope, &opts, &narrow)?;
            let shown = list::sessions_by_id(conn, scope, &ids[..ids.len().min(ROWS)])?;
            (shown, Some(ids.len()), before)
        }
        // Typed text: pi's picker over the texts kept between keys.
        Reader::Local { conn, scope, .. } if !query.is_empty() => {
            let mut typed = typed.lock().unwrap_or_else(|p| p.into_inner());
            typed.refresh(conn, scope)?;
            // The project's sessions: their ids alone (no row, no first message read).
            let among = match &q.project {
                Some(_) => Some(list::narrowed(conn, scope, &opts, &Narrow::default())?.0),
                None => None,
            };
            let before = among.as_ref().map_or(typed.len(), Vec::len);
            let mut ids = typed.rank(query, among.as_deref());
            drop(typed);
            if q.narrowed() {
                narrow_local(
                    conn,
                    scope,
                    &opts,
                    &narrow,
                    q.sort.is_some(),
                    &mut ids,
                    |id| *id,
                )?;
            }
            let shown = list::sessions_by_id(conn, scope, &ids[..ids.len().min(ROWS)])?;
            (shown, Some(ids.len()), before)
        }
        _ => {
            // Redacted before a typed filter ranks them (as `list --redact`): a secret finds
            // nothing. Without one, the rows are not: each cell is cleaned as it is shown
            // (`Ctx::line`), and redacting every first message of 10,000 sessions (100 MB on
            // the benchmark corpus) was most of a narrowed page.
            let (mut found, before) = list::listing(
                reader,
                &opts,
                (!query.is_empty()).then_some(query),
                ctx.redact && !query.is_empty(),
            )?;
            if q.narrowed() {
                narrow_found(reader, &opts, &narrow, q.sort.is_some(), &mut found)?;
            }
            (found, None, before)
        }
    };
    let total = total.unwrap_or(found.len());
    found.truncate(ROWS);
    let ids: Vec<i64> = found.iter().map(|s| s.file_id).collect();
    let figures = match reader {
        Reader::Local { conn, .. } => per_session::figures(conn, &ids)?,
        // The team server's rows carry no rollups here: its lists show no figures.
        _ => Default::default(),
    };
    let none = SessionFigures::default();
    let fig = |id: i64| figures.get(&id).unwrap_or(&none);
    let handles = handle::handles_in(
        reader,
        found.iter().map(|s| handle::Session {
            file_id: s.file_id,
            id: s.id.as_ref().and_then(serde_json::Value::as_str),
            path: &s.path,
        }),
    )?;
    let gateway = found.iter().any(|s| s.gateway.is_some());
    let source = ctx.server && q.source.is_none();
    Ok(html! {
        p.meta #count {
            @if first_page { "the newest " (page::num(total as i64)) " sessions · type to filter them all" }
            @else if query.is_empty() && !q.narrowed() { (page::num(total as i64)) " sessions" }
            @else { (page::num(total as i64)) " of " (page::num(before as i64)) " sessions match" }
            @if total > ROWS { " · the first " (ROWS) " shown: type to narrow" }
        }
        table.rows.sessions {
            thead { tr { th { "session" } @if source { th { "source" } } @if q.project.is_none() { th.cwd { "project" } }
                @if gateway { th { "agent · channel" } }
                th { "model" } th.n { "messages" } th.n { "cost" } th.n { "age" } th.handle { "handle" } } }
            tbody {
                @for s in &found {
                    @let f = fig(s.file_id);
                    tr {
                        td.title { a href=(page::session_url(&s.path, s.source.as_deref())) { (ctx.line(s.title(), 120)) } }
                        @if source { td.source { @if let Some(m) = &s.source {
                            a href=(format!("/?all=true&source={}", enc(m))) { (ctx.clean(m)) } } } }
                        @if q.project.is_none() { td.cwd { (ctx.clean(&s.cwd)) } }
                        @if gateway { td { @if let Some(g) = &s.gateway {
                            (ctx.clean(&g.agent_id)) @if let Some(c) = &g.channel { " · " (ctx.clean(c)) } } } }
                        td.model { (ctx.clean(f.model.as_deref().unwrap_or("-"))) }
                        td.n { (page::num(s.message_count)) }
                        td.n.cost { (page::money(f.cost)) @if f.tool_errors > 0 { " " span.error title="failed tool calls" { "⚠" (f.tool_errors) } } }
                        td.n.age { (page::ago(s.modified_ms)) }
                        td.handle { code { (ctx.clean(handles.get(&s.file_id).map_or("", String::as_str))) } }
                    }
                }
            }
        }
    })
}
