//! Impact blocks of the frequent words (`migrations/0027_impacts.sql`): for each word in at
//! least [`MIN_TEXTS`] texts, its texts in rowid order in blocks of [`BLOCK`], each with the
//! most a text of it scores before the idf and its newest entry's time. A ranked search of the
//! word (`query/search/blocked.rs`) bounds each block by both and scores only the blocks that
//! can still reach its top: FTS5 scores every text of a word before the best are known, half
//! a microsecond each (`to`, in 246,403 of 401,443 texts: 145 ms).
//!
//! Built at the end of a sync ([`update`]): extended over the texts added since once they are
//! [`EXTEND_AFTER`] rows or more (a search scores texts past the blocks one by one); words that
//! became frequent join after a big sync or once the index grew by a quarter; all are built
//! again when the mean text length moved by more than a quarter.
//!
//! Only a word's texts that can reach the top of its search are listed (`migrations/
//! 0028_impact_heads.sql`): one whose impact is below the word's cut ([`SHARE`] of the
//! [`HEAD`]th best impact the build has seen) is left out and only raises the word's `tail`,
//! the most any text left out scores; a search that would need one of them ranks the word with
//! FTS5 instead. At 10,000 sessions the lists keep about 47% of the blocked words' texts: a
//! median 28% for words in 20,000 to 50,000 texts, 62% for those in 100,000 or more (their
//! counts and lengths give most of their texts nearly the highest impact).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rusqlite::{params, Connection, OptionalExtension};

use super::fts5::{self, impact};

/// Texts a word must be in to get blocks: below it, scoring every text is a few ms.
pub const MIN_TEXTS: i64 = 20_000;

/// Texts of a block.
const BLOCK: usize = 128;

/// The best impacts of a word the cut is taken from: a search's top is at most this long
/// before it may need the texts left out.
const HEAD: usize = 100;

/// The share of the [`HEAD`]th best impact below which a text is left out: the lowest recency
/// weight a search blends a relevance with (`query::search::ranked::blend`, two thirds), so
/// that an old text of the head still outranks the most any text left out can score.
const SHARE: f64 = 2.0 / 3.0;

/// Full-text rowids read per pass of a build (their lengths and times held in memory: 6 MB).
const CHUNK: i64 = 1 << 20;

/// Rowids past the blocks after which a sync extends them (4,096 entries' worth).
const EXTEND_AFTER: i64 = 1 << 15;

/// One block of a word's texts.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub first: i64,
    pub last: i64,
    /// The most `fts5::impact` of its texts, at the mean length [`Blocks::avgdl`].
    pub impact: f64,
    /// Its newest entry's time (ms), if any has one.
    pub newest: Option<i64>,
}

