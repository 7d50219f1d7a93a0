//! pi's picker filter over every session of the index, kept between answers: a list that is
//! filtered as the user types (`pidx serve`'s sessions page, `q=`) asks again at every key,
//! and reading and matching every session's `allMessagesText` afresh took 2.4 s of CPU at
//! 10,000 sessions. Here the sessions and their compact search texts are read once, the typed
//! words' scores and match ends are kept between keys ([`Memo`]), and before each answer only
//! the files the index re-synced since are read again.

use std::collections::HashMap;
use std::sync::mpsc;

use rusqlite::Connection;

use super::{rank_memo, Compact, Memo, Spill};
use crate::error::Result;
use crate::query::list::{self, all_messages_text, list_sessions, ListOptions};
use crate::query::session_info::SessionInfo;
use crate::store::Scope;

/// Texts read ahead of their compaction (a few: one can be a huge session's).
const TEXTS_AHEAD: usize = 4;

/// The compact search texts of `sessions` (pi's `allMessagesText` with the id, name and cwd,
/// secrets redacted first when `redact`): read one at a time from the index here while another
/// thread compacts them (reading was 260 ms and compacting 516 ms of the 880 ms the picker's
/// first key waited for on 10,000 sessions, one after the other). A second compacting thread
/// was slower on two cores (643-718 against 626-633 ms). Tails go to `spill` (in memory
/// without one).
///
/// # Errors
/// Index errors.
pub fn compact_texts<'a>(
    conn: &Connection,
    sessions: impl Iterator<Item = &'a SessionInfo>,
    redact: bool,
    spill: Option<&mut Spill>,
) -> Result<HashMap<i64, Compact>> {
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(SessionInfo, String)>(TEXTS_AHEAD);
        let compactor = scope.spawn(move || -> Result<HashMap<i64, Compact>> {
            let mut zstd = zstd::bulk::Compressor::new(1).map_err(|e| crate::Error::Io {
                path: "zstd".into(),
                source: e,
            })?;
            let mut spill = spill;
            let mut out = HashMap::new();
            for (s, text) in rx {
                let compact = Compact::new(&s, &text, &mut zstd, spill.as_deref_mut());
                out.insert(s.file_id, compact);
            }
            Ok(out)
        });
        let read = || -> Result<()> {
            for s in sessions {
                let mut text = all_messages_text(conn, s.file_id)?;
                // Only what matching reads: the id, the name, the text and the cwd.
                let mut s = SessionInfo {
                    first_message: String::new(),
                    all_messages_text: None,
                    gateway: s.gateway.clone(),
                    ..s.clone()
                };
                if redact {
                    // A copy only when something is redacted (a 100 MB message is no small copy).
                    if let std::borrow::Cow::Owned(clean) = crate::redact::redact(&text) {
                        text = clean;
                    }
                    list::redacted(&mut s);
                }
                // A compactor that stopped says why when joined.
                if tx.send((s, text)).is_err() {
                    break;
                }
            }
            Ok(())
        };
        let read = read();
        drop(tx);
        let out = compactor
            .join()
            .map_err(|_| crate::Error::Invalid("compacting the sessions' text failed".into()))??;
        read.map(|()| out)
    })
}

/// What a file was when its text was read: its size and when the index last synced it.
type Stamp = (i64, i64);

/// Every file's stamp, and how many sessions are forgotten (a forget or its undo changes the
/// listing without touching a file).
const STAMPS: &str = "SELECT id, size, synced_at FROM files";
const FORGOTTEN: &str = "SELECT count(*) FROM forgotten";

/// Every session's row and compact search text, kept up to date with the index by
/// [`Typed::refresh`], ranked as pi's picker ranks by [`Typed::rank`].
pub struct Typed {
    redact: bool,
    /// Every project's sessions, in pi's listing order.
    sessions: Vec<SessionInfo>,
    /// Where each file's session is in `sessions`.
    at: HashMap<i64, usize>,
    texts: HashMap<i64, Compact>,
    stamps: HashMap<i64, Stamp>,
    forgotten: i64,
    memo: Memo,
    spill: Option<Spill>,
    /// Whether [`Typed::refresh`] has read the index once.
    read: bool,
}

