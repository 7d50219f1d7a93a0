//! Embedding the index's texts for search by meaning: after a sync has committed, every entry
//! not yet embedded has its user, assistant, summary, custom and name texts read back from its
//! JSONL line, cut into passages of up to [`PASSAGE_WORDS`] words, embedded by the model
//! (static or a whole transformer, `meaning::Model`) and stored as int8 vectors (migration 0024) with their sign codes (migration 0025,
//! `codes.rs`). Entries are marked embedded batch by batch, so the pass resumes where an
//! interrupted one left gaps; a copied entry of a fork (`dup = 1`) is embedded once, in
//! its canonical session, and its copy is embedded when it becomes canonical. Vectors of
//! another model are dropped first: the index holds one model's vectors only.

use std::collections::HashMap;
use std::fs::File;
use std::sync::mpsc;
use std::time::Instant;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::meaning::{Memo, Model};
use crate::pi::huge;
use crate::pi::line::Line;
use crate::pi::text::{texts, TextKind};
use crate::store::jsonl::read_at;
use crate::store::schema::fts_rowid;

mod codes;
use codes::{center_for, compact_codes, stored_center, Block};

/// The kinds of text embedded: what people and the assistant said, summaries, custom messages
/// and names; not thinking, tool calls and outputs or bash runs, which are mostly code and
/// logs that words search finds better and that would triple the vectors.
pub const EMBEDDED_KINDS: [TextKind; 5] = [
    TextKind::User,
    TextKind::Assistant,
    TextKind::Summary,
    TextKind::Custom,
    TextKind::Name,
];

/// Words per passage: long enough to hold a thought, short enough that a static model's mean
/// of token vectors is not washed out by a long message's other topics.
pub const PASSAGE_WORDS: usize = 96;

/// Entries read per transaction with a static model.
const BATCH: usize = 2000;

/// Entries read per transaction with a whole transformer: a few seconds of work a thread, so
/// a pass given a deadline (the watcher's) stops soon after it.
const WHOLE_BATCH: usize = 256;

/// What an embedding pass did.
#[derive(Debug, Default, Clone)]
pub struct EmbedReport {
    pub entries: u64,
    pub passages: u64,
    /// Bytes of text embedded.
    pub bytes: u64,
    pub seconds: f64,
    /// Vectors of another model were dropped first.
    pub replaced: Option<String>,
    /// The deadline came before every entry was embedded.
    pub more: bool,
}

/// The bit mask of [`EMBEDDED_KINDS`] in `entries.text_kinds`.
pub fn kinds_mask() -> i64 {
    EMBEDDED_KINDS.iter().fold(0, |m, k| m | (1 << *k as i64))
}

/// The model whose vectors the index holds.
///
/// # Errors
/// SQLite errors.
pub fn indexed_model(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT id FROM embed_model", [], |r| r.get(0))
        .optional()?)
}

/// Embeds every entry not yet embedded (the caller holds the writer lock).
///
/// # Errors
/// SQLite errors; a session file that cannot be read is skipped, not an error.
pub fn embed_pending(conn: &mut Connection, model: &Model) -> Result<EmbedReport> {
    embed_pending_with(conn, model, Pass::default())
}

/// How an embedding pass runs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Pass {
    /// Take no new batch once this has passed (then the report's `more` is set): a watcher
    /// embeds a backlog a slice at a time and goes on indexing between slices.
    pub deadline: Option<Instant>,
    /// Draw a progress bar on a terminal (`sync --embed`: a whole transformer's first pass
    /// takes minutes to hours).
    pub progress: bool,
}

