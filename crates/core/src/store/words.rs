//! The `words` table (`migrations/0013_words.sql`): every run of ASCII letters and digits of
//! every indexed text, lowercased and stored reversed, for literal search to ask which indexed
//! words end with, or contain, a piece of a needle.
//!
//! FTS5's unicode61 tokenizer makes words of letters and digits; among ASCII characters those
//! are exactly `[0-9A-Za-z]`, and it folds them to lower case. So a run of ASCII letters and
//! digits between ASCII characters (or a text's ends) is exactly one indexed word. A run next
//! to a non-ASCII character may be part of a longer word (`éparse` is indexed as `eparse`):
//! such a run is flagged, and a lookup that meets one gives up ([`Lookup::Unsure`]), leaving
//! the caller to ask FTS5 without it.

use std::collections::HashMap;

use rusqlite::{params, Connection};

/// The run had a non-ASCII character just before it.
pub const LEFT: u8 = 1;
/// The run had a non-ASCII character just after it.
pub const RIGHT: u8 = 2;

/// Base letters of U+00C0..=U+017F that decompose into a letter and an accent ('.' = none):
/// what FTS5's `unicode61 remove_diacritics 2` folds them to.
const LATIN_FOLD: &[u8; 192] = b"aaaaaa.ceeeeiiii.nooooo..uuuuy..aaaaaa.ceeeeiiii.nooooo..uuuuy.y\
aaaaaaccccccccdd..eeeeeeeeeegggggggghh..iiiiiiiii...jjkk.llllll....nnnnnn...oooo\
oo..rrrrrrsssssssstttt..uuuuuuuuuuuuwwyyyzzzzzz.";

/// The base letter (lower case) the full-text index folds the accented Latin letter `c` to.
pub fn latin_base(c: char) -> Option<char> {
    match c as u32 {
        n @ 0xC0..=0x17F => Some(LATIN_FOLD[(n - 0xC0) as usize])
            .filter(|&b| b != b'.')
            .map(char::from),
        _ => None,
    }
}

/// Every accented Latin letter the full-text index folds to `base` (lower case).
pub fn accented(base: char) -> impl Iterator<Item = char> {
    (0xC0u32..=0x17F)
        .filter_map(char::from_u32)
        .filter(move |&c| latin_base(c) == Some(base))
}

/// Runs remembered per sync before the memory is given back (each one is sent to the writer
/// once while remembered; after that, again, which the insert ignores).
const REMEMBER: usize = 1 << 18;

/// A word for the table: the run reversed and lowercased, and its flags.
pub type Word = (String, u8);

/// Slots of [`Vocabulary::recent`] (a power of two).
const RECENT: usize = 1 << 12;

/// The parser thread's memory of the runs it already handed to the writer in this sync.
pub struct Vocabulary {
    /// The last short run (up to 16 bytes, lowercased, packed) seen at each slot, without
    /// flags: most runs are frequent short words, answered here without the map's hashing
    /// and pointer chasing (a third of a 1 GB sync's parsing time before it).
    recent: Box<[u128]>,
    /// Every run handed over (up to [`REMEMBER`]) with its flags: a short run by its packed
    /// bytes, a longer one by a 128-bit hash of them (two seeded 64-bit hashes: a collision,
    /// which would leave a word out, is about 1e-27 likely among a million runs). Numbers,
    /// not strings: no allocation, compare or pointer chase per run.
    seen: HashMap<u128, u8, foldhash::fast::RandomState>,
    run: Vec<u8>,
}

impl Default for Vocabulary {
    fn default() -> Vocabulary {
        Vocabulary {
            recent: vec![0; RECENT].into_boxed_slice(),
            seen: HashMap::default(),
            run: Vec::new(),
        }
    }
}

/// The run `bytes[start..end]` (at most 16 ASCII letters and digits) lowercased and packed
/// little-endian in one number (never 0: the length is implied). Read as one 16-byte load
/// where the text goes on that far; `| 0x20` lowers ASCII letters and keeps digits.
fn packed(bytes: &[u8], start: usize, end: usize) -> u128 {
    let len = end - start;
    let mask = if len == 16 {
        u128::MAX
    } else {
        (1u128 << (8 * len)) - 1
    };
    let raw = match bytes.get(start..start + 16) {
        Some(window) => u128::from_le_bytes(window.try_into().expect("16 bytes")),
        None => {
            let mut window = [0u8; 16];
            window[..len].copy_from_slice(&bytes[start..end]);
            u128::from_le_bytes(window)
        }
    };
    (raw | u128::from_le_bytes([0x20; 16])) & mask
}

/// Where a short run is remembered in [`Vocabulary::recent`].
fn slot(key: u128) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize & (RECENT - 1)
}

