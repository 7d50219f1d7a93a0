//! What the front door does for search by meaning: load the model the user chose, embed after
//! a sync, and say in one line why meaning is unavailable when it is.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Result;

use crate::ingest::embed::{embed_pending, indexed_model};
use crate::meaning::Model;
use crate::store::Store;

/// Loads the model (`flag`, else `$PIDX_MODEL`, the config's `model`, or the default), once
/// a process while its files are unchanged: a long-running front door (`pidx mcp`, `pidx
/// serve`) reads its 30 MB once, not at every search.
///
/// # Errors
/// One message naming the folder when it cannot be used.
pub fn load_model(flag: Option<&Path>) -> Result<Arc<Model>> {
    let dir = crate::app::config::model_dir(flag)?;
    let stamp = stamp(&dir);
    let mut cached = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((d, s, m)) = cached.as_ref() {
        if *d == dir && *s == stamp && stamp.is_some() {
            return Ok(Arc::clone(m));
        }
    }
    let model = Arc::new(Model::load(&dir)?);
    *cached = Some((dir, stamp, Arc::clone(&model)));
    Ok(model)
}

/// The model loaded last: its folder, its files' stamp, the model.
static LOADED: Mutex<Option<Loaded>> = Mutex::new(None);

type Loaded = (PathBuf, Option<Stamp>, Arc<Model>);

/// Sizes and modification times of a model folder's files: a model made again in place (a
/// new distillation) is loaded again.
type Stamp = Vec<(u64, std::time::SystemTime)>;

fn stamp(dir: &Path) -> Option<Stamp> {
    let of = |f: &str| {
        let m = std::fs::metadata(dir.join(f)).ok()?;
        Some((m.len(), m.modified().ok()?))
    };
    // config.json may be missing (then its defaults hold); the other two may not.
    Some(vec![
        of("model.safetensors")?,
        of("tokenizer.json")?,
        of("config.json").unwrap_or((0, std::time::UNIX_EPOCH)),
    ])
}

