//! `pidx serve` at the HTTP level, with a plain std client: the headers every answer carries,
//! transcripts escaped and redacted, the Host check on loopback, the access token off it,
//! images only as the raster type they claim, and status codes for what does not exist.
//! The browser-level checks are tests/browser/serve.sh.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A server on a free port, stopped when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) port: u16,
    /// What it printed: `http://ADDR/` (with `?token=...` off loopback).
    url: String,
    /// What it printed before the address.
    notes: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn serve(root: &Path, db: &Path, args: &[&str]) -> Server {
    // pi's agent folder (what the resume command looks up): an empty one beside the index.
    let agent = db.with_file_name("pi-agent");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("pidx"))
        .env("PI_CODING_AGENT_DIR", &agent)
        // Never the user's config, models or pi folders.
        .env("HOME", db.with_file_name("home"))
        .env("PIDX_CONFIG", db.with_file_name("no-config.toml"))
        .env_remove("PIDX_MODEL")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("PIDX_SERVE_TOKEN")
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting pidx serve");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let (mut url, mut notes) = (String::new(), String::new());
    loop {
        url.clear();
        assert!(
            stderr.read_line(&mut url).unwrap() > 0,
            "pidx serve ended: {notes}"
        );
        if let Some(u) = url.trim().strip_prefix("pidx serve: http://") {
            url = format!("http://{u}");
            break;
        }
        notes.push_str(&url);
    }
    let port = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .expect("a port in the printed address");
    Server {
        child,
        port,
        url,
        notes,
    }
}

/// An answer: status, headers (names lowercased) and body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) fn get(port: u16, path: &str, host: Option<&str>, extra: &[(&str, &str)]) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connecting");
    let host = host.map_or(format!("127.0.0.1:{port}"), str::to_string);
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

pub(crate) const FILE: &str = "2026-03-01T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000001.jsonl";
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNg+M/AwB8ABQIBoObI1QAAAABJRU5ErkJggg==";
const SVG: &str =
    "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0iYWxlcnQoMSkiLz4=";
pub(crate) const SECRET: &str = "ghp_Zx9Qw3Er7Ty1Ui5Op2As6Df0Gh4Jk8Lz3Xc7";

/// One session with hostile text, a secret, a PNG and an SVG.
pub(crate) fn corpus() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let project = root.join("--home-u-a--");
    std::fs::create_dir_all(&project).unwrap();
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "aaaaaaaa-0000-7000-8000-000000000001", "timestamp": "2026-03-01T08:00:00.000Z", "cwd": "/home/u/a<b>"}),
        serde_json::json!({"type": "message", "id": "e1", "parentId": null, "timestamp": "2026-03-01T08:01:00.000Z",
            "message": {"role": "user", "timestamp": 1772352060000u64,
                "content": format!("<script>alert(1)</script> [x](javascript:alert(1)) token {SECRET}")}}),
        serde_json::json!({"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2026-03-01T08:02:00.000Z",
            "message": {"role": "user", "timestamp": 1772352120000u64, "content": [
                {"type": "image", "mimeType": "image/png", "data": PNG},
                {"type": "image", "mimeType": "image/svg+xml", "data": SVG},
                {"type": "image", "mimeType": "image/png", "data": SVG}]}}),
        // A secret across the place where a long text is cut (50,000 characters).
        serde_json::json!({"type": "message", "id": "e3", "parentId": "e2", "timestamp": "2026-03-01T08:03:00.000Z",
            "message": {"role": "user", "timestamp": 1772352180000u64,
                "content": format!("{} {SECRET} end", "x".repeat(49_980))}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(project.join(FILE), text).unwrap();
    let db = dir.path().join("index.db");
    (dir, root, db)
}

#[test]
fn pages_carry_the_csp_and_show_transcripts_escaped_and_redacted() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let page = get(s.port, &format!("/s/{FILE}"), None, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.body.contains("<script>alert"));
    assert!(
        !page.body.contains("href=\"javascript"),
        "an unsafe link stays text without its target"
    );
    assert!(
        !page.body.contains(SECRET),
        "secrets are redacted by default"
    );
    assert!(page.body.contains("/home/u/a&lt;b&gt;"));
    let list = get(s.port, "/?all=true", None, &[]);
    assert!(list.status == 200 && list.body.contains(FILE));
    let projects = get(s.port, "/", None, &[]);
    assert!(
        projects
            .body
            .contains("/home/u/a&lt;b&gt;</a></td><td class=\"n\">1</td>"),
        "{}",
        projects.body
    );
}

