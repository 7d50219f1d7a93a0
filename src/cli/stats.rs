//! `pidx stats`: figures as a table (with a bar chart per period on a terminal, drawn by
//! `chart`), JSON or CSV.

use anyhow::{bail, Result};

use std::collections::HashMap;

use super::args::{GatewayArgs, ProjectArgs, RangeArgs, ZoneArgs};
use super::Found;
use crate::app::env::Env;
use crate::present::chart;
use crate::present::numbers::money;
use crate::present::output::{one_line, one_line_upto, thousands, Out};
use crate::present::table::{self, Column, Cut};
use crate::query::stats::{self, Dim, Figures, Row, StatsOptions};
use crate::query::{handle, Reader};
use crate::store::Scope;
use crate::store::Store;
use clap::Args;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Group by day, week, month, project, model, provider, session, tool, agent or channel;
    /// repeat to nest.
    #[arg(long, value_name = "DIM", value_delimiter = ',')]
    pub by: Vec<String>,
    /// Comma-separated values with a header line.
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub range: RangeArgs,
    #[command(flatten)]
    pub zone: ZoneArgs,
}

pub fn run(env: &Env, args: &StatsArgs, out: &mut Out) -> Result<Found> {
    let opts = options(env, args)?;
    let dims = &opts.dims;
    let mut opened = env.open_reader(None)?;
    if let Some(store) = opened.local() {
        crate::store::small_cache(&store.conn)?;
    }
    let mut reader = opened.reader()?;
    if let Reader::Local { scope, .. } = &mut reader {
        args.gateway.apply(scope);
    }
    let (rows, early_labels) = match &reader {
        Reader::Local { conn, scope, .. } => {
            // A table by session over every project and all time labels nearly every session.
            let label_all = dims.contains(&Dim::Session)
                && !env.global.json
                && !args.csv
                && opts.cwd.is_none()
                && opts.since_ms.is_none()
                && opts.until_ms.is_none()
                && !scope.narrows();
            figures(env, conn, scope, &opts, label_all)?
        }
        Reader::Server(_) => (stats::figures(&mut reader, &opts)?, None),
    };
    let found = rows.iter().any(|r| r.figures != Figures::default());
    if env.global.json {
        out.json(&env.answer(&rows))?;
    } else if args.csv {
        write_csv(
            out,
            &dims.iter().map(|d| d.name()).collect::<Vec<_>>(),
            &rows,
        )?;
    } else if !found {
        say_no_activity(&opts);
    } else {
        let labels = match early_labels {
            Some(labels) => labels,
            None => labels(&mut reader, dims, &rows)?,
        };
        let labels = if env.global.redact {
            // Whole, before the table cuts them to its width.
            labels
                .into_iter()
                .map(|(k, v)| (k, crate::redact::redact(&v).into_owned()))
                .collect()
        } else {
            labels
        };
        write_table(out, dims, &rows, &labels)?;
        if out.color && dims.first().is_some_and(|d| d.is_time()) && dims.len() == 1 {
            out.line("")?;
            let now = chrono::Utc::now().timestamp_millis();
            let bounds = chart::Bounds::of(&opts.zone, opts.since_ms, opts.until_ms, now);
            chart::write(out, dims[0], &rows, bounds)?;
        }
    }
    reader.finish()?;
    Ok(found)
}

/// The options `args` ask for, checked before anything is read; `--by source` on the team
/// server only, whose periods are UTC's unless `--tz` names a zone (it cannot know this
/// machine's).
fn options(env: &Env, args: &StatsArgs) -> Result<StatsOptions> {
    let server = env.reads_server();
    if server {
        super::args::refuse_gateway_remote(&args.gateway, false)?;
    }
    if env.global.json && args.csv {
        bail!("--json and --csv: choose one");
    }
    let dims = args
        .by
        .iter()
        .map(|d| stats::parse_dim(d.trim(), server))
        .collect::<crate::error::Result<Vec<Dim>>>()?;
    let zone = match &args.zone.tz {
        None if server => stats::Zone::Named(chrono_tz::UTC),
        _ => args.zone.zone()?,
    };
    let (since_ms, until_ms) = args.range.bounds(chrono::Utc::now().timestamp_millis())?;
    Ok(StatsOptions {
        dims,
        since_ms,
        until_ms,
        cwd: args.project.cwd(),
        zone,
    })
}

