//! A BERT encoder's forward pass in plain Rust (batched `sgemm` from `matrixmultiply`), enough
//! to run a sentence-transformer such as all-MiniLM-L6-v2 over short sequences of equal length
//! for `pidx model distill`. No padding or attention mask: distillation feeds every token as
//! `[CLS] token [SEP]`, three positions each. Weights as Hugging Face names them.

use std::collections::HashMap;

use super::tensors::Tensor;

/// The weights and shape of a BERT encoder.
pub struct Bert {
    pub(super) hidden: usize,
    pub(super) heads: usize,
    pub(super) eps: f32,
    pub(super) word: Tensor,
    pub(super) position: Tensor,
    pub(super) token_type: Tensor,
    pub(super) norm: (Vec<f32>, Vec<f32>),
    pub(super) layers: Vec<Layer>,
}

pub(super) struct Linear {
    pub(super) w: Vec<f32>, // [out, in]
    pub(super) b: Vec<f32>,
    pub(super) out: usize,
    pub(super) inp: usize,
}

pub(super) struct Layer {
    pub(super) q: Linear,
    pub(super) k: Linear,
    pub(super) v: Linear,
    pub(super) o: Linear,
    pub(super) norm1: (Vec<f32>, Vec<f32>),
    pub(super) up: Linear,
    pub(super) down: Linear,
    pub(super) norm2: (Vec<f32>, Vec<f32>),
}

impl Bert {
    /// The encoder of `tensors` (a `model.safetensors`), shaped by `config` (its `config.json`).
    pub fn new(
        mut tensors: HashMap<String, Tensor>,
        config: &serde_json::Value,
    ) -> Result<Bert, String> {
        let prefix = if tensors.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let mut take = |name: &str| -> Result<Tensor, String> {
            tensors
                .remove(&format!("{prefix}{name}"))
                .ok_or_else(|| format!("the model has no tensor {name}"))
        };
        let hidden = config["hidden_size"].as_u64().unwrap_or(0) as usize;
        let heads = config["num_attention_heads"].as_u64().unwrap_or(0) as usize;
        let n_layers = config["num_hidden_layers"].as_u64().unwrap_or(0) as usize;
        if hidden == 0 || heads == 0 || !hidden.is_multiple_of(heads) || n_layers == 0 {
            return Err("config.json does not describe a BERT encoder".into());
        }
        if config["hidden_act"].as_str().is_some_and(|a| a != "gelu") {
            return Err("only BERT encoders with the gelu activation are supported".into());
        }
        let eps = config["layer_norm_eps"].as_f64().unwrap_or(1e-12) as f32;
        let emb_norm = norm(&mut take, "embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(n_layers);
        for i in 0..n_layers {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                norm1: norm(&mut take, &format!("{p}.attention.output.LayerNorm"))?,
                norm2: norm(&mut take, &format!("{p}.output.LayerNorm"))?,
                q: linear(&mut take, &format!("{p}.attention.self.query"))?,
                k: linear(&mut take, &format!("{p}.attention.self.key"))?,
                v: linear(&mut take, &format!("{p}.attention.self.value"))?,
                o: linear(&mut take, &format!("{p}.attention.output.dense"))?,
                up: linear(&mut take, &format!("{p}.intermediate.dense"))?,
                down: linear(&mut take, &format!("{p}.output.dense"))?,
            });
        }
        Ok(Bert {
            hidden,
            heads,
            eps,
            word: take("embeddings.word_embeddings.weight")?,
            position: take("embeddings.position_embeddings.weight")?,
            token_type: take("embeddings.token_type_embeddings.weight")?,
            norm: emb_norm,
            layers,
        })
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The vocabulary size of the embedding table.
    pub fn vocab(&self) -> usize {
        self.word.shape[0]
    }

    /// Mean-pooled outputs of `seqs` (each of length `len`, ids concatenated): one row of
    /// `hidden` per sequence.
    pub fn pooled(&self, ids: &[u32], len: usize) -> Vec<f32> {
        let h = self.hidden;
        let rows = ids.len();
        let mut x = vec![0f32; rows * h];
        for (r, &id) in ids.iter().enumerate() {
            let w = &self.word.data[id as usize * h..][..h];
            let p = &self.position.data[(r % len) * h..][..h];
            let t = &self.token_type.data[..h];
            for j in 0..h {
                x[r * h + j] = w[j] + p[j] + t[j];
            }
        }
        layer_norm(&mut x, h, &self.norm, self.eps);
        for layer in &self.layers {
            self.layer(layer, &mut x, len);
        }
        let seqs = rows / len;
        let mut out = vec![0f32; seqs * h];
        for s in 0..seqs {
            for r in 0..len {
                for j in 0..h {
                    out[s * h + j] += x[(s * len + r) * h + j] / len as f32;
                }
            }
        }
        out
    }

