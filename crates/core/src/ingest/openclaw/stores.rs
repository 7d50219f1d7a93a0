//! The OpenClaw stores of a gateway root, brought into the index: each agent's store is copied
//! to JSONL (`mirror`), the copies' folder is registered as that agent's gateway folder, the
//! store's windows become the folder's (key, sessionId) pairs, and what the store says of itself
//! is kept for `status`. The JSONL sync then indexes the copies as files of the root; a legacy
//! transcript whose session the store also holds is left out, so nothing is counted twice.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::{mirror, Window, DB_NAME};
use crate::error::Result;
use crate::pi::layout::{Layout, Root};
use crate::store::writer::gateway::{self as gw, DirStat, StoreRow, WindowKey};

/// One agent's store.
#[derive(Debug, Clone)]
pub struct AgentStore {
    pub agent: String,
    pub db: PathBuf,
    /// The agent's legacy transcripts folder (`agents/<id>/sessions`), which the watcher
    /// reports changes under the agent as.
    pub sessions_dir: PathBuf,
}

/// What a pass over a root's stores leaves for the JSONL sync.
#[derive(Debug, Default)]
pub struct StorePass {
    /// Folders of copies to index as files of the root (every store's, even one that could
    /// not be read this time: its copies stay as last read).
    pub dirs: Vec<PathBuf>,
    /// The session ids each agent's copies hold, by the agent's legacy transcripts folder.
    pub ids: HashMap<PathBuf, HashSet<String>>,
    /// One line per store that could not be read.
    pub errors: Vec<String>,
}

/// The agents of a gateway root (or of one agent's sessions folder) that have a store.
pub fn stores_of(root: &Root) -> Vec<AgentStore> {
    let agent_dirs: Vec<PathBuf> = match root.layout {
        Layout::Gateway => std::fs::read_dir(root.path.join("agents"))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default(),
        Layout::Agent => root
            .path
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect(),
        Layout::Tree | Layout::Flat => Vec::new(),
    };
    let mut out: Vec<AgentStore> = agent_dirs
        .into_iter()
        .filter_map(|dir| {
            let db = dir.join("agent").join(DB_NAME);
            let agent = dir.file_name()?.to_string_lossy().into_owned();
            db.is_file().then(|| AgentStore {
                agent,
                sessions_dir: dir.join("sessions"),
                db,
            })
        })
        .collect();
    out.sort_by(|a, b| a.db.cmp(&b.db));
    out
}

/// Where pidx keeps the copies of `db` for `root`: a folder beside the index, one per store
/// and root (a store is indexed once per root naming it: the gateway, or that agent's folder).
pub fn mirror_dir(index: &Path, root: &Path, db: &Path, agent: &str) -> PathBuf {
    let mut base = index.as_os_str().to_owned();
    base.push(".openclaw");
    let mut key = root.as_os_str().as_encoded_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(db.as_os_str().as_encoded_bytes());
    let hash = xxhash_rust::xxh3::xxh3_64(&key);
    let tag: String = agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    PathBuf::from(base).join(format!("{hash:016x}-{tag}"))
}

/// Copies and registers the stores of `root` (only those whose agent folder is in `only`, for
/// a watcher's dirty set), in the caller's write transaction.
///
/// # Errors
/// Index errors only; a store that cannot be read is a line in `StorePass::errors`.
pub fn sync_stores(
    tx: &Connection,
    index: &Path,
    root: &Root,
    only: Option<&HashSet<PathBuf>>,
) -> Result<StorePass> {
    let mut pass = StorePass::default();
    let all = stores_of(root);
    let root_s = root.path.to_string_lossy().into_owned();
    if only.is_none() {
        let keep: Vec<String> = all.iter().map(|s| s.db.to_string_lossy().into()).collect();
        for dir in gw::forget_stores(tx, &root_s, &keep)? {
            // pidx's own copies of a store that is gone; its index rows go with the root's
            // other vanished files
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    for s in all {
        if only.is_some_and(|dirs| !dirs.contains(&s.sessions_dir)) {
            continue;
        }
        let dir = mirror_dir(index, &root.path, &s.db, &s.agent);
        let dir_s = dir.to_string_lossy().into_owned();
        let mut row = StoreRow {
            db: s.db.to_string_lossy().into_owned(),
            root: root_s.clone(),
            agent_id: s.agent.clone(),
            mirror: dir_s.clone(),
            synced_at: chrono::Utc::now().timestamp_millis(),
            ..StoreRow::default()
        };
        match mirror::sync(&s.db, &dir) {
            Ok(out) => {
                pass.errors.extend(out.skipped.iter().cloned());
                row.schema_version = Some(out.info.schema_version);
                row.app_version = out.info.app_version;
                row.sessions = out.windows.len() as i64;
                row.cold = out.windows.iter().filter(|w| is_cold(w)).count() as i64;
                let none = DirStat {
                    size: None,
                    mtime_ms: None,
                    ino: None,
                };
                gw::save_dir(tx, &dir_s, &s.agent, none, None)?;
                let keys: Vec<WindowKey> = out.windows.iter().map(window_key).collect();
                gw::save_windows(tx, &dir_s, &keys)?;
            }
            Err(e) => {
                let line = e.to_string();
                row.problem = Some(line.clone());
                pass.errors.push(line);
            }
        }
        gw::save_store(tx, &row)?;
        pass.ids.insert(s.sessions_dir.clone(), copied_ids(&dir));
        if dir.is_dir() {
            pass.dirs.push(dir);
        }
    }
    Ok(pass)
}

fn is_cold(w: &Window) -> bool {
    w.hot_last_seq.is_none() && w.cold.is_some()
}

fn window_key(w: &Window) -> WindowKey {
    WindowKey {
        session_key: w.session_key.clone(),
        session_id: w.session_id.clone(),
        current: w.current,
        updated_at: w.updated_at,
        chat_type: w.chat_type.clone(),
        channel: w.channel.clone(),
        display_name: w.display_name.clone(),
        subject: w.subject.clone(),
        listed: w.listed,
        meta: w.entry_json.clone().unwrap_or_else(|| "{}".into()),
    }
}

/// The session ids of the copies in `dir` (their file names without `.jsonl`).
fn copied_ids(dir: &Path) -> HashSet<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".jsonl").map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a legacy transcript (`<sessionId>.jsonl` or `<sessionId>-topic-<n>.jsonl` in an
/// agent's sessions folder) is a session the agent's store holds.
pub fn is_in_store(pass: &StorePass, dir: &Path, name: &str) -> bool {
    let Some(ids) = pass.ids.get(dir) else {
        return false;
    };
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let sid = stem.split("-topic-").next().unwrap_or(stem);
    ids.contains(sid)
}
