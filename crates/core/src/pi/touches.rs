//! The files a tool call touched, read from its `toolCall` block (docs/pi-format.md §2.4) in
//! pi's own terms: the argument shapes of pi's built-in tools (`read`, `edit`, `write`, `ls`,
//! `grep`, `find`, `bash`) and pi's path resolution (`resolveToCwd`: a leading `@` dropped,
//! relative paths joined to the session's cwd). Pure: the store writes the touches, the query
//! re-reads edits from the transcript when it needs their text. Unknown tools and shapes give
//! nothing, never an error.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What a call did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Edit,
    Write,
    /// `ls`
    List,
    /// `grep`, `find`
    Search,
    /// Named in a `bash` command.
    Bash,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Edit => "edit",
            Kind::Write => "write",
            Kind::List => "list",
            Kind::Search => "search",
            Kind::Bash => "bash",
        }
    }

    /// Whether calls of this kind change the file (blame and commits replay them).
    pub fn changes(self) -> bool {
        matches!(self, Kind::Edit | Kind::Write)
    }
}

/// One file one tool call touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The call's position among the message's content blocks.
    pub block: i64,
    pub call_id: Option<String>,
    pub tool: String,
    pub kind: Kind,
    /// Absolute, lexically normalised, with `/` separators (a Windows cwd keeps its drive).
    pub path: String,
    /// The path inside the git work tree of the session's cwd (filled by ingest, which may
    /// look at the disk).
    pub rel: Option<String>,
    /// Edits and writes: lines put in and taken out (the changed lines between the common
    /// first and last lines of each replacement).
    pub added: Option<i64>,
    pub removed: Option<i64>,
}

/// One replacement of an `edit` call, or the whole content of a `write` (`old` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub old: Option<String>,
    pub new: String,
}

/// Most paths taken from one bash command: a generated script can name thousands.
const BASH_PATHS: usize = 32;

