//! One session file: header, entry bookkeeping (ids, parent chain, clock, byte count) and the
//! conversation loop. Entries are written one line at a time into a `BufWriter`, so memory stays
//! small however big the file gets. Message and tool details live in `turns.rs`, the other entry
//! types in `events.rs`.

use super::json::{write_iso, Line};
use super::models::{Model, MODELS};
use super::project::Project;
use super::rng::{derive, perm32, Rng};
use super::text::{Tx, Vocab};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// What kind of session to write.
#[derive(Clone, Copy)]
pub enum Kind {
    Normal,
    /// The `--huge-session`: long, mostly linear, few branches.
    Huge,
    /// A fork of session `src` (by plan index) into this session's project.
    Fork {
        src: usize,
    },
}

/// The plan for one session, fixed before any file is written.
#[derive(Clone)]
pub struct Spec {
    pub project: usize,
    pub start_ms: i64,
    pub target: u64,
    pub seed: u64,
    pub kind: Kind,
}

/// What a finished session reports (forks need the source's path, ids and end time).
#[derive(Clone)]
pub struct Written {
    pub path: PathBuf,
    pub key: u32,
    pub next: u32,
    pub leaf: Option<u32>,
    pub last_ms: i64,
    pub bytes: u64,
    pub entries: u64,
}

/// Read-only data shared by all workers.
pub struct Shared<'a> {
    pub vocab: &'a Vocab,
    pub projects: &'a [Project],
    /// Absolute sessions root (fork headers store absolute paths).
    pub root: &'a Path,
}

/// A node of the current root→leaf path.
#[derive(Clone, Copy)]
pub(super) struct Node {
    pub id: u32,
    /// A user message: a place to re-prompt from when branching, or to keep from when compacting.
    pub user: bool,
}

/// Longest path kept in memory; older nodes are dropped (branch points and compaction cut
/// points are always chosen near the leaf).
const PATH_CAP: usize = 8192;

pub struct SessionWriter<'a> {
    pub(super) tx: Tx<'a>,
    out: BufWriter<File>,
    pub(super) line: Line,
    /// Scratch buffers for generated text.
    pub(super) s1: String,
    pub(super) s2: String,
    pub(super) s3: String,
    key: u32,
    next: u32,
    pub(super) leaf: Option<u32>,
    pub(super) path: Vec<Node>,
    pub(super) bytes: u64,
    entries: u64,
    pub(super) target: u64,
    pub(super) model: &'static Model,
    pub(super) thinking: &'static str,
    pub(super) has_system: bool,
    /// Bytes on the active path since the last compaction (a proxy for context tokens).
    pub(super) ctx_bytes: u64,
    /// Prompt tokens the provider has cached from the previous request.
    pub(super) cached_tokens: u64,
    pub(super) compact_at: u64,
    pub(super) huge: bool,
    pub(super) tool_seq: u32,
}

/// Writes session `spec` and returns what forks need to know about it. `src` is the finished
/// source session when `spec` is a fork.
pub fn write_session(
    shared: &Shared,
    spec: &Spec,
    src: Option<&Written>,
) -> std::io::Result<Written> {
    let proj = &shared.projects[spec.project];
    let mut rng = Rng::new(spec.seed);
    let id = uuid_v7(spec.start_ms, &mut rng);
    let dir = shared.root.join(&proj.dir_name);
    std::fs::create_dir_all(&dir)?;
    let mut name = Vec::with_capacity(80);
    write_iso(&mut name, spec.start_ms, b'-', b'-');
    let path = dir.join(format!("{}_{id}.jsonl", String::from_utf8_lossy(&name)));
    let out = BufWriter::with_capacity(1 << 20, File::create(&path)?);
    let mut w = SessionWriter::new(shared, spec, rng, out);
    w.header(&id, &proj.cwd, src.map(|s| s.path.as_path()), spec.start_ms)?;
    match src {
        Some(src) => {
            w.copy_entries(&src.path)?;
            w.key = src.key;
            w.next = src.next;
            w.leaf = src.leaf;
            w.path.extend(src.leaf.map(|id| Node { id, user: false }));
            w.tx.now_ms = w.tx.now_ms.max(src.last_ms) + w.tx.rng.range(60_000, 3_600_000) as i64;
        }
        None => w.opening()?,
    }
    // Stop when the next turn would overshoot more than it undershoots (about half a turn left),
    // so totals land near the target rather than always above it; at least one turn is written.
    let (mut turns, start) = (0u64, w.bytes);
    while turns == 0 || w.bytes + (w.bytes - start) / turns / 2 < w.target {
        w.between_turns()?;
        w.turn()?;
        turns += 1;
    }
    w.out.flush()?;
    // As pi leaves it: the file last written when its last entry was appended (a few ms after
    // that entry's timestamp), so listings that order or bound by mtime see a real store.
    let written = w.tx.now_ms + w.tx.rng.range(1, 50) as i64;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(written.max(0) as u64);
    w.out.get_ref().set_modified(at)?;
    Ok(Written {
        path,
        key: w.key,
        next: w.next,
        leaf: w.leaf,
        last_ms: w.tx.now_ms,
        bytes: w.bytes,
        entries: w.entries,
    })
}

