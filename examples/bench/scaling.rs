//! The scaling table: `bench --compact --rows-out FILE` saves one corpus size's rows (and the
//! load average before and after) as JSON; `bench --merge FILE...` prints them side by side,
//! one column per size, one line per measurement.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use crate::Row;

/// What one size's run saw, as saved for the merge.
pub struct Saved<'a> {
    pub files: usize,
    pub bytes: u64,
    pub entries: Option<i64>,
    pub runs: usize,
    pub load_before: &'a str,
    pub rows: &'a [Row],
    pub notes: &'a [String],
}

/// `/proc/loadavg`'s three averages, or "unknown".
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// A row as one cell: pidx's value, then the baseline and the ratio when there is one.
fn cell(r: &Row) -> String {
    if r.baseline == "-" {
        r.pidx.clone()
    } else if r.ratio == "-" {
        format!("{}; {}", r.pidx, r.baseline)
    } else {
        format!("{}; {} = **{}**", r.pidx, r.baseline, r.ratio)
    }
}

pub fn save(path: &Path, s: &Saved) -> Result<()> {
    let rows: Vec<Value> = s
        .rows
        .iter()
        .map(|r| json!({"what": r.what, "cell": cell(r), "goal": r.goal}))
        .collect();
    let v = json!({
        "files": s.files,
        "bytes": s.bytes,
        "entries": s.entries,
        "runs": s.runs,
        "load_before": s.load_before,
        "load_after": loadavg(),
        "rows": rows,
        "notes": s.notes,
    });
    std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
        .with_context(|| format!("writing {}", path.display()))
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Prints the merged markdown table of the saved sizes, in the order given.
pub fn merge(paths: &[PathBuf]) -> Result<()> {
    let mut sizes = Vec::new();
    for p in paths {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let v: Value = serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?;
        sizes.push(v);
    }
    let mut whats: Vec<(String, String)> = Vec::new();
    for v in &sizes {
        for r in v["rows"].as_array().into_iter().flatten() {
            let what = r["what"].as_str().unwrap_or_default().to_string();
            if whats.iter().all(|(w, _)| *w != what) {
                let goal = r["goal"].as_str().unwrap_or_default().to_string();
                whats.push((what, goal));
            }
        }
    }
    let header: Vec<String> = sizes
        .iter()
        .map(|v| {
            let entries = v["entries"]
                .as_u64()
                .map_or(String::new(), |e| format!(", {} entries", thousands(e)));
            format!(
                "{} sessions, {:.2} GB{entries}",
                thousands(v["files"].as_u64().unwrap_or(0)),
                v["bytes"].as_f64().unwrap_or(0.0) / 1e9
            )
        })
        .collect();
    println!("| what | {} | goal |", header.join(" | "));
    println!("|---|{}---|", "---|".repeat(sizes.len()));
    for (what, goal) in &whats {
        let cells: Vec<String> = sizes
            .iter()
            .map(|v| {
                v["rows"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|r| r["what"].as_str() == Some(what))
                    .and_then(|r| r["cell"].as_str())
                    .unwrap_or("not run")
                    .to_string()
            })
            .collect();
        println!("| {what} | {} | {goal} |", cells.join(" | "));
    }
    println!();
    for (v, h) in sizes.iter().zip(&header) {
        println!(
            "- {h}: pidx rows median of up to {} runs after a warm-up; load average (1, 5, 15 min) {} before, {} after",
            v["runs"], v["load_before"].as_str().unwrap_or("?"), v["load_after"].as_str().unwrap_or("?")
        );
        for n in v["notes"].as_array().into_iter().flatten() {
            println!("  - {}", n.as_str().unwrap_or_default());
        }
    }
    Ok(())
}
