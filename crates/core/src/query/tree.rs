//! `tree`: pi's `getTree` (docs/pi-format.md §7): one node per entry id carrying the global label map; roots
//! are entries whose parent is null, themselves, or missing, in file order; children are sorted by
//! timestamp ascending, stably. Output is written iteratively, so a 100k-deep chain cannot
//! overflow the stack, and a node is never printed inside itself.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::error::Result;
use crate::query::resolve::Resolved;
use crate::query::Reader;
use crate::store::schema::entry_text_start;

/// One node of the tree.
#[derive(Debug, Clone)]
pub struct Node {
    pub seq: i64,
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub kind: Option<String>,
    pub role: Option<String>,
    pub ts: Option<String>,
    pub ts_ms: Option<i64>,
    pub text: Option<String>,
    pub label: Option<String>,
    pub label_ts: Option<String>,
    pub children: Vec<usize>,
}

/// A session's tree.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
    /// The current leaf (the last entry), pi's default.
    pub leaf_seq: Option<i64>,
    /// pi cannot open the file (no session header with an id first), so it has no tree.
    pub unopenable: bool,
}

/// Every entry in file order. A node's text is only ever shown cut to a line, so only its start
/// is read (a whole long message per node made a 200k-entry tree several times slower).
fn entries_sql() -> String {
    format!(
        "SELECT seq, id, parent_id, type, role, ts, ts_ms, {}, label, target_id
         FROM entries WHERE file_id = ?1 ORDER BY seq",
        entry_text_start("?2")
    )
}

/// Characters of each node's text a tree reads.
const NODE_TEXT: i64 = 400;

/// One entry's role and the start of its text (at most `chars` characters), by its `seq`.
///
/// # Errors
/// Index errors only.
pub fn entry_text(
    conn: &Connection,
    file_id: i64,
    seq: i64,
    chars: i64,
) -> Result<Option<(Option<String>, String)>> {
    use rusqlite::OptionalExtension;
    let row = conn
        .prepare_cached(&format!(
            "SELECT role, {} AS start FROM entries
             WHERE file_id = ?1 AND seq = ?2 AND start IS NOT NULL",
            entry_text_start("?3")
        ))?
        .query_row(rusqlite::params![file_id, seq, chars], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    Ok(row)
}

/// Builds the tree of one session.
///
/// # Errors
/// Index errors only.
pub fn build_tree(conn: &Connection, session: &Resolved) -> Result<Tree> {
    build(conn, session, NODE_TEXT)
}

/// pi's `getTree` of a session of the local index or the team server.
///
/// # Errors
/// Index or server errors.
pub fn tree(reader: &mut Reader, session: &Resolved) -> Result<Tree> {
    match reader {
        Reader::Local { conn, .. } => build_tree(conn, session),
        Reader::Server(server) => server.tree(session),
    }
}

fn build(conn: &Connection, session: &Resolved, text_chars: i64) -> Result<Tree> {
    if !crate::query::context::openable(conn, session.file_id)? {
        return Ok(Tree {
            unopenable: true,
            ..Tree::default()
        });
    }
    let mut stmt = conn.prepare_cached(&entries_sql())?;
    let rows = stmt.query_map(rusqlite::params![session.file_id, text_chars], |r| {
        Ok((
            Node {
                seq: r.get(0)?,
                id: r.get(1)?,
                parent_id: r.get(2)?,
                kind: r.get(3)?,
                role: r.get(4)?,
                ts: r.get(5)?,
                ts_ms: r.get(6)?,
                text: r.get(7)?,
                label: None,
                label_ts: None,
                children: Vec::new(),
            },
            r.get::<_, Option<String>>(8)?,
            r.get::<_, Option<String>>(9)?,
        ))
    })?;
    let tree = tree_of(rows)?;
    Ok(tree)
}

/// One entry as the tree reads it: the node, and for a label entry its label and target.
pub type TreeRow = (Node, Option<String>, Option<String>);

/// pi's `getTree` over the entries in file order (from the local index or the team server).
///
/// # Errors
/// The first error of `rows`.
pub fn tree_of<E>(rows: impl Iterator<Item = Result<TreeRow, E>>) -> Result<Tree, E> {
    let mut entries = Vec::new();
    let mut labels: HashMap<String, (String, Option<String>)> = HashMap::new();
    for row in rows {
        let (node, label, target) = row?;
        if node.kind.as_deref() == Some("label") {
            let target = target.unwrap_or_default();
            match label {
                Some(l) => labels.insert(target, (l, node.ts.clone())),
                None => labels.remove(&target),
            };
        }
        entries.push(node);
    }
    let leaf_seq = entries.last().map(|e| e.seq);
    let mut tree = assemble(entries, &labels);
    tree.leaf_seq = leaf_seq;
    Ok(tree)
}

/// Links entries into nodes exactly as `getTree` does, duplicate ids included (the map keeps the
/// last entry for an id, and every entry with that id links that same node).
fn assemble(entries: Vec<Node>, labels: &HashMap<String, (String, Option<String>)>) -> Tree {
    let mut node_of: HashMap<Option<&str>, usize> = HashMap::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        node_of.insert(e.id.as_deref(), i);
    }
    let links: Vec<(usize, Option<usize>, bool)> = entries
        .iter()
        .map(|e| {
            let node = node_of[&e.id.as_deref()];
            let is_root = e.parent_id.is_none() || e.parent_id == e.id;
            let parent = if is_root {
                None
            } else {
                node_of.get(&e.parent_id.as_deref()).copied()
            };
            (node, parent, is_root)
        })
        .collect();
    drop(node_of);
    let mut nodes = entries;
    for n in &mut nodes {
        if let Some((label, ts)) = n.id.as_ref().and_then(|id| labels.get(id)) {
            n.label = Some(label.clone());
            n.label_ts.clone_from(ts);
        }
    }
    let mut roots = Vec::new();
    for (node, parent, _) in links {
        match parent {
            Some(p) => nodes[p].children.push(node),
            None => roots.push(node),
        }
    }
    for i in 0..nodes.len() {
        let mut children = std::mem::take(&mut nodes[i].children);
        sort_by_time(&mut children, |c| nodes[c].ts_ms);
        nodes[i].children = children;
    }
    Tree {
        nodes,
        roots,
        ..Tree::default()
    }
}

