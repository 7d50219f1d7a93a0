//! `pidx --pg URL stats`: the local figures (`query::stats::Figures`) over every source's
//! entries, grouped by source and every local dimension (`query::stats::Dim`: project, model,
//! provider, session, tool, gateway agent and channel, day, week, month; periods in the `--tz`
//! zone, UTC by default). Copies made by forks are counted once per source.

use postgres::Transaction;

use super::on as server;
use crate::pg::typed;
use pidx_core::error::{Error, Result};
use pidx_core::query::stats::{order, Figures, Row, StatsOptions, Zone, SERVER_DIMS};
use pidx_core::store::filter::{int, text, Where};

/// A local `StatsOptions` as the server's statement needs it.
#[derive(Debug, Clone, Default)]
struct PgStats {
    pub by: Vec<String>,
    pub source: Option<String>,
    pub cwd: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// A PostgreSQL time zone name (`UTC`, `Europe/Paris`).
    pub zone: String,
    /// Whether the zone's days begin on a quarter hour (every named zone; a fixed offset may
    /// not), so that the rollups can answer.
    pub zone_on_quarters: bool,
}

fn dim_sql(dim: &str) -> Option<&'static str> {
    Some(match dim {
        "source" => "s.source",
        "project" => "s.cwd",
        "model" => {
            // One row for everything no model is named for (`query::stats::NO_MODEL`).
            "CASE WHEN e.type = 'message' AND e.role = 'assistant'
                    THEN coalesce(e.response_model, e.model, '?')
                  WHEN e.type = 'usage' AND e.input IS NOT NULL
                    THEN coalesce(e.model, '?')
                  ELSE '(no model: user messages / tool results / compactions)' END"
        }
        "provider" => "coalesce(e.provider, '-')",
        "session" => "s.path",
        // The tool query's own column (`tool_sql`).
        "tool" => "tool",
        "agent" => "coalesce(s.agent_id, '-')",
        "channel" => "coalesce(s.channel, '-')",
        "day" => {
            "coalesce(to_char(to_timestamp(e.ts_ms / 1000.0) AT TIME ZONE $1, 'YYYY-MM-DD'), '-')"
        }
        "week" => {
            "coalesce(to_char(to_timestamp(e.ts_ms / 1000.0) AT TIME ZONE $1, 'IYYY-\"W\"IW'), '-')"
        }
        "month" => {
            "coalesce(to_char(to_timestamp(e.ts_ms / 1000.0) AT TIME ZONE $1, 'YYYY-MM'), '-')"
        }
        _ => return None,
    })
}

/// Figures per group, ordered by key, then the total when grouping (as the local `stats`),
/// over every source's entries (or `source`'s).
///
/// # Errors
/// `Invalid` for the machine's local zone, which the server cannot know; server errors.
pub fn stats(tx: &mut Transaction, source: Option<&str>, o: &StatsOptions) -> Result<Vec<Row>> {
    let (zone, zone_on_quarters) = match &o.zone {
        Zone::Local => {
            return Err(Error::Invalid(
                "--tz local: the server does not know this machine's zone; name it (UTC, Europe/Paris, +02:00)".into(),
            ))
        }
        Zone::Named(tz) => (tz.name().to_string(), true),
        Zone::Fixed(off) => {
            let secs = off.local_minus_utc();
            let a = secs.abs();
            let sign = if secs > 0 { '-' } else { '+' };
            (
                format!("UTC{sign}{:02}:{:02}:{:02}", a / 3600, a / 60 % 60, a % 60),
                secs % 900 == 0,
            )
        }
    };
    let o = PgStats {
        by: o.dims.iter().map(|d| d.name().to_string()).collect(),
        source: source.map(str::to_string),
        cwd: o.cwd.clone(),
        since_ms: o.since_ms,
        until_ms: o.until_ms,
        zone,
        zone_on_quarters,
    };
    stats_of(tx, &o)
}

