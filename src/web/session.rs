//! A session's conversation: the context pi would send at a leaf (the current one unless
//! `leaf` names another), a page of context entries at a time so a 5,000-entry session shows
//! its first screen after reading only that page. `entry` opens the page at one entry (a
//! search hit), highlighted, on the branch that holds it. Long strings and images are fetched
//! on their own (`text`, `image`), bounded, and images only as the raster type they claim.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use base64::Engine as _;

use super::raster::{sniff, RASTER};
use maud::{html, Markup};
use serde::Deserialize;
use serde_json::Value;

use super::message::{self, At};
use super::page::{self, enc, Nav};
use super::{blocking, split_seg, App, Ctx, Fail};
use crate::query::context::{plan, ContextPlan};
use crate::query::resolve::{resolve, Resolved};
use crate::query::Reader;

/// Context entries per page, and the message bytes a page stops after.
const PAGE_ENTRIES: usize = 40;
const PAGE_BYTES: usize = 1 << 20;

#[derive(Deserialize, Default)]
pub struct SessionQuery {
    leaf: Option<String>,
    entry: Option<String>,
    from: Option<usize>,
    /// Only the messages and the link to the next page (what the script appends).
    frag: Option<String>,
    /// The header and the messages without the frame: the list's pane on a wide screen.
    pane: Option<String>,
}

pub async fn page(
    State(app): State<Arc<App>>,
    Path(seg): Path<String>,
    Query(q): Query<SessionQuery>,
) -> Result<Html<String>, Fail> {
    let (source, file) = split_seg(&app, &seg);
    blocking(&app, source, move |ctx, reader| {
        let session = resolve(reader, &file)?;
        let leaf = leaf_for(reader, &session, &q)?;
        let plan = plan(reader, &session, leaf.as_deref())?;
        let target = q.entry.as_deref();
        let from = match (q.from, target) {
            (Some(f), _) => f.min(plan.len()),
            (None, Some(t)) => (0..plan.len())
                .find(|&i| plan.entry_id(i) == Some(t))
                .map_or(0, |i| i.saturating_sub(2)),
            _ => 0,
        };
        let url = page::session_url(&session.path, session.source.as_deref());
        let body = messages(ctx, &plan, &url, leaf.is_none(), from, target)?;
        if q.frag.is_some() {
            return Ok(Html(body.into_string()));
        }
        // Resuming in pi at the entry this page is open at: the hit, else the leaf shown.
        let at = target.or(leaf.as_deref().and(plan.leaf_id.as_deref()));
        let d = crate::query::show::show(reader, &session)?;
        let title = ctx.clean(&title_of(reader, &session, &d)?).into_owned();
        let header = header_of(
            ctx,
            &Header {
                session: &session,
                detail: &d,
                title: &title,
                at_leaf: leaf.is_some(),
                at,
            },
            &plan,
        );
        let seg = page::session_seg(&session.path, session.source.as_deref());
        let content = html! {
            (header)
            div #messages data-url=(url) data-leaf=(plan.leaf_id.as_deref().unwrap_or_default()) data-live=[leaf.is_none().then_some("1")] {
                (body)
            }
        };
        if q.pane.is_some() {
            return Ok(Html(
                html! {
                    p.nav.panebar { a href=(url) { "open this session" } " · " a href=(format!("{url}/tree")) { "tree" } }
                    (content)
                }
                .into_string(),
            ));
        }
        Ok(page::layout(
            &crate::term::one_line_upto(&title, 60),
            Nav::Session(&seg, "session"),
            content,
        ))
    })
    .await
}

/// The leaf to show: the one asked for; for a hit off the current branch, the hit itself.
fn leaf_for(
    reader: &mut Reader,
    session: &Resolved,
    q: &SessionQuery,
) -> Result<Option<String>, Fail> {
    if q.leaf.is_some() {
        return Ok(q.leaf.clone().filter(|l| !l.is_empty()));
    }
    let Some(target) = &q.entry else {
        return Ok(None);
    };
    let current = plan(reader, session, None)?;
    let on_branch = (0..current.len()).any(|i| current.entry_id(i) == Some(target.as_str()));
    Ok((!on_branch).then(|| target.clone()))
}

