//! `pidx context`: the messages pi would send to the model at a leaf.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use super::env::{resolve_arg, Env};
use super::output::Out;
use super::{render, Found};
use crate::query::context;

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// Build the context at this entry instead of the current leaf (the last entry).
    #[arg(long, value_name = "ENTRY_ID")]
    pub leaf: Option<String>,
}

pub fn run(env: &Env, args: &ContextArgs, out: &mut Out) -> Result<Found> {
    let (store, session, _) = resolve_arg(env, &args.session)?;
    // Written message by message: memory stays one message, whatever the session.
    let plan = context::plan_context(&store.conn, &session, args.leaf.as_deref())?;
    warn_cycle(&plan.settings);
    if !env.global.json {
        render::context_plan(out, &plan)?;
        return Ok(true);
    }
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out.raw());
    plan.write_json(&mut w)?;
    w.write_all(b"\n")?;
    w.flush()?;
    Ok(true)
}

fn warn_cycle(ctx: &context::Context) {
    if ctx.cycle {
        crate::term::say("pidx: the entries above this leaf form a cycle; the walk stopped where it repeated (pi itself would never return)");
    }
}

/// Prints a context (local or from the team server).
pub fn print(env: &Env, ctx: context::Context, out: &mut Out) -> Result<Found> {
    warn_cycle(&ctx);
    if env.global.json {
        out.line(&ctx.to_json())?;
    } else {
        render::context(out, ctx)?;
    }
    Ok(true)
}
