//! The top of a search of one word, or of several words and phrases ANDed, from the words'
//! postings (`word_postings`, pg 0020): every text holding a word, with its count of it, its
//! length and its entry's time, about nine bytes a text (`pg::postings`), and its token numbers
//! of the word (pg 0021); for several words, the texts of the word with the fewest that every
//! other word's postings hold too, with each word's count, and each phrase's count of places
//! it starts from its words' token numbers (FTS5's instances). A phrase's count of texts (its
//! idf) is counted from the same postings, of transcripts the server still holds.
//! Each is scored exactly (the arithmetic of scoring it from its body), the best
//! [`MOST_LOOKED_UP`] kept and sorted, and looked up with their entries and sessions under the
//! search's filters into the hits the local rules show (`ranked::walk`: `--branch`, copies,
//! `--limit`); a posting whose text is gone (its transcript rewritten or removed) is not found
//! there and drops out. No heap page of `entry_text` is read per match, which is what a common
//! word's search cost before (`bounded.rs`).
//!
//! Taken when every source the search reads has its postings (`sources.postings`), the reader
//! reads every row (a limited one reads no postings), and the query is words and phrases
//! ANDed (no prefix, `OR` or `NOT`); given up (for `heads.rs`, `bounded.rs` and
//! `several.rs`) when more texts hold the words than are kept and the filters leave too few
//! of the kept ones to fill the hits: those ways filter on the server.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

use postgres::Transaction;
use smallvec::SmallVec;

use super::matching::{live, posted};
use super::ranked::{best_first, sort, walk, Facts, Keyed, Phrase, Prepared, Ranked};
use super::search::On;
use super::unlisted::{Mode, ROOM};
use crate::pg::postings::{
    blocks, bounds, decode, decode_block, decode_positioned, undecoded, Block, Bound, Posting,
};
use crate::pg::typed;
use pidx_core::error::Result;
use pidx_core::query::search::{blend, most, Hit, SearchOptions};

/// A text among every source's: its source (an index into the rows' sources), file, entry, kind.
pub(super) type Key = (u32, i64, i64, i16);

/// Texts by key, hashed by foldhash: SipHash was a tenth of a phrase's CPU (`perf record` of
/// `"the borrow"` at 100,000 sessions), a map a posting of the phrase's commonest word.
type Texts = HashMap<Key, Text, foldhash::fast::RandomState>;

/// Texts looked up at most before a selective filter hands the search to the ways that
/// filter on the server.
pub(super) const MOST_LOOKED_UP: usize = 20_000;

/// Texts a search of one word keeps first (pg 0024's bounds): enough to fill the hits unless
/// the filters or the copies of the texts rule most out, when the search keeps
/// [`MOST_LOOKED_UP`] instead. The fewer kept, the higher the floor they set and the fewer the
/// blocks whose bound reaches it: of `function`'s 4,316 blocks at 300,000 generated sessions
/// (files numbered by time), the best 200 texts could be in 171 by the blocks' bounds, the
/// best 1,000 in 638, the best 20,000 in nearly all (docs/performance.md).
const FEW_LOOKED_UP: usize = 200;

/// Blocks a search of one word reads first, best bound first (a round trip costs more than a
/// few kilobytes more); each further round reads up to twice as many, of those that can still
/// beat the best kept.
const FIRST_BLOCKS: usize = 32;

/// Whether the postings may answer a search of these phrases (before the server is asked):
/// words ANDed, each phrase a word or (pg 0021's positions) several, none a prefix, and hits
/// asked for.
pub(super) fn may_answer(q: &SearchOptions, phrases: &[Phrase], and_only: bool) -> bool {
    let fits = |ph: &Phrase| {
        !ph.prefix && (ph.words.len() == 1 || (ph.words.len() > 1 && crate::pg::words_positioned()))
    };
    Mode::now().postings()
        && crate::pg::words_posted()
        && and_only
        && q.limit != 0
        && !phrases.is_empty()
        && phrases.iter().all(fits)
}

