//! Two views of the usage the `stats` groupings do not give: when in the week people work (a
//! weekday × hour grid of messages, from the quarter-hour usage rollups) and which model's tool
//! calls failed. pi writes a tool result without a model, so `stats --by model` counts every
//! failure under "no model"; here each failed result is charged to the assistant message that
//! came before it in its file (the one whose call it answers: pi appends results after it).

use std::collections::HashMap;

use chrono::{Datelike, Timelike};
use rusqlite::Connection;

use crate::query::stats::Zone;

/// Messages (user and assistant) of each rollup row, copies left out as `stats` leaves them.
/// Read in table order and summed by quarter hour in Rust: SQLite's `GROUP BY t` walked the
/// `t` index and fetched each of the 41,000 rows from the table at 10,000 sessions (19 ms of
/// CPU against 5 for the scan).
const MESSAGES: &str = "
SELECT t, user + assistant FROM usage_rollup NOT INDEXED
WHERE dup = 0 AND t <> -9223372036854775808";

/// `[weekday from Monday][hour]`: the messages written then, in `zone`.
///
/// # Errors
/// Index errors only.
pub fn week_hours(conn: &Connection, zone: &Zone) -> rusqlite::Result<[[i64; 24]; 7]> {
    let mut by_quarter: HashMap<i64, i64> = HashMap::new();
    let mut stmt = conn.prepare_cached(MESSAGES)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (t, n): (i64, i64) = (r.get(0)?, r.get(1)?);
        *by_quarter.entry(t).or_default() += n;
    }
    let mut grid = [[0i64; 24]; 7];
    for (t, n) in by_quarter {
        if let Some(at) = zone.local(t) {
            grid[at.weekday().num_days_from_monday() as usize][at.hour() as usize] += n;
        }
    }
    Ok(grid)
}

/// The model of the assistant message before each failed tool result (NULL when none is).
/// Failures are few: found through their partial index, each finds its assistant's models in
/// the assistants' (migrations 0032, 0033), reading no entry row. Counted in Rust: a `GROUP
/// BY` of the subquery's value runs the subquery twice a row.
const FAILURE_MODELS: &str = "
SELECT (SELECT coalesce(a.response_model, a.model, '?') FROM entries a
        WHERE a.file_id = r.file_id AND a.seq < r.seq AND a.type = 'message' AND a.role = 'assistant'
        ORDER BY a.seq DESC LIMIT 1)
FROM entries r
WHERE r.type = 'message' AND r.role = 'toolResult' AND r.is_error AND r.dup = 0";

/// Failed tool results per model (`model -> count`, by model); a failure with no assistant
/// message before it in its file counts for none.
///
/// # Errors
/// Index errors only.
pub fn errors_by_model(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut counts: HashMap<String, i64> = HashMap::new();
    let mut stmt = conn.prepare_cached(FAILURE_MODELS)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(model) = r.get::<_, Option<String>>(0)? {
            *counts.entry(model).or_default() += 1;
        }
    }
    let mut out: Vec<(String, i64)> = counts.into_iter().collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_counts_for_the_model_that_made_the_call() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE entries(rid INTEGER PRIMARY KEY, file_id, seq, type, role, model,
                                  response_model, is_error, dup);
             INSERT INTO entries(file_id, seq, type, role, model, response_model, is_error, dup) VALUES
               (1, 1, 'message', 'assistant', 'opus', NULL, NULL, 0),
               (1, 2, 'message', 'toolResult', NULL, NULL, 1, 0),
               (1, 3, 'message', 'toolResult', NULL, NULL, 1, 0),
               (1, 4, 'message', 'assistant', 'haiku', 'haiku-2', NULL, 0),
               (1, 5, 'message', 'toolResult', NULL, NULL, 0, 0),
               (1, 6, 'message', 'toolResult', NULL, NULL, 1, 0),
               (2, 1, 'message', 'toolResult', NULL, NULL, 1, 1),
               (3, 1, 'message', 'toolResult', NULL, NULL, 1, 0),
               (3, 2, 'message', 'assistant', 'opus', NULL, NULL, 0);",
        )?;
        let mut got = errors_by_model(&conn)?;
        got.sort();
        assert_eq!(got, vec![("haiku-2".into(), 1), ("opus".into(), 2)]);
        Ok(())
    }

    #[test]
    fn messages_land_on_their_weekday_and_hour() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE usage_rollup(t, dup, user, assistant);
             INSERT INTO usage_rollup VALUES
               (1772355600000, 0, 1, 2), (1772355600000, 1, 5, 5), (1772355600000, 0, 0, 4),
               (-9223372036854775808, 0, 7, 7);",
        )?;
        // 2026-03-01T09:00Z is a Sunday.
        let grid = week_hours(&conn, &Zone::Named(chrono_tz::UTC))?;
        assert_eq!(grid[6][9], 7);
        assert_eq!(grid.iter().flatten().sum::<i64>(), 7);
        Ok(())
    }
}
