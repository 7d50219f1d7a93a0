//! Schema facts shared by the writer and the queries, so each is written once: the entry
//! columns (`ENTRY_FIELDS`), how full-text rows are keyed (in Rust and in SQL), pi's `modified` as an expression, the ancestor walk, and
//! the usage sums `show` and `stats` both report.

use rusqlite::types::{ToSql, ToSqlOutput, Value};

use crate::pi::model::EntryRow;
use crate::pi::paths::PathFacts;
use crate::pi::text::TextKind;

/// The FTS rowid of an entry's text of one kind: the entry's rowid times 8 plus the kind, so an
/// entry's texts are found from its rowid and a hit's entry and kind from the FTS rowid.
pub fn fts_rowid(rid: i64, kind: TextKind) -> i64 {
    rid * 8 + kind as i64
}

/// [`fts_rowid`] as SQL over the columns or expressions `rid` and `kind`.
pub fn fts_rowid_sql(rid: &str, kind: &str) -> String {
    format!("({rid} * 8 + {kind})")
}

/// The entry rowid of FTS rowid `r`, as SQL.
pub fn fts_entry_sql(r: &str) -> String {
    format!("({r} >> 3)")
}

/// The text kind of FTS rowid `r`, as SQL.
pub fn fts_kind_sql(r: &str) -> String {
    format!("({r} & 7)")
}

/// The entry rowid and kind of an FTS rowid (the inverse of [`fts_rowid`]).
pub fn fts_entry(rowid: i64) -> (i64, TextKind) {
    (rowid >> 3, TextKind::from_bits(rowid))
}

/// pi's `modified` (docs/pi-format.md §5.3) over `sessions s JOIN files f`: the last
/// user/assistant activity, else the header time, else the file's mtime.
pub const MODIFIED: &str = "CASE WHEN s.last_activity_ms > 0 THEN s.last_activity_ms
                              WHEN s.header_ts_ms IS NOT NULL THEN s.header_ts_ms
                              ELSE f.mtime_ms END";

/// A session's title for display over `sessions s`: its name, else its first user message, cut
/// to 1000 characters in SQL (a first message can be 100 MB; a title shows one line of it).
pub const TITLE: &str = "substr(coalesce(s.name, s.first_message), 1, 1000)";

/// An entry's listing text over `entries e`: `e.text`, or the huge text kept in `big_texts`
/// (migration 0015). Only the huge ones are read from there.
pub const ENTRY_TEXT: &str = "coalesce(e.text,
    (SELECT CAST(b.body AS TEXT) FROM big_texts b WHERE b.id = -e.rid))";

/// The first `chars` characters (an SQL expression) of an entry's listing text over `entries`,
/// a huge one's cut from `big_texts` in bytes first (at most 4 a character, so the bytes hold
/// every character the outer cut keeps).
pub fn entry_text_start(chars: &str) -> String {
    format!(
        "substr(coalesce(entries.text,
            (SELECT CAST(substr(b.body, 1, {chars} * 4) AS TEXT) FROM big_texts b
             WHERE b.id = -entries.rid)), 1, {chars})"
    )
}

/// A session's whole first message over `sessions s`: a huge one is its entry's text
/// (migration 0015); `s.first_message` holds only its title then.
pub const FIRST_MESSAGE: &str = "CASE WHEN s.first_message_line IS NULL THEN s.first_message
    ELSE coalesce(
        (SELECT CAST(b.body AS TEXT) FROM entries fe JOIN big_texts b ON b.id = -fe.rid
         WHERE fe.file_id = s.file_id AND fe.line = s.first_message_line),
        s.first_message) END";

/// The message and usage sums over `entries e`, in this order: user, assistant and toolResult
/// messages, tool calls, input, output, cache-read and cache-write tokens, cost. What pi's
/// `getSessionStats` sums for `/session` (assistant and toolResult usage, `usage` entries,
/// compaction and branch-summary usage) is every usage column that is set, so a plain sum is it.
pub const USAGE_SUMS: &str = "
    coalesce(sum(e.type = 'message' AND e.role = 'user'), 0),
    coalesce(sum(e.type = 'message' AND e.role = 'assistant'), 0),
    coalesce(sum(e.type = 'message' AND e.role = 'toolResult'), 0),
    coalesce(sum(CASE WHEN e.type = 'message' AND e.role = 'assistant' THEN e.tool_calls END), 0),
    coalesce(sum(e.input), 0), coalesce(sum(e.output), 0),
    coalesce(sum(e.cache_read), 0), coalesce(sum(e.cache_write), 0),
    coalesce(sum(e.cost), 0.0)";

