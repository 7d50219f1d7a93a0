//! `pidx report`: cost, tokens, models, projects, tools and the most expensive sessions over a
//! range, as one self-contained HTML page (`--html FILE`, `-` for standard output; inline SVG,
//! no script, no network) or as the same data in JSON (`--json`). `data` runs the queries,
//! `html` and `svg` draw; nothing taken from a transcript reaches the page unescaped, nor any
//! secret in it: a page is meant to be shared, so its texts are redacted (`crate::redact`), as
//! is `--json` with `--redact`.

use crate::present::report::{data, html};

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use clap::Args;

use super::args::{ProjectArgs, RangeArgs, ZoneArgs};
use super::Found;
use crate::app::env::Env;
use crate::present::output::Out;
use crate::query::stats::Figures;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Write the page to FILE; `-` writes it to standard output (a file named `-`: `./-`).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub range: RangeArgs,
    #[command(flatten)]
    pub zone: ZoneArgs,
}

pub fn run(env: &Env, args: &ReportArgs, out: &mut Out) -> Result<Found> {
    let json = env.global.json;
    let to_stdout = args.html.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if to_stdout && json {
        bail!(
            "--html - and --json both write to standard output: choose one, or give --html a file"
        );
    }
    if args.html.is_none() && !json {
        bail!("say what to write: --html FILE (- for standard output) for the page, or --json for its data");
    }
    let zone = args.zone.zone()?;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let (since_ms, until_ms) = args.range.bounds(now_ms)?;
    let (store, scope) = env.open_fresh()?;
    let mut report = data::gather(
        &store.conn,
        &scope,
        &data::ReportOptions {
            since_ms,
            until_ms,
            cwd: args.project.cwd(),
            zone,
            now_ms,
        },
    )?;
    if args.html.is_some() || env.global.redact {
        report.redact();
    }
    if let Some(path) = &args.html {
        let page = html::page(&report);
        if to_stdout {
            out.line(page.trim_end_matches('\n'))?;
        } else {
            std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
            // The path as typed could hold escape sequences too.
            let said = crate::term::one_line(&format!("report written to {}", path.display()));
            if json {
                crate::term::say(&format!("pidx: {said}"));
            } else {
                out.line(&said)?;
            }
        }
    }
    if json {
        out.json(&env.answer(&report))?;
    }
    Ok(report.totals != Figures::default())
}