/// What a table with no figures says instead, on stderr.
fn say_no_activity(opts: &StatsOptions) {
    let mut msg = "pidx: no activity".to_string();
    if let Some(cwd) = &opts.cwd {
        msg.push_str(&format!(" for {cwd}"));
    }
    if opts.since_ms.is_some() || opts.until_ms.is_some() {
        msg.push_str(" in this range");
    }
    if let Some(cwd) = &opts.cwd {
        msg.push_str(&format!(
            " (`pidx list --cwd {cwd}` shows whether it has sessions; leave out --cwd for every project)"
        ));
    }
    crate::term::say(&msg);
}

/// The labels of the sessions the rows are keyed by (none without `--by session`).
fn labels(reader: &mut Reader, dims: &[Dim], rows: &[Row]) -> Result<Labels> {
    let Some(at) = dims.iter().position(|d| *d == Dim::Session) else {
        return Ok(HashMap::new());
    };
    let paths = rows
        .iter()
        .filter_map(|r| r.key_order.get(at).map(String::as_str));
    Ok(handle::labels_in(reader, paths)?)
}

/// Session labels by path, as [`handle::labels_by_path`] gives them.
type Labels = HashMap<String, String>;

/// The figures, and, when `label_all`, the labels of every session, read on a second connection
/// meanwhile (summing the figures and reading the labels were each about a third of a
/// 10,000-row table's time). `None` when the labels were not read or could not be: then they
/// are read after, for the rows found. A session synced in between has no label in that read
/// and shows its path.
fn figures(
    env: &Env,
    conn: &rusqlite::Connection,
    scope: &Scope,
    opts: &StatsOptions,
    label_all: bool,
) -> Result<(Vec<Row>, Option<Labels>)> {
    std::thread::scope(|s| {
        let labeller = label_all.then(|| {
            s.spawn(|| -> crate::Result<Labels> {
                let store = Store::open_read_only(&env.db)?;
                crate::store::small_cache(&store.conn)?;
                Ok(handle::labels_of_every_session(&store.conn)?)
            })
        });
        let rows = stats::stats(conn, scope, opts)?;
        let labels = labeller.and_then(|h| h.join().ok()).and_then(Result::ok);
        Ok((rows, labels))
    })
}

const COLUMNS: [&str; 14] = [
    "sessions",
    "user",
    "assistant",
    "tool results",
    "tool calls",
    "tool errors",
    "input",
    "output",
    "cache read",
    "cache write",
    "total tokens",
    "cost",
    "compactions",
    "active days",
];

