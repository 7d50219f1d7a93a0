//! BERT's WordPiece tokenizer (the `BertNormalizer` + `BertPreTokenizer` + `WordPiece` of a
//! Hugging Face `tokenizer.json`), as the models pidx reads use it: clean the text, put spaces
//! around CJK characters, lowercase and strip accents, split at whitespace and punctuation,
//! then match each word greedily against the vocabulary, longest piece first, later pieces
//! prefixed `##`. Written here rather than pulling the `tokenizers` crate (and its regex,
//! onig and rayon) for the one tokenizer family static models use.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

/// A WordPiece vocabulary and its options.
pub struct WordPiece {
    vocab: Vocab,
    prefix: String,
    max_chars: usize,
    /// The longest vocabulary piece in bytes (without the prefix): no longer candidate is
    /// looked up, so an unknown word costs its length times this, not its length squared.
    max_piece: usize,
    lowercase: bool,
}

impl WordPiece {
    /// Reads the tokenizer of a `tokenizer.json`; `None` with the reason when it is not a
    /// WordPiece one.
    pub fn from_json(json: &serde_json::Value) -> Result<WordPiece, String> {
        let model = &json["model"];
        let kind = model["type"].as_str().unwrap_or("");
        if kind != "WordPiece" {
            return Err(format!(
                "its tokenizer is {kind:?}; pidx reads WordPiece tokenizers (BERT's)"
            ));
        }
        let vocab: Vec<(String, u32)> = model["vocab"]
            .as_object()
            .ok_or("tokenizer.json has no vocabulary")?
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), u32::try_from(v.as_u64()?).ok()?)))
            .collect();
        let prefix = model["continuing_subword_prefix"]
            .as_str()
            .unwrap_or("##")
            .to_string();
        let max_chars = model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize;
        let lowercase = json["normalizer"]["lowercase"].as_bool().unwrap_or(true);
        let max_piece = vocab
            .iter()
            .map(|(k, _)| k.strip_prefix(prefix.as_str()).unwrap_or(k).len())
            .max()
            .unwrap_or(0);
        let vocab = Vocab::new(vocab);
        Ok(WordPiece {
            vocab,
            prefix,
            max_chars,
            max_piece,
            lowercase,
        })
    }

    /// The vocabulary size (largest id + 1).
    pub fn len(&self) -> usize {
        self.vocab.max_id.map_or(0, |m| m as usize + 1)
    }

    pub fn is_empty(&self) -> bool {
        self.vocab.max_id.is_none()
    }

    /// The id of token `t`.
    pub fn id(&self, t: &str) -> Option<u32> {
        self.vocab.get(t)
    }

    /// Whether `text` holds a word this vocabulary has whole: a word of two or more letters
    /// (or one letter of a script written without spaces, as CJK is), not only punctuation,
    /// digits or the pieces WordPiece spells an unknown word with. A static model's vector of
    /// a text with no such word is an average of spelling fragments; it lands near whatever
    /// else is made of fragments (ids, hashes, base64) and means nothing.
    pub fn knows_a_word(&self, text: &str) -> bool {
        let mut known = false;
        for_each_word(text, self.lowercase, |word| {
            let letters = word.chars().filter(|c| c.is_alphabetic()).count();
            let enough = letters >= 2 || (letters == 1 && !word.is_ascii());
            known = known || (enough && self.vocab.get(word).is_some());
        });
        known
    }

    /// The token ids of `text`, without special tokens; unknown words are left out (a static
    /// model gives `[UNK]` no meaning worth averaging in).
    pub fn encode(&self, text: &str, out: &mut Vec<u32>) {
        self.encode_with(text, out, &mut Memo::default());
    }

    /// [`encode`](Self::encode) remembering in `memo` the pieces of the words that are not in
    /// the vocabulary whole: such a word (an identifier, a path's part) costs a lookup a
    /// candidate piece, a dozen or more, and most come back many times in a batch of texts.
    pub fn encode_with(&self, text: &str, out: &mut Vec<u32>, memo: &mut Memo) {
        let mut piece = String::new();
        for_each_word(text, self.lowercase, |word| {
            // Most words are in the vocabulary whole.
            if let Some(id) = self.vocab.get(word) {
                out.push(id);
                return;
            }
            if let Some(ids) = memo.words.get(word) {
                out.extend_from_slice(ids);
                return;
            }
            let mark = out.len();
            self.pieces(word, out, &mut piece);
            // A word too long to have pieces (a pasted blob) is not worth its memory.
            if word.len() > self.max_chars {
                return;
            }
            if memo.words.len() >= Memo::MAX_WORDS {
                memo.words.clear();
            }
            memo.words.insert(word.into(), out[mark..].into());
        });
    }

    /// The pieces of one word, longest first; `piece` is a buffer kept across words.
    fn pieces(&self, word: &str, out: &mut Vec<u32>, piece: &mut String) {
        if word.len() > self.max_chars && word.chars().count() > self.max_chars {
            return;
        }
        let mark = out.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len().min(start + self.max_piece);
            let mut found = None;
            while end > start {
                if word.is_char_boundary(end) {
                    piece.clear();
                    if start > 0 {
                        piece.push_str(&self.prefix);
                    }
                    piece.push_str(&word[start..end]);
                    if let Some(id) = self.vocab.get(piece) {
                        found = Some(id);
                        break;
                    }
                }
                end -= 1;
            }
            let Some(id) = found else {
                // WordPiece makes the whole word `[UNK]`: drop what it matched of it.
                out.truncate(mark);
                return;
            };
            out.push(id);
            start = end;
        }
    }
}

