//! Per-member rights on a real PostgreSQL server (`pidx team add-member`, schema 4): a member
//! writes only its own sources, even with hand-written SQL; two members push side by side; a
//! limited reader sees only its sources and projects, through every reading command and the
//! views; `pidx forget --pg` takes sessions off the server and a later push does not bring them
//! back. Run by tests/pg/run.sh.

use std::path::Path;

use crate::pg_support::{admin_url, corpus, outcome, pidx, reader_grants, server};
use serde_json::Value;

/// `url` logging in as `role` (the test cluster trusts local connections).
fn as_role(url: &str, role: &str) -> String {
    url.replacen("user=pidx_writer", &format!("user={role}"), 1)
}

fn ok(cmd: &mut std::process::Command) -> String {
    let (code, out, err) = outcome(cmd);
    assert_eq!(code, Some(0), "{cmd:?}: {err}");
    out
}

fn json_of(cmd: &mut std::process::Command) -> Value {
    serde_json::from_str(&ok(cmd.arg("--json"))).unwrap()
}

/// What the server holds of one source, to compare before and after an attempt.
fn holding(admin: &mut postgres::Client, source: &str) -> (i64, i64, String) {
    let r = admin
        .query_one(
            "SELECT (SELECT count(*) FROM entries WHERE source = $1),
                    (SELECT count(*) FROM sessions WHERE source = $1),
                    (SELECT coalesce(md5(string_agg(coalesce(name, '') || path, ',' ORDER BY fid)), '')
                     FROM sessions WHERE source = $1)",
            &[&source],
        )
        .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

fn add_member(tmp: &Path, root: &Path, args: &[&str]) {
    ok(pidx(tmp, root).args(["team", "add-member"]).args(args));
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn a_member_writes_only_its_own_source_even_with_hand_written_sql() {
    let mut s = server("rights_write");
    let admin = admin_url(&s.db);
    let (ta, tb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (ra, rb) = (ta.path().join("sessions"), tb.path().join("sessions"));
    corpus(&ra, 6, 8);
    corpus(&rb, 5, 8);
    add_member(
        ta.path(),
        &ra,
        &["rw_alice", "--writes", "alice@laptop", "--admin", &admin],
    );
    add_member(
        tb.path(),
        &rb,
        &["rw_bob", "--writes", "bob@desk", "--admin", &admin],
    );
    let (alice, bob) = (as_role(&s.url, "rw_alice"), as_role(&s.url, "rw_bob"));

    // Both push at once, each as its own role.
    let spawn = |tmp: &Path, root: &Path, url: &str, source: &str| {
        pidx(tmp, root)
            .args(["push", "--pg", url, "--source", source])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn(ta.path(), &ra, &alice, "alice@laptop");
    let b = spawn(tb.path(), &rb, &bob, "bob@desk");
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(holding(&mut s.admin, "alice@laptop").0, 48);
    assert_eq!(holding(&mut s.admin, "bob@desk").0, 40);

    // A push as another member's source is refused, saying what to do.
    let (code, _, err) =
        outcome(pidx(ta.path(), &ra).args(["push", "--pg", &alice, "--source", "bob@desk"]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("may write only source alice@laptop"), "{err}");

    // Hand-written SQL as alice: nothing of bob's changes.
    let before = holding(&mut s.admin, "bob@desk");
    let mut sql = pidx::team::pg::connect(&alice).unwrap();
    let refused = [
        "INSERT INTO sources (name) VALUES ('bob@desk-2')",
        "INSERT INTO bad_lines (source, fid, line, reason) VALUES ('bob@desk', 1, 1, 'x')",
        "UPDATE sessions SET source = 'bob@desk' WHERE source = 'alice@laptop'",
        "TRUNCATE entries",
        "ALTER TABLE entries DISABLE ROW LEVEL SECURITY",
        "DROP POLICY pidx_member_delete ON entries",
        "DELETE FROM pidx_members",
        "INSERT INTO pidx_members (role, source) VALUES ('rw_alice', 'bob@desk')",
        // The ids of gone files (pg 0022) are written for her own sources only.
        "INSERT INTO stale_files (fid, source) VALUES (1, 'bob@desk')",
    ];
    for stmt in refused {
        assert!(sql.batch_execute(stmt).is_err(), "alice could run: {stmt}");
    }
    let touched_nothing = [
        "UPDATE sessions SET name = 'pwned' WHERE source = 'bob@desk'",
        "UPDATE entries SET text = 'pwned' WHERE source = 'bob@desk'",
        "DELETE FROM entries WHERE source = 'bob@desk'",
        "DELETE FROM entry_text WHERE source = 'bob@desk'",
        "DELETE FROM sessions WHERE source = 'bob@desk'",
        "DELETE FROM usage_rollup WHERE source = 'bob@desk'",
    ];
    for stmt in touched_nothing {
        assert_eq!(
            sql.execute(stmt, &[]).unwrap(),
            0,
            "alice changed rows: {stmt}"
        );
    }
    assert_eq!(holding(&mut s.admin, "bob@desk"), before);
    let bob_rollup: i64 = s
        .admin
        .query_one(
            "SELECT count(*) FROM usage_rollup WHERE source = 'bob@desk'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(bob_rollup > 0);
    // Her own rows are hers to change.
    assert!(
        sql.execute(
            "UPDATE sessions SET name = 'mine' WHERE source = 'alice@laptop'",
            &[]
        )
        .unwrap()
            > 0
    );

    // A member reads every source.
    let all = json_of(pidx(ta.path(), &ra).args(["--pg", &alice, "list", "--all"]));
    let sources: std::collections::BTreeSet<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources.into_iter().collect::<Vec<_>>(),
        ["alice@laptop", "bob@desk"]
    );

    // `forget --pg` as alice takes her session off the server; her next push leaves it off.
    let first = ra.join("--home-u-p0--/2026-01-01T00-00-00-000Z_s0.jsonl");
    ok(pidx(ta.path(), &ra).args([
        "forget",
        first.to_str().unwrap(),
        "--pg",
        &alice,
        "--source",
        "alice@laptop",
    ]));
    assert_eq!(holding(&mut s.admin, "alice@laptop").1, 5);
    // Its file id is listed as gone (pg 0022's trigger, run as her), so no search counts
    // its postings.
    let gone: i64 = s
        .admin
        .query_one(
            "SELECT count(*) FROM stale_files WHERE source = 'alice@laptop'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(gone, 1, "the forgotten session's file id");
    ok(pidx(ta.path(), &ra).args(["push", "--pg", &alice, "--source", "alice@laptop"]));
    assert_eq!(holding(&mut s.admin, "alice@laptop").1, 5);
    ok(pidx(ta.path(), &ra).args(["forget", "--undo"]));
    ok(pidx(ta.path(), &ra).args(["push", "--pg", &alice, "--source", "alice@laptop"]));
    assert_eq!(holding(&mut s.admin, "alice@laptop").1, 6);
    // Bob's forget cannot reach alice's source.
    let (code, _, err) = outcome(pidx(tb.path(), &rb).args([
        "forget",
        "--cwd",
        "/home/u/p0",
        "--pg",
        &bob,
        "--source",
        "alice@laptop",
    ]));
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(holding(&mut s.admin, "alice@laptop").1, 6);
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn a_limited_reader_sees_only_its_sources_and_projects() {
    let mut s = server("rights_read");
    let admin = admin_url(&s.db);
    let (ta, tb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (ra, rb) = (ta.path().join("sessions"), tb.path().join("sessions"));
    corpus(&ra, 4, 6);
    corpus(&rb, 6, 6);
    ok(pidx(ta.path(), &ra).args(["push", "--pg", &s.url, "--source", "a@x"]));
    ok(pidx(tb.path(), &rb).args(["push", "--pg", &s.url, "--source", "b@y"]));
    add_member(
        ta.path(),
        &ra,
        &["rr_carol", "--reads", "a@x", "--admin", &admin],
    );
    add_member(
        ta.path(),
        &ra,
        &[
            "rr_dave",
            "--reads-project",
            "/home/u/p1",
            "--admin",
            &admin,
        ],
    );
    let (carol, dave) = (as_role(&s.url, "rr_carol"), as_role(&s.url, "rr_dave"));
    // The shared reader role as the team docs set it up (the role exists in the test cluster).
    s.admin.batch_execute(&reader_grants(&s.db)).unwrap();

    let listed = |url: &str| -> Vec<(String, String)> {
        let v = json_of(pidx(ta.path(), &ra).args(["--pg", url, "list", "--all"]));
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["source"].as_str().unwrap().to_string(),
                    r["cwd"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let count = |url: &str, sql: &str| -> i64 {
        let v = json_of(pidx(ta.path(), &ra).args(["--pg", url, "sql", sql]));
        v[0]["n"].as_i64().unwrap_or_else(|| panic!("{sql}: {v}"))
    };
    // Carol: source a@x only, through list, sql over tables and views, search.
    let rows = listed(&carol);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|(src, _)| src == "a@x"), "{rows:?}");
    assert_eq!(count(&carol, "SELECT count(*) AS n FROM entries"), 24);
    assert_eq!(count(&carol, "SELECT count(*) AS n FROM v_entries"), 24);
    assert_eq!(
        count(&carol, "SELECT count(*) AS n FROM entry_text"),
        count(
            &s.url,
            "SELECT count(*) AS n FROM entry_text WHERE source = 'a@x'"
        )
    );
    assert_eq!(count(&carol, "SELECT count(*) AS n FROM sources"), 1);
    // The words each text is listed under (pg 0006, what a one-word search reads first).
    assert!(
        count(
            &s.url,
            "SELECT count(*) AS n FROM text_heads WHERE source = 'a@x'"
        ) > 0
    );
    assert_eq!(
        count(&carol, "SELECT count(*) AS n FROM text_heads"),
        count(
            &s.url,
            "SELECT count(*) AS n FROM text_heads WHERE source = 'a@x'"
        )
    );
    let hits =
        json_of(pidx(ta.path(), &ra).args(["--pg", &carol, "search", "words", "--limit", "1000"]));
    assert!(!hits.as_array().unwrap().is_empty());
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .all(|h| h["source"] == "a@x"),
        "{hits}"
    );
    // Carol reads her source whole, so its words' counts and postings too (pg 0027), and her
    // search is answered from them (`PIDX_PG_HEADS=postings` makes any other way an error):
    // the same hits, in the same order, as the writer's search kept to her source (their
    // scores apart by the recency of the moment each ran).
    for table in ["word_postings", "word_texts"] {
        let hers = count(&carol, &format!("SELECT count(*) AS n FROM {table}"));
        assert!(hers > 0, "{table}");
        assert_eq!(
            hers,
            count(
                &s.url,
                &format!("SELECT count(*) AS n FROM {table} WHERE source = 'a@x'")
            ),
            "{table}"
        );
    }
    let search = |url: &str, source: Option<&str>| -> Vec<String> {
        let mut c = pidx(ta.path(), &ra);
        c.env("PIDX_PG_HEADS", "postings").args(["--pg", url]);
        if let Some(source) = source {
            c.args(["--source", source]);
        }
        let v = json_of(c.args(["search", "words", "--limit", "20"]));
        (v.as_array().unwrap().iter())
            .map(|h| {
                format!(
                    "{} {} {} {}",
                    h["source"], h["path"], h["entryId"], h["kind"]
                )
            })
            .collect()
    };
    let hers = search(&carol, None);
    assert!(!hers.is_empty());
    assert_eq!(hers, search(&s.url, Some("a@x")));
    // Her literals and patterns take their candidates from the same postings, each text
    // probed by its key under her row-level policy (`Chunk::probed`): the writer's hits of her
    // source, newest first, snippets and all.
    let found = |url: &str, source: Option<&str>, query: &[&str]| -> Value {
        let mut c = pidx(ta.path(), &ra);
        c.args(["--pg", url]);
        if let Some(source) = source {
            c.args(["--source", source]);
        }
        json_of(c.args(["search", "--limit", "50"]).args(query))
    };
    for query in [
        &["--literal", "some words 3"][..],
        &["--literal", "me words"][..],
        &["re:words [35]$"][..],
    ] {
        let hers = found(&carol, None, query);
        let n = hers.as_array().unwrap().len();
        assert!(n > 0, "{query:?}");
        assert_eq!(hers, found(&s.url, Some("a@x"), query), "{query:?}");
        // Everyone's search finds more: the other source's texts.
        assert!(
            found(&s.url, None, query).as_array().unwrap().len() > n,
            "{query:?}"
        );
    }
    // Dave: project /home/u/p1 of every source (odd sessions: 2 of a@x, 3 of b@y).
    let rows = listed(&dave);
    assert_eq!(rows.len(), 5, "{rows:?}");
    assert!(rows.iter().all(|(_, cwd)| cwd == "/home/u/p1"), "{rows:?}");
    assert!(
        count(
            &dave,
            "SELECT count(*) AS n FROM usage_rollup WHERE source = 'b@y'"
        ) > 0
    );
    assert_eq!(
        count(
            &dave,
            "SELECT count(*) AS n FROM v_sessions WHERE cwd <> '/home/u/p1'"
        ),
        0
    );
    assert_eq!(
        count(&dave, "SELECT count(*) AS n FROM text_heads"),
        count(
            &s.url,
            "SELECT count(*) AS n FROM text_heads h JOIN sessions s USING (source, fid)
             WHERE s.cwd = '/home/u/p1'"
        )
    );
    // Dave reads no source whole: no counts, postings or gone files of any, and his search
    // reads the texts he sees.
    for table in ["word_postings", "word_texts", "stale_files"] {
        assert_eq!(
            count(&dave, &format!("SELECT count(*) AS n FROM {table}")),
            0
        );
    }
    let hits =
        json_of(pidx(ta.path(), &ra).args(["--pg", &dave, "search", "words", "--limit", "1000"]));
    assert!(!hits.as_array().unwrap().is_empty());
    assert!(
        (hits.as_array().unwrap().iter()).all(|h| h["cwd"] == "/home/u/p1"),
        "{hits}"
    );
    // The shared reader role registered before schema 4 still reads everything.
    assert_eq!(listed(&s.reader).len(), 10);
    // A limited reader writes nothing.
    let mut sql = pidx::team::pg::connect(&carol).unwrap();
    assert!(sql.batch_execute("DELETE FROM entries").is_err());
    assert!(sql
        .batch_execute("INSERT INTO sources (name) VALUES ('a@x-2')")
        .is_err());
    let members: String = ok(pidx(ta.path(), &ra).args(["team", "members", "--admin", &admin]));
    assert!(members.contains("rr_carol  reads source a@x"), "{members}");
    assert!(
        members.contains("rr_dave  reads every source under /home/u/p1"),
        "{members}"
    );
}

/// Without `--admin`, `add-member` prints the SQL and connects to nothing.
#[test]
fn add_member_prints_its_sql_without_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let out = ok(pidx(tmp.path(), &root).args(["team", "add-member", "o'neil", "--writes", "o@h"]));
    assert!(out.contains(r#"CREATE ROLE "o'neil" LOGIN"#), "{out}");
    assert!(
        out.contains("INSERT INTO pidx_members (role, source) VALUES ('o''neil', 'o@h');"),
        "{out}"
    );
    let (code, _, err) = outcome(pidx(tmp.path(), &root).args(["team", "add-member", "x"]));
    assert_eq!(code, Some(2));
    assert!(err.contains("--writes"), "{err}");
}
