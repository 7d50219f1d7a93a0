//! Deterministic, seeded generator of synthetic pi session stores, for pidx tests and benchmarks.
//!
//! ```text
//! cargo run --release --example gen_corpus -- --out DIR [--sessions N] [--bytes SIZE]
//!     [--projects P] [--seed S] [--huge-session SIZE] [--threads T]
//! ```
//!
//! Writes a pi sessions root: `DIR/--<encoded cwd>--/<ts>_<uuid>.jsonl`, every line compact JSON in
//! the key order pi 0.87/1.x writes (see `docs/pi-format.md` §1-§2): a v3 header,
//! then `model_change`, `thinking_level_change`, an optional 1.x system message and user / assistant /
//! toolResult messages, with bash executions, images, branches, compactions, branch summaries,
//! labels, names, custom entries, custom messages, usage entries and forks (a copy of another
//! session in another project, `parentSession` = the source's absolute path).
//!
//! Sizes: SIZE is `500M`, `2G`, `1024K`, `1.5G` or plain bytes (K/M/G/T are powers of 1024).
//! `--bytes` is the total target (session sizes are scaled to reach it, typically within a few %),
//! `--sessions` the file count (default: `--bytes` / ~240 KiB, or 200), `--projects` the number of
//! cwds (default about sessions/40). `--huge-session` adds one more session of about that size, with a
//! long chain, some branches and periodic compactions, written line by line.
//!
//! Determinism: the same seed and flags give byte-identical files (times come from the seed and a
//! fixed base date, never the clock; work is split per session, so `--threads` does not matter).
//! Fork headers embed the absolute output path, so compare runs made into the same `--out` path.
//! The vocabulary is the same for every seed, so benchmark queries can name its words.

#[path = "gen_corpus/events.rs"]
mod events;
#[path = "gen_corpus/json.rs"]
mod json;
#[path = "gen_corpus/models.rs"]
mod models;
#[path = "gen_corpus/project.rs"]
mod project;
#[path = "gen_corpus/rng.rs"]
mod rng;
#[path = "gen_corpus/session.rs"]
mod session;
#[path = "gen_corpus/text.rs"]
mod text;
#[path = "gen_corpus/turns.rs"]
mod turns;

use anyhow::{bail, Context, Result};
use clap::Parser;
use rng::{derive, Rng};
use session::{write_session, Kind, Shared, Spec, Written};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// 2026-01-05T00:00:00Z, when pi's session format reached version 3.
const BASE_MS: i64 = 1_767_571_200_000;
/// Sessions are spread over this many days after `BASE_MS`.
const SPAN_DAYS: i64 = 300;
/// Mean planned session size before scaling (measured over the size mixture below).
const MEAN_SESSION_BYTES: u64 = 240 * 1024;
/// Typical size of the smallest possible session (opening entries plus one turn).
const MIN_SESSION_BYTES: f64 = 9000.0;
/// Share of sessions that are forks of an earlier session.
const FORK_SHARE: f64 = 0.03;

#[derive(Parser)]
#[command(about = "Generate a synthetic pi sessions root (deterministic for a given seed)")]
struct Args {
    /// Output sessions root (created; must be empty or absent)
    #[arg(long)]
    out: PathBuf,
    /// Number of session files (default: bytes / 240 KiB, or 200)
    #[arg(long)]
    sessions: Option<usize>,
    /// Total target size, e.g. 500M, 2G
    #[arg(long, value_parser = parse_size)]
    bytes: Option<u64>,
    /// Number of projects (cwds); default about sessions/40
    #[arg(long)]
    projects: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Add one extra session of about this size, e.g. 1G
    #[arg(long, value_parser = parse_size)]
    huge_session: Option<u64>,
    /// Worker threads (output does not depend on it); default: available cores
    #[arg(long)]
    threads: Option<usize>,
}

/// Parses `500M`, `2G`, `1024K`, `1.5G`, `123` (K/M/G/T = 1024^n; a trailing `B`/`iB` is accepted).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().trim_end_matches("iB").trim_end_matches(['B', 'b']);
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("unknown size suffix in {s:?}")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("bad size {s:?}"))?;
    if v.is_nan() || v < 0.0 {
        return Err(format!("bad size {s:?}"));
    }
    Ok((v * mult as f64) as u64)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let t0 = Instant::now();
    let root = prepare_out(&args.out)?;
    let sessions = args.sessions.unwrap_or_else(|| match args.bytes {
        Some(b) => (b / MEAN_SESSION_BYTES).max(1) as usize,
        None => 200,
    });
    let n_projects = args
        .projects
        .unwrap_or(((sessions + 20) / 40).max(1))
        .max(1);
    let vocab = text::Vocab::build();
    let mut rng = Rng::new(derive(args.seed, 1));
    let projects = project::make_projects(&mut rng, &vocab, n_projects);
    let mut specs = plan(&mut rng, args.seed, sessions, &projects, args.bytes);
    if let Some(size) = args.huge_session {
        // In the most popular project, starting an hour after the base date, never scaled.
        let seed = derive(args.seed, 0x4a6e);
        specs.push(Spec {
            project: 0,
            start_ms: BASE_MS + 3_600_000,
            target: size,
            seed,
            kind: Kind::Huge,
        });
    }
    let shared = Shared {
        vocab: &vocab,
        projects: &projects,
        root: &root,
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let written = run_all(&shared, &mut specs, threads)?;

    let bytes: u64 = written.iter().map(|w| w.bytes).sum();
    let entries: u64 = written.iter().map(|w| w.entries).sum();
    let used: std::collections::HashSet<usize> = specs.iter().map(|s| s.project).collect();
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "gen_corpus: {} files, {bytes} bytes ({:.1} MiB), {entries} entries, {} projects, {secs:.2} s ({:.1} MiB/s) -> {}",
        written.len(),
        bytes as f64 / 1048576.0,
        used.len(),
        bytes as f64 / 1048576.0 / secs.max(1e-9),
        root.display()
    );
    Ok(())
}

