//! Opening what a reading command reads: the team server when `--pg URL` (or `PIDX_PG`) chose
//! it, else the local index with the freshness the command asks for. The command then asks its
//! question through `query::Reader`, the same way for both.

use anyhow::Result;

use super::env::{Env, First};
use crate::query::{Reader, TeamServer};
use crate::store::{Scope, Store};

/// An opened index, local or the team server's connection.
// One per command: the size of the local variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Opened {
    Local {
        store: Store,
        scope: Scope,
        unread: Vec<String>,
    },
    Server {
        server: Box<dyn TeamServer>,
        source: Option<String>,
    },
}

impl Opened {
    /// The reader of one answer (on the server: one `READ ONLY` transaction, ended by
    /// `Reader::finish`).
    ///
    /// # Errors
    /// Server errors.
    pub fn reader(&mut self) -> crate::Result<Reader<'_>> {
        match self {
            Opened::Local {
                store,
                scope,
                unread,
            } => Ok(Reader::Local {
                conn: &store.conn,
                scope: scope.clone(),
                unread: unread.clone(),
            }),
            Opened::Server { server, source } => server.reader(source.clone()),
        }
    }

    /// The local index, when that is what was opened.
    pub fn local(&self) -> Option<&Store> {
        match self {
            Opened::Local { store, .. } => Some(store),
            Opened::Server { .. } => None,
        }
    }
}

impl Env {
    /// The team server, when `--pg` chose it for a reading command.
    pub fn reads_server(&self) -> bool {
        self.global.pg_url().is_some()
    }

    /// Opens what a reading command reads: the team server (checked readable) when `--pg`
    /// chose it, else the local index brought up to date for the answer `first` needs
    /// (`Env::open_fresh_first`).
    ///
    /// # Errors
    /// Connection, index and sync errors.
    pub fn open_reader(&self, first: Option<First>) -> Result<Opened> {
        if let Some((url, open)) = self.global.pg_team()? {
            return Ok(Opened::Server {
                server: open(&url)?,
                source: self.global.source.clone(),
            });
        }
        let (store, scope, deferred) = self.open_fresh_first(first)?;
        Ok(Opened::Local {
            store,
            scope,
            unread: deferred.map(|d| d.ids).unwrap_or_default(),
        })
    }
}
