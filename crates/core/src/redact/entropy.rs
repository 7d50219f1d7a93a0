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
    // the internet's joke password (a chat log's `*******`), which docs and tests copy
    "hunter2",
];

/// Programmers' hex words, written where a made-up hex value goes (`deadbeef12346` as a
/// bearer token in FastAPI's docs, `0xCAFEBABE`): a generator writes one of these eight
/// letters with a chance of 2^-32 at a place.
const HEX_WORDS: &[&str] = &[
    "deadbeef", "cafebabe", "feedface", "baadf00d", "deadc0de", "decafbad",
];

/// A secret's word that a placeholder phrase names (`your secret key goes here`).
const SECRET_WORDS: &[&str] = &[
    "secret", "token", "key", "password", "pass", "api", "access", "client", "private", "auth",
];

/// A placeholder phrase written without separators, as docs write one in capitals
/// (`YOURSECRETKEYGOESHERE`, `your_api_token_here`, `MyTokenHere`): `your` before a secret's
/// word, or a secret's word (or `goes`) before `here`; or `my` and nothing but secret's words
/// (`myPassword`, `my_secret_key`: a doc's name for the value, where `mySecret789` is one).
fn placeholder_phrase(lower: &str) -> bool {
    let joined: String = lower
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .collect();
    SECRET_WORDS
        .iter()
        .any(|w| joined.contains(&format!("your{w}")) || joined.contains(&format!("{w}here")))
        || joined.contains("goeshere")
        || joined
            .strip_prefix("my")
            .is_some_and(|rest| !rest.is_empty() && secret_words_only(rest))
}

/// `s` is one or more of [`SECRET_WORDS`] run together (`secretkey`, `apitoken`).
fn secret_words_only(s: &str) -> bool {
    s.is_empty()
        || SECRET_WORDS
            .iter()
            .any(|w| s.strip_prefix(w).is_some_and(secret_words_only))
}

/// Not a reference to a value (`$X`, `${X}`, `#{x}`, `%X%`, `<x>`, `{{x}}`, `[redacted: …]`), a
/// placeholder word or phrase, one character repeated (`****`, `xxxx`), an elided example
/// (`nsec1...`, `sk-…`), a value built on one of [`HEX_WORDS`] or a PEM armor line standing as
/// a value (`-----BEGIN`: a whole key block is the `private-key` rule's).
pub fn not_a_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let Some(first) = v.chars().next() else {
        return false;
    };
    // `#{x}`: Ruby's and CoffeeScript's interpolation (`http://#{user}:#{pass}@host`)
    if matches!(first, '$' | '<' | '{' | '%' | '[' | '*' | '.') || v.starts_with("#{") {
        return false;
    }
    if v.starts_with("-----") || v.contains("...") || v.contains('\u{2026}') {
        return false;
    }
    if placeholder_phrase(&lower) {
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
        .chain(HEX_WORDS)
        .any(|p| lower.contains(p)))
}

/// An env value under a secret's name: not a placeholder, and not a path, URL, number,
/// boolean or lowercase identifier (`TOKENIZER_PATH=/models/t.json`, `MAX_TOKENS=4096`,
/// `TOKEN_FILE=token_file`). A URL is a reference to the secret (`op://vault/item/password`,
/// `https://vault.example/v1/secret`); one holding a password is the `url-password` rule's.
pub fn plausible_env_value(v: &str) -> bool {
    if !not_a_placeholder(v)
        || v.starts_with('/')
        || v.starts_with("./")
        || v.starts_with('~')
        || v.contains("://")
    {
        return false;
    }
    if v.chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
    {
        return false;
    }
    // `|` joins a doc's alternatives (`CREDENTIAL_ROLE=ci|maintainer`)
    let identifier = v
        .chars()
        .all(|c| c.is_ascii_lowercase() || matches!(c, '_' | '.' | '-' | '|'));
    !identifier && !constant_name(v) && !counting_runs(v) && bits_per_char(v) >= 2.0
}

/// A constant's or a variable's name in capitals, words joined by `_` (`SECRET_VALUE_REF`,
/// a doc's placeholder for where the value is kept): a reference, not the value. A generated
/// value in capitals has digits or pieces that are no words.
fn constant_name(v: &str) -> bool {
    v.contains('_')
        && v.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        && v.split('_').all(|w| w.len() >= 2 && word_like(w))
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

/// Words that make a value an example rather than a secret wherever they stand in it
/// (`secure%20password`, `my-secret-token`, `dummy_key_123`).
const EXAMPLE_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "example",
    "dummy",
    "sample",
    "placeholder",
    "changeme",
    "redacted",
    "insert",
    "replace",
    "fake",
];

