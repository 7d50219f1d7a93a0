//! The whole sentence-transformer's two forward passes side by side in one run: the f32
//! reference (`PIDX_TRANSFORMER=f32`) and the path this CPU gets by default (int8 with AVX-512
//! VNNI where it has it). Reads JSON lines `{"text": ...}` on stdin (English prose, e.g.
//! paragraphs of /usr/share/doc/*/README*); prints the cosine of the two vectors on the first
//! `--texts` texts, then the CPU time (this thread's, from /proc, not wall time: the machine
//! may be shared) of those texts and of windows of ~128 and ~256 tokens built from the rest,
//! one at a time and batched. Single-threaded. Usage: bench_transformer --model ZIP_OR_DIR [--texts N]
//! [--windows N] [--repeat N]

use std::io::BufRead;

use pidx_core::meaning::transformer::Transformer;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let num =
        |name: &str, default: usize| flag(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    let Some(model) = flag("--model") else {
        eprintln!(
            "usage: bench_transformer --model ZIP_OR_DIR [--texts N] [--windows N] [--repeat N]"
        );
        std::process::exit(2);
    };
    let (n_texts, n_windows, repeat) = (
        num("--texts", 200),
        num("--windows", 12),
        num("--repeat", 3),
    );
    let load = |reference: bool| {
        // Read once, at load: set for the reference, cleared for the default path.
        if reference {
            std::env::set_var("PIDX_TRANSFORMER", "f32");
        } else {
            std::env::remove_var("PIDX_TRANSFORMER");
        }
        Transformer::load(std::path::Path::new(&model)).unwrap_or_else(|e| {
            eprintln!("bench_transformer: {e}");
            std::process::exit(2);
        })
    };
    let (old, new) = (load(true), load(false));
    let texts: Vec<String> = std::io::stdin()
        .lock()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(&l.expect("stdin")).expect("a JSON line")
        })
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .filter(|t| old.token_count(t) > 0)
        .collect();
    let n_texts = n_texts.min(texts.len());
    let texts_set: Vec<&str> = texts[..n_texts].iter().map(String::as_str).collect();
    let cos: Vec<f64> = texts_set
        .iter()
        .map(|t| {
            cosine(
                &old.embed(t).expect("a vector"),
                &new.embed(t).expect("a vector"),
            )
        })
        .collect();
    println!(
        "cosine of the two vectors on {n_texts} texts: min {:.4}, median {:.4}",
        cos.iter().copied().fold(f64::INFINITY, f64::min),
        median(cos.clone()),
    );
    report(&format!("{n_texts} texts"), &old, &new, &texts_set, repeat);

    let words: Vec<&str> = texts[n_texts..]
        .iter()
        .flat_map(|t| t.split_whitespace())
        .collect();
    let mut from = 0;
    for target in [128, 256] {
        let mut windows = Vec::new();
        while windows.len() < n_windows && from < words.len() {
            let mut to = from;
            while to < words.len() && old.token_count(&words[from..to].join(" ")) + 2 < target {
                to += 1;
            }
            windows.push(words[from..to].join(" "));
            from = to;
        }
        let set: Vec<&str> = windows.iter().map(String::as_str).collect();
        report(
            &format!("{} windows of ~{target} tokens", set.len()),
            &old,
            &new,
            &set,
            repeat,
        );
    }
}

/// CPU time of `set` through the reference one text at a time and the default path one at a
/// time and batched: the median of `repeat` runs of the whole set, per text and per 1,000
/// tokens (the kernel counts thread time in 4 ms ticks here, too coarse for one window).
fn report(name: &str, old: &Transformer, new: &Transformer, set: &[&str], repeat: usize) {
    let tokens: usize = set.iter().map(|t| old.token_count(t).min(254) + 2).sum();
    let run = |f: &dyn Fn()| median((0..repeat).map(|_| timed(f).1).collect());
    let reference = run(&|| set.iter().for_each(|t| drop(old.embed(t))));
    let single = run(&|| set.iter().for_each(|t| drop(new.embed(t))));
    let batched = run(&|| drop(new.embed_many(set)));
    let line = |ms: f64| {
        format!(
            "{:.2} ms/text, {:.1} ms/1k tokens ({:.1}x)",
            ms / set.len() as f64,
            ms * 1e3 / tokens as f64,
            reference / ms
        )
    };
    println!(
        "{name} ({:.0} tokens on average), CPU: reference {}; default one at a time {}; \
         default batched {}",
        tokens as f64 / set.len() as f64,
        line(reference),
        line(single),
        line(batched),
    );
}

/// `f()` and the CPU milliseconds this thread spent in it.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = thread_cpu_ns();
    let out = f();
    (out, (thread_cpu_ns() - start) as f64 / 1e6)
}

/// This thread's CPU time: the first field of /proc/thread-self/schedstat, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .expect("/proc/thread-self/schedstat (Linux)")
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot = |x: &[f32], y: &[f32]| {
        x.iter()
            .zip(y)
            .map(|(&p, &q)| p as f64 * q as f64)
            .sum::<f64>()
    };
    dot(a, b) / (dot(a, a) * dot(b, b)).sqrt()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