/// The hits of a search of words ANDed, or phrases, from their postings, or `None` when this
/// way does not apply (see the module). The counts of texts of the phrases of several words
/// that `p` was prepared without are found here (`Prepared::counted`).
///
/// # Errors
/// Server errors; a stored row that does not decode.
pub(super) fn top(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    p: &mut Prepared,
) -> Result<Option<Vec<Hit>>> {
    let mode = Mode::now();
    if !mode.postings() {
        return Ok(None);
    }
    if !may_answer(q, &p.phrases, p.and_only) || p.phrases.len() != p.facts.each.len() {
        return mode.not_posted();
    }
    if !posted(tx, on.source)? {
        return mode.not_posted();
    }
    let (words, slots) = slots_of(p.phrases.iter().map(|ph| &ph.words[..]));
    // One word's rows are read whole with this query; several words' rows are only listed
    // here, with their lengths and (pg 0023) their blocks' entries, and read word by word as
    // `Read::holding` needs them: the commonest words' only in the blocks that may hold the
    // texts the rarer ones left.
    let one = words.len() == 1 && !p.phrases.iter().any(|ph| ph.words.len() > 1);
    // One word's rows (pg 0024) are listed with their blocks' bounds and read best bound first.
    let bounded = one && crate::pg::postings_bounded();
    let rows = listing(tx, &words, on.source, one, bounded)?;
    let Some(read) = Read::listed(&rows, &words, &slots) else {
        return mode.not_posted();
    };
    let now_ms = p.now_ms;
    // bm25, then blended by recency (the arithmetic of scoring a text from its body).
    let bm25 = |tfs: &[i64], posting: &Posting, facts: &Facts| {
        -facts.sum.score(tfs, i64::from(posting.ntok))
    };
    let blended = |bm25: f64, posting: &Posting| bm25 * blend(posting.ts_ms, now_ms);
    let mut best = Best::new(MOST_LOOKED_UP);
    if bounded {
        // The fewest best texts that fill the hits when nothing rules many out (the walk says),
        // else as many as any other search keeps: the fewer kept, the higher the best's floor
        // and the fewer blocks that can beat it.
        let mut tfs = vec![0; slots.len()];
        let score = |posting: &Posting, tfs: &mut Vec<i64>| {
            tfs.fill(i64::from(posting.tf));
            bm25(tfs, posting, &p.facts)
        };
        // The most a block's posting can score: its best corner's score at the corner's weight.
        let most_of = |b: &Bound| {
            let mut tfs = vec![0; slots.len()];
            (b.corners.iter())
                .map(|c| {
                    let at_most = Posting {
                        tf: c.tf,
                        ntok: c.ntok,
                        ..Posting::default()
                    };
                    let mut weight = c.ts_ms.map_or(0.0, |t| blend(Some(t), now_ms));
                    if c.untimed {
                        weight = weight.max(blend(None, now_ms));
                    }
                    most(score(&at_most, &mut tfs), weight)
                })
                .fold(f64::NEG_INFINITY, f64::max)
        };
        for k in [FEW_LOOKED_UP, MOST_LOOKED_UP] {
            let mut best = Best::new(k);
            read.best_blocks(tx, &mut best, &most_of, |best, at, posting| {
                if passes(q, &posting) {
                    let bm25 = score(&posting, &mut tfs);
                    if !best.beneath(bm25) {
                        best.push(blended(bm25, &posting), key(at, &posting));
                    }
                }
            })?;
            let (best, all) = best.finish();
            let mut keyed = keyed_of(best, &read.sources);
            sort(&mut keyed);
            match walk(tx, on, q, terms, &keyed)? {
                (hits, full) if full || all => return Ok(Some(hits)),
                _ => continue,
            }
        }
        return mode.not_posted();
    }
    if one {
        // One word (a query may repeat it): each posting scored as it is read, every count the
        // posting's (a common word's millions are never held).
        let mut tfs = vec![0; slots.len()];
        for &Stored { at, data, .. } in &read.rows {
            let whole = decode(data.unwrap_or_default(), |posting| {
                if passes(q, &posting) {
                    tfs.fill(i64::from(posting.tf));
                    let bm25 = bm25(&tfs, &posting, &p.facts);
                    if !best.beneath(bm25) {
                        best.push(blended(bm25, &posting), key(at, &posting));
                    }
                }
            });
            if !whole {
                return Err(undecoded(&read.sources[at as usize]));
            }
        }
    } else {
        let counts_of = |t: &Text| -> Vec<i64> {
            slots
                .iter()
                .map(|s| match s.as_slice() {
                    [(w, _)] => i64::from(t.tfs[*w]),
                    more => instances(more, &t.positions),
                })
                .collect()
        };
        let all: Vec<usize> = (0..words.len()).collect();
        let texts = if p.counted {
            read.holding(tx, &all, None)?
        } else {
            // Each phrase's count of texts: those holding the phrase, whatever else they hold,
            // of transcripts still on the server (a posting of a text gone names a file no
            // session has). The fewest of them then seed the texts holding every word, so that
            // no word's postings are read twice.
            let mut hits: Vec<i64> = Vec::with_capacity(slots.len());
            let mut seed: Option<(Vec<usize>, Texts)> = None;
            for (i, s) in slots.iter().enumerate() {
                // A phrase of several words has its count of texts counted here.
                if p.phrases[i].words.len() <= 1 {
                    hits.push(p.hits[i]);
                    continue;
                }
                if let Some(before) = slots[..i].iter().position(|b| b == s) {
                    hits.push(hits[before]);
                    continue;
                }
                let of: Vec<usize> = s.iter().map(|u| u.0).collect();
                let mut held = read.holding(tx, &of, None)?;
                if s.len() > 1 {
                    held.retain(|_, t| instances(s, &t.positions) > 0);
                }
                let keys: Vec<Key> = held.keys().copied().collect();
                hits.push(live(tx, &read.sources, &keys)?);
                if seed
                    .as_ref()
                    .is_none_or(|(_, fewest)| held.len() < fewest.len())
                {
                    seed = Some((of, held));
                }
            }
            p.counted(&hits);
            match seed {
                Some((done, held)) => {
                    let rest: Vec<usize> =
                        all.iter().copied().filter(|w| !done.contains(w)).collect();
                    read.holding(tx, &rest, Some(held))?
                }
                None => read.holding(tx, &all, None)?,
            }
        };
        for (k, t) in &texts {
            if !passes(q, &t.posting) {
                continue;
            }
            let tfs = counts_of(t);
            if tfs.iter().all(|&tf| tf > 0) {
                let bm25 = bm25(&tfs, &t.posting, &p.facts);
                if !best.beneath(bm25) {
                    best.push(blended(bm25, &t.posting), *k);
                }
            }
        }
    }
    // Every text holding the words is looked up when there are few enough, else the best.
    let (best, all) = best.finish();
    let mut keyed = keyed_of(best, &read.sources);
    sort(&mut keyed);
    match walk(tx, on, q, terms, &keyed)? {
        (hits, full) if full || all => Ok(Some(hits)),
        _ => mode.not_posted(),
    }
}