fn holds_example_word(v: &str) -> bool {
    holds_example_word_but(v, None)
}

/// [`holds_example_word`] without `unless` (a word that alone does not make `v` an example).
fn holds_example_word_but(v: &str, unless: Option<&str>) -> bool {
    let plain = undisguised(v);
    EXAMPLE_WORDS
        .iter()
        .any(|w| Some(*w) != unless && plain.contains(w))
}

/// `v`'s letters, lower case, with `%XX` escapes read and everything else left out: a URL
/// parser's tests break up the example word they mean (`passwo^rd`, `pa%2Fssword`). Digits
/// and signs standing for letters (`P4ssw0rd`, `p@ssword`) are not read as letters: the
/// scanners' tests count such passwords as real ones (`r3alP4ssw0rd`, `D1fficultP%40ssw0rd`).
fn undisguised(v: &str) -> String {
    percent_decoded(v)
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect()
}

/// The one example word that does not make a password an example wherever it stands in it:
/// a password built on it (`secret123`, `mySecret789`) is one people choose, and only the word
/// alone or with `my`/`your` (`secret`, `my-secret`) is a placeholder.
const PASSWORD_BASE_WORD: &str = "secret";

/// `secret` as a whole placeholder: the word, maybe after `my` or `your`, nothing else (as the
/// value or one piece of a path: `projects/1/secrets/my-secret/versions/1` names where a
/// secret is kept, not the secret).
fn secret_placeholder(lower: &str) -> bool {
    let joined: String = lower
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.'))
        .collect();
    let rest = joined
        .strip_prefix("my")
        .or_else(|| joined.strip_prefix("your"))
        .unwrap_or(&joined);
    rest == "secret"
}

/// Letters that digits and signs stand for in a placeholder word a doc disguised
/// (`s3cret`, `t3st`, `p@ssword`, `pa$s`).
fn disguised_letters(c: char) -> &'static str {
    match c {
        '0' => "o",
        '1' => "il",
        '3' => "e",
        '4' | '@' => "a",
        '5' | '$' => "s",
        '7' => "t",
        _ => "",
    }
}

/// The whole value is a placeholder word ([`PLACEHOLDERS`]) with some of its letters written
/// as digits or signs (`s3cret`, `secr3t`, `t3st`, `p@ssword`, `p%40ssword`, `pa$s`). Only the
/// whole value: a password built on such a word (`P@ssw0rd!`, `myR3alP@ssw0rd`, as the
/// scanners' tests write real ones) is still a password.
fn disguised_placeholder(v: &str) -> bool {
    let v = percent_decoded(v);
    let chars: Vec<char> = v.chars().collect();
    chars.iter().any(|c| !c.is_ascii_alphabetic())
        && PLACEHOLDERS.iter().any(|w| {
            w.len() == chars.len()
                && w.chars()
                    .zip(&chars)
                    .all(|(l, c)| c.to_ascii_lowercase() == l || disguised_letters(*c).contains(l))
        })
}

