//! The transformer's forward pass made fast on x86-64 CPUs with AVX-512 VNNI: the linear
//! layers in int8 (weights quantised once per output row, activations per token at each layer)
//! multiplied with `vpdpbusd`, 64 multiply-adds an instruction against 16 for f32 FMA;
//! attention as per-head `sgemm`s; softmax, GELU and layer norms vectorised. Windows of
//! different lengths run together: the linear layers treat every token as one row, so a batch
//! needs no padding, and attention runs per window. `bert.rs` stays the reference (and what
//! `pidx model distill` runs); this path agrees with it to a cosine above 0.99.

use std::arch::x86_64::*;

use super::bert::{Bert, Linear};

/// A [`Bert`]'s linear layers quantised for the fast path; only made on a CPU that runs it.
pub(super) struct Fast {
    layers: Vec<Layer>,
}

struct Layer {
    qkv: QLinear,
    o: QLinear,
    up: QLinear,
    down: QLinear,
}

/// Output columns of a panel: four 512-bit vectors of 16 i32 sums.
const PANEL: usize = 64;

/// A linear layer's weights as int8, `scale[n]` each row, packed for [`gemm`]: panels of
/// [`PANEL`] output columns, each `[k / 4][vector][16 columns][4 k]`, so that one 64-byte load
/// holds 4 consecutive inputs of 16 columns, what `vpdpbusd` multiplies by 4 broadcast bytes.
struct QLinear {
    out: usize,
    /// `inp` rounded up to a multiple of 4; the padding weighs 0.
    kp: usize,
    packed: Vec<i8>,
    // Per output column, padded to a multiple of 16 for whole-vector loads.
    scale: Vec<f32>,
    bias: Vec<f32>,
    /// 128 × the row's sum: activations are stored as `q + 128` (unsigned for `vpdpbusd`).
    offset: Vec<i32>,
}

impl QLinear {
    fn new(w: &[f32], b: &[f32], out: usize, inp: usize) -> QLinear {
        let kp = inp.next_multiple_of(4);
        let np = out.next_multiple_of(16);
        let mut q = vec![0i8; np * kp];
        let (mut scale, mut offset) = (vec![0f32; np], vec![0i32; np]);
        for n in 0..out {
            let row = &w[n * inp..][..inp];
            let s = scale_of(row);
            scale[n] = s;
            for (k, &v) in row.iter().enumerate() {
                q[n * kp + k] = (v / s).round().clamp(-127.0, 127.0) as i8;
            }
            offset[n] = 128 * q[n * kp..][..kp].iter().map(|&v| v as i32).sum::<i32>();
        }
        let mut packed = Vec::with_capacity(np.next_multiple_of(PANEL) * kp);
        for c0 in (0..np).step_by(PANEL) {
            let nv = (np - c0).min(PANEL) / 16;
            for k4 in (0..kp).step_by(4) {
                for v in 0..nv {
                    for lane in 0..16 {
                        let n = c0 + v * 16 + lane;
                        packed.extend_from_slice(&q[n * kp + k4..][..4]);
                    }
                }
            }
        }
        let mut bias = b.to_vec();
        bias.resize(np, 0.0);
        QLinear {
            out,
            kp,
            packed,
            scale,
            bias,
            offset,
        }
    }

    fn of(l: &Linear) -> QLinear {
        QLinear::new(&l.w, &l.b, l.out, l.inp)
    }
}

/// The step that maps a row's largest magnitude to 127.
fn scale_of(row: &[f32]) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max > 0.0 {
        max / 127.0
    } else {
        1.0
    }
}

impl Fast {
    /// `bert`'s linear layers quantised, or `None` when this CPU lacks AVX-512 VNNI.
    pub(super) fn new(bert: &Bert) -> Option<Fast> {
        let ok = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
            && is_x86_feature_detected!("fma");
        ok.then(|| Fast {
            layers: bert
                .layers
                .iter()
                .map(|l| {
                    let cat = |f: fn(&Linear) -> &Vec<f32>| {
                        [&l.q, &l.k, &l.v]
                            .iter()
                            .flat_map(|x| f(x))
                            .copied()
                            .collect()
                    };
                    let (w, b): (Vec<f32>, Vec<f32>) = (cat(|x| &x.w), cat(|x| &x.b));
                    Layer {
                        qkv: QLinear::new(&w, &b, l.q.out * 3, l.q.inp),
                        o: QLinear::of(&l.o),
                        up: QLinear::of(&l.up),
                        down: QLinear::of(&l.down),
                    }
                })
                .collect(),
        })
    }

