//! Every `$ pidx ...` example in a `console` block of the README and of the docs pages runs as
//! written against the sample corpus (a copy of `tests/fixtures/conformance/sessions` as pi's
//! default sessions folder, `~` a temp home), and none of them is an error (exit 0 results or 1
//! nothing found; never 2). Examples that do not return by themselves (`watch`, `mcp`, `serve`,
//! the full-screen `pick`) are only parsed: their `--help` must work. Examples that need a team
//! server or the network go in `shell` blocks instead (docs/team.md's run against a real
//! server in `tests/it/pg.rs`). The README also stays short enough to read.

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

/// A file of the repository, by its path from the crate's root.
fn page(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The `$ pidx ...` lines of a Markdown page's console blocks.
fn examples(markdown: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in markdown.lines() {
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

/// Runs every console example of the page at `path` (at least `at_least` of them).
fn every_example_runs_as_written(path: &str, at_least: usize) {
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
    let examples = examples(&page(path));
    assert!(
        examples.len() >= at_least,
        "{path} has its examples: {examples:?}"
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
            "{path}: `pidx {line}` exited {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= at_least, "{path}: ran {ran} examples");
}

#[test]
fn every_readme_example_runs_as_written() {
    every_example_runs_as_written("README.md", 25);
}

#[test]
fn every_guide_example_runs_as_written() {
    every_example_runs_as_written("docs/guide.md", 40);
}

#[test]
fn every_example_of_the_other_docs_pages_runs_as_written() {
    for (path, at_least) in [
        ("docs/search.md", 4),
        ("docs/mcp.md", 2),
        ("docs/gateways.md", 5),
    ] {
        every_example_runs_as_written(path, at_least);
    }
}

#[test]
fn the_readme_stays_short() {
    let lines = page("README.md").lines().count();
    assert!(
        lines < 320,
        "README.md has {lines} lines; the full reference goes in docs/guide.md"
    );
}

/// GitHub's anchor of each heading of a Markdown page (outside code blocks): lower-cased,
/// punctuation but `-` and `_` dropped, spaces as `-`, a repeated one suffixed `-1`, `-2`...
fn anchors(markdown: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut inside = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            inside = !inside;
            continue;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !inside) else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.iter().filter(|s| **s == slug).count();
        out.push(if n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        seen.push(slug);
    }
    out
}

/// The targets of a page's Markdown links `](target)`, outside code blocks and inline code.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            continue;
        }
        // Inline code (`...`) can hold `](` that is no link: keep only what is outside it.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    let mut broken = Vec::new();
    for path in &pages {
        let dir = Path::new(path).parent().unwrap();
        for target in link_targets(&page(path)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if file.is_empty() {
                path.clone()
            } else {
                dir.join(file).to_string_lossy().into_owned()
            };
            if !root.join(&file).exists() {
                broken.push(format!("{path}: {target} (no such file)"));
            } else if !anchor.is_empty()
                && file.ends_with(".md")
                && !anchors(&page(&file)).iter().any(|a| a == anchor)
            {
                broken.push(format!("{path}: {target} (no such heading)"));
            }
        }
    }
    assert!(pages.len() >= 8, "{pages:?}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
