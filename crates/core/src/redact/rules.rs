//! The rule set: one regular expression per way a secret is written, the capture group that
//! is the secret (the rest is context: a header name, a URL's user), and the check a match
//! must pass. Prefixed token formats are trusted as they are; loose shapes (a header value, an
//! env value, a password in a URL) must not be a placeholder, a path or a plain word.
//!
//! Every pattern also matches where JSON escapes stood (`may_hold` reads a raw line's escapes
//! before it looks): value classes stop at a backslash, a quote may be escaped (`\"`), and a
//! line start may be a `\n` escape. An env line is `NAME=value` with no space around `=` (as
//! shells and env files write it) anywhere a word starts; `name = "value"` in code is an
//! `assigned-secret`.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::entropy::{
    base64_decoded, cookie_holds_secret, letters_only, looks_generated, looks_random,
    plausible_env_value, plausible_password,
};
use super::Finding;

/// How a match is confirmed.
#[derive(Clone, Copy)]
enum Check {
    /// A fixed format: only a run of one repeated character (`ghp_xxxx…`) is refused.
    Format,
    /// An AWS key id: a fixed format, but not one ending in `EXAMPLE`, AWS's own convention for
    /// the ids its docs show (`AKIAIOSFODNN7EXAMPLE`; gitleaks allows them too).
    AwsKeyId,
    /// A PEM block: whole, its body must be as long as the shortest real key's
    /// (`-----BEGIN PRIVATE KEY-----\nxxx\n-----END...` is a doc's); cut short (no END line),
    /// it must hold a piece of a key (a BEGIN line alone is a string constant in code).
    PrivateKey,
    /// A signed or encrypted token: a fixed format, but not jwt.io's example token.
    Jwt,
    /// A password next to its name or in a URL: anything but a placeholder.
    Password,
    /// A password after `password =`: also not a bare identifier (code's `password = TODO`).
    ConnPassword,
    /// A value whose name says it is a secret: not a placeholder, path, number or word.
    EnvValue,
    /// A bare value: it must look random.
    Random,
    /// A provider's key of random letters: random, and holding both cases. OpenAI's `sk-`
    /// prefix also starts algorithm names written in lower case with digits
    /// (`sk-ecdsa-sha2-nistp256-cert-v01@openssh.com`, Go's x/crypto); every OpenAI key the
    /// scanners' tests hold mixes cases.
    RandomKey,
    /// A header's value: random, and not code reading a property (`Authorization:
    /// headers.Authorization` in JavaScript).
    HeaderValue,
    /// 40 characters of base64 near "secret" or a key id: both cases and a digit, as AWS
    /// writes them (a 40-character hex digest is not one, nor a setting's name of 40 letters:
    /// CDK's `@aws-cdk/aws-secretsmanager:useAttachedSecretResourcePolicyForSecret`).
    AwsSecret,
    /// A cookie header: some cookie's value must look random (`fig=newton` is a doctest's).
    Cookie,
    /// A value assigned to a secret's name: generated-looking, and not the name again.
    Assigned,
}

struct Rule {
    name: &'static str,
    pattern: &'static str,
    /// The capture group that is the secret (0: the whole match).
    group: usize,
    check: Check,
}

/// The rule names, in the order they win a tie.
pub const RULES: &[&str] = &[
    "private-key",
    "aws-access-key",
    "aws-secret-key",
    "github-token",
    "gitlab-token",
    "slack-token",
    "slack-webhook",
    "stripe-key",
    "anthropic-key",
    "openai-key",
    "google-api-key",
    "huggingface-token",
    "npm-token",
    "jwt",
    "url-password",
    "conn-password",
    "env-secret",
    "auth-header",
    "cookie",
    "assigned-secret",
];

/// Value characters of a header, env line or assignment: no quote, space or backslash (the
/// raw JSON form of a quote is `\"`).
const RULE_TABLE: &[Rule] = &[
    Rule {
        name: "private-key",
        pattern: r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]*)",
        group: 0,
        check: Check::PrivateKey,
    },
    Rule {
        name: "aws-access-key",
        // `A3T` + one character is the prefix of older key ids (gitleaks' rule carries it).
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b",
        group: 0,
        check: Check::AwsKeyId,
    },
    Rule {
        name: "aws-secret-key",
        pattern: r#"(?i:aws)[A-Za-z0-9_.-]{0,20}(?i:secret)[A-Za-z0-9_.-]{0,20}\\?['"]?\s*[:=]\s*\\?['"]?([A-Za-z0-9/+]{40})"#,
        group: 1,
        check: Check::AwsSecret,
    },
    // No prefix marks the secret half of an AWS key pair: 40 characters of base64, found by
    // the word "secret" right before it or by its key id a few lines above.
    Rule {
        name: "aws-secret-key",
        pattern: r#"(?:(?i:secret)(?:[ _-]?(?i:access))?(?:[ _-]?(?i:key))?[^A-Za-z0-9/+\n]{1,6}|\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b[^\n]{0,60}(?:\n[^\n]{0,60}){0,3}?[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        group: 1,
        check: Check::AwsSecret,
    },
    Rule {
        name: "github-token",
        // `ghs_<installation id>_<JWT>`: an app installation token in its longer form.
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255}|ghs_[0-9]{1,20}_[A-Za-z0-9_.-]{36,})\b",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "gitlab-token",
        pattern: r"\b(?:gl(?:pat|ptt|dt|rt|soat|cbt|ft|imt|agent|oas|ffct)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20})",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "slack-token",
        // `xapp-1-...`: an app-level token (Socket Mode), the only Slack token not `xox?-`.
        pattern: r"\b(?:xox[abposre]|xapp-[0-9])-[A-Za-z0-9-]{10,}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "slack-webhook",
        pattern: r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "stripe-key",
        pattern: r"\b(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})\b",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "anthropic-key",
        pattern: r"\bsk-ant-(?:[a-z]{2,8}[0-9]{2}-)?[A-Za-z0-9_-]{32,}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "openai-key",
        pattern: r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        group: 0,
        check: Check::RandomKey,
    },
    Rule {
        name: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "huggingface-token",
        pattern: r"\b(?:hf_|api_org_)[A-Za-z0-9]{34,}\b",
        group: 0,
        check: Check::Random,
    },
    Rule {
        name: "npm-token",
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        group: 0,
        check: Check::Random,
    },
    Rule {
        name: "jwt",
        // A signed token (JWS: header, claims, signature) or an encrypted one (JWE: header,
        // key, iv, ciphertext, tag; its second part is no JSON, so not `eyJ`).
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.(?:eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
        group: 0,
        check: Check::Jwt,
    },
    Rule {
        name: "url-password",
        // The password runs to the last `@` before the host (a MongoDB password may hold an
        // unescaped `@`); it cannot hold `/` or `:`, so the host's own part never joins it.
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@'"`<>\\]{1,64}:([^\s:/'"`<>\\]{1,128})@"#,
        group: 1,
        check: Check::Password,
    },
    Rule {
        name: "conn-password",
        pattern: r#"(?i:\bpassword|(?:^|;)\s*pwd)\s*=\s*\\?['"]?([^\s'"`;&()\[\]{}\\,]{1,128})"#,
        group: 1,
        check: Check::ConnPassword,
    },
    Rule {
        name: "env-secret",
        pattern: r#"(?m)(?:^|\\n|[\s"'`])(?:export[ \t]+)?([A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|AUTH_?KEY|CREDENTIALS?|_PAT\b)[A-Z0-9_]*)=\\?['"]?([^\s'"`\\#();,]{6,})"#,
        group: 2,
        check: Check::EnvValue,
    },
    Rule {
        name: "auth-header",
        pattern: r"(?i:\b(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|bot|digest|apikey|api-token)\s+)?|\b(?:x-api-key|api-key|api-token|x-api-token|x-auth-token|private-token|x-goog-api-key|x-access-token)\s*:\s*)([A-Za-z0-9._~+/=-]{10,})",
        group: 1,
        check: Check::HeaderValue,
    },
    Rule {
        name: "cookie",
        pattern: r#"(?i:\b(?:set-)?cookie\s*:\s*|--cookie\s+\\?['"]?)([^\r\n'"\\]*=[^\r\n'"\\]{6,})"#,
        group: 1,
        check: Check::Cookie,
    },
    // A value assigned to a name that says it is a secret, in any language's syntax
    // (`name = v`, `name: v`, `name := v`, `"name": "v"`, `name => v`, `-name v` is left
    // out): the value must look generated, so code (`token = next_token(src)`), words and
    // identifiers are left alone.
    Rule {
        name: "assigned-secret",
        pattern: r#"(?i:([A-Za-z0-9_.-]*(?:secret|token|passw(?:or)?d|\bpwd|api_?key|apikey|access_?key|auth_?key|private_?key|credentials?)[A-Za-z0-9_-]*))\\?['"]?[ \t]{0,4}(?::=|=>|==|[:=])[ \t]{0,4}(?:\\?['"`])?([A-Za-z0-9+/_~-][^\s'"`\\,;(){}<>\[\]&|]{11,200})"#,
        group: 2,
        check: Check::Assigned,
    },
];