/// A vocabulary keyed for speed: a lookup a word piece is most of embedding's time. A piece of
/// up to 15 bytes (nearly every one) is a `u128` of its bytes and length, held in the table
/// itself, so a lookup is one probe with no string to follow and compare; longer ones are
/// strings. foldhash, not SipHash, for both.
struct Vocab {
    short: HashMap<u128, u32, foldhash::fast::RandomState>,
    long: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    max_id: Option<u32>,
}

impl Vocab {
    fn new(pieces: Vec<(String, u32)>) -> Vocab {
        let mut v = Vocab {
            short: HashMap::default(),
            long: HashMap::default(),
            max_id: pieces.iter().map(|(_, id)| *id).max(),
        };
        for (piece, id) in pieces {
            match Vocab::key(&piece) {
                Some(k) => v.short.insert(k, id),
                None => v.long.insert(piece.into(), id),
            };
        }
        v
    }

    /// The bytes of a piece of up to 15 bytes, its length in the last byte.
    fn key(piece: &str) -> Option<u128> {
        let b = piece.as_bytes();
        if b.len() > 15 {
            return None;
        }
        let mut k = [0u8; 16];
        k[..b.len()].copy_from_slice(b);
        k[15] = b.len() as u8;
        Some(u128::from_le_bytes(k))
    }

    fn get(&self, piece: &str) -> Option<u32> {
        match Vocab::key(piece) {
            Some(k) => self.short.get(&k).copied(),
            None => self.long.get(piece).copied(),
        }
    }
}

/// The pieces of words not in a vocabulary, as [`WordPiece::encode_with`] found them; one a
/// thread, kept across texts.
#[derive(Default)]
pub struct Memo {
    words: HashMap<Box<str>, Box<[u32]>, foldhash::fast::RandomState>,
}

impl Memo {
    /// Words remembered before the memo starts again (a few MB).
    const MAX_WORDS: usize = 100_000;
}

/// BERT's basic tokenizer: the words and punctuation marks of `text`, normalised.
pub fn words(text: &str, lowercase: bool) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, lowercase, |w| out.push(w.to_string()));
    out
}

