//! What FTS5's `bm25()` computes, in pieces pidx can bound and reuse (`impacts.rs`), and the
//! FTS5 auxiliary functions that give the pieces: `pidx_tf_len(fts)`, a row's count of the
//! query's matches and its length in tokens, and `pidx_tfs_len(fts)`, its count of each of the
//! query's phrases and its length. `bm25()` recounts every match of each phrase in the whole
//! table on each statement (for its idf) and merges the phrases' matches in each row into one
//! array; a search that scores a few rowid ranges of a common word, or several words whose
//! counts of texts it knows, need do neither.
//!
//! The arithmetic below is FTS5's (`fts5_aux.c`, `fts5Bm25Function`), in its order of
//! operations, so a score here is bit for bit the one `bm25(fts)` returns (a test checks).

use std::os::raw::{c_int, c_void};

use rusqlite::{ffi, Connection, OptionalExtension};

/// FTS5's bm25 parameters (`k1`, `b`).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The table-wide facts of a query's score: rows and tokens in the table, texts holding the
/// term.
#[derive(Debug, Clone, Copy)]
pub struct Bm25 {
    idf: f64,
    avgdl: f64,
}

impl Bm25 {
    /// For a one-term query matching `hits` of the table's `rows` texts of `tokens` tokens.
    pub fn new(rows: i64, tokens: i64, hits: i64) -> Bm25 {
        let (rows_f, hits_f) = (rows as f64, hits as f64);
        let mut idf = ((rows_f - hits_f + 0.5) / (hits_f + 0.5)).ln();
        if idf <= 0.0 {
            idf = 1e-6;
        }
        Bm25 {
            idf,
            avgdl: tokens as f64 / rows as f64,
        }
    }

    /// The mean text length the scores are computed with.
    pub fn avgdl(&self) -> f64 {
        self.avgdl
    }

    /// `bm25(fts)` of a text of `len` tokens holding the term `tf` times (negative: lower is
    /// better, as FTS5 returns it).
    pub fn score(&self, tf: i64, len: i64) -> f64 {
        // FTS5 returns `-1.0 * (0.0 + idf * ...)`: the same bits for a positive product.
        -(self.idf * impact(tf, len, self.avgdl))
    }

    /// The most `bm25` relevance (positive) a text of at most `impact` at mean length
    /// `built_avgdl` can have now: the impact grows with the mean length, at most in proportion.
    pub fn most(&self, impact: f64, built_avgdl: f64) -> f64 {
        self.idf * impact * (self.avgdl / built_avgdl).max(1.0)
    }

    /// The most this term scores in a text where its impact at the mean length `built_avgdl`
    /// is under `below` (what [`most`](Self::most) bounds, exactly): [`impact_below`].
    pub fn most_below(&self, below: f64, built_avgdl: f64) -> f64 {
        self.idf * impact_below(below, built_avgdl, self.avgdl)
    }
}

/// The least upper bound of `impact(tf, len, avgdl)` over the texts whose
/// `impact(tf, len, built)` is under `below`. Under it means `k(built) > c tf`, with
/// `k(a) = k1 (1 - b + b len / a)` and `c = (k1 + 1 - below) / below`; at `avgdl` the same
/// length gives `k = k1 (1 - b) + (k(built) - k1 (1 - b)) r`, `r = built / avgdl`, so the
/// impact is under `(k1 + 1) / (1 + c r + k1 (1 - b) (1 - r) / tf)`: largest at one occurrence
/// when the texts are shorter than `built` on average (`r >= 1`), and as the count grows
/// otherwise. For `below` 1.65 at 256 tokens: 1.32 at a mean length of 23 tokens, where
/// [`Bm25::most`] says 1.65; 1.89 at a mean of 512, where it says 3.30. Needs `c tf` at least
/// `k1 (1 - b)` for every count (`below` at most 1.69); else [`Bm25::most`]'s bound.
pub fn impact_below(below: f64, built: f64, avgdl: f64) -> f64 {
    let c = (K1 + 1.0 - below) / below;
    let floor = K1 * (1.0 - B);
    if c < floor || below <= 0.0 || avgdl <= 0.0 {
        return below * (avgdl / built).max(1.0);
    }
    let r = built / avgdl;
    let bound = if r >= 1.0 {
        (K1 + 1.0) / (1.0 + c * r + floor * (1.0 - r))
    } else {
        (K1 + 1.0) / (1.0 + c * r)
    };
    bound.min(below * (avgdl / built).max(1.0))
}

