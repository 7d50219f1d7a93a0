//! Literal and regex hits come newest first. Their candidates are joined to their entries run by
//! run (`rid_runs`, migration 0018; `src/query/search/newest.rs`), newest run first, instead of
//! all of them and then sorted: the hits must be exactly those the full sort gives, whatever the
//! limit, across files appended to at several times (timestamps out of order within a file), a
//! file rewritten (its rows and runs gone, rids reused), an entry without a timestamp, and an
//! index whose runs are missing.

use crate::common;

use std::io::Write;
use std::path::Path;

use pidx::query::search::{parse, search, SearchOptions};
use pidx::store::Scope;
use pidx::store::Store;

/// One entry as written: session file, entry id, minute of its timestamp (`None`: no
/// timestamp), text.
#[derive(Clone)]
struct Entry {
    file: String,
    id: String,
    minute: Option<i64>,
    text: String,
}

/// Entries are numbered across every file; entry `n` is at minute `n * 37 % 97` (all distinct,
/// in no order within a file), and every third one holds no needle.
fn entry(file: &str, n: i64) -> Entry {
    let text = if n % 3 == 0 {
        format!("plain words {n}")
    } else {
        format!("calls tok_en{n} here")
    };
    Entry {
        file: file.to_string(),
        id: format!("{file}-{n:03}"),
        minute: Some(n * 37 % 97),
        text,
    }
}

fn line(e: &Entry, parent: Option<&str>) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let ts = e.minute.map_or(String::new(), |m| {
        format!(
            r#""timestamp":"2026-03-01T{:02}:{:02}:00.000Z","#,
            m / 60,
            m % 60
        )
    });
    format!(
        r#"{{"type":"message","id":"{}","parentId":{parent},{ts}"message":{{"role":"user","content":"{}","timestamp":1}}}}"#,
        e.id, e.text
    )
}

fn path(root: &Path, file: &str) -> std::path::PathBuf {
    root.join("--home-u-newest--")
        .join(format!("2026-03-01T00-00-00-000Z_{file}.jsonl"))
}

/// Writes `file` anew with `entries`.
fn write(root: &Path, file: &str, entries: &[Entry]) {
    let p = path(root, file);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{file}","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/home/u/newest"}}"#
    )];
    let mut parent: Option<String> = None;
    for e in entries {
        lines.push(line(e, parent.as_deref()));
        parent = Some(e.id.clone());
    }
    std::fs::write(p, lines.join("\n") + "\n").unwrap();
}

/// Appends `more` to `file`, after its last entry `last`.
fn append(root: &Path, file: &str, last: &str, more: &[Entry]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path(root, file))
        .unwrap();
    let mut parent = last.to_string();
    for e in more {
        writeln!(f, "{}", line(e, Some(&parent))).unwrap();
        parent = e.id.clone();
    }
}

/// The entry ids a search must give: the newest `limit` entries matching, grouped by session
/// in order of first appearance (as `search` groups them).
fn expected(live: &[Entry], matches: impl Fn(&str) -> bool, limit: usize) -> Vec<String> {
    let mut found: Vec<&Entry> = live.iter().filter(|e| matches(&e.text)).collect();
    found.sort_by_key(|e| std::cmp::Reverse(e.minute));
    found.truncate(limit);
    let mut files: Vec<&str> = Vec::new();
    for e in &found {
        if !files.contains(&e.file.as_str()) {
            files.push(&e.file);
        }
    }
    files
        .iter()
        .flat_map(|f| found.iter().filter(move |e| e.file == *f))
        .map(|e| e.id.clone())
        .collect()
}

fn check(store: &Store, scope: &Scope, live: &[Entry], at: &str) {
    let re = regex::Regex::new("(?i)tok_\\w+").unwrap();
    let digits = regex::Regex::new("[0-9]{2}").unwrap();
    type Test<'a> = (&'a str, bool, Box<dyn Fn(&str) -> bool>);
    let queries: Vec<Test> = vec![
        ("tok_en", true, Box::new(|t: &str| t.contains("tok_en"))),
        ("_en1", true, Box::new(|t: &str| t.contains("_en1"))),
        ("tok", true, Box::new(|t: &str| t.contains("tok"))),
        ("calls", true, Box::new(|t: &str| t.contains("calls"))),
        (
            "re:tok_\\w+",
            false,
            Box::new(move |t: &str| re.is_match(t)),
        ),
        // Scans of every text (no word to look up), read run by run.
        (" ", true, Box::new(|t: &str| t.contains(' '))),
        (
            "re:[0-9]{2}",
            false,
            Box::new(move |t: &str| digits.is_match(t)),
        ),
    ];
    for (query, literal, matches) in &queries {
        for limit in [1, 2, 5, 13, 1000] {
            let opts = SearchOptions::everywhere(parse(query, *literal).unwrap(), limit);
            let got: Vec<String> = search(&store.conn, scope, &opts)
                .unwrap()
                .into_iter()
                .map(|h| h.entry_id.unwrap())
                .collect();
            assert_eq!(
                got,
                expected(live, matches, limit),
                "{at}: {query} limit {limit}"
            );
        }
    }
}

