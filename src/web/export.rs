//! `pidx export`: one session (the context at its current leaf, or at `--leaf`) written to a
//! file to share: a page drawn as `pidx serve` draws the conversation, with its stylesheet
//! inside, its images as data, no script and a policy that loads nothing; or Markdown. Both
//! redact secrets unless asked not to, and neither links back to a server.

use std::io::Write as _;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use maud::{html, PreEscaped, DOCTYPE};
use serde_json::Value;

use super::session::{articles, Raw};
use super::{Ctx, Fail};
use crate::app::env::{Env, First};
use crate::pi::shown::{read, Block, Content, Shown};
use crate::query::context::{plan, ContextPlan};
use crate::query::resolve::resolve;
use crate::query::Reader;

/// What to export and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub session: String,
    pub leaf: Option<String>,
    /// Markdown instead of a page.
    pub markdown: bool,
    /// The file to write (standard output when `None`).
    pub output: Option<std::path::PathBuf>,
    pub redact: bool,
}

/// Writes the export.
///
/// # Errors
/// When the session cannot be found or read, or the file cannot be written.
pub fn run(env: &Env, o: &Options) -> Result<bool> {
    let mut opened = env.open_reader(Some(First::Session(&o.session)))?;
    let mut reader = opened.reader()?;
    let ctx = Ctx {
        stop: Arc::new(AtomicBool::new(false)),
        redact: o.redact,
        server: false,
        export: true,
    };
    let text = render(&ctx, &mut reader, &o.session, o.leaf.as_deref(), o.markdown)
        .map_err(|e| anyhow::anyhow!("{}", fail_text(e)))?;
    reader.finish()?;
    match &o.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .context("writing the export")?;
            out.flush().context("writing the export")?;
        }
    }
    Ok(true)
}

/// The export of `session` at `leaf` (the current one when `None`): a page, or Markdown.
pub(super) fn render(
    ctx: &Ctx,
    reader: &mut Reader,
    session: &str,
    leaf: Option<&str>,
    markdown: bool,
) -> Result<String, Fail> {
    let session = resolve(reader, session)?;
    let plan = plan(reader, &session, leaf)?;
    let d = crate::query::show::show(reader, &session)?;
    let title = super::session::title_of(reader, &session, &d)?;
    let raws = raws(&plan)?;
    Ok(if markdown {
        self::markdown(ctx, &d, &title, &raws)
    } else {
        page(ctx, &d, &title, &plan, &raws)
    })
}

/// `/s/FILE/export?as=html|md[&leaf=ID]`: the export as a file to save, from a session's page.
pub(crate) async fn download(
    axum::extract::State(app): axum::extract::State<Arc<super::App>>,
    axum::extract::Path(seg): axum::extract::Path<String>,
    axum::extract::Query(q): axum::extract::Query<DownloadQuery>,
) -> Result<axum::response::Response, Fail> {
    use axum::response::IntoResponse as _;
    let (source, file) = super::split_seg(&app, &seg);
    super::blocking(&app, source, move |ctx, reader| {
        let md = q.r#as.as_deref() == Some("md");
        let ctx = Ctx {
            stop: Arc::clone(&ctx.stop),
            redact: ctx.redact,
            server: ctx.server,
            export: true,
        };
        let leaf = q.leaf.as_deref().filter(|l| !l.is_empty());
        let text = render(&ctx, reader, &file, leaf, md)?;
        // The name is the session's file name (ASCII in pi's layout; anything else becomes `_`).
        let stem = crate::query::handle::file_name(&file)
            .trim_end_matches(".jsonl")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>();
        let (kind, ext) = if md {
            ("text/markdown; charset=utf-8", "md")
        } else {
            ("text/html; charset=utf-8", "html")
        };
        Ok((
            [
                (axum::http::header::CONTENT_TYPE, kind.to_string()),
                (
                    axum::http::header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{stem}.{ext}\""),
                ),
            ],
            text,
        )
            .into_response())
    })
    .await
}

#[derive(serde::Deserialize)]
pub(crate) struct DownloadQuery {
    r#as: Option<String>,
    leaf: Option<String>,
}

fn fail_text(f: Fail) -> String {
    match f {
        Fail::NotFound(w) | Fail::Bad(w) | Fail::Internal(w) => w,
    }
}

/// Every message of the context, whole (an export has no server to fetch the rest from).
fn raws(plan: &ContextPlan) -> Result<Vec<Raw>, Fail> {
    let mut out = Vec::new();
    for i in 0..plan.len() {
        let id = plan.entry_id(i).unwrap_or_default().to_string();
        for (m, raw) in plan.messages_at(i)?.into_iter().enumerate() {
            let v = crate::pi::line::parse_json(&raw).ok();
            out.push((i, m, id.clone(), raw, v));
        }
    }
    Ok(out)
}

/// No script, nothing fetched: styles and images are inside the page.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