fn stats_of(tx: &mut Transaction, o: &PgStats) -> Result<Vec<Row>> {
    let mut keys = Vec::new();
    for d in &o.by {
        let sql = dim_sql(d)
            .ok_or_else(|| Error::Invalid(format!("--by {d}: group by one of {SERVER_DIMS}")))?;
        keys.push(sql);
    }
    let by_source = by_source_answers(tx, o)?;
    let by_periods = !by_source && periods_answer(tx, o)?;
    let mut c = Where::default();
    // `$1`, the zone the period keys (`dim_sql`) are cut in.
    c.and("?::text IS NOT NULL", [text(o.zone.as_str())]);
    if let Some(s) = &o.source {
        // `by_source_sql` and `periods_sql` read no `sessions s`.
        let col = if by_source || by_periods {
            "e.source = ?"
        } else {
            "s.source = ?"
        };
        c.and(col, [text(s.as_str())]);
    }
    if !o.by.iter().any(|d| d == "session") {
        c.and("NOT e.dup", []);
    }
    if let Some(cwd) = &o.cwd {
        server::cwd(&mut c, cwd);
    }
    if let Some(t) = o.since_ms {
        c.and("e.ts_ms >= ?", [int(t)]);
    }
    if let Some(t) = o.until_ms {
        c.and("e.ts_ms < ?", [int(t)]);
    }
    let sql = if by_source {
        by_source_sql(o, &c.pg_sql())
    } else if by_periods {
        periods_sql(&keys, &c.pg_sql())
    } else {
        query_sql(o, &keys, &c.pg_sql())
    };
    let rows = typed::query(tx, &sql, &typed::where_params(&c, &[]))?;
    let n = keys.len();
    let mut out: Vec<Row> = rows
        .iter()
        .map(|r| {
            let key_order: Vec<String> = (0..n)
                .map(|i| r.get::<_, Option<String>>(i).unwrap_or_else(|| "-".into()))
                .collect();
            let g = |i: usize| r.get::<_, i64>(n + i);
            let mut f = Figures {
                sessions: g(0),
                user_messages: g(1),
                assistant_messages: g(2),
                tool_results: g(3),
                tool_calls: g(4),
                input: g(5),
                output: g(6),
                cache_read: g(7),
                cache_write: g(8),
                cost: r.get(n + 9),
                tool_errors: g(10),
                compactions: g(11),
                active_days: g(12),
                total_tokens: 0,
            };
            f.total_tokens = f.input + f.output + f.cache_read + f.cache_write;
            Row {
                key: o
                    .by
                    .iter()
                    .map(|d| leak(d))
                    .zip(key_order.iter().cloned())
                    .collect(),
                key_order,
                figures: f,
            }
        })
        .collect();
    if n > 0 {
        out.retain(|r| r.figures != Figures::default());
    } else if out.is_empty() {
        // `by_source_sql` has a row per source it counts: none over nothing.
        out.push(Row {
            key: Default::default(),
            key_order: Vec::new(),
            figures: Figures::default(),
        });
    }
    // As the local `stats` orders them: periods by time, other keys by their figure.
    let by_figure: Vec<bool> =
        o.by.iter()
            .map(|d| !matches!(d.as_str(), "day" | "week" | "month"))
            .collect();
    order(&mut out, &by_figure);
    Ok(out)
}

/// The dimension names as the `&'static str` keys `Row` uses.
fn leak(d: &str) -> &'static str {
    [
        "source", "project", "model", "provider", "session", "tool", "agent", "channel", "day",
        "week", "month",
    ]
    .into_iter()
    .find(|k| *k == d)
    .unwrap_or("?")
}

/// The statement: the tool query, or the figures from the rollups when they answer (their
/// model and provider keys stored), else from the entries.
fn query_sql(o: &PgStats, keys: &[&str], where_: &str) -> String {
    if o.by.iter().any(|d| d == "tool") {
        tool_sql(keys, where_)
    } else if rollups_answer(o) {
        let keys: Vec<&str> = (o.by.iter().zip(keys))
            .map(|(d, k)| match d.as_str() {
                // The rollups' `tools/summaries` is the no-model row (`stats::model_key`).
                "model" => {
                    "CASE WHEN e.model = 'tools/summaries'
                       THEN '(no model: user messages / tool results / compactions)'
                       ELSE e.model END"
                }
                "provider" => "e.provider",
                _ => k,
            })
            .collect();
        figures_sql(&keys, where_, ROLLED)
    } else {
        figures_sql(keys, where_, ENTRIES)
    }
}

/// The rollups' time grain (`migrations/pg/0003`): a quarter hour.
const GRAIN_MS: i64 = 900_000;

/// Whether the rollups give the exact answer (as `query::stats::rollups_answer`): range
/// boundaries on quarter hours, a zone whose days begin on one, no tool grouping.
fn rollups_answer(o: &PgStats) -> bool {
    let aligned = |t: Option<i64>| t.is_none_or(|t| t.rem_euclid(GRAIN_MS) == 0);
    o.zone_on_quarters && aligned(o.since_ms) && aligned(o.until_ms)
}

