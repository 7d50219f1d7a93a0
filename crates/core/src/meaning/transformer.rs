//! A sentence-transformer run whole (all-MiniLM-L6-v2's six layers, `bert.rs`) over one text:
//! `[CLS] tokens [SEP]`, at most [`MAX_TOKENS`], mean-pooled and normalised, as
//! sentence-transformers embeds it. Hundreds of times slower than the static model (a
//! 256-token window is ~5 GFLOP) and not used by searches: `examples/embed_transformer` uses
//! it to measure what the static model loses against the model it was distilled from
//! (docs/meaning.md).

use std::path::Path;

use super::bert::Bert;
use super::tokenize::WordPiece;
use crate::error::{Error, Result};

/// Tokens of a window, `[CLS]` and `[SEP]` included (the model was trained on up to 256).
pub const MAX_TOKENS: usize = 256;

/// A loaded transformer with its tokenizer.
pub struct Transformer {
    bert: Bert,
    tokenizer: WordPiece,
    cls: u32,
    sep: u32,
}

impl Transformer {
    /// The sentence-transformer in `from` (a folder or a zip, as `pidx model distill` takes).
    ///
    /// # Errors
    /// `Invalid` naming the source when a file is missing or not a BERT encoder.
    pub fn load(from: &Path) -> Result<Transformer> {
        let bad = |why: String| Error::Invalid(format!("cannot load {}: {why}", from.display()));
        let files = super::distill::source_files(from).map_err(bad)?;
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
        let (Some(cls), Some(sep)) = (tokenizer.id("[CLS]"), tokenizer.id("[SEP]")) else {
            return Err(bad("its vocabulary has no [CLS] or [SEP]".into()));
        };
        Ok(Transformer {
            bert,
            tokenizer,
            cls,
            sep,
        })
    }

    /// The unit vector of `text`'s first [`MAX_TOKENS`] tokens; `None` when it has none.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut ids = vec![self.cls];
        self.tokenizer.encode(text, &mut ids);
        if ids.len() == 1 {
            return None;
        }
        ids.truncate(MAX_TOKENS - 1);
        ids.push(self.sep);
        let mut v = self.bert.pooled(&ids, ids.len());
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if n == 0.0 {
            return None;
        }
        v.iter_mut().for_each(|x| *x /= n);
        Some(v)
    }

    /// The vector's length.
    pub fn dim(&self) -> usize {
        self.bert.hidden()
    }
}
