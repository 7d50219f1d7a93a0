//! A context read a page at a time: messages rendered by the caller (JSON or text) and taken
//! until a character budget is spent, a message cut where the budget ends, and a place to go on
//! from. `pidx context --max-chars` and the MCP server's `get_context` page through the same
//! code; each front door renders the pieces and names its own cursor.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Map, Value};

use super::ContextPlan;
use crate::error::{Error, Result};
use crate::pi::message::unquote;
use crate::pi::rawjson::member;

/// A place in a context's messages: (context entry, message in the entry, characters already
/// given from the start of that message, or from its end when paging backwards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place {
    pub entry: usize,
    pub message: usize,
    pub chars: usize,
}

/// One message, or the part of it that fit: `text[from..to]` of its `total` characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The context entry it belongs to (its id: [`ContextPlan::entry_id`]).
    pub entry: usize,
    pub role: String,
    pub text: String,
    pub from: usize,
    pub to: usize,
    pub total: usize,
}

impl Piece {
    /// Whether this is the whole message.
    pub fn is_whole(&self) -> bool {
        self.from == 0 && self.to == self.total
    }
}

/// A page's pieces, and where the next page starts (`None`: this page reached the end).
pub type Page = (Vec<Piece>, Option<Place>);

/// A raw message (JSON) as the caller shows it: its role and its text.
pub type Render<'a> = dyn Fn(&str) -> (String, String) + 'a;

/// The cursor of a context page: how it was rendered, which way it pages, where it stopped and
/// at which leaf (so a session that grows between pages still pages through the same context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub json: bool,
    pub backwards: bool,
    pub place: Place,
    pub leaf: Option<String>,
}

impl Cursor {
    /// `NAME:format:direction:entry:message:chars:leaf`, `NAME` the command or tool giving it.
    pub fn text(&self, name: &str) -> String {
        let p = self.place;
        format!(
            "{name}:{}:{}:{}:{}:{}:{}",
            if self.json { "j" } else { "t" },
            if self.backwards { "b" } else { "f" },
            p.entry,
            p.message,
            p.chars,
            self.leaf.as_deref().unwrap_or_default()
        )
    }

    /// The cursor `text` holds, if `name` gave it.
    pub fn parse(text: &str, name: &str) -> Option<Cursor> {
        let f: Vec<&str> = text
            .strip_prefix(name)?
            .strip_prefix(':')?
            .splitn(6, ':')
            .collect();
        let [format, dir, entry, message, chars, leaf] = f[..] else {
            return None;
        };
        Some(Cursor {
            json: match format {
                "j" => true,
                "t" => false,
                _ => return None,
            },
            backwards: match dir {
                "b" => true,
                "f" => false,
                _ => return None,
            },
            place: Place {
                entry: entry.parse().ok()?,
                message: message.parse().ok()?,
                chars: chars.parse().ok()?,
            },
            leaf: Some(leaf.to_string()).filter(|l| !l.is_empty()),
        })
    }
}

/// A page as JSON, what `context --max-chars --json` prints and MCP `get_context` answers:
/// `{path, leaf, model, thinkingLevel, messages: [{entryId, role, text, from?, to?, total?}],
/// truncated, nextCursor}` (a message's `from`/`to`/`total` only when the page holds part of it).
pub fn page_json(
    plan: &ContextPlan,
    path: &str,
    pieces: Vec<Piece>,
    next: Option<String>,
) -> Map<String, Value> {
    let s = &plan.settings;
    let model = s
        .model
        .as_ref()
        .map_or(Value::Null, |(p, m)| json!({"provider": p, "modelId": m}));
    let messages: Vec<Value> = pieces
        .into_iter()
        .map(|p| {
            let mut m = Map::new();
            m.insert("entryId".into(), plan.entry_id(p.entry).into());
            let whole = p.is_whole();
            m.insert("role".into(), p.role.into());
            m.insert("text".into(), p.text.into());
            if !whole {
                m.insert("from".into(), p.from.into());
                m.insert("to".into(), p.to.into());
                m.insert("total".into(), p.total.into());
            }
            Value::Object(m)
        })
        .collect();
    let mut body = Map::new();
    body.insert("path".into(), path.into());
    body.insert("leaf".into(), plan.leaf_id.clone().into());
    body.insert("model".into(), model);
    body.insert("thinkingLevel".into(), s.thinking_level.clone().into());
    body.insert("messages".into(), messages.into());
    body.insert("truncated".into(), next.is_some().into());
    body.insert("nextCursor".into(), next.into());
    body
}

/// A raw message's role, for a caller that shows the message as its JSON text.
pub fn role_of(raw: &str) -> String {
    member(raw, "role").map(unquote).unwrap_or_default()
}

fn check(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::Relaxed) {
        Err(Error::Stopped)
    } else {
        Ok(())
    }
}

