//! A search narrowed by project, session, time or model drops the full-text matches outside
//! the runs of entry rows its filters leave (`src/query/search/span.rs`) before scoring or
//! joining them. Its hits must be exactly those the filters give over every match: here the
//! files of two projects are appended to over several syncs, so each file's rows lie in
//! several runs between other files' runs, and every query kind is checked under every filter:
//! while a session's rows are few (read whole by literal and regex searches) and once a filler
//! session lies between its runs (asked of the full-text index).

use crate::common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use pidx::query::search::{parse, search, SearchOptions};
use pidx::store::Scope;
use pidx::store::Store;

/// One entry as written: its file, id, minute of its timestamp, text and (for an assistant
/// message) model.
#[derive(Clone)]
struct Entry {
    file: &'static str,
    id: String,
    minute: i64,
    text: String,
    model: Option<&'static str>,
}

const FILES: [(&str, &str); 4] = [
    ("a1", "alpha"),
    ("a2", "alpha"),
    ("b1", "beta"),
    ("b2", "beta"),
];

fn project(file: &str) -> &'static str {
    FILES.iter().find(|(f, _)| *f == file).unwrap().1
}

fn path(root: &Path, file: &str) -> PathBuf {
    root.join(format!("--home-u-{}--", project(file)))
        .join(format!("2026-03-01T00-00-00-000Z_{file}.jsonl"))
}

/// Entry `n` of `file`: minutes in no order, one text in four without the needles, every
/// fifth an assistant message (`b2` and `a1` answer with claude, the others with gpt).
fn entry(file: &'static str, n: i64) -> Entry {
    let text = if n % 4 == 0 {
        format!("plain words {n}")
    } else {
        format!("calls tok_en{n} here")
    };
    let model = (n % 5 == 0).then_some(if matches!(file, "a1" | "b2") {
        "claude-x"
    } else {
        "gpt-y"
    });
    Entry {
        file,
        id: format!("{file}-{n:03}"),
        minute: n * 37 % 113,
        text,
        model,
    }
}

fn line(e: &Entry, parent: Option<&str>) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let ts = format!(
        "2026-03-01T{:02}:{:02}:00.000Z",
        e.minute / 60,
        e.minute % 60
    );
    let message = match e.model {
        Some(model) => format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{}"}}],"provider":"p","model":"{model}","timestamp":1}}"#,
            e.text
        ),
        None => format!(r#"{{"role":"user","content":"{}","timestamp":1}}"#, e.text),
    };
    format!(
        r#"{{"type":"message","id":"{}","parentId":{parent},"timestamp":"{ts}","message":{message}}}"#,
        e.id
    )
}

/// Appends `entries` to `file` (a new file gets its header first), chained after `last`.
fn append(root: &Path, file: &str, last: Option<&str>, entries: &[Entry]) {
    let p = path(root, file);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .unwrap();
    if last.is_none() {
        writeln!(
            f,
            r#"{{"type":"session","version":3,"id":"{file}","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/home/u/{}"}}"#,
            project(file)
        )
        .unwrap();
    }
    let mut parent = last.map(str::to_string);
    for e in entries {
        writeln!(f, "{}", line(e, parent.as_deref())).unwrap();
        parent = Some(e.id.clone());
    }
}

/// Sets a narrowing's options (given the index, for ids).
type Set = Box<dyn Fn(&mut SearchOptions, &Store)>;
/// Whether a narrowing keeps an entry (given every entry, for the models its file used).
type Keeps = Box<dyn Fn(&Entry, &[Entry]) -> bool>;

/// A narrowing: the options it sets and which entries it keeps.
struct Narrowing {
    what: &'static str,
    set: Set,
    keeps: Keeps,
}

fn file_id(store: &Store, file: &str) -> i64 {
    store
        .conn
        .query_row(
            "SELECT file_id FROM sessions WHERE session_id = ?1",
            [file],
            |r| r.get(0),
        )
        .unwrap()
}

