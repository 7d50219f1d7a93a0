//! The one write path to the server (`pidx push`): transcripts' changes in batches, each batch
//! a savepoint of the push's one transaction (`push::push`), so readers see a push whole or not
//! at all, and a push killed at any point leaves the server as it was. A batch is a handful of statements whatever its size:
//! file ids reserved from the sequence up front, removals by `fid = ANY(...)`, rows by binary
//! `COPY`, and one re-ranking of the copies made by forks (the SQLite rule of `store::copies`,
//! per source: the session with the earliest header time, then the smallest path, holds the
//! canonical copy).

use std::io::Write as _;
use std::sync::LazyLock;

use postgres::{Client, GenericClient, Transaction};

use super::postings::{decode, decode_positioned, undecoded, Posting, Row, Segment};
use super::server_err;
use super::values::{
    copy_field, copy_fields, copy_header, copy_row, copy_trailer, EncodeError, Ty, Val,
};
use super::words::Grams;
use pidx_core::error::{Error, Result};
use pidx_core::store::schema::{FieldType, ENTRY_FIELDS, FIRST_MESSAGE};

/// The server's `sessions` columns and the SQLite expression each comes from (over `files f`,
/// `roots r`, `sessions s` and the `gw_files g` view).
pub const SESSION_COLS: &[(&str, &str, Ty)] = &[
    ("path", "f.path", Ty::Text),
    ("root", "r.path", Ty::Text),
    ("layout", "r.layout", Ty::Text),
    ("dir", "f.dir", Ty::Text),
    ("file_name", "f.name", Ty::Text),
    ("ino", "f.ino", Ty::Int),
    ("size", "f.size", Ty::Int),
    ("mtime_ms", "f.mtime_ms", Ty::Int),
    ("mtime_ns", "f.mtime_ns", Ty::Int),
    ("byte_offset", "f.offset", Ty::Int),
    ("head_hash", "f.head_hash", Ty::Int),
    ("tail_hash", "f.tail_hash", Ty::Int),
    ("lines", "f.lines", Ty::Int),
    ("bad_line_count", "f.bad_lines", Ty::Int),
    ("state", "s.state", Ty::Int4),
    ("excluded", "s.excluded", Ty::Text),
    ("loadable", "s.loadable", Ty::Bool),
    ("version", "s.version", Ty::Int),
    ("header", "s.header", Ty::Text),
    ("session_id", "s.session_id", Ty::Text),
    ("cwd", "s.cwd", Ty::Text),
    ("created_ms", "s.created_ms", Ty::Int),
    ("header_ts_ms", "s.header_ts_ms", Ty::Int),
    ("name", "s.name", Ty::Text),
    ("message_count", "s.message_count", Ty::Int),
    ("first_message", FIRST_MESSAGE, Ty::Text),
    ("last_activity_ms", "s.last_activity_ms", Ty::Int),
    ("parsed_values", "s.parsed_values", Ty::Int),
    ("entry_count", "s.entry_count", Ty::Int),
    ("leaf_seq", "s.leaf_seq", Ty::Int),
    ("leaf_id", "s.leaf_id", Ty::Text),
    ("tangled", "s.tangled", Ty::Bool),
    ("agent_id", "g.agent_id", Ty::Text),
    ("session_key", "g.session_key", Ty::Text),
    ("key_current", "g.current", Ty::Bool),
    ("channel", "g.channel", Ty::Text),
    ("chat_type", "g.chat_type", Ty::Text),
    ("peer", "g.peer", Ty::Text),
    ("display_name", "g.display_name", Ty::Text),
    ("subject", "g.subject", Ty::Text),
    ("thread_id", "g.thread_id", Ty::Text),
];

/// The server's `entries` columns and their SQLite expressions (over `entries e`): the entry
/// fields (`schema::ENTRY_FIELDS`, the one list) and the server's own; `raw_z` comes last and is
/// read from the JSONL by push.
pub static ENTRY_COLS: LazyLock<Vec<(&'static str, &'static str, Ty)>> = LazyLock::new(|| {
    let ty = |t: FieldType| match t {
        FieldType::Int => Ty::Int,
        FieldType::Text => Ty::Text,
        FieldType::Bool => Ty::Bool,
        FieldType::Float => Ty::Float,
    };
    ENTRY_FIELDS
        .iter()
        .map(|f| (f.server, f.sql, ty(f.ty)))
        .chain([
            ("shadowed", "e.shadowed", Ty::Bool),
            ("silent", "e.silent", Ty::Bool),
            // The raw line, read from the session file and compressed by the push (last: it
            // is not selected; pg 0007).
            ("raw_z", "NULL", Ty::Bytes),
        ])
        .collect()
});

/// A text's columns; from pg 0018 on, its entry's time and silence last
/// (`pg::times_on_texts`).
static TEXT_COLS: LazyLock<Vec<(&'static str, Ty)>> = LazyLock::new(|| {
    let mut cols = vec![
        ("seq", Ty::Int),
        ("kind", Ty::Int2),
        ("body", Ty::Text),
        ("tsv", Ty::Words),
        // Its length in the local tokenizer's tokens, for bm25 (`reads/ranked.rs`).
        ("ntok", Ty::Int4),
    ];
    if super::times_on_texts() {
        cols.extend([("ts_ms", Ty::Int), ("silent", Ty::Bool)]);
    }
    cols
});
/// A text's listed words (`pg::heads`, pg 0006).
const HEAD_COLS: &[(&str, Ty)] = &[
    ("seq", Ty::Int),
    ("kind", Ty::Int2),
    ("term", Ty::Text),
    ("tf", Ty::Int4),
    ("ntok", Ty::Int4),
    ("ts_ms", Ty::Int),
];
const TOOL_COLS: &[(&str, Ty)] = &[("seq", Ty::Int), ("n", Ty::Int4), ("name", Ty::Text)];
const LINE_COLS: &[(&str, Ty)] = &[("line", Ty::Int), ("text", Ty::Text), ("n", Ty::Int4)];
const BAD_COLS: &[(&str, Ty)] = &[("line", Ty::Int), ("reason", Ty::Text)];