/// The session's name, else its first message (the listing's title), else its file name.
pub(super) fn title_of(
    reader: &mut Reader,
    session: &Resolved,
    d: &crate::query::show::SessionDetail,
) -> Result<String, Fail> {
    let title: Option<String> = match reader {
        Reader::Local { conn, .. } => conn.query_row(
            &format!(
                "SELECT {} FROM sessions s WHERE s.file_id = ?1",
                crate::store::schema::TITLE
            ),
            [session.file_id],
            |r| r.get(0),
        )?,
        // The server's detail has the name; its first message would be a second query.
        _ => d.name.clone(),
    };
    Ok(title.unwrap_or_else(|| crate::query::handle::file_name(&session.path).to_string()))
}

/// The messages of context entries `from..` up to a page, and the link to the next page.
fn messages(
    ctx: &Ctx,
    plan: &ContextPlan,
    url: &str,
    live: bool,
    from: usize,
    target: Option<&str>,
) -> Result<Markup, Fail> {
    let leaf = plan.leaf_id.as_deref().unwrap_or_default();
    // (context entry, message in it, entry id, the message's JSON text, parsed).
    let mut raws: Vec<Raw> = Vec::new();
    let (mut i, mut bytes) = (from, 0usize);
    while i < plan.len() && i - from < PAGE_ENTRIES && bytes < PAGE_BYTES {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(crate::Error::Stopped.into());
        }
        let id = plan.entry_id(i).unwrap_or_default();
        for (m, raw) in plan.messages_at(i)?.into_iter().enumerate() {
            bytes += raw.len();
            let v = message::parse(&raw);
            raws.push((i, m, id.to_string(), raw, v));
        }
        i += 1;
    }
    let shown = articles(ctx, &raws, url, leaf, target);
    let page_url = |n: usize| format!("{url}?leaf={}&from={n}", enc(leaf));
    Ok(html! {
        @if from > 0 {
            p.nav { a.prev href=(page_url(from.saturating_sub(PAGE_ENTRIES))) { "↑ earlier messages" } }
        }
        @if plan.is_empty() { p.meta { "this session has no messages yet" } }
        (shown)
        @if i < plan.len() {
            p.nav { a.next href=(page_url(i)) data-frag=(format!("{}&frag=1", page_url(i))) { "more messages ↓" } }
        } @else {
            // At the current leaf, what comes next is whatever the current leaf becomes.
            span #end data-next=(if live { format!("{url}?from={i}") } else { page_url(i) }) {}
        }
    })
}

/// One context message for a page: (context entry, message in it, entry id, JSON text, parsed).
pub(super) type Raw = (usize, usize, String, String, Option<Value>);