struct Compiled {
    set: RegexSet,
    each: Vec<Regex>,
}

/// `\b` means an ASCII word boundary: a Unicode one keeps the fast automaton off any text
/// that is not ASCII (the detector then ran ~20x slower on such text).
fn ascii(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// The lazy DFA's cache. The combined set's automaton (Unicode classes under bounded
/// repeats) needs more than regex's default 2 MB, and without a lazy DFA every scan ran on
/// the PikeVM: ~1 MB/s on bundled JavaScript (issue 49's npm corpus).
const DFA_CACHE: usize = 64 << 20;

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<String> = RULE_TABLE.iter().map(|r| ascii(r.pattern)).collect();
    Compiled {
        set: RegexSetBuilder::new(&patterns)
            .dfa_size_limit(DFA_CACHE)
            .build()
            .expect("the secret rules compile"),
        each: patterns
            .iter()
            .map(|p| {
                RegexBuilder::new(p)
                    .dfa_size_limit(DFA_CACHE)
                    .build()
                    .expect("a secret rule compiles")
            })
            .collect(),
    }
});

pub(super) fn set() -> &'static RegexSet {
    &COMPILED.set
}

/// Gives `emit` each confirmed finding of rule `i` in `text`.
pub(super) fn findings(i: usize, text: &str, emit: &mut impl FnMut(Finding)) {
    let rule = &RULE_TABLE[i];
    // whether `text` is a test's source, read once and only for a match that asks
    let mut test_source: Option<bool> = None;
    for caps in COMPILED.each[i].captures_iter(text) {
        let Some(m) = caps.get(rule.group) else {
            continue;
        };
        let value = m.as_str();
        let mut span = (m.start(), m.end());
        let after = &text[m.end()..];
        // The name the value is assigned to, where the rule captures one.
        let name = if rule.group > 1 {
            caps.get(1).map_or("", |m| m.as_str())
        } else {
            ""
        };
        let ok = match rule.check {
            Check::Format => !one_char_repeated(value),
            Check::AwsKeyId => !one_char_repeated(value) && !value.ends_with("EXAMPLE"),
            Check::PrivateKey => match key_span(value) {
                Some((s, e)) => {
                    span = (m.start() + s, m.start() + e);
                    true
                }
                None => false,
            },
            Check::Jwt => {
                !one_char_repeated(value)
                    && !jwt_io_example(value)
                    && !names_a_continuation(name_assigned_before(&text[..m.start()]))
            }
            Check::Password => {
                let commented_doc_url =
                    documentation_host(after) && on_a_comment_line(text, m.start());
                plausible_password(value)
                    && !after.starts_with('(')
                    && !commented_doc_url
                    && !named_after_its_user(text, &m)
            }
            Check::EnvValue => {
                !names_what_is_not_the_secret(name)
                    && !names_a_client_id(name)
                    && !names_a_stand_in(name)
                    && plausible_env_value(value)
                    && !the_name_s_own_words(name, value)
                    && !reads_the_environment(text, &m, name)
                    && !indexes_or_calls(value, after)
                    && !named_after_its_user(text, &m)
            }
            Check::ConnPassword => {
                // a sentence's stops after a word (`password = None.. That's not allowed`); an
                // elision (`MyPa$$w0rd...`) keeps its dots, and with them its refusal
                let value = match value.trim_end_matches('.') {
                    v if !v.is_empty() && !value.ends_with("...") => v,
                    _ => value,
                };
                // `password==void 0`, `password===x`: a comparison, not an assignment
                !value.starts_with('=')
                    && !an_operator(value)
                    && plausible_password(value)
                    && !after.starts_with('(')
                    && !letters_only(value)
                    && !unquoted_property_read(text, &m)
                    && !commented_beside_a_documentation_url(text, m.start())
                    && !anonymous_ftp_password(text, &m)
                    && !named_after_its_user(text, &m)
            }
            Check::Random => looks_random(value),
            Check::RandomKey => looks_random(value) && mixes_cases(value),
            Check::HeaderValue => {
                // a sentence's stop after a word (`authorization: Immutable.` in a docstring)
                let value = value.trim_end_matches(['.', ',', ':', ';']);
                let scheme = caps.get(0).map_or("", |h| &text[h.start()..m.start()]);
                looks_random(value)
                    && !letters_only(value)
                    && !property_read(value)
                    && (!is_basic_scheme(scheme) || basic_credentials(value))
            }
            Check::AwsSecret => aws_secret(value),
            Check::Cookie => cookie_holds_secret(value),
            Check::Assigned => {
                let before = caps.get(1).map_or("", |n| &text[..n.start()]);
                !names_what_is_not_the_secret(name)
                    && !names_a_client_id(name)
                    && !names_a_stand_in(name)
                    && !names_a_document_s_token(name)
                    && !names_a_continuation(name)
                    && looks_generated(value)
                    && !the_name_s_own_words(name, value)
                    && !unquoted_property_read(text, &m)
                    && quoted_value_is_the_literal(text, &m)
                    && !code_follows(after)
                    && !declares_a_type(before)
                    && !jwt_io_example(value)
                    && !a_document_s_address(text, value)
            }
        };
        // a key, token or password a doc or a test made up for itself; asked only of a match
        // that passed every other check
        let ok = ok
            && !(a_made_up_kind(rule.check)
                && (in_an_example(text, span.0)
                    || in_a_stand_in_s_scope(text, span.0)
                    || *test_source.get_or_insert_with(|| a_test_s_source(text))));
        if ok {
            emit(Finding {
                rule: rule.name,
                start: span.0,
                end: span.1,
            });
        }
    }
}

