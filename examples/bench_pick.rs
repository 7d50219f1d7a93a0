//! `pidx pick` benchmark through a real pseudo-terminal: first paint from process start, and
//! keystroke-to-redraw latency in list and full-text mode, timed by watching the screen (vt100)
//! change, plus the picker's peak RSS. A benchmark, not a test: it prints a markdown table.
//!
//! ```text
//! cargo run --release --example bench_pick -- --root SESSIONS --db INDEX [--cwd PROJECT] [--runs N]
//! ```

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

#[derive(Parser)]
#[command(about = "Time `pidx pick` through a pseudo-terminal")]
struct Args {
    /// The sessions root the index was built from.
    #[arg(long)]
    root: PathBuf,
    /// The index (built beforehand with `pidx sync`).
    #[arg(long)]
    db: PathBuf,
    /// The project to start in (default: the one with the most sessions).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// First-paint runs (median and p95 are reported).
    #[arg(long, default_value_t = 15)]
    runs: usize,
    /// The pidx binary (default: target/release/pidx next to this example).
    #[arg(long)]
    pidx: Option<PathBuf>,
    /// Words typed in list mode, then in full-text mode, one key at a time.
    #[arg(
        long,
        default_value = "flaky test borrow checker|migration timeout|websocket"
    )]
    typed: String,
}

const ROWS: u16 = 40;
const COLS: u16 = 160;