    /// Mean-pooled outputs of windows of lengths `lens` (ids concatenated): one row of
    /// `hidden` per window, as [`Bert::pooled`] gives for each window alone.
    pub(super) fn pooled(&self, bert: &Bert, ids: &[u32], lens: &[usize]) -> Vec<f32> {
        assert_eq!(lens.iter().sum::<usize>(), ids.len());
        // SAFETY: a `Fast` is only made when the CPU has the features `forward` is built for.
        unsafe { forward(self, bert, ids, lens) }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn forward(fast: &Fast, bert: &Bert, ids: &[u32], lens: &[usize]) -> Vec<f32> {
    let h = bert.hidden;
    let rows = ids.len();
    let mut x = vec![0f32; rows * h];
    let mut r = 0;
    for &len in lens {
        for pos in 0..len {
            let w = &bert.word.data[ids[r] as usize * h..][..h];
            let p = &bert.position.data[pos * h..][..h];
            let t = &bert.token_type.data[..h];
            for (j, v) in x[r * h..][..h].iter_mut().enumerate() {
                *v = w[j] + p[j] + t[j];
            }
            r += 1;
        }
    }
    layer_norm(&mut x, h, &bert.norm, bert.eps);
    let widest = fast.layers.iter().map(|l| l.up.kp.max(l.down.kp)).max();
    let inter = fast.layers.iter().map(|l| l.up.out).max().unwrap_or(0);
    let mut act = Quantized {
        q: vec![0; rows * widest.unwrap_or(0)],
        scale: vec![0.0; rows],
    };
    let mut qkv = vec![0f32; rows * 3 * h];
    let mut ctx = vec![0f32; rows * h];
    let mut up = vec![0f32; rows * inter];
    let longest = lens.iter().copied().max().unwrap_or(0);
    let mut scores = vec![0f32; longest * longest];
    let mut kt = vec![0f32; longest * h];
    for (l, ref_l) in fast.layers.iter().zip(&bert.layers) {
        act.set(&x, h, l.qkv.kp);
        gemm(&act, &l.qkv, &mut qkv, false);
        attention(&qkv, &mut ctx, lens, h, bert.heads, &mut scores, &mut kt);
        act.set(&ctx, h, l.o.kp);
        gemm(&act, &l.o, &mut x, true);
        layer_norm(&mut x, h, &ref_l.norm1, bert.eps);
        let up = &mut up[..rows * l.up.out];
        act.set(&x, h, l.up.kp);
        gemm(&act, &l.up, up, false);
        up.iter_mut().for_each(|u| *u = gelu(*u));
        act.set(up, l.up.out, l.down.kp);
        gemm(&act, &l.down, &mut x, true);
        layer_norm(&mut x, h, &ref_l.norm2, bert.eps);
    }
    let mut out = vec![0f32; lens.len() * h];
    let mut r = 0;
    for (s, &len) in lens.iter().enumerate() {
        let o = &mut out[s * h..][..h];
        for row in x[r * h..(r + len) * h].chunks_exact(h) {
            o.iter_mut().zip(row).for_each(|(a, b)| *a += b);
        }
        o.iter_mut().for_each(|a| *a /= len as f32);
        r += len;
    }
    out
}

/// Rows of activations quantised to `q + 128`, `scale[r]` each, with `kp` bytes a row.
struct Quantized {
    q: Vec<u8>,
    scale: Vec<f32>,
}

impl Quantized {
    /// Quantises the rows of `x` (`k` wide) into rows of `kp` bytes, padded with zero.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
    fn set(&mut self, x: &[f32], k: usize, kp: usize) {
        let rows = x.len() / k;
        for r in 0..rows {
            let row = &x[r * k..][..k];
            let s = scale_of_wide(row);
            self.scale[r] = s;
            let inv = 1.0 / s;
            let q = &mut self.q[r * kp..][..kp];
            for (d, &v) in q.iter_mut().zip(row) {
                // Adding 1.5·2²³ rounds to the nearest integer (ties to even), which lands in
                // the low bits: |v · inv| <= 127, so the low byte is q + 128. No float-to-int
                // cast, whose saturation keeps the loop from vectorising.
                *d = (v.mul_add(inv, MAGIC + 128.0).to_bits() & 0xff) as u8;
            }
            q[k..].fill(128);
        }
    }
}

/// [`scale_of`] with 16 running maxima, which the compiler turns into vector code.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn scale_of_wide(row: &[f32]) -> f32 {
    let mut m = [0f32; 16];
    let mut chunks = row.chunks_exact(16);
    for c in &mut chunks {
        for i in 0..16 {
            m[i] = m[i].max(c[i].abs());
        }
    }
    let max = chunks
        .remainder()
        .iter()
        .chain(&m)
        .fold(0f32, |a, v| a.max(v.abs()));
    if max > 0.0 {
        max / 127.0
    } else {
        1.0
    }
}

/// `out = a · Wᵀ + b` (or `out += …` when `add`), rows of `w.out` floats, for the first
/// `out.len() / w.out` rows of `a`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn gemm(a: &Quantized, w: &QLinear, out: &mut [f32], add: bool) {
    let rows = out.len() / w.out;
    assert!(a.q.len() >= rows * w.kp && a.scale.len() >= rows);
    assert!(w.packed.len() >= w.out.next_multiple_of(16) * w.kp);
    for c0 in (0..w.out).step_by(PANEL) {
        let nv = (w.out - c0).div_ceil(16).min(PANEL / 16);
        let tile = Tile {
            w,
            c0,
            panel: &w.packed[c0 * w.kp..],
        };
        let mut r = 0;
        while r + 4 <= rows {
            match nv {
                4 => tile.run::<4, 4>(a, r, out, add),
                3 => tile.run::<4, 3>(a, r, out, add),
                2 => tile.run::<4, 2>(a, r, out, add),
                _ => tile.run::<4, 1>(a, r, out, add),
            }
            r += 4;
        }
        for r in r..rows {
            match nv {
                4 => tile.run::<1, 4>(a, r, out, add),
                3 => tile.run::<1, 3>(a, r, out, add),
                2 => tile.run::<1, 2>(a, r, out, add),
                _ => tile.run::<1, 1>(a, r, out, add),
            }
        }
    }
}

