//! pi breaks ties in its listings with `String#localeCompare`, which is ICU's root collation,
//! not byte order: punctuation sorts before digits, digits before letters, letters compare
//! without case and accents first (`tie_c < tie-10 < tie-9 < tie-ä < tie-b < tie-B < tie.d`).
//! This is that collation for the characters file names use (ASCII and Latin-1 letters);
//! other characters fall back to code point order after them. The store registers it in SQLite
//! as `pi`.

use std::cmp::Ordering;

/// CLDR root order of ASCII punctuation and symbols.
const PUNCT: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// (primary, secondary, tertiary) weights of one character.
fn weights(c: char) -> (u32, u32, u32) {
    if c.is_whitespace() {
        return (c as u32, 0, 0);
    }
    if let Some(i) = PUNCT.find(c) {
        return (0x100 + i as u32, 0, 0);
    }
    if let Some(d) = c.to_digit(10) {
        return (0x200 + d, 0, 0);
    }
    let (base, accent) = fold_latin(c);
    if base.is_ascii_alphabetic() {
        let lower = base.to_ascii_lowercase();
        let tertiary = u32::from(c.is_uppercase());
        return (0x300 + lower as u32, accent, tertiary);
    }
    (0x10000 + c as u32, 0, 0)
}

/// A Latin-1 letter's base letter and an accent weight (0 for none).
fn fold_latin(c: char) -> (char, u32) {
    const TABLE: &[(&str, char)] = &[
        ("àáâãäåÀÁÂÃÄÅ", 'a'),
        ("çÇ", 'c'),
        ("èéêëÈÉÊË", 'e'),
        ("ìíîïÌÍÎÏ", 'i'),
        ("ñÑ", 'n'),
        ("òóôõöøÒÓÔÕÖØ", 'o'),
        ("ùúûüÙÚÛÜ", 'u'),
        ("ýÿÝ", 'y'),
    ];
    for (chars, base) in TABLE {
        if let Some(pos) = chars.chars().position(|x| x == c) {
            let base = if c.is_uppercase() {
                base.to_ascii_uppercase()
            } else {
                *base
            };
            return (base, 1 + (pos as u32 % 6));
        }
    }
    (c, 0)
}

/// `a.localeCompare(b)` under ICU's root collation, for file names.
pub fn compare(a: &str, b: &str) -> Ordering {
    let wa: Vec<_> = a.chars().map(weights).collect();
    let wb: Vec<_> = b.chars().map(weights).collect();
    let level = |f: fn(&(u32, u32, u32)) -> u32| {
        let ka: Vec<u32> = wa.iter().map(f).filter(|w| *w != 0).collect();
        let kb: Vec<u32> = wb.iter().map(f).filter(|w| *w != 0).collect();
        ka.cmp(&kb)
    };
    level(|w| w.0)
        .then_with(|| level(|w| w.1))
        .then_with(|| wa.iter().map(|w| w.2).cmp(wb.iter().map(|w| w.2)))
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::compare;

    #[test]
    fn ties_sort_like_local_compare() {
        let mut names = vec![
            "tie-B", "tie.d", "tie-9", "tie_c", "tie-ä", "tie-10", "tie-b",
        ];
        names.sort_by(|a, b| compare(a, b));
        assert_eq!(
            names,
            ["tie_c", "tie-10", "tie-9", "tie-ä", "tie-b", "tie-B", "tie.d"]
        );
    }

    #[test]
    fn pi_file_names_keep_byte_order() {
        let a = "2026-03-05T08-34-46-532Z_019cbd22-9684-7627-b31a-d519cf96492f.jsonl";
        let b = "2026-03-05T08-34-46-532Z_019cbd22-9684-7627-b31a-d519cf96492a.jsonl";
        assert_eq!(compare(a, b), a.cmp(b));
    }
}