/// A block's texts: (rowid, the word's count in it, its length in tokens), in rowid order.
/// A text removed from the index since may still be among them (its entry is gone).
///
/// # Errors
/// SQLite errors; a damaged list is `InvalidColumnType`.
pub fn texts(conn: &Connection, term: &str, last: i64) -> rusqlite::Result<Vec<(i64, i64, i64)>> {
    let (first, list): (i64, Vec<u8>) = conn
        .prepare_cached("SELECT first, texts FROM impact_blocks WHERE term = ?1 AND last = ?2")?
        .query_row(params![term, last], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let mut out = Vec::with_capacity(BLOCK);
    let (mut at, mut rowid) = (0, first);
    while at < list.len() {
        let (Some(delta), Some(tf), Some(len)) = (
            leb(&list, &mut at),
            leb(&list, &mut at),
            leb(&list, &mut at),
        ) else {
            // A damaged list would silently lose texts from the ranking: say so instead.
            return Err(rusqlite::Error::InvalidColumnType(
                1,
                "impact_blocks.texts".into(),
                rusqlite::types::Type::Blob,
            ));
        };
        rowid += delta as i64;
        out.push((rowid, tf as i64, len as i64));
    }
    Ok(out)
}

fn push_leb(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn leb(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let c = *b.get(*at)?;
        *at += 1;
        v |= u64::from(c & 0x7f) << shift;
        if c & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// A word's blocks.
#[derive(Debug, Clone)]
pub struct Blocks {
    /// Texts past this rowid are in no block yet.
    pub through: i64,
    /// The mean text length the impacts were computed at.
    pub avgdl: f64,
    /// How many texts up to `through` hold the word, when known (none left the index since).
    pub texts: Option<i64>,
    /// The most `fts5::impact` of its texts up to `through` left out of the blocks (`None`:
    /// none was).
    pub tail: Option<f64>,
    pub list: Vec<Block>,
}

/// The blocks of `term` (as the index holds it: `fts5`'s `pidx_term`) that begin at or before
/// their end (`through`; texts of a block past it are not to be read from it); `None` when it
/// has none.
///
/// # Errors
/// SQLite errors.
pub fn of_term(conn: &Connection, term: &str) -> rusqlite::Result<Option<Blocks>> {
    let Some(Built {
        through,
        avgdl,
        counted,
        ..
    }) = built(conn)?
    else {
        return Ok(None);
    };
    let Some((texts, tail)) = conn
        .prepare_cached("SELECT texts, tail FROM impact_terms WHERE term = ?1")?
        .query_row([term], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?)))
        .optional()?
    else {
        return Ok(None);
    };
    let texts = counted.then_some(texts);
    let mut stmt = conn.prepare_cached(
        "SELECT first, last, impact, newest FROM impact_blocks WHERE term = ?1 AND first <= ?2",
    )?;
    let list = stmt
        .query_map(params![term, through], |r| {
            Ok(Block {
                first: r.get(0)?,
                last: r.get(1)?,
                impact: r.get(2)?,
                newest: r.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((!list.is_empty()).then_some(Blocks {
        through,
        avgdl,
        texts,
        tail,
        list,
    }))
}

/// How many texts up to the blocks' end hold `term`, and that end, when it has blocks and its
/// count is kept (no text left the index since it was counted).
///
/// # Errors
/// SQLite errors.
pub fn texts_of(conn: &Connection, term: &str) -> rusqlite::Result<Option<(i64, i64)>> {
    let Some(built) = built(conn)?.filter(|b| b.counted) else {
        return Ok(None);
    };
    conn.prepare_cached("SELECT texts FROM impact_terms WHERE term = ?1")?
        .query_row([term], |r| Ok((r.get(0)?, built.through)))
        .optional()
}

/// How many texts hold the blocked words (those in [`MIN_TEXTS`] texts or more) that start with
/// `prefix` (folded as the index folds words), counting a text once per such word: the bulk of
/// what FTS5 reads to expand the prefix.
///
/// # Errors
/// SQLite errors.
pub fn texts_of_prefix(conn: &Connection, prefix: &str) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT coalesce(sum(texts), 0) FROM impact_terms
         WHERE term >= ?1 AND term < ?1 || char(1114111)",
    )?
    .query_row([prefix.to_lowercase()], |r| r.get(0))
}

/// The `impacts` row, once blocks are built.
#[derive(Debug, Clone, Copy)]
struct Built {
    through: i64,
    avgdl: f64,
    counted: bool,
    scanned: i64,
}

fn built(conn: &Connection) -> rusqlite::Result<Option<Built>> {
    conn.prepare_cached("SELECT through, avgdl, counted, scanned FROM impacts")?
        .query_row([], |r| {
            Ok(Built {
                through: r.get(0)?,
                avgdl: r.get(1)?,
                counted: r.get(2)?,
                scanned: r.get(3)?,
            })
        })
        .optional()
}

/// After a file's entries left the index (in the caller's transaction): the words' counts of
/// texts may have fallen (they are counted again when the blocks are next extended), and the
/// entry rowids the index gives next start past its highest remaining one, so when that is
/// below the blocks' end, texts with rowids the blocks cover may come: the blocks stop there.
///
/// # Errors
/// SQLite errors.
pub fn after_removal(tx: &Connection) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE impacts SET counted = 0,
             through = min(through, (SELECT coalesce(max(rid), 0) * 8 + 7 FROM entries))",
    )?
    .execute([])?;
    Ok(())
}

/// Builds or extends the blocks after a sync, in one transaction. `frequent`: after a big sync
/// (words may have become frequent), the words in `min_texts` texts or more ([`MIN_TEXTS`]
/// unless a test asks for fewer), as the words table's refill found them. Otherwise the
/// vocabulary is walked here when the index grew by a quarter (at least [`EXTEND_AFTER`]
/// rowids) since the last walk, so an index that grows by small syncs blocks its new frequent
/// words too, at a cost that shrinks as it grows.
///
/// # Errors
/// SQLite errors.
pub fn update(
    conn: &Connection,
    frequent: Option<Vec<String>>,
    min_texts: i64,
) -> rusqlite::Result<()> {
    let end: i64 = conn.query_row(
        "SELECT coalesce(max(rid), 0) * 8 + 7 FROM entries",
        [],
        |r| r.get(0),
    )?;
    let was = built(conn)?;
    let grown = was.is_none_or(|w| end - w.scanned >= EXTEND_AFTER.max(w.scanned / 4));
    let extend = was.is_some_and(|w| end - w.through >= EXTEND_AFTER);
    if frequent.is_none() && !grown && !extend {
        return Ok(());
    }
    // No text yet: nothing to block, and no mean length to compute impacts at.
    let Some((rows, tokens)) = fts5::totals(conn, "fts")? else {
        return Ok(());
    };
    let mean = tokens as f64 / rows as f64;
    // Impacts are computed at one mean length and bounded for its growth since (in proportion):
    // once it moved by more than a quarter, every block is built again at the new one.
    let rebuild = was.is_some_and(|w| !(0.8..=1.25).contains(&(mean / w.avgdl)));
    let avgdl = match was {
        Some(w) if !rebuild => w.avgdl,
        _ => mean,
    };
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    if rebuild {
        tx.execute_batch("DELETE FROM impact_blocks; DELETE FROM impact_terms;")?;
    }
    // Blocks past the end (their texts left the index) go; each word goes on after its last.
    tx.execute(
        "DELETE FROM impact_blocks WHERE last > (SELECT through FROM impacts)",
        [],
    )?;
    // A word goes on after the blocks' end when it counted every text up to there; after a
    // removal (its count is taken again) after its last listed text, where a removed block's
    // texts that stayed in the index are (the texts left out before it only raised its tail).
    let going_on = was.filter(|w| w.counted && !rebuild).map(|w| w.through);
    let mut words: Vec<Word> = tx
        .prepare(
            "SELECT b.term, max(b.last), t.texts, t.cut, t.tail FROM impact_blocks b
             LEFT JOIN impact_terms t ON t.term = b.term GROUP BY b.term",
        )?
        .query_map([], |r| {
            let from = going_on.unwrap_or(r.get::<_, i64>(1)?) + 1;
            let mut w = Word::new(r.get(0)?, from);
            w.count = r.get::<_, Option<i64>>(2)?.unwrap_or(0);
            w.cut = r.get::<_, Option<f64>>(3)?.unwrap_or(0.0);
            w.tail = r.get(4)?;
            // Its cut stays: the impacts that made it are not kept.
            w.learning = false;
            Ok(w)
        })?
        .collect::<rusqlite::Result<_>>()?;
    // Words that became frequent (all of them, the first time) are blocked from their first
    // text.
    let scanned = frequent.is_some() || grown || rebuild;
    let frequent = match frequent {
        Some(terms) => terms,
        None if scanned => {
            let terms: Vec<String> = tx
                .prepare("SELECT term FROM fts_vocab WHERE doc >= ?1")?
                .query_map([min_texts], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            // An index from before the blocks, or whose texts changed their mean length:
            // whatever command synced is held up once, so say why.
            if (was.is_none() || rebuild) && !terms.is_empty() {
                crate::term::say(&format!(
                    "pidx: upgrading the index: ranking data for its {} most frequent words (once; about 5 s per GB of sessions)",
                    terms.len()
                ));
            }
            terms
        }
        None => Vec::new(),
    };
    let known: std::collections::HashSet<String> = words.iter().map(|w| w.term.clone()).collect();
    for term in frequent {
        if !known.contains(&term) {
            words.push(Word::new(term, 1));
        }
    }
    build(&tx, &mut words, avgdl, end)?;
    // A word blocked from its first text has counted them all; the others add what they
    // read to their count, unless texts left the index since: then FTS5 counts them.
    let counted = rebuild || was.is_none_or(|w| w.counted);
    let mut count = tx.prepare("SELECT count(*) FROM fts WHERE fts MATCH ?1")?;
    let mut save = tx.prepare(
        "INSERT OR REPLACE INTO impact_terms(term, texts, cut, tail) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for w in &words {
        let texts = if counted || w.started == 1 {
            w.count
        } else {
            count.query_row([&w.quoted], |r| r.get(0))?
        };
        save.execute(params![w.term, texts, w.cut, w.tail])?;
    }
    drop((count, save));
    tx.execute("DELETE FROM impacts", [])?;
    let scanned = match was {
        Some(w) if !scanned => w.scanned,
        _ => end,
    };
    tx.execute(
        "INSERT INTO impacts(through, avgdl, scanned) VALUES (?1, ?2, ?3)",
        params![end, avgdl, scanned],
    )?;
    tx.commit()
}

/// A word being blocked: where its next block starts, and that block so far.
struct Word {
    term: String,
    /// Its MATCH argument.
    quoted: String,
    from: i64,
    /// Where this update started it (1: at the first text).
    started: i64,
    /// Texts holding it through the last one read.
    count: i64,
    /// Texts of a lower impact are left out of its blocks.
    cut: f64,
    /// The most impact of a text left out.
    tail: Option<f64>,
    /// Whether the cut follows its best impacts as they are read (a word blocked from its
    /// first text).
    learning: bool,
    /// Its [`HEAD`] best impacts so far (their bits: positive floats order as their bits do),
    /// the lowest on top.
    best: BinaryHeap<Reverse<u64>>,
    open: Option<Block>,
    texts: usize,
    /// The open block's list of texts ([`texts`]).
    list: Vec<u8>,
}

impl Word {
    fn new(term: String, from: i64) -> Word {
        let quoted = fts5::phrase(&term);
        Word {
            term,
            quoted,
            from,
            started: from,
            count: 0,
            cut: 0.0,
            tail: None,
            learning: true,
            best: BinaryHeap::new(),
            open: None,
            texts: 0,
            list: Vec::new(),
        }
    }

    /// Whether a text of `impact` goes in its blocks (and, while it learns, into its best).
    fn keeps(&mut self, impact: f64) -> bool {
        if impact < self.cut {
            return false;
        }
        if self.learning {
            self.best.push(Reverse(impact.to_bits()));
            if self.best.len() > HEAD {
                self.best.pop();
            }
            if self.best.len() == HEAD {
                let Reverse(lowest) = self.best.peek().expect("full");
                self.cut = SHARE * f64::from_bits(*lowest);
            }
        }
        true
    }
}

/// Reads every text of `words` from their `from` through rowid `end`, a chunk of rowids at a
/// time (the texts' lengths and times are read for the chunk in one pass each, not looked up
/// per text), and writes their blocks.
fn build(tx: &Connection, words: &mut [Word], avgdl: f64, end: i64) -> rusqlite::Result<()> {
    let Some(start) = words.iter().map(|w| w.from).min() else {
        return Ok(());
    };
    let mut texts = tx.prepare(
        "SELECT rowid, pidx_tf(fts) FROM fts WHERE fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
    )?;
    let mut lengths = tx.prepare("SELECT id, sz FROM fts_docsize WHERE id BETWEEN ?1 AND ?2")?;
    let mut times = tx.prepare("SELECT rid, ts_ms FROM entries WHERE rid BETWEEN ?1 AND ?2")?;
    let mut insert = tx.prepare(
        "INSERT OR REPLACE INTO impact_blocks(term, last, first, impact, newest, texts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut len = vec![0u32; CHUNK as usize];
    let mut ts: Vec<Option<i64>> = vec![None; (CHUNK / 8) as usize];
    let mut lo = start - start.rem_euclid(CHUNK);
    while lo <= end {
        let hi = (lo + CHUNK - 1).min(end);
        len.fill(0);
        let mut rows = lengths.query([lo, hi])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let sz = fts5::varint(r.get_ref(1)?.as_blob()?, &mut 0).unwrap_or(0);
            len[(id - lo) as usize] = u32::try_from(sz).unwrap_or(u32::MAX);
        }
        ts.fill(None);
        let mut rows = times.query([lo / 8, hi / 8])?;
        while let Some(r) = rows.next()? {
            ts[(r.get::<_, i64>(0)? - lo / 8) as usize] = r.get(1)?;
        }
        for w in words.iter_mut().filter(|w| w.from <= hi) {
            let mut rows = texts.query(params![w.quoted, w.from.max(lo), hi])?;
            while let Some(r) = rows.next()? {
                let rowid: i64 = r.get(0)?;
                let tf: i64 = r.get(1)?;
                let at = (rowid - lo) as usize;
                let text_impact = impact(tf, i64::from(len[at]), avgdl);
                w.count += 1;
                if !w.keeps(text_impact) {
                    w.tail = Some(w.tail.map_or(text_impact, |t| t.max(text_impact)));
                    continue;
                }
                let time = ts[at / 8];
                let b = w.open.get_or_insert(Block {
                    first: rowid,
                    last: rowid,
                    impact: 0.0,
                    newest: None,
                });
                push_leb(&mut w.list, (rowid - b.last) as u64);
                push_leb(&mut w.list, tf as u64);
                push_leb(&mut w.list, u64::from(len[at]));
                b.last = rowid;
                b.impact = b.impact.max(text_impact);
                b.newest = b.newest.max(time);
                w.texts += 1;
                if w.texts == BLOCK {
                    let b = w.open.take().expect("a block is open");
                    insert.execute(params![w.term, b.last, b.first, b.impact, b.newest, w.list])?;
                    w.list.clear();
                    w.texts = 0;
                }
            }
        }
        lo += CHUNK;
    }
    for w in words.iter_mut() {
        if let Some(b) = w.open.take() {
            insert.execute(params![w.term, b.last, b.first, b.impact, b.newest, w.list])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_list_of_texts_is_an_error_not_fewer_texts() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(include_str!("../../../../migrations/0027_impacts.sql"))
            .unwrap();
        let mut list = Vec::new();
        for (delta, tf, len) in [(0u64, 1u64, 300u64), (9, 2, 7), (70_000, 1, 1)] {
            push_leb(&mut list, delta);
            push_leb(&mut list, tf);
            push_leb(&mut list, len);
        }
        let insert = |last: i64, list: &[u8]| {
            conn.execute(
                "INSERT INTO impact_blocks(term, last, first, impact, newest, texts)
                 VALUES ('w', ?1, 100, 1.0, NULL, ?2)",
                params![last, list],
            )
            .unwrap();
        };
        insert(70_109, &list);
        assert_eq!(
            texts(&conn, "w", 70_109).unwrap(),
            [(100, 1, 300), (109, 2, 7), (70_109, 1, 1)]
        );
        insert(1, &list[..list.len() - 1]);
        assert!(texts(&conn, "w", 1).is_err());
    }
}
