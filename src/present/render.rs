//! Human output: the session table (like pi's picker), session details, the conversation as
//! text, the ASCII tree and the status report. Every piece of transcript text passes through
//! `output::one_line` or `output::block` first.

use std::collections::HashMap;
use std::io;

use serde_json::Value;

use super::numbers::{money, tokens};
use super::output::{age, block, one_line, plural, thousands, truncate, Out};
use super::table::{self, Column, Cut};
use crate::pi::huge::{self, Huge};
use crate::pi::line::Line;
use crate::pi::shown::{read, Block, Content, Shown};
use crate::query::context::{Context, ContextPlan};
use crate::query::list::SessionInfo;
use crate::query::show::SessionDetail;
use crate::query::status::Status;
use crate::query::tree::{walk_tree, Event, Tree};

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// pi's picker row: name or first message, message count, age, handle (and cwd across
/// projects), fitted to the terminal: the text column shrinks first, then the cwd (cut in the
/// middle), never the handle; into a pipe, nothing is cut.
pub fn session_table(
    out: &mut Out,
    sessions: &[SessionInfo],
    handles: &HashMap<i64, String>,
    all: bool,
) -> io::Result<()> {
    let now = now_ms();
    let gateway = sessions.iter().any(|s| s.gateway.is_some());
    let mut cols = vec![
        Column::text("SESSION", Cut::End, 16),
        Column::number("MSGS"),
        Column::text("AGE", Cut::Never, 0),
        Column::text("ID", Cut::Never, 0),
    ];
    if gateway {
        cols.push(Column::text("AGENT / KEY", Cut::Middle, 16));
    }
    if all {
        cols.push(Column::text("CWD", Cut::Middle, 12));
    }
    // Rows from the team server name the machine they came from.
    let sourced = sessions.iter().any(|s| s.source.is_some());
    if sourced {
        cols.push(Column::text("SOURCE", Cut::End, 8));
    }
    let rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            let mut row = vec![
                one_line(s.title()),
                thousands(s.message_count),
                age(s.modified_ms, now),
                one_line(handles.get(&s.file_id).map_or("-", String::as_str)),
            ];
            if gateway {
                row.push(s.gateway.as_ref().map_or("-".into(), |g| {
                    let key = g.session_key.as_deref().unwrap_or("(no key)");
                    let earlier = if g.deleted {
                        " (deleted)"
                    } else if g.current == Some(false) {
                        " (earlier)"
                    } else {
                        ""
                    };
                    one_line(&format!("{} {key}{earlier}", g.agent_id))
                }));
            }
            if all {
                row.push(one_line(&s.cwd));
            }
            if sourced {
                row.push(one_line(s.source.as_deref().unwrap_or("-")));
            }
            row
        })
        .collect();
    // Without a width (a pipe) nothing is cut: a script reads whole titles.
    let width = out.width;
    let shrink: Vec<usize> = std::iter::once(0).chain(4..cols.len()).collect();
    out.lines(table::render(&cols, &rows, width, &shrink))
}

pub fn session_detail(out: &mut Out, d: &SessionDetail) -> io::Result<()> {
    detail_header(out, d)?;
    detail_usage(out, d)?;
    for (line, reason) in &d.bad_lines {
        out.line(&field("bad line", &format!("{}:{line}: {reason}", d.path)))?;
    }
    if let Some(g) = &d.gateway {
        detail_gateway(out, g)?;
    }
    Ok(())
}

/// One `name:  value` line of `show`.
fn field(k: &str, v: &str) -> String {
    format!("{:<12} {}", format!("{k}:"), one_line(v))
}

