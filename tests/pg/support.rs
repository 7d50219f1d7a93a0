//! Helpers of tests/it/pg.rs: a database per test on the server tests/pg/run.sh starts, pidx bound
//! to a temp index, a dump of what the server holds, synthetic corpora, the team page's
//! examples.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub struct Server {
    /// The writer role's URL, for this test's database.
    pub url: String,
    pub reader: String,
    pub admin: postgres::Client,
    pub db: String,
}
/// Takes a server of schema 9 (pushed with [`push_at`]) back to schema 7: what pg 0008 and
/// 0009 made dropped (the rows every other table holds are the same at both).
pub const UNDO_8_9: &str = "DROP FUNCTION pidx_rollup_by_source() CASCADE;
    DROP FUNCTION pidx_by_source_sql(text, int);
    DROP TABLE usage_by_source, usage_sessions;
    DROP INDEX sessions_by_id_bytes, sessions_by_source_id_bytes;
    DELETE FROM pidx_schema WHERE version IN (8, 9);";
/// A fresh database for test `name`. The tests calling this are `#[ignore]`d, so they run only
/// when asked for (tests/pg/run.sh); asked for without a server they fail rather than pass.
pub fn server(name: &str) -> Server {
    let url = std::env::var("PIDX_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "{name}: no PostgreSQL server (PIDX_TEST_PG_URL unset); run `bash tests/pg/run.sh`"
            )
        });
    let admin_url = std::env::var("PIDX_TEST_PG_ADMIN_URL").unwrap();
    let mut admin = pidx::team::pg::connect(&admin_url).unwrap();
    let db = format!("t_{name}");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {db} OWNER pidx_writer"))
        .unwrap();
    let in_db = |u: &str| u.replacen("///pidx?", &format!("///{db}?"), 1);
    let admin = pidx::team::pg::connect(&in_db(&admin_url.replacen("///postgres?", "///pidx?", 1)))
        .unwrap();
    Server {
        url: in_db(&url),
        reader: in_db(&std::env::var("PIDX_TEST_PG_READER_URL").unwrap()),
        admin,
        db,
    }
}
pub fn pidx(tmp: &Path, root: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("pidx"));
    cmd.env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("PIDX_PG")
        .env("HOME", tmp)
        .env("PIDX_CONFIG", tmp.join("no-config.toml"))
        .env("TZ", "UTC")
        .arg("--db")
        .arg(tmp.join("index.db"))
        .arg("--root")
        .arg(root);
    cmd
}
/// Runs and parses stdout as JSON, failing with stderr when the command fails.
pub fn json(cmd: &mut Command) -> Value {
    let out = cmd.arg("--json").output().unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}
