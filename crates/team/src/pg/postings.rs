//! Each source's texts of a word packed in a few rows (`word_postings`, pg 0020): every text
//! holding the word with what its score needs, its key, its count of the word, its length in
//! tokens and its entry's time, in about nine bytes (four of them the time in milliseconds). A
//! search of words reads these rows instead of a heap page of `entry_text` per match
//! (`reads::postings`).
//!
//! A row's `data` is one or more segments, each a varint count then that many postings; a
//! posting's file, entry and time are differences from the posting before it in the segment
//! (zigzag varints: any order encodes, the texts of one file in order encode small), its kind
//! and count one varint, its length another. Segments start afresh, so two rows of a word
//! concatenated (`string_agg`) are a row: push merges a word's small rows so.
//!
//! Since pg 0021 a row also holds its texts' positions of the word (`pos`, beside `data`):
//! for each posting in `data`'s order, its count of positions (token numbers, 1-based, as
//! the local index numbers a text's tokens), the first as is and each other as its distance
//! from the one before, in varints. A phrase's texts are then those where its words stand one
//! after the other, found from the postings alone (`reads::postings`). Concatenated as `data`
//! is, in the same order.
//!
//! Since pg 0023 a row's segments are blocks of at most [`BLOCK`] postings, and `skips`
//! (beside `data`) holds an entry for each: its bytes of postings and of positions, its least
//! file and its greatest. A reader who knows which files it wants steps over every block whose
//! range holds none of them, reading neither its postings nor its positions
//! ([`blocks`], [`decode_block`]); the entries concatenate with their rows.
//!
//! Since pg 0024 `bounds` (beside `skips`) holds for each block what its best posting can
//! score at most: a few corners of counts of the word and lengths no posting beats, each with
//! the latest time of the postings it stands for ([`Bound`]). A search of one word reads the
//! blocks best bound first and stops where no block left can beat the best kept.

/// One text holding a word.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    pub fid: i64,
    pub seq: i64,
    pub kind: i16,
    /// The word's count in the text.
    pub tf: u32,
    /// The text's length in tokens.
    pub ntok: u32,
    pub ts_ms: Option<i64>,
}

/// Kinds fit under this (`TextKind` has 8), packed beside the count.
const KINDS: u64 = 16;

/// Postings a block holds at most (pg 0023): the unit a search steps over without decoding. A
/// block of a word in most texts spans a few files; the smaller the block, the more of a common
/// word's blocks hold none of a rarer word's files, and the more bytes the blocks' fresh starts
/// and their entries in `skips` take (about 16 bytes a block, 3% of 64 postings).
pub const BLOCK: u64 = 64;

/// One word's postings of a push, a row in the making: blocks of at most [`BLOCK`] postings,
/// each a segment of its own.
#[derive(Debug, Default)]
pub struct Segment {
    n: u64,
    /// The blocks closed, as stored.
    out: Vec<u8>,
    /// The open block's postings, and how many.
    buf: Vec<u8>,
    open: u64,
    pos: Vec<u8>,
    /// Where the open block's positions start in `pos`.
    pos_open: usize,
    skips: Vec<u8>,
    /// The open block's least and greatest file.
    lo: i64,
    hi: i64,
    /// The blocks' bounds (pg 0024); the open block's postings' counts, lengths and times; the
    /// lengths of every posting so far (a mean for [`Bound::of`]).
    bounds: Vec<u8>,
    open_postings: Vec<(u32, u32, Option<i64>)>,
    lengths: u64,
    fid: i64,
    seq: i64,
    ts: i64,
}

/// A row as stored: its postings, their positions, and (pg 0023) its blocks' entries and
/// (pg 0024) their bounds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Row {
    pub data: Vec<u8>,
    pub pos: Vec<u8>,
    pub skips: Vec<u8>,
    pub bounds: Vec<u8>,
}

/// A corner of a block's bound (pg 0024): a count of the word and a length in tokens that no
/// posting it stands for beats (more of the word, or fewer tokens), and the latest time of those
/// postings (and whether one has none, scored as a year old). A posting's score grows with its
/// count and its time and falls with its length, so the score of a corner bounds every posting
/// it stands for (`reads::postings`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Corner {
    pub tf: u32,
    pub ntok: u32,
    pub ts_ms: Option<i64>,
    pub untimed: bool,
}

