//! `pidx secrets`: which sessions hold which kinds of secret (rule, session, entry, time),
//! never the secret itself, so a user knows what to rotate.

use anyhow::Result;
use clap::Args;

use super::args::{ProjectArgs, RangeArgs};
use super::Found;
use crate::app::env::Env;
use crate::present::output::{one_line, Out};
use crate::query::handle;
use crate::query::secrets::{find_secrets, SecretsOptions};

#[derive(Args, Debug)]
pub struct SecretsArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub range: RangeArgs,
}

pub fn run(env: &Env, args: &SecretsArgs, out: &mut Out) -> Result<Found> {
    let (since_ms, until_ms) = args.range.bounds(chrono::Utc::now().timestamp_millis())?;
    let (store, scope) = env.open_fresh()?;
    let opts = SecretsOptions {
        cwd: args.project.cwd(),
        since_ms,
        until_ms,
    };
    let found = find_secrets(&store.conn, &scope, &opts)?;
    if env.global.json {
        out.json(&found)?;
        return Ok(!found.is_empty());
    }
    let handles = handle::handles(
        &store.conn,
        found.iter().map(|f| handle::Session {
            file_id: f.file_id,
            id: f.session_id.as_deref(),
            path: &f.path,
        }),
    )?;
    let mut lines = Vec::new();
    for f in &found {
        let session = handles
            .get(&f.file_id)
            .map_or(f.path.as_str(), String::as_str);
        lines.push(format!(
            "{}  {:<18}  {}  {}{}",
            one_line(f.timestamp.as_deref().unwrap_or("-")),
            f.rule,
            one_line(session),
            one_line(f.entry_id.as_deref().unwrap_or("-")),
            if f.count > 1 {
                format!(" (x{})", f.count)
            } else {
                String::new()
            }
        ));
    }
    out.lines(lines)?;
    if found.is_empty() {
        crate::term::say("pidx: no secret found in these sessions");
    }
    Ok(!found.is_empty())
}
