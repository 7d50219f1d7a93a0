//! What `push` reads from the local index: each transcript's summary row, and the rows of a
//! change (entries with their raw line read back from the JSONL by offset, full-text rows,
//! tool calls, listing text, bad lines, flags of older entries). With redaction on (the
//! default), every text, name and string inside the raw entry JSON is sent with its secrets
//! replaced by `[redacted: RULE]`, and the server's words are made from the redacted text, so
//! the server can neither show nor find a secret.

use std::fs::File;
use std::sync::LazyLock;

use rusqlite::Connection;

use super::PushOptions;
use crate::pg::heads;
use crate::pg::lines;
use crate::pg::values::Val;
use crate::pg::words::{grams, occurrences_outside, TsVector};
use crate::pg::writer::{Change, FileRows, ENTRY_COLS, SESSION_COLS};
use pidx_core::error::{Error, Result};
use pidx_core::pi::line::{parse_json, parse_line, Line};
use pidx_core::pi::text::texts;
use pidx_core::redact;
use pidx_core::store::jsonl::read_at;
use pidx_core::store::schema::entry_field;
use pidx_core::store::Scope;

/// One local transcript's summary and sync state.
pub struct LocalFile {
    pub file_id: i64,
    pub path: String,
    pub root: String,
    pub ino: i64,
    pub offset: i64,
    pub head_hash: i64,
    pub lines: i64,
    pub leaf_seq: Option<i64>,
    pub session: Vec<Val>,
    pub summary_hash: i64,
}

impl LocalFile {
    /// The index's hash of the 4096 bytes before `offset`.
    pub fn tail_hash(&self) -> i64 {
        let i = SESSION_COLS
            .iter()
            .position(|c| c.0 == "tail_hash")
            .unwrap();
        match self.session[i] {
            Val::Int(v) => v.unwrap_or(0),
            _ => 0,
        }
    }
}

/// Every transcript of the roots in `scope`, least recently active first: the server numbers
/// the files a push sends in this order, and a word's postings are in blocks by file
/// (`pg::postings`), so that a block holds texts of about one time and its bound's latest time
/// is close to each of its texts' (pg 0024: in path order, a block of `function` spanned
/// months of one project's sessions, and nearly every block could hold one of the best).
///
/// # Errors
/// Index errors.
pub fn files(conn: &Connection, scope: &Scope) -> Result<Vec<LocalFile>> {
    let exprs: Vec<&str> = SESSION_COLS.iter().map(|c| c.1).collect();
    let w = scope.filter();
    let sql = format!(
        "SELECT f.id, {} FROM files f JOIN roots r ON r.id = f.root_id
         JOIN sessions s ON s.file_id = f.id LEFT JOIN gw_files g ON g.file_id = f.id
         WHERE {} ORDER BY s.last_activity_ms, f.path",
        exprs.join(", "),
        w.sql()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        let mut session = Vec::with_capacity(SESSION_COLS.len());
        for (i, c) in SESSION_COLS.iter().enumerate() {
            session.push(Val::read(r, i + 1, c.2)?);
        }
        Ok((r.get::<_, i64>(0)?, session))
    })?;
    let col = |name: &str| SESSION_COLS.iter().position(|c| c.0 == name).unwrap();
    let int = |s: &[Val], name: &str| match &s[col(name)] {
        Val::Int(v) => *v,
        _ => None,
    };
    let text = |s: &[Val], name: &str| match &s[col(name)] {
        Val::Text(v) => v.clone().unwrap_or_default(),
        _ => String::new(),
    };
    let mut out = Vec::new();
    for row in rows {
        let (file_id, session) = row?;
        let mut bytes = Vec::new();
        session.iter().for_each(|v| v.feed(&mut bytes));
        out.push(LocalFile {
            file_id,
            path: text(&session, "path"),
            root: text(&session, "root"),
            ino: int(&session, "ino").unwrap_or(0),
            offset: int(&session, "byte_offset").unwrap_or(0),
            head_hash: int(&session, "head_hash").unwrap_or(0),
            lines: int(&session, "lines").unwrap_or(0),
            leaf_seq: int(&session, "leaf_seq"),
            summary_hash: pidx_core::ingest::tail::hash(&bytes),
            session,
        });
    }
    Ok(out)
}

