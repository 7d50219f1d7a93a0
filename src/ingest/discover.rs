//! Which files are sessions, by pi's own rules (spec §1.1, §5.1): the sessions root's direct
//! sub-folders (symlinks followed) and, in each, the files whose name ends in `.jsonl`
//! (case-sensitive). Files directly in the root and deeper folders are not sessions. A flat root
//! (`$PI_CODING_AGENT_SESSION_DIR`) holds session files directly.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// How a root stores its session files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `<root>/--<cwd>--/<file>.jsonl`, pi's default.
    Tree,
    /// `<root>/<file>.jsonl`, a custom session dir.
    Flat,
    /// An agent gateway's state folder: `<root>/agents/<agentId>/sessions/<file>.jsonl`, each
    /// sessions folder with a `sessions.json` (src/ingest/gateway.rs).
    Gateway,
    /// One gateway agent's sessions folder: `<root>/<file>.jsonl` next to `sessions.json`.
    Agent,
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Tree => "tree",
            Layout::Flat => "flat",
            Layout::Gateway => "gateway",
            Layout::Agent => "gateway agent",
        }
    }

    /// Whether the root holds gateway transcripts (with `sessions.json` metadata).
    pub fn is_gateway(self) -> bool {
        matches!(self, Layout::Gateway | Layout::Agent)
    }

    /// What a root given by the user is: a folder holding `agents/` is a gateway, a folder with
    /// a `sessions.json` (or named `agents/<id>/sessions`) is one gateway agent, anything else a
    /// pi sessions root.
    pub fn detect(path: &Path) -> Layout {
        if path.join("agents").is_dir() {
            return Layout::Gateway;
        }
        let under_agents = path.file_name().is_some_and(|n| n == "sessions")
            && path
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|n| n == "agents");
        if under_agents || path.join(crate::ingest::gateway::STORE).is_file() {
            return Layout::Agent;
        }
        Layout::Tree
    }
}

/// A folder pidx indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub path: PathBuf,
    pub layout: Layout,
}

/// A session file found on disk, with its `stat`.
pub struct Found {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub name: String,
    pub meta: Metadata,
}

/// What discovery could not read (reported, then skipped).
pub struct DiscoverError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

/// The roots pi itself uses: `$PI_CODING_AGENT_DIR/sessions` (else `~/.pi/agent/sessions`),
/// plus the flat `$PI_CODING_AGENT_SESSION_DIR` when set.
pub fn default_roots() -> Vec<Root> {
    let agent_dir = std::env::var("PI_CODING_AGENT_DIR")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| expand_path(&v))
        .unwrap_or_else(|| home().join(".pi").join("agent"));
    let mut roots = vec![Root {
        path: absolute(&agent_dir.join("sessions")),
        layout: Layout::Tree,
    }];
    if let Some(flat) = std::env::var("PI_CODING_AGENT_SESSION_DIR")
        .ok()
        .filter(|v| !v.is_empty())
    {
        roots.push(Root {
            path: absolute(&expand_path(&flat)),
            layout: Layout::Flat,
        });
    }
    roots
}

fn home() -> PathBuf {
    dirs::home_dir().unwrap_or_else(|| PathBuf::from("/"))
}

/// pi's env-path expansion: `~`, `~/...` and `file://` URLs.
pub fn expand_path(v: &str) -> PathBuf {
    if v == "~" {
        return home();
    }
    if let Some(rest) = v.strip_prefix("~/") {
        return home().join(rest);
    }
    if let Some(rest) = v.strip_prefix("file://") {
        return PathBuf::from(rest);
    }
    PathBuf::from(v)
}

