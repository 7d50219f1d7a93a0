//! The attribution benchmark of issue 34 (`benches/files.sh` runs it with the ingest figures).
//!
//! ```text
//! cargo run --release --example bench_files -- --out DIR [--events N] [--commit-every K]
//!     [--seed S] [--corpus-db PATH]
//! ```
//!
//! Replays a seeded history into a scratch git repository: sessions `write` and `edit` files
//! (pi's exact replacement, and its whitespace-normalised match when the old text has lost its
//! trailing spaces), some edits fail, a person edits, re-indents, reverts files to an earlier
//! commit and renames them, and everything is committed every K events. Each line carries its
//! true origin through the history (the step that last changed its text in pi's fuzzy form, or
//! a person), so `pidx blame` on every file at the end and `pidx commits` on every commit are
//! scored: line precision and recall, and the share of commits given exactly the right
//! sessions. Timings: blame of a 2,000-line file, commits over all commits, and with
//! `--corpus-db` (an index of a gen_corpus corpus) `files PATH` on it. `BENCH_FILES_DEBUG=1`
//! prints each commit given the wrong sessions, line by line.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use serde_json::json;

use pidx::query::files::blame::{blame, BlameOptions};
use pidx::query::files::commits::{commits, CommitsOptions};
use pidx::query::files::git::Repo;
use pidx::query::files::list::{touches, FilesOptions};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 3000)]
    events: usize,
    #[arg(long, default_value_t = 3)]
    commit_every: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// An index of a generated corpus: time `files PATH` on it.
    #[arg(long)]
    corpus_db: Option<PathBuf>,
}

#[path = "bench_files/world.rs"]
mod world;

use world::{Origin, Rng, SessionLog, World};