/// The rows of `change` to `f`. `Ok(None)` when the file no longer holds what the index says
/// (it changed after the sync): the next push sends it.
///
/// # Errors
/// Index errors; `Io` when the file cannot be read.
pub fn rows(
    conn: &Connection,
    f: &LocalFile,
    change: Change,
    opts: &PushOptions,
) -> Result<Option<FileRows>> {
    let mut rows = FileRows::empty();
    rows.session.clone_from(&f.session);
    if opts.redact {
        redact_session(&mut rows.session);
    }
    rows.summary_hash = f.summary_hash;
    let (after_seq, from_line) = match change {
        Change::Summary => return Ok(Some(rows)),
        Change::Full => (-1, 0),
        Change::Append {
            after_seq,
            from_line,
        } => (after_seq, from_line),
    };
    if !entries(conn, f, after_seq, opts, &mut rows)? {
        return Ok(None);
    }
    let mut tools = conn.prepare_cached(
        "SELECT e.seq, t.name FROM tool_uses t JOIN entries e ON e.rid = t.rid
         WHERE t.file_id = ?1 AND e.seq > ?2 ORDER BY e.seq, t.rowid",
    )?;
    let mut last = (i64::MIN, 0);
    for row in tools.query_map([f.file_id, after_seq], |r| Ok((r.get(0)?, r.get(1)?)))? {
        let (seq, name): (i64, String) = row?;
        last = if last.0 == seq {
            (seq, last.1 + 1)
        } else {
            (seq, 0)
        };
        rows.bytes += name.len() + 16;
        rows.tools.push(vec![
            Val::Int(Some(seq)),
            Val::Int4(Some(last.1)),
            Val::Text(Some(name)),
        ]);
    }
    for (table, col, out) in [("listing_text", "text", 0), ("bad_lines", "reason", 1)] {
        let out = if out == 0 {
            &mut rows.listing
        } else {
            &mut rows.bad
        };
        // A line's listing texts in the order the index holds them (as `all_messages_text`
        // reads them), each with its position among them.
        let order = if table == "listing_text" {
            "line, rowid"
        } else {
            "line"
        };
        let sql = format!(
            "SELECT line, {col} FROM {table} WHERE file_id = ?1 AND line >= ?2 ORDER BY {order}"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut last = (i64::MIN, 0);
        for row in stmt.query_map([f.file_id, from_line], |r| Ok((r.get(0)?, r.get(1)?)))? {
            let (line, text): (i64, String) = row?;
            let text = redacted(text, opts.redact);
            rows.bytes += text.len() + 16;
            last = if last.0 == line {
                (line, last.1 + 1)
            } else {
                (line, 0)
            };
            let mut vals = vec![Val::Int(Some(line)), Val::Text(Some(text))];
            if table == "listing_text" {
                vals.push(Val::Int4(Some(last.1)));
            }
            out.push(vals);
        }
    }
    if after_seq >= 0 {
        rows.shadowed = flagged(conn, f.file_id, after_seq, "shadowed")?;
        rows.silent = flagged(conn, f.file_id, after_seq, "silent")?;
    }
    Ok(Some(rows))
}

/// Where the fields the push reads itself sit in a row of `ENTRY_COLS`' expressions.
static SEQ: LazyLock<usize> = LazyLock::new(|| field("seq"));
static OFFSET: LazyLock<usize> = LazyLock::new(|| field("offset"));
static LEN: LazyLock<usize> = LazyLock::new(|| field("len"));
static TS_MS: LazyLock<usize> = LazyLock::new(|| field("ts_ms"));
static TEXT: LazyLock<usize> = LazyLock::new(|| field("text"));
static ROLE: LazyLock<usize> = LazyLock::new(|| field("role"));
/// The server's own `silent` column among `ENTRY_COLS` (not an entry field).
static SILENT: LazyLock<usize> = LazyLock::new(|| {
    (ENTRY_COLS.iter().position(|c| c.0 == "silent")).expect("ENTRY_COLS has silent")
});

/// Whether the server's texts carry their entry's time and silence (pg 0018).
static TIMES_ON_TEXTS: LazyLock<bool> = LazyLock::new(crate::pg::times_on_texts);

/// Whether the server's schema takes the empty string for a listing text equal to its body
/// (pg 0014; push migrates the server to `migrate::latest` first).
static LISTING_IN_BODY: LazyLock<bool> =
    LazyLock::new(|| crate::pg::migrate::latest() >= crate::pg::LISTING_TEXT_IN_BODY);

/// Whether the server's schema reads lines stored without their texts' pieces (pg 0015).
static LINES_WITHOUT_TEXTS: LazyLock<bool> =
    LazyLock::new(|| crate::pg::migrate::latest() >= crate::pg::LINES_WITHOUT_TEXTS);

fn field(name: &str) -> usize {
    entry_field(name).unwrap_or_else(|| panic!("{name} is not an entry field"))
}

/// Entries after `after_seq` with their raw lines and full-text rows; `false` when a line read
/// back is not what the index recorded.
fn entries(
    conn: &Connection,
    f: &LocalFile,
    after_seq: i64,
    opts: &PushOptions,
    rows: &mut FileRows,
) -> Result<bool> {
    let exprs: Vec<&str> = ENTRY_COLS.iter().map(|c| c.1).collect();
    let sql = format!(
        "SELECT {}, e.text_kinds FROM entries e WHERE e.file_id = ?1 AND e.seq > ?2 ORDER BY e.seq",
        exprs.join(", ")
    );
    let file = File::open(&f.path).map_err(|e| Error::io(&f.path, e))?;
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut q = stmt.query([f.file_id, after_seq])?;
    let n = ENTRY_COLS.len();
    while let Some(r) = q.next()? {
        let mut row = Vec::with_capacity(n);
        for (i, c) in ENTRY_COLS.iter().enumerate().take(n - 1) {
            row.push(Val::read(r, i, c.2)?);
        }
        if opts.redact {
            redact_entry(&mut row);
        }
        let (seq, offset, len): (i64, i64, i64) = (r.get(*SEQ)?, r.get(*OFFSET)?, r.get(*LEN)?);
        let bytes =
            read_at(&file, offset as u64, len as usize).map_err(|e| Error::io(&f.path, e))?;
        if bytes.len() != len as usize {
            return Ok(false);
        }
        let line = String::from_utf8_lossy(&bytes);
        let kinds: i64 = r.get(n)?;
        let first = rows.texts.len();
        if kinds != 0 {
            let at = (r.get(*TS_MS)?, r.get(*SILENT)?);
            add_texts(&line, seq, at, kinds, opts.redact, rows);
        }
        // The entry's texts by kind, as sent: pg 0014 and 0015 keep them once.
        let bodies: Vec<(i16, &str)> = rows
            .texts
            .since(first)
            .filter_map(|t| match (&t[1], &t[2]) {
                (Val::Int2(Some(kind)), Val::Text(Some(body))) => Some((*kind, body.as_str())),
                _ => None,
            })
            .collect();
        if *LISTING_IN_BODY {
            listing_in_body(&mut row, &bodies);
        }
        let raw = if opts.images {
            None
        } else {
            pidx_core::pi::images::without_images(&line)
        };
        let mut raw = raw.unwrap_or_else(|| line.into_owned());
        if opts.redact {
            if let Some(clean) = redact_json(&raw) {
                raw = clean;
            }
        }
        let packed = if *LINES_WITHOUT_TEXTS {
            lines::pack_with(&raw, &bodies)
        } else {
            lines::pack(&raw)
        };
        rows.bytes += packed.len() + 64;
        row.push(Val::Bytes(Some(packed)));
        rows.entries.push(row);
    }
    Ok(true)
}

/// The empty string for an entry's listing text when it is the entry's searchable text of its
/// role's kind, which the server keeps anyway (pg 0014, `pg::LISTING_TEXT`); `bodies` are the
/// entry's texts by kind as sent, both redacted alike.
fn listing_in_body(row: &mut [Val], bodies: &[(i16, &str)]) {
    let kind: i16 = match &row[*ROLE] {
        Val::Text(Some(role)) if role == "user" => 0,
        Val::Text(Some(role)) if role == "assistant" => 1,
        _ => return,
    };
    let Val::Text(Some(text)) = &row[*TEXT] else {
        return;
    };
    let same = bodies.iter().any(|&(k, body)| k == kind && body == text);
    if same && !text.is_empty() {
        row[*TEXT] = Val::Text(Some(String::new()));
    }
}

/// Whether push sends postings (`pg::WORD_POSTINGS`), read once.
static POSTED: LazyLock<bool> = LazyLock::new(crate::pg::words_posted);
/// Whether they hold the words' positions (`pg::WORD_POSITIONS`).
static POSITIONED: LazyLock<bool> = LazyLock::new(crate::pg::words_positioned);
/// Whether they hold the pairs of the common words too (`pg::COMMON_GRAMS`).
static GRAMS: LazyLock<bool> = LazyLock::new(crate::pg::grams_posted);

/// The entry's searchable texts, of the kinds the local index holds for it; `at`: the entry's
/// time and silence.
fn add_texts(
    line: &str,
    seq: i64,
    at: (Option<i64>, bool),
    kinds: i64,
    redact: bool,
    rows: &mut FileRows,
) {
    // The lenient parse ingest used (lone surrogates from cut emoji are accepted).
    let Line::Value(serde_json::Value::Object(obj)) = parse_line(line.as_bytes()) else {
        return;
    };
    for (kind, text) in texts(&obj) {
        if kinds & (1 << kind as i64) != 0 {
            // The words are the original's less the secrets' (length and positions as the
            // local index counts them, so the ranking is the local one); the body shown is
            // redacted.
            let secrets = if redact {
                redact::find(&text)
            } else {
                Vec::new()
            };
            let hidden: Vec<(usize, usize)> = secrets.iter().map(|f| (f.start, f.end)).collect();
            let (occ, len) = occurrences_outside(&text, &hidden);
            let words = TsVector::of_sorted(&occ);
            let (heads, ntok) = heads::listed(&occ, len);
            // Each word's count, in the `tsvector`'s order: it holds the first of the sorted
            // words' runs that fit (`TsVector::of_sorted`).
            if *POSTED {
                let runs = occ.chunk_by(|a, b| a.0 == b.0);
                let (mut tfs, mut positions) = (Vec::new(), Vec::new());
                for (run, lexeme) in runs.zip(words.lexemes()) {
                    debug_assert_eq!(run[0].0, lexeme);
                    tfs.push(u32::try_from(run.len()).unwrap_or(u32::MAX));
                    if *POSITIONED {
                        positions.extend(run.iter().map(|o| o.1));
                    }
                }
                rows.tfs.push(tfs);
                rows.positions.push(positions);
                if *GRAMS {
                    // Of a text too big for its `tsvector` (which then holds the first words
                    // in order), only the grams of words it holds.
                    rows.grams.push(grams(&occ, words.lexemes().count()));
                }
            }
            drop(occ);
            let body = if secrets.is_empty() {
                text
            } else {
                redact::replaced(&text, &secrets)
            };
            for (term, tf) in heads {
                rows.bytes += term.len() + 32;
                rows.heads.push(vec![
                    Val::Int(Some(seq)),
                    Val::Int2(Some(kind as i16)),
                    Val::Text(Some(term)),
                    Val::Int4(Some(tf)),
                    Val::Int4(Some(ntok)),
                    Val::Int(at.0),
                ]);
            }
            rows.bytes += body.len() + 16;
            let mut row = vec![
                Val::Int(Some(seq)),
                Val::Int2(Some(kind as i16)),
                Val::Text(Some(body)),
                Val::Words(words),
                Val::Int4(Some(ntok)),
            ];
            if *TIMES_ON_TEXTS {
                row.extend([Val::Int(at.0), Val::Bool(Some(at.1))]);
            }
            rows.texts.push(row);
        }
    }
}

/// `text` without its secrets when `redact` is on.
fn redacted(text: String, redact: bool) -> String {
    if !redact {
        return text;
    }
    match redact::redact(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

/// A raw JSON line with every string value redacted, still JSON; `None` when it holds no
/// secret. A line that does not parse (ingest recorded it as bad) is sent as text, redacted.
pub(super) fn redact_json(raw: &str) -> Option<String> {
    if !redact::may_hold(raw) {
        return None;
    }
    let Ok(mut v) = parse_json(raw) else {
        return Some(redact::redact(raw).into_owned());
    };
    (redact::redact_value(&mut v) > 0).then(|| v.to_string())
}

/// An entry row's free texts: its listing text and its label.
fn redact_entry(row: &mut [Val]) {
    for (i, col) in ENTRY_COLS.iter().enumerate().take(row.len()) {
        // By server name: every entry field keeps its local name there but `offset`.
        if let ("text" | "label", Val::Text(Some(text))) = (col.0, &mut row[i]) {
            *text = redacted(std::mem::take(text), true);
        }
    }
}

/// The summary's free texts: the header line (JSON), the name, the first message and a
/// gateway's display name and subject. Paths and ids are keys and are sent as they are.
fn redact_session(session: &mut [Val]) {
    for (i, col) in SESSION_COLS.iter().enumerate() {
        let Val::Text(Some(text)) = &mut session[i] else {
            continue;
        };
        match col.0 {
            "header" => {
                if let Some(clean) = redact_json(text) {
                    *text = clean;
                }
            }
            "name" | "first_message" | "display_name" | "subject" => {
                *text = redacted(std::mem::take(text), true);
            }
            _ => {}
        }
    }
}

fn flagged(conn: &Connection, file_id: i64, upto: i64, col: &str) -> Result<Vec<i64>> {
    let sql = format!("SELECT seq FROM entries WHERE file_id = ?1 AND seq <= ?2 AND {col} = 1");
    let mut stmt = conn.prepare_cached(&sql)?;
    let seqs = stmt
        .query_map([file_id, upto], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<i64>>>()?;
    Ok(seqs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_the_push_reads_itself_are_entry_fields() {
        assert_eq!((*SEQ, *OFFSET, *LEN), (0, 2, 3));
        assert_eq!(ENTRY_COLS[*OFFSET].0, "byte_offset");
    }
}