/// The kinds a doc's example or a test makes up for itself: keys it signs with, tokens it signs
/// or encrypts and checks, passwords and secrets it sets and compares (the loose rules, `jwt`,
/// `private-key`). A provider's token (`ghp_`, `xoxb-`, `AKIA`, an AWS secret beside its key
/// id...) is issued by the provider, not made up, and is found in examples and tests as
/// anywhere.
fn a_made_up_kind(check: Check) -> bool {
    matches!(
        check,
        Check::PrivateKey
            | Check::Jwt
            | Check::Password
            | Check::ConnPassword
            | Check::EnvValue
            | Check::HeaderValue
            | Check::Cookie
            | Check::Assigned
    )
}

/// The text is a test's source, and says so in its language's own way: Go's (a function
/// taking `*testing.T`, `*testing.B` or `*testing.F`, or a `package x_test` or `package
/// testing` clause), Python's (a class deriving from a `TestCase`, or `import pytest`), Ruby's
/// (a class deriving from `Minitest::Test`, `Test::Unit::TestCase` or
/// `ActiveSupport::TestCase`, or `RSpec.describe`), PHP's and Java's (a class that `extends`
/// a `TestCase`, JUnit's `@Test` or `import org.junit`). Its keys, tokens and passwords are
/// the test's fixtures: a JWT library's tests sign and verify with a key written beside them
/// (golang-jwt, go-jose), a client's tests answer with a made-up database password (godo).
/// Read whole, once for a text, for a match that passed every other check.
///
/// Rust is left out: its unit tests stand in the file of the code they test (`#[cfg(test)]
/// mod tests`), so a `#[test]` says nothing of the rest of the file.
fn a_test_s_source(text: &str) -> bool {
    static TEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?m)^(?:func[ \t]+(?:\([^)\n]*\)[ \t]*)?[A-Za-z_][A-Za-z0-9_]*[ \t]*\([^)\n]*\*testing\.[TBF]\b",
            r"|package[ \t]+(?:[A-Za-z0-9_]+_test|testing)[ \t]*(?://.*)?$",
            r"|[ \t]*(?:(?:abstract|final|public)[ \t]+)*class[ \t]+[A-Za-z0-9_:]+[ \t]*(?:<[ \t]*(?:Minitest::Test|Test::Unit::TestCase|ActiveSupport::TestCase)\b|\((?:[A-Za-z0-9_]+\.)*[A-Za-z0-9_]*TestCase\)[ \t]*:|extends[ \t]+[A-Za-z0-9_\\]*TestCase\b)",
            r"|(?:import|from)[ \t]+pytest\b",
            r"|[ \t]*RSpec\.describe\b",
            r"|[ \t]*@Test\b",
            r"|import[ \t]+(?:static[ \t]+)?org\.junit\.)"
        ))
        .expect("the test source pattern compiles")
    });
    // quick refusals: none of the markers' words
    (text.contains("test") || text.contains("Test") || text.contains("RSpec"))
        && TEST.is_match(text)
}

/// Base64 characters a DER key needs at least: an Ed25519 key in PKCS#8, the smallest there is,
/// is 48 bytes, 64 characters.
const SHORTEST_KEY_BODY: usize = 64;

/// Code reading a property (`headers.Authorization`, `options?.apiKey`, `this.#token`,
/// `process.env.SECRET`): dotted pieces that are all identifiers, with JavaScript's optional
/// chaining (`?.`), private fields (`#`) and TypeScript's non-null `!`. A token with dots has
/// a piece that is none (`mF_9.B5f-4.1JqM`). The first piece may be an integer literal whose
/// methods are called (Ruby's `PASSWORD = 16.times.map { rand(256) }`).
fn property_read(v: &str) -> bool {
    let identifier = |p: &str| {
        let p = p.strip_suffix(['?', '!']).unwrap_or(p);
        let p = p.strip_prefix('#').unwrap_or(p);
        p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    };
    let mut pieces = v.split('.');
    let first = pieces.next().unwrap_or("");
    let integer = !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit());
    v.contains('.') && (identifier(first) || integer) && pieces.all(identifier)
}

/// A value after a secret's name that is code, not a literal: a property read with no quote
/// before it (`secret = process.env.SECRET`, `privateKey: this.opts.privateKey`). Whatever
/// its letters look like (`gcpKmsCfg` reads as no word), a name read is never the secret;
/// quoted, the same text is a literal and is judged as one.
fn unquoted_property_read(text: &str, value: &regex::Match) -> bool {
    !text[..value.start()].ends_with(['\'', '"', '`']) && property_read(value.as_str())
}

/// A quoted value is the whole literal: the quote that opened it closes it right after. A
/// literal that goes on past the value's characters is data or prose under a secret's name
/// (`tokenData:"-Y~RnOX#PXY$QYZ$]Z]..."`, a minified parser's table), not a token.
fn quoted_value_is_the_literal(text: &str, value: &regex::Match) -> bool {
    let Some(quote) = text[..value.start()]
        .chars()
        .last()
        .filter(|c| matches!(c, '\'' | '"' | '`'))
    else {
        return true;
    };
    let after = &text[value.end()..];
    after.starts_with(quote)
        || after
            .strip_prefix('\\')
            .is_some_and(|a| a.starts_with(quote))
}

/// Code reading a variable into an environment-style name (`const API_TOKEN=process.env.API_TOKEN`,
/// `SECRET=this.secret`): an unquoted property read that ends in the name or starts at
/// `process`, `import` or `this`. Narrower than [`unquoted_property_read`]: in a `.env` file
/// values go unquoted, and a token with dots whose pieces happen to be identifier-like
/// (`Xk3J9qLp.Zw8Rt2mN`) is a literal there.
fn reads_the_environment(text: &str, value: &regex::Match, name: &str) -> bool {
    let v = value.as_str();
    let last = v.rsplit('.').next().unwrap_or("");
    let first = v.split('.').next().unwrap_or("");
    unquoted_property_read(text, value)
        && (last.eq_ignore_ascii_case(name) || ["process", "import", "this"].contains(&first))
}

/// An env-style value that is code indexing or calling what it names (`TOKEN=os.environ[...]`,
/// `SECRET=System.getenv(...)`, a grep's listing of a script): dotted identifiers, then `[` or
/// `(`. A token holds no bracket, and its dotted pieces are not all identifiers.
fn indexes_or_calls(value: &str, after: &str) -> bool {
    let read = value.strip_suffix('[').unwrap_or(value);
    (read.len() < value.len() || after.starts_with('(')) && property_read(read)
}

/// Base64 characters of a key a block cut short must hold: a line's worth is what a
/// transcript shows of a key it cut; a BEGIN line with nothing after it
/// (`"-----BEGIN RSA PRIVATE KEY-----"` as a constant in a parser) holds none.
const CUT_KEY_BODY: usize = 16;

