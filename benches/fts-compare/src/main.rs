//! fts-compare: measures full-text engines side by side for pidx (issue 39). A standalone
//! project (its own workspace): pidx's build and CI never compile it. See run.sh and
//! docs/search.md, "Choosing the engine".
//!
//!   fts-compare extract --db INDEX.db --dir WORK      texts out of a pidx index (read-only)
//!   fts-compare build --engine tantivy|own|fts5 --dir WORK [--batch-mb 8] [--threads 1]
//!   fts-compare query --dir WORK --db INDEX.db [--runs 20] [--corpus SESSIONS]

mod brute;
mod dump;
mod fts5;
mod own;
mod rank;
mod tant;
mod tok;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use dump::Dump;
use rank::{Kind, Q};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn dir_size(p: &Path) -> u64 {
    if p.is_file() {
        return p.metadata().map(|m| m.len()).unwrap_or(0);
    }
    std::fs::read_dir(p)
        .map(|rd| rd.flatten().map(|e| dir_size(&e.path())).sum())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(arg(&args, "--dir").expect("--dir WORK"));
    match args.first().map(String::as_str) {
        Some("extract") => {
            let db = PathBuf::from(arg(&args, "--db").expect("--db INDEX"));
            std::fs::create_dir_all(&dir).unwrap();
            let t = Instant::now();
            let (n, text, jsonl) = dump::extract(&db, &dir.join("texts.bin")).unwrap();
            std::fs::write(dir.join("jsonl_bytes"), jsonl.to_string()).unwrap();
            println!(
                "{{\"texts\":{n},\"text_mb\":{:.1},\"jsonl_mb\":{:.1},\"secs\":{:.1}}}",
                text as f64 / 1e6,
                jsonl as f64 / 1e6,
                t.elapsed().as_secs_f64()
            );
        }
        Some("build") => build(&args, &dir),
        Some("query") => query(&args, &dir),
        _ => eprintln!("usage: fts-compare extract|build|query --dir WORK ... (see main.rs)"),
    }
}

fn build(args: &[String], dir: &Path) {
    let engine = arg(args, "--engine").expect("--engine tantivy|own|fts5");
    let batch = arg(args, "--batch-mb").map_or(8, |v| v.parse::<u64>().unwrap()) << 20;
    let threads = arg(args, "--threads").map_or(1, |v| v.parse().unwrap());
    let heap = arg(args, "--heap-mb").map_or(64, |v| v.parse().unwrap());
    // Tantivy's merges: segments of more documents than this are not merged again (default:
    // Tantivy's own, 10 million).
    let merge_cap: Option<usize> = arg(args, "--max-merge-docs").map(|v| v.parse().unwrap());
    let jsonl: f64 = std::fs::read_to_string(dir.join("jsonl_bytes"))
        .unwrap()
        .parse()
        .unwrap();
    let dump = Dump::open(&dir.join("texts.bin"));
    let t = Instant::now();
    let (out, commits) = match engine.as_str() {
        "tantivy" => {
            let p = dir.join("tantivy");
            let _ = std::fs::remove_dir_all(&p);
            let c = tant::build(&dump, &p, batch, threads, heap, merge_cap);
            (p, c)
        }
        "own" => {
            let p = dir.join("own.db");
            (p.clone(), own::build(&dump, &p, batch))
        }
        "own-merged" => {
            let p = dir.join("own-merged.db");
            let (before, after) = own::merge(&dir.join("own.db"), &p, &dump);
            eprintln!("own index merged: {before} blocks into {after}");
            (p.clone(), 1)
        }
        "fts5" => {
            let p = dir.join("fts5.db");
            (p.clone(), fts5::build(&dump, &p, batch))
        }
        other => panic!("unknown engine {other}"),
    };
    let secs = t.elapsed().as_secs_f64();
    let size = dir_size(&out) as f64;
    let line = format!(
        "{{\"engine\":\"{engine}\",\"batch_mb\":{},\"threads\":{threads},\"commits\":{commits},\"secs\":{secs:.1},\"text_mb_s\":{:.1},\"jsonl_mb_s\":{:.1},\"size_mb\":{:.1},\"size_x_jsonl\":{:.3}}}",
        batch >> 20,
        dump.text_bytes as f64 / 1e6 / secs,
        jsonl / 1e6 / secs,
        size / 1e6,
        size / jsonl
    );
    println!("{line}");
}

