//! Folds lines, in file order, into a file's `SessionState` and its `EntryRow`s. Pure: the
//! state is loaded from and saved to the store by `sync`. Two views of the same lines, as in pi:
//! the listing view (`buildSessionInfo`, docs/pi-format.md §5.2) and the loader view (`loadEntriesFromFile`
//! plus in-memory migration of v1/v2 files, docs/pi-format.md §3-§4).

use serde_json::{Map, Value};

use crate::pi::huge::{self, Huge, HUGE_TEXT, TITLE_CHARS};
use crate::pi::js;
use crate::pi::line::{listing_segments, parse_line, Line};
use crate::pi::model::{EntryRow, Listing, SessionState, Usage};
use crate::pi::text::{self, extract_text};
use crate::pi::touches;

/// What one physical line contributed.
#[derive(Debug, Default)]
pub struct LineOutcome {
    pub entry: Option<EntryRow>,
    /// Why the line was skipped, for `path:line: reason`.
    pub bad: Option<String>,
    /// User/assistant text pi's listing sees in this line when it splits it at lone `\r`s
    /// (then the entry, if any, carries no text of its own).
    pub listing_texts: Vec<String>,
}

/// The id pidx gives entry `parsed_index` of a v1 file. pi gives random ids at every open
/// (docs/pi-format.md §3); any stable unique id gives the same tree and context.
pub fn v1_id(parsed_index: i64) -> String {
    format!("{parsed_index:08x}")
}

impl SessionState {
    /// Applies one physical line (without its `\n`) that starts at byte `offset`.
    pub fn apply_line(&mut self, bytes: &[u8], line_no: i64, offset: i64) -> LineOutcome {
        let parsed = parse_line(bytes);
        let len = bytes.len() as i64;
        let Some(segments) = listing_segments(bytes) else {
            return self.apply_parsed(parsed, None, line_no, offset, len);
        };
        let mut listing_texts = Vec::new();
        for seg in segments {
            if let Line::Value(v) = parse_line(seg) {
                listing_texts.extend(self.apply_listing(&v, line_no, None));
            }
        }
        let mut outcome = self.apply_loaded(parsed, line_no, offset, len);
        if let Some(e) = outcome.entry.as_mut() {
            e.text = None;
        }
        outcome.listing_texts = listing_texts;
        outcome
    }

    /// As [`Self::apply_line`], for a line whose buffer the caller gives up: a huge one is
    /// parsed in its own buffer, its huge text kept once (`pi::huge`), and the buffer is left
    /// empty. Other lines leave the buffer as it is, for the reader to reuse.
    pub fn apply_owned_line(
        &mut self,
        buf: &mut Vec<u8>,
        line_no: i64,
        offset: i64,
    ) -> LineOutcome {
        if buf.len() < HUGE_TEXT || listing_segments(buf).is_some() {
            return self.apply_line(buf, line_no, offset);
        }
        let len = buf.len() as i64;
        let (parsed, huge) = huge::parse_owned(std::mem::take(buf));
        self.apply_parsed(parsed, huge, line_no, offset, len)
    }

    /// A line that pi's listing reads whole (no lone `\r`): both views of its value. The
    /// entry keeps the huge text its line gave up, when it holds its token.
    fn apply_parsed(
        &mut self,
        parsed: Line,
        huge: Option<Huge>,
        line_no: i64,
        offset: i64,
        len: i64,
    ) -> LineOutcome {
        if let Line::Value(v) = &parsed {
            self.apply_listing(v, line_no, huge.as_ref());
        }
        let mut outcome = self.apply_loaded(parsed, line_no, offset, len);
        if let (Some(e), Some(huge)) = (outcome.entry.as_mut(), huge) {
            let holds = huge::holds_token;
            if e.text.as_deref().is_some_and(holds) || e.texts.iter().any(|(_, t)| holds(t)) {
                e.huge = Some(std::sync::Arc::new(huge));
            }
        }
        outcome
    }