/// Whether the rollups by source (`usage_by_source`, `usage_sessions`, pg 0009; `usage_days`,
/// `usage_source_sessions`, pg 0011) give the exact answer:
/// the rollups do, nothing is grouped but by source, no project is asked for, and the reader
/// is not a limited one (`--reads`, `--reads-project`: it reads none of their rows, see the
/// migration).
///
/// # Errors
/// Server errors.
fn by_source_answers(tx: &mut Transaction, o: &PgStats) -> Result<bool> {
    if !rollups_answer(o) || o.cwd.is_some() || !(o.by.is_empty() || o.by == ["source"]) {
        return Ok(false);
    }
    unlimited(tx)
}

/// Whether [`periods_sql`] gives the exact answer: every group a period (`day`, `week`,
/// `month`), the rollups answer, no project asked for, not a limited reader (as
/// [`by_source_answers`]).
///
/// # Errors
/// Server errors.
fn periods_answer(tx: &mut Transaction, o: &PgStats) -> Result<bool> {
    let periods = !o.by.is_empty()
        && o.by
            .iter()
            .all(|d| matches!(d.as_str(), "day" | "week" | "month"));
    if !periods || !rollups_answer(o) || o.cwd.is_some() {
        return Ok(false);
    }
    unlimited(tx)
}

/// Whether the reader reads every row (a limited one, `--reads`, `--reads-project`, reads
/// none of the rollups by source, see pg 0009, nor the counts of texts per word, pg 0019).
pub(super) fn unlimited(tx: &mut Transaction) -> Result<bool> {
    Ok(!server::read_limited(tx)?)
}

/// The figures per period (`keys`: [`dim_sql`]'s day, week and month over `e.ts_ms`) without
/// a `count(DISTINCT ...)` over every rollup row ([`figures_sql`] sorted them all: 2.0 s at
/// 100,000 sessions, 17-23 s at a million, which `/usage` of `pidx --pg URL serve` could not wait
/// for). Each distinct quarter hour is cut into its periods once (`q`); the sums come from
/// `usage_by_source` (a row per source, quarter hour and copy flag), the active days from the
/// quarter hours, and the sessions from the distinct (transcript, quarter hour) of
/// `usage_rollup`, then (period, transcript), hashed. A quarter hour lies inside one day of
/// any zone the rollups answer for ([`rollups_answer`]), so each figure is the one
/// [`figures_sql`] computes.
fn periods_sql(keys: &[&str], where_: &str) -> String {
    let ks: Vec<String> = (0..keys.len()).map(|i| format!("k{i}")).collect();
    let ks = ks.join(", ");
    let q_keys: String = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k} AS k{i}, "))
        .collect();
    let q_ks: String = (0..keys.len()).map(|i| format!("q.k{i}, ")).collect();
    format!(
        "WITH q AS MATERIALIZED (
             SELECT e.t, {q_keys}(to_timestamp(e.ts_ms / 1000.0) AT TIME ZONE $1)::date AS d
             FROM (SELECT DISTINCT e.t, e.ts_ms FROM usage_by_source e WHERE {where_}) e),
         f AS (SELECT {q_ks}{ROLLED_SUMS}
               FROM usage_by_source e JOIN q ON q.t = e.t WHERE {where_} GROUP BY {ks}),
         d AS (SELECT {ks}, count(DISTINCT d) AS days FROM q GROUP BY {ks}),
         s AS (SELECT {ks}, count(*) AS n
               FROM (SELECT DISTINCT {q_ks}e.source, e.fid
                     FROM (SELECT DISTINCT e.source, e.fid, e.t FROM usage_rollup e
                           WHERE {where_}) e
                     JOIN q ON q.t = e.t) x
               GROUP BY {ks})
         SELECT {ks}, coalesce(s.n, 0), {ROLLED_FIGURES}, coalesce(d.days, 0)
         FROM f LEFT JOIN s USING ({ks}) LEFT JOIN d USING ({ks})"
    )
}

