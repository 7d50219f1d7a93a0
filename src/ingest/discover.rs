//! Which files are sessions, by pi's own rules (docs/pi-format.md §1.1, §5.1): the sessions root's direct
//! sub-folders (symlinks followed) and, in each, the files whose name ends in `.jsonl`
//! (case-sensitive). Files directly in the root and deeper folders are not sessions. A flat root
//! (`$PI_CODING_AGENT_SESSION_DIR`) holds session files directly.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

pub use crate::pi::layout::{Layout, Root};

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

/// The session files of some project folders only (what a watcher saw change).
pub fn discover_dirs(dirs: &[PathBuf]) -> (Vec<Found>, Vec<DiscoverError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for dir in dirs {
        scan_dir(dir, &mut found, &mut errors);
    }
    (found, errors)
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

/// What a root given by the user is: a folder holding `agents/` is a gateway, a folder with
/// a `sessions.json` (or named `agents/<id>/sessions`) is one gateway agent, anything else a
/// pi sessions root.
pub fn detect_layout(path: &Path) -> Layout {
    if path.join("agents").is_dir() {
        return Layout::Gateway;
    }
    let under_agents = path.file_name().is_some_and(|n| n == "sessions")
        && path
            .parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "agents");
    if under_agents || path.join(crate::pi::gateway::STORE).is_file() {
        return Layout::Agent;
    }
    Layout::Tree
}

/// What is wrong with a root a user named, if anything: it does not exist, is a file, or looks
/// like one project's folder (a `--<cwd>--` folder holding session files) rather than the
/// sessions folder above it.
pub fn root_problem(root: &Root) -> Option<String> {
    let meta = match std::fs::metadata(&root.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("does not exist".into()),
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    if !meta.is_dir() {
        return Some("is a file, not a folder: pass the sessions folder above it".into());
    }
    let name = root.path.file_name().map(|n| n.to_string_lossy());
    let project_like =
        name.is_some_and(|n| n.len() > 4 && n.starts_with("--") && n.ends_with("--"));
    if root.layout == Layout::Tree && project_like {
        let (found, _) = discover_dirs(std::slice::from_ref(&root.path));
        if !found.is_empty() {
            let parent = root.path.parent().unwrap_or(&root.path);
            return Some(format!(
                "looks like one project's folder (it holds session files itself): pass the folder above it, --root {}",
                parent.display()
            ));
        }
    }
    None
}