    /// The loader's view of a parsed line.
    fn apply_loaded(&mut self, parsed: Line, line_no: i64, offset: i64, len: i64) -> LineOutcome {
        match parsed {
            Line::Blank => LineOutcome::default(),
            Line::Bad(reason) => LineOutcome {
                bad: Some(reason),
                ..LineOutcome::default()
            },
            Line::Value(v) => self.apply_loader(v, line_no, offset, len),
        }
    }

    /// pi's `buildSessionInfo` for one parsed value; returns the message text it took for
    /// `allMessagesText`, if any.
    fn apply_listing(&mut self, v: &Value, line_no: i64, huge: Option<&Huge>) -> Option<String> {
        match self.listing {
            Listing::Excluded(_) => None,
            Listing::Pending => {
                if type_of(v) == Some("session") {
                    self.listing = Listing::Listed;
                    self.take_header(v);
                } else {
                    self.listing = Listing::Excluded(format!(
                        "line {line_no}: the first JSON value is not a session header"
                    ));
                }
                None
            }
            Listing::Listed => match self.list_entry(v, line_no, huge) {
                Ok(text) => text,
                Err(why) => {
                    self.listing = Listing::Excluded(format!("line {line_no}: {why}"));
                    None
                }
            },
        }
    }

    fn take_header(&mut self, v: &Value) {
        self.header = Some(v.to_string());
        self.session_id = v.get("id").and_then(Value::as_str).map(str::to_string);
        self.cwd = v
            .get("cwd")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.created_ms = v.get("timestamp").and_then(js::date_ms);
        self.header_ts_ms = v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(js::parse_iso_ms);
    }

    /// One non-header value in the listing view; `Err` where pi's code would throw.
    fn list_entry(
        &mut self,
        v: &Value,
        line_no: i64,
        huge: Option<&Huge>,
    ) -> Result<Option<String>, String> {
        match type_of(v) {
            Some("session_info") => {
                self.name = match v.get("name") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(js::js_trim(s))
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                    Some(_) => return Err("session_info name is not a string".into()),
                };
                Ok(None)
            }
            Some("message") => {
                self.list_message(v.get("message"), v.get("timestamp"), line_no, huge)
            }
            _ => Ok(None),
        }
    }

    fn list_message(
        &mut self,
        message: Option<&Value>,
        entry_ts: Option<&Value>,
        line_no: i64,
        huge: Option<&Huge>,
    ) -> Result<Option<String>, String> {
        self.message_count += 1;
        let message = match message {
            None | Some(Value::Null) => return Err("message entry has no message".into()),
            Some(Value::Object(m)) => m,
            Some(_) => return Ok(None),
        };
        let Some(role @ ("user" | "assistant")) = listed_role(message) else {
            return Ok(None);
        };
        let activity = match message.get("timestamp") {
            Some(Value::Number(n)) => n.as_f64().map(|f| f as i64),
            _ => entry_ts.and_then(js::date_ms),
        };
        if let Some(t) = activity {
            self.last_activity_ms = Some(self.last_activity_ms.unwrap_or(0).max(t));
        }
        let text = extract_text(&message["content"])?;
        if text.is_empty() {
            return Ok(None);
        }
        if role == "user" && self.first_message.is_none() {
            // A huge one is kept as its title; the whole text stays its entry's (`pi::huge`).
            self.first_message = Some(match huge.filter(|_| huge::holds_token(&text)) {
                Some(h) => {
                    self.first_message_line = Some(line_no);
                    h.prefix(&text, TITLE_CHARS).into()
                }
                None => text.as_str().into(),
            });
        }
        Ok(Some(text))
    }

    /// pi's loader for one parsed value: the header, or an entry (migrated in memory).
    fn apply_loader(&mut self, v: Value, line_no: i64, offset: i64, len: i64) -> LineOutcome {
        let index = self.parsed_values;
        self.parsed_values += 1;
        if index == 0 {
            self.loadable =
                type_of(&v) == Some("session") && v.get("id").is_some_and(Value::is_string);
            self.version = v.get("version").and_then(Value::as_i64).unwrap_or(1);
            return LineOutcome::default();
        }
        let Value::Object(obj) = v else {
            return LineOutcome {
                bad: Some("not a JSON object (pi keeps it as a bogus entry; pidx skips it)".into()),
                ..LineOutcome::default()
            };
        };
        if obj.get("type").and_then(Value::as_str) == Some("session") {
            return LineOutcome::default();
        }
        let mut row = entry_row(&obj);
        if self.no_touches {
            row.call_id = None;
        } else if row.role.as_deref() == Some("assistant") {
            let content = obj.get("message").and_then(|m| m.get("content"));
            row.touches = touches::of_content(content, &self.cwd);
        }
        row.seq = self.entry_count;
        row.line = line_no;
        row.offset = offset;
        row.len = len;
        self.migrate(&mut row, &obj, index);
        self.entry_count += 1;
        self.leaf_seq = Some(row.seq);
        self.leaf_id.clone_from(&row.id);
        LineOutcome {
            entry: Some(row),
            ..LineOutcome::default()
        }
    }

    /// v1 -> v2 (linear ids, firstKeptEntryIndex) and v2 -> v3 (hookMessage) as pi does in memory.
    fn migrate(&self, row: &mut EntryRow, obj: &Map<String, Value>, index: i64) {
        if self.version < 2 {
            row.id = Some(v1_id(index));
            row.parent_id.clone_from(&self.leaf_id);
            if row.kind.as_deref() == Some("compaction") {
                if let Some(target) = obj.get("firstKeptEntryIndex").and_then(Value::as_f64) {
                    let t = target as i64;
                    row.first_kept = (t as f64 == target && t > 0 && t < index).then(|| v1_id(t));
                }
            }
        }
        if let Some(role) = row.role.as_mut() {
            if migrated_role(role, self.version) != role {
                *role = migrated_role(role, self.version).to_string();
            }
        }
    }
}

