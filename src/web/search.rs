//! The search page: `pidx search` as you type (words, "phrases", `re:`, `literal`, a project),
//! the hits grouped by session in rank order with their snippets highlighted. A hit links to
//! its session opened at that entry. Searches match the redacted text unless `--no-redact`.

use std::sync::Arc;

use axum::extract::{Query, State};
use std::time::{Duration, Instant};

use axum::response::{Html, IntoResponse, Response};
use maud::{html, Markup};
use serde::Deserialize;

use super::page::{self, enc, Nav};
use super::{blocking, App, Ctx, Fail};
use crate::query::search::{self, Hit, SearchOptions, Snippet};
use crate::query::Reader;

/// The kinds of text the page offers to search in (any list works in the address).
const KIND_CHOICES: [(&str, &str); 6] = [
    ("", "all text"),
    ("user", "user"),
    ("assistant", "assistant"),
    ("thinking", "thinking"),
    ("tool", "tool output"),
    ("bash", "bash"),
];

/// Hits a search shows.
const HITS: usize = 100;

/// Hits an answer given as you type shows (with a link to the best [`HITS`]): a words search
/// ranks a window of 50 candidates a hit (at least 1,000), so fewer hits is less to rank while
/// the query is still changing.
const TYPING_HITS: usize = 20;

#[derive(Deserialize, Default)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    literal: bool,
    /// Rank by meaning alone (`pidx search --meaning`).
    #[serde(default)]
    meaning: bool,
    /// Rank by words alone (`--lexical`).
    #[serde(default)]
    lexical: bool,
    project: Option<String>,
    /// Kinds of text, comma-separated (`pidx search --in`).
    #[serde(rename = "in")]
    kinds: Option<String>,
    /// Only sessions that used a model containing this (`--model`).
    model: Option<String>,
    /// One machine of the team server.
    source: Option<String>,
    frag: Option<String>,
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<SearchQuery>,
) -> Result<Response, Fail> {
    let source = q.source.clone().filter(|s| !s.is_empty());
    blocking(&app, source, move |ctx, reader| {
        let started = Instant::now();
        let mut engine = Duration::ZERO;
        let results = results(ctx, reader, &q, &mut engine)?;
        // How long the search engine took of the page's time (the benchmark reads it).
        let timing = |all: Duration| {
            format!(
                "engine;dur={:.1}, page;dur={:.1}",
                engine.as_secs_f64() * 1e3,
                all.as_secs_f64() * 1e3
            )
        };
        if q.frag.is_some() {
            let body = results.into_string();
            let t = timing(started.elapsed());
            return Ok(([("server-timing", t)], Html(body)).into_response());
        }
        let html = page::layout(
            "search",
            Nav::Top("search"),
            html! {
                h1 { "Search" }
                form.filter method="get" action="/search" {
                    input #search type="search" name="q" value=(q.q) placeholder="words, \"a phrase\", re:REGEX" autocomplete="off" autofocus;
                    label { input type="checkbox" name="literal" value="true" checked[q.literal]; " literal" }
                    label { input type="checkbox" name="meaning" value="true" checked[q.meaning]; " by meaning" }
                    select name="in" aria-label="kinds of text" {
                        @for (v, label) in KIND_CHOICES {
                            option value=(v) selected[q.kinds.as_deref().unwrap_or_default() == v] { (label) }
                        }
                    }
                    @if let Some(m) = &q.model { input type="hidden" name="model" value=(m); }
                    @if let Some(p) = &q.project { input type="hidden" name="project" value=(p); }
                    @if let Some(s) = &q.source { input type="hidden" name="source" value=(s); }
                    button type="submit" { "search" }
                }
                div #results { (results) }
            },
        );
        Ok(([("server-timing", timing(started.elapsed()))], html).into_response())
    })
    .await
}