impl Corner {
    /// Whether it stands for `p`.
    pub fn holds(&self, p: &Posting) -> bool {
        p.tf <= self.tf
            && p.ntok >= self.ntok
            && match p.ts_ms {
                Some(t) => self.ts_ms.is_some_and(|b| t <= b),
                None => self.untimed,
            }
    }
}

/// A block's bound: at most [`CORNERS`] corners, each posting of the block within one. One
/// corner (the greatest count, the least length, the latest time) is loose: a block of a common
/// word nearly always holds a short text and, apart, one with the word many times, and a recent
/// text beside old ones; measured on the postings of `function` at 300,000 generated sessions, the
/// best 1,000 texts could be in 4,321 of its 4,328 blocks by such bounds, in 781 by each block's
/// true best. Corners on the frontier of count and length, each with the latest time of the
/// postings it stands for, come close to the true best where a block's texts are of one time
/// (files numbered in their time order: `push`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Bound {
    pub corners: Vec<Corner>,
}

/// Corners a block's bound keeps at most.
pub const CORNERS: usize = 4;

impl Bound {
    /// The bound of a block's postings (count, length, time), with `avg` a length near the
    /// texts' mean (which corners to merge when there are too many: the pair whose merged corner
    /// scores least above the better of the two, bm25's shape at that mean).
    fn of(postings: &[(u32, u32, Option<i64>)], avg: f64) -> Bound {
        let impact = |c: &Corner| {
            let tf = f64::from(c.tf);
            tf / (tf + 1.2 * (0.25 + 0.75 * f64::from(c.ntok) / avg.max(1.0)))
        };
        // The frontier: by count, most first, each corner shorter than every one before it.
        let mut by_count: Vec<(u32, u32)> = postings.iter().map(|p| (p.0, p.1)).collect();
        by_count.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut corners: Vec<Corner> = Vec::new();
        for (tf, ntok) in by_count {
            if corners.last().is_none_or(|c| ntok < c.ntok) {
                corners.push(Corner {
                    tf,
                    ntok,
                    ..Corner::default()
                });
            }
        }
        while corners.len() > CORNERS {
            let merged = |i: usize| Corner {
                tf: corners[i].tf,
                ntok: corners[i + 1].ntok,
                ..Corner::default()
            };
            let cost =
                |i: usize| impact(&merged(i)) - impact(&corners[i]).max(impact(&corners[i + 1]));
            let at = (0..corners.len() - 1)
                .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
                .unwrap_or(0);
            corners[at] = merged(at);
            corners.remove(at + 1);
        }
        // Each posting's time to the corner that stands for it and scores least.
        for &(tf, ntok, ts) in postings {
            let p = Posting {
                tf,
                ntok,
                ..Posting::default()
            };
            let within = |c: &&mut Corner| p.tf <= c.tf && p.ntok >= c.ntok;
            let Some(c) = corners
                .iter_mut()
                .filter(within)
                .min_by(|a, b| impact(a).total_cmp(&impact(b)))
            else {
                continue;
            };
            match ts {
                Some(t) => c.ts_ms = Some(c.ts_ms.map_or(t, |b| b.max(t))),
                None => c.untimed = true,
            }
        }
        // A corner no posting's time went to stands for none.
        corners.retain(|c| c.ts_ms.is_some() || c.untimed);
        Bound { corners }
    }

    /// Whether `p` is within it (a stored bound that is not is refused: a search would skip
    /// postings by it).
    pub fn holds(&self, p: &Posting) -> bool {
        self.corners.iter().any(|c| c.holds(p))
    }

    /// Its entry in a row's `bounds`: its count of corners, then each corner's count and flags,
    /// length and time; each entry whole in itself, so that rows' bounds concatenate.
    fn write(&self, out: &mut Vec<u8>) {
        varint(out, self.corners.len() as u64);
        for c in &self.corners {
            let flags = u64::from(c.ts_ms.is_some()) << 1 | u64::from(c.untimed);
            varint(out, u64::from(c.tf) << 2 | flags);
            varint(out, u64::from(c.ntok));
            if let Some(t) = c.ts_ms {
                zigzag(out, t);
            }
        }
    }
}

