//! What `push` sends of the local index's embeddings (pg 0032): the source's model and center,
//! and each transcript's passages (int8 vector, scale, and sign code as a bit string) whenever
//! the local index's passages of it differ from what the server was sent (`passage_files`'
//! mark: their count and ids). A transcript's passages go whole, as its texts go on a
//! rewrite; they stay with their texts' keys (`fid`, `seq`, `kind`), so the server joins a
//! near passage to its text, entry and session as a words search does.
//!
//! With redaction on (the default), a text that holds a secret sends no vector: a static
//! model's vector is a mean of its tokens' rows, close enough to the text to say which rare
//! tokens it holds, so the text's passages stay on this machine (the text is still found by
//! its words, redacted). Pushed with `--no-redact`, every passage goes.

use std::collections::{HashMap, HashSet};
use std::fs::File;

use postgres::Transaction;
use rusqlite::Connection;

use super::local::LocalFile;
use crate::pg::passages::{code_bits, Rows};
use crate::pg::server_err;
use pidx_core::error::{Error, Result};
use pidx_core::ingest::embed::indexed_model;
use pidx_core::meaning::codes;
use pidx_core::pi::line::{parse_line, Line};
use pidx_core::pi::text::texts;
use pidx_core::redact;
use pidx_core::store::jsonl::read_at;

/// What a push did with the embeddings.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Sent {
    /// Transcripts whose passages were sent (or cleared).
    pub files: usize,
    /// Passages sent.
    pub passages: usize,
    /// Passages that stayed here: their text holds a secret.
    pub withheld: usize,
}

