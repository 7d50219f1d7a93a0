//! Conversation messages: user prompts (sometimes with images), assistant messages with thinking,
//! text and tool calls, tool results (code, logs, grep hits, diffs, images), the 1.x system message
//! and user `!` bash executions.

use super::models::Usage;
use super::session::SessionWriter;
use super::text::{push_num, trim_end_in_place, LogKind};
use std::io::Result;

/// PNG signature plus an IHDR chunk, so image data decodes to something that starts like a PNG.
const PNG_HEADER: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R', 0, 0, 5,
    0, 0, 0, 3, 0x20, 8, 6, 0, 0, 0,
];

const SHORT_PROMPTS: &[&str] = &[
    "continue",
    "yes",
    "ok do it",
    "run the tests again",
    "commit this",
    "looks good",
    "go ahead",
    "try again",
    "no, revert that",
    "what about the other case?",
    "keep going",
    "thanks, now the docs",
];

#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Read,
    Bash,
    Edit,
    Write,
    Grep,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Read => "read",
            Tool::Bash => "bash",
            Tool::Edit => "edit",
            Tool::Write => "write",
            Tool::Grep => "grep",
        }
    }
}

/// A tool call: what the assistant asked for, kept until its result is written.
struct Call<'a> {
    id: String,
    tool: Tool,
    path: &'a str,
    /// Relative path or command/pattern, as written in the arguments.
    arg: String,
    kind: LogKind,
    /// For edits: the replaced and replacing text.
    old: String,
    new: String,
    image: bool,
}

impl<'a> SessionWriter<'a> {
    /// A user prompt; content is a plain string now and then, else text blocks plus maybe an image.
    pub(super) fn user_message(&mut self) -> Result<()> {
        self.pause(40_000.0);
        self.s1.clear();
        self.prompt_text();
        let msg_ts = self.now();
        self.tick(1, 30);
        let image = self.image_size(0.015);
        let id = self.begin("message");
        let l = &mut self.line;
        l.key("message");
        l.obj();
        l.kv_str("role", "user");
        if image.is_none() && self.tx.rng.chance(0.15) {
            l.kv_str("content", &self.s1);
        } else {
            l.key("content");
            l.arr();
            text_block(l, &self.s1);
            if let Some(n) = image {
                image_block(self, n);
            }
            self.line.end_arr();
        }
        self.line.kv_i64("timestamp", msg_ts);
        self.line.end();
        self.finish(id, true)
    }

    /// Fills `s1` with a prompt: short replies, requests naming files, pasted logs or long specs.
    fn prompt_text(&mut self) {
        let (tx, out) = (&mut self.tx, &mut self.s1);
        match tx.rng.below(20) {
            0..=2 => out.push_str(tx.rng.pick(SHORT_PROMPTS)),
            3..=12 => {
                for _ in 0..tx.rng.range(1, 3) {
                    tx.sentence(out);
                    out.push(' ');
                }
                trim_end_in_place(out);
            }
            13..=15 => {
                tx.sentence(out);
                out.push_str(" I get this:\n```\n");
                let len = tx.rng.size(2000.0, 1.0, 200, 20_000);
                let kind = if tx.rng.chance(0.5) {
                    LogKind::Build
                } else {
                    LogKind::App
                };
                tx.log(out, kind, len);
                out.push_str("\n```");
            }
            _ => {
                let len = tx.rng.size(1200.0, 0.8, 200, 12_000);
                tx.markdown(out, len);
            }
        }
    }

    /// With probability `p`, and only if the budget allows, the decoded size of an image.
    fn image_size(&mut self, p: f64) -> Option<usize> {
        if !self.rng().chance(p) {
            return None;
        }
        let n = self.rng().size(150_000.0, 0.6, 50_000, 500_000);
        (self.huge || (n as u64) * 3 < self.remaining()).then_some(n * 3 / 4)
    }

