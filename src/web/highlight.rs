//! Code blocks coloured through CSS classes by a compact lexer of the languages transcripts hold
//! most (Rust, Python, JavaScript/TypeScript, Go, the C family, shell, JSON, TOML, YAML, SQL,
//! diffs): keywords, strings, comments, numbers, literals and capitalised types, each a
//! `<span class="hl-…">`. A lexer of our own rather than a grammar library keeps the binary
//! small; a wrong guess costs a colour, never text. Every byte of the code is escaped here.

use std::fmt::Write as _;

/// How one language looks to the lexer.
pub struct Lang {
    /// Space-separated.
    keywords: &'static str,
    literals: &'static str,
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [char],
    /// `'` opens a char literal only when it closes two or three characters on (Rust's
    /// lifetimes and labels are not strings).
    char_quote: bool,
    /// `"""` and `'''` strings (Python).
    triple: bool,
    /// `$NAME` and `${…}` are variables (shell).
    dollar: bool,
    /// Keywords match whatever their case (SQL).
    any_case: bool,
    /// A diff: whole lines coloured by their first character.
    diff: bool,
}

const NONE: Lang = Lang {
    keywords: "",
    literals: "",
    line_comments: &[],
    block_comment: None,
    quotes: &['"'],
    char_quote: false,
    triple: false,
    dollar: false,
    any_case: false,
    diff: false,
};

const C_LIKE: &[&str] = &["//"];
const C_BLOCK: Option<(&str, &str)> = Some(("/*", "*/"));

const RUST: Lang = Lang {
    keywords: "as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while",
    literals: "true false None Some Ok Err",
    line_comments: C_LIKE,
    block_comment: C_BLOCK,
    char_quote: true,
    ..NONE
};

const PYTHON: Lang = Lang {
    keywords: "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield self",
    literals: "True False None",
    line_comments: &["#"],
    quotes: &['"', '\''],
    triple: true,
    ..NONE
};

const JS: Lang = Lang {
    keywords: "async await break case catch class const continue default delete do else export extends finally for from function if import in instanceof interface let new of return static switch this throw try type typeof var void while yield",
    literals: "true false null undefined NaN",
    line_comments: C_LIKE,
    block_comment: C_BLOCK,
    quotes: &['"', '\'', '`'],
    ..NONE
};

const GO: Lang = Lang {
    keywords: "break case chan const continue default defer else for func go goto if import interface map package range return select struct switch type var",
    literals: "true false nil iota",
    line_comments: C_LIKE,
    block_comment: C_BLOCK,
    quotes: &['"', '`', '\''],
    ..NONE
};

const C: Lang = Lang {
    keywords: "auto break case catch class const continue default delete do else enum extends extern final for fun goto if implements import include namespace new override package private protected public return sizeof static struct switch template this throw try typedef union using val var virtual void volatile while int char long short unsigned float double bool boolean",
    literals: "true false null NULL nullptr",
    line_comments: C_LIKE,
    block_comment: C_BLOCK,
    quotes: &['"', '\''],
    ..NONE
};

const SHELL: Lang = Lang {
    keywords: "if then else elif fi for while until do done case esac in function return export local set cd echo exit source sudo",
    line_comments: &["#"],
    quotes: &['"', '\''],
    dollar: true,
    ..NONE
};

const JSON: Lang = Lang {
    literals: "true false null",
    ..NONE
};

const TOML: Lang = Lang {
    literals: "true false",
    line_comments: &["#"],
    quotes: &['"', '\''],
    ..NONE
};

const YAML: Lang = Lang {
    literals: "true false null yes no",
    line_comments: &["#"],
    quotes: &['"', '\''],
    ..NONE
};

const SQL: Lang = Lang {
    keywords: "select from where and or not insert into values update set delete create table index on join left inner outer group by order having limit offset as distinct union all case when then else end is in exists primary key with drop alter begin commit returning like between desc asc",
    literals: "null true false",
    line_comments: &["--"],
    block_comment: C_BLOCK,
    quotes: &['\''],
    any_case: true,
    ..NONE
};

const DIFF: Lang = Lang { diff: true, ..NONE };