/// [`words`] handed one at a time to `each`: a run of ASCII letters and digits (most of any
/// transcript) goes by bytes, and as a slice of `text` when it is a whole word already in lower
/// case; other words are built in one buffer, so there is no allocation a word.
fn for_each_word(text: &str, lowercase: bool, mut each: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut word = String::new();
    let flush = |word: &mut String, each: &mut dyn FnMut(&str)| {
        if !word.is_empty() {
            each(word);
            word.clear();
        }
    };
    let mut one = [0u8; 4];
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let run = &text[start..i];
            // What follows the run ends the word only if it is a space or punctuation: a letter
            // that is not ASCII continues it, and a control character is dropped from it.
            let ends =
                |b: &u8| b.is_ascii_whitespace() || *b == b'\x0b' || b.is_ascii_punctuation();
            let whole = word.is_empty() && bytes.get(i).is_none_or(ends);
            let folded = !lowercase || !run.bytes().any(|b| b.is_ascii_uppercase());
            if whole && folded {
                each(run);
            } else if lowercase {
                word.extend(run.bytes().map(|b| b.to_ascii_lowercase() as char));
            } else {
                word.push_str(run);
            }
            continue;
        }
        if b.is_ascii() {
            i += 1;
            if b.is_ascii_whitespace() || b == b'\x0b' {
                flush(&mut word, &mut each);
            } else if b.is_ascii_punctuation() {
                flush(&mut word, &mut each);
                each((b as char).encode_utf8(&mut one));
            }
            // Other ASCII: control characters, dropped.
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        if c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut each);
        } else if is_cjk(c) || is_punctuation(c) {
            flush(&mut word, &mut each);
            each(c.encode_utf8(&mut one));
        } else if lowercase {
            // Lowercase, then strip accents (NFD, marks dropped), as BertNormalizer does when
            // `strip_accents` is unset and `lowercase` is on.
            for l in c.to_lowercase() {
                word.extend(
                    std::iter::once(l)
                        .nfd()
                        .filter(|m| !unicode_normalization::char::is_combining_mark(*m)),
                );
            }
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut each);
}

/// BERT's `_is_punctuation`: ASCII symbols count too, plus Unicode's punctuation blocks.
fn is_punctuation(c: char) -> bool {
    let u = c as u32;
    (33..=47).contains(&u)
        || (58..=64).contains(&u)
        || (91..=96).contains(&u)
        || (123..=126).contains(&u)
        || (0x2000..=0x206F).contains(&u) // general punctuation
        || (0x3000..=0x303F).contains(&u) // CJK symbols and punctuation
        || (0xFF00..=0xFF0F).contains(&u)
        || (0xFF1A..=0xFF20).contains(&u)
        || matches!(c, '¡' | '§' | '«' | '¶' | '·' | '»' | '¿')
}

/// BERT's `_is_chinese_char`: the CJK ideograph blocks (not kana or hangul).
fn is_cjk(c: char) -> bool {
    let u = c as u32;
    (0x4E00..=0x9FFF).contains(&u)
        || (0x3400..=0x4DBF).contains(&u)
        || (0x20000..=0x2A6DF).contains(&u)
        || (0x2A700..=0x2B81F).contains(&u)
        || (0xF900..=0xFAFF).contains(&u)
        || (0x2F800..=0x2FA1F).contains(&u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let json = serde_json::json!({
            "normalizer": {"lowercase": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "vocab": {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "cafe": 4, ".": 5,
                                "flaky": 6, "中": 7}}
        });
        WordPiece::from_json(&json).unwrap()
    }

    #[test]
    fn words_split_punctuation_cjk_and_strip_accents() {
        assert_eq!(
            words("Café, UNaffable中文!", true),
            ["cafe", ",", "unaffable", "中", "文", "!"]
        );
    }

    #[test]
    fn ascii_runs_end_only_where_bert_ends_a_word() {
        assert_eq!(words("ab\x01cd naïve ABC", true), ["abcd", "naive", "abc"]);
        assert_eq!(words("ab\x01cd ABC", false), ["abcd", "ABC"]);
        assert_eq!(words("x1,y2\u{b}z", true), ["x1", ",", "y2", "z"]);
    }

    #[test]
    fn wordpiece_matches_longest_piece_first_and_drops_unknown_words() {
        let mut ids = Vec::new();
        tiny().encode("Unaffable café. Flaky zzz", &mut ids);
        assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_word_known_whole_is_what_gives_a_query_meaning() {
        let wp = tiny();
        // Spelled only with pieces, punctuation or unknown: nothing known whole.
        assert!(!wp.knows_a_word("unaffable. zzz"));
        assert!(!wp.knows_a_word("qwertyuiopasdf"));
        assert!(!wp.knows_a_word(""));
        // A whole word, in any case; one CJK character is a word.
        assert!(wp.knows_a_word("zzz FLAKY"));
        assert!(wp.knows_a_word("Café"));
        assert!(wp.knows_a_word("中"));
    }

    #[test]
    fn other_tokenizers_are_refused_by_name() {
        let json = serde_json::json!({"model": {"type": "BPE"}});
        let err = WordPiece::from_json(&json).err().unwrap();
        assert!(err.contains("\"BPE\""), "{err}");
    }
}
