//! Writing to the terminal: stdout is data, stderr diagnostics. Transcript text shown to humans
//! is neutralised (control characters and escape sequences cannot reach the terminal, as pi's
//! picker does); `--json` output is exact. A closed pipe ends output quietly.

use std::io::{self, IsTerminal, Write};

pub use crate::pi::picker::age;
pub use crate::term::{block, one_line, one_line_upto, plural, thousands};

/// Where command output goes, remembering whether colour is allowed.
pub struct Out {
    stdout: io::StdoutLock<'static>,
    pub color: bool,
    /// How wide tables may be: `$COLUMNS`, else the terminal's width; `None` when stdout is
    /// not a terminal (then nothing is cut).
    pub width: Option<usize>,
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
        }
    }

    /// Writes one line.
    ///
    /// # Errors
    /// `BrokenPipe` when the reader went away; the caller ends quietly.
    pub fn line(&mut self, s: &str) -> io::Result<()> {
        self.stdout.write_all(s.as_bytes())?;
        self.stdout.write_all(b"\n")
    }

    /// Writes many lines at once (a table): through one buffer, not a write each.
    ///
    /// # Errors
    /// As [`Out::line`].
    pub fn lines<S: AsRef<str>>(&mut self, lines: impl IntoIterator<Item = S>) -> io::Result<()> {
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
        let mut w = io::BufWriter::with_capacity(1 << 16, &mut self.stdout);
        serde_json::to_writer(&mut w, value).map_err(io::Error::from)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// The output itself, for writing exact bytes (JSON streamed piece by piece).
    pub fn raw(&mut self) -> &mut dyn Write {
        &mut self.stdout
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.stdout.flush()
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