/// [`embed_pending`], run as `pass` says.
///
/// # Errors
/// SQLite errors.
pub fn embed_pending_with(conn: &mut Connection, model: &Model, pass: Pass) -> Result<EmbedReport> {
    let started = Instant::now();
    let mut report = EmbedReport::default();
    let had = indexed_model(conn)?;
    if had.as_deref() != Some(model.id()) {
        let tx = conn.transaction()?;
        tx.execute_batch(
            "DELETE FROM passages; DELETE FROM passage_codes; DELETE FROM embedded;
             DELETE FROM embed_model; DELETE FROM embed_center;",
        )?;
        tx.execute("INSERT INTO embed_model(id) VALUES (?1)", [model.id()])?;
        tx.commit()?;
        report.replaced = had;
    }
    embed_in_step(conn, model, pass, &mut report)?;
    compact_codes(conn)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// An entry to embed and where its line is.
struct Todo {
    rid: i64,
    file_id: i64,
    path: String,
    offset: i64,
    len: i64,
}

/// The next entries after rid `after` that hold embedded kinds of text and are not embedded.
const PENDING: &str = "SELECT e.rid, e.file_id, f.path, e.offset, e.len
     FROM entries e JOIN files f ON f.id = e.file_id
     WHERE e.rid > ?1 AND e.text_kinds & ?2 <> 0 AND e.dup = 0
       AND NOT EXISTS (SELECT 1 FROM embedded m WHERE m.rid = e.rid)
     ORDER BY e.rid LIMIT ?3";

impl Todo {
    /// A row of `rid, file_id, path, offset, len`, as [`PENDING`] and [`spread_sample`] read.
    fn of_row(r: &rusqlite::Row) -> rusqlite::Result<Todo> {
        Ok(Todo {
            rid: r.get(0)?,
            file_id: r.get(1)?,
            path: r.get(2)?,
            offset: r.get(3)?,
            len: r.get(4)?,
        })
    }
}

/// Entries holding embedded kinds of text and not embedded: what [`PENDING`] reads batch by
/// batch.
fn pending_count(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM entries e
         WHERE e.text_kinds & ?1 <> 0 AND e.dup = 0
           AND NOT EXISTS (SELECT 1 FROM embedded m WHERE m.rid = e.rid)",
        [kinds_mask()],
        |r| r.get(0),
    )?)
}

