//! What the team server's halves of the queries share: pi's `modified` over the server's rows
//! and bound conditions over its `sessions s` (the PostgreSQL counterpart of
//! `store::filter::Where`: `?` placeholders numbered `$n` as they are added).

use postgres::types::ToSql;

/// pi's `modified` over the server's `sessions s` (as `store::schema::MODIFIED`).
pub const MODIFIED: &str = "CASE WHEN s.last_activity_ms > 0 THEN s.last_activity_ms
                              WHEN s.header_ts_ms IS NOT NULL THEN s.header_ts_ms
                              ELSE s.mtime_ms END";

/// Bound conditions over `sessions s` (PostgreSQL `$n` placeholders).
#[derive(Default)]
pub struct Conds {
    parts: Vec<String>,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Conds {
    /// Adds a condition; `?` in it stands for the next parameter.
    pub fn and(&mut self, cond: &str, values: Vec<Box<dyn ToSql + Sync>>) {
        let mut out = String::new();
        let mut n = self.params.len();
        for c in cond.chars() {
            if c == '?' {
                n += 1;
                out.push_str(&format!("${n}"));
            } else {
                out.push(c);
            }
        }
        self.parts.push(out);
        self.params.extend(values);
    }

    /// How many values are bound so far (the last one is `$len`).
    pub fn bound(&self) -> usize {
        self.params.len()
    }

    /// The conditions joined by AND (`true` when there are none).
    pub fn sql(&self) -> String {
        if self.parts.is_empty() {
            "true".into()
        } else {
            self.parts.join(" AND ")
        }
    }

    pub fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }

    /// Only `source`, when one is given.
    pub fn source(source: Option<&str>) -> Conds {
        let mut c = Conds::default();
        if let Some(s) = source {
            c.and("s.source = ?", vec![Box::new(s.to_string())]);
        }
        c
    }

    /// pi's `list(cwd)` rule over the server's rows: the cwd's folder in tree roots, header cwd
    /// equality elsewhere (as `query::list::cwd_filter`).
    pub fn cwd(&mut self, cwd: &str) {
        let resolved = crate::pi::layout::absolute(std::path::Path::new(cwd));
        let cwd = resolved.to_string_lossy().into_owned();
        let folder = crate::pi::layout::encode_cwd(&cwd);
        self.and(
            "((s.layout = 'tree' AND s.dir = s.root || '/' || ?)
              OR (s.layout = 'gateway' AND starts_with(s.dir, s.root || '/agents/') AND s.cwd = ?)
              OR (s.layout NOT IN ('tree', 'gateway') AND s.dir = s.root AND s.cwd = ?))",
            vec![Box::new(folder), Box::new(cwd.clone()), Box::new(cwd)],
        );
    }
}
