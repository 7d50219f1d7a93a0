//! The search query parser and the regex planner: any query parses to a query or a one-line
//! `Invalid`; every text a `re:` pattern matches contains each run the planner requires (else
//! the planner would drop a hit); and the whole search over an index of the conformance corpus
//! ends in hits or `Invalid`, never an SQL error or a panic.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pidx::error::Error;
use pidx::pi::layout::{Layout, Root};
use pidx::query::search::{
    parse, required_runs, search, terms_regex, Query, SearchOptions, Snippet,
};
use pidx::store::{Scope, Store};

struct Index {
    _tmp: tempfile::TempDir,
    db: PathBuf,
    roots: Vec<Root>,
}

/// An index of the conformance corpus (pi-written sessions), built once per process.
fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance/sessions");
        let db = tmp.path().join("index.db");
        let roots = vec![Root {
            path: corpus,
            layout: Layout::Tree,
        }];
        let mut store = Store::open(&db).unwrap();
        pidx::ingest::sync::sync(&mut store, &roots, Default::default()).unwrap();
        Index {
            _tmp: tmp,
            db,
            roots,
        }
    })
}

fn conn() -> &'static std::sync::Mutex<Store> {
    static STORE: OnceLock<std::sync::Mutex<Store>> = OnceLock::new();
    STORE.get_or_init(|| std::sync::Mutex::new(Store::open_read_only(&index().db).unwrap()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let rest = String::from_utf8_lossy(rest);
    let (query, text) = rest.split_once('\n').unwrap_or((&rest, ""));
    let parsed = match parse(query, flags & 1 == 1) {
        Ok(q) => q,
        Err(Error::Invalid(why)) => {
            assert!(!why.contains('\n'), "not one line: {why:?}");
            return;
        }
        Err(e) => panic!("parse({query:?}) failed with {e}"),
    };
    match &parsed {
        Query::Regex(re) => {
            let pattern = query.trim().strip_prefix("re:").unwrap();
            if re.is_match(text) {
                for run in required_runs(pattern) {
                    let run_re = regex::RegexBuilder::new(&regex::escape(&run))
                        .case_insensitive(true)
                        .build()
                        .unwrap();
                    assert!(
                        run_re.is_match(text),
                        "re:{pattern:?} matches {text:?}, which lacks the required run {run:?}"
                    );
                }
            }
            let _ = Snippet::around(text, Some(re));
        }
        Query::Words { terms, .. } => {
            let _ = Snippet::around(text, terms_regex(terms).as_ref());
        }
        Query::Literal(_) => {}
    }
    let store = conn().lock().unwrap();
    let scope = Scope::new(&store.conn, &index().roots).unwrap();
    let mut opts = SearchOptions::everywhere(parsed, 30);
    opts.redact = flags & 2 == 2;
    opts.branch = flags & 4 == 4;
    match search(&store.conn, &scope, &opts) {
        Ok(hits) => assert!(hits.len() <= 30),
        Err(Error::Invalid(_)) => {}
        Err(e) => panic!("search {query:?} failed with {e}"),
    }
});
