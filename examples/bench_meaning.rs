//! Search by meaning, measured: retrieval quality (recall@5 and MRR for words, meaning and
//! hybrid ranking) on a regenerated set of topic sessions and queries, then speed and size on a
//! generated corpus (embedding throughput, query p50/p95, index growth, peak RSS).
//!
//! ```text
//! bash tests/meaning/bench.sh            # the one command: model, corpus, this example
//! cargo run --release --example bench_meaning -- --model DIR [--corpus ROOT]
//! ```
//!
//! The retrieval set is written here (below): each topic a session of a few messages; each
//! query names its topic's session. `para` queries avoid the session's distinctive words,
//! `exact` queries use them (identifiers included), `xlang` ones are in another language.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use pidx::ingest::embed::embed_pending;
use pidx::meaning::Model;
use pidx::pi::layout::{Layout, Root};
use pidx::query::search::{self, SearchOptions};
use pidx::store::Scope;
use serde_json::json;

#[path = "bench_meaning/set.rs"]
mod set;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let model_dir = PathBuf::from(arg("--model").expect("--model DIR"));
    let model = Model::load(&model_dir).unwrap_or_else(|e| panic!("{e}"));
    println!("model: {} ({} dims)", model.id(), model.dim());
    quality(&model);
    if let Some(corpus) = arg("--corpus") {
        speed(&model, Path::new(&corpus));
    }
}

