//! OpenClaw's own context for a transcript of its SQLite store (OpenClaw 2026.9.6): the active
//! path from its transcript tree (`scanSessionTranscriptTree`, `transcript-tree.ts`: `leaf`
//! entries move the leaf, entries written after a `reset` continue from the leaf, side appends
//! never move it), then the window after the newest `reset` or compaction on that path
//! (`iterateSessionContextEntries`, `session.ts`). pi's `buildSessionContext` knows neither
//! entry type; OpenClaw sends the model only this. Reading the lines is the caller's.

use std::collections::{HashMap, HashSet};

use crate::error::Result;
use crate::pi::rawjson::member;

use super::{Lines, PathEntry};

/// A JavaScript value as OpenClaw's navigation reads it: absent, `null`, a non-blank string
/// (`readNonBlankString`), or anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Js {
    Absent,
    Null,
    Text(String),
    Other,
}

fn field(line: &str, key: &str) -> Js {
    match member(line, key) {
        None => Js::Absent,
        Some("null") => Js::Null,
        Some(raw) => match serde_json::from_str::<String>(raw) {
            Ok(s) if !s.trim().is_empty() => Js::Text(s),
            _ => Js::Other,
        },
    }
}

/// The entry types OpenClaw's tree treats as transcript entries (`isCanonicalSessionEntryType`).
fn is_canonical(kind: Option<&str>) -> bool {
    matches!(
        kind,
        Some(
            "message"
                | "thinking_level_change"
                | "model_change"
                | "compaction"
                | "reset"
                | "branch_summary"
                | "custom"
                | "custom_message"
                | "label"
                | "session_info"
        )
    )
}

/// `parseSessionTranscriptTreeEntry`'s answer for one entry. `leaf` is `None` when the entry
/// does not move the leaf (JS `undefined`), `Some(None)` when it moves it to nothing.
#[derive(Debug, Clone)]
struct TreeEntry {
    id: String,
    parent: Option<String>,
    leaf: Option<Option<String>>,
    append_parent: Option<String>,
    side: bool,
}

/// One entry with what the navigation needs of it.
struct Nav {
    kind: Option<String>,
    leaf_control: bool,
    explicit: Option<TreeEntry>,
    /// `id` of a canonical entry without a `parentId` (OpenClaw hangs it on the leaf).
    parentless_id: Option<String>,
    side: bool,
    raw_parent: Option<String>,
}

fn nav(line: &str) -> Nav {
    let kind = match field(line, "type") {
        Js::Text(t) => Some(t),
        _ => None,
    };
    let side = matches!(member(line, "appendMode"), Some("\"side\""));
    let canonical = is_canonical(kind.as_deref());
    let id = match field(line, "id") {
        Js::Text(id) => Some(id),
        _ => None,
    };
    let parent_field = field(line, "parentId");
    let raw_parent = match &parent_field {
        Js::Text(p) => Some(p.clone()),
        _ => None,
    };
    let explicit = tree_entry(line, kind.as_deref(), id.clone(), &parent_field, canonical);
    let leaf_control = kind.as_deref() == Some("leaf") && explicit.is_some();
    let parentless_id = (canonical && parent_field == Js::Absent)
        .then_some(id)
        .flatten();
    Nav {
        kind,
        leaf_control,
        explicit,
        parentless_id,
        side,
        raw_parent,
    }
}

/// OpenClaw's `parseSessionTranscriptTreeEntry`.
fn tree_entry(
    line: &str,
    kind: Option<&str>,
    id: Option<String>,
    parent: &Js,
    canonical: bool,
) -> Option<TreeEntry> {
    if kind == Some("session") || *parent == Js::Absent {
        return None;
    }
    let id = id?;
    let parent = match parent {
        Js::Null => None,
        Js::Text(p) => Some(p.clone()),
        _ => return None,
    };
    let side = matches!(member(line, "appendMode"), Some("\"side\""));
    if kind == Some("leaf") {
        let target = match field(line, "targetId") {
            Js::Null => None,
            Js::Text(t) => Some(t),
            _ => return None,
        };
        let append_parent = match field(line, "appendParentId") {
            Js::Absent => target.clone(),
            Js::Null => None,
            Js::Text(t) => Some(t),
            Js::Other => return None,
        };
        let bad_mode = !matches!(member(line, "appendMode"), None | Some("\"side\""));
        if bad_mode {
            return None;
        }
        return Some(TreeEntry {
            id,
            parent: target.clone(),
            leaf: Some(target),
            append_parent,
            side,
        });
    }
    Some(TreeEntry {
        leaf: (canonical && !side).then(|| Some(id.clone())),
        append_parent: Some(id.clone()),
        id,
        parent,
        side,
    })
}

