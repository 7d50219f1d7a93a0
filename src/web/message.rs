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

/// A message parsed for the page: a huge one with its long strings cut (a page shows their
/// start only).
pub fn parse(raw: &str) -> Option<Value> {
    let shrunk = super::bigjson::shrink(raw);
    crate::pi::line::parse_json(shrunk.as_deref().unwrap_or(raw)).ok()
}

/// A tool result shown inside the call that asked for it (the same page holds both): the
/// parsed result, where it is, and the time its call was made (for the duration).
pub struct Paired<'a> {
    pub result: &'a Value,
    pub at: At<'a>,
}

/// Results by the id of their call.
pub type Results<'a> = std::collections::HashMap<&'a str, Paired<'a>>;

/// The id of the call a tool result answers.
pub fn call_id(v: &Value) -> Option<&str> {
    (str_of(v, "role") == Some("toolResult"))
        .then(|| str_of(v, "toolCallId"))
        .flatten()
}

/// The ids of an assistant message's tool calls.
pub fn call_ids(v: &Value) -> impl Iterator<Item = &str> {
    v.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| str_of(b, "type") == Some("toolCall"))
        .filter_map(|b| str_of(b, "id"))
}

/// A message: its role and its body. `raw` is shown as text when `v` did not parse.
pub fn render(
    ctx: &Ctx,
    v: Option<&Value>,
    raw: &str,
    at: &At,
    results: &Results,
) -> (String, Markup) {
    let Some(v) = v else {
        return ("unknown".into(), plain(ctx, raw, at, ""));
    };
    let role = str_of(v, "role").unwrap_or("unknown").to_string();
    let body = match read(v) {
        Shown::Said {
            role: "system",
            content,
            ..
        } => system(ctx, v, &content, at),
        Shown::Said {
            role: said,
            content,
            model,
            error,
        } => {
            let how = Said {
                user: said == "user",
                started: v.get("timestamp").and_then(Value::as_i64),
                results,
            };
            html! {
                @if let Some((provider, m)) = model {
                    div.meta { (ctx.clean(provider)) "/" (ctx.clean(m)) }
                }
                (blocks(ctx, &content, at, "/content", &how))
                @if let Some(e) = error {
                    p.error { "error: " (ctx.clean(e)) }
                }
            }
        }
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
            (blocks(ctx, &content, at, "/content", &Said::other(results)))
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

/// How a said message's blocks are shown: a person's text as typed (pi shows it so, and a
/// pasted log is not Markdown), the rest as Markdown; tool calls with their results.
struct Said<'r, 'a> {
    user: bool,
    /// When the message was written (pi's ms), the start of its tool calls' durations.
    started: Option<i64>,
    results: &'r Results<'a>,
}

impl<'r, 'a> Said<'r, 'a> {
    fn other(results: &'r Results<'a>) -> Self {
        Said {
            user: false,
            started: None,
            results,
        }
    }
}

/// A system prompt, folded (it is a screen or more before the first user message): pi 1.6
/// writes it in `sections` with an empty `content` (spec 2.5), so those are shown then.
fn system(ctx: &Ctx, v: &Value, content: &Content, at: &At) -> Markup {
    let text = content.text();
    let sections: Vec<(&str, &str)> = v
        .get("sections")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, s)| s.as_str().map(|s| (k.as_str(), s)))
                .collect()
        })
        .unwrap_or_default();
    let tools: Vec<&str> = v
        .get("toolsAdded")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| str_of(t, "name"))
        .collect();
    let chars = if text.trim().is_empty() {
        sections.iter().map(|(_, s)| s.chars().count()).sum()
    } else {
        text.chars().count()
    };
    html! {
        details.system {
            summary { "system prompt · " (super::page::num(chars as i64)) " characters"
                @if !sections.is_empty() { " · sections: " (ctx.clean(&sections.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "))) }
                @if !tools.is_empty() { " · tools: " (ctx.clean(&tools.join(", "))) } }
            @if !text.trim().is_empty() {
                (blocks(ctx, content, at, "/content", &Said { user: true, started: None, results: &Results::new() }))
            }
            @for (name, s) in &sections {
                @if text.trim().is_empty() || !text.contains(*s) {
                    h3.section { (ctx.clean(name)) }
                    (verbatim(ctx, s, at, &format!("/sections/{}", name.replace('~', "~0").replace('/', "~1"))))
                }
            }
        }
    }
}

/// A `content` string or array of blocks.
fn blocks(ctx: &Ctx, content: &Content, at: &At, pointer: &str, how: &Said) -> Markup {
    match content {
        Content::Empty => html! {},
        Content::Text(s) if how.user => verbatim(ctx, s, at, pointer),
        Content::Text(s) => md(ctx, s, at, pointer),
        Content::Blocks(items) => html! {
            @for (i, b) in items.iter().enumerate() {
                (block(ctx, b, at, &format!("{pointer}/{i}"), how))
            }
        },
        Content::Other(other) => plain(ctx, &other.to_string(), at, ""),
    }
}

fn block(ctx: &Ctx, b: &Block, at: &At, pointer: &str, how: &Said) -> Markup {
    match b {
        Block::Text(t) if how.user => verbatim(ctx, t, at, &format!("{pointer}/text")),
        Block::Text(t) => md(ctx, t, at, &format!("{pointer}/text")),
        Block::Thinking(t) => html! {
            @if !t.trim().is_empty() {
                details.thinking {
                    summary { "thinking · " span.first { (ctx.line(t.trim(), 100)) } }
                    (md(ctx, t, at, &format!("{pointer}/thinking")))
                }
            }
        },
        Block::ToolCall { name, id, args } => tool_call(
            ctx,
            &Call {
                name,
                args: args.unwrap_or(&Value::Null),
                pointer,
                result: how.results.get(id),
                started: how.started,
            },
            at,
        ),
        Block::Image { mime, data } => image(ctx, *mime, data, at, pointer),
        Block::Other(b) => plain(ctx, &b.to_string(), at, ""),
    }
}

fn image(ctx: &Ctx, mime: Option<&str>, data: &str, at: &At, pointer: &str) -> Markup {
    let mime = mime.unwrap_or("?");
    // An exported page holds its images (only base64 of the raster type they claim, checked
    // above, so the address is data and nothing else).
    let src = if ctx.export {
        format!("data:{mime};base64,{}", data.trim())
    } else {
        at.part("image", pointer)
    };
    html! {
        @if super::raster::RASTER.contains(&mime) && super::raster::claims_truly(mime, data) {
            img.shot src=(src) alt="an image from the transcript" loading="lazy";
        } @else {
            p.meta { "[an image that is not the raster type it claims (" (super::controls(mime)) ") is not shown]" }
        }
    }
}

/// A tool call as the page shows it: its name, arguments, and the result that answered it.
struct Call<'a, 'p> {
    name: &'a str,
    args: &'a Value,
    pointer: &'a str,
    result: Option<&'p Paired<'p>>,
    started: Option<i64>,
}

/// What a call is about: its path, command or pattern (a line of it is shown, `Ctx::line`).
fn call_subject(args: &Value) -> &str {
    ["path", "command", "file_path", "pattern", "url", "query"]
        .iter()
        .find_map(|k| str_of(args, k).filter(|s| !s.is_empty()))
        .unwrap_or_default()
}

/// A duration as the CLI says it: `850ms`, `4.2s`, `3m 10s`.
fn duration(ms: i64) -> String {
    match ms {
        ..=999 => format!("{}ms", ms.max(0)),
        1000..=59_999 => format!("{:.1}s", ms as f64 / 1000.0),
        _ => format!("{}m {}s", ms / 60_000, ms % 60_000 / 1000),
    }
}

/// A call folded to one line (tool, subject, status, duration), its arguments and its result
/// side by side when opened.
fn tool_call(ctx: &Ctx, c: &Call, at: &At) -> Markup {
    let arg = |k: &str| str_of(c.args, k).unwrap_or_default();
    let p = |k: &str| format!("{}/arguments/{k}", c.pointer);
    let failed = c
        .result
        .is_some_and(|r| r.result.get("isError").and_then(Value::as_bool) == Some(true));
    let status = match c.result {
        None => "no result here",
        Some(_) if failed => "error",
        Some(_) => "ok",
    };
    // pi 1.x writes a result's own duration; before it, the time from the call's message to
    // its result is the best there is (it includes the rest of the model's answer).
    let took = c.result.and_then(|r| {
        let v = r.result;
        v.get("durationMs")
            .and_then(Value::as_i64)
            .or_else(|| Some(v.get("timestamp").and_then(Value::as_i64)? - c.started?))
    });
    let path = arg("path");
    html! {
        details.call.failed[failed] {
            summary {
                span.tool { (ctx.clean(c.name)) }
                @let subject = call_subject(c.args);
                @if !subject.is_empty() { " " code.subject { (ctx.line(subject, 90)) } }
                " · " span.status { (status) }
                @if let Some(ms) = took { " · " span.took { (duration(ms)) } }
            }
            div.pair {
                div.args {
                    // File history reads the local index (the team server keeps no touches).
                    @if !path.is_empty() && !ctx.server && !ctx.export {
                        div.meta { a.file href=(super::files::url(path, at.url)) title="this file's history" { "history of " code { (ctx.clean(path)) } } }
                    }
                    @match c.name {
                        "bash" => pre.cmd { "$ " (ctx.clean(arg("command"))) },
                        "edit" => (edit(ctx, c.args)),
                        "write" => (folded(ctx, arg("content"), at, &p("content"), "file")),
                        _ => (folded(ctx, &serde_json::to_string_pretty(c.args).unwrap_or_default(), at, "", "arguments")),
                    }
                }
                @if let Some(r) = c.result {
                    div.result {
                        @match read(r.result) {
                            Shown::ToolResult { tool, failed, content, .. } =>
                                (tool_result(ctx, tool.unwrap_or("?"), failed, &content, &r.at)),
                            _ => {},
                        }
                    }
                }
            }
        }
    }
}

/// An `edit` call's replacements as a diff (one `oldText`/`newText`, or an `edits` list): the
/// lines both sides share at the start and end are context, so an edit that appends a line
/// shows one added line, not the old line deleted and added again.
fn edit(ctx: &Ctx, args: &Value) -> Markup {
    let one = [args.clone()];
    let edits: &[Value] = match args.get("edits") {
        Some(Value::Array(list)) => list,
        _ => &one,
    };
    html! {
        @for e in edits {
            @let old = ctx.clean(str_of(e, "oldText").unwrap_or_default()).into_owned();
            @let new = ctx.clean(str_of(e, "newText").unwrap_or_default()).into_owned();
            pre.diff {
                @for (sign, line) in diff_lines(&old, &new).into_iter().take(4000) {
                    @match sign {
                        '-' => span.del { "-" (line) "\n" },
                        '+' => span.add { "+" (line) "\n" },
                        _ => span.same { " " (line) "\n" },
                    }
                }
            }
        }
    }
}

/// The lines of an edit marked `' '` (shared at the start or the end), `-` or `+`.
fn diff_lines<'a>(old: &'a str, new: &'a str) -> Vec<(char, &'a str)> {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out: Vec<(char, &str)> = a[..head].iter().map(|l| (' ', *l)).collect();
    out.extend(a[head..a.len() - tail].iter().map(|l| ('-', *l)));
    out.extend(b[head..b.len() - tail].iter().map(|l| ('+', *l)));
    out.extend(a[a.len() - tail..].iter().map(|l| (' ', *l)));
    out
}

fn tool_result(ctx: &Ctx, tool: &str, failed: bool, content: &Content, at: &At) -> Markup {
    let mut images = Vec::new();
    if let Content::Blocks(items) = content {
        for (i, b) in items.iter().enumerate() {
            if let Block::Image { mime, data } = b {
                images.push(image(ctx, *mime, data, at, &format!("/content/{i}")));
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
fn cut<'a>(ctx: &Ctx, s: &'a str, at: &At, pointer: &str) -> (&'a str, Option<Markup>) {
    // An export is read without a server to ask for the rest: it holds all it has.
    let i = if ctx.export {
        s.len()
    } else {
        piece_end(s, 0, MAX_TEXT)
    };
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
    let (shown, more) = cut(ctx, s, at, pointer);
    html! { pre.text { (ctx.clean(shown)) } @if let Some(m) = more { (m) } }
}

/// A person's text as typed: wrapped as written, escaped, its web addresses links.
fn verbatim(ctx: &Ctx, s: &str, at: &At, pointer: &str) -> Markup {
    let (shown, more) = cut(ctx, s, at, pointer);
    let shown = ctx.clean(shown);
    html! {
        pre.said { @for (link, t) in links(&shown) {
            @if link { a href=(t) rel="noopener noreferrer" { (t) } } @else { (t) } } }
        @if let Some(m) = more { (m) }
    }
}

/// `s` cut into text and `http(s)://` addresses (`true`), an address ending before the
/// punctuation that closes a sentence or a bracket.
fn links(s: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = ["https://", "http://"]
        .iter()
        .filter_map(|p| rest.find(p))
        .min()
    {
        let len = rest[i..]
            .find(|c: char| c.is_whitespace() || "<>\"'`".contains(c))
            .unwrap_or(rest.len() - i);
        let url = rest[i..i + len].trim_end_matches(|c: char| ".,;:!?)]}".contains(c));
        if url.len() <= "https://".len() {
            out.push((false, &rest[..i + len]));
        } else {
            out.push((false, &rest[..i]));
            out.push((true, url));
            out.push((false, &rest[i + url.len()..i + len]));
        }
        rest = &rest[i + len..];
    }
    out.push((false, rest));
    out.retain(|(_, t)| !t.is_empty());
    out
}

fn md(ctx: &Ctx, s: &str, at: &At, pointer: &str) -> Markup {
    let (shown, more) = cut(ctx, s, at, pointer);
    let shown = ctx.clean(shown);
    html! {
        div.md { (PreEscaped(markdown::to_html(&shown))) }
        @if let Some(m) = more { (m) }
    }
}

#[cfg(test)]
mod tests {
    use super::{diff_lines, links};

    #[test]
    fn addresses_in_typed_text_become_links_without_their_closing_punctuation() {
        assert_eq!(
            links("see https://e.org/a?b=1). and (http://x.y) ok"),
            vec![
                (false, "see "),
                (true, "https://e.org/a?b=1"),
                (false, ")."),
                (false, " and ("),
                (true, "http://x.y"),
                (false, ")"),
                (false, " ok")
            ]
        );
        assert_eq!(
            links("https:// alone"),
            vec![(false, "https://"), (false, " alone")]
        );
        assert_eq!(
            links("javascript:x() no"),
            vec![(false, "javascript:x() no")]
        );
    }

    #[test]
    fn an_edit_that_appends_a_line_shows_one_added_line() {
        assert_eq!(
            diff_lines("fn a() {}\n", "fn a() {}\nfn b() {}\n"),
            vec![(' ', "fn a() {}"), ('+', "fn b() {}")]
        );
        assert_eq!(
            diff_lines("a\nb\nc", "a\nB\nc"),
            vec![(' ', "a"), ('-', "b"), ('+', "B"), (' ', "c")]
        );
        assert_eq!(diff_lines("x\nx", "x"), vec![(' ', "x"), ('-', "x")]);
    }
}
