//! How the local index's tokenizer takes each character past ASCII, so the server's words
//! ([`super::words`]) are the local index's words. The local tokenizer is FTS5's
//! `unicode61 remove_diacritics 2` in the SQLite pidx bundles, with its own Unicode tables:
//! they class differently from Rust's `char::is_alphanumeric` about 958,000 of the 1,114,000
//! characters (a character its tables do not know, such as the emoji `🛝` of Unicode 14 or any
//! unassigned one, is part of a word there, as private use characters are; some marks are
//! not), and fold some differently (`µ` is `μ` there). Rather than copy those tables, the
//! tokenizer itself is asked, 4,096 characters at a time the first time one of them is met
//! (about 5 ms a block): each character `c` in `a{c}b` is one word or two.

use std::sync::OnceLock;

/// A character that separates words.
const SEPARATOR: u32 = u32::MAX;
/// A character inside a word that folding takes away (a combining accent).
const REMOVED: u32 = u32::MAX - 1;

const BLOCK_BITS: u32 = 12;
const BLOCK: usize = 1 << BLOCK_BITS;
const BLOCKS: usize = (0x11_0000 >> BLOCK_BITS) as usize;

/// How `c` stands in the local index's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Between words.
    Separator,
    /// Inside a word, folded away.
    Removed,
    /// Inside a word, as this character (lower-cased, Latin accents taken off).
    Folded(char),
}

/// The class of `c` (ASCII included: letters and digits are words, lower-cased; the rest
/// separates).
pub fn class(c: char) -> Class {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            Class::Folded(c.to_ascii_lowercase())
        } else {
            Class::Separator
        };
    }
    static TABLE: [OnceLock<Box<[u32]>>; BLOCKS] = [const { OnceLock::new() }; BLOCKS];
    let n = c as u32;
    let block = TABLE[(n >> BLOCK_BITS) as usize].get_or_init(|| asked(n >> BLOCK_BITS));
    match block[n as usize & (BLOCK - 1)] {
        SEPARATOR => Class::Separator,
        REMOVED => Class::Removed,
        f => char::from_u32(f).map_or(Class::Separator, Class::Folded),
    }
}

/// Each character of block `b` as FTS5 takes it; when SQLite cannot be asked (it always can:
/// an in-memory database of the bundled library), Rust's classes instead.
fn asked(b: u32) -> Box<[u32]> {
    let start = b << BLOCK_BITS;
    let chars: Vec<Option<char>> = (start..start + BLOCK as u32).map(char::from_u32).collect();
    match from_fts5(&chars) {
        Ok(t) => t,
        Err(_) => chars
            .iter()
            .map(|c| c.map_or(SEPARATOR, rust_class))
            .collect(),
    }
}

fn rust_class(c: char) -> u32 {
    if c.is_alphanumeric() {
        c.to_lowercase().next().map_or(SEPARATOR, u32::from)
    } else {
        SEPARATOR
    }
}

/// The tokens FTS5 makes of `a{c}b ` for every character of `chars` (a surrogate, which no
/// `char` is, separates): `a{c}b` (folded) when `c` is part of a word, `ab` when it is folded
/// away, `a` and `b` when it separates.
fn from_fts5(chars: &[Option<char>]) -> rusqlite::Result<Box<[u32]>> {
    let doc: String = chars.iter().flatten().map(|c| format!("a{c}b ")).collect();
    let mut terms = LocalTokens::new()?.of(&doc)?.into_iter().peekable();
    let mut out = Vec::with_capacity(chars.len());
    for c in chars {
        if c.is_none() {
            out.push(SEPARATOR);
            continue;
        }
        let Some(t) = terms.next() else {
            return Err(rusqlite::Error::InvalidQuery);
        };
        let mid = t.strip_prefix('a').and_then(|m| m.strip_suffix('b'));
        out.push(match mid {
            Some("") => REMOVED,
            Some(m) if m.chars().count() == 1 => m.chars().next().map_or(SEPARATOR, u32::from),
            None if t == "a" && terms.next_if(|n| n == "b").is_some() => SEPARATOR,
            _ => return Err(rusqlite::Error::InvalidQuery),
        });
    }
    Ok(out.into_boxed_slice())
}

/// The local index's tokenizer (its `fts` table, migrations/0003_search.sql) in a table of
/// its own in memory: the terms it makes of a text.
pub(super) struct LocalTokens(rusqlite::Connection);

impl LocalTokens {
    pub(super) fn new() -> rusqlite::Result<LocalTokens> {
        let db = rusqlite::Connection::open_in_memory()?;
        db.execute_batch(
            "CREATE VIRTUAL TABLE f USING fts5(b, tokenize = 'unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE v USING fts5vocab(f, instance);",
        )?;
        Ok(LocalTokens(db))
    }

    /// The terms of `text`, in order.
    pub(super) fn of(&self, text: &str) -> rusqlite::Result<Vec<String>> {
        self.0.execute("DELETE FROM f", [])?;
        self.0
            .execute("INSERT INTO f(rowid, b) VALUES (1, ?1)", [text])?;
        let mut st = self.0.prepare("SELECT term FROM v ORDER BY offset")?;
        let terms = st.query_map([], |r| r.get(0))?;
        terms.collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_as_the_local_index() {
        assert_eq!(class('A'), Class::Folded('a'));
        assert_eq!(class('-'), Class::Separator);
        assert_eq!(class('É'), Class::Folded('e'));
        assert_eq!(class('\u{301}'), Class::Removed);
        assert_eq!(class('µ'), Class::Folded('μ'));
        assert_eq!(class('日'), Class::Folded('日'));
        // Its tables are older than some characters: those it does not know are letters.
        assert_eq!(class('🎉'), Class::Separator);
        assert_eq!(class('🛝'), Class::Folded('🛝'));
        assert_eq!(class('\u{e1e6}'), Class::Folded('\u{e1e6}'));
        assert_eq!(class('—'), Class::Separator);
        assert_eq!(class('\u{a0}'), Class::Separator);
    }
}