    fn layer(&self, l: &Layer, x: &mut [f32], len: usize) {
        let h = self.hidden;
        let rows = x.len() / h;
        let (q, k, v) = (l.q.apply(x), l.k.apply(x), l.v.apply(x));
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut ctx = vec![0f32; rows * h];
        let mut scores = vec![0f32; len];
        for s in 0..rows / len {
            for head in 0..self.heads {
                let off = head * d;
                for i in 0..len {
                    let qi = &q[(s * len + i) * h + off..][..d];
                    for (j, sc) in scores.iter_mut().enumerate() {
                        let kj = &k[(s * len + j) * h + off..][..d];
                        *sc = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale;
                    }
                    softmax(&mut scores);
                    let ci = &mut ctx[(s * len + i) * h + off..][..d];
                    for (j, sc) in scores.iter().enumerate() {
                        let vj = &v[(s * len + j) * h + off..][..d];
                        for t in 0..d {
                            ci[t] += sc * vj[t];
                        }
                    }
                }
            }
        }
        let attn = l.o.apply(&ctx);
        for (a, b) in x.iter_mut().zip(&attn) {
            *a += b;
        }
        layer_norm(x, h, &l.norm1, self.eps);
        let mut up = l.up.apply(x);
        up.iter_mut().for_each(|u| *u = gelu(*u));
        let down = l.down.apply(&up);
        for (a, b) in x.iter_mut().zip(&down) {
            *a += b;
        }
        layer_norm(x, h, &l.norm2, self.eps);
    }
}

fn norm(
    take: &mut impl FnMut(&str) -> Result<Tensor, String>,
    name: &str,
) -> Result<(Vec<f32>, Vec<f32>), String> {
    Ok((
        take(&format!("{name}.weight"))?.data,
        take(&format!("{name}.bias"))?.data,
    ))
}

fn linear(
    take: &mut impl FnMut(&str) -> Result<Tensor, String>,
    name: &str,
) -> Result<Linear, String> {
    let w = take(&format!("{name}.weight"))?;
    let b = take(&format!("{name}.bias"))?;
    Ok(Linear {
        out: w.shape[0],
        inp: w.shape[1],
        w: w.data,
        b: b.data,
    })
}

impl Linear {
    /// `x · Wᵀ + b` for the rows of `x`.
    fn apply(&self, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / self.inp;
        let mut out = Vec::with_capacity(rows * self.out);
        for _ in 0..rows {
            out.extend_from_slice(&self.b);
        }
        // SAFETY: the slices hold rows×inp, out×inp and rows×out floats, as the strides say.
        unsafe {
            matrixmultiply::sgemm(
                rows,
                self.inp,
                self.out,
                1.0,
                x.as_ptr(),
                self.inp as isize,
                1,
                self.w.as_ptr(),
                1,
                self.inp as isize,
                1.0,
                out.as_mut_ptr(),
                self.out as isize,
                1,
            );
        }
        out
    }
}

fn layer_norm(x: &mut [f32], h: usize, (w, b): &(Vec<f32>, Vec<f32>), eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for j in 0..h {
            row[j] = (row[j] - mean) * inv * w[j] + b[j];
        }
    }
}

fn softmax(v: &mut [f32]) {
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for x in v.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    v.iter_mut().for_each(|x| *x /= sum);
}

/// BERT's exact gelu, `x·Φ(x)`, with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26).
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

pub(super) fn erf(x: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_4 * t - 1.453_152_1) * t) + 1.421_413_7) * t - 0.284_496_74) * t
            + 0.254_829_6)
            * t
            * (-x * x).exp();
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_gelu_match_known_values() {
        assert!((erf(0.5) - 0.520_499_9).abs() < 1e-6);
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-5);
        assert!((gelu(-1.0) + 0.158_655_3).abs() < 1e-5);
    }

    #[test]
    fn linear_is_x_times_w_transposed_plus_b() {
        let l = Linear {
            w: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], // 2 out × 3 in
            b: vec![0.5, -1.0],
            out: 2,
            inp: 3,
        };
        assert_eq!(l.apply(&[1.0, 0.0, 2.0]), [7.5, 15.0]);
    }
}