/// The part of a `private-key` match that holds a key, as offsets into it: a PEM block whose
/// body (between its BEGIN and END lines, `Proc-Type:`-style header lines left out) is long
/// enough to be a key, or to be a piece of one where the block is cut short.
///
/// A PEM body never holds another BEGIN line. A match that does runs from a header written as
/// a constant in code (Erlang's `<<"-----BEGIN RSA PRIVATE KEY-----">>`) over the code to a
/// later END constant; each BEGIN is then judged on its own: the last with the END (when it
/// is a private key's), every other one as a block cut short, whose body is what the rule's
/// cut-short branch would have read (base64, spaces and `\:,-`), not the code after it. The
/// span runs from the first piece that holds a key to the end of the last.
fn key_span(block: &str) -> Option<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut at = 0;
    while let Some(i) = block.get(at + 10..).and_then(|b| b.find("-----BEGIN")) {
        pieces.push((at, at + 10 + i));
        at += 10 + i;
    }
    pieces.push((at, block.len()));
    let last = pieces.len() - 1;
    let held: Vec<(usize, usize)> = pieces
        .into_iter()
        .enumerate()
        .filter_map(|(k, (s, e))| {
            let piece = &block[s..e];
            if k == last && piece[..pem_header_end(piece)].contains("PRIVATE KEY") {
                whole_block_holds_a_key(piece).then_some((s, e))
            } else {
                cut_short_key(piece).map(|len| (s, s + len))
            }
        })
        .collect();
    Some((held.first()?.0, held.last()?.1))
}

/// One BEGIN line and what follows it to its END line or, cut short, to the match's end. A
/// whole block whose body ends in an elision (`MIIEpQIBAAKCAQEAuyf...` or a line of dots
/// before its END line, Twilio's API docs) shows a key's shape, not a key: base64 holds no
/// `.`, and a key's start is its version and public modulus.
fn whole_block_holds_a_key(block: &str) -> bool {
    let ended = block.rfind("-----END");
    let end = ended.unwrap_or(block.len());
    let body = &block[pem_header_end(block).min(end)..end];
    if ended.is_some() {
        key_chars(body) >= SHORTEST_KEY_BODY && !ends_in_an_elision(body)
    } else {
        key_chars(body) >= CUT_KEY_BODY
    }
}

/// The body's last characters, line breaks (real or a JSON `\n` escape) and spaces aside, are
/// dots or `…`. A body elided in its middle (`MIIE...(cut)...Xk2=`) keeps what follows the
/// elision, a piece of the key's private part, and is still read as a key.
fn ends_in_an_elision(body: &str) -> bool {
    let mut rest = body.trim_end();
    while let Some(r) = rest.strip_suffix("\\n").or_else(|| rest.strip_suffix('\\')) {
        rest = r.trim_end();
    }
    rest.ends_with(['.', '\u{2026}'])
}

/// Where a PEM BEGIN line's closing dashes end: after the first `-----` past its opening ones.
fn pem_header_end(block: &str) -> usize {
    block
        .get(5..)
        .and_then(|b| b.find("-----"))
        .map_or(block.len(), |i| i + 10)
}

/// A BEGIN line and what follows it, read as a block cut short: its body is the run of the
/// characters the `private-key` rule's cut-short branch takes. The block's length to the
/// body's end, where the body holds a piece of a key.
fn cut_short_key(block: &str) -> Option<usize> {
    let start = pem_header_end(block);
    let body = &block[start..];
    let len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c.is_whitespace() || "+/=\\:,-".contains(c)))
        .unwrap_or(body.len());
    (key_chars(&body[..len]) >= CUT_KEY_BODY).then_some(start + len)
}

/// Base64 characters of a PEM body, its `Proc-Type:`-style header lines left out.
fn key_chars(body: &str) -> usize {
    body.replace("\\n", "\n")
        .lines()
        .filter(|l| !l.contains(':'))
        .map(|l| {
            l.bytes()
                .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
                .count()
        })
        .sum()
}

/// jwt.io's example token: its claims (`sub` 1234567890, `name` John Doe) under the signature
/// its page shows, made with the key the page shows (`your-256-bit-secret`). Docs and tests
/// copy it whole by the thousand (zod's tests twice in the `spare` body) and it opens nothing;
/// a token built from its claims with another signature (gitleaks' test case) is still one.
fn jwt_io_example(token: &str) -> bool {
    const SIGNATURE: &str = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    let mut parts = token.split('.');
    let (Some(_), Some(claims), Some(SIGNATURE), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Some(claims) = base64_decoded(claims) else {
        return false;
    };
    let Ok(claims) = serde_json::from_slice::<serde_json::Value>(&claims) else {
        return false;
    };
    claims["sub"] == "1234567890" && claims["name"] == "John Doe"
}

/// Last words of a name that make it name something about a secret rather than the secret:
/// an error code, a message, a form field, a rule (`COMPROMISED_PASSWORD_ERROR = '<uuid>'` in
/// Symfony, `password_pattern`, `TOKEN_LENGTH`), an address.
const ABOUT_A_SECRET: &[&str] = &[
    "error",
    "errors",
    "message",
    "msg",
    "label",
    "field",
    "param",
    "pattern",
    "regex",
    "format",
    "length",
    "len",
    "count",
    "limit",
    "ttl",
    "timeout",
    "lifetime",
    "expiry",
    "expires",
    "policy",
    "rule",
    "rules",
    "prompt",
    "hint",
    "placeholder",
    // where something is: a crypto token's contract address (`tokenAddress`, a market API's
    // answers), a server's (`TOKEN_SERVER_ADDR`); an address is public
    "address",
    "addresses",
    "addr",
];

/// The name's last word (after `_`, `-`, `.` or a lower-to-upper case change) is one of
/// [`ABOUT_A_SECRET`].
fn names_what_is_not_the_secret(name: &str) -> bool {
    let b = name.as_bytes();
    let start = (0..b.len())
        .rev()
        .find(|&i| {
            matches!(b[i], b'_' | b'-' | b'.')
                || (i > 0 && b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase())
        })
        .map_or(0, |i| if b[i].is_ascii_uppercase() { i } else { i + 1 });
    let last = name[start..].to_ascii_lowercase();
    ABOUT_A_SECRET.contains(&last.as_str())
}

/// The name's last words are `client id` (`DEFAULT_CREDENTIALS_DEFAULT_CLIENT_ID`,
/// `oauthClientId`, `TOKEN_CLIENTID`): an OAuth client's identifier, which is no secret (RFC
/// 6749, 2.2: it is shown to the user and sent in URLs; installed apps ship it). The name
/// matched for another of its words (`credentials`, `token`); the client's secret
/// (`CLIENT_SECRET`) is found.
fn names_a_client_id(name: &str) -> bool {
    match name_words(name).as_slice() {
        [.., client, id] if client == "client" && id == "id" => true,
        [.., last] => last == "clientid",
        [] => false,
    }
}

/// Words of a name that make what it holds a stand-in for a secret: a form's dummy value
/// (`$dummyPassword = '_web_form_5847...'`, shown in place of the stored password), a test's
/// fake one (`FAKE_API_KEY`, `mock_token`), a doc's sample.
const STAND_IN: &[&str] = &[
    "dummy",
    "fake",
    "mock",
    "bogus",
    "example",
    "sample",
    "placeholder",
];

/// Some word of the name (between `_`, `-`, `.`, or at a lower-to-upper case change) is one of
/// [`STAND_IN`].
fn names_a_stand_in(name: &str) -> bool {
    name_words(name)
        .iter()
        .any(|w| STAND_IN.contains(&w.as_str()))
}

/// Words that name a document, a file or a folder of an online store (a docs suite's `docx`,
/// `base`, `wiki`; a drive's `file`, `folder`).
const DOCUMENT: &[&str] = &[
    "doc",
    "docs",
    "docx",
    "document",
    "documents",
    "file",
    "files",
    "folder",
    "folders",
    "sheet",
    "sheets",
    "spreadsheet",
    "spreadsheets",
    "wiki",
    "base",
    "bitable",
];

/// The name is a document's token (`doc_token`, `docToken`, `file_token`, `folderToken`,
/// `feishuDocToken`): its last word is `token` and the word before it names a document, so
/// the value names that document in the store's API (Feishu's and Lark's docs, drive and
/// wiki call a document's id its token). An `app_token`, a `node_token` or a bare `token`
/// is not one of these.
fn names_a_document_s_token(name: &str) -> bool {
    a_token_after(&name_words(name), DOCUMENT)
}

/// The name's last word is `token` and the word before it one of `kinds` (`docToken`,
/// `nextPageToken`): a token of that kind, which is not a credential.
fn a_token_after(words: &[String], kinds: &[&str]) -> bool {
    match words {
        [.., kind, last] => {
            matches!(last.as_str(), "token" | "tokens") && kinds.contains(&kind.as_str())
        }
        _ => false,
    }
}

/// The text also holds the value as a document's address: the segment right after a
/// document's word in an `http(s)://` URL's path (`https://host/docx/VALUE`,
/// `https://host/base/VALUE?table=...`), so the value is that document's id (a docs suite's
/// listing gives each file's `token` beside its `url`). A webhook's or a bot's secret in a
/// URL follows an id or a `bot` prefix, not a document's word, and is still found.
fn a_document_s_address(text: &str, value: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(value).any(|(i, _)| {
        let end = i + value.len();
        if b.get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        {
            return false;
        }
        let Some(path) = text[..i].strip_suffix('/') else {
            return false;
        };
        let seg_start = path.rfind('/').map_or(0, |j| j + 1);
        if !DOCUMENT.contains(&path[seg_start..].to_ascii_lowercase().as_str()) {
            return false;
        }
        // the URL's start, with nothing but URL characters between it and the value
        let line = &path[..seg_start];
        let from = line
            .rfind(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '(' | '['))
            .map_or(0, |j| j + 1);
        let url = &line[from..];
        let lower = url.to_ascii_lowercase();
        (lower.starts_with("https://") || lower.starts_with("http://"))
            && url[url.find("://").unwrap_or(0) + 3..].contains('/')
    })
}