/// A row's blocks' bounds from its `bounds`; `None` unless there is exactly one for each of its
/// `n` blocks, each of one to [`CORNERS`] corners.
pub fn bounds(stored: &[u8], n: usize) -> Option<Vec<Bound>> {
    let mut r = Reader {
        data: stored,
        at: 0,
    };
    let mut out = Vec::with_capacity(n);
    while r.at < stored.len() {
        let count = usize::try_from(r.varint()?).ok()?;
        if count == 0 || count > CORNERS {
            return None;
        }
        let mut corners = Vec::with_capacity(count);
        for _ in 0..count {
            let head = r.varint()?;
            let ntok = u32::try_from(r.varint()?).ok()?;
            let ts_ms = if head & 2 != 0 {
                Some(r.zigzag()?)
            } else {
                None
            };
            corners.push(Corner {
                tf: u32::try_from(head >> 2).ok()?,
                ntok,
                ts_ms,
                untimed: head & 1 != 0,
            });
        }
        out.push(Bound { corners });
    }
    (out.len() == n).then_some(out)
}

impl Segment {
    /// Adds a posting and its positions of the word (ascending; `p.tf` of them, or none when
    /// the row keeps no positions).
    pub fn add(&mut self, p: &Posting, positions: &[u32]) {
        debug_assert!(positions.is_empty() || positions.len() == p.tf as usize);
        if self.open == BLOCK {
            self.close();
        }
        if self.open == 0 {
            (self.fid, self.seq, self.ts) = (0, 0, 0);
            (self.lo, self.hi) = (p.fid, p.fid);
        }
        self.open_postings.push((p.tf, p.ntok, p.ts_ms));
        self.lengths += u64::from(p.ntok);
        (self.lo, self.hi) = (self.lo.min(p.fid), self.hi.max(p.fid));
        let mut last = 0;
        for &at in positions {
            varint(&mut self.pos, u64::from(at.wrapping_sub(last)));
            last = at;
        }
        if p.fid != self.fid {
            self.seq = 0;
        }
        zigzag(&mut self.buf, p.fid.wrapping_sub(self.fid));
        zigzag(&mut self.buf, p.seq.wrapping_sub(self.seq));
        let kind = u64::try_from(p.kind).unwrap_or(0).min(KINDS - 1);
        let timed = if p.ts_ms.is_some() { KINDS } else { 0 };
        varint(&mut self.buf, u64::from(p.tf) * 2 * KINDS + timed + kind);
        varint(&mut self.buf, u64::from(p.ntok));
        if let Some(ts) = p.ts_ms {
            zigzag(&mut self.buf, ts.wrapping_sub(self.ts));
            self.ts = ts;
        }
        (self.fid, self.seq) = (p.fid, p.seq);
        self.n += 1;
        self.open += 1;
    }

    /// Closes the open block: its count and postings onto the row, its entry onto `skips`.
    fn close(&mut self) {
        if self.open == 0 {
            return;
        }
        let start = self.out.len();
        varint(&mut self.out, self.open);
        self.out.extend_from_slice(&self.buf);
        skip_entry(
            &mut self.skips,
            (self.out.len() - start) as u64,
            (self.pos.len() - self.pos_open) as u64,
            self.lo,
            self.hi.wrapping_sub(self.lo) as u64,
        );
        let avg = self.lengths as f64 / (self.n.max(1)) as f64;
        Bound::of(&self.open_postings, avg).write(&mut self.bounds);
        self.open_postings.clear();
        self.buf.clear();
        self.open = 0;
        self.pos_open = self.pos.len();
    }

    /// How many postings it holds.
    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Bytes held (what a push flushes by).
    pub fn bytes(&self) -> usize {
        self.out.len() + self.buf.len() + self.pos.len() + self.skips.len() + self.bounds.len()
    }

    /// The row as stored.
    pub fn finish(mut self) -> Row {
        self.close();
        Row {
            data: self.out,
            pos: self.pos,
            skips: self.skips,
            bounds: self.bounds,
        }
    }
}

