//! `pidx model distill`: a static model made from a sentence-transformer, by Model2Vec's
//! published method: run the transformer over every vocabulary token alone (`[CLS] token
//! [SEP]`), mean-pool each output, reduce the table with PCA, and weight each row by
//! `ln(1 + rank)` (Zipf: BERT vocabularies are ordered roughly by frequency, and frequent
//! tokens carry less meaning). The result is written as a Model2Vec folder.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use super::bert::Bert;
use super::tokenize::WordPiece;
use crate::error::{Error, Result};

/// What a distillation made.
pub struct Distilled {
    pub vocab: usize,
    pub dims: usize,
    pub seconds: f64,
}

/// Distils the sentence-transformer in `from` (a folder, or a zip holding one) into a static
/// model of `dims` dimensions written to `out`, using `threads` threads.
///
/// # Errors
/// `Invalid` when `from` is not a BERT sentence-transformer with a WordPiece tokenizer; `Io`
/// when `out` cannot be written.
pub fn distill(from: &Path, out: &Path, dims: usize, threads: usize) -> Result<Distilled> {
    let started = Instant::now();
    let bad = |why: String| Error::Invalid(format!("cannot distill {}: {why}", from.display()));
    let files = source_files(from).map_err(bad)?;
    let get = |name: &str| {
        files
            .get(name)
            .ok_or_else(|| bad(format!("it has no {name}")))
    };
    let config: serde_json::Value =
        serde_json::from_slice(get("config.json")?).map_err(|e| bad(e.to_string()))?;
    let tok_bytes = get("tokenizer.json")?;
    let tok_json: serde_json::Value =
        serde_json::from_slice(tok_bytes).map_err(|e| bad(e.to_string()))?;
    let tokenizer = WordPiece::from_json(&tok_json).map_err(bad)?;
    let tensors = super::tensors::read(get("model.safetensors")?).map_err(bad)?;
    let bert = Bert::new(tensors, &config).map_err(bad)?;
    let (cls, sep) = match (tokenizer.id("[CLS]"), tokenizer.id("[SEP]")) {
        (Some(c), Some(s)) => (c, s),
        _ => return Err(bad("its vocabulary has no [CLS] or [SEP]".into())),
    };
    let vocab = tokenizer.len().min(bert.vocab());
    let table = token_table(&bert, vocab, (cls, sep), threads.max(1));
    let dims = dims.min(bert.hidden());
    let mut reduced = super::pca::reduce(&table, bert.hidden(), dims);
    for (rank, row) in reduced.chunks_exact_mut(dims).enumerate() {
        let w = ((1 + rank) as f32).ln();
        row.iter_mut().for_each(|v| *v *= w);
    }
    write(out, &reduced, vocab, dims, tok_bytes, from)?;
    Ok(Distilled {
        vocab,
        dims,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The pooled output of every token `0..vocab` in its own `[CLS] token [SEP]`, `threads`
/// slices of the vocabulary at once.
fn token_table(bert: &Bert, vocab: usize, (cls, sep): (u32, u32), threads: usize) -> Vec<f32> {
    const BATCH: usize = 256;
    let per = vocab.div_ceil(threads);
    let mut parts: Vec<Vec<f32>> = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let (lo, hi) = (t * per, ((t + 1) * per).min(vocab));
                    let mut out = Vec::with_capacity((hi - lo) * bert.hidden());
                    for start in (lo..hi).step_by(BATCH) {
                        let ids: Vec<u32> = (start..(start + BATCH).min(hi))
                            .flat_map(|id| [cls, id as u32, sep])
                            .collect();
                        out.extend(bert.pooled(&ids, 3));
                    }
                    out
                })
            })
            .collect();
        parts = handles
            .into_iter()
            .map(|h| h.join().expect("a distilling thread panicked"))
            .collect();
    });
    parts.concat()
}

fn write(
    out: &Path,
    table: &[f32],
    vocab: usize,
    dims: usize,
    tokenizer: &[u8],
    from: &Path,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let put = |name: &str, bytes: &[u8]| {
        let path = out.join(name);
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))
    };
    put(
        "model.safetensors",
        &super::tensors::write(&[("embeddings", &[vocab, dims], table)]),
    )?;
    put("tokenizer.json", tokenizer)?;
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": dims,
        "normalize": true,
        "apply_pca": dims,
        "apply_zipf": true,
        "distilled_by": "pidx model distill",
        "distilled_from": from.file_name().map(|n| n.to_string_lossy().into_owned()),
    });
    put(
        "config.json",
        &serde_json::to_vec_pretty(&config).expect("json serialises"),
    )
}

/// The files of a model folder, or of a zip holding one (at its top or one folder down), by
/// their names.
pub(crate) fn source_files(from: &Path) -> std::result::Result<HashMap<String, Vec<u8>>, String> {
    const WANTED: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
    let mut out = HashMap::new();
    if from.is_dir() {
        for name in WANTED {
            if let Ok(bytes) = std::fs::read(from.join(name)) {
                out.insert(name.to_string(), bytes);
            }
        }
        return Ok(out);
    }
    let file = std::fs::File::open(from).map_err(|e| e.to_string())?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("not a folder or a zip: {e}"))?;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| e.to_string())?;
        let name = entry.name().map_err(|e| e.to_string())?.into_owned();
        let base = name.rsplit('/').next().unwrap_or("");
        // The transformer's own files, not a pooling module's config in a subfolder.
        if WANTED.contains(&base) && name.matches('/').count() <= 1 && !name.contains("_Pooling") {
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
            out.insert(base.to_string(), bytes);
        }
    }
    Ok(out)
}
