//! The huge-lines row: a session whose user message carries one text of `size` bytes and whose
//! next message carries a base64 image of `size` bytes (inline screenshots and extension state
//! snapshots make such lines), written the way pi writes lines; then the peak RSS of a cold
//! `sync` of it alone and of `context` at its leaf.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

/// Writes the session under `root/--huge-lines--/`; returns its path.
pub fn write_session(root: &Path, size: usize) -> Result<PathBuf> {
    let dir = root.join("--huge-lines--");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("2026-01-01T00-00-00-000Z_0000aaaa-0000-4000-8000-000000000001.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    writeln!(
        out,
        r#"{{"type":"session","version":3,"id":"0000aaaa-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/huge/lines"}}"#
    )?;
    // Words and escaped newlines, as a pasted log or a tool's output reads.
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
    ];
    let mut text = String::with_capacity(size + 64);
    let mut i = 0usize;
    while text.len() < size {
        text.push_str(words[i % words.len()]);
        text.push_str(if i % 12 == 11 { "\\n" } else { " " });
        text.push_str(&(i % 9973).to_string());
        text.push(' ');
        i += 1;
    }
    writeln!(
        out,
        r#"{{"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1767225601000}}}}"#
    )?;
    drop(text);
    let image: String = "iVBORw0KGgoAAAANSUhEUgAA"
        .chars()
        .cycle()
        .take(size)
        .collect();
    writeln!(
        out,
        r#"{{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":[{{"type":"image","data":"{image}","mimeType":"image/png"}},{{"type":"text","text":"what is on this screenshot?"}}],"timestamp":1767225602000}}}}"#
    )?;
    writeln!(
        out,
        r#"{{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"A terminal."}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":10,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":13,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":1767225603000}}}}"#
    )?;
    out.flush()?;
    Ok(path)
}

/// Peak RSS of a cold `sync` of the huge-lines session alone, then of `context --json` and the
/// readable `context` at its leaf.
pub fn row(b: &crate::Bench) -> Result<crate::Row> {
    let size_mb = b.args.huge_line_mb;
    let root = b.work.join("lines-root");
    let _ = std::fs::remove_dir_all(&root);
    let path = write_session(&root, size_mb << 20)?;
    let db = b.work.join("lines.db");
    crate::sync::remove_index(&db);
    let pidx = |rest: &[&str]| {
        let mut argv = crate::strings(&[&b.pidx, "--root", &root.display().to_string(), "--db"]);
        argv.push(db.display().to_string());
        argv.extend(crate::strings(rest));
        argv
    };
    eprintln!("bench: sync and context of a {size_mb} MB text line and a {size_mb} MB image line");
    let (sync_ms, sync_rss) = crate::time_with_rss(&pidx(&["sync"]), &b.work)?;
    let file = path.display().to_string();
    let context = |json: bool| {
        let mut argv = vec!["--no-sync", "context", &file, "--leaf", "a0000003"];
        argv.extend(json.then_some("--json"));
        crate::time_with_rss(&pidx(&argv), &b.work)
    };
    let (ctx_ms, ctx_rss) = context(true)?;
    let (text_ms, text_rss) = context(false)?;
    std::fs::remove_dir_all(&root)?;
    crate::sync::remove_index(&db);
    let rss = |r: Option<f64>| r.map_or("not measured".into(), |r| format!("{r:.0} MB"));
    Ok(crate::Row::new(
        format!("peak RSS, a file with a {size_mb} MB text line and a {size_mb} MB image line"),
        format!(
            "sync {} ({:.1} s), context --json {} ({:.1} s), context {} ({:.1} s)",
            rss(sync_rss),
            sync_ms / 1000.0,
            rss(ctx_rss),
            ctx_ms / 1000.0,
            rss(text_rss),
            text_ms / 1000.0
        ),
        "<= 200 MB RSS",
    ))
}
