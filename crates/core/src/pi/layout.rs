//! pi's folder layout (docs/pi-format.md §1.1, §1.2, §5.1): how a root stores its session
//! files, which project folder a path belongs to, pi's folder name for a cwd, and Node's
//! `path.resolve` for the paths pi reports. Pure: nothing here reads the disk.

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
}

/// A folder pidx indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub path: PathBuf,
    pub layout: Layout,
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

/// pi's folder name for a cwd (docs/pi-format.md §1.2): one leading separator dropped, every `/`, `\` and
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
