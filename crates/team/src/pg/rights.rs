//! Per-member rights on the team server (schema 4, `migrations/pg/0004_member_rights.sql`):
//! the SQL that gives a person a login role of their own, either a member who pushes and may
//! write only the rows of their own sources, or a reader limited to chosen sources and
//! projects; row-level security enforces both. `pidx team add-member` prints this SQL or runs
//! it with an administrator's URL.

use postgres::Client;

use super::server_err;
use pidx_core::error::{Error, Result};

/// The tables a member pushes into (and reads), of the schema this pidx writes (`PIDX_PG_SCHEMA`
/// may hold it earlier: pg 0011's tables then do not exist); the schema version table and the
/// public views are read-only for everyone but the owner.
fn written() -> String {
    let mut tables = "sources, sessions, entries, entry_text, text_heads, tool_uses, \
                      listing_text, bad_lines, usage_rollup, usage_by_source, usage_sessions"
        .to_string();
    if super::migrate::latest() >= 11 {
        tables.push_str(", usage_days, usage_source_sessions");
    }
    if super::words_counted() {
        tables.push_str(", word_texts");
    }
    if super::words_posted() {
        tables.push_str(", word_postings");
    }
    if super::stale_files_listed() {
        tables.push_str(", stale_files");
    }
    if super::meaning_held() {
        tables.push_str(", passages, passage_files, embed_sources");
    }
    tables
}
const READ: &str = "pidx_schema, v_sessions, v_entries, v_messages, v_usage, v_tool_calls";

/// Who a new role is.
#[derive(Debug, Clone)]
pub enum Member {
    /// Pushes, and writes only these sources' rows; reads every source.
    Writer { sources: Vec<String> },
    /// Reads only; limited to these sources and projects when either list is not empty.
    Reader {
        sources: Vec<String>,
        projects: Vec<String>,
    },
}

/// An SQL identifier, quoted.
fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// An SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The statements that create role `name` (when it does not exist yet: a role is
/// cluster-wide) with the rights of `member` in the current database. Run by a role that may
/// create roles and owns the tables, after `pidx pg migrate`.
///
/// # Errors
/// `Invalid` for an empty name or a writer without a source.
pub fn add_member_sql(name: &str, member: &Member) -> Result<String> {
    if name.trim().is_empty() || name.contains('\0') {
        return Err(Error::Invalid("a member needs a role name".into()));
    }
    let role = ident(name);
    let written = written();
    let mut sql = vec![
        format!(
            "DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;"
        ),
        format!(
            "DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), {}); END $$;",
            literal(name)
        ),
        format!("GRANT USAGE ON SCHEMA public TO {role};"),
        format!("GRANT SELECT ON {READ} TO {role};"),
        format!("DELETE FROM pidx_members WHERE role = {};", literal(name)),
        format!("DELETE FROM pidx_readers WHERE role = {};", literal(name)),
    ];
    match member {
        Member::Writer { sources } => {
            if sources.is_empty() {
                return Err(Error::Invalid(
                    "a member who pushes needs --writes SOURCE (the source they push as), or --reader".into(),
                ));
            }
            sql.push(format!(
                "GRANT SELECT, INSERT, UPDATE, DELETE ON {written} TO {role};"
            ));
            sql.push(format!(
                "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role};"
            ));
            for s in sources {
                sql.push(format!(
                    "INSERT INTO pidx_members (role, source) VALUES ({}, {});",
                    literal(name),
                    literal(s)
                ));
            }
        }
        Member::Reader { sources, projects } => {
            sql.push(format!(
                "REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON {written} FROM {role};"
            ));
            sql.push(format!("GRANT SELECT ON {written} TO {role};"));
            let one = |s: Option<&String>, p: Option<&String>| {
                format!(
                    "INSERT INTO pidx_readers (role, source, cwd) VALUES ({}, {}, {});",
                    literal(name),
                    s.map_or("NULL".into(), |s| literal(s)),
                    p.map_or("NULL".into(), |p| literal(p))
                )
            };
            match (sources.is_empty(), projects.is_empty()) {
                (true, true) => {}
                (false, true) => sql.extend(sources.iter().map(|s| one(Some(s), None))),
                (true, false) => sql.extend(projects.iter().map(|p| one(None, Some(p)))),
                (false, false) => {
                    for s in sources {
                        sql.extend(projects.iter().map(|p| one(Some(s), Some(p))));
                    }
                }
            }
        }
    }
    Ok(sql.join("\n") + "\n")
}

/// The statements that take role `name`'s rights away (the role itself is left: it may be
/// used elsewhere in the cluster; `DROP ROLE` it by hand).
pub fn remove_member_sql(name: &str) -> String {
    let role = ident(name);
    let written = written();
    [
        format!("DELETE FROM pidx_members WHERE role = {};", literal(name)),
        format!("DELETE FROM pidx_readers WHERE role = {};", literal(name)),
        format!("REVOKE ALL ON {written}, {READ} FROM {role};"),
        format!("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {role};"),
    ]
    .join("\n")
        + "\n"
}

/// Runs statements in one transaction.
///
/// # Errors
/// Server errors (nothing is applied).
pub fn apply(client: &mut Client, sql: &str) -> Result<()> {
    let mut tx = client.transaction().map_err(server_err)?;
    tx.batch_execute(sql).map_err(server_err)?;
    tx.commit().map_err(server_err)
}

/// The members and limited readers, as (role, what), for `pidx team members`.
///
/// # Errors
/// Server errors (a role that may not read the tables: run it with the admin URL).
pub fn members(client: &mut Client) -> Result<Vec<(String, String)>> {
    let rows = client
        .query(
            "SELECT role::text, 'writes ' || string_agg(source, ', ' ORDER BY source)
             FROM pidx_members GROUP BY role
             UNION ALL
             SELECT role::text, 'reads ' || string_agg(
                    coalesce('source ' || source, 'every source') || coalesce(' under ' || cwd, ''),
                    '; ' ORDER BY source, cwd)
             FROM pidx_readers GROUP BY role
             ORDER BY 1, 2",
            &[],
        )
        .map_err(server_err)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Refuses, with what to do, a push or forget as `source` by a member role that may not write
/// it (row-level security would refuse it too, with a less helpful message).
///
/// # Errors
/// `Server` when the role is a member of other sources only.
pub fn check_may_write(client: &mut Client, source: &str) -> Result<()> {
    let row = client
        .query_one(
            "SELECT current_user::text, pidx_write_sources(current_user)",
            &[],
        )
        .map_err(server_err)?;
    let role: String = row.get(0);
    let Some(mine) = row.get::<_, Option<Vec<String>>>(1) else {
        return Ok(());
    };
    if mine.iter().any(|s| s == source) {
        return Ok(());
    }
    Err(Error::Server(format!(
        "role {role} may write only source{} {} on this server (`pidx team add-member`); push with --source {}",
        if mine.len() == 1 { "" } else { "s" },
        mine.join(", "),
        mine.first().map_or("NAME", String::as_str)
    )))
}
