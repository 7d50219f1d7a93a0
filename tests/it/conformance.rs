//! pidx against pi itself: the corpus under `tests/fixtures/conformance` was written by pi's
//! real `SessionManager` (plus hand-written legacy and broken files), and `golden/` holds pi's
//! own answers (`listAll`, `list(cwd)`, `buildSessionContext` at every leaf, `getTree`).
//! `tests/conformance/live.sh` reruns this against a freshly generated corpus.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use pidx::query::{context, list, resolve::Resolved, tree};
use pidx::store::Scope;
use pidx::store::Store;
use serde_json::{json, Value};

struct Harness {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    store: Store,
    scope: Scope,
    golden: std::path::PathBuf,
    failures: Vec<String>,
    checked: BTreeMap<&'static str, usize>,
}

impl Harness {
    fn new() -> Harness {
        let (tmp, root) = common::conformance_copy();
        let (store, scope) = common::indexed(&root, &tmp.path().join("index.db"));
        Harness {
            _tmp: tmp,
            root,
            store,
            scope,
            golden: common::conformance_dir().join("golden"),
            failures: Vec::new(),
            checked: BTreeMap::new(),
        }
    }

    fn check(&mut self, what: &'static str, subject: &str, ours: &Value, pis: &Value) {
        *self.checked.entry(what).or_default() += 1;
        if ours != pis {
            self.failures.push(format!(
                "{what} {subject}:\n  pidx: {}\n  pi:   {}",
                truncate(&ours.to_string()),
                truncate(&pis.to_string())
            ));
        }
    }

