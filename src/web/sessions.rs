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
use crate::query::list::{self, list_sessions, ListOptions, SessionInfo};
use crate::query::{handle, picker};

/// Rows a page shows; typing narrows the rest.
const ROWS: usize = 300;

#[derive(Deserialize, Default)]
pub struct ListQuery {
    project: Option<String>,
    #[serde(default)]
    all: bool,
    #[serde(default)]
    q: String,
    frag: Option<String>,
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<ListQuery>,
) -> Result<Html<String>, Fail> {
    blocking(&app, move |ctx| {
        if q.project.is_none() && !q.all && q.q.trim().is_empty() {
            return projects(ctx);
        }
        let rows = sessions(ctx, &q)?;
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
                h1 { (heading) }
                form.filter method="get" action="/" {
                    @if let Some(p) = &q.project { input type="hidden" name="project" value=(p); }
                    @if q.project.is_none() { input type="hidden" name="all" value="true"; }
                    input #filter type="search" name="q" value=(q.q) placeholder="filter: words, \"phrases\", re:REGEX" autocomplete="off" autofocus;
                    button type="submit" { "filter" }
                }
                div #rows { (rows) }
            },
        ))
    })
    .await
}

/// Redacted as the CLI's `list --redact` is, before the filter ranks them: a secret finds
/// nothing.
fn redact_info(ctx: &Ctx, s: &mut SessionInfo) {
    if ctx.redact {
        fn clean(t: &str) -> String {
            crate::redact::redact(t).into_owned()
        }
        s.first_message = clean(&s.first_message);
        s.name = s.name.as_deref().map(clean);
        s.all_messages_text = s.all_messages_text.as_deref().map(clean);
    }
}

fn projects(ctx: &Ctx) -> Result<Html<String>, Fail> {
    let projects = list::projects(&ctx.store.conn, &ctx.scope)?;
    let total: i64 = projects.iter().map(|p| p.sessions).sum();
    Ok(page::layout(
        "projects",
        Nav::Top("sessions"),
        html! {
            h1 { "Projects" }
            p { a href="/?all=true" { "every session of every project (" (page::num(total)) ")" } }
            table.rows {
                thead { tr { th { "project" } th.n { "sessions" } th { "latest" } } }
                tbody {
                    @for p in &projects {
                        tr {
                            td { a href=(format!("/?project={}", enc(&p.cwd))) { (ctx.clean(&p.cwd)) } }
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

fn sessions(ctx: &Ctx, q: &ListQuery) -> Result<Markup, Fail> {
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
        with_text: !query.is_empty(),
    };
    let mut found = list_sessions(&ctx.store.conn, &ctx.scope, &opts)?;
    found.iter_mut().for_each(|s| redact_info(ctx, s));
    let before = found.len();
    if !query.is_empty() {
        found = picker::filter_and_sort(found, query);
    }
    let total = found.len();
    found.truncate(ROWS);
    let handles = handle::handles(
        &ctx.store.conn,
        found.iter().map(|s| handle::Session {
            file_id: s.file_id,
            id: s.id.as_ref().and_then(serde_json::Value::as_str),
            path: &s.path,
        }),
    )?;
    let gateway = found.iter().any(|s| s.gateway.is_some());
    Ok(html! {
        p.meta #count {
            @if first_page { "the newest " (page::num(total as i64)) " sessions · type to filter them all" }
            @else if query.is_empty() { (page::num(total as i64)) " sessions" }
            @else { (page::num(total as i64)) " of " (page::num(before as i64)) " sessions match" }
            @if total > ROWS { " · the first " (ROWS) " shown: type to narrow" }
        }
        table.rows {
            thead { tr { th { "session" } @if q.project.is_none() { th { "project" } }
                @if gateway { th { "agent · channel" } }
                th { "handle" } th.n { "messages" } th { "modified" } } }
            tbody {
                @for s in &found {
                    tr {
                        td.title { a href=(page::session_url(&s.path)) { (ctx.clean(&crate::term::one_line_upto(s.title(), 120))) } }
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
