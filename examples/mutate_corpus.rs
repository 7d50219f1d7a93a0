//! Corpus-level mutation check: copies real (or generated) session files, breaks a few of the
//! copies the way disks, editors and half-written files break them (a value swapped for null,
//! a number, a list, a string or an object; a cut line; invalid UTF-8; deep nesting; lost,
//! doubled and swapped lines; a lone CR, a NUL), syncs the whole set with the `pidx` binary and
//! checks that the sync exits 0 without a panic and that every untouched file is in the index
//! exactly as an index of the untouched files alone holds it: no untouched session lost.
//!
//! ```text
//! cargo build && cargo run --example mutate_corpus -- [--from DIR]... [--seeds N] [--first S]
//!     [--broken K] [--pidx PATH] [--keep DIR]
//! ```
//!
//! `--from` is a pi sessions root (default: the committed conformance corpus; give a
//! `gen_corpus` output too); `--seeds` runs seeds `first..first+N` (default 5 from 1); `--broken`
//! breaks K files per seed (default a fifth of them); `--pidx` is the binary (default
//! `target/debug/pidx` beside this example); `--keep` writes each seed's broken files there
//! (for a failing seed: the inputs to make a fixture of). Exit 1 when any seed loses an
//! untouched session, a sync fails or panics; docs/fuzzing.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// A small deterministic generator (64-bit LCG), so a seed always breaks the same bytes.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

struct Args {
    from: Vec<PathBuf>,
    seeds: u64,
    first: u64,
    broken: Option<usize>,
    pidx: PathBuf,
    keep: Option<PathBuf>,
}

fn args() -> Result<Args> {
    let mut a = Args {
        from: Vec::new(),
        seeds: 5,
        first: 1,
        broken: None,
        pidx: std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .map(|d| d.join("pidx"))
            .unwrap_or_default(),
        keep: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--from" => a.from.push(value()?.into()),
            "--seeds" => a.seeds = value()?.parse()?,
            "--first" => a.first = value()?.parse()?,
            "--broken" => a.broken = Some(value()?.parse()?),
            "--pidx" => a.pidx = value()?.into(),
            "--keep" => a.keep = Some(value()?.into()),
            _ => bail!("unknown argument {flag}; see the top of examples/mutate_corpus.rs"),
        }
    }
    if a.from.is_empty() {
        a.from.push(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance/sessions"),
        );
    }
    if !a.pidx.is_file() {
        bail!(
            "no pidx binary at {}: run `cargo build` first or give --pidx",
            a.pidx.display()
        );
    }
    Ok(a)
}

/// Every `.jsonl` file under the roots, as (project folder, file name, bytes).
fn sessions(roots: &[PathBuf]) -> Result<Vec<(String, String, Vec<u8>)>> {
    let mut out = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .with_context(|| format!("reading {}", root.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() && !p.is_symlink())
            .collect();
        dirs.sort();
        for dir in dirs {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_file() && !p.is_symlink() && p.extension().is_some_and(|x| x == "jsonl")
                })
                .collect();
            files.sort();
            let project = format!("{}{i}", dir.file_name().unwrap().to_string_lossy());
            for f in files {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                out.push((project.clone(), name, std::fs::read(&f)?));
            }
        }
    }
    Ok(out)
}

/// A value a mutation puts where another was.
fn replacement(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 | 1 => Value::Null,
        2 => Value::from(rng.below(1000) as i64 - 500),
        3 => serde_json::json!([1, "two", null]),
        4 => Value::from("swapped"),
        5 => serde_json::json!({"x": 1}),
        _ => Value::Bool(false),
    }
}

/// Replaces one value somewhere in `v` (each object or array on the way is a possible stop).
fn swap_value(v: &mut Value, rng: &mut Rng) {
    let children = match v {
        Value::Object(m) => m.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    };
    if children == 0 {
        *v = replacement(rng);
        return;
    }
    let k = rng.below(children);
    let stop = rng.below(3) == 0;
    let child = match v {
        Value::Object(m) => m.values_mut().nth(k).unwrap(),
        Value::Array(a) => &mut a[k],
        _ => unreachable!(),
    };
    if stop {
        *child = replacement(rng);
    } else {
        swap_value(child, rng);
    }
}