/// `children.sort((a, b) => time(a) - time(b))`: stable; an Invalid Date compares as equal to
/// everything, which only a binary insertion sort (what V8 runs on short arrays) reproduces.
pub(crate) fn sort_by_time(children: &mut [usize], key: impl Fn(usize) -> Option<i64>) {
    if children.iter().all(|&c| key(c).is_some()) {
        children.sort_by_key(|&c| key(c));
        return;
    }
    let cmp = |a: usize, b: usize| match (key(a), key(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => std::cmp::Ordering::Equal,
    };
    for i in 1..children.len() {
        let pivot = children[i];
        let (mut lo, mut hi) = (0, i);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cmp(pivot, children[mid]).is_lt() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        children.copy_within(lo..i, lo + 1);
        children[lo] = pivot;
    }
}

/// Visits the tree depth-first without recursion (pi's trees can be hundreds of thousands deep):
/// `Event::Enter(node, depth, is_last_sibling)` before a node's children, `Event::Leave(node)`
/// after them.
/// A node already on the current path is skipped (duplicate ids can make pi's tree cyclic).
pub fn walk_tree(tree: &Tree, mut visit: impl FnMut(Event)) {
    let mut on_path = vec![false; tree.nodes.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (node, next child)
    let roots = &tree.roots;
    for (ri, &root) in roots.iter().enumerate() {
        visit(Event::Enter(root, 0, ri + 1 == roots.len()));
        on_path[root] = true;
        stack.push((root, 0));
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let children = &tree.nodes[node].children;
            if *next < children.len() {
                let child = children[*next];
                *next += 1;
                let last = *next == children.len();
                if on_path[child] {
                    continue;
                }
                visit(Event::Enter(child, stack.len(), last));
                on_path[child] = true;
                stack.push((child, 0));
            } else {
                stack.pop();
                on_path[node] = false;
                visit(Event::Leave(node));
            }
        }
    }
}

/// A step of [`walk_tree`].
pub enum Event {
    /// Entering a node: (node, depth, last among its siblings).
    Enter(usize, usize, bool),
    Leave(usize),
}

impl Tree {
    /// pi's `getTree()` as JSON: nodes `{id, parentId, type, role?, timestamp, label?,
    /// labelTimestamp?, index, children}`, where `index` is the entry's position in `getEntries()`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("[");
        let mut first = vec![true];
        walk_tree(self, |ev| match ev {
            Event::Enter(i, _, _) => {
                let top = first.last_mut().expect("a level");
                if !*top {
                    out.push(',');
                }
                *top = false;
                let n = &self.nodes[i];
                let mut m = serde_json::Map::new();
                m.insert("id".into(), n.id.clone().into());
                m.insert("parentId".into(), n.parent_id.clone().into());
                m.insert("type".into(), n.kind.clone().into());
                if let Some(role) = &n.role {
                    m.insert("role".into(), role.clone().into());
                }
                m.insert("timestamp".into(), n.ts.clone().into());
                if let Some(l) = &n.label {
                    m.insert("label".into(), l.clone().into());
                    m.insert("labelTimestamp".into(), n.label_ts.clone().into());
                }
                m.insert("index".into(), n.seq.into());
                let obj = serde_json::Value::Object(m).to_string();
                out.push_str(&obj[..obj.len() - 1]);
                out.push_str(",\"children\":[");
                first.push(true);
            }
            Event::Leave(_) => {
                first.pop();
                out.push_str("]}");
            }
        });
        out.push(']');
        out
    }
}