    /// An assistant message with tool calls, then one result per call.
    pub(super) fn tool_round(&mut self) -> Result<()> {
        let n = if self.rng().chance(0.75) {
            1
        } else {
            self.rng().range(2, 4) as usize
        };
        let calls: Vec<Call<'a>> = (0..n).map(|_| self.plan_call()).collect();
        self.assistant(&calls, "toolUse")?;
        for c in &calls {
            self.tool_result(c)?;
        }
        Ok(())
    }

    /// The closing assistant message of a turn; rarely aborted or failed.
    pub(super) fn final_answer(&mut self) -> Result<()> {
        let stop = match self.rng().below(100) {
            0 => "aborted",
            1 => "error",
            2 => "length",
            _ => "stop",
        };
        self.assistant(&[], stop)
    }

    /// Writes an assistant message: optional thinking, text, tool calls, usage, stop reason.
    fn assistant(&mut self, calls: &[Call<'a>], stop: &str) -> Result<()> {
        self.pause(1500.0);
        let msg_ts = self.now();
        self.pause(6000.0);
        let model = self.model;
        let id = self.begin("message");
        self.line.key("message");
        self.line.obj();
        self.line.kv_str("role", "assistant");
        self.line.key("content");
        let start = self.line.buf.len();
        self.line.arr();
        if model.reasoning && self.thinking != "off" && self.rng().chance(0.7) {
            self.thinking_block();
        }
        if calls.is_empty() || self.rng().chance(0.4) {
            self.s1.clear();
            let len = if calls.is_empty() {
                self.tx.rng.size(700.0, 1.0, 20, 12_000)
            } else {
                self.tx.rng.size(120.0, 0.7, 10, 800)
            };
            self.tx.markdown(&mut self.s1, len);
            text_block(&mut self.line, &self.s1);
        }
        for c in calls {
            self.tool_call(c);
        }
        self.line.end_arr();
        let output_tokens = (self.line.buf.len() - start) as u64 / 4 + 1;
        self.line.kv_str("api", model.api);
        self.line.kv_str("provider", model.provider);
        self.line.kv_str("model", model.id);
        let context = 2500 + self.ctx_bytes / 4;
        let usage = if stop == "error" {
            Usage::default()
        } else {
            Usage::for_request(model, context, self.cached_tokens, output_tokens)
        };
        self.cached_tokens = context;
        usage.write(&mut self.line, model);
        self.line.kv_str("stopReason", stop);
        self.line.kv_i64("timestamp", msg_ts);
        match stop {
            "aborted" => self.line.kv_str("errorMessage", "Request was aborted"),
            "error" => self.line.kv_str("errorMessage", "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"),
            _ => {}
        }
        self.line.end();
        self.finish(id, false)
    }

    /// A thinking block with a provider-style signature.
    fn thinking_block(&mut self) {
        self.s1.clear();
        let len = self.tx.rng.size(350.0, 0.9, 40, 6000);
        self.tx.prose(&mut self.s1, len);
        trim_end_in_place(&mut self.s1);
        let l = &mut self.line;
        l.obj();
        l.kv_str("type", "thinking");
        l.kv_str("thinking", &self.s1);
        match self.model.api {
            "anthropic-messages" | "google-generative-ai" => {
                l.key("thinkingSignature");
                let n = self.tx.rng.range(150, 900) as usize;
                l.base64_image(&mut self.tx.rng, &[], n);
            }
            "openai-responses" => {
                self.s2.clear();
                self.s2.push_str("{\"type\":\"reasoning\",\"id\":\"rs_");
                self.tx.hex(&mut self.s2, 48);
                self.s2
                    .push_str("\",\"summary\":[],\"encrypted_content\":\"gAAAAA");
                let n = self.tx.rng.range(300, 1200) as usize;
                random_b64(&mut self.tx.rng, &mut self.s2, n);
                self.s2.push_str("\"}");
                l.kv_str("thinkingSignature", &self.s2);
            }
            _ => {}
        }
        l.end();
    }

    /// Chooses the tool and arguments of one call.
    fn plan_call(&mut self) -> Call<'a> {
        let tool = [Tool::Read, Tool::Bash, Tool::Edit, Tool::Write, Tool::Grep]
            [self.rng().weighted(&[35.0, 30.0, 18.0, 6.0, 8.0])];
        let path = self.tx.path();
        let mut c = Call {
            id: String::new(),
            tool,
            path,
            arg: String::new(),
            kind: LogKind::App,
            old: String::new(),
            new: String::new(),
            image: false,
        };
        self.tool_seq += 1;
        c.id = tool_call_id(self, tool);
        let tx = &mut self.tx;
        match tool {
            Tool::Read => c.image = tx.rng.chance(0.015),
            Tool::Bash => c.kind = tx.command(&mut c.arg),
            Tool::Grep => c.arg.push_str(if tx.rng.chance(0.5) {
                tx.func()
            } else {
                tx.konst()
            }),
            Tool::Edit => {
                for _ in 0..tx.rng.range(1, 6) {
                    tx.code_line(&mut c.old);
                    c.old.push('\n');
                }
                edit_text(tx, &c.old, &mut c.new);
            }
            Tool::Write => {}
        }
        c
    }

