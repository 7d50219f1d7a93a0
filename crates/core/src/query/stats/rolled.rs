//! `stats` from the rollups (`usage_rollup`, and `tool_rollup` when grouping by tool): the files
//! in scope are read once with their keys, then the rollup rows of the range are summed in
//! Rust, the day, week and month of each quarter hour computed once. SQLite only scans narrow
//! rows: no join per row, no sort, no SQL function call per row.

use std::collections::HashMap as StdMap;

use rusqlite::Connection;

use super::{
    bucket_label, file_filter, row_conditions, row_filter, Dim, Figures, Row, StatsOptions, Zone,
    GRAIN_MS,
};
use crate::error::Result;
use crate::store::filter::{int, Where};
use crate::store::Scope;

/// Maps keyed by what each rollup row carries (a file, a quarter hour, a name, a group's key),
/// looked up several times a row: foldhash, not SipHash (the keys are the index's own).
type HashMap<K, V> = StdMap<K, V, foldhash::fast::RandomState>;

/// Up to this many files in scope, their rollup rows are sought by file (the `UNIQUE (file_id,
/// ...)` index of both rollups) rather than read with all the others.
const MAX_SOUGHT_FILES: usize = 2_000;

/// A key value: an interned name, a period code, or [`NULL`].
type Code = i64;
const NULL: Code = i64::MIN;

/// Names seen, numbered in order of appearance.
#[derive(Default)]
struct Names {
    ids: HashMap<String, Code>,
    names: Vec<String>,
    /// The last name asked for: rows come file by file, and a file's rows mostly repeat it.
    last: Option<Code>,
}

impl Names {
    fn id(&mut self, s: Option<&str>) -> Code {
        let Some(s) = s else { return NULL };
        if let Some(last) = self.last.filter(|&i| self.names[i as usize] == s) {
            return last;
        }
        let id = match self.ids.get(s) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as Code;
                self.names.push(s.to_owned());
                self.ids.insert(s.to_owned(), id);
                id
            }
        };
        self.last = Some(id);
        id
    }
}

/// One group's sums and the sessions and days it saw (rows come file by file, so a value is
/// pushed only when it differs from the last one; duplicates go at the end).
#[derive(Default)]
struct Group {
    f: Figures,
    files: Vec<i64>,
    days: Vec<Code>,
}

/// How many distinct values `v` holds.
fn distinct(mut v: Vec<i64>) -> i64 {
    v.sort_unstable();
    v.dedup();
    v.len() as i64
}

/// The day, week and month codes (`pidx_bucket`'s) of each quarter hour seen.
struct Periods<'a> {
    zone: &'a Zone,
    seen: HashMap<i64, [Code; 3]>,
    last: (i64, [Code; 3]),
}

impl Periods<'_> {
    fn of(&mut self, t: i64) -> [Code; 3] {
        if t == NULL {
            return [NULL; 3];
        }
        if self.last.0 == t {
            return self.last.1;
        }
        let zone = self.zone;
        let codes = *self.seen.entry(t).or_insert_with(|| {
            super::period_codes(zone, t).map_or([NULL; 3], |(d, w, m)| [d, w, m])
        });
        self.last = (t, codes);
        codes
    }
}

/// Everything summing needs: the files in scope with their keys, names, periods, groups.
struct Sum<'a> {
    dims: &'a [Dim],
    files: HashMap<i64, Vec<Code>>,
    names: Names,
    periods: Periods<'a>,
    groups: HashMap<Vec<Code>, usize>,
    sums: Vec<Group>,
    key: Vec<Code>,
    /// The group of the last row, and its key.
    last: Option<usize>,
    last_key: Vec<Code>,
}

/// The figures, one row per group (unordered), as `stats` over the entries would give them.
/// A range end inside a quarter hour takes the whole quarter hours from the rollups and the
/// sliver at the end from the entries of the files active in that quarter hour.
///
/// # Errors
/// Index errors.
pub(super) fn stats(conn: &Connection, scope: &Scope, opts: &StatsOptions) -> Result<Vec<Row>> {
    Ok(stats_each(conn, scope, opts, &[&opts.dims])?
        .pop()
        .unwrap_or_default())
}