/// The rows of `words` as [`Read::listed`] takes them: one word's whole (`one`), or with its
/// blocks' bounds (`bounded`); several words' only listed, with their blocks' entries.
///
/// # Errors
/// Server errors.
fn listing(
    tx: &mut Transaction,
    words: &[String],
    source: Option<&str>,
    one: bool,
    bounded: bool,
) -> Result<Vec<postgres::Row>> {
    let data = if one && !bounded {
        "data"
    } else {
        "NULL::bytea"
    };
    let skips = if crate::pg::postings_blocked() && (!one || bounded) {
        "skips"
    } else {
        "NULL::bytea"
    };
    let bounds = if bounded { "bounds" } else { "NULL::bytea" };
    // A server held at pg 0020 has no positions.
    let pos_len = if crate::pg::words_positioned() {
        "octet_length(pos)"
    } else {
        "NULL::int4"
    };
    typed::query(
        tx,
        &format!(
            "SELECT source, term, n, {data}, tableoid, ctid::text, {skips},
                    octet_length(data), {pos_len}, {bounds}
             FROM word_postings
             WHERE term = ANY($1) AND ($2::text IS NULL OR source = $2)"
        ),
        &[&words, &source],
    )
}

/// Each phrase's terms (its words, or pg 0025's grams where it holds a common word), each
/// term once and sorted, and each phrase's slots: its terms' indexes with their places in it.
fn slots_of<'w>(
    phrases: impl Iterator<Item = &'w [String]>,
) -> (Vec<String>, Vec<Vec<(usize, u32)>>) {
    let grams = crate::pg::grams_posted();
    let units: Vec<Vec<(String, u32)>> = phrases.map(|words| units(words, grams)).collect();
    let mut words: Vec<String> = units.iter().flatten().map(|u| u.0.clone()).collect();
    words.sort();
    words.dedup();
    let slots = (units.iter())
        .map(|u| {
            (u.iter())
                .map(|(w, at)| (words.binary_search(w).unwrap_or(0), *at))
                .collect()
        })
        .collect();
    (words, slots)
}

/// A phrase's texts by key, each with the phrase's count in it and its posting.
pub(super) type Counted = Vec<(Key, i64, Posting)>;

/// The texts holding each of `phrases` (plain words, one or several each), with the phrase's
/// count in each (its places, for several words: FTS5's instances) and the text's posting,
/// sorted by key; and the sources the keys name. `None` when a row of a phrase of several
/// words has no positions (a server not migrated by this pidx's push yet). What
/// `reads::expression` matches an `OR` or a `NOT` of phrases on.
///
/// # Errors
/// Server errors; a stored row that does not decode.
pub(super) fn each_phrase(
    tx: &mut Transaction,
    source: Option<&str>,
    phrases: &[Vec<String>],
) -> Result<Option<(Vec<String>, Vec<Counted>)>> {
    let (words, slots) = slots_of(phrases.iter().map(|p| &p[..]));
    let rows = listing(tx, &words, source, false, false)?;
    let Some(read) = Read::listed(&rows, &words, &slots) else {
        return Ok(None);
    };
    let mut each: Vec<Counted> = Vec::with_capacity(slots.len());
    for (i, s) in slots.iter().enumerate() {
        if let Some(before) = slots[..i].iter().position(|b| b == s) {
            let same = each[before].clone();
            each.push(same);
            continue;
        }
        let of: Vec<usize> = s.iter().map(|u| u.0).collect();
        let mut texts: Vec<(Key, i64, Posting)> = (read.holding(tx, &of, None)?.into_iter())
            .filter_map(|(k, t)| {
                let n = match s.as_slice() {
                    [(w, _)] => i64::from(t.tfs[*w]),
                    more => instances(more, &t.positions),
                };
                (n > 0).then_some((k, n, t.posting))
            })
            .collect();
        texts.sort_unstable_by_key(|t| t.0);
        each.push(texts);
    }
    Ok(Some((read.sources, each)))
}

/// The best texts as the walk looks them up.
pub(super) fn keyed_of(best: Vec<(f64, Key)>, sources: &[String]) -> Vec<Keyed> {
    best.into_iter()
        .map(|(relevance, (at, fid, seq, kind))| Keyed {
            relevance,
            source: sources[at as usize].clone(),
            fid,
            seq,
            kind,
        })
        .collect()
}

/// A row listed: its word, its source (in `Read::sources`), its postings when read with the
/// list (one word), where it is on the server, its blocks' entries (pg 0023) and its lengths.
struct Stored<'a> {
    word: usize,
    at: u32,
    data: Option<&'a [u8]>,
    table: u32,
    tid: &'a str,
    skips: Option<&'a [u8]>,
    data_len: usize,
    pos_len: Option<usize>,
    bounds: Option<&'a [u8]>,
}

/// The rows listed, the sources, each word's count of postings, and whether its positions are
/// read (a word of a phrase of several words).
struct Read<'a> {
    rows: Vec<Stored<'a>>,
    sources: Vec<String>,
    counts: Vec<i64>,
    placed: Vec<bool>,
}

/// A text holding some words: its posting (of the first word read), its count of each word and
/// its positions of each (empty unless asked for). Inline up to four words of four positions:
/// a phrase's first word makes one of these for each text holding it (114,911 for `parse` at
/// 300,000 sessions), and three allocations each were a third of the phrase's CPU.
struct Text {
    posting: Posting,
    tfs: SmallVec<[u32; 4]>,
    positions: SmallVec<[Positions; 4]>,
}

/// A text's token numbers of one word: most texts hold a word a few times.
type Positions = SmallVec<[u32; 4]>;