/// bm25 of a query of several phrases ANDed: FTS5 sums each phrase's share, in the query's
/// order, with each phrase's own idf (from the texts holding that phrase in the whole table).
#[derive(Debug, Clone)]
pub struct Bm25Sum {
    each: Vec<Bm25>,
}

impl Bm25Sum {
    /// For phrases held by `hits[i]` of the table's `rows` texts of `tokens` tokens.
    pub fn new(rows: i64, tokens: i64, hits: &[i64]) -> Bm25Sum {
        Bm25Sum {
            each: hits.iter().map(|&h| Bm25::new(rows, tokens, h)).collect(),
        }
    }

    /// `bm25(fts)` of a text of `len` tokens holding phrase `i` `tfs[i]` times.
    pub fn score(&self, tfs: &[i64], len: i64) -> f64 {
        let mut score = 0.0;
        for (b, &tf) in self.each.iter().zip(tfs) {
            score += b.idf * impact(tf, len, b.avgdl);
        }
        -score
    }
}

/// The texts matching `fts`, a query of several phrases, each as (rowid, its count of each
/// phrase in the query's order, its length in tokens), through `pidx_tfs_len`.
///
/// # Errors
/// SQLite errors; a damaged answer of the function is `InvalidColumnType`.
pub fn matches_each(conn: &Connection, fts: &str) -> rusqlite::Result<Vec<(i64, Vec<i64>, i64)>> {
    let mut stmt =
        conn.prepare_cached("SELECT rowid, pidx_tfs_len(fts) FROM fts WHERE fts MATCH ?1")?;
    let rows = stmt.query_map([fts], |r| {
        let packed = r.get_ref(1)?.as_blob()?;
        let mut at = 0;
        let bad = || {
            rusqlite::Error::InvalidColumnType(
                1,
                "pidx_tfs_len".into(),
                rusqlite::types::Type::Blob,
            )
        };
        let len = varint(packed, &mut at).ok_or_else(bad)?;
        let mut tfs = Vec::new();
        while at < packed.len() {
            tfs.push(varint(packed, &mut at).ok_or_else(bad)?);
        }
        Ok((r.get(0)?, tfs, len))
    })?;
    rows.collect()
}

/// Every text matching `fts`, a query of one phrase (or one word), with its `bm25(fts)` bit for
/// bit, in one pass: `bm25()` itself first counts the phrase's matches in a pass of their own
/// for its idf (for `"the borrow"`, matching the phrase twice over), where here the count is
/// this pass's own rows.
///
/// # Errors
/// SQLite errors (a query that is not one phrase is a caller's bug, not checked here).
pub fn scores(conn: &Connection, fts: &str) -> rusqlite::Result<Vec<(i64, f64)>> {
    let Some((rows, tokens)) = totals(conn, "fts")? else {
        return Ok(Vec::new());
    };
    let texts = matches(conn, fts, None)?;
    let bm = Bm25::new(rows, tokens, texts.len() as i64);
    Ok(texts
        .into_iter()
        .map(|(rowid, tf, len)| (rowid, bm.score(tf, len)))
        .collect())
}

/// The texts matching `fts` (past rowid `after`, when given), each as (rowid, its count of the
/// query's phrases, its length in tokens), through `pidx_tf_len`.
///
/// # Errors
/// SQLite errors.
pub fn matches(
    conn: &Connection,
    fts: &str,
    after: Option<i64>,
) -> rusqlite::Result<Vec<(i64, i64, i64)>> {
    let sql = match after {
        Some(_) => "SELECT rowid, pidx_tf_len(fts) FROM fts WHERE fts MATCH ?1 AND rowid > ?2",
        None => "SELECT rowid, pidx_tf_len(fts) FROM fts WHERE fts MATCH ?1",
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let row = |r: &rusqlite::Row| {
        let (tf, len) = unpack(r.get(1)?);
        Ok((r.get(0)?, tf, len))
    };
    match after {
        Some(after) => stmt
            .query_map(rusqlite::params![fts, after], row)?
            .collect(),
        None => stmt.query_map([fts], row)?.collect(),
    }
}

/// A string FTS5 reads as one literal phrase, whatever it contains (a query's words, a term of
/// the vocabulary).
pub fn phrase(s: &str) -> String {
    // FTS5 reads a query up to its first NUL ("unterminated string"); the tokenizer splits words
    // at a NUL as at a space, so a space keeps the phrase the same (a query from MCP or the web
    // can hold one; a command line cannot).
    format!("\"{}\"", s.replace('"', "\"\"").replace('\0', " "))
}

/// A text's share of its score before the idf: what bounds a block of texts (`impacts.rs`).
pub fn impact(tf: i64, len: i64, avgdl: f64) -> f64 {
    let (f, d) = (tf as f64, len as f64);
    (f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl))
}

