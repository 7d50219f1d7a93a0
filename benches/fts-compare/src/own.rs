//! A minimal inverted index of our own inside an SQLite file (issue 39, design 1).
//!
//! `terms(term, id, df)`; `post(k, last, max_ts, bound, docs, pos)`: a word's posting list cut
//! into blocks of up to 128 texts, one row per block, keyed by word id << 32 | first doc (a
//! rowid: a table b-tree keeps rows of up to 4 KB in the page, where a WITHOUT ROWID table
//! spills everything past 1 KB to a page of its own, which doubled the file), so a word's
//! blocks are contiguous and in doc order. `docs` holds each text's doc delta, term
//! frequency and length (varints), `pos` its positions (delta varints), `bound` the
//! (frequency, length) pairs no other text of the block beats on both (the Pareto front: the
//! block's exact maximum bm25 for any average length and idf), `max_ts` the newest time in
//! it (the highest recency weight). A sync writes one batch of blocks per transaction: a word
//! seen in many batches has a short block per batch (a merge, not prototyped, would fill them).
//!
//! Top k: blocks of the rarest word, each with the bound of everything that can match in it
//! (its own, plus the best overlapping block of every other element, times the recency of
//! its newest text), taken best bound first until the next bound cannot beat the k-th best:
//! a common word's top 20 decodes the few blocks that can hold it, not all its postings.
//! Phrases are checked by positions.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::dump::{Dump, NO_TS};
use crate::rank::{blend, idf, tf_part, TopK};

