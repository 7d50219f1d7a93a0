//! Bounded answers: cursors and cutting a list of rows to a character budget (a context's
//! messages are paged by `query::context::page`). Every cut is said in the answer; a cursor is
//! plain text naming the tool and the place to continue from. Every row is redacted
//! (`crate::redact`) before it is measured or cut, so a cut never leaves half a secret.

use serde_json::Value;

/// The default character budget of one answer.
pub const DEFAULT_BUDGET: usize = 20_000;
/// The smallest budget a caller may ask for, and the largest.
pub const BUDGET_RANGE: (usize, usize) = (1_000, 200_000);

/// The budget a caller asked for, checked.
pub fn budget(max_chars: Option<usize>) -> Result<usize, String> {
    let b = max_chars.unwrap_or(DEFAULT_BUDGET);
    if (BUDGET_RANGE.0..=BUDGET_RANGE.1).contains(&b) {
        Ok(b)
    } else {
        Err(format!(
            "max_chars must be between {} and {}",
            BUDGET_RANGE.0, BUDGET_RANGE.1
        ))
    }
}

/// A cursor's parts: `tool:field:field...`.
pub fn parse_cursor<'a>(
    cursor: &'a str,
    tool: &str,
    fields: usize,
) -> Result<Vec<&'a str>, String> {
    let bad = || {
        format!("cursor {cursor:?} is not one {tool} gave; call {tool} again without a cursor to start over")
    };
    let mut parts = cursor.splitn(fields + 1, ':');
    if parts.next() != Some(tool) {
        return Err(bad());
    }
    let rest: Vec<&str> = parts.collect();
    if rest.len() == fields {
        Ok(rest)
    } else {
        Err(bad())
    }
}

/// A row offset from a `tool:offset` cursor (0 without one).
pub fn row_offset(cursor: Option<&str>, tool: &str) -> Result<usize, String> {
    match cursor {
        None => Ok(0),
        Some(c) => parse_cursor(c, tool, 1)?[0].parse().map_err(|_| {
            format!("cursor {c:?} is not one {tool} gave; call {tool} again without a cursor to start over")
        }),
    }
}

/// The rows of one page: as many of `rows` as fit in `budget` characters of JSON (always at
/// least one, its long strings cut if it alone is too large), and whether any were left.
pub struct RowPage {
    pub rows: Vec<Value>,
    /// Rows that did not fit (the cursor continues with them).
    pub left: bool,
    /// Strings that were cut to fit, each ending in a marker.
    pub cut_strings: usize,
}

/// Fills a page from `rows` in order, each with its secrets redacted.
pub fn fill_rows(rows: impl IntoIterator<Item = Value>, budget: usize) -> RowPage {
    let mut page = RowPage {
        rows: Vec::new(),
        left: false,
        cut_strings: 0,
    };
    let mut used = 0;
    for mut row in rows {
        crate::redact::redact_value(&mut row);
        let mut size = json_len(&row);
        if page.rows.is_empty() && size > budget {
            page.cut_strings += cut_strings(&mut row, budget / 4);
            size = json_len(&row);
        }
        if !page.rows.is_empty() && used + size > budget {
            page.left = true;
            break;
        }
        used += size;
        page.rows.push(row);
    }
    page
}

fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.chars().count())
}

/// Cuts every string in `v` longer than `max` characters, marking each cut; returns how many.
pub fn cut_strings(v: &mut Value, max: usize) -> usize {
    match v {
        Value::String(s) if s.chars().count() > max => {
            let n = s.chars().count();
            let end = s.char_indices().nth(max).map_or(s.len(), |(i, _)| i);
            *s = format!("{}{}", &s[..end], cut_marker(n - max));
            1
        }
        Value::Array(items) => items.iter_mut().map(|x| cut_strings(x, max)).sum(),
        Value::Object(m) => m.values_mut().map(|x| cut_strings(x, max)).sum(),
        _ => 0,
    }
}

/// What ends a string that was cut.
pub fn cut_marker(left_out: usize) -> String {
    format!("…[{left_out} more characters cut]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fill_the_budget_and_say_what_is_left() {
        let rows: Vec<Value> = (0..10)
            .map(|i| serde_json::json!({"n": i, "t": "x".repeat(90)}))
            .collect();
        let page = fill_rows(rows.clone(), 350);
        assert_eq!(page.rows.len(), 3);
        assert!(page.left);
        let all = fill_rows(rows, 100_000);
        assert_eq!(all.rows.len(), 10);
        assert!(!all.left);
    }

    #[test]
    fn a_row_too_large_alone_has_its_strings_cut() {
        let big = serde_json::json!({"t": "y".repeat(5000)});
        let page = fill_rows(vec![big], 1000);
        assert_eq!(page.rows.len(), 1);
        assert_eq!(page.cut_strings, 1);
        assert!(page.rows[0]["t"]
            .as_str()
            .unwrap()
            .ends_with("more characters cut]"));
    }

    #[test]
    fn a_secret_is_redacted_before_its_row_is_cut() {
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let big =
            serde_json::json!({"t": format!("{} {token} {}", "y".repeat(200), "z".repeat(5000))});
        let page = fill_rows(vec![big], 1000);
        let text = page.rows[0]["t"].as_str().unwrap();
        assert!(text.contains("[redacted: github-token]"), "{text}");
        assert!(!text.contains("ghp_a1B2"), "{text}");
    }

    #[test]
    fn cursors_name_their_tool() {
        assert_eq!(
            row_offset(Some("list_sessions:40"), "list_sessions"),
            Ok(40)
        );
        assert!(row_offset(Some("search_sessions:40"), "list_sessions").is_err());
        assert!(row_offset(Some("list_sessions:x"), "list_sessions").is_err());
    }
}
