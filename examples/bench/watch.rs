//! Append -> visible latency under `pidx watch`, and the watcher's CPU while idle.
//!
//! The watcher follows the corpus plus a second root holding copies of a few of its sessions
//! (the corpus itself is never written). Each probe appends one user message carrying a unique
//! word to one of the copies and polls the index (read-only, every millisecond) until a
//! full-text match for that word is committed: the same moment `pidx search` would find it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// What one run of the probe measured.
pub struct Latency {
    /// Milliseconds from the append's `write()` returning to the match being visible.
    pub ms: Vec<f64>,
    pub files: usize,
    /// CPU seconds the watcher used while nothing changed, and over how long.
    pub idle_cpu_s: f64,
    pub idle_s: f64,
}

impl Latency {
    /// The `q`-quantile (0..=1) of the latencies, nearest rank.
    pub fn quantile(&self, q: f64) -> f64 {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    }
}

/// A running watcher, stopped (SIGTERM, then waited for) when dropped.
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let _ = self.0.wait();
    }
}

/// Whether appending a message line to `path` makes a visible entry: the file starts with a
/// session header and ends with a newline (not an empty, torn or header-less file).
fn takes_appends(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let header = serde_json::from_slice::<serde_json::Value>(first)
        .is_ok_and(|v| v["type"] == "session" && v["id"].is_string());
    header && bytes.ends_with(b"\n")
}

/// Copies the first `files` sessions of `corpus` (by path) that take appends into
/// `dest/<project>/`.
fn copy_sessions(corpus: &Path, dest: &Path, files: usize) -> Result<Vec<PathBuf>> {
    let _ = std::fs::remove_dir_all(dest);
    let mut sources: Vec<PathBuf> = walkdir::WalkDir::new(corpus)
        .min_depth(2)
        .max_depth(2)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| e.into_path())
        .collect();
    sources.sort();
    let mut copies = Vec::new();
    for src in sources.into_iter().filter(|p| takes_appends(p)).take(files) {
        let project = src.parent().and_then(|p| p.file_name()).unwrap_or_default();
        let to = dest.join(project).join(src.file_name().unwrap_or_default());
        std::fs::create_dir_all(to.parent().unwrap_or(dest))?;
        std::fs::copy(&src, &to)?;
        copies.push(to);
    }
    Ok(copies)
}

/// CPU seconds (user + system) used so far by process `pid`, from /proc.
fn cpu_seconds(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| -> Result<f64> {
        Ok(fields.get(i).context("short /proc stat")?.parse::<f64>()?)
    };
    // Fields after the command name: state is index 0, utime 11, stime 12 (proc(5)).
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}

/// Polls `sql` (one `?1` parameter) every millisecond until it returns a row.
fn wait_for_row(conn: &rusqlite::Connection, sql: &str, arg: &str, limit: Duration) -> Result<()> {
    let t0 = Instant::now();
    let mut stmt = conn.prepare(sql)?;
    loop {
        // A read during the watcher's checkpoint can see SQLITE_BUSY: just poll again.
        if let Ok(true) = stmt.exists([arg]) {
            return Ok(());
        }
        if t0.elapsed() > limit {
            bail!("`{arg}` not visible after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Starts `pidx watch` over `corpus` and copies of `files` of its sessions, appends `appends`
/// probes round-robin, then leaves it idle for `idle` and reads its CPU time.
pub fn measure(
    pidx: &str,
    corpus: &str,
    db: &Path,
    work: &Path,
    files: usize,
    appends: usize,
    idle: Duration,
) -> Result<Latency> {
    let extra = work.join("watch-root");
    let copies = copy_sessions(Path::new(corpus), &extra, files)?;
    if copies.is_empty() {
        bail!("no sessions to copy from {corpus}");
    }
    let child = Command::new(pidx)
        .args(["--root", corpus, "--root"])
        .arg(&extra)
        .arg("--db")
        .arg(db)
        .arg("watch")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting pidx watch")?;
    let watcher = Watcher(child);
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(Duration::from_millis(50))?;
    // Ready once the first reconcile has taken in the copies.
    let last = copies
        .last()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    wait_for_row(
        &conn,
        "SELECT 1 FROM files WHERE path = ?1",
        &last,
        Duration::from_secs(600),
    )?;
    std::thread::sleep(Duration::from_millis(500));
    let match_sql = "SELECT 1 FROM fts WHERE fts MATCH ?1";
    let mut ms = Vec::with_capacity(appends);
    for i in 0..appends {
        let word = format!("probe{}x{i}", std::process::id());
        let id = format!("{:08x}", 0x5000_0000u32 + i as u32);
        let line = serde_json::json!({
            "type": "message", "id": id, "parentId": null,
            "timestamp": "2026-11-22T00:00:00.000Z",
            "message": {"role": "user", "content": format!("latency {word}"), "timestamp": 1},
        });
        let path = &copies[i % copies.len()];
        let mut f = std::fs::OpenOptions::new().append(true).open(path)?;
        f.write_all(format!("{line}\n").as_bytes())?;
        drop(f);
        let t0 = Instant::now();
        wait_for_row(&conn, match_sql, &word, Duration::from_secs(30))?;
        ms.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    let pid = watcher.0.id();
    let c0 = cpu_seconds(pid)?;
    std::thread::sleep(idle);
    let c1 = cpu_seconds(pid)?;
    drop(watcher);
    Ok(Latency {
        ms,
        files: copies.len(),
        idle_cpu_s: c1 - c0,
        idle_s: idle.as_secs_f64(),
    })
}
