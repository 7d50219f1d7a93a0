//! Many writers and many readers on one real PostgreSQL server (issue 52), as real processes:
//! ten sources push at once, each from an index of its own, and several push again while
//! twenty readers run `list`, `search` and `stats` with `--pg` in loops. No process may fail or
//! hang, and every answer about a source must be one that source's index gave locally at one of
//! its pushes: a reader sees a push whole or not at all, never part of one. Run by
//! tests/pg/run.sh.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::pg_support::{pidx, server};

const SOURCES: usize = 10;
const READERS: usize = 20;
/// Sources that push a second, incremental time while the others' and the readers' run.
const AGAIN: usize = 6;
/// The word every user message holds (not the assistant's, to keep the ranked search short on
/// this shared machine): a search for it counts a source's user messages.
const MARKER: &str = "zebramark";
/// Any one process running longer than this is taken for a deadlock (the slowest seen on the
/// shared 2-core machine was a few seconds).
const HANG: Duration = Duration::from_secs(60);

/// What one source's index answers, per reading command: `list --all` (sessions, summed
/// message counts), `search MARKER` (hits) and `stats` (sessions, user and assistant messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Answer {
    list: (u64, u64),
    hits: u64,
    stats: (u64, u64, u64),
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    List,
    Search,
    Stats,
}

/// Each reading command: its arguments on the server, then in a source's own index (which has
/// one source: no `--by source`).
const READS: [(Kind, &[&str], &[&str]); 3] = [
    (Kind::List, &["list", "--all"], &["list", "--all"]),
    (
        Kind::Search,
        &["search", MARKER, "--limit", "100000"],
        &["search", MARKER, "--limit", "100000"],
    ),
    (Kind::Stats, &["stats", "--by", "source"], &["stats"]),
];

/// One source's machine: its own home, session files and index.
struct Machine {
    name: String,
    tmp: tempfile::TempDir,
    root: PathBuf,
    sessions: usize,
}

impl Machine {
    fn new(n: usize) -> Machine {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("sessions");
        Machine {
            name: format!("machine-{n}"),
            tmp,
            root,
            sessions: 0,
        }
    }

    fn cmd(&self) -> Command {
        pidx(self.tmp.path(), &self.root)
    }

