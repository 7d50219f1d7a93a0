//! `pidx skill`: the pi skill (`skills/pidx/SKILL.md`, built into the binary) printed or
//! installed where pi loads skills: `$PI_CODING_AGENT_DIR/skills/pidx/` (default
//! `~/.pi/agent/skills/pidx/`) or, with `--project`, `./.pi/skills/pidx/`. A different file
//! already there is never overwritten without `--force`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use clap::{Args, Subcommand};

use super::Found;

#[derive(Subcommand, Debug)]
pub enum SkillCommand {
    /// Copy the skill to ~/.pi/agent/skills/pidx/SKILL.md (or the project's .pi/skills/).
    Install(SkillInstallArgs),
    /// Print the skill.
    Show,
}

#[derive(Args, Debug)]
pub struct SkillInstallArgs {
    /// Into this project's .pi/skills/ (the current directory) instead of the user's skills.
    #[arg(long)]
    pub project: bool,
    /// Replace a different SKILL.md already there.
    #[arg(long)]
    pub force: bool,
}

/// The skill as shipped.
pub const SKILL: &str = include_str!("../../skills/pidx/SKILL.md");

pub fn run(cmd: &SkillCommand) -> Result<Found> {
    match cmd {
        SkillCommand::Show => {
            let mut out = std::io::stdout().lock();
            out.write_all(SKILL.as_bytes())?;
            Ok(true)
        }
        SkillCommand::Install(args) => install(args),
    }
}

/// Where the skill goes.
fn target(project: bool) -> Result<PathBuf> {
    let base = if project {
        std::env::current_dir()
            .context("reading the current directory")?
            .join(".pi")
    } else {
        crate::app::pi_agent::agent_dir()
    };
    Ok(base.join("skills").join("pidx").join("SKILL.md"))
}

fn install(args: &SkillInstallArgs) -> Result<Found> {
    let path = target(args.project)?;
    match std::fs::read(&path) {
        Ok(existing) if existing == SKILL.as_bytes() => {
            eprintln!("pidx: the skill at {} is already this one", path.display());
            return Ok(true);
        }
        Ok(_) if !args.force => bail!(
            "{} exists and differs from this pidx's skill; pass --force to replace it",
            path.display()
        ),
        _ => {}
    }
    write(&path)?;
    eprintln!("pidx: installed the skill at {}", path.display());
    Ok(true)
}

fn write(path: &Path) -> Result<()> {
    let dir = path.parent().context("the skill path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(path, SKILL).with_context(|| format!("writing {}", path.display()))
}