/// Rows of one table, row after row.
#[derive(Debug, Clone)]
pub struct Rows {
    width: usize,
    vals: Vec<Val>,
}

impl Rows {
    pub fn new(width: usize) -> Rows {
        Rows {
            width,
            vals: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<Val>) {
        debug_assert_eq!(row.len(), self.width);
        self.vals.extend(row);
    }

    pub fn len(&self) -> usize {
        self.vals.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    fn rows(&self) -> std::slice::Chunks<'_, Val> {
        self.vals.chunks(self.width)
    }

    /// The rows from the `first`th on.
    pub fn since(&self, first: usize) -> std::slice::Chunks<'_, Val> {
        self.vals[first * self.width..].chunks(self.width)
    }
}

/// What changed in one transcript since the server last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// New, rewritten or replaced: everything the server holds for it is replaced.
    Full,
    /// Grown: entries after `after_seq` and lines from `from_line` on are new.
    Append { after_seq: i64, from_line: i64 },
    /// Only the summary row changed (a name from sessions.json, a touched mtime).
    Summary,
}

/// One transcript's rows to send.
pub struct FileRows {
    /// [`SESSION_COLS`] values, then the summary hash.
    pub session: Vec<Val>,
    pub summary_hash: i64,
    /// [`ENTRY_COLS`].
    pub entries: Rows,
    /// [`TEXT_COLS`] of full-text rows.
    pub texts: Rows,
    /// Each text's count of each word of its `tsvector`, in the `tsvector`'s order, a list per
    /// row of `texts` (empty before `pg::WORD_POSTINGS`): what its postings hold.
    pub tfs: Vec<Vec<u32>>,
    /// Each text's positions of each word of its `tsvector`, in the `tsvector`'s order, the
    /// word's count of them each (empty before `pg::WORD_POSITIONS`).
    pub positions: Vec<Vec<u32>>,
    /// Each text's grams (`pg::words::grams`) with their positions, a list per row of `texts`
    /// (empty before `pg::COMMON_GRAMS`): postings under terms no text counts.
    pub grams: Vec<Grams>,
    /// (seq, kind, term, tf, ntok, ts_ms): each text's listed words (`pg::heads`).
    pub heads: Rows,
    /// (seq, n, name) of tool calls.
    pub tools: Rows,
    /// (line, text) of pi's listing text from unparsable lines.
    pub listing: Rows,
    /// (line, reason).
    pub bad: Rows,
    /// For an append: the older entries that are now shadowed or silent (these flags change
    /// when later lines arrive).
    pub shadowed: Vec<i64>,
    pub silent: Vec<i64>,
    /// Bytes of text held (what a batch is measured by).
    pub bytes: usize,
}

impl FileRows {
    pub fn empty() -> FileRows {
        FileRows {
            session: Vec::new(),
            summary_hash: 0,
            entries: Rows::new(ENTRY_COLS.len()),
            texts: Rows::new(TEXT_COLS.len()),
            tfs: Vec::new(),
            positions: Vec::new(),
            grams: Vec::new(),
            heads: Rows::new(HEAD_COLS.len()),
            tools: Rows::new(TOOL_COLS.len()),
            listing: Rows::new(LINE_COLS.len()),
            bad: Rows::new(BAD_COLS.len()),
            shadowed: Vec::new(),
            silent: Vec::new(),
            bytes: 0,
        }
    }
}

/// A batch ends when it holds this many bytes of text or this many transcripts, or has been
/// filling for this long (a slow reader still commits as it goes).
const BATCH_BYTES: usize = 8 << 20;
const BATCH_FILES: usize = 500;
const BATCH_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// Transcripts' changes and removals written together (`write_batch`).
#[derive(Default)]
pub struct Batch {
    /// (the server's fid when it holds the transcript, rows, change)
    files: Vec<(Option<i64>, FileRows, Change)>,
    deleted: Vec<i64>,
    bytes: usize,
    started: Option<std::time::Instant>,
}

impl Batch {
    pub fn add(&mut self, fid: Option<i64>, rows: FileRows, change: Change) {
        self.started.get_or_insert_with(std::time::Instant::now);
        self.bytes += rows.bytes + 512;
        self.files.push((fid, rows, change));
    }

    /// Removes a transcript that is gone from the source machine.
    pub fn delete(&mut self, fid: i64) {
        self.started.get_or_insert_with(std::time::Instant::now);
        self.bytes += 512;
        self.deleted.push(fid);
    }

    pub fn full(&self) -> bool {
        self.bytes >= BATCH_BYTES
            || self.files.len() + self.deleted.len() >= BATCH_FILES
            || self.started.is_some_and(|t| t.elapsed() >= BATCH_TIME)
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.deleted.is_empty()
    }
}