/// The picker in a pty, its screen kept by a reader thread.
struct Pick {
    _master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Pick {
    fn start(args: &Args, pidx: &PathBuf, cwd: &PathBuf, extra: &[&str]) -> Result<Pick> {
        let size = PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size)?;
        let mut cmd = CommandBuilder::new(pidx);
        cmd.arg("--root");
        cmd.arg(&args.root);
        cmd.arg("--db");
        cmd.arg(&args.db);
        cmd.arg("pick");
        cmd.args(extra);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd)?;
        drop(pair.slave);
        let rows = std::num::NonZeroU16::new(ROWS).context("rows")?;
        let cols = std::num::NonZeroU16::new(COLS).context("cols")?;
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let mut reader = pair.master.try_clone_reader()?;
        let p = Arc::clone(&parser);
        std::thread::spawn(move || {
            let mut buf = [0u8; 1 << 16];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer()?;
        Ok(Pick {
            _master: pair.master,
            writer,
            child,
            parser,
        })
    }

    fn row(&self, i: u16) -> String {
        let p = self.parser.lock().unwrap();
        let row = p.screen().rows(0, COLS).nth(i as usize).unwrap_or_default();
        row
    }

    /// Waits (polling every 0.2 ms) until `ok` holds for the first `rows` rows; the time it
    /// took from `since`.
    fn until(&self, since: Instant, ok: impl Fn(&[String]) -> bool) -> Result<Duration> {
        loop {
            let rows: Vec<String> = (0..3).map(|i| self.row(i)).collect();
            if ok(&rows) {
                return Ok(since.elapsed());
            }
            if since.elapsed() > Duration::from_secs(60) {
                bail!("the picker did not draw in 60 s; top rows: {rows:?}");
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer.write_all(bytes)?;
        Ok(self.writer.flush()?)
    }

    fn peak_rss_mb(&self) -> Option<f64> {
        let pid = self.child.process_id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kb: f64 = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        Some(kb / 1024.0)
    }

    fn quit(mut self) -> Result<()> {
        self.send(b"\x1b")?;
        self.child.wait()?;
        Ok(())
    }
}

/// A painted list: the title counts rows and the table header is drawn.
fn painted(rows: &[String]) -> bool {
    rows[0].contains(" rows ·") && !rows[0].contains("· 0 rows") && rows[2].contains("SESSION")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn summary(mut v: Vec<Duration>) -> String {
    v.sort();
    format!(
        "p50 {}, p95 {}, max {} ({} samples)",
        ms(percentile(&v, 0.5)),
        ms(percentile(&v, 0.95)),
        ms(*v.last().unwrap_or(&Duration::ZERO)),
        v.len()
    )
}

/// Types `text` one key at a time; each key's time until the prompt row shows it.
fn type_keys(pick: &mut Pick, typed: &mut String, text: &str) -> Result<Vec<Duration>> {
    let mut out = Vec::new();
    // A trailing space does not show on the screen: it is not timed (the next key's time
    // includes it).
    for c in text.chars() {
        typed.push(c);
        let want = format!("> {typed}");
        let t0 = Instant::now();
        pick.send(c.to_string().as_bytes())?;
        if c != ' ' {
            out.push(pick.until(t0, |r| r[1].trim_end() == want)?);
        }
    }
    for _ in 0..text.chars().count() {
        let gone = typed.pop();
        let want = format!("> {typed}");
        let t0 = Instant::now();
        pick.send(b"\x7f")?;
        if gone != Some(' ') {
            out.push(pick.until(t0, |r| r[1].trim_end() == want.trim_end())?);
        }
    }
    Ok(out)
}

/// The project folder with the most sessions, as the cwd its sessions name.
fn busiest_project(root: &PathBuf) -> Result<PathBuf> {
    let mut best: Option<(usize, PathBuf)> = None;
    for dir in std::fs::read_dir(root)? {
        let dir = dir?.path();
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        if best.as_ref().is_some_and(|(n, _)| *n >= files.len()) || files.is_empty() {
            continue;
        }
        let mut head = String::new();
        std::fs::File::open(&files[0])?
            .take(4096)
            .read_to_string(&mut head)
            .ok();
        let header: serde_json::Value = serde_json::from_str(head.lines().next().unwrap_or(""))?;
        if let Some(cwd) = header["cwd"].as_str() {
            best = Some((files.len(), PathBuf::from(cwd)));
        }
    }
    best.map(|(_, p)| p).context("no project in the root")
}

fn main() -> Result<()> {
    let args = Args::parse();
    let pidx = args.pidx.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap_or_default();
        exe.parent()
            .and_then(|p| p.parent())
            .map(|p| p.join("pidx"))
            .unwrap_or_default()
    });
    let project = match &args.cwd {
        Some(c) => c.clone(),
        None => busiest_project(&args.root)?,
    };
    // The corpus' cwds are invented: the picker starts in a real folder named like one, made
    // for the run (empty folders only) and removed after it.
    let made: Vec<PathBuf> = project
        .ancestors()
        .take_while(|a| !a.exists())
        .map(PathBuf::from)
        .collect();
    std::fs::create_dir_all(&project)
        .with_context(|| format!("creating {} to start in", project.display()))?;
    let result = run(&args, &pidx, &project);
    for dir in &made {
        let _ = std::fs::remove_dir(dir);
    }
    result
}

fn run(args: &Args, pidx: &PathBuf, project: &PathBuf) -> Result<()> {
    let mut paint_this = Vec::new();
    let mut paint_all = Vec::new();
    for _ in 0..args.runs {
        for (scope, out) in [(&[][..], &mut paint_this), (&["--all"][..], &mut paint_all)] {
            let t0 = Instant::now();
            let pick = Pick::start(args, pidx, project, scope)?;
            out.push(pick.until(t0, painted)?);
            pick.quit()?;
        }
    }
    let mut pick = Pick::start(args, pidx, project, &["--all"])?;
    pick.until(Instant::now(), painted)?;
    // The first key waits for the messages' text, loaded after the first paint.
    let t0 = Instant::now();
    pick.send(b"x")?;
    let first_key = pick.until(t0, |r| r[1].trim_end() == "> x")?;
    pick.send(b"\x7f")?;
    pick.until(Instant::now(), |r| r[1].trim_end() == ">")?;
    let mut typed = String::new();
    let mut list = Vec::new();
    let mut text = Vec::new();
    for words in args.typed.split('|') {
        list.extend(type_keys(&mut pick, &mut typed, words)?);
    }
    pick.send(b"\x06")?;
    pick.until(Instant::now(), |r| r[0].contains("[full text]"))?;
    for words in args.typed.split('|') {
        text.extend(type_keys(&mut pick, &mut typed, words)?);
    }
    let rss = pick.peak_rss_mb();
    pick.quit()?;
    println!("| what | pidx pick | goal |");
    println!("|---|---|---|");
    println!(
        "| first paint, this project ({}) | {} | <= 50 ms |",
        project.display(),
        summary(paint_this)
    );
    println!(
        "| first paint, all projects | {} | <= 50 ms |",
        summary(paint_all)
    );
    println!(
        "| first key after the first paint (waits for the messages' text) | {} | - |",
        ms(first_key)
    );
    println!(
        "| keystroke to redraw, list mode, all projects | {} | p95 <= 16 ms |",
        summary(list)
    );
    println!(
        "| keystroke to redraw, full-text mode, all projects | {} | p95 <= 50 ms |",
        summary(text)
    );
    if let Some(mb) = rss {
        println!("| peak RSS of the picker | {mb:.0} MB | <= 100 MB |");
    }
    Ok(())
}