/// The one term of `fts`, a query of one phrase of one token, as the index holds it (folded by
/// the tokenizer, through `pidx_term`); `None` for any other query, or when no text matches.
///
/// # Errors
/// SQLite errors (a query FTS5 cannot parse among them).
pub fn term_of(conn: &Connection, fts: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT pidx_term(fts) FROM fts WHERE fts MATCH ?1 LIMIT 1")?
        .query_row([fts], |r| r.get(0))
        .optional()
        .map(Option::flatten)
}

/// The rows and tokens of table `fts` (FTS5's averages record: two varints).
///
/// # Errors
/// SQLite errors; `None` for an empty table.
pub fn totals(conn: &Connection, table: &str) -> rusqlite::Result<Option<(i64, i64)>> {
    let block: Option<Vec<u8>> = conn
        .prepare_cached(&format!("SELECT block FROM {table}_data WHERE id = 1"))?
        .query_row([], |r| r.get(0))
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    let Some(block) = block else { return Ok(None) };
    let mut at = 0;
    let rows = varint(&block, &mut at);
    let tokens = varint(&block, &mut at);
    Ok(rows.zip(tokens).filter(|&(r, _)| r > 0))
}

/// The rows and tokens taken out of an FTS5 table in a transaction, to come off its totals
/// ([`settle`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Gone {
    rows: i64,
    tokens: i64,
}

/// Deletes row `rowid` of the contentless-delete FTS5 table `table` and counts it in `gone`.
///
/// FTS5 (SQLite 3.51, `fts5StorageContentlessDelete`) writes a tombstone for a deleted row of a
/// `contentless_delete` table and drops its size, but leaves it in the totals its `bm25()`
/// divides by (rows, and tokens for the mean length): an index that had ever deleted a text (a
/// rewritten or removed session, `forget`) scored every match unlike one built afresh over the
/// same files. The row's size is read here, before it goes, for [`settle`] to take off.
///
/// # Errors
/// SQLite errors.
pub fn delete(conn: &Connection, table: &str, rowid: i64, gone: &mut Gone) -> rusqlite::Result<()> {
    let size: Option<Vec<u8>> = conn
        .prepare_cached(&format!("SELECT sz FROM {table}_docsize WHERE id = ?1"))?
        .query_row([rowid], |r| r.get(0))
        .optional()?;
    if let Some(size) = size {
        gone.rows += 1;
        gone.tokens += varint(&size, &mut 0).unwrap_or(0);
    }
    conn.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))?
        .execute([rowid])?;
    Ok(())
}

/// Takes `gone` (the rows [`delete`] counted) off `table`'s totals, and clears it. A savepoint
/// makes FTS5 write the totals it holds for the transaction and forget them (`xSavepoint`:
/// `sqlite3Fts5StorageSync`), so the averages record written here is the one its next write
/// (or the commit) starts from.
///
/// # Errors
/// SQLite errors.
pub fn settle(conn: &Connection, table: &str, gone: &mut Gone) -> rusqlite::Result<()> {
    if *gone == Gone::default() {
        return Ok(());
    }
    conn.execute_batch("SAVEPOINT pidx_totals")?;
    let block: Option<Vec<u8>> = conn
        .prepare_cached(&format!("SELECT block FROM {table}_data WHERE id = 1"))?
        .query_row([], |r| r.get(0))
        .optional()?;
    if let Some(block) = block {
        let mut at = 0;
        let rows = varint(&block, &mut at).unwrap_or(0);
        let tokens = varint(&block, &mut at).unwrap_or(0);
        conn.prepare_cached(&format!("UPDATE {table}_data SET block = ?1 WHERE id = 1"))?
            .execute([averages(rows - gone.rows, tokens - gone.tokens)])?;
    }
    conn.execute_batch("RELEASE pidx_totals")?;
    *gone = Gone::default();
    Ok(())
}