/// Writes a batch in one transaction (a savepoint when `client` is already in one: a push's
/// batches are one transaction, `push::push`).
///
/// # Errors
/// Server errors (the transaction is rolled back: the server keeps the previous state).
pub fn write_batch(
    client: &mut impl GenericClient,
    source: &str,
    batch: &Batch,
    words: &mut WordCounts,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut tx = client.transaction().map_err(server_err)?;
    let fids = fids(&mut tx, batch)?;
    // Transcripts replaced whole or removed: their old rows go, their copy groups re-rank.
    let replaced: Vec<i64> = batch
        .files
        .iter()
        .filter_map(|(old, _, change)| old.filter(|_| *change == Change::Full))
        .chain(batch.deleted.iter().copied())
        .collect();
    let mut groups = (Vec::new(), Vec::new());
    if !replaced.is_empty() {
        groups = copy_groups(&mut tx, source, &replaced)?;
        delete_children(&mut tx, source, &replaced)?;
    }
    let appends: Vec<Appended> = (batch.files.iter().zip(&fids))
        .filter_map(|((_, rows, change), fid)| match *change {
            Change::Append { from_line, .. } => Some(Appended {
                fid: *fid,
                from_line,
                rows,
            }),
            _ => None,
        })
        .collect();
    if !appends.is_empty() {
        delete_tails(&mut tx, source, &appends)?;
        set_flags(&mut tx, source, &appends)?;
    }
    let old: Vec<i64> = (batch.files.iter().filter_map(|f| f.0))
        .chain(batch.deleted.iter().copied())
        .collect();
    tx.execute(
        "DELETE FROM sessions WHERE source = $1 AND fid = ANY($2)",
        &[&source, &old],
    )
    .map_err(server_err)?;
    copy_tables(&mut tx, source, batch, &fids)?;
    words.add(batch, &fids);
    if words.full() {
        words.write(&mut tx, source)?;
    }
    refresh_statistics(&mut tx, batch)?;
    let (ranked, after): (Vec<i64>, Vec<i64>) = (batch.files.iter().zip(&fids))
        .filter_map(|((_, _, change), fid)| match change {
            Change::Full => Some((*fid, -1)),
            Change::Append { after_seq, .. } => Some((*fid, *after_seq)),
            Change::Summary => None,
        })
        .unzip();
    tx.execute(
        RANK_COPIES,
        &[&source, &groups.0, &groups.1, &ranked, &after],
    )
    .map_err(server_err)?;
    tx.commit().map_err(server_err)
}

/// Each word's count of the texts written and not yet added to the source's counts
/// (`word_texts`, pg 0019), and those texts' postings (`word_postings`, pg 0020), kept across a
/// push's batches and written once before it commits: written a batch at a time, the counts
/// of a first push of 10,000 sessions were upserted again with each batch (18.7-27.9 s against
/// 12.5-20.5 s without them, at 140,000 sessions on the server), and each batch would have
/// written a row of postings for each of its words. The texts a batch replaces or removes are
/// taken away from the counts by the server as they are deleted (pg 0019's trigger, pg 0020's
/// form); their postings stay and name keys no text has, unless no text of the source holds
/// the word any more, when the word's postings go too.
#[derive(Debug, Default)]
pub struct WordCounts {
    // Hashed, not ordered: a push looks every word of every text up here (a B-tree's string
    // comparisons were a fifth of pidx's CPU in a first push); `write` sorts them once. Each
    // word is numbered (its place in `held`), and a gram is held under its two words' numbers.
    words: HashMap<String, u32>,
    held: Vec<Word>,
    grams: HashMap<(u32, u32), Segment>,
    bytes: usize,
    /// The numbers of the text's words being added (kept for its allocation).
    text: Vec<u32>,
    /// Whether the source held texts (so postings) when the push began, and its writes since.
    had_rows: bool,
    writes: i64,
    /// Whether the source held no texts when the push began, until the first write: none of
    /// its words is counted yet, so that write copies its counts instead of upserting them.
    fresh: bool,
}

type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// One word's texts since the last write.
#[derive(Debug, Default)]
struct Word {
    n: i64,
    postings: Segment,
}

/// Adds a text's posting to `postings`; the bytes it took.
fn post(postings: &mut Segment, p: &Posting, at: &[u32]) -> usize {
    let before = postings.bytes();
    postings.add(p, at);
    postings.bytes() - before
}

impl WordCounts {
    /// Words and grams held before they are written whatever is left of the push (memory).
    const MOST: usize = 500_000;
    /// Bytes of postings held before they are written (memory).
    const MOST_BYTES: usize = 128 << 20;
    /// A word's rows of fewer postings than this are merged once it has [`Self::MERGED`] of
    /// them: a push writes a row for each word it sent, and a search reads every row.
    const SMALL: i32 = 4096;
    const MERGED: i64 = 8;

    /// The counts of a push; `fresh`: the server held none of the source's texts when the
    /// push began (a first push). Known from its transcripts, not asked of `word_postings`:
    /// no index finds a source's rows there, and the look scanned the partition up to the
    /// source's first row (46 ms for the last of ten sources at 100,000 sessions, growing with
    /// the sources that share its partition). Either way only whether small rows are merged
    /// early hangs on it.
    pub fn new(fresh: bool) -> WordCounts {
        WordCounts {
            fresh,
            had_rows: !fresh,
            ..WordCounts::default()
        }
    }

    /// Whether to write what is held now.
    fn full(&self) -> bool {
        self.words.len() + self.grams.len() > Self::MOST || self.bytes > Self::MOST_BYTES
    }

