//! Writing to the terminal: stdout is data, stderr diagnostics. Transcript text shown to humans
//! is neutralised (control characters and escape sequences cannot reach the terminal, as pi's
//! picker does); `--json` output is exact. A closed pipe ends output quietly.

use std::io::{self, IsTerminal, Write};

/// Where command output goes, remembering whether colour is allowed.
pub struct Out {
    stdout: io::StdoutLock<'static>,
    pub color: bool,
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
        Out {
            stdout: io::stdout().lock(),
            color,
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

/// Transcript text for one line of a table: every control character, line break and
/// bidirectional override becomes a space, and runs of spaces collapse.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last_space = false;
    for c in s.chars() {
        let c = if is_unsafe(c) || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out.trim().to_string()
}

/// Transcript text shown as a block: newlines and tabs stay, every other control character
/// (ESC included, so no escape sequence survives) becomes a visible `�`.
pub fn block(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\n' || c == '\t' {
                c
            } else if is_unsafe(c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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

/// pi's picker age: now, Nm, Nh, Nd, Nw, Nmo, Ny.
pub fn age(ms: i64, now_ms: i64) -> String {
    let mins = (now_ms - ms).max(0) / 60_000;
    match mins {
        0 => "now".into(),
        m if m < 60 => format!("{m}m"),
        m if m < 60 * 24 => format!("{}h", m / 60),
        m if m < 60 * 24 * 7 => format!("{}d", m / (60 * 24)),
        m if m < 60 * 24 * 30 => format!("{}w", m / (60 * 24 * 7)),
        m if m < 60 * 24 * 365 => format!("{}mo", m / (60 * 24 * 30)),
        m => format!("{}y", m / (60 * 24 * 365)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_never_reach_the_terminal() {
        assert_eq!(one_line("a\x1b[31mred\x07\nb\u{202e}c"), "a [31mred b c");
        assert_eq!(
            block("x\x1b]0;title\x07\ny"),
            "x\u{fffd}]0;title\u{fffd}\ny"
        );
    }

    #[test]
    fn ages_like_the_picker() {
        let now = 1_000_000_000_000;
        assert_eq!(age(now - 30_000, now), "now");
        assert_eq!(age(now - 5 * 60_000, now), "5m");
        assert_eq!(age(now - 3 * 3_600_000, now), "3h");
        assert_eq!(age(now - 40 * 86_400_000, now), "1mo");
    }
}