/// A block's entry in a row's `skips` (pg 0023): its bytes of postings and of positions, its
/// least file and its greatest (from its least). Lengths, not offsets, and each entry whole in
/// itself: the `skips` of rows concatenated are the concatenated row's, as its `data` and `pos`
/// are (push merges rows so).
fn skip_entry(out: &mut Vec<u8>, data: u64, pos: u64, lo: i64, span: u64) {
    varint(out, data);
    varint(out, pos);
    zigzag(out, lo);
    varint(out, span);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(out: &mut Vec<u8>, v: i64) {
    varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Reads varints off a row.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.at)?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn zigzag(&mut self) -> Option<i64> {
        self.varint().map(|v| ((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// Steps over `n` varints without their values; `None` when the row ends first.
    fn skip(&mut self, n: u32) -> Option<()> {
        let mut left = n;
        while left > 0 {
            let b = *self.data.get(self.at)?;
            self.at += 1;
            if b < 0x80 {
                left -= 1;
            }
        }
        Some(())
    }
}

/// Calls `each` with every posting of a stored row, in order; `false` when the row is not
/// whole (it was cut short or holds a value out of range: a bug or a foreign row, which the
/// caller reports rather than ranks from).
pub fn decode(data: &[u8], mut each: impl FnMut(Posting)) -> bool {
    decode_rows(data, None, |_| true, |p, _| each(p))
}

/// [`decode`] with each posting's positions of the word from the row's `pos` (pg 0021), for
/// the postings `want` keeps (the others' positions are stepped over, not read: a common
/// word's millions of positions, of texts a rarer word already ruled out); `false` as well
/// when `pos` does not hold exactly the postings' counts of positions.
pub fn decode_positioned(
    data: &[u8],
    pos: &[u8],
    want: impl FnMut(&Posting) -> bool,
    each: impl FnMut(Posting, &[u32]),
) -> bool {
    decode_rows(data, Some(pos), want, each)
}

/// The error of a stored row that does not decode (cut short, or not what pidx writes): the
/// caller reports it rather than ranks from it or rewrites it.
pub fn undecoded(source: &str) -> pidx_core::error::Error {
    pidx_core::error::Error::Server(format!(
        "the server's postings of a word for source {source} do not decode (pg 0020, 0021)"
    ))
}

/// One block of a stored row, from its `skips` (pg 0023): its least and greatest file and
/// where its postings and positions lie in the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub lo: i64,
    pub hi: i64,
    pub data: std::ops::Range<usize>,
    pub pos: std::ops::Range<usize>,
}

/// A row's blocks from its `skips`; `None` unless they add up to exactly its bytes of postings
/// and of positions (`pos_len` `None`: the positions were not read, and are not checked).
pub fn blocks(skips: &[u8], data_len: usize, pos_len: Option<usize>) -> Option<Vec<Block>> {
    let mut r = Reader { data: skips, at: 0 };
    let (mut d, mut p) = (0usize, 0usize);
    let mut out = Vec::new();
    while r.at < skips.len() {
        let (dl, pl) = (r.varint()?, r.varint()?);
        let (lo, span) = (r.zigzag()?, r.varint()?);
        let (dl, pl) = (usize::try_from(dl).ok()?, usize::try_from(pl).ok()?);
        let hi = lo.checked_add(i64::try_from(span).ok()?)?;
        out.push(Block {
            lo,
            hi,
            data: d..d.checked_add(dl)?,
            pos: p..p.checked_add(pl)?,
        });
        (d, p) = (d + dl, p + pl);
    }
    (d == data_len && pos_len.is_none_or(|n| n == p)).then_some(out)
}

/// One block's postings (`data` and `pos` its bytes alone), checked to be one segment of files
/// within the block's range.
pub fn decode_block(
    data: &[u8],
    pos: Option<&[u8]>,
    block: &Block,
    want: &mut impl FnMut(&Posting) -> bool,
    each: &mut impl FnMut(Posting, &[u32]),
) -> bool {
    let mut within = true;
    let whole = decode_rows(
        data,
        pos,
        |p| {
            within &= (block.lo..=block.hi).contains(&p.fid);
            within && want(p)
        },
        |p, at| each(p, at),
    );
    whole && within
}

fn decode_rows(
    data: &[u8],
    pos: Option<&[u8]>,
    mut want: impl FnMut(&Posting) -> bool,
    mut each: impl FnMut(Posting, &[u32]),
) -> bool {
    let mut r = Reader { data, at: 0 };
    let mut at = Reader {
        data: pos.unwrap_or(&[]),
        at: 0,
    };
    let mut positions: Vec<u32> = Vec::new();
    while r.at < data.len() {
        let Some(n) = r.varint() else { return false };
        let (mut fid, mut seq, mut ts) = (0i64, 0i64, 0i64);
        for _ in 0..n {
            let (Some(df), Some(ds), Some(tk), Some(ntok)) =
                (r.zigzag(), r.zigzag(), r.varint(), r.varint())
            else {
                return false;
            };
            if df != 0 {
                seq = 0;
            }
            fid = fid.wrapping_add(df);
            seq = seq.wrapping_add(ds);
            let ts_ms = if tk & KINDS != 0 {
                let Some(d) = r.zigzag() else { return false };
                ts = ts.wrapping_add(d);
                Some(ts)
            } else {
                None
            };
            let (Ok(tf), Ok(ntok)) = (u32::try_from(tk / (2 * KINDS)), u32::try_from(ntok)) else {
                return false;
            };
            let posting = Posting {
                fid,
                seq,
                kind: (tk % KINDS) as i16,
                tf,
                ntok,
                ts_ms,
            };
            if !want(&posting) {
                if pos.is_some() && at.skip(tf).is_none() {
                    return false;
                }
                continue;
            }
            positions.clear();
            if pos.is_some() {
                let mut last = 0u32;
                for _ in 0..tf {
                    let Some(d) = at.varint().and_then(|d| u32::try_from(d).ok()) else {
                        return false;
                    };
                    last = last.wrapping_add(d);
                    positions.push(last);
                }
            }
            each(posting, &positions);
        }
    }
    at.at == at.data.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`decode_positioned`] (or [`decode`], `pos` `None`) of the blocks of a row whose files
    /// `keep` may hold, given the row's `skips` (pg 0023): the other blocks are stepped over
    /// whole, neither postings nor positions read. `false` when the row is not whole, as there,
    /// or its `skips` do not add up to its bytes.
    fn decode_blocks(
        data: &[u8],
        pos: Option<&[u8]>,
        skips: &[u8],
        mut keep: impl FnMut(i64, i64) -> bool,
        mut want: impl FnMut(&Posting) -> bool,
        mut each: impl FnMut(Posting, &[u32]),
    ) -> bool {
        let Some(blocks) = blocks(skips, data.len(), pos.map(<[u8]>::len)) else {
            return false;
        };
        blocks.iter().filter(|b| keep(b.lo, b.hi)).all(|b| {
            let pos = pos.map(|pos| &pos[b.pos.clone()]);
            decode_block(&data[b.data.clone()], pos, b, &mut want, &mut each)
        })
    }

    fn all(data: &[u8]) -> Vec<Posting> {
        let mut out = Vec::new();
        assert!(decode(data, |p| out.push(p)));
        out
    }

    fn postings() -> Vec<Posting> {
        let p = |fid, seq, kind, tf, ntok, ts_ms| Posting {
            fid,
            seq,
            kind,
            tf,
            ntok,
            ts_ms,
        };
        vec![
            p(7, 0, 0, 1, 3, Some(1_764_000_000_000)),
            p(7, 2, 1, 300, 16_383, Some(1_764_000_000_500)),
            p(7, 2, 3, 1, 1, None),
            // Another file, before the first: files need not come in order.
            p(3, 9, 7, u32::MAX, u32::MAX, Some(1_700_000_000_000)),
            p(i64::MAX, i64::MAX, 2, 0, 0, Some(i64::MIN)),
            p(0, 0, 0, 1, 1, Some(i64::MAX)),
        ]
    }

    #[test]
    fn a_segment_gives_back_what_went_in() {
        let mut s = Segment::default();
        for p in postings() {
            s.add(&p, &[]);
        }
        assert_eq!(s.len(), 6);
        assert_eq!(all(&s.finish().data), postings());
    }

    #[test]
    fn rows_concatenated_are_a_row_of_both() {
        let (mut a, mut b) = (Segment::default(), Segment::default());
        let ps = postings();
        for p in &ps[..2] {
            a.add(p, &[]);
        }
        for p in &ps[2..] {
            b.add(p, &[]);
        }
        let mut row = a.finish().data;
        row.extend(b.finish().data);
        assert_eq!(all(&row), ps);
    }

    #[test]
    fn a_row_cut_short_is_refused_not_misread() {
        let mut s = Segment::default();
        for p in postings() {
            s.add(&p, &[]);
        }
        let row = s.finish().data;
        for cut in 1..row.len() {
            let mut seen = 0;
            // Whatever a cut row yields before it is refused, it is refused.
            assert!(!decode(&row[..cut], |_| seen += 1), "cut at {cut}");
        }
    }

    #[test]
    fn texts_of_one_file_in_order_take_few_bytes() {
        let mut s = Segment::default();
        for seq in 0..1000 {
            s.add(
                &Posting {
                    fid: 123_456,
                    seq: seq * 3,
                    kind: 1,
                    tf: 2,
                    ntok: 150,
                    ts_ms: Some(1_764_000_000_000 + seq * 20_000),
                },
                &[],
            );
        }
        // The first posting of each block in full, the block's entry and its bound (its time
        // in full: about 26 bytes a block), then a byte each for the file, entry, kind and
        // count, two for the length, three for 20 s in milliseconds.
        let blocks = 1000usize.div_ceil(BLOCK as usize);
        assert!(s.bytes() <= 26 * blocks + 1000 * 8, "{} bytes", s.bytes());
    }

    #[test]
    fn positions_come_back_with_their_postings_and_rows_concatenate() {
        let ps = postings();
        // Positions for each posting but the ones whose counts are too many to spell out.
        let with: Vec<(Posting, Vec<u32>)> = ps
            .iter()
            .filter(|p| p.tf <= 300)
            .map(|p| (*p, (0..p.tf).map(|i| 1 + i * 7).collect()))
            .collect();
        let (mut a, mut b) = (Segment::default(), Segment::default());
        for (p, at) in &with[..2] {
            a.add(p, at);
        }
        for (p, at) in &with[2..] {
            b.add(p, at);
        }
        let (a, b) = (a.finish(), b.finish());
        let (mut data, mut pos) = (a.data, a.pos);
        data.extend(b.data);
        pos.extend(b.pos);
        let mut out = Vec::new();
        assert!(decode_positioned(
            &data,
            &pos,
            |_| true,
            |p, at| out.push((p, at.to_vec()))
        ));
        assert_eq!(out, with);
        // Postings and positions that do not agree are refused.
        assert!(!decode_positioned(
            &data,
            &pos[..pos.len() - 1],
            |_| true,
            |_, _| {}
        ));
        let mut more = pos.clone();
        more.push(1);
        assert!(!decode_positioned(&data, &more, |_| true, |_, _| {}));
        // The postings alone still read.
        assert_eq!(all(&data).len(), with.len());
        // Those left out are stepped over: the others keep their own positions, and a row
        // cut short is still refused.
        let mut once = Vec::new();
        let single = |p: &Posting| p.tf == 1;
        assert!(decode_positioned(&data, &pos, single, |p, at| once.push((p, at.to_vec()))));
        let want: Vec<_> = with.iter().filter(|(p, _)| single(p)).cloned().collect();
        assert_eq!(want.len(), 3, "kept after ones stepped over");
        assert_eq!(once, want);
        assert!(!decode_positioned(
            &data,
            &pos[..pos.len() - 1],
            |_| false,
            |_, _| {}
        ));
    }

    /// Postings of many files, a few texts each, with positions: `files` files from `first`.
    fn many(first: i64, files: i64) -> Vec<(Posting, Vec<u32>)> {
        (0..files * 3)
            .map(|i| {
                let tf = 1 + (i % 4) as u32;
                let p = Posting {
                    fid: first + i / 3,
                    seq: i % 3,
                    kind: 1,
                    tf,
                    ntok: 40,
                    ts_ms: (i % 5 != 0).then_some(1_764_000_000_000 + i * 1000),
                };
                (p, (0..tf).map(|k| 2 + 3 * k).collect())
            })
            .collect()
    }

    fn row_of(postings: &[(Posting, Vec<u32>)]) -> Row {
        let mut s = Segment::default();
        for (p, at) in postings {
            s.add(p, at);
        }
        s.finish()
    }

    /// Blocks hold at most `BLOCK` postings, their entries add up to the row, each names the
    /// files it holds; decoded through them, the blocks kept give back exactly their postings
    /// and positions, and rows concatenated (push's merge) are still a row of blocks.
    #[test]
    fn blocks_step_over_the_files_not_asked_for() {
        let (one, two) = (many(100, 150), many(10_000, 40));
        let (a, b) = (row_of(&one), row_of(&two));
        let mut row = a.clone();
        row.data.extend(&b.data);
        row.pos.extend(&b.pos);
        row.skips.extend(&b.skips);
        let every: Vec<_> = one.iter().chain(&two).cloned().collect();
        let bs = blocks(&row.skips, row.data.len(), Some(row.pos.len())).expect("adds up");
        assert_eq!(bs.len(), 450usize.div_ceil(64) + 120usize.div_ceil(64));
        assert_eq!(bs[0].lo, 100);
        assert_eq!(bs[0].hi, 100 + 63 / 3);
        for b in &bs {
            let mut n = 0;
            assert!(decode_positioned(
                &row.data[b.data.clone()],
                &row.pos[b.pos.clone()],
                |_| true,
                |p, _| {
                    n += 1;
                    assert!((b.lo..=b.hi).contains(&p.fid));
                }
            ));
            assert!(n <= BLOCK && n > 0);
        }
        // Every block read: the row as it went in.
        let mut out = Vec::new();
        let read = |out: &mut Vec<_>, keep: &dyn Fn(i64, i64) -> bool| {
            decode_blocks(
                &row.data,
                Some(&row.pos),
                &row.skips,
                keep,
                |_| true,
                |p, at| out.push((p, at.to_vec())),
            )
        };
        assert!(read(&mut out, &|_, _| true));
        assert!(out == every, "{} of {}", out.len(), every.len());
        // Files 120-129 and 10,005 asked for: the blocks holding them, no other.
        let asked = |f: i64| (120..130).contains(&f) || f == 10_005;
        let keep = |lo: i64, hi: i64| (lo..=hi).any(asked);
        out.clear();
        assert!(read(&mut out, &keep));
        assert!(out.iter().any(|(p, _)| p.fid == 10_005));
        // The blocks as written: each row's postings sixty-four at a time.
        let held: Vec<_> = (one.chunks(BLOCK as usize))
            .chain(two.chunks(BLOCK as usize))
            .filter(|b| keep(b[0].0.fid, b[b.len() - 1].0.fid))
            .flatten()
            .cloned()
            .collect();
        assert!(
            out == held,
            "{} postings read, {} held",
            out.len(),
            held.len()
        );
        // Files 120-129 are postings 60-89 of the first row (its blocks 0 and 1), 10,005 the
        // second row's first block: three blocks of the nine.
        assert_eq!(out.len(), 3 * BLOCK as usize);
        assert!(out.iter().filter(|(p, _)| asked(p.fid)).count() == 10 * 3 + 3);
    }

    /// Entries that do not add up to the row, or a block holding a file outside its range, are
    /// refused, not misread.
    #[test]
    fn blocks_that_do_not_add_up_are_refused() {
        let row = row_of(&many(1, 50));
        let read = |data: &[u8], pos: &[u8], skips: &[u8]| {
            decode_blocks(data, Some(pos), skips, |_, _| true, |_| true, |_, _| {})
        };
        assert!(read(&row.data, &row.pos, &row.skips));
        assert!(!read(&row.data[..row.data.len() - 1], &row.pos, &row.skips));
        assert!(!read(&row.data, &row.pos[1..], &row.skips));
        for cut in 1..row.skips.len() {
            assert!(
                !read(&row.data, &row.pos, &row.skips[..cut]),
                "cut at {cut}"
            );
        }
        // The first block's range moved one file up: its first file is outside it.
        let mut moved = Vec::new();
        let first = blocks(&row.skips, row.data.len(), Some(row.pos.len())).unwrap();
        for (i, b) in first.iter().enumerate() {
            let lo = if i == 0 { b.lo + 1 } else { b.lo };
            skip_entry(
                &mut moved,
                b.data.len() as u64,
                b.pos.len() as u64,
                lo,
                (b.hi - lo) as u64,
            );
        }
        assert!(!read(&row.data, &row.pos, &moved));
    }
    /// Each block's bound (pg 0024) stands for every posting of the block, for rows
    /// concatenated too (push's merge), in at most `CORNERS` corners made of its postings'
    /// counts, lengths and times, the greatest count, least length and latest time among them;
    /// a posting outside it is told, and bounds that are not one a block are refused.
    #[test]
    fn each_blocks_bound_stands_for_its_postings() {
        let mut one = many(100, 150);
        // Lengths, counts and times that differ within a block, a block without any time.
        for (i, (p, at)) in one.iter_mut().enumerate() {
            p.ntok = 10 + (i as u32 * 7919) % 500;
            p.tf = 1 + (i as u32 * 104_729) % 9;
            *at = (0..p.tf).map(|k| 1 + k).collect();
            if (64..128).contains(&i) {
                p.ts_ms = None;
            }
        }
        let two: Vec<_> = postings().into_iter().map(|p| (p, Vec::new())).collect();
        let (a, b) = (row_of(&one), row_of(&two));
        let mut row = a.clone();
        row.data.extend(&b.data);
        row.skips.extend(&b.skips);
        row.bounds.extend(&b.bounds);
        let bs = blocks(&row.skips, row.data.len(), None).expect("adds up");
        let bound = bounds(&row.bounds, bs.len()).expect("one a block");
        let written: Vec<&[(Posting, Vec<u32>)]> = one
            .chunks(BLOCK as usize)
            .chain(two.chunks(BLOCK as usize))
            .collect();
        assert_eq!(written.len(), bs.len());
        for (i, (held, bound)) in written.iter().zip(&bound).enumerate() {
            let ps: Vec<&Posting> = held.iter().map(|h| &h.0).collect();
            let cs = &bound.corners;
            assert!(!cs.is_empty() && cs.len() <= CORNERS, "block {i}: {cs:?}");
            assert!(ps.iter().all(|p| bound.holds(p)), "block {i}");
            for c in cs {
                assert!(ps.iter().any(|p| p.tf == c.tf), "block {i}: {c:?}");
                assert!(ps.iter().any(|p| p.ntok == c.ntok), "block {i}: {c:?}");
                assert!(c
                    .ts_ms
                    .is_none_or(|t| ps.iter().any(|p| p.ts_ms == Some(t))));
            }
            let most = |f: fn(&Corner) -> Option<i64>| cs.iter().filter_map(f).max();
            let tf = ps.iter().map(|p| i64::from(p.tf)).max();
            assert_eq!(most(|c| Some(i64::from(c.tf))), tf, "block {i}");
            let ntok = ps.iter().map(|p| -i64::from(p.ntok)).max();
            assert_eq!(most(|c| Some(-i64::from(c.ntok))), ntok, "block {i}");
            assert_eq!(most(|c| c.ts_ms), ps.iter().filter_map(|p| p.ts_ms).max());
            let untimed = ps.iter().any(|p| p.ts_ms.is_none());
            assert_eq!(cs.iter().any(|c| c.untimed), untimed, "block {i}");
            // Any corner lowered leaves a posting outside.
            for (j, c) in cs.iter().enumerate() {
                let lowered = [
                    Corner {
                        tf: c.tf.saturating_sub(1),
                        ..*c
                    },
                    Corner {
                        ntok: c.ntok.saturating_add(1),
                        ..*c
                    },
                ];
                for low in lowered.into_iter().filter(|l| l != c) {
                    let mut less = bound.clone();
                    less.corners[j] = low;
                    assert!(!ps.iter().all(|p| less.holds(p)), "block {i}: {low:?}");
                }
            }
        }
        assert!(bounds(&row.bounds, bs.len() + 1).is_none());
        assert!(bounds(&row.bounds, bs.len() - 1).is_none());
        for cut in 1..row.bounds.len() {
            let short = bounds(&row.bounds[..cut], bs.len());
            assert!(short.is_none(), "cut at {cut}");
        }
        // No corner, or more than `CORNERS`.
        assert!(bounds(&[0], 1).is_none());
        let mut five = vec![CORNERS as u8 + 1];
        five.extend([4, 1].repeat(CORNERS + 1));
        assert!(bounds(&five, 1).is_none());
    }

    /// A block of a short recent text and a long old one that holds the word more often: two
    /// corners, each with its own text's time, where one corner would say the most count, the
    /// least length and the latest time together.
    #[test]
    fn a_blocks_corners_keep_each_its_own_time() {
        let p = |tf, ntok, ts_ms| Posting {
            fid: 1,
            seq: 0,
            kind: 1,
            tf,
            ntok,
            ts_ms,
        };
        let (old, new) = (1_700_000_000_000, 1_764_000_000_000);
        let mut s = Segment::default();
        s.add(&p(5, 500, Some(old)), &[]);
        s.add(&p(1, 5, Some(new)), &[]);
        s.add(&p(1, 9, Some(new - 1)), &[]);
        s.add(&p(2, 600, None), &[]);
        let row = s.finish();
        let bound = &bounds(&row.bounds, 1).expect("one block")[0];
        let corner = |tf, ntok, ts_ms, untimed| Corner {
            tf,
            ntok,
            ts_ms,
            untimed,
        };
        assert_eq!(
            bound.corners,
            vec![
                corner(5, 500, Some(old), true),
                corner(1, 5, Some(new), false)
            ]
        );
    }
}
