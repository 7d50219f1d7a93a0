//! `context`: pi's `buildSessionContext` (docs/pi-format.md §6) for any leaf. The leaf-to-root walk is a
//! recursive CTE over (file, entry id); model and thinking level come from the whole path; the
//! newest compaction on the path cuts it at `firstKeptEntryId`; context edits apply last. Message
//! bodies are copied byte for byte from the JSONL line each entry points at.
//!
//! One deliberate difference: pi loops forever on a parent cycle; here the walk stops at the
//! first entry it has already visited and the result says so (`cycle`).

use std::fs::File;
use std::io::Write;

use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::pi::message::unquote;
use crate::pi::paths::PathFacts;
use crate::pi::rawjson::member;
use crate::query::resolve::Resolved;
use crate::query::Reader;
use crate::store::jsonl::read_at;
use crate::store::schema::{path_facts, ANCESTORS, PATH_FACTS};

mod messages;
mod openclaw;
pub mod page;

use messages::{context_entries, edits_of, messages_at, settings, Edits};

/// pi's `{messages, thinkingLevel, model}`, with each message kept as JSON text.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub messages: Vec<String>,
    /// `None` when the path set it to a non-string (JSON leaves the key out).
    pub thinking_level: Option<String>,
    /// `(provider, modelId)`, each `None` when undefined.
    pub model: Option<(Option<String>, Option<String>)>,
    /// The leaf-to-root walk met an entry twice (pi would never return).
    pub cycle: bool,
    /// Entries on the path, root first.
    pub path_len: usize,
}

impl Context {
    /// The JSON pi's `buildSessionContext` returns, byte-exact for stored messages.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"messages\":[");
        out.push_str(&self.messages.join(","));
        out.push_str(&self.json_after_messages());
        out
    }

    /// What follows the messages in [`Context::to_json`]: `]`, the settings and the closing `}`.
    fn json_after_messages(&self) -> String {
        let mut out = String::from("]");
        if let Some(t) = &self.thinking_level {
            out.push_str(",\"thinkingLevel\":");
            out.push_str(&Value::from(t.as_str()).to_string());
        }
        out.push_str(",\"model\":");
        match &self.model {
            None => out.push_str("null"),
            Some((provider, model)) => {
                let mut m = Map::new();
                if let Some(p) = provider {
                    m.insert("provider".into(), p.as_str().into());
                }
                if let Some(id) = model {
                    m.insert("modelId".into(), id.as_str().into());
                }
                out.push_str(&Value::Object(m).to_string());
            }
        }
        out.push('}');
        out
    }
}

/// One entry on the path, with what context building needs (the columns of `ANCESTORS`).
#[derive(Debug, Clone)]
pub struct PathEntry {
    pub seq: i64,
    pub id: Option<String>,
    pub kind: Option<String>,
    pub role: Option<String>,
    pub first_kept: Option<String>,
    pub target_id: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub offset: i64,
    pub len: i64,
    pub ts_ms: Option<i64>,
}

/// Where the entries' lines come from: the session file here, the raw rows on the team server.
pub trait Lines {
    /// The entry's line, checked to still be the entry the index knows.
    ///
    /// # Errors
    /// `Stale` when it is not, `Io` when it cannot be read.
    fn line(&self, e: &PathEntry) -> Result<String>;
    /// The session's format version (v1 messages are migrated on the way out).
    fn version(&self) -> i64;
}

/// What the session row says about loading the file.
struct Loadability {
    /// pi's `SessionManager.open` accepts the file (docs/pi-format.md §4.3): its first JSON value is a
    /// header with a string id, or the file is empty (pi would start a new session in it).
    openable: bool,
    version: i64,
    entry_count: i64,
    leaf_seq: Option<i64>,
    /// Path facts cannot be trusted: walk whole paths.
    tangled: bool,
}

/// Builds the context at `leaf` (an entry id; `None` is pi's default leaf, the last entry).
///
/// # Errors
/// `Invalid` when pi cannot load the file or the leaf does not exist, `Stale` when the file
/// changed under the index, `Io` when it cannot be read.
pub fn build_context(conn: &Connection, session: &Resolved, leaf: Option<&str>) -> Result<Context> {
    let plan = plan_context(conn, session, leaf)?;
    let mut messages = Vec::new();
    for i in 0..plan.len() {
        messages.extend(plan.messages_at(i)?);
    }
    let mut ctx = plan.settings;
    ctx.messages = messages;
    Ok(ctx)
}