fn detail_header(out: &mut Out, d: &SessionDetail) -> io::Result<()> {
    out.line(&field("path", &d.path))?;
    if let Some(source) = &d.source {
        out.line(&field("source", source))?;
    }
    out.line(&field("id", d.id.as_deref().unwrap_or("(none)")))?;
    out.line(&field("handle", &d.handle))?;
    out.line(&field("cwd", &d.cwd))?;
    if let Some(n) = &d.name {
        out.line(&field("name", n))?;
    }
    out.line(&field(
        "created",
        d.created.as_deref().unwrap_or("(invalid)"),
    ))?;
    if let Some(m) = &d.modified {
        out.line(&field("modified", m))?;
    }
    if let Some(p) = &d.parent_session_path {
        out.line(&field("parent", p.as_str().unwrap_or(&p.to_string())))?;
    }
    out.line(&field("version", &d.version.to_string()))?;
    if let Some(why) = &d.hidden_because {
        out.line(&field(
            "hidden",
            &format!("pi's /resume does not list it: {why}"),
        ))?;
    }
    if !d.loadable {
        out.line(&field(
            "unloadable",
            "pi cannot open it (no session header with an id first)",
        ))?;
    }
    let roles: Vec<String> = d
        .messages_by_role
        .iter()
        .map(|(r, n)| format!("{r} {n}"))
        .collect();
    out.line(&field(
        "entries",
        &format!(
            "{} ({} messages: {})",
            d.entries,
            d.stats.total_messages,
            roles.join(", ")
        ),
    ))?;
    out.line(&field("leaf", d.leaf_id.as_deref().unwrap_or("(none)")))?;
    for (target, label) in &d.labels {
        out.line(&field("label", &format!("{target} = {label}")))?;
    }
    Ok(())
}

fn detail_usage(out: &mut Out, d: &SessionDetail) -> io::Result<()> {
    let s = &d.stats;
    out.line(&field(
        "tool calls",
        &format!("{} ({} results)", s.tool_calls, s.tool_results),
    ))?;
    out.line(&field(
        "tokens",
        &format!(
            "{} total: {} in, {} out, {} cache read, {} cache write",
            thousands(s.tokens.total),
            thousands(s.tokens.input),
            thousands(s.tokens.output),
            thousands(s.tokens.cache_read),
            thousands(s.tokens.cache_write)
        ),
    ))?;
    out.line(&field("cost", &money(s.cost)))?;
    for m in &d.models {
        out.line(&field(
            "  model",
            &format!("{}: {}, {}", m.model, tokens(m.tokens), money(m.cost)),
        ))?;
    }
    Ok(())
}

fn detail_gateway(out: &mut Out, g: &Value) -> io::Result<()> {
    {
        let text = |k: &str| g[k].as_str().map(str::to_string);
        out.line(&field("agent", &text("agentId").unwrap_or_default()))?;
        let key = match (text("sessionKey"), g["current"].as_bool()) {
            (Some(k), _) if g["deleted"] == true => {
                format!("{k} (deleted: OpenClaw no longer lists this key)")
            }
            (Some(k), Some(false)) => format!("{k} (an earlier transcript of this key)"),
            (Some(k), _) => k,
            (None, _) => "(none: sessions.json does not name this transcript)".into(),
        };
        out.line(&field("key", &key))?;
        for (label, k) in [
            ("channel", "channel"),
            ("chat type", "chatType"),
            ("peer", "peer"),
            ("display", "displayName"),
            ("subject", "subject"),
            ("thread", "threadId"),
        ] {
            if let Some(v) = text(k) {
                out.line(&field(label, &v))?;
            }
        }
        if let Some(entry) = g.get("entry").filter(|e| e.is_object()) {
            out.line(&field("sessions.json", &entry.to_string()))?;
        }
    }
    Ok(())
}

/// The conversation as readable text.
pub fn context(out: &mut Out, ctx: Context) -> io::Result<()> {
    print_line(out, "2", &context_header(&ctx, ctx.messages.len()))?;
    for raw in ctx.messages {
        message_lines(raw, &mut |style, line| print_line(out, style, line))?;
    }
    Ok(())
}

