//! `pidx search`: options to a `SearchOptions`, hits to text, JSON or JSON lines.

use anyhow::{bail, Result};
use chrono::{Local, NaiveDate, TimeZone};

use super::commands::{Env, Found};
use super::output::{one_line, Out};
use super::SearchArgs;
use crate::ingest::discover::absolute;
use crate::ingest::search_text::TextKind;
use crate::query::resolve;
use crate::query::search::{self, Hit, SearchOptions};

pub fn cmd_search(env: &Env, args: &SearchArgs, out: &mut Out) -> Result<Found> {
    let query = search::parse(&args.query, args.literal)?;
    let kinds = args
        .kinds
        .iter()
        .map(|k| {
            TextKind::parse(k.trim()).ok_or_else(|| {
                anyhow::anyhow!(
                    "--in {k:?}: not a kind of text (user, assistant, thinking, tool, bash, custom, summary, name)"
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if args.limit == 0 {
        bail!("--limit must be at least 1");
    }
    let now = chrono::Utc::now().timestamp_millis();
    let (since_ms, until_ms) = date_range(args.since.as_deref(), args.until.as_deref(), now)?;
    let (store, mut scope) = env.open_fresh()?;
    scope.gateway = args.gateway.filter();
    scope.include_silent = args.include_silent;
    let file_id = match &args.session {
        Some(s) => Some(resolve::resolve_session(&store.conn, &scope, s)?.file_id),
        None => None,
    };
    let opts = SearchOptions {
        query,
        cwd: args
            .cwd
            .as_ref()
            .map(|d| absolute(d).to_string_lossy().into_owned()),
        file_id,
        since_ms,
        until_ms,
        model: args.model.clone(),
        kinds,
        branch: args.branch,
        limit: args.limit,
    };
    let hits = search::search(&store.conn, &scope, &opts)?;
    if env.global.json {
        out.json(&hits)?;
    } else if args.jsonl {
        for h in &hits {
            out.json(h)?;
        }
    } else if hits.is_empty() {
        eprintln!("pidx: no matches");
    } else {
        render_hits(out, &hits, now)?;
    }
    Ok(!hits.is_empty())
}

/// `--since` and `--until` as epoch-ms bounds (the first inclusive, the second exclusive).
pub(super) fn date_range(
    since: Option<&str>,
    until: Option<&str>,
    now_ms: i64,
) -> Result<(Option<i64>, Option<i64>)> {
    Ok((
        since.map(|d| parse_date(d, now_ms, false)).transpose()?,
        until.map(|d| parse_date(d, now_ms, true)).transpose()?,
    ))
}

/// An ISO date or date-time, or a relative age (`12h`, `7d`, `2w`). A plain date is local
/// midnight; as an `--until` bound it means the end of that day.
pub(super) fn parse_date(s: &str, now_ms: i64, end_of_day: bool) -> Result<i64> {
    let s = s.trim();
    if let Some((n, unit)) = s
        .find(|c: char| !c.is_ascii_digit())
        .map(|i| s.split_at(i))
        .filter(|(n, _)| !n.is_empty())
    {
        let hours = match unit {
            "h" => Some(1),
            "d" => Some(24),
            "w" => Some(24 * 7),
            _ => None,
        };
        if let (Some(h), Ok(n)) = (hours, n.parse::<i64>()) {
            return Ok(now_ms - n * h * 3_600_000);
        }
    }
    if let Ok(day) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let day = if end_of_day {
            day.succ_opt().unwrap_or(day)
        } else {
            day
        };
        let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
        if let Some(t) = Local.from_local_datetime(&midnight).earliest() {
            return Ok(t.timestamp_millis());
        }
    }
    if let Some(ms) = crate::js::parse_iso_ms(s) {
        return Ok(ms);
    }
    bail!("{s:?} is not a date: use 2026-11-01, 2026-11-01T12:00:00Z, or an age like 12h, 7d, 2w")
}

fn render_hits(out: &mut Out, hits: &[Hit], now_ms: i64) -> std::io::Result<()> {
    let mut last_file = None;
    for h in hits {
        if last_file != Some(h.file_id) {
            if last_file.is_some() {
                out.line("")?;
            }
            last_file = Some(h.file_id);
            let title = super::output::truncate(&one_line(&h.title), 80);
            let header = format!("{title}  {}", one_line(&h.cwd));
            out.line(&out.paint("1", &header))?;
            out.line(&out.paint("2", &one_line(&h.path)))?;
        }
        let when = h
            .timestamp
            .as_deref()
            .and_then(crate::js::parse_iso_ms)
            .map_or("?".to_string(), |t| super::output::age(t, now_ms));
        let id = h.entry_id.as_deref().unwrap_or("-");
        out.line(&format!(
            "  [{}] {} {}  {}",
            h.kind,
            when,
            one_line(id),
            marked(out, &h.snippet)
        ))?;
    }
    Ok(())
}

/// The snippet on one line, matches highlighted when colour is on.
fn marked(out: &Out, s: &search::Snippet) -> String {
    let mut text = String::new();
    let mut at = 0;
    for &(a, b) in &s.marks {
        if a < at || b > s.text.len() || !s.text.is_char_boundary(a) || !s.text.is_char_boundary(b)
        {
            continue;
        }
        text.push_str(&one_line_keep_edges(&s.text[at..a]));
        text.push_str(&out.paint("1;33", &one_line(&s.text[a..b])));
        at = b;
    }
    text.push_str(&one_line_keep_edges(&s.text[at..]));
    text.trim().to_string()
}

/// `one_line`, keeping one space where the text had white space at either end.
fn one_line_keep_edges(s: &str) -> String {
    let mut t = one_line(s);
    if s.starts_with(char::is_whitespace) && !t.is_empty() {
        t.insert(0, ' ');
    }
    if s.ends_with(char::is_whitespace) {
        t.push(' ');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_relative_and_absolute() {
        let now = 1_000_000_000_000;
        assert_eq!(parse_date("7d", now, false).unwrap(), now - 7 * 86_400_000);
        assert_eq!(parse_date("2w", now, false).unwrap(), now - 14 * 86_400_000);
        assert_eq!(
            parse_date("2026-01-01T00:00:00Z", now, false).unwrap(),
            1_767_225_600_000
        );
        let day = parse_date("2026-01-01", now, false).unwrap();
        let end = parse_date("2026-01-01", now, true).unwrap();
        assert_eq!(end - day, 86_400_000);
        assert!(parse_date("yesterday", now, false).is_err());
    }
}
