//! The searchable texts of a pidx index, read once out of the index database and the JSONL it
//! points at (the `fts` table is contentless: entries keep the byte range of their line, and
//! `text_kinds` which kinds of text the line holds). Written to one file, `texts.bin`, that
//! every engine's build reads, so each build measures its own work only.
//!
//! Record: rowid (i64, the FTS rowid: entry rid * 8 + kind), ts_ms (i64, i64::MIN when none),
//! jsonl_len (u32: the entry's line length on its first text, else 0), text_len (u32), text.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use memmap2::{Mmap, UncheckedAdvice};
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

pub const NO_TS: i64 = i64::MIN;

/// Reads the texts out of `db` (opened read-only) into `out`. Returns (texts, text bytes,
/// JSONL bytes of the corpus).
pub fn extract(db: &Path, out: &Path) -> rusqlite::Result<(u64, u64, u64)> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let jsonl: i64 =
        conn.query_row("SELECT COALESCE(SUM(size), 0) FROM files", [], |r| r.get(0))?;
    let mut st = conn.prepare(
        "SELECT f.path, e.rid, e.offset, e.len, e.ts_ms, e.text_kinds FROM entries e
         JOIN files f ON f.id = e.file_id WHERE e.text_kinds != 0 ORDER BY e.rid",
    )?;
    let mut rows = st.query([])?;
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out).expect("create dump"));
    let mut files: HashMap<String, File> = HashMap::new();
    let (mut n, mut text_bytes) = (0u64, 0u64);
    let mut line = Vec::new();
    while let Some(r) = rows.next()? {
        let path: String = r.get(0)?;
        let (rid, offset, len): (i64, i64, i64) = (r.get(1)?, r.get(2)?, r.get(3)?);
        let ts: Option<i64> = r.get(4)?;
        let kinds: i64 = r.get(5)?;
        if !files.contains_key(&path) {
            files.clear(); // one open file at a time: rows come file by file
            match File::open(&path) {
                Ok(f) => files.insert(path.clone(), f),
                Err(_) => continue,
            };
        }
        let f = &files[&path];
        line.resize(len as usize, 0);
        if f.read_exact_at(&mut line, offset as u64).is_err() {
            continue;
        }
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let mut first = true;
        for (kind, text) in texts(&obj) {
            if kinds & (1 << kind) == 0 {
                continue;
            }
            w.write_all(&(rid * 8 + kind as i64).to_le_bytes()).unwrap();
            w.write_all(&ts.unwrap_or(NO_TS).to_le_bytes()).unwrap();
            let jl = if first { len as u32 } else { 0 };
            first = false;
            w.write_all(&jl.to_le_bytes()).unwrap();
            w.write_all(&(text.len() as u32).to_le_bytes()).unwrap();
            w.write_all(text.as_bytes()).unwrap();
            n += 1;
            text_bytes += text.len() as u64;
        }
    }
    w.flush().unwrap();
    Ok((n, text_bytes, jsonl as u64))
}

