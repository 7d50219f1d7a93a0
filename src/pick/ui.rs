//! Drawing the picker with ratatui: the title and prompt, the list (sessions, or full-text hits
//! grouped by session with the match highlighted), the preview, the footer, and the help and
//! "resume here?" boxes. Every piece of transcript text is neutralised (`output::one_line`)
//! before it is drawn, so no escape sequence from a session can reach the terminal.

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Table, TableState};
use ratatui::Frame;
use serde_json::Value;

use super::app::{App, Mode};
use super::keys::HELP;
use super::preview;
use crate::present::output::{age, one_line};
use crate::query::list::SessionInfo;
use crate::query::search::Hit;

/// The id shown for a session: its handle as `pidx list` shows it (the shortest unique id
/// prefix), or the whole id until that is looked up (a shorter prefix may name several).
pub fn short_id(app: &App, s: &SessionInfo) -> String {
    match app.handles.get(&s.file_id) {
        Some(h) => one_line(h),
        None => one_line(s.id.as_ref().and_then(Value::as_str).unwrap_or("-")),
    }
}

/// Colours, unless `NO_COLOR` asks for none (bold and reverse video stay).
pub struct Palette {
    color: bool,
}

impl Palette {
    pub fn new() -> Palette {
        Palette {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, app: &mut App, pal: &Palette) {
    let [top, prompt, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(title(app, pal)), top);
    let typed = Line::from(vec![
        Span::styled("> ", pal.fg(Color::Cyan).add_modifier(Modifier::BOLD)),
        Span::raw(one_line_keep(&app.query)),
    ]);
    frame.render_widget(Paragraph::new(typed), prompt);
    frame.set_cursor_position((
        prompt.x + 2 + (one_line_keep(&app.query).chars().count() as u16).min(prompt.width),
        prompt.y,
    ));
    let side_by_side = body.width >= 150;
    let [list, pane] = Layout::new(
        if side_by_side {
            Direction::Horizontal
        } else {
            Direction::Vertical
        },
        [Constraint::Percentage(50), Constraint::Percentage(50)],
    )
    .areas(body);
    app.page = list.height.saturating_sub(1) as usize;
    match app.mode {
        Mode::List => sessions(frame, app, list, pal),
        Mode::Text => hits(frame, app, list, pal),
    }
    preview_pane(frame, app, pane, pal);
    frame.render_widget(Paragraph::new(footer(app, pal)), foot);
    if app.help {
        help(frame, pal);
    }
    if app.confirm.is_some() {
        confirm(frame, app, pal);
    }
}

fn title(app: &App, pal: &Palette) -> Line<'static> {
    let scope = if app.all {
        "all projects".to_string()
    } else {
        format!("this project: {}", one_line(&app.cwd))
    };
    let mode = match app.mode {
        Mode::List => "[sessions]",
        Mode::Text => "[full text]",
    };
    let mut spans = vec![
        Span::styled(" pidx pick ", Style::new().add_modifier(Modifier::REVERSED)),
        Span::raw(" "),
        Span::styled(mode, pal.fg(Color::Yellow).add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            " {scope} · {}{} rows · sort: {}",
            app.len(),
            if app.partial() { "+" } else { "" },
            app.sort.name()
        )),
    ];
    if app.named_only {
        spans.push(Span::raw(" · named only"));
    }
    if app.tree {
        spans.push(Span::raw(" · tree"));
    }
    Line::from(spans)
}

fn footer(app: &App, pal: &Palette) -> Line<'static> {
    if let Some(s) = &app.status {
        return Line::styled(format!(" {}", one_line(s)), pal.fg(Color::Red));
    }
    let other = match app.mode {
        Mode::List => "full text",
        Mode::Text => "sessions",
    };
    let scope = if app.all {
        "this project"
    } else {
        "all projects"
    };
    Line::styled(
        format!(
            " Enter resume · ? keys · Esc quit · Tab {scope} · Ctrl-F {other} · Ctrl-S sort · Ctrl-O named · Ctrl-T tree"
        ),
        Style::new().add_modifier(Modifier::DIM),
    )
}

/// The last characters of a cwd, so the project's own folder stays visible.
fn project(cwd: &str, max: usize) -> String {
    let cwd = one_line(cwd);
    let n = cwd.chars().count();
    if n <= max {
        return cwd;
    }
    let tail: String = cwd.chars().skip(n - max + 1).collect();
    format!("…{tail}")
}

