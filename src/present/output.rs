//! Writing to the terminal: stdout is data, stderr diagnostics. Transcript text shown to humans
//! is neutralised (control characters and escape sequences cannot reach the terminal, as pi's
//! picker does); `--json` output is exact. A closed pipe ends output quietly.

use std::io::{self, IsTerminal, Write};

pub use super::numbers::thousands;
pub use crate::pi::picker::age;
pub use crate::term::{block, one_line, one_line_upto, plural};

/// Where command output goes, remembering whether colour is allowed.
pub struct Out {
    stdout: io::StdoutLock<'static>,
    pub color: bool,
    /// How wide tables may be: `$COLUMNS`, else the terminal's width; `None` when stdout is
    /// not a terminal (then nothing is cut).
    pub width: Option<usize>,
    /// Redact secrets from everything written (`--redact`).
    pub redact: bool,
    /// With `redact`: everything written, redacted when flushed.
    held: Vec<u8>,
}

impl Default for Out {
    fn default() -> Out {
        Out::new()
    }
}

impl Out {
    pub fn new() -> Out {
        let color =
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&w| w >= 20)
            .or_else(|| {
                terminal_size::terminal_size_of(io::stdout()).map(|(w, _)| usize::from(w.0))
            });
        Out {
            stdout: io::stdout().lock(),
            color,
            width,
            redact: false,
            held: Vec::new(),
        }
    }

    /// Writes one line.
    ///
    /// # Errors
    /// `BrokenPipe` when the reader went away; the caller ends quietly.
    pub fn line(&mut self, s: &str) -> io::Result<()> {
        if self.redact {
            self.held.extend_from_slice(s.as_bytes());
            self.held.push(b'\n');
            return Ok(());
        }
        self.stdout.write_all(s.as_bytes())?;
        self.stdout.write_all(b"\n")
    }

    /// Writes many lines at once (a table): through one buffer, not a write each.
    ///
    /// # Errors
    /// As [`Out::line`].
    pub fn lines<S: AsRef<str>>(&mut self, lines: impl IntoIterator<Item = S>) -> io::Result<()> {
        if self.redact {
            for l in lines {
                self.line(l.as_ref())?;
            }
            return Ok(());
        }
        let mut w = io::BufWriter::with_capacity(1 << 16, &mut self.stdout);
        for l in lines {
            w.write_all(l.as_ref().as_bytes())?;
            w.write_all(b"\n")?;
        }
        w.flush()
    }

    /// Writes `value` as one line of JSON, serialised straight into the output.
    ///
    /// # Errors
    /// As [`Out::line`].
    pub fn json<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        if self.redact {
            let mut v = serde_json::to_value(value).map_err(io::Error::from)?;
            self.flush_held()?;
            let mut w = io::BufWriter::with_capacity(1 << 16, &mut self.stdout);
            crate::redact::redact_value(&mut v);
            serde_json::to_writer(&mut w, &v).map_err(io::Error::from)?;
            w.write_all(b"\n")?;
            return w.flush();
        }
        let mut w = io::BufWriter::with_capacity(1 << 16, &mut self.stdout);
        serde_json::to_writer(&mut w, value).map_err(io::Error::from)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// The output itself, for writing exact bytes (JSON streamed piece by piece).
    pub fn raw(&mut self) -> &mut dyn Write {
        if self.redact {
            return &mut self.held;
        }
        &mut self.stdout
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_held()?;
        self.stdout.flush()
    }

    /// Writes what `--redact` held back: each JSON line with its strings redacted, each run of
    /// other lines redacted as one text (a private key's lines are one key).
    fn flush_held(&mut self) -> io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        let text = String::from_utf8_lossy(&held);
        let mut plain = String::new();
        for line in text.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            let json = body.starts_with(['{', '['])
                && crate::redact::may_hold(body)
                && serde_json::from_str::<serde_json::Value>(body).is_ok();
            if !json {
                plain.push_str(line);
                continue;
            }
            self.stdout
                .write_all(crate::redact::redact(&std::mem::take(&mut plain)).as_bytes())?;
            let mut v: serde_json::Value = serde_json::from_str(body).map_err(io::Error::from)?;
            crate::redact::redact_value(&mut v);
            serde_json::to_writer(&mut self.stdout, &v).map_err(io::Error::from)?;
            if line.ends_with('\n') {
                self.stdout.write_all(b"\n")?;
            }
        }
        self.stdout
            .write_all(crate::redact::redact(&plain).as_bytes())
    }

    /// `s` wrapped in an SGR colour when colour is on.
    pub fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// Cuts `s` to at most `max` characters, marking the cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}
