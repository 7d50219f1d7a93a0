//! `get_context`: pi's context at a leaf, one page at a time. The context is located without
//! reading message bodies (`query::context::plan`; the team server's comes with its lines); a
//! page reads only the entries it shows, so memory stays bounded by one message whatever the
//! session's size (on the team server, by the context's lines). The cursor holds
//! the leaf, so a session that grows between pages still pages through the same context.
//! Each message is redacted whole before it is paged, so no page holds part of a secret.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::answer::{sentence, Answer, Call};
use super::args::{ContextArgs, Format};
use super::message;
use super::page::budget;
use crate::query::context::page::{self, Cursor, Place};
use crate::query::context::plan;

const TOOL: &str = "get_context";

/// Where a page starts: its place, and the leaf of the first page.
struct Start {
    place: Option<Place>,
    leaf: Option<String>,
}

fn start(a: &ContextArgs) -> Result<Start, String> {
    let Some(c) = &a.cursor else {
        return Ok(Start {
            place: None,
            leaf: a.leaf.clone(),
        });
    };
    let bad = || {
        format!("cursor {c:?} is not one {TOOL} gave for these arguments; call it again without a cursor to start over")
    };
    let cursor = Cursor::parse(c, TOOL).ok_or_else(bad)?;
    if cursor.json != (a.format == Format::Json) || cursor.backwards != a.from_end {
        return Err(bad());
    }
    Ok(Start {
        place: Some(cursor.place),
        leaf: cursor.leaf,
    })
}

pub fn get_context(c: &Call, a: ContextArgs, cancel: &AtomicBool) -> Answer {
    let budget = budget(a.max_chars)?;
    let tool_chars = a.tool_output_chars.unwrap_or(2000);
    let start = start(&a)?;
    let session = c.session(&a.session)?;
    let plan = c.ask(|r| plan(r, &session, start.leaf.as_deref())).map_err(|e| match e {
        crate::Error::NotFound(what) => format!("there is no {what}: give an entry id from get_tree or search_sessions, or leave leaf out for the current leaf"),
        other => sentence(other),
    })?;
    let render = |raw: &str| match a.format {
        Format::Text => {
            let (role, text) = message::render(raw, tool_chars);
            (role, crate::redact::redact(&text).into_owned())
        }
        Format::Json => (page::role_of(raw), redacted_json(raw)),
    };
    let stopped = |e| match e {
        crate::Error::Stopped => "the call was cancelled".to_string(),
        other => sentence(other),
    };
    let (pieces, next) = if a.from_end {
        page::backward(&plan, start.place, budget, cancel, &render).map_err(stopped)?
    } else {
        let at = start.place.unwrap_or_default();
        page::forward(&plan, at, budget, cancel, &render).map_err(stopped)?
    };
    let next = next.map(|place| {
        let cursor = Cursor {
            json: a.format == Format::Json,
            backwards: a.from_end,
            place,
            leaf: plan.leaf_id.clone(),
        };
        cursor.text(TOOL)
    });
    let mut notes = Vec::new();
    if plan.settings.cycle {
        notes.push("the entries above this leaf form a cycle; the walk stopped where it repeated (pi itself would never return)".to_string());
    }
    if next.is_some() {
        notes.push(format!(
            "more messages {}: call again with cursor set to nextCursor",
            if a.from_end {
                "before these"
            } else {
                "after these"
            }
        ));
    }
    let mut body = page::page_json(&plan, &session.path, pieces, next);
    body.insert("notes".into(), notes.into());
    Ok(Value::Object(body))
}

/// A message's JSON with every string value redacted (the text redacted when it does not parse).
fn redacted_json(raw: &str) -> String {
    if !crate::redact::may_hold(raw) {
        return raw.to_string();
    }
    match crate::pi::line::parse_json(raw) {
        Ok(mut v) => {
            crate::redact::redact_value(&mut v);
            v.to_string()
        }
        Err(_) => crate::redact::redact(raw).into_owned(),
    }
}