/// [`stats`] of `opts` grouped by each of `groupings` in turn, from one read of the rollup
/// rows (a page showing a grouping and its total read them twice). The groupings must read
/// the same rows: the same rollup (all with a tool or none) and the same copies (all per
/// session or none); `stats_each` in `mod.rs` checks.
///
/// # Errors
/// Index errors.
pub(super) fn stats_each(
    conn: &Connection,
    scope: &Scope,
    opts: &StatsOptions,
    groupings: &[&[Dim]],
) -> Result<Vec<Vec<Row>>> {
    let Some(first) = groupings.first() else {
        return Ok(Vec::new());
    };
    let mut sums: Vec<Sum> = groupings
        .iter()
        .map(|dims| Sum {
            dims,
            files: HashMap::default(),
            names: Names::default(),
            periods: Periods {
                zone: &opts.zone,
                seen: HashMap::default(),
                last: (NULL, [NULL; 3]),
            },
            groups: HashMap::default(),
            sums: Vec::new(),
            key: Vec::with_capacity(dims.len()),
            last: None,
            last_key: Vec::new(),
        })
        .collect();
    for i in 0..sums.len() {
        // A grouping with no key of a file's own (a period, a model, the total) needs only
        // which files are in scope: the first grouping's, not a second read of 10,000 rows.
        if i > 0 && !sums[i].dims.iter().any(|d| per_file(*d)) {
            let ids: Vec<i64> = sums[0].files.keys().copied().collect();
            sums[i].files = ids.into_iter().map(|id| (id, Vec::new())).collect();
        } else {
            sums[i].read_files(conn, scope, opts)?;
        }
    }
    let files = &sums[0].files;
    let source = Source::of(first);
    let (whole, slivers) = split(opts.since_ms, opts.until_ms);
    let mut w = row_filter(first, whole);
    // One project's (or gateway filter's) files are sought in the rollups' key index instead of
    // every rollup row being read and most dropped (`stats --cwd` of a 7-session project of
    // 10,000: every one of 40,000 rows read for 30 of them).
    // Still summed in table order, as a read of every row sums them: a cost summed in another
    // order can differ in its last digit.
    let narrowed = opts.cwd.is_some() || scope.narrows();
    let mut order = "";
    if narrowed && files.len() <= MAX_SOUGHT_FILES {
        let ids: Vec<String> = files.keys().map(i64::to_string).collect();
        w.and(format!("e.file_id IN ({})", ids.join(", ")), []);
        order = " ORDER BY e.rowid";
    }
    let sql = format!(
        "SELECT {} FROM {} e WHERE {}{order}",
        source.cols,
        source.rollup,
        w.sql()
    );
    read(&mut sums, conn, &sql, &w, source)?;
    for (quarter, range) in slivers {
        let mut w = Where::after([int(quarter)]);
        row_conditions(&mut w, first, range);
        let sql = format!(
            "SELECT {} FROM {} WHERE rid IN (
                 SELECT e.rid FROM entries e
                 WHERE e.file_id IN (SELECT file_id FROM {} WHERE t = ?) AND {})",
            source.cols,
            source.facts,
            source.rollup,
            w.sql()
        );
        read(&mut sums, conn, &sql, &w, source)?;
    }
    Ok(sums.into_iter().map(Sum::rows).collect())
}

