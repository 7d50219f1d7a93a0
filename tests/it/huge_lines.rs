//! Lines of tens of MB (a pasted log, an inline screenshot): a text over the 16 MB mark is taken
//! out of its line and kept once (`pi::huge`, the `big_texts` table), and `context --json`
//! streams messages cut from their lines. Everything must give exactly what it gives for
//! ordinary lines.

use crate::common;

use std::path::Path;

use serde_json::Value;

const ID: &str = "0000aaaa-0000-4000-8000-000000000001";

/// A session whose first user text is `size` bytes of words ending in `last_word`, then an
/// image line of `size` bytes, then an assistant reply.
fn write_session(root: &Path, size: usize, last_word: &str) -> std::path::PathBuf {
    let dir = root.join("--huge--");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl"));
    let mut text = String::with_capacity(size + 64);
    let mut i = 0;
    while text.len() < size {
        text.push_str(["alpha ", "bravo\\n", "charlie ", "delta "][i % 4]);
        i += 1;
    }
    text.push_str("bravo\\ncharlie delta ");
    text.push_str(last_word);
    let image = "iVBORw0KGgo".repeat(size / 11);
    let lines = [
        format!(r#"{{"type":"session","version":3,"id":"{ID}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/huge"}}"#),
        format!(r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1767225601000}}}}"#),
        format!(r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":[{{"type":"image","data":"{image}","mimeType":"image/png"}},{{"type":"text","text":"what is this?"}}],"timestamp":1767225602000}}}}"#),
        r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"A terminal."}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"stop","timestamp":1767225603000}}"#.to_string(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// The entry ids of `pidx search` hits.
fn hits(db: &Path, root: &Path, query: &[&str]) -> Vec<String> {
    let out = common::pidx(db, root)
        .args(["--json", "search"])
        .args(query)
        .output()
        .unwrap();
    // Exit 1 is "no hits".
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{query:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| h["entryId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_huge_text_is_searchable_and_its_context_is_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let db = tmp.path().join("index.db");
    let path = write_session(&root, 17 << 20, "zanzibarword");
    common::pidx(&db, &root).arg("sync").assert().success();

    assert_eq!(hits(&db, &root, &["zanzibarword"]), ["a1"]);
    assert_eq!(hits(&db, &root, &["\"delta zanzibarword\""]), ["a1"]);
    assert_eq!(
        hits(&db, &root, &["--literal", "bravo\ncharlie delta zanzibar"]),
        ["a1"]
    );
    assert_eq!(hits(&db, &root, &["terminal"]), ["a3"]);

    // The text went the huge way (kept once, outside the entry row), and every reader of the
    // entry text and of the first message gets it whole.
    let file = std::fs::read_to_string(&path).unwrap();
    let line = |n: usize| serde_json::from_str::<Value>(file.lines().nth(n).unwrap()).unwrap();
    let first = line(1)["message"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.ends_with("delta zanzibarword") && first.contains("bravo\ncharlie"));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let big: Vec<(i64, i64)> = common::pairs(&conn, "SELECT id < 0, length(body) FROM big_texts");
    assert_eq!(big, [(1, first.len() as i64)]);
    let listed: Value = serde_json::from_slice(
        &common::pidx(&db, &root)
            .args(["--no-sync", "--json", "list", "--all", "--with-text"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(listed[0]["firstMessage"].as_str(), Some(first.as_str()));
    let all_text = format!("{first} what is this? A terminal.");
    assert_eq!(
        listed[0]["allMessagesText"].as_str(),
        Some(all_text.as_str())
    );
    let viewed: String = conn
        .query_row("SELECT first_message FROM v_sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(viewed, first);
    let title = common::pidx(&db, &root)
        .args(["--no-sync", "list", "--all"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&title.stdout).contains("alpha bravo"));
    // The tree cuts each node's text from its start, a huge one's from `big_texts`.
    let tree = common::pidx(&db, &root)
        .args(["--no-sync", "tree", &ID[..8]])
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(tree.contains("a1 user: alpha bravo"), "{tree}");

    // The context is each line's `message`, as pi returns it, whatever its size.
    let out = common::pidx(&db, &root)
        .args(["--no-sync", "--json", "context", &ID[..8]])
        .output()
        .unwrap();
    assert!(out.status.success());
    let ctx: Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = std::fs::read_to_string(&path).unwrap();
    let expected: Vec<Value> = file
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["message"].clone())
        .collect();
    assert_eq!(ctx["messages"].as_array().unwrap(), &expected);
    assert_eq!(ctx["model"]["modelId"], "m");

    // The readable context, printed message by message, is every line of every message.
    let out = common::pidx(&db, &root)
        .args(["--no-sync", "context", &ID[..8]])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut expected = vec!["model p/m · thinking off · 3 messages".to_string()];
    for (role, text) in [
        ("user", first.as_str()),
        ("user", "[image]\nwhat is this?"),
        ("assistant", "A terminal."),
    ] {
        expected.extend([String::new(), format!("── {role} ")]);
        expected.extend(text.lines().map(str::to_string));
    }
    assert!(String::from_utf8(out.stdout).unwrap() == expected.join("\n") + "\n");

    // Rewritten with another huge text: the old one leaves the index, the new one is found.
    write_session(&root, 17 << 20, "quagmire");
    common::pidx(&db, &root).arg("sync").assert().success();
    assert!(hits(&db, &root, &["zanzibarword"]).is_empty());
    assert_eq!(hits(&db, &root, &["quagmire"]), ["a1"]);
    let big: Vec<(i64, i64)> = common::pairs(&conn, "SELECT count(*), sum(id < 0) FROM big_texts");
    assert_eq!(big, [(1, 1)]);
}

/// A tool's huge output: its searchable text is the tool's name and the output, kept once in
/// `big_texts` under its own full-text row, and found by every kind of search.
#[test]
fn a_huge_tool_output_is_searchable() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let db = tmp.path().join("index.db");
    let dir = root.join("--tool--");
    std::fs::create_dir_all(&dir).unwrap();
    let mut output = "compiling crate_x\\n".repeat((17 << 20) / 18);
    output.push_str("error: fn parse_line_tail failed");
    let lines = [
        format!(r#"{{"type":"session","version":3,"id":"{ID}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tool"}}"#),
        r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"build it","timestamp":1767225601000}}"#.to_string(),
        format!(r#"{{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":"{output}"}}],"isError":false,"timestamp":1767225602000}}}}"#),
    ];
    std::fs::write(
        dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
    common::pidx(&db, &root).arg("sync").assert().success();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let big: Vec<(i64, i64)> = common::pairs(&conn, "SELECT id & 7, length(body) FROM big_texts");
    let expected_len = "bash\n".len() + output.len() - output.matches("\\n").count();
    assert_eq!(big, [(3, expected_len as i64)]);
    assert_eq!(hits(&db, &root, &["parse_line_tail"]), ["b2"]);
    assert_eq!(
        hits(&db, &root, &["--literal", "fn parse_line_tail"]),
        ["b2"]
    );
    assert_eq!(hits(&db, &root, &["--literal", "line_tail"]), ["b2"]);
    assert_eq!(hits(&db, &root, &["re:parse_\\w+_tail"]), ["b2"]);
    assert_eq!(hits(&db, &root, &["build"]), ["b1"]);
}
