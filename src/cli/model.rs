//! `pidx model`: make (`distill`), download (`fetch`) or copy in (`install`) the embedding
//! model that search by meaning uses. None touches the index.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use super::Found;
use crate::meaning::{distill, fetch, model};

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Make a static model from a sentence-transformer (a folder or zip with config.json,
    /// tokenizer.json and model.safetensors of a BERT encoder), as Model2Vec distils one.
    Distill {
        /// The sentence-transformer's folder or zip.
        #[arg(long, value_name = "DIR_OR_ZIP")]
        from: PathBuf,
        /// Where to write the model (default: pidx's models folder, `default`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Dimensions kept by PCA.
        #[arg(long, default_value_t = crate::meaning::DISTILL_DIMS)]
        dims: usize,
        /// Threads running the transformer.
        #[arg(long, default_value_t = 2)]
        threads: usize,
    },
    /// Copy in a whole sentence-transformer (a folder or zip with config.json, tokenizer.json
    /// and model.safetensors of a BERT encoder) to embed with every layer of it: embedding
    /// costs milliseconds a passage instead of microseconds, and search by meaning finds far
    /// more of what you describe in your own words (docs/meaning.md).
    #[command(
        after_help = "Example:\n  pidx model install --from ~/all-MiniLM-L6-v2.zip\n  pidx sync --embed"
    )]
    Install {
        /// The sentence-transformer's folder or zip.
        #[arg(long, value_name = "DIR_OR_ZIP")]
        from: PathBuf,
        /// Where to put it (default: pidx's models folder, `default`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Download a published Model2Vec model (needs internet).
    Fetch {
        /// The model's name on its hub.
        #[arg(default_value = fetch::DEFAULT_MODEL)]
        name: String,
        /// Where to write it (default: pidx's models folder, `default`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

pub fn run(cmd: &ModelCommand) -> Result<Found> {
    match cmd {
        ModelCommand::Distill {
            from,
            out,
            dims,
            threads,
        } => {
            let out = out.clone().unwrap_or_else(model::default_dir);
            let made = distill::distill(from, &out, *dims, *threads)?;
            crate::term::say(&format!(
                "pidx: distilled {} tokens x {} dims into {} in {:.1} s",
                crate::present::numbers::thousands(made.vocab),
                crate::present::numbers::thousands(made.dims),
                out.display(),
                made.seconds
            ));
        }
        ModelCommand::Install { from, out } => {
            let out = out.clone().unwrap_or_else(model::default_dir);
            let dims = crate::meaning::embedder::install(from, &out)?;
            crate::term::say(&format!(
                "pidx: installed the {dims}-dimension transformer into {}; `pidx sync --embed` embeds with it",
                out.display()
            ));
        }
        ModelCommand::Fetch { name, out } => {
            let out = out.clone().unwrap_or_else(model::default_dir);
            fetch::fetch(name, &out)?;
            crate::term::say(&format!("pidx: fetched {name} into {}", out.display()));
        }
    }
    Ok(true)
}