/// Runs the history; the sessions are written at the end (as if pi had been appending).
fn replay(args: &Args, repo: &Path, root: &Path) -> World {
    git2::Repository::init(repo).unwrap();
    let sessions = (0..40)
        .map(|i| SessionLog {
            id: format!("019b0000-0000-7000-8000-{:012x}", i + 1),
            lines: Vec::new(),
            last: None,
        })
        .collect();
    let mut w = World {
        rng: Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        repo: repo.to_path_buf(),
        files: Vec::new(),
        sessions,
        steps: Vec::new(),
        clock_ms: 1_767_225_600_000,
        serial: 0,
        snapshots: HashMap::new(),
        commit_ids: Vec::new(),
    };
    for (i, s) in w.sessions.iter_mut().enumerate() {
        let header = json!({"type": "session", "version": 3, "id": s.id,
            "timestamp": format!("2026-01-01T00:00:{:02}.000Z", i % 60), "cwd": repo.to_string_lossy()});
        s.lines.push(header.to_string());
    }
    // The 2,000-line file the blame timing reads, and a few ordinary ones.
    w.session_write(0, None, 2000);
    for s in 0..6 {
        let n = 30 + w.rng.below(60);
        w.session_write(s, None, n);
    }
    w.commit("start");
    for e in 0..args.events {
        // Two sessions at a time, a new pair every 150 events.
        let s = (e / 150 * 2 + w.rng.below(2)) % w.sessions.len();
        let f = if w.rng.chance(0.2) {
            0
        } else {
            w.rng.below(w.files.len())
        };
        match w.rng.below(100) {
            0..=54 => w.session_edit(s, f, false),
            55..=62 => w.session_edit(s, f, true),
            63..=66 => w.failed_edit(s, f),
            67..=68 if f != 0 => w.session_write(s, Some(f), 0),
            69..=70 => {
                let n = 20 + w.rng.below(40);
                w.session_write(s, None, n)
            }
            71..=90 => w.person_edit(f),
            91..=92 if f != 0 => w.revert(f),
            93 if f != 0 => w.rename(f),
            _ => w.session_edit(s, f, false),
        }
        if e % args.commit_every == args.commit_every - 1 {
            w.commit(&format!("event {e}"));
        }
    }
    w.commit("end");
    let dir = root.join("--repo--");
    std::fs::create_dir_all(&dir).unwrap();
    for s in &w.sessions {
        std::fs::write(
            dir.join(format!("{}.jsonl", s.id)),
            s.lines.join("\n") + "\n",
        )
        .unwrap();
    }
    w
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let args = Args::parse();
    let _ = std::fs::remove_dir_all(&args.out);
    let (repo, root) = (args.out.join("repo"), args.out.join("sessions"));
    std::fs::create_dir_all(&root)?;
    let t = Instant::now();
    let w = replay(&args, &repo, &root);
    eprintln!(
        "replayed {} events, {} steps, {} commits in {:.1} s",
        args.events,
        w.steps.len(),
        w.commit_ids.len(),
        t.elapsed().as_secs_f64()
    );
    let mut store = pidx::store::Store::open(&args.out.join("index.db"))?;
    let roots = [pidx::pi::layout::Root {
        path: root.clone(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    pidx::ingest::sync::sync(&mut store, &roots, Default::default())?;
    let conn = &store.conn;
    let session_of = |o: Origin| match o {
        Origin::Step(i) => Some(w.sessions[w.steps[i].0].id.clone()),
        Origin::Person => None,
    };

    // Blame of every file now.
    let (mut attributed, mut right, mut right_entry, mut truth_lines) = (0, 0, 0, 0);
    // The same over files never renamed.
    let (mut kept_right, mut kept_truth) = (0, 0);
    let mut big_ms = Vec::new();
    for (i, f) in w.files.iter().enumerate() {
        let path = repo.join(&f.rel);
        let t = Instant::now();
        let b = blame(conn, &path, &BlameOptions::default())?;
        if i == 0 {
            big_ms.push(ms(t.elapsed()));
        }
        assert_eq!(b.lines.len(), f.lines.len(), "{}", f.rel);
        for (got, want) in b.lines.iter().zip(&f.lines) {
            let truth = session_of(want.origin);
            truth_lines += usize::from(truth.is_some());
            kept_truth += usize::from(truth.is_some() && !f.renamed);
            if let Some(by) = &got.by {
                attributed += 1;
                if by.session_id == truth {
                    right += 1;
                    kept_right += usize::from(!f.renamed);
                    let Origin::Step(st) = want.origin else {
                        unreachable!()
                    };
                    right_entry +=
                        usize::from(by.entry_id.as_deref() == Some(w.steps[st].1.as_str()));
                }
            }
        }
    }
    for _ in 0..4 {
        let t = Instant::now();
        blame(conn, &repo.join(&w.files[0].rel), &BlameOptions::default())?;
        big_ms.push(ms(t.elapsed()));
    }

    // Commits: every one, scored against the origins of its added lines.
    let t = Instant::now();
    let opts = CommitsOptions {
        repo: repo.clone(),
        range: "HEAD".into(),
        limit: usize::MAX,
    };
    let got = commits(conn, &opts)?;
    let commits_ms = ms(t.elapsed());
    let truth_commits = Repo::discover(&repo)?.commits("HEAD", usize::MAX)?;
    let (mut exact, mut pairs_got, mut pairs_right, mut pairs_truth) = (0, 0, 0, 0);
    for (g, c) in got.iter().zip(&truth_commits) {
        let snap = &w.snapshots[&c.id];
        let mut want = BTreeSet::new();
        for a in &c.added {
            if let Some(file) = snap.iter().find(|f| f.rel == a.path) {
                for &n in &a.lines {
                    want.extend(session_of(file.lines[n - 1].origin));
                }
            }
        }
        let have: BTreeSet<String> = g
            .sessions
            .iter()
            .filter_map(|p| p.session_id.clone())
            .collect();
        exact += usize::from(have == want);
        if have != want && std::env::var_os("BENCH_FILES_DEBUG").is_some() {
            eprintln!(
                "{} {:?}: want {want:?} have {have:?}",
                &c.id[..8],
                c.summary
            );
            let r = Repo::discover(&repo)?;
            for a in &c.added {
                let Some(file) = snap.iter().find(|f| f.rel == a.path) else {
                    continue;
                };
                let abs = repo.join(&a.path).to_string_lossy().into_owned();
                let steps = pidx::query::files::steps(conn, &abs)?;
                let upto: Vec<_> = steps
                    .iter()
                    .filter(|s| s.who.ts_ms.unwrap() <= c.time_ms + 999)
                    .map(|s| s.replay())
                    .collect();
                let text = r.file_at(&c.id, &a.path)?.unwrap();
                let who = pidx::query::files::attribute::attribute(&text, &upto);
                for &n in &a.lines {
                    let o = file.lines[n - 1].origin;
                    let want_e = match o {
                        Origin::Step(i) => Some(i),
                        _ => None,
                    };
                    let have_e = who[n - 1];
                    eprintln!(
                        "   {} {n} want {:?} have {:?} {:?}",
                        a.path,
                        want_e.map(|i| &w.steps[i].1),
                        have_e.map(|i| steps[i].who.entry_id.clone()),
                        file.lines[n - 1].text
                    );
                }
            }
        }
        pairs_got += have.len();
        pairs_truth += want.len();
        pairs_right += have.intersection(&want).count();
    }

    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "## Attribution (seed {}, {} events, {} steps, {} commits, {} files)",
        args.seed,
        args.events,
        w.steps.len(),
        got.len(),
        w.files.len()
    );
    println!();
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| blame precision (right session / lines attributed) | {:.2}% ({right}/{attributed}) |",
        pct(right, attributed)
    );
    println!("| blame recall (right session / lines a session produced) | {:.2}% ({right}/{truth_lines}) |", pct(right, truth_lines));
    println!(
        "| blame recall on files never renamed | {:.2}% ({kept_right}/{kept_truth}) |",
        pct(kept_right, kept_truth)
    );
    println!(
        "| blame: right entry too | {:.2}% of the right sessions |",
        pct(right_entry, right)
    );
    println!(
        "| commits given exactly the right sessions | {:.2}% ({exact}/{}) |",
        pct(exact, got.len()),
        got.len()
    );
    println!(
        "| commit sessions precision / recall | {:.2}% / {:.2}% |",
        pct(pairs_right, pairs_got),
        pct(pairs_right, pairs_truth)
    );
    println!(
        "| blame of the {}-line file (median of 5) | {:.1} ms |",
        w.files[0].lines.len(),
        median(big_ms)
    );
    println!(
        "| commits over {} commits | {:.0} ms |",
        got.len(),
        commits_ms
    );
    if let Some(db) = &args.corpus_db {
        files_timing(db)?;
    }
    Ok(())
}

/// `files PATH` on a corpus index: the most touched path, and one touched once.
fn files_timing(db: &Path) -> Result<()> {
    let store = pidx::store::Store::open_read_only(db)?;
    let conn = &store.conn;
    let busiest: String = conn.query_row(
        "SELECT path FROM touches GROUP BY path ORDER BY count(*) DESC LIMIT 1",
        [],
        |r| r.get(0),
    )?;
    let once: String = conn.query_row(
        "SELECT path FROM touches GROUP BY path HAVING count(*) = 1 LIMIT 1",
        [],
        |r| r.get(0),
    )?;
    let touches_n: i64 = conn.query_row("SELECT count(*) FROM touches", [], |r| r.get(0))?;
    for (what, path) in [
        ("most touched path", busiest),
        ("a path touched once", once),
    ] {
        let opts = FilesOptions {
            pattern: Some(path),
            limit: 50,
            diffs: true,
            ..Default::default()
        };
        let mut runs = Vec::new();
        let mut n = 0;
        for _ in 0..7 {
            let t = Instant::now();
            n = touches(conn, &opts)?.len();
            runs.push(ms(t.elapsed()));
        }
        println!("| files PATH on the corpus ({what}, {n} rows of {touches_n} touches, median of 7) | {:.2} ms |", median(runs));
    }
    Ok(())
}
