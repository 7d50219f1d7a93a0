//! File history through the other doors (issue 34): the MCP server's `file_history` and
//! `blame` tools over stdio JSON-RPC, and `pidx pick --file`. Fixtures are `files.rs`'s.

use serde_json::{json, Value};

use super::files::{fixture, Fixture, Session, T0};

/// Calls `pidx mcp` over stdio: initialize, then each (tool, arguments); the answers' values.
fn mcp_calls(f: &Fixture, calls: &[(&str, Value)]) -> Vec<Value> {
    use std::io::Write;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pidx"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("HOME", f.tmp.path())
        .env("PIDX_CONFIG", f.tmp.path().join("no-config.toml"))
        .arg("--db")
        .arg(f.tmp.path().join("index.db"))
        .arg("--root")
        .arg(&f.root)
        .arg("mcp")
        .current_dir(&f.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (i, (name, args)) in calls.iter().enumerate() {
        input.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                          "params": {"name": name, "arguments": args}}),
        );
    }
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answers = vec![Value::Null; calls.len()];
    for msg in &input {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        let Some(id) = msg["id"].as_u64() else {
            continue;
        };
        // Each request's answer before the next request.
        loop {
            let mut line = String::new();
            assert!(std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0);
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"].as_u64() == Some(id) {
                if id > 0 {
                    answers[id as usize - 1] = v["result"].clone();
                }
                break;
            }
        }
    }
    drop(stdin);
    child.wait().unwrap();
    answers
}

#[test]
fn mcp_file_history_and_blame_answer_in_bounded_pages() {
    let f = fixture();
    let cwd = f.cwd();
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    let content: String = (1..=300).map(|i| format!("line number {i}\n")).collect();
    a.write("big.txt", &content);
    a.edit("big.txt", "line number 7\n", "line seven\n");
    a.save(&f.root, "a");
    let got = mcp_calls(
        &f,
        &[
            ("file_history", json!({"path": "big.txt"})),
            ("blame", json!({"path": "big.txt", "start": 6, "end": 8})),
            ("blame", json!({"path": "big.txt", "max_chars": 1000})),
            ("blame", json!({"path": "no/such/file"})),
        ],
    );
    let history = &got[0]["structuredContent"];
    let touches = history["touches"].as_array().unwrap();
    assert_eq!(touches.len(), 2, "{history}");
    assert_eq!(touches[0]["kind"], "edit");
    assert_eq!(touches[0]["diff"], json!(["-line number 7", "+line seven"]));
    let three = &got[1]["structuredContent"];
    let kinds: Vec<&str> = three["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["by"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["write", "edit", "write"], "{three}");
    let paged = &got[2]["structuredContent"];
    assert_eq!(paged["truncated"], true, "{paged}");
    assert!(paged["nextCursor"].as_str().unwrap().starts_with("blame:"));
    assert!(paged.to_string().len() < 2000, "{paged}");
    assert_eq!(got[3]["isError"], true, "{}", got[3]);
}

#[test]
fn pick_print_keeps_only_sessions_that_changed_the_file() {
    let f = fixture();
    let cwd = f.cwd();
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("a.rs", "fn a() {}\n");
    let a_path = a.save(&f.root, "a");
    let mut b = Session::new("019a0000-0000-7000-8000-00000000000b", &cwd, T0 + 1000);
    b.write("b.rs", "fn b() {}\n");
    b.call("read", json!({"path": "a.rs"}), Some(false));
    let b_path = b.save(&f.root, "b");
    for (file, want) in [("a.rs", &a_path), ("b.rs", &b_path)] {
        let (code, out, err) = f.run(&["pick", "--print", "doing", "--file", file]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), want.to_string_lossy(), "--file {file}: {err}");
    }
    // A file no session changed: nothing to pick.
    let (code, _, _) = f.run(&["pick", "--print", "doing", "--file", "c.rs"]);
    assert_eq!(code, 1);
}
