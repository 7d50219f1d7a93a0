//! Every `$ pidx ...` example in a `console` block of the README and of the docs pages runs as
//! written in a newcomer's home (a temp `~` holding a copy of `tests/fixtures/conformance/sessions`
//! as pi's sessions folder, an agent gateway, a git repository `~/app` that two sessions edited,
//! and a toy embedding model), and none of them is an error (exit 0 results or 1 nothing found;
//! never 2). The lines a page shows under an example are its output: they must appear, in order,
//! in what the command prints (stdout, then stderr), with `...` standing for any text and the temp
//! home printed as `~`; a page leaves lines out freely. Examples that do not return by themselves
//! run until they have printed what the page shows (`watch`, `serve`), or, when the page shows
//! nothing under them (`mcp`, the full-screen `pick`), are only parsed: their `--help` must work.
//! Examples that need a team server or the network go in `shell` blocks instead (docs/team.md's
//! run against a real server in `tests/it/pg.rs`). Every docs page with a console example is
//! run, found by reading `docs/`, not from a list. `pi` is a stand-in that succeeds. The README also stays short enough to read.

use crate::common;
use crate::readme_home::newcomer_home;

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// One `$ pidx ...` example: the command after `pidx`, and the lines the page shows under it.
struct Example {
    line: String,
    shown: Vec<String>,
}

/// The `$ pidx ...` examples of a Markdown page's console blocks. A line under an example that
/// does not start with `$ ` is part of what it prints, up to the next `$ ` line or the block's end.
fn examples(markdown: &str) -> Vec<Example> {
    let mut inside = false;
    let mut out: Vec<Example> = Vec::new();
    let mut open = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            inside = !inside && line.starts_with("```console");
            open = false;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ pidx ") {
            out.push(Example {
                line: cmd.to_string(),
                shown: Vec::new(),
            });
            open = true;
        } else if line.starts_with("$ ") {
            open = false;
        } else if open && !line.trim().is_empty() {
            out.last_mut().unwrap().shown.push(line.to_string());
        }
    }
    out
}

/// Whether `line` is what `pattern` shows: equal but for trailing spaces, `...` standing for
/// any text (a line of `...` alone stands for lines left out, as any gap does).
fn shows_line(pattern: &str, line: &str) -> bool {
    let (pattern, line) = (pattern.trim_end(), line.trim_end());
    let pieces: Vec<&str> = pattern.split("...").collect();
    if pieces.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The first line of `shown` that `printed` does not show in order, if any.
fn missing<'a>(shown: &'a [String], printed: &str) -> Option<&'a str> {
    let mut lines = printed.lines();
    shown
        .iter()
        .filter(|s| s.trim() != "...")
        .find(|s| !lines.by_ref().any(|l| shows_line(s, l)))
        .map(|s| s.as_str())
}

#[test]
fn shown_lines_must_be_printed_in_order_with_dots_for_any_text() {
    let printed = "92 files: 92 new in 0.13s\nwatcher: none\nroot: ~/.pi (tree)";
    let shown = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert_eq!(
        missing(
            &shown(&["92 files: ... in ...s", "root: ~/.pi (tree)"]),
            printed
        ),
        None
    );
    assert_eq!(missing(&shown(&["...", "watcher: none   "]), printed), None);
    assert_eq!(
        missing(&shown(&["watcher: some"]), printed),
        Some("watcher: some")
    );
    assert_eq!(
        missing(&shown(&["root: ...", "watcher: none"]), printed),
        Some("watcher: none")
    );
    assert_eq!(missing(&shown(&["92 files"]), printed), Some("92 files"));
    assert_eq!(
        missing(&shown(&["...s: 92 new"]), printed),
        Some("...s: 92 new")
    );
}

