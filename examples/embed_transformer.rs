//! Embeds texts with the whole sentence-transformer (`pidx::meaning::transformer`), for the
//! real evaluation's side-by-side of the full model and the static one distilled from it
//! (tests/meaning/real/transformer.py). Reads JSON lines `{"id": ..., "text": ...}` on stdin
//! and writes `{"id": ..., "v": [...]}` in the same order (texts with no token are left out).
//! Usage: embed_transformer --model ZIP_OR_DIR [--threads N]

use std::io::{BufRead, Write};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let Some(model) = flag("--model") else {
        eprintln!("usage: embed_transformer --model ZIP_OR_DIR [--threads N]");
        std::process::exit(2);
    };
    let threads: usize = flag("--threads").and_then(|t| t.parse().ok()).unwrap_or(2);
    let t = pidx::meaning::transformer::Transformer::load(std::path::Path::new(&model))
        .unwrap_or_else(|e| {
            eprintln!("embed_transformer: {e}");
            std::process::exit(2);
        });
    let lines: Vec<serde_json::Value> = std::io::stdin()
        .lock()
        .lines()
        .map(|l| serde_json::from_str(&l.expect("stdin")).expect("a JSON line"))
        .collect();
    let started = std::time::Instant::now();
    let per = lines.len().div_ceil(threads.max(1)).max(1);
    let out: Vec<Vec<Option<Vec<f32>>>> = std::thread::scope(|s| {
        let t = &t;
        let handles: Vec<_> = lines
            .chunks(per)
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|l| t.embed(l["text"].as_str().unwrap_or("")))
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a thread"))
            .collect()
    });
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    for (l, v) in lines.iter().zip(out.into_iter().flatten()) {
        if let Some(v) = v {
            let v: Vec<f32> = v.iter().map(|x| (x * 1e5).round() / 1e5).collect();
            writeln!(stdout, "{}", serde_json::json!({"id": l["id"], "v": v})).expect("stdout");
        }
    }
    eprintln!(
        "embed_transformer: {} texts in {:.1} s",
        lines.len(),
        started.elapsed().as_secs_f64()
    );
}
