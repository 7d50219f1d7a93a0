//! The picker's reads, all through `pidx::query` (nothing here owns SQL): the session lists of
//! this project and of all projects, pi's `allMessagesText` for typed filtering (loaded on a
//! thread after the first paint), full-text hits, and the freshness sync, which runs on its own
//! thread and connection so the first paint never waits for it.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;

use anyhow::Result;

use crate::app::env::{Env, LOCK_PATIENCE};
use crate::ingest::discover::Root;
use crate::ingest::sync::{sync_first, SyncOptions};
use crate::query::handle;
use crate::query::list::{self, ListOptions, SessionInfo};
use crate::query::picker::{self, Compact, Spill};
use crate::query::search::{self, Hit, SearchOptions};
use crate::store::Scope;
use crate::store::{Store, WriterLock};

/// Full-text hits asked for per keystroke: enough to fill a screen, small enough to stay fast.
pub const HIT_LIMIT: usize = 60;

/// The index as it is, and what the picker's queries need to know.
pub struct Source {
    pub store: Store,
    pub scope: Scope,
    roots: Vec<Root>,
    db: PathBuf,
    /// The current directory (this project).
    pub cwd: String,
    /// `--file`: only the sessions (by file path) whose edits or writes changed it.
    only: Option<Arc<HashSet<String>>>,
}

impl Source {
    /// Opens the index without syncing (read-only when it cannot be written).
    ///
    /// # Errors
    /// The index cannot be opened at all.
    pub fn open(env: &Env, cwd: String, file: Option<&str>) -> Result<Source> {
        let store = match Store::open(&env.db) {
            Ok(store) => store,
            Err(e) if e.is_unwritable(&env.db) => Store::open_read_only(&env.db)?,
            Err(e) => return Err(e.into()),
        };
        // The picker reads little per key: a small page cache keeps its memory small.
        crate::store::small_cache(&store.conn)?;
        let scope = Scope::new(&store.conn, &env.roots)?;
        let only = match file {
            Some(f) => Some(Arc::new(crate::query::files::list::sessions_changing(
                &store.conn,
                f,
            )?)),
            None => None,
        };
        Ok(Source {
            store,
            scope,
            roots: env.roots.clone(),
            db: env.db.clone(),
            cwd,
            only,
        })
    }

    /// Looks the roots up again (a first sync gives them their ids).
    ///
    /// # Errors
    /// Index errors.
    pub fn refresh_scope(&mut self) -> Result<()> {
        self.scope = Scope::new(&self.store.conn, &self.roots)?;
        Ok(())
    }

    /// `pidx list` (or `list --all`), without the messages' text, at most `limit` rows.
    ///
    /// # Errors
    /// Index errors.
    pub fn sessions(&self, all: bool, limit: Option<usize>) -> Result<Vec<SessionInfo>> {
        let opts = ListOptions {
            cwd: (!all).then(|| self.cwd.clone()),
            limit: limit.filter(|_| self.only.is_none()),
            with_text: false,
        };
        let mut found = list::list_sessions(&self.store.conn, &self.scope, &opts)?;
        if let Some(only) = &self.only {
            found.retain(|s| only.contains(&s.path));
            found.truncate(limit.unwrap_or(usize::MAX));
        }
        Ok(clip_titles(found))
    }

    /// The handles `pidx list` shows for `sessions` (shortest unique id prefixes).
    ///
    /// # Errors
    /// Index errors.
    pub fn handles(&self, sessions: &[&SessionInfo]) -> Result<HashMap<i64, String>> {
        let named = sessions.iter().map(|s| handle::Session {
            file_id: s.file_id,
            id: s.id.as_ref().and_then(serde_json::Value::as_str),
            path: &s.path,
        });
        Ok(handle::handles(&self.store.conn, named)?)
    }