/// A context located but not read: the entries it is made of (their byte ranges, not their
/// bodies) and its settings. Reading it entry by entry keeps memory bounded by one entry, so a
/// front door can page through a 1 GB session's context.
pub struct ContextPlan {
    /// Thinking level, model, cycle and path length; `messages` is empty.
    pub settings: Context,
    /// pi's `buildContextEntries` at the leaf: the newest compaction first when there is one.
    entries: Vec<PathEntry>,
    /// `context_edit` entries by the entry id they edit (the last one wins, as pi's map).
    edits: Edits,
    lines: Option<Box<dyn Lines + Send>>,
    /// The leaf the context was built at.
    pub leaf_id: Option<String>,
    /// Built as OpenClaw builds it (a transcript of its SQLite store, `openclaw.rs`): its
    /// compaction summary comes without pi's `systemMessage`.
    openclaw: bool,
}

impl ContextPlan {
    /// The plan of pi's `buildSessionContext` over a whole path (root first, as `ANCESTORS`
    /// walks it) whose lines come from `lines` (the team server's raw rows).
    ///
    /// # Errors
    /// As [`build_context`].
    pub fn of_path(
        path: Vec<PathEntry>,
        cycle: bool,
        lines: Box<dyn Lines + Send>,
    ) -> Result<ContextPlan> {
        let mut settings = settings(&path, lines.as_ref())?;
        settings.cycle = cycle;
        settings.path_len = path.len();
        let leaf_id = path.last().and_then(|e| e.id.clone());
        let entries = context_entries(&path);
        let edits = edits_of(&entries);
        Ok(ContextPlan {
            settings,
            entries,
            edits,
            lines: Some(lines),
            leaf_id,
            openclaw: false,
        })
    }

    /// How many context entries there are (each gives zero, one or two messages).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The id of context entry `i`.
    pub fn entry_id(&self, i: usize) -> Option<&str> {
        self.entries.get(i).and_then(|e| e.id.as_deref())
    }

    /// The messages context entry `i` contributes (pi's `buildSessionProjection` for it, edits
    /// applied), read from the session file.
    ///
    /// # Errors
    /// `Stale` when the file changed under the index, `Io` when it cannot be read.
    pub fn messages_at(&self, i: usize) -> Result<Vec<String>> {
        let Some(lines) = &self.lines else {
            return Ok(Vec::new());
        };
        let mut messages = messages_at(&self.entries, &self.edits, i, lines.as_ref())?;
        // OpenClaw's `createCompactionSummaryMessage` is the summary alone.
        let compaction = self.entries[i].kind.as_deref() == Some("compaction");
        if self.openclaw && compaction && messages.len() > 1 {
            messages.drain(..messages.len() - 1);
        }
        Ok(messages)
    }
}

/// The messages of a context for a reader that must know how many there are before it prints
/// the first: [`ContextPlan::read_ahead`] reads them once to count, and keeps them while they
/// add up to a budget; past it each entry's messages are read again when taken, so memory stays
/// one message whatever the session.
pub struct ReadAhead {
    pub count: usize,
    kept: Vec<Option<Vec<String>>>,
}

impl ReadAhead {
    /// The messages of context entry `i`, kept or read again.
    ///
    /// # Errors
    /// As [`ContextPlan::messages_at`].
    pub fn take(&mut self, plan: &ContextPlan, i: usize) -> Result<Vec<String>> {
        match self.kept.get_mut(i).and_then(Option::take) {
            Some(messages) => Ok(messages),
            None => plan.messages_at(i),
        }
    }
}

impl ContextPlan {
    /// The number of messages and the last `n` of them, read one entry at a time (memory: those
    /// `n` and the entry being read).
    ///
    /// # Errors
    /// As [`ContextPlan::messages_at`].
    pub fn last_messages(&self, n: usize) -> Result<(usize, Vec<String>)> {
        let mut last = std::collections::VecDeque::with_capacity(n + 2);
        let mut total = 0;
        for i in 0..self.len() {
            for message in self.messages_at(i)? {
                total += 1;
                last.push_back(message);
                if last.len() > n {
                    last.pop_front();
                }
            }
        }
        Ok((total, last.into()))
    }