/// `v` with its `%XX` escapes read.
fn percent_decoded(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |j: usize| bytes.get(j).and_then(|h| char::from(*h).to_digit(16));
        if let (b'%', Some(hi), Some(lo)) = (bytes[i], hex(i + 1), hex(i + 2)) {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs of counting characters, each next one the one after it in the alphabet or among the
/// digits (`abc`, `123`, `xyz`; the separators `_ - .` aside), at least three characters a
/// run on average: a doc's made-up value (`abc123`, `abcdef-123456`). Generated text almost
/// never has two such characters in a row.
fn counting_runs(v: &str) -> bool {
    let chars: Vec<char> = v
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.'))
        .collect();
    if chars.len() < 6 || !chars.iter().all(char::is_ascii_alphanumeric) {
        return false;
    }
    let runs = 1 + chars.windows(2).filter(|p| !counts_on(p[0], p[1])).count();
    chars.len() >= 3 * runs
}

/// `b` comes right after `a` among the digits, the small letters or the capitals.
fn counts_on(a: char, b: char) -> bool {
    let same_class = (a.is_ascii_digit() && b.is_ascii_digit())
        || (a.is_ascii_lowercase() && b.is_ascii_lowercase())
        || (a.is_ascii_uppercase() && b.is_ascii_uppercase());
    same_class && u32::from(b) == u32::from(a) + 1
}

/// Digits a doc writes for a password (`user:123@`, `password=1234`, `123456`): fewer than
/// six, too short for any password rule, or the run `123456...` itself.
fn doc_digits(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_digit())
        && (v.len() < 6 || "1234567890".starts_with(v) || "0123456789".starts_with(v))
}

/// A password written next to its name or in a URL: not a placeholder or an example's word,
/// not a doc's digits, and not a plain word or two (`alice-pw`, `guest`): a digit, a
/// capital or a symbol in it, as a password rule demands.
pub fn plausible_password(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    if !not_a_placeholder(v)
        || holds_example_word_but(v, Some(PASSWORD_BASE_WORD))
        || lower.split('/').any(secret_placeholder)
        || doc_digits(v)
        || disguised_placeholder(v)
        || placeholder_phrase_with_spaces(v)
    {
        return false;
    }
    // A letter of another script is a letter, not a symbol: `パスワード` ("password" in
    // Japanese, lib/pq's tests) is a plain word.
    v.chars().any(|c| {
        c.is_ascii_digit()
            || c.is_ascii_uppercase()
            || !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    })
}

/// Words with spaces between them (written or `%20`), letters only, one of them a placeholder
/// or example word: a phrase naming the secret (`top%20secret`, `My%20Pass` in URL parsers'
/// tests), not one. A passphrase of other words is still a password.
fn placeholder_phrase_with_spaces(v: &str) -> bool {
    let plain = percent_decoded(v);
    let words: Vec<&str> = plain.split(' ').collect();
    words.len() >= 2
        && words
            .iter()
            .all(|w| !w.is_empty() && w.chars().all(char::is_alphabetic))
        && words.iter().any(|w| {
            let w = w.to_lowercase();
            PLACEHOLDERS.contains(&w.as_str()) || EXAMPLE_WORDS.contains(&w.as_str())
        })
}

/// A cookie header's pairs (`a=1; b=2`): some value must look generated, as a session id
/// does; `fig=newton` or `theme=dark` is no secret.
pub fn cookie_holds_secret(v: &str) -> bool {
    v.split(';').any(|pair| {
        let Some((name, value)) = pair.split_once('=') else {
            return false;
        };
        let (name, value) = (name.trim(), value.trim());
        // A pair has a name (`cookie := (*T)(p)` in Go is an assignment, not a header), and a
        // session id is written in URL-safe characters: a value holding `|`, `(`, `:` or a
        // space (Google Analytics' `__utmz=...|utmccn=(referral)`, prose) is data, not an id.
        let id_chars = |b: u8| b.is_ascii_alphanumeric() || b"+/=_.%~-".contains(&b);
        !name.is_empty()
            && !name.contains(char::is_whitespace)
            && value.len() >= 12
            && value.bytes().all(id_chars)
            && looks_random(value)
            && !holds_example_word(value)
            && value != RFC6265_EXAMPLE_SID
    })
}

/// The session id of RFC 6265's examples (`Cookie: SID=31d4d96e407aad42; lang=en-US`), which
/// HTTP libraries' docs copy (Rack's `utils.rb` in the `fifth` body); like jwt.io's token, a
/// published example that opens nothing.
const RFC6265_EXAMPLE_SID: &str = "31d4d96e407aad42";

/// A value assigned to a secret's name that looks generated: 12+ characters, random
/// enough, not a placeholder or an example, and not an identifier, a dotted or `::` path, a
/// file path, a URL or words joined by `_`, `-` or `.` (`self.secret_key`,
/// `SecretKeyDerivation`, `token_type_hint`), nor JavaScript reading a property
/// (`options?.apiKey`, `entry?.outputTokens`, `this.lastTokStartLoc=null`) or text that is not
/// ASCII (no token format holds any).
pub fn looks_generated(v: &str) -> bool {
    // an elided example keeps its dots (`nsec1...`); a sentence's full stop goes
    if v.contains("...") {
        return false;
    }
    let v = v.trim_end_matches(['.', ':']);
    if v.len() < 12 || !v.is_ascii() || !not_a_placeholder(v) || holds_example_word(v) {
        return false;
    }
    if v.starts_with('/') || v.starts_with('~') || v.contains("://") || v.contains("::") {
        return false;
    }
    // A URN names a thing (`urn:uuid:...`, WebDAV's lock tokens in x/net's tests; RFC 8141),
    // it does not open it.
    if v.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("urn:")) {
        return false;
    }
    if v.len() >= 32 && v.bytes().all(|b| b.is_ascii_hexdigit()) {
        return true;
    }
    !reads_as_words(v)
        && !counting_runs(v)
        && !url_anchor(v)
        && !encoded_words(v)
        && !base64_of_prose(v)
        && looks_random(v)
}

/// Words joined by URL-encoded spaces (`Root%20CA%20Certificates`, gnutls' NEWS): a link's
/// or a query's text, not a value anyone generated.
fn encoded_words(v: &str) -> bool {
    v.contains("%20") && v.split("%20").all(|w| !w.is_empty() && reads_as_words(w))
}