/// A node of the tree: the entry (by its index among `entries`) under its normalized parent.
#[derive(Debug, Clone)]
struct Node {
    index: usize,
    parent: Option<String>,
    leaf_control: bool,
}

/// The active path of OpenClaw's tree at `leaf` (its own leaf when `None`): the entries, root
/// first, each once, `leaf` entries left out. Empty on a cycle, as OpenClaw's.
///
/// # Errors
/// The lines cannot be read.
pub(super) fn active_path(
    entries: &[PathEntry],
    leaf: Option<&str>,
    lines: &dyn Lines,
) -> Result<Vec<PathEntry>> {
    let mut by_id: HashMap<String, Node> = HashMap::new();
    let mut invalid: HashSet<String> = HashSet::new();
    let mut reset_descendants: HashSet<String> = HashSet::new();
    let mut latest_reset: Option<String> = None;
    let mut leaf_id: Option<String> = None;
    let mut append_parent: Option<String> = None;
    for (index, e) in entries.iter().enumerate() {
        let n = nav(&lines.line(e)?);
        let mut explicit = n.explicit.clone();
        // After a reset, a leaf control aiming outside the reset's descendants keeps the leaf.
        if let (Some(_), Some(current), Some(t)) = (&latest_reset, &leaf_id, &mut explicit) {
            let aims_outside = match &t.leaf {
                Some(None) => true,
                Some(Some(target)) => !reset_descendants.contains(target),
                None => false,
            };
            if n.leaf_control && aims_outside {
                t.parent = Some(current.clone());
                t.leaf = Some(Some(current.clone()));
                t.append_parent = Some(current.clone());
            }
        }
        let known = |id: &Option<String>| {
            id.as_ref()
                .is_none_or(|id| by_id.contains_key(id) && !invalid.contains(id))
        };
        if let Some(t) = explicit
            .as_ref()
            .filter(|t| n.leaf_control && t.leaf.is_some())
        {
            let target = t.leaf.clone().flatten();
            if !known(&target) || !known(&t.append_parent) {
                invalid.insert(t.id.clone());
                let node = Node {
                    index,
                    parent: n.raw_parent.clone(),
                    leaf_control: true,
                };
                by_id.insert(t.id.clone(), node);
                continue;
            }
        }
        let parentless = || {
            n.parentless_id.clone().map(|id| TreeEntry {
                leaf: (!n.side).then(|| Some(id.clone())),
                append_parent: Some(id.clone()),
                parent: leaf_id.clone(),
                id,
                side: n.side,
            })
        };
        let Some(mut t) = explicit.clone().or_else(parentless) else {
            continue;
        };
        if is_canonical(n.kind.as_deref()) {
            let stale = explicit.is_some()
                && t.parent.as_ref().is_some_and(|p| !by_id.contains_key(p))
                && leaf_id.is_some();
            let outside_reset = latest_reset.is_some()
                && !t.side
                && t.parent
                    .as_ref()
                    .is_none_or(|p| !reset_descendants.contains(p));
            // Written on the append cursor while the leaf moved elsewhere: it follows the leaf.
            let behind = explicit.is_some()
                && !t.side
                && t.parent == append_parent
                && leaf_id != append_parent;
            let candidate = if outside_reset || (!t.side && stale) || behind {
                leaf_id.clone()
            } else {
                t.parent.clone()
            };
            t.parent = canonical_parent(candidate, &by_id);
        }
        let node = Node {
            index,
            parent: t.parent.clone(),
            leaf_control: n.leaf_control,
        };
        by_id.insert(t.id.clone(), node);
        if n.kind.as_deref() == Some("reset") {
            latest_reset = Some(t.id.clone());
            reset_descendants.clear();
            reset_descendants.insert(t.id.clone());
        } else if latest_reset.is_some()
            && t.parent
                .as_ref()
                .is_some_and(|p| reset_descendants.contains(p))
        {
            reset_descendants.insert(t.id.clone());
        }
        append_parent = t.append_parent.clone();
        if let Some(l) = t.leaf {
            leaf_id = l;
        }
    }
    let start = match leaf {
        Some(id) => Some(id.to_string()),
        None => leaf_id,
    };
    Ok(path_to(start, &by_id)
        .into_iter()
        .map(|i| entries[i].clone())
        .collect())
}

