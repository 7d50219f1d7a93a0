//! Small seeded PRNG (SplitMix64) and the distributions the generator needs.
//!
//! No external crate: output must be byte-identical for a given seed on every platform, so
//! everything here is integer arithmetic plus IEEE f64 operations that are exact or correctly rounded
//! (`ln`/`exp`/`powf` are used only for sizes and word ranks, where a last-bit difference between libms
//! would not change the rounded result in practice).

/// SplitMix64: 64-bit state, passes BigCrush, one add and a few multiplies per output.
#[derive(Clone)]
pub struct Rng(u64);

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64 finaliser; a good 64-bit mixing function on its own.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Derive an independent seed from a parent seed and a stream number.
pub fn derive(seed: u64, stream: u64) -> u64 {
    mix64(seed ^ mix64(stream.wrapping_add(GOLDEN)))
}

/// A bijection on u32 (Wellons' lowbias32): distinct inputs give distinct outputs, so entry ids
/// built as `perm32(key + counter)` are unique within a file without keeping a set.
pub fn perm32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(mix64(seed ^ 0x5eed_0fc0_ffee))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the tiny bias is irrelevant here).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + ((self.next_u64() as u128 * (hi - lo + 1) as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// A uniformly chosen element (for `&str` tables and other `Copy` items).
    #[inline]
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// Index drawn with the given relative weights.
    pub fn weighted(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut x = self.f64() * total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// Standard normal (Box-Muller, one value per call).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.f64(); // (0, 1]
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Log-normal with the given median and shape.
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }

    /// Log-normal size in bytes clamped to `[lo, hi]`.
    pub fn size(&mut self, median: f64, sigma: f64, lo: usize, hi: usize) -> usize {
        (self.lognormal(median, sigma) as usize).clamp(lo, hi.max(lo))
    }

    /// Rank in `0..n` with P(k) roughly proportional to 1/(k+1) (log-uniform): rank 0 is very
    /// common, the last ranks are rare. O(1): one `exp`.
    #[inline]
    pub fn zipf(&mut self, n: usize) -> usize {
        let r = ((n as f64 + 1.0).ln() * self.f64()).exp() as usize;
        r.saturating_sub(1).min(n - 1)
    }

    /// Geometric count >= 1 with the given mean.
    pub fn geometric(&mut self, mean: f64) -> usize {
        let p = 1.0 / mean.max(1.0);
        let mut n = 1;
        while n < 1000 && !self.chance(p) {
            n += 1;
        }
        n
    }
}
