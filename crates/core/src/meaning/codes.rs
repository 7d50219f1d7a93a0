//! Sign codes: a vector as one bit a dimension (set where the component is positive), packed
//! in 64-bit words. The Hamming distance of two codes tracks the angle of their vectors
//! (random-hyperplane hashing: each dimension a hyperplane), so a scan of every passage's code,
//! 32 bytes for 256 dimensions and a few instructions each, picks the few hundred passages
//! worth scoring exactly out of hundreds of thousands (`query::search::meaning`).

/// 64-bit words of a code of `dim` dimensions.
pub fn words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// The code of an int8 vector (`ingest::embed::quantize`'s bytes, times `scale`) about
/// `center` (a bit set where the component is above the center's; zeros when it is empty).
pub fn of_i8(v: &[u8], scale: f32, center: &[f32]) -> Vec<u64> {
    // A word's 64 bits at a time without a branch a bit: every passage the sync stores has
    // its code made here, on the thread that writes.
    let mut out = vec![0u64; words(v.len())];
    for (w, (bytes, at)) in out.iter_mut().zip(v.chunks(64).zip((0..).step_by(64))) {
        let mut bits = 0u64;
        for (k, b) in bytes.iter().enumerate() {
            let c = center.get(at + k).copied().unwrap_or(0.0);
            bits |= u64::from((*b as i8) as f32 * scale > c) << k;
        }
        *w = bits;
    }
    out
}

/// The code of a float vector about `center`.
pub fn of_f32(v: &[f32], center: &[f32]) -> Vec<u64> {
    let at = |d: usize| center.get(d).copied().unwrap_or(0.0);
    pack(v.iter().enumerate().map(|(d, x)| *x > at(d)), v.len())
}

/// The mean of `vectors` (int8 with their scales), what codes are taken about.
pub fn mean<'a>(vectors: impl Iterator<Item = (&'a [u8], f32)>, dim: usize) -> Vec<f32> {
    let mut sum = vec![0f64; dim];
    let mut n = 0usize;
    for (v, scale) in vectors {
        for (s, b) in sum.iter_mut().zip(v) {
            *s += ((*b as i8) as f32 * scale) as f64;
        }
        n += 1;
    }
    sum.iter().map(|s| (*s / n.max(1) as f64) as f32).collect()
}

/// A center as stored (f32 little-endian), and back.
pub fn center_bytes(c: &[f32]) -> Vec<u8> {
    c.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn center_of(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect()
}

fn pack(bits: impl Iterator<Item = bool>, dim: usize) -> Vec<u64> {
    let mut out = vec![0u64; words(dim)];
    for (d, b) in bits.enumerate() {
        if b {
            out[d / 64] |= 1 << (d % 64);
        }
    }
    out
}

/// Codes as stored: each word little-endian.
pub fn to_bytes(code: &[u64], out: &mut Vec<u8>) {
    for w in code {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Hamming distances of `query` (of `W` words) to every code packed in `bytes`, handed to
/// `each` with the code's position. `W` is a constant so the loop is unrolled: 256
/// dimensions are four XORs and four popcounts a passage.
#[inline(always)]
fn distances<const W: usize>(query: &[u64], bytes: &[u8], mut each: impl FnMut(usize, u32)) {
    let q: [u64; W] = std::array::from_fn(|i| query[i]);
    for (at, code) in bytes.chunks_exact(W * 8).enumerate() {
        let mut d = 0;
        for (i, w) in code.chunks_exact(8).enumerate() {
            let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            d += (w ^ q[i]).count_ones();
        }
        each(at, d);
    }
}

/// Hamming distances of `query` to every code packed in `bytes`, handed to `each` with the
/// code's position, with the CPU's popcount instruction where it has one: x86-64's baseline
/// lacks it, and counting bits without it is a dozen instructions a word (400,000 codes of
/// four words a search).
pub fn distances_any(query: &[u64], bytes: &[u8], each: impl FnMut(usize, u32)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the instruction, checked just above.
        unsafe { distances_popcnt(query, bytes, each) };
        return;
    }
    distances_by_len(query, bytes, each);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn distances_popcnt(query: &[u64], bytes: &[u8], each: impl FnMut(usize, u32)) {
    distances_by_len(query, bytes, each);
}

/// [`distances`] for any code length: `W` chosen from the query's.
#[inline(always)]
fn distances_by_len(query: &[u64], bytes: &[u8], each: impl FnMut(usize, u32)) {
    match query.len() {
        1 => distances::<1>(query, bytes, each),
        2 => distances::<2>(query, bytes, each),
        4 => distances::<4>(query, bytes, each),
        6 => distances::<6>(query, bytes, each),
        8 => distances::<8>(query, bytes, each),
        12 => distances::<12>(query, bytes, each),
        n => {
            let mut each = each;
            for (at, code) in bytes.chunks_exact(n * 8).enumerate() {
                let d = code
                    .chunks_exact(8)
                    .zip(query)
                    .map(|(w, q)| {
                        (u64::from_le_bytes(w.try_into().unwrap_or([0; 8])) ^ q).count_ones()
                    })
                    .sum();
                each(at, d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_count_the_dimensions_whose_signs_differ() {
        let a: Vec<f32> = (0..130)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let mut b = a.clone();
        for i in [0, 64, 129] {
            b[i] = -b[i];
        }
        let (ca, cb) = (of_f32(&a, &[]), of_f32(&b, &[]));
        assert_eq!(ca.len(), 3);
        let mut bytes = Vec::new();
        to_bytes(&ca, &mut bytes);
        to_bytes(&cb, &mut bytes);
        let mut got = Vec::new();
        distances_any(&ca, &bytes, |at, d| got.push((at, d)));
        assert_eq!(got, [(0, 0), (1, 3)]);
        let q: Vec<u8> = a.iter().map(|x| (*x as i8 * 100) as u8).collect();
        assert_eq!(of_i8(&q, 0.01, &[]), ca);
        // About a center: the signs of the differences.
        let center = vec![0.5f32; 130];
        let c = of_i8(&q, 0.01, &center);
        assert_eq!(c, of_f32(&a, &center));
        assert_eq!(c, ca, "1 > 0.5 and -1 < 0.5");
        assert_eq!(of_f32(&[0.4, 0.6], &[0.5, 0.5]), [0b10]);
        assert_eq!(center_of(&center_bytes(&[0.25, -1.0])), [0.25, -1.0]);
    }
}
