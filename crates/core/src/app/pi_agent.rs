//! pi's agent folder and what is installed there: where the skill goes, and whether pi's
//! settings list the pidx pi package (so `pi` accepts `--pidx-entry`). Shared by the command
//! line (`pidx skill`, `pidx pi`, the picker's Enter) and the web pages' resume command.

/// The command that resumes a session in pi (`{path}`: the session file, quoted): what the
/// picker's Enter runs unless told otherwise.
pub const RESUME_EXEC: &str = "pi --session {path}";

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The package's name in its package.json: how pidx recognizes it in pi's settings.
pub const PACKAGE_NAME: &str = "pidx-pi";
/// pi's agent folder: `$PI_CODING_AGENT_DIR` (as pi reads it, `~` expanded), else `~/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(v) if !v.is_empty() => crate::pi::layout::absolute(&super::config::expand_path(&v)),
        _ => dirs::home_dir()
            .unwrap_or_else(|| PathBuf::from("/"))
            .join(".pi")
            .join("agent"),
    }
}

pub fn package_name(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v.get("name")?.as_str().map(str::to_string)
}

/// The local package folders pi's user settings list whose package.json names the pidx
/// package (sources relative to the settings file, as pi resolves them).
pub fn installed_packages(agent_dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(agent_dir.join("settings.json")) else {
        return Vec::new();
    };
    let Ok(settings) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let sources = settings.get("packages").and_then(Value::as_array);
    let mut found = Vec::new();
    for p in sources.into_iter().flatten() {
        let source = p
            .as_str()
            .or_else(|| p.get("source").and_then(Value::as_str));
        let Some(source) = source else { continue };
        if ["npm:", "git:", "http:", "https:", "ssh:", "git@"]
            .iter()
            .any(|scheme| source.starts_with(scheme))
        {
            continue;
        }
        let dir = agent_dir.join(super::config::expand_path(source));
        if package_name(&dir).as_deref() == Some(PACKAGE_NAME) {
            found.push(std::fs::canonicalize(&dir).unwrap_or(dir));
        }
    }
    found
}

/// Whether pi's user settings install the pidx package (so `pi` accepts `--pidx-entry`).
pub fn package_installed() -> bool {
    !installed_packages(&agent_dir()).is_empty()
}
