//! Append -> visible latency under `pidx watch`, for one or more pidx binaries side by side in
//! one run (the goal in docs/bench-log.md: p95 <= 250 ms).
//!
//! ```text
//! cargo build --release && cargo run --release --example watch_latency -- \
//!     [--appends N] [--sessions S] [--projects P] [--seed X] [--via search|context]
//!     [LABEL=PATH ...]
//! ```
//!
//! Each binary gets its own copy of a small synthetic sessions root and its own index, and runs
//! `pidx watch` on it. Then, in rounds that alternate between the binaries (so both see the same
//! machine load), the probe appends one user message carrying a unique word to a random session,
//! after a random pause of 0-100 ms, and runs `pidx --no-sync --json search WORD` (or `context
//! FILE`) until it shows the line: the time from the append to that answer is the latency. Without LABEL=PATH arguments it
//! measures `target/release/pidx`. Never run from tests: timing belongs in benchmarks.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HEADER: &str = r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p/PROJ"}"#;

fn user(id: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

/// A small deterministic generator (xorshift64*), so runs with the same seed append alike.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Probe {
    label: String,
    /// `search` (one word, exit 0 once found) or `context` (the session's messages hold it).
    via: String,
    bin: PathBuf,
    root: PathBuf,
    db: PathBuf,
    files: Vec<PathBuf>,
    watcher: Child,
    ms: Vec<f64>,
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn corpus(root: &Path, sessions: usize, projects: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for s in 0..sessions {
        let dir = root.join(format!("--p-proj{}--", s % projects));
        std::fs::create_dir_all(&dir).unwrap();
        let id = format!("0199aaaa-0000-7000-8000-{s:012}");
        let mut text = HEADER
            .replace("ID", &id)
            .replace("PROJ", &format!("proj{}", s % projects));
        text.push('\n');
        for i in 0..20 {
            text.push_str(&user(&format!("e{i}"), "some ordinary words about code"));
            text.push('\n');
        }
        let path = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    files
}

fn pidx(bin: &Path, db: &Path, root: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env("NO_COLOR", "1");
    c
}

fn start(
    (label, bin): (&str, PathBuf),
    via: &str,
    dir: &Path,
    sessions: usize,
    projects: usize,
) -> Probe {
    let root = dir.join(format!("{label}-sessions"));
    let db = dir.join(format!("{label}.db"));
    let files = corpus(&root, sessions, projects);
    // Indexed first, so the watcher's own first reconcile finds nothing to do.
    let synced = pidx(&bin, &db, &root).arg("sync").output().unwrap();
    assert!(synced.status.success(), "{label}: pidx sync failed");
    let watcher = pidx(&bin, &db, &root)
        .arg("watch")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting pidx watch");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = pidx(&bin, &db, &root)
            .args(["--no-sync", "--json", "search", "ordinary"])
            .output()
            .unwrap();
        if out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{label}: the index is empty");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Past the watcher's first reconcile (a stat of every file).
    std::thread::sleep(Duration::from_secs(2));
    Probe {
        label: label.to_string(),
        via: via.to_string(),
        bin,
        root,
        db,
        files,
        watcher,
        ms: Vec::new(),
    }
}

/// Appends one line with a unique word to a random session and times it until `search` finds it.
fn once(p: &mut Probe, rng: &mut Rng, k: usize) {
    std::thread::sleep(Duration::from_millis(rng.below(100)));
    let word = format!("zqprobe{k}x{}", p.label.len());
    let file = &p.files[rng.below(p.files.len() as u64) as usize];
    let line = user(&format!("probe{k}"), &format!("an appended line {word}"));
    let started = Instant::now();
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(format!("{line}\n").as_bytes()).unwrap();
    drop(f);
    loop {
        let mut cmd = pidx(&p.bin, &p.db, &p.root);
        cmd.args(["--no-sync", "--json"]);
        let out = if p.via == "context" {
            cmd.arg("context").arg(file).output().unwrap()
        } else {
            cmd.args(["search", &word]).output().unwrap()
        };
        let found = if p.via == "context" {
            String::from_utf8_lossy(&out.stdout).contains(&word)
        } else {
            out.status.success()
        };
        if found {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}: {word} never became visible",
            p.label
        );
    }
    p.ms.push(started.elapsed().as_secs_f64() * 1e3);
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let appends: usize = arg(&args, "--appends", 200);
    let sessions: usize = arg(&args, "--sessions", 200);
    let projects: usize = arg(&args, "--projects", 10);
    let seed: u64 = arg(&args, "--seed", 1);
    let via: String = arg(&args, "--via", "search".to_string());
    let mut bins: Vec<(String, PathBuf)> = args
        .iter()
        .filter_map(|a| a.split_once('='))
        .map(|(l, p)| (l.to_string(), PathBuf::from(p)))
        .collect();
    if bins.is_empty() {
        bins.push(("pidx".into(), PathBuf::from("target/release/pidx")));
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut probes: Vec<Probe> = bins
        .into_iter()
        .map(|(label, bin)| start((&label, bin), &via, tmp.path(), sessions, projects))
        .collect();
    let mut rng = Rng(seed.max(1));
    let rounds = 10;
    let per_round = appends.div_ceil(rounds);
    let mut k = 0;
    for _ in 0..rounds {
        for p in probes.iter_mut() {
            for _ in 0..per_round {
                once(p, &mut rng, k);
                k += 1;
            }
        }
    }
    println!(
        "append -> visible in `pidx --no-sync {via}` under `pidx watch`: {sessions} sessions in {projects} projects, {} appends each, rounds alternating",
        rounds * per_round
    );
    println!(
        "{:<10} {:>8} {:>8} {:>8} {:>8}",
        "binary", "p50 ms", "p95 ms", "max ms", ">250ms"
    );
    for p in probes.iter_mut() {
        let _ = p.watcher.kill();
        let _ = p.watcher.wait();
        let mut v = p.ms.clone();
        v.sort_by(f64::total_cmp);
        println!(
            "{:<10} {:>8.0} {:>8.0} {:>8.0} {:>8}",
            p.label,
            percentile(&v, 0.5),
            percentile(&v, 0.95),
            v[v.len() - 1],
            v.iter().filter(|&&m| m > 250.0).count()
        );
    }
}