#[test]
fn a_secret_across_a_line_s_cut_is_redacted_wherever_a_line_is_shown() {
    let (_dir, root, db) = corpus();
    // A title, a thinking block's first line and a command whose secret straddles the
    // characters a page shows of them (120, 100 and 90).
    let title = format!("{}{SECRET} end", "tiger ".repeat(17));
    let file = "2026-03-02T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000002.jsonl";
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "aaaaaaaa-0000-7000-8000-000000000002", "timestamp": "2026-03-02T08:00:00.000Z", "cwd": "/home/u/b"}),
        serde_json::json!({"type": "message", "id": "e1", "parentId": null, "timestamp": "2026-03-02T08:01:00.000Z",
            "message": {"role": "user", "timestamp": 1772438460000u64, "content": title}}),
        serde_json::json!({"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2026-03-02T08:02:00.000Z",
            "message": {"role": "assistant", "timestamp": 1772438520000u64, "provider": "p", "model": "m",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"total": 0.5}},
                "content": [
                    {"type": "thinking", "thinking": format!("{} {SECRET} more", "k".repeat(95))},
                    {"type": "toolCall", "id": "c1", "name": "bash",
                     "arguments": {"command": format!("echo {} {SECRET}", "y".repeat(80))}}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::create_dir_all(root.join("--home-u-b--")).unwrap();
    std::fs::write(root.join("--home-u-b--").join(file), text).unwrap();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    // pi's order, each order and filter of the list's own, a typed filter, the session, its
    // tree, a search and the usage page's most expensive sessions.
    for page in [
        "/?all=true",
        "/?project=%2Fhome%2Fu%2Fb",
        "/?all=true&sort=cost",
        "/?all=true&sort=oldest&since=2026-01-01",
        "/?all=true&q=tiger",
        &format!("/s/{file}"),
        &format!("/s/{file}/tree"),
        "/search?q=tiger",
        "/usage",
    ] {
        let got = get(s.port, page, None, &[]);
        assert!(
            got.status == 200 && got.body.contains("tiger tiger"),
            "{page}: {}",
            got.body
        );
        assert!(
            !got.body.contains(&SECRET[..5]),
            "{page} shows the secret's start: {}",
            got.body
        );
    }
}

#[test]
fn a_secret_across_the_cut_of_a_long_text_is_redacted_on_both_sides() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let page = get(s.port, &format!("/s/{FILE}"), None, &[]);
    assert!(
        !page.body.contains(&SECRET[..12]),
        "the secret's start is not shown"
    );
    let rest = get(
        s.port,
        &format!("/s/{FILE}/text?e=2&m=0&p=%2Fcontent&from=50000"),
        None,
        &[],
    );
    assert_eq!(rest.status, 200);
    assert_eq!(
        rest.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(rest.body.ends_with("end"), "{}", rest.body);
    assert!(
        !rest.body.contains(&SECRET[SECRET.len() - 12..]),
        "nor its end: {}",
        rest.body
    );
    // The page's own link starts after the secret, which the page showed redacted whole.
    assert!(
        page.body.contains("[redacted: github-token]"),
        "{}",
        page.body
    );
    let link = page
        .body
        .split("href=\"")
        .find(|l| l.contains("/text?"))
        .unwrap();
    let link = link.split('"').next().unwrap().replace("&amp;", "&");
    let rest = get(s.port, &link, None, &[]);
    assert_eq!(rest.status, 200, "{link}");
    assert_eq!(rest.body, " end", "{link}");
}

/// A message of one 3 MB line: the page parses it with its string cut, and the text pieces
/// (a megabyte each, decoded straight from the line) add up to the string exactly.
#[test]
fn a_huge_string_is_read_back_whole_a_piece_at_a_time() {
    let (_dir, root, db) = corpus();
    let text: String = (0..120_000)
        .map(|i| format!("line {i} \"q\" é😀\n"))
        .collect();
    let line = serde_json::json!({"type": "message", "id": "e4", "parentId": "e3", "timestamp": "2026-03-01T08:04:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "p", "model": "m",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.0}}, "timestamp": 1772352240000u64}});
    let path = root.join("--home-u-a--").join(FILE);
    let mut all = std::fs::read_to_string(&path).unwrap();
    all.push_str(&format!("{line}\n"));
    std::fs::write(&path, all).unwrap();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    // The first sync reads the big line in the background: wait for the session to be listed.
    for _ in 0..300 {
        if get(s.port, "/?all=true", None, &[]).body.contains(FILE) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let page = get(s.port, &format!("/s/{FILE}?from=3"), None, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    let at = page.body.find("line 0 ").unwrap_or(0);
    assert!(
        page.body.contains("line 0 \"q\" é😀"),
        "the start is shown: {}",
        &page.body[at..(at + 300).min(page.body.len())]
    );
    assert!(page
        .body
        .contains("the rest as plain text, a megabyte at a time"));
    let link = page
        .body
        .split("href=\"")
        .find(|l| l.contains("/text?"))
        .unwrap();
    let mut link = Some(link.split('"').next().unwrap().replace("&amp;", "&"));
    let shown = page.body.split("line 1199").count();
    assert!(shown <= 2, "only the start is on the page");
    let from: usize = link
        .as_deref()
        .unwrap()
        .rsplit("from=")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut got: String = text.chars().take(from).collect();
    let mut pieces = 0;
    while let Some(l) = link.take() {
        let piece = get(s.port, &l, None, &[]);
        assert_eq!(piece.status, 200, "{l}");
        pieces += 1;
        match piece.body.rsplit_once("\n\n[… more: ") {
            Some((body, next)) => {
                got.push_str(body);
                link = Some(next.trim_end_matches(']').to_string());
            }
            None => got.push_str(&piece.body),
        }
    }
    assert!(pieces >= 3, "{pieces} pieces");
    assert!(
        got == text,
        "the pieces add up to the string ({} of {} bytes)",
        got.len(),
        text.len()
    );
}

#[test]
fn no_redact_shows_secrets_and_says_so() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0", "--no-redact"]);
    let page = get(s.port, &format!("/s/{FILE}"), None, &[]);
    assert!(page.body.contains(SECRET));
    assert!(s.notes.contains("--no-redact"), "{}", s.notes);
}

#[test]
fn a_foreign_host_header_is_refused_on_loopback() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let port = s.port;
    let foreign = get(port, "/", Some(&format!("attacker.example:{port}")), &[]);
    assert_eq!(foreign.status, 421);
    assert!(foreign.header("content-security-policy").is_some());
    assert_eq!(
        get(port, "/", Some(&format!("localhost:{port}")), &[]).status,
        200
    );
    assert_eq!(
        get(port, "/", Some("127.0.0.1:1"), &[]).status,
        421,
        "another port is another origin"
    );
}

#[test]
fn off_loopback_every_request_needs_the_token() {
    let (_dir, root, db) = corpus();
    let s = serve(
        &root,
        &db,
        &["--listen", "0.0.0.0:0", "--token", "sesame-1234"],
    );
    assert!(s.url.ends_with("/?token=sesame-1234"), "{}", s.url);
    let port = s.port;
    assert_eq!(get(port, "/", None, &[]).status, 401);
    assert_eq!(get(port, "/?token=wrong", None, &[]).status, 401);
    assert_eq!(
        get(port, "/", None, &[("Cookie", "pidx_token=wrong")]).status,
        401
    );
    assert_eq!(
        get(port, "/", None, &[("Authorization", "Bearer wrong")]).status,
        401
    );
    let first = get(port, "/search?q=x&token=sesame-1234", None, &[]);
    assert_eq!(first.status, 303);
    assert_eq!(first.header("location"), Some("/search?q=x"));
    let cookie = first.header("set-cookie").unwrap_or_default();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let kept = cookie.split(';').next().unwrap();
    assert_eq!(get(port, "/", None, &[("Cookie", kept)]).status, 200);
    let bearer = [("Authorization", "Bearer sesame-1234")];
    assert_eq!(get(port, "/", None, &bearer).status, 200);
}

#[test]
fn off_loopback_without_a_token_one_is_generated() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "0.0.0.0:0"]);
    let token = s.url.rsplit("?token=").next().unwrap_or_default().trim();
    assert!(token.len() >= 32, "{}", s.url);
    assert_eq!(get(s.port, "/", None, &[]).status, 401);
    let auth = format!("Bearer {token}");
    assert_eq!(
        get(s.port, "/", None, &[("Authorization", &auth)]).status,
        200
    );
}

