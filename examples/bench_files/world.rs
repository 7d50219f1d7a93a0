//! The replayed history of the attribution benchmark: a stand-in for pi that edits files the
//! way pi's `edit` and `write` do and logs the calls, a person who edits, re-indents, reverts
//! and renames, and git commits; every line keeps its true origin.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use similar::{capture_diff_slices, Algorithm, DiffOp};

use pidx::query::files::attribute::fuzzy;

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() % 10_000) as f64 / 10_000.0 < p
    }
}

/// Who last produced a line: a person, or a step (index into `World::steps`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Origin {
    Person,
    Step(usize),
}

#[derive(Clone)]
pub struct Line {
    pub text: String,
    pub origin: Origin,
}

#[derive(Clone)]
pub struct File {
    pub rel: String,
    pub lines: Vec<Line>,
    /// Renamed by a person at some point (blame does not follow renames).
    pub renamed: bool,
}

impl File {
    pub fn content(&self) -> String {
        self.lines.iter().map(|l| format!("{}\n", l.text)).collect()
    }
}

pub struct SessionLog {
    pub id: String,
    pub lines: Vec<String>,
    pub last: Option<String>,
}

pub struct World {
    pub rng: Rng,
    pub repo: PathBuf,
    pub files: Vec<File>,
    pub sessions: Vec<SessionLog>,
    /// (session index, entry id) of each step.
    pub steps: Vec<(usize, String)>,
    pub clock_ms: i64,
    pub serial: usize,
    /// The files as each commit has them.
    pub snapshots: HashMap<String, Vec<File>>,
    pub commit_ids: Vec<String>,
}

const WORDS: [&str; 12] = [
    "parse", "render", "index", "query", "cache", "token", "branch", "merge", "flush", "write",
    "scan", "split",
];

impl World {
    fn fresh_line(&mut self) -> String {
        self.serial += 1;
        let w = WORDS[self.rng.below(WORDS.len())];
        match self.rng.below(10) {
            0 => "}".into(),
            1 => String::new(),
            2 => "    return Ok(());".into(),
            // Trailing spaces, for whitespace-normalised edits to meet later.
            3 => format!("    let {w}_{} = {w}(x);  ", self.serial),
            _ => format!(
                "    let {w}_{} = {w}_{}(&y, {});",
                self.serial,
                w,
                self.rng.below(100)
            ),
        }
    }

    fn tick(&mut self) -> String {
        self.clock_ms += 1000 + self.rng.below(5000) as i64;
        chrono::DateTime::from_timestamp_millis(self.clock_ms)
            .unwrap()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string()
    }

    fn entry(&mut self, s: usize, message: Value) -> String {
        let ts = self.tick();
        self.serial += 1;
        let id = format!("{:08x}", self.serial);
        let log = &mut self.sessions[s];
        let e = json!({"type": "message", "id": id, "parentId": log.last, "timestamp": ts,
                       "message": message});
        log.lines.push(e.to_string());
        log.last = Some(id.clone());
        id
    }

    /// A tool call and its result; the entry id of the call.
    fn call(&mut self, s: usize, tool: &str, args: Value, failed: bool) -> String {
        self.call_with(s, tool, args, failed, Value::Null)
    }

    /// [`Self::call`] with the result's `details` (an edit's `firstChangedLine`).
    fn call_with(
        &mut self,
        s: usize,
        tool: &str,
        args: Value,
        failed: bool,
        details: Value,
    ) -> String {
        let call_id = format!("call_{}", self.serial);
        let id = self.entry(
            s,
            json!({"role": "assistant", "content": [
            {"type": "toolCall", "id": call_id, "name": tool, "arguments": args}],
            "provider": "p", "model": "m", "stopReason": "toolUse"}),
        );
        let mut result = json!({"role": "toolResult", "toolCallId": call_id, "toolName": tool,
                                "content": [{"type": "text", "text": "ok"}], "isError": failed});
        if !details.is_null() {
            result["details"] = details;
        }
        self.entry(s, result);
        id
    }

    fn save(&self, f: usize) {
        let file = &self.files[f];
        let path = self.repo.join(&file.rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, file.content()).unwrap();
    }

    pub fn session_write(&mut self, s: usize, f: Option<usize>, n: usize) {
        let step = self.steps.len();
        let mut lines: Vec<Line> = Vec::new();
        if let Some(f) = f {
            // A rewrite keeps most lines and adds some: all of them are the write's.
            for l in self.files[f].lines.clone() {
                if self.rng.chance(0.8) {
                    lines.push(Line {
                        text: l.text,
                        origin: Origin::Step(step),
                    });
                }
                if self.rng.chance(0.1) {
                    let text = self.fresh_line();
                    lines.push(Line {
                        text,
                        origin: Origin::Step(step),
                    });
                }
            }
        } else {
            for _ in 0..n {
                let text = self.fresh_line();
                lines.push(Line {
                    text,
                    origin: Origin::Step(step),
                });
            }
        }
        let f = f.unwrap_or_else(|| {
            self.files.push(File {
                rel: format!("src/f{}.rs", self.files.len()),
                lines: vec![],
                renamed: false,
            });
            self.files.len() - 1
        });
        self.files[f].lines = lines;
        let content = self.files[f].content();
        let rel = self.files[f].rel.clone();
        let id = self.call(s, "write", json!({"path": rel, "content": content}), false);
        self.steps.push((s, id));
        self.save(f);
    }

