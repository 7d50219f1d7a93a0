//! A session tree's shape, compact: pi's `getTree` links (the same rules as [`super::tree`]:
//! the last entry of an id stands for it, a parent that is null, itself or missing makes a root,
//! children by timestamp) with nothing per node but its `seq`, time and label. Ids are interned
//! while the links are made and dropped after; callers read the few ids they show by `seq`.
//! A 222,761-entry session's shape takes about 40 bytes a node where [`super::tree::Tree`]
//! holds several strings a node.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use crate::error::Result;
use crate::query::resolve::Resolved;
use crate::query::tree::{sort_by_time, Tree};

/// Every entry in file order, as the shape reads it.
const ENTRIES: &str = "SELECT seq, id, parent_id, type = 'label', ts_ms, label, target_id
                       FROM entries WHERE file_id = ?1 ORDER BY seq";

/// The linked shape of one session's tree.
#[derive(Debug, Default, PartialEq)]
pub struct Shape {
    /// Each node's entry `seq`, in file order.
    pub seq: Vec<i64>,
    ts_ms: Vec<Option<i64>>,
    /// Children of node `i`: `kids[first[i]..first[i + 1]]`, by timestamp.
    first: Vec<u32>,
    kids: Vec<u32>,
    pub roots: Vec<usize>,
    /// Labels by node.
    pub labels: HashMap<usize, String>,
    /// The current leaf's node (the last entry), pi's default.
    pub leaf: Option<usize>,
    /// pi cannot open the file (no session header with an id first), so it has no tree.
    pub unopenable: bool,
}

impl Shape {
    /// How many nodes (entries) the shape has.
    pub fn len(&self) -> usize {
        self.seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    /// The shape of a tree read whole (the team server's): node `i` is the tree's node `i`,
    /// linked as the tree links it; a label marks the last node of its id, as here.
    pub fn of_tree(tree: &Tree) -> Shape {
        if tree.unopenable {
            return Shape {
                unopenable: true,
                ..Shape::default()
            };
        }
        let mut first = Vec::with_capacity(tree.nodes.len() + 1);
        let mut kids = Vec::new();
        let mut labelled: HashMap<Option<&str>, (usize, &str)> = HashMap::new();
        for (i, node) in tree.nodes.iter().enumerate() {
            first.push(kids.len() as u32);
            kids.extend(node.children.iter().map(|&k| k as u32));
            if let Some(label) = &node.label {
                labelled.insert(node.id.as_deref(), (i, label));
            }
        }
        first.push(kids.len() as u32);
        Shape {
            seq: tree.nodes.iter().map(|n| n.seq).collect(),
            ts_ms: tree.nodes.iter().map(|n| n.ts_ms).collect(),
            first,
            kids,
            roots: tree.roots.clone(),
            labels: labelled
                .into_values()
                .map(|(i, l)| (i, l.to_string()))
                .collect(),
            leaf: tree.nodes.len().checked_sub(1),
            unopenable: false,
        }
    }

    /// The children of node `i`, oldest first.
    pub fn children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (a, b) = (self.first[i] as usize, self.first[i + 1] as usize);
        self.kids[a..b].iter().map(|&k| k as usize)
    }
}

/// One entry's links before they are resolved: its id and parent as interned numbers.
struct Row {
    id: Option<u32>,
    parent: Option<u32>,
}

/// Builds the shape of one session's tree.
///
/// # Errors
/// Index errors only.
pub fn build_shape(conn: &Connection, session: &Resolved) -> Result<Shape> {
    if !crate::query::context::openable(conn, session.file_id)? {
        return Ok(Shape {
            unopenable: true,
            ..Shape::default()
        });
    }
    let mut shape = Shape::default();
    let mut rows = Vec::new();
    let mut ids: HashMap<Box<str>, u32> = HashMap::new();
    let mut intern = |s: Option<String>| {
        s.map(|s| {
            let n = ids.len() as u32;
            *ids.entry(s.into_boxed_str()).or_insert(n)
        })
    };
    let mut labels: HashMap<Option<u32>, String> = HashMap::new();
    let mut stmt = conn.prepare_cached(ENTRIES)?;
    let mut q = stmt.query([session.file_id])?;
    while let Some(r) = q.next()? {
        let id = intern(r.get(1)?);
        let parent = intern(r.get(2)?);
        if r.get::<_, bool>(3)? {
            let target = intern(Some(r.get::<_, Option<String>>(6)?.unwrap_or_default()));
            match r.get::<_, Option<String>>(5)? {
                Some(l) => labels.insert(target, l),
                None => labels.remove(&target),
            };
        }
        shape.seq.push(r.get(0)?);
        shape.ts_ms.push(r.get(4)?);
        rows.push(Row { id, parent });
    }
    let distinct = ids.len();
    drop(ids);
    let last_of = link(&mut shape, &rows, distinct);
    for (id, label) in labels {
        let node = id.map_or(u32::MAX, |n| last_of[n as usize]);
        if node != u32::MAX {
            shape.labels.insert(node as usize, label);
        }
    }
    shape.leaf = shape.seq.len().checked_sub(1);
    Ok(shape)
}

/// Links rows into nodes as `getTree` does: the map keeps the last row of an id (rows without
/// an id share the key "no id", as in pi's `Map`), and every row links the node of its id.
/// Returns the node of each interned id (`u32::MAX`: no row has it).
fn link(shape: &mut Shape, rows: &[Row], distinct: usize) -> Vec<u32> {
    let mut last_of = vec![u32::MAX; distinct + 1];
    let key = |id: Option<u32>| id.map_or(distinct, |n| n as usize);
    for (i, r) in rows.iter().enumerate() {
        last_of[key(r.id)] = i as u32;
    }
    let mut count = vec![0u32; rows.len() + 1];
    let mut links = Vec::with_capacity(rows.len());
    for r in rows {
        let node = last_of[key(r.id)];
        let parent = match r.parent {
            Some(p) if r.parent != r.id => Some(last_of[p as usize]).filter(|&p| p != u32::MAX),
            _ => None,
        };
        match parent {
            Some(p) => count[p as usize] += 1,
            None => shape.roots.push(node as usize),
        }
        links.push((node, parent));
    }
    let mut first = Vec::with_capacity(rows.len() + 1);
    let mut at = 0u32;
    for c in &count[..rows.len()] {
        first.push(at);
        at += c;
    }
    first.push(at);
    let mut fill = first.clone();
    let mut kids = vec![0u32; at as usize];
    for (node, parent) in links {
        if let Some(p) = parent {
            kids[fill[p as usize] as usize] = node;
            fill[p as usize] += 1;
        }
    }
    let ts = &shape.ts_ms;
    for i in 0..rows.len() {
        let slice = &mut kids[first[i] as usize..first[i + 1] as usize];
        if slice.len() > 1 {
            let mut v: Vec<usize> = slice.iter().map(|&k| k as usize).collect();
            sort_by_time(&mut v, |k| ts[k]);
            for (d, s) in slice.iter_mut().zip(v) {
                *d = s as u32;
            }
        }
    }
    shape.first = first;
    shape.kids = kids;
    last_of
}

/// The id of the entry `seq` of a session, read from the index.
///
/// # Errors
/// Index errors only.
pub fn id_at(conn: &Connection, file_id: i64, seq: i64) -> Result<Option<String>> {
    let id = conn
        .prepare_cached("SELECT id FROM entries WHERE file_id = ?1 AND seq = ?2")?
        .query_row(rusqlite::params![file_id, seq], |r| r.get(0))
        .optional()?;
    Ok(id.flatten())
}