#[test]
fn images_are_served_only_as_the_raster_they_are() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let image = |i: usize| {
        get(
            s.port,
            &format!("/s/{FILE}/image?e=1&m=0&p=%2Fcontent%2F{i}"),
            None,
            &[],
        )
    };
    let png = image(0);
    assert_eq!(png.status, 200);
    assert_eq!(png.header("content-type"), Some("image/png"));
    assert_eq!(image(1).status, 404, "an SVG is never served");
    assert_eq!(
        image(2).status,
        404,
        "an SVG claiming to be a PNG is not served"
    );
    let page = get(s.port, &format!("/s/{FILE}"), None, &[]);
    assert_eq!(
        page.body.matches("<img").count(),
        1,
        "only the true PNG gets an img"
    );
}

#[test]
fn what_does_not_exist_is_a_404_and_bad_queries_a_400() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    assert_eq!(get(s.port, "/nowhere", None, &[]).status, 404);
    assert_eq!(get(s.port, "/s/nosuch.jsonl", None, &[]).status, 404);
    assert_eq!(
        get(s.port, &format!("/s/{FILE}?leaf=nosuch"), None, &[]).status,
        404
    );
    assert_eq!(get(s.port, "/assets/app.js", None, &[]).status, 404);
    let bad = get(s.port, "/search?q=re:(&frag=1", None, &[]);
    assert_eq!(bad.status, 200);
    assert!(bad.body.contains("class=\"error\""), "{}", bad.body);
}