/// The number of columns [`USAGE_SUMS`] yields.
pub const USAGE_SUMS_LEN: usize = 9;

/// The walk from a leaf (`?2`, a seq of file `?1`) to the root, nearest first, carrying every column it needs so the recursive step stays
/// on the (file_id, id) index. `depth < ?3` bounds it on a cycle. `CROSS JOIN` pins the join
/// order: SQLite 3.51's planner otherwise puts `entries` outside the one-row `walk` step and
/// scans the file's whole index per step (minutes on a 200k-entry path).
pub const ANCESTORS: &str = "
WITH RECURSIVE walk(depth, seq, id, parent_id, type, role, first_kept, target_id, provider, model,
                    thinking, offset, len, ts_ms) AS (
    SELECT 0, seq, id, parent_id, type, role, first_kept, target_id, provider, model, thinking,
           offset, len, ts_ms
    FROM entries WHERE file_id = ?1 AND seq = ?2
    UNION ALL
    SELECT w.depth + 1, e.seq, e.id, e.parent_id, e.type, e.role, e.first_kept, e.target_id,
           e.provider, e.model, e.thinking, e.offset, e.len, e.ts_ms
    FROM walk w CROSS JOIN entries e ON e.file_id = ?1 AND e.id = w.parent_id AND e.shadowed = 0
    WHERE w.parent_id <> '' AND w.depth < ?3
)
SELECT seq, id, type, role, first_kept, target_id, provider, model, thinking, offset, len, ts_ms
FROM walk ORDER BY depth";

/// An entry's stored path facts: select [`PATH_FACTS`] first, then map the row with
/// [`path_facts`].
pub const PATH_FACTS: &str = "depth, compaction_seq, thinking_seq, model_seq, throws_seq";

/// The [`PathFacts`] of a row whose first columns are [`PATH_FACTS`].
///
/// # Errors
/// A column of the wrong type.
pub fn path_facts(r: &rusqlite::Row) -> rusqlite::Result<PathFacts> {
    Ok(PathFacts {
        depth: r.get(0)?,
        compaction: r.get(1)?,
        thinking: r.get(2)?,
        model: r.get(3)?,
        throws: r.get(4)?,
    })
}

/// How an entry field is typed (the team server's copy types it so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Int,
    Text,
    Bool,
    Float,
}

/// One column of `entries` holding what an entry's line says.
#[derive(Debug)]
pub struct EntryField {
    /// The column in the local index (`migrations/`).
    pub name: &'static str,
    /// The column on the team server (`migrations/pg/`; `offset` is a keyword there).
    pub server: &'static str,
    /// The local value as SQL over `entries e` (a huge text is read back whole).
    pub sql: &'static str,
    pub ty: FieldType,
}

const fn field(name: &'static str, sql: &'static str, ty: FieldType) -> EntryField {
    EntryField {
        name,
        server: name,
        sql,
        ty,
    }
}

/// The entry fields: the one list the local writer inserts ([`entry_values`], in this order),
/// the team push reads back and the server's `entries` holds. The writer adds the file and what
/// the index derives (`PATH_FACTS`, `text_kinds`); the server adds the flags later lines change
/// (`shadowed`, `silent`) and the raw line.
pub const ENTRY_FIELDS: [EntryField; 29] = {
    use FieldType::{Bool, Float, Int, Text};
    [
        field("seq", "e.seq", Int),
        field("line", "e.line", Int),
        EntryField {
            name: "offset",
            server: "byte_offset",
            sql: "e.offset",
            ty: Int,
        },
        field("len", "e.len", Int),
        field("id", "e.id", Text),
        field("parent_id", "e.parent_id", Text),
        field("type", "e.type", Text),
        field("role", "e.role", Text),
        field("ts", "e.ts", Text),
        field("ts_ms", "e.ts_ms", Int),
        field("first_kept", "e.first_kept", Text),
        field("target_id", "e.target_id", Text),
        field("label", "e.label", Text),
        field("provider", "e.provider", Text),
        field("model", "e.model", Text),
        field("thinking", "e.thinking", Text),
        field("response_model", "e.response_model", Text),
        field("stop_reason", "e.stop_reason", Text),
        field("input", "e.input", Int),
        field("output", "e.output", Int),
        field("cache_read", "e.cache_read", Int),
        field("cache_write", "e.cache_write", Int),
        field("cost", "e.cost", Float),
        field("tool_calls", "e.tool_calls", Int),
        field("is_error", "e.is_error", Bool),
        field("text", ENTRY_TEXT, Text),
        field("tool_name", "e.tool_name", Text),
        field("exit_code", "e.exit_code", Int),
        field("dup", "e.dup", Bool),
    ]
};