/// Part of a row to read: its bytes of postings and of positions, and the blocks in them to
/// decode (their ranges from the part's start), or `None` for a whole row decoded whole.
struct Part {
    row: usize,
    data: Range<usize>,
    pos: Range<usize>,
    blocks: Option<Vec<Block>>,
}

/// A source's files the texts so far are of, as bits from the least: most postings of a
/// common word are of files no such text is of, ruled out here before a look-up of their key
/// (`contains_key` was a sixth of `"the borrow"`'s CPU at 300,000 sessions, `perf record`).
struct FileSet {
    lo: i64,
    /// `None`: every file passes.
    bits: Option<Vec<u64>>,
}

impl FileSet {
    /// Files further apart than this (ids come from one sequence: a server of a billion
    /// transcripts, or a row that is not what pidx wrote) are not held as bits: every file
    /// passes, and the look-up of the key decides.
    const SPAN: i64 = 1 << 30;

    /// The set of `files` (ascending).
    fn of(files: &[i64]) -> FileSet {
        let (Some(&lo), Some(&hi)) = (files.first(), files.last()) else {
            return FileSet {
                lo: 0,
                bits: Some(Vec::new()),
            };
        };
        let Some(span) = hi.checked_sub(lo).filter(|&s| s < Self::SPAN) else {
            return FileSet { lo, bits: None };
        };
        let mut bits = vec![0u64; (span / 64 + 1) as usize];
        for &f in files {
            let at = (f - lo) as usize;
            bits[at / 64] |= 1 << (at % 64);
        }
        FileSet {
            lo,
            bits: Some(bits),
        }
    }

    fn holds(&self, fid: i64) -> bool {
        let Some(bits) = &self.bits else {
            return true;
        };
        let Ok(at) = usize::try_from(fid.wrapping_sub(self.lo)) else {
            return false;
        };
        bits.get(at / 64).is_some_and(|w| w & (1 << (at % 64)) != 0)
    }
}

/// A part's bytes of postings and, when read, of positions.
type PartBytes = (Vec<u8>, Option<Vec<u8>>);

/// Kept blocks closer than this many bytes of postings are read as one part: a part costs the
/// server a look-up of the row's first chunk (about 2 kB) of each column.
const GAP: usize = 4096;