/// The name is a pagination cursor's (`cursor`, `nextCursor`, `pageToken`, `nextPageToken`,
/// `next_token`, `continuationToken`): its value, opaque or a signed JWT, is where the next
/// page of answers starts; the request that sends it back carries its own credential.
fn names_a_continuation(name: &str) -> bool {
    let words = name_words(name);
    matches!(words.last().map(String::as_str), Some("cursor" | "cursors"))
        || a_token_after(&words, &["page", "next", "continuation", "cursor"])
}

/// The name a value at the end of `before` is assigned to (`"cursor": "`, `cursor=`,
/// `page_token: '`), or `""` where no `=` or `:` stands right before it.
fn name_assigned_before(before: &str) -> &str {
    let b = before
        .trim_end_matches(['"', '\'', '`', '\\'])
        .trim_end_matches([' ', '\t']);
    let Some(b) = b.strip_suffix(['=', ':']) else {
        return "";
    };
    let b = b
        .trim_end_matches([' ', '\t'])
        .trim_end_matches(['"', '\'', '`', '\\']);
    let start = b
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &b[start..]
}

/// The words of a name, in lower case: between `_`, `-`, `.`, or at a lower-to-upper case
/// change.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.') || (last_lower && c.is_ascii_uppercase()) {
            words.push(std::mem::take(&mut word));
        }
        if !matches!(c, '_' | '-' | '.') {
            word.push(c.to_ascii_lowercase());
        }
        last_lower = c.is_ascii_lowercase();
    }
    words.push(word);
    words
}

/// The value is made of its name's own words, the name again (`TOKEN=TOKEN`) or pieces of it
/// (`AWS_SECRET_ACCESS_KEY=SECRET`, aws-sdk-go's docs: `AWS_SECRET_KEY=SECRET=SECRET`): it
/// names the slot, as a placeholder does. Each run of letters and digits of the value must be
/// one of the name's words (or the whole name).
fn the_name_s_own_words(name: &str, value: &str) -> bool {
    if value.eq_ignore_ascii_case(name) {
        return true;
    }
    let words = name_words(name);
    let mut runs = value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|r| !r.is_empty())
        .peekable();
    runs.peek().is_some()
        && runs.all(|r| {
            r.eq_ignore_ascii_case(name) || words.iter().any(|w| r.eq_ignore_ascii_case(w))
        })
}

/// The header's scheme is `Basic` (`Authorization: Basic `): its value is then
/// base64 of `user:password` (RFC 7617).
fn is_basic_scheme(header: &str) -> bool {
    let h = header.trim_end().as_bytes();
    h.len() >= 5 && h[h.len() - 5..].eq_ignore_ascii_case(b"basic")
}

/// A Basic credential decodes to `user:password`: a `:` after a user of printable ASCII
/// (possibly none). A value that decodes to no such pair opens nothing (a javadoc's
/// `Authorization: Basic QWadhgWERghghWERfdfQ==` is 15 bytes of noise); the password itself
/// may be any bytes.
fn basic_credentials(v: &str) -> bool {
    use base64::Engine;
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(v) else {
        return false;
    };
    let Some(colon) = bytes.iter().position(|&b| b == b':') else {
        return false;
    };
    let user = &bytes[..colon];
    !user.starts_with(b"{") && user.iter().all(|b| b.is_ascii_graphic() && *b != b'"')
}

/// The match at `at` is on a comment or doc line: the line (a real newline or a JSON `\n`
/// escape starts one) begins, after its indent, with `#`, `//`, `/*`, `*`, `--` or `;`, or
/// it stands inside a block of Perl's POD (or Ruby's `=begin`), whose lines carry no marker.
fn on_a_comment_line(text: &str, at: usize) -> bool {
    on_a_marked_comment_line(text, at) || in_pod(&text[..at])
}

/// POD's commands (`=head1`, `=item`, `=pod`, `=over`, `=begin`...) at a line's start, the
/// last before the text's end: the text ends inside POD unless that command closes it
/// (`=cut`, or Ruby's `=end`).
///
/// Only the last [`LOOK_BACK`] bytes before the match are read (a POD command further back
/// does not count): a match in a huge text would otherwise scan the whole text once per match.
fn in_pod(before: &str) -> bool {
    static POD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)(?:^|\\n)=([a-z]+[0-9]?)\b").expect("the POD pattern compiles")
    });
    let look = last_bytes(before, LOOK_BACK);
    let from = before.len() - look.len();
    // the look's first line is a whole line only if a line break stands right before it
    let whole_first_line = from == 0 || before[..from].ends_with('\n');
    let before = look;
    // a quick refusal: no line of the look starts with `=`
    if !before.starts_with('=') && !before.contains("\n=") && !before.contains("\\n=") {
        return false;
    }
    POD.captures_iter(before)
        .filter(|c| {
            whole_first_line
                || c.get(0)
                    .is_some_and(|m| m.start() > 0 || !m.as_str().starts_with('='))
        })
        .last()
        .is_some_and(|c| !matches!(&c[1], "cut" | "end"))
}

