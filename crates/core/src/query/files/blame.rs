//! `pidx blame FILE`: for each line of a file as it is on disk now, the session whose
//! successful edit or write last produced it (`attribute.rs` says how), and with `--git` the
//! commit git's own blame gives the line.

use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;

use super::attribute::attribute;
use super::{absolute, steps, Step, Who};
use crate::error::{Error, Result};

/// What to blame.
#[derive(Debug, Clone, Default)]
pub struct BlameOptions {
    /// Lines `start..=end` (1-based) only.
    pub range: Option<(usize, usize)>,
    /// Add each line's git commit.
    pub git: bool,
}

/// One line of the file now.
#[derive(Debug, Clone, Serialize)]
pub struct BlameLine {
    pub line: usize,
    pub text: String,
    /// `None`: no session produced it (a person did, or it predates the sessions).
    pub by: Option<Who>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The blame of a file.
#[derive(Debug, Clone, Serialize)]
pub struct Blame {
    pub path: String,
    /// How many successful edits and writes of the file the index holds.
    pub steps: usize,
    pub lines: Vec<BlameLine>,
}

/// Blames `file` (relative to the process's cwd, or absolute).
///
/// # Errors
/// The file cannot be read as text; a range outside it; index or git errors.
pub fn blame(conn: &Connection, file: &Path, opts: &BlameOptions) -> Result<Blame> {
    let path = absolute(file);
    let now = std::fs::read(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    let now = String::from_utf8(now)
        .map_err(|_| Error::Invalid(format!("{} is not UTF-8 text", path.display())))?;
    let mut found = steps(conn, &path.to_string_lossy())?;
    // A path reached through a symlink was stored as the session named it.
    if found.is_empty() {
        if let Ok(real) = std::fs::canonicalize(&path) {
            if real != path {
                found = steps(conn, &real.to_string_lossy())?;
            }
        }
    }
    let repo = super::git::Repo::discover(&path).ok();
    if let Some(repo) = &repo {
        found = with_former_paths(conn, repo, &path, found)?;
    }
    let mut lines = attributed(&now, &found);
    if opts.git {
        if let Some(repo) = &repo {
            let commits = repo.blame_commits(&path, &now)?;
            for (l, c) in lines.iter_mut().zip(commits) {
                l.commit = c;
            }
        }
    }
    if let Some((start, end)) = opts.range {
        if start == 0 || start > end || start > lines.len().max(1) {
            return Err(Error::Invalid(format!(
                "-L {start},{end}: {} has {} lines",
                path.display(),
                lines.len()
            )));
        }
        lines.truncate(end);
        lines.drain(..start - 1);
    }
    Ok(Blame {
        path: path.to_string_lossy().into_owned(),
        steps: found.len(),
        lines,
    })
}

/// Most commits looked through for the renames of a file.
const RENAMES_BACK: usize = 2000;

/// `steps` of the file, preceded by those made to the paths git says it had before, each up
/// to the commit that renamed it.
fn with_former_paths(
    conn: &Connection,
    repo: &super::git::Repo,
    path: &Path,
    mut steps: Vec<Step>,
) -> Result<Vec<Step>> {
    for (old, renamed_ms) in repo.former_paths(path, RENAMES_BACK)? {
        let mut before: Vec<Step> = super::steps(conn, &old.to_string_lossy())?
            .into_iter()
            .filter(|s| s.who.ts_ms.is_some_and(|t| t <= renamed_ms + 999))
            .collect();
        before.append(&mut steps);
        steps = before;
    }
    steps.sort_by_key(|s| s.who.ts_ms);
    Ok(steps)
}

/// Each line of `now` with the step that produced it.
pub fn attributed(now: &str, steps: &[Step]) -> Vec<BlameLine> {
    let replays: Vec<_> = steps.iter().map(Step::replay).collect();
    let who = attribute(now, &replays);
    crate::pi::touches::lines(now)
        .into_iter()
        .zip(who)
        .enumerate()
        .map(|(i, (text, w))| BlameLine {
            line: i + 1,
            text: text.to_string(),
            by: w.map(|w| steps[w].who.clone()),
            commit: None,
        })
        .collect()
}