fn print_line(out: &mut Out, style: &str, line: &str) -> io::Result<()> {
    if style.is_empty() {
        out.line(line)
    } else {
        let painted = out.paint(style, line);
        out.line(&painted)
    }
}

/// `pidx context` of a local session: as [`context`], each message printed as it is read, so
/// memory holds one message (once, when it is huge: `pi::huge`), never the whole context.
///
/// # Errors
/// As `ContextPlan::messages_at`; `Io` when the output fails.
pub fn context_plan(out: &mut Out, plan: &ContextPlan) -> crate::Result<()> {
    let io = |e| crate::Error::io("standard output", e);
    let mut ahead = plan.read_ahead(READ_AHEAD)?;
    print_line(out, "2", &context_header(&plan.settings, ahead.count)).map_err(io)?;
    for i in 0..plan.len() {
        for raw in ahead.take(plan, i)? {
            message_lines(raw, &mut |style, line| print_line(out, style, line)).map_err(io)?;
        }
    }
    Ok(())
}

/// A message's role and its text as `pidx context` shows it (a tool's output cut to its first
/// lines), unpainted and not yet neutralised: what `context --max-chars` pages through.
pub fn message_text_of(raw: &str) -> (String, String) {
    let (msg, huge) = parse_message(raw.to_string());
    let role = msg
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let mut text = String::new();
    for (section, cap) in message_text(&msg) {
        let pieces = huge.as_ref().and_then(|h| h.pieces(&section));
        let pieces = pieces.unwrap_or_else(|| vec![section.as_str()]);
        let _ = each_line(&pieces, cap, &mut |line| {
            text.push_str(line);
            text.push('\n');
            Ok(())
        });
    }
    (role, text)
}

/// One page of `pidx context --max-chars`: each piece under its role (a message cut by the page
/// says which characters these are), then how to go on when there is more.
pub fn context_page(
    out: &mut Out,
    settings: Option<&Context>,
    pieces: &[crate::query::context::page::Piece],
    more: Option<&str>,
) -> io::Result<()> {
    if let Some(ctx) = settings {
        print_line(out, "2", &context_settings(ctx))?;
    }
    for p in pieces {
        print_line(out, "", "")?;
        let part = if p.is_whole() {
            String::new()
        } else {
            format!(" (characters {}-{} of {})", p.from, p.to, p.total)
        };
        print_line(out, "1;36", &format!("── {}{part} ", one_line(&p.role)))?;
        for line in p.text.lines() {
            print_line(out, "", &block(line))?;
        }
    }
    if let Some(more) = more {
        print_line(out, "", "")?;
        print_line(out, "2", &format!("… more follows: {more}"))?;
    }
    Ok(())
}

/// Messages kept from the count to the printing (beyond it they are read twice).
const READ_AHEAD: usize = 16 << 20;

/// The conversation as neutralised lines, each with the SGR style it is painted in on a
/// terminal (`""` for plain text): what `pidx context` prints, and the picker's preview.
pub fn context_lines(ctx: Context) -> Vec<(&'static str, String)> {
    let mut lines = vec![("2", context_header(&ctx, ctx.messages.len()))];
    for raw in ctx.messages {
        let _ = message_lines(raw, &mut |style, line| {
            lines.push((style, line.to_string()));
            Ok(())
        });
    }
    lines
}

fn context_header(ctx: &Context, messages: usize) -> String {
    format!("{} · {messages} messages", context_settings(ctx))
}

/// "model P/M · thinking T" of a context.
fn context_settings(ctx: &Context) -> String {
    let model = ctx.model.as_ref().map_or("none".to_string(), |(p, m)| {
        format!(
            "{}/{}",
            p.as_deref().unwrap_or("?"),
            m.as_deref().unwrap_or("?")
        )
    });
    let thinking = ctx.thinking_level.as_deref().unwrap_or("?");
    format!(
        "model {} · thinking {}",
        one_line(&model),
        one_line(thinking)
    )
}

