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

use regex::{Regex, RegexSet};

use super::entropy::{looks_random, not_a_placeholder, plausible_env_value};
use super::Finding;

/// How a match is confirmed.
#[derive(Clone, Copy)]
enum Check {
    /// A fixed format: only a run of one repeated character (`ghp_xxxx…`) is refused.
    Format,
    /// A password next to its name or in a URL: anything but a placeholder.
    Password,
    /// A value whose name says it is a secret: not a placeholder, path, number or word.
    EnvValue,
    /// A bare value (a header's, an assignment's): it must look random.
    Random,
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
        check: Check::Format,
    },
    Rule {
        name: "aws-access-key",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "aws-secret-key",
        pattern: r#"(?i:aws)[A-Za-z0-9_.-]{0,20}(?i:secret)[A-Za-z0-9_.-]{0,20}\\?['"]?\s*[:=]\s*\\?['"]?([A-Za-z0-9/+]{40})"#,
        group: 1,
        check: Check::Random,
    },
    Rule {
        name: "github-token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255})\b",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "gitlab-token",
        pattern: r"\bgl(?:pat|ptt|dt|rt|soat|cbt)-[A-Za-z0-9_-]{20,}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "slack-token",
        pattern: r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "slack-webhook",
        pattern: r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "stripe-key",
        pattern: r"\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})\b",
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
        check: Check::Random,
    },
    Rule {
        name: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "huggingface-token",
        pattern: r"\bhf_[A-Za-z0-9]{34,}\b",
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
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        group: 0,
        check: Check::Format,
    },
    Rule {
        name: "url-password",
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@'"<>\\]{1,64}:([^\s:/@'"<>\\]{1,128})@"#,
        group: 1,
        check: Check::Password,
    },
    Rule {
        name: "conn-password",
        pattern: r#"(?i:\bpassword|(?:^|;)\s*pwd)\s*=\s*\\?['"]?([^\s'";&()\[\]{}\\]{1,128})"#,
        group: 1,
        check: Check::Password,
    },
    Rule {
        name: "env-secret",
        pattern: r#"(?m)(?:^|\\n|[\s"'`])(?:export[ \t]+)?(?i:[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|AUTH_?KEY|CREDENTIALS?|_PAT)[A-Z0-9_]*)=\\?['"]?([^\s'"\\#();]{6,})"#,
        group: 1,
        check: Check::EnvValue,
    },
    Rule {
        name: "auth-header",
        pattern: r"(?i:\b(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|bot|digest|apikey)\s+)?|\b(?:x-api-key|api-key|x-auth-token|private-token|x-goog-api-key|x-access-token)\s*:\s*)([A-Za-z0-9._~+/=-]{10,})",
        group: 1,
        check: Check::Random,
    },
    Rule {
        name: "cookie",
        pattern: r#"(?i:\b(?:set-)?cookie\s*:\s*|--cookie\s+\\?['"]?)([^\r\n'"\\]*=[^\r\n'"\\]{6,})"#,
        group: 1,
        check: Check::Password,
    },
    Rule {
        name: "assigned-secret",
        pattern: r#"(?i:\b(?:api_?key|secret_?key|client_?secret|access_?token|auth_?token|refresh_?token|private_?key))\\?['"]?\s*[:=]\s*\\?['"]([^\s'"\\]{12,})\\?['"]"#,
        group: 1,
        check: Check::Random,
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

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<String> = RULE_TABLE.iter().map(|r| ascii(r.pattern)).collect();
    Compiled {
        set: RegexSet::new(&patterns).expect("the secret rules compile"),
        each: patterns
            .iter()
            .map(|p| Regex::new(p).expect("a secret rule compiles"))
            .collect(),
    }
});

pub(super) fn set() -> &'static RegexSet {
    &COMPILED.set
}

/// Gives `emit` each confirmed finding of rule `i` in `text`.
pub(super) fn findings(i: usize, text: &str, emit: &mut impl FnMut(Finding)) {
    let rule = &RULE_TABLE[i];
    for caps in COMPILED.each[i].captures_iter(text) {
        let Some(m) = caps.get(rule.group) else {
            continue;
        };
        let value = m.as_str();
        let after = &text[m.end()..];
        let ok = match rule.check {
            Check::Format => !one_char_repeated(value),
            Check::Password => not_a_placeholder(value) && !after.starts_with('('),
            Check::EnvValue => plausible_env_value(value),
            Check::Random => looks_random(value),
        };
        if ok {
            emit(Finding {
                rule: rule.name,
                start: m.start(),
                end: m.end(),
            });
        }
    }
}

/// `ghp_xxxxxxxx…`: a format's prefix and a run of one character (its last 16 characters,
/// separators aside, all the same).
fn one_char_repeated(s: &str) -> bool {
    let tail: Vec<char> = s.chars().filter(|c| !matches!(c, '_' | '-')).collect();
    let tail = &tail[tail.len().saturating_sub(16)..];
    tail.iter().all(|&c| c == tail[0])
}

#[cfg(test)]
pub(super) fn rule_names_in_table() -> Vec<&'static str> {
    RULE_TABLE.iter().map(|r| r.name).collect()
}