fn values(f: &Figures) -> [String; 14] {
    [
        f.sessions.to_string(),
        f.user_messages.to_string(),
        f.assistant_messages.to_string(),
        f.tool_results.to_string(),
        f.tool_calls.to_string(),
        f.tool_errors.to_string(),
        f.input.to_string(),
        f.output.to_string(),
        f.cache_read.to_string(),
        f.cache_write.to_string(),
        f.total_tokens.to_string(),
        format!("{:.4}", f.cost),
        f.compactions.to_string(),
        f.active_days.to_string(),
    ]
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The rows as CSV, one column per dimension (named in `dims`) then the figures.
fn write_csv(out: &mut Out, dims: &[&str], rows: &[Row]) -> std::io::Result<()> {
    let header: Vec<String> = dims
        .iter()
        .map(|d| d.to_string())
        .chain(COLUMNS.iter().map(|c| c.replace(' ', "_")))
        .collect();
    out.line(&header.join(","))?;
    for r in rows {
        let fields: Vec<String> = r
            .key_order
            .iter()
            .cloned()
            .chain(values(&r.figures))
            .map(|f| csv_field(&f))
            .collect();
        out.line(&fields.join(","))?;
    }
    Ok(())
}

/// The columns worth a terminal's width: tool queries show tool figures only.
fn shown(dims: &[Dim]) -> Vec<usize> {
    if dims.contains(&Dim::Tool) {
        vec![0, 3, 4, 5, 13]
    } else {
        vec![0, 1, 2, 4, 5, 6, 7, 8, 9, 11, 12, 13]
    }
}

/// The figures for people: thousands separators, cost in dollars to the cent (`numbers`).
fn human_values(f: &Figures) -> [String; 14] {
    let n = |v: i64| thousands(v);
    [
        n(f.sessions),
        n(f.user_messages),
        n(f.assistant_messages),
        n(f.tool_results),
        n(f.tool_calls),
        n(f.tool_errors),
        n(f.input),
        n(f.output),
        n(f.cache_read),
        n(f.cache_write),
        n(f.total_tokens),
        money(f.cost),
        n(f.compactions),
        n(f.active_days),
    ]
}

/// The table, fitted to the terminal: key columns shrink first (sessions and text at their
/// end, project paths from the left), figures never. Session rows are keyed by handle and name
/// (`labels`, by path; the path itself is in `--json`).
fn write_table(
    out: &mut Out,
    dims: &[Dim],
    rows: &[Row],
    labels: &HashMap<String, String>,
) -> std::io::Result<()> {
    let mut shown_cols = shown(dims);
    // A session label starts with its handle: never cut into it.
    let handle_width = labels
        .values()
        .map(|l| {
            l.split_whitespace()
                .next()
                .unwrap_or_default()
                .chars()
                .count()
                + 2
        })
        .max()
        .unwrap_or(12);
    // The key cells, the figures and their widths once; each try below only picks the columns
    // and sums widths, and the table is drawn once, when it fits.
    let cells = row_cells(dims, rows, labels, out.width);
    let cell_widths: Vec<(Vec<usize>, [usize; 14])> = cells
        .iter()
        .map(|(keys, vals)| {
            let keys = keys.iter().map(|k| table::width(k)).collect();
            (keys, vals.each_ref().map(|v| table::width(v)))
        })
        .collect();
    let mut left_out = 0;
    // Figures go before the title does; once none is left to drop, the title goes too.
    let mut title_min = TITLE_MIN;
    loop {
        let mut cols: Vec<Column> = dims
            .iter()
            .map(|d| match d {
                Dim::Project => Column::text(d.name(), Cut::Start, 12),
                Dim::Session => Column::text(d.name(), Cut::End, handle_width + title_min),
                _ => Column::text(d.name(), Cut::End, 12),
            })
            .collect();
        cols.extend(shown_cols.iter().map(|&i| Column::number(COLUMNS[i])));
        let shrink: Vec<usize> = (0..dims.len()).collect();
        let row_widths = cell_widths.iter().map(|(keys, vals)| {
            keys.iter()
                .copied()
                .chain(shown_cols.iter().map(|&i| vals[i]))
        });
        let widths = table::layout(&cols, row_widths, out.width, &shrink);
        let fits = out.width.is_none_or(|w| table::total(&widths) <= w);
        // Too narrow: leave out the least telling figures, one at a time.
        let droppable = DROP_ORDER.iter().find(|i| shown_cols.contains(i));
        match droppable {
            Some(&drop) if !fits && shown_cols.len() > 3 => {
                shown_cols.retain(|&i| i != drop);
                left_out += 1;
            }
            _ if !fits && title_min > 0 && dims.contains(&Dim::Session) => title_min = 0,
            _ => {
                let table_rows = cells.iter().map(|(keys, vals)| {
                    keys.iter()
                        .map(String::as_str)
                        .chain(shown_cols.iter().map(|&i| vals[i].as_str()))
                });
                out.lines(table::lines(&cols, table_rows, &widths))?;
                if left_out > 0 {
                    out.line(&format!(
                        "({left_out} column{} left out to fit {} columns; --json and --csv have them all)",
                        crate::present::output::plural(left_out),
                        out.width.unwrap_or_default()
                    ))?;
                }
                return Ok(());
            }
        }
    }
}

/// Each row's key cells (sessions by their labels) and its figures, as the table shows them.
/// A label is drawn on one line only as far as a table of `width` can show it.
fn row_cells(
    dims: &[Dim],
    rows: &[Row],
    labels: &HashMap<String, String>,
    width: Option<usize>,
) -> Vec<(Vec<String>, [String; 14])> {
    rows.iter()
        .map(|r| {
            let keys = r
                .key_order
                .iter()
                .zip(dims)
                .map(|(k, d)| match d {
                    Dim::Session => {
                        let label = labels.get(k).unwrap_or(k);
                        width.map_or_else(|| one_line(label), |w| one_line_upto(label, w))
                    }
                    // Sessions whose header has no cwd: a row with no name reads as a glitch.
                    Dim::Project if k.is_empty() => NO_CWD.to_string(),
                    _ => one_line(k),
                })
                .collect();
            (keys, human_values(&r.figures))
        })
        .collect()
}

/// The project of sessions whose header names no cwd.
const NO_CWD: &str = "(no cwd)";

/// How much of a session's title a table keeps beside its handle before it leaves out figures
/// instead: a handle with one letter of title names nothing a person recognises. Only when
/// every figure that can go has gone is the title cut shorter (never the handle).
const TITLE_MIN: usize = 24;

/// Figures left out first when a table does not fit: compactions, active days, cache writes,
/// cache reads, tool errors, assistant and user messages.
const DROP_ORDER: [usize; 7] = [12, 13, 9, 8, 5, 2, 1];
