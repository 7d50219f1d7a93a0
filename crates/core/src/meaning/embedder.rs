//! The model search by meaning embeds with: a static model (a token table, `model.rs`:
//! microseconds a passage) or a whole sentence-transformer (`transformer.rs`: every layer run
//! over each passage, hundreds of times the work, and it finds far more of what people
//! describe in their own words; docs/meaning.md measures both on real transcripts). A model
//! folder is one or the other by its `config.json`: a transformer's describes its layers
//! (`pidx model install` copies one in), a static model's does not (`pidx model distill`).

use std::path::Path;

use super::model::{unusable, StaticModel};
use super::tokenize::Memo;
use super::transformer::Transformer;
use crate::error::Result;

/// A loaded model of either kind.
pub enum Model {
    Static(StaticModel),
    /// Boxed: its layers' handles make it twice a static model's size.
    Whole(Box<Whole>),
}

/// A whole sentence-transformer, with what the index records it under.
pub struct Whole {
    transformer: Transformer,
    id: String,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Model({})", self.id())
    }
}

/// Passages kept of one text by a static model: a pasted log of megabytes gives its first ones
/// only.
pub const STATIC_PASSAGES: usize = 16;

/// Passages kept of one text by a whole transformer: each costs milliseconds, and a long text's
/// first passages say what it is about (a pasted log's later pages add little).
pub const WHOLE_PASSAGES: usize = 4;

/// The centered similarity a text must reach to be a meaning hit. Unrelated texts score about
/// 0 with either kind of model; fitted on the real evaluation's tuning half (docs/meaning.md,
/// "The real evaluation"), where the whole transformer's targets scored like the static
/// model's (p10 0.54, median 0.65), so one floor serves both.
pub const FLOOR: f32 = 0.30;

/// The floor in force: [`FLOOR`], unless `$PIDX_MEANING_FLOOR` sets another (what
/// tests/meaning/real/eval.py uses to see the similarities below the floor when it measures
/// where the floor should be; not a setting for users).
pub fn floor() -> f32 {
    static SET: std::sync::OnceLock<f32> = std::sync::OnceLock::new();
    *SET.get_or_init(|| {
        std::env::var("PIDX_MEANING_FLOOR")
            .ok()
            .and_then(|f| f.parse().ok())
            .unwrap_or(FLOOR)
    })
}

impl Model {
    /// Loads the model in `dir`, of whichever kind it is.
    ///
    /// # Errors
    /// `Invalid` naming the folder when a file is missing or not what it should be.
    pub fn load(dir: &Path) -> Result<Model> {
        let config: serde_json::Value = match std::fs::read(dir.join("config.json")) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| unusable(dir, format!("config.json: {e}")))?,
            Err(_) => serde_json::Value::Null,
        };
        if config.get("num_hidden_layers").is_none() {
            return Ok(Model::Static(StaticModel::load(dir)?));
        }
        let files = super::distill::source_files(dir).map_err(|e| unusable(dir, e))?;
        let transformer = Transformer::from_files(&files, dir).map_err(|e| unusable(dir, e))?;
        let bytes = |name: &str| files.get(name).map_or(&[][..], Vec::as_slice);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let hash = xxhash_rust::xxh3::xxh3_64(bytes("model.safetensors"))
            ^ xxhash_rust::xxh3::xxh3_64(bytes("tokenizer.json"));
        let id = format!("{name}:{hash:016x}:{}:whole", transformer.dim());
        Ok(Model::Whole(Box::new(Whole { transformer, id })))
    }

    /// What the index records vectors of this model under: its folder's name, a hash of its
    /// files and its dimensions (and `whole` for a transformer), so vectors of two models are
    /// never compared.
    pub fn id(&self) -> &str {
        match self {
            Model::Static(m) => &m.id,
            Model::Whole(w) => &w.id,
        }
    }

    pub fn dim(&self) -> usize {
        match self {
            Model::Static(m) => m.dim(),
            Model::Whole(w) => w.transformer.dim(),
        }
    }

    /// Whether `text` holds a word the model knows whole: a query without one has no meaning
    /// to search by ([`WordPiece::knows_a_word`]).
    pub fn knows_a_word(&self, text: &str) -> bool {
        match self {
            Model::Static(m) => m.knows_a_word(text),
            Model::Whole(w) => w.transformer.knows_a_word(text),
        }
    }

    /// The unit vector of `text`; `None` when it has no token the model knows.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        match self {
            Model::Static(m) => m.embed(text),
            Model::Whole(w) => w.transformer.embed(text),
        }
    }

    /// The vectors of `passages`, in order: a transformer runs them in batches, a static model
    /// one by one with `memo` of the unknown words kept across them.
    pub fn embed_all(&self, passages: &[&str], memo: &mut Memo) -> Vec<Option<Vec<f32>>> {
        match self {
            Model::Static(m) => passages.iter().map(|p| m.embed_with(p, memo)).collect(),
            Model::Whole(w) => w.transformer.embed_many(passages),
        }
    }

    /// Passages embedded of one text at most.
    pub fn passages_per_text(&self) -> usize {
        match self {
            Model::Static(_) => STATIC_PASSAGES,
            Model::Whole(_) => WHOLE_PASSAGES,
        }
    }
}

/// Copies the whole sentence-transformer in `from` (a folder, or a zip holding one, as
/// `pidx model distill` takes) into the model folder `out`, after loading it once to check it
/// is a BERT encoder pidx can run. Returns its dimensions.
///
/// # Errors
/// `Invalid` naming `from` when it is not such a model; `Io` when `out` cannot be written.
pub fn install(from: &Path, out: &Path) -> Result<usize> {
    let transformer = Transformer::load(from)?;
    let files = super::distill::source_files(from).map_err(|e| {
        crate::error::Error::Invalid(format!("cannot install {}: {e}", from.display()))
    })?;
    std::fs::create_dir_all(out).map_err(|e| crate::error::Error::io(out, e))?;
    // config.json last: it says which kind the folder holds.
    for name in ["model.safetensors", "tokenizer.json", "config.json"] {
        let bytes = files.get(name).ok_or_else(|| {
            crate::error::Error::Invalid(format!(
                "cannot install {}: it has no {name}",
                from.display()
            ))
        })?;
        // Each file whole or not at all: a model half copied over another is never loaded.
        let part = out.join(format!("{name}.part"));
        std::fs::write(&part, bytes).map_err(|e| crate::error::Error::io(&part, e))?;
        std::fs::rename(&part, out.join(name)).map_err(|e| crate::error::Error::io(out, e))?;
    }
    Ok(transformer.dim())
}