impl Vocabulary {
    /// Appends to `out` the runs of `text` not handed over before (or seen with new flags).
    pub fn collect(&mut self, text: &str, out: &mut Vec<Word>) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if !bytes[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let mut flags = 0;
            if start > 0 && !bytes[start - 1].is_ascii() {
                flags |= LEFT;
            }
            if i < bytes.len() && !bytes[i].is_ascii() {
                flags |= RIGHT;
            }
            let key = if i - start <= 16 {
                let key = packed(bytes, start, i);
                if flags == 0 {
                    let at = slot(key);
                    if self.recent[at] == key {
                        continue;
                    }
                    self.recent[at] = key;
                }
                key
            } else {
                self.hashed(&bytes[start..i])
            };
            self.note(key, &bytes[start..i], flags, out);
        }
    }

    /// As [`Self::collect`] for the text made of `pieces` (a huge text and what surrounds it,
    /// `pi::huge`), without joining them when no run can cross from one piece to the next.
    pub fn collect_pieces(&mut self, pieces: &[&str], out: &mut Vec<Word>) {
        let separated = pieces.windows(2).all(|pair| {
            let cut =
                |b: Option<&u8>| b.is_some_and(|b| b.is_ascii() && !b.is_ascii_alphanumeric());
            cut(pair[0].as_bytes().last()) || cut(pair[1].as_bytes().first())
        });
        if separated {
            pieces.iter().for_each(|p| self.collect(p, out));
        } else {
            self.collect(&pieces.concat(), out);
        }
    }

    /// The key of a run longer than 16 bytes: a 128-bit hash of it lowercased. Its top bit is
    /// set, and a packed run's never is (ASCII bytes), so the two kinds of key never meet.
    fn hashed(&mut self, run: &[u8]) -> u128 {
        use std::hash::BuildHasher;
        self.run.clear();
        self.run.extend(run.iter().map(u8::to_ascii_lowercase));
        let [a, b] = [0x5eed_0001, 0x5eed_0002]
            .map(|seed| foldhash::quality::FixedState::with_seed(seed).hash_one(&self.run));
        (u128::from(a) << 64 | u128::from(b)) | 1 << 127
    }

    fn note(&mut self, key: u128, run: &[u8], flags: u8, out: &mut Vec<Word>) {
        if let Some(known) = self.seen.get_mut(&key) {
            if *known & flags == flags {
                return;
            }
            *known |= flags;
        } else {
            if self.seen.len() >= REMEMBER {
                self.seen = HashMap::default();
            }
            self.seen.insert(key, flags);
        }
        // Reversed and lowercased: ASCII, so byte by byte.
        let word = run
            .iter()
            .rev()
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
        out.push((word, flags));
    }
}

/// Writes a batch's new words (in the caller's transaction).
///
/// # Errors
/// SQLite errors.
pub fn insert(tx: &Connection, words: &mut [Word]) -> rusqlite::Result<()> {
    // In key order: each insert lands next to the last one in the table's b-tree.
    words.sort_unstable();
    let mut stmt = tx.prepare_cached(
        "INSERT INTO words(rev, flags) VALUES (?1, ?2)
         ON CONFLICT(rev) DO UPDATE SET flags = flags | excluded.flags
         WHERE flags | excluded.flags <> flags",
    )?;
    for (rev, flags) in words.iter() {
        stmt.execute(params![rev, flags])?;
    }
    Ok(())
}

/// Whether the table may lack words (a big sync under way, or one that stopped before
/// [`refill`]).
///
/// # Errors
/// SQLite errors.
pub fn is_stale(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM words_stale")?.exists([])
}

/// Marks the table stale (committed at once, before the texts it will lack).
///
/// # Errors
/// SQLite errors.
pub fn mark_stale(conn: &Connection) -> rusqlite::Result<()> {
    if !is_stale(conn)? {
        conn.execute(
            "INSERT INTO words_stale(since_ms) VALUES (?1)",
            [chrono::Utc::now().timestamp_millis()],
        )?;
    }
    Ok(())
}