fn sessions(frame: &mut Frame, app: &mut App, area: Rect, pal: &Palette) {
    let now = chrono::Utc::now().timestamp_millis();
    // Only the rows on screen are built (10,000 sessions would cost a frame each time).
    let height = area.height.saturating_sub(1) as usize;
    if app.selected < app.offset {
        app.offset = app.selected;
    } else if height > 0 && app.selected >= app.offset + height {
        app.offset = app.selected + 1 - height;
    }
    let list = app.sessions();
    let visible: Vec<_> = app
        .session_rows
        .iter()
        .skip(app.offset)
        .take(height)
        .collect();
    // Handles are never cut: the column is as wide as the widest one on screen.
    let ids: Vec<String> = visible
        .iter()
        .map(|r| short_id(app, &list[r.index]))
        .collect();
    let id_width = ids
        .iter()
        .map(|h| h.chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    let rows = visible.iter().zip(ids).map(|(r, id)| {
        let s = &list[r.index];
        let indent = if r.depth > 0 {
            format!("{}└ ", "  ".repeat(r.depth - 1))
        } else {
            String::new()
        };
        let mut title = Line::from(vec![Span::raw(indent), Span::raw(one_line(s.title()))]);
        if s.name.is_some() {
            title = title.style(Style::new().add_modifier(Modifier::BOLD));
        }
        let mut cells = vec![
            title,
            Line::styled(id, pal.fg(Color::DarkGray)),
            Line::from(s.message_count.to_string()).right_aligned(),
            Line::from(age(s.modified_ms, now)).right_aligned(),
        ];
        if app.all {
            cells.push(Line::styled(project(&s.cwd, 28), pal.fg(Color::Blue)));
        }
        Row::new(cells)
    });
    let mut widths = vec![
        Constraint::Fill(1),
        Constraint::Length(id_width as u16),
        Constraint::Length(5),
        Constraint::Length(4),
    ];
    let mut header = vec!["SESSION", "ID", " MSGS", " AGE"];
    if app.all {
        widths.push(Constraint::Length(28));
        header.push("PROJECT");
    }
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(Style::new().add_modifier(Modifier::DIM)))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(app.selected - app.offset));
    frame.render_stateful_widget(table, area, &mut state);
    if app.session_rows.is_empty() {
        empty(frame, area, "no session matches");
    }
}

fn hits(frame: &mut Frame, app: &App, area: Rect, pal: &Palette) {
    let now = chrono::Utc::now().timestamp_millis();
    let mut last_file = None;
    let rows = app.hit_rows.iter().map(|&i| {
        let h = &app.hits[i];
        let mut lines = Vec::new();
        if last_file != Some(h.file_id) {
            last_file = Some(h.file_id);
            lines.push(Line::from(vec![
                Span::styled(
                    one_line(&h.title),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Span::styled(format!("  {}", project(&h.cwd, 40)), pal.fg(Color::Blue)),
            ]));
        }
        lines.push(snippet_line(h, now, pal));
        let height = lines.len() as u16;
        Row::new(vec![Text::from(lines)]).height(height)
    });
    let table = Table::new(rows, [Constraint::Fill(1)])
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(app.selected));
    frame.render_stateful_widget(table, area, &mut state);
    if app.hit_rows.is_empty() {
        let why = if app.query.trim().is_empty() {
            "type to search the text of every session"
        } else {
            "no matches"
        };
        empty(frame, area, why);
    }
}

/// `  [kind] age  …text with the match highlighted…`
fn snippet_line(h: &Hit, now: i64, pal: &Palette) -> Line<'static> {
    let when = h
        .timestamp
        .as_deref()
        .and_then(crate::pi::js::parse_iso_ms)
        .map_or("?".to_string(), |t| age(t, now));
    // A hit found by meaning holds none of the typed words: it says so.
    let sim = h.similarity.map_or(String::new(), |s| format!(" {s:.2}"));
    let by = match h.by {
        crate::query::search::By::Words => String::new(),
        crate::query::search::By::Meaning => format!("(meaning{sim}) "),
        crate::query::search::By::Both => format!("(words+meaning{sim}) "),
    };
    let mut spans = vec![Span::styled(
        format!("  [{}] {when}  {by}", h.kind),
        pal.fg(Color::DarkGray),
    )];
    let s = &h.snippet;
    let mut at = 0;
    for &(a, b) in &s.marks {
        if a < at || b > s.text.len() || !s.text.is_char_boundary(a) || !s.text.is_char_boundary(b)
        {
            continue;
        }
        spans.push(Span::raw(one_line_keep(&s.text[at..a])));
        spans.push(Span::styled(
            one_line(&s.text[a..b]),
            pal.fg(Color::Yellow)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        ));
        at = b;
    }
    spans.push(Span::raw(one_line_keep(&s.text[at..])));
    Line::from(spans)
}

