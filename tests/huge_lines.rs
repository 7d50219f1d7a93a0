//! Lines of tens of MB (a pasted log, an inline screenshot): a text over the 16 MB mark goes
//! into the full-text index without the staging table, and `context --json` streams messages
//! cut from their lines. Both must give exactly what they give for ordinary lines.

mod common;

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

    // Rewritten with another huge text: the old one leaves the index, the new one is found.
    write_session(&root, 17 << 20, "quagmire");
    common::pidx(&db, &root).arg("sync").assert().success();
    assert!(hits(&db, &root, &["zanzibarword"]).is_empty());
    assert_eq!(hits(&db, &root, &["quagmire"]), ["a1"]);
}