/// A message role after pi's v2 -> v3 migration: `hookMessage` became `custom`.
pub fn migrated_role(role: &str, version: i64) -> &str {
    if version < 3 && role == "hookMessage" {
        "custom"
    } else {
        role
    }
}

fn type_of(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// `message.role` when pi's `isMessageWithContent` holds (a string role and a `content` key).
fn listed_role(message: &Map<String, Value>) -> Option<&str> {
    let role = message.get("role")?.as_str()?;
    message.contains_key("content").then_some(role)
}

fn str_at(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The columns of one entry, before migration.
fn entry_row(obj: &Map<String, Value>) -> EntryRow {
    let mut row = EntryRow {
        id: str_at(obj, "id"),
        parent_id: str_at(obj, "parentId"),
        kind: str_at(obj, "type"),
        ts: str_at(obj, "timestamp"),
        ts_ms: obj.get("timestamp").and_then(js::date_ms),
        texts: text::texts(obj),
        ..EntryRow::default()
    };
    match row.kind.as_deref() {
        Some("message") => match obj.get("message") {
            Some(Value::Object(m)) => message_columns(&mut row, m),
            None | Some(Value::Null) => row.no_message = true,
            Some(_) => {}
        },
        Some("compaction") | Some("branch_summary") => {
            row.first_kept = str_at(obj, "firstKeptEntryId");
            row.usage = obj.get("usage").and_then(usage_of);
        }
        Some("label") => {
            row.target_id = str_at(obj, "targetId");
            row.label = obj.get("label").filter(|l| js::truthy(l)).map(|l| match l {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        Some("context_edit") => row.target_id = str_at(obj, "targetId"),
        Some("model_change") => {
            row.provider = str_at(obj, "provider");
            row.model = str_at(obj, "modelId");
        }
        Some("thinking_level_change") => row.thinking = str_at(obj, "thinkingLevel"),
        Some("usage") => {
            row.provider = str_at(obj, "provider");
            row.model = str_at(obj, "model");
            row.usage = obj.get("usage").and_then(usage_of);
        }
        _ => {}
    }
    row
}

fn message_columns(row: &mut EntryRow, m: &Map<String, Value>) {
    row.role = str_at(m, "role");
    match row.role.as_deref() {
        Some("assistant") => {
            row.provider = str_at(m, "provider");
            row.model = str_at(m, "model");
            row.response_model = str_at(m, "responseModel");
            row.stop_reason = str_at(m, "stopReason");
            row.usage = m.get("usage").and_then(usage_of);
            row.tool_calls = m.get("content").and_then(Value::as_array).map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| type_of(b) == Some("toolCall"))
                    .count() as i64
            });
            row.tool_uses = m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|b| type_of(b) == Some("toolCall"))
                .map(|b| b.get("name").map(js::join_string).unwrap_or_default())
                .collect();
        }
        Some("toolResult") => {
            row.usage = m.get("usage").and_then(usage_of);
            row.is_error = m.get("isError").map(js::truthy);
            row.tool_name = str_at(m, "toolName");
            row.call_id = str_at(m, "toolCallId");
            row.first_changed = m
                .get("details")
                .and_then(|d| d.get("firstChangedLine"))
                .and_then(Value::as_i64);
        }
        Some("bashExecution") => {
            row.exit_code = m.get("exitCode").and_then(Value::as_f64).map(|c| c as i64);
        }
        _ => {}
    }
    if matches!(row.role.as_deref(), Some("user" | "assistant")) && m.contains_key("content") {
        row.text = extract_text(&m["content"]).ok().filter(|t| !t.is_empty());
    }
}

fn usage_of(u: &Value) -> Option<Usage> {
    let u = u.as_object()?;
    let num = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    Some(Usage {
        input: num("input") as i64,
        output: num("output") as i64,
        cache_read: num("cacheRead") as i64,
        cache_write: num("cacheWrite") as i64,
        cost: u
            .get("cost")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(lines: &[&str]) -> (SessionState, Vec<EntryRow>) {
        let mut st = SessionState::default();
        let mut rows = Vec::new();
        let mut offset = 0;
        for (i, l) in lines.iter().enumerate() {
            if let Some(r) = st.apply_line(l.as_bytes(), i as i64 + 1, offset).entry {
                rows.push(r);
            }
            offset += l.len() as i64 + 1;
        }
        (st, rows)
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn listing_counts_every_message_and_takes_first_user_text() {
        let (st, rows) = fold(&[
            HEADER,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":5}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","content":[]}}"#,
            r#"{"type":"session_info","id":"c","parentId":"b","timestamp":"x","name":"  n  "}"#,
        ]);
        assert_eq!(st.listing, Listing::Listed);
        assert_eq!(st.message_count, 2);
        assert_eq!(st.first_message.as_deref(), Some("hi"));
        assert_eq!(st.last_activity_ms, Some(5));
        assert_eq!(st.name.as_deref(), Some("n"));
        assert_eq!(rows.len(), 3);
        assert_eq!(st.leaf_id.as_deref(), Some("c"));
    }

    #[test]
    fn null_content_excludes_the_session() {
        let (st, _) = fold(&[
            HEADER,
            r#"{"type":"message","id":"a","message":{"role":"user","content":null}}"#,
        ]);
        assert!(matches!(st.listing, Listing::Excluded(ref r) if r.contains("line 2")));
    }

    #[test]
    fn v1_entries_get_a_linear_chain_and_kept_ids() {
        let (st, rows) = fold(&[
            r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
            r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}"#,
        ]);
        assert_eq!(st.version, 1);
        assert_eq!(rows[0].parent_id, None);
        assert_eq!(rows[1].parent_id, rows[0].id);
        assert_eq!(rows[2].first_kept, rows[1].id);
    }
}