fn on_a_marked_comment_line(text: &str, at: usize) -> bool {
    let whole = &text[..at];
    let before = last_bytes(whole, LOOK_BACK);
    // A line begun further back than the look is no comment line.
    let start = match line_start(before) {
        Some(i) => i,
        None if before.len() == whole.len() => 0,
        None => return false,
    };
    let line = before[start..].trim_start();
    ["#", "//", "/*", "*", "--", ";"]
        .iter()
        .any(|m| line.starts_with(m))
}

/// The text after a URL's password (`@host...`) names a host reserved for documentation
/// (RFC 2606 and 6761): `example.com`, `.net`, `.org` and their subdomains, or a name under
/// `.example`, `.test` or `.invalid`.
fn documentation_host(after: &str) -> bool {
    let Some(rest) = after.strip_prefix('@') else {
        return false;
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    documentation_host_name(&rest[..end])
}

fn documentation_host_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    ["example.com", "example.net", "example.org"]
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        || [".example", ".test", ".invalid"]
            .iter()
            .any(|t| host.ends_with(t))
}

/// A URL for a host reserved for documentation stands on the line at `at` or on one of the
/// four lines before it (real newlines): a doc's example (`# uri = URI.parse("http://john:S3nsit1ve@my.example.com")`
/// above `# uri.password = "V3ry_S3nsit1ve"`).
fn documentation_url_near(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], LOOK_BACK);
    let mut start = before.len();
    for _ in 0..5 {
        match before[..start].rfind('\n') {
            Some(i) => start = i,
            None => {
                start = 0;
                break;
            }
        }
    }
    let after = first_bytes(&text[at..], LOOK_BACK);
    let window = &text[at - before.len() + start..at + after.find('\n').unwrap_or(after.len())];
    window.match_indices("://").any(|(i, _)| {
        let rest = &window[i + 3..];
        let authority = &rest[..rest
            .find(|c: char| c.is_whitespace() || "/?#'\"`<>()\\".contains(c))
            .unwrap_or(rest.len())];
        let host = authority.rsplit('@').next().unwrap_or("");
        let host = host.split(':').next().unwrap_or("");
        documentation_host_name(host)
    })
}

/// Where the last line of `before` starts: after its last line break, a real newline or a JSON
/// `\n` escape (a transcript's text may hold either); `None` when it has none.
fn line_start(before: &str) -> Option<usize> {
    [
        before.rfind('\n').map(|i| i + 1),
        before.rfind("\\n").map(|i| i + 2),
    ]
    .into_iter()
    .flatten()
    .max()
}

/// How far around a match the line checks look: a match in a huge text with no line breaks
/// near it would otherwise scan the whole text once per match.
const LOOK_BACK: usize = 4096;

/// The last `n` bytes of `s` or fewer, from a character's start.
fn last_bytes(s: &str, n: usize) -> &str {
    let mut i = s.len().saturating_sub(n);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// The first `n` bytes of `s` or fewer, to a character's end.
fn first_bytes(s: &str, n: usize) -> &str {
    let mut i = n.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// A doc's example password: on a comment line, with a documentation host's URL near it.
fn commented_beside_a_documentation_url(text: &str, at: usize) -> bool {
    documentation_url_near(text, at) && on_a_comment_line(text, at)
}

/// The match at `at` is part of a documentation example, whose values are made up to show a
/// shape: a Python doctest ([`in_a_doctest`]), a string literal assigned to a name for
/// examples ([`in_an_examples_string`], Ansible's `EXAMPLES = r'''...'''`), the value of
/// a JSON `"example"`/`"examples"` key ([`in_a_json_example`], AWS's service models, OpenAPI),
/// a reStructuredText literal block ([`in_a_literal_block`], docstrings quoting an RFC's
/// HTTP exchanges), the query of a documentation host's URL, a YAML `example:` key's value
/// ([`under_a_yaml_example_key`], OpenAPI) or a doc comment's `@example` ([`in_a_doc_comment_example`],
/// JSDoc).
/// Only the kinds made up for a doc ask ([`a_made_up_kind`]): a token in a provider's format
/// is found wherever it stands.
fn in_an_example(text: &str, at: usize) -> bool {
    in_a_doctest(text, at)
        || in_an_examples_string(text, at)
        || in_a_json_example(text, at)
        || in_a_literal_block(text, at)
        || in_a_documentation_url_query(text, at)
        || under_a_yaml_example_key(text, at)
        || in_a_doc_comment_example(text, at)
}

/// The lines that enclose the line of `at` by indentation, nearest first: going back over real
/// lines (at most [`EXAMPLE_LOOK_BACK`]), each line indented less than the last one taken,
/// from the indent of the match's own line, down to one at the margin. Blank lines and a
/// line cut by the look are skipped.
fn enclosing_lines(text: &str, at: usize) -> Vec<&str> {
    let before = last_bytes(&text[..at], EXAMPLE_LOOK_BACK);
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let mut lines: Vec<&str> = before.split('\n').collect();
    let own = lines.pop().unwrap_or("");
    if before.len() != at && !lines.is_empty() {
        lines.remove(0);
    }
    let mut block = indent(own);
    let mut out = Vec::new();
    for line in lines.into_iter().rev() {
        if block == 0 {
            break;
        }
        if line.trim().is_empty() || indent(line) >= block {
            continue;
        }
        block = indent(line);
        out.push(line);
    }
    out
}

/// The match stands in the value of a YAML key `example:` or `examples:` (an enclosing line
/// by indentation is that key): OpenAPI's documents show each schema's example so (Docker's
/// `swagger.yaml`: `example:` over a swarm's `JoinToken: "SWMTKN-1-..."`).
fn under_a_yaml_example_key(text: &str, at: usize) -> bool {
    // a quick refusal
    if !last_bytes(&text[..at], EXAMPLE_LOOK_BACK).contains("example") {
        return false;
    }
    enclosing_lines(text, at).iter().any(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix("- ").unwrap_or(l).trim_start();
        ["example:", "examples:"].iter().any(|k| {
            l.strip_prefix(k)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '|', '>']))
        })
    })
}

/// The match stands in a doc comment (`/** ... */`, not closed before it) under its `@example`
/// tag: the last line of the comment before the match that starts with a tag (after its `*`)
/// is `@example` (JSDoc and TSDoc: `jose`'s `@example Usage` over a token it verifies).
fn in_a_doc_comment_example(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], EXAMPLE_LOOK_BACK);
    let Some(open) = before.rfind("/**") else {
        return false;
    };
    let comment = &before[open..];
    if comment.contains("*/") {
        return false;
    }
    comment
        .lines()
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches('*').trim_start();
            l.starts_with('@').then_some(l)
        })
        .next_back()
        .is_some_and(|tag| {
            tag.strip_prefix("@example")
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
        })
}

