//! `pidx pg migrate`: create or upgrade the team server's schema (push does it too).

use anyhow::Result;
use clap::Subcommand;

use super::Found;
use crate::app::env::Env;
use crate::present::output::Out;
use crate::team::pg;

#[derive(Subcommand, Debug)]
pub enum PgCommand {
    /// Create or upgrade the server's schema (refuses a schema from a newer pidx).
    Migrate,
}

pub fn run(env: &Env, cmd: &PgCommand, out: &mut Out) -> Result<Found> {
    let PgCommand::Migrate = cmd;
    let Some(url) = env.global.pg_url() else {
        anyhow::bail!(
            "`pidx pg migrate` needs the server: --pg postgresql://USER@HOST/DB (or PIDX_PG)"
        );
    };
    let mut client = pg::connect(&url)?;
    let applied = pg::migrate::migrate(&mut client)?;
    let latest = pg::migrate::latest();
    if env.global.json {
        out.json(&serde_json::json!({"applied": applied, "version": latest}))?;
    } else if applied.is_empty() {
        out.line(&format!("server schema is up to date (version {latest})"))?;
    } else {
        out.line(&format!(
            "applied server schema {applied:?}; now at version {latest}"
        ))?;
    }
    Ok(true)
}
