//! The reading commands against the team server (`pidx --pg URL list|show|context|tree|search|
//! stats|sql`): each runs in one `READ ONLY` transaction and prints with the local renderers;
//! rows carry their source.

use anyhow::{bail, Result};
use serde_json::Value;

use super::output::Out;
use super::{render, Command, Found};
use crate::app::env::Env;
use crate::query::resolve::server as pg;
use crate::query::{context, show, tree};
use crate::store::pg as store;

/// Whether `pidx --pg` answers this command from the server.
pub fn reads_from_server(cmd: &Command) -> bool {
    matches!(
        cmd,
        Command::List(_)
            | Command::Show(_)
            | Command::Context(_)
            | Command::Tree(_)
            | Command::Search(_)
            | Command::Stats(_)
            | Command::Sql(_)
    )
}

pub fn run(env: &Env, url: &str, cmd: &Command, out: &mut Out) -> Result<Found> {
    let mut client = store::connect_reader(url)?;
    let mut tx = store::read_only(&mut client)?;
    let source = env.global.source.as_deref();
    let found = match cmd {
        Command::List(a) => super::list::run_remote(env, a, &mut tx, out)?,
        Command::Show(a) => {
            let s = pg::resolve(&mut tx, source, &a.session)?;
            let v = show::server::show(&mut tx, &s)?;
            print_object(env, out, &v)?;
            true
        }
        Command::Context(a) => {
            let s = pg::resolve(&mut tx, source, &a.session)?;
            let ctx = context::server::context(&mut tx, &s, a.leaf.as_deref())?;
            super::context::print(env, ctx, out)?
        }
        Command::Tree(a) => {
            let s = pg::resolve(&mut tx, source, &a.session)?;
            let t = tree::server::tree(&mut tx, &s)?;
            if env.global.json {
                out.line(&t.to_json())?;
            } else {
                render::tree(out, &t)?;
            }
            !t.unopenable
        }
        Command::Search(a) => super::search::run_remote(env, a, &mut tx, out)?,
        Command::Stats(a) => super::stats::run_remote(env, a, &mut tx, out)?,
        Command::Sql(a) => {
            let table = sql(&mut tx, &a.query, a.timeout)?;
            super::sql::print(env, a, &table, out)?
        }
        _ => unreachable!("reads_from_server"),
    };
    tx.commit().map_err(store::server_err)?;
    Ok(found)
}

fn print_object(env: &Env, out: &mut Out, v: &Value) -> Result<()> {
    if env.global.json {
        out.json(v)?;
        return Ok(());
    }
    if let Value::Object(m) = v {
        for (k, v) in m {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Null => "-".into(),
                other => other.to_string(),
            };
            out.line(&format!("{k:<18} {}", crate::term::one_line(&text)))?;
        }
    }
    Ok(())
}

/// One user query, read-only, each row as a JSON object (`to_json` keeps the column order and
/// types), with a statement timeout.
fn sql(
    tx: &mut postgres::Transaction,
    query: &str,
    timeout: f64,
) -> Result<crate::query::sql::Table> {
    if !(timeout.is_finite() && timeout > 0.0) {
        bail!("--timeout must be a positive number of seconds");
    }
    let query = query.trim().trim_end_matches(';');
    tx.batch_execute(&format!(
        "SET LOCAL statement_timeout = {}",
        (timeout * 1000.0) as i64
    ))
    .map_err(store::server_err)?;
    let stmt = tx.prepare(query).map_err(store::server_err)?;
    let columns: Vec<String> = stmt
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let wrapped = format!("SELECT to_json(q)::text FROM ({query}) q");
    // The nested attempt runs in a savepoint: when it fails, dropping the savepoint rolls the
    // transaction back to before it, so the plain query below can still run.
    let mut attempt = tx.savepoint("pidx_sql").map_err(store::server_err)?;
    let nested = attempt.query(&wrapped, &[]);
    drop(attempt);
    let Ok(rows) = nested else {
        // Not a query that can be nested (SHOW, EXPLAIN, or a write, which the READ ONLY
        // transaction refuses with its own message): run it as it is, values as text.
        return text_rows(tx, query, columns);
    };
    let rows = rows
        .iter()
        .map(|r| {
            let text: String = r.get(0);
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => m.into_iter().map(|(_, v)| v).collect(),
                _ => vec![Value::String(text)],
            }
        })
        .collect();
    Ok(crate::query::sql::Table { columns, rows })
}

fn text_rows(
    tx: &mut postgres::Transaction,
    query: &str,
    columns: Vec<String>,
) -> Result<crate::query::sql::Table> {
    let mut rows = Vec::new();
    for m in tx.simple_query(query).map_err(store::server_err)? {
        if let postgres::SimpleQueryMessage::Row(r) = m {
            rows.push(
                (0..r.len())
                    .map(|i| {
                        r.get(i)
                            .map_or(Value::Null, |v| Value::String(v.to_string()))
                    })
                    .collect(),
            );
        }
    }
    Ok(crate::query::sql::Table { columns, rows })
}
