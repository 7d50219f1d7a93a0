//! Every `$ pidx ...` example in the README runs as written against the sample corpus (a copy
//! of `tests/fixtures/conformance/sessions` as pi's default sessions folder, `~` a temp home),
//! and none of them is an error (exit 0 results or 1 nothing found; never 2). Examples that do
//! not return by themselves (`watch`, `mcp`, `serve`, the full-screen `pick`) are only parsed: their
//! `--help` must work.

use crate::common;

use std::path::Path;

/// The words of one shell command line, with quotes removed and a leading `~` expanded;
/// `None` for a line this test cannot run faithfully (pipes, substitutions).
fn words(line: &str, home: &Path) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                any = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$')) => {
                            cur.push(chars.next().unwrap())
                        }
                        '$' => return None,
                        _ => cur.push(c),
                    }
                }
            }
            '\\' => {
                any = true;
                cur.extend(chars.next());
            }
            '#' if !any && cur.is_empty() => break,
            '|' | '>' | '<' | '$' | '`' | ';' | '&' => return None,
            c if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            '~' if !any && cur.is_empty() => {
                cur.push_str(&home.to_string_lossy());
            }
            c => {
                any = true;
                cur.push(c);
            }
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Some(out)
}

/// The `$ pidx ...` lines of the README's console blocks.
fn examples() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut inside = false;
    let mut out = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            inside = !inside && line.starts_with("```console");
            continue;
        }
        if inside {
            if let Some(cmd) = line.strip_prefix("$ pidx ") {
                out.push(cmd.to_string());
            }
        }
    }
    out
}

#[test]
fn every_readme_example_runs_as_written() {
    let (tmp, sessions) = common::conformance_copy();
    let home = tmp.path().join("home");
    let agent = home.join(".pi").join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::rename(&sessions, agent.join("sessions")).unwrap();
    // A small agent gateway for the gateway examples: one agent with one transcript.
    let gw = home.join(".openclaw/agents/ops/sessions");
    std::fs::create_dir_all(&gw).unwrap();
    let src = agent.join("sessions/--home-user-handwritten--/crlf.jsonl");
    std::fs::copy(&src, gw.join("crlf-0001.jsonl")).unwrap();
    std::fs::write(
        gw.join("sessions.json"),
        r#"{"agent:ops:slack:channel:C1":{"sessionId":"crlf-0001","updatedAt":1,"chatType":"room"}}"#,
    )
    .unwrap();
    let examples = examples();
    assert!(
        examples.len() >= 30,
        "the README has its examples: {examples:?}"
    );
    let mut ran = 0;
    for line in &examples {
        let Some(args) = words(line, &home) else {
            continue;
        };
        let long_running = args
            .iter()
            .find(|a| !a.starts_with('-') && !a.contains('/'))
            .is_some_and(|c| matches!(c.as_str(), "watch" | "mcp" | "pick" | "serve"));
        let mut cmd = assert_cmd::Command::cargo_bin("pidx").unwrap();
        cmd.current_dir(&home)
            .env("HOME", &home)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("PIDX_DB", tmp.path().join("index.db"))
            .env("PIDX_CONFIG", tmp.path().join("no-config.toml"))
            .env_remove("PIDX_ROOTS")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env("NO_COLOR", "1")
            .args(&args);
        if long_running {
            cmd.arg("--help");
        }
        let out = cmd.output().unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "`pidx {line}` exited {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 30, "ran {ran} examples");
}