    /// Counts the messages, keeping them while they add up to at most `budget` bytes.
    ///
    /// # Errors
    /// As [`ContextPlan::messages_at`].
    pub fn read_ahead(&self, budget: usize) -> Result<ReadAhead> {
        let mut ahead = ReadAhead {
            count: 0,
            kept: Vec::with_capacity(self.len()),
        };
        let mut bytes = 0;
        for i in 0..self.len() {
            let messages = self.messages_at(i)?;
            ahead.count += messages.len();
            bytes += messages.iter().map(String::len).sum::<usize>();
            ahead.kept.push((bytes <= budget).then_some(messages));
        }
        Ok(ahead)
    }
}

impl ContextPlan {
    /// Writes [`Context::to_json`] of this context to `w`, one message at a time: the output of
    /// a session whose messages add up to gigabytes needs memory for one message, not all.
    ///
    /// # Errors
    /// As [`ContextPlan::messages_at`]; `Io` when `w` fails.
    pub fn write_json(&self, w: &mut dyn Write) -> Result<()> {
        let io = |e| Error::io("standard output", e);
        w.write_all(b"{\"messages\":[").map_err(io)?;
        let mut first = true;
        for i in 0..self.len() {
            for message in self.messages_at(i)? {
                if !first {
                    w.write_all(b",").map_err(io)?;
                }
                first = false;
                w.write_all(message.as_bytes()).map_err(io)?;
            }
        }
        w.write_all(self.settings.json_after_messages().as_bytes())
            .map_err(io)
    }
}

/// The plan with no entries: a session without any (pi's context of a new session).
pub fn empty_plan() -> ContextPlan {
    ContextPlan {
        settings: Context {
            thinking_level: Some("off".into()),
            ..Context::default()
        },
        entries: Vec::new(),
        edits: Default::default(),
        lines: None,
        leaf_id: None,
        openclaw: false,
    }
}

/// Locates pi's context at `leaf` (an entry id; `None`: the last entry) in the local index or
/// on the team server, without reading message bodies (the server's come with the path).
///
/// # Errors
/// As [`build_context`]; server errors.
pub fn plan(reader: &mut Reader, session: &Resolved, leaf: Option<&str>) -> Result<ContextPlan> {
    match reader {
        Reader::Local { conn, .. } => plan_context(conn, session, leaf),
        Reader::Server(server) => server.context_plan(session, leaf),
    }
}

/// Locates the context at `leaf` (see [`build_context`]) without reading message bodies.
///
/// # Errors
/// As [`build_context`].
pub fn plan_context(
    conn: &Connection,
    session: &Resolved,
    leaf: Option<&str>,
) -> Result<ContextPlan> {
    let info = loadability(conn, session.file_id)?;
    if !info.openable {
        return Err(Error::Invalid(format!(
            "pi cannot open {}: its first JSON line is not a session header with an id",
            session.path
        )));
    }
    let leaf_seq = match leaf {
        Some(id) => Some(
            seq_of(conn, session.file_id, id)?.ok_or_else(|| Error::NoEntry {
                session: session.path.clone(),
                entry: id.to_string(),
            })?,
        ),
        None => info.leaf_seq,
    };
    let Some(leaf_seq) = leaf_seq else {
        return Ok(empty_plan());
    };
    let file = File::open(&session.path).map_err(|e| Error::io(&session.path, e))?;
    let lines = LineSource {
        file,
        path: session.path.clone(),
        version: info.version,
    };
    if is_store_copy(conn, session.file_id)? {
        return openclaw_plan(conn, session.file_id, leaf, lines);
    }
    let cut = if info.tangled {
        None
    } else {
        cut_path(conn, session.file_id, leaf_seq)?
    };
    let (settings, path) = match cut {
        Some(cut) => {
            let mut ctx = settings(&cut.setters, &lines)?;
            ctx.path_len = cut.path_len;
            (ctx, cut.path)
        }
        None => {
            let (path, cycle) = walk(conn, session.file_id, leaf_seq, info.entry_count)?;
            let mut ctx = settings(&path, &lines)?;
            ctx.cycle = cycle;
            ctx.path_len = path.len();
            (ctx, path)
        }
    };
    let leaf_id = path.last().and_then(|e| e.id.clone());
    let entries = context_entries(&path);
    drop(path);
    let edits = edits_of(&entries);
    Ok(ContextPlan {
        settings,
        entries,
        edits,
        lines: Some(Box::new(lines)),
        leaf_id,
        openclaw: false,
    })
}

