//! `pidx push`: bring the local index up to date, then send what changed to the team server.

use anyhow::Result;
use clap::Args;

use super::Found;
use crate::app::env::Env;
use crate::present::numbers::thousands;
use crate::present::output::Out;
use crate::team::pg;
use crate::team::push::{default_source, push, PushOptions, PushReport};

#[derive(Args, Debug)]
pub struct PushArgs {
    /// Send image data too (by default each image's base64 data is sent empty).
    #[arg(long)]
    pub images: bool,
    /// Send secrets as they are. By default every secret pidx finds (API keys, tokens, private
    /// keys, passwords in URLs, auth headers, cookies, secret env values) is replaced by
    /// `[redacted: RULE]` before it leaves this machine.
    #[arg(long)]
    pub no_redact: bool,
}

pub fn run(env: &Env, args: &PushArgs, out: &mut Out) -> Result<Found> {
    let Some(url) = env.global.pg_url() else {
        anyhow::bail!("`pidx push` needs the server: --pg postgresql://USER@HOST/DB (or PIDX_PG)");
    };
    let (store, scope) = env.open_fresh()?;
    let mut client = pg::connect(&url)?;
    let opts = PushOptions {
        source: env.global.source.clone().unwrap_or_else(default_source),
        images: args.images,
        redact: !args.no_redact,
    };
    if args.no_redact {
        crate::term::say(&format!(
            "pidx: --no-redact: secrets in these transcripts are sent unredacted to {} as source {}",
            pg::redact_url(&url),
            crate::term::one_line(&opts.source)
        ));
    }
    let started = std::time::Instant::now();
    let report = push(&store.conn, &scope, &mut client, &opts, || {
        crate::term::say(&format!(
            "pidx: another push of source {} is running; waiting for it",
            opts.source
        ));
    })?;
    if env.global.json {
        out.json(&report)?;
    } else {
        out.line(&summary(&report, started.elapsed()))?;
    }
    Ok(true)
}

/// One line: what the push sent.
pub fn summary(r: &PushReport, took: std::time::Duration) -> String {
    let mut parts = vec![
        format!("{} new", thousands(r.new)),
        format!("{} appended", thousands(r.appended)),
        format!("{} rewritten", thousands(r.rewritten)),
        format!("{} renamed or touched", thousands(r.summaries)),
        format!("{} deleted", thousands(r.deleted)),
        format!("{} unchanged", thousands(r.unchanged)),
    ];
    if r.skipped > 0 {
        parts.push(format!(
            "{} changed while reading (next push)",
            thousands(r.skipped)
        ));
    }
    let m = &r.meaning;
    let meaning = if m.files == 0 {
        String::new()
    } else if m.withheld == 0 {
        format!(", {} passages", thousands(m.passages))
    } else {
        format!(
            ", {} passages ({} kept here: their text holds a secret)",
            thousands(m.passages),
            thousands(m.withheld)
        )
    };
    format!(
        "pushed {} as {}: {}; {} entries{meaning} in {:.2} s",
        thousands(r.changed()),
        crate::term::one_line(&r.source),
        parts.join(", "),
        thousands(r.entries),
        took.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_has_thousands_separators() {
        let r = PushReport {
            source: "u@box".into(),
            new: 2_544,
            entries: 158_025,
            ..PushReport::default()
        };
        let line = summary(&r, std::time::Duration::from_millis(1500));
        assert_eq!(
            line,
            "pushed 2,544 as u@box: 2,544 new, 0 appended, 0 rewritten, 0 renamed or touched, \
             0 deleted, 0 unchanged; 158,025 entries in 1.50 s"
        );
    }
}
