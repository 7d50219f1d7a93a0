//! The pi skill cannot drift from the CLI: every `pidx ...` line in `skills/pidx/SKILL.md` runs
//! as written (SESSION, ENTRY_ID and QUERY filled in from the conformance corpus) and must exit
//! 0 with JSON of the shape the `# -> ` line under it documents. `pidx skill install` puts the
//! skill where pi loads it and never overwrites a different file without `--force`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const PIDX: &str = env!("CARGO_BIN_EXE_pidx");
const SKILL: &str = include_str!("../../skills/pidx/SKILL.md");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command environment that sees only the conformance corpus and a temp index: pi's agent
/// folder is the fixture folder (its `sessions/` is the corpus), HOME and the config are temp.
fn isolated(cmd: &mut Command, tmp: &Path) {
    let bin_dir = Path::new(PIDX).parent().expect("the binary's folder");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .env("HOME", tmp)
        .env(
            "PI_CODING_AGENT_DIR",
            repo().join("tests/fixtures/conformance"),
        )
        .env("PIDX_DB", tmp.join("index.db"))
        .env("PIDX_CONFIG", tmp.join("no-config.toml"))
        .env("NO_COLOR", "1")
        .env_remove("PIDX_ROOTS")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .current_dir(tmp);
}

/// `(command, documented shape)` for each `pidx` line in a fenced block of the skill.
fn documented_commands(skill: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut lines = skill.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block && line.starts_with("pidx ") {
            let shape = lines
                .peek()
                .and_then(|l| l.strip_prefix("# -> "))
                .unwrap_or_default()
                .to_string();
            out.push((line.to_string(), shape));
        }
    }
    out
}

/// The keys a shape line names, each with whether it is required (no `?` after it).
fn shape_keys(shape: &str) -> Vec<(String, bool)> {
    let mut keys = Vec::new();
    let mut rest = shape;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let key = after[..end].to_string();
        rest = &after[end + 1..];
        keys.push((key, !rest.starts_with('?')));
    }
    keys
}

fn check_shape(value: &Value, shape: &str, command: &str) {
    let keys = shape_keys(shape);
    assert!(
        !keys.is_empty(),
        "{command}: the line under it documents no shape"
    );
    let objects: Vec<&Value> = if shape.starts_with('[') {
        let items = value
            .as_array()
            .unwrap_or_else(|| panic!("{command}: documented as an array, printed {value}"));
        assert!(!items.is_empty(), "{command}: printed an empty array");
        items.iter().collect()
    } else {
        vec![value]
    };
    for o in objects {
        let o = o
            .as_object()
            .unwrap_or_else(|| panic!("{command}: expected objects, got {o}"));
        for (key, required) in &keys {
            assert!(
                !required || o.contains_key(key),
                "{command}: documented key {key:?} is missing (it printed keys {:?})",
                o.keys().collect::<Vec<_>>()
            );
        }
    }
}

fn run_shell(line: &str, tmp: &Path) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(line);
    isolated(&mut cmd, tmp);
    cmd.output().expect("running sh")
}

/// A session of the corpus with a branch-free stretch, and an entry above its leaf.
fn corpus_session(tmp: &Path) -> (String, String) {
    let out = run_shell("pidx show 019ccf7f --json", tmp);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show: Value = serde_json::from_slice(&out.stdout).expect("show --json");
    let id = show["id"].as_str().expect("an id").to_string();
    let out = run_shell(&format!("pidx tree {id} --json"), tmp);
    let tree: Value = serde_json::from_slice(&out.stdout).expect("tree --json");
    let entry = tree[0]["children"][0]["id"]
        .as_str()
        .expect("a second entry")
        .to_string();
    (id, entry)
}

#[test]
fn every_command_in_the_skill_runs_and_prints_the_documented_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let (session, entry) = corpus_session(tmp.path());
    let commands = documented_commands(SKILL);
    assert!(
        commands.len() >= 8,
        "the skill documents {} commands",
        commands.len()
    );
    for placeholder in ["SESSION", "ENTRY_ID", "QUERY"] {
        assert!(
            commands.iter().any(|(c, _)| c.contains(placeholder)),
            "no command uses {placeholder}"
        );
    }
    for (command, shape) in &commands {
        let line = command
            .replace("ENTRY_ID", &entry)
            .replace("SESSION", &session)
            .replace("QUERY", "build");
        let out = run_shell(&line, tmp.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let value: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{line}: stdout is not one JSON document ({e})"));
        check_shape(&value, shape, &line);
    }
}

#[test]
fn shapes_are_read_with_their_optional_keys() {
    assert_eq!(
        shape_keys(r#"[{"path", "name"?, "id"}]"#),
        vec![
            ("path".to_string(), true),
            ("name".to_string(), false),
            ("id".to_string(), true)
        ]
    );
    let v: Value = serde_json::json!([{"path": "p", "id": 1}]);
    check_shape(&v, r#"[{"path", "name"?, "id"}]"#, "example");
    let missing = std::panic::catch_unwind(|| check_shape(&v, r#"[{"cwd"}]"#, "example"));
    assert!(missing.is_err(), "a missing documented key fails");
}

fn skill_cmd(tmp: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(PIDX);
    cmd.arg("skill").args(args);
    isolated(&mut cmd, tmp);
    cmd.env("PI_CODING_AGENT_DIR", tmp.join("agent"));
    cmd.output().expect("running pidx")
}

#[test]
fn skill_install_puts_the_skill_where_pi_loads_it_and_never_clobbers_another() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("agent/skills/pidx/SKILL.md");
    assert!(skill_cmd(tmp.path(), &["install"]).status.success());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), SKILL);
    assert!(skill_cmd(tmp.path(), &["install"]).status.success());

    std::fs::write(&target, "my own notes\n").unwrap();
    let refused = skill_cmd(tmp.path(), &["install"]);
    assert_eq!(refused.status.code(), Some(2));
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("--force"), "{why}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "my own notes\n");

    assert!(skill_cmd(tmp.path(), &["install", "--force"])
        .status
        .success());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), SKILL);

    assert!(skill_cmd(tmp.path(), &["install", "--project"])
        .status
        .success());
    let project = tmp.path().join(".pi/skills/pidx/SKILL.md");
    assert_eq!(std::fs::read_to_string(project).unwrap(), SKILL);

    let shown = skill_cmd(tmp.path(), &["show"]);
    assert_eq!(String::from_utf8_lossy(&shown.stdout), SKILL);
}

#[test]
fn the_skill_has_pi_front_matter() {
    let front = SKILL
        .strip_prefix("---\n")
        .and_then(|s| s.split_once("\n---\n"))
        .map(|(f, _)| f)
        .expect("front matter between --- lines");
    assert!(front.lines().any(|l| l == "name: pidx"));
    let description = front
        .lines()
        .find_map(|l| l.strip_prefix("description: "))
        .expect("a description");
    // pi refuses skills without a description and truncates past 1024 characters.
    assert!((20..=1024).contains(&description.len()));
}
