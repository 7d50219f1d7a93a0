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

/// One text holding a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// One word's postings of a push, a segment in the making.
#[derive(Debug, Default)]
pub struct Segment {
    n: u64,
    buf: Vec<u8>,
    pos: Vec<u8>,
    fid: i64,
    seq: i64,
    ts: i64,
}

impl Segment {
    /// Adds a posting and its positions of the word (ascending; `p.tf` of them, or none when
    /// the row keeps no positions).
    pub fn add(&mut self, p: &Posting, positions: &[u32]) {
        debug_assert!(positions.is_empty() || positions.len() == p.tf as usize);
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
        self.buf.len() + self.pos.len()
    }

    /// The segment as stored: its count, then its postings; and its positions.
    pub fn finish(self) -> (Vec<u8>, Vec<u8>) {
        let mut out = Vec::with_capacity(self.buf.len() + 10);
        varint(&mut out, self.n);
        out.extend_from_slice(&self.buf);
        (out, self.pos)
    }
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
        assert_eq!(all(&s.finish().0), postings());
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
        let mut row = a.finish().0;
        row.extend(b.finish().0);
        assert_eq!(all(&row), ps);
    }

    #[test]
    fn a_row_cut_short_is_refused_not_misread() {
        let mut s = Segment::default();
        for p in postings() {
            s.add(&p, &[]);
        }
        let row = s.finish().0;
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
        // The first posting in full, then a byte each for the file, entry, kind and count, two
        // for the length, three for 20 s in milliseconds.
        assert!(s.bytes() <= 16 + 1000 * 8, "{} bytes", s.bytes());
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
        let ((mut data, mut pos), (d2, p2)) = (a.finish(), b.finish());
        data.extend(d2);
        pos.extend(p2);
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
}