/// OpenClaw's `resolveCanonicalParentId`: a parent that is a leaf control stands for the
/// entry it names.
fn canonical_parent(parent: Option<String>, by_id: &HashMap<String, Node>) -> Option<String> {
    let mut seen = HashSet::new();
    let mut current = parent;
    while let Some(id) = current {
        if seen.contains(&id) {
            return Some(id);
        }
        match by_id.get(&id) {
            Some(node) if node.leaf_control => {
                current = node.parent.clone();
                seen.insert(id);
            }
            _ => return Some(id),
        }
    }
    None
}

/// OpenClaw's `selectSessionTranscriptTreePathNodes`: entry indexes root first.
fn path_to(leaf: Option<String>, by_id: &HashMap<String, Node>) -> Vec<usize> {
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut current = leaf;
    while let Some(id) = current {
        if !seen.insert(id.clone()) {
            return Vec::new();
        }
        let Some(node) = by_id.get(&id) else {
            break;
        };
        if !node.leaf_control {
            path.push(node.index);
        }
        current = node.parent.clone();
    }
    path.reverse();
    path
}

/// OpenClaw's `iterateSessionContextEntries` (the entries that give messages, the boundary
/// first): after the newest `reset` or compaction on the path, with what it keeps before it
/// (from its `firstKeptEntryId`; a reset keeps only user and assistant messages and paired
/// tool results). Messages marked `excludeFromContext` are left out, except kept by a reset.
///
/// # Errors
/// The lines cannot be read.
pub(super) fn context_entries(path: &[PathEntry], lines: &dyn Lines) -> Result<Vec<PathEntry>> {
    let kind = |e: &PathEntry| e.kind.clone().unwrap_or_default();
    let boundary = path
        .iter()
        .rposition(|e| matches!(kind(e).as_str(), "reset" | "compaction"));
    let mut out = Vec::new();
    let (boundary_index, first_kept) = match boundary {
        Some(b) => {
            // Read from the line: the index keeps `firstKeptEntryId` of pi's types only.
            let line = lines.line(&path[b])?;
            let fk = member(&line, "firstKeptEntryId")
                .and_then(|raw| serde_json::from_str::<String>(raw).ok());
            let first = fk.and_then(|fk| {
                path.iter()
                    .position(|e| e.id.as_deref() == Some(fk.as_str()))
                    .filter(|&i| i < b)
            });
            out.push(path[b].clone());
            (Some(b), first.unwrap_or(b))
        }
        None => (None, 0),
    };
    let reset_kept: Option<HashSet<usize>> = match boundary_index {
        Some(b) if kind(&path[b]) == "reset" => Some(reset_kept(path, first_kept, b, lines)?),
        _ => None,
    };
    for (i, e) in path.iter().enumerate() {
        let retained = boundary_index.is_some_and(|b| i < b);
        if Some(i) == boundary_index
            || (retained
                && (i < first_kept || reset_kept.as_ref().is_some_and(|k| !k.contains(&i))))
        {
            continue;
        }
        let k = kind(e);
        if !matches!(k.as_str(), "message" | "custom_message" | "branch_summary") {
            continue;
        }
        let kept_by_reset = reset_kept.as_ref().is_some_and(|k| k.contains(&i));
        if k == "message" && !kept_by_reset && excluded(e, lines)? {
            continue;
        }
        out.push(e.clone());
    }
    Ok(out)
}

/// `message.excludeFromContext === true`.
fn excluded(e: &PathEntry, lines: &dyn Lines) -> Result<bool> {
    let line = lines.line(e)?;
    Ok(member(&line, "message").and_then(|m| member(m, "excludeFromContext")) == Some("true"))
}

/// OpenClaw's `selectResetKeptEntries` over `path[from..to]`: user and assistant messages, and
/// tool results that answer a tool call of the assistant message opening their frame.
fn reset_kept(
    path: &[PathEntry],
    from: usize,
    to: usize,
    lines: &dyn Lines,
) -> Result<HashSet<usize>> {
    let mut kept = HashSet::new();
    // The tool-call ids of the current frame's assistant message not answered yet.
    let mut pending: Vec<String> = Vec::new();
    for (i, e) in path.iter().enumerate().take(to).skip(from) {
        if e.kind.as_deref() != Some("message") {
            continue;
        }
        match e.role.as_deref() {
            Some("user") => {
                kept.insert(i);
            }
            Some("assistant") => {
                kept.insert(i);
                let calls = tool_call_ids(&lines.line(e)?);
                if !calls.is_empty() {
                    pending = calls;
                }
            }
            Some("toolResult") => {
                let line = lines.line(e)?;
                let id = member(&line, "message")
                    .and_then(|m| member(m, "toolCallId"))
                    .and_then(|raw| serde_json::from_str::<String>(raw).ok());
                if let Some(pos) = id.and_then(|id| pending.iter().position(|p| *p == id)) {
                    pending.remove(pos);
                    kept.insert(i);
                }
            }
            _ => {}
        }
    }
    Ok(kept)
}

