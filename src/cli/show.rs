//! `pidx show`: everything about one session.

use anyhow::Result;

use super::args::SessionArg;
use super::output::Out;
use super::{render, Found};
use crate::app::env::{resolve_arg, Env};
use crate::query::show;

pub fn run(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let (store, session, unread) = resolve_arg(env, &args.session)?;
    let detail = show::show_session_among(&store.conn, &session, &unread)?;
    if env.global.json {
        out.line(&serde_json::to_string(&detail)?)?;
    } else {
        render::session_detail(out, &detail)?;
    }
    Ok(true)
}