/// The figures per source (`--by source`) or of every source (one row, none when nothing
/// counts), without a `count(DISTINCT ...)` over the rollup rows. Over every time:
/// `usage_days` (pg 0011, a row per source, UTC day and copy flag: its sums, and its first and
/// last quarter hour with an entry, whose dates in the zone `$1` are the day's active dates
/// there) and `usage_source_sessions` (the transcripts with counted entries, per source). With
/// `--since` or `--until`: `usage_by_source` (pg 0009, a row per quarter hour, read twice
/// rather than materialised: 128 ms against 400 ms in the server at 100,000 sessions; the days
/// a hashed `DISTINCT` over the distinct quarter hours, each cut in the zone as
/// [`figures_sql`] cuts it) and the transcripts among the rollup rows in the range (hashed, no
/// join with `sessions`). At 300,000 sessions `stats` took 4.4 s, most of it sorting 929,160
/// rows on disk for the two distinct counts of [`figures_sql`]; at a million, the quarter hours
/// alone took 0.9 s (`--by source` 4.2 s).
fn by_source_sql(o: &PgStats, where_: &str) -> String {
    let g = if o.by.is_empty() {
        "''::text"
    } else {
        "e.source"
    };
    let local = |ms: &str| format!("(to_timestamp({ms} / 1000.0) AT TIME ZONE $1)::date");
    // pg 0011's tables, unless `PIDX_PG_SCHEMA` holds the server before them.
    let days_kept = crate::pg::migrate::latest() >= 11;
    let (rows, days, sessions) = if o.since_ms.is_none() && o.until_ms.is_none() && days_kept {
        (
            "usage_days",
            format!(
                "SELECT g, {} AS d FROM u WHERE first_ms IS NOT NULL
                 UNION SELECT g, {} FROM u WHERE last_ms IS NOT NULL",
                local("first_ms"),
                local("last_ms")
            ),
            format!(
                "SELECT {g} AS g, sum(sessions)::bigint AS n FROM usage_source_sessions e
                 WHERE {where_} GROUP BY 1"
            ),
        )
    } else {
        (
            "usage_by_source",
            format!(
                "SELECT DISTINCT g, {} AS d
                 FROM (SELECT DISTINCT g, ts_ms FROM u WHERE ts_ms IS NOT NULL) q",
                local("ts_ms")
            ),
            format!(
                "SELECT g, count(*) AS n FROM (SELECT DISTINCT {g} AS g, e.source, e.fid
                                                FROM usage_rollup e WHERE {where_}) x
                 GROUP BY g"
            ),
        )
    };
    format!(
        "WITH u AS NOT MATERIALIZED (SELECT {g} AS g, e.* FROM {rows} e WHERE {where_}),
         f AS (SELECT g, {ROLLED_SUMS} FROM u e GROUP BY g),
         d AS (SELECT g, count(*) AS days FROM ({days}) x GROUP BY g),
         s AS ({sessions})
         SELECT {key} coalesce(s.n, 0), {ROLLED_FIGURES}, coalesce(d.days, 0)
         FROM f LEFT JOIN s USING (g) LEFT JOIN d USING (g)",
        key = if o.by.is_empty() { "" } else { "f.g," },
    )
}

/// The figures' sums over a rollup by source `e` (`usage_by_source`, `usage_days`), as
/// [`by_source_sql`] and [`periods_sql`] group them in their `f`, named for [`ROLLED_FIGURES`].
const ROLLED_SUMS: &str = "coalesce(sum(e.user_msgs), 0)::bigint AS u,
    coalesce(sum(e.assistant_msgs), 0)::bigint AS a, coalesce(sum(e.tool_results), 0)::bigint AS r,
    coalesce(sum(e.tool_calls), 0)::bigint AS c, coalesce(sum(e.input), 0)::bigint AS i,
    coalesce(sum(e.output), 0)::bigint AS o, coalesce(sum(e.cache_read), 0)::bigint AS cr,
    coalesce(sum(e.cache_write), 0)::bigint AS cw, coalesce(sum(e.cost), 0)::float8 AS cost,
    coalesce(sum(e.tool_errors), 0)::bigint AS te, coalesce(sum(e.compactions), 0)::bigint AS co";
/// [`ROLLED_SUMS`] in the order of a statement's figures, between the sessions and the days.
const ROLLED_FIGURES: &str = "f.u, f.a, f.r, f.c, f.i, f.o, f.cr, f.cw, f.cost, f.te, f.co";

