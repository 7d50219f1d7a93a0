//! The team tier's PostgreSQL store: connecting (redacted errors, TLS), the schema
//! (`migrate`), the per-source advisory lock, the one write path for `push` (`writer`), and
//! per-member rights (`rights`). The server's answers to queries are `reads`'; this module
//! knows no pi semantics.

mod chars;
mod conn;
pub mod heads;
pub mod lines;
pub mod migrate;
pub mod passages;
pub mod postings;
pub mod rights;
pub mod typed;
pub mod values;
pub mod words;
pub mod writer;

use postgres::Client;

pub use conn::{cancel, connect, redact_url};

use pidx_core::error::{Error, Result};

/// An entry's listing text over `entries e` joined with [`LISTING_BODY`] (pg 0014): `e.text`,
/// or, where push sent the empty string because the two were equal, the entry's searchable
/// text of its role's kind.
pub const LISTING_TEXT: &str = "CASE WHEN e.text = '' THEN lb.body ELSE e.text END";

/// The join [`LISTING_TEXT`] reads the body from. A join rather than a subquery per entry:
/// `list --query` reads every session's texts, and a subquery into the partitioned texts per
/// entry made it 65% slower at 10,000 sessions.
pub const LISTING_BODY: &str = "LEFT JOIN entry_text lb ON e.text = '' AND lb.source = e.source
    AND lb.fid = e.fid AND lb.seq = e.seq AND lb.kind = CASE WHEN e.role = 'user' THEN 0 ELSE 1 END";

/// The first schema whose `entries.text` may be the empty string for [`LISTING_TEXT`].
pub const LISTING_TEXT_IN_BODY: i32 = 14;

/// The first schema whose raw lines may be stored without their texts' pieces (`lines`).
pub const LINES_WITHOUT_TEXTS: i32 = 15;

/// The first schema whose texts carry their entry's time and silence (`entry_text.ts_ms`,
/// `entry_text.silent`).
pub const ENTRY_TIMES_ON_TEXTS: i32 = 18;

/// The first schema that keeps each source's count of texts per word (`word_texts`).
pub const WORD_COUNTS: i32 = 19;

/// The first schema that keeps each source's texts of a word packed (`word_postings`).
pub const WORD_POSTINGS: i32 = 20;

/// The first schema whose postings hold each text's positions of the word (`word_postings.pos`).
pub const WORD_POSITIONS: i32 = 21;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`WORD_POSITIONS`].
pub fn words_positioned() -> bool {
    migrate::latest() >= WORD_POSITIONS
}

/// The first schema that lists the file ids no session has any more (`stale_files`).
pub const STALE_FILES: i32 = 22;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`STALE_FILES`].
pub fn stale_files_listed() -> bool {
    migrate::latest() >= STALE_FILES
}

/// The first schema whose postings are in blocks with each block's range of files
/// (`word_postings.skips`).
pub const POSTINGS_BLOCKED: i32 = 23;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`POSTINGS_BLOCKED`].
pub fn postings_blocked() -> bool {
    migrate::latest() >= POSTINGS_BLOCKED
}

/// The first schema whose postings' blocks carry what their best posting can score at most
/// (`word_postings.bounds`).
pub const POSTINGS_BOUNDED: i32 = 24;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`POSTINGS_BOUNDED`].
pub fn postings_bounded() -> bool {
    migrate::latest() >= POSTINGS_BOUNDED
}

/// The first schema whose postings hold the pairs of the common words too (`pg::words::grams`),
/// under terms of two words.
pub const COMMON_GRAMS: i32 = 25;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`COMMON_GRAMS`].
pub fn grams_posted() -> bool {
    migrate::latest() >= COMMON_GRAMS
}

/// The first schema without a GIN index on every text's words: searches find their texts from
/// the words' postings (`reads::matching`).
pub const WORDS_WITHOUT_GIN: i32 = 26;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`WORDS_WITHOUT_GIN`].
pub fn words_unindexed() -> bool {
    migrate::latest() >= WORDS_WITHOUT_GIN
}

