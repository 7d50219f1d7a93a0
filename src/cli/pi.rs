//! `pidx pi install|uninstall`: the pi package (`integrations/pi/`: the extension with
//! /history, /sessions, /related, /files and `--pidx-entry`, plus the pidx skill) installed
//! with pi's own commands, `pi install <path>` and `pi mcp add pidx -- pidx mcp`, each printed
//! before it runs. The package's files are built into this binary and written to
//! `~/.local/share/pidx/pi-package/` (or `--from` a checkout's `integrations/pi`), so a
//! `cargo install`ed pidx needs no source tree. Also answers the picker's question: is the
//! package installed (so `pi` knows `--pidx-entry`)?

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::app::pi_agent::{installed_packages, package_name, PACKAGE_NAME};
use anyhow::{bail, Context as _, Result};
use clap::{Args, Subcommand};
use serde_json::Value;

use super::Found;

#[derive(Subcommand, Debug)]
pub enum PiCommand {
    /// Install the pidx pi package (`pi install`) and register `pidx mcp` (`pi mcp add`).
    Install(PiInstallArgs),
    /// Remove what `install` added (`pi remove`, `pi mcp remove pidx`).
    Uninstall(PiUninstallArgs),
}

#[derive(Args, Debug)]
pub struct PiInstallArgs {
    /// Install this package folder (a checkout's `integrations/pi`) instead of writing the one
    /// built into pidx to ~/.local/share/pidx/pi-package.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Do not register `pidx mcp` with pi's MCP client.
    #[arg(long)]
    pub no_mcp: bool,
}

#[derive(Args, Debug)]
pub struct PiUninstallArgs {
    /// Keep the `pidx` MCP server registered.
    #[arg(long)]
    pub keep_mcp: bool,
}

/// The first pi with an MCP client (`pi mcp`); older ones would take `mcp add ...` as a prompt.
const MCP_SINCE: (u64, u64, u64) = (0, 99, 0);

const PACKAGE_JSON: &str = include_str!("../../integrations/pi/package.json");
const EXTENSION_TS: &str = include_str!("../../integrations/pi/extension.ts");
const PIDX_TS: &str = include_str!("../../integrations/pi/pidx.ts");
const PICKER_TS: &str = include_str!("../../integrations/pi/picker.ts");

pub fn run(cmd: &PiCommand) -> Result<Found> {
    match cmd {
        PiCommand::Install(args) => install(args),
        PiCommand::Uninstall(args) => uninstall(args),
    }
}

fn install(args: &PiInstallArgs) -> Result<Found> {
    let from = args.from.as_deref().map(checked_package).transpose()?;
    let version = pi_version()?;
    let dir = match from {
        Some(dir) => dir,
        None => write_package(&default_package_dir())?,
    };
    run_pi(&["install".into(), dir.to_string_lossy().into_owned()])?;
    let copied = crate::app::pi_agent::agent_dir().join("skills/pidx/SKILL.md");
    if copied.is_file() {
        crate::term::say(&format!(
            "pidx: the skill is also at {} (from `pidx skill install`); the package brings it too, so that copy can go",
            copied.display()
        ));
    }
    if args.no_mcp {
        return Ok(true);
    }
    if !has_mcp(version) {
        crate::term::say(&format!(
            "pidx: pi {} has no MCP client (`pi mcp` came in pi 0.99.0); skipped `pi mcp add` (the package and its skill are installed)",
            show_version(version)
        ));
        return Ok(true);
    }
    let mut add = vec!["mcp".to_string(), "add".into(), "pidx".into(), "--".into()];
    add.push(pidx_command());
    add.push("mcp".into());
    run_pi(&add)?;
    Ok(true)
}

fn uninstall(args: &PiUninstallArgs) -> Result<Found> {
    let version = pi_version()?;
    let dirs = installed_packages(&crate::app::pi_agent::agent_dir());
    if dirs.is_empty() {
        crate::term::say("pidx: pi's settings list no pidx package; nothing to remove there");
    }
    for dir in &dirs {
        run_pi(&["remove".into(), dir.to_string_lossy().into_owned()])?;
    }
    if !args.keep_mcp && has_mcp(version) {
        if mcp_registered(&crate::app::pi_agent::agent_dir()) {
            run_pi(&["mcp".into(), "remove".into(), "pidx".into()])?;
        } else {
            crate::term::say("pidx: pi's mcp.json has no `pidx` server; nothing to remove there");
        }
    }
    Ok(true)
}

/// `--from DIR`, absolute, when it is the pidx package.
fn checked_package(from: &Path) -> Result<PathBuf> {
    let dir = std::fs::canonicalize(from)
        .with_context(|| format!("no package folder at {}", from.display()))?;
    if package_name(&dir).as_deref() != Some(PACKAGE_NAME) {
        bail!(
            "{} is not the pidx pi package (its package.json must be named {PACKAGE_NAME:?})",
            dir.display()
        );
    }
    Ok(dir)
}

