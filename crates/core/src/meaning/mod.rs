//! Meaning: static embedding models (Model2Vec's layout) read and made by pidx itself. A
//! WordPiece tokenizer (`tokenize`), safetensors (`tensors`), the static model that embeds a
//! text as the mean of its tokens' rows (`model`), and `pidx model distill`'s making of one from
//! a sentence-transformer (`bert`, `pca`, `distill`). No async runtime, no index: the index's
//! vectors are `ingest::embed`'s and `query::search::meaning`'s.

mod bert;
pub mod codes;
pub mod distill;
pub mod embedder;
#[cfg(target_arch = "x86_64")]
mod fast;
pub mod fetch;
pub mod model;
mod pca;
mod tensors;
pub mod tokenize;
pub mod transformer;

pub use embedder::Model;
pub use model::StaticModel;
pub use tokenize::Memo;

/// The folder name, under [`model::models_dir`], of the model used when none is named.
pub const DEFAULT_NAME: &str = "default";

/// Dimensions a distilled model keeps (Model2Vec's default PCA size).
pub const DISTILL_DIMS: usize = 256;
