//! Gives `pidx --version` the commit it was built from, as `PIDX_COMMIT` ("681036d1a2b3,
//! 2026-11-28" or "unknown"). Release builds may set `PIDX_COMMIT` themselves; otherwise git
//! is asked, but only about this package's own checkout: a source tarball unpacked inside some
//! other git repository must not borrow that repository's commit. Without git or a checkout
//! (a crate from crates.io, a tarball) the build goes on and says "unknown".

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PIDX_COMMIT");
    let given = std::env::var("PIDX_COMMIT")
        .ok()
        .filter(|s| !s.trim().is_empty());
    let commit = given.or_else(from_git).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PIDX_COMMIT={commit}");
}

fn from_git() -> Option<String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let top = git(&dir, &["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(&top).ok()? != std::fs::canonicalize(&dir).ok()? {
        return None;
    }
    // Rebuild when HEAD moves (a commit, a checkout), not on every edit: these are the files
    // git changes then. Only existing paths: cargo reruns every time for a missing one.
    let git_dir = git(&dir, &["rev-parse", "--absolute-git-dir"]).map(PathBuf::from);
    let common = git(&dir, &["rev-parse", "--git-common-dir"]).map(|c| dir.join(c));
    let head_ref = git(&dir, &["symbolic-ref", "-q", "HEAD"]);
    let mut watched = Vec::new();
    if let Some(g) = &git_dir {
        watched.push(g.join("HEAD"));
    }
    if let Some(c) = &common {
        watched.push(c.join("packed-refs"));
        if let Some(r) = &head_ref {
            watched.push(c.join(r));
        }
    }
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let hash = git(&dir, &["rev-parse", "--short=12", "HEAD"])?;
    let date = git(&dir, &["log", "-1", "--format=%cs", "HEAD"]);
    Some(match date {
        Some(d) => format!("{hash}, {d}"),
        None => hash,
    })
}