/// One line broken one way; returns what was done.
fn break_line(line: &mut Vec<u8>, rng: &mut Rng) -> &'static str {
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    match (rng.below(11), parsed) {
        (0 | 1, Some(mut v)) => {
            swap_value(&mut v, rng);
            *line = v.to_string().into_bytes();
            "value swapped"
        }
        (8 | 9, Some(Value::Object(mut m))) if !m.is_empty() => {
            // A field of the entry itself: its `message`, `type`, `id`, `timestamp` ...
            let key = m
                .keys()
                .nth(rng.below(m.len()))
                .cloned()
                .unwrap_or_default();
            m.insert(key, replacement(rng));
            *line = Value::Object(m).to_string().into_bytes();
            "entry field swapped"
        }
        (10, Some(Value::Object(mut m))) => {
            // A clock that jumped: the entry alone in its hour.
            let ts = format!(
                "20{:02}-{:02}-{:02}T{:02}:{:02}:00.000Z",
                20 + rng.below(10),
                1 + rng.below(12),
                1 + rng.below(28),
                rng.below(24),
                rng.below(60)
            );
            m.insert("timestamp".into(), Value::from(ts));
            *line = Value::Object(m).to_string().into_bytes();
            "timestamp moved"
        }
        (3, Some(mut v)) => {
            let depth = [200, 5_000, 100_000][rng.below(3)];
            if let Value::Object(m) = &mut v {
                let key = m.keys().nth(rng.below(m.len())).cloned();
                if let Some(key) = key {
                    m.insert(key, Value::Null);
                }
            }
            // serde_json's writer recurses: write the deep part by hand.
            let text = v.to_string();
            let nested = "[".repeat(depth) + &"]".repeat(depth);
            *line = text.replacen("null", &nested, 1).into_bytes();
            "deep nesting"
        }
        (4, _) => {
            let cut = rng.below(line.len().max(1));
            line.truncate(cut);
            "cut"
        }
        (5, _) => {
            let at = rng.below(line.len() + 1);
            let bad: &[u8] = [&b"\xff\xfe"[..], b"\xc3", b"\xed\xa0\x80", b"\x80"][rng.below(4)];
            line.splice(at..at, bad.iter().copied());
            "invalid UTF-8"
        }
        (6, _) => {
            let at = rng.below(line.len() + 1);
            line.insert(at, [b'\r', 0][rng.below(2)]);
            "CR or NUL"
        }
        _ => {
            let at = rng.below(line.len() + 1);
            line.splice(at..at, b"\"null\":null,".iter().copied());
            "garbage inserted"
        }
    }
}

/// Breaks a file: one to three lines broken, sometimes a line lost, doubled or the last
/// newline dropped.
fn break_file(bytes: &[u8], rng: &mut Rng) -> (Vec<u8>, Vec<String>) {
    let mut lines: Vec<Vec<u8>> = bytes
        .strip_suffix(b"\n")
        .unwrap_or(bytes)
        .split(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let mut done = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(lines.len());
        match rng.below(10) {
            0 if lines.len() > 1 => {
                lines.remove(i);
                done.push(format!("line {} lost", i + 1));
            }
            1 => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
                done.push(format!("line {} doubled", i + 1));
            }
            2 if lines.len() > 1 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
                done.push(format!("lines {} and {} swapped", i + 1, j + 1));
            }
            _ => {
                let mut what = vec![break_line(&mut lines[i], rng)];
                // Two faults in one line meet conditions one alone does not.
                if rng.below(3) == 0 {
                    what.push(break_line(&mut lines[i], rng));
                }
                done.push(format!("line {}: {}", i + 1, what.join(", ")));
            }
        }
    }
    let mut out = lines.join(&b'\n');
    if rng.below(5) != 0 {
        out.push(b'\n');
    } else {
        done.push("no last newline".into());
    }
    (out, done)
}

/// Each indexed file's rows (sessions, entries, bad lines), by path, without row ids and facts
/// about other files.
fn dump(db: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for table in ["sessions", "entries", "bad_lines"] {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?
            .into_iter()
            // `dup` marks an entry that another file holds too (a copied session): it depends
            // on the other files by design.
            .filter(|c| {
                !matches!(
                    c.as_str(),
                    "rid" | "file_id" | "root_id" | "synced_at" | "dup"
                )
            })
            .filter(|c| !(table != "entries" && c == "id"))
            .collect();
        let select: Vec<String> = columns
            .iter()
            .map(|c| format!("quote(t.\"{c}\")"))
            .collect();
        let sql = format!(
            "SELECT f.path, {} FROM {table} t JOIN files f ON f.id = t.file_id",
            select.join(" || ' ' || ")
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (path, row) = row?;
            out.entry(path).or_default().push(format!("{table}: {row}"));
        }
    }
    for rows in out.values_mut() {
        rows.sort();
    }
    Ok(out)
}