pub const BLOCK: usize = 128;

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get(b: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let x = b[*at];
        *at += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

#[derive(Default)]
struct Post {
    docs: Vec<u32>,
    tfs: Vec<u32>,
    pos: Vec<u8>,
    last_pos: u32,
}

const SCHEMA: &str = "
PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
CREATE TABLE terms(term TEXT PRIMARY KEY, id INTEGER NOT NULL, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE post(k INTEGER PRIMARY KEY, last INTEGER, max_ts INTEGER, bound BLOB, docs BLOB,
                  pos BLOB);
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID;";

/// Builds the index of `dump` in a new database `path`, one transaction per `batch` bytes of
/// JSONL (the batch's postings are held in memory until then).
pub fn build(dump: &Dump, path: &Path, batch: u64) -> usize {
    let _ = std::fs::remove_file(path);
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    let mut map: FxHashMap<Box<str>, Post> = FxHashMap::default();
    let mut dls: Vec<u32> = Vec::new();
    let (mut first_doc, mut since, mut commits, mut next_id, mut tokens) =
        (0usize, 0u64, 0, 0i64, 0u64);
    for d in 0..dump.len() {
        let doc = dump.doc(d);
        let mut dl = 0u32;
        crate::tok::tokens(doc.text, |p, t, _, _| {
            dl += 1;
            let e = match map.get_mut(t) {
                Some(e) => e,
                None => map.entry(t.into()).or_default(),
            };
            if e.docs.last() != Some(&(d as u32)) {
                e.docs.push(d as u32);
                e.tfs.push(0);
                e.last_pos = 0;
            }
            *e.tfs.last_mut().unwrap() += 1;
            put(&mut e.pos, (p - e.last_pos) as u64);
            e.last_pos = p;
        });
        tokens += dl as u64;
        dls.push(dl);
        since += doc.jsonl_len as u64;
        if since >= batch || d + 1 == dump.len() {
            flush(&conn, dump, &mut map, &dls, first_doc, &mut next_id);
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('n', ?1), ('tokens', ?2)",
                params![(d + 1) as i64, tokens as i64],
            )
            .unwrap();
            conn.execute_batch("COMMIT").unwrap();
            commits += 1;
            dump.forget(first_doc, d + 1);
            first_doc = d + 1;
            dls.clear();
            since = 0;
        }
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    commits
}

fn flush(
    conn: &Connection,
    dump: &Dump,
    map: &mut FxHashMap<Box<str>, Post>,
    dls: &[u32],
    first_doc: usize,
    next_id: &mut i64,
) {
    conn.execute_batch("BEGIN").unwrap();
    let mut terms: Vec<(Box<str>, Post)> = map.drain().collect();
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut find = conn
        .prepare_cached("SELECT id FROM terms WHERE term = ?1")
        .unwrap();
    let mut bump = conn
        .prepare_cached("UPDATE terms SET df = df + ?2 WHERE term = ?1")
        .unwrap();
    let mut add = conn
        .prepare_cached("INSERT INTO terms VALUES (?1, ?2, ?3)")
        .unwrap();
    let mut ins = conn
        .prepare_cached("INSERT INTO post VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .unwrap();
    let (mut docs, mut pos, mut bound) = (Vec::new(), Vec::new(), Vec::new());
    for (term, p) in terms {
        let n = p.docs.len() as i64;
        let id = match find
            .query_row([&*term], |r| r.get::<_, i64>(0))
            .optional()
            .unwrap()
        {
            Some(id) => {
                bump.execute(params![&*term, n]).unwrap();
                id
            }
            None => {
                *next_id += 1;
                add.execute(params![&*term, *next_id, n]).unwrap();
                *next_id
            }
        };
        let mut at = 0usize; // in p.pos
        for (chunk, tfs) in p.docs.chunks(BLOCK).zip(p.tfs.chunks(BLOCK)) {
            docs.clear();
            pos.clear();
            bound.clear();
            let mut max_ts = NO_TS;
            let mut pts: Vec<(u32, u32)> = Vec::new();
            let mut prev = chunk[0];
            for (&d, &tf) in chunk.iter().zip(tfs) {
                let dl = dls[d as usize - first_doc];
                let from = at;
                for _ in 0..tf {
                    get(&p.pos, &mut at);
                }
                put(&mut docs, (d - prev) as u64);
                put(&mut docs, tf as u64);
                put(&mut docs, dl as u64);
                put(&mut docs, (at - from) as u64);
                prev = d;
                max_ts = max_ts.max(dump.ts[d as usize]);
                pts.push((tf, dl));
                pos.extend_from_slice(&p.pos[from..at]);
            }
            // The Pareto front: by frequency descending, each strictly shorter than all before.
            pts.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut shortest = u32::MAX;
            for (tf, dl) in pts {
                if dl < shortest {
                    put(&mut bound, tf as u64);
                    put(&mut bound, dl as u64);
                    shortest = dl;
                }
            }
            let k = (id << 32) | chunk[0] as i64;
            ins.execute(params![
                k,
                *chunk.last().unwrap(),
                max_ts,
                &bound,
                &docs,
                &pos
            ])
            .unwrap();
        }
    }
}

/// Positions from their varint deltas.
fn positions(b: &[u8]) -> Vec<u32> {
    let (mut at, mut p, mut out) = (0, 0u32, Vec::new());
    while at < b.len() {
        p += get(b, &mut at) as u32;
        out.push(p);
    }
    out
}

/// A block's metadata.
struct Meta {
    first: u32,
    last: u32,
    max_ts: i64,
    /// The best tf_part of the block at the index's average length.
    best: f64,
}

/// A decoded block.
struct Block {
    docs: Vec<u32>,
    tfs: Vec<u32>,
    dls: Vec<u32>,
    /// Where each text's positions start in `pos` (one more: the end).
    pos_at: Vec<u32>,
    /// The block's positions (varint deltas), when asked for.
    pos: Option<Vec<u8>>,
}

struct Word {
    id: i64,
    metas: Vec<Meta>,
    cache: HashMap<usize, Block>,
}

pub struct Engine {
    conn: Connection,
    n: f64,
    avgdl: f64,
}

impl Engine {
    pub fn open(path: &Path) -> Engine {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let get = |k: &str| -> f64 {
            conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap() as f64
        };
        let (n, tokens) = (get("n"), get("tokens"));
        Engine {
            conn,
            n,
            avgdl: tokens / n,
        }
    }

    /// The word's id, df and block metadata; `None` when it is not indexed.
    fn word(&self, w: &str) -> Option<(Word, f64)> {
        let (id, df): (i64, i64) = self
            .conn
            .prepare_cached("SELECT id, df FROM terms WHERE term = ?1")
            .unwrap()
            .query_row([w], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .unwrap()?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT k & 4294967295, last, max_ts, bound FROM post WHERE k BETWEEN ?1 AND ?2",
            )
            .unwrap();
        let avgdl = self.avgdl;
        let metas = st
            .query_map([id << 32, (id << 32) | 0xffff_ffff], |r| {
                let b: Vec<u8> = r.get(3)?;
                let (mut at, mut best) = (0, 0f64);
                while at < b.len() {
                    let tf = get(&b, &mut at) as f64;
                    let dl = get(&b, &mut at) as f64;
                    best = best.max(tf_part(tf, dl, avgdl));
                }
                Ok(Meta {
                    first: r.get(0)?,
                    last: r.get(1)?,
                    max_ts: r.get(2)?,
                    best,
                })
            })
            .unwrap()
            .collect::<rusqlite::Result<Vec<_>>>()
            .unwrap();
        Some((
            Word {
                id,
                metas,
                cache: HashMap::new(),
            },
            df as f64,
        ))
    }

    fn decode(&self, w: &mut Word, b: usize, with_pos: bool) {
        let first = w.metas[b].first;
        if !w.cache.contains_key(&b) {
            let blob: Vec<u8> = self
                .conn
                .prepare_cached("SELECT docs FROM post WHERE k = ?1")
                .unwrap()
                .query_row([(w.id << 32) | first as i64], |r| r.get(0))
                .unwrap();
            let (mut at, mut d) = (0, first);
            let mut blk = Block {
                docs: vec![],
                tfs: vec![],
                dls: vec![],
                pos_at: vec![0],
                pos: None,
            };
            let mut p = 0u32;
            while at < blob.len() {
                d += get(&blob, &mut at) as u32;
                blk.docs.push(d);
                blk.tfs.push(get(&blob, &mut at) as u32);
                blk.dls.push(get(&blob, &mut at) as u32);
                p += get(&blob, &mut at) as u32;
                blk.pos_at.push(p);
            }
            w.cache.insert(b, blk);
        }
        let blk = w.cache.get_mut(&b).unwrap();
        if with_pos && blk.pos.is_none() {
            let blob: Vec<u8> = self
                .conn
                .prepare_cached("SELECT pos FROM post WHERE k = ?1")
                .unwrap()
                .query_row([(w.id << 32) | first as i64], |r| r.get(0))
                .unwrap();
            blk.pos = Some(blob);
        }
    }

    /// Loads every word of `els`; `None` when one is not indexed.
    fn load(&self, els: &[Vec<String>]) -> Option<Elems> {
        let mut words = Vec::new();
        let mut elems = Vec::new();
        for el in els {
            let mut idx = Vec::new();
            let mut min_df = f64::MAX;
            for w in el {
                let (word, df) = self.word(w)?;
                min_df = min_df.min(df);
                idx.push((words.len(), df));
                words.push(word);
            }
            // The element's lead: its rarest word (a phrase occurs no more often than it).
            let lead = idx.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
            // A phrase's document count is not stored: the rarest word's stands for it (the
            // order of a query of one phrase does not depend on it).
            elems.push(Elem {
                words: idx.iter().map(|x| x.0).collect(),
                lead,
                idf: idf(self.n, min_df),
            });
        }
        Some(Elems { words, elems })
    }

    /// The texts of driver block `b` matching every element: (doc, raw bm25).
    fn matches(&self, e: &mut Elems, driver: usize, b: usize) -> Vec<(u32, f64)> {
        let (first, last) = (
            e.words[driver].metas[b].first,
            e.words[driver].metas[b].last,
        );
        // Decode every overlapping block of every word (with positions for phrases).
        let mut spans: Vec<Vec<usize>> = Vec::new();
        for (wi, w) in e.words.iter_mut().enumerate() {
            let phrase = e
                .elems
                .iter()
                .any(|el| el.words.len() > 1 && el.words.contains(&wi));
            let from = w.metas.partition_point(|m| m.last < first);
            let mut bs = Vec::new();
            for ob in from..w.metas.len() {
                if w.metas[ob].first > last {
                    break;
                }
                self.decode(w, ob, phrase);
                bs.push(ob);
            }
            if bs.is_empty() {
                return Vec::new();
            }
            spans.push(bs);
        }
        fn lookup<'a>(
            e: &'a Elems,
            spans: &[Vec<usize>],
            wi: usize,
            d: u32,
        ) -> Option<(u32, u32, Option<&'a [u8]>)> {
            for &ob in &spans[wi] {
                let blk = &e.words[wi].cache[&ob];
                if let Ok(i) = blk.docs.binary_search(&d) {
                    let at = blk.pos_at[i] as usize..blk.pos_at[i + 1] as usize;
                    return Some((blk.tfs[i], blk.dls[i], blk.pos.as_ref().map(|p| &p[at])));
                }
            }
            None
        }
        let dblk = &e.words[driver].cache[&b];
        let mut out = Vec::new();
        'doc: for &d in &dblk.docs {
            let mut raw = 0.0;
            for el in &e.elems {
                let mut found = Vec::new();
                for &wi in &el.words {
                    match lookup(e, &spans, wi, d) {
                        Some(x) => found.push(x),
                        None => continue 'doc,
                    }
                }
                let dl = found[0].1 as f64;
                let tf = if found.len() == 1 {
                    found[0].0 as f64
                } else {
                    let lists: Vec<Vec<u32>> =
                        found.iter().map(|f| positions(f.2.unwrap())).collect();
                    lists[0]
                        .iter()
                        .filter(|&&p| {
                            lists[1..]
                                .iter()
                                .enumerate()
                                .all(|(j, l)| l.binary_search(&(p + 1 + j as u32)).is_ok())
                        })
                        .count() as f64
                };
                if tf == 0.0 {
                    continue 'doc;
                }
                raw += el.idf * tf_part(tf, dl, self.avgdl);
            }
            out.push((d, raw));
        }
        out
    }

    /// The best `k` by bm25 blended with recency, exactly (block-max bounds).
    pub fn ranked(&self, dump: &Dump, els: &[Vec<String>], k: usize, now: i64) -> Vec<usize> {
        let Some(mut e) = self.load(els) else {
            return Vec::new();
        };
        let driver = e.driver();
        let timeless = blend(NO_TS, now);
        // Each driver block's bound: every element's best overlapping block, times recency.
        let mut order: Vec<(f64, usize)> = Vec::new();
        'block: for (b, m) in e.words[driver].metas.iter().enumerate() {
            let mut ub = 0.0;
            for el in &e.elems {
                let w = &e.words[el.lead];
                let from = w.metas.partition_point(|x| x.last < m.first);
                let best = w.metas[from..]
                    .iter()
                    .take_while(|x| x.first <= m.last)
                    .map(|x| x.best)
                    .fold(f64::NEG_INFINITY, f64::max);
                if best == f64::NEG_INFINITY {
                    continue 'block;
                }
                ub += el.idf * best;
            }
            order.push((ub * blend(m.max_ts, now).max(timeless), b));
        }
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        let mut top = TopK::new(k);
        for (ub, b) in order {
            if ub < top.floor() {
                break;
            }
            for (d, raw) in self.matches(&mut e, driver, b) {
                top.add(raw * blend(dump.ts[d as usize], now), d as usize);
            }
            // Decoded blocks of the driver are not needed again.
            e.words[driver].cache.remove(&b);
        }
        top.docs()
    }

    /// Every text matching all elements.
    pub fn candidates(&self, els: &[Vec<String>]) -> Vec<usize> {
        let Some(mut e) = self.load(els) else {
            return Vec::new();
        };
        let driver = e.driver();
        let mut out = Vec::new();
        for b in 0..e.words[driver].metas.len() {
            out.extend(
                self.matches(&mut e, driver, b)
                    .into_iter()
                    .map(|(d, _)| d as usize),
            );
            for w in &mut e.words {
                // Blocks are visited in doc order: what was decoded before is rarely needed again.
                if w.cache.len() > 64 {
                    w.cache.clear();
                }
            }
        }
        out
    }
}

