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
//! `--corpus-db` (an index of a gen_corpus corpus) `files PATH` on it.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use serde_json::{json, Value};
use similar::{capture_diff_slices, Algorithm, DiffOp};

use pidx::query::files::attribute::fuzzy;
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

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() % 10_000) as f64 / 10_000.0 < p
    }
}

/// Who last produced a line: a person, or a step (index into `World::steps`).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Origin {
    Person,
    Step(usize),
}

#[derive(Clone)]
struct Line {
    text: String,
    origin: Origin,
}

#[derive(Clone)]
struct File {
    rel: String,
    lines: Vec<Line>,
    /// Renamed by a person at some point (blame does not follow renames).
    renamed: bool,
}

impl File {
    fn content(&self) -> String {
        self.lines.iter().map(|l| format!("{}\n", l.text)).collect()
    }
}

struct SessionLog {
    id: String,
    lines: Vec<String>,
    last: Option<String>,
}

struct World {
    rng: Rng,
    repo: PathBuf,
    files: Vec<File>,
    sessions: Vec<SessionLog>,
    /// (session index, entry id) of each step.
    steps: Vec<(usize, String)>,
    clock_ms: i64,
    serial: usize,
    /// The files as each commit has them.
    snapshots: HashMap<String, Vec<File>>,
    commit_ids: Vec<String>,
}

const WORDS: [&str; 12] = [
    "parse", "render", "index", "query", "cache", "token", "branch", "merge", "flush", "write",
    "scan", "split",
];

impl World {
    fn fresh_line(&mut self) -> String {
        self.serial += 1;
        let w = WORDS[self.rng.below(WORDS.len())];
        match self.rng.below(10) {
            0 => "}".into(),
            1 => String::new(),
            2 => "    return Ok(());".into(),
            // Trailing spaces, for whitespace-normalised edits to meet later.
            3 => format!("    let {w}_{} = {w}(x);  ", self.serial),
            _ => format!(
                "    let {w}_{} = {w}_{}(&y, {});",
                self.serial,
                w,
                self.rng.below(100)
            ),
        }
    }

    fn tick(&mut self) -> String {
        self.clock_ms += 1000 + self.rng.below(5000) as i64;
        chrono::DateTime::from_timestamp_millis(self.clock_ms)
            .unwrap()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string()
    }

    fn entry(&mut self, s: usize, message: Value) -> String {
        let ts = self.tick();
        self.serial += 1;
        let id = format!("{:08x}", self.serial);
        let log = &mut self.sessions[s];
        let e = json!({"type": "message", "id": id, "parentId": log.last, "timestamp": ts,
                       "message": message});
        log.lines.push(e.to_string());
        log.last = Some(id.clone());
        id
    }

    /// A tool call and its result; the entry id of the call.
    fn call(&mut self, s: usize, tool: &str, args: Value, failed: bool) -> String {
        self.call_with(s, tool, args, failed, Value::Null)
    }

    /// [`Self::call`] with the result's `details` (an edit's `firstChangedLine`).
    fn call_with(
        &mut self,
        s: usize,
        tool: &str,
        args: Value,
        failed: bool,
        details: Value,
    ) -> String {
        let call_id = format!("call_{}", self.serial);
        let id = self.entry(
            s,
            json!({"role": "assistant", "content": [
            {"type": "toolCall", "id": call_id, "name": tool, "arguments": args}],
            "provider": "p", "model": "m", "stopReason": "toolUse"}),
        );
        let mut result = json!({"role": "toolResult", "toolCallId": call_id, "toolName": tool,
                                "content": [{"type": "text", "text": "ok"}], "isError": failed});
        if !details.is_null() {
            result["details"] = details;
        }
        self.entry(s, result);
        id
    }

    fn save(&self, f: usize) {
        let file = &self.files[f];
        let path = self.repo.join(&file.rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, file.content()).unwrap();
    }

    fn session_write(&mut self, s: usize, f: Option<usize>, n: usize) {
        let step = self.steps.len();
        let mut lines: Vec<Line> = Vec::new();
        if let Some(f) = f {
            // A rewrite keeps most lines and adds some: all of them are the write's.
            for l in self.files[f].lines.clone() {
                if self.rng.chance(0.8) {
                    lines.push(Line {
                        text: l.text,
                        origin: Origin::Step(step),
                    });
                }
                if self.rng.chance(0.1) {
                    let text = self.fresh_line();
                    lines.push(Line {
                        text,
                        origin: Origin::Step(step),
                    });
                }
            }
        } else {
            for _ in 0..n {
                let text = self.fresh_line();
                lines.push(Line {
                    text,
                    origin: Origin::Step(step),
                });
            }
        }
        let f = f.unwrap_or_else(|| {
            self.files.push(File {
                rel: format!("src/f{}.rs", self.files.len()),
                lines: vec![],
                renamed: false,
            });
            self.files.len() - 1
        });
        self.files[f].lines = lines;
        let content = self.files[f].content();
        let rel = self.files[f].rel.clone();
        let id = self.call(s, "write", json!({"path": rel, "content": content}), false);
        self.steps.push((s, id));
        self.save(f);
    }