/// `pidx sync` of `root` into `db`: its failure (exit code or panic) as a line, if any.
fn sync(pidx: &Path, db: &Path, root: &Path) -> Result<Option<String>> {
    let home = db.with_file_name("no-home");
    let out = Command::new(pidx)
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("PIDX_CONFIG")
        .env_remove("PIDX_ROOTS")
        .env_remove("PIDX_PG")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("sync")
        .output()
        .with_context(|| format!("running {}", pidx.display()))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("panicked") {
        return Ok(Some(format!("panicked: {}", err.trim())));
    }
    if !out.status.success() {
        return Ok(Some(format!("{}: {}", out.status, err.trim())));
    }
    Ok(None)
}

/// One seed: returns whether it passed.
fn run_seed(a: &Args, files: &[(String, String, Vec<u8>)], seed: u64) -> Result<bool> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("sessions");
    let broken_n = a.broken.unwrap_or(files.len().div_ceil(5)).min(files.len());
    let mut order: Vec<usize> = (0..files.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let broken: Vec<usize> = order[..broken_n].to_vec();
    // The untouched files first, alone: the index they must be found in unchanged.
    for (i, (project, name, bytes)) in files.iter().enumerate() {
        if !broken.contains(&i) {
            std::fs::create_dir_all(root.join(project))?;
            std::fs::write(root.join(project).join(name), bytes)?;
        }
    }
    let clean_db = tmp.path().join("clean.db");
    if let Some(why) = sync(&a.pidx, &clean_db, &root)? {
        bail!("seed {seed}: the untouched files alone do not sync: {why}");
    }
    let mut notes = Vec::new();
    for &i in &broken {
        let (project, name, bytes) = &files[i];
        let (bytes, done) = break_file(bytes, &mut rng);
        std::fs::create_dir_all(root.join(project))?;
        std::fs::write(root.join(project).join(name), &bytes)?;
        if let Some(keep) = &a.keep {
            let dir = keep.join(format!("seed-{seed}")).join(project);
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join(name), &bytes)?;
        }
        notes.push(format!("  {project}/{name}: {}", done.join("; ")));
    }
    let db = tmp.path().join("index.db");
    let failure = sync(&a.pidx, &db, &root)?;
    let again = if failure.is_none() {
        sync(&a.pidx, &db, &root)?
    } else {
        None
    };
    let clean = dump(&clean_db)?;
    let mixed = dump(&db).unwrap_or_default();
    let lost: Vec<&String> = clean
        .iter()
        .filter(|(path, rows)| mixed.get(*path) != Some(rows))
        .map(|(path, _)| path)
        .collect();
    let ok = failure.is_none() && again.is_none() && lost.is_empty();
    println!(
        "seed {seed}: {} files, {} broken: sync {}, untouched sessions lost or changed: {} of {}",
        files.len(),
        broken.len(),
        failure
            .as_deref()
            .or(again.as_deref())
            .map_or("ok".to_string(), |w| w
                .lines()
                .next()
                .unwrap_or("")
                .to_string()),
        lost.len(),
        clean.len()
    );
    if !ok {
        println!("broken files:\n{}", notes.join("\n"));
        for path in lost.iter().take(5) {
            let want = &clean[*path];
            let got = mixed.get(*path).cloned().unwrap_or_default();
            let cut = |s: &str| s.chars().take(400).collect::<String>();
            let first = want.iter().find(|r| !got.contains(r));
            let extra = got.iter().find(|r| !want.contains(r));
            println!("  lost or changed: {path}");
            println!(
                "    index of it alone has: {}",
                first.map_or("-".into(), |r| cut(r))
            );
            println!(
                "    index with broken files has: {}",
                extra.map_or("-".into(), |r| cut(r))
            );
        }
    }
    Ok(ok)
}

fn main() -> Result<()> {
    let a = args()?;
    let files = sessions(&a.from)?;
    if files.is_empty() {
        bail!("no session files under {:?}", a.from);
    }
    let mut failed = Vec::new();
    for seed in a.first..a.first + a.seeds {
        if !run_seed(&a, &files, seed)? {
            failed.push(seed);
        }
    }
    if !failed.is_empty() {
        eprintln!("mutate_corpus: seeds {failed:?} lost untouched sessions or failed to sync");
        std::process::exit(1);
    }
    println!(
        "mutate_corpus: {} seeds, nothing untouched lost, no panic",
        a.seeds
    );
    Ok(())
}