#[test]
fn flags_that_do_nothing_for_serve_are_refused() {
    let (_dir, root, db) = corpus();
    for flag in ["--json", "--redact"] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("pidx"))
            .arg("--db")
            .arg(&db)
            .arg("--root")
            .arg(&root)
            .args([flag, "serve", "--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(flag));
    }
}

#[test]
fn search_takes_the_kinds_of_text_as_the_cli_does() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let search = |q: &str| get(s.port, &format!("/search?frag=1&q=alert{q}"), None, &[]).body;
    assert!(
        search("&in=user").contains("1 hits in 1 sessions"),
        "{}",
        search("&in=user")
    );
    assert!(search("&in=bash,tool").contains("0 hits in 0 sessions"));
    assert!(search("&in=nonsense").contains("is not a kind of text"));
    // Every answer says how much of its time the engine took.
    let a = get(s.port, "/search?frag=1&q=alert", None, &[]);
    let timing = a.header("server-timing").unwrap_or_default().to_string();
    let ms: Vec<f64> = timing
        .split(", ")
        .filter_map(|t| t.split_once(";dur=")?.1.parse().ok())
        .collect();
    assert!(
        timing.starts_with("engine;dur=") && ms.len() == 2 && ms[0] <= ms[1],
        "{timing}"
    );
}

