//! `get_context`: pi's context at a leaf, one page at a time. The context is located without
//! reading message bodies (`query::context::plan_context`); a page reads only the entries it
//! shows, so memory stays bounded by one message whatever the session's size. The cursor holds
//! the leaf, so a session that grows between pages still pages through the same context.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Map, Value};

use super::answer::{sentence, Answer, Call};
use super::message;
use super::page::{budget, parse_cursor, take, Place};
use super::tools::{ContextArgs, Format};
use crate::query::context::{plan_context, ContextPlan};

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
    let f = parse_cursor(c, TOOL, 6)?;
    let bad = || {
        format!("cursor {c:?} is not one {TOOL} gave for these arguments; call it again without a cursor to start over")
    };
    let format = if a.format == Format::Json { "j" } else { "t" };
    let dir = if a.from_end { "b" } else { "f" };
    if f[0] != format || f[1] != dir {
        return Err(bad());
    }
    let num = |s: &str| s.parse::<usize>().map_err(|_| bad());
    Ok(Start {
        place: Some(Place {
            entry: num(f[2])?,
            message: num(f[3])?,
            chars: num(f[4])?,
        }),
        leaf: Some(f[5].to_string()).filter(|l| !l.is_empty()),
    })
}

fn cursor(a: &ContextArgs, p: Place, leaf: Option<&str>) -> String {
    let format = if a.format == Format::Json { "j" } else { "t" };
    let dir = if a.from_end { "b" } else { "f" };
    format!(
        "{TOOL}:{format}:{dir}:{}:{}:{}:{}",
        p.entry,
        p.message,
        p.chars,
        leaf.unwrap_or_default()
    )
}

pub fn get_context(c: &Call, a: ContextArgs, cancel: &AtomicBool) -> Answer {
    let budget = budget(a.max_chars)?;
    let tool_chars = a.tool_output_chars.unwrap_or(2000);
    let start = start(&a)?;
    let session = c.session(&a.session)?;
    let plan = plan_context(&c.store.conn, &session, start.leaf.as_deref()).map_err(|e| match e {
        crate::Error::NotFound(what) => format!("there is no {what}: give an entry id from get_tree or search_sessions, or leave leaf out for the current leaf"),
        other => sentence(other),
    })?;
    let render = |raw: &str| match a.format {
        Format::Text => message::render(raw, tool_chars),
        Format::Json => {
            let role = crate::pi::line::parse_json(raw)
                .ok()
                .and_then(|v| v.get("role").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default();
            (role, raw.to_string())
        }
    };
    let (items, next) = if a.from_end {
        backward(&plan, start.place, budget, cancel, &render)?
    } else {
        forward(
            &plan,
            start.place.unwrap_or_default(),
            budget,
            cancel,
            &render,
        )?
    };
    let s = &plan.settings;
    let model = s
        .model
        .as_ref()
        .map(|(p, m)| json!({"provider": p, "modelId": m}));
    let mut body = Map::new();
    body.insert("path".into(), session.path.clone().into());
    body.insert("leaf".into(), plan.leaf_id.clone().into());
    body.insert("model".into(), model.unwrap_or(Value::Null));
    body.insert("thinkingLevel".into(), s.thinking_level.clone().into());
    body.insert("messages".into(), items.into());
    let next = next.map(|p| cursor(&a, p, plan.leaf_id.as_deref()));
    let mut notes = Vec::new();
    if s.cycle {
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
    body.insert("truncated".into(), next.is_some().into());
    body.insert("nextCursor".into(), next.into());
    body.insert("notes".into(), notes.into());
    Ok(Value::Object(body))
}

type Render<'a> = dyn Fn(&str) -> (String, String) + 'a;
type Paged = (Vec<Value>, Option<Place>);

fn item(
    plan: &ContextPlan,
    entry: usize,
    role: String,
    piece: (String, usize, usize, usize),
) -> Value {
    let (text, from, to, total) = piece;
    let mut m = Map::new();
    m.insert("entryId".into(), plan.entry_id(entry).into());
    m.insert("role".into(), role.into());
    m.insert("text".into(), text.into());
    if from > 0 || to < total {
        m.insert("from".into(), from.into());
        m.insert("to".into(), to.into());
        m.insert("total".into(), total.into());
    }
    Value::Object(m)
}

fn check(cancel: &AtomicBool) -> Result<(), String> {
    if cancel.load(Ordering::Relaxed) {
        Err("the call was cancelled".into())
    } else {
        Ok(())
    }
}

/// Messages from `at` onwards until the budget is spent.
fn forward(
    plan: &ContextPlan,
    at: Place,
    budget: usize,
    cancel: &AtomicBool,
    render: &Render,
) -> Result<Paged, String> {
    let mut items = Vec::new();
    let mut left = budget;
    for i in at.entry..plan.len() {
        check(cancel)?;
        let messages = plan.messages_at(i).map_err(sentence)?;
        let first = if i == at.entry { at.message } else { 0 };
        for (j, raw) in messages.iter().enumerate().skip(first) {
            let (role, text) = render(raw);
            let done = if (i, j) == (at.entry, at.message) {
                at.chars
            } else {
                0
            };
            let here = Place {
                entry: i,
                message: j,
                chars: done,
            };
            let Some(piece) = take(&text, done, left, items.is_empty(), false) else {
                return Ok((items, Some(here)));
            };
            let (to, total) = (piece.2, piece.3);
            left = left.saturating_sub(to - piece.1);
            items.push(item(plan, i, role, piece));
            if to < total {
                return Ok((items, Some(Place { chars: to, ..here })));
            }
        }
    }
    Ok((items, None))
}

/// Messages before `at` (from the end when `None`), latest last, until the budget is spent.
/// Backwards, a place counts messages and characters from the end of its entry.
fn backward(
    plan: &ContextPlan,
    at: Option<Place>,
    budget: usize,
    cancel: &AtomicBool,
    render: &Render,
) -> Result<Paged, String> {
    let at = match at {
        Some(p) => p,
        None if plan.is_empty() => return Ok((Vec::new(), None)),
        None => Place {
            entry: plan.len() - 1,
            message: 0,
            chars: 0,
        },
    };
    let mut items = Vec::new();
    let mut left = budget;
    for i in (0..=at.entry.min(plan.len().saturating_sub(1))).rev() {
        check(cancel)?;
        let messages = plan.messages_at(i).map_err(sentence)?;
        let first = if i == at.entry { at.message } else { 0 };
        for (back, raw) in messages.iter().rev().enumerate().skip(first) {
            let (role, text) = render(raw);
            let done = if (i, back) == (at.entry, at.message) {
                at.chars
            } else {
                0
            };
            let here = Place {
                entry: i,
                message: back,
                chars: done,
            };
            let Some(piece) = take(&text, done, left, items.is_empty(), true) else {
                items.reverse();
                return Ok((items, Some(here)));
            };
            let (from, total) = (piece.1, piece.3);
            left = left.saturating_sub(piece.2 - from);
            items.push(item(plan, i, role, piece));
            if from > 0 {
                items.reverse();
                return Ok((
                    items,
                    Some(Place {
                        chars: total - from,
                        ..here
                    }),
                ));
            }
        }
    }
    items.reverse();
    Ok((items, None))
}