/// A first batch spread over every pending entry (every k-th by rid), for an index with no
/// center yet: the center is the mean of the first batch's vectors, and the first entries by
/// rid are a few sessions', so the center (and every similarity, by up to 0.15 on the real
/// evaluation) would depend on which sessions happened to be indexed first.
fn spread_sample(conn: &Connection, model: &Model) -> Result<Vec<Todo>> {
    let step = (pending_count(conn)? / batch_of(model) as i64).max(1);
    let mut stmt = conn.prepare(
        "SELECT e.rid, e.file_id, f.path, e.offset, e.len
         FROM entries e JOIN files f ON f.id = e.file_id
         WHERE e.text_kinds & ?1 <> 0 AND e.dup = 0 AND e.rid % ?2 = 0
           AND NOT EXISTS (SELECT 1 FROM embedded m WHERE m.rid = e.rid)
         ORDER BY e.rid LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        params![kinds_mask(), step, batch_of(model) as i64],
        Todo::of_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn batch_of(model: &Model) -> usize {
    match model {
        Model::Static(_) => BATCH,
        Model::Whole(_) => WHOLE_BATCH,
    }
}

fn pending(conn: &Connection, after: i64, model: &Model) -> Result<Vec<Todo>> {
    let mut stmt = conn.prepare_cached(PENDING)?;
    let rows = stmt.query_map(
        params![after, kinds_mask(), batch_of(model) as i64],
        Todo::of_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Reads, embeds and writes the pending entries a batch at a time: batches are read back and
/// embedded on one thread a core (the costly part: tokenizing and summing token rows), while
/// this thread writes the batches they hand back. Batches may be written out of rid order;
/// each marks its entries embedded in its own transaction, so an interrupted pass leaves
/// whole batches undone, which the next pass finds (`PENDING`).
fn embed_in_step(
    conn: &mut Connection,
    model: &Model,
    pass: Pass,
    report: &mut EmbedReport,
) -> Result<()> {
    let bar = progress_bar(conn, model, pass.progress)?;
    let past = |pass: &Pass| pass.deadline.is_some_and(|d| Instant::now() >= d);
    if !past(&pass) && stored_center(conn)?.is_none() {
        let sample = spread_sample(conn, model)?;
        if !sample.is_empty() {
            let batch = embed_batch(model, &sample)?;
            let tx = conn.transaction()?;
            let vectors = batch.iter().flat_map(|e| &e.passages);
            let first = vectors.map(|(_, scale, q)| (q.as_slice(), *scale));
            let center = center_for(&tx, first, model.dim())?;
            write_batch(&tx, &batch, &center, report)?;
            tx.commit()?;
            bar.inc(batch.len() as u64);
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4));
    let (to_embed, todo_rx) = mpsc::sync_channel::<Vec<Todo>>(threads);
    let todo_rx = std::sync::Mutex::new(todo_rx);
    std::thread::scope(|s| {
        // Moved in, so that leaving this closure (at the end or on an error) drops it and the
        // embedding threads stop before the scope waits for them.
        let to_embed = to_embed;
        let (embedded_tx, embedded) = mpsc::sync_channel::<Result<Vec<Embedded>>>(threads);
        for _ in 0..threads {
            let (todo_rx, embedded_tx) = (&todo_rx, embedded_tx.clone());
            s.spawn(move || loop {
                // The lock is held only to take a batch, not while embedding it.
                let next = todo_rx.lock().map(|rx| rx.recv());
                let Ok(Ok(todo)) = next else { break };
                if embedded_tx.send(embed_batch(model, &todo)).is_err() {
                    break;
                }
            });
        }
        drop(embedded_tx);
        let (mut after, mut in_flight, mut exhausted) = (0i64, 0, false);
        let mut center: Option<Vec<f32>> = None;
        loop {
            // A batch for each embedding thread and one waiting, while this thread writes.
            if !exhausted && past(&pass) {
                exhausted = true;
                report.more = true;
            }
            if in_flight < threads + 1 && !exhausted {
                let todo = pending(conn, after, model)?;
                match todo.last() {
                    Some(last) => {
                        after = last.rid;
                        in_flight += 1;
                        // The embedding threads end when this sender is dropped.
                        to_embed.send(todo).map_err(|_| gone())?;
                        continue;
                    }
                    None => exhausted = true,
                }
            }
            if in_flight == 0 {
                return Ok(());
            }
            let batch = embedded.recv().map_err(|_| gone())??;
            in_flight -= 1;
            let tx = conn.transaction()?;
            if center.is_none() {
                let vectors = batch.iter().flat_map(|e| &e.passages);
                let first = vectors.map(|(_, scale, q)| (q.as_slice(), *scale));
                center = Some(center_for(&tx, first, model.dim())?);
            }
            write_batch(&tx, &batch, center.as_deref().unwrap_or_default(), report)?;
            tx.commit()?;
            bar.inc(batch.len() as u64);
        }
    })
}

/// A bar counting entries embedded, on a terminal when asked and the pass is long enough to
/// want one (more than a batch); hidden otherwise.
fn progress_bar(conn: &Connection, model: &Model, show: bool) -> Result<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !show || !std::io::stderr().is_terminal() {
        return Ok(indicatif::ProgressBar::hidden());
    }
    let total = pending_count(conn)?;
    if (total as usize) <= batch_of(model) {
        return Ok(indicatif::ProgressBar::hidden());
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} embedding {pos}/{len} entries ({per_sec}, {eta}; Ctrl-C keeps what is done)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Ok(bar)
}

fn gone() -> Error {
    Error::Invalid("the embedding thread stopped".into())
}

/// An entry's passages, embedded and quantised.
struct Embedded {
    rid: i64,
    file_id: i64,
    /// Its session file could not be opened: left for the sync that notices.
    skipped: bool,
    /// Bytes of text embedded.
    bytes: u64,
    passages: Vec<(TextKind, f64, Vec<u8>)>,
}

/// Reads back and embeds the texts of `todo`'s entries.
fn embed_batch(model: &Model, todo: &[Todo]) -> Result<Vec<Embedded>> {
    let mut files: HashMap<i64, Option<File>> = HashMap::new();
    let mut out = Vec::with_capacity(todo.len());
    // Every passage of the batch first, so the model embeds them in one call (a transformer
    // runs them through its layers together); a text is kept only as its passages (a pasted
    // megabyte as its first few hundred words).
    let mut cut: Vec<(usize, TextKind, String)> = Vec::new();
    for t in todo {
        let mut e = Embedded {
            rid: t.rid,
            file_id: t.file_id,
            skipped: false,
            bytes: 0,
            passages: Vec::new(),
        };
        let file = files
            .entry(t.file_id)
            .or_insert_with(|| File::open(&t.path).ok());
        // A file gone or changed since it was indexed: the next sync rewrites its entries.
        if let Some(file) = file {
            let bytes = read_at(file, t.offset as u64, t.len as usize)
                .map_err(|e| Error::io(&t.path, e))?;
            for (kind, text) in entry_texts(bytes) {
                e.bytes += text.len() as u64;
                let each = passages(&text, model.passages_per_text());
                cut.extend(each.into_iter().map(|p| (out.len(), kind, p.to_string())));
            }
        } else {
            e.skipped = true;
        }
        out.push(e);
    }
    let just: Vec<&str> = cut.iter().map(|(_, _, p)| p.as_str()).collect();
    let vectors = model.embed_all(&just, &mut Memo::default());
    for ((at, kind, _), v) in cut.iter().zip(vectors) {
        if let Some(v) = v {
            let (scale, q) = quantize(&v);
            out[*at].passages.push((*kind, scale, q));
        }
    }
    Ok(out)
}

/// Writes a batch's passages, their codes (in one block) and the entries' marks.
fn write_batch(
    tx: &Connection,
    batch: &[Embedded],
    center: &[f32],
    report: &mut EmbedReport,
) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO passages(rid, kind, file_id, scale, vec) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut done = tx.prepare_cached("INSERT OR IGNORE INTO embedded(rid) VALUES (?1)")?;
    let mut block = Block::about(center);
    for e in batch.iter().filter(|e| !e.skipped) {
        for (kind, scale, q) in &e.passages {
            block.push(fts_rowid(e.rid, *kind), q, *scale);
            insert.execute(params![e.rid, *kind as i64, e.file_id, scale, q])?;
        }
        done.execute([e.rid])?;
        report.entries += 1;
        report.passages += e.passages.len() as u64;
        report.bytes += e.bytes;
    }
    block.append_to(tx)
}

/// The embedded kinds of text of an entry's line, as ingest extracted them.
fn entry_texts(line: Vec<u8>) -> Vec<(TextKind, String)> {
    let (value, huge) = huge::parse_owned(line);
    let Line::Value(Value::Object(obj)) = value else {
        return Vec::new();
    };
    texts(&obj)
        .into_iter()
        .filter(|(k, _)| EMBEDDED_KINDS.contains(k))
        .map(|(k, t)| match &huge {
            Some(h) => (k, h.clone().into_expanded(&t)),
            None => (k, t),
        })
        .collect()
}

/// `text` cut into passages of up to [`PASSAGE_WORDS`] words (at most `most`).
pub fn passages(text: &str, most: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    let mut words = 0;
    let mut end = 0;
    for (at, word) in word_spans(text) {
        start.get_or_insert(at);
        words += 1;
        end = at + word.len();
        if words == PASSAGE_WORDS {
            out.push(&text[start.take().unwrap_or(0)..end]);
            words = 0;
            if out.len() == most {
                return out;
            }
        }
    }
    if let Some(s) = start {
        out.push(&text[s..end]);
    }
    out
}

fn word_spans(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_whitespace()
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// `v` as int8 components and the scale that gives them back.
pub fn quantize(v: &[f32]) -> (f64, Vec<u8>) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (0.0, vec![0; v.len()]);
    }
    let scale = max / 127.0;
    let q = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8)
        .collect();
    (scale as f64, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_cut_at_word_counts_and_keep_the_text() {
        let text: String = (0..200).map(|i| format!("w{i} ")).collect();
        let p = passages(&text, 16);
        assert_eq!(p.len(), 3);
        assert!(p[0].starts_with("w0 ") && p[0].ends_with("w95"));
        assert!(p[2].starts_with("w192") && p[2].ends_with("w199"));
        assert!(passages("  \n ", 16).is_empty());
        assert_eq!(passages(&text, 2).len(), 2);
    }

    #[test]
    fn quantized_vectors_come_back_within_a_step() {
        let v = [0.5f32, -0.25, 0.0, 0.125];
        let (scale, q) = quantize(&v);
        for (x, b) in v.iter().zip(q) {
            assert!((x - (b as i8) as f32 * scale as f32).abs() <= scale as f32 / 2.0);
        }
    }
}
