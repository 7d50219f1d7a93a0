//! The whole sentence-transformer's two forward passes side by side in one run: the f32
//! reference (`PIDX_TRANSFORMER=f32`) and the path this CPU gets by default (int8 with AVX-512
//! VNNI where it has it). Reads JSON lines `{"text": ...}` on stdin (English prose, e.g.
//! paragraphs of /usr/share/doc/*/README*); prints the cosine of the two vectors on the first
//! `--texts` texts, then the CPU time (this thread's, from /proc, not wall time: the machine
//! may be shared) per window of ~128 and ~256 tokens built from the rest, one at a time and
//! batched. Single-threaded. Usage: bench_transformer --model ZIP_OR_DIR [--texts N]
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

    let (mut cos, mut tokens, mut t_old, mut t_new) = (Vec::new(), 0, 0.0, 0.0);
    for t in &texts[..n_texts] {
        let (a, ms_old) = timed(|| old.embed(t));
        let (b, ms_new) = timed(|| new.embed(t));
        cos.push(cosine(&a.expect("a vector"), &b.expect("a vector")));
        tokens += old.token_count(t).min(254) + 2;
        (t_old, t_new) = (t_old + ms_old, t_new + ms_new);
    }
    let refs: Vec<&str> = texts[..n_texts].iter().map(String::as_str).collect();
    let batched = median((0..repeat).map(|_| timed(|| new.embed_many(&refs)).1).collect());
    println!(
        "cosine on {n_texts} texts ({:.0} tokens on average): min {:.4}, median {:.4}; \
         CPU ms per 1,000 tokens: reference one text at a time {:.0}, default one at a time \
         {:.1} ({:.1}x), default batched {:.1} ({:.1}x)",
        tokens as f64 / n_texts as f64,
        cos.iter().copied().fold(f32::INFINITY, f32::min),
        median(cos.iter().map(|&c| c as f64).collect()),
        t_old / tokens as f64 * 1e3,
        t_new / tokens as f64 * 1e3,
        t_old / t_new,
        batched / tokens as f64 * 1e3,
        t_old / batched,
    );

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
        let refs: Vec<&str> = windows.iter().map(String::as_str).collect();
        let tokens: usize = refs.iter().map(|w| old.token_count(w).min(254) + 2).sum();
        let mut per_old = Vec::new();
        let mut per_new = Vec::new();
        let mut cos = Vec::new();
        for w in &refs {
            let (a, ms) = timed(|| old.embed(w));
            per_old.push(ms);
            let runs: Vec<(Option<Vec<f32>>, f64)> =
                (0..repeat).map(|_| timed(|| new.embed(w))).collect();
            cos.push(cosine(
                &a.expect("a vector"),
                runs[0].0.as_ref().expect("a vector"),
            ));
            per_new.push(median(runs.iter().map(|r| r.1).collect()));
        }
        let batched = median(
            (0..repeat)
                .map(|_| timed(|| new.embed_many(&refs)).1)
                .collect(),
        );
        let (sum_old, sum_new) = (per_old.iter().sum::<f64>(), per_new.iter().sum::<f64>());
        let k = 1e3 / tokens as f64;
        println!(
            "{} windows of ~{target} tokens ({:.0} on average), CPU ms (median per window | per \
             1,000 tokens): reference {:.1} | {:.0}; default one at a time {:.2} | {:.1} ({:.1}x); \
             default batched {:.2} | {:.1} ({:.1}x); cosine min {:.4}",
            refs.len(),
            tokens as f64 / refs.len() as f64,
            median(per_old.clone()),
            sum_old * k,
            median(per_new.clone()),
            sum_new * k,
            sum_old / sum_new,
            batched / refs.len() as f64,
            batched * k,
            sum_old / batched,
            cos.iter().copied().fold(f32::INFINITY, f32::min),
        );
    }
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

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
    dot(a, b) / (dot(a, a) * dot(b, b)).sqrt()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
