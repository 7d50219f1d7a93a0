//! Running and timing commands: medians of repeated runs, peak RSS through `/usr/bin/time`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Wall times of repeated runs, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    pub runs_ms: Vec<f64>,
}

impl Timing {
    pub fn median(&self) -> f64 {
        let mut v = self.runs_ms.clone();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }
}

/// Runs `argv` once with stdout discarded; fails unless it exits with one of `ok_codes`.
pub fn run_once(argv: &[String], ok_codes: &[i32]) -> Result<f64> {
    let t0 = Instant::now();
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {}", argv[0]))?;
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    let code = out.status.code().unwrap_or(-1);
    if !ok_codes.contains(&code) {
        bail!(
            "{} exited {code}: {}",
            argv.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(ms)
}

/// `warmup` unmeasured runs, then `runs` timed ones.
pub fn time(argv: &[String], warmup: usize, runs: usize, ok_codes: &[i32]) -> Result<Timing> {
    for _ in 0..warmup {
        run_once(argv, ok_codes)?;
    }
    let runs_ms = (0..runs)
        .map(|_| run_once(argv, ok_codes))
        .collect::<Result<_>>()?;
    Ok(Timing { runs_ms })
}

/// A warm-up run, then up to `max_runs` timed ones: with `budget_s` > 0, only as many as fit in
/// that many seconds by the warm-up's time (at least one).
pub fn time_within(argv: &[String], max_runs: usize, budget_s: f64, ok: &[i32]) -> Result<Timing> {
    if budget_s <= 0.0 {
        return time(argv, 1, max_runs, ok);
    }
    let warm_ms = run_once(argv, ok)?;
    let fit = (budget_s * 1000.0 / warm_ms.max(1.0)) as usize;
    time(argv, 0, fit.clamp(1, max_runs.max(1)), ok)
}

/// Runs `argv` once under `/usr/bin/time`: (wall ms, peak RSS in MB). `None` for the RSS when
/// GNU time is not installed (the Debian package `time`).
pub fn time_with_rss(argv: &[String], work: &Path) -> Result<(f64, Option<f64>)> {
    let gnu_time = Path::new("/usr/bin/time");
    if !gnu_time.exists() {
        return Ok((run_once(argv, &[0])?, None));
    }
    let report = work.join("time.out");
    let mut full = vec![
        gnu_time.display().to_string(),
        "-f".into(),
        "%M".into(),
        "-o".into(),
        report.display().to_string(),
    ];
    full.extend(argv.iter().cloned());
    let ms = run_once(&full, &[0])?;
    let text = std::fs::read_to_string(&report)?;
    let kb: f64 = text
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .parse()
        .with_context(|| format!("reading /usr/bin/time output {text:?}"))?;
    Ok((ms, Some(kb / 1024.0)))
}

/// Whether `program` runs at all (e.g. `node --version`).
pub fn available(argv: &[&str]) -> bool {
    Command::new(argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `argv` and parses its stdout as JSON (the baselines' report format).
pub fn json_of(argv: &[String]) -> Result<serde_json::Value> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", argv[0]))?;
    if !out.status.success() {
        bail!("{} failed ({})", argv.join(" "), out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).with_context(|| format!("parsing the output of {}", argv.join(" ")))
}

pub fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_string()).collect()
}