/// One panel of a [`QLinear`]'s output columns, from `c0`.
struct Tile<'a> {
    w: &'a QLinear,
    c0: usize,
    panel: &'a [i8],
}

impl Tile<'_> {
    /// The `MR × NV·16` block of the output at row `r`: every sum in a register over the whole
    /// of `k`, then scaled, biased and stored (or added) with the columns past `out` masked.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
    #[inline]
    fn run<const MR: usize, const NV: usize>(
        &self,
        a: &Quantized,
        r: usize,
        out: &mut [f32],
        add: bool,
    ) {
        let (kp, n) = (self.w.kp, self.w.out);
        assert!(self.panel.len() >= kp * NV * 16 && a.q.len() >= (r + MR) * kp);
        assert!(out.len() >= (r + MR) * n && self.c0 + (NV - 1) * 16 < n);
        let b = self.panel.as_ptr();
        let arow = a.q[r * kp..].as_ptr();
        let mut acc = [[_mm512_setzero_si512(); NV]; MR];
        for k4 in 0..kp / 4 {
            // SAFETY: the panel holds kp / 4 steps of NV vectors (asserted above), and row
            // r + i of `a` holds kp bytes, k4 · 4 + 4 <= kp of them read here.
            unsafe {
                let bv: [__m512i; NV] = std::array::from_fn(|v| {
                    _mm512_loadu_si512(b.add((k4 * NV + v) * 64) as *const __m512i)
                });
                for (i, acc) in acc.iter_mut().enumerate() {
                    let four = (arow.add(i * kp + k4 * 4) as *const i32).read_unaligned();
                    let av = _mm512_set1_epi32(four);
                    for v in 0..NV {
                        acc[v] = _mm512_dpbusd_epi32(acc[v], av, bv[v]);
                    }
                }
            }
        }
        for (i, acc) in acc.iter().enumerate() {
            let sa = _mm512_set1_ps(a.scale[r + i]);
            for (v, &acc) in acc.iter().enumerate() {
                let c = self.c0 + v * 16;
                let lanes = (n - c).min(16);
                let mask: __mmask16 = ((1u32 << lanes) - 1) as __mmask16;
                let dst = out[(r + i) * n + c..][..lanes].as_mut_ptr();
                // SAFETY: `scale`, `bias` and `offset` are padded to whole vectors of 16, and
                // `dst` is written (and read) only in its `lanes` lanes, which are in `out`.
                unsafe {
                    let off = _mm512_loadu_si512(self.w.offset[c..].as_ptr() as *const __m512i);
                    let ws = _mm512_loadu_ps(self.w.scale[c..].as_ptr());
                    let bias = _mm512_loadu_ps(self.w.bias[c..].as_ptr());
                    let sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, off));
                    let mut y = _mm512_fmadd_ps(sum, _mm512_mul_ps(ws, sa), bias);
                    if add {
                        y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, dst));
                    }
                    _mm512_mask_storeu_ps(dst, mask, y);
                }
            }
        }
    }
}