/// p50 and p95 of `f`'s time in ms: one warm-up, then up to `runs` runs or 3 s (at least 3).
fn timed(runs: usize, mut f: impl FnMut() -> Vec<usize>) -> (f64, f64, Vec<usize>) {
    let got = f();
    let mut ms = Vec::new();
    let start = Instant::now();
    while ms.len() < runs && (ms.len() < 3 || start.elapsed().as_secs_f64() < 3.0) {
        let t = Instant::now();
        let _ = f();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95), got)
}

fn agree(got: &[usize], want: &[usize]) -> String {
    let same = got.iter().filter(|d| want.contains(d)).count();
    if got == want {
        format!("{same}/{} same order", want.len())
    } else {
        format!("{same}/{}", want.len())
    }
}

fn rg_ms(q: &Q, corpus: &str) -> Option<f64> {
    let mut a: Vec<String> = vec!["-l".into()];
    match &q.kind {
        Kind::Ranked(els) => a.extend(["-i".into(), "-F".into(), els[0].join(" ")]),
        Kind::Literal(s) => a.extend(["-F".into(), s.clone()]),
        Kind::Regex(r, _) => a.extend(["-i".into(), r.clone()]),
    }
    a.push(corpus.into());
    let mut ms = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        Command::new("rg")
            .args(&a)
            .stdout(std::process::Stdio::null())
            .status()
            .ok()?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    Some(ms[1])
}

fn query(args: &[String], dir: &Path) {
    let db = PathBuf::from(arg(args, "--db").expect("--db INDEX"));
    let runs = arg(args, "--runs").map_or(20, |v| v.parse().unwrap());
    let corpus = arg(args, "--corpus");
    let only = arg(args, "--only");
    let k = 20;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let dump = Dump::open(&dir.join("texts.bin"));
    let qs: Vec<Q> = rank::queries()
        .into_iter()
        .filter(|q| only.as_deref().is_none_or(|o| q.class.contains(o)))
        .collect();
    let t = Instant::now();
    let want = brute::answers(&dump, &qs, k, now);
    eprintln!("brute force: {:.1} s", t.elapsed().as_secs_f64());
    let f = fts5::Engine::open(&db);
    let tv = dir
        .join("tantivy")
        .exists()
        .then(|| tant::Engine::open(&dir.join("tantivy")));
    // The merged own index when there is one (run.sh builds it after the per-batch one).
    let own_db = ["own-merged.db", "own.db"]
        .map(|f| dir.join(f))
        .into_iter()
        .find(|p| p.exists());
    let ow = own_db.map(|p| own::Engine::open(&p));
    if let Some(tv) = &tv {
        eprintln!("tantivy segments: {}", tv.segments());
    }
    println!("| class | query | FTS5 p50 / p95 ms | Tantivy p50 / p95 ms | own p50 / p95 ms | rg -l ms | top 20 vs brute force (FTS5; Tantivy; own) |");
    println!("|---|---|---|---|---|---|---|");
    for (q, want) in qs.iter().zip(&want) {
        let cell = |r: Option<(f64, f64, Vec<usize>)>| match r {
            Some((p50, p95, got)) => (format!("{p50:.1} / {p95:.1}"), agree(&got, want)),
            None => ("-".into(), "-".into()),
        };
        let newest = |cands: Vec<usize>| -> Vec<usize> { confirm(&dump, q, cands, k) };
        let (a, b, c) = match &q.kind {
            Kind::Ranked(els) => (
                cell(Some(timed(runs, || f.ranked(&dump, els, k, now)))),
                cell(
                    tv.as_ref()
                        .map(|e| timed(runs, || e.ranked(&dump, els, k, now))),
                ),
                cell(
                    ow.as_ref()
                        .map(|e| timed(runs, || e.ranked(&dump, els, k, now))),
                ),
            ),
            Kind::Literal(_) | Kind::Regex(_, _) => {
                let els = elements(q);
                if els.is_empty() {
                    let all = || newest((0..dump.len()).collect());
                    let r = cell(Some(timed(runs, all)));
                    (r.clone(), r.clone(), r)
                } else {
                    (
                        cell(Some(timed(runs, || newest(f.candidates(&dump, &els))))),
                        cell(
                            tv.as_ref()
                                .map(|e| timed(runs, || newest(e.candidates(&els)))),
                        ),
                        cell(
                            ow.as_ref()
                                .map(|e| timed(runs, || newest(e.candidates(&els)))),
                        ),
                    )
                }
            }
        };
        let rg = corpus
            .as_deref()
            .and_then(|c| rg_ms(q, c))
            .map_or("-".into(), |m| format!("{m:.0}"));
        println!(
            "| {} | `{}` | {} | {} | {} | {} | {}; {}; {} |",
            q.class, q.typed, a.0, b.0, c.0, rg, a.1, b.1, c.1
        );
    }
}