/// The touches of an assistant message's `content`, against the session's `cwd`.
pub fn of_content(content: Option<&Value>, cwd: &str) -> Vec<Touch> {
    let Some(Value::Array(blocks)) = content else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let Some(b) = b.as_object() else { continue };
        if b.get("type").and_then(Value::as_str) != Some("toolCall") {
            continue;
        }
        let (Some(name), Some(args)) = (b.get("name").and_then(Value::as_str), arguments(b)) else {
            continue;
        };
        let call_id = b.get("id").and_then(Value::as_str).map(str::to_string);
        let mut push = |kind: Kind, path: String, counts: Option<(i64, i64)>| {
            out.push(Touch {
                block: i as i64,
                call_id: call_id.clone(),
                tool: name.to_string(),
                kind,
                path,
                rel: None,
                added: counts.map(|c| c.0),
                removed: counts.map(|c| c.1).filter(|_| kind == Kind::Edit),
            })
        };
        let path_arg = || args.get("path").and_then(Value::as_str);
        match name {
            "read" | "edit" | "write" => {
                let Some(path) = path_arg().and_then(|p| resolve(cwd, p)) else {
                    continue;
                };
                let kind = match name {
                    "read" => Kind::Read,
                    "edit" => Kind::Edit,
                    _ => Kind::Write,
                };
                let counts = match kind.changes() {
                    true => match line_counts(name, &args) {
                        Some(c) => Some(c),
                        None => continue, // pi rejects it before touching the file
                    },
                    false => None,
                };
                push(kind, path, counts);
            }
            "ls" | "grep" | "find" => {
                let kind = if name == "ls" {
                    Kind::List
                } else {
                    Kind::Search
                };
                // pi searches the cwd when no path is given.
                if let Some(path) = resolve(cwd, path_arg().unwrap_or(".")) {
                    push(kind, path, None);
                }
            }
            "bash" => {
                let Some(cmd) = args.get("command").and_then(Value::as_str) else {
                    continue;
                };
                for p in bash_paths(cmd) {
                    if let Some(path) = resolve(cwd, &p) {
                        push(Kind::Bash, path, None);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The arguments object of a `toolCall` block (borrowed: a write's content can be megabytes);
/// a JSON string holding one is read too.
fn arguments(b: &Map<String, Value>) -> Option<Cow<'_, Map<String, Value>>> {
    match b.get("arguments")? {
        Value::Object(m) => Some(Cow::Borrowed(m)),
        Value::String(s) => match serde_json::from_str(s) {
            Ok(Value::Object(m)) => Some(Cow::Owned(m)),
            _ => None,
        },
        _ => None,
    }
}

/// Calls `f(old, new)` for each change a call of tool `name` with `args` asks for: pi's
/// `prepareEditArguments` for `edit` (`edits` as an array, a single object or a JSON string,
/// plus the older top-level `oldText`/`newText` appended), the content for `write` (`old` is
/// `None`).
fn each_change(name: &str, args: &Map<String, Value>, f: &mut dyn FnMut(Option<&str>, &str)) {
    let mut pair = |e: &Value| {
        if let (Some(Value::String(old)), Some(Value::String(new))) =
            (e.get("oldText"), e.get("newText"))
        {
            f(Some(old), new);
        }
    };
    match name {
        "write" => {
            if let Some(Value::String(c)) = args.get("content") {
                f(None, c);
            }
        }
        "edit" => {
            match args.get("edits") {
                Some(Value::Array(a)) => a.iter().for_each(&mut pair),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(Value::Array(a)) => a.iter().for_each(&mut pair),
                    Ok(o @ Value::Object(_)) => pair(&o),
                    _ => {}
                },
                Some(o @ Value::Object(_)) => pair(o),
                _ => {}
            }
            if let (Some(Value::String(_)), Some(Value::String(_))) =
                (args.get("oldText"), args.get("newText"))
            {
                let top = args
                    .iter()
                    .filter(|(k, _)| *k == "oldText" || *k == "newText");
                let o: Map<String, Value> = top.map(|(k, v)| (k.clone(), v.clone())).collect();
                pair(&Value::Object(o));
            }
        }
        _ => {}
    }
}

/// The changes a call of tool `name` with `args` asks for ([`each_change`]).
pub fn changes(name: &str, args: &Map<String, Value>) -> Vec<Change> {
    let mut out = Vec::new();
    each_change(name, args, &mut |old, new| {
        out.push(Change {
            old: old.map(str::to_string),
            new: new.to_string(),
        })
    });
    out
}

/// The changes of the call with `call_id` (else the one at `block`) in a raw entry line.
pub fn changes_in_line(line: &[u8], block: i64, call_id: Option<&str>) -> Vec<Change> {
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return Vec::new();
    };
    let Some(Value::Array(blocks)) = v.get("message").and_then(|m| m.get("content")) else {
        return Vec::new();
    };
    let by_id = call_id.and_then(|id| {
        blocks
            .iter()
            .find(|b| b.get("id").and_then(Value::as_str) == Some(id))
    });
    let Some(b) = by_id
        .or_else(|| blocks.get(block as usize))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let (Some(name), Some(args)) = (b.get("name").and_then(Value::as_str), arguments(b)) else {
        return Vec::new();
    };
    changes(name, &args)
}

/// Lines added and removed: each replacement without the lines it keeps at both ends;
/// `None` when the call asks for no change.
fn line_counts(name: &str, args: &Map<String, Value>) -> Option<(i64, i64)> {
    let mut total = None;
    each_change(name, args, &mut |old, new| {
        let (a, r) = total.get_or_insert((0, 0));
        let old: Vec<&str> = old.map(lines).unwrap_or_default();
        let new: Vec<&str> = lines(new);
        let (head, tail) = kept_ends(&old, &new);
        *a += (new.len() - head - tail) as i64;
        *r += (old.len() - head - tail) as i64;
    });
    total
}

/// How many lines a replacement keeps unchanged at its start and, after those, at its end:
/// what is left between them is what it changed.
pub fn kept_ends(old: &[&str], new: &[&str]) -> (usize, usize) {
    let head = old.iter().zip(new).take_while(|(o, n)| o == n).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(o, n)| o == n)
        .count();
    (head, tail)
}

/// The lines of a text, `\r\n` and a final newline taken as pi's edit does (normalised to LF).
pub fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let t = text.strip_suffix('\n').unwrap_or(text);
    t.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Whether a cwd is a Windows path (`C:\...`, `C:/...` or a `\\server\share`).
fn windows(cwd: &str) -> bool {
    let b = cwd.as_bytes();
    (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':') || cwd.starts_with("\\\\")
}

/// `path` resolved against `cwd` as pi's `resolveToCwd` does, lexically (`.` and `..` folded,
/// no symlinks followed). `None` when it cannot be placed: empty, a relative path with no
/// cwd, or a `~` path (pi expands it with the home of the machine that ran the session,
/// which the transcript does not say).
pub fn resolve(cwd: &str, path: &str) -> Option<String> {
    let path = path.strip_prefix('@').unwrap_or(path).trim_end();
    if path.is_empty() || path.starts_with('~') || path.contains('\0') {
        return None;
    }
    let win = windows(cwd) || windows(path);
    let fix = |s: &str| {
        if win {
            s.replace('\\', "/")
        } else {
            s.to_string()
        }
    };
    let (cwd, path) = (fix(cwd), fix(path));
    let absolute = path.starts_with('/') || (win && windows(&path));
    let joined = if absolute {
        path
    } else if cwd.is_empty() {
        return None;
    } else {
        format!("{cwd}/{path}")
    };
    Some(normalise(&joined, win))
}

/// Folds `.`, `..` and repeated separators; a drive letter is upper-cased.
fn normalise(path: &str, win: bool) -> String {
    let (prefix, rest) = match path.as_bytes() {
        [d, b':', ..] if win && d.is_ascii_alphabetic() => (
            format!("{}:", (*d as char).to_ascii_uppercase()),
            &path[2..],
        ),
        _ if win && path.starts_with("//") => ("/".to_string(), &path[1..]),
        _ => (String::new(), path),
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in rest.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("{prefix}/{}", parts.join("/"))
}

/// Words of a shell command that look like file paths: with a `/`, or a name with an
/// extension (`main.rs`). Options, URLs, variables, assignments and numbers are left out, as
/// are paths the command builds at run time; a `cd` is not followed (the paths stay relative
/// to the session's cwd).
pub fn bash_paths(cmd: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let words = cmd
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')'))
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '`' | ',')));
    for w in words {
        if out.len() >= BASH_PATHS {
            break;
        }
        if looks_like_path(w) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

fn looks_like_path(w: &str) -> bool {
    if w.is_empty()
        || w.starts_with('-')
        || w.contains("://")
        || w.contains(['$', '=', '*', '?', '{', '}', '[', ']', '@', ':', '\\', '~'])
        || w.chars().any(char::is_control)
    {
        return false;
    }
    if w.contains('/') {
        return w.chars().any(|c| c.is_alphanumeric());
    }
    // `name.ext`: a letter in the name, a short alphanumeric extension with a letter.
    match w.rsplit_once('.') {
        Some((name, ext)) => {
            name.chars().any(char::is_alphabetic)
                && (1..=8).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_resolve_against_the_cwd_as_pi_does() {
        let cases = [
            ("/p", "src/a.rs", Some("/p/src/a.rs")),
            ("/p", "@src/a.rs", Some("/p/src/a.rs")),
            ("/p/q", "../x/./y.rs", Some("/p/x/y.rs")),
            ("/p", "/etc/hosts", Some("/etc/hosts")),
            ("/p", "~/x", None),
            ("", "a.rs", None),
            (
                "C:\\Users\\me\\proj",
                "src\\a.rs",
                Some("C:/Users/me/proj/src/a.rs"),
            ),
            ("c:\\proj", "D:\\x\\..\\y.txt", Some("D:/y.txt")),
            ("/p", ".", Some("/p")),
        ];
        for (cwd, path, want) in cases {
            assert_eq!(resolve(cwd, path).as_deref(), want, "{cwd} {path}");
        }
    }

    #[test]
    fn both_edit_forms_are_read_as_pi_prepares_them() {
        let args = json!({"path": "a", "edits": [{"oldText": "a", "newText": "b"}],
                          "oldText": "c", "newText": "d"});
        let got = changes("edit", args.as_object().unwrap());
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].old.as_deref(), Some("c"));
        let s = json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"});
        assert_eq!(changes("edit", s.as_object().unwrap())[0].new, "y");
        let w = json!({"path": "a", "content": "z"});
        assert_eq!(changes("write", w.as_object().unwrap())[0].old, None);
    }

    #[test]
    fn bash_commands_name_their_files() {
        assert_eq!(
            bash_paths("cargo test -p x && cat src/main.rs | grep -n foo > out.txt; ls ./docs"),
            ["src/main.rs", "out.txt", "./docs"]
        );
        assert!(bash_paths("echo 1.5 $HOME/x https://a.b/c --x=y/z").is_empty());
    }

    #[test]
    fn edit_counts_leave_out_kept_lines() {
        let args =
            json!({"path": "p", "edits": [{"oldText": "a\nb\nc\n", "newText": "a\nB\nB2\nc\n"}]});
        assert_eq!(line_counts("edit", args.as_object().unwrap()), Some((2, 1)));
        let none = json!({"path": "p", "edits": []});
        assert_eq!(line_counts("edit", none.as_object().unwrap()), None);
    }
}
