//! The blocks of sign codes (migration 0025) a search by meaning scans first: the embedding
//! pass writes one beside the passages of each batch, in the same transaction, so every
//! passage has a code. Codes are never deleted one by one: a passage that goes (its entry
//! rewritten, truncated, deleted or forgotten, by `ON DELETE CASCADE`) leaves a dead code that
//! a query skips when it finds no passage row for it, and [`compact_codes`] writes the blocks
//! again from the passages once dead codes are a quarter of them.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::meaning::codes;
use crate::pi::text::TextKind;
use crate::store::schema::fts_rowid;

/// Codes a block holds at most: a few hundred kilobytes to read whole, rewritten when a small
/// batch (the watcher's) is added to the last block, and a hundred blocks at 400,000 passages.
pub(crate) const BLOCK: usize = 4096;

/// Codes waiting to be written, with their full-text rowids.
#[derive(Default)]
pub(crate) struct Block<'c> {
    center: &'c [f32],
    n: usize,
    rowids: Vec<u8>,
    codes: Vec<u8>,
}

impl<'c> Block<'c> {
    /// An empty block of codes about `center`.
    pub(crate) fn about(center: &'c [f32]) -> Self {
        Block {
            center,
            ..Block::default()
        }
    }

    /// Adds the code of int8 vector `vec` (times `scale`), a passage of full-text row `rowid`.
    pub(crate) fn push(&mut self, rowid: i64, vec: &[u8], scale: f64) {
        self.n += 1;
        self.rowids.extend_from_slice(&rowid.to_le_bytes());
        codes::to_bytes(
            &codes::of_i8(vec, scale as f32, self.center),
            &mut self.codes,
        );
    }

    /// Writes the codes: into the last block while it has room, else as a new block.
    pub(crate) fn append_to(self, tx: &Connection) -> Result<()> {
        if self.n == 0 {
            return Ok(());
        }
        let last: Option<(i64, usize, Vec<u8>, Vec<u8>)> = tx
            .query_row(
                "SELECT id, n, rowids, codes FROM passage_codes ORDER BY id DESC LIMIT 1",
                [],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get::<_, i64>(1)? as usize,
                        r.get(2)?,
                        r.get(3)?,
                    ))
                },
            )
            .optional()?;
        match last {
            Some((id, n, mut rowids, mut codes)) if n + self.n <= BLOCK => {
                rowids.extend_from_slice(&self.rowids);
                codes.extend_from_slice(&self.codes);
                tx.execute(
                    "UPDATE passage_codes SET n = ?1, rowids = ?2, codes = ?3 WHERE id = ?4",
                    params![(n + self.n) as i64, rowids, codes, id],
                )?;
            }
            _ => self.insert(tx)?,
        }
        Ok(())
    }

    fn insert(self, tx: &Connection) -> Result<()> {
        if self.n > 0 {
            tx.execute(
                "INSERT INTO passage_codes(n, rowids, codes) VALUES (?1, ?2, ?3)",
                params![self.n as i64, self.rowids, self.codes],
            )?;
        }
        Ok(())
    }
}

/// Writes every block again from the passages when dead codes are more than a quarter of the
/// live ones: a rewritten session leaves its old codes until then, and the rewrite's cost, a
/// pass over the passages, is paid once per quarter of them deleted.
///
/// # Errors
/// SQLite errors.
pub(crate) fn compact_codes(conn: &mut Connection) -> Result<bool> {
    let (coded, live): (i64, i64) = conn.query_row(
        "SELECT (SELECT coalesce(sum(n), 0) FROM passage_codes), (SELECT count(*) FROM passages)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if coded - live <= live / 4 {
        return Ok(false);
    }
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM passage_codes", [])?;
    {
        let center = stored_center(&tx)?.unwrap_or_default();
        let mut stmt = tx.prepare("SELECT rid, kind, scale, vec FROM passages ORDER BY id")?;
        let mut rows = stmt.query([])?;
        let mut block = Block::about(&center);
        while let Some(r) = rows.next()? {
            let rowid = fts_rowid(r.get(0)?, TextKind::from_bits(r.get(1)?));
            let vec = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
            block.push(rowid, vec, r.get(2)?);
            if block.n == BLOCK {
                std::mem::replace(&mut block, Block::about(&center)).insert(&tx)?;
            }
        }
        block.insert(&tx)?;
    }
    tx.commit()?;
    Ok(true)
}

/// The center the index's codes are about (migration 0025), when one is recorded.
///
/// # Errors
/// SQLite errors.
pub(crate) fn stored_center(conn: &Connection) -> Result<Option<Vec<f32>>> {
    let blob: Option<Vec<u8>> = conn
        .query_row("SELECT v FROM embed_center", [], |r| r.get(0))
        .optional()?;
    Ok(blob.map(|b| codes::center_of(&b)))
}

/// The center for the codes of `first`, the first batch a pass writes: the index's, or else
/// the mean of `first`'s vectors, recorded (a few thousand passages give the common part of
/// a model's vectors as well as all of them would).
///
/// # Errors
/// SQLite errors.
pub(crate) fn center_for<'a>(
    tx: &Connection,
    first: impl Iterator<Item = (&'a [u8], f64)>,
    dim: usize,
) -> Result<Vec<f32>> {
    if let Some(c) = stored_center(tx)? {
        return Ok(c);
    }
    let c = codes::mean(first.map(|(v, s)| (v, s as f32)), dim);
    tx.execute(
        "INSERT INTO embed_center(v) VALUES (?1)",
        [codes::center_bytes(&c)],
    )?;
    Ok(c)
}