/// The ids of an assistant message's `toolCall` blocks.
fn tool_call_ids(line: &str) -> Vec<String> {
    let Some(content) = member(line, "message").and_then(|m| member(m, "content")) else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Array(blocks)) = serde_json::from_str(content) else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b["type"] == "toolCall")
        .filter_map(|b| b["id"].as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries whose lines are kept in memory, found by `offset` (their index).
    struct Mem(Vec<String>);

    impl Lines for Mem {
        fn line(&self, e: &PathEntry) -> Result<String> {
            Ok(self.0[e.offset as usize].clone())
        }
        fn version(&self) -> i64 {
            3
        }
    }

    fn entries(lines: &[serde_json::Value]) -> (Vec<PathEntry>, Mem) {
        let rows = lines
            .iter()
            .enumerate()
            .map(|(i, v)| PathEntry {
                seq: i as i64,
                id: v["id"].as_str().map(str::to_string),
                kind: v["type"].as_str().map(str::to_string),
                role: v["message"]["role"].as_str().map(str::to_string),
                first_kept: None,
                target_id: None,
                provider: None,
                model: None,
                thinking: None,
                offset: i as i64,
                len: 0,
                ts_ms: None,
            })
            .collect();
        (rows, Mem(lines.iter().map(|v| v.to_string()).collect()))
    }

    fn msg(id: &str, parent: Option<&str>, role: &str) -> serde_json::Value {
        serde_json::json!({"type": "message", "id": id, "parentId": parent,
                           "message": {"role": role, "content": id}})
    }

    fn ids(path: &[PathEntry]) -> Vec<&str> {
        path.iter().filter_map(|e| e.id.as_deref()).collect()
    }

    #[test]
    fn a_leaf_entry_moves_the_leaf_to_its_target() {
        let (all, lines) = entries(&[
            msg("a", None, "user"),
            msg("b", Some("a"), "assistant"),
            msg("c", Some("b"), "user"),
            serde_json::json!({"type": "leaf", "id": "l", "parentId": "c", "targetId": "a"}),
        ]);
        let path = active_path(&all, None, &lines).unwrap();
        assert_eq!(ids(&path), ["a"]);
    }

    #[test]
    fn entries_after_a_reset_continue_from_the_leaf_and_the_context_starts_there() {
        let (all, lines) = entries(&[
            msg("a", None, "user"),
            msg("b", Some("a"), "assistant"),
            serde_json::json!({"type": "reset", "id": "r", "parentId": "b", "firstKeptEntryId": "b"}),
            // written with a stale parent: OpenClaw hangs it on the reset
            msg("c", Some("b"), "user"),
        ]);
        let path = active_path(&all, None, &lines).unwrap();
        assert_eq!(ids(&path), ["a", "b", "r", "c"]);
        let ctx = context_entries(&path, &lines).unwrap();
        assert_eq!(ids(&ctx), ["r", "b", "c"]);
    }

    #[test]
    fn a_side_append_does_not_move_the_leaf() {
        let mut side = msg("s", Some("b"), "user");
        side["appendMode"] = "side".into();
        let (all, lines) = entries(&[
            msg("a", None, "user"),
            msg("b", Some("a"), "assistant"),
            side,
        ]);
        let path = active_path(&all, None, &lines).unwrap();
        assert_eq!(ids(&path), ["a", "b"]);
    }

    #[test]
    fn a_reset_keeps_only_messages_and_answered_tool_results() {
        let call = serde_json::json!({"type": "message", "id": "t", "parentId": "a",
            "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "k1"}]}});
        let answer = serde_json::json!({"type": "message", "id": "u", "parentId": "t",
            "message": {"role": "toolResult", "toolCallId": "k1"}});
        let stray = serde_json::json!({"type": "message", "id": "v", "parentId": "u",
            "message": {"role": "toolResult", "toolCallId": "nope"}});
        let (all, lines) = entries(&[
            msg("a", None, "user"),
            call,
            answer,
            stray,
            serde_json::json!({"type": "reset", "id": "r", "parentId": "v", "firstKeptEntryId": "a"}),
        ]);
        let path = active_path(&all, None, &lines).unwrap();
        let ctx = context_entries(&path, &lines).unwrap();
        assert_eq!(ids(&ctx), ["r", "a", "t", "u"]);
    }
}