/// The lexer for a fence's language word (its first word: ```` ```rust title ````), if any.
pub fn lang(info: &str) -> Option<&'static Lang> {
    let word = info.split([' ', ',', '{']).next().unwrap_or_default();
    Some(match word.to_ascii_lowercase().as_str() {
        "rust" | "rs" => &RUST,
        "python" | "py" | "python3" => &PYTHON,
        "javascript" | "js" | "jsx" | "mjs" | "cjs" | "typescript" | "ts" | "tsx" => &JS,
        "go" | "golang" => &GO,
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "kotlin" | "kt" | "cs" | "csharp"
        | "swift" | "scala" => &C,
        "bash" | "sh" | "shell" | "zsh" | "console" | "shellsession" => &SHELL,
        "json" | "jsonc" | "json5" | "jsonl" => &JSON,
        "toml" | "ini" => &TOML,
        "yaml" | "yml" => &YAML,
        "sql" | "sqlite" | "postgresql" | "psql" => &SQL,
        "diff" | "patch" => &DIFF,
        _ => return None,
    })
}

/// Code longer than this is shown uncoloured (a page stays quick whatever a block holds).
const MOST: usize = 200_000;

/// `code` as escaped HTML with its tokens in classed spans (plain escaped text when too long).
pub fn highlight(lang: &Lang, code: &str) -> String {
    let mut out = String::with_capacity(code.len() + code.len() / 2);
    if code.len() > MOST {
        escape(&mut out, code);
    } else if lang.diff {
        diff(&mut out, code);
    } else {
        Lexer { lang, code, at: 0 }.run(&mut out);
    }
    out
}

fn escape(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

fn span(out: &mut String, class: &str, s: &str) {
    let _ = write!(out, "<span class=\"hl-{class}\">");
    escape(out, s);
    out.push_str("</span>");
}

fn diff(out: &mut String, code: &str) {
    for line in code.split_inclusive('\n') {
        let class = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => "a",
            Some(b'-') if !line.starts_with("---") => "d",
            Some(b'@') => "h",
            _ if line.starts_with("diff ")
                || line.starts_with("+++")
                || line.starts_with("---") =>
            {
                "c"
            }
            _ => {
                escape(out, line);
                continue;
            }
        };
        span(out, class, line);
    }
}

struct Lexer<'a> {
    lang: &'a Lang,
    code: &'a str,
    at: usize,
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.code[self.at..]
    }

    /// Takes up to byte `end` of the rest (at least one character) as one token.
    fn take(&mut self, len: usize) -> &str {
        let start = self.at;
        let mut end = (start + len.max(1)).min(self.code.len());
        while !self.code.is_char_boundary(end) {
            end += 1;
        }
        self.at = end;
        &self.code[start..end]
    }

    fn run(&mut self, out: &mut String) {
        let lang = self.lang;
        while let Some(c) = self.rest().chars().next() {
            let rest = self.rest();
            let prev = self.code[..self.at].chars().next_back();
            if let Some(len) = self.comment(rest, prev) {
                let t = self.take(len);
                span(out, "c", t);
            } else if let Some(len) = self.string(rest, c) {
                let t = self.take(len);
                span(out, "s", t);
            } else if lang.dollar && c == '$' {
                let len = variable(rest);
                let t = self.take(len);
                span(out, "v", t);
            } else if c.is_ascii_digit() && !prev.is_some_and(ident_char) {
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    .unwrap_or(rest.len());
                let t = self.take(len);
                span(out, "n", t);
            } else if ident_char(c) {
                let len = rest.find(|c| !ident_char(c)).unwrap_or(rest.len());
                let word = self.take(len);
                let is = |list: &str| {
                    list.split(' ').any(|k| {
                        if lang.any_case {
                            k.eq_ignore_ascii_case(word)
                        } else {
                            k == word
                        }
                    })
                };
                if is(lang.keywords) {
                    span(out, "k", word);
                } else if is(lang.literals) {
                    span(out, "l", word);
                } else if !lang.keywords.is_empty()
                    && word.starts_with(|c: char| c.is_ascii_uppercase())
                {
                    span(out, "t", word);
                } else {
                    escape(out, word);
                }
            } else {
                let t = self.take(c.len_utf8());
                escape(out, t);
            }
        }
    }

    /// The length of a comment starting here.
    fn comment(&self, rest: &str, prev: Option<char>) -> Option<usize> {
        for m in self.lang.line_comments {
            // A shell `#` starts a comment only after a space or at a line's start.
            let word_start = *m != "#" || prev.is_none_or(char::is_whitespace);
            if rest.starts_with(m) && word_start {
                return Some(rest.find('\n').unwrap_or(rest.len()));
            }
        }
        let (open, close) = self.lang.block_comment?;
        rest.starts_with(open).then(|| {
            rest[open.len()..]
                .find(close)
                .map_or(rest.len(), |i| open.len() + i + close.len())
        })
    }

    /// The length of a string starting here (to its closing quote, or the line's end for an
    /// unclosed one, or the code's end for a triple-quoted one).
    fn string(&self, rest: &str, q: char) -> Option<usize> {
        if !(self.lang.quotes.contains(&q) || self.lang.char_quote && q == '\'') {
            return None;
        }
        if self.lang.triple && (rest.starts_with("\"\"\"") || rest.starts_with("'''")) {
            let fence = &rest[..3];
            return Some(rest[3..].find(fence).map_or(rest.len(), |i| i + 6));
        }
        let mut escaped = false;
        for (i, c) in rest.char_indices().skip(1) {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                // Rust: `'a` is a lifetime, `'a'` and `'\n'` are chars.
                if self.lang.char_quote && q == '\'' && i > 4 {
                    return None;
                }
                return Some(i + 1);
            } else if c == '\n' && q != '`' {
                return (!(self.lang.char_quote && q == '\'')).then_some(i);
            }
        }
        (!(self.lang.char_quote && q == '\'')).then_some(rest.len())
    }
}