    /// A `toolCall` content block.
    fn tool_call(&mut self, c: &Call) {
        let l = &mut self.line;
        l.obj();
        l.kv_str("type", "toolCall");
        l.kv_str("id", &c.id);
        l.kv_str("name", c.tool.name());
        l.key("arguments");
        l.obj();
        match c.tool {
            Tool::Read => {
                if c.image {
                    l.kv_str("path", &format!("screenshots/{}.png", self.tx.aword()));
                } else {
                    l.kv_str("path", c.path);
                    if self.tx.rng.chance(0.15) {
                        l.kv_u64("offset", self.tx.rng.range(1, 2000));
                        l.kv_u64("limit", self.tx.rng.range(20, 400));
                    }
                }
            }
            Tool::Bash => {
                l.kv_str("command", &c.arg);
                if self.tx.rng.chance(0.1) {
                    l.kv_u64("timeout", 120);
                }
            }
            Tool::Grep => {
                l.kv_str("pattern", &c.arg);
                if self.tx.rng.chance(0.4) {
                    l.kv_str("glob", self.tx.proj.lang.glob());
                }
            }
            Tool::Edit => {
                l.kv_str("path", c.path);
                l.key("edits");
                l.arr();
                l.obj();
                l.kv_str("oldText", &c.old);
                l.kv_str("newText", &c.new);
                l.end();
                l.end_arr();
            }
            Tool::Write => {
                l.kv_str("path", c.path);
                self.s1.clear();
                let len = self.tx.rng.size(2500.0, 0.9, 100, 40_000);
                let len = self.budget(len);
                self.tx.code(&mut self.s1, len);
                self.line.kv_str("content", &self.s1);
            }
        }
        self.line.end();
        self.line.end();
    }

    /// The `toolResult` message answering `c`.
    fn tool_result(&mut self, c: &Call) -> Result<()> {
        self.pause(800.0);
        let is_error = self.rng().chance(0.06);
        self.s1.clear();
        self.s3.clear();
        let image = if c.image { self.image_size(1.0) } else { None };
        if image.is_some() {
            self.s1.push_str("Read image file [image/png]");
        } else {
            self.result_text(c, is_error);
        }
        let msg_ts = self.now();
        self.tick(0, 5);
        let id = self.begin("message");
        let l = &mut self.line;
        l.key("message");
        l.obj();
        l.kv_str("role", "toolResult");
        l.kv_str("toolCallId", &c.id);
        l.kv_str("toolName", c.tool.name());
        l.key("content");
        l.arr();
        text_block(l, &self.s1);
        if let Some(n) = image {
            image_block(self, n);
        }
        self.line.end_arr();
        if c.tool == Tool::Edit && !is_error {
            self.edit_details(c);
        }
        self.line.kv_bool("isError", is_error);
        self.line.kv_i64("timestamp", msg_ts);
        self.line.end();
        self.finish(id, false)
    }

