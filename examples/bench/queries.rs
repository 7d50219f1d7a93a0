//! The query rows of the benchmark: `search` top 20 for each class of query with `rg -l` over
//! the same JSONL beside it, and `stats` for several groupings with a Python re-parse of the
//! JSONL beside the first.

use anyhow::Result;

use crate::run::{available, strings};
use crate::{ms, Bench, Row};

/// One search row: what it is, the pidx query (with `--literal` or not) and rg's arguments.
struct Case {
    what: String,
    query: String,
    literal: bool,
    rg: Vec<String>,
}

fn cases(b: &Bench) -> Vec<Case> {
    let a = &b.args;
    let kinds = ["rare", "mid-frequency", "common"];
    let mut out: Vec<Case> = a
        .words
        .iter()
        .zip(kinds)
        .map(|(w, k)| Case {
            what: format!("{k} word `{w}`"),
            query: w.clone(),
            literal: false,
            rg: strings(&["-i", "-F", w]),
        })
        .collect();
    out.push(Case {
        what: format!("phrase `\"{}\"`", a.phrase),
        query: format!("\"{}\"", a.phrase),
        literal: false,
        rg: strings(&["-i", "-F", &a.phrase]),
    });
    out.extend(a.literal.iter().map(|l| Case {
        what: format!("literal `{l}`"),
        query: l.clone(),
        literal: true,
        rg: strings(&["-F", l]),
    }));
    out.extend(a.regex.iter().map(|r| Case {
        what: format!("`re:{r}`"),
        query: format!("re:{r}"),
        literal: false,
        rg: strings(&["-i", r]),
    }));
    out
}

pub fn search_rows(b: &mut Bench) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let has_rg = available(&["rg", "--version"]);
    if !has_rg {
        b.notes
            .push("rg columns not run: ripgrep is not installed".into());
    }
    for case in cases(b) {
        eprintln!("bench: search {}", case.what);
        let mut rest = vec![
            "--no-sync",
            "search",
            case.query.as_str(),
            "--limit",
            "20",
            "--json",
        ];
        if case.literal {
            rest.push("--literal");
        }
        let t = b.time_pidx(&rest, &[0, 1])?;
        let base = if has_rg {
            let mut rg = strings(&["rg", "-l"]);
            rg.extend(case.rg);
            rg.push(b.corpus.clone());
            Some(b.time_base(&rg, &[0, 1])?.median())
        } else {
            None
        };
        rows.push(
            Row::new(
                format!("search top 20, {}", case.what),
                ms(t.median()),
                ">= 10x rg -l; p50 <= 20 ms for words",
            )
            .against("rg -l", base, t.median()),
        );
    }
    Ok(rows)
}

/// `stats` by the benchmark table's grouping (docs/performance.md; against the re-parse), then
/// the others alone.
pub fn stats_rows(b: &mut Bench) -> Result<Vec<Row>> {
    let all: [&[&str]; 6] = [
        &["day", "model"],
        &[],
        &["session"],
        &["project"],
        &["month", "provider"],
        &["tool"],
    ];
    let compact: [&[&str]; 3] = [&["day", "model"], &[], &["tool"]];
    let groupings: &[&[&str]] = if b.args.compact { &compact } else { &all };
    let mut rows = Vec::new();
    for (i, dims) in groupings.iter().enumerate() {
        let mut rest = vec!["--no-sync", "stats", "--all", "--json"];
        for d in *dims {
            rest.extend(["--by", d]);
        }
        let label = if dims.is_empty() {
            "`stats` (totals)".to_string()
        } else {
            format!("`stats --by {}`", dims.join(" --by "))
        };
        eprintln!("bench: {label}");
        let t = b.time_pidx(&rest, &[0, 1])?;
        let mut row = Row::new(label, ms(t.median()), "<= 100 ms at 800k entries");
        if i == 0 && !b.args.compact && available(&["python3", "--version"]) {
            let argv = strings(&["python3", "benches/reparse_stats.py", &b.corpus]);
            let base = crate::run::time(&argv, 0, b.args.pi_runs.min(2), &[0])?.median();
            row = row.against("python JSONL re-parse", Some(base), t.median());
        }
        rows.push(row);
    }
    Ok(rows)
}