    /// An edit of 1-3 whole lines (more until the old text is unique); `fuzzy`: the old text
    /// as the model typed it, without the file's trailing spaces (pi matches it normalised).
    fn session_edit(&mut self, s: usize, f: usize, fuzzy_old: bool) {
        let lines = &self.files[f].lines;
        if lines.len() < 4 {
            return;
        }
        let content = self.files[f].content();
        let start = self.rng.below(lines.len() - 1);
        let mut len = 1 + self.rng.below(3);
        let block = |len: usize| -> String {
            lines[start..(start + len).min(lines.len())]
                .iter()
                .map(|l| format!("{}\n", l.text))
                .collect()
        };
        while content.matches(&block(len)).count() > 1 && start + len < lines.len() && len < 8 {
            len += 1;
        }
        let len = len.min(lines.len() - start);
        let exact = block(len);
        if content.matches(&exact).count() != 1 || exact.trim().is_empty() {
            return;
        }
        let has_trailing = lines[start..start + len]
            .iter()
            .any(|l| l.text.ends_with(' '));
        let fuzzy_old = fuzzy_old && has_trailing;
        let old_text = if fuzzy_old {
            lines[start..start + len]
                .iter()
                .map(|l| format!("{}\n", l.text.trim_end()))
                .collect()
        } else {
            exact.clone()
        };
        let step = self.steps.len();
        let old: Vec<Line> = self.files[f].lines[start..start + len].to_vec();
        let mut new: Vec<Line> = Vec::new();
        for l in &old {
            // pi writes the touched lines of a fuzzy match in their normalised form.
            let kept = if fuzzy_old {
                l.text.trim_end().to_string()
            } else {
                l.text.clone()
            };
            if self.rng.chance(0.5) {
                new.push(Line {
                    text: kept,
                    origin: l.origin,
                });
            } else {
                let text = self.fresh_line();
                new.push(Line {
                    text,
                    origin: Origin::Step(step),
                });
            }
            if self.rng.chance(0.3) {
                let text = self.fresh_line();
                new.push(Line {
                    text,
                    origin: Origin::Step(step),
                });
            }
        }
        let new_text: String = new.iter().map(|l| format!("{}\n", l.text)).collect();
        if new_text == old_text {
            return;
        }
        // Truth: a line whose fuzzy form the edit kept keeps its origin.
        let (a, b): (Vec<String>, Vec<String>) = (
            old.iter().map(|l| fuzzy(&l.text)).collect(),
            new.iter().map(|l| fuzzy(&l.text)).collect(),
        );
        for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for k in 0..len {
                    new[new_index + k].origin = old[old_index + k].origin;
                }
            } else {
                let (i, n) = (op.new_range().start, op.new_range().len());
                for l in &mut new[i..i + n] {
                    l.origin = Origin::Step(step);
                }
            }
        }
        // pi's firstChangedLine: the first line of the new file its line diff marks.
        let base: Vec<&str> = old_text.lines().collect();
        let k = new
            .iter()
            .zip(&base)
            .take_while(|(n, o)| n.text == **o)
            .count();
        let first_changed = start + k + 1;
        self.files[f].lines.splice(start..start + len, new);
        let rel = self.files[f].rel.clone();
        let args = json!({"path": rel, "edits": [{"oldText": old_text, "newText": new_text}]});
        let details = json!({"diff": "", "firstChangedLine": first_changed});
        let id = self.call_with(s, "edit", args, false, details);
        self.steps.push((s, id));
        self.save(f);
    }

    fn failed_edit(&mut self, s: usize, f: usize) {
        let rel = self.files[f].rel.clone();
        let args = json!({"path": rel, "oldText": format!("no such text {}", self.serial), "newText": "x"});
        self.call(s, "edit", args, true);
    }

    fn person_edit(&mut self, f: usize) {
        let n = self.files[f].lines.len();
        if n == 0 {
            return;
        }
        let i = self.rng.below(n);
        match self.rng.below(4) {
            0 => {
                let text = self.fresh_line();
                self.files[f].lines.insert(
                    i,
                    Line {
                        text,
                        origin: Origin::Person,
                    },
                );
            }
            1 => {
                self.files[f].lines.remove(i);
            }
            // A whitespace-only change: re-indented.
            2 if !self.files[f].lines[i].text.trim().is_empty() => {
                let l = &mut self.files[f].lines[i];
                l.text = format!("  {}", l.text);
                l.origin = Origin::Person;
            }
            _ => {
                let l = &mut self.files[f].lines[i];
                l.text = format!("{} // checked", l.text);
                l.origin = Origin::Person;
            }
        }
        self.save(f);
    }

    /// A person restores a file as a commit some commits back had it.
    fn revert(&mut self, f: usize) {
        let back = 1 + self.rng.below(4);
        let Some(id) = self
            .commit_ids
            .len()
            .checked_sub(back)
            .map(|i| self.commit_ids[i].clone())
        else {
            return;
        };
        let rel = self.files[f].rel.clone();
        if let Some(old) = self.snapshots[&id].iter().find(|x| x.rel == rel) {
            self.files[f].lines = old.lines.clone();
            self.save(f);
        }
    }

    fn rename(&mut self, f: usize) {
        let from = self.repo.join(&self.files[f].rel);
        let rel = format!("src/moved_{}.rs", self.serial);
        self.serial += 1;
        std::fs::rename(from, self.repo.join(&rel)).unwrap();
        self.files[f].rel = rel;
        self.files[f].renamed = true;
    }

    fn commit(&mut self, msg: &str) {
        let repo = git2::Repository::open(&self.repo).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::new("P", "p@x", &git2::Time::new(self.clock_ms / 1000 + 1, 0))
            .unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        if parent.as_ref().is_some_and(|p| p.tree_id() == tree.id()) {
            return;
        }
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let id = repo
            .commit(Some("HEAD"), &sig, &sig, msg, &tree, &parents)
            .unwrap()
            .to_string();
        self.clock_ms += 2000;
        self.snapshots.insert(id.clone(), self.files.clone());
        self.commit_ids.push(id);
    }
}

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