/// The figures' sums over `entries e`.
const ENTRIES: &str = "FROM entries e JOIN sessions s ON s.source = e.source AND s.fid = e.fid";
/// The figures' sums over `usage_rollup e` (the same filter columns: `dup`, `ts_ms`).
const ROLLED: &str = "FROM usage_rollup e JOIN sessions s ON s.source = e.source AND s.fid = e.fid";

/// The figures of `query::stats` grouped by `keys` (SQL expressions), over `where_`, from
/// the entries or the rollups (`from`: [`ENTRIES`], [`ROLLED`]).
fn figures_sql(keys: &[&str], where_: &str, from: &str) -> String {
    let key_cols: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k} AS k{i}"))
        .collect();
    let group: Vec<String> = (0..keys.len()).map(|i| format!("k{i}")).collect();
    let sums = if from == ROLLED {
        "coalesce(sum(e.user_msgs), 0)::bigint, coalesce(sum(e.assistant_msgs), 0)::bigint,
         coalesce(sum(e.tool_results), 0)::bigint, coalesce(sum(e.tool_calls), 0)::bigint,
         coalesce(sum(e.input), 0)::bigint, coalesce(sum(e.output), 0)::bigint,
         coalesce(sum(e.cache_read), 0)::bigint, coalesce(sum(e.cache_write), 0)::bigint,
         coalesce(sum(e.cost), 0)::float8, coalesce(sum(e.tool_errors), 0)::bigint,
         coalesce(sum(e.compactions), 0)::bigint"
    } else {
        "count(*) FILTER (WHERE e.type = 'message' AND e.role = 'user'),
         count(*) FILTER (WHERE e.type = 'message' AND e.role = 'assistant'),
         count(*) FILTER (WHERE e.type = 'message' AND e.role = 'toolResult'),
         coalesce(sum(e.tool_calls) FILTER (WHERE e.type = 'message' AND e.role = 'assistant'), 0)::bigint,
         coalesce(sum(e.input), 0)::bigint, coalesce(sum(e.output), 0)::bigint,
         coalesce(sum(e.cache_read), 0)::bigint, coalesce(sum(e.cache_write), 0)::bigint,
         coalesce(sum(e.cost), 0)::float8,
         count(*) FILTER (WHERE e.type = 'message' AND e.role = 'toolResult' AND e.is_error),
         count(*) FILTER (WHERE e.type = 'compaction')"
    };
    format!(
        "SELECT {} count(DISTINCT (e.source, e.fid)), {sums},
           count(DISTINCT (to_timestamp(e.ts_ms / 1000.0) AT TIME ZONE $1)::date)
         {from} WHERE {} {}",
        key_cols.iter().map(|k| format!("{k},")).collect::<String>(),
        where_,
        if group.is_empty() {
            String::new()
        } else {
            format!("GROUP BY {}", group.join(", "))
        }
    )
}

/// The local tool query (`query::stats::tool_sql`): per tool name, its calls (from the
/// assistant messages' `tool_uses`) and its results and errors (from the tool results),
/// sessions and active days; the other figures are zero. `keys` holds `tool` for the name.
fn tool_sql(keys: &[&str], where_: &str) -> String {
    let cols = |tool: &str| {
        keys.iter()
            .enumerate()
            .map(|(i, k)| format!("{} AS k{i}", if *k == "tool" { tool } else { k }))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let group = (0..keys.len())
        .map(|i| format!("k{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let day = "(to_timestamp(e.ts_ms / 1000.0) AT TIME ZONE $1)::date";
    format!(
        "SELECT {group}, count(DISTINCT (source, fid)), 0::bigint, 0::bigint,
                sum(results)::bigint, sum(calls)::bigint, 0::bigint, 0::bigint, 0::bigint,
                0::bigint, 0::float8, sum(errors)::bigint, 0::bigint, count(DISTINCT day)
         FROM (
             SELECT {}, e.source, e.fid, {day} AS day, 1 AS calls, 0 AS results, 0 AS errors
             FROM tool_uses t
             JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
             JOIN sessions s ON s.source = e.source AND s.fid = e.fid
             WHERE {where_}
             UNION ALL
             SELECT {}, e.source, e.fid, {day}, 0, 1, CASE WHEN e.is_error THEN 1 ELSE 0 END
             FROM entries e JOIN sessions s ON s.source = e.source AND s.fid = e.fid
             WHERE e.type = 'message' AND e.role = 'toolResult' AND {where_}
         ) u
         GROUP BY {group}",
        cols("t.name"),
        cols("coalesce(e.tool_name, '?')"),
    )
}