fn narrowings() -> Vec<Narrowing> {
    let used = |model: &'static str| {
        move |e: &Entry, live: &[Entry]| {
            live.iter()
                .any(|o| o.file == e.file && o.model.is_some_and(|m| m.contains(model)))
        }
    };
    vec![
        Narrowing {
            what: "--cwd alpha",
            set: Box::new(|o, _| o.cwd = Some("/home/u/alpha".into())),
            keeps: Box::new(|e, _| project(e.file) == "alpha"),
        },
        Narrowing {
            what: "--cwd beta",
            set: Box::new(|o, _| o.cwd = Some("/home/u/beta".into())),
            keeps: Box::new(|e, _| project(e.file) == "beta"),
        },
        Narrowing {
            what: "--cwd of no session",
            set: Box::new(|o, _| o.cwd = Some("/home/u/nowhere".into())),
            keeps: Box::new(|_, _| false),
        },
        Narrowing {
            what: "--session a2",
            set: Box::new(|o, s| o.file_id = Some(file_id(s, "a2"))),
            keeps: Box::new(|e, _| e.file == "a2"),
        },
        Narrowing {
            what: "--since minute 60",
            set: Box::new(|o, _| o.since_ms = Some(minute_ms(60))),
            keeps: Box::new(|e, _| e.minute >= 60),
        },
        Narrowing {
            what: "--until minute 60",
            set: Box::new(|o, _| o.until_ms = Some(minute_ms(60))),
            keeps: Box::new(|e, _| e.minute < 60),
        },
        Narrowing {
            what: "--since minute 30 --until minute 90",
            set: Box::new(|o, _| {
                o.since_ms = Some(minute_ms(30));
                o.until_ms = Some(minute_ms(90));
            }),
            keeps: Box::new(|e, _| (30..90).contains(&e.minute)),
        },
        Narrowing {
            what: "--until before every entry",
            set: Box::new(|o, _| o.until_ms = Some(minute_ms(-1))),
            keeps: Box::new(|_, _| false),
        },
        Narrowing {
            what: "--model claude",
            set: Box::new(|o, _| o.model = Some("claude".into())),
            keeps: Box::new(used("claude")),
        },
        Narrowing {
            what: "--cwd beta --since minute 90 --model gpt",
            set: Box::new(|o, _| {
                o.cwd = Some("/home/u/beta".into());
                o.since_ms = Some(minute_ms(90));
                o.model = Some("gpt".into());
            }),
            keeps: Box::new(move |e, live| {
                project(e.file) == "beta" && e.minute >= 90 && used("gpt")(e, live)
            }),
        },
    ]
}

fn minute_ms(m: i64) -> i64 {
    chrono::DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z")
        .unwrap()
        .timestamp_millis()
        + m * 60_000
}

