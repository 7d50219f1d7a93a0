//! Roots a user wants indexed besides pi's own: remembered in a config file
//! (`$PIDX_CONFIG`, else `~/.config/pidx/config.toml`) as `roots = ["~/.openclaw", ...]`, and in
//! `$PIDX_ROOTS` (paths separated by `:`). Each root's layout is detected from what is on disk
//! (`ingest::discover::detect_layout`): a pi sessions folder, an agent gateway's state folder, or one agent's
//! sessions folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::ingest::discover::{detect_layout, gateway_root_within};
use crate::pi::layout::{absolute, Layout, Root};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    roots: Vec<String>,
    /// Search by meaning: embed texts at every sync and watch (`pidx sync --embed` once).
    #[serde(default)]
    embed: bool,
    /// The static embedding model's folder (default: pidx's models folder, `default`).
    #[serde(default)]
    model: Option<String>,
}

fn read_config() -> Result<Config> {
    let path = config_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("reading {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Whether the config file turns embedding on (`embed = true`).
///
/// # Errors
/// A config file that exists but cannot be read or parsed.
pub fn embed_on() -> Result<bool> {
    Ok(read_config()?.embed)
}

/// The embedding model's folder: `flag` (`--model`), else `$PIDX_MODEL`, else the config
/// file's `model`, else the default in pidx's models folder.
///
/// # Errors
/// A config file that exists but cannot be read or parsed.
pub fn model_dir(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("PIDX_MODEL").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    Ok(match read_config()?.model {
        Some(dir) => expand_path(&dir),
        None => crate::meaning::model::default_dir(),
    })
}

/// The config file's path (it may not exist).
pub fn config_path() -> PathBuf {
    std::env::var_os("PIDX_CONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            dirs::config_dir()
                .unwrap_or_else(|| PathBuf::from("."))
                .join("pidx")
                .join("config.toml")
        })
}

/// A folder the user named, with its layout detected. A gateway's `agents/` folder or one
/// agent's folder is read as the gateway or that agent's `sessions/` folder.
pub fn user_root(path: &Path) -> Root {
    let path = absolute(path);
    let layout = detect_layout(&path);
    if layout == Layout::Tree {
        if let Some((path, layout)) = gateway_root_within(&path) {
            return Root { path, layout };
        }
    }
    Root { layout, path }
}

/// The roots to index when no `--root` is given: pi's own, then the config file's, then
/// `$PIDX_ROOTS`'s (each folder once).
///
/// # Errors
/// A config file that exists but cannot be read or parsed.
pub fn roots() -> Result<Vec<Root>> {
    let mut roots = default_roots();
    let mut extra: Vec<String> = read_config()?.roots;
    if let Ok(env) = std::env::var("PIDX_ROOTS") {
        extra.extend(env.split(':').filter(|p| !p.is_empty()).map(str::to_string));
    }
    for p in extra {
        let root = user_root(&expand_path(&p));
        if roots.iter().all(|r| r.path != root.path) {
            roots.push(root);
        }
    }
    Ok(roots)
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
