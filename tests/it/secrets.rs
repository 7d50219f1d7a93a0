//! Secrets through the doors a user meets: `report --html` (a page to share) redacts them,
//! `--redact` hides them from the reading commands, plain local output keeps them. Every
//! secret is freshly planted (`examples/bench_secrets/plant.rs`), one session per rule.

use crate::common;

use std::path::{Path, PathBuf};

use crate::plant;

/// A temp root holding one session per rule, each session's texts planted with that rule's
/// secrets (its first message holds one).
fn planted_root() -> (tempfile::TempDir, PathBuf, Vec<plant::Planted>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let mut all = plant::plant_all(3636, 3);
    for (i, rule) in all.chunks_mut(3).enumerate() {
        // The first message (a session's title) opens with the secret as it was written, so
        // a title cut to a width still holds it.
        rule[0].text = rule[0].written.clone();
        plant::write_session(&root, &format!("s{i:02}-{}", rule[0].rule), rule);
    }
    (tmp, root, all)
}

fn run(tmp: &Path, root: &Path, args: &[&str]) -> String {
    let out = common::pidx(&tmp.join("index.db"), root)
        .env("HOME", tmp)
        .env("PIDX_CONFIG", tmp.join("no-config.toml"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "pidx {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The planted secrets (a private key line by line) found in `text`.
fn leaked<'a>(text: &str, planted: &'a [plant::Planted]) -> Vec<(&'a str, &'a str)> {
    planted
        .iter()
        .flat_map(|p| p.secret.split('\n').map(move |piece| (p.rule, piece)))
        .filter(|(_, piece)| {
            piece.len() >= 8 && !piece.starts_with("-----") && text.contains(piece)
        })
        .collect()
}

#[test]
fn a_report_page_holds_no_planted_secret_only_markers() {
    let (tmp, root, planted) = planted_root();
    let page = run(
        tmp.path(),
        &root,
        &["report", "--html", "-", "--since", "2000-01-01"],
    );
    assert!(page.contains("<html"), "{page}");
    assert_eq!(leaked(&page, &planted), Vec::<(&str, &str)>::new());
    // Each session's title holds one secret: a marker stands in its place (a title cut to the
    // page's width may end inside the marker).
    let markers = page.matches("[redacted").count();
    assert!(
        markers >= pidx::redact::RULES.len(),
        "{markers} markers: {page}"
    );
}

#[test]
fn redact_hides_secrets_from_every_reading_command_and_plain_output_keeps_them() {
    let (tmp, root, planted) = planted_root();
    let session = "s03-github-token";
    let commands: [&[&str]; 9] = [
        &["list", "--all"],
        &["list", "--all", "--json", "--with-text"],
        &["search", "deploy"],
        &["search", "credential", "--json"],
        &["context", session],
        &["context", session, "--json"],
        &["show", session],
        &["tree", session],
        &["stats", "--by", "session", "--since", "2000-01-01"],
    ];
    for args in commands {
        let shown = run(tmp.path(), &root, &[args, &["--redact"]].concat());
        assert!(!shown.trim().is_empty(), "{args:?} printed nothing");
        assert_eq!(
            leaked(&shown, &planted),
            Vec::<(&str, &str)>::new(),
            "{args:?}: {shown}"
        );
    }
    let plain = run(tmp.path(), &root, &["context", session]);
    let github: Vec<_> = planted
        .iter()
        .filter(|p| p.rule == "github-token")
        .cloned()
        .collect();
    assert_eq!(leaked(&plain, &github).len(), github.len(), "{plain}");
}

#[test]
fn a_search_for_a_secret_finds_nothing_through_redact_and_its_words_still_do() {
    let (tmp, root, planted) = planted_root();
    for p in planted.iter().filter(|p| !p.secret.contains('\n')) {
        let by_secret = run(
            tmp.path(),
            &root,
            &["search", "--literal", &p.secret, "--redact"],
        );
        assert_eq!(by_secret, "", "{}: {by_secret}", p.rule);
        let plain = run(tmp.path(), &root, &["search", "--literal", &p.secret]);
        assert!(
            plain.contains(&p.secret),
            "{} is in the index: {plain}",
            p.rule
        );
    }
    let around = run(
        tmp.path(),
        &root,
        &["search", "rotate", "--redact", "--json"],
    );
    let hits: serde_json::Value = serde_json::from_str(&around).unwrap();
    assert!(hits.as_array().is_some_and(|h| !h.is_empty()), "{around}");
}

#[test]
fn secrets_lists_every_planted_kind_by_session_and_entry_and_never_the_secret() {
    let (tmp, root, planted) = planted_root();
    let shown = run(tmp.path(), &root, &["secrets", "--json"]);
    assert_eq!(leaked(&shown, &planted), Vec::<(&str, &str)>::new());
    let found: Vec<serde_json::Value> = serde_json::from_str(&shown).unwrap();
    for rule in pidx::redact::RULES {
        let session = format!("{rule}.jsonl");
        let entries = found
            .iter()
            .filter(|f| f["rule"] == *rule && f["path"].as_str().unwrap().ends_with(&session))
            .count();
        assert_eq!(entries, 3, "{rule}: {shown}");
    }
    let table = run(tmp.path(), &root, &["secrets"]);
    assert_eq!(leaked(&table, &planted), Vec::<(&str, &str)>::new());
    assert!(
        table.contains("github-token") && table.contains("s03-github-token-e0"),
        "{table}"
    );
    let none = run(tmp.path(), &root, &["secrets", "--since", "1d"]);
    assert_eq!(none, "");
}