/// `v` read as base64, standard or URL-safe, padded or not.
pub fn base64_decoded(v: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::GeneralPurpose;
    use base64::engine::{DecodePaddingMode, GeneralPurposeConfig};
    use base64::{alphabet, Engine};
    let indifferent =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    [alphabet::STANDARD, alphabet::URL_SAFE]
        .iter()
        .find_map(|a| GeneralPurpose::new(a, indifferent).decode(v).ok())
}

/// Base64 of a sentence: `bm90IG15IHJlYWwgcGFzc3dvcmQ=` is "not my real password" in an npm
/// README. Decoded, a key or a token is bytes; a value that decodes to three or more words
/// with spaces between them is prose someone encoded.
fn base64_of_prose(v: &str) -> bool {
    let Some(bytes) = base64_decoded(v) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return false;
    };
    let words: Vec<&str> = text.split(' ').collect();
    words.len() >= 3
        && words.iter().all(|w| {
            let w = w.trim_end_matches([',', '.', '!', '?', ':', ';']);
            !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic() || b == b'\'')
        })
}

/// A link's anchor (`rfc8693#section-2.1`, `README.md#install`): the text after the last `#`
/// starts with a word of four letters or more and reads as words, as a heading's anchor does.
/// Base64 and hex hold no `#`; a generated value with one has no word after it
/// (`-Y~RnOX#PXY$QYZ$`).
fn url_anchor(v: &str) -> bool {
    v.rsplit_once('#').is_some_and(|(_, anchor)| {
        anchor.len() >= 4
            && anchor.bytes().take(4).all(|b| b.is_ascii_alphabetic())
            && reads_as_words(anchor)
    })
}

/// Every piece between separators (`_ - . / ? $ = + : !`, the joints of identifiers, paths
/// and JavaScript expressions) is a word, a number or an identifier's hump.
fn reads_as_words(v: &str) -> bool {
    v.split(['_', '-', '.', '/', '?', '$', '=', '+', ':', '!'])
        .all(word_like)
}

/// A password that is a bare identifier or a word in capitals (`password =
/// useStoredDeviceAuth`, `password = TODO`): letters only, as code writes names.
pub fn letters_only(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
}

/// One piece of an identifier (between `_`, `-`, `.`, `/`): its humps (split where a
/// capital follows a small letter and where letters meet digits) are numbers, single letters,
/// short acronyms or pronounceable words (`x25519`, `EcPrivateKeyBin`, `HTTPServer`). A
/// generated token has humps without a vowel (`Qx7vB2`: `Qx`, `v`, `B`...) almost always.
fn word_like(w: &str) -> bool {
    if !w.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return false;
    }
    // `m2m`, `b64`, `v1`: too short to tell; a longer piece has at most one lone letter
    // (`x25519`), where a generated one (`8c1f9a2e`) has many.
    if w.len() <= 4 {
        return true;
    }
    let b = w.as_bytes();
    let lone = (0..b.len())
        .filter(|&i| {
            b[i].is_ascii_alphabetic()
                && (i == 0 || b[i - 1].is_ascii_digit())
                && (i + 1 == b.len() || b[i + 1].is_ascii_digit())
        })
        .count();
    if lone > 1 {
        return false;
    }
    // One short hump without a vowel is an abbreviation (`Jwt`, `rpc`, `Ms`, `Html`, `oidc`
    // in `JwtTokenAudience`, `rpcOpts`, `deliveredAtMs`, `tokenizeHtmlFlow`, `oidcToken`) in a
    // name without digits; a generated piece has digits or several such humps
    // (`aAMJq0owE7is5arHn3S0` has one, `Hn`).
    let mut abbreviations = 0;
    let mut start = 0;
    for i in 1..=b.len() {
        let cut = i == b.len()
            || (b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase())
            || (b[i - 1].is_ascii_digit() != b[i].is_ascii_digit());
        if cut {
            let hump = &w[start..i];
            if !hump_is_word(hump) {
                if hump.len() > 4 || !hump.bytes().all(|c| c.is_ascii_alphabetic()) {
                    return false;
                }
                abbreviations += 1;
            }
            start = i;
        }
    }
    abbreviations == 0 || (abbreviations == 1 && !b.iter().any(u8::is_ascii_digit))
}

fn hump_is_word(h: &str) -> bool {
    let vowel = |c: u8| {
        matches!(
            c.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    };
    h.len() <= 1
        || h.bytes().all(|c| c.is_ascii_digit())
        || h.bytes().any(vowel)
        || (h.len() <= 4 && h.bytes().all(|c| c.is_ascii_uppercase()))
}