/// Whether the file is pidx's copy of a transcript of an OpenClaw SQLite store: its folder is
/// a folder of copies (`store::MIRROR_STATE`), whichever root it was made for.
fn is_store_copy(conn: &Connection, file_id: i64) -> Result<bool> {
    let dir: Option<String> = conn
        .prepare_cached("SELECT dir FROM files WHERE id = ?1")?
        .query_row([file_id], |r| r.get(0))
        .optional()?;
    Ok(dir.is_some_and(|d| {
        std::path::Path::new(&d)
            .join(crate::store::MIRROR_STATE)
            .is_file()
    }))
}

/// Every entry of a file in order (OpenClaw's tree reads them all, shadowed ones included).
const ALL_ENTRIES: &str = "
SELECT seq, id, type, role, first_kept, target_id, provider, model, thinking, offset, len, ts_ms
FROM entries WHERE file_id = ?1 ORDER BY seq";

/// OpenClaw's context (`openclaw.rs`) at `leaf` (its own leaf when `None`): its active path,
/// the settings over that path as its `buildSessionContext` reads them, and the window after
/// the newest reset or compaction.
fn openclaw_plan(
    conn: &Connection,
    file_id: i64,
    leaf: Option<&str>,
    lines: LineSource,
) -> Result<ContextPlan> {
    let mut stmt = conn.prepare_cached(ALL_ENTRIES)?;
    let all = stmt
        .query_map([file_id], path_entry)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let path = openclaw::active_path(&all, leaf, &lines)?;
    drop(all);
    let mut settings = settings(&path, &lines)?;
    settings.path_len = path.len();
    let entries = openclaw::context_entries(&path, &lines)?;
    Ok(ContextPlan {
        settings,
        leaf_id: path.last().and_then(|e| e.id.clone()),
        entries,
        edits: Default::default(),
        lines: Some(Box::new(lines)),
        openclaw: true,
    })
}

/// A row of `ANCESTORS` or `ALL_ENTRIES`.
fn path_entry(r: &rusqlite::Row) -> rusqlite::Result<PathEntry> {
    Ok(PathEntry {
        seq: r.get(0)?,
        id: r.get(1)?,
        kind: r.get(2)?,
        role: r.get(3)?,
        first_kept: r.get(4)?,
        target_id: r.get(5)?,
        provider: r.get(6)?,
        model: r.get(7)?,
        thinking: r.get(8)?,
        offset: r.get(9)?,
        len: r.get(10)?,
        ts_ms: r.get(11)?,
    })
}

/// The part of a path pi's context reads, found from the leaf's path facts (`ingest::paths`).
struct CutPath {
    /// From the newest compaction's `firstKeptEntryId` (when on the path) to the leaf.
    path: Vec<PathEntry>,
    /// The entries that decide the settings, in path order: where pi throws, the newest
    /// thinking level change, the newest model.
    setters: Vec<PathEntry>,
    path_len: usize,
}

