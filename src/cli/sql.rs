//! `pidx sql`: a read-only query on the index, as a table, JSON (array of objects) or CSV.

use anyhow::Result;
use clap::Args;
use serde_json::{Map, Value};

use super::Found;
use crate::app::env::Env;
use crate::present::output::{one_line, Out};
use crate::query::sql;
use crate::query::Reader;
use crate::store::{Scope, Store};

#[derive(Args, Debug)]
pub struct SqlArgs {
    /// One SELECT (or read-only PRAGMA) statement.
    pub query: String,
    /// Comma-separated values with a header line.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Stop a query that runs longer than SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
}

pub fn run(env: &Env, args: &SqlArgs, out: &mut Out) -> Result<Found> {
    let (store, mut opened);
    let mut reader = if env.reads_server() {
        opened = env.open_reader(None)?;
        opened.reader()?
    } else {
        if !env.global.no_sync {
            // Bring the index up to date first, then read through a connection that cannot
            // write.
            drop(env.open_fresh()?);
        }
        store = Store::open_read_only(&env.db)?;
        Reader::Local {
            conn: &store.conn,
            scope: Scope::new(&store.conn, &env.roots)?,
            unread: Vec::new(),
        }
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let limit = std::time::Duration::from_secs_f64(args.timeout);
    let table = sql::query(&mut reader, &args.query, limit)?;
    reader.finish()?;
    print(env, args, &table, out)
}

/// Prints a result as JSON objects, CSV or a plain table.
fn print(env: &Env, args: &SqlArgs, table: &sql::Table, out: &mut Out) -> Result<Found> {
    if env.global.json {
        let rows: Vec<Value> = table
            .rows
            .iter()
            .map(|r| {
                let obj: Map<String, Value> = table
                    .columns
                    .iter()
                    .cloned()
                    .zip(r.iter().cloned())
                    .collect();
                Value::Object(obj)
            })
            .collect();
        out.json(&env.answer(&rows))?;
    } else if args.csv {
        out.line(
            &table
                .columns
                .iter()
                .map(|c| csv(c))
                .collect::<Vec<_>>()
                .join(","),
        )?;
        for r in &table.rows {
            out.line(
                &r.iter()
                    .map(|v| csv(&text(v)))
                    .collect::<Vec<_>>()
                    .join(","),
            )?;
        }
    } else {
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::NOTHING);
        t.set_header(table.columns.clone());
        for r in &table.rows {
            t.add_row(r.iter().map(|v| one_line(&text(v))).collect::<Vec<_>>());
        }
        for line in t.to_string().lines() {
            out.line(line.trim_end())?;
        }
    }
    Ok(!table.rows.is_empty())
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
            Some(f) => real(f),
            None => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A REAL as the `sqlite3` shell prints it: 15 significant digits (`%!.15g`), so a sum of
/// costs reads `623.3014275`, not the binary float's `623.3014274999999`. `--json` keeps the
/// float as it is.
fn real(f: f64) -> String {
    if !f.is_finite() || f == 0.0 {
        return format!("{f:?}");
    }
    let exp = f.abs().log10().floor() as i32;
    if !(-4..15).contains(&exp) {
        let s = format!("{f:.14e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{e}");
    }
    let decimals = usize::try_from(14 - exp).unwrap_or(0);
    let s = format!("{f:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s.contains('.') {
        s.to_string()
    } else {
        format!("{s}.0")
    }
}

fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::real;

    #[test]
    fn reals_read_as_the_sqlite3_shell_prints_them() {
        for (f, s) in [
            (623.3014274999999, "623.3014275"),
            (0.1 + 0.2, "0.3"),
            (3.0, "3.0"),
            (-2.5, "-2.5"),
            (1795.4048, "1795.4048"),
            (0.000123, "0.000123"),
            (1.5e-7, "1.5e-7"),
            (0.0, "0.0"),
        ] {
            assert_eq!(real(f), s, "{f}");
        }
    }
}
