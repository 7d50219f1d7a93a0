//! Non-message entries: model and thinking-level changes, names, labels, custom entries and
//! messages, usage entries, compactions and branches (with or without a branch summary).

use super::models::{Model, Usage};
use super::session::SessionWriter;
use super::text::{capitalise_into, trim_end_in_place};
use std::io::Result;

const LABELS: &[&str] = &[
    "checkpoint",
    "before-refactor",
    "good state",
    "bug repro",
    "v2 approach",
    "tests green",
    "wip",
    "ask later",
];
const NAME_VERBS: &[&str] = &[
    "Fix",
    "Refactor",
    "Investigate",
    "Add",
    "Speed up",
    "Debug",
    "Port",
    "Document",
    "Review",
];
const CUSTOM_TYPES: &[&str] = &[
    "plan-mode",
    "git-checkpoint",
    "permission-gate",
    "todo-state",
];
const CUSTOM_MESSAGE_TYPES: &[&str] = &[
    "plan-mode-context",
    "file-watcher",
    "reminder",
    "subagent-result",
];

impl<'a> SessionWriter<'a> {
    pub(super) fn model_change(&mut self, m: &Model) -> Result<()> {
        self.tick(1, 500);
        let id = self.begin("model_change");
        self.line.kv_str("provider", m.provider);
        self.line.kv_str("modelId", m.id);
        self.finish(id, false)
    }

    pub(super) fn thinking_level_change(&mut self, level: &str) -> Result<()> {
        self.tick(1, 50);
        let id = self.begin("thinking_level_change");
        self.line.kv_str("thinkingLevel", level);
        self.finish(id, false)
    }

    /// A `/name`: "Fix `parse_header` flakiness" and the like.
    pub(super) fn session_info(&mut self) -> Result<()> {
        self.pause(5000.0);
        self.s2.clear();
        let verb = self.rng().pick(NAME_VERBS);
        self.s2.push_str(verb);
        self.s2.push(' ');
        match self.tx.rng.below(3) {
            0 => self.s2.push_str(self.tx.func()),
            1 => self.s2.push_str(self.tx.konst()),
            _ => self.s2.push_str(self.tx.module()),
        }
        self.s2.push(' ');
        let n = self.tx.rng.range(1, 3) as usize;
        self.tx.phrase(&mut self.s2, n);
        let id = self.begin("session_info");
        self.line.kv_str("name", &self.s2);
        self.finish(id, false)
    }

    /// Sets (or, now and then, clears: no `label` key) a label on a recent path entry.
    pub(super) fn label(&mut self) -> Result<()> {
        let Some(target) = self.recent_node(50) else {
            return Ok(());
        };
        self.pause(3000.0);
        let clear = self.rng().chance(0.1);
        let name = self.rng().pick(LABELS);
        let id = self.begin("label");
        self.line.key("targetId");
        self.line.id8(target);
        if !clear {
            self.line.kv_str("label", name);
        }
        self.finish(id, false)
    }

    /// A `custom` entry: extension state (`data`), never part of the context.
    pub(super) fn custom(&mut self) -> Result<()> {
        self.tick(10, 2000);
        let ty = self.rng().pick(CUSTOM_TYPES);
        let id = self.begin_custom("custom", ty);
        self.line.key("data");
        self.line.obj();
        match ty {
            "plan-mode" => {
                self.line.kv_bool("enabled", self.tx.rng.chance(0.5));
                self.line.key("todos");
                self.line.arr();
                for _ in 0..self.tx.rng.range(1, 8) {
                    self.s2.clear();
                    self.tx.sentence(&mut self.s2);
                    self.line.obj();
                    self.line.kv_str("text", &self.s2);
                    self.line.kv_bool("done", self.tx.rng.chance(0.4));
                    self.line.end();
                }
                self.line.end_arr();
            }
            "git-checkpoint" => {
                self.s2.clear();
                self.tx.hex(&mut self.s2, 40);
                self.line.kv_str("commit", &self.s2);
                self.line.kv_str("branch", self.tx.aword());
                self.line.kv_bool("dirty", self.tx.rng.chance(0.3));
            }
            "permission-gate" => {
                self.s2.clear();
                self.tx.command(&mut self.s2);
                self.line.kv_str("tool", "bash");
                self.line.kv_str("command", &self.s2);
                self.line.kv_str(
                    "decision",
                    if self.tx.rng.chance(0.9) {
                        "allow"
                    } else {
                        "deny"
                    },
                );
            }
            _ => {
                self.line.kv_u64("open", self.tx.rng.range(0, 12));
                self.line.kv_u64("closed", self.tx.rng.range(0, 40));
                self.line.kv_str("focus", self.tx.func());
            }
        }
        self.line.end();
        self.custom_tail(id);
        self.finish(id, false)
    }

    /// A `custom_message` entry: extension text that does go into the context.
    pub(super) fn custom_message(&mut self) -> Result<()> {
        self.tick(10, 2000);
        let ty = self.rng().pick(CUSTOM_MESSAGE_TYPES);
        self.s1.clear();
        let len = self.tx.rng.size(400.0, 1.0, 30, 6000);
        self.tx.markdown(&mut self.s1, len);
        let id = self.begin_custom("custom_message", ty);
        self.line.kv_str("content", &self.s1);
        self.line.kv_bool("display", self.tx.rng.chance(0.7));
        if self.tx.rng.chance(0.4) {
            self.line.key("details");
            self.line.obj();
            self.line.kv_str("source", self.tx.path());
            self.line.kv_u64("count", self.tx.rng.range(1, 30));
            self.line.end();
        }
        self.custom_tail(id);
        self.finish(id, false)
    }

