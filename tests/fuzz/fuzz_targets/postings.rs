//! The team server's postings (`pidx_team::pg::postings`, pg 0020-0024): any bytes as a stored
//! row (postings, positions, blocks' entries and bounds) decode or are refused, never panic,
//! and a block read alone gives exactly what the whole row gives for it; and postings made
//! from the bytes and written as a row come back whole, each block holding files within its
//! range and postings within its bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pidx_team::pg::postings::{
    blocks, bounds, decode_block, decode_positioned, Posting, Segment,
};

/// Reads little-endian numbers off the input, zero once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn take(&mut self, n: usize) -> u64 {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head.iter().rev().fold(0, |v, &b| (v << 8) | u64::from(b))
    }
}

fuzz_target!(|input: &[u8]| {
    // Raw rows: the input cut in three at the positions its first two bytes name.
    if input.len() >= 2 {
        let rest = &input[2..];
        let a = usize::from(input[0]).min(rest.len());
        let b = (a + usize::from(input[1])).min(rest.len());
        let (data, pos, skips) = (&rest[..a], &rest[a..b], &rest[b..]);
        // Any bytes as bounds: as many as asked for, or refused.
        if let Some(read) = bounds(skips, usize::from(input[0])) {
            assert_eq!(read.len(), usize::from(input[0]));
        }
        let mut whole = Vec::new();
        let row_ok = decode_positioned(data, pos, |_| true, |p, at| whole.push((p, at.to_vec())));
        if let Some(bs) = blocks(skips, data.len(), Some(pos.len())) {
            let mut read = Vec::new();
            let every = bs.iter().all(|b| {
                decode_block(
                    &data[b.data.clone()],
                    Some(&pos[b.pos.clone()]),
                    b,
                    &mut |_| true,
                    &mut |p, at| read.push((p, at.to_vec())),
                )
            });
            // Blocks that all decode are segments of the row, in order: the row decodes to them.
            if every {
                assert!(row_ok, "blocks decode, the row does not");
                assert_eq!(read, whole);
            }
        }
    }
    // Postings made from the input, written as a row, read back through its blocks.
    let mut bytes = Bytes(input);
    let mut made: Vec<(Posting, Vec<u32>)> = Vec::new();
    while !bytes.0.is_empty() && made.len() < 2_000 {
        let tf = (bytes.take(1) % 5) as u32;
        let p = Posting {
            fid: bytes.take(3) as i64 - (1 << 20),
            seq: bytes.take(2) as i64,
            kind: (bytes.take(1) % 8) as i16,
            tf,
            ntok: bytes.take(2) as u32,
            ts_ms: match bytes.take(1) % 3 {
                0 => None,
                _ => Some(bytes.take(6) as i64),
            },
        };
        let mut at = 0u32;
        let positions = (0..tf).map(|_| {
            at += 1 + bytes.take(1) as u32;
            at
        });
        made.push((p, positions.collect()));
    }
    let mut segment = Segment::default();
    for (p, at) in &made {
        segment.add(p, at);
    }
    let row = segment.finish();
    let bs = blocks(&row.skips, row.data.len(), Some(row.pos.len())).expect("entries add up");
    let bound = bounds(&row.bounds, bs.len()).expect("a bound a block");
    let mut read = Vec::new();
    for (b, bound) in bs.iter().zip(&bound) {
        let mut n = 0;
        let ok = decode_block(
            &row.data[b.data.clone()],
            Some(&row.pos[b.pos.clone()]),
            b,
            &mut |_| true,
            &mut |p, at| {
                n += 1;
                assert!(bound.holds(&p), "{p:?} within {bound:?}");
                read.push((p, at.to_vec()));
            },
        );
        assert!(ok, "a block as written decodes");
        assert!(n >= 1 && n <= 64, "{n} postings in a block");
    }
    assert_eq!(read, made);
});