#[test]
fn usage_shows_the_figures_of_pidx_stats() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let by_day = get(s.port, "/usage?by=day&figure=sessions", None, &[]).body;
    assert!(
        by_day.contains("<td class=\"key\">2026-03-01</td>"),
        "{by_day}"
    );
    assert!(
        by_day.contains("<rect class=\"bar slot\""),
        "a bar is drawn"
    );
    let by_project = get(s.port, "/usage?by=project", None, &[]).body;
    assert!(by_project.contains("/home/u/a&lt;b&gt;"), "{by_project}");
    assert!(by_project.contains("total: $0.00"), "{by_project}");
}

/// By tool the page reads its rows and its total (and what is below them) side by side on two
/// connections: the same figures as `pidx stats --by tool` and `pidx stats`, on every request.
#[test]
fn usage_by_tool_shows_the_figures_of_pidx_stats() {
    let (tmp, root) = crate::common::conformance_copy();
    let db = tmp.path().join("index.db");
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let stats = |by: &[&str]| -> Vec<serde_json::Value> {
        let out = crate::common::pidx(&db, &root)
            .args(["stats", "--json"])
            .args(by)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (tools, total) = (stats(&["--by", "tool"]), stats(&[]));
    assert!(tools.len() >= 3, "{tools:?}");
    // Written as the page writes figures (`present::numbers`, the command line's).
    let num = |v: &serde_json::Value| pidx::present::numbers::thousands(v.as_i64().unwrap());
    let t = &total[0];
    let line = format!(
        "total: {} · {} tokens · {} sessions · {} tool calls · {}",
        pidx::present::numbers::money(t["cost"].as_f64().unwrap()),
        num(&t["totalTokens"]),
        num(&t["sessions"]),
        num(&t["toolCalls"]),
        pidx::present::numbers::count(t["toolErrors"].as_i64().unwrap(), "error"),
    );
    for _ in 0..3 {
        let page = get(s.port, "/usage?by=tool&figure=tool%20calls", None, &[]).body;
        assert!(page.contains(&line), "{line}\n{page}");
        let keys: Vec<&str> = page
            .split("<td class=\"key\">")
            .skip(1)
            .filter_map(|c| c.split('<').next())
            .take(tools.len())
            .collect();
        let mut want: Vec<&str> = tools
            .iter()
            .map(|r| r["key"]["tool"].as_str().unwrap())
            .collect();
        let mut got = keys;
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "{page}");
        assert!(page.contains("The most expensive sessions"), "{page}");
    }
}

/// Pages read through connections kept from one request to the next: one must see what was
/// written since, and a kept connection to an index file that `sync --rebuild` replaced must
/// not answer from the old file.
#[test]
fn kept_connections_see_a_rebuilt_index() {
    let (_dir, root, db) = corpus();
    let pidx = || {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("pidx"));
        c.env("HOME", db.with_file_name("home"))
            .env("PIDX_CONFIG", db.with_file_name("no-config.toml"))
            .arg("--db")
            .arg(&db)
            .arg("--root")
            .arg(&root);
        c
    };
    assert!(pidx().arg("sync").output().unwrap().status.success());
    // --no-sync: the server itself writes nothing, so only another process's rebuild can
    // bring the second session.
    let s = serve(&root, &db, &["--no-sync", "--listen", "127.0.0.1:0"]);
    for _ in 0..3 {
        let page = get(s.port, "/?all=true", None, &[]).body;
        assert!(!page.contains("zebra-kept"), "{page}");
    }
    let second = root
        .join("--home-u-a--")
        .join("2026-03-02T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000002.jsonl");
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "aaaaaaaa-0000-7000-8000-000000000002", "timestamp": "2026-03-02T08:00:00.000Z", "cwd": "/home/u/a<b>"}),
        serde_json::json!({"type": "message", "id": "f1", "parentId": null, "timestamp": "2026-03-02T08:01:00.000Z",
            "message": {"role": "user", "timestamp": 1772438460000u64, "content": "zebra-kept question"}}),
    ];
    std::fs::write(
        &second,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let rebuilt = pidx().args(["sync", "--rebuild"]).output().unwrap();
    assert!(rebuilt.status.success(), "{rebuilt:?}");
    for _ in 0..3 {
        let page = get(s.port, "/?all=true", None, &[]).body;
        assert!(page.contains("zebra-kept"), "{page}");
    }
}

