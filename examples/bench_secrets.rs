//! Measures `pidx::redact`: recall and precision per rule on planted secrets, false positives
//! on a corpus with none, and the detector's throughput.
//!
//! ```text
//! cargo run --release --example bench_secrets -- [--per-rule N] [--seed S] [--corpus DIR]
//! ```
//!
//! Planted: `--per-rule` (default 500) freshly generated secrets of every rule, each inside
//! realistic text with look-alikes around it (`bench_secrets/plant.rs`). A secret is recalled
//! when a finding of its rule covers it whole; a finding is correct when it overlaps a planted
//! secret of its rule; any other finding counts against its rule's precision.
//!
//! Corpus: every string value of every JSONL line under DIR (e.g. `gen_corpus --out DIR
//! --sessions 300 --bytes 60M`, which plants no secret): every finding there is a false
//! positive, listed by rule with a few examples. Throughput is `find` over those strings.

#[path = "bench_secrets/plant.rs"]
mod plant;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pidx::redact::{find, RULES};
use serde_json::Value;

#[derive(Default)]
struct Score {
    planted: usize,
    recalled: usize,
    findings: usize,
    correct: usize,
}

fn main() {
    let mut per_rule = 500;
    let mut seed = 36;
    let mut corpus: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().expect("a value after the flag");
        match a.as_str() {
            "--per-rule" => per_rule = value().parse().expect("--per-rule N"),
            "--seed" => seed = value().parse().expect("--seed S"),
            "--corpus" => corpus = Some(PathBuf::from(value())),
            other => panic!("unknown argument {other}"),
        }
    }
    planted(seed, per_rule);
    if let Some(dir) = corpus {
        on_corpus(&dir);
    }
}

fn planted(seed: u64, per_rule: usize) {
    let all = plant::plant_all(seed, per_rule);
    let mut scores: BTreeMap<&str, Score> = RULES.iter().map(|r| (*r, Score::default())).collect();
    let mut misses: Vec<String> = Vec::new();
    let mut wrong: Vec<String> = Vec::new();
    // The doors look for secrets in a raw JSON line before parsing it (`may_hold`): a planted
    // secret it does not see there would leave unredacted.
    let unseen: Vec<&str> = all
        .iter()
        .filter(|p| !pidx::redact::may_hold(&serde_json::to_string(&p.text).unwrap()))
        .map(|p| p.rule)
        .collect();
    let bytes: usize = all.iter().map(|p| p.text.len()).sum();
    let started = Instant::now();
    let found: Vec<_> = all.iter().map(|p| find(&p.text)).collect();
    let took = started.elapsed();
    for (p, found) in all.iter().zip(&found) {
        let end = p.at + p.secret.len();
        scores.get_mut(p.rule).unwrap().planted += 1;
        if found
            .iter()
            .any(|f| f.rule == p.rule && f.start <= p.at && f.end >= end)
        {
            scores.get_mut(p.rule).unwrap().recalled += 1;
        } else if misses.iter().filter(|m| m.starts_with(p.rule)).count() < 3 {
            misses.push(format!("{}: {:?}", p.rule, p.text));
        }
        for f in found {
            let s = scores.get_mut(f.rule).unwrap();
            s.findings += 1;
            if f.rule == p.rule && f.start < end && f.end > p.at {
                s.correct += 1;
            } else if wrong.iter().filter(|w| w.starts_with(f.rule)).count() < 3 {
                wrong.push(format!(
                    "{} found {:?} in a {} text",
                    f.rule,
                    &p.text[f.start..f.end],
                    p.rule
                ));
            }
        }
    }
    println!(
        "planted secrets: {} ({per_rule} per rule, seed {seed}), {:.1} MB of text, {:.1} MB/s",
        all.len(),
        mb(bytes),
        mb(bytes) / took.as_secs_f64()
    );
    println!("| rule | planted | recall | findings | precision |");
    println!("|---|---:|---:|---:|---:|");
    let (mut tp, mut rec, mut fnd, mut pl) = (0, 0, 0, 0);
    for (rule, s) in &scores {
        println!(
            "| {rule} | {} | {} | {} | {} |",
            s.planted,
            pct(s.recalled, s.planted),
            s.findings,
            pct(s.correct, s.findings)
        );
        (tp, rec, fnd, pl) = (
            tp + s.correct,
            rec + s.recalled,
            fnd + s.findings,
            pl + s.planted,
        );
    }
    println!(
        "| all | {pl} | {} | {fnd} | {} |",
        pct(rec, pl),
        pct(tp, fnd)
    );
    println!(
        "planted secrets not seen in their raw JSON: {} {unseen:?}",
        unseen.len()
    );
    for m in misses {
        println!("missed: {m}");
    }
    for w in wrong {
        println!("wrong: {w}");
    }
}

fn on_corpus(dir: &Path) {
    let mut strings: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut files = 0;
    for path in walk(dir) {
        let Ok(body) = std::fs::read_to_string(&path) else {
            continue;
        };
        files += 1;
        for line in body.lines() {
            lines.push(line.to_string());
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                collect(v, &mut strings);
            }
        }
    }
    // What `push` pays on every raw entry line before it parses any: `may_hold`.
    let raw: usize = lines.iter().map(String::len).sum();
    let started = Instant::now();
    let holding = lines.iter().filter(|l| pidx::redact::may_hold(l)).count();
    let took_raw = started.elapsed();
    println!(
        "raw JSONL lines: {} ({:.1} MB), may_hold {:.1} MB/s, {holding} lines would be parsed",
        lines.len(),
        mb(raw),
        mb(raw) / took_raw.as_secs_f64()
    );
    let bytes: usize = strings.iter().map(String::len).sum();
    let started = Instant::now();
    let found: Vec<_> = strings.iter().map(|s| find(s)).collect();
    let took = started.elapsed();
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    let mut examples: Vec<String> = Vec::new();
    for (s, found) in strings.iter().zip(&found) {
        for f in found {
            *by_rule.entry(f.rule).or_default() += 1;
            if examples.len() < 20 {
                let from = s[..f.start]
                    .char_indices()
                    .rev()
                    .nth(30)
                    .map_or(0, |(i, _)| i);
                examples.push(format!(
                    "{}: {:?} in …{:?}",
                    f.rule,
                    &s[f.start..f.end],
                    &s[from..f.start]
                ));
            }
        }
    }
    let total: usize = by_rule.values().sum();
    println!(
        "corpus {}: {files} files, {} strings, {:.1} MB of text; detector {:.1} MB/s",
        dir.display(),
        strings.len(),
        mb(bytes),
        mb(bytes) / took.as_secs_f64()
    );
    println!("false positives: {total} {by_rule:?}");
    for e in examples {
        println!("  {e}");
    }
}

fn collect(v: Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.into_iter().for_each(|x| collect(x, out)),
        Value::Object(m) => m.into_iter().for_each(|(_, x)| collect(x, out)),
        _ => {}
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    out
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        return "-".into();
    }
    format!("{:.2}%", 100.0 * n as f64 / of as f64)
}
