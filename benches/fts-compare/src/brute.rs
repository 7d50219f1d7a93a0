//! The answer every engine should give, by brute force: every text tokenized, every match
//! scored with FTS5's bm25 exactly (a phrase's document count included) and blended with
//! recency; literals and regexes by reading every text, newest first.

use std::collections::HashMap;

use crate::dump::Dump;
use crate::rank::{self, blend, idf, tf_part, Kind, TopK, Q};

/// The top `k` doc ids of each query, in the order of `qs`.
pub fn answers(dump: &Dump, qs: &[Q], k: usize, now_ms: i64) -> Vec<Vec<usize>> {
    // Every word any ranked query uses.
    let mut vocab: HashMap<String, usize> = HashMap::new();
    for q in qs {
        if let Kind::Ranked(els) = &q.kind {
            for w in els.iter().flatten() {
                let n = vocab.len();
                vocab.entry(w.clone()).or_insert(n);
            }
        }
    }
    // Per ranked query: df of each element, and the (doc, tfs, dl) of texts matching all.
    struct Acc {
        df: Vec<f64>,
        hits: Vec<(usize, Vec<f64>, f64)>,
    }
    let mut accs: Vec<Option<Acc>> = qs
        .iter()
        .map(|q| match &q.kind {
            Kind::Ranked(els) => Some(Acc {
                df: vec![0.0; els.len()],
                hits: Vec::new(),
            }),
            _ => None,
        })
        .collect();
    let mut total_tokens = 0f64;
    let mut pos: Vec<Vec<u32>> = vec![Vec::new(); vocab.len()];
    for d in 0..dump.len() {
        let doc = dump.doc(d);
        for p in pos.iter_mut() {
            p.clear();
        }
        let mut dl = 0f64;
        crate::tok::tokens(doc.text, |at, t, _, _| {
            dl += 1.0;
            if let Some(&i) = vocab.get(t) {
                pos[i].push(at);
            }
        });
        total_tokens += dl;
        for (q, acc) in qs.iter().zip(accs.iter_mut()) {
            let (Kind::Ranked(els), Some(acc)) = (&q.kind, acc) else {
                continue;
            };
            let tfs: Vec<f64> = els
                .iter()
                .map(|el| {
                    let lists: Vec<&Vec<u32>> = el.iter().map(|w| &pos[vocab[w]]).collect();
                    lists[0]
                        .iter()
                        .filter(|&&p0| {
                            lists[1..]
                                .iter()
                                .enumerate()
                                .all(|(j, l)| l.binary_search(&(p0 + 1 + j as u32)).is_ok())
                        })
                        .count() as f64
                })
                .collect();
            for (j, tf) in tfs.iter().enumerate() {
                if *tf > 0.0 {
                    acc.df[j] += 1.0;
                }
            }
            if tfs.iter().all(|&t| t > 0.0) {
                acc.hits.push((d, tfs, dl));
            }
        }
    }
    let n = dump.len() as f64;
    let avgdl = total_tokens / n;
    let mut order: Option<Vec<usize>> = None;
    qs.iter()
        .zip(accs)
        .map(|(q, acc)| match (&q.kind, acc) {
            (Kind::Ranked(_), Some(acc)) => {
                let idfs: Vec<f64> = acc.df.iter().map(|&df| idf(n, df)).collect();
                let mut top = TopK::new(k);
                for (d, tfs, dl) in &acc.hits {
                    let raw: f64 = tfs
                        .iter()
                        .zip(&idfs)
                        .map(|(&tf, &i)| i * tf_part(tf, *dl, avgdl))
                        .sum();
                    top.add(raw * blend(dump.ts[*d], now_ms), *d);
                }
                top.docs()
            }
            (Kind::Literal(s), _) => {
                let all = order
                    .get_or_insert_with(|| (0..dump.len()).collect())
                    .clone();
                rank::newest_confirmed(dump, all, k, &|t: &str| t.contains(s.as_str()))
            }
            (Kind::Regex(re, _), _) => {
                let re = regex::Regex::new(re).expect("regex");
                let all = order
                    .get_or_insert_with(|| (0..dump.len()).collect())
                    .clone();
                rank::newest_confirmed(dump, all, k, &|t: &str| re.is_match(t))
            }
            _ => Vec::new(),
        })
        .collect()
}