/// Messages as articles, each tool result inside the call that asked for it when the call is
/// among them, before it.
pub(super) fn articles(
    ctx: &Ctx,
    raws: &[Raw],
    url: &str,
    leaf: &str,
    target: Option<&str>,
) -> Markup {
    let mut calls = std::collections::HashSet::new();
    let mut results = message::Results::new();
    for (e, m, _, _, v) in raws {
        let Some(v) = v else { continue };
        calls.extend(message::call_ids(v));
        if let Some(c) = message::call_id(v).filter(|c| calls.contains(c)) {
            let at = At {
                url,
                leaf,
                entry: *e,
                message: *m,
            };
            results.insert(c, message::Paired { result: v, at });
        }
    }
    html! {
        @for (e, m, id, raw, v) in raws {
            @if !v.as_ref().and_then(message::call_id).is_some_and(|c| results.contains_key(c)) {
                @let at = At { url, leaf, entry: *e, message: *m };
                @let (role, body) = message::render(ctx, v.as_ref(), raw, &at, &results);
                article class=(format!("msg {}{}", role_class(&role), if target == Some(id.as_str()) { " hit" } else { "" }))
                    id=[(*m == 0).then(|| format!("e-{id}"))] data-entry=(e) {
                    div.role {
                        (ctx.clean(&role))
                        // Every entry's own address, the context pi would send at it, and its
                        // place in the tree (an export has no server to ask).
                        @if ctx.export {
                            a.perma href=(format!("#e-{}", enc(id))) title="a link to this entry" { "#" }
                        } @else {
                            a.perma href=(format!("{url}?entry={}#e-{}", enc(id), enc(id))) title="a link to this entry" { "#" }
                            a.here href=(format!("{url}?leaf={}", enc(id))) title="the context at this entry" { "context" }
                            a.leaf href=(format!("{url}/tree#t-{}", enc(id))) title="this entry in the tree" { "tree" }
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// A CSS class for a role (anything else is `other`).
fn role_class(role: &str) -> &'static str {
    match role {
        "user" => "user",
        "assistant" => "assistant",
        "toolResult" => "tool",
        "bashExecution" => "bash",
        "compactionSummary" | "branchSummary" => "summary",
        _ => "other",
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// What a session page's header shows: the session, its details and title, and whether the
/// page is the context at a leaf asked for (`at`: the entry a hit opened it at).
struct Header<'a> {
    session: &'a Resolved,
    detail: &'a crate::query::show::SessionDetail,
    title: &'a str,
    at_leaf: bool,
    at: Option<&'a str>,
}

fn header_of(ctx: &Ctx, h: &Header, plan: &ContextPlan) -> Markup {
    let Header {
        session,
        detail: d,
        title,
        at_leaf,
        at,
    } = *h;
    let mut resume = format!("cd {} && pi --session {}", quote(&d.cwd), quote(&d.path));
    // Only the pidx pi package teaches pi `--pidx-entry`; a plain pi resumes at the last entry.
    let package = crate::app::pi_agent::package_installed();
    if let Some(id) = at.filter(|_| package) {
        resume.push_str(&format!(" --pidx-entry {}", quote(id)));
    }
    let t = &d.stats.tokens;
    let model = plan.settings.model.as_ref().and_then(|(_, m)| m.clone());
    let source = session.source.as_deref();
    html! {
        header.session {
            h1 { (title) }
            dl {
                @if let Some(s) = source { dt { "source" } dd { a href=(format!("/?all=true&source={}", enc(s))) { (ctx.clean(s)) } } }
                dt { "project" } dd { code { (ctx.clean(&d.cwd)) } }
                dt { "session" } dd { code { (ctx.clean(&d.handle)) } " · " (ctx.clean(crate::query::handle::file_name(&d.path))) }
                @if let Some(c) = &d.created { dt { "created" } dd { (page::when(c)) } }
                @if let Some(m) = &d.modified { dt { "modified" } dd { (page::when(m)) } }
                dt { "messages" } dd { (page::num(d.stats.total_messages)) " (" (page::num(d.stats.tool_calls)) " tool calls)" }
                dt { "tokens" } dd { (page::num(t.total)) " (in " (page::num(t.input)) ", out " (page::num(t.output)) ", cache " (page::num(t.cache_read + t.cache_write)) ")" }
                dt { "cost" } dd { (page::money(d.stats.cost)) }
                @if !d.models.is_empty() {
                    dt { "models" } dd { @for (i, m) in d.models.iter().enumerate() {
                        @if i > 0 { ", " } (ctx.clean(&m.model)) " " (page::money(m.cost)) } }
                }
                @if let Some(m) = model { dt { "model now" } dd { (ctx.clean(&m))
                    @if let Some(th) = &plan.settings.thinking_level { " · thinking " (ctx.clean(th)) } } }
                @if !d.labels.is_empty() {
                    dt { "labels" } dd { @for (_, l) in &d.labels { span.label { (ctx.clean(l)) } " " } }
                }
                @if let Some(Value::String(p)) = &d.parent_session_path {
                    dt { "parent" } dd { a href=(page::session_url(p, source)) { (ctx.clean(crate::query::handle::file_name(p))) } }
                }
            }
            div.resume {
                code #resume { (ctx.clean(&resume)) }
                button #copy type="button" data-copy-from="resume" { "copy resume command" }
            }
            @let url = page::session_url(&session.path, source);
            @let leaf = if at_leaf { format!("&leaf={}", enc(plan.leaf_id.as_deref().unwrap_or_default())) } else { String::new() };
            p.meta.export { "export this conversation: "
                a href=(format!("{url}/export?as=html{leaf}")) download { "page" } " · "
                a href=(format!("{url}/export?as=md{leaf}")) download { "Markdown" }
                @if ctx.redact { " (secrets redacted)" } }
            @if at.is_some() && !package {
                p.meta { "pi resumes this session at its last entry; " code { "pidx pi install" } " lets it resume at this one" }
            }
            @if at_leaf {
                p.meta { "the context at leaf " code { (ctx.clean(plan.leaf_id.as_deref().unwrap_or("?"))) }
                    " · " a href=(page::session_url(&session.path, source)) { "the current leaf" } }
            }
            @if plan.settings.cycle { p.error { "the entries above this leaf form a cycle; the walk stopped where it repeated" } }
        }
    }
}

#[derive(Deserialize)]
pub struct PartQuery {
    leaf: Option<String>,
    e: usize,
    m: usize,
    p: String,
    #[serde(default)]
    from: usize,
}

/// One string of a message, from a character on, as plain text (at most [`PART_CHARS`]).
const PART_CHARS: usize = 1 << 20;

/// The JSON text of one message in the context at the leaf asked for.
fn raw_message(reader: &mut Reader, file: &str, q: &PartQuery) -> Result<String, Fail> {
    let session = resolve(reader, file)?;
    let leaf = q.leaf.as_deref().filter(|l| !l.is_empty());
    let plan = plan(reader, &session, leaf)?;
    if q.e >= plan.len() {
        return Err(Fail::NotFound("there is no such message".into()));
    }
    let mut raw = plan.messages_at(q.e)?;
    if q.m >= raw.len() {
        return Err(Fail::NotFound("there is no such message".into()));
    }
    Ok(raw.swap_remove(q.m))
}

/// A message's value at a JSON pointer.
fn part(reader: &mut Reader, file: &str, q: &PartQuery) -> Result<Value, Fail> {
    let raw = raw_message(reader, file, q)?;
    let mut v = crate::pi::line::parse_json(&raw)
        .map_err(|_| Fail::NotFound("the message is not JSON".into()))?;
    v.pointer_mut(&q.p)
        .map(Value::take)
        .ok_or_else(|| Fail::NotFound("there is no such part".into()))
}

pub async fn text(
    State(app): State<Arc<App>>,
    Path(seg): Path<String>,
    Query(q): Query<PartQuery>,
) -> Result<Response, Fail> {
    let (source, file) = split_seg(&app, &seg);
    blocking(&app, source, move |ctx, reader| {
        let raw = raw_message(reader, &file, &q)?;
        // Decoded from the message's text a piece at a time (a 100 MB string is never held
        // twice), cut where the page cuts (`message::piece_end`: no secret split across two
        // pieces) and cleaned piece by piece.
        let lit = super::bigjson::string_at(&raw, &q.p)
            .ok_or_else(|| Fail::NotFound("that part is not text".into()))?;
        // A little before `from` too: a hand-made `from` inside a secret starts at the secret.
        let back = q.from.min(4 << 10);
        let (piece, more) =
            super::bigjson::decode(lit, q.from - back, back + PART_CHARS + (32 << 10));
        let asked = piece
            .char_indices()
            .nth(back)
            .map_or(piece.len(), |(i, _)| i);
        let start = super::message::piece_start(&piece, asked);
        let end = super::message::piece_end(&piece, start, PART_CHARS);
        let mut out = ctx.clean(&piece[start..end]).into_owned();
        if more || end < piece.len() {
            out.push_str(&format!(
                "\n\n[… more: /s/{}/text?leaf={}&e={}&m={}&p={}&from={}]",
                enc(&seg),
                enc(q.leaf.as_deref().unwrap_or_default()),
                q.e,
                q.m,
                enc(&q.p),
                q.from - back + piece[..end].chars().count()
            ));
        }
        Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], out).into_response())
    })
    .await
}

pub async fn image(
    State(app): State<Arc<App>>,
    Path(seg): Path<String>,
    Query(q): Query<PartQuery>,
) -> Result<Response, Fail> {
    let (source, file) = split_seg(&app, &seg);
    blocking(&app, source, move |_, reader| {
        let b = part(reader, &file, &q)?;
        let mime = b
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let data = b.get("data").and_then(Value::as_str).unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| Fail::NotFound("the image's data is not base64".into()))?;
        // Served only when the bytes are the raster type the block claims.
        if !RASTER.contains(&mime) || sniff(&bytes) != Some(mime) {
            return Err(Fail::NotFound(
                "the image is not the raster type it claims".into(),
            ));
        }
        let mime = RASTER
            .iter()
            .find(|r| **r == mime)
            .copied()
            .unwrap_or("image/png");
        Ok(([(header::CONTENT_TYPE, mime)], bytes).into_response())
    })
    .await
}
