//! `pidx secrets`: which sessions hold which kinds of secret, so a user knows what to rotate.
//! Each entry's line is read back from its JSONL by offset (the index keeps no tool output)
//! and every string in it is given to the detector (`crate::redact`), the same strings
//! `push` would redact. A finding says its rule, session, entry and time, never the secret.

use std::collections::BTreeSet;
use std::fs::File;

use rusqlite::Connection;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::store::filter::{int, text};
use crate::store::jsonl::read_at;
use crate::store::Scope;

/// Which entries to look at.
#[derive(Debug, Clone, Default)]
pub struct SecretsOptions {
    /// Only this project (`list(cwd)`'s rule).
    pub cwd: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
}

/// One entry holding secrets of one kind.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SecretAt {
    pub rule: &'static str,
    /// How many of that kind the entry holds.
    pub count: usize,
    pub path: String,
    pub session_id: Option<String>,
    pub entry_id: Option<String>,
    pub line: i64,
    pub timestamp: Option<String>,
    #[serde(skip)]
    pub file_id: i64,
}

/// Every entry's line in scope, oldest file first. Copies made by forks (`dup`) are read in
/// their own session too: each session that holds a secret is listed.
const ENTRIES: &str = "SELECT f.id, f.path, s.session_id, e.id, e.line, e.ts, e.offset, e.len
    FROM entries e JOIN files f ON f.id = e.file_id JOIN roots r ON r.id = f.root_id
    JOIN sessions s ON s.file_id = f.id LEFT JOIN gw_files g ON g.file_id = f.id
    WHERE {where} ORDER BY f.path, e.seq";

/// The secrets found in scope, by entry and rule.
///
/// # Errors
/// Index errors; a file that cannot be read is skipped (it changed since the sync).
pub fn find_secrets(
    conn: &Connection,
    scope: &Scope,
    opts: &SecretsOptions,
) -> Result<Vec<SecretAt>> {
    let mut w = scope.filter();
    if let Some(cwd) = &opts.cwd {
        w.and("s.cwd = ?", [text(cwd.as_str())]);
    }
    if let Some(ms) = opts.since_ms {
        w.and("e.ts_ms >= ?", [int(ms)]);
    }
    if let Some(ms) = opts.until_ms {
        w.and("e.ts_ms < ?", [int(ms)]);
    }
    let sql = ENTRIES.replace("{where}", &w.sql());
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(w.params())?;
    let mut out = Vec::new();
    let mut open: Option<(i64, Option<File>)> = None;
    while let Some(r) = rows.next()? {
        let file_id: i64 = r.get(0)?;
        let path: String = r.get(1)?;
        if open.as_ref().is_none_or(|(id, _)| *id != file_id) {
            open = Some((file_id, File::open(&path).ok()));
        }
        let Some((_, Some(file))) = &open else {
            continue;
        };
        let (offset, len): (i64, i64) = (r.get(6)?, r.get(7)?);
        let bytes = read_at(file, offset as u64, len as usize).map_err(|e| Error::io(&path, e))?;
        let line = String::from_utf8_lossy(&bytes);
        let rules = rules_in(&line);
        for (rule, count) in rules {
            out.push(SecretAt {
                rule,
                count,
                path: path.clone(),
                session_id: r.get(2)?,
                entry_id: r.get(3)?,
                line: r.get(4)?,
                timestamp: r.get(5)?,
                file_id,
            });
        }
    }
    Ok(out)
}

/// The rules that find something in the strings of one JSON line, with how many each.
fn rules_in(line: &str) -> Vec<(&'static str, usize)> {
    if !crate::redact::may_hold(line) {
        return Vec::new();
    }
    let mut found = Vec::new();
    match crate::pi::line::parse_json(line) {
        Ok(v) => strings(&v, &mut |s| {
            found.extend(crate::redact::find(s).into_iter().map(|f| f.rule))
        }),
        Err(_) => found.extend(crate::redact::find(line).into_iter().map(|f| f.rule)),
    }
    let kinds: BTreeSet<&'static str> = found.iter().copied().collect();
    kinds
        .into_iter()
        .map(|k| (k, found.iter().filter(|&&f| f == k).count()))
        .collect()
}

fn strings(v: &serde_json::Value, each: &mut impl FnMut(&str)) {
    match v {
        serde_json::Value::String(s) => each(s),
        serde_json::Value::Array(items) => items.iter().for_each(|x| strings(x, each)),
        serde_json::Value::Object(m) => m.values().for_each(|x| strings(x, each)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_which_kinds_it_holds_and_how_many() {
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let line = serde_json::json!({"message": {"content": [
            {"type": "text", "text": format!("{token} and {token}")},
            {"type": "text", "text": "AKIAZ7QW3RT5YU2OP4LK"}]}})
        .to_string();
        assert_eq!(
            rules_in(&line),
            vec![("aws-access-key", 1), ("github-token", 2)]
        );
        assert_eq!(
            rules_in(r#"{"message":"commit 3f9a2b7c1d8e4f60a5b9c2d7e1f3a8b6c4d2e0f1"}"#),
            vec![]
        );
    }
}