/// `$NAME`, `${…}`, `$1`, `$?` and the like.
fn variable(rest: &str) -> usize {
    let after = &rest[1..];
    if after.starts_with('{') {
        return after.find('}').map_or(1, |i| i + 2);
    }
    match after.chars().next() {
        Some(c) if ident_char(c) => 1 + after.find(|c| !ident_char(c)).unwrap_or(after.len()),
        Some(c) if "?!#@*$-".contains(c) => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl(l: &str, code: &str) -> String {
        highlight(lang(l).expect("a known language"), code)
    }

    #[test]
    fn rust_tokens_get_their_classes_and_lifetimes_stay_code() {
        let out = hl(
            "rust",
            "fn f<'a>(x: &'a str) -> Option<u8> { let c = 'x'; \"s\\\"\" // done\n}",
        );
        assert!(
            out.starts_with("<span class=\"hl-k\">fn</span> f&lt;&#39;a&gt;"),
            "{out}"
        );
        assert!(out.contains("<span class=\"hl-t\">Option</span>"), "{out}");
        assert!(
            out.contains("<span class=\"hl-s\">&#39;x&#39;</span>"),
            "{out}"
        );
        assert!(
            out.contains("<span class=\"hl-s\">&quot;s\\&quot;&quot;</span>"),
            "{out}"
        );
        assert!(
            out.contains("<span class=\"hl-c\">// done</span>\n}"),
            "{out}"
        );
    }

    #[test]
    fn every_byte_is_escaped_and_kept() {
        let code = "x = \"<script>alert(1)</script>\" # <b>&amp;\n'''<img onerror=y>'''";
        let out = hl("python", code);
        assert!(!out.contains("<script") && !out.contains("<img") && !out.contains("<b>"));
        let text = out
            .split('<')
            .map(|p| p.split_once('>').map_or(p, |(_, t)| t))
            .collect::<String>();
        let unescaped = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&");
        assert_eq!(unescaped, code, "the text is the code, whole");
    }

    #[test]
    fn shell_diff_and_sql_have_their_own_rules() {
        let sh = hl("bash", "echo $HOME ${X} a#b # note");
        assert!(sh.contains("<span class=\"hl-v\">$HOME</span>"), "{sh}");
        assert!(sh.contains("<span class=\"hl-v\">${X}</span>"), "{sh}");
        assert!(
            sh.contains("a#b <span class=\"hl-c\"># note</span>"),
            "{sh}"
        );
        let d = hl("diff", "@@ -1 +1 @@\n-old\n+new\n same\n");
        assert!(
            d.contains("<span class=\"hl-d\">-old\n</span><span class=\"hl-a\">+new\n</span> same"),
            "{d}"
        );
        let q = hl("sql", "SELECT 1 FROM t -- x");
        assert!(
            q.starts_with("<span class=\"hl-k\">SELECT</span> <span class=\"hl-n\">1</span>"),
            "{q}"
        );
        assert!(lang("brainfuck").is_none());
    }
}
