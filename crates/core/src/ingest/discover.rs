//! Which files are sessions, by pi's own rules (docs/pi-format.md §1.1, §5.1): the sessions root's direct
//! sub-folders (symlinks followed) and, in each, the files whose name ends in `.jsonl`
//! (case-sensitive). Files directly in the root and deeper folders are not sessions. A flat root
//! (`$PI_CODING_AGENT_SESSION_DIR`) holds session files directly.

use crate::ingest::openclaw::DB_NAME;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

pub use crate::pi::layout::{Layout, Root};

/// A session file found on disk, with its `stat`. One is held per file to read for the whole
/// of a sync (100,000 on a first sync of a large archive), so it keeps one path and the four
/// `stat` fields pidx compares, not a `Metadata` and copies of the folder and name.
pub struct Found {
    pub path: PathBuf,
    /// `path`'s bytes up to here are the folder it was found in, as given.
    dir_len: u32,
    /// `path`'s bytes from here on are its file name.
    name_at: u32,
    pub stat: Stat,
}

impl Found {
    fn new(dir: &Path, name: &str, stat: Stat) -> Found {
        // Sized exactly: `join` grows the folder's copy, leaving up to twice the path's length
        // allocated (18 of 108 MB at the peak of a first sync of 100,000 small sessions).
        let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
        path.push(dir);
        path.push(name);
        let len = path.as_os_str().len();
        let fit = |n: usize| u32::try_from(n).expect("a path is shorter than 4 GiB");
        Found {
            dir_len: fit(dir.as_os_str().len()),
            name_at: fit(len - name.len()),
            path,
            stat,
        }
    }

    /// The folder the file was found in.
    pub fn dir(&self) -> &Path {
        use std::os::unix::ffi::OsStrExt;
        let bytes = &self.path.as_os_str().as_bytes()[..self.dir_len as usize];
        Path::new(std::ffi::OsStr::from_bytes(bytes))
    }

    /// The file's name (UTF-8: other names are not sessions).
    pub fn name(&self) -> &str {
        use std::os::unix::ffi::OsStrExt;
        let name = &self.path.as_os_str().as_bytes()[self.name_at as usize..];
        std::str::from_utf8(name).expect("made from a `str`")
    }
}

/// What pidx compares of a file's `stat` to tell whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    /// The exact mtime in nanoseconds since the epoch.
    pub mtime_ns: i64,
}

impl Stat {
    pub fn of(meta: &Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        }
    }

    /// The mtime as Node gives pi `stats.mtime`: `Math.round(mtimeMs)` (docs/pi-format.md §5.3).
    pub fn mtime_ms(&self) -> i64 {
        (self.mtime_ns + 500_000).div_euclid(1_000_000)
    }
}

/// What discovery could not read (reported, then skipped).
pub struct DiscoverError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

/// Folders per thread below which one thread scans them all (a thread costs more than a few
/// folders' `stat`s).
const DIRS_PER_THREAD: usize = 16;

/// Session files per folder to make room for before a scan.
const FILES_PER_DIR: usize = 64;

