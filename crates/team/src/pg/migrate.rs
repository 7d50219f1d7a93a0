//! The server's schema: numbered migrations from `migrations/pg/`, applied in one transaction
//! under a database-wide advisory lock (two pushers starting at once apply them once). A server
//! whose schema is newer than this pidx knows is refused rather than written to.

use postgres::Client;

use super::{server_err, LOCK_MIGRATE};
use pidx_core::error::{Error, Result};

/// (version, SQL), in order. Never edit a shipped one: add the next number.
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../../../../migrations/pg/0001_init.sql")),
    (
        2,
        include_str!("../../../../migrations/pg/0002_words_by_pidx.sql"),
    ),
    (
        3,
        include_str!("../../../../migrations/pg/0003_listing_order_rollups.sql"),
    ),
    (
        4,
        include_str!("../../../../migrations/pg/0004_member_rights.sql"),
    ),
    (
        5,
        include_str!("../../../../migrations/pg/0005_text_lengths.sql"),
    ),
    (
        6,
        include_str!("../../../../migrations/pg/0006_text_heads.sql"),
    ),
    (
        7,
        include_str!("../../../../migrations/pg/0007_raw_lines_compressed.sql"),
    ),
    (
        8,
        include_str!("../../../../migrations/pg/0008_session_ids_in_byte_order.sql"),
    ),
    (
        9,
        include_str!("../../../../migrations/pg/0009_usage_by_source.sql"),
    ),
    (
        10,
        include_str!("../../../../migrations/pg/0010_partitions_by_source.sql"),
    ),
    (
        11,
        include_str!("../../../../migrations/pg/0011_usage_by_day.sql"),
    ),
    (
        12,
        include_str!("../../../../migrations/pg/0012_days_by_key.sql"),
    ),
    (
        13,
        include_str!("../../../../migrations/pg/0013_entry_times_by_key.sql"),
    ),
    (
        14,
        include_str!("../../../../migrations/pg/0014_listing_text_in_body.sql"),
    ),
    (
        15,
        include_str!("../../../../migrations/pg/0015_lines_without_texts.sql"),
    ),
    (
        16,
        include_str!("../../../../migrations/pg/0016_words_as_the_local_index.sql"),
    ),
    (
        17,
        include_str!("../../../../migrations/pg/0017_session_counts_after_rewrites.sql"),
    ),
    (
        18,
        include_str!("../../../../migrations/pg/0018_entry_times_on_texts.sql"),
    ),
    (
        19,
        include_str!("../../../../migrations/pg/0019_word_counts.sql"),
    ),
    (
        20,
        include_str!("../../../../migrations/pg/0020_word_postings.sql"),
    ),
    (
        21,
        include_str!("../../../../migrations/pg/0021_word_positions.sql"),
    ),
    (
        22,
        include_str!("../../../../migrations/pg/0022_stale_files.sql"),
    ),
    (
        23,
        include_str!("../../../../migrations/pg/0023_postings_in_blocks.sql"),
    ),
    (
        24,
        include_str!("../../../../migrations/pg/0024_postings_bounded.sql"),
    ),
    (
        25,
        include_str!("../../../../migrations/pg/0025_common_grams.sql"),
    ),
    (
        26,
        include_str!("../../../../migrations/pg/0026_words_without_gin.sql"),
    ),
    (
        27,
        include_str!("../../../../migrations/pg/0027_postings_for_whole_sources.sql"),
    ),
    (
        28,
        include_str!("../../../../migrations/pg/0028_words_by_suffix.sql"),
    ),
    (
        29,
        include_str!("../../../../migrations/pg/0029_words_by_one_index.sql"),
    ),
    (
        30,
        include_str!("../../../../migrations/pg/0030_stale_files_only_gone.sql"),
    ),
    (
        31,
        include_str!("../../../../migrations/pg/0031_whole_sources_once.sql"),
    ),
    (
        32,
        include_str!("../../../../migrations/pg/0032_meaning.sql"),
    ),
];

/// The newest schema this pidx knows, or the one `PIDX_PG_SCHEMA` names when older: a server
/// held at an earlier schema, to try a migration on a copy of one (the tests push a server of
/// an earlier schema so, then migrate it).
pub fn latest() -> i32 {
    let newest = MIGRATIONS.last().map_or(0, |m| m.0);
    std::env::var("PIDX_PG_SCHEMA")
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .map_or(newest, |v| v.clamp(1, newest))
}

const VERSIONS: &str = "CREATE TABLE IF NOT EXISTS pidx_schema (
    version    int PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now(),
    pidx       text NOT NULL
)";

/// Brings the server's schema up to date; returns the versions it applied.
///
/// # Errors
/// `Server` for a schema from a newer pidx, missing privileges or a failed migration.
pub fn migrate(client: &mut Client) -> Result<Vec<i32>> {
    // A member's role (`pidx team add-member`) may not create anything: a schema that is
    // already current is left alone without the CREATE below.
    if current(client)? == latest() {
        return Ok(Vec::new());
    }
    let mut tx = client.transaction().map_err(server_err)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_MIGRATE])
        .map_err(server_err)?;
    tx.batch_execute(VERSIONS).map_err(server_err)?;
    let current = current_in(&mut tx)?;
    refuse_newer(current)?;
    let mut applied = Vec::new();
    let latest = latest();
    for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > current && m.0 <= latest) {
        tx.batch_execute(sql).map_err(|e| {
            Error::Server(format!("migration pg/{version:04}: {}", super::message(&e)))
        })?;
        tx.execute(
            "INSERT INTO pidx_schema (version, pidx) VALUES ($1, $2)",
            &[version, &env!("CARGO_PKG_VERSION")],
        )
        .map_err(server_err)?;
        applied.push(*version);
    }
    tx.commit().map_err(server_err)?;
    Ok(applied)
}

/// Checks that the server holds a schema this pidx can read (readers never migrate).
///
/// # Errors
/// `Server` when the server has no pidx schema, an older one or a newer one.
pub fn check_readable(client: &mut Client) -> Result<()> {
    let current = current(client)?;
    if current == 0 {
        return Err(Error::Server(
            "this database holds no pidx data yet; run `pidx push --pg URL` (or `pidx pg migrate --pg URL`) first".into(),
        ));
    }
    refuse_newer(current)?;
    if current < latest() {
        return Err(Error::Server(format!(
            "the server's pidx schema is version {current}, older than this pidx reads ({}); run `pidx pg migrate --pg URL` (or a push) with this pidx first",
            latest()
        )));
    }
    Ok(())
}

/// The server's schema version (0 without one), read without writing. Every command asks it
/// on connecting: each statement in one round trip (`query_typed`, as `pg::typed`).
fn current(client: &mut Client) -> Result<i32> {
    let exists: bool = client
        .query_typed_one("SELECT to_regclass('pidx_schema') IS NOT NULL", &[])
        .map_err(server_err)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_typed_one("SELECT coalesce(max(version), 0) FROM pidx_schema", &[])
        .map_err(server_err)?;
    Ok(row.get(0))
}

fn current_in(tx: &mut postgres::Transaction) -> Result<i32> {
    let row = tx
        .query_one("SELECT coalesce(max(version), 0) FROM pidx_schema", &[])
        .map_err(server_err)?;
    Ok(row.get(0))
}

fn refuse_newer(current: i32) -> Result<()> {
    if current > latest() {
        return Err(Error::Server(format!(
            "the server's pidx schema is version {current}, newer than this pidx knows ({}); upgrade pidx on this machine",
            latest()
        )));
    }
    Ok(())
}