/// The match stands where code says its values are stand-ins: in a class named for one (the
/// nearest enclosing class by indentation, `class Mock` in a fog provider's mocked requests,
/// `class FakeClient`), or under a comment line that names one (`// Fake token to use.`
/// right above the line). The words are [`STAND_IN`]'s, as for a value's own name.
fn in_a_stand_in_s_scope(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], LOOK_BACK);
    // the line right above the match's line, whole (not cut by the look)
    let lines: Vec<&str> = before.rsplit('\n').take(3).collect();
    let above = match lines.as_slice() {
        [_, above, _] => Some(*above),
        [_, above] if before.len() == at => Some(*above),
        _ => None,
    };
    if let Some(above) = above {
        let line = above.trim_start();
        let comment = ["//", "#", "/*", "*", "--"]
            .iter()
            .any(|m| line.starts_with(m));
        // words between spaces, their stops trimmed (a host's `example.com` is no word)
        if comment
            && line.split_whitespace().any(|w| {
                let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
                STAND_IN.contains(&w.to_ascii_lowercase().as_str())
            })
        {
            return true;
        }
    }
    let class = enclosing_lines(text, at).into_iter().find_map(|l| {
        let mut words = l.split_whitespace();
        loop {
            match words.next()? {
                "public" | "private" | "protected" | "static" | "final" | "abstract" | "export"
                | "default" | "internal" | "sealed" | "open" | "data" => continue,
                "class" => return words.next(),
                _ => return None,
            }
        }
    });
    class.is_some_and(|c| {
        let name = c
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == ':'))
            .next()
            .unwrap_or("");
        names_a_stand_in(name.rsplit("::").next().unwrap_or(name))
    })
}

/// The match stands in the query or fragment of a URL for a host reserved for documentation
/// (`http://www.example.com/path?access_token=...`, `http://example.com/cb#access_token=...`):
/// the URL runs, with no space or quote in it, from its `://` on the match's line to the
/// match, and a `?` or `#` comes after its host.
fn in_a_documentation_url_query(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], LOOK_BACK);
    let line = &before[line_start(before).unwrap_or(0)..];
    let Some(i) = line.rfind("://") else {
        return false;
    };
    let url = &line[i + 3..];
    if url.contains(|c: char| c.is_whitespace() || "'\"`<>\\".contains(c)) {
        return false;
    }
    let Some(end) = url.find(['/', '?', '#']) else {
        return false;
    };
    let host = url[..end].rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    url[end..].contains(['?', '#']) && documentation_host_name(host)
}

/// How far back the example checks look for the start of an examples block: the longest of
/// Ansible's 8,019 module `EXAMPLES` strings (the `eighth` body's) is 64,684 bytes; botocore's
/// largest examples files run to 148 KB, and a value further than this into one is judged as
/// any other. The check runs only on a match that passed every other one.
const EXAMPLE_LOOK_BACK: usize = 64 << 10;

/// The match stands in a reStructuredText literal block: an indented block after a paragraph
/// that ends with `::` (`For example::`) or after a code directive (`.. code-block:: http`),
/// as Python docstrings show an RFC's requests and responses (`Authorization: Bearer
/// mF_9.B5f-4.1JqM`, `"access_token":"2YotnFZFEjr1zCsicMWpAA"` in OAuth libraries). Read back
/// over real lines from the match's: blank lines and lines indented as far as the block go
/// by; the first line indented less must be the opener, or it is the block's own less
/// indented line (`Authorization: OAuth realm=...` above its continued parameters) and the
/// look goes on from its indent. A line at the margin that opens nothing ends the look.
///
/// A paragraph that names an example opens such a block too, as Go's doc comments and
/// Google-style docstrings write one: a line that starts with `Example` (`Example to Create a
/// Token` over Gophercloud's indented code, `Examples:`) or ends with `example:` (`For
/// example:`, `Usage example:`).
fn in_a_literal_block(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], EXAMPLE_LOOK_BACK);
    // a quick refusal
    if !before.contains("::") && !before.contains("xample") {
        return false;
    }
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let opens = |l: &str| {
        let l = l.trim();
        if l.starts_with("..") {
            [".. code-block::", ".. code::", ".. sourcecode::"]
                .iter()
                .any(|d| l.starts_with(d))
        } else {
            let lower = l.to_ascii_lowercase();
            l.ends_with("::")
                || l.strip_prefix("Example")
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':', 's']))
                || lower.ends_with("example:")
                || lower.ends_with("examples:")
        }
    };
    let mut lines: Vec<&str> = before.split('\n').collect();
    let own = lines.pop().unwrap_or("");
    // a line cut by the look is no whole line
    if before.len() != at && !lines.is_empty() {
        lines.remove(0);
    }
    let mut block = indent(own);
    for line in lines.into_iter().rev() {
        if block == 0 {
            return false;
        }
        if line.trim().is_empty() || indent(line) >= block {
            continue;
        }
        if opens(line) {
            return true;
        }
        block = indent(line);
    }
    false
}

/// A doctest: the match's line, or a line above it with no blank line between (a doctest's
/// expected output ends at a blank line), starts with `>>>` (Python's prompt, which docs and
/// docstrings show before an example's code and its output).
fn in_a_doctest(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], LOOK_BACK);
    // a quick refusal
    if !before.contains(">>>") {
        return false;
    }
    let whole = before.len() == at;
    let mut lines = before.split('\n').rev();
    // the match's own line, up to the match
    let first = lines.next().unwrap_or("");
    if first.trim_start().starts_with(">>>") {
        return true;
    }
    let mut rest: Vec<&str> = lines.collect();
    // a line cut by the look is no whole line
    if !whole && !rest.is_empty() {
        rest.pop();
    }
    for line in rest {
        let line = line.trim();
        if line.is_empty() {
            return false;
        }
        if line.starts_with(">>>") {
            return true;
        }
    }
    false
}

