//! Runs `pidx::redact` over texts given one JSON object a line on stdin (`{"text": ...,
//! "secrets": [...]}`, other fields passed through) and writes each object back with what the
//! detector did: `found` (each finding's rule and the text it covers) and `redacted` (every
//! listed secret that the text holds is gone after `redact`; with no secret listed, whether
//! anything was found). `benches/secrets/run.py` scores the public scanners' test cases with it
//! and shows what matched where `pidx secrets` reports a finding on ordinary code.
//!
//! ```text
//! cargo run --release --example secrets_cases < cases.jsonl > scored.jsonl
//! ```

use std::io::{BufRead, Write};

use pidx::redact::{find, redact};
use serde_json::{json, Value};

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.expect("reading stdin");
        let mut case: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("secrets_cases: line {}: {e}; skipped", n + 1);
                continue;
            }
        };
        let text = case["text"].as_str().unwrap_or_default().to_owned();
        let found: Vec<Value> = find(&text)
            .iter()
            .map(|f| json!([f.rule, &text[f.start..f.end]]))
            .collect();
        let clean = redact(&text);
        let listed: Vec<&str> = case["secrets"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // A scanner may report a pair as one string (`KEYID:SECRET`): then each part the text
        // holds must go.
        let held: Vec<&str> = listed
            .into_iter()
            .flat_map(|s| {
                if text.contains(s) {
                    vec![s]
                } else {
                    s.split(':').filter(|p| p.len() >= 8).collect()
                }
            })
            .filter(|s| !s.is_empty() && text.contains(s))
            .collect();
        let redacted = if held.is_empty() {
            !found.is_empty()
        } else {
            held.iter().all(|s| !clean.contains(s))
        };
        case["found"] = Value::Array(found);
        case["redacted"] = Value::Bool(redacted);
        writeln!(out, "{case}").expect("writing stdout");
    }
}
