//! pi's `buildSessionContext` over a located path (docs/pi-format.md §6): the settings from the
//! whole path, the path cut by its newest compaction, and the messages each entry gives, with
//! context edits applied, read from the entries' lines (`Lines`).

use crate::error::{Error, Result};
use crate::pi::message::{apply_edit, changed_message, object, push_raw, raw_truthy};
use crate::pi::rawjson::{member, member_range};

use super::{Context, Lines, PathEntry};

pub(super) type Edits = std::collections::HashMap<Option<String>, usize>;

/// The messages context entry `i` contributes (pi's `buildSessionProjection` for it, edits
/// applied).
pub(super) fn messages_at(
    entries: &[PathEntry],
    edits: &Edits,
    i: usize,
    lines: &dyn Lines,
) -> Result<Vec<String>> {
    let Some(e) = entries.get(i) else {
        return Ok(Vec::new());
    };
    if e.kind.as_deref() == Some("compaction") && i > 0 {
        return Ok(Vec::new());
    }
    let messages = entry_messages(e, lines)?;
    match edits.get(&e.id) {
        None => Ok(messages),
        Some(&edit) => Ok(apply_edit(messages, &lines.line(&entries[edit])?)),
    }
}

pub(super) fn edits_of(entries: &[PathEntry]) -> Edits {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind.as_deref() == Some("context_edit"))
        .map(|(i, e)| (e.target_id.clone(), i))
        .collect()
}

/// pi's `getSessionContextSettings`: thinking level and model over the whole path.
pub(super) fn settings(path: &[PathEntry], lines: &dyn Lines) -> Result<Context> {
    let mut ctx = Context {
        thinking_level: Some("off".into()),
        ..Context::default()
    };
    for e in path {
        match e.kind.as_deref() {
            Some("thinking_level_change") => ctx.thinking_level.clone_from(&e.thinking),
            Some("model_change") => ctx.model = Some((e.provider.clone(), e.model.clone())),
            Some("message") => match e.role.as_deref() {
                Some("assistant") => ctx.model = Some((e.provider.clone(), e.model.clone())),
                Some(_) => {}
                None => check_message_present(e, lines)?,
            },
            _ => {}
        }
    }
    Ok(ctx)
}

/// pi throws on `entry.message.role` when `message` is missing or null.
fn check_message_present(e: &PathEntry, lines: &dyn Lines) -> Result<()> {
    let line = lines.line(e)?;
    match member(&line, "message") {
        None | Some("null") => Err(Error::Invalid(format!(
            "pi cannot build this context: entry {} has no message (pi throws here)",
            e.id.as_deref().unwrap_or("?")
        ))),
        Some(_) => Ok(()),
    }
}

/// pi's `buildContextEntries`: the path, cut by its newest compaction.
pub(super) fn context_entries(path: &[PathEntry]) -> Vec<PathEntry> {
    let Some(compaction) = path
        .iter()
        .rev()
        .find(|e| e.kind.as_deref() == Some("compaction"))
    else {
        return path.to_vec();
    };
    let Some(cidx) = path.iter().position(|e| e.id == compaction.id) else {
        return path.to_vec();
    };
    let mut out = vec![compaction.clone()];
    let mut found = false;
    for e in &path[..cidx] {
        if e.id == compaction.first_kept {
            found = true;
        }
        let is_system = e.kind.as_deref() == Some("message") && e.role.as_deref() == Some("system");
        if found && !is_system {
            out.push(e.clone());
        }
    }
    out.extend(path[cidx + 1..].iter().cloned());
    out
}

/// pi's `sessionEntryToContextMessages`, as JSON texts.
fn entry_messages(e: &PathEntry, lines: &dyn Lines) -> Result<Vec<String>> {
    let ts = || e.ts_ms.map_or("null".to_string(), |t| t.to_string());
    match e.kind.as_deref() {
        Some("message") => {
            let mut line = lines.line(e)?;
            let Some(range) = member_range(&line, "message") else {
                return Ok(Vec::new());
            };
            if let Some(changed) = changed_message(&line[range.clone()], lines.version()) {
                return Ok(vec![changed]);
            }
            // The message is the line's own text: cut it out in place (no copy of a huge line).
            line.truncate(range.end);
            line.drain(..range.start);
            Ok(vec![line])
        }
        Some("custom_message") => {
            let line = lines.line(e)?;
            let content = member(&line, "content")
                .filter(|c| *c != "null")
                .unwrap_or("[]");
            let mut fields = vec![("role", "\"custom\"")];
            push_raw(&mut fields, "customType", member(&line, "customType"));
            fields.push(("content", content));
            push_raw(&mut fields, "display", member(&line, "display"));
            push_raw(&mut fields, "details", member(&line, "details"));
            let ts = ts();
            fields.push(("timestamp", &ts));
            Ok(vec![object(&fields)])
        }
        Some("branch_summary") => {
            let line = lines.line(e)?;
            let summary = member(&line, "summary");
            if !summary.is_some_and(raw_truthy) {
                return Ok(Vec::new());
            }
            let mut fields = vec![("role", "\"branchSummary\"")];
            push_raw(&mut fields, "summary", summary);
            push_raw(&mut fields, "fromId", member(&line, "fromId"));
            let ts = ts();
            fields.push(("timestamp", &ts));
            Ok(vec![object(&fields)])
        }
        Some("compaction") => {
            let line = lines.line(e)?;
            let mut out = Vec::new();
            if let Some(sys) = member(&line, "systemMessage").filter(|s| raw_truthy(s)) {
                out.push(sys.to_string());
            }
            let mut fields = vec![("role", "\"compactionSummary\"")];
            push_raw(&mut fields, "summary", member(&line, "summary"));
            push_raw(&mut fields, "tokensBefore", member(&line, "tokensBefore"));
            let ts = ts();
            fields.push(("timestamp", &ts));
            out.push(object(&fields));
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}
