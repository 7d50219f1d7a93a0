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
    /// foldhash, not SipHash: a lookup per word piece is most of embedding's time.
    vocab: HashMap<String, u32, foldhash::fast::RandomState>,
    prefix: String,
    max_chars: usize,
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
        let vocab: HashMap<String, u32, _> = model["vocab"]
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
        Ok(WordPiece {
            vocab,
            prefix,
            max_chars,
            lowercase,
        })
    }

    /// The vocabulary size (largest id + 1).
    pub fn len(&self) -> usize {
        self.vocab.values().max().map_or(0, |m| *m as usize + 1)
    }

    pub fn is_empty(&self) -> bool {
        self.vocab.is_empty()
    }

    /// The id of token `t`.
    pub fn id(&self, t: &str) -> Option<u32> {
        self.vocab.get(t).copied()
    }

    /// The token ids of `text`, without special tokens; unknown words are left out (a static
    /// model gives `[UNK]` no meaning worth averaging in).
    pub fn encode(&self, text: &str, out: &mut Vec<u32>) {
        let mut piece = String::new();
        for_each_word(text, self.lowercase, |word| {
            self.pieces(word, out, &mut piece)
        });
    }

    /// The pieces of one word, longest first; `piece` is a buffer kept across words.
    fn pieces(&self, word: &str, out: &mut Vec<u32>, piece: &mut String) {
        if word.len() > self.max_chars && word.chars().count() > self.max_chars {
            return;
        }
        // Most words are in the vocabulary whole.
        if let Some(&id) = self.vocab.get(word) {
            out.push(id);
            return;
        }
        let mark = out.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                if word.is_char_boundary(end) {
                    piece.clear();
                    if start > 0 {
                        piece.push_str(&self.prefix);
                    }
                    piece.push_str(&word[start..end]);
                    if let Some(&id) = self.vocab.get(piece.as_str()) {
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

/// BERT's basic tokenizer: the words and punctuation marks of `text`, normalised.
pub fn words(text: &str, lowercase: bool) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, lowercase, |w| out.push(w.to_string()));
    out
}

/// [`words`] handed one at a time to `each`, from one buffer: no allocation a word, and ASCII
/// (most of any transcript) without the Unicode tables.
fn for_each_word(text: &str, lowercase: bool, mut each: impl FnMut(&str)) {
    let mut word = String::new();
    let flush = |word: &mut String, each: &mut dyn FnMut(&str)| {
        if !word.is_empty() {
            each(word);
            word.clear();
        }
    };
    let mut one = [0u8; 4];
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                word.push(if lowercase { c.to_ascii_lowercase() } else { c });
            } else if c.is_ascii_whitespace() || c == '\x0b' {
                flush(&mut word, &mut each);
            } else if c.is_ascii_punctuation() {
                flush(&mut word, &mut each);
                each(c.encode_utf8(&mut one));
            }
            // Other ASCII: control characters, dropped.
            continue;
        }
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
    fn wordpiece_matches_longest_piece_first_and_drops_unknown_words() {
        let mut ids = Vec::new();
        tiny().encode("Unaffable café. Flaky zzz", &mut ids);
        assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn other_tokenizers_are_refused_by_name() {
        let json = serde_json::json!({"model": {"type": "BPE"}});
        let err = WordPiece::from_json(&json).err().unwrap();
        assert!(err.contains("\"BPE\""), "{err}");
    }
}