    /// A `usage` entry (cache warming) that counts toward cost but not toward the context.
    pub(super) fn usage_entry(&mut self) -> Result<()> {
        self.pause(60_000.0);
        let model = self.model;
        let context = 2500 + self.ctx_bytes / 4;
        let usage = Usage::for_request(model, context, self.cached_tokens, 1);
        let id = self.begin("usage");
        self.line.kv_str("kind", "cache_warm");
        self.line.kv_str("provider", model.provider);
        self.line.kv_str("model", model.id);
        usage.write(&mut self.line, model);
        if self.tx.rng.chance(0.5) {
            self.line.kv_str("note", "keep-alive after idle");
        }
        self.finish(id, false)
    }

    /// A compaction: summary of the path so far, keeping the tail from a recent user message.
    pub(super) fn compaction(&mut self) -> Result<()> {
        self.pause(20_000.0);
        let tokens_before = 2500 + self.ctx_bytes / 4;
        let kept = self.kept_from();
        self.s1.clear();
        self.summary_text();
        let id = self.begin("compaction");
        self.line.kv_str("summary", &self.s1);
        self.line.key("firstKeptEntryId");
        self.line.id8(kept.unwrap_or(id));
        self.line.kv_u64("tokensBefore", tokens_before);
        self.file_lists();
        self.line.kv_bool("fromHook", false);
        if self.has_system {
            self.line.key("systemMessage");
            let ts = self.now();
            self.system_message_body(ts);
        }
        self.finish(id, false)?;
        self.ctx_bytes = self.ctx_bytes / 5 + self.s1.len() as u64;
        self.cached_tokens = 0;
        Ok(())
    }

    /// Moves the leaf back to just before a recent user message (re-prompting from there, as
    /// `/tree` does), half the time recording a `branch_summary` of the abandoned path.
    pub(super) fn branch(&mut self) -> Result<()> {
        let lo = self.path.len().saturating_sub(60).max(1);
        let users: Vec<usize> = (lo..self.path.len())
            .filter(|&i| self.path[i].user)
            .collect();
        if users.is_empty() {
            return Ok(());
        }
        let at = users[self.rng().below(users.len())];
        let old_leaf = self.leaf;
        self.path.truncate(at);
        self.leaf = self.path.last().map(|n| n.id);
        self.ctx_bytes = self.ctx_bytes * 7 / 10;
        self.cached_tokens = 0;
        if self.rng().chance(0.5) {
            self.pause(10_000.0);
            self.s1.clear();
            self.summary_text();
            let id = self.begin_with_parent("branch_summary", self.leaf);
            self.line.key("fromId");
            match old_leaf {
                Some(f) => self.line.id8(f),
                None => self.line.str("root"),
            }
            self.line.kv_str("summary", &self.s1);
            self.file_lists();
            self.line.kv_bool("fromHook", false);
            self.finish(id, false)?;
        }
        Ok(())
    }

    /// Id of a recent entry on the active path (label targets).
    fn recent_node(&mut self, window: usize) -> Option<u32> {
        let n = self.path.len();
        (n > 0).then(|| self.path[n - 1 - self.tx.rng.below(n.min(window))].id)
    }

    /// `firstKeptEntryId` candidate: a user message in the last fifth of the path (None: keep none).
    fn kept_from(&mut self) -> Option<u32> {
        let n = self.path.len();
        let lo = n - n / 5;
        let users: Vec<u32> = self.path[lo..]
            .iter()
            .filter(|p| p.user)
            .map(|p| p.id)
            .collect();
        (!users.is_empty()).then(|| users[self.tx.rng.below(users.len())])
    }

    /// Pi-style structured summary into `s1`.
    fn summary_text(&mut self) {
        let (tx, s) = (&mut self.tx, &mut self.s1);
        s.push_str("## Goal\n");
        tx.sentence(s);
        s.push_str("\n\n## Constraints & Preferences\n");
        for _ in 0..tx.rng.range(1, 4) {
            s.push_str("- ");
            tx.sentence(s);
            s.push('\n');
        }
        s.push_str("\n## Progress\n### Done\n");
        for _ in 0..tx.rng.range(2, 8) {
            s.push_str("- [x] ");
            tx.sentence(s);
            s.push('\n');
        }
        s.push_str("\n### In Progress\n- [ ] ");
        tx.sentence(s);
        s.push_str("\n\n## Key Decisions\n");
        for _ in 0..tx.rng.range(1, 5) {
            s.push_str("- **");
            capitalise_into(s, tx.word());
            s.push_str("**: ");
            tx.sentence(s);
            s.push('\n');
        }
        s.push_str("\n## Next Steps\n1. ");
        tx.sentence(s);
        s.push_str("\n2. ");
        tx.sentence(s);
        s.push_str("\n\n## Critical Context\n");
        let len = tx.rng.size(500.0, 0.8, 50, 4000);
        tx.prose(s, len);
        trim_end_in_place(s);
    }

    /// `"details":{"readFiles":[…],"modifiedFiles":[…]}`.
    fn file_lists(&mut self) {
        self.line.key("details");
        self.line.obj();
        for key in ["readFiles", "modifiedFiles"] {
            self.line.key(key);
            self.line.arr();
            for _ in 0..self.tx.rng.range(0, 8) {
                self.line.str(self.tx.path());
            }
            self.line.end_arr();
        }
        self.line.end();
    }
}
