//! A session's tree (`query::shape`: links, times and labels, no ids or text) as compact
//! segments for a model: each segment is a run of entries without a fork, listed depth-first
//! with its nesting depth, so a 100k-entry linear session is one line and every branch point
//! starts new ones. Ids and previews are read from the index for the page's segments only
//! (the team server's tree holds them already).

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::query::shape::{id_at, Shape};
use crate::query::tree::{entry_text, Tree};

/// Where a segment's ids and previews come from.
pub enum Nodes<'a> {
    /// The local index, read by `seq` for the page's segments only.
    Index { conn: &'a Connection, file_id: i64 },
    /// A tree read whole (the team server's; node `i` is the shape's node `i`).
    Tree(&'a Tree),
}

impl Nodes<'_> {
    pub fn id(&self, tree: &Shape, i: usize) -> crate::Result<Option<String>> {
        match self {
            Nodes::Index { conn, file_id } => id_at(conn, *file_id, tree.seq[i]),
            Nodes::Tree(t) => Ok(t.nodes[i].id.clone()),
        }
    }

    /// Node `i`'s role and the start of its text (at least `chars` characters when it has
    /// more), or `None` when it has no text.
    fn text(
        &self,
        tree: &Shape,
        i: usize,
        chars: usize,
    ) -> crate::Result<Option<(Option<String>, String)>> {
        match self {
            Nodes::Index { conn, file_id } => entry_text(conn, *file_id, tree.seq[i], chars as i64),
            Nodes::Tree(t) => {
                let n = &t.nodes[i];
                Ok(n.text
                    .as_ref()
                    .map(|text| (n.role.clone(), text.chars().take(chars).collect())))
            }
        }
    }
}

/// How much of a segment's first message a preview shows.
const PREVIEW_CHARS: usize = 120;

/// Entries at the start of a segment whose text may be its preview.
const PREVIEW_LOOK: usize = 16;

/// One segment, without its preview.
pub struct Segment {
    depth: usize,
    first: usize,
    last: usize,
    entries: usize,
    /// The first entries' node indexes, where the preview is looked for.
    heads: Vec<usize>,
    /// Labelled nodes.
    labels: Vec<usize>,
    current: bool,
    forks: usize,
}

/// The segments of `tree`, depth-first, parents before their branches.
pub fn segments(tree: &Shape) -> Vec<Segment> {
    let mut visited = vec![false; tree.len()];
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    let mut out = Vec::new();
    while let Some((start, depth)) = stack.pop() {
        if visited[start] {
            continue;
        }
        let mut seg = Segment {
            depth,
            first: start,
            last: start,
            entries: 0,
            heads: Vec::new(),
            labels: Vec::new(),
            current: false,
            forks: 0,
        };
        let mut cur = start;
        loop {
            visited[cur] = true;
            seg.add(tree, cur);
            let kids: Vec<usize> = tree.children(cur).filter(|&k| !visited[k]).collect();
            if kids.len() == 1 {
                cur = kids[0];
                continue;
            }
            seg.forks = kids.len();
            stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            break;
        }
        seg.last = cur;
        out.push(seg);
    }
    out
}

impl Segment {
    fn add(&mut self, tree: &Shape, i: usize) {
        self.entries += 1;
        if self.heads.len() < PREVIEW_LOOK {
            self.heads.push(i);
        }
        if tree.labels.contains_key(&i) {
            self.labels.push(i);
        }
        if tree.leaf == Some(i) {
            self.current = true;
        }
    }

    /// The first non-blank text among the segment's first entries, cut, with its role.
    fn preview(&self, nodes: &Nodes, tree: &Shape) -> crate::Result<Option<String>> {
        for &i in &self.heads {
            let Some((role, t)) = nodes.text(tree, i, PREVIEW_CHARS + 1)? else {
                continue;
            };
            if t.trim().is_empty() {
                continue;
            }
            let role = role.unwrap_or_else(|| "entry".into());
            let cut: String = t.chars().take(PREVIEW_CHARS).collect();
            let more = if cut.len() < t.len() { "…" } else { "" };
            return Ok(Some(format!("{role}: {}{more}", cut.trim())));
        }
        Ok(None)
    }

    /// The segment as the model sees it, its ids and preview read from `nodes`.
    pub fn to_json(&self, nodes: &Nodes, tree: &Shape) -> crate::Result<Value> {
        let id = |i: usize| nodes.id(tree, i);
        let labels = self
            .labels
            .iter()
            .map(|&i| Ok(json!({"id": id(i)?, "label": tree.labels[&i]})))
            .collect::<crate::Result<Vec<_>>>()?;
        Ok(json!({
            "depth": self.depth,
            "firstId": id(self.first)?,
            "lastId": id(self.last)?,
            "entries": self.entries,
            "preview": self.preview(nodes, tree)?,
            "labels": labels,
            "forks": self.forks,
            "current": self.current,
        }))
    }
}
