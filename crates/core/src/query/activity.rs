//! Two views of the usage the `stats` groupings do not give: when in the week people work (a
//! weekday × hour grid of messages, from the quarter-hour usage rollups) and which model's tool
//! calls failed. pi writes a tool result without a model, so `stats --by model` counts every
//! failure under "no model"; here each failed result is charged to the assistant message that
//! came before it in its file (the one whose call it answers: pi appends results after it).

use chrono::{Datelike, Timelike};
use rusqlite::Connection;

use crate::query::stats::Zone;

/// Messages (user and assistant) per quarter hour, copies left out as `stats` leaves them.
const MESSAGES_BY_QUARTER: &str = "
SELECT t, sum(user + assistant) FROM usage_rollup
WHERE dup = 0 AND t <> -9223372036854775808
GROUP BY t";

/// `[weekday from Monday][hour]`: the messages written then, in `zone`.
///
/// # Errors
/// Index errors only.
pub fn week_hours(conn: &Connection, zone: &Zone) -> rusqlite::Result<[[i64; 24]; 7]> {
    let mut grid = [[0i64; 24]; 7];
    let mut stmt = conn.prepare_cached(MESSAGES_BY_QUARTER)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (t, n): (i64, i64) = (r.get(0)?, r.get(1)?);
        if let Some(at) = zone.local(t) {
            grid[at.weekday().num_days_from_monday() as usize][at.hour() as usize] += n;
        }
    }
    Ok(grid)
}

/// Failed tool results by the model of the assistant message before each (the `stats --by
/// model` key). Failures are few: found through their partial index (migration 0032), each
/// finds its assistant through `entries_by_seq`.
const ERRORS_BY_MODEL: &str = "
SELECT coalesce(a.response_model, a.model, '?'), count(*)
FROM entries r
JOIN entries a ON a.rid = (
    SELECT p.rid FROM entries p
    WHERE p.file_id = r.file_id AND p.seq < r.seq AND p.type = 'message' AND p.role = 'assistant'
    ORDER BY p.seq DESC LIMIT 1)
WHERE r.type = 'message' AND r.role = 'toolResult' AND r.is_error AND r.dup = 0
GROUP BY 1";

/// Failed tool results per model (`model -> count`).
///
/// # Errors
/// Index errors only.
pub fn errors_by_model(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut stmt = conn.prepare_cached(ERRORS_BY_MODEL)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
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
               (2, 1, 'message', 'toolResult', NULL, NULL, 1, 1);",
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
               (1772355600000, 0, 1, 2), (1772355600000, 1, 5, 5),
               (-9223372036854775808, 0, 7, 7);",
        )?;
        // 2026-03-01T09:00Z is a Sunday.
        let grid = week_hours(&conn, &Zone::Named(chrono_tz::UTC))?;
        assert_eq!(grid[6][9], 3);
        assert_eq!(grid.iter().flatten().sum::<i64>(), 3);
        Ok(())
    }
}