/// FTS5's averages record of a one-column table holding `rows` rows of `tokens` tokens.
pub fn averages(rows: i64, tokens: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(10);
    for v in [rows, tokens] {
        push_varint(&mut out, u64::try_from(v).unwrap_or(0));
    }
    out
}

/// SQLite's varint (big-endian groups of 7 bits, the ninth byte whole), read at `at`.
pub fn varint(b: &[u8], at: &mut usize) -> Option<i64> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let c = *b.get(*at)?;
        *at += 1;
        if i == 8 {
            return Some(((v << 8) | u64::from(c)) as i64);
        }
        v = (v << 7) | u64::from(c & 0x7f);
        if c & 0x80 == 0 {
            return Some(v as i64);
        }
    }
    None
}

/// Packs a row's match count and length as `pidx_tf_len` returns them.
pub fn unpack(v: i64) -> (i64, i64) {
    (v >> 32, v & 0xffff_ffff)
}

/// Registers `pidx_tf_len(fts)`, `pidx_tf(fts)`, `pidx_term(fts)` and `pidx_tfs_len(fts)` on
/// `conn`.
///
/// # Errors
/// SQLite errors (an SQLite built without FTS5).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let api = fts5_api(conn)?;
    type Aux = unsafe extern "C" fn(
        *const ffi::Fts5ExtensionApi,
        *mut ffi::Fts5Context,
        *mut ffi::sqlite3_context,
        c_int,
        *mut *mut ffi::sqlite3_value,
    );
    let functions: [(&std::ffi::CStr, Aux); 4] = [
        (c"pidx_tf_len", tf_len),
        (c"pidx_tf", tf_only),
        (c"pidx_term", term),
        (c"pidx_tfs_len", tfs_len),
    ];
    for (name, f) in functions {
        // SAFETY: `api` is the live FTS5 API of this connection (checked non-null and of a
        // version with `xCreateFunction`); the name is NUL-terminated and static, and the
        // function keeps no user data.
        let rc = unsafe {
            match (*api).xCreateFunction {
                Some(create) => create(api, name.as_ptr(), std::ptr::null_mut(), Some(f), None),
                None => ffi::SQLITE_ERROR,
            }
        };
        check(conn, rc)?;
    }
    Ok(())
}

fn check(conn: &Connection, rc: c_int) -> rusqlite::Result<()> {
    if rc == ffi::SQLITE_OK {
        return Ok(());
    }
    // SAFETY: the connection's handle is valid while `conn` lives.
    let msg = unsafe { std::ffi::CStr::from_ptr(ffi::sqlite3_errmsg(conn.handle())) };
    Err(rusqlite::Error::SqliteFailure(
        ffi::Error::new(rc),
        Some(format!(
            "registering pidx's FTS5 functions: {}",
            msg.to_string_lossy()
        )),
    ))
}

/// The connection's `fts5_api` (SQLite's documented way: `SELECT fts5(?1)` with a pointer
/// bound as "fts5_api_ptr").
fn fts5_api(conn: &Connection) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = std::ptr::null_mut();
    let mut stmt = std::ptr::null_mut();
    // SAFETY: a statement prepared, stepped and finalized on this connection's valid handle;
    // the bound pointer lives on this stack frame until the statement is finalized.
    let rc = unsafe {
        let db = conn.handle();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            std::ptr::null_mut(),
        );
        if rc == ffi::SQLITE_OK {
            ffi::sqlite3_bind_pointer(
                stmt,
                1,
                (&raw mut api).cast::<c_void>(),
                c"fts5_api_ptr".as_ptr(),
                None,
            );
            ffi::sqlite3_step(stmt);
        }
        ffi::sqlite3_finalize(stmt);
        rc
    };
    check(conn, rc)?;
    // SAFETY: non-null `api` points at FTS5's static API struct.
    if api.is_null() || unsafe { (*api).iVersion } < 2 {
        return Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some("this SQLite has no FTS5 API".into()),
        ));
    }
    Ok(api)
}

