//! `pidx stats`: figures as a table (with a bar chart per period on a terminal), JSON or CSV.

use anyhow::{bail, Result};

use super::args::{GatewayArgs, ProjectArgs, RangeArgs, ZoneArgs};
use super::env::Env;
use super::output::{one_line, Out};
use super::Found;
use crate::query::stats::{self, Dim, Figures, Row, StatsOptions};
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
    let dims = args
        .by
        .iter()
        .map(|d| stats::parse_dim(d.trim()))
        .collect::<crate::error::Result<Vec<Dim>>>()?;
    let zone = args.zone.zone()?;
    let (since_ms, until_ms) = args.range.bounds(chrono::Utc::now().timestamp_millis())?;
    if env.global.json && args.csv {
        bail!("--json and --csv: choose one");
    }
    let (store, mut scope) = env.open_fresh()?;
    scope.gateway = args.gateway.filter();
    let opts = StatsOptions {
        dims: dims.clone(),
        since_ms,
        until_ms,
        cwd: args.project.cwd(),
        zone,
    };
    let rows = stats::stats(&store.conn, &scope, &opts)?;
    let found = rows.iter().any(|r| r.figures != Figures::default());
    if env.global.json {
        out.json(&rows)?;
    } else if args.csv {
        write_csv(out, &dims, &rows)?;
    } else if !found {
        let mut msg = "pidx: no activity".to_string();
        if let Some(cwd) = &opts.cwd {
            msg.push_str(&format!(" for {cwd}"));
        }
        if since_ms.is_some() || until_ms.is_some() {
            msg.push_str(" in this range");
        }
        if let Some(cwd) = &opts.cwd {
            msg.push_str(&format!(
                " (`pidx list --cwd {cwd}` shows whether it has sessions; leave out --cwd for every project)"
            ));
        }
        crate::term::say(&msg);
    } else {
        write_table(out, &dims, &rows)?;
        if out.color && dims.first().is_some_and(|d| d.is_time()) && dims.len() == 1 {
            out.line("")?;
            write_chart(out, &rows)?;
        }
    }
    Ok(found)
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

fn write_csv(out: &mut Out, dims: &[Dim], rows: &[Row]) -> std::io::Result<()> {
    let header: Vec<String> = dims
        .iter()
        .map(|d| d.name().to_string())
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

fn write_table(out: &mut Out, dims: &[Dim], rows: &[Row]) -> std::io::Result<()> {
    let cols = shown(dims);
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    let mut header: Vec<String> = dims.iter().map(|d| d.name().to_string()).collect();
    header.extend(cols.iter().map(|&i| COLUMNS[i].to_string()));
    table.set_header(header);
    for r in rows {
        let vals = values(&r.figures);
        let mut line: Vec<String> = r.key_order.iter().map(|k| one_line(k)).collect();
        line.extend(cols.iter().map(|&i| vals[i].clone()));
        table.add_row(line);
    }
    for (i, col) in table.column_iter_mut().enumerate() {
        if i >= dims.len() {
            col.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    for line in table.to_string().lines() {
        out.line(line.trim_end())?;
    }
    Ok(())
}

/// Cost per period as horizontal bars (tokens when nothing cost anything).
fn write_chart(out: &mut Out, rows: &[Row]) -> std::io::Result<()> {
    let by_cost = rows.iter().any(|r| r.figures.cost > 0.0);
    let value = |r: &Row| {
        if by_cost {
            r.figures.cost
        } else {
            r.figures.total_tokens as f64
        }
    };
    let max = rows.iter().map(value).fold(0.0, f64::max);
    if max <= 0.0 {
        return Ok(());
    }
    out.line(if by_cost {
        "cost per period"
    } else {
        "tokens per period"
    })?;
    for r in rows {
        let width = (value(r) / max * 50.0).round() as usize;
        let label = r.key_order.first().cloned().unwrap_or_default();
        let shown = if by_cost {
            format!("${:.2}", value(r))
        } else {
            format!("{}", value(r) as i64)
        };
        out.line(&format!(
            "{label:>10} {} {shown}",
            out.paint("36", &"█".repeat(width))
        ))?;
    }
    Ok(())
}