/// Runs a command that does not return by itself until it has printed the lines `shown` (at
/// most 60 s), then stops it with SIGTERM; returns what it printed (stdout, then stderr), the
/// folder `home` written `~`.
fn run_until_shown(cmd: &mut std::process::Command, shown: &[String], home: &str) -> String {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let outs = [
        Arc::new(Mutex::new(String::new())),
        Arc::new(Mutex::new(String::new())),
    ];
    let mut readers = Vec::new();
    let pipes: [Box<dyn Read + Send>; 2] = [
        Box::new(child.stdout.take().unwrap()),
        Box::new(child.stderr.take().unwrap()),
    ];
    for (mut pipe, out) in pipes.into_iter().zip(outs.iter().cloned()) {
        readers.push(std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }));
    }
    let printed =
        || format!("{}\n{}", outs[0].lock().unwrap(), outs[1].lock().unwrap()).replace(home, "~");
    let deadline = Instant::now() + Duration::from_secs(60);
    while missing(shown, &printed()).is_some()
        && Instant::now() < deadline
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for r in readers {
        r.join().unwrap();
    }
    printed()
}

/// Runs every console example of the page at `path` (at least `at_least` of them), in order, in
/// one newcomer's home.
fn every_example_runs_as_written(path: &str, at_least: usize) {
    let (tmp, sessions) = common::conformance_copy();
    let (home, agent) = newcomer_home(tmp.path(), &sessions);
    let home_text = home.to_string_lossy().into_owned();
    let examples = examples(&page(path));
    assert!(
        examples.len() >= at_least,
        "{path} has its examples: {:?}",
        examples.iter().map(|e| &e.line).collect::<Vec<_>>()
    );
    let mut ran = 0;
    let mut wrong = Vec::new();
    for Example { line, shown } in &examples {
        let Some(args) = words(line, &home) else {
            continue;
        };
        let command = args
            .iter()
            .find(|a| !a.starts_with('-') && !a.contains('/'))
            .map_or("", |c| c.as_str());
        let long_running = matches!(command, "watch" | "mcp" | "pick" | "serve");
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pidx"));
        // The stand-in `pi` (`readme_home::fake_pi`) first.
        let search_path = std::env::join_paths(std::iter::once(home.join("bin")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        cmd.current_dir(&home)
            .env("HOME", &home)
            .env("PATH", search_path)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env_remove("PIDX_DB")
            .env_remove("PIDX_CONFIG")
            .env_remove("PIDX_MODEL")
            .env_remove("PIDX_PG")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("PIDX_ROOTS")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env("NO_COLOR", "1")
            .args(&args);
        let started = Instant::now();
        let printed = if long_running && !shown.is_empty() {
            run_until_shown(&mut cmd, shown, &home_text)
        } else {
            if long_running {
                cmd.arg("--help");
            }
            let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
            let code = out.status.code();
            assert!(
                matches!(code, Some(0 | 1)),
                "{path}: `pidx {line}` exited {code:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        };
        let printed = printed.replace(&home_text, "~");
        // Shown with --nocapture (and under a failure): what each example printed, and its time.
        println!(
            "$ pidx {line}   [{} ms]\n{printed}",
            started.elapsed().as_millis()
        );
        if let Some(line_missing) = missing(shown, &printed) {
            wrong.push(format!(
                "{path}: `pidx {line}` did not print\n  {line_missing}\nas the page shows; it printed:\n{printed}"
            ));
        }
        ran += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
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

/// Every docs page (but the guide, run on its own) with a `$ pidx` line in a console block, and
/// how many of them can run.
fn pages_with_examples() -> Vec<(String, usize)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".md") || name == "guide.md" {
            continue;
        }
        let path = format!("docs/{name}");
        // The examples this test can run (not those with pipes or substitutions).
        let n = examples(&page(&path))
            .iter()
            .filter(|e| words(&e.line, Path::new("/")).is_some())
            .count();
        if n > 0 {
            out.push((path, n));
        }
    }
    out.sort();
    out
}

#[test]
fn every_example_of_the_other_docs_pages_runs_as_written() {
    let pages = pages_with_examples();
    let names: Vec<&str> = pages.iter().map(|(p, _)| p.as_str()).collect();
    for known in [
        "docs/files.md",
        "docs/gateways.md",
        "docs/mcp.md",
        "docs/meaning.md",
        "docs/pi-package.md",
        "docs/search.md",
        "docs/web.md",
    ] {
        assert!(
            names.contains(&known),
            "{known} shows no example: {names:?}"
        );
    }
    for (path, n) in &pages {
        every_example_runs_as_written(path, *n);
    }
}

/// The commands `pidx --help` lists (without clap's `help`).
fn commands() -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pidx"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let list = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_command_has_help_examples_a_guide_section_and_a_readme_line() {
    let commands = commands();
    assert!(commands.len() >= 25, "{commands:?}");
    let guide = page("docs/guide.md");
    let headings: Vec<&str> = guide.lines().filter(|l| l.starts_with("## ")).collect();
    let readme = page("README.md");
    let mut missing = Vec::new();
    for c in &commands {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pidx"))
            .args([c.as_str(), "--help"])
            .output()
            .unwrap();
        if !String::from_utf8_lossy(&out.stdout).contains("\nExamples:\n  pidx ") {
            missing.push(format!("`pidx {c} --help` has no examples"));
        }
        let named = format!("`pidx {c}`");
        if !headings.iter().any(|h| h.contains(&named)) {
            missing.push(format!("docs/guide.md has no section {named}"));
        }
        if !readme.contains(&format!("pidx {c} ")) && !readme.contains(&named) {
            missing.push(format!("README.md never shows pidx {c}"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let lines = page("README.md").lines().count();
    assert!(
        lines < 345,
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

/// The tools `pidx mcp` lists (`tools/list` over stdio, as a client asks), on an empty index.
fn mcp_tools() -> Vec<String> {
    use std::io::{BufRead, Write};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pidx"))
        .arg("--db")
        .arg(tmp.path().join("index.db"))
        .arg("--root")
        .arg(&root)
        .arg("mcp")
        .env("HOME", tmp.path().join("home"))
        .env_remove("PIDX_PG")
        .env_remove("PIDX_CONFIG")
        .env_remove("PIDX_ROOTS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for msg in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "readme-test", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    ] {
        writeln!(stdin, "{msg}").unwrap();
    }
    stdin.flush().unwrap();
    let mut tools = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["id"] == 2 {
            tools = v["result"]["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("tools/list answered {v}"))
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect();
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    tools
}

#[test]
fn docs_mcp_names_every_tool_the_server_lists() {
    let tools = mcp_tools();
    assert!(tools.len() >= 9, "{tools:?}");
    let page = page("docs/mcp.md");
    let unnamed: Vec<&String> = tools
        .iter()
        .filter(|t| !page.contains(&format!("| `{t}` |")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "docs/mcp.md's table of tools does not name {unnamed:?}"
    );
}

#[test]
fn every_source_path_docs_architecture_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = page("docs/architecture.md");
    let paths: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|p| {
            ["src/", "crates/", "tests/", "migrations/", "docs/"]
                .iter()
                .any(|top| p.starts_with(top))
                && !p.contains(' ')
        })
        .collect();
    assert!(paths.len() >= 20, "{paths:?}");
    let missing: Vec<&&str> = paths.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that do not exist: {missing:?}"
    );
}

/// The README's `## Install` section, up to the next `## ` heading.
fn install_section() -> String {
    let readme = page("README.md");
    let start = readme
        .find("\n## Install\n")
        .expect("the README has an Install section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    rest[..end].to_string()
}

/// The `sh` blocks of a Markdown text, each as its lines.
fn sh_blocks(markdown: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut inside = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            inside = !inside && line == "```sh";
            if inside {
                out.push(Vec::new());
            }
            continue;
        }
        if inside {
            out.last_mut().unwrap().push(line.to_string());
        }
    }
    out
}

/// The release archive's name for this version on Linux x64, as packaging/build.sh names it.
fn archive_name() -> String {
    format!(
        "pidx-{}-x86_64-unknown-linux-gnu.tar.gz",
        env!("CARGO_PKG_VERSION")
    )
}

#[test]
fn install_section_shows_the_three_ways_with_this_version_and_package() {
    let section = install_section();
    let blocks = sh_blocks(&section);
    assert_eq!(
        blocks.len(),
        2,
        "an npm block and an archive block:\n{section}"
    );
    let npm_name = {
        let manifest = page("packaging/npm/package.json");
        let v: serde_json::Value = serde_json::from_str(&manifest).unwrap();
        v["name"].as_str().unwrap().to_string()
    };
    let npm = &blocks[0];
    assert!(
        npm[0].starts_with(&format!("npm install -g {npm_name} ")),
        "{npm:?}"
    );
    let pi_line = format!("pi install npm:{npm_name}");
    assert!(npm[1].starts_with(&format!("{pi_line} ")), "{npm:?}");
    // tests/pi-package/check.mjs runs that very command in the real pi.
    assert!(
        page("tests/pi-package/check.mjs").contains(&format!("\"install\", \"npm:{npm_name}\""))
    );
    let archive = &blocks[1];
    assert!(
        archive
            .iter()
            .all(|l| l.contains(&archive_name().replace(".tar.gz", ""))),
        "every archive line names {}: {archive:?}",
        archive_name()
    );
    assert!(section.contains("`cargo install --locked --path .`"));
    assert!(
        !section.contains("INSTALL_"),
        "the from-source figures are filled in"
    );
}

/// Runs `sh -ec SCRIPT` in `dir` with `env`; panics with what it printed when it fails.
fn sh(script: &str, dir: &Path, env: &[(&str, String)]) -> String {
    let out = std::process::Command::new("sh")
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env_remove("PIDX_DB")
        .env_remove("PIDX_BIN")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "`{script}` failed:\n{printed}");
    printed
}

/// The Install section's npm and archive commands, run as written against the artifacts of
/// `bash packaging/build.sh OUT` (tests/packaging/run.sh passes OUT as PIDX_RELEASE_OUT): npm
/// resolves `pidx` from a local registry holding the packed tarballs (tests/pi-package/
/// registry.mjs), as it will from npm's once they are published. `pi install npm:pidx` runs in
/// the real pi in tests/pi-package/check.mjs; `cargo install` is timed in the README, not here.
#[test]
fn install_from_the_readme_with_the_built_artifacts() {
    let Some(out) = std::env::var_os("PIDX_RELEASE_OUT") else {
        println!("SKIPPED: the README's install commands need the release artifacts: PIDX_RELEASE_OUT=OUT after `bash packaging/build.sh OUT` (tests/packaging/run.sh does both)");
        return;
    };
    let out = std::path::PathBuf::from(out);
    let blocks = sh_blocks(&install_section());
    let version = env!("CARGO_PKG_VERSION");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let prefix = tmp.path().join("prefix");
    let path = format!(
        "{}:{}:{}",
        prefix.join("bin").display(),
        home.join(".local/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );

    // npm install -g pidx, from a registry of the packed tarballs.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut registry = std::process::Command::new("node")
        .arg(repo.join("tests/pi-package/registry.mjs"))
        .arg(&out)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs the local registry");
    let url = {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        let mut stdout = registry.stdout.take().unwrap();
        while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        String::from_utf8(line).unwrap()
    };
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "registry said {url:?}"
    );
    let env = [
        ("HOME", home.to_string_lossy().into_owned()),
        ("PATH", path),
        ("npm_config_registry", url),
        ("npm_config_prefix", prefix.to_string_lossy().into_owned()),
        ("npm_config_audit", "false".into()),
        ("npm_config_fund", "false".into()),
    ];
    let npm_line = &blocks[0][0];
    sh(npm_line, tmp.path(), &env);
    drop(registry.stdin.take());
    registry.wait().unwrap();
    let printed = sh("pidx --version", tmp.path(), &env);
    assert!(
        printed.starts_with(&format!("pidx {version} (commit ")),
        "{printed}"
    );
    assert!(
        prefix.join("bin/pidx").exists(),
        "`{npm_line}` put pidx in the npm prefix"
    );

    // The archive, downloaded beside its checksum: verify, unpack, install to ~/.local/bin.
    let name = archive_name();
    if !out.join(&name).exists() {
        println!(
            "SKIPPED: the archive commands: no {name} in {} (another platform's build)",
            out.display()
        );
        return;
    }
    let download = tmp.path().join("download");
    std::fs::create_dir_all(&download).unwrap();
    for file in [name.clone(), format!("{name}.sha256")] {
        std::fs::copy(out.join(&file), download.join(&file)).unwrap();
    }
    sh(&blocks[1].join("\n"), &download, &env);
    let installed = home.join(".local/bin/pidx");
    let printed = sh(
        &format!("'{}' --version", installed.display()),
        &download,
        &env,
    );
    assert!(
        printed.starts_with(&format!("pidx {version} (commit ")),
        "{printed}"
    );
}
