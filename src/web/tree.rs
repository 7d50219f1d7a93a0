//! The tree page: pi's `getTree` drawn as pi's `/tree` draws it, a chain of single children at
//! one indent and a step in at each branch, with labels, summaries and the current leaf marked
//! and the current branch highlighted. Each entry links to the context at that leaf.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Html;
use maud::html;
use serde::Deserialize;

use super::page::{self, enc, Nav};
use super::{blocking, split_seg, App, Fail};
use crate::query::resolve::resolve;
use crate::query::tree::{tree, walk_tree, Event, Tree};

/// Rows a page shows.
const ROWS: usize = 3000;

/// Indents drawn (CSS classes `d0`..`d24`); deeper branches stay at the last.
const DEEPEST: usize = 24;

#[derive(Deserialize, Default)]
pub struct TreeQuery {
    #[serde(default)]
    from: usize,
}

/// The nodes on the path from the current leaf to its root.
fn current_path(tree: &Tree) -> Vec<bool> {
    let mut on = vec![false; tree.nodes.len()];
    let by_id: HashMap<&str, usize> = tree
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.id.as_deref().map(|id| (id, i)))
        .collect();
    let mut at = tree
        .leaf_seq
        .and_then(|s| tree.nodes.iter().position(|n| n.seq == s));
    while let Some(i) = at {
        if on[i] {
            break;
        }
        on[i] = true;
        at = tree.nodes[i]
            .parent_id
            .as_deref()
            .and_then(|p| by_id.get(p).copied());
    }
    on
}

pub async fn page(
    State(app): State<Arc<App>>,
    Path(seg): Path<String>,
    Query(q): Query<TreeQuery>,
) -> Result<Html<String>, Fail> {
    let (source, file) = split_seg(&app, &seg);
    blocking(&app, source, move |ctx, reader| {
        let session = resolve(reader, &file)?;
        let tree = tree(reader, &session)?;
        let on_path = current_path(&tree);
        let url = page::session_url(&session.path, session.source.as_deref());
        let mut siblings = vec![1usize; tree.nodes.len()];
        for n in &tree.nodes {
            for &c in &n.children {
                siblings[c] = n.children.len();
            }
        }
        // (node, indent) in pi's order; the indent grows only below a node with siblings.
        let mut rows: Vec<(usize, usize, Option<&str>)> = Vec::new();
        let mut indents: Vec<usize> = Vec::new();
        let mut seen = 0usize;
        walk_tree(&tree, |ev| match ev {
            Event::Enter(i, depth, last) => {
                let parent_indent = if depth == 0 { 0 } else { indents.last().copied().unwrap_or(0) };
                let branching = depth > 0 && siblings[i] > 1;
                let indent = parent_indent + usize::from(branching);
                indents.push(indent);
                if seen >= q.from && rows.len() < ROWS {
                    // The first entry of each branch, drawn as pi's /tree draws it.
                    let mark = branching.then_some(if last { "└─ " } else { "├─ " });
                    rows.push((i, indent, mark));
                }
                seen += 1;
            }
            Event::Leave(_) => {
                indents.pop();
            }
        });
        let seg = page::session_seg(&session.path, session.source.as_deref());
        Ok(page::layout(
            "tree",
            Nav::Session(&seg, "tree"),
            html! {
                h1 { "Tree" }
                p.meta { (page::num(tree.nodes.len() as i64)) " entries · ★ the current leaf · highlighted: the current branch · choose an entry to read the context at it" }
                @if tree.unopenable { p.error { "pi cannot open this file (no session header with an id first), so it has no tree" } }
                @if q.from > 0 { p.nav { a href=(format!("{url}/tree?from={}", q.from.saturating_sub(ROWS))) { "↑ earlier entries" } } }
                ul.tree {
                    @for (i, indent, mark) in &rows {
                        @let n = &tree.nodes[*i];
                        @let id = n.id.as_deref().unwrap_or_default();
                        @let leaf = tree.leaf_seq == Some(n.seq);
                        li id=(format!("t-{id}")) class=(format!("d{}{}", indent.min(&DEEPEST), if on_path[*i] { " path" } else { "" })) {
                            @if let Some(m) = mark { span.branch { (m) } }
                            a href=(format!("{url}?leaf={}", enc(id))) {
                                @if leaf { span.star { "★ " } }
                                span.kind { (ctx.clean(n.role.as_deref().or(n.kind.as_deref()).unwrap_or("?"))) }
                                " "
                                span.text { (ctx.clean(&crate::term::one_line_upto(n.text.as_deref().unwrap_or_default(), 140))) }
                            }
                            @if let Some(l) = &n.label { " " span.label { (ctx.clean(l)) } }
                        }
                    }
                }
                @if seen > q.from + rows.len() {
                    p.nav { a href=(format!("{url}/tree?from={}", q.from + rows.len())) { "more entries ↓" } }
                }
            },
        ))
    })
    .await
}
