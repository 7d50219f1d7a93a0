//! `pidx tree`: the session's entry tree.

use anyhow::Result;

use super::args::SessionArg;
use super::Found;
use crate::app::env::{Env, First};
use crate::present::output::Out;
use crate::present::render;
use crate::query::{resolve, tree};

pub fn run(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let mut opened = env.open_reader(Some(First::Session(&args.session)))?;
    let mut reader = opened.reader()?;
    let session = resolve::resolve(&mut reader, &args.session)?;
    let mut t = tree::tree(&mut reader, &session)?;
    reader.finish()?;
    if env.global.redact {
        // Whole, before a line cuts them to 60 characters.
        let clean = |s: &mut Option<String>| {
            if let Some(text) = s {
                *text = crate::redact::redact(text).into_owned();
            }
        };
        for n in &mut t.nodes {
            clean(&mut n.text);
            clean(&mut n.label);
        }
    }
    if t.unopenable {
        crate::term::say(&format!("pidx: pi cannot open {} (its first JSON line is not a session header with an id), so it has no tree; `pidx show` says more", session.path));
    }
    if env.global.json {
        out.line(&t.to_json())?;
    } else if t.roots.is_empty() && !t.unopenable {
        crate::term::say(&format!("pidx: {} has no entries yet", session.path));
    } else {
        render::tree(out, &t)?;
    }
    // A session pi opens with no entries has a tree: pi's getTree() answers [] (exit 0). One pi
    // cannot open has none (exit 1).
    Ok(!t.unopenable)
}
