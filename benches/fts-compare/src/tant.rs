//! Tantivy beside the SQLite store: one text field with pidx's tokenizer (`tok.rs`), freqs and
//! positions, and the dump's doc id as a fast field. Commits once per batch of JSONL (pidx's
//! sync commits every 8 MB), as a sync tied to the index's batches would.

use std::path::Path;

use tantivy::query::{BooleanQuery, EnableScoring, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, IndexWriter, TantivyDocument, Term};

use crate::dump::Dump;
use crate::rank::{blend, TopK};

#[derive(Clone, Default)]
pub struct PidxTokenizer {
    tokens: Vec<Token>,
}

pub struct Stream<'a> {
    tokens: &'a [Token],
    at: usize,
}

impl Tokenizer for PidxTokenizer {
    type TokenStream<'a> = Stream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream<'a> {
        // Tokens (and their strings) are reused from text to text.
        let mut n = 0;
        let out = &mut self.tokens;
        crate::tok::tokens(text, |pos, t, from, to| {
            if n == out.len() {
                out.push(Token::default());
            }
            let tk = &mut out[n];
            tk.offset_from = from;
            tk.offset_to = to;
            tk.position = pos as usize;
            tk.text.clear();
            tk.text.push_str(t);
            tk.position_length = 1;
            n += 1;
        });
        Stream {
            tokens: &self.tokens[..n],
            at: 0,
        }
    }
}

impl TokenStream for Stream<'_> {
    fn advance(&mut self) -> bool {
        self.at += 1;
        self.at <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.at - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        unreachable!("the stream is read only")
    }
}

fn schema() -> (Schema, Field, Field) {
    let mut b = Schema::builder();
    let idx = TextFieldIndexing::default()
        .set_tokenizer("pidx")
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    let body = b.add_text_field("body", TextOptions::default().set_indexing_options(idx));
    let d = b.add_u64_field("d", FAST | INDEXED);
    (b.build(), body, d)
}

/// Builds the index of `dump` in `dir`, committing every `batch` bytes of JSONL.
pub fn build(
    dump: &Dump,
    dir: &Path,
    batch: u64,
    threads: usize,
    heap_mb: usize,
    merge_cap: Option<usize>,
) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let (schema, body, d) = schema();
    let index = Index::create_in_dir(dir, schema).expect("create tantivy index (dir not empty?)");
    index
        .tokenizers()
        .register("pidx", PidxTokenizer::default());
    let mut w: IndexWriter = index
        .writer_with_num_threads(threads, heap_mb << 20)
        .unwrap();
    if let Some(cap) = merge_cap {
        let mut policy = tantivy::merge_policy::LogMergePolicy::default();
        policy.set_max_docs_before_merge(cap);
        w.set_merge_policy(Box::new(policy));
    }
    let (mut since, mut commits, mut from) = (0u64, 0usize, 0usize);
    for i in 0..dump.len() {
        let doc = dump.doc(i);
        let mut td = TantivyDocument::default();
        td.add_text(body, doc.text);
        td.add_u64(d, i as u64);
        w.add_document(td).unwrap();
        since += doc.jsonl_len as u64;
        if since >= batch {
            w.commit().unwrap();
            dump.forget(from, i + 1);
            from = i + 1;
            commits += 1;
            since = 0;
        }
    }
    w.commit().unwrap();
    w.wait_merging_threads().unwrap();
    commits + 1
}

pub struct Engine {
    _index: Index,
    reader: IndexReader,
    body: Field,
}

impl Engine {
    pub fn open(dir: &Path) -> Engine {
        let index = Index::open_in_dir(dir).expect("open tantivy index");
        index
            .tokenizers()
            .register("pidx", PidxTokenizer::default());
        let reader = index.reader().unwrap();
        let (_, body, _) = schema();
        Engine {
            _index: index,
            reader,
            body,
        }
    }

    pub fn segments(&self) -> usize {
        self.reader.searcher().segment_readers().len()
    }

    fn query(&self, els: &[Vec<String>]) -> Box<dyn Query> {
        let one = |el: &Vec<String>| -> Box<dyn Query> {
            let terms: Vec<Term> = el
                .iter()
                .map(|w| Term::from_field_text(self.body, w))
                .collect();
            if terms.len() == 1 {
                Box::new(TermQuery::new(
                    terms[0].clone(),
                    IndexRecordOption::WithFreqs,
                ))
            } else {
                Box::new(PhraseQuery::new(terms))
            }
        };
        if els.len() == 1 {
            one(&els[0])
        } else {
            Box::new(BooleanQuery::new(
                els.iter().map(|e| (Occur::Must, one(e))).collect(),
            ))
        }
    }

    /// The best `k` blended, exactly: Tantivy's pruning loop (block-max WAND where the query
    /// allows it) with the k-th best blended score as its threshold (blending never raises a
    /// score, so a text whose bm25 is below it cannot enter).
    pub fn ranked(&self, dump: &Dump, els: &[Vec<String>], k: usize, now: i64) -> Vec<usize> {
        let searcher = self.reader.searcher();
        let q = self.query(els);
        let weight = q
            .weight(EnableScoring::enabled_from_searcher(&searcher))
            .unwrap();
        let mut top = TopK::new(k);
        for seg in searcher.segment_readers() {
            let col = seg.fast_fields().u64("d").unwrap();
            let start = if top.best.len() < k {
                f32::MIN
            } else {
                top.floor() as f32
            };
            weight
                .for_each_pruning(start, seg, &mut |doc, score| {
                    let d = col.first(doc).unwrap_or(0) as usize;
                    top.add(score as f64 * blend(dump.ts[d], now), d);
                    if top.best.len() < k {
                        f32::MIN
                    } else {
                        // f32 rounding: a hair below, never above, the true floor.
                        (top.floor() as f32).next_down()
                    }
                })
                .unwrap();
        }
        top.docs()
    }

    /// Every text holding the elements (doc ids).
    pub fn candidates(&self, els: &[Vec<String>]) -> Vec<usize> {
        let searcher = self.reader.searcher();
        let q = self.query(els);
        let weight = q
            .weight(EnableScoring::disabled_from_searcher(&searcher))
            .unwrap();
        let mut out = Vec::new();
        for seg in searcher.segment_readers() {
            let col = seg.fast_fields().u64("d").unwrap();
            weight
                .for_each_no_score(seg, &mut |docs| {
                    for &doc in docs {
                        out.push(col.first(doc).unwrap_or(0) as usize);
                    }
                })
                .unwrap();
        }
        out
    }
}
