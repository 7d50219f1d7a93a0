//! `pidx export`: a session as a page that loads nothing and runs nothing, or as Markdown,
//! redacted unless `--no-redact`. The browser opens the page offline in tests/browser/serve.sh.

use std::path::Path;

use super::serve::{corpus, SECRET};

fn export(root: &Path, db: &Path, args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("pidx")
        .unwrap()
        .env("HOME", db.with_file_name("home"))
        .env("PIDX_CONFIG", db.with_file_name("no-config.toml"))
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("export")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_exported_page_holds_its_images_runs_nothing_and_keeps_no_secret() {
    let (_dir, root, db) = corpus();
    let page = export(&root, &db, &["aaaaaaaa", "--html"]);
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..100]);
    assert!(
        page.contains(r#"content="default-src 'none'; style-src 'unsafe-inline'; img-src data:""#),
        "the page's own policy loads nothing"
    );
    assert!(
        !page.contains("<script"),
        "no script, and the transcript's is text"
    );
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("href=\"javascript"));
    assert!(!page.contains(SECRET), "redacted by default");
    assert_eq!(
        page.matches("src=\"data:image/png;base64,").count(),
        1,
        "the one true PNG is inside the page; the SVGs are not shown"
    );
    assert!(!page.contains("href=\"/"), "no link back to a server");
    // The whole of a long message: an export has no server to ask for the rest.
    assert!(page.contains(&format!("{} ", "x".repeat(49_980))));
}

#[test]
fn markdown_fences_what_a_person_typed_and_redacts_by_default() {
    let (_dir, root, db) = corpus();
    let md = export(&root, &db, &["aaaaaaaa", "--md"]);
    assert!(
        md.contains("## user <a id=\"e-e1\"></a>\n\n```text\n<script>alert(1)</script> [x](javascript:alert(1)) token "),
        "{md}"
    );
    assert!(!md.contains(SECRET), "{md}");
    let open = export(&root, &db, &["aaaaaaaa", "--md", "--no-redact"]);
    assert!(
        open.contains(SECRET),
        "--no-redact keeps what the transcript says"
    );
}
