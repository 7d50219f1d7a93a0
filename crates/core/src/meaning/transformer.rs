//! A sentence-transformer run whole (all-MiniLM-L6-v2's six layers, `bert.rs`) over one text:
//! `[CLS] tokens [SEP]`, at most [`MAX_TOKENS`], mean-pooled and normalised, as
//! sentence-transformers embeds it. A 256-token window is ~5 GFLOP: on a CPU with AVX-512
//! VNNI the linear layers run in int8 (`fast.rs`), many times faster than the f32 reference
//! (`bert.rs`), which other CPUs run and `PIDX_TRANSFORMER=f32` forces.

use std::collections::HashMap;
use std::path::Path;

use super::bert::Bert;
#[cfg(target_arch = "x86_64")]
use super::fast::Fast;
use super::tokenize::WordPiece;
use crate::error::{Error, Result};

/// Tokens of a window, `[CLS]` and `[SEP]` included (the model was trained on up to 256).
pub const MAX_TOKENS: usize = 256;

/// Tokens a batch of [`Transformer::embed_many`] runs through the layers together: enough rows
/// to use each weight loaded many times, few enough for the activations to stay in a core's
/// L2 cache (2,048 measured 10-25% slower on 256-token windows than 512).
const BATCH_TOKENS: usize = 512;

/// A loaded transformer with its tokenizer.
pub struct Transformer {
    bert: Bert,
    fast: Option<Fast>,
    tokenizer: WordPiece,
    cls: u32,
    sep: u32,
}

impl Transformer {
    /// The sentence-transformer in `from` (a folder or a zip, as `pidx model distill` takes),
    /// run by the int8 path where the CPU has AVX-512 VNNI unless `$PIDX_TRANSFORMER` is `f32`.
    ///
    /// # Errors
    /// `Invalid` naming the source when a file is missing or not a BERT encoder.
    pub fn load(from: &Path) -> Result<Transformer> {
        let files = super::distill::source_files(from)
            .map_err(|why| Error::Invalid(format!("cannot load {}: {why}", from.display())))?;
        Transformer::from_files(&files, from)
    }

    /// The sentence-transformer of `files` (config.json, tokenizer.json and model.safetensors
    /// by name, as read from `from`).
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub fn from_files(files: &HashMap<String, Vec<u8>>, from: &Path) -> Result<Transformer> {
        let bad = |why: String| Error::Invalid(format!("cannot load {}: {why}", from.display()));
        let get = |name: &str| {
            files
                .get(name)
                .ok_or_else(|| bad(format!("it has no {name}")))
        };
        let config: serde_json::Value =
            serde_json::from_slice(get("config.json")?).map_err(|e| bad(e.to_string()))?;
        let tok_json: serde_json::Value =
            serde_json::from_slice(get("tokenizer.json")?).map_err(|e| bad(e.to_string()))?;
        let tokenizer = WordPiece::from_json(&tok_json).map_err(bad)?;
        let tensors = super::tensors::read(get("model.safetensors")?).map_err(bad)?;
        let bert = Bert::new(tensors, &config).map_err(bad)?;
        if bert.position.shape[0] < 3 {
            return Err(bad("it has fewer than 3 positions".into()));
        }
        let (Some(cls), Some(sep)) = (tokenizer.id("[CLS]"), tokenizer.id("[SEP]")) else {
            return Err(bad("its vocabulary has no [CLS] or [SEP]".into()));
        };
        let fast = match std::env::var("PIDX_TRANSFORMER") {
            Ok(v) if v == "f32" => None,
            _ => Fast::new(&bert),
        };
        Ok(Transformer {
            fast,
            bert,
            tokenizer,
            cls,
            sep,
        })
    }

    /// The unit vector of `text`'s first [`MAX_TOKENS`] tokens; `None` when it has none.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.embed_many(&[text]).pop().flatten()
    }

    /// The unit vector of each text's first [`MAX_TOKENS`] tokens (`None` for a text with
    /// none), the texts run through the layers in batches.
    pub fn embed_many(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        let windows: Vec<Vec<u32>> = texts.iter().map(|t| self.window(t)).collect();
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let h = self.bert.hidden();
        let mut i = 0;
        while i < windows.len() {
            let (mut ids, mut lens, mut which) = (Vec::new(), Vec::new(), Vec::new());
            // One window at a time on the reference path, which takes windows of one length.
            while i < windows.len() && (which.is_empty() || self.fast.is_some()) {
                if ids.len() + windows[i].len() > BATCH_TOKENS && !which.is_empty() {
                    break;
                }
                if windows[i].len() > 2 {
                    ids.extend_from_slice(&windows[i]);
                    lens.push(windows[i].len());
                    which.push(i);
                }
                i += 1;
            }
            if which.is_empty() {
                continue;
            }
            let pooled = match &self.fast {
                Some(fast) => fast.pooled(&self.bert, &ids, &lens),
                None => self.bert.pooled(&ids, ids.len()),
            };
            for (&w, v) in which.iter().zip(pooled.chunks_exact(h)) {
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if n > 0.0 {
                    out[w] = Some(v.iter().map(|x| x / n).collect());
                }
            }
        }
        out
    }

    /// `text`'s WordPiece tokens, `[CLS]` and `[SEP]` not counted: what a caller cutting
    /// windows of at most [`MAX_TOKENS`]` - 2` measures.
    pub fn token_count(&self, text: &str) -> usize {
        let mut ids = Vec::new();
        self.tokenizer.encode(text, &mut ids);
        ids.len()
    }

    /// `[CLS]`, the first tokens of `text`, `[SEP]`: [`MAX_TOKENS`] at most, and no more than
    /// the model has positions for (a small model may have fewer).
    fn window(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.cls];
        self.tokenizer.encode(text, &mut ids);
        ids.truncate(MAX_TOKENS.min(self.bert.position.shape[0]) - 1);
        ids.push(self.sep);
        ids
    }

    /// Whether `text` holds a word the vocabulary has whole ([`WordPiece::knows_a_word`]).
    pub fn knows_a_word(&self, text: &str) -> bool {
        self.tokenizer.knows_a_word(text)
    }

    /// The vector's length.
    pub fn dim(&self) -> usize {
        self.bert.hidden()
    }
}

/// No fast path off x86-64: [`Fast::new`] never makes one.
#[cfg(not(target_arch = "x86_64"))]
enum Fast {}

#[cfg(not(target_arch = "x86_64"))]
impl Fast {
    fn new(_: &Bert) -> Option<Fast> {
        None
    }

    fn pooled(&self, _: &Bert, _: &[u32], _: &[usize]) -> Vec<f32> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_transformer_can_be_shared_by_threads() {
        fn sync<T: Sync + Send>() {}
        sync::<super::Transformer>();
    }
}