/// Where `install` writes the built-in package: beside the default index.
fn default_package_dir() -> PathBuf {
    crate::store::default_db_path()
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        .join("pi-package")
}

/// Writes the built-in package to `dir` (the skill beside it, since the checkout's
/// `../../skills` is not there) and returns `dir`, absolute.
fn write_package(dir: &Path) -> Result<PathBuf> {
    let mut manifest: Value =
        serde_json::from_str(PACKAGE_JSON).context("the built-in package.json")?;
    manifest["pi"]["skills"] = serde_json::json!(["./skills/pidx"]);
    let files: [(&str, String); 5] = [
        (
            "package.json",
            serde_json::to_string_pretty(&manifest)? + "\n",
        ),
        ("extension.ts", EXTENSION_TS.to_string()),
        ("pidx.ts", PIDX_TS.to_string()),
        ("picker.ts", PICKER_TS.to_string()),
        ("skills/pidx/SKILL.md", super::skill::SKILL.to_string()),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
            continue;
        }
        let parent = path.parent().expect("a file in a folder");
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!("pidx: wrote the pi package to {}", dir.display());
    std::fs::canonicalize(dir).with_context(|| format!("reading {}", dir.display()))
}

/// `pidx` when the `pidx` on PATH is this binary, else this binary's absolute path, so pi
/// starts the same pidx that registered it.
fn pidx_command() -> String {
    let me = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("pidx"))
            .find(|p| p.is_file())
            .and_then(|p| std::fs::canonicalize(p).ok())
    });
    match me {
        Some(me) if on_path.as_ref() != Some(&me) => me.to_string_lossy().into_owned(),
        _ => "pidx".into(),
    }
}

/// Runs `pi ARGS` after printing it; pi's own output passes through.
fn run_pi(args: &[String]) -> Result<()> {
    let shown = std::iter::once("pi".to_string())
        .chain(args.iter().map(|a| shell_word(a)))
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!("$ {shown}");
    let status = Command::new("pi")
        .args(args)
        .status()
        .map_err(|e| not_found(&e))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

fn not_found(e: &std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        anyhow::anyhow!(
            "pi is not on PATH (install it: npm install -g @earendil-works/pi-coding-agent)"
        )
    } else {
        anyhow::anyhow!("cannot run pi: {e}")
    }
}

/// `pi --version`, parsed (`None` when it prints something else).
fn pi_version() -> Result<Option<(u64, u64, u64)>> {
    let out = Command::new("pi")
        .arg("--version")
        .output()
        .map_err(|e| not_found(&e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(parse_version(&text))
}

fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let word = text.split_whitespace().find(|w| {
        w.trim_start_matches('v')
            .starts_with(|c: char| c.is_ascii_digit())
    })?;
    let mut parts = word.trim_start_matches('v').split(['.', '-', '+']);
    let mut next = || parts.next().and_then(|p| p.parse::<u64>().ok());
    Some((next()?, next()?, next().unwrap_or(0)))
}

fn has_mcp(version: Option<(u64, u64, u64)>) -> bool {
    version.is_some_and(|v| v >= MCP_SINCE)
}

fn show_version(version: Option<(u64, u64, u64)>) -> String {
    version.map_or_else(
        || "(unknown version)".into(),
        |(a, b, c)| format!("{a}.{b}.{c}"),
    )
}

/// A word as `sh` would need it to read it back.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

fn mcp_registered(agent_dir: &Path) -> bool {
    std::fs::read_to_string(agent_dir.join("mcp.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v.get("mcpServers").and_then(|s| s.get("pidx")).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_pi_prints_them() {
        assert_eq!(parse_version("0.87.1\n"), Some((0, 87, 1)));
        assert_eq!(parse_version("pi v1.5.2"), Some((1, 5, 2)));
        assert_eq!(parse_version("1.6.0-beta.1"), Some((1, 6, 0)));
        assert_eq!(parse_version("no version here"), None);
        assert!(!has_mcp(Some((0, 87, 1))));
        assert!(has_mcp(Some((0, 99, 0))));
        assert!(has_mcp(Some((1, 5, 2))));
        assert!(!has_mcp(None));
    }

    #[test]
    fn printed_commands_quote_what_the_shell_would_split() {
        assert_eq!(shell_word("/a/b-c.d"), "/a/b-c.d");
        assert_eq!(shell_word("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn the_written_manifest_points_at_the_skill_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let at = write_package(&dir.path().join("pkg")).unwrap();
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(at.join("package.json")).unwrap())
                .unwrap();
        assert_eq!(m["name"], PACKAGE_NAME);
        assert_eq!(m["pi"]["skills"], serde_json::json!(["./skills/pidx"]));
        assert_eq!(m["pi"]["extensions"], serde_json::json!(["./extension.ts"]));
        assert!(at.join("skills/pidx/SKILL.md").is_file());
        assert!(at.join("pidx.ts").is_file());
    }
}