type Emit<'a> = dyn FnMut(&'static str, &str) -> io::Result<()> + 'a;

/// One message's lines: a blank line, its role, its readable text. A huge text is split out of
/// the message (`pi::huge`) and its lines are cut from it where they are.
fn message_lines(raw: String, emit: &mut Emit) -> io::Result<()> {
    let (msg, huge) = parse_message(raw);
    let role = msg.get("role").and_then(Value::as_str).unwrap_or("?");
    emit("", "")?;
    emit("1;36", &format!("── {} ", one_line(role)))?;
    for (text, cap) in message_text(&msg) {
        let pieces = huge.as_ref().and_then(|h| h.pieces(&text));
        let pieces = pieces.unwrap_or_else(|| vec![text.as_str()]);
        each_line(&pieces, cap, &mut |line| emit("", &block(line)))?;
    }
    Ok(())
}

/// A message's value (image data left out: it shows as `[image]`), with its huge text apart.
fn parse_message(raw: String) -> (Value, Option<Huge>) {
    match huge::parse_owned(raw.into_bytes()) {
        (Line::Value(v), huge) => (v, huge),
        _ => (Value::Null, None),
    }
}

/// The readable text of one context message, in sections, each with the number of lines it
/// shows at most (a tool's output and a command's show their first 40).
fn message_text(msg: &Value) -> Vec<(String, Option<usize>)> {
    match read(msg) {
        Shown::Bash {
            command, output, ..
        } => vec![
            (format!("$ {command}"), None),
            (output.to_string(), Some(40)),
        ],
        Shown::Compaction { summary, .. } | Shown::BranchSummary { summary, .. } => {
            vec![(summary.to_string(), None)]
        }
        // A failed call's output often reads like any other ("Error: ..." is also what a
        // successful grep may print): pi's `isError` is said in so many words.
        Shown::ToolResult {
            tool,
            failed,
            content,
            ..
        } => vec![
            (
                if failed {
                    format!("[{}] the call failed:", tool.unwrap_or_default())
                } else {
                    format!("[{}]", tool.unwrap_or_default())
                },
                None,
            ),
            (readable(&content), Some(40)),
        ],
        Shown::Said { content, .. } | Shown::Custom { content, .. } => {
            vec![(readable(&content), None)]
        }
        Shown::Other(v) => vec![(readable(&Content::of(v.get("content"))), None)],
    }
}

/// A message's content as a person reads it in a terminal: text, thinking marked, tool calls
/// as `→ name(arguments)`, images as `[image]`, one block per line.
fn readable(content: &Content) -> String {
    match content {
        Content::Text(s) => (*s).to_string(),
        Content::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => (*t).to_string(),
                Block::Thinking(t) => format!("(thinking) {t}"),
                Block::ToolCall { name, args, .. } => {
                    format!(
                        "→ {name}({})",
                        args.map(Value::to_string).unwrap_or_default()
                    )
                }
                Block::Image { .. } => "[image]".to_string(),
                Block::Other(_) => String::new(),
            })
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Content::Empty | Content::Other(_) => String::new(),
    }
}

/// `str::lines` over the text made of `pieces`, stopping after `cap` lines with a line that
/// says how many more there were. A line is copied only when it spans two pieces.
fn each_line(
    pieces: &[&str],
    cap: Option<usize>,
    f: &mut dyn FnMut(&str) -> io::Result<()>,
) -> io::Result<()> {
    let mut total = 0;
    let mut each = |line: &str, ended: bool| {
        total += 1;
        if cap.is_some_and(|c| total > c) {
            return Ok(());
        }
        // As `str::lines`: a line ended by "\r\n" loses its "\r".
        f(if ended {
            line.strip_suffix('\r').unwrap_or(line)
        } else {
            line
        })
    };
    let mut spanning = String::new();
    for (k, piece) in pieces.iter().enumerate() {
        let mut rest = *piece;
        while let Some(nl) = rest.find('\n') {
            if spanning.is_empty() {
                each(&rest[..nl], true)?;
            } else {
                spanning.push_str(&rest[..nl]);
                each(&spanning, true)?;
                spanning.clear();
            }
            rest = &rest[nl + 1..];
        }
        if k + 1 == pieces.len() && spanning.is_empty() {
            if !rest.is_empty() {
                each(rest, false)?;
            }
        } else {
            spanning.push_str(rest);
        }
    }
    if !spanning.is_empty() {
        each(&spanning, false)?;
    }
    match cap {
        Some(c) if total > c => f(&format!("… ({} more lines)", total - c)),
        _ => Ok(()),
    }
}

