//! Schema migrations: numbered SQL files in `migrations/`, embedded at build time and applied in
//! order by `PRAGMA user_version`. A shipped migration is never edited; a schema change that
//! cannot be migrated bumps `REBUILD_BELOW` so older indexes are rebuilt from the JSONL instead.

use rusqlite::Connection;

use super::APP_ID;

const MIGRATIONS: &[&str] = &[
    include_str!("../../../../migrations/0001_init.sql"),
    include_str!("../../../../migrations/0002_paths.sql"),
    include_str!("../../../../migrations/0003_search.sql"),
    include_str!("../../../../migrations/0004_stats.sql"),
    include_str!("../../../../migrations/0005_literal_by_words.sql"),
    include_str!("../../../../migrations/0006_gateway.sql"),
    include_str!("../../../../migrations/0007_mtime_ns.sql"),
    include_str!("../../../../migrations/0008_openclaw.sql"),
    include_str!("../../../../migrations/0009_usage_rollup.sql"),
    include_str!("../../../../migrations/0010_listing_order.sql"),
    include_str!("../../../../migrations/0011_files_by_dir.sql"),
    include_str!("../../../../migrations/0012_tool_rollup.sql"),
    include_str!("../../../../migrations/0013_words.sql"),
    include_str!("../../../../migrations/0014_stats_scope.sql"),
    include_str!("../../../../migrations/0015_huge_texts.sql"),
    include_str!("../../../../migrations/0016_joints.sql"),
    include_str!("../../../../migrations/0017_joint_rights.sql"),
    include_str!("../../../../migrations/0018_rid_runs.sql"),
    include_str!("../../../../migrations/0019_gateway_lookups.sql"),
    include_str!("../../../../migrations/0020_run_oldest.sql"),
    include_str!("../../../../migrations/0021_openclaw_deleted.sql"),
    include_str!("../../../../migrations/0022_touches.sql"),
    include_str!("../../../../migrations/0023_forgotten.sql"),
    include_str!("../../../../migrations/0024_meaning.sql"),
    include_str!("../../../../migrations/0025_meaning_codes.sql"),
    include_str!("../../../../migrations/0026_text_aside.sql"),
    include_str!("../../../../migrations/0027_impacts.sql"),
    include_str!("../../../../migrations/0028_impact_heads.sql"),
    include_str!("../../../../migrations/0029_facts_never_null.sql"),
    include_str!("../../../../migrations/0030_skipped_files.sql"),
    include_str!("../../../../migrations/0031_session_figures.sql"),
    include_str!("../../../../migrations/0032_failed_results.sql"),
    include_str!("../../../../migrations/0033_failure_models.sql"),
    include_str!("../../../../migrations/0034_fts_totals.sql"),
];

/// The schema version this build writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// The migration that fills the words table from the whole full-text index (0013).
const WORDS: i64 = 13;

/// Indexes older than this are rebuilt rather than migrated.
const REBUILD_BELOW: i64 = 5;

pub enum Outcome {
    Current,
    /// The index has this schema version, which this build cannot use.
    Incompatible(i64),
}

/// Whether an index at schema `version` is brought up to date in place (older ones, and
/// newer ones from a later pidx, are rebuilt from the session files).
pub fn migrates(version: i64) -> bool {
    (REBUILD_BELOW..LATEST).contains(&version)
}

/// Brings the schema up to date in one transaction.
pub fn apply(conn: &mut Connection) -> rusqlite::Result<Outcome> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == LATEST {
        return Ok(Outcome::Current);
    }
    if version != 0 && !migrates(version) {
        return Ok(Outcome::Incompatible(version));
    }
    // Used by 0013 to fill the words table from an existing index's vocabulary.
    conn.create_scalar_function(
        "pidx_reverse",
        1,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(super::words::reversed(&ctx.get::<String>(0)?)),
    )?;
    // Used by 0034 to count the full-text totals again from the rows' sizes.
    conn.create_scalar_function(
        "pidx_size",
        1,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let size = ctx.get_raw(0).as_blob_or_null()?.unwrap_or_default();
            Ok(super::fts5::varint(size, &mut 0).unwrap_or(0))
        },
    )?;
    conn.create_scalar_function(
        "pidx_averages",
        2,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(super::fts5::averages(ctx.get(0)?, ctx.get(1)?)),
    )?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Another process may have migrated while we waited for the lock: then write nothing (a
    // needless write here breaks the read snapshot of a process already syncing).
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == LATEST {
        return Ok(Outcome::Current);
    }
    if version > 0 && version < WORDS {
        crate::term::say(
            "pidx: upgrading the index: listing its words for literal search (once; a few seconds per GB of index)",
        );
    }
    for sql in &MIGRATIONS[version as usize..] {
        tx.execute_batch(sql)?;
    }
    tx.execute_batch(&format!(
        "PRAGMA user_version = {LATEST}; PRAGMA application_id = {APP_ID};"
    ))?;
    tx.commit()?;
    Ok(Outcome::Current)
}
