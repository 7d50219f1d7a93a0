//! `similar`: the sessions closest in meaning to one session. A session's vector is the mean of
//! its passages' vectors (migration 0024), normalised; every other session's is built in the
//! same scan of the passages and compared by the centered cosine searches use
//! (`search::Scorer`: about 0 for unrelated sessions, 1 for the same), and kept only at or
//! above the floor. Plain cosines of session means were all near 0.99: every mean leans the
//! same way, so the number told nothing. Sessions outside the scope's roots are
//! left out; a fork's copies of its parent's entries are embedded in the parent only
//! (`ingest::embed`), so a fork is compared on what it added.

use std::collections::HashMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::error::Result;
use crate::store::schema::TITLE;
use crate::store::Scope;

/// A session close in meaning.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Similar {
    pub path: String,
    pub session_id: Option<String>,
    pub cwd: String,
    pub title: String,
    /// The centered cosine of the two sessions' vectors: about 0 unrelated, 1 the same; never
    /// below [`floor`].
    pub score: f64,
    #[serde(skip)]
    pub file_id: i64,
}

/// The similarity a session must reach to be listed: the same floor as a meaning hit.
pub fn floor() -> f64 {
    f64::from(crate::meaning::embedder::floor())
}

/// Up to `limit` sessions closest to session file `file_id`, closest first, at or above
/// [`floor`]; empty when it has no vector.
///
/// # Errors
/// Index errors.
pub fn similar(
    conn: &Connection,
    scope: &Scope,
    file_id: i64,
    limit: usize,
) -> Result<Vec<Similar>> {
    let _snapshot = crate::store::snapshot::Snapshot::begin(conn)?;
    let mut sums: HashMap<i64, Vec<f32>> = HashMap::new();
    let mut stmt = conn.prepare("SELECT file_id, scale, vec FROM passages")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let f: i64 = r.get(0)?;
        let scale: f64 = r.get(1)?;
        let v = r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
        let sum = sums.entry(f).or_insert_with(|| vec![0.0; v.len()]);
        for (s, b) in sum.iter_mut().zip(v) {
            *s += (*b as i8) as f32 * scale as f32;
        }
    }
    let Some(me) = sums.get(&file_id).map(|v| unit(v.clone())) else {
        return Ok(Vec::new());
    };
    let at_least = floor();
    let allowed = files_in_scope(conn, scope)?;
    let center = crate::query::search::center(conn)?;
    let mut scored: Vec<(i64, f64)> = sums
        .into_iter()
        .filter(|(f, _)| *f != file_id && allowed.contains_key(f))
        .map(|(f, v)| {
            let v = unit(v);
            let s = crate::query::search::Scorer::of_vectors(&me, &v, &center);
            (f, s as f64)
        })
        .filter(|(_, s)| *s >= at_least)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(scored
        .into_iter()
        .take(limit)
        .filter_map(|(f, score)| {
            let (path, session_id, cwd, title) = allowed.get(&f)?.clone();
            Some(Similar {
                path,
                session_id,
                cwd,
                title,
                score,
                file_id: f,
            })
        })
        .collect())
}

type Info = (String, Option<String>, String, String);

/// The listed session files the scope's roots hold, with what a listing shows of them.
fn files_in_scope(conn: &Connection, scope: &Scope) -> Result<HashMap<i64, Info>> {
    let mut w = crate::store::filter::Where::default();
    scope.restrict_to_roots(&mut w);
    let sql = format!(
        "SELECT f.id, f.path, s.session_id, s.cwd, coalesce({TITLE}, '')
         FROM files f JOIN sessions s ON s.file_id = f.id WHERE {}",
        w.sql()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}