    /// The compact search text of each of `sessions` (pi's `allMessagesText` with the id,
    /// name and cwd).
    ///
    /// # Errors
    /// Index errors.
    pub fn texts<'a>(
        &self,
        sessions: impl Iterator<Item = &'a SessionInfo>,
    ) -> Result<HashMap<i64, Compact>> {
        compact_texts(&self.store, sessions)
    }

    /// A previewer on this index (its own thread and connection).
    pub fn previewer(&self) -> super::preview::Previewer {
        super::preview::Previewer::start(self.db.clone())
    }

    /// `pidx search QUERY` over this project or all of them, at most [`HIT_LIMIT`] hits.
    ///
    /// # Errors
    /// A query that cannot be run (said in one line), index or read errors.
    pub fn search(&self, query: &str, all: bool) -> Result<Vec<Hit>> {
        let mut opts = SearchOptions::everywhere(search::parse(query, false)?, HIT_LIMIT);
        opts.cwd = (!all).then(|| self.cwd.clone());
        // Words and meaning fused when the index holds vectors of a usable model: the choice
        // `pidx search` makes (`app::meaning::ranked`), quiet on the picker's screen.
        let how = crate::app::meaning::Ranking {
            text: query,
            meaning: false,
            words_only: false,
            model: None,
            quiet: true,
            typing: false,
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let ranked =
            crate::app::meaning::ranked(&self.store.conn, &self.scope, &opts, &how, &stop)?;
        let mut hits = match ranked {
            Some(hits) => hits,
            None => search::search(&self.store.conn, &self.scope, &opts)?,
        };
        if let Some(only) = &self.only {
            hits.retain(|h| only.contains(&h.path));
        }
        Ok(hits)
    }

    /// Starts loading every project's sessions on a thread with its own connection: the list
    /// first, then their compact search texts (what typed text is matched against).
    pub fn load_all(&self) -> Receiver<Loaded> {
        let (tx, rx) = mpsc::channel();
        let db = self.db.clone();
        let scope = self.scope.clone();
        let only = self.only.clone();
        std::thread::spawn(move || {
            let opts = ListOptions::default();
            let listed = Store::open_read_only(&db)
                .and_then(|store| {
                    crate::store::small_cache(&store.conn)?;
                    let mut list = list::list_sessions(&store.conn, &scope, &opts)?;
                    if let Some(only) = &only {
                        list.retain(|s| only.contains(&s.path));
                    }
                    Ok((store, Arc::new(clip_titles(list))))
                })
                .map_err(|e| e.to_string());
            let (store, every) = match listed {
                Ok(x) => x,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            // Every handle in one read of the ids: no lookups while keys are typed (on an error
            // the rows shown look theirs up, and say what failed).
            let named = every.iter().map(|s| handle::Session {
                file_id: s.file_id,
                id: s.id.as_ref().and_then(serde_json::Value::as_str),
                path: &s.path,
            });
            let handles = handle::handles(&store.conn, named).unwrap_or_default();
            if tx
                .send(Ok(Part::List(Arc::clone(&every), handles)))
                .is_err()
            {
                return;
            }
            let texts = compact_texts(&store, every.iter()).map_err(|e| e.to_string());
            let _ = tx.send(texts.map(Part::Text));
        });
        rx
    }
}

/// Characters of a first message kept for its row (a row shows fewer; the whole messages
/// average about a kilobyte, and 10,000 of them would be most of the list's memory).
const TITLE_CHARS: usize = 240;

/// `sessions` with each first message on one line and cut to [`TITLE_CHARS`] (the picker
/// matches typed text against the messages' text, never against this).
fn clip_titles(mut sessions: Vec<SessionInfo>) -> Vec<SessionInfo> {
    for s in &mut sessions {
        let line = crate::term::one_line(&s.first_message);
        s.first_message = match line.char_indices().nth(TITLE_CHARS) {
            Some((cut, _)) => line[..cut].to_string(),
            None => line,
        };
    }
    sessions
}

/// The compact search texts of `sessions`, tails spilled to a temporary file (in memory when
/// none can be made).
fn compact_texts<'a>(
    store: &Store,
    sessions: impl Iterator<Item = &'a SessionInfo>,
) -> Result<HashMap<i64, Compact>> {
    let mut spill = Spill::new().ok();
    Ok(picker::compact_texts(
        &store.conn,
        sessions,
        false,
        spill.as_mut(),
    )?)
}

/// What the loader sends: every session with its handle, then their search texts.
pub enum Part {
    List(Arc<Vec<SessionInfo>>, HashMap<i64, String>),
    Text(HashMap<i64, Compact>),
}

/// One message of the loader.
pub type Loaded = Result<Part, String>;

/// How the background freshness sync went.
#[derive(Debug)]
pub enum Synced {
    /// A first sync of a large store: this project's sessions are read; the rest follow.
    ProjectFirst {
        rest: usize,
    },
    /// It ran; `changed` when any file was new, changed or removed.
    Ran {
        changed: bool,
        note: Option<String>,
    },
    /// Another process keeps the index (a watcher) or is writing it: nothing ran.
    Skipped,
    Failed(String),
}

/// Runs the freshness sync every query runs first, on its own thread and connection, under the
/// same rule as `commands::writer_lock_for_freshness` (a watcher's index is left to it), but
/// silent: the screen is the picker's.
///
/// When the index is far behind (a first sync of a large store, the rule of `pidx list`'s
/// first answer), this project's folder is read first and [`Synced::ProjectFirst`] sent, so
/// the screen fills in seconds; the other projects follow.
pub fn spawn_sync(env: &Env, cwd: &str) -> Receiver<Synced> {
    let (tx, rx) = mpsc::channel();
    let db = env.db.clone();
    let roots = env.roots.clone();
    // Without one folder per project (a flat or gateway root) there is nothing to read first.
    let (project, threshold) = match env.project_dirs(cwd) {
        Some(dirs) => (dirs, crate::app::background::first_answer_bytes()),
        None => (Default::default(), u64::MAX),
    };
    std::thread::spawn(move || {
        let outcome = match WriterLock::acquire(&db, "sync", Some(LOCK_PATIENCE), |_| {}) {
            Ok(Ok(lock)) => {
                let mut first_done = |later: &crate::ingest::sync::Deferred| {
                    let _ = tx.send(Synced::ProjectFirst { rest: later.files });
                };
                let result = Store::open(&db).and_then(|mut store| {
                    sync_first(
                        &mut store,
                        &roots,
                        SyncOptions::default(),
                        &project,
                        threshold,
                        &mut first_done,
                    )
                });
                drop(lock);
                match result {
                    Ok(r) => Synced::Ran {
                        changed: r.new + r.changed + r.removed > 0,
                        note: (!r.errors.is_empty())
                            .then(|| format!("{} files skipped", r.errors.len())),
                    },
                    Err(e) => Synced::Failed(e.to_string()),
                }
            }
            Ok(Err(_)) => Synced::Skipped,
            Err(e) => Synced::Failed(e.to_string()),
        };
        let _ = tx.send(outcome);
    });
    rx
}
