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

/// One row of the drawn tree: its node, how many branches in it is, the mark that starts a
/// branch (`├─ `, `└─ `) and the rails to its left.
struct Row {
    node: usize,
    indent: usize,
    mark: Option<&'static str>,
    rail: String,
}

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
        // Rows in pi's order: the indent grows only below a node with siblings, and each row
        // carries the rails drawn to its left (`│` where a branch above goes on below it).
        let mut rows: Vec<Row> = Vec::new();
        let mut stack: Vec<(usize, Vec<bool>)> = Vec::new();
        let mut seen = 0usize;
        walk_tree(&tree, |ev| match ev {
            Event::Enter(i, depth, last) => {
                let (parent_indent, mut rails) = match stack.last() {
                    Some((indent, rails)) if depth > 0 => (*indent, rails.clone()),
                    _ => (0, Vec::new()),
                };
                let branching = depth > 0 && siblings[i] > 1;
                let rail = rails.iter().map(|more| if *more { "│  " } else { "   " }).collect::<String>();
                if branching {
                    rails.push(!last);
                }
                let own = rails.iter().map(|more| if *more { "│  " } else { "   " }).collect::<String>();
                let indent = parent_indent + usize::from(branching);
                if seen >= q.from && rows.len() < ROWS {
                    rows.push(Row {
                        node: i,
                        indent,
                        // The first entry of each branch, drawn as pi's /tree draws it.
                        mark: branching.then_some(if last { "└─ " } else { "├─ " }),
                        rail: if branching { rail } else { own.clone() },
                    });
                }
                stack.push((indent, rails));
                seen += 1;
            }
            Event::Leave(_) => {
                stack.pop();
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
                    @for r in &rows {
                        @let n = &tree.nodes[r.node];
                        @let id = n.id.as_deref().unwrap_or_default();
                        @let leaf = tree.leaf_seq == Some(n.seq);
                        li id=(format!("t-{id}")) class=[on_path[r.node].then_some("path")] data-indent=(r.indent) {
                            span.rail { (r.rail) }
                            @if let Some(m) = r.mark { span.branch { (m) } }
                            // A branch folds away with everything under it (app.js).
                            @if r.mark.is_some() { button.fold type="button" aria-expanded="true" title="fold this branch" { "▾" } }
                            a href=(format!("{url}?leaf={}", enc(id))) {
                                @if leaf { span.star { "★ " } }
                                span.kind { (ctx.clean(n.role.as_deref().or(n.kind.as_deref()).unwrap_or("?"))) }
                                " "
                                span.text { (ctx.line(n.text.as_deref().unwrap_or_default(), 140)) }
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