/// Makes a path absolute against the process cwd without resolving symlinks (as Node's
/// `path.resolve`, so stored paths read like pi's `SessionInfo.path`).
pub fn absolute(p: &Path) -> PathBuf {
    let joined = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// pi's folder name for a cwd (spec §1.2): one leading separator dropped, every `/`, `\` and
/// `:` replaced by `-`, wrapped in `--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

/// The session files of some project folders of `root` only (what a watcher saw change).
pub fn discover_dirs(dirs: &[PathBuf]) -> (Vec<Found>, Vec<DiscoverError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for dir in dirs {
        scan_dir(dir, &mut found, &mut errors);
    }
    (found, errors)
}

/// The project folder of `root` that `path` (a file or folder) belongs to, if any: the root's
/// direct sub-folder for a tree root, the root itself for a flat one.
pub fn project_dir_of(root: &Root, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(&root.path).ok()?;
    match root.layout {
        Layout::Flat | Layout::Agent => Some(root.path.clone()),
        Layout::Tree => rel
            .components()
            .next()
            .map(|c| root.path.join(c.as_os_str())),
        Layout::Gateway => {
            let mut c = rel.components();
            (c.next()?.as_os_str() == "agents").then_some(())?;
            let agent = c.next()?.as_os_str();
            Some(root.path.join("agents").join(agent).join("sessions"))
        }
    }
}

/// The sessions folders of a gateway root (each agent's, existing or not), or the root itself
/// for one agent's folder; none for pi roots.
pub fn gateway_dirs(root: &Root) -> Vec<PathBuf> {
    match root.layout {
        Layout::Agent => vec![root.path.clone()],
        Layout::Gateway => std::fs::read_dir(root.path.join("agents"))
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.path().join("sessions"))
                    .filter(|d| d.is_dir())
                    .collect()
            })
            .unwrap_or_default(),
        Layout::Tree | Layout::Flat => Vec::new(),
    }
}

/// Every session file under `root`, with the errors met on the way. A missing root is empty.
pub fn discover(root: &Root) -> (Vec<Found>, Vec<DiscoverError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    match root.layout {
        Layout::Flat | Layout::Agent => scan_dir(&root.path, &mut found, &mut errors),
        Layout::Gateway => {
            for dir in gateway_dirs(root) {
                scan_dir(&dir, &mut found, &mut errors);
            }
        }
        Layout::Tree => match std::fs::read_dir(&root.path) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let is_dir = entry
                        .file_type()
                        .is_ok_and(|t| t.is_dir() || t.is_symlink());
                    if is_dir {
                        scan_dir(&entry.path(), &mut found, &mut errors);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => errors.push(DiscoverError {
                path: root.path.clone(),
                error,
            }),
        },
    }
    (found, errors)
}

fn scan_dir(dir: &Path, found: &mut Vec<Found>, errors: &mut Vec<DiscoverError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        // A symlink to a file, or a folder that vanished: pi skips these silently too.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return
        }
        Err(error) => {
            errors.push(DiscoverError {
                path: dir.to_path_buf(),
                error,
            });
            return;
        }
    };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !name.ends_with(".jsonl") {
            continue;
        }
        let path = dir.join(&name);
        // A plain file is stat'ed relative to its folder (no path walk from `/`, which is most of
        // a no-op sync's time); a symlink is followed, as pi's `stat` does.
        let meta = match entry.file_type() {
            Ok(t) if t.is_file() => entry.metadata(),
            _ => std::fs::metadata(&path),
        };
        match meta {
            Ok(meta) if meta.is_file() => found.push(Found {
                path,
                dir: dir.to_path_buf(),
                name,
                meta,
            }),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => errors.push(DiscoverError { path, error }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_cwd_matches_pi() {
        assert_eq!(encode_cwd("/home/u/proj"), "--home-u-proj--");
        assert_eq!(
            encode_cwd("/home/u/my-proj.x:y/sub dir"),
            "--home-u-my-proj.x-y-sub dir--"
        );
        assert_eq!(encode_cwd("/"), "----");
        assert_eq!(encode_cwd("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(encode_cwd("\\\\srv\\share"), "---srv-share--");
    }
}