/// The session files of some project folders (a root's, or those a watcher saw change), in
/// folder order, scanned over the cores: each thread takes a contiguous run and the runs are
/// joined in order, so the result is what one thread would give. The `stat` of every session
/// file is most of a no-op sync (10,000 files: ~2/3 of its CPU, in the kernel).
pub fn discover_dirs(dirs: &[PathBuf]) -> (Vec<Found>, Vec<DiscoverError>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(dirs.len() / DIRS_PER_THREAD).max(1);
    let scan = |run: &[PathBuf]| {
        // Room for a typical folder's files up front: growing the vector moved every `Found`
        // again (a third of a no-op sync's page faults); pages never written are never touched.
        let mut found = Vec::with_capacity(run.len() * FILES_PER_DIR);
        let mut errors = Vec::new();
        for dir in run {
            scan_dir(dir, &mut found, &mut errors);
        }
        (found, errors)
    };
    if threads == 1 {
        return scan(dirs);
    }
    let run = dirs.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = dirs.chunks(run).map(|c| s.spawn(move || scan(c))).collect();
        let mut parts = parts
            .into_iter()
            .map(|part| part.join().expect("a folder scan does not panic"));
        // The first run's vector grows in place (a large one is remapped, not copied).
        let (mut found, mut errors) = parts.next().unwrap_or_default();
        for (f, e) in parts {
            found.extend(f);
            errors.extend(e);
        }
        (found, errors)
    })
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
        Layout::Gateway => (found, errors) = discover_dirs(&gateway_dirs(root)),
        Layout::Tree => match std::fs::read_dir(&root.path) {
            Ok(entries) => {
                let dirs: Vec<PathBuf> = entries
                    .flatten()
                    .filter(|entry| {
                        entry
                            .file_type()
                            .is_ok_and(|t| t.is_dir() || t.is_symlink())
                    })
                    .map(|entry| entry.path())
                    .collect();
                (found, errors) = discover_dirs(&dirs);
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
            Ok(meta) if meta.is_file() => found.push(Found::new(dir, &name, Stat::of(&meta))),
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

/// A gateway folder named one level too deep, read as what it unambiguously is: a gateway's
/// `agents/` folder (holding at least one agent) is its gateway, one agent's folder
/// (`agents/<id>`, or its `agent/` folder holding the store) is that agent's `sessions/`
/// folder when it has one. `None` for anything else ([`root_problem`] says what to pass when
/// it looks like a gateway folder all the same).
pub fn gateway_root_within(path: &Path) -> Option<(PathBuf, Layout)> {
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    if named(path, "agents") && !path.join("agents").is_dir() {
        let agents = std::fs::read_dir(path).ok()?;
        let any_agent = agents.flatten().any(|e| is_agent_dir(&e.path()));
        let state = path.parent()?.to_path_buf();
        return any_agent.then_some((state, Layout::Gateway));
    }
    let agent = if named(path, "agent") && path.join(DB_NAME).is_file() {
        path.parent()?
    } else {
        path
    };
    let under_agents = agent.parent().is_some_and(|p| named(p, "agents"));
    let sessions = agent.join("sessions");
    (under_agents && is_agent_dir(agent) && sessions.is_dir()).then_some((sessions, Layout::Agent))
}

/// An OpenClaw agent's folder: it has a `sessions/` folder or an `agent/` store.
fn is_agent_dir(dir: &Path) -> bool {
    dir.join("sessions").is_dir() || dir.join("agent").join(DB_NAME).is_file()
}

/// Where a gateway folder named one level too deep (and not read as [`gateway_root_within`]
/// does) has its state folder, the one to pass.
fn gateway_state_of(path: &Path) -> Option<PathBuf> {
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    let up = |p: &Path, n: usize| p.ancestors().nth(n).map(Path::to_path_buf);
    if named(path, "agents") {
        return up(path, 1);
    }
    if path.join(DB_NAME).is_file() && named(path, "agent") {
        return up(path, 3);
    }
    if path.join("agent").join(DB_NAME).is_file() {
        return up(path, 2);
    }
    None
}

/// What is wrong with a root a user named, if anything, and whether nothing can be read from it:
/// it does not exist, cannot be read or is a file, or is inside an agent gateway's folder but
/// holds no agent (fatal), or it looks like one project's folder (a `--<cwd>--` folder holding
/// session files) rather than the sessions folder above it.
pub fn root_problem(root: &Root) -> Option<(String, bool)> {
    let meta = match std::fs::metadata(&root.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(("does not exist".into(), true))
        }
        Err(e) => return Some((format!("cannot be read ({e})"), true)),
    };
    if !meta.is_dir() {
        return Some((
            "is a file, not a folder: pass the sessions folder above it".into(),
            true,
        ));
    }
    if root.layout == Layout::Tree {
        if let Some(state) = gateway_state_of(&root.path) {
            let problem = format!(
                "is inside an agent gateway's folder but holds no agent to index: pass the folder holding agents/, --root {}",
                state.display()
            );
            return Some((problem, true));
        }
    }
    let name = root.path.file_name().map(|n| n.to_string_lossy());
    let project_like =
        name.is_some_and(|n| n.len() > 4 && n.starts_with("--") && n.ends_with("--"));
    if root.layout == Layout::Tree && project_like {
        let (found, _) = discover_dirs(std::slice::from_ref(&root.path));
        if !found.is_empty() {
            let parent = root.path.parent().unwrap_or(&root.path);
            return Some((
                format!(
                    "looks like one project's folder (it holds session files itself): pass the folder above it, --root {}",
                    parent.display()
                ),
                false,
            ));
        }
    }
    None
}