impl Typed {
    /// Nothing read yet; `redact`: texts are redacted before they are matched (as `list
    /// --redact`: a secret typed finds nothing).
    pub fn new(redact: bool) -> Typed {
        Typed {
            redact,
            sessions: Vec::new(),
            at: HashMap::new(),
            texts: HashMap::new(),
            stamps: HashMap::new(),
            forgotten: 0,
            memo: Memo::default(),
            spill: Spill::new().ok(),
            read: false,
        }
    }

    /// Reads again what changed in the index since the last call: nothing when no file was
    /// synced, else the listing and the texts of the files synced since (a few milliseconds
    /// for the stamps of 10,000 files; the first call reads every text).
    ///
    /// # Errors
    /// Index errors.
    pub fn refresh(&mut self, conn: &Connection, scope: &Scope) -> Result<()> {
        let mut stmt = conn.prepare_cached(STAMPS)?;
        let stamps = stmt
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
            .collect::<rusqlite::Result<HashMap<i64, Stamp>>>()?;
        let forgotten: i64 = conn.query_row(FORGOTTEN, [], |r| r.get(0))?;
        if self.read && stamps == self.stamps && forgotten == self.forgotten {
            return Ok(());
        }
        let mut sessions = list_sessions(conn, scope, &ListOptions::default())?;
        // Rows are shown from the index (`list::sessions_by_id`); what is kept is what
        // matching reads, not the first messages (100 MB at 10,000 sessions).
        for s in &mut sessions {
            s.first_message = String::new();
        }
        let mut texts = std::mem::take(&mut self.texts);
        let old = &self.stamps;
        texts.retain(|id, _| old.get(id).is_some_and(|s| stamps.get(id) == Some(s)));
        let todo = sessions.iter().filter(|s| !texts.contains_key(&s.file_id));
        texts.extend(compact_texts(conn, todo, self.redact, self.spill.as_mut())?);
        let listed: std::collections::HashSet<i64> = sessions.iter().map(|s| s.file_id).collect();
        texts.retain(|id, _| listed.contains(id));
        *self = Typed {
            at: sessions
                .iter()
                .enumerate()
                .map(|(i, s)| (s.file_id, i))
                .collect(),
            sessions,
            texts,
            stamps,
            forgotten,
            memo: Memo::default(),
            read: true,
            spill: self.spill.take(),
            redact: self.redact,
        };
        Ok(())
    }

    /// The file ids of the sessions `query` matches among `among` (file ids, in their listing's
    /// order: one project's, whose ties pi orders apart from every project's; every session
    /// when `None`), in pi's order, as `list --query` gives them.
    pub fn rank(&mut self, query: &str, among: Option<&[i64]>) -> Vec<i64> {
        let (among, position): (Vec<usize>, HashMap<usize, usize>) = match among {
            Some(ids) => {
                let among: Vec<usize> = ids
                    .iter()
                    .filter_map(|id| self.at.get(id).copied())
                    .collect();
                let position = among.iter().enumerate().map(|(p, &i)| (i, p)).collect();
                (among, position)
            }
            None => ((0..self.sessions.len()).collect(), HashMap::new()),
        };
        let (sessions, texts) = (&self.sessions, &self.texts);
        let ranked = rank_memo(
            query,
            among,
            sessions.len(),
            |i| sessions[i].modified_ms,
            |i| position.get(&i).copied().unwrap_or(i),
            |i| texts.get(&sessions[i].file_id),
            &mut self.memo,
        );
        ranked
            .into_iter()
            .map(|i| self.sessions[i].file_id)
            .collect()
    }

    /// Whether the index has been read once.
    pub fn is_read(&self) -> bool {
        self.read
    }

    /// How many sessions are listed.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is listed.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}