/// `pidx_tf_len(fts)`: the current row's instances of the query's phrases (for a one-term
/// query: how often the term occurs) in the high 32 bits, its length in tokens in the low.
unsafe extern "C" fn tf_len(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    let (mut tf, mut len): (c_int, c_int) = (0, 0);
    // SAFETY: FTS5 calls this with its live extension API and context for the current row.
    unsafe {
        let (Some(inst_count), Some(column_size)) = ((*api).xInstCount, (*api).xColumnSize) else {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR);
            return;
        };
        let mut rc = inst_count(fts, &mut tf);
        if rc == ffi::SQLITE_OK {
            rc = column_size(fts, -1, &mut len);
        }
        if rc == ffi::SQLITE_OK {
            ffi::sqlite3_result_int64(ctx, (i64::from(tf) << 32) | i64::from(len.max(0)));
        } else {
            ffi::sqlite3_result_error_code(ctx, rc);
        }
    }
}

/// `pidx_tfs_len(fts)`: the current row's length in tokens, then its count of each of the
/// query's phrases in their order, as varints in a blob. Each phrase's matches are walked on
/// their own (`xPhraseFirst`), not merged into the row's instance array as `bm25()` and
/// `pidx_tf_len` have FTS5 do.
unsafe extern "C" fn tfs_len(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its live extension API and context for the current row;
    // the phrase iterator lives on this frame while it is walked, and SQLite copies the blob
    // (SQLITE_TRANSIENT).
    unsafe {
        let (Some(phrases), Some(first), Some(next), Some(column_size)) = (
            (*api).xPhraseCount,
            (*api).xPhraseFirst,
            (*api).xPhraseNext,
            (*api).xColumnSize,
        ) else {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR);
            return;
        };
        let mut len: c_int = 0;
        let rc = column_size(fts, -1, &mut len);
        if rc != ffi::SQLITE_OK {
            ffi::sqlite3_result_error_code(ctx, rc);
            return;
        }
        let mut out: Vec<u8> = Vec::with_capacity(16);
        push_varint(&mut out, u64::try_from(len).unwrap_or(0));
        for i in 0..phrases(fts) {
            let mut iter = ffi::Fts5PhraseIter {
                a: std::ptr::null(),
                b: std::ptr::null(),
            };
            let (mut col, mut off): (c_int, c_int) = (0, 0);
            let rc = first(fts, i, &mut iter, &mut col, &mut off);
            if rc != ffi::SQLITE_OK {
                ffi::sqlite3_result_error_code(ctx, rc);
                return;
            }
            let mut tf: u32 = 0;
            while col >= 0 {
                tf += 1;
                next(fts, &mut iter, &mut col, &mut off);
            }
            push_varint(&mut out, u64::from(tf));
        }
        ffi::sqlite3_result_blob(
            ctx,
            out.as_ptr().cast::<c_void>(),
            c_int::try_from(out.len()).unwrap_or(0),
            ffi::SQLITE_TRANSIENT(),
        );
    }
}

/// `v` as a varint the way [`varint`] reads it: 7 bits a byte, the high bit set on all but the
/// last, most significant first (FTS5's records). Values from 2^56 on, which SQLite writes with
/// a whole ninth byte, never occur here (counts, lengths, a table's tokens) and are capped.
fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut bytes = [0u8; 8];
    let mut n = 0;
    let mut v = v.min((1 << 56) - 1);
    loop {
        bytes[n] = (v & 0x7f) as u8;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    for i in (0..n).rev() {
        out.push(bytes[i] | if i > 0 { 0x80 } else { 0 });
    }
}