/// Adds every row `sql` gives (the columns of `source`) to each of `sums`.
fn read(sums: &mut [Sum], conn: &Connection, sql: &str, w: &Where, source: Source) -> Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query(w.params())?;
    while let Some(r) = rows.next()? {
        let (f, tool) = if source.tools {
            let f = Figures {
                tool_calls: r.get(5)?,
                tool_results: r.get(6)?,
                tool_errors: r.get(7)?,
                ..Figures::default()
            };
            (f, text(r, 4)?)
        } else {
            let f = Figures {
                user_messages: r.get(4)?,
                assistant_messages: r.get(5)?,
                tool_results: r.get(6)?,
                tool_calls: r.get(7)?,
                input: r.get(8)?,
                output: r.get(9)?,
                cache_read: r.get(10)?,
                cache_write: r.get(11)?,
                cost: r.get(12)?,
                tool_errors: r.get(13)?,
                compactions: r.get(14)?,
                ..Figures::default()
            };
            (f, None)
        };
        for sum in sums.iter_mut() {
            sum.add(r, tool, &f)?;
        }
    }
    Ok(())
}

/// Where the figures come from: a rollup table, or the facts view it sums, read as the same
/// columns (`file_id, t, model, provider`, then the figures).
#[derive(Clone, Copy)]
struct Source {
    rollup: &'static str,
    facts: &'static str,
    cols: &'static str,
    tools: bool,
}

impl Source {
    fn of(dims: &[Dim]) -> Source {
        if dims.contains(&Dim::Tool) {
            Source {
                rollup: "tool_rollup",
                facts: "tool_facts",
                cols: "file_id, t, model, provider, tool, calls, results, errors",
                tools: true,
            }
        } else {
            Source {
                rollup: "usage_rollup",
                facts: "usage_facts",
                cols: "file_id, t, model, provider, user, assistant, tool_results, tool_calls,
                       input, output, cache_read, cache_write, cost, tool_errors, compactions",
                tools: false,
            }
        }
    }
}

/// A range `[since, until)` in ms, either end open.
type Range = (Option<i64>, Option<i64>);

/// The range's whole quarter hours (the rollups answer them), and the slivers at ends inside a
/// quarter hour, each with the start of its quarter hour (the entries answer them).
fn split(since: Option<i64>, until: Option<i64>) -> (Range, Vec<(i64, Range)>) {
    let floor = |t: i64| t - t.rem_euclid(GRAIN_MS);
    let ceil = |t: i64| {
        floor(t)
            + if t.rem_euclid(GRAIN_MS) == 0 {
                0
            } else {
                GRAIN_MS
            }
    };
    if let (Some(s), Some(u)) = (since, until) {
        if ceil(s) > floor(u) {
            // No whole quarter hour inside: both ends lie in one (or the range is empty).
            let slivers = if s < u {
                vec![(floor(s), (Some(s), Some(u)))]
            } else {
                Vec::new()
            };
            return ((Some(0), Some(0)), slivers);
        }
    }
    let mut slivers = Vec::new();
    if let Some(s) = since.filter(|&s| s != ceil(s)) {
        slivers.push((floor(s), (Some(s), Some(ceil(s)))));
    }
    if let Some(u) = until.filter(|&u| u != floor(u)) {
        slivers.push((floor(u), (Some(floor(u)), Some(u))));
    }
    ((since.map(ceil), until.map(floor)), slivers)
}