/// Each query (words, literal, regex) and the entries it matches.
type Query = (&'static str, bool, fn(&str) -> bool);

const QUERIES: [Query; 5] = [
    ("calls", false, |t| t.starts_with("calls ")),
    ("tok_en1", true, |t| t.contains("tok_en1")),
    ("re:tok_en\\d*7", false, |t| {
        t.split(' ')
            .any(|w| w.starts_with("tok_en") && w.contains('7'))
    }),
    ("plain", false, |t| t.starts_with("plain ")),
    // A scan of every text (no word to look up), read run by run.
    ("re:[0-9]{2}\\s", false, |t| {
        t.as_bytes()
            .windows(3)
            .any(|w| w[0].is_ascii_digit() && w[1].is_ascii_digit() && w[2] == b' ')
    }),
];

fn check(store: &Store, scope: &Scope, live: &[Entry], at: &str) {
    for (query, literal, matches) in QUERIES {
        for n in narrowings() {
            let mut opts = SearchOptions::everywhere(parse(query, literal).unwrap(), 1000);
            (n.set)(&mut opts, store);
            let got: BTreeSet<String> = search(&store.conn, scope, &opts)
                .unwrap()
                .into_iter()
                .map(|h| h.entry_id.unwrap())
                .collect();
            let expected: BTreeSet<String> = live
                .iter()
                .filter(|e| matches(&e.text) && (n.keeps)(e, live))
                .map(|e| e.id.clone())
                .collect();
            assert_eq!(got, expected, "{at}: {query} {}", n.what);
            if literal || query.starts_with("re:") {
                // Newest first: a small limit gives the newest matches in the span.
                let mut newest: Vec<&Entry> = live
                    .iter()
                    .filter(|e| matches(&e.text) && (n.keeps)(e, live))
                    .collect();
                newest.sort_by_key(|e| std::cmp::Reverse(e.minute));
                opts.limit = 3;
                let got: BTreeSet<String> = search(&store.conn, scope, &opts)
                    .unwrap()
                    .into_iter()
                    .map(|h| h.entry_id.unwrap())
                    .collect();
                let want: BTreeSet<String> = newest.iter().take(3).map(|e| e.id.clone()).collect();
                assert_eq!(got, want, "{at}: {query} {} limit 3", n.what);
            }
        }
    }
}

#[test]
fn a_narrowed_search_finds_exactly_what_its_filters_keep() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let mut live: Vec<Entry> = Vec::new();
    let mut n = 0;
    let mut store_scope: Option<(Store, Scope)> = None;
    let db = tmp.path().join("index.db");
    // Round 0 writes every file; later rounds append to some, synced between rounds, so each
    // file's rows are several runs among other files' runs.
    let rounds: [&[&'static str]; 4] = [
        &["a1", "b1", "a2", "b2"],
        &["b1", "a1"],
        &["a2", "b2", "a1"],
        &["b1", "a2"],
    ];
    for (round, files) in rounds.iter().enumerate() {
        if round == 1 {
            filler(&root);
        }
        for &file in *files {
            let last = live
                .iter()
                .rev()
                .find(|e| e.file == file)
                .map(|e| e.id.clone());
            let more: Vec<Entry> = (0..6)
                .map(|_| {
                    n += 1;
                    entry(file, n)
                })
                .collect();
            append(&root, file, last.as_deref(), &more);
            live.extend(more);
        }
        match &mut store_scope {
            None => store_scope = Some(common::indexed(&root, &db)),
            Some((store, _)) => {
                common::resync(store, &root);
            }
        }
        let (store, scope) = store_scope.as_ref().unwrap();
        // a2's rows: a session's few (read whole) before the filler, then around it (asked of
        // the full-text index).
        assert_eq!(rid_width(store, "a2") < 500, round < 2, "round {round}");
        check(store, scope, &live, &format!("round {round}"));
    }
    let (store, _) = store_scope.unwrap();
    let runs: i64 = store
        .conn
        .query_row("SELECT count(*) FROM rid_runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        runs, 12,
        "each file written or appended to is a run of its own (the filler too)"
    );
}

/// A session of 2,500 entries matching no query, in a project of its own, synced with round 1:
/// the runs appended after it lie more than 2,000 rids from those before it.
fn filler(root: &Path) {
    let dir = root.join("--home-u-gamma--");
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines = vec![
        r#"{"type":"session","version":3,"id":"g1","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/home/u/gamma"}"#
            .to_string(),
    ];
    let mut parent = "null".to_string();
    for i in 0..2_500 {
        lines.push(format!(
            r#"{{"type":"message","id":"g{i}","parentId":{parent},"timestamp":"2026-03-01T00:00:00.000Z","message":{{"role":"user","content":"filler","timestamp":1}}}}"#
        ));
        parent = format!("\"g{i}\"");
    }
    std::fs::write(
        dir.join("2026-03-01T00-00-00-000Z_g1.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

/// How many rids lie between the first and the last row of a session's runs.
fn rid_width(store: &Store, session: &str) -> i64 {
    store
        .conn
        .query_row(
            "SELECT max(r.hi) - min(r.lo) FROM rid_runs r JOIN sessions s ON s.file_id = r.file_id
             WHERE s.session_id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap()
}