/// The list's typed filter keeps every session's search text between requests: its answer is
/// `pidx list --query`'s (redacted, as the page redacts) for words, a phrase, a pattern and text
/// nothing holds, and it follows the index as pi appends to a session and writes a new one.
#[test]
fn the_typed_filter_ranks_as_list_query_as_sessions_change() {
    let (tmp, root) = crate::common::conformance_copy();
    let db = tmp.path().join("index.db");
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    // Every project, or one (`project`: the page's filter, the CLI's `--cwd`).
    let project_page = |q: &str, project: Option<&str>| -> Vec<String> {
        let path = match project {
            Some(p) => format!("/?project={}&frag=1&q={}", enc(p), enc(q)),
            None => format!("/?all=true&frag=1&q={}", enc(q)),
        };
        let body = get(s.port, &path, None, &[]).body;
        body.split("<td class=\"title\"><a href=\"/s/")
            .skip(1)
            .filter_map(|r| r.split('"').next())
            .map(str::to_string)
            .collect()
    };
    let page = |q: &str| project_page(q, None);
    let project_cli = |q: &str, project: Option<&str>| -> Vec<String> {
        let mut cmd = crate::common::pidx(&db, &root);
        cmd.args(["list", "--redact", "--json", "--query", q]);
        match project {
            Some(p) => cmd.args(["--cwd", p]),
            None => cmd.arg("--all"),
        };
        let out = cmd.output().unwrap();
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
        rows.iter()
            .filter_map(|r| r["path"].as_str())
            .map(|p| enc(p.rsplit('/').next().unwrap_or(p)))
            .take(300)
            .collect()
    };
    let queries = [
        "test",
        "the",
        "fix bug",
        "\"the session\"",
        "re:err\\w+",
        "qqzzxv",
    ];
    let cli = |q: &str| project_cli(q, None);
    for q in queries {
        let (got, want) = (page(q), cli(q));
        assert_eq!(got, want, "{q:?}");
    }
    assert!(!page("test").is_empty(), "a common word finds sessions");
    let pidx_project = Some("/home/user/projects/pidx");
    for q in ["test", "the", "fix bug", "qqzzxv"] {
        let (got, want) = (project_page(q, pidx_project), project_cli(q, pidx_project));
        assert_eq!(got, want, "{q:?} in one project");
    }
    assert!(
        !project_page("the", pidx_project).is_empty(),
        "a common word finds sessions of one project"
    );
    // pi appends to one session and writes another: both hold a word no session held.
    let project = root.join("--home-user-projects-pidx--");
    let first = std::fs::read_dir(&project)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let mut text = std::fs::read_to_string(&first).unwrap();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(
        &serde_json::json!({"type": "message", "id": "qk000001", "parentId": null,
        "timestamp": "2026-03-05T08:01:00.000Z", "message": {"role": "user",
        "timestamp": 1772697660000u64, "content": "quokkazebra appended"}})
        .to_string(),
    );
    text.push('\n');
    std::fs::write(&first, text).unwrap();
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "aaaaaaaa-0000-7000-8000-00000000beef", "timestamp": "2026-03-06T08:00:00.000Z", "cwd": "/home/user/projects/pidx"}),
        serde_json::json!({"type": "message", "id": "qk000002", "parentId": null, "timestamp": "2026-03-06T08:01:00.000Z",
            "message": {"role": "user", "timestamp": 1772784060000u64, "content": "a quokkazebra too"}}),
    ];
    std::fs::write(
        project.join("2026-03-06T08-00-00-000Z_aaaaaaaa-0000-7000-8000-00000000beef.jsonl"),
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let found = page("quokkazebra");
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found, cli("quokkazebra"));
    for q in queries {
        assert_eq!(page(q), cli(q), "{q:?} after the changes");
    }
}

