//! The preview pane's text for one session: a header (cwd, created, modified, model, cost) from
//! `query::show`, then the last messages of the current branch as `pidx context` prints them,
//! or, for a full-text hit, the branch up to the matching entry; or the session's tree as
//! `pidx tree` prints it. Every line is neutralised by `render`/`output` before it gets here.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};

use rusqlite::Connection;

use crate::present::numbers::{count, money, tokens};
use crate::present::output::{block, one_line};
use crate::present::render;
use crate::query::context::{self, Context};
use crate::query::resolve::Resolved;
use crate::query::{show, tree};
use crate::store::Store;

/// Messages shown before the context is cut (the pane shows the end of the branch).
const LAST_MESSAGES: usize = 40;

/// How a preview line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Dim,
    Role,
    Header,
    Problem,
}

/// One line of the preview.
#[derive(Debug, Clone)]
pub struct Line {
    pub style: Style,
    pub text: String,
}

/// What the preview shows for the highlighted row.
#[derive(Debug, Clone, Default)]
pub struct Preview {
    /// Stays at the top of the pane.
    pub header: Vec<Line>,
    /// Scrolls under it.
    pub lines: Vec<Line>,
    /// The line of `lines` the pane scrolls to first (the end of the branch, the hit, the
    /// current leaf).
    pub focus: usize,
    /// Draw the focus line highlighted (the tree's leaf or hit).
    pub mark_focus: bool,
}

/// What to preview: a session, and for a full-text hit the matching entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub file_id: i64,
    pub path: String,
    pub entry_id: Option<String>,
    pub tree: bool,
}

/// Builds previews on a thread with its own connection, so moving through the list or typing
/// never waits for a session to be read: the newest target asked for is built, older ones
/// still waiting are skipped.
pub struct Previewer {
    ask: Sender<Target>,
    done: Receiver<(Target, Preview)>,
}

impl Previewer {
    /// Starts the thread on the index at `db`.
    pub fn start(db: PathBuf) -> Previewer {
        let (ask, asked) = mpsc::channel::<Target>();
        let (built, done) = mpsc::channel();
        std::thread::spawn(move || {
            let store = Store::open_read_only(&db);
            if let Ok(s) = &store {
                let _ = crate::store::small_cache(&s.conn);
            }
            while let Ok(mut target) = asked.recv() {
                while let Ok(newer) = asked.try_recv() {
                    target = newer;
                }
                let p = match &store {
                    Ok(s) => build(&s.conn, &target),
                    Err(e) => Preview {
                        lines: vec![line(Style::Problem, format!("cannot read the index: {e}"))],
                        ..Preview::default()
                    },
                };
                if built.send((target, p)).is_err() {
                    break;
                }
            }
        });
        Previewer { ask, done }
    }

    /// Asks for `target`'s preview.
    pub fn ask(&self, target: Target) {
        let _ = self.ask.send(target);
    }

    /// The newest preview built since the last call.
    pub fn take(&self) -> Option<(Target, Preview)> {
        self.done.try_iter().last()
    }
}

fn line(style: Style, text: impl Into<String>) -> Line {
    Line {
        style,
        text: text.into().replace('\t', "    "),
    }
}

/// Builds the preview; a session that cannot be read (its file deleted since it was indexed)
/// gives a one-line explanation instead.
pub fn build(conn: &Connection, target: &Target) -> Preview {
    let session = Resolved {
        file_id: target.file_id,
        path: target.path.clone(),
        source: None,
    };
    let mut p = Preview {
        header: header(conn, &session),
        ..Preview::default()
    };
    if !std::path::Path::new(&target.path).exists() {
        p.lines.push(line(
            Style::Problem,
            "this session file no longer exists (deleted since it was indexed)",
        ));
        return p;
    }
    let body = if target.tree {
        tree_lines(conn, &session, target.entry_id.as_deref())
    } else {
        context_lines(conn, &session, target.entry_id.as_deref())
    };
    match body {
        Ok((lines, focus)) => {
            p.focus = focus;
            p.lines = lines;
            p.mark_focus = target.tree;
        }
        Err(e) => p.lines.push(line(
            Style::Problem,
            format!("cannot preview: {}", one_line(&e.to_string())),
        )),
    }
    p
}

fn header(conn: &Connection, session: &Resolved) -> Vec<Line> {
    let Ok(d) = show::show_session(conn, session) else {
        return vec![line(Style::Problem, "not in the index any more")];
    };
    let field = |k: &str, v: &str| line(Style::Header, format!("{k:<9}{}", one_line(v)));
    let mut lines = vec![field("cwd", &d.cwd)];
    if let Some(n) = &d.name {
        lines.push(field("name", n));
    }
    lines.push(field(
        "created",
        d.created.as_deref().unwrap_or("(invalid)"),
    ));
    lines.push(field("modified", d.modified.as_deref().unwrap_or("-")));
    let models: Vec<&str> = d
        .models
        .iter()
        .map(|m| m.model.as_str())
        .filter(|m| *m != "Tools/summaries")
        .collect();
    lines.push(field(
        "model",
        &(if models.is_empty() {
            "-".to_string()
        } else {
            models.join(", ")
        }),
    ));
    lines.push(field(
        "cost",
        &format!(
            "{} · {} · {}",
            money(d.stats.cost),
            tokens(d.stats.tokens.total),
            count(d.stats.total_messages, "message")
        ),
    ));
    lines.push(field("path", &d.path));
    lines
}

/// The branch's last messages as `pidx context` renders them; the focus is the last line.
fn context_lines(
    conn: &Connection,
    session: &Resolved,
    leaf: Option<&str>,
) -> crate::Result<(Vec<Line>, usize)> {
    // Read one entry at a time, keeping only the last messages: a session of gigabytes, or
    // with a message of 100 MB, previews in bounded memory.
    let plan = context::plan_context(conn, session, leaf)?;
    let (total, messages) = plan.last_messages(LAST_MESSAGES)?;
    let tail = Context {
        messages,
        ..plan.settings
    };
    let mut lines: Vec<Line> = render::context_lines(tail)
        .into_iter()
        .map(|(style, text)| {
            let style = match style {
                "" => Style::Plain,
                "2" => Style::Dim,
                _ => Style::Role,
            };
            line(style, block(&text))
        })
        .collect();
    if total > LAST_MESSAGES {
        lines.insert(
            1,
            line(
                Style::Dim,
                format!("(the last {LAST_MESSAGES} of {total} messages)"),
            ),
        );
    }
    let focus = lines.len().saturating_sub(1);
    Ok((lines, focus))
}

/// `pidx tree`'s lines; the focus is the hit's entry, else the current leaf.
fn tree_lines(
    conn: &Connection,
    session: &Resolved,
    entry: Option<&str>,
) -> crate::Result<(Vec<Line>, usize)> {
    let t = tree::build_tree(conn, session)?;
    if t.unopenable {
        return Ok((
            vec![line(
                Style::Problem,
                "pi cannot open this file (no session header with an id first): no tree",
            )],
            0,
        ));
    }
    let text = render::tree_lines(&t);
    let wanted = |l: &str| match entry {
        Some(id) => l.contains(&format!("{id} ")),
        None => l.ends_with("← current leaf"),
    };
    let focus = text.iter().position(|l| wanted(l)).unwrap_or(0);
    Ok((
        text.into_iter().map(|t| line(Style::Plain, t)).collect(),
        focus,
    ))
}
