//! A session's tree (`query::tree`) as compact segments for a model: each segment is a run of
//! entries without a fork, listed depth-first with its nesting depth, so a 100k-entry linear
//! session is one line and every branch point starts new ones.

use serde_json::{json, Value};

use crate::query::tree::Tree;

/// How much of a segment's first message a preview shows.
const PREVIEW_CHARS: usize = 120;

/// The segments of `tree`, depth-first, parents before their branches.
pub fn segments(tree: &Tree) -> Vec<Value> {
    let mut visited = vec![false; tree.nodes.len()];
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    let mut out = Vec::new();
    while let Some((start, depth)) = stack.pop() {
        if visited[start] {
            continue;
        }
        let mut seg = Segment::default();
        let mut cur = start;
        loop {
            visited[cur] = true;
            seg.add(tree, cur);
            let kids: Vec<usize> = tree.nodes[cur]
                .children
                .iter()
                .copied()
                .filter(|&k| !visited[k])
                .collect();
            if kids.len() == 1 {
                cur = kids[0];
                continue;
            }
            seg.forks = kids.len();
            stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            break;
        }
        out.push(seg.to_json(tree, start, cur, depth));
    }
    out
}

#[derive(Default)]
struct Segment {
    entries: usize,
    preview: Option<String>,
    labels: Vec<Value>,
    current: bool,
    forks: usize,
}

impl Segment {
    fn add(&mut self, tree: &Tree, i: usize) {
        let n = &tree.nodes[i];
        self.entries += 1;
        if self.preview.is_none() {
            if let Some(t) = n.text.as_deref().filter(|t| !t.trim().is_empty()) {
                let role = n.role.as_deref().unwrap_or("entry");
                let cut: String = t.chars().take(PREVIEW_CHARS).collect();
                let more = if cut.len() < t.len() { "…" } else { "" };
                self.preview = Some(format!("{role}: {}{more}", cut.trim()));
            }
        }
        if let Some(l) = &n.label {
            self.labels.push(json!({"id": n.id, "label": l}));
        }
        if tree.leaf_seq == Some(n.seq) {
            self.current = true;
        }
    }

    fn to_json(&self, tree: &Tree, first: usize, last: usize, depth: usize) -> Value {
        json!({
            "depth": depth,
            "firstId": tree.nodes[first].id,
            "lastId": tree.nodes[last].id,
            "entries": self.entries,
            "preview": self.preview,
            "labels": self.labels,
            "forks": self.forks,
            "current": self.current,
        })
    }
}