    /// Fills `s1` with the text a tool returns.
    fn result_text(&mut self, c: &Call, is_error: bool) {
        let proj = self.tx.proj;
        let cwd = proj.cwd.as_str();
        match (c.tool, is_error) {
            (Tool::Read, true) => {
                self.s1
                    .push_str("ENOENT: no such file or directory, access '");
                self.s1.push_str(cwd);
                self.s1.push('/');
                self.s1.push_str(c.path);
                self.s1.push('\'');
            }
            (Tool::Read, false) => {
                let want = self.tx.rng.size(8000.0, 1.0, 200, 60_000);
                let len = self.budget(want.min(50_000));
                self.tx.code(&mut self.s1, len);
                if want > 50_000 {
                    let lines = self.s1.matches('\n').count() as u64;
                    self.s1.push_str("\n[Showing lines 1-");
                    push_num(&mut self.s1, lines);
                    self.s1.push_str(" of ");
                    push_num(&mut self.s1, lines + self.tx.rng.range(10, 5000));
                    self.s1.push_str(". Use offset=");
                    push_num(&mut self.s1, lines + 1);
                    self.s1.push_str(" to continue.]");
                }
            }
            (Tool::Bash, _) => {
                let len = self.tx.rng.size(2000.0, 1.3, 0, 50_000);
                let len = self.budget(len);
                if len < 30 {
                    self.s1.push_str("(no output)");
                } else if matches!(c.kind, LogKind::Grep) {
                    self.tx.grep_output(&mut self.s1, len);
                } else {
                    self.tx.log(&mut self.s1, c.kind, len);
                }
                if is_error {
                    self.s1.push_str("\n\nCommand exited with code ");
                    push_num(&mut self.s1, self.tx.rng.range(1, 2));
                }
            }
            (Tool::Grep, _) if is_error => self.s1.push_str("No matches found"),
            (Tool::Grep, _) => {
                let len = self.tx.rng.size(1500.0, 1.0, 60, 30_000);
                let len = self.budget(len);
                self.tx.grep_output(&mut self.s1, len);
            }
            (Tool::Edit, true) => {
                self.s1.push_str("Could not find the exact text in ");
                self.s1.push_str(c.path);
                self.s1.push_str(
                    ". The old text must match exactly including all whitespace and newlines.",
                );
            }
            (Tool::Edit, false) => {
                self.s1.push_str("Successfully replaced 1 block(s) in ");
                self.s1.push_str(c.path);
                self.s1.push('.');
            }
            (Tool::Write, true) => {
                self.s1.push_str("EACCES: permission denied, open '");
                self.s1.push_str(cwd);
                self.s1.push('/');
                self.s1.push_str(c.path);
                self.s1.push('\'');
            }
            (Tool::Write, false) => {
                self.s1.push_str("Successfully wrote to ");
                self.s1.push_str(c.path);
            }
        }
    }