/// Sends the passages of `files` that changed since the last push, in the push's transaction.
/// The server's file ids are read after the push's batches (new transcripts have theirs then).
///
/// # Errors
/// Index and server errors.
pub fn push(
    conn: &Connection,
    tx: &mut Transaction,
    source: &str,
    files: &[LocalFile],
    redact: bool,
) -> Result<Sent> {
    let mut sent = Sent::default();
    let held: Option<(String, Vec<u8>)> = tx
        .query_opt(
            "SELECT model, center FROM embed_sources WHERE source = $1",
            &[&source],
        )
        .map_err(server_err)?
        .map(|r| (r.get(0), r.get(1)));
    let local = local_model(conn)?;
    if local.as_ref() != held.as_ref() {
        // Another model or center (or none any more): every passage of the source goes.
        if held.is_some() {
            for table in ["passages", "passage_files", "embed_sources"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE source = $1"),
                    &[&source],
                )
                .map_err(server_err)?;
            }
        }
        if let Some((model, center)) = &local {
            tx.execute(
                "INSERT INTO embed_sources (source, model, center) VALUES ($1, $2, $3)",
                &[&source, model, center],
            )
            .map_err(server_err)?;
        }
    }
    let Some((_, center)) = local else {
        return Ok(sent);
    };
    let center = codes::center_of(&center);
    let fids: HashMap<String, i64> = tx
        .query(
            "SELECT path, fid FROM sessions WHERE source = $1",
            &[&source],
        )
        .map_err(server_err)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let marks: HashMap<i64, i64> = tx
        .query(
            "SELECT fid, mark FROM passage_files WHERE source = $1",
            &[&source],
        )
        .map_err(server_err)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let local_marks = local_marks(conn)?;
    // Which transcripts' passages change: their old passages go first, then the new ones.
    let changed: Vec<(&LocalFile, i64, Option<i64>)> = (files.iter())
        .filter_map(|f| {
            let fid = *fids.get(&f.path)?;
            let mark = local_marks.get(&f.file_id).copied();
            (mark != marks.get(&fid).copied()).then_some((f, fid, mark))
        })
        .collect();
    let cleared: Vec<i64> = (changed.iter())
        .filter(|c| marks.contains_key(&c.1))
        .map(|c| c.1)
        .collect();
    for table in ["passages", "passage_files"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE source = $1 AND fid = ANY($2)"),
            &[&source, &cleared],
        )
        .map_err(server_err)?;
    }
    let mut rows = Rows::default();
    let mut marked: (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    for (f, fid, mark) in changed {
        sent.files += 1;
        let Some(mark) = mark else { continue };
        let secret = if redact {
            // A transcript that cannot be read back as indexed (changed or gone since the
            // sync) sends no passage: the next push looks again.
            match secret_texts(conn, f)? {
                Some(s) => s,
                None => continue,
            }
        } else {
            HashSet::new()
        };
        marked.0.push(fid);
        marked.1.push(mark);
        let mut stmt = conn.prepare_cached(
            "SELECT e.seq, p.kind, p.scale, p.vec FROM passages p JOIN entries e ON e.rid = p.rid
             WHERE p.file_id = ?1 ORDER BY p.id",
        )?;
        let mut q = stmt.query([f.file_id])?;
        while let Some(r) = q.next()? {
            let (seq, kind, scale): (i64, i64, f64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            if secret.contains(&(seq, kind)) {
                sent.withheld += 1;
                continue;
            }
            let vec: Vec<u8> = r.get(3)?;
            let code = code_bits(&codes::of_i8(&vec, scale as f32, &center));
            rows.add(fid, seq, kind as i16, scale as f32, vec, code);
            sent.passages += 1;
            if rows.full() {
                rows.write(tx, source)?;
            }
        }
    }
    rows.write(tx, source)?;
    tx.execute(
        "INSERT INTO passage_files (source, fid, mark)
         SELECT $1, u.fid, u.mark FROM unnest($2::int8[], $3::int8[]) AS u(fid, mark)",
        &[&source, &marked.0, &marked.1],
    )
    .map_err(server_err)?;
    Ok(sent)
}

/// The local index's model and center, when it holds vectors.
fn local_model(conn: &Connection) -> Result<Option<(String, Vec<u8>)>> {
    let Some(model) = indexed_model(conn)? else {
        return Ok(None);
    };
    let center: Option<Vec<u8>> = conn
        .query_row("SELECT v FROM embed_center", [], |r| r.get(0))
        .ok();
    Ok(center.map(|c| (model, c)))
}

/// Each local transcript's mark of its passages: their count and ids, mixed into one number
/// (a passage embedded again gets a new id).
fn local_marks(conn: &Connection) -> Result<HashMap<i64, i64>> {
    let mut stmt =
        conn.prepare("SELECT file_id, count(*), sum(id), max(id) FROM passages GROUP BY file_id")?;
    let rows = stmt.query_map([], |r| {
        let (file_id, n, sum, max): (i64, i64, i64, i64) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        let mark = n.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64)
            ^ sum.wrapping_mul(0x0100_0000_01B3)
            ^ max.rotate_left(32);
        Ok((file_id, mark))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// The texts of transcript `f` that hold a secret (`redact::find`), by entry and kind, read
/// back from the JSONL as push reads them; `None` when a line is not what the index recorded
/// (the file changed or went since the sync).
fn secret_texts(conn: &Connection, f: &LocalFile) -> Result<Option<HashSet<(i64, i64)>>> {
    let mut out = HashSet::new();
    let Ok(file) = File::open(&f.path) else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT e.seq, e.offset, e.len FROM entries e
         WHERE e.file_id = ?1 AND EXISTS (SELECT 1 FROM passages p WHERE p.rid = e.rid)",
    )?;
    let mut q = stmt.query([f.file_id])?;
    while let Some(r) = q.next()? {
        let (seq, offset, len): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let bytes =
            read_at(&file, offset as u64, len as usize).map_err(|e| Error::io(&f.path, e))?;
        if bytes.len() != len as usize {
            return Ok(None);
        }
        let Line::Value(serde_json::Value::Object(obj)) = parse_line(&bytes) else {
            continue;
        };
        for (kind, text) in texts(&obj) {
            if !redact::find(&text).is_empty() {
                out.insert((seq, kind as i64));
            }
        }
    }
    Ok(Some(out))
}