/// Adds every word of the full-text vocabulary (exactly the indexed words) and clears the
/// stale mark, in one transaction: a walk of the whole index, about 2 s per GB of it. Returns
/// the words in `min_texts` texts or more, which the same walk counts (`impacts::update`
/// needs them and would walk it again).
///
/// # Errors
/// SQLite errors.
pub fn refill(conn: &Connection, min_texts: i64) -> rusqlite::Result<Vec<String>> {
    let mut frequent = Vec::new();
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut insert =
            tx.prepare("INSERT INTO words(rev, flags) VALUES (?1, 0) ON CONFLICT(rev) DO NOTHING")?;
        let mut vocabulary = tx.prepare("SELECT term, doc FROM fts_vocab")?;
        let mut terms = vocabulary.query([])?;
        // In chunks, each in key order: a chunk's inserts land near each other in the table,
        // and memory stays bounded whatever the vocabulary's size.
        let mut chunk: Vec<String> = Vec::with_capacity(REMEMBER);
        loop {
            let term = terms.next()?;
            if let Some(row) = term {
                let term = row.get_ref(0)?.as_str()?;
                if row.get::<_, i64>(1)? >= min_texts {
                    frequent.push(term.to_string());
                }
                chunk.push(reversed(term));
            }
            if chunk.len() == REMEMBER || (term.is_none() && !chunk.is_empty()) {
                chunk.sort_unstable();
                for w in chunk.drain(..) {
                    insert.execute([w])?;
                }
            }
            if term.is_none() {
                break;
            }
        }
    }
    tx.execute("DELETE FROM words_stale", [])?;
    tx.commit()?;
    Ok(frequent)
}

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub enum Lookup {
    /// Every indexed word asked for (lowercase; none: no indexed word qualifies).
    Words(Vec<String>),
    /// More than the caller's limit.
    TooMany,
    /// A qualifying run touched a non-ASCII character: its indexed word is not known.
    Unsure,
}

/// The indexed words that end with `piece` (ASCII letters and digits), up to `max`.
///
/// # Errors
/// SQLite errors.
pub fn ending_with(conn: &Connection, piece: &str, max: usize) -> rusqlite::Result<Lookup> {
    if is_stale(conn)? {
        return Ok(Lookup::Unsure);
    }
    let from: String = reversed(piece);
    // Every key starting with `from`: up to the same key with its last byte one higher (ASCII
    // letters and digits stay below 0x7f when raised by one).
    let mut to = from.clone().into_bytes();
    if let Some(last) = to.last_mut() {
        *last += 1;
    }
    let to = String::from_utf8(to).unwrap_or_default();
    let mut stmt =
        conn.prepare_cached("SELECT rev, flags FROM words WHERE rev >= ?1 AND rev < ?2 LIMIT ?3")?;
    let rows = stmt.query_map(params![from, to, max as i64 + 1], row)?;
    gather(rows, LEFT, max)
}

/// The indexed words that contain `piece` (ASCII letters and digits), up to `max`: a scan of
/// the whole table (short strings, about 0.1 s per million words).
///
/// # Errors
/// SQLite errors.
pub fn containing(conn: &Connection, piece: &str, max: usize) -> rusqlite::Result<Lookup> {
    if is_stale(conn)? {
        return Ok(Lookup::Unsure);
    }
    let mut stmt =
        conn.prepare_cached("SELECT rev, flags FROM words WHERE instr(rev, ?1) > 0 LIMIT ?2")?;
    let rows = stmt.query_map(params![reversed(piece), max as i64 + 1], row)?;
    gather(rows, LEFT | RIGHT, max)
}

fn row(r: &rusqlite::Row) -> rusqlite::Result<(String, u8)> {
    Ok((r.get(0)?, r.get(1)?))
}

fn gather(
    rows: impl Iterator<Item = rusqlite::Result<(String, u8)>>,
    unsure: u8,
    max: usize,
) -> rusqlite::Result<Lookup> {
    let mut words = Vec::new();
    for r in rows {
        let (rev, flags) = r?;
        if flags & unsure != 0 {
            return Ok(Lookup::Unsure);
        }
        if words.len() == max {
            return Ok(Lookup::TooMany);
        }
        words.push(rev.chars().rev().collect());
    }
    Ok(Lookup::Words(words))
}

/// `s` lowercased (ASCII) and reversed, as the table keys words.
pub fn reversed(s: &str) -> String {
    s.chars().rev().map(|c| c.to_ascii_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collected(text: &str) -> Vec<Word> {
        let mut out = Vec::new();
        Vocabulary::default().collect(text, &mut out);
        out
    }

    #[test]
    fn runs_are_reversed_lowercased_and_flagged_next_to_non_ascii() {
        assert_eq!(
            collected("fn Parse_line(x2) éparse naïve"),
            [
                ("nf".into(), 0),
                ("esrap".into(), 0),
                ("enil".into(), 0),
                ("2x".into(), 0),
                ("esrap".into(), LEFT),
                ("an".into(), RIGHT),
                ("ev".into(), LEFT),
            ]
        );
    }

    #[test]
    fn a_run_is_handed_over_once_per_flag_set() {
        let mut v = Vocabulary::default();
        let mut out = Vec::new();
        v.collect("line line LINE", &mut out);
        v.collect("line", &mut out);
        assert_eq!(out, [("enil".to_string(), 0)]);
    }
}
