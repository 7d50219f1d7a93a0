//! The file history page: which sessions touched a file, newest first (`pidx files PATH`), each
//! linking to the session at the entry whose tool call did it. A session page links every
//! tool call's path here; a relative path is resolved against that session's cwd, as pi
//! resolved it.

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Html;
use maud::html;
use serde::Deserialize;

use super::page::{self, enc, Nav};
use super::{blocking, App, Fail};
use crate::query::files::list::{touches, FilesOptions};
use crate::query::resolve::resolve_session;
use crate::query::Reader;

/// Touches a page shows.
const ROWS: usize = 200;

#[derive(Deserialize, Default)]
pub struct FilesQuery {
    #[serde(default)]
    path: String,
    /// The session (its file name) whose tool call named `path`: a relative path is its cwd's.
    session: Option<String>,
}

/// The address of a file's history, from a tool call's path in the session at `session_url`
/// (`/s/FILE`, already encoded).
pub fn url(path: &str, session_url: &str) -> String {
    let seg = session_url.strip_prefix("/s/").unwrap_or(session_url);
    format!("/files?path={}&session={seg}", enc(path))
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<FilesQuery>,
) -> Result<Html<String>, Fail> {
    blocking(&app, None, move |ctx, reader| {
        let Reader::Local { conn, scope, .. } = reader else {
            return Err(Fail::Bad(
                "a file's history reads the local index: the team server keeps no file touches".into(),
            ));
        };
        if q.path.trim().is_empty() {
            return Err(Fail::Bad("which file? /files?path=PATH".into()));
        }
        let mut path = q.path.clone();
        if let (false, Some(seg)) = (Path::new(&path).is_absolute(), &q.session) {
            let session = resolve_session(conn, scope, seg)?;
            let cwd: String = conn.query_row(
                "SELECT cwd FROM sessions WHERE file_id = ?1",
                [session.file_id],
                |r| r.get(0),
            )?;
            path = Path::new(&cwd).join(&path).to_string_lossy().into_owned();
        }
        let path = crate::query::files::absolute(Path::new(&path))
            .to_string_lossy()
            .into_owned();
        let opts = FilesOptions {
            pattern: Some(path.clone()),
            limit: ROWS,
            diffs: true,
            ..FilesOptions::default()
        };
        let rows = touches(conn, &opts)?;
        Ok(page::layout(
            &crate::term::one_line_upto(&path, 60),
            Nav::Top("files"),
            html! {
                h1 { "History of " code { (ctx.clean(&path)) } }
                @if rows.is_empty() {
                    p.meta { "no session touched this file" }
                } @else {
                    table.files {
                        thead { tr { th { "when" } th { "kind" } th { "session" } th { "result" } th { "change" } } }
                        tbody {
                            @for r in &rows {
                                @let at = r.by.entry_id.as_deref().unwrap_or_default();
                                tr {
                                    td { (r.by.ts_ms.map(|t| page::when(&crate::pi::js::iso(t))).unwrap_or_default()) }
                                    // `read (read)` said one thing twice: the tool only when it is not the kind.
                                    td { (ctx.clean(&r.by.kind)) @if r.tool != r.by.kind { " (" (ctx.clean(&r.tool)) ")" } }
                                    td { a href=(format!("{}?entry={}#e-{}", page::session_url(&r.by.session_path, None), enc(at), enc(at))) {
                                        code { (ctx.clean(&r.by.session)) } " " (ctx.clean(r.by.name.as_deref().unwrap_or_default())) } }
                                    td class=[(r.status.as_deref() == Some("error")).then_some("error")] { (r.status.as_deref().unwrap_or("-")) }
                                    td {
                                        @if let (Some(a), Some(d)) = (r.added, r.removed) { "+" (a) " -" (d) }
                                        @if !r.diff.is_empty() { pre.diff { @for l in &r.diff { (ctx.clean(l)) "\n" } } }
                                    }
                                }
                            }
                        }
                    }
                    @if rows.len() == ROWS { p.meta { "the newest " (ROWS) " touches; `pidx files` lists them all" } }
                }
            },
        ))
    })
    .await
}