/// The first schema whose readers limited to whole sources read those sources' postings.
pub const POSTINGS_FOR_WHOLE_SOURCES: i32 = 27;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has
/// [`POSTINGS_FOR_WHOLE_SOURCES`].
pub fn postings_for_whole_sources() -> bool {
    migrate::latest() >= POSTINGS_FOR_WHOLE_SOURCES
}

/// The first schema whose words can be looked up by their last bytes (`word_texts_by_suffix`).
pub const WORDS_BY_SUFFIX: i32 = 28;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`WORDS_BY_SUFFIX`].
pub fn words_by_suffix() -> bool {
    migrate::latest() >= WORDS_BY_SUFFIX
}

/// The first schema that holds sources' embeddings (`passages`, `embed_sources`).
pub const MEANING: i32 = 32;

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`MEANING`].
pub fn meaning_held() -> bool {
    migrate::latest() >= MEANING
}

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`WORD_POSTINGS`].
pub fn words_posted() -> bool {
    migrate::latest() >= WORD_POSTINGS
}

/// Whether the schema this pidx writes and reads (`migrate::latest`) has [`WORD_COUNTS`].
pub fn words_counted() -> bool {
    migrate::latest() >= WORD_COUNTS
}

/// Whether the schema this pidx writes and reads (`migrate::latest`) has
/// [`ENTRY_TIMES_ON_TEXTS`].
pub fn times_on_texts() -> bool {
    migrate::latest() >= ENTRY_TIMES_ON_TEXTS
}

/// Advisory lock key for applying migrations (database-wide).
const LOCK_MIGRATE: i64 = 0x7069_6478_6d69_6772; // "pidxmigr"

/// The driver's error as the library's, without the password (the driver never prints it;
/// connection errors are redacted in `connect`).
///
/// A statement the server stopped (its `statement_timeout`, which `serve` and the MCP server
/// set, or a cancel: `serve`'s at its page limit) is [`Error::Stopped`], which each caller says
/// in its own words (the page's time limit), as for the local index.
pub fn server_err(e: postgres::Error) -> Error {
    if e.code() == Some(&postgres::error::SqlState::QUERY_CANCELED) {
        return Error::Stopped;
    }
    Error::Server(message(&e))
}

/// The most useful text of a driver error: the server's message and detail, else the chain.
pub fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(d) => format!("{} ({d})", db.message()),
            None => db.message().to_string(),
        },
        None => conn::full_message(e),
    }
}

/// A session-level advisory lock on one source: two pushes of the same source serialise; other
/// sources never wait. Calls `waiting` once when another push holds it.
///
/// # Errors
/// Server errors.
pub fn lock_source(client: &mut Client, source: &str, waiting: impl FnOnce()) -> Result<()> {
    let key = "SELECT hashtextextended('pidx push ' || $1, 0)";
    let got: bool = client
        .query_one(&format!("SELECT pg_try_advisory_lock(({key}))"), &[&source])
        .map_err(server_err)?
        .get(0);
    if !got {
        waiting();
        client
            .execute(&format!("SELECT pg_advisory_lock(({key}))"), &[&source])
            .map_err(server_err)?;
    }
    Ok(())
}

/// Connects for reading: checks the schema; every query then runs in a `READ ONLY` transaction
/// (see [`read_only`]).
///
/// # Errors
/// As [`connect`] and [`migrate::check_readable`].
pub fn connect_reader(url: &str) -> Result<Client> {
    let mut client = connect(url)?;
    migrate::check_readable(&mut client)?;
    Ok(client)
}

/// A `READ ONLY` transaction: the server refuses any write inside it, whatever the role may do.
/// `REPEATABLE READ`: an answer is several statements (a listing and its handles, a search's
/// totals and its matches), and under the default `READ COMMITTED` a push committing between
/// them would give an answer made of two states of the server; one snapshot makes it one
/// state. A read-only transaction at this level never fails to serialize.
///
/// # Errors
/// Server errors.
pub fn read_only(client: &mut Client) -> Result<postgres::Transaction<'_>> {
    client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(server_err)
}