/// Creates the output root, refusing a non-empty one, and returns its absolute path.
fn prepare_out(out: &PathBuf) -> Result<PathBuf> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    if std::fs::read_dir(out)?.next().is_some() {
        bail!(
            "{} is not empty; remove it first (output must not mix with older files)",
            out.display()
        );
    }
    Ok(std::fs::canonicalize(out)?)
}

/// Decides every session's project, kind, start time, seed and byte target.
fn plan(
    rng: &mut Rng,
    seed: u64,
    n: usize,
    projects: &[project::Project],
    total: Option<u64>,
) -> Vec<Spec> {
    let weights: Vec<f64> = projects.iter().map(|p| p.weight).collect();
    let mut specs: Vec<Spec> = Vec::with_capacity(n);
    let mut raw: Vec<f64> = Vec::with_capacity(n);
    for i in 0..n {
        // Every project gets a session first; then popularity decides.
        let mut project = if i < projects.len() {
            i
        } else {
            rng.weighted(&weights)
        };
        let size = raw_size(rng);
        let start_ms = BASE_MS + rng.range(0, (SPAN_DAYS * 86_400_000) as u64) as i64;
        let mut kind = Kind::Normal;
        if i >= 10 && rng.chance(FORK_SHARE) {
            let src = rng.below(i);
            if matches!(specs[src].kind, Kind::Normal) {
                kind = Kind::Fork { src };
                if projects.len() > 1 && project == specs[src].project {
                    project = (project + 1 + rng.below(projects.len() - 1)) % projects.len();
                }
            }
        }
        // A fork holds its source plus a short continuation.
        let planned = match kind {
            Kind::Fork { src } => raw[src] + size * 0.15,
            _ => size,
        };
        raw.push(planned);
        specs.push(Spec {
            project,
            start_ms,
            target: 0,
            seed: derive(seed, 1000 + i as u64),
            kind,
        });
    }
    let scale = total.map_or(1.0, |t| scale_for(&raw, t as f64));
    for (s, r) in specs.iter_mut().zip(&raw) {
        s.target = ((r * scale) as u64).max(1500);
    }
    specs
}

/// A session cannot be smaller than its opening plus one turn (about `MIN_SESSION_BYTES`), so
/// find the scale `s` with `sum(max(r * s, MIN)) = total` by bisection rather than `total / sum`.
fn scale_for(raw: &[f64], total: f64) -> f64 {
    let size = |s: f64| {
        raw.iter()
            .map(|r| (r * s).max(MIN_SESSION_BYTES))
            .sum::<f64>()
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    while size(hi) < total && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if size(mid) < total {
            lo = mid
        } else {
            hi = mid
        }
    }
    hi
}

/// Planned size before scaling: mostly small sessions (median ~30 KB), a tail of big ones
/// (median ~1.5 MB, some over 10 MB).
fn raw_size(rng: &mut Rng) -> f64 {
    if rng.chance(0.92) {
        rng.lognormal(30_000.0, 1.2).clamp(1500.0, 2_000_000.0)
    } else {
        rng.lognormal(1_500_000.0, 0.9)
            .clamp(200_000.0, 40_000_000.0)
    }
}

/// Writes all sessions: first every non-fork session (largest first, for load balance), then the
/// forks, whose sources are complete by then. Returns results in plan order.
fn run_all(shared: &Shared, specs: &mut [Spec], threads: usize) -> Result<Vec<Written>> {
    let results: Vec<Mutex<Option<Written>>> = specs.iter().map(|_| Mutex::new(None)).collect();
    let mut first: Vec<usize> = (0..specs.len())
        .filter(|&i| !matches!(specs[i].kind, Kind::Fork { .. }))
        .collect();
    first.sort_by_key(|&i| std::cmp::Reverse(specs[i].target));
    run_phase(shared, specs, &first, &results, threads)?;

    let forks: Vec<usize> = (0..specs.len())
        .filter(|&i| matches!(specs[i].kind, Kind::Fork { .. }))
        .collect();
    for &i in &forks {
        let Kind::Fork { src } = specs[i].kind else {
            unreachable!()
        };
        let src_w = results[src]
            .lock()
            .unwrap()
            .clone()
            .context("fork source missing")?;
        let mut r = Rng::new(derive(specs[i].seed, 0xf0c));
        specs[i].start_ms = src_w.last_ms + r.range(3_600_000, 20 * 86_400_000) as i64;
        specs[i].target = specs[i].target.max(src_w.bytes + 1500);
    }
    run_phase(shared, specs, &forks, &results, threads)?;
    Ok(results
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every session written"))
        .collect())
}

/// Runs `jobs` (indices into `specs`) on `threads` workers pulling from a shared counter.
fn run_phase(
    shared: &Shared,
    specs: &[Spec],
    jobs: &[usize],
    results: &[Mutex<Option<Written>>],
    threads: usize,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= jobs.len() || failed.lock().unwrap().is_some() {
                    break;
                }
                let i = jobs[k];
                let src = match specs[i].kind {
                    Kind::Fork { src } => results[src].lock().unwrap().clone(),
                    _ => None,
                };
                match write_session(shared, &specs[i], src.as_ref()) {
                    Ok(w) => *results[i].lock().unwrap() = Some(w),
                    Err(e) => {
                        *failed.lock().unwrap() =
                            Some(anyhow::Error::new(e).context(format!("session {i}")))
                    }
                }
            });
        }
    });
    match failed.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