    /// An edit of 1-3 whole lines (more until the old text is unique); `fuzzy`: the old text
    /// as the model typed it, without the file's trailing spaces (pi matches it normalised).
    pub fn session_edit(&mut self, s: usize, f: usize, fuzzy_old: bool) {
        let lines = &self.files[f].lines;
        if lines.len() < 4 {
            return;
        }
        let content = self.files[f].content();
        let start = self.rng.below(lines.len() - 1);
        let mut len = 1 + self.rng.below(3);
        let block = |len: usize| -> String {
            lines[start..(start + len).min(lines.len())]
                .iter()
                .map(|l| format!("{}\n", l.text))
                .collect()
        };
        while content.matches(&block(len)).count() > 1 && start + len < lines.len() && len < 8 {
            len += 1;
        }
        let len = len.min(lines.len() - start);
        let exact = block(len);
        if content.matches(&exact).count() != 1 || exact.trim().is_empty() {
            return;
        }
        let has_trailing = lines[start..start + len]
            .iter()
            .any(|l| l.text.ends_with(' '));
        let fuzzy_old = fuzzy_old && has_trailing;
        let old_text = if fuzzy_old {
            lines[start..start + len]
                .iter()
                .map(|l| format!("{}\n", l.text.trim_end()))
                .collect()
        } else {
            exact.clone()
        };
        let step = self.steps.len();
        let old: Vec<Line> = self.files[f].lines[start..start + len].to_vec();
        let mut new: Vec<Line> = Vec::new();
        for l in &old {
            // pi writes the touched lines of a fuzzy match in their normalised form.
            let kept = if fuzzy_old {
                l.text.trim_end().to_string()
            } else {
                l.text.clone()
            };
            if self.rng.chance(0.5) {
                new.push(Line {
                    text: kept,
                    origin: l.origin,
                });
            } else {
                let text = self.fresh_line();
                new.push(Line {
                    text,
                    origin: Origin::Step(step),
                });
            }
            if self.rng.chance(0.3) {
                let text = self.fresh_line();
                new.push(Line {
                    text,
                    origin: Origin::Step(step),
                });
            }
        }
        let new_text: String = new.iter().map(|l| format!("{}\n", l.text)).collect();
        if new_text == old_text {
            return;
        }
        // Truth: a line whose fuzzy form the edit kept keeps its origin.
        let (a, b): (Vec<String>, Vec<String>) = (
            old.iter().map(|l| fuzzy(&l.text)).collect(),
            new.iter().map(|l| fuzzy(&l.text)).collect(),
        );
        for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for k in 0..len {
                    new[new_index + k].origin = old[old_index + k].origin;
                }
            } else {
                let (i, n) = (op.new_range().start, op.new_range().len());
                for l in &mut new[i..i + n] {
                    l.origin = Origin::Step(step);
                }
            }
        }
        // pi's firstChangedLine: the first line of the new file its line diff marks.
        let base: Vec<&str> = old_text.lines().collect();
        let k = new
            .iter()
            .zip(&base)
            .take_while(|(n, o)| n.text == **o)
            .count();
        let first_changed = start + k + 1;
        self.files[f].lines.splice(start..start + len, new);
        let rel = self.files[f].rel.clone();
        let args = json!({"path": rel, "edits": [{"oldText": old_text, "newText": new_text}]});
        let details = json!({"diff": "", "firstChangedLine": first_changed});
        let id = self.call_with(s, "edit", args, false, details);
        self.steps.push((s, id));
        self.save(f);
    }

    pub fn failed_edit(&mut self, s: usize, f: usize) {
        let rel = self.files[f].rel.clone();
        let args = json!({"path": rel, "oldText": format!("no such text {}", self.serial), "newText": "x"});
        self.call(s, "edit", args, true);
    }

    pub fn person_edit(&mut self, f: usize) {
        let n = self.files[f].lines.len();
        if n == 0 {
            return;
        }
        let i = self.rng.below(n);
        match self.rng.below(4) {
            0 => {
                let text = self.fresh_line();
                self.files[f].lines.insert(
                    i,
                    Line {
                        text,
                        origin: Origin::Person,
                    },
                );
            }
            1 => {
                self.files[f].lines.remove(i);
            }
            // A whitespace-only change: re-indented.
            2 if !self.files[f].lines[i].text.trim().is_empty() => {
                let l = &mut self.files[f].lines[i];
                l.text = format!("  {}", l.text);
                l.origin = Origin::Person;
            }
            _ => {
                let l = &mut self.files[f].lines[i];
                l.text = format!("{} // checked", l.text);
                l.origin = Origin::Person;
            }
        }
        self.save(f);
    }

    /// A person restores a file as a commit some commits back had it.
    pub fn revert(&mut self, f: usize) {
        let back = 1 + self.rng.below(4);
        let Some(id) = self
            .commit_ids
            .len()
            .checked_sub(back)
            .map(|i| self.commit_ids[i].clone())
        else {
            return;
        };
        let rel = self.files[f].rel.clone();
        if let Some(old) = self.snapshots[&id].iter().find(|x| x.rel == rel) {
            self.files[f].lines = old.lines.clone();
            self.save(f);
        }
    }

    pub fn rename(&mut self, f: usize) {
        let from = self.repo.join(&self.files[f].rel);
        let rel = format!("src/moved_{}.rs", self.serial);
        self.serial += 1;
        std::fs::rename(from, self.repo.join(&rel)).unwrap();
        self.files[f].rel = rel;
        self.files[f].renamed = true;
    }

    pub fn commit(&mut self, msg: &str) {
        let repo = git2::Repository::open(&self.repo).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::new("P", "p@x", &git2::Time::new(self.clock_ms / 1000 + 1, 0))
            .unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        if parent.as_ref().is_some_and(|p| p.tree_id() == tree.id()) {
            return;
        }
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let id = repo
            .commit(Some("HEAD"), &sig, &sig, msg, &tree, &parents)
            .unwrap()
            .to_string();
        self.clock_ms += 2000;
        self.snapshots.insert(id.clone(), self.files.clone());
        self.commit_ids.push(id);
    }
}