/// `one_line`, keeping one space where the text had white space at either end.
fn one_line_keep(s: &str) -> String {
    let mut t = one_line(s);
    if s.starts_with(char::is_whitespace) && !t.is_empty() {
        t.insert(0, ' ');
    }
    if s.ends_with(char::is_whitespace) {
        t.push(' ');
    }
    t
}

fn empty(frame: &mut Frame, area: Rect, why: &str) {
    let at = Rect {
        y: area.y + 1,
        height: 1,
        ..area
    };
    frame.render_widget(
        Paragraph::new(format!("  {why}")).style(Style::new().add_modifier(Modifier::DIM)),
        at,
    );
}

fn preview_pane(frame: &mut Frame, app: &App, area: Rect, pal: &Palette) {
    let what = if app.tree { "tree" } else { "conversation" };
    let block = Block::new()
        .borders(Borders::TOP | Borders::LEFT)
        .title(format!(" preview: {what} "))
        .border_style(Style::new().add_modifier(Modifier::DIM));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some((_, p)) = &app.preview else {
        return;
    };
    let style = |l: &preview::Line| match l.style {
        preview::Style::Plain => Style::new(),
        preview::Style::Dim => Style::new().add_modifier(Modifier::DIM),
        preview::Style::Role => pal.fg(Color::Cyan).add_modifier(Modifier::BOLD),
        preview::Style::Header => pal.fg(Color::Green),
        preview::Style::Problem => pal.fg(Color::Red).add_modifier(Modifier::BOLD),
    };
    let fixed = (p.header.len() as u16 + 1).min(inner.height);
    let [head, body] =
        Layout::vertical([Constraint::Length(fixed), Constraint::Fill(1)]).areas(inner);
    let header: Vec<Line> = p
        .header
        .iter()
        .map(|l| Line::styled(l.text.clone(), style(l)))
        .collect();
    frame.render_widget(Paragraph::new(header), head);
    // Long lines are wrapped at the pane's width; the focus is its line's first row.
    let width = body.width.max(1) as usize;
    let rows: Vec<(usize, String)> = p
        .lines
        .iter()
        .enumerate()
        .flat_map(|(i, l)| wrap(&l.text, width).into_iter().map(move |r| (i, r)))
        .collect();
    let focus = rows.iter().position(|(i, _)| *i == p.focus).unwrap_or(0);
    let height = body.height as isize;
    let len = rows.len() as isize;
    let auto = (focus as isize - height * 2 / 3).min(len - height).max(0);
    let offset = (auto + app.scroll).clamp(0, (len - 1).max(0)) as usize;
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(offset)
        .take(body.height as usize)
        .map(|(i, text)| {
            let mut s = style(&p.lines[i]);
            if p.mark_focus && i == p.focus {
                s = s.add_modifier(Modifier::REVERSED);
            }
            Line::styled(text, s)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// `text` in rows at most `width` columns wide.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let (mut row, mut used) = (String::new(), 0);
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width && !row.is_empty() {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        row.push(c);
        used += w;
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

fn centered(frame: &Frame, width: u16, height: u16) -> Rect {
    let a = frame.area();
    let w = width.min(a.width);
    let h = height.min(a.height);
    Rect {
        x: a.x + (a.width - w) / 2,
        y: a.y + (a.height - h) / 2,
        width: w,
        height: h,
    }
}

fn help(frame: &mut Frame, pal: &Palette) {
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!(" {k:<27}"), pal.fg(Color::Cyan)),
                Span::raw(*what),
            ])
        })
        .collect();
    let area = centered(frame, 96, lines.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys (any key closes) ")),
        area,
    );
}

fn confirm(frame: &mut Frame, app: &App, pal: &Palette) {
    let Some(c) = &app.confirm else {
        return;
    };
    let here = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let lines = vec![
        Line::styled(
            format!(
                " This session's directory no longer exists: {}",
                one_line(&c.cwd)
            ),
            pal.fg(Color::Red),
        ),
        Line::from(format!(
            " Resume it in the current directory ({}) instead? y / n",
            one_line(&here)
        )),
    ];
    let area = centered(frame, 100, 4);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" directory missing ")),
        area,
    );
}