    /// Adds the lexemes of each text's `tsvector` in `batch`, each once a text, and (pg 0020)
    /// the text's postings under them; `fids`: the batch's files' ids.
    fn add(&mut self, batch: &Batch, fids: &[i64]) {
        if !super::words_counted() {
            return;
        }
        let posted = super::words_posted();
        for ((_, rows, _), &fid) in batch.files.iter().zip(fids) {
            for (i, row) in rows.texts.rows().enumerate() {
                let Val::Words(words) = &row[*TSV] else {
                    continue;
                };
                let mut posting = posted.then(|| posting_of(fid, row));
                let tfs = rows.tfs.get(i).map_or(&[][..], Vec::as_slice);
                let mut positions = rows.positions.get(i).map_or(&[][..], Vec::as_slice);
                self.text.clear();
                for (j, lexeme) in words.lexemes().enumerate() {
                    let id = match self.words.get(lexeme) {
                        Some(&id) => id,
                        None => {
                            let id = u32::try_from(self.held.len()).expect("words held < 2^32");
                            self.words.insert(lexeme.to_string(), id);
                            self.held.push(Word::default());
                            id
                        }
                    };
                    self.text.push(id);
                    let word = &mut self.held[id as usize];
                    word.n += 1;
                    if let Some(p) = posting.as_mut() {
                        p.tf = tfs.get(j).copied().unwrap_or(1);
                        let (at, rest) = positions.split_at(positions.len().min(p.tf as usize));
                        positions = rest;
                        self.bytes += post(&mut word.postings, p, at);
                    }
                }
                // A gram's postings, under a term of no text's count (its texts are counted
                // from its postings when a phrase needs them).
                let Some(p) = posting.as_mut() else {
                    continue;
                };
                let Some(grams) = rows.grams.get(i) else {
                    continue;
                };
                for ((a, b), at) in grams.each() {
                    let (Some(&a), Some(&b)) =
                        (self.text.get(a as usize), self.text.get(b as usize))
                    else {
                        debug_assert!(false, "a gram of words the text's tsvector lacks");
                        continue;
                    };
                    p.tf = u32::try_from(at.len()).unwrap_or(u32::MAX);
                    let postings = self.grams.entry((a, b)).or_default();
                    self.bytes += post(postings, p, at);
                }
            }
        }
    }

    /// Adds the counts held to the source's, sorted by word, writes the postings held as a row
    /// a word (merging a word's small rows), and forgets them.
    ///
    /// # Errors
    /// Server errors.
    pub fn write(&mut self, client: &mut impl GenericClient, source: &str) -> Result<()> {
        if self.words.is_empty() {
            return Ok(());
        }
        self.bytes = 0;
        // Taken, not drained: the tables go now, not at the push's end (memory).
        let mut names = vec![String::new(); self.held.len()];
        for (name, id) in std::mem::take(&mut self.words) {
            names[id as usize] = name;
        }
        let grams = std::mem::take(&mut self.grams);
        let mut words: Vec<(String, Word)> = Vec::with_capacity(names.len() + grams.len());
        for ((a, b), postings) in grams {
            let term = format!("{} {}", names[a as usize], names[b as usize]);
            words.push((term, Word { n: 0, postings }));
        }
        words.extend(names.into_iter().zip(std::mem::take(&mut self.held)));
        // Sorted, so that pushes of several sources update `word_texts` in one order.
        words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut terms = Vec::with_capacity(words.len());
        let (mut ns, mut posted, mut rows, mut terms_posted, mut small) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (term, w) in words {
            if !w.postings.is_empty() {
                let n = i32::try_from(w.postings.len()).unwrap_or(i32::MAX);
                if n < Self::SMALL {
                    small.push(term.clone());
                }
                posted.push(n);
                rows.push(w.postings.finish());
                terms_posted.push(term.clone());
            }
            // A gram is counted by no text (its count would never go down: the server's
            // trigger counts a deleted text's `tsvector`, which holds no grams).
            if w.n > 0 {
                ns.push(w.n);
                terms.push(term);
            }
        }
        if !(std::mem::take(&mut self.fresh) && copied_counts(client, source, &terms, &ns)?) {
            client
                .execute(
                    "INSERT INTO word_texts (source, term, n)
                     SELECT $1, u.term, u.n FROM unnest($2::text[], $3::int8[]) AS u(term, n)
                     ON CONFLICT (term, source) DO UPDATE SET n = word_texts.n + excluded.n",
                    &[&source, &terms, &ns],
                )
                .map_err(server_err)?;
        }
        if rows.is_empty() {
            return Ok(());
        }
        insert_postings(client, source, &terms_posted, &posted, rows)?;
        self.writes += 1;
        // A source's first push has written each word at most once a write: no word has rows
        // to merge before its [`Self::MERGED`]th (the look for them took 1.7 s of a first push
        // of 1,000 sessions, a term of each gram in it).
        if !self.had_rows && self.writes < Self::MERGED {
            return Ok(());
        }
        let Columns {
            col: pos_col,
            out: pos_out,
            agg: pos_agg,
            ..
        } = Columns::pos();
        let Columns {
            col: skips_col,
            out: skips_out,
            agg: skips_agg,
            ..
        } = Columns::skips();
        let Columns {
            col: bounds_col,
            out: bounds_out,
            agg: bounds_agg,
            ..
        } = Columns::bounds();
        let merge = format!(
            "WITH many AS (
                 SELECT term FROM word_postings
                 WHERE source = $1 AND term = ANY($2) AND n < $3
                 GROUP BY term HAVING count(*) >= $4),
             gone AS (
                 DELETE FROM word_postings w USING many
                 WHERE w.source = $1 AND w.term = many.term AND w.n < $3
                 RETURNING w.term, w.n, w.data{pos_out}{skips_out}{bounds_out})
             INSERT INTO word_postings (source, term, n, data{pos_col}{skips_col}{bounds_col})
             SELECT $1, term, sum(n)::int4, string_agg(data, ''::bytea){pos_agg}{skips_agg}{bounds_agg}
             FROM gone GROUP BY term"
        );
        client
            .execute(
                merge.as_str(),
                &[&source, &small, &Self::SMALL, &Self::MERGED],
            )
            .map_err(server_err)?;
        Ok(())
    }
}

