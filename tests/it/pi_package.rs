//! `pidx pi install|uninstall` with a fake `pi` on PATH that records every call: which of pi's
//! commands run, with which arguments, what is printed first, and what happens when pi is
//! old (no `pi mcp`), missing or failing. The real pi runs in tests/pi-package/run.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SEP: char = '\u{1f}';

struct World {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    record: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.join("home/agent")).unwrap();
        let pi = bin.join("pi");
        std::fs::write(
            &pi,
            "#!/bin/sh\n(IFS=$(printf '\\037'); printf '%s\\n' \"$*\") >> \"$PI_RECORD\"\n\
             if [ \"$1\" = --version ]; then echo \"$FAKE_PI_VERSION\"; exit 0; fi\n\
             if [ \"$1\" = \"$FAKE_PI_FAIL\" ]; then echo 'fake pi: boom' >&2; exit 1; fi\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
        World {
            record: dir.join("pi-calls"),
            _tmp: tmp,
            dir,
        }
    }

    fn agent(&self) -> PathBuf {
        self.dir.join("home/agent")
    }

    fn pidx(&self, version: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_pidx"))
            .args(args)
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.dir.join("bin").display()),
            )
            .env("HOME", self.dir.join("home"))
            .env("PI_CODING_AGENT_DIR", self.agent())
            .env("PI_RECORD", &self.record)
            .env("FAKE_PI_VERSION", version)
            .env("FAKE_PI_FAIL", "never")
            .current_dir(&self.dir)
            .output()
            .unwrap()
    }

    /// Each call to the fake pi, as its argument list.
    fn calls(&self) -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines()
            .map(|l| l.split(SEP).map(str::to_string).collect())
            .collect()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn pidx_exe() -> String {
    Path::new(env!("CARGO_BIN_EXE_pidx"))
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn install_writes_the_package_and_runs_pi_install_then_pi_mcp_add_printing_each() {
    let w = World::new();
    let o = w.pidx("1.5.2", &["pi", "install"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pkg = w.dir.join("home/.local/share/pidx/pi-package");
    // pidx is not on this PATH: pi is told the binary's own path.
    assert_eq!(
        w.calls(),
        vec![
            strings(&["--version"]),
            strings(&["install", &pkg.display().to_string()]),
            strings(&["mcp", "add", "pidx", "--", &pidx_exe(), "mcp"]),
        ]
    );
    let err = stderr(&o);
    assert!(
        err.contains(&format!("$ pi install {}", pkg.display())),
        "{err}"
    );
    assert!(
        err.contains(&format!("$ pi mcp add pidx -- {} mcp", pidx_exe())),
        "{err}"
    );
    let manifest = std::fs::read_to_string(pkg.join("package.json")).unwrap();
    assert!(
        manifest.contains("\"pidx-pi\"") && manifest.contains("./skills/pidx"),
        "{manifest}"
    );
    let ext = std::fs::read_to_string(pkg.join("extension.ts")).unwrap();
    assert!(ext.contains("registerFlag(\"pidx-entry\""));
    assert!(pkg.join("skills/pidx/SKILL.md").is_file());

    // With pidx on PATH, pi is told plain `pidx`; a second install rewrites nothing.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pidx"), w.dir.join("bin/pidx")).unwrap();
    std::fs::remove_file(&w.record).unwrap();
    let o = w.pidx("1.5.2", &["pi", "install"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        w.calls()[2],
        strings(&["mcp", "add", "pidx", "--", "pidx", "mcp"])
    );
}

#[test]
fn a_pi_without_an_mcp_client_gets_the_package_only_and_says_so() {
    let w = World::new();
    let o = w.pidx("0.87.1", &["pi", "install"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let calls = w.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1][0], "install");
    assert!(
        stderr(&o).contains("pi 0.87.1 has no MCP client"),
        "{}",
        stderr(&o)
    );
    // --no-mcp: never asked.
    std::fs::remove_file(&w.record).unwrap();
    let o = w.pidx("1.5.2", &["pi", "install", "--no-mcp"]);
    assert!(o.status.success());
    assert!(w.calls().iter().all(|c| c[0] != "mcp"), "{:?}", w.calls());
}

#[test]
fn from_installs_a_checkouts_package_and_refuses_another_folder() {
    let w = World::new();
    let repo_pkg = Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/pi");
    let o = w.pidx(
        "1.5.2",
        &["pi", "install", "--from", &repo_pkg.display().to_string()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let abs = repo_pkg.canonicalize().unwrap().display().to_string();
    assert_eq!(w.calls()[1], strings(&["install", &abs]));

    std::fs::remove_file(&w.record).unwrap();
    let other = w.dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("package.json"), r#"{"name":"not-pidx"}"#).unwrap();
    let o = w.pidx(
        "1.5.2",
        &["pi", "install", "--from", &other.display().to_string()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not the pidx pi package"),
        "{}",
        stderr(&o)
    );
    assert!(w.calls().is_empty(), "{:?}", w.calls());
}

#[test]
fn uninstall_removes_the_listed_package_and_the_mcp_server() {
    let w = World::new();
    let pkg = w.dir.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"pidx-pi"}"#).unwrap();
    // As pi writes it: relative to the settings file; other packages are left alone.
    std::fs::write(
        w.agent().join("settings.json"),
        r#"{"packages":["npm:@x/other",{"source":"../../pkg"}]}"#,
    )
    .unwrap();
    std::fs::write(
        w.agent().join("mcp.json"),
        r#"{"mcpServers":{"pidx":{"command":"pidx","args":["mcp"]}}}"#,
    )
    .unwrap();
    let o = w.pidx("1.5.2", &["pi", "uninstall"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        w.calls(),
        vec![
            strings(&["--version"]),
            strings(&["remove", &pkg.display().to_string()]),
            strings(&["mcp", "remove", "pidx"]),
        ]
    );
    assert!(stderr(&o).contains("$ pi mcp remove pidx"));

    // Nothing installed: nothing removed, and it says so.
    std::fs::remove_file(w.agent().join("settings.json")).unwrap();
    std::fs::remove_file(w.agent().join("mcp.json")).unwrap();
    std::fs::remove_file(&w.record).unwrap();
    let o = w.pidx("1.5.2", &["pi", "uninstall"]);
    assert!(o.status.success());
    assert_eq!(w.calls(), vec![strings(&["--version"])]);
    let err = stderr(&o);
    assert!(
        err.contains("no pidx package") && err.contains("no `pidx` server"),
        "{err}"
    );
}

#[test]
fn a_missing_or_failing_pi_is_one_line_and_exit_2() {
    let w = World::new();
    std::fs::remove_file(w.dir.join("bin/pi")).unwrap();
    let o = w.pidx("1.5.2", &["pi", "install"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("pi is not on PATH"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let w = World::new();
    let o = Command::new(env!("CARGO_BIN_EXE_pidx"))
        .args(["pi", "install", "--no-mcp"])
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", w.dir.join("bin").display()),
        )
        .env("HOME", w.dir.join("home"))
        .env("PI_CODING_AGENT_DIR", w.agent())
        .env("PI_RECORD", &w.record)
        .env("FAKE_PI_VERSION", "1.5.2")
        .env("FAKE_PI_FAIL", "install")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("fake pi: boom"),
        "pi's own message passes through: {err}"
    );
    assert!(err.contains("failed"), "{err}");
}
