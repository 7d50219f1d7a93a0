//! Whether a value that sits where a secret would is one: not a placeholder (`$TOKEN`,
//! `<password>`, `changeme`, a marker pidx wrote), and for bare values random enough. Hashes,
//! UUIDs and commit ids are random too; no rule looks at a bare one, so they are never asked.

/// Shannon entropy of `s` in bits per character.
pub fn bits_per_char(s: &str) -> f64 {
    let mut counts = [0u32; 128];
    let mut other = std::collections::HashMap::new();
    let mut n = 0u32;
    for c in s.chars() {
        n += 1;
        match counts.get_mut(c as usize) {
            Some(slot) => *slot += 1,
            None => *other.entry(c).or_insert(0u32) += 1,
        }
    }
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    counts
        .iter()
        .chain(other.values())
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = f64::from(k) / n;
            -p * p.log2()
        })
        .sum()
}

/// Words people write where the real value would go.
const PLACEHOLDERS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "null",
    "none",
    "nil",
    "undefined",
    "true",
    "false",
    "changeme",
    "redacted",
    "hidden",
    "empty",
    "test",
];

/// Not a reference to a value (`$X`, `${X}`, `%X%`, `<x>`, `{{x}}`, `[redacted: …]`), a
/// placeholder word or one character repeated (`****`, `xxxx`).
pub fn not_a_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let Some(first) = v.chars().next() else {
        return false;
    };
    if matches!(first, '$' | '<' | '{' | '%' | '[' | '*' | '.') {
        return false;
    }
    let mut chars = v.chars();
    let c0 = chars.next().unwrap_or(' ');
    if chars.all(|c| c == c0) {
        return false;
    }
    !(PLACEHOLDERS.contains(&lower.as_str())
        || [
            "example",
            "your_",
            "your-",
            "xxxx",
            "placeholder",
            "changeme",
            "<",
            ">",
        ]
        .iter()
        .any(|p| lower.contains(p)))
}

/// An env value under a secret's name: not a placeholder, and not a path, number, boolean or
/// lowercase identifier (`TOKENIZER_PATH=/models/t.json`, `MAX_TOKENS=4096`,
/// `TOKEN_FILE=token_file`).
pub fn plausible_env_value(v: &str) -> bool {
    if !not_a_placeholder(v) || v.starts_with('/') || v.starts_with("./") || v.starts_with('~') {
        return false;
    }
    if v.chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
    {
        return false;
    }
    let identifier = v
        .chars()
        .all(|c| c.is_ascii_lowercase() || c == '_' || c == '.' || c == '-');
    !identifier && bits_per_char(v) >= 2.0
}

/// A bare value that looks generated: at least 10 characters, two kinds of character (lower,
/// upper, digit) and 3 bits of entropy per character. English words and identifiers fail the
/// mix or the entropy; a 10+ character token of one case and digits passes.
pub fn looks_random(v: &str) -> bool {
    if v.len() < 10 || !not_a_placeholder(v) {
        return false;
    }
    let kinds = [
        v.bytes().any(|b| b.is_ascii_lowercase()),
        v.bytes().any(|b| b.is_ascii_uppercase()),
        v.bytes().any(|b| b.is_ascii_digit()),
    ];
    kinds.iter().filter(|&&k| k).count() >= 2 && bits_per_char(v) >= 3.0
}