/// The ASCII tree: a linear chain stays in one column; indentation grows only at branch points.
pub fn tree(out: &mut Out, t: &Tree) -> io::Result<()> {
    for line in tree_lines(t) {
        out.line(&line)?;
    }
    Ok(())
}

/// The lines `tree` prints (also the picker's tree preview).
pub fn tree_lines(t: &Tree) -> Vec<String> {
    let mut lines = Vec::new();
    // Whether each node's parent has several children (one pass, so drawing stays linear).
    let mut parent_branches = vec![false; t.nodes.len()];
    for n in &t.nodes {
        for &c in &n.children {
            parent_branches[c] = n.children.len() > 1;
        }
    }
    // Per depth: the prefix drawn for descendants.
    let mut prefixes: Vec<String> = vec![String::new()];
    walk_tree(t, |ev| {
        let Event::Enter(i, depth, last) = ev else {
            return;
        };
        let branches = depth > 0 && parent_branches[i];
        prefixes.truncate(depth + 1);
        let base = prefixes[depth].clone();
        let (marker, child_prefix) = if branches {
            (
                if last { "└─ " } else { "├─ " },
                format!("{base}{}", if last { "   " } else { "│  " }),
            )
        } else {
            ("", base.clone())
        };
        prefixes.push(child_prefix);
        lines.push(format!("{base}{marker}{}", node_summary(t, i)));
    });
    lines
}

fn node_summary(t: &Tree, i: usize) -> String {
    let n = &t.nodes[i];
    let kind = match (n.kind.as_deref(), n.role.as_deref()) {
        (Some("message"), Some(role)) => role.to_string(),
        (Some(k), _) => k.to_string(),
        (None, _) => "?".to_string(),
    };
    let mut s = format!("{} {kind}", n.id.as_deref().unwrap_or("-"));
    if let Some(text) = &n.text {
        s.push_str(": ");
        s.push_str(&truncate(&one_line(text), 60));
    }
    if let Some(l) = &n.label {
        s.push_str(&format!(" [{}]", one_line(l)));
    }
    if Some(n.seq) == t.leaf_seq {
        s.push_str("  ← current leaf");
    }
    s
}

pub fn status_lines(s: &Status) -> Vec<String> {
    let mut lines = vec![
        format!("index:   {} ({:.1} MB)", s.db, s.db_bytes as f64 / 1e6),
        format!("watcher: {}", s.writer.as_deref().unwrap_or("none")),
    ];
    for r in &s.roots {
        lines.push(format!(
            "root:    {} ({}{}): {} file{}, {} listed session{}, {} entr{}, {} bad line{}, last sync {}",
            r.path,
            r.layout,
            if r.exists { "" } else { ", missing" },
            thousands(r.files),
            plural(r.files),
            thousands(r.listed_sessions),
            plural(r.listed_sessions),
            thousands(r.entries),
            if r.entries == 1 { "y" } else { "ies" },
            thousands(r.bad_lines),
            plural(r.bad_lines),
            r.last_sync.as_deref().unwrap_or("never")
        ));
        for a in &r.agents {
            lines.push(format!(
                "  agent: {} ({}): {} session key{}{}",
                a.agent_id,
                a.dir,
                thousands(a.keys),
                plural(a.keys),
                a.problem
                    .as_deref()
                    .map_or(String::new(), |p| format!("; sessions.json: {p}"))
            ));
        }
        for st in &r.stores {
            lines.push(store_line(st));
        }
    }
    for k in &s.skipped {
        lines.push(format!(
            "skipped: {}: {} (at {}; each sync tries it again)",
            k.path, k.reason, k.at
        ));
    }
    if let Some(e) = &s.embedded {
        lines.push(format!(
            "meaning: {} of {} entries embedded ({} passages), model {}",
            thousands(e.entries),
            thousands(e.of_entries),
            thousands(e.passages),
            e.model
        ));
    }
    if !s.joints_indexed {
        lines.push(
            "note:    built before identifiers were fully indexed: literal search of names with `_` \
             is slower until `pidx sync --rebuild`"
                .to_string(),
        );
    }
    lines
}

