//! Side-by-side benchmark of pidx against what a pi user would use instead, on one corpus.
//!
//! ```text
//! cargo run --release --example bench -- --corpus DIR [--runs N] [--pi-runs N] [--work DIR]
//! ```
//!
//! `benches/run.sh` builds everything, generates the corpus with `gen_corpus` and calls this.
//! Rows: cold full sync (MB/s, entries/s, peak RSS), no-op re-sync, index size, `list --all`
//! against pi's `SessionManager.listAll()`, `context` at the deepest leaf of the biggest session
//! against pi opening that file and building the context, the biggest session alone (peak RSS),
//! and, when this build has the commands, `search` against `rg`, `stats` against a re-parse of
//! the JSONL, and append-to-visible latency under `watch` (plus its idle CPU). pi's side needs `node` and pi's
//! package (`tests/conformance/setup-pi.sh`); without them the row says so. Prints a markdown
//! table of medians and ratios; never asserts timings. The corpus is only read.

#[path = "bench/lines.rs"]
mod lines;
#[path = "bench/queries.rs"]
mod queries;
#[path = "bench/run.rs"]
mod run;
#[path = "bench/scaling.rs"]
mod scaling;
#[path = "bench/sync.rs"]
mod sync;
#[path = "bench/watch.rs"]
mod watch;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Parser;
use run::{available, json_of, strings, time_with_rss, time_within, Timing};

#[derive(Parser)]
#[command(about = "Benchmark pidx side by side with pi, rg and a JSONL re-parse")]
struct Args {
    /// A pi sessions root (folders of `--<cwd>--/*.jsonl`), e.g. from gen_corpus.
    #[arg(long, required_unless_present = "merge")]
    corpus: Option<PathBuf>,
    /// The pidx binary to measure (a release build).
    #[arg(long, default_value = "target/release/pidx")]
    pidx: PathBuf,
    /// Scratch directory for the index and copies (default: a temp dir).
    #[arg(long)]
    work: Option<PathBuf>,
    /// Timed runs per pidx measurement (after one warm-up).
    #[arg(long, default_value_t = 15)]
    runs: usize,
    /// Timed runs per pi / rg / re-parse measurement.
    #[arg(long, default_value_t = 3)]
    pi_runs: usize,
    /// Skip everything that needs node and pi's package.
    #[arg(long)]
    no_pi: bool,
    /// A rare word, a mid-frequency word and a very common word for the search rows.
    #[arg(long, num_args = 3, default_values_t = ["jalapeño".to_string(), "borrow".to_string(), "function".to_string()])]
    words: Vec<String>,
    /// Literal search rows: an identifier, an identifier made of common words, a two-word
    /// literal and one with punctuation.
    #[arg(long, num_args = 1.., default_values_t = ["SUM_ONLY_MESSAGE".to_string(), "parse_line".to_string(), "fn main".to_string(), "src/main.rs:42".to_string()])]
    literal: Vec<String>,
    /// A two-word phrase for the phrase row.
    #[arg(long, default_value = "the borrow")]
    phrase: String,
    /// Regular expressions for the `re:` rows.
    #[arg(long, num_args = 1.., default_values_t = [r"src/main\.rs:\d+".to_string(), r"fn \w+_line".to_string()])]
    regex: Vec<String>,
    /// Appends for the watch latency row (round-robin over `--watch-files` copied sessions);
    /// 0 skips the row.
    #[arg(long, default_value_t = 1000)]
    watch_appends: usize,
    #[arg(long, default_value_t = 50)]
    watch_files: usize,
    /// Only the list, search and stats rows, on the index already in `--work` (bench.db) from
    /// an earlier run over the same corpus.
    #[arg(long)]
    queries_only: bool,
    /// Seconds the watcher is left idle afterwards, to measure its CPU when nothing changes.
    #[arg(long, default_value_t = 60)]
    watch_idle: u64,
    /// Size in MB of the text line and of the image line of the huge-lines row; 0 skips it.
    #[arg(long, default_value_t = 100)]
    huge_line_mb: usize,
    /// The scaling table's rows only: first answer, sync, no-op sync, index size, list, context,
    /// search and three stats groupings (no biggest-session, huge-lines or watch rows, no
    /// Python re-parse); row labels do not depend on the corpus, so sizes line up in `--merge`.
    #[arg(long)]
    compact: bool,
    /// Also save the rows (and the load average before and after) as JSON for `--merge`.
    #[arg(long)]
    rows_out: Option<PathBuf>,
    /// Print the side-by-side table of these `--rows-out` files (one column each) and exit.
    #[arg(long, num_args = 1..)]
    merge: Vec<PathBuf>,
    /// Seconds one measurement may take: fewer timed runs (at least one) when the warm-up run
    /// shows `--runs` would not fit; 0 = always `--runs` / `--pi-runs`.
    #[arg(long, default_value_t = 0.0)]
    row_budget: f64,
}