/// Writes a source's first counts of texts per word by binary `COPY`, when none of its words
/// is counted yet: for the 232,126 words of the published transcripts' first pushes the
/// statement took 1.4-1.6 s against 2.2-3.1 s upserted (docs/performance.md). In a savepoint,
/// so that a count the server held after all (counts out of step with the texts) makes the
/// upsert add to it instead: `false` then.
///
/// # Errors
/// Server errors but a refused copy.
fn copied_counts(
    client: &mut impl GenericClient,
    source: &str,
    terms: &[String],
    ns: &[i64],
) -> Result<bool> {
    let mut savepoint = client.transaction().map_err(server_err)?;
    let staged = staged(&mut savepoint, "word_texts")?;
    let put = |buf: &mut bytes::BytesMut, (term, n): (&String, &i64)| {
        copy_fields(buf, 3);
        copy_field(buf, &source)?;
        copy_field(buf, term)?;
        copy_field(buf, n)
    };
    match copy(
        &mut savepoint,
        staged,
        "word_texts",
        "source, term, n",
        terms.iter().zip(ns),
        put,
    ) {
        Ok(()) => savepoint.commit().map_err(server_err).map(|()| true),
        Err(Error::Stopped) => Err(Error::Stopped),
        Err(_) => savepoint.rollback().map_err(server_err).map(|()| false),
    }
}

/// The columns of `word_postings` a row's part fills in this schema, as named in a `COPY`,
/// from a `DELETE ... RETURNING` (`w`) and merged.
struct Columns {
    col: &'static str,
    out: &'static str,
    agg: &'static str,
}

impl Columns {
    /// Each text's positions of the word (pg 0021), merged in the order of the postings (one
    /// scan feeds every aggregate).
    fn pos() -> Columns {
        if super::words_positioned() {
            Columns {
                col: ", pos",
                out: ", w.pos",
                agg: ", string_agg(pos, ''::bytea)",
            }
        } else {
            Columns::none()
        }
    }

    /// The blocks' entries (pg 0023), merged alike; a row without them (written before that
    /// schema and not given them yet, [`reblock`]) makes the merged row one without, read whole.
    fn skips() -> Columns {
        if super::postings_blocked() {
            Columns {
                col: ", skips",
                out: ", w.skips",
                agg:
                    ", CASE WHEN bool_and(skips IS NOT NULL) THEN string_agg(skips, ''::bytea) END",
            }
        } else {
            Columns::none()
        }
    }

    /// The blocks' bounds (pg 0024), merged alike; a row without them (written before that
    /// schema, [`reblock`]) makes the merged row one without.
    fn bounds() -> Columns {
        if super::postings_bounded() {
            Columns {
                col: ", bounds",
                out: ", w.bounds",
                agg: ", CASE WHEN bool_and(bounds IS NOT NULL) THEN string_agg(bounds, ''::bytea) END",
            }
        } else {
            Columns::none()
        }
    }

    fn none() -> Columns {
        Columns {
            col: "",
            out: "",
            agg: "",
        }
    }
}

/// Writes a row of postings for each term, in one binary `COPY`: an `INSERT` from `unnest` of
/// arrays held every row twice more in memory (the arrays, then their encoding) and made the
/// server parse them; for a first push of 1,000 sessions (343,818 rows) the statement took
/// 1.8-2.1 s against 1.3 s, and pidx's peak memory 700 MB against 604 MB
/// (docs/performance.md).
fn insert_postings(
    client: &mut impl GenericClient,
    source: &str,
    terms: &[String],
    ns: &[i32],
    rows: Vec<Row>,
) -> Result<()> {
    let (pos, skips, bounds) = (Columns::pos(), Columns::skips(), Columns::bounds());
    let cols = format!(
        "source, term, n, data{}{}{}",
        pos.col, skips.col, bounds.col
    );
    // What the schema holds of a row (pg 0021, 0023, 0024), in the order of `cols`.
    let in_schema = [
        !pos.col.is_empty(),
        !skips.col.is_empty(),
        !bounds.col.is_empty(),
    ];
    let staged = staged(client, "word_postings")?;
    let put = |buf: &mut bytes::BytesMut, ((term, n), row): ((&String, &i32), Row)| {
        let parts = [&row.pos, &row.skips, &row.bounds];
        let held = || {
            in_schema
                .iter()
                .zip(parts)
                .filter_map(|(h, part)| h.then_some(part))
        };
        copy_fields(buf, 4 + held().count());
        copy_field(buf, &source)?;
        copy_field(buf, term)?;
        copy_field(buf, n)?;
        copy_field(buf, &row.data)?;
        held().try_for_each(|part| copy_field(buf, part))
    };
    let rows = terms.iter().zip(ns).zip(rows);
    copy(client, staged, "word_postings", &cols, rows, put)
}