/// Writes the retrieval set's sessions under `root`.
fn write_set(root: &Path) {
    let dir = root.join("--home-u-bench--");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, t) in set::TOPICS.iter().enumerate() {
        let mut lines = vec![json!({"type": "session", "version": 3, "id": t.id,
            "timestamp": format!("2026-01-01T00:{:02}:00.000Z", i % 60), "cwd": "/home/u/bench"})
        .to_string()];
        let mut parent = serde_json::Value::Null;
        for (j, text) in t.texts.iter().enumerate() {
            let id = format!("{}{j}", t.id);
            let (role, content) = if j % 2 == 0 {
                ("user", json!(text))
            } else {
                ("assistant", json!([{"type": "text", "text": text}]))
            };
            lines.push(
                json!({"type": "message", "id": id, "parentId": parent,
                "timestamp": format!("2026-01-01T10:{:02}:{j:02}.000Z", i % 60),
                "message": {"role": role, "content": content, "timestamp": 1}})
                .to_string(),
            );
            parent = json!(id);
        }
        std::fs::write(
            dir.join(format!("2026-01-01T00-00-00-000Z_{}.jsonl", t.id)),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Rank {
    Words,
    Meaning,
    Hybrid,
}

/// Session ids of the hits of `q`, in rank order, each once.
fn ranked(
    conn: &rusqlite::Connection,
    scope: &Scope,
    model: &Model,
    q: &str,
    how: Rank,
) -> Vec<String> {
    let Ok(query) = search::parse(q, false) else {
        return Vec::new();
    };
    let opts = SearchOptions::everywhere(query, 20);
    let stop = AtomicBool::new(false);
    let hits = match how {
        Rank::Words => search::search(conn, scope, &opts),
        Rank::Meaning => search::search_meaning(conn, scope, &opts, model, q, &stop),
        Rank::Hybrid if matches!(opts.query, search::Query::Words { .. }) => {
            search::search_hybrid(conn, scope, &opts, model, q, &stop)
        }
        Rank::Hybrid => search::search(conn, scope, &opts),
    }
    .unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for h in hits {
        let id = h.session_id.unwrap_or_default();
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn quality(model: &Model) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    write_set(&root);
    let roots = vec![Root {
        path: root.clone(),
        layout: Layout::Tree,
    }];
    let mut store = pidx::store::Store::open(&tmp.path().join("i.db")).unwrap();
    pidx::ingest::sync::sync(&mut store, &roots, Default::default()).unwrap();
    embed_pending(&mut store.conn, model).unwrap();
    let scope = Scope::new(&store.conn, &roots).unwrap();
    println!(
        "\nretrieval: {} sessions, {} queries (recall@5 / MRR)",
        set::TOPICS.len(),
        set::QUERIES.len()
    );
    println!(
        "{:<8} {:>5}  {:>13}  {:>13}  {:>13}",
        "queries", "n", "words", "meaning", "hybrid"
    );
    for kind in ["para", "exact", "xlang"] {
        let qs: Vec<_> = set::QUERIES.iter().filter(|q| q.kind == kind).collect();
        let mut cells = Vec::new();
        for how in [Rank::Words, Rank::Meaning, Rank::Hybrid] {
            let (mut recall, mut mrr) = (0.0, 0.0);
            for q in &qs {
                let got = ranked(&store.conn, &scope, model, q.text, how);
                if let Some(at) = got.iter().position(|s| s == q.answer) {
                    recall += if at < 5 { 1.0 } else { 0.0 };
                    mrr += 1.0 / (at as f64 + 1.0);
                }
            }
            let n = qs.len().max(1) as f64;
            cells.push(format!("{:.2} / {:.2}", recall / n, mrr / n));
        }
        println!(
            "{kind:<8} {:>5}  {:>13}  {:>13}  {:>13}",
            qs.len(),
            cells[0],
            cells[1],
            cells[2]
        );
    }
}

fn rss_peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// User and system CPU time of this process so far, every thread (from /proc).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

fn dir_bytes(root: &Path) -> u64 {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

fn db_bytes(db: &Path, conn: &rusqlite::Connection) -> u64 {
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    std::fs::metadata(db).map_or(0, |m| m.len())
}

fn speed(model: &Model, corpus: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let roots = vec![Root {
        path: corpus.to_path_buf(),
        layout: Layout::Tree,
    }];
    let mut store = pidx::store::Store::open(&db).unwrap();
    let t = Instant::now();
    pidx::ingest::sync::sync(&mut store, &roots, Default::default()).unwrap();
    let sync_s = t.elapsed().as_secs_f64();
    let jsonl = dir_bytes(corpus);
    let before = db_bytes(&db, &store.conn);
    let rss_before = rss_peak_mb();
    let cpu_before = cpu_seconds();
    let r = embed_pending(&mut store.conn, model).unwrap();
    let cpu = cpu_seconds() - cpu_before;
    let after = db_bytes(&db, &store.conn);
    let sessions: i64 = store
        .conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    println!(
        "\ncorpus: {} sessions, {:.0} MB of JSONL; sync {:.1} s",
        sessions,
        jsonl as f64 / 1e6,
        sync_s
    );
    println!(
        "embedding: {} entries, {} passages, {:.1} MB of text in {:.1} s = {:.1} MB/s of text ({:.1} MB/s of JSONL)",
        r.entries,
        r.passages,
        r.bytes as f64 / 1e6,
        r.seconds,
        r.bytes as f64 / 1e6 / r.seconds,
        jsonl as f64 / 1e6 / r.seconds
    );
    println!(
        "embedding CPU: {cpu:.1} s on all threads = {:.1} MB of text per CPU second (the wall \
         clock counts other programs' use of the cores too)",
        r.bytes as f64 / 1e6 / cpu
    );
    println!(
        "index: {:.0} MB before, {:.0} MB after embedding: +{:.0} MB = {:.3}x the JSONL",
        before as f64 / 1e6,
        after as f64 / 1e6,
        (after - before) as f64 / 1e6,
        (after - before) as f64 / jsonl as f64
    );
    println!(
        "peak RSS: {:.0} MB before embedding, {:.0} MB after",
        rss_before,
        rss_peak_mb()
    );
    let scope = Scope::new(&store.conn, &roots).unwrap();
    let queries = [
        "fix the flaky test",
        "database migration failed",
        "refactor the parser",
        "slow build times",
        "authentication token expired",
        "render the chart",
        "memory leak in the server",
        "update the dependencies",
        "write documentation for the api",
        "the deploy script broke",
    ];
    for how in [Rank::Meaning, Rank::Hybrid, Rank::Words] {
        let mut times = Vec::new();
        for _round in 0..3 {
            for q in queries {
                let t = Instant::now();
                ranked(&store.conn, &scope, model, q, how);
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        times.sort_by(f64::total_cmp);
        let p = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
        let name = match how {
            Rank::Meaning => "meaning",
            Rank::Hybrid => "hybrid",
            Rank::Words => "words",
        };
        println!(
            "query {name:<8} p50 {:.1} ms, p95 {:.1} ms ({} runs, warm)",
            p(0.5),
            p(0.95),
            times.len()
        );
    }
    codes_against_exact(&store.conn, model, &queries);
}

/// A way to find the 10 nearest texts (full-text rowid, cosine) to a query vector.
type Top<'a> = dyn Fn(&[f32]) -> Vec<(i64, f32)> + 'a;

/// The scan of every passage row (searches before migration 0025) against the codes and their
/// exact re-ranking, side by side on the same index: time, and how many of the exact scan's 10
/// best texts the codes find, for a few candidate counts (`query::search::meaning` takes 500).
/// A text the codes give instead of one of the exact 10 with the same score (the generated
/// corpus repeats texts) counts as found.
fn codes_against_exact(conn: &rusqlite::Connection, model: &Model, queries: &[&str]) {
    let vectors: Vec<Vec<f32>> = queries.iter().map(|q| model.embed(q).unwrap()).collect();
    let timed = |f: &Top| {
        let mut times = Vec::new();
        let mut tops = Vec::new();
        for _round in 0..2 {
            tops.clear();
            for v in &vectors {
                let t = Instant::now();
                tops.push(f(v));
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], tops)
    };
    let (ms, exact) = timed(&|v| search::exact_top(conn, v, 10).unwrap());
    println!("top 10 by a scan of every passage row: p50 {ms:.1} ms");
    for candidates in [250, 500, 1000, 2000] {
        let (ms, got) = timed(&|v| search::codes_top(conn, v, 10, candidates).unwrap());
        let found: usize = exact
            .iter()
            .zip(&got)
            .map(|(e, g)| {
                let tenth = e.last().map_or(f32::MIN, |x| x.1);
                g.iter()
                    .filter(|x| x.1 >= tenth - 1e-6)
                    .count()
                    .min(e.len())
            })
            .sum();
        println!(
            "top 10 by codes, {candidates} scored exactly: p50 {ms:.1} ms, {:.2} of the exact 10 found",
            found as f64 / (10 * exact.len()) as f64
        );
    }
}
