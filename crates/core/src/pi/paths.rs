//! Path facts: what `context` needs from an entry's whole root path, derived at ingest from the
//! entry and its parent's facts, so a query walks only the part of the path it returns.
//!
//! They hold only when every entry's parent is an earlier entry of the same file and ids are
//! unique (what pi writes). Anything else marks the session `tangled` and `context` walks the
//! whole path instead, exactly as before.

use crate::pi::model::EntryRow;

/// One entry's facts about its root path (itself included). `*_seq` fields name entries by seq.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathFacts {
    /// Ancestors on the path (a root has depth 0).
    pub depth: i64,
    /// The newest compaction.
    pub compaction: Option<i64>,
    /// The newest `thinking_level_change`.
    pub thinking: Option<i64>,
    /// The newest `model_change` or assistant message.
    pub model: Option<i64>,
    /// The oldest `message` entry without a message: pi throws there.
    pub throws: Option<i64>,
}

impl PathFacts {
    /// The facts of `row`, whose parent has `parent` (`None` for a root).
    pub fn of(row: &EntryRow, parent: Option<&PathFacts>) -> PathFacts {
        let inherited = parent.copied().unwrap_or_default();
        let own =
            |cond: bool, from_parent: Option<i64>| if cond { Some(row.seq) } else { from_parent };
        let kind = row.kind.as_deref();
        let is_assistant = kind == Some("message") && row.role.as_deref() == Some("assistant");
        PathFacts {
            depth: parent.map_or(0, |p| p.depth + 1),
            compaction: own(kind == Some("compaction"), inherited.compaction),
            thinking: own(kind == Some("thinking_level_change"), inherited.thinking),
            model: own(
                kind == Some("model_change") || is_assistant,
                inherited.model,
            ),
            throws: inherited.throws.or(row.no_message.then_some(row.seq)),
        }
    }
}

/// Whether pi treats `parent_id` as "no parent" (`parentId ? byId.get(parentId) : undefined`).
pub fn is_root(parent_id: Option<&str>) -> bool {
    parent_id.is_none_or(str::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: i64, kind: &str, role: Option<&str>) -> EntryRow {
        EntryRow {
            seq,
            kind: Some(kind.into()),
            role: role.map(Into::into),
            ..EntryRow::default()
        }
    }

    #[test]
    fn facts_accumulate_down_the_path() {
        let root = PathFacts::of(&row(0, "thinking_level_change", None), None);
        let a = PathFacts::of(&row(1, "message", Some("assistant")), Some(&root));
        let c = PathFacts::of(&row(2, "compaction", None), Some(&a));
        let u = PathFacts::of(&row(3, "message", Some("user")), Some(&c));
        assert_eq!(
            u,
            PathFacts {
                depth: 3,
                compaction: Some(2),
                thinking: Some(0),
                model: Some(1),
                throws: None
            }
        );
    }

    #[test]
    fn the_oldest_throwing_entry_is_kept() {
        let mut bad = row(0, "message", None);
        bad.no_message = true;
        let first = PathFacts::of(&bad, None);
        bad.seq = 1;
        let second = PathFacts::of(&bad, Some(&first));
        assert_eq!(second.throws, Some(0));
        assert!(is_root(Some("")) && is_root(None) && !is_root(Some("a")));
    }
}