#[test]
fn a_token_with_spaces_is_refused() {
    let (_dir, root, db) = corpus();
    let out = Command::new(assert_cmd::cargo::cargo_bin("pidx"))
        .arg("--db")
        .arg(&db)
        .arg("--root")
        .arg(&root)
        .args(["serve", "--listen", "0.0.0.0:0", "--token", "a b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token"));
}

/// The resume command resumes at the entry the page is open at when pi has the pidx package
/// (pi's settings list it), and says pi would open the last entry when it has not.
#[test]
fn the_resume_command_names_the_entry_only_when_pi_has_the_pidx_package() {
    let (_dir, root, db) = corpus();
    let page_at = |s: &Server| get(s.port, &format!("/s/{FILE}?entry=e1"), None, &[]).body;
    let plain = {
        let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
        page_at(&s)
    };
    assert!(!plain.contains("--pidx-entry"), "{plain}");
    assert!(plain.contains("pidx pi install"), "{plain}");
    let agent = db.with_file_name("pi-agent");
    let package = db.with_file_name("pidx-pi-package");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(package.join("package.json"), r#"{"name": "pidx-pi"}"#).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        serde_json::json!({"packages": [package.to_string_lossy()]}).to_string(),
    )
    .unwrap();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let with = page_at(&s);
    assert!(
        with.contains("--pidx-entry &#39;e1&#39;") || with.contains("--pidx-entry 'e1'"),
        "{with}"
    );
    assert!(!with.contains("pidx pi install"), "{with}");
    // At the current leaf (no entry named) the command resumes where pi would anyway.
    let current = get(s.port, &format!("/s/{FILE}"), None, &[]).body;
    assert!(!current.contains("--pidx-entry"), "{current}");
}

/// Percent-encodes a query parameter.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A page's text with HTML's entities read back, so an escaped secret still counts.
fn unescaped(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// Issue 36: one session per detector rule, each holding freshly planted secrets of its rule
/// (the title holds one too); no piece of any of them is readable on any page: the listings,
/// each session and its tree, and search pages for the words beside each secret and for each
/// secret itself.
#[test]
fn no_planted_secret_of_any_rule_is_readable_on_a_page() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let mut all = crate::plant::plant_all(3737, 3);
    for (i, rule) in all.chunks_mut(3).enumerate() {
        rule[0].text = rule[0].written.clone();
        crate::plant::write_session(&root, &format!("s{i:02}-{}", rule[0].rule), rule);
    }
    let db = tmp.path().join("index.db");
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let fetch = |path: &str| {
        let a = get(s.port, path, None, &[]);
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        unescaped(&a.body)
    };
    let listing = fetch("/?all=true");
    let sessions: Vec<String> = listing
        .split("href=\"")
        .skip(1)
        .filter_map(|h| h.split('"').next())
        .filter(|h| h.starts_with("/s/") && h.ends_with(".jsonl"))
        .map(str::to_string)
        .collect();
    assert_eq!(sessions.len(), all.len() / 3, "{listing}");
    let mut pages = vec![
        listing,
        fetch("/"),
        fetch("/?project=%2Fhome%2Fu%2Fsecrets"),
    ];
    for p in &sessions {
        pages.push(fetch(p));
        pages.push(fetch(&format!("{p}/tree")));
    }
    let mut hits = 0;
    for p in &all {
        // (A title's text is the secret as written: no words before it.)
        let before = p
            .text
            .get(..p.at)
            .unwrap_or("")
            .split(|c: char| !c.is_ascii_alphabetic())
            .rfind(|w| w.len() >= 4)
            .unwrap_or("the")
            .to_string();
        let page = fetch(&format!("/search?q={}", enc(&before)));
        hits += usize::from(page.contains("class=\"hit"));
        pages.push(page);
        // The secret itself finds nothing (the page echoes the query, so its text is not
        // checked).
        let first_line = p.secret.lines().next().unwrap_or_default();
        let own = fetch(&format!("/search?q={}&literal=true", enc(first_line)));
        assert!(
            !own.contains("class=\"hit"),
            "{}: the secret finds a hit",
            p.rule
        );
    }
    assert!(hits > 0, "the words beside the secrets find their sessions");
    let text = pages.join("\n");
    let leaked: Vec<(&str, &str)> = all
        .iter()
        .flat_map(|p| p.secret.split('\n').map(move |piece| (p.rule, piece)))
        .filter(|(_, piece)| {
            piece.len() >= 8 && !piece.starts_with("-----") && text.contains(piece)
        })
        .collect();
    assert!(leaked.is_empty(), "secrets on the pages: {leaked:?}");
    assert!(
        text.contains("[redacted: "),
        "the pages say where a secret was"
    );
}

