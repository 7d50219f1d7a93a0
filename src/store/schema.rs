//! Schema facts shared by the writer and the queries, so each is written once: how full-text
//! rows are keyed.

use crate::pi::text::TextKind;

/// The FTS rowid of an entry's text of one kind: the entry's rowid times 8 plus the kind, so an
/// entry's texts are found from its rowid and a hit's entry and kind from the FTS rowid.
pub fn fts_rowid(rid: i64, kind: TextKind) -> i64 {
    rid * 8 + kind as i64
}

/// The entry rowid and kind of an FTS rowid (the inverse of [`fts_rowid`]).
pub fn fts_entry(rowid: i64) -> (i64, TextKind) {
    (rowid >> 3, TextKind::from_bits(rowid))
}