/// Messages from `at` onwards until `budget` characters are spent (at least one piece).
///
/// # Errors
/// As [`ContextPlan::messages_at`]; `Stopped` once `stop` is set.
pub fn forward(
    plan: &ContextPlan,
    at: Place,
    budget: usize,
    stop: &AtomicBool,
    render: &Render,
) -> Result<Page> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut left = budget;
    for i in at.entry..plan.len() {
        check(stop)?;
        let messages = plan.messages_at(i)?;
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
            let Some(piece) = piece(i, role, &text, done, &mut left, pieces.is_empty(), false)
            else {
                return Ok((pieces, Some(here)));
            };
            let (to, total) = (piece.to, piece.total);
            pieces.push(piece);
            if to < total {
                return Ok((pieces, Some(Place { chars: to, ..here })));
            }
        }
    }
    Ok((pieces, None))
}

/// Messages before `at` (from the end when `None`), latest last, until the budget is spent.
/// Backwards, a place counts messages and characters from the end of its entry.
///
/// # Errors
/// As [`forward`].
pub fn backward(
    plan: &ContextPlan,
    at: Option<Place>,
    budget: usize,
    stop: &AtomicBool,
    render: &Render,
) -> Result<Page> {
    let at = match at {
        Some(p) => p,
        None if plan.is_empty() => return Ok((Vec::new(), None)),
        None => Place {
            entry: plan.len() - 1,
            message: 0,
            chars: 0,
        },
    };
    let mut pieces: Vec<Piece> = Vec::new();
    let mut left = budget;
    for i in (0..=at.entry.min(plan.len().saturating_sub(1))).rev() {
        check(stop)?;
        let messages = plan.messages_at(i)?;
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
            let Some(piece) = piece(i, role, &text, done, &mut left, pieces.is_empty(), true)
            else {
                pieces.reverse();
                return Ok((pieces, Some(here)));
            };
            let (from, total) = (piece.from, piece.total);
            pieces.push(piece);
            if from > 0 {
                pieces.reverse();
                let next = Place {
                    chars: total - from,
                    ..here
                };
                return Ok((pieces, Some(next)));
            }
        }
    }
    pieces.reverse();
    Ok((pieces, None))
}

/// The piece of a message (`role`, `text`) of context entry `entry` that the budget `left`
/// takes (and spends), `done` characters already given; `None` when the page is full.
/// `page_empty` and `backwards` as [`take`].
fn piece(
    entry: usize,
    role: String,
    text: &str,
    done: usize,
    left: &mut usize,
    page_empty: bool,
    backwards: bool,
) -> Option<Piece> {
    let (text, from, to, total) = take(text, done, *left, page_empty, backwards)?;
    *left = left.saturating_sub(to - from);
    Some(Piece {
        entry,
        role,
        text,
        from,
        to,
        total,
    })
}

/// Where the last `n` messages of the context start, as a place to page forward from.
///
/// # Errors
/// As [`ContextPlan::messages_at`].
pub fn last(plan: &ContextPlan, n: usize) -> Result<Place> {
    let mut wanted = n;
    for i in (0..plan.len()).rev() {
        let count = plan.messages_at(i)?.len();
        if count >= wanted && wanted > 0 {
            return Ok(Place {
                entry: i,
                message: count - wanted,
                chars: 0,
            });
        }
        wanted -= count;
    }
    Ok(Place::default())
}

/// Where the next piece of a message comes from, given the budget left: the piece and its
/// `(from, to, total)` in characters. `None`: stop here (the page is full).
pub fn take(
    text: &str,
    done: usize,
    left: usize,
    page_empty: bool,
    backwards: bool,
) -> Option<(String, usize, usize, usize)> {
    let total = text.chars().count();
    let remaining = total.saturating_sub(done);
    // A piece smaller than this is not worth a page of its own start: continue next page.
    let worth = remaining.min(200);
    if !page_empty && left < worth {
        return None;
    }
    let n = remaining.min(left.max(1));
    let (from, to) = if backwards {
        (total - done - n, total - done)
    } else {
        (done, done + n)
    };
    Some((slice_chars(text, from, to), from, to, total))
}

fn slice_chars(s: &str, from: usize, to: usize) -> String {
    s.chars().skip(from).take(to - from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_a_text_forward_and_backward() {
        let text = "héllo wörld, ".repeat(40);
        for backwards in [false, true] {
            let mut done = 0;
            let mut pieces = Vec::new();
            while let Some((p, _, _, total)) = take(&text, done, 100, true, backwards) {
                done += p.chars().count();
                pieces.push(p);
                if done == total {
                    break;
                }
            }
            if backwards {
                pieces.reverse();
            }
            assert_eq!(pieces.concat(), text);
        }
    }

    #[test]
    fn cursors_read_back_what_they_wrote() {
        let c = Cursor {
            json: true,
            backwards: false,
            place: Place {
                entry: 3,
                message: 1,
                chars: 250,
            },
            leaf: Some("a:b".into()),
        };
        let text = c.text("context");
        assert_eq!(text, "context:j:f:3:1:250:a:b");
        assert_eq!(Cursor::parse(&text, "context"), Some(c));
        assert_eq!(Cursor::parse(&text, "get_context"), None);
        assert_eq!(Cursor::parse("context:j:f:x:1:2:", "context"), None);
    }
}