/// Issue 34 in the browser: a tool call's path on a session page links to the file's history
/// (a relative path taken as the session's cwd took it), which names the session at the entry
/// with its change.
#[test]
fn a_tool_calls_file_links_to_its_history() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let project = root.join("--home-u-proj--");
    std::fs::create_dir_all(&project).unwrap();
    let name = "2026-03-02T08-00-00-000Z_bbbbbbbb-0000-7000-8000-000000000002.jsonl";
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "bbbbbbbb-0000-7000-8000-000000000002", "timestamp": "2026-03-02T08:00:00.000Z", "cwd": "/home/u/proj"}),
        serde_json::json!({"type": "message", "id": "u1", "parentId": null, "timestamp": "2026-03-02T08:01:00.000Z",
            "message": {"role": "user", "timestamp": 1772438460000u64, "content": "rename the variable"}}),
        serde_json::json!({"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-03-02T08:02:00.000Z",
            "message": {"role": "assistant", "timestamp": 1772438520000u64, "provider": "p", "model": "m",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0}},
                "content": [{"type": "toolCall", "id": "c1", "name": "edit",
                    "arguments": {"path": "src/a.rs", "oldText": "let old = 1;", "newText": "let new = 1;"}}]}}),
        serde_json::json!({"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2026-03-02T08:02:01.000Z",
            "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "edit", "isError": false,
                "timestamp": 1772438521000u64, "content": [{"type": "text", "text": "edited"}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(project.join(name), text).unwrap();
    let db = tmp.path().join("index.db");
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let page = get(s.port, &format!("/s/{name}"), None, &[]);
    let link = format!("/files?path=src%2Fa.rs&amp;session={name}");
    assert!(page.body.contains(&link), "{}", page.body);
    let history = get(
        s.port,
        &format!("/files?path=src%2Fa.rs&session={name}"),
        None,
        &[],
    );
    assert_eq!(history.status, 200, "{}", history.body);
    assert!(
        history.body.contains("/home/u/proj/src/a.rs"),
        "{}",
        history.body
    );
    assert!(
        history.body.contains(&format!("/s/{name}?entry=a1#e-a1")),
        "{}",
        history.body
    );
    assert!(history.body.contains("+1 -1"), "{}", history.body);
    assert!(history.body.contains("let new = 1;"), "{}", history.body);
    let none = get(s.port, "/files?path=%2Fnowhere", None, &[]);
    assert!(none.body.contains("no session touched this file"));
    assert_eq!(get(s.port, "/files", None, &[]).status, 400);
}

/// Search by meaning on the page: without a model (none in these tests) it says so in one line
/// instead of failing the page, and the default search still ranks by words.
#[test]
fn search_by_meaning_without_a_model_says_so_and_words_still_work() {
    let (_dir, root, db) = corpus();
    let s = serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let page = get(s.port, "/search?q=alert&meaning=true", None, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("class=\"error\""), "{}", page.body);
    let words = get(s.port, "/search?q=alert", None, &[]);
    assert!(words.body.contains("class=\"hit"), "{}", words.body);
}