/// One line of the result table.
struct Row {
    what: String,
    pidx: String,
    baseline: String,
    ratio: String,
    goal: &'static str,
}

impl Row {
    fn new(what: impl Into<String>, pidx: impl Into<String>, goal: &'static str) -> Row {
        Row {
            what: what.into(),
            pidx: pidx.into(),
            baseline: "-".into(),
            ratio: "-".into(),
            goal,
        }
    }

    /// Adds a baseline timing (ms) and the ratio baseline / pidx.
    fn against(mut self, label: &str, baseline_ms: Option<f64>, pidx_ms: f64) -> Row {
        match baseline_ms {
            Some(b) => {
                self.baseline = format!("{label}: {}", ms(b));
                let r = b / pidx_ms;
                self.ratio = if r < 10.0 {
                    format!("{r:.1}x")
                } else {
                    format!("{r:.0}x")
                };
            }
            None => self.baseline = format!("{label}: not run"),
        }
        self
    }
}

fn ms(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.1} s", v / 1000.0)
    } else if v >= 100.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

struct Bench {
    args: Args,
    work: PathBuf,
    db: PathBuf,
    pidx: String,
    corpus: String,
    notes: Vec<String>,
    /// Entries in the index after the cold sync (for the scaling table's header).
    entries: Option<i64>,
}

impl Bench {
    /// `pidx --root CORPUS --db DB` followed by `rest`.
    fn cmd(&self, rest: &[&str]) -> Vec<String> {
        let mut argv = strings(&[&self.pidx, "--root", &self.corpus, "--db"]);
        argv.push(self.db.display().to_string());
        argv.extend(strings(rest));
        argv
    }

    fn time_pidx(&self, rest: &[&str], ok: &[i32]) -> Result<Timing> {
        time_within(&self.cmd(rest), self.args.runs, self.args.row_budget, ok)
    }

    /// A baseline (rg, pi, a re-parse): up to `--pi-runs` after a warm-up.
    fn time_base(&self, argv: &[String], ok: &[i32]) -> Result<Timing> {
        time_within(argv, self.args.pi_runs, self.args.row_budget, ok)
    }

    fn has_command(&self, name: &str) -> bool {
        available(&[&self.pidx, name, "--help"])
    }