/// Exit code, stdout and stderr (an error must be the same error).
pub fn outcome(cmd: &mut Command) -> (Option<i32>, String, String) {
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}
pub fn push(tmp: &Path, root: &Path, url: &str, more: &[&str]) -> Value {
    json(
        pidx(tmp, root)
            .args(["push", "--images", "--pg", url])
            .args(more),
    )
}
/// [`push`] by a pidx that stops the server's schema at `schema` (`PIDX_PG_SCHEMA`): the
/// unpartitioned tables of a server made before pg/0010, for the tests of what migrates them.
pub fn push_at(schema: i32, tmp: &Path, root: &Path, url: &str, more: &[&str]) -> Value {
    json(
        pidx(tmp, root)
            .env("PIDX_PG_SCHEMA", schema.to_string())
            .args(["push", "--images", "--pg", url])
            .args(more),
    )
}
/// Everything the server holds for its sources, with the server's own ids and times left out
/// (what two pushes of the same index must agree on).
pub fn dump(admin: &mut postgres::Client) -> String {
    let entry_rows = entries(admin);
    let mut q = |sql: &str| text_of(admin, sql);
    let mut out = q("SELECT string_agg((to_jsonb(s) - 'fid' - 'pushed_at')::text, E'\\n' ORDER BY source, path) FROM sessions s");
    for table in pidx::team::pg::writer::CHILD_TABLES {
        if table == "entries" {
            out.push_str(&entry_rows);
            continue;
        }
        out.push_str(&q(&format!(
            "SELECT string_agg(s.source || ' ' || s.path || ' ' || (to_jsonb(t) - 'fid')::text, E'\\n'
                    ORDER BY s.source, s.path, (to_jsonb(t) - 'fid')::text)
             FROM {table} t JOIN sessions s ON s.source = t.source AND s.fid = t.fid"
        )));
    }
    // bm25's totals kept by triggers (pg 0005), each source's as its texts are now.
    out.push_str(&q(
        "SELECT string_agg(name || ' ' || texts || ' ' || tokens, E'\\n' ORDER BY name) FROM sources",
    ));
    out
}
/// The rollups of the rollups kept by triggers (pg 0009, 0011), where the schema has them: per
/// source and quarter hour, per transcript, per day, and each source's count of transcripts
/// (what two pushes of the same index must agree on, however they got there).
pub fn rollups(admin: &mut postgres::Client) -> String {
    let mut q = |sql: &str| text_of(admin, sql);
    let mut out = String::new();
    for (table, sql) in [
        ("usage_by_source", "SELECT string_agg(to_jsonb(u)::text, E'\\n' ORDER BY source, t, dup) FROM usage_by_source u"),
        ("usage_sessions", "SELECT string_agg(s.path || ' ' || u.dup || ' ' || u.n, E'\\n' ORDER BY s.source, s.path, u.dup)
             FROM usage_sessions u JOIN sessions s ON s.source = u.source AND s.fid = u.fid"),
        ("usage_days", "SELECT string_agg(to_jsonb(d)::text, E'\\n' ORDER BY source, day, dup) FROM usage_days d"),
        ("usage_source_sessions", "SELECT string_agg(source || ' ' || dup || ' ' || sessions, E'\\n' ORDER BY source, dup)
             FROM usage_source_sessions"),
        ("word_texts", "SELECT string_agg(source || ' ' || term || ' ' || n, E'\\n' ORDER BY source, term)
             FROM word_texts WHERE n <> 0"),
    ] {
        if q(&format!("SELECT to_regclass('{table}')::text")).is_empty() {
            continue;
        }
        out.push_str(&format!("\n{table}\n"));
        out.push_str(&q(sql));
    }
    out
}
/// How many (source, word) counts of `word_texts` (pg 0019) differ from the texts' words as the
/// server holds them (each text's `tsvector`, each lexeme once); 0 where the schema has none.
pub fn word_counts_differ(admin: &mut postgres::Client) -> i64 {
    if text_of(admin, "SELECT to_regclass('word_texts')::text").is_empty() {
        return 0;
    }
    admin
        .query_one(
            "WITH held AS (SELECT source, term, n FROM word_texts WHERE n <> 0),
                  counted AS (SELECT t.source, w.term, count(*) AS n
                              FROM entry_text t, unnest(tsvector_to_array(t.tsv)) AS w(term)
                              GROUP BY t.source, w.term)
             SELECT count(*) FROM held FULL JOIN counted USING (source, term)
             WHERE held.n IS DISTINCT FROM counted.n",
            &[],
        )
        .unwrap()
        .get(0)
}
/// The one text `sql` answers (empty for NULL).
pub fn text_of(admin: &mut postgres::Client, sql: &str) -> String {
    admin
        .query_one(sql, &[])
        .unwrap()
        .get::<_, Option<String>>(0)
        .unwrap_or_default()
}
/// The `entries` rows of `dump`, each raw line as its text however the server holds it (`raw`,
/// or compressed in `raw_z` since pg 0007, its texts' pieces taken from `entry_text` since
/// pg 0015), and which way.
fn entries(admin: &mut postgres::Client) -> String {
    let rows = admin
        .query(
            "SELECT s.source || ' ' || s.path || ' ' || (to_jsonb(t) - 'fid' - 'raw' - 'raw_z')::text,
                    t.raw, t.raw_z,
                    (SELECT array_agg(b.kind ORDER BY b.kind) FROM entry_text b
                     WHERE b.source = t.source AND b.fid = t.fid AND b.seq = t.seq),
                    (SELECT array_agg(b.body ORDER BY b.kind) FROM entry_text b
                     WHERE b.source = t.source AND b.fid = t.fid AND b.seq = t.seq)
             FROM entries t JOIN sessions s ON s.source = t.source AND s.fid = t.fid",
            &[],
        )
        .unwrap();
    let mut lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let (raw, raw_z): (Option<String>, Option<Vec<u8>>) = (r.get(1), r.get(2));
            let way = if raw_z.is_some() { "raw_z" } else { "raw" };
            let kinds: Option<Vec<i16>> = r.get(3);
            let bodies: Option<Vec<String>> = r.get(4);
            let texts: Vec<(i16, String)> = kinds
                .unwrap_or_default()
                .into_iter()
                .zip(bodies.unwrap_or_default())
                .collect();
            let line = pidx::team::pg::lines::line_with(raw, raw_z.as_deref(), &texts).unwrap();
            format!("{} {way} {line}", r.get::<_, String>(0))
        })
        .collect();
    lines.sort();
    lines.join("\n")
}
/// Each source's kept totals of texts and tokens are its texts' count and summed lengths.
pub fn text_totals_hold(admin: &mut postgres::Client) {
    let kept: Vec<(String, i64, i64)> = admin
        .query("SELECT name, texts, tokens FROM sources ORDER BY name", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let now: Vec<(String, i64, i64)> = admin
        .query(
            "SELECT name, count(t.source), coalesce(sum(t.ntok), 0)::int8
             FROM sources LEFT JOIN entry_text t ON t.source = name GROUP BY name ORDER BY name",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(kept, now, "kept totals of texts and tokens");
    assert!(kept.iter().all(|k| k.1 > 0 && k.2 > 0), "{kept:?}");
}
pub fn without_source(v: &Value) -> Value {
    let mut v = v.clone();
    for row in v.as_array_mut().into_iter().flatten() {
        assert!(
            row.get("source").is_some(),
            "a server row without its source: {row}"
        );
        row.as_object_mut().unwrap().remove("source");
    }
    v
}
/// The leaves of a `tree --json` answer.
pub fn leaves(tree: &Value, out: &mut Vec<String>) {
    for node in tree.as_array().into_iter().flatten() {
        let children = &node["children"];
        if children.as_array().is_none_or(|c| c.is_empty()) {
            if let Some(id) = node["id"].as_str() {
                out.push(id.to_string());
            }
        } else {
            leaves(children, out);
        }
    }
}
/// Appends one user message to `path`, parented to the file's last entry.
pub fn append(path: &Path, id: &str, text: &str) {
    let body = std::fs::read_to_string(path).unwrap();
    let last: Value = serde_json::from_str(body.lines().last().unwrap()).unwrap();
    let parent = last["id"].as_str().unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(
        f,
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-11-01T00:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
    .unwrap();
}
/// Whether `f` can be grown by [`append`]: more than six lines, the last an entry with an id.
pub fn appendable(f: &Path) -> bool {
    let body = std::fs::read_to_string(f).unwrap_or_default();
    let last = body.lines().last().unwrap_or_default();
    body.lines().count() > 6
        && serde_json::from_str::<serde_json::Value>(last).is_ok_and(|v| v["id"].is_string())
}
/// The administrator's URL for test database `db`.
pub fn admin_url(db: &str) -> String {
    std::env::var("PIDX_TEST_PG_ADMIN_URL").unwrap().replacen(
        "///postgres?",
        &format!("///{db}?"),
        1,
    )
}
/// The shared reader role's grants as docs/team.md sets it up ([`reader_sql`]), in database
/// `db`, without creating the role (the test cluster has it).
pub fn reader_grants(db: &str) -> String {
    reader_sql(db)
        .lines()
        .filter(|l| !l.starts_with("CREATE ROLE"))
        .collect::<Vec<_>>()
        .join("\n")
}
pub fn session_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walk(root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
/// `sessions` × `entries` synthetic sessions across two projects.
pub fn corpus(root: &Path, sessions: usize, entries: usize) {
    for n in 0..sessions {
        let dir = root.join(format!("--home-u-p{}--", n % 2));
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(
                dir.join(format!("2026-01-01T00-00-{:02}-000Z_s{n}.jsonl", n % 60)),
            )
            .unwrap(),
        );
        writeln!(f, r#"{{"type":"session","version":3,"id":"s{n}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p{}"}}"#, n % 2).unwrap();
        for i in 0..entries {
            let parent = if i == 0 {
                "null".to_string()
            } else {
                format!("\"s{n}e{}\"", i - 1)
            };
            let message = if i % 2 == 0 {
                format!(r#"{{"role":"user","content":"some words {i}","timestamp":{i}}}"#)
            } else {
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"some words {i}"}}],"provider":"p","model":"m","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"cost":{{"total":0.001}}}},"timestamp":{i}}}"#
                )
            };
            writeln!(f, r#"{{"type":"message","id":"s{n}e{i}","parentId":{parent},"timestamp":"2026-01-01T00:{:02}:00.000Z","message":{message}}}"#, i % 60).unwrap();
        }
    }
}
pub fn entries_on(admin: &mut postgres::Client) -> i64 {
    admin
        .query_one("SELECT count(*) FROM entries", &[])
        .map(|r| r.get(0))
        .unwrap_or(0)
}
/// The default source name pidx picks on this machine.
pub fn push_source(_tmp: &Path, _root: &Path) -> String {
    pidx::team::push::default_source()
}
/// The team page's read-only role SQL (docs/team.md), for database `db`.
pub fn reader_sql(db: &str) -> String {
    let page = std::fs::read_to_string("docs/team.md").unwrap();
    let start = page
        .find("<!-- pg-reader-role -->")
        .expect("docs/team.md marks the reader SQL");
    let block = &page[start..];
    let sql_start = block.find("```sql\n").unwrap() + 7;
    let sql_end = block[sql_start..].find("```").unwrap() + sql_start;
    block[sql_start..sql_end].replace("DATABASE pidx", &format!("DATABASE {db}"))
}
/// The `pidx ...` lines of the team page's `shell` blocks (docs/team.md), split into words
/// ("$PIDX_PG" is the URL).
pub fn team_examples(url: &str) -> Vec<Vec<String>> {
    let page = std::fs::read_to_string("docs/team.md").unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in page.lines() {
        if line.starts_with("```") {
            inside = !inside && line == "```shell";
            continue;
        }
        if let Some(rest) = line.strip_prefix("pidx ").filter(|_| inside) {
            // The administrator of the test cluster is `postgres` (local connections trusted).
            let admin = url.replacen("user=pidx_writer", "user=postgres", 1);
            out.push(shell_words(
                &rest
                    .replace("\"$PIDX_PG\"", url)
                    .replace("\"$ADMIN_URL\"", &admin),
            ));
        }
    }
    out
}
pub fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            // A comment runs to the end of the line.
            (None, '#') if !any => break,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}
