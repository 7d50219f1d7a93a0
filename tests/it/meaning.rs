//! Search by meaning: the distilled model's similarities, vectors kept in step with the JSONL
//! (append, rewrite, delete, fork), one model's vectors only, a missing or corrupt model, and
//! hybrid ranking on fixture queries. Tests that need the real model (made by
//! `bash tests/meaning/model.sh`, or named by $PIDX_TEST_MODEL) print a SKIPPED line without it;
//! those that hold of every model run again with the whole transformer (`model.sh --whole`).

use std::path::{Path, PathBuf};

use pidx::ingest::embed::{embed_pending, indexed_model};
use pidx::meaning::Model;
use serde_json::{json, Value};

use crate::common::{pidx, resync};

/// The real model's folder, or `None` after saying loudly that `test` is skipped.
pub(crate) fn model(test: &str) -> Option<PathBuf> {
    made("PIDX_TEST_MODEL", "model")
        .map_err(|dir| {
            eprintln!(
            "SKIPPED meaning::{test}: no embedding model at {} (run `bash tests/meaning/model.sh`)",
            dir.display()
        );
        })
        .ok()
}

/// The whole transformer's folder (`bash tests/meaning/model.sh --whole`, or
/// $PIDX_TEST_WHOLE_MODEL), or `None` after saying loudly that `test` is skipped with it.
fn whole(test: &str) -> Option<PathBuf> {
    made("PIDX_TEST_WHOLE_MODEL", "whole").map_err(|dir| {
        eprintln!(
            "SKIPPED meaning::{test} with the whole transformer: none at {} (run `bash tests/meaning/model.sh --whole`)",
            dir.display()
        );
    }).ok()
}

/// The model folder `$var` names, else `tests/meaning/.cache/{folder}` (what
/// tests/meaning/model.sh makes): `Err` with it when it holds no model.
fn made(var: &str, folder: &str) -> Result<PathBuf, PathBuf> {
    let dir = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/meaning/.cache")
            .join(folder)
    });
    if dir.join("model.safetensors").is_file() {
        Ok(dir)
    } else {
        Err(dir)
    }
}

/// Runs `check` with the static model and with the whole transformer, each that is there
/// (the one missing is skipped loudly): what holds of search by meaning holds of both kinds.
fn each_model(test: &str, check: fn(&Path)) {
    for m in [model(test), whole(test)].into_iter().flatten() {
        check(&m);
    }
}

/// Topics, each a session of a user message and an assistant answer.
const TOPICS: [(&str, [&str; 2]); 6] = [
    ("auth", ["The login spec keeps failing intermittently in CI; the authentication test times out now and then.", "I added a retry around the session cookie check so the auth spec stops failing at random."]),
    ("db", ["Rename the column in the PostgreSQL users table and write the schema migration.", "The migration script adds the new column and backfills it from the old one."]),
    ("css", ["The buttons look wrong on phones: fix the stylesheet grid so the layout works on small screens.", "Changed the CSS media queries and the colours of the navigation bar."]),
    ("ident", ["Call parse_rfc3339_ts in the deserializer instead of the hand-written date code.", "parse_rfc3339_ts now returns an error for timestamps without a zone."]),
    ("perf", ["The server responds slowly; profiling showed the hot loop allocating memory on every request.", "Reusing the buffer made the endpoint three times faster."]),
    ("cook", ["Recipe for a tomato pasta sauce with garlic, basil and olive oil.", "Simmer the sauce for twenty minutes and add salt."]),
];

fn dir(root: &Path) -> PathBuf {
    root.join("--home-u-app--")
}

/// The lines of session `name` (header, then `texts` alternately user and assistant), its
/// entries' ids `{id_prefix}{i}`.
pub(crate) fn lines(name: &str, day: usize, id_prefix: &str, texts: &[&str]) -> Vec<String> {
    let mut out = vec![json!({"type": "session", "version": 3, "id": name,
        "timestamp": format!("2026-01-{day:02}T00:00:00.000Z"), "cwd": "/home/u/app"})
    .to_string()];
    let mut parent = Value::Null;
    for (i, t) in texts.iter().enumerate() {
        let id = format!("{id_prefix}{i}");
        let (role, content) = if i % 2 == 0 {
            ("user", json!(t))
        } else {
            ("assistant", json!([{"type": "text", "text": t}]))
        };
        out.push(
            json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": format!("2026-01-{day:02}T10:00:{i:02}.000Z"),
            "message": {"role": role, "content": content, "timestamp": 1}})
            .to_string(),
        );
        parent = json!(id);
    }
    out
}