/// `  store: main (.../openclaw-agent.sqlite): schema 23, OpenClaw 2026.9.6, 3 sessions (1 cold)`
fn store_line(st: &crate::query::status::StoreStatus) -> String {
    let schema = st
        .schema_version
        .map_or("schema unknown".to_string(), |v| format!("schema {v}"));
    let by = st.openclaw_version.as_deref().unwrap_or("unknown");
    let problem = st
        .problem
        .as_deref()
        .map_or(String::new(), |p| format!("; last read failed: {p}"));
    format!(
        "  store: {} ({}): {schema}, OpenClaw {by}, {} session{} ({} cold){problem}",
        st.agent_id,
        st.db,
        thousands(st.sessions),
        plural(st.sessions),
        thousands(st.cold)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `each_line` must give: `str::lines` of the whole text, cut after `cap` lines.
    fn reference(text: &str, cap: Option<usize>) -> Vec<String> {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        match cap {
            Some(c) if lines.len() > c => {
                let mut out = lines[..c].to_vec();
                out.push(format!("… ({} more lines)", lines.len() - c));
                out
            }
            _ => lines,
        }
    }

    fn collected(pieces: &[&str], cap: Option<usize>) -> Vec<String> {
        let mut out = Vec::new();
        each_line(pieces, cap, &mut |l| {
            out.push(l.to_string());
            Ok(())
        })
        .unwrap();
        out
    }

    /// The picker's preview shows these lines: a failed call says so there too.
    #[test]
    fn context_lines_say_a_tool_call_failed() {
        let result = |failed: bool| {
            serde_json::json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash",
                               "content": [{"type": "text", "text": "Error: no"}], "isError": failed})
            .to_string()
        };
        let ctx = Context {
            messages: vec![result(true), result(false)],
            thinking_level: None,
            model: None,
            cycle: false,
            path_len: 2,
        };
        let texts: Vec<String> = context_lines(ctx).into_iter().map(|(_, t)| t).collect();
        let marks: Vec<&String> = texts.iter().filter(|t| t.starts_with("[bash]")).collect();
        assert_eq!(marks, ["[bash] the call failed:", "[bash]"], "{texts:?}");
    }

    #[test]
    fn lines_over_pieces_are_the_lines_of_the_whole() {
        for text in [
            "a\r\nb\n\nc\r",
            "x\n",
            "",
            "\n\n",
            "one",
            "é\nü\r\n\r\nend\n",
        ] {
            for cap in [None, Some(0), Some(1), Some(2)] {
                let expected = reference(text, cap);
                assert_eq!(collected(&[text], cap), expected, "{text:?}");
                let cuts: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                for &i in &cuts {
                    for &j in cuts.iter().filter(|&&j| j >= i) {
                        let pieces = [&text[..i], &text[i..j], &text[j..]];
                        assert_eq!(collected(&pieces, cap), expected, "{pieces:?} {cap:?}");
                    }
                }
            }
        }
    }
}