/// pidx's `pi::text::texts`: an entry's searchable texts by kind (0 user, 1 assistant,
/// 2 thinking, 3 tool, 4 bash, 5 custom, 6 summary, 7 name), parts joined by newlines.
fn texts(obj: &Map<String, Value>) -> Vec<(u8, String)> {
    let mut out: Vec<(u8, String)> = Vec::new();
    let mut push = |k: u8, s: &str| {
        if s.is_empty() {
            return;
        }
        match out.iter_mut().find(|(kk, _)| *kk == k) {
            Some((_, t)) => {
                t.push('\n');
                t.push_str(s);
            }
            None => out.push((k, s.to_string())),
        }
    };
    fn content(v: Option<&Value>, k: u8, push: &mut dyn FnMut(u8, &str)) {
        match v {
            Some(Value::String(s)) => push(k, s),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) == Some("text") {
                        if let Some(Value::String(s)) = b.get("text") {
                            push(k, s);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    match obj.get("type").and_then(Value::as_str) {
        Some("message") => {
            let Some(Value::Object(m)) = obj.get("message") else {
                return out;
            };
            match m.get("role").and_then(Value::as_str) {
                Some("user") => content(m.get("content"), 0, &mut push),
                Some("assistant") => {
                    for b in m
                        .get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => s(b.get("text")).map(|t| push(1, &t)).unwrap_or(()),
                            Some("thinking") => {
                                s(b.get("thinking")).map(|t| push(2, &t)).unwrap_or(())
                            }
                            Some("toolCall") => {
                                if let Some(t) = s(b.get("name")) {
                                    push(3, &t);
                                }
                                match b.get("arguments") {
                                    Some(Value::String(a)) => push(3, a),
                                    Some(other) => push(3, &other.to_string()),
                                    None => {}
                                }
                            }
                            _ => {}
                        }
                    }
                    if let Some(t) = s(m.get("errorMessage")) {
                        push(1, &t);
                    }
                }
                Some("toolResult") => {
                    if let Some(t) = s(m.get("toolName")) {
                        push(3, &t);
                    }
                    content(m.get("content"), 3, &mut push);
                }
                Some("bashExecution") => {
                    for key in ["command", "output"] {
                        if let Some(t) = s(m.get(key)) {
                            push(4, &t);
                        }
                    }
                }
                Some("custom" | "hookMessage") => content(m.get("content"), 5, &mut push),
                _ => {}
            }
        }
        Some("custom_message") => content(obj.get("content"), 5, &mut push),
        Some("compaction" | "branch_summary") => {
            if let Some(t) = s(obj.get("summary")) {
                push(6, &t);
            }
        }
        Some("session_info") => {
            if let Some(t) = s(obj.get("name")) {
                push(7, &t);
            }
        }
        _ => {}
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// One text of the dump.
pub struct Doc<'a> {
    pub rowid: i64,
    pub jsonl_len: u32,
    pub text: &'a str,
}

/// The dump, mapped, with each record's offset (doc id = its index, rowid order).
pub struct Dump {
    map: Mmap,
    pub offsets: Vec<usize>,
    pub rowids: Vec<i64>,
    pub ts: Vec<i64>,
    pub text_bytes: u64,
}

impl Dump {
    pub fn open(path: &Path) -> Dump {
        let f = File::open(path).expect("open texts.bin (run extract first)");
        let map = unsafe { Mmap::map(&f).expect("map texts.bin") };
        let (mut offsets, mut rowids, mut ts) = (Vec::new(), Vec::new(), Vec::new());
        let (mut at, mut text_bytes, mut dropped) = (0usize, 0u64, 0usize);
        while at + 24 <= map.len() {
            offsets.push(at);
            rowids.push(i64::from_le_bytes(map[at..at + 8].try_into().unwrap()));
            ts.push(i64::from_le_bytes(map[at + 8..at + 16].try_into().unwrap()));
            let len = u32::from_le_bytes(map[at + 20..at + 24].try_into().unwrap()) as usize;
            text_bytes += len as u64;
            at += 24 + len;
            if at - dropped >= 64 << 20 {
                // The scan has read these pages: drop them, so peak RSS counts the engine.
                let end = at & !4095;
                let _ = unsafe {
                    map.unchecked_advise_range(UncheckedAdvice::DontNeed, dropped, end - dropped)
                };
                dropped = end;
            }
        }
        Dump {
            map,
            offsets,
            rowids,
            ts,
            text_bytes,
        }
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn doc(&self, i: usize) -> Doc<'_> {
        let at = self.offsets[i];
        let m = &self.map;
        let len = u32::from_le_bytes(m[at + 20..at + 24].try_into().unwrap()) as usize;
        Doc {
            rowid: self.rowids[i],
            jsonl_len: u32::from_le_bytes(m[at + 16..at + 20].try_into().unwrap()),
            text: std::str::from_utf8(&m[at + 24..at + 24 + len]).unwrap_or(""),
        }
    }

    /// Drops the mapped pages of docs `from..to` from this process (a build is done with
    /// them), so peak RSS counts the engine, not the dump.
    pub fn forget(&self, from: usize, to: usize) {
        let start = self.offsets[from] & !4095;
        let end = self.offsets.get(to).copied().unwrap_or(self.map.len()) & !4095;
        if end > start {
            // SAFETY: a read-only file mapping: dropped pages are read again from the file.
            let _ = unsafe {
                self.map
                    .unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }

    /// The doc id of FTS rowid `rowid`.
    pub fn doc_of(&self, rowid: i64) -> Option<usize> {
        self.rowids.binary_search(&rowid).ok()
    }
}