/// The cut path at `leaf_seq`, or `None` when there is no compaction on the path (the context
/// is the whole path then) or the facts do not line up (walk the whole path instead).
fn cut_path(conn: &Connection, file_id: i64, leaf_seq: i64) -> Result<Option<CutPath>> {
    let facts = |seq: i64| -> Result<Option<PathFacts>> {
        Ok(conn
            .prepare_cached(&format!(
                "SELECT {PATH_FACTS} FROM entries WHERE file_id = ?1 AND seq = ?2"
            ))?
            .query_row(rusqlite::params![file_id, seq], path_facts)
            .optional()?)
    };
    let Some(leaf) = facts(leaf_seq)? else {
        return Ok(None);
    };
    let Some(compaction_seq) = leaf.compaction else {
        return Ok(None);
    };
    let Some(compaction) = facts(compaction_seq)? else {
        return Ok(None);
    };
    let (mut tail, _) = walk(conn, file_id, leaf_seq, leaf.depth - compaction.depth)?;
    let Some(first) = tail.first().filter(|e| e.seq == compaction_seq) else {
        return Ok(None);
    };
    let Some(first_kept) = first.first_kept.clone() else {
        return Ok(None);
    };
    // The kept part before the compaction, when firstKeptEntryId is an ancestor of it.
    let mut path = Vec::new();
    if let Some(kept_seq) = seq_of(conn, file_id, &first_kept)? {
        if let Some(kept) = facts(kept_seq)?.filter(|k| k.depth < compaction.depth) {
            let (head, _) = walk(conn, file_id, compaction_seq, compaction.depth - kept.depth)?;
            if head.first().is_some_and(|e| e.seq == kept_seq) {
                path = head;
                path.pop();
            }
        }
    }
    path.append(&mut tail);
    let mut setter_seqs: Vec<i64> = [leaf.throws, leaf.thinking, leaf.model]
        .into_iter()
        .flatten()
        .collect();
    setter_seqs.sort_unstable();
    setter_seqs.dedup();
    let setters = setter_seqs
        .into_iter()
        .map(|seq| Ok(walk(conn, file_id, seq, 0)?.0))
        .collect::<Result<Vec<_>>>()?
        .concat();
    Ok(Some(CutPath {
        path,
        setters,
        path_len: leaf.depth as usize + 1,
    }))
}

/// Whether pi can open the file at all (docs/pi-format.md §4.3).
///
/// # Errors
/// Index errors, or `NotFound` for an unknown file.
pub fn openable(conn: &Connection, file_id: i64) -> Result<bool> {
    Ok(loadability(conn, file_id)?.openable)
}

fn loadability(conn: &Connection, file_id: i64) -> Result<Loadability> {
    conn.query_row(
        "SELECT s.loadable OR (s.parsed_values = 0 AND f.size = 0), s.version, s.entry_count,
                s.leaf_seq, s.tangled
         FROM sessions s JOIN files f ON f.id = s.file_id WHERE s.file_id = ?1",
        [file_id],
        |r| {
            Ok(Loadability {
                openable: r.get(0)?,
                version: r.get::<_, Option<i64>>(1)?.unwrap_or(1),
                entry_count: r.get(2)?,
                leaf_seq: r.get(3)?,
                tangled: r.get(4)?,
            })
        },
    )
    .optional()?
    .ok_or_else(|| Error::NotFound(format!("file {file_id}")))
}

/// The entry pi's `byId` map holds for `id` (the last one with that id).
pub fn seq_of(conn: &Connection, file_id: i64, id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT seq FROM entries WHERE file_id = ?1 AND id = ?2 AND shadowed = 0")?
        .query_row(rusqlite::params![file_id, id], |r| r.get(0))
        .optional()?)
}

/// The path root-first, at most `steps` parents up from `leaf_seq`, and whether a cycle cut it.
fn walk(
    conn: &Connection,
    file_id: i64,
    leaf_seq: i64,
    steps: i64,
) -> Result<(Vec<PathEntry>, bool)> {
    let mut stmt = conn.prepare_cached(ANCESTORS)?;
    let rows = stmt.query_map(rusqlite::params![file_id, leaf_seq, steps], path_entry)?;
    let mut seen = std::collections::HashSet::new();
    let mut path = Vec::new();
    let mut cycle = false;
    for row in rows {
        let e = row?;
        if !seen.insert(e.seq) {
            cycle = true;
            break;
        }
        path.push(e);
    }
    path.reverse();
    Ok((path, cycle))
}

/// Reads entry lines back from the session file.
struct LineSource {
    file: File,
    path: String,
    version: i64,
}

impl Lines for LineSource {
    fn version(&self) -> i64 {
        self.version
    }

    /// The entry's line as text (invalid UTF-8 replaced, as pi's decoder does), checked to
    /// still be the entry the index knows.
    fn line(&self, e: &PathEntry) -> Result<String> {
        let bytes = read_at(&self.file, e.offset as u64, e.len as usize)
            .map_err(|err| Error::io(&self.path, err))?;
        let whole = bytes.len() == e.len as usize;
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|bad| String::from_utf8_lossy(bad.as_bytes()).into_owned());
        let id_ok = self.version < 2 || member(&text, "id").map(unquote) == e.id;
        if !whole || !id_ok {
            return Err(Error::Stale {
                path: self.path.clone().into(),
            });
        }
        Ok(text)
    }
}