    fn relative(&self, path: &str) -> String {
        Path::new(path)
            .strip_prefix(&self.root)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    fn listing(&self, cwd: Option<&str>) -> Value {
        let opts = list::ListOptions {
            cwd: cwd.map(str::to_string),
            limit: None,
            with_text: true,
        };
        let rows = list::list_sessions(&self.store.conn, &self.scope, &opts).unwrap();
        Value::Array(
            rows.iter()
                .map(|r| {
                    let mut j = r.to_json();
                    j["path"] = self.relative(&r.path).into();
                    j
                })
                .collect(),
        )
    }

    fn session(&self, rel: &str) -> Resolved {
        let path = self.root.join(rel);
        let file_id = self
            .store
            .conn
            .query_row(
                "SELECT id FROM files WHERE path = ?1",
                [path.to_string_lossy()],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("{rel} not indexed: {e}"));
        Resolved {
            file_id,
            path: path.to_string_lossy().into_owned(),
            source: None,
        }
    }

    fn version(&self, s: &Resolved) -> i64 {
        self.store
            .conn
            .query_row(
                "SELECT coalesce(version, 1) FROM sessions WHERE file_id = ?1",
                [s.file_id],
                |r| r.get(0),
            )
            .unwrap()
    }

    fn id_at(&self, s: &Resolved, seq: i64) -> Option<String> {
        use rusqlite::OptionalExtension;
        self.store
            .conn
            .query_row(
                "SELECT id FROM entries WHERE file_id = ?1 AND seq = ?2",
                [s.file_id, seq],
                |r| r.get(0),
            )
            .optional()
            .unwrap()
            .flatten()
    }
}

/// Files where pidx differs from pi on purpose (README, "Where pidx differs from pi"): pi keeps
/// bare JSON scalars as bogus entries (shifting every later entry's position); pidx skips them.
const DOCUMENTED_DIFFERENCES: &[&str] = &["bogus-scalars.jsonl"];

fn documented_difference(rel: &str) -> bool {
    DOCUMENTED_DIFFERENCES
        .iter()
        .any(|name| rel.ends_with(name))
}

fn truncate(s: &str) -> String {
    s.chars().take(600).collect()
}

fn context_json(h: &Harness, s: &Resolved, leaf: Option<&str>) -> Result<(Value, bool), String> {
    let built = context::build_context(&h.store.conn, s, leaf).map_err(|e| e.to_string())?;
    // What `pidx context --json` writes, message by message, must be the same bytes.
    let mut streamed = Vec::new();
    context::plan_context(&h.store.conn, s, leaf)
        .and_then(|plan| plan.write_json(&mut streamed))
        .map_err(|e| e.to_string())?;
    assert_eq!(
        String::from_utf8(streamed).unwrap(),
        built.to_json(),
        "{} at {leaf:?}: streamed context differs",
        s.path
    );
    Ok((common::parse_lenient(&built.to_json()), built.cycle))
}

#[test]
fn list_all_matches_pi() {
    let mut h = Harness::new();
    let ours = h.listing(None);
    let pis = common::read_json(&h.golden.join("list_all.json"));
    assert!(
        pis.as_array().is_some_and(|a| a.len() > 10),
        "golden listAll looks empty"
    );
    let n = ours
        .as_array()
        .unwrap()
        .len()
        .max(pis.as_array().unwrap().len());
    for i in 0..n {
        let subject = format!("row {i}");
        h.check(
            "listAll row",
            &subject,
            &ours.get(i).cloned().unwrap_or_default(),
            &pis.get(i).cloned().unwrap_or_default(),
        );
    }
    report(h);
}

#[test]
fn list_by_cwd_matches_pi() {
    let mut h = Harness::new();
    let golden = common::read_json(&h.golden.join("list_cwd.json"));
    for (cwd, pis) in golden.as_object().unwrap() {
        let ours = h.listing(Some(cwd));
        h.check("list(cwd)", cwd, &ours, pis);
    }
    report(h);
}

#[test]
fn context_at_every_leaf_matches_pi() {
    let mut h = Harness::new();
    let golden = common::read_json(&h.golden.join("context.json"));
    for (rel, answers) in golden.as_object().unwrap() {
        if documented_difference(rel) {
            continue;
        }
        let s = h.session(rel);
        let v1 = h.version(&s) < 2;
        // A file pi cannot open has one answer: the error.
        check_context(
            &mut h,
            rel,
            &s,
            None,
            answers.get("default").unwrap_or(answers),
        );
        for leaf in answers["leaves"].as_array().into_iter().flatten() {
            let index = leaf["index"].as_i64().unwrap();
            let ours_id = h.id_at(&s, index);
            if !v1 {
                let subject = format!("{rel} entry {index}");
                h.check("entry id", &subject, &json!(ours_id), &leaf["id"]);
            }
            let subject = format!("{rel} leaf #{index}");
            match ours_id {
                Some(id) => check_context(&mut h, &subject, &s, Some(&id), leaf),
                // An entry without an id (a v1 entry copied by forkFrom): pi's
                // buildSessionContext(entries, undefined) starts at the last entry, as pidx does.
                None if leaf["id"].is_null() => check_context(&mut h, &subject, &s, None, leaf),
                None => h
                    .failures
                    .push(format!("{subject}: pidx has no entry id at this index")),
            }
        }
    }
    report(h);
}

fn check_context(h: &mut Harness, subject: &str, s: &Resolved, leaf: Option<&str>, pis: &Value) {
    let expected = pis.get("context").unwrap_or(pis);
    let ours = context_json(h, s, leaf);
    if pis.get("cycle").is_some() {
        let ok = matches!(ours, Ok((_, true)));
        h.check("cycle stops", subject, &json!(ok), &json!(true));
    } else if let Some(err) = pis.get("error") {
        let ok = ours.is_err();
        h.check("pi error", subject, &json!(ok), &json!(true));
        let _ = err;
    } else {
        let ours = ours
            .map(|(v, _)| v)
            .unwrap_or_else(|e| json!({ "pidx error": e }));
        h.check("context", subject, &ours, expected);
    }
}

#[test]
fn trees_match_pi() {
    let mut h = Harness::new();
    let golden = common::read_json(&h.golden.join("tree.json"));
    for (rel, pis) in golden.as_object().unwrap() {
        if documented_difference(rel) {
            continue;
        }
        let s = h.session(rel);
        let v1 = h.version(&s) < 2;
        let ours = common::parse_lenient(&tree::build_tree(&h.store.conn, &s).unwrap().to_json());
        h.check(
            "tree",
            rel,
            &project_tree(&ours, v1),
            &project_tree(pis, v1),
        );
    }
    report(h);
}

/// The fields pi's golden records; v1 files get fresh random ids from pi at every open, so
/// their nodes are compared by position instead. A `parentId` key missing from the entry (pi:
/// undefined, left out) and `null` are the same to pidx.
fn project_tree(nodes: &Value, v1: bool) -> Value {
    Value::Array(
        nodes
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                let mut o = serde_json::Map::new();
                for k in ["index", "id", "parentId", "type", "label", "labelTimestamp"] {
                    if v1 && (k == "id" || k == "parentId") {
                        continue;
                    }
                    if k == "parentId" {
                        o.insert(k.into(), n.get(k).cloned().unwrap_or(Value::Null));
                    } else if let Some(v) = n.get(k).filter(|v| !v.is_null()) {
                        o.insert(k.into(), v.clone());
                    }
                }
                o.insert("children".into(), project_tree(&n["children"], v1));
                Value::Object(o)
            })
            .collect(),
    )
}

