//! `pidx show`: everything about one session, and the git commits its edits ended up in.

use anyhow::Result;

use super::args::SessionArg;
use super::env::{resolve_arg, Env};
use super::output::Out;
use super::{render, Found};
use crate::query::files::commits;
use crate::query::show;
use crate::term::one_line;

pub fn run(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let (store, session, unread) = resolve_arg(env, &args.session)?;
    let detail = show::show_session_among(&store.conn, &session, &unread)?;
    // A repository pidx cannot read costs the section, not the answer.
    let commits =
        commits::of_session(&store.conn, session.file_id, &detail.cwd).unwrap_or_default();
    if env.global.json {
        let mut v = serde_json::to_value(&detail)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("commits".into(), serde_json::to_value(&commits)?);
        }
        out.line(&serde_json::to_string(&v)?)?;
    } else {
        render::session_detail(out, &detail)?;
        if !commits.is_empty() {
            out.line("Commits holding its edits:")?;
            for c in &commits {
                let mine = c.sessions.first().map_or(0, |p| p.lines);
                out.line(&format!(
                    "  {}  {}/{} added lines  {}",
                    &c.commit[..c.commit.len().min(10)],
                    mine,
                    c.added,
                    one_line(&c.summary)
                ))?;
            }
        }
    }
    Ok(true)
}
