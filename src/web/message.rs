//! One context message (pi's JSON, as `query::context` returns it) as HTML: user and assistant
//! text as Markdown, thinking folded, tool calls with their arguments (`edit` as a diff, `write`
//! as a file, `bash` as a command), tool results folded when long and marked when they failed,
//! images through the image endpoint, summaries and custom messages marked. Every string passes
//! `Ctx::clean` and is escaped by maud; a very long string shows its start and links the rest.

use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use super::markdown;
use super::Ctx;

/// Characters of one string shown inline; the rest is a link away.
pub const MAX_TEXT: usize = 50_000;

/// Characters of a tool's output shown unfolded.
const UNFOLDED: usize = 1_500;

/// Where a message is, to address its long strings and images: the session's address, the
/// leaf, the context entry and the message in it.
pub struct At<'a> {
    pub url: &'a str,
    pub leaf: &'a str,
    pub entry: usize,
    pub message: usize,
}

impl At<'_> {
    fn part(&self, what: &str, pointer: &str) -> String {
        format!(
            "{}/{what}?leaf={}&e={}&m={}&p={}",
            self.url,
            super::page::enc(self.leaf),
            self.entry,
            self.message,
            super::page::enc(pointer)
        )
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A message: its role and its body.
pub fn render(ctx: &Ctx, raw: &str, at: &At) -> (String, Markup) {
    // A huge message parses with its long strings cut (a page shows their start only).
    let shrunk = super::bigjson::shrink(raw);
    let Ok(v) = crate::pi::line::parse_json(shrunk.as_deref().unwrap_or(raw)) else {
        return ("unknown".into(), plain(ctx, raw, at, ""));
    };
    let role = str_of(&v, "role").unwrap_or("unknown").to_string();
    let body = match role.as_str() {
        "user" | "assistant" | "system" => html! {
            @if let Some(m) = str_of(&v, "model") {
                div.meta { (ctx.clean(str_of(&v, "provider").unwrap_or(""))) "/" (ctx.clean(m)) }
            }
            (blocks(ctx, v.get("content"), at, "/content"))
            @if let Some(e) = str_of(&v, "errorMessage") {
                p.error { "error: " (ctx.clean(e)) }
            }
        },
        "toolResult" => tool_result(ctx, &v, at),
        "bashExecution" => html! {
            div.meta { "the user ran bash, exit code " (v.get("exitCode").map_or("?".into(), Value::to_string)) }
            pre.cmd { "$ " (ctx.clean(str_of(&v, "command").unwrap_or_default())) }
            (folded(ctx, str_of(&v, "output").unwrap_or_default(), at, "/output", "output"))
        },
        "custom" => html! {
            div.meta { "custom: " (ctx.clean(str_of(&v, "customType").unwrap_or("custom"))) }
            (blocks(ctx, v.get("content"), at, "/content"))
        },
        "branchSummary" => html! {
            div.meta { "summary of a branch left at " (ctx.clean(str_of(&v, "fromId").unwrap_or("?"))) }
            (md(ctx, str_of(&v, "summary").unwrap_or_default(), at, "/summary"))
        },
        "compactionSummary" => html! {
            div.meta { "compaction: summary of the conversation before it ("
                (v.get("tokensBefore").map_or("?".into(), Value::to_string)) " tokens)" }
            (md(ctx, str_of(&v, "summary").unwrap_or_default(), at, "/summary"))
        },
        _ => plain(ctx, &v.to_string(), at, ""),
    };
    (role, body)
}

/// A `content` string or array of blocks.
fn blocks(ctx: &Ctx, content: Option<&Value>, at: &At, pointer: &str) -> Markup {
    match content {
        None | Some(Value::Null) => html! {},
        Some(Value::String(s)) => md(ctx, s, at, pointer),
        Some(Value::Array(items)) => html! {
            @for (i, b) in items.iter().enumerate() {
                (block(ctx, b, at, &format!("{pointer}/{i}")))
            }
        },
        Some(other) => plain(ctx, &other.to_string(), at, ""),
    }
}

fn block(ctx: &Ctx, b: &Value, at: &At, pointer: &str) -> Markup {
    match str_of(b, "type") {
        Some("text") => md(
            ctx,
            str_of(b, "text").unwrap_or_default(),
            at,
            &format!("{pointer}/text"),
        ),
        Some("thinking") => {
            let t = str_of(b, "thinking").unwrap_or_default();
            html! {
                @if !t.trim().is_empty() {
                    details.thinking { summary { "thinking" } (md(ctx, t, at, &format!("{pointer}/thinking"))) }
                }
            }
        }
        Some("toolCall") => tool_call(ctx, b, at, pointer),
        Some("image") => image(b, at, pointer),
        _ => plain(ctx, &b.to_string(), at, ""),
    }
}

fn image(b: &Value, at: &At, pointer: &str) -> Markup {
    let mime = str_of(b, "mimeType").unwrap_or("?");
    html! {
        @if super::session::RASTER.contains(&mime) && super::session::claims_truly(mime, str_of(b, "data").unwrap_or_default()) {
            img.shot src=(at.part("image", pointer)) alt="an image from the transcript" loading="lazy";
        } @else {
            p.meta { "[an image that is not the raster type it claims (" (super::controls(mime)) ") is not shown]" }
        }
    }
}

fn tool_call(ctx: &Ctx, b: &Value, at: &At, pointer: &str) -> Markup {
    let name = str_of(b, "name").unwrap_or("?");
    let args = b.get("arguments").unwrap_or(&Value::Null);
    let arg = |k: &str| str_of(args, k).unwrap_or_default();
    let p = |k: &str| format!("{pointer}/arguments/{k}");
    html! {
        div.call {
            div.meta { "tool call " b { (ctx.clean(name)) }
                // File history reads the local index (the team server keeps no touches).
                @if !arg("path").is_empty() && ctx.server { " " code { (ctx.clean(arg("path"))) } }
                @else if !arg("path").is_empty() {
                    " " a.file href=(super::files::url(arg("path"), at.url)) title="this file's history" { code { (ctx.clean(arg("path"))) } } } }
            @match name {
                "bash" => pre.cmd { "$ " (ctx.clean(arg("command"))) },
                "edit" => (edit(ctx, args)),
                "write" => (folded(ctx, arg("content"), at, &p("content"), "file")),
                _ => (folded(ctx, &serde_json::to_string_pretty(args).unwrap_or_default(), at, "", "arguments")),
            }
        }
    }
}

/// An `edit` call's replacements as a diff (one `oldText`/`newText`, or an `edits` list).
fn edit(ctx: &Ctx, args: &Value) -> Markup {
    let one = [args.clone()];
    let edits: &[Value] = match args.get("edits") {
        Some(Value::Array(list)) => list,
        _ => &one,
    };
    html! {
        @for e in edits {
            pre.diff {
                @for line in ctx.clean(str_of(e, "oldText").unwrap_or_default()).lines().take(2000) {
                    span.del { "-" (line) "\n" }
                }
                @for line in ctx.clean(str_of(e, "newText").unwrap_or_default()).lines().take(2000) {
                    span.add { "+" (line) "\n" }
                }
            }
        }
    }
}

fn tool_result(ctx: &Ctx, v: &Value, at: &At) -> Markup {
    let failed = v.get("isError").and_then(Value::as_bool) == Some(true);
    let mut text = String::new();
    let mut images = Vec::new();
    if let Some(Value::Array(items)) = v.get("content") {
        for (i, b) in items.iter().enumerate() {
            match str_of(b, "type") {
                Some("text") => text.push_str(str_of(b, "text").unwrap_or_default()),
                Some("image") => images.push(image(b, at, &format!("/content/{i}"))),
                _ => {}
            }
        }
    } else if let Some(s) = str_of(v, "content") {
        text.push_str(s);
    }
    let pointer = match v.get("content") {
        Some(Value::Array(items)) if items.len() == 1 => "/content/0/text",
        _ => "",
    };
    html! {
        div.meta.error[failed] {
            "result of " (ctx.clean(str_of(v, "toolName").unwrap_or("?")))
            @if failed { " (error)" }
        }
        (folded(ctx, &text, at, pointer, "output"))
        @for i in images { (i) }
    }
}

/// Preformatted text, folded when long.
fn folded(ctx: &Ctx, text: &str, at: &At, pointer: &str, what: &str) -> Markup {
    let n = text.chars().count();
    if n <= UNFOLDED {
        return plain(ctx, text, at, pointer);
    }
    html! {
        details.fold {
            summary { (what) " (" (super::page::num(n as i64)) " characters, " (super::page::num(text.lines().count() as i64)) " lines)" }
            (plain(ctx, text, at, pointer))
        }
    }
}

/// Secrets are far shorter than this (bytes) on either side of a cut.
const AROUND: usize = 16 << 10;

/// Where a piece of `s` that starts at byte `from` and holds `n` characters ends (a byte
/// index): after the `n`th character, moved past a secret the cut would split, so each piece is
/// redacted whole on its own and no secret is shown half on each side.
pub fn piece_end(s: &str, from: usize, n: usize) -> usize {
    let Some((len, _)) = s[from..].char_indices().nth(n) else {
        return s.len();
    };
    let end = from + len;
    let mut lo = end.saturating_sub(AROUND).max(from);
    while !s.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = (end + AROUND).min(s.len());
    while !s.is_char_boundary(hi) {
        hi -= 1;
    }
    crate::redact::find(&s[lo..hi])
        .iter()
        .find(|f| lo + f.start < end && lo + f.end > end)
        .map_or(end, |f| lo + f.end)
}

/// Where a piece asked to start at byte `at` of `s` starts: earlier, at the start of a secret
/// that `at` would split (an address made by hand), else `at`.
pub fn piece_start(s: &str, at: usize) -> usize {
    let mut hi = (at + AROUND).min(s.len());
    while !s.is_char_boundary(hi) {
        hi -= 1;
    }
    crate::redact::find(&s[..hi])
        .iter()
        .find(|f| f.start < at && f.end > at)
        .map_or(at, |f| f.start)
}

/// `s` (the whole string, or its start when `bigjson` cut it) cut to [`MAX_TEXT`] characters,
/// and the link to the rest when it was cut.
fn cut<'a>(s: &'a str, at: &At, pointer: &str) -> (&'a str, Option<Markup>) {
    let i = piece_end(s, 0, MAX_TEXT);
    if i == s.len() {
        return (s, None);
    }
    let rest = s.len() - i;
    // A string `bigjson` cut is longer than this page knows.
    let known = s.len() < super::bigjson::LIMIT / 2;
    let from = s[..i].chars().count();
    let link = html! {
        p.more {
            @if pointer.is_empty() {
                "… " @if known { (super::page::num(rest as i64)) } @else { "many" } " more bytes not shown"
            } @else {
                a href=(format!("{}&from={from}", at.part("text", pointer))) {
                    @if known { "… the rest (" (super::page::num(rest as i64)) " bytes) as plain text" }
                    @else { "… the rest as plain text, a megabyte at a time" }
                }
            }
        }
    };
    (&s[..i], Some(link))
}

// Both cut before they clean (at a place no secret straddles, `piece_end`): the text endpoint
// pages through the same string with the same cuts, so each piece is redacted as a whole.
fn plain(ctx: &Ctx, s: &str, at: &At, pointer: &str) -> Markup {
    let (shown, more) = cut(s, at, pointer);
    html! { pre.text { (ctx.clean(shown)) } @if let Some(m) = more { (m) } }
}

fn md(ctx: &Ctx, s: &str, at: &At, pointer: &str) -> Markup {
    let (shown, more) = cut(s, at, pointer);
    let shown = ctx.clean(shown);
    html! {
        div.md { (PreEscaped(markdown::to_html(&shown))) }
        @if let Some(m) = more { (m) }
    }
}