/// A UUIDv7-shaped id: 48-bit ms timestamp, version 7, RFC variant, random rest.
fn uuid_v7(ms: i64, rng: &mut Rng) -> String {
    let hi = ((ms as u64) << 16) | 0x7000 | (rng.next_u64() & 0x0fff);
    let lo = (rng.next_u64() & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

impl<'a> SessionWriter<'a> {
    fn new(shared: &Shared<'a>, spec: &Spec, mut rng: Rng, out: BufWriter<File>) -> Self {
        let proj = &shared.projects[spec.project];
        let model = &MODELS[rng.weighted(&super::models::weights())];
        let thinking =
            super::models::THINKING_LEVELS[rng.weighted(super::models::THINKING_WEIGHTS)];
        let huge = matches!(spec.kind, Kind::Huge);
        let compact_at = rng.size(600_000.0, 0.3, 250_000, 1_200_000) as u64;
        let key = derive(spec.seed, 0x1d5) as u32;
        let tx_rng = Rng::new(derive(spec.seed, 0x7e47));
        SessionWriter {
            tx: Tx {
                rng: tx_rng,
                vocab: shared.vocab,
                proj,
                now_ms: spec.start_ms,
            },
            out,
            line: Line::new(),
            s1: String::with_capacity(1 << 16),
            s2: String::with_capacity(1 << 12),
            s3: String::with_capacity(1 << 12),
            key,
            next: 0,
            leaf: None,
            path: Vec::new(),
            bytes: 0,
            entries: 0,
            target: spec.target,
            model,
            thinking,
            has_system: false,
            ctx_bytes: 0,
            cached_tokens: 0,
            compact_at,
            huge,
            tool_seq: 0,
        }
    }

    pub(super) fn rng(&mut self) -> &mut Rng {
        &mut self.tx.rng
    }

    /// Bytes left before the target (0 once reached).
    pub(super) fn remaining(&self) -> u64 {
        self.target.saturating_sub(self.bytes)
    }

    /// Caps a generated size so small sessions are not blown past their target by one result.
    pub(super) fn budget(&self, want: usize) -> usize {
        want.min((self.remaining() as usize / 2).max(300))
    }

    /// Advances the session clock by a random amount in `[lo, hi]` ms.
    pub(super) fn tick(&mut self, lo: u64, hi: u64) {
        self.tx.now_ms += self.tx.rng.range(lo, hi) as i64;
    }

    /// Advances the clock by a log-normal pause (median `median_ms`).
    pub(super) fn pause(&mut self, median_ms: f64) {
        let ms = self
            .tx
            .rng
            .lognormal(median_ms, 1.0)
            .clamp(1.0, 86_400_000.0);
        self.tx.now_ms += ms as i64;
    }

    pub(super) fn now(&self) -> i64 {
        self.tx.now_ms
    }

    /// Next entry id: unique within the file by construction (a bijection of a counter).
    fn new_id(&mut self) -> u32 {
        let id = perm32(self.key.wrapping_add(self.next));
        self.next += 1;
        id
    }

    fn header(
        &mut self,
        id: &str,
        cwd: &str,
        parent: Option<&Path>,
        ms: i64,
    ) -> std::io::Result<()> {
        let l = &mut self.line;
        l.clear();
        l.obj();
        l.kv_str("type", "session");
        l.kv_u64("version", 3);
        l.kv_str("id", id);
        l.key("timestamp");
        l.iso(ms);
        l.kv_str("cwd", cwd);
        if let Some(p) = parent {
            l.kv_str("parentSession", &p.to_string_lossy());
        }
        l.end();
        l.newline();
        self.out.write_all(&self.line.buf)?;
        self.bytes += self.line.buf.len() as u64;
        Ok(())
    }

    /// Copies every entry line of a fork source verbatim (pi's `forkFrom`).
    fn copy_entries(&mut self, src: &Path) -> std::io::Result<()> {
        let mut r = BufReader::with_capacity(1 << 20, File::open(src)?);
        let mut buf = Vec::with_capacity(1 << 16);
        let mut first = true;
        loop {
            buf.clear();
            if r.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            if std::mem::take(&mut first) {
                continue; // the source's header
            }
            self.out.write_all(&buf)?;
            self.bytes += buf.len() as u64;
            self.entries += 1;
        }
        Ok(())
    }

    /// Starts an entry: `{"type":ty,"id":…,"parentId":…,"timestamp":…`. Returns its id.
    pub(super) fn begin(&mut self, ty: &str) -> u32 {
        let id = self.new_id();
        self.line.clear();
        self.line.obj();
        self.line.kv_str("type", ty);
        self.line.key("id");
        self.line.id8(id);
        self.parent_and_time(self.leaf);
        id
    }

    /// Like `begin` but with an explicit parent (branch summaries).
    pub(super) fn begin_with_parent(&mut self, ty: &str, parent: Option<u32>) -> u32 {
        let id = self.new_id();
        self.line.clear();
        self.line.obj();
        self.line.kv_str("type", ty);
        self.line.key("id");
        self.line.id8(id);
        self.parent_and_time(parent);
        id
    }

    /// Starts a `custom`/`custom_message` entry, whose base keys come last: `{"type":…,"customType":…`.
    pub(super) fn begin_custom(&mut self, ty: &str, custom_type: &str) -> u32 {
        let id = self.new_id();
        self.line.clear();
        self.line.obj();
        self.line.kv_str("type", ty);
        self.line.kv_str("customType", custom_type);
        id
    }

    /// The trailing `id,parentId,timestamp` of a custom entry.
    pub(super) fn custom_tail(&mut self, id: u32) {
        self.line.key("id");
        self.line.id8(id);
        self.parent_and_time(self.leaf);
    }

    fn parent_and_time(&mut self, parent: Option<u32>) {
        self.line.key("parentId");
        match parent {
            Some(p) => self.line.id8(p),
            None => self.line.null(),
        }
        self.line.key("timestamp");
        self.line.iso(self.tx.now_ms);
    }

    /// Closes the entry line, writes it and makes it the new leaf.
    pub(super) fn finish(&mut self, id: u32, user: bool) -> std::io::Result<()> {
        self.line.end();
        self.line.newline();
        self.out.write_all(&self.line.buf)?;
        let n = self.line.buf.len() as u64;
        self.bytes += n;
        self.ctx_bytes += n;
        self.entries += 1;
        self.leaf = Some(id);
        if self.path.len() >= PATH_CAP {
            self.path.drain(..PATH_CAP / 2);
        }
        self.path.push(Node { id, user });
        Ok(())
    }

    /// The entries every new session starts with: model, thinking level, optionally the 1.x
    /// system message and a name.
    fn opening(&mut self) -> std::io::Result<()> {
        self.model_change(self.model)?;
        self.thinking_level_change(self.thinking)?;
        if self.rng().chance(0.5) {
            self.system_message()?;
        }
        if self.rng().chance(0.2) {
            self.session_info()?;
        }
        Ok(())
    }

    /// Occasional non-conversation entries between two turns.
    fn between_turns(&mut self) -> std::io::Result<()> {
        if self.ctx_bytes > self.compact_at {
            self.compaction()?;
        }
        let r = self.rng().f64();
        let branch_p = if self.huge { 0.01 } else { 0.04 };
        if r < branch_p {
            self.branch()?;
        }
        let r = self.rng().f64() * 100.0;
        match r {
            x if x < 3.0 => self.label()?,
            x if x < 6.0 => self.custom()?,
            x if x < 7.5 => self.custom_message()?,
            x if x < 9.0 => self.usage_entry()?,
            x if x < 12.0 => self.bash_execution()?,
            x if x < 13.5 => self.session_info()?,
            x if x < 15.5 => {
                let m = &MODELS[self.rng().weighted(&super::models::weights())];
                self.model = m;
                self.cached_tokens = 0;
                self.model_change(m)?;
            }
            x if x < 17.0 => {
                let t = super::models::THINKING_LEVELS
                    [self.rng().weighted(super::models::THINKING_WEIGHTS)];
                self.thinking = t;
                self.thinking_level_change(t)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// One prompt: a user message, a few assistant/tool rounds, a final answer.
    fn turn(&mut self) -> std::io::Result<()> {
        self.user_message()?;
        let mean = if self.huge { 5.0 } else { 3.5 };
        let rounds = self.rng().geometric(mean) - 1;
        for r in 0..rounds {
            if r > 0 && self.bytes >= self.target {
                break;
            }
            self.tool_round()?;
        }
        self.final_answer()
    }
}