/// A string literal assigned to a name for examples (`EXAMPLES = r'''`, `USAGE_EXAMPLE =
/// """`, `const examples = \``: a name whose last word is `example` or `examples`) or for a
/// stand-in (one of its words is one of [`STAND_IN`]'s: go-gitlab's `exampleDetailResponse =
/// \``, `fakeBody = """`) opens on a line before the match and is not closed before it.
/// Ansible's modules keep their docs' examples so, as YAML in a Python string; client
/// libraries keep their tests' made-up responses so.
fn in_an_examples_string(text: &str, at: usize) -> bool {
    static OPENER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^[ \t]*(?:(?:export[ \t]+)?(?:const|let|var)[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*[rRuUbBfF]{0,2}('''|"""|`)"#)
            .expect("the examples opener compiles")
    });
    let before = last_bytes(&text[..at], EXAMPLE_LOOK_BACK);
    // a quick refusal: no opening quote of a multi-line string
    if !before.contains('`') && !before.contains("'''") && !before.contains("\"\"\"") {
        return false;
    }
    let Some(open) = OPENER.captures_iter(before).last() else {
        return false;
    };
    let (Some(name), Some(quote)) = (open.get(1), open.get(2)) else {
        return false;
    };
    let last_word = name.as_str().rsplit('_').next().unwrap_or("");
    let examples = last_word.eq_ignore_ascii_case("example")
        || last_word.eq_ignore_ascii_case("examples")
        || names_a_stand_in(name.as_str());
    examples && !before[quote.end()..].contains(quote.as_str())
}

/// The match stands inside the value of a JSON key `"example"` or `"examples"` (an object, an
/// array or a string not closed before it): AWS's service models keep their docs' examples so
/// (`"examples": {"CreateIPSet": [{"input": {"ChangeToken": "..."}}]}`), as OpenAPI does.
/// The look starts at most [`EXAMPLE_LOOK_BACK`] before the match, at a line's start.
fn in_a_json_example(text: &str, at: usize) -> bool {
    let before = last_bytes(&text[..at], EXAMPLE_LOOK_BACK);
    // a quick refusal
    if !before.contains("\"example") {
        return false;
    }
    let before = if before.len() == at {
        before
    } else {
        before.find('\n').map_or("", |i| &before[i + 1..])
    };
    // `true` for each bracket still open that opened an example's value
    let mut open: Vec<bool> = Vec::new();
    // the string being read, if any: where it started, and whether it is an example's value
    let mut string: Option<(usize, bool)> = None;
    let mut escaped = false;
    // the last string read was an example's key (`key`), and a `:` followed it (`value_next`)
    let mut key = false;
    let mut value_next = false;
    for (i, c) in before.char_indices() {
        if let Some((s, _)) = string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                key = matches!(&before[s + 1..i], "example" | "examples");
                string = None;
            }
            continue;
        }
        match c {
            '"' => {
                string = Some((i, value_next));
                value_next = false;
            }
            ':' => {
                value_next = key;
                key = false;
            }
            '{' | '[' => {
                open.push(value_next);
                value_next = false;
                key = false;
            }
            '}' | ']' => {
                open.pop();
                value_next = false;
                key = false;
            }
            c if c.is_whitespace() => {}
            _ => {
                value_next = false;
                key = false;
            }
        }
    }
    string.is_some_and(|(_, example)| example) || open.contains(&true)
}

/// The password is the name of the user (or database) it goes with, written within three lines
/// of it: `dbname = "icingaweb2"`, `username = "icingaweb2"` above `password = "icingaweb2"` in a
/// doc's config, `PGPASSWORD=icingaweb2` above `psql -U icingaweb2`, or `://app2:app2@` in a
/// URL. A doc's setup names everything after the application; a password someone chose is not
/// its own user's name. Only asked of a value that passed every other check.
fn named_after_its_user(text: &str, value: &regex::Match) -> bool {
    let (around, from) = lines_around(text, value.start(), value.end(), 3);
    let Ok(user) = Regex::new(&format!(
        r#"(?im)(?:\b(?:user(?:_?name)?|login|db_?name|database)['"]?\s*[:=]\s*['"]?|(?:^|\s)(?:-[uU][ \t]*|--user(?:name)?[= ])['"]?|://)((?-i:{}))(?:[^A-Za-z0-9_-]|$)"#,
        regex::escape(value.as_str())
    )) else {
        return false;
    };
    // the value itself is no user's name (`://user:p4ss@` reads as `user: p4ss`)
    let named = user
        .captures_iter(around)
        .any(|c| c.get(1).is_some_and(|u| from + u.start() != value.start()));
    named
}

/// The text from `n` lines before the line of `start` to `n` lines after the line of `end`
/// (real newlines), each side at most [`LOOK_BACK`] bytes, and where it starts in `text`.
fn lines_around(text: &str, start: usize, end: usize, n: usize) -> (&str, usize) {
    let before = last_bytes(&text[..start], LOOK_BACK);
    let after = first_bytes(&text[end..], LOOK_BACK);
    let mut from = before.len();
    for _ in 0..=n {
        match before[..from].rfind('\n') {
            Some(i) => from = i,
            None => {
                from = 0;
                break;
            }
        }
    }
    let mut to = 0;
    for _ in 0..=n {
        match after[to..].find('\n') {
            Some(i) => to += i + 1,
            None => {
                to = after.len();
                break;
            }
        }
    }
    let from = start - before.len() + from;
    (&text[from..end + to], from)
}

/// An operator read as a value (Erlang's `Password =:= X` and `Password =/= ignore` leave
/// `:=` and `/=` after `password =`): a few signs and no letter or digit.
fn an_operator(v: &str) -> bool {
    v.len() <= 3 && v.chars().all(|c| "=:/<>!~|&+-*^?.".contains(c))
}

/// An anonymous FTP login's password (RFC 1635: the user's email address, by convention):
/// an email address after `password`, with `anonymous` on the same line (Twisted's
/// `username="anonymous", password="twisted@twistedmatrix.com"`).
fn anonymous_ftp_password(text: &str, value: &regex::Match) -> bool {
    let v = value.as_str();
    let email = v.split_once('@').is_some_and(|(user, host)| {
        !user.is_empty()
            && host.contains('.')
            && !host.starts_with('.')
            && !host.ends_with('.')
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
    });
    if !email {
        return false;
    }
    // The line around the value, as far as the other line checks look.
    let before = last_bytes(&text[..value.start()], LOOK_BACK);
    let after = first_bytes(&text[value.end()..], LOOK_BACK);
    let start = line_start(before).unwrap_or(0);
    let end = [after.find('\n'), after.find("\\n")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(after.len());
    text[value.start() - before.len() + start..value.end() + end]
        .to_ascii_lowercase()
        .contains("anonymous")
}

fn aws_secret(v: &str) -> bool {
    mixes_cases(v) && v.bytes().any(|b| b.is_ascii_digit()) && looks_random(v)
}

/// Upper- and lower-case ASCII letters both stand in `v`.
fn mixes_cases(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_uppercase()) && v.bytes().any(|b| b.is_ascii_lowercase())
}

/// The value is the start of an expression (`secret = base64.b64encode(...)`, `token =
/// Token::new(...)`) or a type with generics (`type TokenIter = RcVecIntoIter<TokenTree>`),
/// not a literal.
fn code_follows(after: &str) -> bool {
    after.starts_with('(')
        || after.starts_with("::")
        || after.starts_with('[')
        || after.starts_with('<')
}

/// The name is a type being declared (`type TokenTreeIter = ...` in Rust, TypeScript, Go,
/// Swift): its value is a type, never a secret, whatever its letters look like.
fn declares_a_type(before: &str) -> bool {
    let before = before.trim_end_matches([' ', '\t']);
    before
        .strip_suffix("type")
        .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// `ghp_xxxxxxxx…`: a format's prefix and a run of one character (its last 16 characters,
/// separators aside, all the same). A run of counting characters is not refused here:
/// noseyparker's tests hold `A3T0ABCDEFGHIJKLMNOP` as an AWS key id to find.
fn one_char_repeated(s: &str) -> bool {
    let tail: Vec<char> = s.chars().filter(|c| !matches!(c, '_' | '-')).collect();
    let tail = &tail[tail.len().saturating_sub(16)..];
    tail.iter().all(|&c| c == tail[0])
}

#[cfg(test)]
pub(super) fn rule_names_in_table() -> Vec<&'static str> {
    RULE_TABLE.iter().map(|r| r.name).collect()
}