/// The position of the entry field `name` in [`ENTRY_FIELDS`] (and in a row selected by their
/// `sql`); `None` for a name that is not one.
pub fn entry_field(name: &str) -> Option<usize> {
    ENTRY_FIELDS.iter().position(|f| f.name == name)
}

/// `e`'s values for [`ENTRY_FIELDS`], each with its column's name, in the same order (a test
/// holds the two lists together); `dup`: the entry is a fork's copy (`store::copies`).
pub fn entry_values(e: &EntryRow, dup: bool) -> [(&'static str, ToSqlOutput<'_>); 29] {
    fn v<T: ToSql + ?Sized>(x: &T) -> ToSqlOutput<'_> {
        // Every type here (integers, floats, text, booleans, options) converts infallibly.
        x.to_sql().unwrap_or(ToSqlOutput::Owned(Value::Null))
    }
    let u = e.usage;
    let own = |x: Option<i64>| ToSqlOutput::Owned(x.map_or(Value::Null, Value::Integer));
    [
        ("seq", v(&e.seq)),
        ("line", v(&e.line)),
        ("offset", v(&e.offset)),
        ("len", v(&e.len)),
        ("id", v(&e.id)),
        ("parent_id", v(&e.parent_id)),
        ("type", v(&e.kind)),
        ("role", v(&e.role)),
        ("ts", v(&e.ts)),
        ("ts_ms", v(&e.ts_ms)),
        ("first_kept", v(&e.first_kept)),
        ("target_id", v(&e.target_id)),
        ("label", v(&e.label)),
        ("provider", v(&e.provider)),
        ("model", v(&e.model)),
        ("thinking", v(&e.thinking)),
        ("response_model", v(&e.response_model)),
        ("stop_reason", v(&e.stop_reason)),
        ("input", own(u.map(|u| u.input))),
        ("output", own(u.map(|u| u.output))),
        ("cache_read", own(u.map(|u| u.cache_read))),
        ("cache_write", own(u.map(|u| u.cache_write))),
        (
            "cost",
            ToSqlOutput::Owned(u.map_or(Value::Null, |u| Value::Real(u.cost))),
        ),
        ("tool_calls", v(&e.tool_calls)),
        ("is_error", v(&e.is_error)),
        ("text", v(&e.text)),
        ("tool_name", v(&e.tool_name)),
        ("exit_code", v(&e.exit_code)),
        ("dup", ToSqlOutput::Owned(Value::Integer(i64::from(dup)))),
    ]
}

/// The writer's `INSERT` of an entry: the file, [`ENTRY_FIELDS`], [`PATH_FACTS`] and the kinds
/// of text the index holds for it, numbered in that order.
pub fn entry_insert_sql() -> String {
    let cols: Vec<&str> = std::iter::once("file_id")
        .chain(ENTRY_FIELDS.iter().map(|f| f.name))
        .chain(PATH_FACTS.split(", "))
        .chain(["text_kinds"])
        .collect();
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
    format!(
        "INSERT INTO entries({}) VALUES ({})",
        cols.join(", "),
        marks.join(", ")
    )
}

#[cfg(test)]
mod entry_field_tests {
    use super::*;

    #[test]
    fn the_values_come_in_the_fields_order() {
        let names: Vec<&str> = entry_values(&EntryRow::default(), false)
            .iter()
            .map(|(n, _)| *n)
            .collect();
        let fields: Vec<&str> = ENTRY_FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(names, fields);
    }

    #[test]
    fn every_field_and_fact_is_a_column_of_the_local_index() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&mut conn).unwrap();
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info('entries')")
            .unwrap();
        let columns: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let sql = entry_insert_sql();
        let inner = &sql[sql.find('(').unwrap() + 1..sql.find(')').unwrap()];
        for col in inner.split(", ") {
            assert!(columns.iter().any(|c| c == col), "{col} is not a column");
        }
        assert!(conn.prepare(&sql).is_ok());
        assert_eq!(entry_field("offset"), Some(2));
        assert_eq!(entry_field("no such"), None);
    }
}