impl<'a> Read<'a> {
    /// The rows of `words` ([`listing`]), the positions of the words of `slots`
    /// of several terms to be read; `None` when one of those rows has none (a row of before pg
    /// 0021, on a server not migrated by this pidx's push yet).
    fn listed(
        rows: &'a [postgres::Row],
        words: &[String],
        slots: &[Vec<(usize, u32)>],
    ) -> Option<Read<'a>> {
        let positioned = slots.iter().any(|s| s.len() > 1);
        let mut placed = vec![false; words.len()];
        for s in slots.iter().filter(|s| s.len() > 1) {
            for &(w, _) in s {
                placed[w] = true;
            }
        }
        let mut read = Read {
            rows: Vec::with_capacity(rows.len()),
            sources: Vec::new(),
            counts: vec![0; words.len()],
            placed,
        };
        for r in rows {
            let (source, term, n): (String, String, i32) = (r.get(0), r.get(1), r.get(2));
            let Ok(w) = words.binary_search(&term) else {
                continue;
            };
            let (data_len, pos_len): (i32, Option<i32>) = (r.get(7), r.get(8));
            if positioned && pos_len.is_none() {
                return None;
            }
            let at = match read.sources.iter().position(|s| *s == source) {
                Some(at) => at,
                None => {
                    read.sources.push(source);
                    read.sources.len() - 1
                }
            } as u32;
            read.counts[w] += i64::from(n);
            read.rows.push(Stored {
                word: w,
                at,
                data: r.get(3),
                table: r.get(4),
                tid: r.get(5),
                skips: r.get(6),
                data_len: usize::try_from(data_len).unwrap_or(0),
                pos_len: pos_len.and_then(|n| usize::try_from(n).ok()),
                bounds: r.get(9),
            });
        }
        Some(read)
    }

    /// The texts holding every word of `of` (indexes of the words), with their counts and
    /// their positions of the words whose positions are read: the texts of the word with the
    /// fewest postings, then each other word's postings of those texts; or, given `seed` (texts
    /// holding other words already), each word's postings of the seed's texts. Of a word read
    /// after another, only the blocks (pg 0023) whose files a text so far is of are read and
    /// decoded, and a posting of a text already ruled out is stepped over, its positions not
    /// read.
    fn holding(&self, tx: &mut Transaction, of: &[usize], seed: Option<Texts>) -> Result<Texts> {
        let n = self.counts.len();
        let mut order = of.to_vec();
        order.sort_by_key(|&w| self.counts[w]);
        order.dedup();
        let seeded = seed.is_some();
        let texts = RefCell::new(seed.unwrap_or_default());
        for (i, &w) in order.iter().enumerate() {
            let first = i == 0 && !seeded;
            if first {
                // Every posting of the first word makes a text: grown in place, the table was
                // copied a dozen times for a word of a hundred thousand texts.
                texts
                    .borrow_mut()
                    .reserve(usize::try_from(self.counts[w]).unwrap_or(0));
            }
            // The files of each source the texts so far hold, for the blocks to step over.
            let mut files: Vec<Vec<i64>> = vec![Vec::new(); self.sources.len()];
            if !first {
                for k in texts.borrow().keys() {
                    files[k.0 as usize].push(k.1);
                }
                for f in &mut files {
                    f.sort_unstable();
                    f.dedup();
                }
            }
            let sets: Vec<FileSet> = files.iter().map(|f| FileSet::of(f)).collect();
            let parts = self.parts(w, (!first).then_some(&files))?;
            let placed = self.placed[w];
            for (part, (data, pos)) in parts.iter().zip(self.fetch(tx, &parts, placed)?) {
                let at = self.rows[part.row].at;
                let set = &sets[at as usize];
                let mut want = |posting: &Posting| {
                    first
                        || (set.holds(posting.fid)
                            && texts.borrow().contains_key(&key(at, posting)))
                };
                let mut each = |posting: Posting, at_pos: &[u32]| {
                    let mut texts = texts.borrow_mut();
                    let t = texts.entry(key(at, &posting)).or_insert_with(|| Text {
                        posting,
                        tfs: smallvec::smallvec![0; n],
                        positions: smallvec::smallvec![Positions::new(); n],
                    });
                    t.tfs[w] = posting.tf;
                    if placed {
                        t.positions[w] = Positions::from_slice(at_pos);
                    }
                };
                let pos = pos.as_deref();
                let whole = match (&part.blocks, pos) {
                    (Some(blocks), pos) => blocks.iter().all(|b| {
                        let data = data.get(b.data.clone());
                        match (data, pos.map(|p| p.get(b.pos.clone()))) {
                            (Some(d), None) => decode_block(d, None, b, &mut want, &mut each),
                            (Some(d), Some(Some(p))) => {
                                decode_block(d, Some(p), b, &mut want, &mut each)
                            }
                            // A part shorter than its blocks: the server gave back other bytes.
                            _ => false,
                        }
                    }),
                    (None, Some(pos)) => decode_positioned(&data, pos, want, each),
                    (None, None) => decode(&data, |posting| {
                        if want(&posting) {
                            each(posting, &[]);
                        }
                    }),
                };
                if !whole {
                    return Err(undecoded(&self.sources[at as usize]));
                }
            }
        }
        let mut texts = texts.into_inner();
        texts.retain(|_, t| order.iter().all(|&w| t.tfs[w] > 0));
        Ok(texts)
    }

    /// What to read of word `w`'s rows: each whole, or (`files`: of each source, the files the
    /// texts so far are of, ascending) only the blocks whose range holds one of them, blocks
    /// near each other read as one part. A row without blocks' entries (written before pg 0023
    /// and not yet put in blocks by a push) is read whole.
    fn parts(&self, w: usize, files: Option<&Vec<Vec<i64>>>) -> Result<Vec<Part>> {
        let placed = self.placed[w];
        let mut parts = Vec::new();
        for (row, stored) in self.rows.iter().enumerate().filter(|(_, r)| r.word == w) {
            let (Some(files), Some(skips)) = (files, stored.skips) else {
                parts.push(self.whole(row, placed));
                continue;
            };
            let Some(blocks) = blocks(skips, stored.data_len, stored.pos_len) else {
                return Err(undecoded(&self.sources[stored.at as usize]));
            };
            let files = &files[stored.at as usize];
            let keep = |b: &Block| {
                let from = files.partition_point(|&f| f < b.lo);
                files.get(from).is_some_and(|&f| f <= b.hi)
            };
            self.cut(
                row,
                blocks.into_iter().filter(keep).collect(),
                placed,
                &mut parts,
            );
        }
        Ok(parts)
    }

    /// Feeds `best` (through `each`) the postings of every row's blocks that may hold one of
    /// the best: blocks in order of their bound (`most_of`), read in rounds of
    /// [`FIRST_BLOCKS`], then twice as many each round, until the best kept's floor is above
    /// every block left (those are never read; `best` is then cut, not every text). A row
    /// without bounds (written before pg 0024, not yet rewritten by a push) is read whole
    /// first.
    fn best_blocks(
        &self,
        tx: &mut Transaction,
        best: &mut Best,
        most_of: &impl Fn(&Bound) -> f64,
        mut each: impl FnMut(&mut Best, u32, Posting),
    ) -> Result<()> {
        let mut whole = Vec::new();
        // Each block of the rows with bounds: its bound's score, its row, the block, the bound.
        let mut ranked: Vec<(f64, usize, Block, Bound)> = Vec::new();
        for (row, stored) in self.rows.iter().enumerate() {
            let bad = || undecoded(&self.sources[stored.at as usize]);
            let (Some(skips), Some(stored_bounds)) = (stored.skips, stored.bounds) else {
                whole.push(self.whole(row, false));
                continue;
            };
            let blocks = blocks(skips, stored.data_len, None).ok_or_else(bad)?;
            let bounds = bounds(stored_bounds, blocks.len()).ok_or_else(bad)?;
            for (block, bound) in blocks.into_iter().zip(bounds) {
                ranked.push((most_of(&bound), row, block, bound));
            }
        }
        for (part, (data, _)) in whole.iter().zip(self.fetch(tx, &whole, false)?) {
            let at = self.rows[part.row].at;
            if !decode(&data, |posting| each(best, at, posting)) {
                return Err(undecoded(&self.sources[at as usize]));
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (mut next, mut round) = (0, FIRST_BLOCKS);
        loop {
            let floor = best.floor();
            let mut end = next;
            while end < ranked.len().min(next + round) && beats(ranked[end].0, floor) {
                end += 1;
            }
            if end == next {
                break;
            }
            let mut chosen: Vec<&(f64, usize, Block, Bound)> = ranked[next..end].iter().collect();
            chosen.sort_by_key(|c| (c.1, c.2.data.start));
            let mut parts = Vec::new();
            for of_row in chosen.chunk_by(|a, b| a.1 == b.1) {
                let kept = of_row.iter().map(|c| c.2.clone()).collect();
                self.cut(of_row[0].1, kept, false, &mut parts);
            }
            // The parts' blocks come in `chosen`'s order: each with its bound.
            let mut bound_of = chosen.iter().map(|c| &c.3);
            for (part, (data, _)) in parts.iter().zip(self.fetch(tx, &parts, false)?) {
                let at = self.rows[part.row].at;
                for b in part.blocks.iter().flatten() {
                    let Some(bound) = bound_of.next() else {
                        return Err(undecoded(&self.sources[at as usize]));
                    };
                    let mut within = true;
                    let whole = data.get(b.data.clone()).is_some_and(|d| {
                        decode_block(d, None, b, &mut |_| true, &mut |posting, _| {
                            within &= bound.holds(&posting);
                            each(best, at, posting);
                        })
                    });
                    if !whole || !within {
                        return Err(undecoded(&self.sources[at as usize]));
                    }
                }
            }
            (next, round) = (end, round * 2);
        }
        if next < ranked.len() {
            best.cut = true;
        }
        Ok(())
    }

    /// Row `row` read whole, decoded whole.
    fn whole(&self, row: usize, placed: bool) -> Part {
        let stored = &self.rows[row];
        Part {
            row,
            data: 0..stored.data_len,
            pos: 0..stored.pos_len.filter(|_| placed).unwrap_or(0),
            blocks: None,
        }
    }

    /// Adds to `parts` what reads `kept`, blocks of row `row` in the row's order: blocks near
    /// each other one part, a row mostly kept one part (a part costs the server a look-up of
    /// its chunks); each part's blocks as ranges from the part's own start, and its positions
    /// only when `placed`.
    fn cut(&self, row: usize, kept: Vec<Block>, placed: bool, parts: &mut Vec<Part>) {
        let from = parts.len();
        let stored = &self.rows[row];
        if kept.iter().map(|b| b.data.len()).sum::<usize>() * 2 > stored.data_len {
            // Its kept blocks still the only ones decoded.
            parts.push(Part {
                blocks: Some(kept),
                ..self.whole(row, true)
            });
        } else {
            let mut open: Option<Part> = None;
            for b in kept {
                if let Some(part) = open.as_mut().filter(|p| b.data.start - p.data.end < GAP) {
                    part.data.end = b.data.end;
                    part.pos.end = b.pos.end;
                    part.blocks.get_or_insert_with(Vec::new).push(b);
                    continue;
                }
                parts.extend(open.take());
                open = Some(Part {
                    row,
                    data: b.data.clone(),
                    pos: b.pos.clone(),
                    blocks: Some(vec![b]),
                });
            }
            parts.extend(open);
        }
        for part in &mut parts[from..] {
            if let Some(blocks) = part.blocks.as_mut() {
                for b in blocks {
                    b.data = b.data.start - part.data.start..b.data.end - part.data.start;
                    b.pos = b.pos.start - part.pos.start..b.pos.end - part.pos.start;
                }
            }
            if !placed {
                part.pos = 0..0;
            }
        }
    }

    /// Each part's bytes, read in one statement (`substring` of a column stored uncompressed
    /// reads only the chunks it spans); the positions only when `placed`.
    fn fetch(&self, tx: &mut Transaction, parts: &[Part], placed: bool) -> Result<Vec<PartBytes>> {
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        let int = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        // The rows once each, with their parts' first index and count (a row's parts are
        // consecutive, `parts`), so that the server joins a few hundred rows with their tuples
        // and takes each part's range from the arrays by index: the plan stays linear in the
        // parts however many they are (a join of the parts themselves with the tuples was
        // planned as a nested loop over both).
        let (mut tables, mut tids, mut first, mut count) = (vec![], vec![], vec![], vec![]);
        let (mut d0, mut dl, mut p0, mut pl) = (vec![], vec![], vec![], vec![]);
        for (i, part) in parts.iter().enumerate() {
            if i == 0 || parts[i - 1].row != part.row {
                let stored = &self.rows[part.row];
                tables.push(stored.table);
                tids.push(stored.tid);
                first.push(int(i + 1));
                count.push(0);
            }
            if let Some(n) = count.last_mut() {
                *n += 1;
            }
            d0.push(int(part.data.start + 1));
            dl.push(int(part.data.len()));
            p0.push(int(part.pos.start + 1));
            pl.push(int(part.pos.len()));
        }
        let pos = if placed {
            "substring(w.pos FROM ($7::int4[])[x.first + g.j] FOR ($8::int4[])[x.first + g.j])"
        } else {
            "NULL::bytea"
        };
        let params: [&dyn typed::Param; 8] = [&tables, &tids, &first, &count, &d0, &dl, &p0, &pl];
        let rows = typed::query(
                tx,
                &format!(
                    "SELECT x.first + g.j, substring(w.data FROM ($5::int4[])[x.first + g.j] FOR ($6::int4[])[x.first + g.j]),
                            {pos}
                     FROM unnest($1::oid[], $2::text[], $3::int4[], $4::int4[])
                              AS x(tab, tid, first, n)
                     JOIN word_postings w ON w.tableoid = x.tab AND w.ctid = x.tid::tid
                     CROSS JOIN LATERAL generate_series(0, x.n - 1) AS g(j)
                     WHERE w.ctid = ANY($2::text[]::tid[])"
                ),
                // The positions' ranges only when the statement reads them.
                &params[..if placed { 8 } else { 6 }],
            )?;
        let mut out: Vec<Option<PartBytes>> = vec![None; parts.len()];
        for r in rows {
            let i: i32 = r.get(0);
            if let Some(slot) = usize::try_from(i - 1).ok().and_then(|i| out.get_mut(i)) {
                *slot = Some((r.get(1), r.get(2)));
            }
        }
        (out.into_iter().enumerate())
            .map(|(i, part)| {
                part.ok_or_else(|| undecoded(&self.sources[self.rows[parts[i].row].at as usize]))
            })
            .collect()
    }
}

/// A phrase's terms to read, each with its place in the phrase: each word, or with `grams`
/// (pg 0025) each pair of words one right after the other that the server holds as a term
/// (`the borrow`: either is common), so that no common word is read alone; together they
/// cover every word. `"fix the borrow"` is `fix the` at 0 and `the borrow` at 1 (a pair is
/// never in more texts than either of its words). A phrase of one word is that word.
fn units(words: &[String], grams: bool) -> Vec<(String, u32)> {
    let n = words.len();
    let gram = |k: usize| {
        (grams && k + 1 < n)
            .then(|| crate::pg::words::gram(&words[k], &words[k + 1]))
            .flatten()
    };
    let (mut out, mut k) = (Vec::new(), 0);
    while k < n {
        let at = u32::try_from(k).unwrap_or(u32::MAX);
        if let Some(g) = gram(k) {
            out.push((g, at));
            k += 2;
        } else if let Some(g) = k.checked_sub(1).and_then(gram) {
            out.push((g, at - 1));
            k += 1;
        } else {
            out.push((words[k].clone(), at));
            k += 1;
        }
    }
    out
}

/// How many times a phrase starts in a text, given its terms (indexes of words or grams, each
/// with its place in the phrase) and the text's positions of each term (FTS5's instances,
/// overlapping ones too: `ranked::Phrase::count`). Each place is found from the phrase's term
/// with the fewest positions there (`borrow`, not `the`, for `"the borrow"`), the others
/// looked up.
fn instances<P: AsRef<[u32]>>(phrase: &[(usize, u32)], positions: &[P]) -> i64 {
    let of = |w: usize| positions[w].as_ref();
    let Some(&(w, anchor)) = phrase.iter().min_by_key(|(w, _)| of(*w).len()) else {
        return 0;
    };
    of(w)
        .iter()
        .filter(|&&at| {
            let Some(start) = at.checked_sub(anchor) else {
                return false;
            };
            phrase.iter().all(|&(other, k)| {
                (other == w && k == anchor)
                    || (start.checked_add(k))
                        .is_some_and(|next| of(other).binary_search(&next).is_ok())
            })
        })
        .count() as i64
}

/// Whether a block of this bound may hold a text that reaches `floor` (with room for the
/// rounding of the bound's arithmetic, done in another order than a text's).
fn beats(bound: f64, floor: Option<f64>) -> bool {
    floor.is_none_or(|floor| bound * ROOM >= floor)
}

fn key(at: u32, posting: &Posting) -> Key {
    (at, posting.fid, posting.seq, posting.kind)
}

/// The `k` best texts of those pushed, cut down to them whenever it holds four times as many:
/// a common word's millions of postings are never all held. Once cut, the worst
/// kept is a floor: a text that would score under it even at the full recency weight is not
/// scored (`Best::beneath`), which spares most postings of a common word the blend's `powf`.
pub(super) struct Best {
    /// How many are kept.
    k: usize,
    texts: Vec<(f64, Key)>,
    cut: bool,
    floor: Option<f64>,
}

impl Best {
    pub(super) fn new(k: usize) -> Best {
        Best {
            k,
            texts: Vec::new(),
            cut: false,
            floor: None,
        }
    }

    pub(super) fn push(&mut self, relevance: f64, key: Key) {
        self.texts.push((relevance, key));
        if self.texts.len() >= 4 * self.k {
            self.cut_to_best();
        }
    }

    /// Whether a text of this bm25 (before the recency blend) cannot be among the best kept
    /// whatever its time: the most it can blend to at a weight of at most 1
    /// (`query::search::most`, the bound the local index's floors use) is strictly under the
    /// floor. (A score equal to the floor may still win its tie by row.)
    pub(super) fn beneath(&self, bm25: f64) -> bool {
        self.floor.is_some_and(|floor| most(bm25, 1.0) < floor)
    }

    /// Best first, then the later text (`ranked::sort`'s order, by which ties are cut too).
    fn cut_to_best(&mut self) {
        if self.texts.len() > self.k {
            self.texts.select_nth_unstable_by(self.k, best_first);
            self.texts.truncate(self.k);
            self.cut = true;
            self.floor = self.texts.iter().map(|t| t.0).reduce(f64::min);
        }
    }

    /// The best, and whether they are every text pushed.
    /// The least score a text must reach to be kept, once `k` are.
    fn floor(&mut self) -> Option<f64> {
        self.cut_to_best();
        self.floor
    }

    pub(super) fn finish(mut self) -> (Vec<(f64, Key)>, bool) {
        self.cut_to_best();
        (self.texts, !self.cut)
    }
}

impl Ranked for (f64, Key) {
    fn order(&self) -> (f64, i64, i64, i16) {
        (self.0, self.1 .1, self.1 .2, self.1 .3)
    }
}

/// Whether a posting passes the filters its own fields answer (kinds, `--since`, `--until`,
/// as `search::filters` puts them to the server); the others are asked at the look-up.
pub(super) fn passes(q: &SearchOptions, p: &Posting) -> bool {
    if !q.kinds.is_empty() && !q.kinds.iter().any(|k| *k as i64 == i64::from(p.kind)) {
        return false;
    }
    match (q.since_ms, q.until_ms, p.ts_ms) {
        (None, None, _) => true,
        (_, _, None) => false,
        (since, until, Some(t)) => since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// A seeded stream of numbers (xorshift64): the same cases on every run.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// A phrase's places from its words' positions are the places `Phrase::count` finds in
    /// the tokens (FTS5's instances), for phrases of one to four words over a vocabulary of
    /// three, repeated words (`"a a"`) included.
    #[test]
    fn instances_from_positions_are_the_phrases_places_in_the_tokens() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        // Two common words (pg 0025's grams are their pairs) and two others.
        let vocabulary = ["the", "of", "borrow", "x"];
        let mut grams = 0;
        for _ in 0..3_000 {
            let len = (next() % 40) as usize;
            let tokens: Vec<Cow<str>> = (0..len)
                .map(|_| Cow::Borrowed(vocabulary[(next() % 4) as usize]))
                .collect();
            // Each term's token numbers, as push writes them: a word's, 1-based as the local
            // index numbers a text's tokens, and a gram's, its first word's.
            let text = tokens.join(" ");
            let (occ, _) = crate::pg::words::occurrences(&text);
            let mut terms: Vec<(String, u32)> =
                occ.iter().map(|(w, at)| (w.to_string(), *at)).collect();
            terms.extend(crate::pg::words::gram_terms(&occ, usize::MAX));
            terms.sort();
            let mut names: Vec<String> = terms.iter().map(|t| t.0.clone()).collect();
            names.dedup();
            let positions: Vec<Vec<u32>> = (names.iter())
                .map(|n| terms.iter().filter(|t| t.0 == *n).map(|t| t.1).collect())
                .collect();
            let words: Vec<String> = (0..1 + next() % 4)
                .map(|_| vocabulary[(next() % 4) as usize].to_string())
                .collect();
            let phrase = super::super::ranked::Phrase {
                words: words.clone(),
                prefix: false,
            };
            for with_grams in [false, true] {
                let u = units(&words, with_grams);
                grams += usize::from(u.iter().any(|t| t.0.contains(' ')));
                // A term no token makes has no positions (a slot past `names`).
                let mut positions = positions.clone();
                let slots: Vec<(usize, u32)> = (u.iter())
                    .map(|(t, at)| match names.binary_search(t) {
                        Ok(i) => (i, *at),
                        Err(_) => {
                            positions.push(Vec::new());
                            (positions.len() - 1, *at)
                        }
                    })
                    .collect();
                assert_eq!(
                    instances(&slots, &positions),
                    phrase.count(&tokens),
                    "{words:?} as {u:?} in {tokens:?}",
                );
            }
        }
        assert!(grams > 500, "{grams}");
    }

    #[test]
    fn a_phrase_reads_the_pairs_of_its_common_words() {
        let of = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let t = |s: &str, at: u32| (s.to_string(), at);
        assert_eq!(units(&of("the borrow"), true), [t("the borrow", 0)]);
        assert_eq!(
            units(&of("fix the borrow"), true),
            [t("fix the", 0), t("the borrow", 1)]
        );
        assert_eq!(
            units(&of("borrow of the checker"), true),
            [t("borrow of", 0), t("the checker", 2)]
        );
        assert_eq!(
            units(&of("parse line"), true),
            [t("parse", 0), t("line", 1)]
        );
        assert_eq!(
            units(&of("the borrow"), false),
            [t("the", 0), t("borrow", 1)]
        );
        assert_eq!(units(&of("the"), true), [t("the", 0)]);
    }

    /// The best kept with the floor are the best of every text, ties by row included: many
    /// texts share a bm25 (scores drawn from 64 values), each blended by a weight in [2/3, 1].
    #[test]
    fn the_floor_keeps_the_best_of_every_text() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut best = Best::new(MOST_LOOKED_UP);
        let mut every = Vec::new();
        let (mut beneath, n) = (0, 12 * MOST_LOOKED_UP + 12_345);
        for i in 0..n {
            let bm25 = (next() % 64) as f64 / 8.0;
            let weight = [1.0, 1.0, 2.0 / 3.0, 0.75][(next() % 4) as usize];
            let key: Key = ((next() % 3) as u32, (i / 7) as i64, (i % 7) as i64, 1);
            every.push((bm25 * weight, key));
            if best.beneath(bm25) {
                beneath += 1;
            } else {
                best.push(bm25 * weight, key);
            }
        }
        let (mut kept, all) = best.finish();
        assert!(!all);
        assert!(beneath > n / 3, "only {beneath} of {n} beneath the floor");
        every.sort_by(best_first);
        every.truncate(MOST_LOOKED_UP);
        kept.sort_by(best_first);
        assert_eq!(kept, every);
    }

    /// A set of files holds exactly its files, whatever their spread, and none before or after.
    #[test]
    fn a_file_set_holds_its_files_and_no_other() {
        let mut next = xorshift(0x51_7cc1_b727_220a);
        for _ in 0..200 {
            let spread = 1 + next() % 5_000;
            let mut files: Vec<i64> = (0..next() % 300)
                .map(|_| 1_000_000 + (next() % spread) as i64)
                .collect();
            files.sort_unstable();
            files.dedup();
            let set = FileSet::of(&files);
            for fid in 999_900..1_000_000 + spread as i64 + 100 {
                assert_eq!(set.holds(fid), files.binary_search(&fid).is_ok(), "{fid}");
            }
            assert!(!set.holds(i64::MIN) && !set.holds(i64::MAX));
        }
        // Files too far apart to hold as bits (a row not as pidx writes them): all pass.
        let far = FileSet::of(&[i64::MIN, 3, i64::MAX]);
        assert!(far.holds(3) && far.holds(4));
    }
}
