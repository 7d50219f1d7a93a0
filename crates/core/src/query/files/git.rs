//! Everything pidx reads from git, through libgit2 (`git2`, built without network transports:
//! pidx only reads local objects). gix was the other choice; git2 with `default-features =
//! false` builds libgit2 from source with the C compiler the build already needs for SQLite,
//! and one crate instead of gix's many keeps the build lighter. No `git` process is run.

use std::path::{Path, PathBuf};

use git2::{DiffOptions, Oid, Repository, Sort};

use crate::error::{Error, Result};

fn git_err(e: git2::Error) -> Error {
    Error::Invalid(format!("git: {}", e.message()))
}

/// A repository and its work tree.
pub struct Repo {
    repo: Repository,
    pub workdir: PathBuf,
}

/// One commit and the lines it added, per file (paths inside the work tree).
pub struct Commit {
    pub id: String,
    pub time_ms: i64,
    pub summary: String,
    pub author: String,
    pub added: Vec<Added>,
}

/// The lines a commit added to one file: their numbers (1-based) in the file as committed.
pub struct Added {
    pub path: String,
    pub lines: Vec<usize>,
}

impl Repo {
    /// The repository holding `path` (a folder or a file in its work tree).
    ///
    /// # Errors
    /// Not inside a git work tree.
    pub fn discover(path: &Path) -> Result<Repo> {
        let repo = Repository::discover(path).map_err(|_| {
            Error::Invalid(format!(
                "{} is not inside a git work tree; give --repo DIR",
                path.display()
            ))
        })?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| Error::Invalid("a bare repository has no files to attribute".into()))?
            .to_path_buf();
        let workdir = super::absolute(&workdir);
        Ok(Repo { repo, workdir })
    }

    /// The commits of `range` (`A..B`, or one revision and its ancestors), newest first, at
    /// most `limit`, each with the lines it added against its first parent (a merge's own
    /// lines only).
    ///
    /// # Errors
    /// A revision git cannot resolve; git errors.
    pub fn commits(&self, range: &str, limit: usize) -> Result<Vec<Commit>> {
        self.commits_since(range, limit, None)
    }

    /// [`Self::commits`], leaving out (without diffing them) commits made before `since_ms`.
    ///
    /// # Errors
    /// As [`Self::commits`].
    pub fn commits_since(
        &self,
        range: &str,
        limit: usize,
        since_ms: Option<i64>,
    ) -> Result<Vec<Commit>> {
        let mut walk = self.repo.revwalk().map_err(git_err)?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
            .map_err(git_err)?;
        if range.contains("..") {
            walk.push_range(range).map_err(git_err)?;
        } else {
            let oid = self.resolve(range)?;
            walk.push(oid).map_err(git_err)?;
        }
        let mut out = Vec::new();
        for oid in walk.take(limit) {
            let oid = oid.map_err(git_err)?;
            if let Some(since) = since_ms {
                let secs = self
                    .repo
                    .find_commit(oid)
                    .map_err(git_err)?
                    .time()
                    .seconds();
                if secs * 1000 < since {
                    continue;
                }
            }
            out.push(self.commit(oid)?);
        }
        Ok(out)
    }

    fn resolve(&self, rev: &str) -> Result<Oid> {
        let obj = self
            .repo
            .revparse_single(rev)
            .map_err(|e| Error::Invalid(format!("git: {rev:?}: {}", e.message())))?;
        Ok(obj.peel_to_commit().map_err(git_err)?.id())
    }

    fn commit(&self, oid: Oid) -> Result<Commit> {
        let c = self.repo.find_commit(oid).map_err(git_err)?;
        let tree = c.tree().map_err(git_err)?;
        let parent = c
            .parents()
            .next()
            .map(|p| p.tree())
            .transpose()
            .map_err(git_err)?;
        let mut opts = DiffOptions::new();
        opts.context_lines(0);
        let mut diff = self
            .repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut opts))
            .map_err(git_err)?;
        // A renamed file's lines are not added by the commit that renames it.
        diff.find_similar(None).map_err(git_err)?;
        let mut added: Vec<Added> = Vec::new();
        diff.foreach(
            &mut |_, _| true,
            None,
            None,
            Some(&mut |delta, _, line| {
                if line.origin() == '+' {
                    if let (Some(p), Some(n)) = (
                        delta.new_file().path().and_then(Path::to_str),
                        line.new_lineno(),
                    ) {
                        match added.last_mut() {
                            Some(a) if a.path == p => a.lines.push(n as usize),
                            _ => added.push(Added {
                                path: p.to_string(),
                                lines: vec![n as usize],
                            }),
                        }
                    }
                }
                true
            }),
        )
        .map_err(git_err)?;
        let author = c.author().name().unwrap_or_default().to_string();
        Ok(Commit {
            id: oid.to_string(),
            time_ms: c.time().seconds() * 1000,
            summary: c.summary().ok().flatten().unwrap_or_default().to_string(),
            author,
            added,
        })
    }

    /// The text of `path` (inside the work tree) as commit `id` has it, `None` when it has no
    /// such file or the file is not text.
    ///
    /// # Errors
    /// git errors.
    pub fn file_at(&self, id: &str, path: &str) -> Result<Option<String>> {
        let oid = Oid::from_str(id).map_err(git_err)?;
        let tree = self
            .repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(git_err)?;
        let Ok(entry) = tree.get_path(Path::new(path)) else {
            return Ok(None);
        };
        let blob = self.repo.find_blob(entry.id()).map_err(git_err)?;
        Ok(std::str::from_utf8(blob.content()).ok().map(str::to_string))
    }

    /// The paths `path` (absolute, in the work tree) had before git saw it renamed, newest
    /// first, each with the time (ms) of the commit that renamed it; at most `limit` commits
    /// back from HEAD are looked through. A commit is diffed (to find the rename) only when it
    /// adds the path being followed.
    ///
    /// # Errors
    /// git errors.
    pub fn former_paths(&self, path: &Path, limit: usize) -> Result<Vec<(PathBuf, i64)>> {
        let Ok(rel) = path.strip_prefix(&self.workdir) else {
            return Ok(Vec::new());
        };
        let Some(mut current) = rel.to_str().map(str::to_string) else {
            return Ok(Vec::new());
        };
        let mut walk = self.repo.revwalk().map_err(git_err)?;
        if walk.push_head().is_err() {
            return Ok(Vec::new()); // no commit yet
        }
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
            .map_err(git_err)?;
        let mut out = Vec::new();
        for oid in walk.take(limit) {
            let c = self
                .repo
                .find_commit(oid.map_err(git_err)?)
                .map_err(git_err)?;
            let Some(parent) = c.parents().next() else {
                break;
            };
            let (old, new) = (parent.tree().map_err(git_err)?, c.tree().map_err(git_err)?);
            // Added here: in this commit's tree and not in its parent's (two tree lookups,
            // not a diff).
            let here = |t: &git2::Tree| t.get_path(Path::new(&current)).is_ok();
            if !here(&new) || here(&old) {
                continue;
            }
            let mut full = self
                .repo
                .diff_tree_to_tree(Some(&old), Some(&new), None)
                .map_err(git_err)?;
            full.find_similar(None).map_err(git_err)?;
            let from = full.deltas().find_map(|d| {
                let to = d.new_file().path().and_then(Path::to_str);
                (d.status() == git2::Delta::Renamed && to == Some(current.as_str()))
                    .then(|| {
                        d.old_file()
                            .path()
                            .and_then(Path::to_str)
                            .map(str::to_string)
                    })
                    .flatten()
            });
            match from {
                Some(from) => {
                    out.push((self.workdir.join(&from), c.time().seconds() * 1000));
                    current = from;
                }
                None => break, // created here
            }
        }
        Ok(out)
    }

    /// For each line of the file at `path` (absolute) as committed at HEAD, the commit that
    /// last changed it (git's own blame), `None` for a line git does not know; the lines of
    /// the file on disk follow HEAD's where they have not changed since.
    ///
    /// # Errors
    /// git errors.
    pub fn blame_commits(&self, path: &Path, now: &str) -> Result<Vec<Option<String>>> {
        let rel = path.strip_prefix(&self.workdir).map_err(|_| {
            Error::Invalid(format!(
                "{} is outside {}",
                path.display(),
                self.workdir.display()
            ))
        })?;
        let blame = self.repo.blame_file(rel, None).map_err(git_err)?;
        let blame = blame.blame_buffer(now.as_bytes()).map_err(git_err)?;
        let lines = crate::pi::touches::lines(now).len();
        Ok((1..=lines)
            .map(|n| {
                blame
                    .get_line(n)
                    .map(|h| h.final_commit_id())
                    .filter(|id| !id.is_zero())
                    .map(|id| id.to_string())
            })
            .collect())
    }
}
