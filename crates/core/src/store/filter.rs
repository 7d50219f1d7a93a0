//! The one way queries bind values: conditions written with plain `?` placeholders, their
//! values collected in text order, and the whole bound as parameters, on SQLite or (numbered
//! `$1, $2, ...` by `pg_sql`) on the team server's PostgreSQL. Nothing is inlined into SQL
//! text and no placeholder is renumbered by hand.

use rusqlite::types::Value;

/// Conditions joined by `AND`, with their bound values.
#[derive(Debug, Clone, Default)]
pub struct Where {
    conds: Vec<String>,
    args: Vec<Value>,
}

impl Where {
    /// Values bound before the conditions, for placeholders that come earlier in the SQL text
    /// (a `MATCH ?` in a subquery of the `FROM` clause).
    pub fn after(args: impl IntoIterator<Item = Value>) -> Where {
        Where {
            conds: Vec::new(),
            args: args.into_iter().collect(),
        }
    }

    /// The values bound so far, in order.
    pub fn values(&self) -> &[Value] {
        &self.args
    }

    /// Adds `cond`, whose `?` placeholders take `values` in order.
    pub fn and(&mut self, cond: impl Into<String>, values: impl IntoIterator<Item = Value>) {
        let cond = cond.into();
        let before = self.args.len();
        self.args.extend(values);
        debug_assert_eq!(
            cond.matches('?').count(),
            self.args.len() - before,
            "placeholders and values differ in {cond}"
        );
        self.conds.push(cond);
    }

    /// Adds `cond`, in which `{}` stands for `inner`'s conditions (in a subquery) and any `?`
    /// after it takes `more`.
    pub fn and_nested(&mut self, cond: &str, inner: &Where, more: impl IntoIterator<Item = Value>) {
        let values: Vec<Value> = inner.args.iter().cloned().chain(more).collect();
        self.and(cond.replacen("{}", &inner.sql(), 1), values);
    }

    /// The conditions as SQL (`1` when there are none).
    pub fn sql(&self) -> String {
        if self.conds.is_empty() {
            "1".into()
        } else {
            self.conds.join(" AND ")
        }
    }

    /// The conditions for PostgreSQL: each `?` numbered `$1`, `$2`, ... in order (`true` when
    /// there are none).
    pub fn pg_sql(&self) -> String {
        if self.conds.is_empty() {
            return "true".into();
        }
        let mut out = String::new();
        let mut n = 0;
        for c in self.conds.join(" AND ").chars() {
            if c == '?' {
                n += 1;
                out.push_str(&format!("${n}"));
            } else {
                out.push(c);
            }
        }
        out
    }

    /// `LIMIT ?` with `n` bound (call after the last condition), or nothing.
    pub fn limit(&mut self, n: Option<usize>) -> &'static str {
        match n {
            Some(n) => {
                self.args.push(int(i64::try_from(n).unwrap_or(i64::MAX)));
                "LIMIT ?"
            }
            None => "",
        }
    }

    /// The same conditions for SQL that writes them `n` times over: each copy binds its own
    /// values.
    pub fn repeated(&self, n: usize) -> Where {
        Where {
            conds: self.conds.clone(),
            args: self
                .args
                .iter()
                .cloned()
                .cycle()
                .take(self.args.len() * n)
                .collect(),
        }
    }

    /// The values to bind, in placeholder order.
    pub fn params(&self) -> rusqlite::ParamsFromIter<std::slice::Iter<'_, Value>> {
        rusqlite::params_from_iter(self.args.iter())
    }
}

/// `?, ?, ?` for `n` values (an `IN` list; `NULL` when empty, which matches nothing).
pub fn placeholders(n: usize) -> String {
    if n == 0 {
        return "NULL".into();
    }
    vec!["?"; n].join(", ")
}

/// A text value to bind.
pub fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

/// An integer value to bind.
pub fn int(i: i64) -> Value {
    Value::Integer(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_bind_in_text_order() -> rusqlite::Result<()> {
        let conn = rusqlite::Connection::open_in_memory()?;
        let mut w = Where::after([text("a")]);
        w.and("? IN (?, ?)", [int(2), int(1), int(2)]);
        w.and("? = 'x'", [text("x")]);
        let sql = format!("SELECT ? || count(*) FROM (SELECT 1) WHERE {}", w.sql());
        let got: String = conn.query_row(&sql, w.params(), |r| r.get(0))?;
        assert_eq!(got, "a1");
        assert_eq!(placeholders(3), "?, ?, ?");
        assert_eq!(Where::default().sql(), "1");
        Ok(())
    }

    #[test]
    fn postgresql_placeholders_are_numbered_in_text_order() {
        let mut w = Where::default();
        w.and("s.source = ?", [text("me")]);
        w.and("e.ts_ms >= ? AND s.fid IN (?, ?)", [int(1), int(2), int(3)]);
        assert_eq!(
            w.pg_sql(),
            "s.source = $1 AND e.ts_ms >= $2 AND s.fid IN ($3, $4)"
        );
        assert_eq!(w.values().len(), 4);
        assert_eq!(Where::default().pg_sql(), "true");
    }
}
