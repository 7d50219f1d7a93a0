//! `pidx --pg URL serve` against a real PostgreSQL server (started by tests/pg/run.sh): the same
//! pages over two pushed sources, with the source as a column and a filter, through the
//! read-only role. Plain `cargo test` reports these as ignored; tests/pg/run.sh runs them.

use crate::pg_support::{push, reader_sql, server};
use crate::serve::{corpus, get, serve, FILE, SECRET};

/// The hostile corpus of serve.rs pushed as `alpha`, then with a second session as `beta`:
/// the same file name on both machines.
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn the_team_server_is_served_with_its_sources_as_a_column_and_a_filter() {
    let mut pg = server("serve_pg");
    let (dir, root, db) = corpus();
    let report = push(dir.path(), &root, &pg.url, &["--source", "alpha"]);
    assert_eq!(report["new"].as_u64(), Some(1), "{report}");
    let other = "2026-03-02T08-00-00-000Z_bbbbbbbb-0000-7000-8000-000000000002.jsonl";
    std::fs::write(
        root.join("--home-u-a--").join(other),
        concat!(
            r#"{"type":"session","version":3,"id":"bbbbbbbb-0000-7000-8000-000000000002","timestamp":"2026-03-02T08:00:00.000Z","cwd":"/home/u/b"}"#,
            "\n",
            r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2026-03-02T08:01:00.000Z","message":{"role":"user","timestamp":1772438460000,"content":"only on beta: zebra token"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let report = push(dir.path(), &root, &pg.url, &["--source", "beta"]);
    assert_eq!(report["new"].as_u64(), Some(2), "{report}");

    // Through the read-only role (docs/team.md's grants), as a team's readers would.
    let grants: String = reader_sql(&pg.db)
        .lines()
        .filter(|l| !l.starts_with("CREATE ROLE"))
        .collect::<Vec<_>>()
        .join("\n");
    pg.admin.batch_execute(&grants).unwrap();
    let s = serve(&root, &db, &["--pg", &pg.reader, "--listen", "127.0.0.1:0"]);
    let ok = |path: &str| {
        let a = get(s.port, path, None, &[]);
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        assert!(a.header("content-security-policy").is_some(), "{path}");
        a.body
    };
    let projects = ok("/");
    assert!(projects.contains("/home/u/a&lt;b&gt;") && projects.contains("/home/u/b"));
    assert!(
        projects.contains("href=\"/?source=alpha\"") && projects.contains("href=\"/?source=beta\""),
        "{projects}"
    );
    // Counted on the server a source and project: alpha's session and beta's two, one project
    // on both machines.
    for text in [
        ">alpha</a> (1)",
        ">beta</a> (2)",
        "every session of every project (3)",
    ] {
        assert!(projects.contains(text), "{text}: {projects}");
    }
    let on_beta = ok("/?source=beta");
    assert!(
        on_beta.contains("every session of every project (2)"),
        "{on_beta}"
    );
    let every = ok("/?all=true");
    let (a, b) = (format!("/s/alpha%2F{FILE}"), format!("/s/beta%2F{FILE}"));
    assert!(every.contains(&a) && every.contains(&b), "{every}");
    assert!(every.contains("<th>source</th>"), "{every}");
    assert!(!every.contains(SECRET));
    let beta = ok("/?all=true&source=beta");
    assert!(beta.contains(&b) && !beta.contains(&a), "{beta}");
    assert!(beta.contains("only on beta"), "{beta}");
    let filtered = ok("/?all=true&q=zebra");
    assert!(
        filtered.contains("only on beta") && !filtered.contains(&a),
        "{filtered}"
    );

    // A session on one machine: escaped, redacted, its source named; the tree and images too.
    let page = ok(&a);
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<script>alert") && !page.contains(SECRET));
    assert!(page.contains(">alpha</a>"), "{page}");
    assert!(page.contains(&format!("{a}/tree")), "{page}");
    let tree = ok(&format!("{a}/tree"));
    assert!(tree.contains(&format!("{a}?leaf=e1")), "{tree}");
    let png = get(
        s.port,
        &format!("{a}/image?e=1&m=0&p=%2Fcontent%2F0"),
        None,
        &[],
    );
    assert_eq!(
        png.header("content-type"),
        Some("image/png"),
        "{}",
        png.body
    );
    assert_eq!(
        get(
            s.port,
            &format!("{a}/image?e=1&m=0&p=%2Fcontent%2F1"),
            None,
            &[]
        )
        .status,
        404,
        "an SVG is never served from the server either"
    );
    // The bare file name is on both machines: ambiguous, said so.
    let bare = get(s.port, &format!("/s/{FILE}"), None, &[]);
    assert_eq!(bare.status, 400, "{}", bare.body);
    assert!(
        bare.body.contains("alpha") && bare.body.contains("beta"),
        "{}",
        bare.body
    );

    // Search over both machines, and one.
    // (An entry both machines pushed is one hit, as `pidx --pg search` counts it.)
    let hits = ok("/search?q=token");
    assert!(
        hits.contains(&format!("{a}?entry=e1")) || hits.contains(&format!("{b}?entry=e1")),
        "{hits}"
    );
    assert!(
        hits.contains("<span class=\"source\">beta</span>"),
        "{hits}"
    );
    assert!(
        hits.contains(
            "%2F2026-03-02T08-00-00-000Z_bbbbbbbb-0000-7000-8000-000000000002.jsonl?entry=b1"
        ),
        "{hits}"
    );
    let on_alpha = ok("/search?q=token&source=alpha");
    assert!(
        on_alpha.contains(&format!("{a}?entry=e1")) && !on_alpha.contains("beta"),
        "{on_alpha}"
    );
    let meaning = ok("/search?q=token&meaning=true");
    assert!(
        meaning.contains("no source on the team server holds vectors"),
        "{meaning}"
    );

    // Usage by machine: pidx --pg stats --by source's figures.
    let usage = ok("/usage?by=source&figure=sessions");
    assert!(
        usage.contains(">alpha<") && usage.contains(">beta<"),
        "{usage}"
    );
    // A file's history is the local index's: refused in one line.
    let files = get(s.port, "/files?path=/x", None, &[]);
    assert_eq!(files.status, 400, "{}", files.body);
    assert!(files.body.contains("local index"));

    // A statement the server stops (here behind a lock another connection holds) is a stop
    // said in pidx's words, not the server's bare "canceling statement due to statement
    // timeout": on the page, cancelled at serve's 10 s limit for the page (the server's own
    // statement limit is twice that: the page must not wait for it), and from the command line
    // at a limit the URL sets.
    let mut holder = pidx::team::pg::connect(&crate::pg_support::admin_url(&pg.db)).unwrap();
    let mut lock = holder.transaction().unwrap();
    lock.batch_execute("LOCK TABLE sources IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let asked = std::time::Instant::now();
    let stopped = get(s.port, "/search?q=zebra", None, &[]);
    let waited = asked.elapsed();
    assert!(
        waited < std::time::Duration::from_secs(18),
        "the page waited for the server's 20 s statement limit: {waited:?}"
    );
    assert_eq!(stopped.status, 500, "{}", stopped.body);
    assert!(
        stopped
            .body
            .contains("took longer than 10 s and was stopped")
            && !stopped.body.contains("canceling statement"),
        "{}",
        stopped.body
    );
    let limited = format!("{}&options=-c%20statement_timeout%3D300", pg.reader);
    let (code, _, err) = crate::pg_support::outcome(
        crate::pg_support::pidx(dir.path(), &root).args(["--pg", &limited, "search", "zebra"]),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("stopped before it finished") && !err.contains("canceling statement"),
        "{err}"
    );
    lock.rollback().unwrap();
    let after = get(s.port, "/search?q=zebra", None, &[]);
    assert_eq!(after.status, 200, "{}", after.body);
}