struct Elem {
    words: Vec<usize>,
    lead: usize,
    idf: f64,
}

struct Elems {
    words: Vec<Word>,
    elems: Vec<Elem>,
}

impl Elems {
    /// The word with the fewest blocks: every match is in one of its blocks.
    fn driver(&self) -> usize {
        (0..self.words.len())
            .min_by_key(|&i| self.words[i].metas.len())
            .unwrap()
    }
}

/// Rewrites the index at `from` into a new database `to` with every word's blocks refilled to
/// `BLOCK` texts, written in key order (what a background merge of the per-batch blocks, like
/// FTS5's automerge, would leave). Returns the blocks before and after.
pub fn merge(from: &Path, to: &Path, dump: &Dump) -> (usize, usize) {
    let _ = std::fs::remove_file(to);
    let src = Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let dst = Connection::open(to).unwrap();
    dst.execute_batch(SCHEMA).unwrap();
    dst.execute_batch("BEGIN").unwrap();
    let q = format!(
        "ATTACH '{}' AS src",
        from.display().to_string().replace('\'', "''")
    );
    dst.execute_batch(&q).unwrap();
    dst.execute_batch(
        "INSERT INTO terms SELECT * FROM src.terms; INSERT INTO meta SELECT * FROM src.meta;",
    )
    .unwrap();
    let mut st = src
        .prepare("SELECT k >> 32, k & 4294967295, docs, pos FROM post ORDER BY k")
        .unwrap();
    let mut rows = st.query([]).unwrap();
    let mut ins = dst
        .prepare("INSERT INTO post VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .unwrap();
    let (mut before, mut after) = (0usize, 0usize);
    // The current word's postings: (doc, tf, dl, positions as raw varint bytes).
    let mut cur: Option<i64> = None;
    let mut list: Vec<(u32, u32, u32, Vec<u8>)> = Vec::new();
    let mut write = |term: i64, list: &mut Vec<(u32, u32, u32, Vec<u8>)>, after: &mut usize| {
        for chunk in list.chunks(BLOCK) {
            let (mut docs, mut pos, mut bound) = (Vec::new(), Vec::new(), Vec::new());
            let mut prev = chunk[0].0;
            let mut max_ts = NO_TS;
            let mut pts: Vec<(u32, u32)> = Vec::new();
            for (d, tf, dl, p) in chunk {
                put(&mut docs, (d - prev) as u64);
                put(&mut docs, *tf as u64);
                put(&mut docs, *dl as u64);
                put(&mut docs, p.len() as u64);
                prev = *d;
                pos.extend_from_slice(p);
                max_ts = max_ts.max(dump.ts[*d as usize]);
                pts.push((*tf, *dl));
            }
            pts.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut shortest = u32::MAX;
            for (tf, dl) in pts {
                if dl < shortest {
                    put(&mut bound, tf as u64);
                    put(&mut bound, dl as u64);
                    shortest = dl;
                }
            }
            let last = chunk.last().unwrap().0;
            let k = (term << 32) | chunk[0].0 as i64;
            ins.execute(params![k, last, max_ts, &bound, &docs, &pos])
                .unwrap();
            *after += 1;
        }
        list.clear();
    };
    while let Some(r) = rows.next().unwrap() {
        before += 1;
        let term: i64 = r.get(0).unwrap();
        let first: u32 = r.get(1).unwrap();
        let docs: Vec<u8> = r.get(2).unwrap();
        let pos: Vec<u8> = r.get(3).unwrap();
        if cur != Some(term) {
            if let Some(t) = cur {
                write(t, &mut list, &mut after);
            }
            cur = Some(term);
        }
        let (mut at, mut pat, mut d) = (0, 0, first);
        while at < docs.len() {
            d += get(&docs, &mut at) as u32;
            let tf = get(&docs, &mut at) as u32;
            let dl = get(&docs, &mut at) as u32;
            let from = pat;
            pat += get(&docs, &mut at) as usize;
            list.push((d, tf, dl, pos[from..pat].to_vec()));
        }
    }
    if let Some(t) = cur {
        write(t, &mut list, &mut after);
    }
    drop(ins);
    dst.execute_batch("COMMIT; DETACH src; PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    (before, after)
}