/// Rewrites a source's rows of postings written before pg 0023 into blocks with their entries
/// (and before pg 0024, with their bounds), once (`sources.postings_blocked`): until then a
/// search reads those rows whole. A row at a
/// time is decoded and encoded again, a thousand rows a statement; about what its postings
/// weigh to read and write, in the push that first finds the source unblocked.
///
/// # Errors
/// Server errors; a stored row that does not decode.
pub fn reblock(tx: &mut Transaction, source: &str) -> Result<()> {
    let blocked: Option<bool> = tx
        .query_opt(
            "SELECT postings_blocked FROM sources WHERE name = $1",
            &[&source],
        )
        .map_err(server_err)?
        .map(|r| r.get(0));
    if blocked != Some(false) {
        return Ok(());
    }
    let without = if super::postings_bounded() {
        "skips IS NULL OR bounds IS NULL"
    } else {
        "skips IS NULL"
    };
    let tids: Vec<String> = tx
        .query(
            &format!("SELECT ctid::text FROM word_postings WHERE source = $1 AND ({without})"),
            &[&source],
        )
        .map_err(server_err)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for some in tids.chunks(1000) {
        let read = tx
            .query(
                "SELECT term, n, data, pos FROM word_postings
                 WHERE source = $1 AND ctid = ANY($2::text[]::tid[])",
                &[&source, &some],
            )
            .map_err(server_err)?;
        let (mut terms, mut ns, mut rows) = (Vec::new(), Vec::new(), Vec::new());
        for r in &read {
            let (data, pos): (&[u8], Option<&[u8]>) = (r.get(2), r.get(3));
            let mut segment = Segment::default();
            let whole = match pos {
                Some(pos) => decode_positioned(data, pos, |_| true, |p, at| segment.add(&p, at)),
                None => decode(data, |p| segment.add(&p, &[])),
            };
            if !whole {
                return Err(undecoded(source));
            }
            terms.push(r.get::<_, String>(0));
            ns.push(r.get::<_, i32>(1));
            rows.push(segment.finish());
        }
        tx.execute(
            "DELETE FROM word_postings WHERE source = $1 AND ctid = ANY($2::text[]::tid[])",
            &[&source, &some],
        )
        .map_err(server_err)?;
        insert_postings(tx, source, &terms, &ns, rows)?;
    }
    tx.execute(
        "UPDATE sources SET postings_blocked = true WHERE name = $1",
        &[&source],
    )
    .map_err(server_err)?;
    Ok(())
}

/// A text row's posting (its count of a word set for each word).
fn posting_of(fid: i64, row: &[Val]) -> Posting {
    let int = |v: &Val| match v {
        Val::Int(Some(n)) => Some(*n),
        Val::Int4(Some(n)) => Some(i64::from(*n)),
        Val::Int2(Some(n)) => Some(i64::from(*n)),
        _ => None,
    };
    Posting {
        fid,
        seq: int(&row[0]).unwrap_or(0),
        kind: int(&row[1]).map_or(0, |k| k as i16),
        tf: 1,
        ntok: int(&row[*NTOK]).map_or(0, |n| u32::try_from(n).unwrap_or(0)),
        ts_ms: TS_MS.and_then(|at| int(&row[at])),
    }
}

/// Where a text's words, length and time sit among [`TEXT_COLS`].
static TSV: LazyLock<usize> = LazyLock::new(|| column("tsv").expect("TEXT_COLS has tsv"));
static NTOK: LazyLock<usize> = LazyLock::new(|| column("ntok").expect("TEXT_COLS has ntok"));
static TS_MS: LazyLock<Option<usize>> = LazyLock::new(|| column("ts_ms"));

fn column(name: &str) -> Option<usize> {
    TEXT_COLS.iter().position(|c| c.0 == name)
}

/// Statistics that still describe a (nearly) empty table after a large `COPY` make the
/// re-ranking's join scan the table per row (minutes for a first push into an empty
/// database): when this batch added more entries than the table's estimate holds, entries and
/// sessions are analysed first (a sample; allowed inside the transaction). `SKIP_LOCKED`: the
/// lock ANALYZE takes is held to the end of the push's transaction, so another source's push
/// already analysing would make this one wait for its whole push; its fresh statistics (written
/// in place, seen at once) serve this one too.
fn refresh_statistics(tx: &mut Transaction, batch: &Batch) -> Result<()> {
    let added: usize = batch
        .files
        .iter()
        .map(|(_, rows, _)| rows.entries.len())
        .sum();
    let estimate: f32 = tx
        .query_one(
            "SELECT reltuples FROM pg_class WHERE oid = 'entries'::regclass",
            &[],
        )
        .map_err(server_err)?
        .get(0);
    if f64::from(estimate) < added as f64 {
        tx.batch_execute("ANALYZE (SKIP_LOCKED) entries, sessions")
            .map_err(server_err)?;
    }
    Ok(())
}

/// Each file's id: the server's, or one reserved from the identity sequence for a new file, and
/// (`pg::WORD_POSTINGS` on) for one sent again whole: the postings of its old texts then name
/// keys no text has, and are dropped where they are read (pg 0020).
fn fids(tx: &mut Transaction, batch: &Batch) -> Result<Vec<i64>> {
    let renew = super::words_posted();
    let kept =
        |f: &(Option<i64>, FileRows, Change)| f.0.filter(|_| !(renew && f.2 == Change::Full));
    let new = batch.files.iter().filter(|f| kept(f).is_none()).count() as i64;
    let mut reserved = Vec::new();
    if new > 0 {
        reserved = tx
            .query(
                "SELECT nextval(pg_get_serial_sequence('sessions', 'fid'))
                 FROM generate_series(1, $1::bigint)",
                &[&new],
            )
            .map_err(server_err)?
            .iter()
            .map(|r| r.get::<_, i64>(0))
            .collect();
    }
    let mut reserved = reserved.into_iter();
    Ok(batch
        .files
        .iter()
        .map(|f| kept(f).unwrap_or_else(|| reserved.next().expect("one per new file")))
        .collect())
}

/// Which of a transcript's rows go to a table.
type RowsOf = fn(&FileRows) -> &Rows;