    /// `new` more sessions of `entries` messages, and two more messages on each of the first
    /// `grown` sessions (an append, sent incrementally). Ids carry the source's name: entries
    /// with the same id and time in two sources would count once in a search (fork copies).
    fn change(&mut self, new: usize, entries: usize, grown: usize) {
        let dir = self.root.join("--home-u-app--");
        std::fs::create_dir_all(&dir).unwrap();
        for s in 0..grown.min(self.sessions) {
            let path = self.path(s);
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            for i in lines - 1..lines + 1 {
                writeln!(f, "{}", self.message(s, i)).unwrap();
            }
        }
        for _ in 0..new {
            let s = self.sessions;
            self.sessions += 1;
            let mut f = File::create(self.path(s)).unwrap();
            writeln!(f, r#"{{"type":"session","version":3,"id":"{}-s{s}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/app"}}"#, self.name).unwrap();
            for i in 0..entries {
                writeln!(f, "{}", self.message(s, i)).unwrap();
            }
        }
    }

    fn path(&self, s: usize) -> PathBuf {
        self.root
            .join("--home-u-app--")
            .join(format!("2026-01-01T00-00-00-000Z_{}-s{s}.jsonl", self.name))
    }

    /// Message `i` of session `s`: user and assistant in turn, each parented to the one before.
    fn message(&self, s: usize, i: usize) -> String {
        let id = |i: usize| format!("{}-s{s}e{i}", self.name);
        let parent = if i == 0 {
            "null".into()
        } else {
            format!("\"{}\"", id(i - 1))
        };
        let message = if i.is_multiple_of(2) {
            format!(r#"{{"role":"user","content":"{MARKER} question {i}","timestamp":{i}}}"#)
        } else {
            format!(
                r#"{{"role":"assistant","content":[{{"type":"text","text":"answer {i}"}}],"provider":"p","model":"m","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"cost":{{"total":0.001}}}},"timestamp":{i}}}"#
            )
        };
        format!(
            r#"{{"type":"message","id":"{}","parentId":{parent},"timestamp":"2026-01-01T{:02}:{:02}:00.000Z","message":{message}}}"#,
            id(i),
            i / 60 % 24,
            i % 60
        )
    }

    /// Syncs the index and returns what it answers locally: what the server must show of this
    /// source once the next push is in.
    fn sync_and_answer(&self) -> Answer {
        run(self.cmd().arg("sync"), self.tmp.path());
        let mut answer = Answer::default();
        for (kind, _, args) in READS {
            let mut cmd = self.cmd();
            cmd.args(["--no-sync", "--json"]).args(args);
            let got = parse(&run(&mut cmd, self.tmp.path()));
            // The local index has one source: its answers are this machine's alone.
            let mine = per_source(kind, &got, Some(&self.name));
            answer = merge(answer, kind, mine[&self.name]);
        }
        answer
    }

    fn push(&self, url: &str) -> Command {
        let mut cmd = self.cmd();
        cmd.args([
            "--no-sync",
            "--json",
            "push",
            "--pg",
            url,
            "--source",
            &self.name,
        ]);
        cmd
    }
}

/// Runs `cmd` to its end (its output in files under `scratch`, so a large answer never blocks
/// on a full pipe), failing when it fails or outlives [`HANG`].
fn run(cmd: &mut Command, scratch: &Path) -> Output {
    let output = bounded(cmd, scratch);
    assert!(
        output.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn bounded(cmd: &mut Command, scratch: &Path) -> Output {
    let tag = format!("{:?}-{}", std::thread::current().id(), rand_tag());
    let (out, err) = (
        scratch.join(format!("out-{tag}")),
        scratch.join(format!("err-{tag}")),
    );
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} still running after {HANG:?} (a deadlock?): {}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    };
    let _ = (std::fs::remove_file(out), std::fs::remove_file(err));
    output
}

fn rand_tag() -> u64 {
    use std::sync::atomic::AtomicU64;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn parse(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// One command's answer split by source: the locally indexed rows carry no source, and count
/// as `local`'s.
fn per_source(kind: Kind, v: &Value, local: Option<&str>) -> BTreeMap<String, Answer> {
    let mut out: BTreeMap<String, Answer> = BTreeMap::new();
    for row in v.as_array().unwrap_or_else(|| panic!("not a list: {v}")) {
        let source = match (kind, local) {
            (Kind::Stats, None) => row["key"]["source"].as_str(),
            (_, None) => row["source"].as_str(),
            (_, Some(name)) => Some(name),
        };
        let source = source.unwrap_or_else(|| panic!("a row without its source: {row}"));
        let n = |k: &str| row[k].as_u64().unwrap_or_else(|| panic!("no {k}: {row}"));
        let one = match kind {
            Kind::List => Answer {
                list: (1, n("messageCount")),
                ..Answer::default()
            },
            Kind::Search => Answer {
                hits: 1,
                ..Answer::default()
            },
            Kind::Stats => Answer {
                stats: (n("sessions"), n("userMessages"), n("assistantMessages")),
                ..Answer::default()
            },
        };
        let sum = out.entry(source.to_string()).or_default();
        *sum = add(*sum, one);
    }
    out
}

fn add(a: Answer, b: Answer) -> Answer {
    Answer {
        list: (a.list.0 + b.list.0, a.list.1 + b.list.1),
        hits: a.hits + b.hits,
        stats: (
            a.stats.0 + b.stats.0,
            a.stats.1 + b.stats.1,
            a.stats.2 + b.stats.2,
        ),
    }
}

/// `into` with `kind`'s part taken from `from`.
fn merge(mut into: Answer, kind: Kind, from: Answer) -> Answer {
    match kind {
        Kind::List => into.list = from.list,
        Kind::Search => into.hits = from.hits,
        Kind::Stats => into.stats = from.stats,
    }
    into
}

/// Which of `states` (a source's answers at each of its pushes, in order) `got` is, in
/// `kind`'s part; `None` for a torn answer.
fn which(states: &[Answer], kind: Kind, got: Answer) -> Option<usize> {
    states.iter().position(|s| merge(*s, kind, got) == *s)
}

/// A reader's answers: (command, every source's part), in the order it got them, and the
/// slowest of them.
type Seen = (Vec<(Kind, BTreeMap<String, Answer>)>, [Duration; 3]);

fn reader(url: String, stop: Arc<AtomicBool>, n: usize) -> Seen {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let (mut seen, mut slowest) = (Vec::new(), [Duration::ZERO; 3]);
    // One round of every command begun after `stop` (after the last push), so every reader's
    // last answers are the final state.
    let mut after = 0;
    for i in n.. {
        let done = stop.load(Ordering::SeqCst);
        let (kind, args, _) = READS[i % READS.len()];
        let mut cmd = pidx(tmp.path(), &root);
        cmd.args(["--no-sync", "--json", "--pg", &url]).args(args);
        let asked = Instant::now();
        let got = parse(&run(&mut cmd, tmp.path()));
        slowest[kind as usize] = slowest[kind as usize].max(asked.elapsed());
        seen.push((kind, per_source(kind, &got, None)));
        after += usize::from(done);
        if after == READS.len() {
            break;
        }
    }
    (seen, slowest)
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn ten_sources_push_at_once_while_twenty_readers_see_whole_pushes_or_none() {
    let s = server("many");
    let started = Instant::now();
    let mut machines: Vec<Machine> = (0..SOURCES).map(Machine::new).collect();
    // Each source's answers at each of its pushes.
    let states: Vec<Arc<Mutex<Vec<Answer>>>> = (0..SOURCES).map(|_| Arc::default()).collect();

    // Round 0: ten first pushes into an empty database at once (they race to migrate it too).
    std::thread::scope(|scope| {
        for (m, st) in machines.iter_mut().zip(&states) {
            let url = &s.url;
            scope.spawn(move || {
                m.change(5, 8, 0);
                st.lock().unwrap().push(m.sync_and_answer());
                run(&mut m.push(url), m.tmp.path());
            });
        }
    });
    let first_round = started.elapsed();

    let stop = Arc::new(AtomicBool::new(false));
    // Stops the readers however this test ends: a failed push must not leave them reading.
    struct Stop(Arc<AtomicBool>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let stopping = Stop(stop.clone());
    let readers: Vec<_> = (0..READERS)
        .map(|n| {
            let (url, stop) = (s.url.clone(), stop.clone());
            std::thread::spawn(move || reader(url, stop, n))
        })
        .collect();
    // Rounds 1 and 2 while they read: every source grows and pushes; the first AGAIN grow and
    // push once more, twice at once (the second waits on the source's lock, then finds nothing
    // new), overlapping the other sources' first incremental pushes.
    let pushes = Instant::now();
    std::thread::scope(|scope| {
        for (n, (m, st)) in machines.iter_mut().zip(&states).enumerate() {
            let url = &s.url;
            scope.spawn(move || {
                let (new, grown) = (8, 3);
                m.change(new, 8, grown);
                st.lock().unwrap().push(m.sync_and_answer());
                let report = parse(&run(&mut m.push(url), m.tmp.path()));
                // Incremental: the new sessions, and only the new entries of the grown ones.
                assert_eq!(
                    (report["new"].as_u64(), report["appended"].as_u64()),
                    (Some(new as u64), Some(grown as u64)),
                    "{report}"
                );
                if n < AGAIN {
                    let (new, grown) = (4, 2);
                    m.change(new, 8, grown);
                    st.lock().unwrap().push(m.sync_and_answer());
                    let (mut a, mut b) = (m.push(url), m.push(url));
                    let (scratch_a, scratch_b) = (m.tmp.path(), m.tmp.path());
                    let reports = std::thread::scope(|both| {
                        let a = both.spawn(|| parse(&run(&mut a, scratch_a)));
                        let b = both.spawn(|| parse(&run(&mut b, scratch_b)));
                        [a.join().unwrap(), b.join().unwrap()]
                    });
                    // Between them they sent the change once.
                    let sum = |k: &str| reports.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
                    assert_eq!(
                        (sum("new"), sum("appended")),
                        (new as u64, grown as u64),
                        "{reports:?}"
                    );
                }
            });
        }
    });
    let pushing = pushes.elapsed();
    drop(stopping);
    let seen: Vec<Seen> = readers.into_iter().map(|r| r.join().unwrap()).collect();

    let states: Vec<Vec<Answer>> = states.iter().map(|s| s.lock().unwrap().clone()).collect();
    for (m, st) in machines.iter().zip(&states) {
        // Each push changes every part, so a part names the push it shows.
        for pair in st.windows(2) {
            assert!(
                pair[0].list.0 < pair[1].list.0
                    && pair[0].hits < pair[1].hits
                    && pair[0].stats.1 < pair[1].stats.1,
                "{}: {st:?}",
                m.name
            );
        }
    }
    let (mut reads, mut mid) = (0, 0);
    let slowest: Vec<Duration> = (0..3)
        .map(|k| seen.iter().map(|s| s.1[k]).max().unwrap())
        .collect();
    for (r, (answers, _)) in seen.iter().enumerate() {
        // A later answer never shows an earlier push than one this reader saw before.
        let mut newest = [0; SOURCES];
        for (kind, by_source) in answers {
            reads += 1;
            assert_eq!(
                by_source.len(),
                SOURCES,
                "reader {r}: {kind:?} {by_source:?}"
            );
            for (n, (m, st)) in machines.iter().zip(&states).enumerate() {
                let got = by_source[&m.name];
                let Some(push) = which(st, *kind, got) else {
                    panic!(
                        "reader {r}: {kind:?} of {} shows part of a push: {got:?}, pushes {st:?}",
                        m.name
                    );
                };
                assert!(
                    push >= newest[n],
                    "reader {r}: {kind:?} of {} went back to push {push} after push {}",
                    m.name,
                    newest[n]
                );
                newest[n] = push;
                mid += usize::from(push + 1 < st.len());
            }
        }
        // Its last answers (begun after every push ended) show every source's last push.
        for (kind, last) in &answers[answers.len() - READS.len()..] {
            for (m, st) in machines.iter().zip(&states) {
                assert_eq!(
                    which(st, *kind, last[&m.name]),
                    Some(st.len() - 1),
                    "reader {r}: last {kind:?} of {}",
                    m.name
                );
            }
        }
    }
    eprintln!(
        "pg_many: {SOURCES} sources, {READERS} readers: first pushes {first_round:.1?}, \
         incremental pushes {pushing:.1?}, {reads} reads (the slowest list, search, stats {slowest:.1?}; {mid} source \
         answers before a source's last push), total {:.1?}",
        started.elapsed()
    );
    assert!(
        mid > 0,
        "no reader read while a push was under way: the test proved nothing"
    );
}
