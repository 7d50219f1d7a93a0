//! `pidx context`: the messages pi would send to the model at a leaf.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use super::Found;
use crate::app::env::{Env, First};
use crate::present::output::Out;
use crate::present::render;
use crate::query::context::{self, page, page::Cursor};
use crate::query::{resolve, Reader};

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  pidx context 019c4f                     the whole context at the current leaf
  pidx context 019c4f --last 10           its last 10 messages
  pidx context 019c4f --max-chars 20000   one page; the last line says how to get the next
  pidx context 019c4f --max-chars 20000 --cursor 'context:t:f:12:0:0:a1b2c3d4'")]
pub struct ContextArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// Build the context at this entry instead of the current leaf (the last entry).
    #[arg(long, value_name = "ENTRY_ID")]
    pub leaf: Option<String>,
    /// Only the last N messages.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// At most N characters of message text (a message longer than that is cut, and goes on in
    /// the next page); the page ends with the command for the next one (`nextCursor` in JSON,
    /// where each message is its JSON text, or a piece of it).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(100..))]
    pub max_chars: Option<u64>,
    /// Go on where a `--max-chars` page ended (its last line, or its `nextCursor`).
    #[arg(long, value_name = "CURSOR", requires = "max_chars")]
    pub cursor: Option<String>,
}

pub fn run(env: &Env, args: &ContextArgs, out: &mut Out) -> Result<Found> {
    let mut opened = env.open_reader(Some(First::Session(&args.session)))?;
    let mut reader = opened.reader()?;
    let session = resolve::resolve(&mut reader, &args.session)?;
    if let Some(max) = args.max_chars {
        let found = paged(env, args, &mut reader, &session, max as usize, out)?;
        reader.finish()?;
        return Ok(found);
    }
    // Written message by message: memory stays one message, whatever the session (the team
    // server's come with the plan).
    let plan = context::plan(&mut reader, &session, args.leaf.as_deref())?;
    reader.finish()?;
    warn_cycle(&plan.settings);
    if let Some(n) = args.last {
        let (_, messages) = plan.last_messages(n)?;
        let ctx = context::Context {
            messages,
            ..plan.settings
        };
        return print(env, ctx, out);
    }
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

/// Where the CLI's context cursors start (`context:...`).
const CURSOR: &str = "context";

/// `--max-chars`: one page of the context, from the start, the last N messages or a cursor.
fn paged(
    env: &Env,
    args: &ContextArgs,
    reader: &mut Reader,
    session: &crate::query::resolve::Resolved,
    max: usize,
    out: &mut Out,
) -> Result<Found> {
    let json = env.global.json;
    let cursor = match &args.cursor {
        None => None,
        Some(c) => Some(
            Cursor::parse(c, CURSOR)
                .filter(|c| c.json == json && !c.backwards)
                .ok_or_else(|| {
                    anyhow::anyhow!("--cursor {c:?} is not one `pidx context{}` printed; run it again without --cursor to start over", if json { " --json" } else { "" })
                })?,
        ),
    };
    let leaf = cursor
        .as_ref()
        .map_or(args.leaf.clone(), |c| c.leaf.clone());
    let plan = context::plan(reader, session, leaf.as_deref())?;
    warn_cycle(&plan.settings);
    let at = match (&cursor, args.last) {
        (Some(c), _) => c.place,
        (None, Some(n)) => page::last(&plan, n)?,
        (None, None) => page::Place::default(),
    };
    let render = |raw: &str| {
        if json {
            (page::role_of(raw), raw.to_string())
        } else {
            render::message_text_of(raw)
        }
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (pieces, next) = page::forward(&plan, at, max, &stop, &render)?;
    let next = next.map(|place| Cursor {
        json,
        backwards: false,
        place,
        leaf: plan.leaf_id.clone(),
    });
    if json {
        let next = next.as_ref().map(|c| c.text(CURSOR));
        let body = page::page_json(&plan, &session.path, pieces, next);
        out.line(&serde_json::Value::Object(body).to_string())?;
        return Ok(true);
    }
    let more = next.map(|c| {
        format!(
            "pidx context {} --max-chars {max} --cursor '{}'",
            crate::term::one_line(&args.session),
            c.text(CURSOR)
        )
    });
    let settings = cursor.is_none().then_some(&plan.settings);
    render::context_page(out, settings, &pieces, more.as_deref())?;
    Ok(true)
}

fn warn_cycle(ctx: &context::Context) {
    if ctx.cycle {
        crate::term::say("pidx: the entries above this leaf form a cycle; the walk stopped where it repeated (pi itself would never return)");
    }
}

/// Prints the last messages of a context.
fn print(env: &Env, ctx: context::Context, out: &mut Out) -> Result<Found> {
    warn_cycle(&ctx);
    if env.global.json {
        out.line(&ctx.to_json())?;
    } else {
        render::context(out, ctx)?;
    }
    Ok(true)
}