/// `pidx_tf(fts)`: the current row's instances of the query's phrases (no length: that is a
/// lookup of its own per row, which a caller reading many rows does better in bulk).
unsafe extern "C" fn tf_only(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    let mut tf: c_int = 0;
    // SAFETY: FTS5 calls this with its live extension API and context for the current row.
    unsafe {
        let Some(inst_count) = (*api).xInstCount else {
            ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR);
            return;
        };
        match inst_count(fts, &mut tf) {
            ffi::SQLITE_OK => ffi::sqlite3_result_int64(ctx, i64::from(tf)),
            rc => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// `pidx_term(fts)`: the query's one term as the index holds it (folded by the tokenizer),
/// when the query is one phrase of one token; else NULL.
unsafe extern "C" fn term(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its live extension API and context; the token it hands
    // back stays valid during this call, and SQLite copies it (SQLITE_TRANSIENT).
    unsafe {
        let (Some(phrases), Some(size), Some(token)) =
            ((*api).xPhraseCount, (*api).xPhraseSize, (*api).xQueryToken)
        else {
            ffi::sqlite3_result_null(ctx);
            return;
        };
        if (*api).iVersion < 3 || phrases(fts) != 1 || size(fts, 0) != 1 {
            ffi::sqlite3_result_null(ctx);
            return;
        }
        let (mut text, mut len): (*const std::os::raw::c_char, c_int) = (std::ptr::null(), 0);
        if token(fts, 0, 0, &mut text, &mut len) != ffi::SQLITE_OK || text.is_null() {
            ffi::sqlite3_result_null(ctx);
            return;
        }
        ffi::sqlite3_result_text(ctx, text, len, ffi::SQLITE_TRANSIENT());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn impact_below_bounds_every_text_under_the_listed_impact_and_is_nearly_reached() {
        for avgdl in [5.0, 23.0, 100.0, 256.0, 300.0, 512.0, 4000.0] {
            let bound = impact_below(1.65, 256.0, avgdl);
            let mut best: f64 = 0.0;
            for tf in 1..=60 {
                for len in tf..=20_000 {
                    if impact(tf, len, 256.0) < 1.65 {
                        let i = impact(tf, len, avgdl);
                        assert!(
                            i <= bound * (1.0 + 1e-12),
                            "{avgdl} {tf} {len}: {i} > {bound}"
                        );
                        best = best.max(i);
                    }
                }
            }
            // Lengths are whole tokens: at a mean of 5 the bound's length falls between two.
            if avgdl >= 20.0 {
                assert!(best >= bound * 0.97, "{avgdl}: {best} against {bound}");
            }
            assert!(bound <= 1.65 * (avgdl / 256.0).max(1.0) + 1e-12);
        }
    }

    use super::*;

    #[test]
    fn a_phrase_with_a_nul_is_the_phrase_split_there() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
             INSERT INTO t(body) VALUES ('hello wor ld'), ('hello world');",
        )
        .unwrap();
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM t WHERE t MATCH ?1",
                [phrase("wor\0ld")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn scores_are_fts5s_bit_for_bit() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE fts USING fts5(body, content = '', contentless_delete = 1,
                 tokenize = 'unicode61 remove_diacritics 2');",
        )
        .unwrap();
        let mut seed: u64 = 3;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for rowid in 1..400 {
            let words: Vec<&str> = (0..1 + next(40))
                .map(|_| ["the", "fish", "swims", "Fïsh", "a", "deep"][next(6) as usize])
                .collect();
            conn.execute(
                "INSERT INTO fts(rowid, body) VALUES (?1, ?2)",
                rusqlite::params![rowid * 8 + 1, words.join(" ")],
            )
            .unwrap();
        }
        conn.execute("DELETE FROM fts WHERE rowid = ?1", [17])
            .unwrap();
        let (rows, tokens) = totals(&conn, "fts").unwrap().unwrap();
        // Words, and phrases (whose count of matching texts `bm25()` makes in a pass of its
        // own, and `scores` from its rows).
        for term in ["fish", "the", "deep", "\"the fish\"", "\"fish swims deep\""] {
            let hits: i64 = conn
                .query_row("SELECT count(*) FROM fts WHERE fts MATCH ?1", [term], |r| {
                    r.get(0)
                })
                .unwrap();
            assert!(hits > 0, "{term}");
            let bm = Bm25::new(rows, tokens, hits);
            let ours: std::collections::HashMap<i64, u64> = scores(&conn, term)
                .unwrap()
                .into_iter()
                .map(|(r, s)| (r, s.to_bits()))
                .collect();
            let mut stmt = conn
                .prepare("SELECT rowid, pidx_tf_len(fts), bm25(fts) FROM fts WHERE fts MATCH ?1")
                .unwrap();
            let found: Vec<(i64, i64, f64)> = stmt
                .query_map([term], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(found.len() as i64, hits);
            assert_eq!(ours.len() as i64, hits);
            for (rowid, packed, fts5) in found {
                let (tf, len) = unpack(packed);
                assert!(tf >= 1 && len >= tf, "{term}: tf {tf}, len {len}");
                assert_eq!(bm.score(tf, len).to_bits(), fts5.to_bits(), "{term}");
                assert_eq!(ours[&rowid], fts5.to_bits(), "{term}: scores()");
                // The bound of a text's impact holds it.
                assert!(bm.most(impact(tf, len, bm.avgdl()), bm.avgdl()) >= -fts5);
            }
        }
        // Several phrases ANDed: each phrase's count from `pidx_tfs_len`, its idf from the
        // texts holding it in the whole table, summed in the query's order.
        for phrases in [
            &["fish", "the"][..],
            &["deep", "\"the fish\"", "a"],
            &["the", "the"],
            &["swims", "fish"],
        ] {
            let query = phrases
                .iter()
                .map(|p| format!("({p})"))
                .collect::<Vec<_>>()
                .join(" AND ");
            let hits: Vec<i64> = phrases
                .iter()
                .map(|p| {
                    conn.query_row("SELECT count(*) FROM fts WHERE fts MATCH ?1", [p], |r| {
                        r.get(0)
                    })
                    .unwrap()
                })
                .collect();
            let bm = Bm25Sum::new(rows, tokens, &hits);
            let ours: std::collections::HashMap<i64, (Vec<i64>, i64)> = matches_each(&conn, &query)
                .unwrap()
                .into_iter()
                .map(|(r, tfs, len)| (r, (tfs, len)))
                .collect();
            let found: Vec<(i64, f64)> = conn
                .prepare("SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ?1")
                .unwrap()
                .query_map([&query], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert!(found.len() > 10, "{query}: {} matches", found.len());
            assert_eq!(ours.len(), found.len(), "{query}");
            for (rowid, fts5) in found {
                let (tfs, len) = &ours[&rowid];
                assert_eq!(tfs.len(), phrases.len());
                assert!(
                    tfs.iter().all(|&tf| tf >= 1 && tf <= *len),
                    "{query}: {tfs:?}"
                );
                assert_eq!(bm.score(tfs, *len).to_bits(), fts5.to_bits(), "{query}");
            }
        }
    }

    /// A table that had rows deleted (and more written in the same transaction) has the totals
    /// and the `bm25()` of one that only ever held the rows left.
    #[test]
    fn deleted_rows_leave_the_totals_of_a_table_that_never_held_them() {
        let table = || {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(
                "CREATE VIRTUAL TABLE fts USING fts5(body, content = '', contentless_delete = 1);",
            )
            .unwrap();
            conn
        };
        let body =
            |rowid: i64| "fish ".repeat(1 + (rowid % 7) as usize) + &"the ".repeat(rowid as usize);
        let insert = |conn: &Connection, rowid: i64| {
            conn.execute(
                "INSERT INTO fts(rowid, body) VALUES (?1, ?2)",
                rusqlite::params![rowid, body(rowid)],
            )
            .unwrap();
        };
        let (kept, built) = (table(), table());
        for rowid in 1..40 {
            insert(&built, rowid);
        }
        built.execute_batch("BEGIN").unwrap();
        let mut gone = Gone::default();
        for rowid in [3, 30, 31, 99] {
            delete(&built, "fts", rowid, &mut gone).unwrap();
        }
        assert_eq!(
            gone,
            Gone {
                rows: 3,
                tokens: (4 + 3) + (3 + 30) + (4 + 31)
            }
        );
        settle(&built, "fts", &mut gone).unwrap();
        assert_eq!(gone, Gone::default());
        for rowid in 40..45 {
            insert(&built, rowid);
        }
        built.execute_batch("COMMIT").unwrap();
        for rowid in (1..45).filter(|r| ![3, 30, 31].contains(r)) {
            insert(&kept, rowid);
        }
        assert_eq!(
            totals(&built, "fts").unwrap(),
            totals(&kept, "fts").unwrap()
        );
        let scores = |conn: &Connection| -> Vec<(i64, u64)> {
            conn.prepare("SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH 'fish' ORDER BY rowid")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get::<_, f64>(1)?.to_bits())))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        assert_eq!(scores(&built).len(), 41);
        assert_eq!(scores(&built), scores(&kept));
    }
}