/// After a sync, with the writer lock: embeds new texts when `asked` (`--embed`) or the config
/// file says so. A model that cannot be loaded is an error when asked, a one-line warning when
/// only the config asks (the sync itself has succeeded).
///
/// # Errors
/// Index errors; the model's message when `--embed` was given.
pub fn embed_after_sync(store: &mut Store, asked: bool, flag: Option<&Path>) -> Result<()> {
    if !asked && !crate::app::config::embed_on()? {
        return Ok(());
    }
    let model = match load_model(flag) {
        Ok(m) => m,
        Err(e) if !asked => {
            crate::term::say(&format!("pidx: not embedding: {e}"));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let pass = crate::ingest::embed::Pass {
        deadline: None,
        progress: true,
    };
    let r = crate::ingest::embed::embed_pending_with(&mut store.conn, &model, pass)?;
    if let Some(old) = r.replaced {
        crate::term::say(&format!(
            "pidx: the index's vectors were of model {old}; embedding everything again with {}",
            model.id()
        ));
    }
    if r.entries > 0 {
        let mb = r.bytes as f64 / 1e6;
        // A whole transformer embeds kilobytes a second, a static model megabytes.
        let rate = mb / r.seconds.max(1e-9);
        let rate = if rate < 0.1 {
            format!("{:.1} kB/s", rate * 1e3)
        } else {
            format!("{rate:.1} MB/s")
        };
        crate::term::say(&format!(
            "pidx: embedded {} entries ({} passages, {:.1} MB of text) in {:.1} s ({rate})",
            crate::term::thousands(r.entries as i128),
            crate::term::thousands(r.passages as i128),
            mb,
            r.seconds,
        ));
    }
    Ok(())
}

/// After a sync that brought sessions back (`forget --undo`): when the index holds vectors,
/// embeds what is not embedded with the index's own model, so the sessions come back
/// searchable by meaning as they were, not at the next `sync --embed`. A model that cannot be
/// used (gone, or another one configured since) is a one-line note: the sessions are back
/// either way.
///
/// # Errors
/// Index errors.
pub fn embed_in_step(store: &mut Store) -> Result<()> {
    let Some(indexed) = indexed_model(&store.conn)? else {
        return Ok(());
    };
    let model = match load_model(None) {
        Ok(m) if m.id() == indexed => m,
        Ok(m) => {
            crate::term::say(&format!(
                "pidx: not embedding the sessions brought back: the index's vectors are of model {indexed}, not {}; run `pidx sync --embed`",
                m.id()
            ));
            return Ok(());
        }
        Err(e) => {
            crate::term::say(&format!(
                "pidx: not embedding the sessions brought back: {e}"
            ));
            return Ok(());
        }
    };
    let r = embed_pending(&mut store.conn, &model)?;
    if r.entries > 0 {
        crate::term::say(&format!(
            "pidx: embedded {} entries ({} passages) of the sessions brought back",
            r.entries, r.passages
        ));
    }
    Ok(())
}

/// The model a watcher embeds with: when `asked` (`--embed`) or the config says so; a model
/// that cannot be loaded is an error when asked, a one-line warning otherwise.
///
/// # Errors
/// The model's message when `--embed` was given; a config file that cannot be read.
pub fn model_for_watch(asked: bool) -> Result<Option<Arc<Model>>> {
    if !asked && !crate::app::config::embed_on()? {
        return Ok(None);
    }
    match load_model(None) {
        Ok(m) => Ok(Some(m)),
        Err(e) if !asked => {
            crate::term::say(&format!("pidx: not embedding: {e}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The model to rank by meaning with, when the index holds vectors of it: `Ok(None)` with a
/// one-line note on stderr when it holds vectors but the model cannot be used (then words
/// alone rank); `Ok(None)` silently when nothing is embedded.
///
/// # Errors
/// Index errors; a config file that cannot be read.
pub fn model_for_ranking(
    store_conn: &rusqlite::Connection,
    flag: Option<&Path>,
    quiet: bool,
) -> Result<Option<Arc<Model>>> {
    let say = |msg: &str| {
        if !quiet {
            crate::term::say(msg);
        }
    };
    let Some(indexed) = indexed_model(store_conn)? else {
        return Ok(None);
    };
    let any: bool =
        store_conn.query_row("SELECT EXISTS (SELECT 1 FROM passages)", [], |r| r.get(0))?;
    if !any {
        return Ok(None);
    }
    match load_model(flag) {
        Ok(m) if m.id() == indexed => Ok(Some(m)),
        Ok(m) => {
            say(&format!(
                "pidx: ranking by words only: the index's vectors are of model {indexed}, not {}; run `pidx sync --embed` to embed again",
                m.id()
            ));
            Ok(None)
        }
        Err(e) => {
            say(&format!("pidx: ranking by words only: {e}"));
            Ok(None)
        }
    }
}

/// The model for `--meaning`, which must match the index's vectors.
///
/// # Errors
/// The model's message; nothing embedded; vectors of another model.
pub fn model_for_meaning(conn: &rusqlite::Connection, flag: Option<&Path>) -> Result<Arc<Model>> {
    let model = load_model(flag)?;
    match indexed_model(conn)? {
        Some(m) if m == model.id() => Ok(model),
        Some(m) => anyhow::bail!(
            "the index's vectors are of model {m}, not {}; run `pidx sync --embed` to embed again",
            model.id()
        ),
        None => anyhow::bail!("nothing is embedded yet; run `pidx sync --embed` first"),
    }
}

/// How a search asked to be ranked.
pub struct Ranking<'a> {
    /// The query as typed (what is embedded).
    pub text: &'a str,
    /// `--meaning`: by meaning only.
    pub meaning: bool,
    /// `--lexical` (or `--explain`): by words only.
    pub words_only: bool,
    /// `--embed-model`.
    pub model: Option<&'a Path>,
    /// Say nothing on stderr when words alone rank for want of a usable model (the picker
    /// draws on the terminal; a note there would break its screen).
    pub quiet: bool,
    /// An answer given as you type (`serve`'s fragments): on the team server, words alone
    /// rank it unless by meaning was asked for. The server's meaning half reads every code of
    /// a source (`reads::meaning`, linear in its passages: p95 of a keystroke 9.6 -> 82-141 ms
    /// at 10,000 sessions with vectors, seconds at a million); the search sent whole fuses.
    pub typing: bool,
}

impl Ranking<'_> {
    /// Typed, not asked by meaning: words alone rank it on the team server.
    fn by_words_while_typing(&self) -> bool {
        self.typing && !self.meaning
    }
}

/// The hits of a search ranked by meaning (`--meaning`) or by words and meaning fused (the
/// default for a words query when the index holds vectors of a usable model); `None` when
/// words alone rank it.
///
/// # Errors
/// Index errors; for `--meaning`, a model that cannot be used or does not match the index.
pub fn ranked(
    conn: &rusqlite::Connection,
    scope: &crate::store::Scope,
    opts: &crate::query::search::SearchOptions,
    how: &Ranking,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Option<Vec<crate::query::search::Hit>>> {
    Ok(ranked_stats(conn, scope, opts, how, stop)?.map(|(hits, _)| hits))
}

/// [`ranked`], with what the meaning half did (`search --explain` prints it).
///
/// # Errors
/// As [`ranked`].
pub fn ranked_stats(
    conn: &rusqlite::Connection,
    scope: &crate::store::Scope,
    opts: &crate::query::search::SearchOptions,
    how: &Ranking,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Option<(Vec<crate::query::search::Hit>, Meaning)>> {
    use crate::query::search::{search_hybrid_stats, search_meaning_stats};
    if !asks_meaning(opts, how)? {
        return Ok(None);
    }
    if how.meaning {
        let model = model_for_meaning(conn, how.model)?;
        let (hits, stats) = search_meaning_stats(conn, scope, opts, &model, how.text, stop)?;
        let model = model.id().to_string();
        return Ok(Some((hits, Meaning { model, stats })));
    }
    let Some(model) = model_for_ranking(conn, how.model, how.quiet)? else {
        return Ok(None);
    };
    let (hits, stats) = search_hybrid_stats(conn, scope, opts, &model, how.text, stop)?;
    let model = model.id().to_string();
    Ok(Some((hits, Meaning { model, stats })))
}

/// [`ranked_stats`] over whichever index `reader` reads: on the team server, the sources
/// whose pushed vectors are of the user's model rank by meaning (`TeamReads::search_meaning`),
/// fused with the words as locally; a source of another model ranks by words (a note says
/// so), and a server without vectors ranks by words alone.
///
/// # Errors
/// As [`ranked_stats`]; server errors.
pub fn ranked_by(
    reader: &mut crate::query::Reader,
    opts: &crate::query::search::SearchOptions,
    include_silent: bool,
    how: &Ranking,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Option<(Vec<crate::query::search::Hit>, Meaning)>> {
    match reader {
        crate::query::Reader::Local { conn, scope, .. } => {
            ranked_stats(conn, scope, opts, how, stop)
        }
        crate::query::Reader::Server(reads) => on_server(reads.as_mut(), opts, include_silent, how),
    }
}

fn on_server(
    reads: &mut dyn crate::query::TeamReads,
    opts: &crate::query::search::SearchOptions,
    include_silent: bool,
    how: &Ranking,
) -> Result<Option<(Vec<crate::query::search::Hit>, Meaning)>> {
    use crate::query::search::{fuse, group_by_session, widened, MeaningStats};
    let say = |msg: &str| {
        if !how.quiet {
            crate::term::say(msg);
        }
    };
    if !asks_meaning(opts, how)? || how.by_words_while_typing() {
        return Ok(None);
    }
    let held = reads.embedded()?;
    if held.is_empty() {
        if how.meaning {
            anyhow::bail!("no source on the team server holds vectors: push from an index embedded with `pidx sync --embed`");
        }
        return Ok(None);
    }
    let model = match load_model(how.model) {
        Ok(m) => m,
        Err(e) if how.meaning => return Err(e),
        Err(e) => {
            say(&format!("pidx: ranking by words only: {e}"));
            return Ok(None);
        }
    };
    let others: Vec<&str> = (held.iter())
        .filter(|(_, m)| m != model.id())
        .map(|(s, _)| s.as_str())
        .collect();
    if others.len() == held.len() {
        let theirs = held[0].1.as_str();
        let why = format!(
            "the team server's vectors are of model {theirs}, not {}",
            model.id()
        );
        if how.meaning {
            anyhow::bail!("{why}");
        }
        say(&format!("pidx: ranking by words only: {why}"));
        return Ok(None);
    }
    if !others.is_empty() {
        say(&format!(
            "pidx: by words only in {}: {} vectors of another model than {}",
            others.join(", "),
            if others.len() == 1 { "its" } else { "their" },
            model.id()
        ));
    }
    let id = model.id().to_string();
    let wide = if how.meaning {
        opts.clone()
    } else {
        widened(opts)
    };
    let known = model.knows_a_word(how.text);
    let (meaning, stats) = match model.embed(how.text) {
        Some(q) if known => reads.search_meaning(&wide, include_silent, &q, &id)?,
        _ => (
            Vec::new(),
            MeaningStats {
                floor: crate::meaning::embedder::floor(),
                no_known_word: !known,
                ..MeaningStats::default()
            },
        ),
    };
    let hits = if how.meaning {
        meaning
    } else {
        let words = reads.search(&wide, include_silent)?;
        group_by_session(fuse(words, meaning, opts.limit))
    };
    Ok(Some((hits, Meaning { model: id, stats })))
}

/// Whether a search given as you type ranked by words alone only because it was given so
/// ([`Ranking::typing`]): a words query over the team server, meaning not refused
/// (`--lexical`) nor asked for, and a source there holding vectors. Sent whole, meaning would
/// take part where the reader's model is theirs (`serve` says so under the answer).
///
/// # Errors
/// Server errors.
pub fn deferred(
    reader: &mut crate::query::Reader,
    opts: &crate::query::search::SearchOptions,
    how: &Ranking,
) -> Result<bool> {
    match reader {
        crate::query::Reader::Server(reads) if how.by_words_while_typing() => {
            Ok(asks_meaning(opts, how)? && !reads.embedded()?.is_empty())
        }
        _ => Ok(false),
    }
}

/// Whether a search asked to be ranked as `how` says ranks by meaning at all (the index
/// permitting): `--meaning` of a words query, or a words query fused by default; `--meaning`
/// of a literal or a pattern is an error. Local index and team server alike.
fn asks_meaning(opts: &crate::query::search::SearchOptions, how: &Ranking) -> Result<bool> {
    let words = matches!(opts.query, crate::query::search::Query::Words { .. });
    if how.meaning && !words {
        anyhow::bail!("--meaning ranks words by meaning: leave out --literal and re:");
    }
    Ok(how.meaning || (words && !how.words_only))
}

/// The meaning half of a search: the model it embedded the query with and what it did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meaning {
    pub model: String,
    #[serde(flatten)]
    pub stats: crate::query::search::MeaningStats,
}