fn results(
    ctx: &Ctx,
    reader: &mut Reader,
    q: &SearchQuery,
    engine: &mut Duration,
) -> Result<Markup, Fail> {
    if q.q.trim().is_empty() {
        return Ok(html! { p.meta { "type to search every session" } });
    }
    let query = match search::parse(&q.q, q.literal) {
        Ok(query) => query,
        Err(e) => return Ok(html! { p.error { (ctx.clean(&e.to_string())) } }),
    };
    let limit = if q.frag.is_some() { TYPING_HITS } else { HITS };
    let mut opts = SearchOptions::everywhere(query, limit);
    for k in q
        .kinds
        .iter()
        .flat_map(|k| k.split(','))
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        match crate::pi::text::TextKind::parse(k) {
            Some(kind) => opts.kinds.push(kind),
            None => {
                let why = format!("{k:?} is not a kind of text (user, assistant, thinking, tool, bash, custom, summary, name)");
                return Ok(html! { p.error { (ctx.clean(&why)) } });
            }
        }
    }
    opts.model = q.model.clone().filter(|m| !m.is_empty());
    opts.cwd = q.project.clone();
    opts.redact = ctx.redact;
    // As `pidx search`: by meaning (`&meaning=true`), or words and meaning fused where the index
    // holds vectors of a usable model, else by words (`&lexical=true` asks for words alone);
    // as you type over the team server, by words (`Ranking::typing`).
    let how = crate::app::meaning::Ranking {
        text: &q.q,
        meaning: q.meaning,
        words_only: q.lexical,
        model: None,
        quiet: false,
        typing: q.frag.is_some(),
    };
    let started = Instant::now();
    let ranked = crate::app::meaning::ranked_by(reader, &opts, false, &how, &ctx.stop)
        .map(|r| r.map(|(hits, _)| hits));
    let ranked = match ranked {
        Ok(r) => r,
        Err(e) => return Ok(html! { p.error { (ctx.clean(&format!("{e:#}"))) } }),
    };
    // Each hit says how it was found when meaning took part; an answer given as you type over
    // the team server says when Enter would bring meaning in.
    let marks = ranked.is_some();
    let deferred = !marks && crate::app::meaning::deferred(reader, &opts, &how).unwrap_or(false);
    let hits = match ranked {
        Some(hits) => hits,
        None => search::run(reader, &opts, false, &ctx.stop)?.0,
    };
    *engine = started.elapsed();
    // Grouped by session in the order sessions first appear (a session's hits rank together).
    let mut groups: Vec<(i64, Vec<&Hit>)> = Vec::new();
    for h in &hits {
        match groups.iter_mut().find(|(f, _)| *f == h.file_id) {
            Some((_, g)) => g.push(h),
            None => groups.push((h.file_id, vec![h])),
        }
    }
    Ok(html! {
        p.meta #count { (hits.len()) " hits in " (groups.len()) " sessions"
            @if hits.len() == limit && limit < HITS { " · the best " (limit) " · " a #all-hits href=(full_url(q)) { "the best " (HITS) } }
            @else if hits.len() == limit { " · the best " (limit) " shown: narrow the search for more" }
            @if deferred { " · by words as you type: Enter adds meaning" } }
        @for (_, group) in &groups {
            @let first = group[0];
            section.group {
                h2 { a href=(page::session_url(&first.path, first.source.as_deref())) { (ctx.line(&first.title, 120)) } }
                p.meta { @if let Some(s) = &first.source { span.source { (ctx.clean(s)) } " · " } (ctx.clean(&first.cwd)) }
                ul.hits {
                    @for h in group {
                        li { a.hit href=(hit_url(h)) {
                            span.kind { (h.kind) @if let Some(r) = h.role.as_ref().filter(|r| r.as_str() != h.kind) { " · " (ctx.clean(r)) } }
                            @if let Some(t) = &h.timestamp { " " span.meta { (page::when(t)) } }
                            @if marks { " " span.by title="how this hit was found" { "by " (h.by.name()) @if let Some(s) = h.similarity { " " (format!("{s:.2}")) } } }
                            " " span.snippet { (marked(ctx, &h.snippet)) }
                        } }
                    }
                }
            }
        }
    })
}

/// This search as a whole page (the best [`HITS`]).
fn full_url(q: &SearchQuery) -> String {
    let mut url = format!("/search?q={}", enc(&q.q));
    for (k, v) in [
        ("in", q.kinds.as_deref()),
        ("model", q.model.as_deref()),
        ("project", q.project.as_deref()),
        ("source", q.source.as_deref()),
    ] {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            url.push_str(&format!("&{k}={}", enc(v)));
        }
    }
    for (k, on) in [
        ("literal", q.literal),
        ("meaning", q.meaning),
        ("lexical", q.lexical),
    ] {
        if on {
            url.push_str(&format!("&{k}=true"));
        }
    }
    url
}

fn hit_url(h: &Hit) -> String {
    let url = page::session_url(&h.path, h.source.as_deref());
    match &h.entry_id {
        Some(id) => format!("{url}?entry={}#e-{}", enc(id), enc(id)),
        None => url,
    }
}

/// A snippet with its matches in `<mark>`.
fn marked(ctx: &Ctx, s: &Snippet) -> Markup {
    let mut parts: Vec<(bool, &str)> = Vec::new();
    let mut at = 0;
    for &(a, b) in &s.marks {
        if a < at || b > s.text.len() || !s.text.is_char_boundary(a) || !s.text.is_char_boundary(b)
        {
            continue;
        }
        parts.push((false, &s.text[at..a]));
        parts.push((true, &s.text[a..b]));
        at = b;
    }
    parts.push((false, &s.text[at..]));
    html! {
        @for (hit, t) in parts {
            @if hit { mark { (ctx.clean(t)) } } @else { (ctx.clean(t)) }
        }
    }
}
