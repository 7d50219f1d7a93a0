//! Word-like text: a fixed vocabulary (embedded common words plus a few thousand generated
//! pseudo-words, Zipf-distributed so a few words are very common and most are rare), per-project
//! identifiers and paths, and generators for prose, code, logs, diffs and shell commands.

use super::project::{Lang, Project};
use super::rng::Rng;

/// Common English and programming words, most frequent first (ranks drive the Zipf draw).
const COMMON: &str = "the to and a of is in it that this for we be on with not as can if you \
are should so use from at or but by will need now then file test run function error code value \
make add check fix change update return type data first also new all one just still when there \
which case string list index line path call into instead because only here before after both \
other same read write set get missing empty result output input build config field struct table \
query session entry message tree branch leaf parent child root model token cost usage cache \
thread worker queue lock retry timeout request response handler server client stream buffer \
parse format encode decode serialize schema column row insert select update delete migrate \
version header footer offset limit range size count total sum average max min sort filter map \
key id name label title text body search match pattern regex word phrase rank score order \
group merge split join trim lower upper start end begin finish open close load save store fetch \
send receive spawn wait sleep poll watch notify event signal hook plugin extension module crate \
package import export public private static const mutable borrow lifetime trait impl enum option \
async await future promise callback closure iterator vector slice array hash set bytes utf \
unicode escape newline whitespace comment docs readme changelog release deploy pipeline commit \
diff patch rebase stash remote origin main feature bug issue regression benchmark profile memory \
disk cpu latency throughput slow fast small large huge tiny quick simple clean tidy rename move \
copy remove keep skip ignore warn fail pass ok done todo looks like seems probably actually \
maybe again already almost enough every each some many few most more less better worse good bad \
right wrong correct wait let me see think try look what why how where does did has have was were \
been being into onto over under between through across around against without within";

/// Rare non-ASCII words, so text search must handle UTF-8.
const UNICODE: &str = "café naïve über façade résumé jalapeño straße größe déjà señal ошибка \
данные 数据 项目 日本語 テスト 한국어 smørrebrød crème brûlée zürich açaí piñata coöperate";

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "cr", "dr", "fl", "gr", "pl", "pr", "sk", "sl", "sn", "sp", "st", "str", "tr", "th", "sh",
    "ch", "qu",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
const CODAS: &[&str] = &[
    "", "", "", "n", "r", "s", "t", "l", "m", "x", "nd", "rk", "st", "ng",
];

/// The shared vocabulary. `words` is in Zipf rank order; `ascii` excludes the non-ASCII words
/// and is used for identifiers.
pub struct Vocab {
    pub words: Vec<String>,
    pub ascii: Vec<String>,
}

impl Vocab {
    /// Builds the vocabulary from a fixed seed: identical for every `--seed`, so benchmark queries
    /// can name words that exist in any corpus.
    pub fn build() -> Self {
        let mut rng = Rng::new(0x0076_6f63_6162);
        let mut seen = std::collections::HashSet::new();
        let mut words: Vec<String> = Vec::new();
        for w in COMMON.split_whitespace() {
            if seen.insert(w.to_string()) {
                words.push(w.to_string());
            }
        }
        let mut generated = Vec::new();
        while generated.len() < 3600 {
            let mut w = String::new();
            for _ in 0..rng.range(2, 3) {
                w.push_str(rng.pick(ONSETS));
                w.push_str(rng.pick(VOWELS));
            }
            w.push_str(rng.pick(CODAS));
            if w.len() >= 4 && seen.insert(w.clone()) {
                generated.push(w);
            }
        }
        words.extend(generated);
        let ascii = words.clone();
        // Unicode words go in the rare tail, spread among the last ranks.
        for (i, w) in UNICODE.split_whitespace().enumerate() {
            let at = words.len() - 40 * i - 1;
            words.insert(at, w.to_string());
        }
        Vocab { words, ascii }
    }
}

/// Text-generation context for one session: its RNG, the vocabulary, its project, and the
/// session's current time (for timestamps inside logs).
pub struct Tx<'a> {
    pub rng: Rng,
    pub vocab: &'a Vocab,
    pub proj: &'a Project,
    pub now_ms: i64,
}