    /// `"details":{"diff":…,"patch":…,"firstChangedLine":n}` of a successful edit.
    fn edit_details(&mut self, c: &Call) {
        let first = self.tx.rng.range(3, 900);
        let (s2, s3) = (&mut self.s2, &mut self.s3);
        s2.clear();
        s3.clear();
        let ctx_before = first.saturating_sub(2).max(1);
        let old: Vec<&str> = c.old.lines().collect();
        let new: Vec<&str> = c.new.lines().collect();
        // pi's display diff: numbered lines; then a unified patch.
        for (i, l) in old.iter().enumerate() {
            diff_line(s2, '-', first + i as u64, l);
        }
        for (i, l) in new.iter().enumerate() {
            diff_line(s2, '+', first + i as u64, l);
        }
        trim_end_in_place(s2);
        s3.push_str("Index: ");
        s3.push_str(c.path);
        s3.push_str("\n===================================================================\n--- ");
        s3.push_str(c.path);
        s3.push_str("\n+++ ");
        s3.push_str(c.path);
        s3.push_str("\n@@ -");
        push_num(s3, ctx_before);
        s3.push(',');
        push_num(s3, old.len() as u64);
        s3.push_str(" +");
        push_num(s3, ctx_before);
        s3.push(',');
        push_num(s3, new.len() as u64);
        s3.push_str(" @@\n");
        for l in &old {
            s3.push('-');
            s3.push_str(l);
            s3.push('\n');
        }
        for l in &new {
            s3.push('+');
            s3.push_str(l);
            s3.push('\n');
        }
        let l = &mut self.line;
        l.key("details");
        l.obj();
        l.kv_str("diff", s2);
        l.kv_str("patch", s3);
        l.kv_u64("firstChangedLine", first);
        l.end();
    }

    /// The persisted 1.x system message: prompt sections plus the declared tools.
    pub(super) fn system_message(&mut self) -> Result<()> {
        self.has_system = true;
        let ts = self.now();
        let id = self.begin("message");
        self.line.key("message");
        self.system_message_body(ts);
        self.finish(id, false)
    }

    /// `{"role":"system","content":"","sections":{…},"timestamp":…,"toolsAdded":[…]}`; also used as a
    /// compaction's checkpoint.
    pub(super) fn system_message_body(&mut self, ts: i64) {
        self.s1.clear();
        self.s1
            .push_str("# Project Context\n\nProject-specific instructions and guidelines:\n\n## ");
        self.s1.push_str(&self.tx.proj.cwd);
        self.s1.push_str("/AGENTS.md\n\n");
        let cwd_hash = (self.tx.proj.cwd.bytes()).fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        let mut r = super::rng::Rng::new(cwd_hash);
        std::mem::swap(&mut r, &mut self.tx.rng); // the project's AGENTS.md is the same in every session
        self.tx.markdown(&mut self.s1, 1500);
        std::mem::swap(&mut r, &mut self.tx.rng);
        let l = &mut self.line;
        l.obj();
        l.kv_str("role", "system");
        l.kv_str("content", "");
        l.key("sections");
        l.obj();
        l.kv_str("preamble", PREAMBLE);
        l.kv_str("tools", TOOLS_SECTION);
        l.kv_str("rules", RULES_SECTION);
        l.kv_str("project_context", &self.s1);
        l.kv_str("cwd", &self.tx.proj.cwd);
        l.end();
        l.kv_i64("timestamp", ts);
        l.kv_raw("toolsAdded", TOOLS_JSON);
        l.end();
    }

    /// A user `!command` run outside the agent loop.
    pub(super) fn bash_execution(&mut self) -> Result<()> {
        self.pause(20_000.0);
        self.s2.clear();
        let kind = self.tx.command(&mut self.s2);
        self.s1.clear();
        let len = self.tx.rng.size(800.0, 1.2, 40, 30_000);
        let len = self.budget(len);
        self.tx.log(&mut self.s1, kind, len);
        let exit = if self.tx.rng.chance(0.85) { 0 } else { 1 };
        let ts = self.now();
        self.tick(5, 50);
        let id = self.begin("message");
        let l = &mut self.line;
        l.key("message");
        l.obj();
        l.kv_str("role", "bashExecution");
        l.kv_str("command", &self.s2);
        l.kv_str("output", &self.s1);
        l.kv_u64("exitCode", exit);
        l.kv_bool("cancelled", false);
        l.kv_bool("truncated", false);
        l.kv_i64("timestamp", ts);
        if self.tx.rng.chance(0.2) {
            self.line.kv_bool("excludeFromContext", true);
        }
        self.line.end();
        self.finish(id, false)
    }
}

