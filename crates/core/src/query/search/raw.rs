//! A literal that no word of the index narrows (`=>>>`, `?;`, `::<`) is found by testing the
//! session files' raw bytes, a run of entry rows (`rid_runs`) at a time, before any of its texts
//! is listed, joined, read back and parsed: one sequential read of the run's lines and a
//! `memmem`, where the plain scan read and parsed every text of the index (201,262 texts in
//! 2.1 s on a 2,544-session corpus against 0.12 s for `rg -lF`). A run whose bytes cannot hold
//! the needle is skipped; the others are read as before, each line tested again, so the hits
//! and their order are the plain scan's.
//!
//! When is a test on the raw bytes exact-safe? A text (`pi::text`) is decoded JSON strings
//! joined by newlines, or for a tool call's non-string arguments `serde_json`'s compact
//! re-serialisation of them, which differs from the line in whitespace, numbers and structure.
//! For a needle with no `"`, no `\`, no control character (so no joining newline) and no U+FFFD
//! (what a broken line's bytes decode to), every occurrence in a text lies inside one decoded
//! string: in re-serialised arguments the only text outside strings is made of
//! [`OUTSIDE_STRINGS`] (`{}[],:`, numbers, `true`, `false`, `null`), so a needle with a character
//! outside that set cannot lie there, and inside a string `serde_json` escapes only `"`, `\` and
//! control characters. The line spells each character of that string raw, or as `\uXXXX`, or
//! `/` as `\/`. So the bytes hold the needle itself, or a `\u` escape of one of its characters,
//! or (when it has a `/`) a `\/`; the test accepts any of the three.

use std::cell::Cell;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::rc::Rc;

use memchr::memmem::Finder;
use rusqlite::{CachedStatement, Connection};

use crate::error::{Error, Result};

/// Characters re-serialised tool arguments hold outside their strings.
const OUTSIDE_STRINGS: &str = "{}[],:0123456789-+.eEtruefalsn";

/// Bytes read at a time from a run's span: sequential reads of the page cache, a bounded buffer
/// (a session's one huge text is never held whole).
const CHUNK: usize = 1 << 20;

/// The raw-bytes test of one needle.
#[derive(Clone)]
pub(super) struct RawNeedle {
    needle: Finder<'static>,
    escape: Finder<'static>,
    /// `\/`, when the needle has a `/`.
    slash: Option<Finder<'static>>,
    /// The needle's characters, which a `\uXXXX` may spell.
    chars: Vec<char>,
    /// A character beyond the BMP: a surrogate pair spells it; every `\u` may.
    astral: bool,
    /// The longest byte string the test looks for: chunks overlap by one less.
    longest: usize,
}

impl RawNeedle {
    /// The test for `needle`; `None` when it is not exact-safe for it (see the module doc).
    pub(super) fn of(needle: &str) -> Option<RawNeedle> {
        let safe = !needle.is_empty()
            && needle.chars().any(|c| !OUTSIDE_STRINGS.contains(c))
            && !needle
                .chars()
                .any(|c| c == '"' || c == '\\' || c.is_control() || c == '\u{FFFD}');
        if !safe {
            return None;
        }
        let mut chars: Vec<char> = needle.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        Some(RawNeedle {
            needle: Finder::new(needle.as_bytes()).into_owned(),
            escape: Finder::new(b"\\u").into_owned(),
            slash: needle
                .contains('/')
                .then(|| Finder::new(b"\\/").into_owned()),
            astral: chars.iter().any(|&c| c as u32 > 0xFFFF),
            chars,
            longest: needle.len().max(6),
        })
    }

    /// Whether `bytes` (whole lines, or any stretch of them) may spell the needle in a text.
    /// `false` only when no text of theirs can hold it.
    pub(super) fn may_hold(&self, bytes: &[u8]) -> bool {
        if self.needle.find(bytes).is_some() {
            return true;
        }
        if self.slash.as_ref().is_some_and(|f| f.find(bytes).is_some()) {
            return true;
        }
        self.escape
            .find_iter(bytes)
            .any(|at| self.spells(&bytes[at + 2..]))
    }

    /// Whether the four hex digits at the start of `hex` (after a `\u`) may be one of the
    /// needle's characters (a cut or broken escape may: it is not decided here).
    fn spells(&self, hex: &[u8]) -> bool {
        let Some(code) = hex
            .get(..4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
        else {
            return true;
        };
        if (0xD800..0xE000).contains(&code) {
            return self.astral;
        }
        char::from_u32(code).is_none_or(|c| self.chars.binary_search(&c).is_ok())
    }
}

/// Tests runs of entry rows against a [`RawNeedle`], reading their lines from the session
/// files; counts what it read and skipped for `search --explain`.
pub(super) struct RawRuns<'c> {
    test: RawNeedle,
    span: CachedStatement<'c>,
    path: CachedStatement<'c>,
    files: HashMap<i64, Option<(String, File)>>,
    buf: Vec<u8>,
    /// Shared with the search, which reports them after the candidates are used up.
    stats: Rc<Cell<RawStats>>,
}