#[test]
fn sessions_match_pi_open() {
    let mut h = Harness::new();
    let golden = common::read_json(&h.golden.join("sessions.json"));
    for (rel, pis) in golden.as_object().unwrap() {
        if documented_difference(rel) {
            continue;
        }
        let s = h.session(rel);
        let v1 = h.version(&s) < 2;
        let openable = context::openable(&h.store.conn, s.file_id).unwrap();
        let (_loadable, leaf, name): (bool, Option<String>, Option<String>) = h
            .store
            .conn
            .query_row(
                "SELECT loadable, leaf_id, name FROM sessions WHERE file_id = ?1",
                [s.file_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        h.check(
            "openable",
            rel,
            &json!(openable),
            &json!(pis.get("error").is_none()),
        );
        if pis.get("error").is_some() {
            continue;
        }
        if !v1 {
            h.check("leaf", rel, &json!(leaf), &pis["leafId"]);
            let labels: serde_json::Map<String, Value> =
                pidx::query::show::labels(&h.store.conn, s.file_id)
                    .unwrap()
                    .into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect();
            h.check(
                "labels",
                rel,
                &Value::Object(labels),
                pis.get("labels").unwrap_or(&json!({})),
            );
        }
        h.check(
            "name",
            rel,
            &json!(name),
            pis.get("name").unwrap_or(&Value::Null),
        );
    }
    report(h);
}

fn report(h: Harness) {
    eprintln!("conformance checked: {:?}", h.checked);
    if !h.failures.is_empty() {
        panic!(
            "{} mismatches with pi:\n{}",
            h.failures.len(),
            h.failures.join("\n")
        );
    }
}

#[test]
fn list_query_matches_pis_picker() {
    let golden = common::conformance_dir().join("golden/picker.json");
    if !golden.exists() {
        // Older recorded corpora (PIDX_CONFORMANCE_DIR from live.sh before this file existed).
        panic!(
            "{} is missing: run tests/conformance/regenerate.sh",
            golden.display()
        );
    }
    let mut h = Harness::new();
    let queries = common::read_json(&golden);
    let queries = queries["queries"].as_object().unwrap();
    assert!(queries.len() > 50, "golden picker answers look empty");
    let all = list::list_sessions(
        &h.store.conn,
        &h.scope,
        &list::ListOptions {
            cwd: None,
            limit: None,
            with_text: true,
        },
    )
    .unwrap();
    let mut non_trivial = 0;
    let mut skipped = Vec::new();
    for (q, pis) in queries {
        // pi keeps lone UTF-16 surrogates in text; pidx holds text as UTF-8, where they become
        // U+FFFD, so a query containing U+FFFD also matches them here (docs/guide.md: differences).
        if q.contains('\u{fffd}') {
            skipped.push(q.clone());
            continue;
        }
        let ours: Vec<Value> = pidx::query::picker::filter_and_sort(all.clone(), q)
            .iter()
            .map(|s| Value::from(h.relative(&s.path)))
            .collect();
        let n = pis.as_array().unwrap().len();
        non_trivial += usize::from(n > 0 && n < all.len());
        h.check("picker order", &format!("{q:?}"), &Value::Array(ours), pis);
    }
    // A fifth of the queries must narrow the list, or the check proves little.
    assert!(
        non_trivial * 5 > queries.len(),
        "too few queries narrow the list: {non_trivial} of {}",
        queries.len()
    );
    assert!(
        skipped.len() <= 3,
        "unexpectedly many U+FFFD queries: {skipped:?}"
    );
    eprintln!(
        "picker: skipped {} queries with U+FFFD: {skipped:?}",
        skipped.len()
    );
    report(h);
}
