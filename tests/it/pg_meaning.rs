//! Search by meaning on the team server (pg 0032): two sources pushed from indexes embedded
//! with the real model answer `pidx --pg URL search --meaning` (and the default fused search)
//! per source with the hits, order and similarities of that source's local index, and over
//! both with the two merged by similarity; a push sends only what changed, a text holding a
//! secret keeps its passages on its machine, and vectors of another model are never compared.
//! Plain `cargo test` reports it as ignored; tests/pg/run.sh runs it (it needs the model of
//! `bash tests/meaning/model.sh` too, and says SKIPPED without it).

use std::path::Path;

use serde_json::Value;

use crate::common;
use crate::pg_support::*;

/// Each hit as its session file, entry, kind, how it was found and its score (to a millionth).
fn shown(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|h| {
            format!(
                "{} {} {} {} {:.6}",
                h["path"].as_str().unwrap(),
                h["entryId"],
                h["kind"],
                h["by"],
                h["score"].as_f64().unwrap()
            )
        })
        .collect()
}

fn sync_embedded(tmp: &Path, root: &Path, model: &Path) {
    let out = pidx(tmp, root)
        .args(["sync", "--embed", "--embed-model"])
        .arg(model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// The server's count of passages of `source`.
fn held(admin: &mut postgres::Client, source: &str) -> i64 {
    admin
        .query_one(
            "SELECT count(*) FROM passages WHERE source = $1",
            &[&source],
        )
        .unwrap()
        .get(0)
}

fn local_passages(tmp: &Path) -> i64 {
    let conn = rusqlite::Connection::open(tmp.join("index.db")).unwrap();
    conn.query_row("SELECT count(*) FROM passages", [], |r| r.get(0))
        .unwrap()
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn meaning_on_the_server_is_each_source_s_local_meaning() {
    let Some(model) = crate::meaning::model("pg_meaning::meaning_on_the_server") else {
        return;
    };
    let s = server("meaning");
    let mut admin = pidx::team::pg::connect(&s.url).unwrap();
    let parent = tempfile::tempdir().unwrap();
    // Source `topics`: the meaning tests' six topics. Source `corpus`: the conformance corpus
    // (hundreds of texts, several projects).
    let topics = parent.path().join("topics");
    let topics_root = topics.join("sessions");
    crate::meaning::corpus(&topics_root);
    let corpus = parent.path().join("corpus");
    let corpus_root = corpus.join("sessions");
    let src = common::conformance_dir();
    common::copy_tree(&src.join("sessions"), &corpus_root);
    common::apply_mtimes(&src.join("mtimes.json"), &corpus_root);
    let sources = [
        (topics.as_path(), topics_root.as_path(), "topics"),
        (corpus.as_path(), corpus_root.as_path(), "corpus"),
    ];
    for (tmp, root, name) in sources {
        sync_embedded(tmp, root, &model);
        let report = push(tmp, root, &s.url, &["--source", name]);
        let sent = report["meaning"]["passages"].as_i64().unwrap();
        let withheld = report["meaning"]["withheld"].as_i64().unwrap();
        assert!(sent > 0, "{report}");
        assert_eq!(sent + withheld, local_passages(tmp), "{report}");
        assert_eq!(held(&mut admin, name), sent, "{name}");
        assert_eq!(withheld, 0, "{report}");
    }

    let search = |tmp: &Path, root: &Path, args: &[&str], on: Option<&str>| -> Value {
        let mut cmd = pidx(tmp, root);
        cmd.env("PIDX_MODEL", &model);
        if let Some(source) = on {
            cmd.args(["--pg", &s.url, "--source", source]);
        }
        json(cmd.arg("search").args(args))
    };
    let queries: &[&[&str]] = &[
        &["logging in fails sometimes", "--meaning"],
        &["italian food", "--meaning"],
        &["making the endpoint faster", "--meaning", "--limit", "5"],
        &["parse the session file", "--meaning"],
        &["tests", "--meaning", "--since", "2026-01-03"],
        &["database migration", "--meaning", "--in", "assistant"],
        &["fix the build", "--meaning", "--branch"],
        // Fused: words first, then what meaning alone found.
        &["logging in fails sometimes"],
        &["the tests"],
        &["parse_rfc3339_ts"],
    ];
    let mut found = 0;
    for args in queries {
        let mut both = Vec::new();
        for (tmp, root, name) in sources {
            let local = search(tmp, root, args, None);
            let server = search(tmp, root, args, Some(name));
            assert_eq!(
                shown(&server),
                shown(&local),
                "{name} {args:?}\nserver: {server:#}\nlocal: {local:#}"
            );
            found += shown(&local).len();
            both.extend(local.as_array().cloned().unwrap_or_default());
        }
        // Over both sources: each one's meaning hits, merged by similarity.
        if args.contains(&"--meaning") && !args.contains(&"--branch") {
            let limit = args
                .iter()
                .position(|a| *a == "--limit")
                .map_or(20, |i| args[i + 1].parse().unwrap());
            both.sort_by(|a, b| {
                b["score"]
                    .as_f64()
                    .unwrap()
                    .total_cmp(&a["score"].as_f64().unwrap())
            });
            both.truncate(limit);
            let mut want = shown(&Value::Array(both));
            let server_all = json(
                pidx(sources[0].0, sources[0].1)
                    .env("PIDX_MODEL", &model)
                    .args(["--pg", &s.url, "search"])
                    .args(*args),
            );
            let mut got = shown(&server_all);
            // Grouped by session on both sides: compared as sets of the same size.
            got.sort();
            want.sort();
            assert_eq!(got, want, "{args:?}");
        }
    }
    assert!(found >= 40, "too few hits to compare: {found}");

    // `serve --pg`: a search sent whole fuses meaning as `pidx search` does; an answer given
    // as you type ranks by words alone over the server (`Ranking::typing`), unless by meaning
    // was asked for.
    let (tmp, root, _) = sources[0];
    std::fs::write(
        tmp.join("no-config.toml"),
        format!("model = {:?}\n", model.display().to_string()),
    )
    .unwrap();
    let web = crate::serve::serve(
        root,
        &tmp.join("index.db"),
        &["--pg", &s.url, "--listen", "127.0.0.1:0"],
    );
    let page = |path: &str| {
        let a = crate::serve::get(web.port, path, None, &[]);
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        a.body
    };
    let q = "q=logging+in+fails+sometimes&source=topics";
    let whole = page(&format!("/search?{q}"));
    assert!(whole.contains(">by meaning"), "{whole}");
    let typed = page(&format!("/search?frag=1&{q}"));
    assert!(typed.contains(" hits in "), "{typed}");
    assert!(!typed.contains("class=\"by\""), "{typed}");
    assert!(typed.contains("Enter adds meaning"), "{typed}");
    assert!(!whole.contains("Enter adds meaning"), "{whole}");
    let asked = page(&format!("/search?frag=1&meaning=true&{q}"));
    assert!(asked.contains(">by meaning"), "{asked}");
    let words = page(&format!("/search?frag=1&lexical=true&{q}"));
    assert!(!words.contains("Enter adds meaning"), "{words}");
    drop(web);

    // Source `keys`: the six topics again and a session whose question holds a key. Its text is found by meaning
    // locally; its passage stays on this machine, so the server does not find it so.
    let keys = parent.path().join("keys");
    let keys_root = keys.join("sessions");
    crate::meaning::corpus(&keys_root);
    let question =
        "Revoke the old access key in the vault and rotate the cloud credentials before \
                    the quarterly audit; the new token is ghp_R4nd0mT0k3nW1thM1x3dCas3AndD1g1ts9Zq";
    let secret = crate::meaning::lines(
        "keys",
        9,
        "keys",
        &[question, "Done: the credentials are rotated."],
    );
    std::fs::create_dir_all(keys_root.join("--home-u-app--")).unwrap();
    std::fs::write(
        keys_root
            .join("--home-u-app--")
            .join("2026-01-09T00-00-00-000Z_keys.jsonl"),
        secret.join("\n") + "\n",
    )
    .unwrap();
    sync_embedded(&keys, &keys_root, &model);
    let report = push(&keys, &keys_root, &s.url, &["--source", "keys"]);
    assert_eq!(report["meaning"]["withheld"], 1, "{report}");
    assert_eq!(held(&mut admin, "keys"), local_passages(&keys) - 1);
    let about_keys = ["revoke the old access key in the vault", "--meaning"];
    let local = shown(&search(&keys, &keys_root, &about_keys, None));
    assert!(local.iter().any(|h| h.contains("\"keys0\"")), "{local:?}");
    let server = shown(&search(&keys, &keys_root, &about_keys, Some("keys")));
    assert!(
        !server.iter().any(|h| h.contains("\"keys0\"")),
        "{server:?}"
    );
    // Its answer, which holds no secret, is found on both.
    let rotated = ["rotate the cloud credentials", "--meaning"];
    let server = shown(&search(&keys, &keys_root, &rotated, Some("keys")));
    assert!(server.iter().any(|h| h.contains("\"keys1\"")), "{server:?}");

    // An appended answer: only its transcript's passages go again; a removed one's go.
    let auth = topics_root
        .join("--home-u-app--")
        .join("2026-01-01T00-00-00-000Z_auth.jsonl");
    let mut lines = crate::meaning::lines(
        "auth",
        1,
        "auth",
        &[
            "The login spec keeps failing intermittently in CI; the authentication test times out now and then.",
            "I added a retry around the session cookie check so the auth spec stops failing at random.",
            "Is the flaky sign-in check fixed for good now?",
        ],
    );
    lines.retain(|l| !l.is_empty());
    std::fs::write(&auth, lines.join("\n") + "\n").unwrap();
    std::fs::remove_file(
        topics_root
            .join("--home-u-app--")
            .join("2026-01-06T00-00-00-000Z_cook.jsonl"),
    )
    .unwrap();
    sync_embedded(&topics, &topics_root, &model);
    let report = push(&topics, &topics_root, &s.url, &["--source", "topics"]);
    assert_eq!(report["meaning"]["files"], 1, "{report}");
    assert_eq!(
        held(&mut admin, "topics"),
        local_passages(&topics),
        "{report}"
    );
    assert_eq!(report["deleted"], 1, "{report}");
    let italian = ["italian food", "--meaning"];
    assert_eq!(
        shown(&search(&topics, &topics_root, &italian, Some("topics"))),
        shown(&search(&topics, &topics_root, &italian, None))
    );
    let again = push(&topics, &topics_root, &s.url, &["--source", "topics"]);
    assert_eq!(again["meaning"]["files"], 0, "{again}");

    // A reader of one source (`team add-member --reads`) ranks by meaning over that source's
    // vectors alone, as the writer does with `--source`.
    let (code, _, err) = outcome(pidx(&topics, &topics_root).args([
        "team",
        "add-member",
        "pm_carol",
        "--reads",
        "topics",
        "--admin",
        &admin_url(&s.db),
    ]));
    assert_eq!(code, Some(0), "{err}");
    let carol = s.url.replacen("user=pidx_writer", "user=pm_carol", 1);
    for args in [
        &["the tests", "--meaning"][..],
        &["logging in fails sometimes", "--meaning"],
    ] {
        let as_carol = json(
            pidx(&topics, &topics_root)
                .env("PIDX_MODEL", &model)
                .args(["--pg", &carol, "search"])
                .args(args),
        );
        let writer = shown(&search(&topics, &topics_root, args, Some("topics")));
        assert_eq!(shown(&as_carol), writer, "{args:?}");
        assert!(
            args[0] == "the tests" || !writer.is_empty(),
            "{args:?} finds nothing"
        );
    }
    let everyone = json(pidx(&topics, &topics_root).env("PIDX_MODEL", &model).args([
        "--pg",
        &s.url,
        "search",
        "the tests",
        "--meaning",
    ]));
    assert!(
        shown(&everyone).iter().any(|h| h.contains("/corpus/")),
        "the writer finds the other source's texts: {everyone}"
    );

    // Vectors of another model are never compared: `--meaning` says so in one line, and the
    // default ranks by words with a note.
    admin
        .execute(
            "UPDATE embed_sources SET model = 'another-model' WHERE source = 'corpus'",
            &[],
        )
        .unwrap();
    let (code, out, err) = outcome(pidx(&corpus, &corpus_root).env("PIDX_MODEL", &model).args([
        "--pg",
        &s.url,
        "--source",
        "corpus",
        "search",
        "tests",
        "--meaning",
    ]));
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("the team server's vectors are of model another-model")
            && err.lines().count() == 1,
        "{err}"
    );
    let (code, out, err) = outcome(
        pidx(&corpus, &corpus_root)
            .env("PIDX_MODEL", &model)
            .args(["--pg", &s.url, "search", "tests", "--limit", "50"]),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("by words only in corpus"), "{err}");
    assert!(out.contains("tests"), "{out}");
}