fn file(root: &Path, name: &str, day: usize) -> PathBuf {
    dir(root).join(format!("2026-01-{day:02}T00-00-00-000Z_{name}.jsonl"))
}

fn write(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

pub(crate) fn corpus(root: &Path) {
    for (i, (name, texts)) in TOPICS.iter().enumerate() {
        write(&file(root, name, i + 1), &lines(name, i + 1, name, texts));
    }
}

/// Session ids of `pidx search` hits, in order (JSON lines).
fn search(db: &Path, root: &Path, model: &Path, args: &[&str]) -> (Vec<String>, String) {
    let out = pidx(db, root)
        .env("HOME", root.join("home"))
        .env("PIDX_MODEL", model)
        .arg("search")
        .args(args)
        .arg("--jsonl")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ids = stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["sessionId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    (ids, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn distilled_model_puts_paraphrases_closer_than_other_topics() {
    let Some(m) = model("distilled_model_puts_paraphrases_closer_than_other_topics") else {
        return;
    };
    let model = Model::load(&m).unwrap();
    let e = |t: &str| model.embed(t).unwrap();
    let cos = |a: &[f32], b: &[f32]| pidx::meaning::model::cosine(a, b);
    let flaky = e("flaky sign-in test");
    let auth = e("the login spec keeps failing intermittently");
    let pasta = e("a recipe for tomato pasta sauce");
    let food = e("italian cooking");
    assert!(cos(&flaky, &auth) > cos(&flaky, &pasta) + 0.1);
    assert!(cos(&food, &pasta) > cos(&food, &auth) + 0.1);
    assert!(
        (cos(&auth, &auth) - 1.0).abs() < 1e-4,
        "vectors are unit length"
    );
    assert_eq!(model.dim(), 256);
}

fn passages_of(conn: &rusqlite::Connection, path: &Path) -> i64 {
    conn.query_row(
        "SELECT count(*) FROM passages p JOIN files f ON f.id = p.file_id WHERE f.path = ?1",
        [path.to_str().unwrap()],
        |r| r.get(0),
    )
    .unwrap()
}

/// Passages whose entry is gone, or whose file is not their entry's: must be none.
fn strays(conn: &rusqlite::Connection) -> i64 {
    conn.query_row(
        "SELECT count(*) FROM passages p LEFT JOIN entries e ON e.rid = p.rid
         WHERE e.rid IS NULL OR e.file_id <> p.file_id",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// Every passage has its sign code (migration 0025), which a search scans first, and the dead
/// codes of passages gone are at most a quarter of the live ones (then they are compacted).
fn codes_cover_passages(conn: &rusqlite::Connection) {
    let mut coded = std::collections::HashSet::new();
    let mut n = 0;
    let mut stmt = conn.prepare("SELECT rowids FROM passage_codes").unwrap();
    let mut rows = stmt.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let blob: Vec<u8> = r.get(0).unwrap();
        for b in blob.chunks_exact(8) {
            coded.insert(i64::from_le_bytes(b.try_into().unwrap()));
            n += 1;
        }
    }
    let live: Vec<i64> = conn
        .prepare("SELECT rid * 8 + kind FROM passages")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for r in &live {
        assert!(coded.contains(r), "passage of text {r} has no code");
    }
    assert!(
        n - live.len() <= live.len() / 4,
        "{n} codes, {} live",
        live.len()
    );
}

#[test]
fn vectors_follow_append_rewrite_delete_and_fork() {
    each_model(
        "vectors_follow_append_rewrite_delete_and_fork",
        vectors_follow_append_rewrite_delete_and_fork_with,
    );
}

fn vectors_follow_append_rewrite_delete_and_fork_with(m: &Path) {
    let m = m.to_path_buf();
    let model = Model::load(&m).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    let mut store = pidx::store::Store::open(&tmp.path().join("i.db")).unwrap();
    let sync = |store: &mut pidx::store::Store| {
        resync(store, &root);
        let r = embed_pending(&mut store.conn, &model).unwrap();
        codes_cover_passages(&store.conn);
        r
    };
    let first = sync(&mut store);
    assert_eq!((first.entries, first.passages), (12, 12));
    let auth = file(&root, "auth", 1);
    assert_eq!(passages_of(&store.conn, &auth), 2);

    // Append: only the new entry is embedded.
    let mut more = lines("auth", 1, "auth", &TOPICS[0].1);
    more.extend(
        lines("x", 1, "late", &["x", "A third message about the cookie."])
            .into_iter()
            .skip(2),
    );
    write(&auth, &more);
    assert_eq!(sync(&mut store).entries, 1);
    assert_eq!(passages_of(&store.conn, &auth), 3);

    // Rewrite (shorter, other words): the old vectors go with the old entries.
    write(&auth, &lines("auth", 1, "new", &["Only one message now."]));
    sync(&mut store);
    assert_eq!(passages_of(&store.conn, &auth), 1);
    assert_eq!(strays(&store.conn), 0);

    // Fork: a copy of db's entries plus one of its own; copies are embedded once.
    let db = file(&root, "db", 2);
    let mut fork = lines("db", 2, "db", &TOPICS[1].1);
    fork[0] = json!({"type": "session", "version": 3, "id": "dbfork",
        "timestamp": "2026-02-01T00:00:00.000Z", "cwd": "/home/u/app"})
    .to_string();
    fork.push(
        json!({"type": "message", "id": "own0", "parentId": "db1",
        "timestamp": "2026-02-01T10:00:00.000Z",
        "message": {"role": "user", "content": "And now drop the old column.", "timestamp": 1}})
        .to_string(),
    );
    let forked = dir(&root).join("2026-02-01T00-00-00-000Z_dbfork.jsonl");
    write(&forked, &fork);
    assert_eq!(sync(&mut store).entries, 1);
    assert_eq!(passages_of(&store.conn, &forked), 1);

    // The original deleted: the fork's copies become canonical and are embedded.
    std::fs::remove_file(&db).unwrap();
    let after = sync(&mut store);
    assert_eq!(passages_of(&store.conn, &db), 0);
    assert_eq!((after.entries, passages_of(&store.conn, &forked)), (2, 3));
    assert_eq!(strays(&store.conn), 0);
}

#[test]
fn another_model_replaces_every_vector_and_is_never_mixed() {
    let Some(m) = model("another_model_replaces_every_vector_and_is_never_mixed") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    // The same table under another folder name is another model to the index.
    let other = tmp.path().join("other-model");
    std::fs::create_dir(&other).unwrap();
    for f in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::fs::copy(m.join(f), other.join(f)).unwrap();
    }
    let (a, b) = (Model::load(&m).unwrap(), Model::load(&other).unwrap());
    assert_ne!(a.id(), b.id());
    let db = tmp.path().join("i.db");
    let mut store = pidx::store::Store::open(&db).unwrap();
    resync(&mut store, &root);
    embed_pending(&mut store.conn, &a).unwrap();
    let again = embed_pending(&mut store.conn, &b).unwrap();
    assert_eq!(again.replaced.as_deref(), Some(a.id()));
    assert_eq!(again.entries, 12, "every entry embedded again");
    assert_eq!(
        indexed_model(&store.conn).unwrap(),
        Some(b.id().to_string())
    );
    drop(store);

    // Asking by meaning with model a: refused with one line; the default falls back to words.
    let out = pidx(&db, &root)
        .env("HOME", root.join("home"))
        .env("PIDX_MODEL", &m)
        .args(["search", "login", "--meaning"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("vectors are of model other-model:"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (ids, err) = search(&db, &root, &m, &["login"]);
    assert_eq!(ids, ["auth"]);
    assert!(err.contains("ranking by words only"), "{err}");
}

#[test]
fn missing_or_corrupt_model_says_so_once_and_words_still_work() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    let db = tmp.path().join("i.db");
    let missing = tmp.path().join("no-model");
    let corrupt = tmp.path().join("bad-model");
    std::fs::create_dir(&corrupt).unwrap();
    std::fs::write(corrupt.join("model.safetensors"), b"not a tensor file").unwrap();
    std::fs::write(corrupt.join("tokenizer.json"), b"{}").unwrap();
    for (dir, why) in [(&missing, "model.safetensors"), (&corrupt, "tokenizer")] {
        let out = pidx(&db, &root)
            .env("HOME", root.join("home"))
            .args(["sync", "--embed", "--embed-model"])
            .arg(dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no usable embedding model at") && err.contains(why),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        let out = pidx(&db, &root)
            .env("HOME", root.join("home"))
            .env("PIDX_MODEL", dir)
            .args(["search", "login", "--meaning"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let (ids, _) = search(&db, &root, dir, &["migration"]);
        assert_eq!(ids, ["db", "db"], "words search works without a model");
    }
}

#[test]
fn model_fetch_without_the_model_fails_in_one_line() {
    // No hub is reachable here; elsewhere the name does not exist: one line either way.
    let tmp = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("pidx")
        .unwrap()
        .env("HOME", tmp.path())
        .args(["model", "fetch", "pidx-tests/no-such-model", "--out"])
        .arg(tmp.path().join("m"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot fetch pidx-tests/no-such-model from huggingface.co"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!tmp.path().join("m").exists(), "nothing written");
}

#[test]
fn model_install_takes_a_transformer_and_refuses_anything_else_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let install = |from: &Path, out: &Path| {
        assert_cmd::Command::cargo_bin("pidx")
            .unwrap()
            .env("HOME", tmp.path())
            .args(["model", "install", "--from"])
            .arg(from)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    // Not there, and a static model (no layers): one line each, nothing written.
    let out = install(&tmp.path().join("nowhere"), &tmp.path().join("a"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot load") && err.contains("nowhere"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!tmp.path().join("a").exists());
    if let Some(m) =
        model("model_install_takes_a_transformer_and_refuses_anything_else_in_one_line")
    {
        let out = install(&m, &tmp.path().join("b"));
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("does not describe a BERT encoder"), "{err}");
        assert!(!tmp.path().join("b").exists());
    }
    // A whole transformer: copied, and loaded as one.
    let Some(w) = whole("model_install_takes_a_transformer_and_refuses_anything_else_in_one_line")
    else {
        return;
    };
    let out = install(&w, &tmp.path().join("c"));
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("installed the 384-dimension transformer"),
        "{err}"
    );
    let model = Model::load(&tmp.path().join("c")).unwrap();
    assert!(matches!(model, Model::Whole(_)), "{model:?}");
    assert!(model.id().starts_with("c:") && model.id().ends_with(":384:whole"));
}

#[test]
fn a_pass_with_a_deadline_stops_between_batches_and_the_next_resumes() {
    each_model(
        "a_pass_with_a_deadline_stops_between_batches_and_the_next_resumes",
        |m| {
            let model = Model::load(m).unwrap();
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("root");
            corpus(&root);
            let mut store = pidx::store::Store::open(&tmp.path().join("i.db")).unwrap();
            resync(&mut store, &root);
            let passed = pidx::ingest::embed::Pass {
                deadline: Some(std::time::Instant::now()),
                progress: false,
            };
            let r =
                pidx::ingest::embed::embed_pending_with(&mut store.conn, &model, passed).unwrap();
            assert_eq!((r.entries, r.more), (0, true));
            let r = embed_pending(&mut store.conn, &model).unwrap();
            assert_eq!((r.entries, r.passages, r.more), (12, 12, false));
            codes_cover_passages(&store.conn);
        },
    );
}

#[test]
fn hybrid_finds_paraphrases_and_keeps_identifiers_first() {
    let Some(m) = model("hybrid_finds_paraphrases_and_keeps_identifiers_first") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    let db = tmp.path().join("i.db");
    let out = pidx(&db, &root)
        .env("HOME", root.join("home"))
        .args(["sync", "--embed", "--embed-model"])
        .arg(&m)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = pidx(&db, &root).arg("status").output().unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains("meaning: 12 of 12 entries embedded (12 passages)"),
        "{status}"
    );
    // Words miss a paraphrase; meaning and the default (hybrid) find it first.
    let (words, _) = search(&db, &root, &m, &["logging in fails sometimes", "--lexical"]);
    assert!(words.is_empty(), "{words:?}");
    for args in [
        &["logging in fails sometimes", "--meaning"][..],
        &["logging in fails sometimes"][..],
    ] {
        let (ids, _) = search(&db, &root, &m, args);
        assert_eq!(
            ids.first().map(String::as_str),
            Some("auth"),
            "{args:?}: {ids:?}"
        );
    }
    let (ids, _) = search(&db, &root, &m, &["italian food", "--meaning"]);
    assert_eq!(ids.first().map(String::as_str), Some("cook"));
    // An exact identifier stays first, by words and fused.
    let (ids, _) = search(&db, &root, &m, &["parse_rfc3339_ts"]);
    assert_eq!(&ids[..2], ["ident", "ident"]);
    // Filters apply to meaning too.
    // (What is left after the filter may be nothing: no other topic is close to sign-in tests.)
    let (ids, _) = search(
        &db,
        &root,
        &m,
        &[
            "logging in fails sometimes",
            "--meaning",
            "--since",
            "2026-01-03",
        ],
    );
    assert!(
        ids.iter().all(|s| !["auth", "db"].contains(&s.as_str())),
        "{ids:?}"
    );
    let (ids, _) = search(
        &db,
        &root,
        &m,
        &["italian cooking", "--meaning", "--session", "cook"],
    );
    assert!(
        !ids.is_empty() && ids.iter().all(|s| s == "cook"),
        "{ids:?}"
    );
    let (ids, _) = search(
        &db,
        &root,
        &m,
        &[
            "logging in fails sometimes",
            "--meaning",
            "--session",
            "cook",
        ],
    );
    assert!(ids.is_empty(), "the recipe is not about tests: {ids:?}");
    // Similar sessions: the fork-free corpus has one per topic, so few (or none) clear the
    // floor; the session itself is never listed.
    let out = pidx(&db, &root)
        .args(["similar", "db", "--json", "--limit", "3"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = v["results"].as_array().or(v.as_array()).unwrap();
    assert!(listed.len() <= 3);
    assert!(listed
        .iter()
        .all(|s| s["sessionId"] != "db"
            && s["score"].as_f64().unwrap() >= pidx::query::similar::floor()));
    // MCP: search_sessions by meaning.
    let call = |args: Value| {
        let msgs = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_sessions", "arguments": args}}),
        ];
        let input: String = msgs.iter().map(|m| m.to_string() + "\n").collect();
        let out = pidx(&db, &root)
            .env("HOME", root.join("home"))
            .env("PIDX_MODEL", &m)
            .arg("mcp")
            .write_stdin(input)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let by_meaning =
        call(json!({"query": "logging in fails sometimes", "meaning": true, "limit": 1}));
    assert!(
        by_meaning.contains(r#"\"sessionId\":\"auth\""#),
        "{by_meaning}"
    );
    let by_words = call(json!({"query": "logging in fails sometimes", "limit": 1}));
    assert!(
        by_words.contains(r#"\"sessionId\":\"auth\""#),
        "fused by default: {by_words}"
    );
}

#[test]
fn the_watcher_embeds_what_pi_appends() {
    each_model(
        "the_watcher_embeds_what_pi_appends",
        the_watcher_embeds_what_pi_appends_with,
    );
}

fn the_watcher_embeds_what_pi_appends_with(m: &Path) {
    use crate::common::live::{on, spawn_watch, status, term, wait_for};
    let m = m.to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    let db = tmp.path().join("i.db");
    let mut watch = on(&db, &root, &["watch", "--embed"]);
    watch.env("HOME", root.join("home")).env("PIDX_MODEL", &m);
    let mut child = spawn_watch(watch, &db, &root);
    let embedded = |n: usize| status(&db, &root).contains(&format!("meaning: {n} of {n} entries"));
    wait_for("the first sync's texts embedded", || embedded(12));
    let mut more = lines("cook", 6, "cook", &TOPICS[5].1);
    more.extend(
        lines("x", 6, "late", &["x", "Serve the pasta with parmesan."])
            .into_iter()
            .skip(2),
    );
    write(&file(&root, "cook", 6), &more);
    wait_for("the appended entry embedded", || embedded(13));
    assert!(term(&mut child).success());
}

/// Starts `pidx mcp` on `db` and `root` with `PIDX_MODEL=model`, initialised.
fn mcp(db: &Path, root: &Path, model: &Path) -> std::process::Child {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pidx"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("HOME", root.join("home"))
        .env("PIDX_CONFIG", root.join("no-config.toml"))
        .env("PIDX_MODEL", model)
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    mcp_call(&mut child, &init);
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    use std::io::Write;
    writeln!(child.stdin.as_mut().unwrap(), "{done}").unwrap();
    child
}

/// Sends request `msg` and reads lines until its answer.
fn mcp_call(child: &mut std::process::Child, msg: &Value) -> Value {
    use std::io::{BufRead, Write};
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(stdin, "{msg}").unwrap();
    stdin.flush().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.as_mut().unwrap());
    loop {
        // One byte at a time would be slow; a line at a time leaves nothing buffered behind
        // (the server writes one answer per request and waits for the next).
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the server ended");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == msg["id"] {
            return v["result"].clone();
        }
    }
}

/// The session ids of a `search_sessions` answer, in order.
fn mcp_search(child: &mut std::process::Child, id: u64, query: &str) -> Vec<String> {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "search_sessions", "arguments": {"query": query, "meaning": true, "limit": 3}}});
    let got = mcp_call(child, &call);
    got["structuredContent"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{got}"))
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_mcp_server_loads_the_model_once() {
    let Some(m) = model("the_mcp_server_loads_the_model_once") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    let db = tmp.path().join("i.db");
    // A copy: the test spoils it.
    let copy = tmp.path().join("model");
    std::fs::create_dir(&copy).unwrap();
    for f in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::fs::copy(m.join(f), copy.join(f)).unwrap();
    }
    let out = pidx(&db, &root)
        .env("HOME", root.join("home"))
        .args(["sync", "--embed", "--embed-model"])
        .arg(&copy)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut server = mcp(&db, &root, &copy);
    assert_eq!(
        mcp_search(&mut server, 1, "logging in fails sometimes")[0],
        "auth"
    );

    // The weights spoilt in place, their size and time kept: a process that read them again
    // would refuse them; the server answers from the model it loaded at its first search.
    let weights = copy.join("model.safetensors");
    let when = std::fs::metadata(&weights).unwrap().modified().unwrap();
    let len = std::fs::metadata(&weights).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&weights)
        .unwrap();
    std::io::Write::write_all(&mut &f, &vec![b'x'; len as usize]).unwrap();
    f.set_modified(when).unwrap();
    drop(f);
    let fresh = pidx(&db, &root)
        .env("HOME", root.join("home"))
        .env("PIDX_MODEL", &copy)
        .args(["search", "logging in fails sometimes", "--meaning"])
        .output()
        .unwrap();
    assert_eq!(fresh.status.code(), Some(2), "a fresh load refuses it");
    assert_eq!(mcp_search(&mut server, 2, "italian cooking")[0], "cook");
    drop(server.stdin.take());
    server.wait().unwrap();
}

/// The fixture corpus synced and embedded with the real model: (tmp, root, db).
fn embedded(m: &Path) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    let db = tmp.path().join("i.db");
    let out = pidx(&db, &root)
        .env("HOME", root.join("home"))
        .args(["sync", "--embed", "--embed-model"])
        .arg(m)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (tmp, root, db)
}

/// `pidx search ARGS` with the model: exit code, stdout, stderr.
fn run_search(db: &Path, root: &Path, m: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = pidx(db, root)
        .env("HOME", root.join("home"))
        .env("PIDX_MODEL", m)
        .arg("search")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const NONSENSE: &str = "qwertyuiopasdf";

#[test]
fn nonsense_finds_nothing_at_the_cli_mcp_and_web_page() {
    each_model(
        "nonsense_finds_nothing_at_the_cli_mcp_and_web_page",
        nonsense_finds_nothing_at_the_cli_mcp_and_web_page_with,
    );
}

fn nonsense_finds_nothing_at_the_cli_mcp_and_web_page_with(m: &Path) {
    let m = m.to_path_buf();
    let (_tmp, root, db) = embedded(&m);
    // The CLI, every ranking: no hit, exit 1.
    for args in [
        &[NONSENSE][..],
        &[NONSENSE, "--meaning"][..],
        &[NONSENSE, "--lexical"][..],
    ] {
        let (code, out, err) = run_search(&db, &root, &m, args);
        assert_eq!(code, Some(1), "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains("no matches"), "{args:?}: {err}");
        let (code, out, _) = run_search(&db, &root, &m, &[args, &["--json"]].concat());
        assert_eq!((code, out.trim()), (Some(1), "[]"), "{args:?}");
    }
    // --explain says why: no word matches, and the model knows no word of it whole, so
    // meaning is not asked (its vector would be an average of spelling pieces).
    let (_, out, _) = run_search(&db, &root, &m, &[NONSENSE, "--explain"]);
    assert!(out.contains("hits:      0 (limit 20)"), "{out}");
    assert!(
        out.contains("not asked: no word of the query is one the model knows whole"),
        "{out}"
    );
    assert!(out.contains("fused:     0 hits"), "{out}");
    // MCP: an empty answer.
    let mut server = mcp(&db, &root, &m);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "search_sessions", "arguments": {"query": NONSENSE}}});
    let got = mcp_call(&mut server, &call);
    assert_eq!(got["structuredContent"]["totalHits"], 0, "{got}");
    assert_eq!(got["structuredContent"]["sessions"], json!([]), "{got}");
    drop(server.stdin.take());
    server.wait().unwrap();
    // The web page: no hit. (The server finds the model through its config file.)
    std::fs::write(
        db.with_file_name("no-config.toml"),
        format!("model = {:?}\n", m.display().to_string()),
    )
    .unwrap();
    let s = crate::serve::serve(&root, &db, &["--listen", "127.0.0.1:0"]);
    let page = crate::serve::get(s.port, &format!("/search?q={NONSENSE}"), None, &[]);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("0 hits in 0 sessions"), "{}", page.body);
    // A paraphrase on the same page is found by meaning, and says so.
    let page = crate::serve::get(s.port, "/search?q=italian+cooking", None, &[]);
    assert!(page.body.contains("by meaning"), "{}", page.body);
}

#[test]
fn every_hit_says_how_it_was_found_and_meaning_hits_clear_the_floor() {
    each_model(
        "every_hit_says_how_it_was_found_and_meaning_hits_clear_the_floor",
        every_hit_says_how_it_was_found_and_meaning_hits_clear_the_floor_with,
    );
}

fn every_hit_says_how_it_was_found_and_meaning_hits_clear_the_floor_with(m: &Path) {
    let m = m.to_path_buf();
    let (_tmp, root, db) = embedded(&m);
    let hits = |args: &[&str]| -> Vec<Value> {
        let (_, out, err) = run_search(&db, &root, &m, &[args, &["--json"]].concat());
        serde_json::from_str::<Value>(&out)
            .unwrap_or_else(|e| panic!("{e}: {out}{err}"))
            .as_array()
            .unwrap()
            .clone()
    };
    let floor = pidx::query::similar::floor();
    // A paraphrase: no word matches, so every hit is by meaning, each at or above the floor.
    let found = hits(&["italian cooking"]);
    assert_eq!(found[0]["sessionId"], "cook", "{found:?}");
    for h in &found {
        assert_eq!(h["by"], "meaning", "{h}");
        assert!(h["similarity"].as_f64().unwrap() >= floor, "{h}");
    }
    // Fewer texts than the limit clear the floor: the rest of the corpus is not listed.
    assert!(found.len() < 12, "{found:?}");
    // An identifier: found by its words (and meaning may agree): never by meaning alone first.
    let found = hits(&["parse_rfc3339_ts"]);
    assert_eq!(found[0]["sessionId"], "ident");
    assert!(
        ["words", "both"].contains(&found[0]["by"].as_str().unwrap()),
        "{found:?}"
    );
    // Words only: every hit by words, no similarity.
    for h in hits(&["sauce", "--lexical"]) {
        assert_eq!(h["by"], "words", "{h}");
        assert!(h.get("similarity").is_none(), "{h}");
    }
    // --meaning: every hit by meaning above the floor.
    for h in hits(&["the database schema change", "--meaning"]) {
        assert_eq!(h["by"], "meaning", "{h}");
        assert!(h["similarity"].as_f64().unwrap() >= floor, "{h}");
    }
    // The terminal marks them.
    let (code, out, _) = run_search(&db, &root, &m, &["italian cooking"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("(meaning 0."), "{out}");
    let (_, out, _) = run_search(&db, &root, &m, &["sauce"]);
    assert!(out.contains("(words"), "{out}");
    // --explain describes both halves.
    let (_, out, _) = run_search(&db, &root, &m, &["sauce", "--explain"]);
    assert!(
        out.contains("plan:") && out.contains("meaning:   model") && out.contains("fused:"),
        "{out}"
    );
}

#[test]
fn similar_prints_a_calibrated_score_and_keeps_to_the_floor() {
    let Some(m) = model("similar_prints_a_calibrated_score_and_keeps_to_the_floor") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    corpus(&root);
    // A second session about the same failing login test, told again the way a later session
    // would (some words shared, most not): the one similar session to `auth`. (How well the
    // model finds sessions about the same thing in fewer shared words is measured on real
    // transcripts by tests/meaning/real/eval.sh, not here.)
    write(
        &file(&root, "auth2", 9),
        &lines("auth2", 9, "a2", &[
            "The login test failed again in CI: authentication timed out on the build server.",
            "I made the auth spec wait longer for the session cookie, so logging in no longer times out.",
        ]),
    );
    let db = tmp.path().join("i.db");
    let out = pidx(&db, &root)
        .env("HOME", root.join("home"))
        .args(["sync", "--embed", "--embed-model"])
        .arg(&m)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = pidx(&db, &root)
        .args(["similar", "auth", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = v.as_array().unwrap();
    assert_eq!(listed[0]["sessionId"], "auth2", "{listed:?}");
    let floor = pidx::query::similar::floor();
    for s in listed {
        let score = s["score"].as_f64().unwrap();
        assert!((floor..=1.0).contains(&score), "{s}");
    }
    // The recipe is not listed: plain cosines of session means put it near 0.9.
    assert!(
        listed.iter().all(|s| s["sessionId"] != "cook"),
        "{listed:?}"
    );
    let out = pidx(&db, &root).args(["similar", "auth"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 the same, about 0 unrelated"), "{text}");
}

#[test]
fn forget_and_undo_keep_the_vectors_in_step() {
    each_model(
        "forget_and_undo_keep_the_vectors_in_step",
        forget_and_undo_keep_the_vectors_in_step_with,
    );
}

fn forget_and_undo_keep_the_vectors_in_step_with(m: &Path) {
    let m = m.to_path_buf();
    let (_tmp, root, db) = embedded(&m);
    let conn = || rusqlite::Connection::open(&db).unwrap();
    let cook = file(&root, "cook", 6);
    assert_eq!(passages_of(&conn(), &cook), 2);
    let run = |args: &[&str]| {
        let out = pidx(&db, &root)
            .env("HOME", root.join("home"))
            .env("PIDX_MODEL", &m)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    run(&["forget", "cook"]);
    assert_eq!(passages_of(&conn(), &cook), 0);
    assert_eq!(strays(&conn()), 0);
    let (code, _, _) = run_search(&db, &root, &m, &["italian cooking", "--meaning"]);
    assert_eq!(code, Some(1), "a forgotten session is not found by meaning");
    // Back, with its vectors, without `sync --embed`.
    run(&["forget", "--undo"]);
    assert_eq!(passages_of(&conn(), &cook), 2);
    codes_cover_passages(&conn());
    let (ids, _) = search(&db, &root, &m, &["italian cooking", "--meaning"]);
    assert_eq!(ids.first().map(String::as_str), Some("cook"), "{ids:?}");
}
