//! Human output: the session table (like pi's picker), session details, the conversation as
//! text, the ASCII tree and the status report. Every piece of transcript text passes through
//! `output::one_line` or `output::block` first.

use std::collections::HashMap;
use std::io;

use serde_json::Value;

use super::output::{age, block, one_line, plural, thousands, truncate, Out};
use super::table::{self, cut, Column, Cut};
use crate::pi::line::parse_json;
use crate::pi::text::readable_content;
use crate::query::context::Context;
use crate::query::list::SessionInfo;
use crate::query::show::SessionDetail;
use crate::query::status::Status;
use crate::query::tree::{walk_tree, Event, Tree};

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// pi's picker row: name or first message, message count, age, handle (and cwd across
/// projects), fitted to the terminal: the text column shrinks first, then the cwd (cut in the
/// middle), never the handle.
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
                    let earlier = if g.current == Some(false) {
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
            row
        })
        .collect();
    // Without a width (a pipe), the text column still stops at 60 characters, as before.
    let width = out.width;
    let shrink: Vec<usize> = std::iter::once(0).chain(4..cols.len()).collect();
    let rows: Vec<Vec<String>> = match width {
        Some(_) => rows,
        None => rows
            .into_iter()
            .map(|mut r| {
                r[0] = cut(&r[0], 60, Cut::End);
                r
            })
            .collect(),
    };
    for line in table::render(&cols, &rows, width, &shrink) {
        out.line(&line)?;
    }
    Ok(())
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
            s.tokens.total,
            s.tokens.input,
            s.tokens.output,
            s.tokens.cache_read,
            s.tokens.cache_write
        ),
    ))?;
    out.line(&field("cost", &format!("${:.4}", s.cost)))?;
    for m in &d.models {
        out.line(&field(
            "  model",
            &format!("{}: {} tokens, ${:.4}", m.model, m.tokens, m.cost),
        ))?;
    }
    Ok(())
}

fn detail_gateway(out: &mut Out, g: &Value) -> io::Result<()> {
    {
        let text = |k: &str| g[k].as_str().map(str::to_string);
        out.line(&field("agent", &text("agentId").unwrap_or_default()))?;
        let key = match (text("sessionKey"), g["current"].as_bool()) {
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
pub fn context(out: &mut Out, ctx: &Context) -> io::Result<()> {
    for (style, line) in context_lines(ctx) {
        if style.is_empty() {
            out.line(&line)?;
        } else {
            out.line(&out.paint(style, &line))?;
        }
    }
    Ok(())
}

/// The conversation as neutralised lines, each with the SGR style it is painted in on a
/// terminal (`""` for plain text): what `pidx context` prints, and the picker's preview.
pub fn context_lines(ctx: &Context) -> Vec<(&'static str, String)> {
    let model = ctx.model.as_ref().map_or("none".to_string(), |(p, m)| {
        format!(
            "{}/{}",
            p.as_deref().unwrap_or("?"),
            m.as_deref().unwrap_or("?")
        )
    });
    let thinking = ctx.thinking_level.as_deref().unwrap_or("?");
    let mut lines = vec![(
        "2",
        format!(
            "model {} · thinking {} · {} messages",
            one_line(&model),
            one_line(thinking),
            ctx.messages.len()
        ),
    )];
    for raw in &ctx.messages {
        let msg = parse_json(raw).unwrap_or(Value::Null);
        let role = msg.get("role").and_then(Value::as_str).unwrap_or("?");
        lines.push(("", String::new()));
        lines.push(("1;36", format!("── {} ", one_line(role))));
        for line in message_text(&msg).lines() {
            lines.push(("", block(line)));
        }
    }
    lines
}

/// The readable text of one context message.
fn message_text(msg: &Value) -> String {
    let s = |k: &str| {
        msg.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match msg.get("role").and_then(Value::as_str).unwrap_or_default() {
        "bashExecution" => format!("$ {}\n{}", s("command"), tail_lines(&s("output"), 40)),
        "compactionSummary" | "branchSummary" => s("summary"),
        "toolResult" => format!(
            "[{}]\n{}",
            s("toolName"),
            tail_lines(&readable_content(msg.get("content")), 40)
        ),
        _ => readable_content(msg.get("content")),
    }
}

fn tail_lines(s: &str, max: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    if lines.len() <= max {
        return s.to_string();
    }
    format!(
        "{}\n… ({} more lines)",
        lines[..max].join("\n"),
        lines.len() - max
    )
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
