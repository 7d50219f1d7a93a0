//! Where a query reads: the local SQLite index or the team server (`pidx --pg URL`). Each query
//! module has one entry point over a [`Reader`], which runs its local SQL or its server half
//! (`query::*::server`, beside it); the front doors choose the reader and print the answer with
//! the same presentation code whichever it was.

use rusqlite::Connection;

use crate::error::Result;
use crate::store::pg::server_err;
use crate::store::Scope;

/// The index a query reads.
pub enum Reader<'c> {
    /// The local index, with the roots and filters the query sees.
    Local {
        conn: &'c Connection,
        scope: Scope,
        /// Sorted ids of session files not read into the index yet (a first answer given
        /// before a long first sync finished): handles stay unique among them too.
        unread: Vec<String>,
    },
    /// The team server, in one `READ ONLY` transaction; every row names its source, and
    /// `source` (`--source`) restricts to one.
    Server {
        tx: postgres::Transaction<'c>,
        source: Option<String>,
    },
}

impl<'c> Reader<'c> {
    /// A reader of the team server through `client` (`store::pg::connect_reader`).
    ///
    /// # Errors
    /// Server errors.
    pub fn server(client: &'c mut postgres::Client, source: Option<String>) -> Result<Self> {
        Ok(Reader::Server {
            tx: crate::store::pg::read_only(client)?,
            source,
        })
    }

    /// Whether this reads the team server.
    pub fn is_server(&self) -> bool {
        matches!(self, Reader::Server { .. })
    }

    /// Ends the read (the server's transaction commits: nothing was written).
    ///
    /// # Errors
    /// Server errors.
    pub fn finish(self) -> Result<()> {
        match self {
            Reader::Local { .. } => Ok(()),
            Reader::Server { tx, .. } => tx.commit().map_err(server_err),
        }
    }
}
