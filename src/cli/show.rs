//! `pidx show`: everything about one session.

use anyhow::Result;

use super::args::SessionArg;
use super::output::Out;
use super::{render, Found};
use crate::app::env::{Env, First};
use crate::query::{resolve, show};

pub fn run(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let mut opened = env.open_reader(Some(First::Session(&args.session)))?;
    let mut reader = opened.reader()?;
    let session = resolve::resolve(&mut reader, &args.session)?;
    let detail = show::show(&mut reader, &session)?;
    reader.finish()?;
    if env.global.json {
        out.line(&serde_json::to_string(&detail)?)?;
    } else {
        render::session_detail(out, &detail)?;
    }
    Ok(true)
}
