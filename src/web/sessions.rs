//! The sessions page: every project with its session count, newest first; one project's
//! sessions (or every project's, `all=1`) in pi's order, filtered and ordered as `list --query`
//! (pi's `/resume` picker) as the user types. Gateway transcripts show their agent and channel.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup};
use serde::Deserialize;

use super::page::{self, enc, Nav};
use super::{blocking, App, Ctx, Fail};
use crate::query::list::{self, ListOptions};
use crate::query::{handle, picker, Reader};

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
    frag: Option<String>,
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<ListQuery>,
) -> Result<Html<String>, Fail> {
    let source = q.source.clone().filter(|s| !s.is_empty());
    blocking(&app, source, move |ctx, reader| {
        if q.project.is_none() && !q.all && q.q.trim().is_empty() {
            return projects(ctx, reader, q.source.as_deref());
        }
        let rows = sessions(ctx, reader, &q)?;
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
                    input #filter type="search" name="q" value=(q.q) placeholder="filter: words, \"phrases\", re:REGEX" autocomplete="off" autofocus;
                    button type="submit" { "filter" }
                }
                div #rows { (rows) }
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
        _ => server_projects(reader)?,
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
            table.rows {
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

/// The team server's projects and sources (with their session counts), from its listing.
fn server_projects(reader: &mut Reader) -> Result<Counts, Fail> {
    let (rows, _) = list::listing(reader, &ListOptions::default(), None, false)?;
    let mut projects: Vec<list::ProjectCount> = Vec::new();
    let mut at = std::collections::HashMap::new();
    let mut sources = std::collections::BTreeMap::<String, i64>::new();
    for s in &rows {
        *sources
            .entry(s.source.clone().unwrap_or_default())
            .or_default() += 1;
        let i = *at.entry(s.cwd.clone()).or_insert_with(|| {
            projects.push(list::ProjectCount {
                cwd: s.cwd.clone(),
                sessions: 0,
                modified_ms: s.modified_ms,
            });
            projects.len() - 1
        });
        projects[i].sessions += 1;
        projects[i].modified_ms = projects[i].modified_ms.max(s.modified_ms);
    }
    projects.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(a.cwd.cmp(&b.cwd)));
    Ok((projects, sources.into_iter().collect()))
}

fn sessions(ctx: &Ctx, reader: &mut Reader, q: &ListQuery) -> Result<Markup, Fail> {
    let query = q.q.trim();
    if let Some(why) = picker::query_problem(query) {
        return Ok(html! { p.error { (ctx.clean(&why)) } });
    }
    // Every project without a filter: its first page only (pi's order through the listing
    // index); reading every row took 150 ms of 10,000 sessions.
    let first_page = q.project.is_none() && query.is_empty();
    let opts = ListOptions {
        cwd: q.project.clone(),
        limit: first_page.then_some(ROWS),
        with_text: false,
    };
    // Redacted before the filter ranks them (as `list --redact`): a secret finds nothing.
    let (mut found, before) = list::listing(
        reader,
        &opts,
        (!query.is_empty()).then_some(query),
        ctx.redact,
    )?;
    let total = found.len();
    found.truncate(ROWS);
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
            @else if query.is_empty() { (page::num(total as i64)) " sessions" }
            @else { (page::num(total as i64)) " of " (page::num(before as i64)) " sessions match" }
            @if total > ROWS { " · the first " (ROWS) " shown: type to narrow" }
        }
        table.rows {
            thead { tr { th { "session" } @if source { th { "source" } } @if q.project.is_none() { th { "project" } }
                @if gateway { th { "agent · channel" } }
                th { "handle" } th.n { "messages" } th { "modified" } } }
            tbody {
                @for s in &found {
                    tr {
                        td.title { a href=(page::session_url(&s.path, s.source.as_deref())) { (ctx.clean(&crate::term::one_line_upto(s.title(), 120))) } }
                        @if source { td.source { @if let Some(m) = &s.source {
                            a href=(format!("/?all=true&source={}", enc(m))) { (ctx.clean(m)) } } } }
                        @if q.project.is_none() { td.cwd { (ctx.clean(&s.cwd)) } }
                        @if gateway { td { @if let Some(g) = &s.gateway {
                            (ctx.clean(&g.agent_id)) @if let Some(c) = &g.channel { " · " (ctx.clean(c)) } } } }
                        td { code { (ctx.clean(handles.get(&s.file_id).map_or("", String::as_str))) } }
                        td.n { (page::num(s.message_count)) }
                        td { (page::ago(s.modified_ms)) }
                    }
                }
            }
        }
    })
}