/// The batch's rows, one binary `COPY` per table.
fn copy_tables(tx: &mut Transaction, source: &str, batch: &Batch, fids: &[i64]) -> Result<()> {
    // Every table of a transcript's rows has the same policies as `sessions`.
    let staged = staged(tx, "sessions")?;
    let mut session_cols: Vec<&str> = SESSION_COLS.iter().map(|c| c.0).collect();
    session_cols.push("summary_hash");
    let sessions: Vec<(i64, Vec<Val>)> = (batch.files.iter().zip(fids))
        .map(|((_, rows, _), fid)| {
            let mut vals = rows.session.clone();
            vals.push(Val::Int(Some(rows.summary_hash)));
            (*fid, vals)
        })
        .collect();
    let of_source = |cols: &[&str]| format!("source, fid, {}", cols.join(", "));
    let put =
        |buf: &mut bytes::BytesMut, (fid, vals): (i64, &[Val])| copy_row(buf, source, fid, vals);
    copy(
        tx,
        staged,
        "sessions",
        &of_source(&session_cols),
        sessions.iter().map(|(f, v)| (*f, v.as_slice())),
        put,
    )?;
    let names = |cols: &[(&'static str, Ty)]| cols.iter().map(|c| c.0).collect::<Vec<_>>();
    let entry_cols: Vec<&str> = ENTRY_COLS.iter().map(|c| c.0).collect();
    let tables: [(&str, Vec<&str>, RowsOf); 6] = [
        ("entries", entry_cols, |r| &r.entries),
        ("entry_text", names(&TEXT_COLS), |r| &r.texts),
        ("text_heads", names(HEAD_COLS), |r| &r.heads),
        ("tool_uses", names(TOOL_COLS), |r| &r.tools),
        ("listing_text", names(LINE_COLS), |r| &r.listing),
        ("bad_lines", names(BAD_COLS), |r| &r.bad),
    ];
    for (table, cols, of) in tables {
        let rows = (batch.files.iter().zip(fids))
            .flat_map(|((_, rows, _), fid)| of(rows).rows().map(move |r| (*fid, r)));
        copy(tx, staged, table, &of_source(&cols), rows, put)?;
    }
    Ok(())
}

/// Whether `copy` into `table` must go through a temporary table: PostgreSQL refuses `COPY
/// FROM` into a table whose row-level security binds the role (a member's, `pg::rights`);
/// such a role copies into a temporary table, then inserts from it, where the policies check
/// every row.
///
/// # Errors
/// Server errors.
fn staged(client: &mut impl GenericClient, table: &str) -> Result<bool> {
    Ok(client
        .query_one("SELECT row_security_active($1::text)", &[&table])
        .map_err(server_err)?
        .get(0))
}

/// One binary `COPY` of `rows` into `table`'s `cols` (named as in SQL), each row encoded by
/// `put`, sent in pieces of about a megabyte; `staged`: through a temporary table (`staged`).
fn copy<R>(
    tx: &mut impl GenericClient,
    staged: bool,
    table: &str,
    cols: &str,
    rows: impl Iterator<Item = R>,
    mut put: impl FnMut(&mut bytes::BytesMut, R) -> std::result::Result<(), EncodeError>,
) -> Result<()> {
    let mut rows = rows.peekable();
    if rows.peek().is_none() {
        return Ok(());
    }
    let encode = |e: &dyn std::fmt::Display| Error::Server(format!("sending {table}: {e}"));
    let target = if staged {
        let temp = format!("pidx_in_{table}");
        tx.batch_execute(&format!(
            "CREATE TEMP TABLE IF NOT EXISTS {temp} (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        ))
        .map_err(server_err)?;
        temp
    } else {
        table.to_string()
    };
    let sql = format!("COPY {target} ({cols}) FROM STDIN (FORMAT binary)");
    let mut w = tx.copy_in(&sql).map_err(server_err)?;
    let mut buf = bytes::BytesMut::with_capacity(1 << 21);
    copy_header(&mut buf);
    for row in rows {
        put(&mut buf, row).map_err(|e| encode(&e))?;
        if buf.len() >= 1 << 20 {
            w.write_all(&buf).map_err(|e| encode(&e))?;
            buf.clear();
        }
    }
    copy_trailer(&mut buf);
    w.write_all(&buf).map_err(|e| encode(&e))?;
    w.finish().map_err(server_err)?;
    if staged {
        tx.batch_execute(&format!(
            "INSERT INTO {table} ({cols}) OVERRIDING SYSTEM VALUE
             SELECT {cols} FROM {target};
             TRUNCATE {target}"
        ))
        .map_err(server_err)?;
    }
    Ok(())
}

/// The server's tables that hold a transcript's rows besides its `sessions` row.
pub const CHILD_TABLES: [&str; 6] = [
    "entries",
    "entry_text",
    "text_heads",
    "tool_uses",
    "listing_text",
    "bad_lines",
];

/// Deletes every row of these transcripts but their `sessions` row.
fn delete_children(tx: &mut Transaction, source: &str, fids: &[i64]) -> Result<()> {
    let meaning = super::meaning_held().then_some(["passages", "passage_files"]);
    for table in CHILD_TABLES
        .into_iter()
        .chain(meaning.into_iter().flatten())
    {
        tx.execute(
            &format!("DELETE FROM {table} WHERE source = $1 AND fid = ANY($2)"),
            &[&source, &fids],
        )
        .map_err(server_err)?;
    }
    Ok(())
}

/// A transcript of the batch that grew: the server holds its lines before `from_line`, and
/// `rows` lists its older entries' flags (`set_flags`).
struct Appended<'a> {
    fid: i64,
    from_line: i64,
    rows: &'a FileRows,
}

/// For the appends: each transcript's lines from its `from_line` on (a torn last line can be
/// read again). One statement a table for the whole batch: a statement per transcript cost an
/// incremental push of 100 grown transcripts 0.3 s in round trips and plans alone.
fn delete_tails(tx: &mut Transaction, source: &str, appends: &[Appended]) -> Result<()> {
    let (fids, lines): (Vec<i64>, Vec<i64>) = appends.iter().map(|a| (a.fid, a.from_line)).unzip();
    for table in ["listing_text", "bad_lines"] {
        tx.execute(
            &format!(
                "DELETE FROM {table} t USING unnest($2::bigint[], $3::bigint[]) AS u(fid, line)
                 WHERE t.source = $1 AND t.fid = u.fid AND t.line >= u.line"
            ),
            &[&source, &fids, &lines],
        )
        .map_err(server_err)?;
    }
    Ok(())
}

/// Older entries' flags that later lines change: `shadowed` (a later entry took the id) and
/// `silent` (a later `NO_REPLY` reply). An append only ever sets them: lines added after an
/// entry cannot take back the entry that took its id or the reply that silenced it, and the
/// local index sets each once, when the line that changes it comes (`local::flagged` lists
/// every older entry flagged so far). So only the listed entries not yet flagged on the server
/// are written, looked up by key, and a flag nobody listed costs no statement: the `UPDATE` of
/// every older entry of the grown transcripts, which compared each entry's flag with the list,
/// read a few hundred keys of partitions of millions of rows and fired the rollup triggers of
/// `entries` (pg 0003, 0009, 0011) even when no row changed: 357 ms of the 1.24 s the server
/// spent on an incremental push of 100 grown transcripts at a million sessions, where none of
/// them had a flag to set (docs/performance.md). One statement a flag for the whole batch.
fn set_flags(tx: &mut Transaction, source: &str, appends: &[Appended]) -> Result<()> {
    let flagged = |col: &str| -> (Vec<i64>, Vec<i64>) {
        (appends.iter())
            .flat_map(|a| {
                let seqs = if col == "shadowed" {
                    &a.rows.shadowed
                } else {
                    &a.rows.silent
                };
                seqs.iter().map(|seq| (a.fid, *seq))
            })
            .unzip()
    };
    // The texts' copy of an entry's silence (pg 0018) changes with it.
    let texts = super::times_on_texts().then_some(("entry_text", "silent"));
    let flags = [("entries", "shadowed"), ("entries", "silent")];
    for (table, col) in flags.into_iter().chain(texts) {
        let (fids, seqs) = flagged(col);
        if fids.is_empty() {
            continue;
        }
        tx.execute(
            &format!(
                "UPDATE {table} e SET {col} = true
                 FROM unnest($2::bigint[], $3::bigint[]) AS f(fid, seq)
                 WHERE e.source = $1 AND e.fid = f.fid AND e.seq = f.seq AND NOT e.{col}"
            ),
            &[&source, &fids, &seqs],
        )
        .map_err(server_err)?;
    }
    Ok(())
}

/// The (id, ts) pairs of these transcripts' entries: the copy groups their removal re-ranks.
fn copy_groups(
    tx: &mut Transaction,
    source: &str,
    fids: &[i64],
) -> Result<(Vec<String>, Vec<String>)> {
    let rows = tx
        .query(
            "SELECT DISTINCT id, ts FROM entries
             WHERE source = $1 AND fid = ANY($2) AND id IS NOT NULL AND ts IS NOT NULL",
            &[&source, &fids],
        )
        .map_err(server_err)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).unzip())
}

/// Re-ranks the copy groups `($2, $3)` and those of the entries after `after` of each file
/// `($4, $5)`: in each (id, ts) group of this source, every entry of a session later than the
/// earliest is a copy. Once per batch, after all its rows are in: each group's rank depends
/// only on the rows it ends with, so this equals re-ranking after every transcript.
const RANK_COPIES: &str = "
WITH g AS (
    SELECT id, ts FROM unnest($2::text[], $3::text[]) AS u(id, ts)
    UNION
    SELECT e.id, e.ts FROM unnest($4::bigint[], $5::bigint[]) AS f(fid, after)
    JOIN entries e ON e.source = $1 AND e.fid = f.fid AND e.seq > f.after
    WHERE e.id IS NOT NULL AND e.ts IS NOT NULL
), r AS (
    SELECT c.fid, c.seq,
           rank() OVER (PARTITION BY g.id, g.ts
                        ORDER BY coalesce(c.created_ms, 9223372036854775807), c.path COLLATE \"C\") > 1
               AS copy
    FROM g CROSS JOIN LATERAL (
        -- OFFSET 0 keeps this a lookup per group (entries_by_copy, sessions_pkey): joined
        -- flat, the planner hashes the whole entries table once per batch.
        SELECT e.fid, e.seq, s.created_ms, s.path
        FROM entries e JOIN sessions s ON s.source = e.source AND s.fid = e.fid
        WHERE e.source = $1 AND e.id = g.id AND e.ts = g.ts
        OFFSET 0
    ) c
)
UPDATE entries e SET dup = r.copy FROM r
WHERE e.source = $1 AND e.fid = r.fid AND e.seq = r.seq AND e.dup <> r.copy";

/// Removes `source`'s transcripts found at `paths` (`pidx forget --pg`), as a push removes
/// those gone from the source machine; returns how many the server held. The caller holds the
/// source's lock (`super::lock_source`).
///
/// # Errors
/// Server errors (nothing is removed).
pub fn remove_paths(client: &mut Client, source: &str, paths: &[String]) -> Result<usize> {
    let rows = client
        .query(
            "SELECT fid FROM sessions WHERE source = $1 AND path = ANY($2)",
            &[&source, &paths],
        )
        .map_err(server_err)?;
    let mut batch = Batch::default();
    for r in &rows {
        batch.delete(r.get(0));
    }
    // Removals only: the server takes their words' counts away itself.
    write_batch(client, source, &batch, &mut WordCounts::default())?;
    Ok(rows.len())
}
