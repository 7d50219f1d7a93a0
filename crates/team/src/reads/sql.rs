//! `pidx --pg URL sql`: one read-only query on the team server, as the local `sql::Table`.

use std::time::Duration;

use postgres::Transaction;
use serde_json::Value;

use crate::pg::server_err;
use pidx_core::error::Result;
use pidx_core::query::sql::Table;

/// One user query, read-only, each row as a JSON object (`to_json` keeps the column order and
/// types), with a statement timeout.
///
/// # Errors
/// Server errors (a write is refused by the `READ ONLY` transaction).
pub fn run(tx: &mut Transaction, query: &str, timeout: Duration) -> Result<Table> {
    let query = query.trim().trim_end_matches(';');
    tx.batch_execute(&format!(
        "SET LOCAL statement_timeout = {}",
        timeout.as_millis()
    ))
    .map_err(server_err)?;
    let stmt = tx.prepare(query).map_err(server_err)?;
    let columns: Vec<String> = stmt
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let wrapped = format!("SELECT to_json(q)::text FROM ({query}) q");
    // The nested attempt runs in a savepoint: when it fails, dropping the savepoint rolls the
    // transaction back to before it, so the plain query below can still run.
    let mut attempt = tx.savepoint("pidx_sql").map_err(server_err)?;
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
    Ok(Table { columns, rows })
}

fn text_rows(tx: &mut Transaction, query: &str, columns: Vec<String>) -> Result<Table> {
    let mut rows = Vec::new();
    for m in tx.simple_query(query).map_err(server_err)? {
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
    Ok(Table { columns, rows })
}