impl Sum<'_> {
    /// The files in scope (a session row, the scope's roots, `--cwd`) and their file-level
    /// keys (project, session, agent, channel), read once.
    fn read_files(&mut self, conn: &Connection, scope: &Scope, opts: &StatsOptions) -> Result<()> {
        let file_dims: Vec<Dim> = self.dims.iter().copied().filter(|d| per_file(*d)).collect();
        let cols: String = file_dims.iter().map(|d| format!(", {}", d.sql())).collect();
        let w = file_filter(scope, opts);
        // Without `--cwd` (whose folder condition finds few files through `files_by_dir`), scan
        // the cwd index and check each file's root in the root index: both cover what is read
        // unless a session's path is (migration 0014).
        let from = if opts.cwd.is_none() {
            "sessions s INDEXED BY sessions_by_cwd CROSS JOIN files f INDEXED BY files_by_root"
        } else {
            "sessions s JOIN files f"
        };
        let sql = format!(
            "SELECT f.id{cols} FROM {from} ON f.id = s.file_id WHERE {}",
            w.sql()
        );
        let mut stmt = conn.prepare(&sql)?;
        let mut rows = stmt.query(w.params())?;
        while let Some(r) = rows.next()? {
            let keys = (0..file_dims.len())
                .map(|i| Ok(self.names.id(text(r, i + 1)?)))
                .collect::<Result<Vec<Code>>>()?;
            self.files.insert(r.get(0)?, keys);
        }
        Ok(())
    }

    /// Adds one rollup row (`file_id, t, model, provider, ...`) to its group.
    fn add(&mut self, r: &rusqlite::Row, tool: Option<&str>, f: &Figures) -> Result<()> {
        let file_id: i64 = r.get(0)?;
        let Some(file_keys) = self.files.get(&file_id) else {
            return Ok(());
        };
        let periods = self.periods.of(r.get(1)?);
        self.key.clear();
        let mut per_file = file_keys.iter();
        for d in self.dims {
            self.key.push(match d {
                Dim::Day => periods[0],
                Dim::Week => periods[1],
                Dim::Month => periods[2],
                Dim::Model => self.names.id(text(r, 2)?.map(super::model_key)),
                Dim::Provider => self.names.id(text(r, 3)?),
                Dim::Tool => self.names.id(tool),
                _ => *per_file.next().unwrap_or(&NULL),
            });
        }
        let i = match self.last {
            Some(i) if self.last_key == self.key => i,
            _ => {
                let n = self.sums.len();
                let i = *self.groups.entry(self.key.clone()).or_insert(n);
                if i == n {
                    self.sums.push(Group::default());
                }
                self.last_key.clone_from(&self.key);
                self.last = Some(i);
                i
            }
        };
        let g = &mut self.sums[i];
        if g.files.last() != Some(&file_id) {
            g.files.push(file_id);
        }
        if periods[0] != NULL && g.days.last() != Some(&periods[0]) {
            g.days.push(periods[0]);
        }
        let s = &mut g.f;
        s.user_messages += f.user_messages;
        s.assistant_messages += f.assistant_messages;
        s.tool_results += f.tool_results;
        s.tool_calls += f.tool_calls;
        s.input += f.input;
        s.output += f.output;
        s.cache_read += f.cache_read;
        s.cache_write += f.cache_write;
        s.cost += f.cost;
        s.tool_errors += f.tool_errors;
        s.compactions += f.compactions;
        Ok(())
    }

    /// The groups as rows, their keys labelled (`-` for none); one row of zeros for the total
    /// of nothing.
    fn rows(mut self) -> Vec<Row> {
        if self.dims.is_empty() && self.sums.is_empty() {
            self.groups.insert(Vec::new(), 0);
            self.sums.push(Group::default());
        }
        let names = &self.names.names;
        let dims = self.dims;
        let mut sums: Vec<Option<Group>> = self.sums.into_iter().map(Some).collect();
        self.groups
            .into_iter()
            .filter_map(|(key, i)| Some((key, sums.get_mut(i)?.take()?)))
            .map(|(key, g)| {
                let key_order: Vec<String> = dims
                    .iter()
                    .zip(&key)
                    .map(|(d, &c)| match c {
                        NULL => "-".into(),
                        c if d.is_time() => bucket_label(*d, c),
                        c => names[c as usize].clone(),
                    })
                    .collect();
                let mut f = g.f;
                f.sessions = distinct(g.files);
                f.active_days = distinct(g.days);
                f.total_tokens = f.input + f.output + f.cache_read + f.cache_write;
                Row {
                    key: dims
                        .iter()
                        .map(|d| d.name())
                        .zip(key_order.clone())
                        .collect(),
                    key_order,
                    figures: f,
                }
            })
            .collect()
    }
}

/// Column `i` as text (`None` for NULL), borrowed from the row.
fn text<'r>(r: &'r rusqlite::Row, i: usize) -> rusqlite::Result<Option<&'r str>> {
    r.get_ref(i)?.as_str_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// Whether a key is the same for every entry of a file.
fn per_file(d: Dim) -> bool {
    matches!(d, Dim::Project | Dim::Session | Dim::Agent | Dim::Channel)
}