/// Self-attention of each window on its own: per head `softmax(Q·Kᵀ/√d)·V` as two [`sgemm`]s,
/// from `qkv`'s rows of `[q | k | v]` into `ctx`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn attention(
    qkv: &[f32],
    ctx: &mut [f32],
    lens: &[usize],
    h: usize,
    heads: usize,
    scores: &mut [f32],
    kt: &mut [f32],
) {
    let d = h / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let mut r0 = 0;
    for &len in lens {
        let rows = &qkv[r0 * 3 * h..(r0 + len) * 3 * h];
        for head in 0..heads {
            // Kᵀ, so that both products read their right-hand side by rows.
            for (j, row) in rows.chunks_exact(3 * h).enumerate() {
                for (t, &v) in row[h + head * d..][..d].iter().enumerate() {
                    kt[t * len + j] = v;
                }
            }
            let scores = &mut scores[..len * len];
            let q = &rows[head * d..];
            sgemm((len, len, d), scale, (q, 3 * h), (kt, len), (scores, len));
            scores.chunks_exact_mut(len).for_each(|row| softmax(row));
            let v = &rows[2 * h + head * d..];
            let c = &mut ctx[r0 * h + head * d..];
            sgemm((len, d, len), 1.0, (scores, len), (v, 3 * h), (c, h));
        }
        r0 += len;
    }
}

/// `c = alpha · a · b` for row-major `a` (m × k), `b` (k × n) and `c` (m × n), each given with
/// the distance between its rows. With matrices this small (`k` and `n` of 32 to 256) a plain
/// register tile beats `matrixmultiply`, whose packing costs as much as the products.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn sgemm(
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    a: (&[f32], usize),
    b: (&[f32], usize),
    c: (&mut [f32], usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(a.0.len() >= (m - 1) * a.1 + k && c.0.len() >= (m - 1) * c.1 + n);
    assert!(k == 0 || b.0.len() >= (k - 1) * b.1 + n);
    for c0 in (0..n).step_by(64) {
        let at = |r| (r, c0, n, k, alpha);
        let mut r = 0;
        while r + 4 <= m {
            match (n - c0).div_ceil(16) {
                1 => ftile::<4, 1>(at(r), a, b, (c.0, c.1)),
                2 => ftile::<4, 2>(at(r), a, b, (c.0, c.1)),
                3 => ftile::<4, 3>(at(r), a, b, (c.0, c.1)),
                _ => ftile::<4, 4>(at(r), a, b, (c.0, c.1)),
            }
            r += 4;
        }
        for r in r..m {
            match (n - c0).div_ceil(16) {
                1 => ftile::<1, 1>(at(r), a, b, (c.0, c.1)),
                2 => ftile::<1, 2>(at(r), a, b, (c.0, c.1)),
                3 => ftile::<1, 3>(at(r), a, b, (c.0, c.1)),
                _ => ftile::<1, 4>(at(r), a, b, (c.0, c.1)),
            }
        }
    }
}