/// What a raw scan did.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RawStats {
    /// Runs whose bytes were tested.
    pub runs: usize,
    /// Of them, those whose bytes cannot hold the needle: none of their texts was read.
    pub skipped: usize,
    /// Bytes read to test them.
    pub bytes: u64,
}

impl<'c> RawRuns<'c> {
    /// # Errors
    /// Index errors.
    pub(super) fn new(
        conn: &'c Connection,
        test: RawNeedle,
        stats: Rc<Cell<RawStats>>,
    ) -> Result<RawRuns<'c>> {
        Ok(RawRuns {
            test,
            // Per file: a run is one file's rows, but nothing here depends on it.
            span: conn.prepare_cached(
                "SELECT file_id, min(offset), max(offset + len) FROM entries
                 WHERE rid BETWEEN ?1 AND ?2 GROUP BY file_id",
            )?,
            path: conn.prepare_cached("SELECT path FROM files WHERE id = ?1")?,
            files: HashMap::new(),
            buf: Vec::new(),
            stats,
        })
    }

    /// Whether any text of the rids `lo..=hi` may hold the needle: `false` only when the bytes
    /// of every one of their lines cannot.
    ///
    /// # Errors
    /// Index errors; `Io` when a session file cannot be read.
    pub(super) fn may_hold(&mut self, lo: i64, hi: i64) -> Result<bool> {
        self.count(|s| s.runs += 1);
        let spans = self
            .span
            .query_map([lo, hi], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<Vec<(i64, i64, i64)>>>()?;
        for (file_id, start, end) in spans {
            if self.span_may_hold(file_id, start, end)? {
                return Ok(true);
            }
        }
        self.count(|s| s.skipped += 1);
        Ok(false)
    }

    fn count(&self, f: impl FnOnce(&mut RawStats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    fn span_may_hold(&mut self, file_id: i64, start: i64, end: i64) -> Result<bool> {
        if !self.files.contains_key(&file_id) {
            let path: String = self.path.query_row([file_id], |r| r.get(0))?;
            let file = match File::open(&path) {
                Ok(f) => Some((path, f)),
                // Gone since it was indexed: the plain scan skips its texts too.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io(&path, e)),
            };
            self.files.insert(file_id, file);
        }
        let Some((path, file)) = &self.files[&file_id] else {
            return Ok(false);
        };
        let (start, end) = (start.max(0) as u64, end.max(0) as u64);
        let overlap = self.test.longest - 1;
        let mut at = start;
        // The last bytes of the chunk before, so a match across two chunks is seen.
        let mut kept = 0;
        while at < end {
            let want = (CHUNK as u64).min(end - at) as usize;
            self.buf.resize(kept + want, 0);
            let got = read_full(file, &mut self.buf[kept..], at).map_err(|e| Error::io(path, e))?;
            self.count(|s| s.bytes += got as u64);
            let have = kept + got;
            if self.test.may_hold(&self.buf[..have]) {
                return Ok(true);
            }
            if got < want {
                // The file is shorter than the index says (changed under it): its lines are
                // re-read one by one as the plain scan reads them.
                return Ok(true);
            }
            kept = overlap.min(have);
            self.buf.copy_within(have - kept..have, 0);
            at += got as u64;
        }
        Ok(false)
    }
}

/// Reads `buf.len()` bytes at `offset`, fewer only at the end of the file.
fn read_full(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        let n = file.read_at(&mut buf[got..], offset + got as u64)?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::RawNeedle;

    #[test]
    fn only_needles_that_must_be_spelt_inside_one_string_get_a_test() {
        for needle in ["=>>>", "->", "::<", "?;", "a/b", "x", "é!"] {
            assert!(RawNeedle::of(needle).is_some(), "{needle:?}");
        }
        // Re-serialised arguments can hold these outside strings, or the text can join two
        // strings, or a broken line decodes to U+FFFD.
        for needle in [
            "", ":", "{}", "-1", "\":", "a\\b", "a\nb", "\u{FFFD}", "true", "e",
        ] {
            assert!(RawNeedle::of(needle).is_none(), "{needle:?}");
        }
    }

    #[test]
    fn the_test_accepts_the_needle_raw_or_escaped_and_nothing_else() {
        let t = RawNeedle::of("=>>/").unwrap();
        assert!(t.may_hold(br#"{"a":"x =>>/ y"}"#));
        assert!(t.may_hold(br#"{"a":"x =\u003e>/ y"}"#));
        assert!(t.may_hold(br#"{"a":"x =\u003E>/ y"}"#));
        assert!(t.may_hold(br#"{"a":"x =>>\/ y"}"#));
        // A cut escape at the end may be anything.
        assert!(t.may_hold(br#"{"a":"x \u00"#));
        assert!(!t.may_hold(br#"{"a":"x => >/ y \u001b[0m"}"#));
        assert!(!t.may_hold(br#"{"a":"x =>>"}"#));
        let astral = RawNeedle::of("->😀").unwrap();
        assert!(astral.may_hold(br#"{"a":"\ud83d\ude00"}"#));
        assert!(!RawNeedle::of("->")
            .unwrap()
            .may_hold(br#"{"a":"\ud83d\ude00"}"#));
    }
}
