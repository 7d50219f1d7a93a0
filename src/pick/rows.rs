//! Which rows the list shows, in which order: pi's picker filter (`query::picker::rank`, the
//! semantics of `pidx list --query`), the named-only filter, and the three sorts of pi's
//! picker: threaded (forks under the session they came from, by `parentSessionPath`), recent,
//! and relevance. Full-text hits keep `pidx search`'s grouping by session.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::query::list::SessionInfo;
use crate::query::search::Hit;

/// pi's picker sorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// pi's default: with typed text, best match first; without, forks under their parent.
    Threaded,
    /// Newest activity first, also with typed text.
    Recent,
    /// Best match first (the listing order without typed text).
    Relevance,
}

impl Sort {
    pub fn next(self) -> Sort {
        match self {
            Sort::Threaded => Sort::Recent,
            Sort::Recent => Sort::Relevance,
            Sort::Relevance => Sort::Threaded,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Sort::Threaded => "threaded",
            Sort::Recent => "recent",
            Sort::Relevance => "relevance",
        }
    }
}

/// A session row: its index in the loaded list and its depth in the fork tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionRow {
    pub index: usize,
    pub depth: usize,
}

/// The rows for `query`, given `ranked`, the matching sessions in pi's order
/// (`query::picker::rank`).
pub fn session_rows(
    sessions: &[SessionInfo],
    mut ranked: Vec<usize>,
    query: &str,
    sort: Sort,
    named_only: bool,
) -> Vec<SessionRow> {
    if named_only {
        ranked.retain(|&i| sessions[i].name.is_some());
    }
    let typed = !crate::pi::js::js_trim(query).is_empty();
    match sort {
        Sort::Threaded if !typed => threaded(sessions, &ranked),
        Sort::Recent if typed => {
            ranked.sort_by_key(|&i| std::cmp::Reverse(sessions[i].modified_ms));
            flat(ranked)
        }
        _ => flat(ranked),
    }
}

fn flat(order: Vec<usize>) -> Vec<SessionRow> {
    order
        .into_iter()
        .map(|index| SessionRow { index, depth: 0 })
        .collect()
}

/// Forks under the session they were forked from (pi's threaded view), each level in listing
/// order; a parent outside the list makes a fork a root. Iterative, and a cycle of
/// `parentSession` links cannot loop.
fn threaded(sessions: &[SessionInfo], order: &[usize]) -> Vec<SessionRow> {
    let parent = |i: usize| {
        sessions[i]
            .parent_session_path
            .as_ref()
            .and_then(Value::as_str)
    };
    let by_path: HashMap<&str, usize> = order
        .iter()
        .map(|&i| (sessions[i].path.as_str(), i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for &i in order {
        match parent(i).and_then(|p| by_path.get(p)) {
            Some(&p) if p != i => children.entry(p).or_default().push(i),
            _ => roots.push(i),
        }
    }
    let mut rows = Vec::with_capacity(order.len());
    let mut seen = HashSet::new();
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        if !seen.insert(i) {
            continue;
        }
        rows.push(SessionRow { index: i, depth });
        if let Some(kids) = children.get(&i) {
            stack.extend(kids.iter().rev().map(|&k| (k, depth + 1)));
        }
    }
    // Sessions only reachable through a cycle of parent links: shown flat at the end.
    rows.extend(
        order
            .iter()
            .filter(|i| !seen.contains(i))
            .map(|&index| SessionRow { index, depth: 0 }),
    );
    rows
}

/// Full-text hits as shown: `pidx search`'s order (relevance), or sessions by their newest hit
/// (recent); named sessions only when asked.
pub fn hit_rows(hits: &[Hit], sort: Sort, named_only: bool) -> Vec<usize> {
    let mut groups: Vec<(i64, Vec<usize>)> = Vec::new();
    for (i, h) in hits.iter().enumerate() {
        if named_only && h.session_name.is_none() {
            continue;
        }
        match groups.iter_mut().find(|(f, _)| *f == h.file_id) {
            Some((_, g)) => g.push(i),
            None => groups.push((h.file_id, vec![i])),
        }
    }
    if sort == Sort::Recent {
        let newest = |g: &Vec<usize>| {
            g.iter()
                .filter_map(|&i| {
                    hits[i]
                        .timestamp
                        .as_deref()
                        .and_then(crate::pi::js::parse_iso_ms)
                })
                .max()
        };
        groups.sort_by_key(|(_, g)| std::cmp::Reverse(newest(g)));
    }
    groups.into_iter().flat_map(|(_, g)| g).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(path: &str, parent: Option<&str>, modified_ms: i64) -> SessionInfo {
        SessionInfo {
            file_id: 0,
            source: None,
            path: path.into(),
            id: None,
            cwd: "/p".into(),
            name: None,
            parent_session_path: parent.map(Value::from),
            created_ms: None,
            modified_ms,
            message_count: 1,
            first_message: path.into(),
            all_messages_text: Some(String::new()),
            gateway: None,
        }
    }

    #[test]
    fn forks_sit_under_their_parent_and_cycles_end() {
        let s = vec![
            session("/fork-of-b", Some("/b"), 5),
            session("/a", None, 4),
            session("/b", None, 3),
            session("/loop1", Some("/loop2"), 2),
            session("/loop2", Some("/loop1"), 1),
        ];
        let all = || (0..s.len()).collect();
        let rows = session_rows(&s, all(), "", Sort::Threaded, false);
        let shown: Vec<(&str, usize)> = rows
            .iter()
            .map(|r| (s[r.index].path.as_str(), r.depth))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("/a", 0),
                ("/b", 0),
                ("/fork-of-b", 1),
                ("/loop1", 0),
                ("/loop2", 0)
            ]
        );
        let recent = session_rows(&s, all(), "x", Sort::Recent, false);
        assert_eq!(recent.len(), 5);
        assert_eq!(s[recent[0].index].path, "/fork-of-b");
    }
}
