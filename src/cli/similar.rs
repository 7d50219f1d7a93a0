//! `pidx similar SESSION`: the sessions closest in meaning to one session.

use anyhow::Result;
use clap::Args;

use super::Found;
use crate::app::Env;
use crate::present::output::Out;
use crate::query::{resolve, similar};

#[derive(Args, Debug)]
pub struct SimilarArgs {
    /// The session (a path, an id or a unique id prefix).
    pub session: String,
    /// Show at most N sessions.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub limit: usize,
}

pub fn run(env: &Env, args: &SimilarArgs, out: &mut Out) -> Result<Found> {
    let (store, scope) = env.open_fresh()?;
    let me = resolve::resolve_session(&store.conn, &scope, &args.session)?;
    if crate::ingest::embed::indexed_model(&store.conn)?.is_none() {
        anyhow::bail!("nothing is embedded yet; run `pidx sync --embed` first");
    }
    let floor = similar::floor();
    let found = similar::similar(&store.conn, &scope, me.file_id, args.limit)?;
    if env.global.json {
        out.json(&env.answer(&found))?;
    } else if found.is_empty() {
        crate::term::say(&format!(
            "pidx: no session is similar enough (similarity {:.2} or more; is this one embedded? `pidx sync --embed`)",
            floor
        ));
    } else {
        out.line(&format!(
            "similarity: 1 the same, about 0 unrelated; only {:.2} or more is listed",
            floor
        ))?;
        for s in &found {
            let title = crate::present::output::truncate(&crate::term::one_line(&s.title), 70);
            out.line(&format!(
                "{:.3}  {title}  {}",
                s.score,
                crate::term::one_line(&s.cwd)
            ))?;
            out.line(&format!("       {}", crate::term::one_line(&s.path)))?;
        }
    }
    Ok(!found.is_empty())
}