fn page(
    ctx: &Ctx,
    d: &crate::query::show::SessionDetail,
    title: &str,
    plan: &ContextPlan,
    raws: &[Raw],
) -> String {
    let leaf = plan.leaf_id.as_deref().unwrap_or_default();
    let title = ctx.clean(title);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(POLICY);
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · pidx export" }
                style { (PreEscaped(super::assets::CSS)) }
            }
            body {
                main {
                    header.session {
                        h1 { (title) }
                        dl {
                            dt { "project" } dd { code { (ctx.clean(&d.cwd)) } }
                            dt { "session" } dd { code { (ctx.clean(&d.handle)) } }
                            @if let Some(c) = &d.created { dt { "created" } dd { (super::page::when(c)) } }
                            dt { "messages" } dd { (super::page::num(d.stats.total_messages)) }
                            dt { "cost" } dd { (super::page::money(d.stats.cost)) }
                            @if !d.models.is_empty() {
                                dt { "models" } dd { (ctx.clean(&d.models.iter().map(|m| m.model.as_str()).collect::<Vec<_>>().join(", "))) }
                            }
                        }
                        p.meta { "exported by pidx · the context at entry " code { (ctx.clean(leaf)) }
                            @if ctx.redact { " · secrets redacted" } @else { " · not redacted" } }
                    }
                    div #messages { (articles(ctx, raws, "", leaf, None)) }
                }
            }
        }
    }
    .into_string()
}

/// A fence longer than any run of backticks in `s`.
fn fence(s: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn fenced(out: &mut String, lang: &str, s: &str) {
    let f = fence(s);
    out.push_str(&format!("{f}{lang}\n{}\n{f}\n\n", s.trim_end_matches('\n')));
}

/// The conversation as Markdown: a person's text and every tool's input and output fenced
/// (shown as typed), an assistant's text as the Markdown it is, thinking quoted.
fn markdown(ctx: &Ctx, d: &crate::query::show::SessionDetail, title: &str, raws: &[Raw]) -> String {
    let c = |s: &str| ctx.clean(s).into_owned();
    let mut out = format!(
        "# {}\n\n- project: `{}`\n- session: `{}`\n- messages: {}\n- cost: {}\n{}\n",
        crate::term::one_line(&c(title)),
        c(&d.cwd),
        c(&d.handle),
        super::page::num(d.stats.total_messages),
        super::page::money(d.stats.cost),
        if ctx.redact {
            "- secrets redacted\n"
        } else {
            ""
        }
    );
    for (_, _, id, raw, v) in raws {
        let Some(v) = v else {
            fenced(&mut out, "json", &c(raw));
            continue;
        };
        match read(v) {
            Shown::Said {
                role: "system",
                content,
                ..
            } => {
                out.push_str("## system prompt\n\n");
                md_content(&mut out, ctx, &content, true);
                // pi 1.6 writes the prompt in `sections` (spec 2.5).
                for (name, s) in v
                    .get("sections")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    if let Some(s) = s.as_str() {
                        out.push_str(&format!("### {}\n\n", crate::term::one_line(&c(name))));
                        fenced(&mut out, "text", &c(s));
                    }
                }
            }
            Shown::Said {
                role,
                content,
                model,
                error,
            } => {
                out.push_str(&format!("## {role}"));
                if let Some((_, m)) = model {
                    out.push_str(&format!(" · {}", c(m)));
                }
                out.push_str(&format!(" <a id=\"e-{}\"></a>\n\n", super::page::enc(id)));
                md_content(&mut out, ctx, &content, role != "assistant");
                if let Some(e) = error {
                    out.push_str(&format!("> error: {}\n\n", crate::term::one_line(&c(e))));
                }
            }
            Shown::ToolResult {
                tool,
                failed,
                content,
                ..
            } => {
                out.push_str(&format!(
                    "**result of {}**{}\n\n",
                    c(tool.unwrap_or("?")),
                    if failed { " (error)" } else { "" }
                ));
                fenced(&mut out, "", &c(&content.text()));
            }
            Shown::Bash {
                command, output, ..
            } => {
                out.push_str("## the user ran bash\n\n");
                fenced(&mut out, "sh", &c(command));
                fenced(&mut out, "", &c(output));
            }
            Shown::Custom { kind, content } => {
                out.push_str(&format!("## custom: {}\n\n", c(kind)));
                md_content(&mut out, ctx, &content, true);
            }
            Shown::BranchSummary { summary, .. } | Shown::Compaction { summary, .. } => {
                out.push_str("## summary\n\n");
                out.push_str(&c(summary));
                out.push_str("\n\n");
            }
            Shown::Other(v) => fenced(&mut out, "json", &c(&v.to_string())),
        }
    }
    out
}

fn md_content(out: &mut String, ctx: &Ctx, content: &Content, verbatim: bool) {
    let c = |s: &str| ctx.clean(s).into_owned();
    let text = |out: &mut String, s: &str| {
        if s.is_empty() {
        } else if verbatim {
            fenced(out, "text", &c(s));
        } else {
            out.push_str(&c(s));
            out.push_str("\n\n");
        }
    };
    match content {
        Content::Empty => {}
        Content::Text(s) => text(out, s),
        Content::Blocks(blocks) => {
            for b in blocks {
                match b {
                    Block::Text(s) => text(out, s),
                    Block::Thinking(t) if !t.trim().is_empty() => {
                        for l in c(t).lines() {
                            out.push_str(&format!("> {l}\n"));
                        }
                        out.push('\n');
                    }
                    Block::Thinking(_) => {}
                    Block::ToolCall { name, args, .. } => {
                        out.push_str(&format!("**tool call: {}**\n\n", c(name)));
                        let args = args.map_or(String::new(), |a| {
                            serde_json::to_string_pretty(a).unwrap_or_default()
                        });
                        fenced(out, "json", &c(&args));
                    }
                    Block::Image { mime, .. } => {
                        out.push_str(&format!("*[an image, {}]*\n\n", c(mime.unwrap_or("?"))));
                    }
                    Block::Other(v) => fenced(out, "json", &c(&v.to_string())),
                }
            }
        }
        Content::Other(v) => fenced(out, "json", &c(&Value::to_string(v))),
    }
}

#[cfg(test)]
mod tests {
    use super::fence;

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