    fn pi_ready(&mut self) -> bool {
        if self.args.no_pi {
            return false;
        }
        let ok = available(&["node", "--version"])
            && available(&["node", "-e", "process.exit(0)"])
            && std::process::Command::new("node")
                .args([
                    "--input-type=module",
                    "-e",
                    "import('./tests/conformance/lib/oracle.mjs').then(m => m.locateSessionManager())",
                ])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if !ok && self.notes.iter().all(|n| !n.starts_with("pi rows")) {
            self.notes.push(
                "pi rows not run: node or pi's package is missing (run tests/conformance/setup-pi.sh)"
                    .into(),
            );
        }
        ok
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !args.merge.is_empty() {
        return scaling::merge(&args.merge);
    }
    let load_before = scaling::loadavg();
    let tmp;
    let work = match &args.work {
        Some(w) => w.clone(),
        None => {
            tmp = tempfile::tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&work)?;
    if !args.pidx.exists() {
        bail!(
            "{} not found: build it with `cargo build --release`",
            args.pidx.display()
        );
    }
    let given = args.corpus.clone().unwrap_or_default();
    let corpus =
        std::fs::canonicalize(&given).with_context(|| format!("corpus {}", given.display()))?;
    let (files, bytes, biggest) = corpus_size(&corpus)?;
    let mut b = Bench {
        pidx: std::fs::canonicalize(&args.pidx)?.display().to_string(),
        corpus: corpus.display().to_string(),
        db: work.join("bench.db"),
        work,
        args,
        notes: Vec::new(),
        entries: None,
    };
    eprintln!("bench: {files} files, {:.0} MB in {}", mb(bytes), b.corpus);
    let rows = all_rows(&mut b, bytes, &biggest)?;
    print_table(&b, files, bytes, &rows);
    if let Some(path) = &b.args.rows_out {
        let saved = scaling::Saved {
            files,
            bytes,
            entries: b.entries,
            runs: b.args.runs,
            load_before: &load_before,
            rows: &rows,
            notes: &b.notes,
        };
        scaling::save(path, &saved)?;
    }
    Ok(())
}

fn all_rows(b: &mut Bench, bytes: u64, biggest: &Path) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let full = !b.args.queries_only;
    if full {
        rows.extend(sync::sync_rows(b, bytes)?);
    } else {
        b.notes.push(format!(
            "queries only: the index {} was reused as it was (no sync, context, huge-session or watch rows)",
            b.db.display()
        ));
    }
    let all = ["list", "--all", "--json"];
    rows.push(list_row(b, &all, "`list --all --json`")?);
    let page = ["list", "--all", "--json", "--limit", "50"];
    rows.push(list_row(
        b,
        &page,
        "`list --all --json --limit 50` (first page)",
    )?);
    if full {
        rows.push(context_row(b)?);
    }
    if full && !b.args.compact {
        rows.push(huge_row(b, biggest)?);
        if b.args.huge_line_mb > 0 {
            rows.push(lines::row(b)?);
        }
    }
    if b.has_command("search") {
        rows.extend(queries::search_rows(b)?);
    } else {
        b.notes
            .push("search rows not run: this build has no `search` command".into());
    }
    if b.has_command("stats") {
        rows.extend(queries::stats_rows(b)?);
    } else {
        b.notes
            .push("stats row not run: this build has no `stats` command".into());
    }
    if !full || b.args.compact {
        // no watch row on a reused index, nor in the scaling table
    } else if b.args.watch_appends == 0 {
        b.notes.push("watch row not run (--watch-appends 0)".into());
    } else if b.has_command("watch") {
        rows.push(watch_row(b)?);
    } else {
        b.notes
            .push("watch row not run: this build has no `watch` command".into());
    }
    Ok(rows)
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// (files, bytes, the biggest file) of the `*.jsonl` files pi would list.
fn corpus_size(root: &Path) -> Result<(usize, u64, PathBuf)> {
    let mut files = 0;
    let mut bytes = 0;
    let mut biggest = (0, PathBuf::new());
    for entry in walkdir::WalkDir::new(root)
        .min_depth(2)
        .max_depth(2)
        .follow_links(true)
    {
        // Dangling links and unreadable folders are skipped, as pi and pidx skip them.
        let Ok(entry) = entry else { continue };
        if entry.file_name().to_string_lossy().ends_with(".jsonl") && entry.file_type().is_file() {
            let len = entry.metadata()?.len();
            files += 1;
            bytes += len;
            if len > biggest.0 {
                biggest = (len, entry.path().to_path_buf());
            }
        }
    }
    if files == 0 {
        bail!("no session files under {}", root.display());
    }
    Ok((files, bytes, biggest.1))
}

fn list_row(b: &mut Bench, rest: &[&str], what: &str) -> Result<Row> {
    eprintln!("bench: {what}");
    let mut no_sync = vec!["--no-sync"];
    no_sync.extend_from_slice(rest);
    let fresh = b.time_pidx(rest, &[0])?;
    let cached = b.time_pidx(&no_sync, &[0])?;
    let pi = if b.pi_ready() {
        let report = json_of(&strings(&[
            "node",
            "tests/conformance/pi-listall-bench.mjs",
            &b.corpus,
            "--runs",
            &b.args.pi_runs.to_string(),
        ]))?;
        report["median_ms"].as_f64()
    } else {
        None
    };
    let mut row = Row::new(
        what,
        format!(
            "{} ({} with --no-sync)",
            ms(fresh.median()),
            ms(cached.median())
        ),
        "<= 100 ms; >= 50x pi",
    )
    .against("pi listAll()", pi, fresh.median());
    if rest.contains(&"--limit") {
        row.goal = "(pi has no first page: it lists all)";
    }
    Ok(row)
}

fn context_row(b: &mut Bench) -> Result<Row> {
    let conn = rusqlite::Connection::open(&b.db)?;
    let (file_id, path): (i64, String) = conn.query_row(
        "SELECT id, path FROM files ORDER BY size DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let (leaf, depth): (String, i64) = conn.query_row(
        "SELECT id, depth FROM entries WHERE file_id = ?1 AND id IS NOT NULL
         ORDER BY depth DESC, seq DESC LIMIT 1",
        [file_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let size = std::fs::metadata(&path)?.len();
    eprintln!("bench: context at depth {depth} of {path}");
    let t = b.time_pidx(
        &["--no-sync", "context", &path, "--leaf", &leaf, "--json"],
        &[0],
    )?;
    let pi = if b.pi_ready() {
        // pi's open() may rewrite old-format files: give it a copy.
        let copy = b.work.join("pi-context.jsonl");
        std::fs::copy(&path, &copy)?;
        let report = json_of(&strings(&[
            "node",
            "--max-old-space-size=16384",
            "benches/pi-context.mjs",
            &copy.display().to_string(),
            &leaf,
            "--runs",
            &b.args.pi_runs.to_string(),
        ]))?;
        std::fs::remove_file(&copy)?;
        b.notes.push(format!(
            "pi building that context: peak RSS {} MB (node)",
            report["peak_rss_mb"]
        ));
        report["median_ms"].as_f64()
    } else {
        None
    };
    let (what, value) = if b.args.compact {
        (
            "`context --leaf` at the deepest leaf of the biggest session".to_string(),
            format!("{} ({depth} ancestors, {:.0} MB)", ms(t.median()), mb(size)),
        )
    } else {
        (
            format!(
                "`context --leaf` at the deepest leaf ({depth} ancestors) of the biggest session ({:.0} MB)",
                mb(size)
            ),
            ms(t.median()),
        )
    };
    Ok(Row::new(what, value, "<= 50 ms").against("pi open + buildSessionContext", pi, t.median()))
}

/// A cold sync of the biggest session alone, for its peak memory.
fn huge_row(b: &mut Bench, biggest: &Path) -> Result<Row> {
    let root = b.work.join("huge-root");
    let _ = std::fs::remove_dir_all(&root);
    let project = root.join("--huge--");
    std::fs::create_dir_all(&project)?;
    std::os::unix::fs::symlink(
        biggest,
        project.join(biggest.file_name().unwrap_or_default()),
    )?;
    let db = b.work.join("huge.db");
    sync::remove_index(&db);
    eprintln!("bench: sync of {} alone", biggest.display());
    let argv = strings(&[
        &b.pidx,
        "--root",
        &root.display().to_string(),
        "--db",
        &db.display().to_string(),
        "sync",
    ]);
    let (t, rss) = time_with_rss(&argv, &b.work)?;
    let size = std::fs::metadata(biggest)?.len();
    Ok(Row::new(
        format!("sync of the biggest session alone ({:.0} MB)", mb(size)),
        format!(
            "{:.1} s, peak RSS {}",
            t / 1000.0,
            rss.map_or("not measured".into(), |r| format!("{r:.0} MB"))
        ),
        "<= 200 MB RSS",
    ))
}

/// Runs last: the watcher adds a second root (copies of a few sessions) to the index.
fn watch_row(b: &mut Bench) -> Result<Row> {
    eprintln!("bench: watch latency ({} appends)", b.args.watch_appends);
    let l = watch::measure(
        &b.pidx,
        &b.corpus,
        &b.db,
        &b.work,
        b.args.watch_files,
        b.args.watch_appends,
        std::time::Duration::from_secs(b.args.watch_idle),
    )?;
    Ok(Row::new(
        format!(
            "append -> visible in search under `watch` ({} appends to {} sessions, index of the whole corpus)",
            l.ms.len(),
            l.files
        ),
        format!(
            "p50 {}, p95 {}, max {}; idle: {:.2} CPU s in {:.0} s",
            ms(l.quantile(0.5)),
            ms(l.quantile(0.95)),
            ms(l.quantile(1.0)),
            l.idle_cpu_s,
            l.idle_s
        ),
        "<= 250 ms p95",
    ))
}

fn print_table(b: &Bench, files: usize, bytes: u64, rows: &[Row]) {
    println!(
        "Corpus: {files} session files, {:.2} GB ({}). pidx runs: median of {} after a warm-up; \
         baselines: median of {}.\n",
        bytes as f64 / 1e9,
        b.corpus,
        b.args.runs,
        b.args.pi_runs
    );
    println!("| what | pidx | baseline | baseline / pidx | goal |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.what, r.pidx, r.baseline, r.ratio, r.goal
        );
    }
    for n in &b.notes {
        println!("\n- {n}");
    }
}
