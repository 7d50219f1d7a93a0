//! A static embedding model in Model2Vec's layout: a folder with `model.safetensors` (one
//! tensor `embeddings`, a row per vocabulary token), `tokenizer.json` and `config.json`. A
//! text's vector is the mean of its tokens' rows, normalised: no attention pass, so a
//! paragraph embeds in microseconds. Any problem loading it is one message naming the folder
//! and what to do.

use std::path::{Path, PathBuf};

use super::tokenize::{Memo, WordPiece};
use crate::error::{Error, Result};

/// A loaded static model.
pub struct StaticModel {
    emb: Vec<f32>,
    dim: usize,
    tokenizer: WordPiece,
    normalize: bool,
    /// What vectors of this model are recorded under: its folder's name and a hash of its
    /// files, so vectors of two models (or two versions of one) are never compared.
    pub id: String,
}

/// The one message for a model folder that cannot be used.
pub fn unusable(dir: &Path, why: impl std::fmt::Display) -> Error {
    Error::Invalid(format!(
        "no usable embedding model at {} ({why}); run `pidx model distill --from FILE` or \
         `pidx model fetch`, or point --model at a Model2Vec folder",
        dir.display()
    ))
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StaticModel({})", self.id)
    }
}

impl StaticModel {
    /// Loads the model in `dir`.
    ///
    /// # Errors
    /// `Invalid` naming the folder when a file is missing or not what it should be.
    pub fn load(dir: &Path) -> Result<StaticModel> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| unusable(dir, format!("{name}: {e}")))
        };
        let weights = read("model.safetensors")?;
        let tok_bytes = read("tokenizer.json")?;
        let config: serde_json::Value = match std::fs::read(dir.join("config.json")) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| unusable(dir, format!("config.json: {e}")))?,
            Err(_) => serde_json::Value::Null,
        };
        let tok_json: serde_json::Value = serde_json::from_slice(&tok_bytes)
            .map_err(|e| unusable(dir, format!("tokenizer.json: {e}")))?;
        let tokenizer = WordPiece::from_json(&tok_json).map_err(|e| unusable(dir, e))?;
        let mut tensors = super::tensors::read(&weights).map_err(|e| unusable(dir, e))?;
        let t = tensors
            .remove("embeddings")
            .ok_or_else(|| unusable(dir, "model.safetensors has no `embeddings` tensor"))?;
        if t.shape.len() != 2 || t.shape[0] < tokenizer.len() || t.shape[1] == 0 {
            return Err(unusable(
                dir,
                format!(
                    "embeddings of shape {:?} do not fit a vocabulary of {}",
                    t.shape,
                    tokenizer.len()
                ),
            ));
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let hash = xxhash_rust::xxh3::xxh3_64(&weights) ^ xxhash_rust::xxh3::xxh3_64(&tok_bytes);
        Ok(StaticModel {
            dim: t.shape[1],
            emb: t.data,
            tokenizer,
            normalize: config["normalize"].as_bool().unwrap_or(true),
            id: format!("{name}:{hash:016x}:{}", t.shape[1]),
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether `text` holds a word the model knows whole ([`WordPiece::knows_a_word`]): a
    /// query without one has no meaning to search by.
    pub fn knows_a_word(&self, text: &str) -> bool {
        self.tokenizer.knows_a_word(text)
    }

    /// The vector of `text` (unit length when the model normalises); `None` when no token of
    /// it is known.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.embed_with(text, &mut Memo::default())
    }

    /// [`embed`](Self::embed) with a memo of the unknown words' pieces kept across texts
    /// (what a pass over many texts uses).
    pub fn embed_with(&self, text: &str, memo: &mut Memo) -> Option<Vec<f32>> {
        let mut ids = Vec::new();
        self.tokenizer.encode_with(text, &mut ids, memo);
        if ids.is_empty() {
            return None;
        }
        let mut v = vec![0f32; self.dim];
        self.sum_rows(&ids, &mut v);
        let n = ids.len() as f32;
        v.iter_mut().for_each(|a| *a /= n);
        if self.normalize {
            let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            if norm == 0.0 {
                return None;
            }
            v.iter_mut().for_each(|a| *a /= norm);
        }
        Some(v)
    }

    /// Adds the rows of `ids` into `v`, a slice of [`LANES`] dimensions at a time over every
    /// token: the slice's sums stay in registers instead of going to memory and back once a
    /// token. Each dimension is still summed in token order, so the result is the same to the
    /// bit as a row at a time.
    fn sum_rows(&self, ids: &[u32], v: &mut [f32]) {
        const LANES: usize = 32;
        for (c, out) in v.chunks_mut(LANES).enumerate() {
            let at = c * LANES;
            if let Ok(out) = <&mut [f32; LANES]>::try_from(&mut *out) {
                let mut acc = [0f32; LANES];
                for id in ids {
                    let start = *id as usize * self.dim + at;
                    let row = &self.emb[start..start + LANES];
                    for (a, b) in acc.iter_mut().zip(row) {
                        *a += b;
                    }
                }
                *out = acc;
            } else {
                for id in ids {
                    let start = *id as usize * self.dim + at;
                    let row = &self.emb[start..start + out.len()];
                    for (a, b) in out.iter_mut().zip(row) {
                        *a += b;
                    }
                }
            }
        }
    }
}

/// Where `pidx model` keeps models: `models/` beside the index's default place.
pub fn models_dir() -> PathBuf {
    dirs::data_local_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("pidx")
        .join("models")
}

/// The model folder pidx uses when none is named: the distilled one if there is one, else the
/// fetched default.
pub fn default_dir() -> PathBuf {
    models_dir().join(super::DEFAULT_NAME)
}

/// Cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