impl<'a> Tx<'a> {
    /// A Zipf-distributed vocabulary word.
    #[inline]
    pub fn word(&mut self) -> &'a str {
        let v = self.vocab;
        &v.words[self.rng.zipf(v.words.len())]
    }

    /// A Zipf-distributed ASCII word (for identifiers and variables).
    #[inline]
    pub fn aword(&mut self) -> &'a str {
        let v = self.vocab;
        &v.ascii[self.rng.zipf(v.ascii.len())]
    }

    /// A variable-like word: an ASCII word outside the most common ones (no `let the = …`).
    #[inline]
    pub fn var(&mut self) -> &'a str {
        let v = self.vocab;
        let skip = 60;
        &v.ascii[skip + self.rng.zipf(v.ascii.len() - skip)]
    }

    pub fn path(&mut self) -> &'a str {
        let p = self.proj;
        &p.files[self.rng.zipf(p.files.len())]
    }
    pub fn func(&mut self) -> &'a str {
        let p = self.proj;
        &p.fns[self.rng.zipf(p.fns.len())]
    }
    pub fn ty(&mut self) -> &'a str {
        let p = self.proj;
        &p.types[self.rng.zipf(p.types.len())]
    }
    pub fn konst(&mut self) -> &'a str {
        let p = self.proj;
        &p.consts[self.rng.zipf(p.consts.len())]
    }
    pub fn module(&mut self) -> &'a str {
        let p = self.proj;
        &p.modules[self.rng.zipf(p.modules.len())]
    }

    /// `n` random lowercase hex digits.
    pub fn hex(&mut self, out: &mut String, n: usize) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut r = self.rng.next_u64();
        for i in 0..n {
            if i % 16 == 15 {
                r = self.rng.next_u64();
            }
            out.push(HEX[(r & 15) as usize] as char);
            r >>= 4;
        }
    }

    /// `n` words separated by spaces.
    pub fn phrase(&mut self, out: &mut String, n: usize) {
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(self.word());
        }
    }

    /// One sentence: capitalised, 5-18 words, now and then an identifier, path or hash in
    /// backticks, ending in `.` or `?`.
    pub fn sentence(&mut self, out: &mut String) {
        let n = self.rng.range(5, 18) as usize;
        for i in 0..n {
            if i > 0 {
                out.push(if self.rng.chance(0.06) { ',' } else { ' ' });
                if out.ends_with(',') {
                    out.push(' ');
                }
            }
            let r = self.rng.below(100);
            if r < 4 && i > 0 {
                self.code_ref(out);
            } else if i == 0 {
                capitalise_into(out, self.word());
            } else {
                out.push_str(self.word());
            }
        }
        out.push(if self.rng.chance(0.1) { '?' } else { '.' });
    }

    /// An inline code reference: `` `fn_name` ``, `` `CONST` ``, a path, a type or a short hash.
    pub fn code_ref(&mut self, out: &mut String) {
        out.push('`');
        match self.rng.below(6) {
            0 | 1 => out.push_str(self.func()),
            2 => out.push_str(self.konst()),
            3 => out.push_str(self.path()),
            4 => out.push_str(self.ty()),
            _ => self.hex(out, 7),
        }
        out.push('`');
    }

    /// Sentences grouped into paragraphs until about `len` bytes.
    pub fn prose(&mut self, out: &mut String, len: usize) {
        let stop = out.len() + len;
        while out.len() < stop {
            for _ in 0..self.rng.range(1, 4) {
                if out.len() >= stop {
                    break;
                }
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push(' ');
                }
                self.sentence(out);
            }
            if out.len() < stop {
                out.push_str("\n\n");
            }
        }
    }

    /// Markdown-ish assistant text: paragraphs, bullet lists with code refs, a code block.
    pub fn markdown(&mut self, out: &mut String, len: usize) {
        let stop = out.len() + len;
        while out.len() < stop {
            match self.rng.below(10) {
                0..=4 => {
                    self.sentence(out);
                    out.push(' ');
                    self.sentence(out);
                }
                5..=7 => {
                    for _ in 0..self.rng.range(2, 5) {
                        out.push_str("- ");
                        self.code_ref(out);
                        out.push_str(": ");
                        self.sentence(out);
                        out.push('\n');
                    }
                }
                8 => {
                    out.push_str("## ");
                    capitalise_into(out, self.word());
                    out.push(' ');
                    self.phrase(out, 2);
                }
                _ => {
                    out.push_str(self.proj.lang.fence());
                    out.push('\n');
                    let len = self.rng.range(100, 600) as usize;
                    self.code(out, len);
                    out.push_str("```");
                }
            }
            out.push_str("\n\n");
        }
        trim_end_in_place(out);
    }

    /// Expands a template: `$f` function, `$T` type, `$C` constant, `$m` module, `$p` path,
    /// `$v` variable, `$w` word, `$s` phrase, `$S` sentence, `$n`/`$N` numbers, `$d` duration,
    /// `$h`/`$H` short/long hex, `$t` timestamp, `$$` a dollar sign.
    pub fn fill(&mut self, out: &mut String, template: &str) {
        let mut rest = template;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let c = after.as_bytes().first().copied().unwrap_or(b' ');
            rest = after.get(1..).unwrap_or("");
            match c {
                b'f' => out.push_str(self.func()),
                b'T' => out.push_str(self.ty()),
                b'C' => out.push_str(self.konst()),
                b'm' => out.push_str(self.module()),
                b'p' => out.push_str(self.path()),
                b'v' => out.push_str(self.var()),
                b'w' => out.push_str(self.word()),
                b's' => {
                    let n = self.rng.range(2, 6) as usize;
                    self.phrase(out, n)
                }
                b'S' => self.sentence(out),
                b'n' => push_num(out, self.rng.range(0, 999)),
                b'N' => push_num(out, self.rng.range(1000, 9_999_999)),
                b'd' => {
                    push_num(out, self.rng.range(0, 99));
                    out.push('.');
                    push_num(out, self.rng.range(10, 99));
                }
                b'h' => self.hex(out, 7),
                b'H' => self.hex(out, 40),
                b't' => {
                    self.now_ms += self.rng.range(0, 2500) as i64;
                    out.push_str(&super::json::iso_string(self.now_ms));
                }
                b'$' => out.push('$'),
                _ => {
                    // Not a placeholder (e.g. JS `${x}`): keep the `$` and re-scan what follows.
                    out.push('$');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }

    /// Source code in the project's language, about `len` bytes, whole lines.
    pub fn code(&mut self, out: &mut String, len: usize) {
        let templates = self.proj.lang.code_templates();
        let stop = out.len() + len;
        while out.len() < stop {
            let t = templates[self.rng.zipf(templates.len())];
            self.fill(out, t);
            out.push('\n');
        }
    }

    /// One line of source code (no newline).
    pub fn code_line(&mut self, out: &mut String) {
        let templates = self.proj.lang.code_templates();
        let t = templates[self.rng.zipf(templates.len())];
        self.fill(out, t);
    }

    /// Log output of the given kind, about `len` bytes.
    pub fn log(&mut self, out: &mut String, kind: LogKind, len: usize) {
        let templates = kind.templates();
        let stop = out.len() + len;
        while out.len() < stop {
            let t = templates[self.rng.zipf(templates.len())];
            self.fill(out, t);
            out.push('\n');
        }
        trim_end_in_place(out);
    }

    /// `rg -n` style output: `path:line:code`.
    pub fn grep_output(&mut self, out: &mut String, len: usize) {
        let stop = out.len() + len;
        while out.len() < stop {
            out.push_str(self.path());
            out.push(':');
            push_num(out, self.rng.range(1, 2400));
            out.push(':');
            self.code_line(out);
            out.push('\n');
        }
        trim_end_in_place(out);
    }

    /// A shell command for the project, with the kind of output it produces.
    pub fn command(&mut self, out: &mut String) -> LogKind {
        let cmds = self.proj.lang.commands();
        let (kind, t) = cmds[self.rng.zipf(cmds.len())];
        self.fill(out, t);
        kind
    }
}

/// Output flavours for bash results.
#[derive(Clone, Copy)]
pub enum LogKind {
    Build,
    Test,
    Grep,
    Git,
    Listing,
    App,
}

impl LogKind {
    fn templates(self) -> &'static [&'static str] {
        match self {
            LogKind::Build => &[
                "   Compiling $m v0.$n.$n ($p)",
                "warning: unused variable: `$v`",
                "  --> $p:$n:$n",
                "   |",
                "$n |     let $v = $f($v);",
                "   = note: `#[warn(unused_variables)]` on by default",
                "error[E0$n]: $s",
                "src/$m.ts($n,$n): error TS2$n: $S",
                "    Finished `release` profile [optimized + debuginfo] target(s) in $ds",
                "help: consider borrowing here: `&$v`",
                "   Compiling $w v$n.$n.$n",
                "[$n/$n] Building $p",
            ],
            LogKind::Test => &[
                "test $m::tests::$f ... ok",
                "test $m::$f ... ok",
                "running $n tests",
                "test $m::tests::$f ... FAILED",
                "tests/test_$m.py::test_$f PASSED",
                "  ✓ $s ($n ms)",
                "thread '$m::tests::$f' panicked at $p:$n:$n:",
                "assertion `left == right` failed: $s",
                "  left: \"$w $w\"",
                " right: \"$w\"",
                "E       AssertionError: $S",
                "  ✗ $s",
                "test result: ok. $n passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in $ds",
                "FAIL: $f ($m.$T)",
                "--- FAIL: Test$T ($ds)",
            ],
            LogKind::Grep => &["$p:$n:    let $v = $f($v);", "$p:$n:$C", "$p:$n:// $S"],
            LogKind::Git => &[
                "commit $H",
                "Author: $v <$v@$w.dev>",
                "    $S",
                "$h $S",
                " $p | $n ++++----",
                " $n files changed, $n insertions(+), $n deletions(-)",
                "On branch $v-$v",
                "\tmodified:   $p",
            ],
            LogKind::Listing => &[
                "-rw-r--r--  1 dev staff  $N Mar $n 12:$n $p",
                "drwxr-xr-x  $n dev staff  $n Apr $n 09:$n $m",
                "$p",
                "$N\t$p",
            ],
            LogKind::App => &[
                "$t INFO  $m::$f: $S id=$h",
                "$t DEBUG $m: $s $C=$n",
                "$t WARN  $m::$f: $s (retry $n/5)",
                "$t ERROR $m: $S",
                "[$m] $s in $dms",
                "    at $f ($p:$n:$n)",
                "Traceback (most recent call last):",
                "  File \"$p\", line $n, in $f",
            ],
        }
    }
}