/// Rows `r..r + MR`, columns `c0..` (`NV` vectors, masked past `n`) of [`sgemm`]'s product.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
#[inline]
fn ftile<const MR: usize, const NV: usize>(
    (r, c0, n, k, alpha): (usize, usize, usize, usize, f32),
    (a, lda): (&[f32], usize),
    (b, ldb): (&[f32], usize),
    (c, ldc): (&mut [f32], usize),
) {
    let mask: [__mmask16; NV] =
        std::array::from_fn(|v| ((1u32 << (n - c0 - v * 16).min(16)) - 1) as __mmask16);
    let mut acc = [[_mm512_setzero_ps(); NV]; MR];
    for t in 0..k {
        // SAFETY: `sgemm` asserted that row t of `b` holds n floats and rows r..r + MR of `a`
        // hold k; every vector starts before column n (c0 + v·16 < n) and reads only the
        // lanes of its mask.
        unsafe {
            let bv: [__m512; NV] = std::array::from_fn(|v| {
                _mm512_maskz_loadu_ps(mask[v], b.as_ptr().add(t * ldb + c0 + v * 16))
            });
            for (i, acc) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.as_ptr().add((r + i) * lda + t));
                for v in 0..NV {
                    acc[v] = _mm512_fmadd_ps(av, bv[v], acc[v]);
                }
            }
        }
    }
    let alpha = _mm512_set1_ps(alpha);
    for (i, acc) in acc.iter().enumerate() {
        let row = &mut c[(r + i) * ldc..][..n];
        for (v, &acc) in acc.iter().enumerate() {
            // SAFETY: the row holds n floats, and the store writes only the mask's lanes,
            // columns c0 + v·16.. below n.
            unsafe {
                _mm512_mask_storeu_ps(
                    row.as_mut_ptr().add(c0 + v * 16),
                    mask[v],
                    _mm512_mul_ps(alpha, acc),
                )
            };
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn softmax(v: &mut [f32]) {
    let max = max16(v);
    v.iter_mut().for_each(|x| *x = exp(*x - max));
    let inv = 1.0 / sum16(v, |x| x);
    v.iter_mut().for_each(|x| *x *= inv);
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
fn layer_norm(x: &mut [f32], h: usize, (w, b): &(Vec<f32>, Vec<f32>), eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = sum16(row, |v| v) / h as f32;
        let var = sum16(row, |v| (v - mean) * (v - mean)) / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(w).zip(b) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// `Σ f(v)` in 16 running parts, so that it vectorises (f32 addition is not reassociated).
#[inline(always)]
fn sum16(v: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut parts = [0f32; 16];
    let mut chunks = v.chunks_exact(16);
    for c in &mut chunks {
        for i in 0..16 {
            parts[i] += f(c[i]);
        }
    }
    chunks.remainder().iter().map(|&x| f(x)).sum::<f32>() + parts.iter().sum::<f32>()
}

/// The largest of `v`, in 16 running parts as [`sum16`].
#[inline(always)]
fn max16(v: &[f32]) -> f32 {
    let mut parts = [f32::NEG_INFINITY; 16];
    let mut chunks = v.chunks_exact(16);
    for c in &mut chunks {
        for i in 0..16 {
            parts[i] = parts[i].max(c[i]);
        }
    }
    chunks
        .remainder()
        .iter()
        .chain(&parts)
        .copied()
        .fold(f32::NEG_INFINITY, f32::max)
}

/// 1.5·2²³: a float of this size has no fraction bits, and an integer added to it sits in
/// the low bits of its representation.
const MAGIC: f32 = 12_582_912.0;

/// `eˣ` to a few ulp for x in [-87, 88]: 2ⁿ · e^r with r in ±ln2/2 and a degree-6 polynomial.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // n = round(x · log2 e), in the low bits of `t` (as in `Quantized::set`).
    let t = x.mul_add(std::f32::consts::LOG2_E, MAGIC);
    let n = t - MAGIC;
    let r = n.mul_add(-0.693_359_4, x);
    let r = n.mul_add(2.121_944_4e-4, r);
    let p = 1.0 / 720.0;
    let p = p * r + 1.0 / 120.0;
    let p = p * r + 1.0 / 24.0;
    let p = p * r + 1.0 / 6.0;
    let p = p * r + 0.5;
    let p = p * r + 1.0;
    let p = p * r + 1.0;
    let two_n = t.to_bits().wrapping_sub(MAGIC.to_bits()).wrapping_add(127) << 23;
    p * f32::from_bits(two_n)
}

/// BERT's exact gelu as `bert.rs` computes it, with the fast [`exp`].
#[inline(always)]
fn gelu(x: f32) -> f32 {
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z.abs());
    let y = 1.0
        - (((((1.061_405_4 * t - 1.453_152_1) * t) + 1.421_413_7) * t - 0.284_496_74) * t
            + 0.254_829_6)
            * t
            * exp(-z * z);
    0.5 * x * (1.0 + y.copysign(z))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::tensors::Tensor;
    use super::*;

    /// Whether this CPU runs the fast path; says so loudly when it does not.
    fn cpu() -> bool {
        let ok = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
            && is_x86_feature_detected!("fma");
        if !ok {
            eprintln!("SKIPPED: this CPU has no AVX-512 VNNI");
        }
        ok
    }

    /// Numbers in ±`amp`, the same every run.
    fn noise(n: usize, seed: u64, amp: f32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * amp
            })
            .collect()
    }

    fn quantize(x: &[f32], k: usize, kp: usize) -> Quantized {
        let rows = x.len() / k;
        let mut q = Quantized {
            q: vec![0; rows * kp],
            scale: vec![0.0; rows],
        };
        // SAFETY: only called after `cpu()`.
        unsafe { q.set(x, k, kp) };
        q
    }

    #[test]
    fn int8_gemm_matches_a_scalar_reference_on_odd_sizes() {
        if !cpu() {
            return;
        }
        for (rows, inp, out) in [(7, 37, 83), (1, 5, 3), (9, 130, 129), (4, 64, 64)] {
            let x = noise(rows * inp, 1, 2.0);
            let w = noise(out * inp, 2, 0.5);
            let b = noise(out, 3, 0.1);
            let lin = QLinear::new(&w, &b, out, inp);
            let a = quantize(&x, inp, lin.kp);
            let prior = noise(rows * out, 4, 1.0);
            let (mut set, mut added) = (vec![f32::NAN; rows * out], prior.clone());
            // SAFETY: only after `cpu()`.
            unsafe {
                gemm(&a, &lin, &mut set, false);
                gemm(&a, &lin, &mut added, true);
            }
            for r in 0..rows {
                for n in 0..out {
                    let ws = lin.scale[n];
                    let sum: i32 = (0..inp)
                        .map(|k| {
                            let qw = (w[n * inp + k] / ws).round() as i32;
                            (a.q[r * lin.kp + k] as i32 - 128) * qw
                        })
                        .sum();
                    let want = sum as f32 * a.scale[r] * ws + b[n];
                    let got = set[r * out + n];
                    assert!(
                        (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                        "{got} {want}"
                    );
                    let got = added[r * out + n] - prior[r * out + n];
                    assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0) + 1e-5);
                    // And near the f32 product: int8 loses about 1% of a sum this long.
                    let exact: f32 = (0..inp).map(|k| x[r * inp + k] * w[n * inp + k]).sum();
                    let exact = exact + b[n];
                    let size: f32 = (0..inp)
                        .map(|k| (x[r * inp + k] * w[n * inp + k]).abs())
                        .sum();
                    assert!((set[r * out + n] - exact).abs() <= 0.03 * size + 1e-3);
                }
            }
        }
    }

    #[test]
    fn f32_sgemm_matches_a_scalar_reference_on_odd_sizes() {
        if !cpu() {
            return;
        }
        for (m, n, k) in [(7, 83, 13), (1, 1, 1), (5, 14, 40), (9, 130, 3)] {
            let (lda, ldb, ldc) = (k + 3, n + 5, n + 1);
            let a = noise(m * lda, 8, 1.0);
            let b = noise(k * ldb, 9, 1.0);
            let mut c = vec![f32::NAN; m * ldc];
            // SAFETY: only after `cpu()`.
            unsafe { sgemm((m, n, k), 0.5, (&a, lda), (&b, ldb), (&mut c, ldc)) };
            for i in 0..m {
                for j in 0..n {
                    let want = 0.5 * (0..k).map(|t| a[i * lda + t] * b[t * ldb + j]).sum::<f32>();
                    assert!((c[i * ldc + j] - want).abs() < 1e-4, "{i} {j}");
                }
                assert!(c[i * ldc + n..(i + 1) * ldc].iter().all(|v| v.is_nan()));
            }
        }
    }

    #[test]
    fn quantised_rows_come_back_within_half_a_step() {
        if !cpu() {
            return;
        }
        let (k, kp) = (45, 48);
        let mut x = noise(3 * k, 5, 3.0);
        x[k..2 * k].fill(0.0);
        let a = quantize(&x, k, kp);
        for r in 0..3 {
            let s = a.scale[r];
            for j in 0..k {
                let back = (a.q[r * kp + j] as f32 - 128.0) * s;
                assert!((back - x[r * k + j]).abs() <= s * 0.5 + 1e-6);
            }
            assert!(a.q[r * kp + k..][..kp - k].iter().all(|&q| q == 128));
        }
        let max = x[..k].iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(
            a.q[..k].iter().any(|&q| q == 1 || q == 255) && (a.scale[0] * 127.0 - max).abs() < 1e-5
        );
    }

    #[test]
    fn exp_and_gelu_match_the_standard_ones() {
        for i in -2000..=2000 {
            let x = i as f32 / 25.0;
            let (want, got) = (x.exp(), exp(x));
            if x > -80.0 {
                assert!((got - want).abs() <= 2e-6 * want, "exp({x}) {got} {want}");
            }
            let want = 0.5 * x * (1.0 + super::super::bert::erf(x / std::f32::consts::SQRT_2));
            assert!(
                (gelu(x) - want).abs() <= 1e-5 * want.abs().max(1.0),
                "gelu({x})"
            );
        }
    }

    /// A two-layer BERT of odd sizes with made-up weights.
    fn random_bert() -> Bert {
        let (h, inter, vocab, layers) = (42, 99, 60, 2);
        let mut t = HashMap::new();
        let mut add = |name: String, shape: Vec<usize>, amp: f32, base: f32| {
            let n = shape.iter().product();
            let data = noise(n, t.len() as u64 + 7, amp)
                .iter()
                .map(|v| v + base)
                .collect();
            t.insert(name, Tensor { shape, data });
        };
        add(
            "embeddings.word_embeddings.weight".into(),
            vec![vocab, h],
            0.1,
            0.0,
        );
        add(
            "embeddings.position_embeddings.weight".into(),
            vec![64, h],
            0.1,
            0.0,
        );
        add(
            "embeddings.token_type_embeddings.weight".into(),
            vec![2, h],
            0.1,
            0.0,
        );
        add("embeddings.LayerNorm.weight".into(), vec![h], 0.2, 1.0);
        add("embeddings.LayerNorm.bias".into(), vec![h], 0.1, 0.0);
        for l in 0..layers {
            let p = format!("encoder.layer.{l}");
            for (name, out, inp) in [
                ("attention.self.query", h, h),
                ("attention.self.key", h, h),
                ("attention.self.value", h, h),
                ("attention.output.dense", h, h),
                ("intermediate.dense", inter, h),
                ("output.dense", h, inter),
            ] {
                add(format!("{p}.{name}.weight"), vec![out, inp], 0.3, 0.0);
                add(format!("{p}.{name}.bias"), vec![out], 0.1, 0.0);
            }
            for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
                add(format!("{p}.{name}.weight"), vec![h], 0.2, 1.0);
                add(format!("{p}.{name}.bias"), vec![h], 0.1, 0.0);
            }
        }
        let config = serde_json::json!({"hidden_size": h, "num_attention_heads": 3,
            "num_hidden_layers": layers, "intermediate_size": inter, "hidden_act": "gelu"});
        Bert::new(t, &config).unwrap()
    }

    #[test]
    fn the_fast_pass_agrees_with_the_reference_on_a_batch_of_windows() {
        if !cpu() {
            return;
        }
        let bert = random_bert();
        let fast = Fast::new(&bert).unwrap();
        let lens = [3, 17, 1, 40, 6];
        let ids: Vec<u32> = (0..lens.iter().sum::<usize>())
            .map(|i| ((i * 37 + 11) % 60) as u32)
            .collect();
        let got = fast.pooled(&bert, &ids, &lens);
        let mut r = 0;
        for (s, &len) in lens.iter().enumerate() {
            let want = bert.pooled(&ids[r..r + len], len);
            let got = &got[s * 42..][..42];
            // A batch changes nothing: activations are scaled per token, attention per window.
            assert_eq!(got, fast.pooled(&bert, &ids[r..r + len], &[len]));
            let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
            let cos = dot(got, &want) / (dot(got, got) * dot(&want, &want)).sqrt();
            assert!(cos >= 0.99, "window {s}: cosine {cos}");
            r += len;
        }
    }
}
