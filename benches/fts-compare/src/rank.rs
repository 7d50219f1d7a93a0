//! What a search asks, and pidx's ranking: FTS5's bm25 (k1 1.2, b 0.75, idf clamped to 1e-6)
//! blended with recency as `query/search/ranked.rs` does (two thirds of the relevance plus a
//! third that halves every 30 days; no timestamp counts as a year old).

pub const K1: f64 = 1.2;
pub const B: f64 = 0.75;

/// A query of the benchmark.
#[derive(Clone, Debug)]
pub struct Q {
    pub class: &'static str,
    pub typed: &'static str,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub enum Kind {
    /// Ranked: every element must match; an element is a word or a phrase (several words).
    Ranked(Vec<Vec<String>>),
    /// Newest first: texts holding this exact string (case-sensitive); candidates are the
    /// texts holding its words as one phrase.
    Literal(String),
    /// Newest first: texts matching this regex; candidates hold every element (a phrase of
    /// the words of a literal run every match must contain); none: every text is read.
    Regex(String, Vec<Vec<String>>),
}

pub fn queries() -> Vec<Q> {
    use crate::tok::words;
    let w = |s: &str| words(s);
    vec![
        Q {
            class: "rare word",
            typed: "jalapeño",
            kind: Kind::Ranked(vec![w("jalapeño")]),
        },
        Q {
            class: "mid word",
            typed: "borrow",
            kind: Kind::Ranked(vec![w("borrow")]),
        },
        Q {
            class: "common word",
            typed: "function",
            kind: Kind::Ranked(vec![w("function")]),
        },
        Q {
            class: "two words",
            typed: "borrow lifetime",
            kind: Kind::Ranked(vec![w("borrow"), w("lifetime")]),
        },
        Q {
            class: "three words",
            typed: "error function test",
            kind: Kind::Ranked(vec![w("error"), w("function"), w("test")]),
        },
        Q {
            class: "phrase",
            typed: "\"the borrow\"",
            kind: Kind::Ranked(vec![w("the borrow")]),
        },
        Q {
            class: "literal identifier",
            typed: "--literal parse_line",
            kind: Kind::Literal("parse_line".into()),
        },
        Q {
            class: "literal identifier (caps)",
            typed: "--literal SUM_ONLY_MESSAGE",
            kind: Kind::Literal("SUM_ONLY_MESSAGE".into()),
        },
        Q {
            class: "literal with punctuation",
            typed: "--literal src/main.rs:42",
            kind: Kind::Literal("src/main.rs:42".into()),
        },
        Q {
            class: "re: with a literal",
            typed: r"re:src/main\.rs:\d+",
            kind: Kind::Regex(r"src/main\.rs:\d+".into(), vec![w("src main rs")]),
        },
        Q {
            class: "re: words inside",
            typed: r"re:fn \w+_line",
            kind: Kind::Regex(r"fn \w+_line".into(), vec![w("fn"), w("line")]),
        },
        Q {
            class: "re: without a literal",
            typed: r"re:[A-Z]{3,}_[A-Z]{4,}",
            kind: Kind::Regex(r"[A-Z]{3,}_[A-Z]{4,}".into(), vec![]),
        },
    ]
}

/// FTS5's idf of a word in `df` of `n` texts.
pub fn idf(n: f64, df: f64) -> f64 {
    let v = ((n - df + 0.5) / (df + 0.5)).ln();
    if v <= 0.0 {
        1e-6
    } else {
        v
    }
}

/// One word's share of bm25, without its idf.
pub fn tf_part(tf: f64, dl: f64, avgdl: f64) -> f64 {
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl))
}

/// `ranked::blend`.
pub fn blend(ts_ms: i64, now_ms: i64) -> f64 {
    let age_days = if ts_ms == crate::dump::NO_TS {
        365.0
    } else {
        ((now_ms - ts_ms).max(0) as f64) / 86_400_000.0
    };
    2.0 / 3.0 + 0.5f64.powf(age_days / 30.0) / 3.0
}

/// The best `k` of (doc, blended score), best first (ties: higher doc first, as newer).
pub struct TopK {
    pub k: usize,
    pub best: Vec<(f64, usize)>,
}

impl TopK {
    pub fn new(k: usize) -> TopK {
        TopK {
            k,
            best: Vec::new(),
        }
    }
    pub fn floor(&self) -> f64 {
        if self.best.len() < self.k {
            f64::NEG_INFINITY
        } else {
            self.best.last().map_or(f64::NEG_INFINITY, |b| b.0)
        }
    }
    pub fn add(&mut self, score: f64, doc: usize) {
        let at = self
            .best
            .partition_point(|&(s, d)| s > score || (s == score && d > doc));
        if at < self.k {
            self.best.insert(at, (score, doc));
            self.best.truncate(self.k);
        }
    }
    pub fn docs(&self) -> Vec<usize> {
        self.best.iter().map(|b| b.1).collect()
    }
}

/// Newest first: of `candidates` (doc ids), the first `k` whose text passes `confirm`.
pub fn newest_confirmed(
    dump: &crate::dump::Dump,
    mut candidates: Vec<usize>,
    k: usize,
    confirm: &dyn Fn(&str) -> bool,
) -> Vec<usize> {
    candidates.sort_unstable_by(|&a, &b| dump.ts[b].cmp(&dump.ts[a]).then(b.cmp(&a)));
    candidates.dedup();
    let mut out = Vec::new();
    for d in candidates {
        if confirm(dump.doc(d).text) {
            out.push(d);
            if out.len() == k {
                break;
            }
        }
    }
    out
}
