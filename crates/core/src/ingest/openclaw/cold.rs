//! Cold archives: OpenClaw moves an idle transcript out of `transcript_events` into one
//! zstd-compressed JSON-lines file (`agents/<id>/sessions/cold/<sha256>.jsonl.zst`) or a blob in
//! `session_transcript_cold_archives`. Only its `event` records are pi entries; the rest are
//! OpenClaw's own indexes of them (docs/gateways.md).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::{Cold, Event, Reader};
use crate::error::Result;

impl Reader {
    /// The events of a cold archive (OpenClaw's format: zstd-compressed JSON lines, a header
    /// record, then `event` records among others), sorted by `seq`.
    pub(super) fn cold_events(&self, session_id: &str, cold: &Cold) -> Result<Vec<Event>> {
        let bytes = self.cold_bytes(session_id, cold)?;
        let what = |why: String| self.bad(&format!("cold archive {}: {why}", cold.archive_name));
        if bytes.len() as i64 != cold.archive_bytes {
            return Err(what(format!(
                "{} bytes, the store says {}",
                bytes.len(),
                cold.archive_bytes
            )));
        }
        let decoder =
            zstd::stream::read::Decoder::new(bytes.as_slice()).map_err(|e| what(e.to_string()))?;
        let mut events = Vec::new();
        for line in std::io::BufReader::new(decoder).lines() {
            let line = line.map_err(|e| what(e.to_string()))?;
            if let Some(e) = cold_record(&line, session_id).map_err(what)? {
                events.push(e);
            }
        }
        events.sort_by_key(|e| e.seq);
        Ok(events)
    }

    fn cold_bytes(&self, session_id: &str, cold: &Cold) -> Result<Vec<u8>> {
        if cold.storage == "sqlite" {
            return self
                .conn
                .query_row(
                    "SELECT archive_blob FROM session_transcript_cold_archives WHERE session_id = ?1",
                    [session_id],
                    |r| r.get::<_, Vec<u8>>(0),
                )
                .map_err(|e| self.err(e));
        }
        let path = self.cold_dir().join(&cold.archive_name);
        if !is_archive_name(&cold.archive_name) {
            return Err(self.bad(&format!("odd cold archive name {:?}", cold.archive_name)));
        }
        // A missing or unreadable archive is this session's problem, not the store's.
        std::fs::read(&path).map_err(|e| self.bad(&format!("cold archive {}: {e}", path.display())))
    }

    /// Where OpenClaw puts cold archive files: `agents/<id>/sessions/cold/` for a store in
    /// `agents/<id>/agent/`, else `cold/` beside the store.
    fn cold_dir(&self) -> PathBuf {
        let dir = self.path.parent().unwrap_or(Path::new(""));
        match dir.file_name() {
            Some(n) if n == "agent" => dir.parent().unwrap_or(dir).join("sessions").join("cold"),
            _ => dir.join("cold"),
        }
    }
}

/// OpenClaw names cold archives by the SHA-256 of their bytes: `<64 hex>.jsonl.zst`.
fn is_archive_name(name: &str) -> bool {
    name.strip_suffix(".jsonl.zst")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// One line of a cold archive: an `event` record becomes an event; the header must name the
/// session; other records (identities, FTS rows ...) are OpenClaw's own indexes.
fn cold_record(line: &str, session_id: &str) -> Result<Option<Event>, String> {
    #[derive(serde::Deserialize)]
    struct Record {
        kind: String,
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        row: Option<Row>,
    }
    #[derive(serde::Deserialize)]
    struct Row {
        seq: Option<i64>,
        event_json: Option<String>,
        created_at: Option<i64>,
    }
    if line.trim().is_empty() {
        return Ok(None);
    }
    let rec: Record = serde_json::from_str(line).map_err(|e| format!("bad record: {e}"))?;
    match (rec.kind.as_str(), rec.row) {
        ("header", _) if rec.session_id.as_deref() != Some(session_id) => Err(format!(
            "its header names session {:?}",
            rec.session_id.unwrap_or_default()
        )),
        (
            "event",
            Some(Row {
                seq: Some(seq),
                event_json: Some(json),
                created_at,
            }),
        ) => Ok(Some(Event {
            seq,
            json,
            created_at: created_at.unwrap_or(0),
        })),
        ("event", _) => Err("an event record without seq or event_json".into()),
        _ => Ok(None),
    }
}
