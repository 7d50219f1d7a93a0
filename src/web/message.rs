//! One context message (pi's JSON, as `query::context` returns it) as HTML: user and assistant
//! text as Markdown, thinking folded, tool calls with their arguments (`edit` as a diff, `write`
//! as a file, `bash` as a command), tool results folded when long and marked when they failed,
//! images through the image endpoint, summaries and custom messages marked. Every string passes
//! `Ctx::clean` and is escaped by maud; a very long string shows its start and links the rest.

use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use super::markdown;
use super::Ctx;
use crate::pi::shown::{read, Block, Content, Shown};

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
    let body = match read(&v) {
        Shown::Said {
            content,
            model,
            error,
            ..
        } => html! {
            @if let Some((provider, m)) = model {
                div.meta { (ctx.clean(provider)) "/" (ctx.clean(m)) }
            }
            (blocks(ctx, &content, at, "/content"))
            @if let Some(e) = error {
                p.error { "error: " (ctx.clean(e)) }
            }
        },
        Shown::ToolResult {
            tool,
            failed,
            content,
            ..
        } => tool_result(ctx, tool.unwrap_or("?"), failed, &content, at),
        Shown::Bash {
            command,
            exit,
            output,
        } => html! {
            div.meta { "the user ran bash, exit code " (exit.map_or("?".into(), Value::to_string)) }
            pre.cmd { "$ " (ctx.clean(command)) }
            (folded(ctx, output, at, "/output", "output"))
        },
        Shown::Custom { kind, content } => html! {
            div.meta { "custom: " (ctx.clean(kind)) }
            (blocks(ctx, &content, at, "/content"))
        },
        Shown::BranchSummary { from, summary } => html! {
            div.meta { "summary of a branch left at " (ctx.clean(from)) }
            (md(ctx, summary, at, "/summary"))
        },
        Shown::Compaction {
            tokens_before,
            summary,
        } => html! {
            div.meta { "compaction: summary of the conversation before it ("
                (tokens_before.map_or("?".into(), Value::to_string)) " tokens)" }
            (md(ctx, summary, at, "/summary"))
        },
        Shown::Other(v) => plain(ctx, &v.to_string(), at, ""),
    };
    (role, body)
}

/// A `content` string or array of blocks.
fn blocks(ctx: &Ctx, content: &Content, at: &At, pointer: &str) -> Markup {
    match content {
        Content::Empty => html! {},
        Content::Text(s) => md(ctx, s, at, pointer),
        Content::Blocks(items) => html! {
            @for (i, b) in items.iter().enumerate() {
                (block(ctx, b, at, &format!("{pointer}/{i}")))
            }
        },
        Content::Other(other) => plain(ctx, &other.to_string(), at, ""),
    }
}

fn block(ctx: &Ctx, b: &Block, at: &At, pointer: &str) -> Markup {
    match b {
        Block::Text(t) => md(ctx, t, at, &format!("{pointer}/text")),
        Block::Thinking(t) => html! {
            @if !t.trim().is_empty() {
                details.thinking { summary { "thinking" } (md(ctx, t, at, &format!("{pointer}/thinking"))) }
            }
        },
        Block::ToolCall { name, args, .. } => {
            tool_call(ctx, name, args.unwrap_or(&Value::Null), at, pointer)
        }
        Block::Image { mime, data } => image(*mime, data, at, pointer),
        Block::Other(b) => plain(ctx, &b.to_string(), at, ""),
    }
}

fn image(mime: Option<&str>, data: &str, at: &At, pointer: &str) -> Markup {
    let mime = mime.unwrap_or("?");
    html! {
        @if super::raster::RASTER.contains(&mime) && super::raster::claims_truly(mime, data) {
            img.shot src=(at.part("image", pointer)) alt="an image from the transcript" loading="lazy";
        } @else {
            p.meta { "[an image that is not the raster type it claims (" (super::controls(mime)) ") is not shown]" }
        }
    }
}

fn tool_call(ctx: &Ctx, name: &str, args: &Value, at: &At, pointer: &str) -> Markup {
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

fn tool_result(ctx: &Ctx, tool: &str, failed: bool, content: &Content, at: &At) -> Markup {
    let mut images = Vec::new();
    if let Content::Blocks(items) = content {
        for (i, b) in items.iter().enumerate() {
            if let Block::Image { mime, data } = b {
                images.push(image(*mime, data, at, &format!("/content/{i}")));
            }
        }
    }
    let pointer = match content {
        Content::Blocks(items) if items.len() == 1 => "/content/0/text",
        _ => "",
    };
    html! {
        div.meta.error[failed] {
            "result of " (ctx.clean(tool))
            @if failed { " (error)" }
        }
        (folded(ctx, &content.text(), at, pointer, "output"))
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