/// The words a literal's or regex's candidates must hold, as one phrase each.
fn elements(q: &Q) -> Vec<Vec<String>> {
    match &q.kind {
        Kind::Literal(s) => {
            // A literal that ends inside a word (`src/main.rs:42` in `src/main.rs:421`) may end
            // a longer word: its last word is left to the confirmation (pidx asks for it as a
            // prefix).
            let mut w = tok::words(s);
            if w.len() > 1 && s.chars().last().is_some_and(char::is_alphanumeric) {
                w.pop();
            }
            vec![w]
        }
        Kind::Regex(_, els) => els.clone(),
        Kind::Ranked(els) => els.clone(),
    }
}

fn confirm(dump: &Dump, q: &Q, cands: Vec<usize>, k: usize) -> Vec<usize> {
    match &q.kind {
        Kind::Literal(s) => {
            rank::newest_confirmed(dump, cands, k, &|t: &str| t.contains(s.as_str()))
        }
        Kind::Regex(r, _) => {
            let re = regex::Regex::new(r).unwrap();
            rank::newest_confirmed(dump, cands, k, &|t: &str| re.is_match(t))
        }
        Kind::Ranked(_) => cands,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use crate::dump::{Dump, NO_TS};
    use crate::rank::{Kind, Q};
    use crate::{brute, own, tok};

    /// A dump of `n` pseudo-random texts over a small vocabulary (some words common, some rare),
    /// a tenth of them without a time.
    fn dump(dir: &std::path::Path, n: usize) -> Dump {
        let vocab = [
            "the",
            "borrow",
            "checker",
            "function",
            "error",
            "test",
            "jalapeño",
            "x",
        ];
        let mut f = std::fs::File::create(dir.join("texts.bin")).unwrap();
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for i in 0..n {
            let len = 1 + next() % 40;
            // Zipf-ish: low indices far more often.
            let words: Vec<&str> = (0..len)
                .map(|_| vocab[(next() % 256).trailing_zeros().min(7) as usize])
                .collect();
            let text = words.join(if i % 3 == 0 { " " } else { ", " });
            let ts = if i % 10 == 0 {
                NO_TS
            } else {
                1_700_000_000_000 + (next() % 1000) as i64 * 3_600_000
            };
            f.write_all(&(i as i64 * 8).to_le_bytes()).unwrap();
            f.write_all(&ts.to_le_bytes()).unwrap();
            f.write_all(&100u32.to_le_bytes()).unwrap();
            f.write_all(&(text.len() as u32).to_le_bytes()).unwrap();
            f.write_all(text.as_bytes()).unwrap();
        }
        Dump::open(&dir.join("texts.bin"))
    }

    #[test]
    fn the_own_index_ranks_as_brute_force_before_and_after_merging() {
        let dir = std::env::temp_dir().join(format!("fts-compare-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dump(&dir, 3000);
        let ranked = |s: &'static str, els: &[&str]| Q {
            class: s,
            typed: s,
            kind: Kind::Ranked(els.iter().map(|e| tok::words(e)).collect()),
        };
        let qs = vec![
            ranked("common", &["the"]),
            ranked("rare", &["jalapeño"]),
            ranked("two", &["borrow", "checker"]),
            ranked("three", &["the", "borrow", "error"]),
            ranked("phrase", &["the borrow"]),
        ];
        let now = 1_700_000_000_000 + 2000 * 3_600_000;
        let want = brute::answers(&d, &qs, 20, now);
        // Batches of 1,000 bytes of "JSONL": many short blocks per word before the merge.
        own::build(&d, &dir.join("own.db"), 1000);
        own::merge(&dir.join("own.db"), &dir.join("merged.db"), &d);
        for db in ["own.db", "merged.db"] {
            let e = own::Engine::open(&dir.join(db));
            for (q, want) in qs.iter().zip(&want) {
                let Kind::Ranked(els) = &q.kind else {
                    unreachable!()
                };
                assert!(!want.is_empty(), "{}: the corpus has matches", q.class);
                assert_eq!(&e.ranked(&d, els, 20, now), want, "{db}: {}", q.class);
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
