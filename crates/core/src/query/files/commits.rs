//! `pidx commits`: for each git commit, the sessions whose edits produced its added lines, and
//! `pidx show`'s list of the commits a session's edits ended up in. A commit's added lines are
//! blamed (`attribute.rs`) on the file as that commit has it, with the steps made up to the
//! commit's time: a line a session produced and a person committed counts for the session.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;

use super::attribute::attribute_lines;
use super::git::{Commit, Repo};
use super::{steps, Step};
use crate::error::Result;

/// Which commits.
#[derive(Debug, Clone)]
pub struct CommitsOptions {
    /// A folder inside the work tree.
    pub repo: std::path::PathBuf,
    /// `A..B`, or a revision and its ancestors.
    pub range: String,
    pub limit: usize,
}

/// One session's part in a commit.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    pub session: String,
    pub session_id: Option<String>,
    pub name: Option<String>,
    /// Added lines this session's edits produced.
    pub lines: usize,
    /// `lines` over the commit's added lines.
    pub share: f64,
}

/// One commit and who produced its added lines.
#[derive(Debug, Clone, Serialize)]
pub struct CommitRow {
    pub commit: String,
    pub time_ms: i64,
    pub author: String,
    pub summary: String,
    pub added: usize,
    pub sessions: Vec<Part>,
}

/// Commit times are whole seconds: a step up to the end of the commit's second may be in it.
const SECOND_MS: i64 = 999;

/// The steps of each file, loaded once however many commits touch it.
struct Steps<'c> {
    conn: &'c Connection,
    by_path: HashMap<String, Vec<Step>>,
}

impl Steps<'_> {
    fn of(&mut self, path: &str) -> rusqlite::Result<&[Step]> {
        if !self.by_path.contains_key(path) {
            let found = steps(self.conn, path)?;
            self.by_path.insert(path.to_string(), found);
        }
        Ok(&self.by_path[path])
    }
}

/// The commits of `opts` with their sessions.
///
/// # Errors
/// Not a git work tree, a bad range; git or index errors.
pub fn commits(conn: &Connection, opts: &CommitsOptions) -> Result<Vec<CommitRow>> {
    let repo = Repo::discover(&opts.repo)?;
    let mut cache = Steps {
        conn,
        by_path: HashMap::new(),
    };
    let mut out = Vec::new();
    for c in repo.commits(&opts.range, opts.limit)? {
        out.push(attribute_commit(&repo, &c, &mut cache, None)?);
    }
    Ok(out)
}

/// Who produced the added lines of `c`; with `only`, in those files only.
fn attribute_commit(
    repo: &Repo,
    c: &Commit,
    cache: &mut Steps,
    only: Option<&HashSet<String>>,
) -> Result<CommitRow> {
    let mut counts: HashMap<i64, (usize, super::Who)> = HashMap::new();
    let mut added = 0;
    for a in &c.added {
        added += a.lines.len();
        let abs = repo.workdir.join(&a.path).to_string_lossy().into_owned();
        if only.is_some_and(|o| !o.contains(&abs)) {
            continue;
        }
        let steps = cache.of(&abs)?;
        let upto =
            steps.partition_point(|s| s.who.ts_ms.is_some_and(|t| t <= c.time_ms + SECOND_MS));
        if upto == 0 {
            continue;
        }
        let Some(text) = repo.file_at(&c.id, &a.path)? else {
            continue;
        };
        let replays: Vec<_> = steps[..upto].iter().map(Step::replay).collect();
        let wanted: Vec<usize> = a.lines.iter().map(|n| n - 1).collect();
        let who = attribute_lines(&text, &replays, Some(&wanted));
        for &n in &a.lines {
            if let Some(Some(step)) = who.get(n - 1) {
                let w = &steps[*step].who;
                counts.entry(w.file_id).or_insert_with(|| (0, w.clone())).0 += 1;
            }
        }
    }
    let mut sessions: Vec<Part> = counts
        .into_values()
        .map(|(lines, w)| Part {
            session: w.session,
            session_id: w.session_id,
            name: w.name,
            lines,
            share: lines as f64 / added.max(1) as f64,
        })
        .collect();
    sessions.sort_by(|a, b| {
        b.lines
            .cmp(&a.lines)
            .then_with(|| a.session.cmp(&b.session))
    });
    Ok(CommitRow {
        commit: c.id.clone(),
        time_ms: c.time_ms,
        author: c.author.clone(),
        summary: c.summary.clone(),
        added,
        sessions,
    })
}

/// Most commits `show` looks through for a session's.
const SHOW_COMMITS: usize = 300;

/// The commits (of the work tree holding the session's cwd, from HEAD, at most
/// `SHOW_COMMITS` back) holding lines the session's edits produced, newest first. Empty when
/// the cwd is in no work tree or the session changed no file.
///
/// # Errors
/// Index errors; git errors other than a missing repository.
pub fn of_session(conn: &Connection, file_id: i64, cwd: &str) -> Result<Vec<CommitRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT t.path, min(t.ts_ms) FROM touches t
         JOIN touch_results r ON r.file_id = t.file_id AND r.call_id = t.call_id
         WHERE t.file_id = ?1 AND t.kind IN ('edit', 'write') AND r.is_error = 0
         GROUP BY t.path",
    )?;
    let changed: Vec<(String, Option<i64>)> = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if changed.is_empty() || cwd.is_empty() {
        return Ok(Vec::new());
    }
    let Ok(repo) = Repo::discover(Path::new(cwd)) else {
        return Ok(Vec::new());
    };
    let first = changed.iter().filter_map(|c| c.1).min().unwrap_or(0);
    let only: HashSet<String> = changed.into_iter().map(|c| c.0).collect();
    let mut cache = Steps {
        conn,
        by_path: HashMap::new(),
    };
    let mut out = Vec::new();
    let Ok(commits) = repo.commits_since("HEAD", SHOW_COMMITS, Some(first - SECOND_MS)) else {
        return Ok(Vec::new()); // no commit yet
    };
    for c in &commits {
        let mut row = attribute_commit(&repo, c, &mut cache, Some(&only))?;
        row.sessions.retain(|p| {
            cache
                .by_path
                .values()
                .flatten()
                .any(|s| s.who.file_id == file_id && s.who.session == p.session)
        });
        if !row.sessions.is_empty() {
            out.push(row);
        }
    }
    Ok(out)
}