impl Lang {
    pub fn fence(self) -> &'static str {
        match self {
            Lang::Rust => "```rust",
            Lang::Ts => "```ts",
            Lang::Py => "```python",
            Lang::Go => "```go",
        }
    }

    /// A glob for the project's sources (grep tool argument).
    pub fn glob(self) -> &'static str {
        match self {
            Lang::Rust => "*.rs",
            Lang::Ts => "**/*.ts",
            Lang::Py => "*.py",
            Lang::Go => "*.go",
        }
    }

    fn code_templates(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "    let $v = $f(&$v)?;",
                "    }",
                "}",
                "",
                "    // $S",
                "pub fn $f(&self, $v: &$T) -> Result<$T> {",
                "        return Err(anyhow!(\"$s: {}\", $v));",
                "    if $v.len() > $C {",
                "use crate::$m::{$T, $f};",
                "    for $v in $v.iter() {",
                "        $v.push($T::new($n));",
                "    Ok($T { $v, $v: $n })",
                "#[derive(Debug, Clone, PartialEq)]",
                "pub struct $T {",
                "    pub $v: Option<$T>,",
                "const $C: usize = $N;",
                "    match $v {",
                "        $T::$T => $f(\"$w\"),",
                "/// $S",
                "#[test]",
                "fn $f_$v() {",
                "    assert_eq!($f(\"$w $w\"), $n);",
                "impl $T {",
                "        .map(|$v| $v.$f())",
                "        .collect::<Vec<_>>();",
                "    tracing::debug!(%$v, \"$s\");",
            ],
            Lang::Ts => &[
                "  const $v = await $f($v);",
                "  }",
                "}",
                "",
                "  // $S",
                "export function $f($v: $T): $T {",
                "    throw new Error(`$s: ${$v}`);",
                "  if ($v.length > $C) {",
                "import { $T, $f } from \"./$m\";",
                "  for (const $v of $v) {",
                "    $v.push(new $T($n));",
                "  return { $v, $v: $n };",
                "export interface $T {",
                "  $v?: $T;",
                "export const $C = $N;",
                "  switch ($v.type) {",
                "    case \"$w\": return $f(\"$w\");",
                "/** $S */",
                "describe(\"$f\", () => {",
                "  it(\"$s\", () => {",
                "    expect($f(\"$w $w\")).toBe($n);",
                "export class $T {",
                "    .map(($v) => $v.$f())",
                "    .filter(Boolean);",
                "  logger.debug({ $v }, \"$s\");",
            ],
            Lang::Py => &[
                "    $v = $f($v)",
                "",
                "    # $S",
                "def $f(self, $v: $T) -> $T:",
                "        raise ValueError(f\"$s: {$v}\")",
                "    if len($v) > $C:",
                "from .$m import $T, $f",
                "    for $v in $v:",
                "        $v.append($T($n))",
                "    return $T($v=$v, $v=$n)",
                "@dataclass",
                "class $T:",
                "    $v: Optional[$T] = None",
                "$C = $N",
                "    match $v:",
                "        case \"$w\": return $f(\"$w\")",
                "    \"\"\"$S\"\"\"",
                "def test_$f():",
                "    assert $f(\"$w $w\") == $n",
                "    logger.debug(\"$s %s\", $v)",
            ],
            Lang::Go => &[
                "\t$v, err := $f($v)",
                "\t}",
                "}",
                "",
                "\t// $S",
                "func (s *$T) $f($v $T) ($T, error) {",
                "\t\treturn nil, fmt.Errorf(\"$s: %w\", err)",
                "\tif err != nil {",
                "\t\"$w/$m\"",
                "\tfor _, $v := range $v {",
                "\t\t$v = append($v, $T{$n})",
                "\treturn &$T{$v: $v}, nil",
                "type $T struct {",
                "\t$T $T `json:\"$v\"`",
                "const $C = $N",
                "\tswitch $v {",
                "\tcase \"$w\":",
                "func Test$T(t *testing.T) {",
                "\t\tt.Fatalf(\"$s: got %v\", $v)",
                "\tlog.Printf(\"$s %v\", $v)",
            ],
        }
    }

    fn commands(self) -> &'static [(LogKind, &'static str)] {
        match self {
            Lang::Rust => &[
                (LogKind::Test, "cargo test $m::$f"),
                (LogKind::Build, "cargo build --release 2>&1 | tail -40"),
                (LogKind::Grep, "rg -n \"$C\" src/"),
                (LogKind::Git, "git diff --stat"),
                (LogKind::Test, "cargo test --lib 2>&1 | tail -60"),
                (LogKind::Build, "cargo clippy --all-targets -- -D warnings"),
                (LogKind::Git, "git log --oneline -20"),
                (LogKind::Listing, "ls -la src/$m"),
                (
                    LogKind::App,
                    "RUST_LOG=debug cargo run -- $w --$v 2>&1 | head -100",
                ),
                (LogKind::Listing, "wc -l $p"),
            ],
            Lang::Ts => &[
                (LogKind::Test, "npm test -- $m"),
                (LogKind::Build, "npx tsc --noEmit"),
                (LogKind::Grep, "rg -n \"$f\" src"),
                (LogKind::Git, "git status"),
                (LogKind::Build, "pnpm run build"),
                (LogKind::Test, "npx vitest run $p"),
                (LogKind::Git, "git log --oneline -15"),
                (LogKind::Listing, "ls -la src/$m"),
                (LogKind::App, "node scripts/$w.mjs --$v"),
            ],
            Lang::Py => &[
                (LogKind::Test, "pytest tests/test_$m.py -x -q"),
                (LogKind::Build, "ruff check ."),
                (LogKind::Grep, "rg -n \"$f\" ."),
                (LogKind::Git, "git diff --stat HEAD~1"),
                (LogKind::Test, "uv run pytest -k $f"),
                (LogKind::App, "python -m $m --$v $w"),
                (LogKind::Listing, "ls -la $m/"),
                (LogKind::Git, "git log --oneline -10"),
            ],
            Lang::Go => &[
                (LogKind::Test, "go test ./$m/... -run Test$T"),
                (LogKind::Build, "go build ./..."),
                (LogKind::Grep, "rg -n \"$C\" --type go"),
                (LogKind::Git, "git diff --stat"),
                (LogKind::Build, "go vet ./..."),
                (LogKind::App, "go run ./cmd/$m -$v"),
                (LogKind::Listing, "ls -la $m"),
            ],
        }
    }
}

pub fn capitalise_into(out: &mut String, w: &str) {
    let mut cs = w.chars();
    if let Some(c) = cs.next() {
        out.extend(c.to_uppercase());
        out.push_str(cs.as_str());
    }
}

pub fn push_num(out: &mut String, n: u64) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

pub fn trim_end_in_place(out: &mut String) {
    let n = out.trim_end().len();
    out.truncate(n);
}

/// Pascal-case concatenation of words (`RestaurantSignals`).
pub fn pascal(words: &[&str]) -> String {
    let mut s = String::new();
    for w in words {
        capitalise_into(&mut s, w);
    }
    s
}

/// Camel case (`restaurantSignals`).
pub fn camel(words: &[&str]) -> String {
    let mut s = words[0].to_string();
    for w in &words[1..] {
        capitalise_into(&mut s, w);
    }
    s
}