#[test]
fn literal_and_regex_hits_are_the_newest_whatever_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let mut n = 0;
    let mut next = |file: &str| {
        n += 1;
        entry(file, n)
    };
    let mut live: Vec<Entry> = Vec::new();
    for file in ["a", "b", "c", "d", "e"] {
        let mut entries: Vec<Entry> = (0..8).map(|_| next(file)).collect();
        if file == "c" {
            // No timestamp: it sorts after every timestamp.
            entries[3].minute = None;
            entries[3].text = "calls tok_en_none here".into();
        }
        write(&root, file, &entries);
        live.extend(entries);
    }
    let db = tmp.path().join("index.db");
    let (mut store, scope) = common::indexed(&root, &db);
    check(&store, &scope, &live, "first sync");

    // Appends at two more syncs: each file gets runs of its own between other files' runs.
    for round in 0..2 {
        for file in ["a", "c", "e"] {
            let last = live
                .iter()
                .rev()
                .find(|e| e.file == file)
                .unwrap()
                .id
                .clone();
            let more: Vec<Entry> = (0..4).map(|_| next(file)).collect();
            append(&root, file, &last, &more);
            live.extend(more);
        }
        common::resync(&mut store, &root);
        check(&store, &scope, &live, &format!("append round {round}"));
    }
    let runs: i64 = store
        .conn
        .query_row("SELECT count(*) FROM rid_runs", [], |r| r.get(0))
        .unwrap();
    assert!(runs >= 11, "{runs} runs");

    // A file rewritten: its rows and runs go. It is the file holding the highest rid, so its
    // new rows take rids its old ones had.
    let name: String = store
        .conn
        .query_row(
            "SELECT f.name FROM entries e JOIN files f ON f.id = e.file_id
             ORDER BY e.rid DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let last = name
        .trim_end_matches(".jsonl")
        .rsplit('_')
        .next()
        .unwrap()
        .to_string();
    let fresh: Vec<Entry> = (0..6).map(|_| next(&last)).collect();
    write(&root, &last, &fresh);
    live.retain(|e| e.file != last);
    live.extend(fresh);
    common::resync(&mut store, &root);
    check(&store, &scope, &live, "rewrite");
    let (rebuilt, _) = common::indexed(&root, &tmp.path().join("rebuilt.db"));
    let rids = |s: &Store| -> Vec<(i64, i64)> {
        common::pairs(
            &s.conn,
            "SELECT r.file_id, count(*) FROM rid_runs r JOIN entries e
             ON e.rid BETWEEN r.lo AND r.hi GROUP BY r.file_id ORDER BY 1",
        )
    };
    let entries = |s: &Store| -> Vec<(i64, i64)> {
        common::pairs(
            &s.conn,
            "SELECT file_id, count(*) FROM entries GROUP BY file_id ORDER BY 1",
        )
    };
    // Every entry lies in exactly one run of its own file, as in a rebuild.
    assert_eq!(rids(&store), entries(&store));
    assert_eq!(rids(&rebuilt), entries(&rebuilt));
    let foreign: i64 = store
        .conn
        .query_row(
            "SELECT count(*) FROM rid_runs r JOIN entries e
             ON e.rid BETWEEN r.lo AND r.hi WHERE e.file_id <> r.file_id",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(foreign, 0);
    // Each run's oldest and newest times are its entries' (migration 0020 for the oldest).
    let off_bounds = |s: &Store| -> i64 {
        s.conn
            .query_row(
                "SELECT count(*) FROM rid_runs r WHERE
                   r.min_ts IS NOT (SELECT min(ts_ms) FROM entries WHERE rid BETWEEN r.lo AND r.hi)
                   OR r.max_ts IS NOT (SELECT max(ts_ms) FROM entries WHERE rid BETWEEN r.lo AND r.hi)",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(off_bounds(&store), 0);
    assert_eq!(off_bounds(&rebuilt), 0);

    // An index from before the runs: the migration finds them in the entries.
    store
        .conn
        .execute_batch("DROP TABLE rid_runs; PRAGMA user_version = 17;")
        .unwrap();
    drop(store);
    let store = Store::open(&db).unwrap();
    assert_eq!(rids(&store), entries(&store));
    assert_eq!(off_bounds(&store), 0);
    check(&store, &scope, &live, "upgrade");

    // Runs missing (not expected): their candidates are joined first, the order is the same.
    store.conn.execute_batch("DELETE FROM rid_runs").unwrap();
    check(&store, &scope, &live, "no runs");
}

/// A literal or regex whose words end in a prefix that FTS5 pays much for (its words are in a
/// quarter of the texts or more) takes its first candidates from the query without the prefix
/// (`newest::Looser`), then, after `LOOSE_READS` of them, from the query itself: the hits are
/// the newest matches either way, whether they are dense among the looser candidates or so
/// rare that the query's own take over.
#[test]
fn needles_ending_in_a_costly_prefix_find_the_newest_hits() {
    use pidx::query::search::{search_explained, LOOSE_READS};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let ends = ["ta", "d", "st", "ck"];
    let mut live: Vec<Entry> = Vec::new();
    for (f, file) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
        let entries: Vec<Entry> = (0..120)
            .map(|i| {
                let n = f as i64 * 120 + i;
                Entry {
                    file: file.to_string(),
                    id: format!("{file}-{n:03}"),
                    minute: Some(n * 37 % 997),
                    // "alpha" then a word starting with "be" in every text but every fifth.
                    text: if n % 5 == 0 {
                        format!("alpha gamma x{n}")
                    } else {
                        format!("alpha be{}{} x{n}", ends[n as usize % 4], n % 7)
                    },
                }
            })
            .collect();
        write(&root, file, &entries);
        live.extend(entries);
    }
    assert!(live.len() > 2 * LOOSE_READS);
    let roots = vec![pidx::pi::layout::Root {
        path: root.clone(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    let mut store = Store::open(&tmp.path().join("index.db")).unwrap();
    // Every word gets impact blocks: `be`'s words are then known to hold most texts.
    let sync_opts = pidx::ingest::sync::SyncOptions {
        impact_min_texts: Some(1),
        ..Default::default()
    };
    pidx::ingest::sync::sync(&mut store, &roots, sync_opts).unwrap();
    let scope = Scope::new(&store.conn, &roots).unwrap();
    let rare = regex::Regex::new(r"alpha be\w+ x(7|77|377)\b").unwrap();
    let some = regex::Regex::new(r"alpha be\w*6 ").unwrap();
    type Test<'a> = (&'a str, bool, Box<dyn Fn(&str) -> bool>);
    let queries: Vec<Test> = vec![
        // Dense: nearly every looser candidate is a hit.
        ("alpha be", true, Box::new(|t: &str| t.contains("alpha be"))),
        // One in seven.
        (
            r"re:alpha be\w*6 ",
            false,
            Box::new(move |t: &str| some.is_match(t)),
        ),
        // Three: the query's own candidates take over.
        (
            r"re:alpha be\w+ x(7|77|377)\b",
            false,
            Box::new(move |t: &str| rare.is_match(t)),
        ),
    ];
    let stop = std::sync::atomic::AtomicBool::new(false);
    for (query, literal, matches) in &queries {
        for limit in [1, 5, 20, 1000] {
            let opts = SearchOptions::everywhere(parse(query, *literal).unwrap(), limit);
            let (hits, explain) = search_explained(&store.conn, &scope, &opts, &stop).unwrap();
            assert!(
                explain.looser.is_some(),
                "{query}: no looser query for {:?}",
                explain.plan
            );
            let got: Vec<String> = hits.into_iter().map(|h| h.entry_id.unwrap()).collect();
            assert_eq!(
                got,
                expected(&live, matches, limit),
                "{query} limit {limit}"
            );
        }
    }
    // A prefix whose words are few stays in the query.
    let opts = SearchOptions::everywhere(parse("alpha gam", true).unwrap(), 5);
    let (_, explain) = search_explained(&store.conn, &scope, &opts, &stop).unwrap();
    assert!(explain.looser.is_none(), "{:?}", explain.looser);
}