/// A provider-style tool call id.
fn tool_call_id(w: &mut SessionWriter, tool: Tool) -> String {
    let mut s = String::with_capacity(80);
    match w.model.api {
        "anthropic-messages" => {
            s.push_str("toolu_01");
            random_alnum(w.rng(), &mut s, 22);
        }
        "openai-responses" => {
            s.push_str("call_");
            random_alnum(w.rng(), &mut s, 24);
            s.push_str("|fc_");
            w.tx.hex(&mut s, 48);
        }
        "google-generative-ai" => {
            s.push_str(tool.name());
            s.push('_');
            push_num(&mut s, w.now() as u64);
            s.push('_');
            push_num(&mut s, w.tool_seq as u64);
        }
        _ => {
            s.push_str("call_");
            random_alnum(w.rng(), &mut s, 24);
        }
    }
    s
}

fn text_block(l: &mut super::json::Line, text: &str) {
    l.obj();
    l.kv_str("type", "text");
    l.kv_str("text", text);
    l.end();
}

/// `{"type":"image","data":<base64>,"mimeType":"image/png"}` of `n` decoded bytes.
fn image_block(w: &mut SessionWriter, n: usize) {
    w.line.obj();
    w.line.kv_str("type", "image");
    w.line.key("data");
    w.line.base64_image(&mut w.tx.rng, PNG_HEADER, n);
    w.line.kv_str("mimeType", "image/png");
    w.line.end();
}

/// The replacement text of an edit: some lines kept, some rewritten, some added.
fn edit_text(tx: &mut super::text::Tx, old: &str, out: &mut String) {
    for l in old.lines() {
        match tx.rng.below(4) {
            0 => {}
            1 => {
                tx.code_line(out);
                out.push('\n');
            }
            _ => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    for _ in 0..tx.rng.range(0, 4) {
        tx.code_line(out);
        out.push('\n');
    }
}

fn diff_line(out: &mut String, sign: char, n: u64, text: &str) {
    out.push(sign);
    use std::fmt::Write;
    let _ = write!(out, "{n:>4} ");
    out.push_str(text);
    out.push('\n');
}

const ALNUM: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn random_alnum(rng: &mut super::rng::Rng, out: &mut String, n: usize) {
    for _ in 0..n {
        out.push(ALNUM[rng.below(62)] as char);
    }
}

fn random_b64(rng: &mut super::rng::Rng, out: &mut String, n: usize) {
    let mut r = rng.next_u64();
    for i in 0..n {
        if i % 10 == 9 {
            r = rng.next_u64();
        }
        out.push(B64[(r & 63) as usize] as char);
        r >>= 6;
    }
}

const PREAMBLE: &str = "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.";
const TOOLS_SECTION: &str = "- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits with exact text replacement, including multiple disjoint edits in one call\n- write: Create or overwrite files\n- grep: Search file contents for patterns (respects .gitignore)\n\nIn addition to the tools above, you may have access to other custom tools depending on the project.";
const RULES_SECTION: &str = "Guidelines:\n- Use read to examine files instead of cat or sed.\n- Use edit for precise changes (edits[].oldText must match exactly)\n- Use write only for new files or complete rewrites.\n- Be concise in your responses\n- Show file paths clearly when working with files";
const TOOLS_JSON: &str = r#"[{"name":"read","description":"Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}},"required":["path"]}},{"name":"bash","description":"Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first).","parameters":{"type":"object","properties":{"command":{"type":"string","description":"Shell command to execute"},"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}},"required":["command"]}},{"name":"edit","description":"Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string"},"newText":{"type":"string"}},"required":["oldText","newText"]}}},"required":["path","edits"]}},{"name":"write","description":"Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},"content":{"type":"string","description":"Content to write to the file"}},"required":["path","content"]}},{"name":"grep","description":"Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore.","parameters":{"type":"object","properties":{"pattern":{"type":"string","description":"Search pattern (regex or literal string)"},"path":{"type":"string","description":"Directory or file to search (default: current directory)"},"glob":{"type":"string","description":"Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"}},"required":["pattern"]}}]"#;
