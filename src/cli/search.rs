//! `pidx search`: options to a `SearchOptions`, hits to text, JSON or JSON lines.

use std::collections::HashMap;

use anyhow::{bail, Result};
use clap::Args;

use super::args::{GatewayArgs, ProjectArgs, RangeArgs};
use super::Found;
use crate::app::env::Env;
use crate::pi::text::TextKind;
use crate::present::output::{one_line, Out};
use crate::query::search::{self, Hit, SearchOptions};
use crate::query::{handle, resolve, Reader};

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// What to find (see below). Quote it in the shell.
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    /// Only sessions that used a model whose id contains M.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Only this session (a path, an id or a unique id prefix).
    #[arg(long, value_name = "SESSION")]
    pub session: Option<String>,
    /// Only entries on each session's current branch (what pi would send as context).
    #[arg(long)]
    pub branch: bool,
    /// Only these kinds of text, comma-separated.
    #[arg(long = "in", value_name = "KINDS", value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// The exact text, character for character (case-sensitive substring).
    #[arg(long)]
    pub literal: bool,
    /// Show at most N hits.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// One JSON object per hit and line.
    #[arg(long, conflicts_with = "json")]
    pub jsonl: bool,
    /// Print how the search ran instead of its hits: the plan chosen (which index gives the
    /// candidates, or a scan), the entry rows the filters leave, for a frequent word the impact
    /// blocks read, candidates read back, hits; then, when the index holds embeddings, the
    /// meaning half: texts scored, how many reached the similarity floor, and the fused hits
    /// by how they were found.
    #[arg(long)]
    pub explain: bool,
    /// Rank by meaning only (embedding similarity; needs `pidx sync --embed`): finds what a
    /// session was about in other words. With `--pg`, over the vectors the sources pushed
    /// (those of your model), each scored as its own index scores it.
    #[arg(long, conflicts_with_all = ["literal", "lexical"])]
    pub meaning: bool,
    /// Rank by words only, even when the index holds embeddings (the default then fuses words
    /// and meaning).
    #[arg(long)]
    pub lexical: bool,
    /// The static embedding model's folder (else $PIDX_MODEL, the config's `model`, or the
    /// default).
    #[arg(long, value_name = "DIR")]
    pub embed_model: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    /// Gateways: also search silent NO_REPLY turns (housekeeping users never saw).
    #[arg(long)]
    pub include_silent: bool,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub range: RangeArgs,
}

fn kinds(args: &SearchArgs) -> Result<Vec<TextKind>> {
    args
        .kinds
        .iter()
        .map(|k| {
            TextKind::parse(&k.trim().to_ascii_lowercase()).ok_or_else(|| {
                anyhow::anyhow!(
                    "--in {k:?}: not a kind of text (user, assistant, thinking, tool, bash, custom, summary, name)"
                )
            })
        })
        .collect::<Result<Vec<_>>>()
}

pub fn run(env: &Env, args: &SearchArgs, out: &mut Out) -> Result<Found> {
    if env.reads_server() {
        super::args::refuse_gateway_remote(&args.gateway, false)?;
    }
    let query = search::parse(&args.query, args.literal)?;
    let kinds = kinds(args)?;
    if args.limit == 0 {
        bail!("--limit must be at least 1");
    }
    let now = chrono::Utc::now().timestamp_millis();
    let (since_ms, until_ms) = args.range.bounds(now)?;
    if args.explain && env.reads_server() {
        bail!("--explain prints the local index's search plan; the team server plans its own query (leave out --pg)");
    }
    let mut opened = env.open_reader(None)?;
    if let Some(store) = opened.local() {
        crate::store::map_for_search(&store.conn)?;
    }
    let mut reader = opened.reader()?;
    if let Reader::Local { scope, .. } = &mut reader {
        args.gateway.apply(scope);
    }
    let file_id = match &args.session {
        Some(s) => Some(resolve::resolve(&mut reader, s)?.file_id),
        None => None,
    };
    let opts = SearchOptions {
        query,
        cwd: args.project.cwd(),
        file_id,
        since_ms,
        until_ms,
        model: args.model.clone(),
        kinds,
        branch: args.branch,
        limit: args.limit,
        redact: env.global.redact,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let how = crate::app::meaning::Ranking {
        text: &args.query,
        meaning: args.meaning,
        words_only: args.lexical,
        model: args.embed_model.as_deref(),
        quiet: false,
        typing: false,
    };
    // By meaning (or fused with it) where the index holds embeddings: the local index's, or
    // on the team server the vectors its sources pushed.
    let by_meaning =
        crate::app::meaning::ranked_by(&mut reader, &opts, args.include_silent, &how, &stop)?;
    // `--explain` describes both halves: the words search's plan, then what meaning added.
    let (mut hits, explain, meaning) = match by_meaning {
        Some((hits, meaning)) if args.explain => {
            let (_, explain) = search::run(&mut reader, &opts, args.include_silent, &stop)?;
            (hits, explain, Some(meaning))
        }
        Some((hits, meaning)) => (hits, None, Some(meaning)),
        None => {
            let (hits, explain) = search::run(&mut reader, &opts, args.include_silent, &stop)?;
            (hits, explain, None)
        }
    };
    if env.global.redact {
        // Titles are cut to a width when printed: redacted whole first.
        for h in &mut hits {
            h.title = crate::redact::redact(&h.title).into_owned();
            h.session_name = h
                .session_name
                .as_deref()
                .map(|n| crate::redact::redact(n).into_owned());
        }
    }
    if let Some(explain) = &explain {
        if args.explain {
            print_explain(env, explain, meaning.as_ref(), &hits, args.limit, out)?;
            reader.finish()?;
            return Ok(true);
        }
        if explain.scanned_everything() {
            crate::term::say(SCANNED);
        }
    }
    let marks = meaning.is_some();
    print_hits(env, args, &hits, marks, out, |hits| {
        Ok(handle::handles_in(
            &mut reader,
            hits.iter().map(|h| handle::Session {
                file_id: h.file_id,
                id: h.session_id.as_deref(),
                path: &h.path,
            }),
        )?)
    })?;
    reader.finish()?;
    Ok(!hits.is_empty())
}

/// What a search that read every text says on stderr.
const SCANNED: &str = "pidx: no word of the index narrows this query, so every text was read (slow on a large index); a literal word in it, or --session, --cwd or --since, narrows it";

/// `search --explain`: the plan and its counts.
fn print_explain(
    env: &Env,
    e: &search::Explain,
    meaning: Option<&crate::app::meaning::Meaning>,
    fused: &[Hit],
    limit: usize,
    out: &mut Out,
) -> Result<()> {
    let count = |by: search::By| fused.iter().filter(|h| h.by == by).count();
    let (words, by_meaning, both) = (
        count(search::By::Words),
        count(search::By::Meaning),
        count(search::By::Both),
    );
    if env.global.json {
        let mut v = serde_json::to_value(e)?;
        v["description"] = e.plan.to_string().into();
        v["limit"] = limit.into();
        if let Some(m) = meaning {
            v["meaning"] = serde_json::to_value(m)?;
            v["fused"] = serde_json::json!({
                "hits": fused.len(), "words": words, "meaning": by_meaning, "both": both,
            });
        }
        out.line(&v.to_string())?;
        return Ok(());
    }
    let span = e
        .span_rows
        .map_or("every entry row (no filter narrows it)".to_string(), |n| {
            format!("{} entry rows the filters leave", crate::term::thousands(n))
        });
    // Alternatives past the first few are counted, not listed (`--json` has them all).
    out.line(&format!("plan:      {}", one_line(&e.plan.brief())))?;
    if let Some(looser) = &e.looser {
        out.line(&format!(
            "first:     fts MATCH {} (the plan without its costly prefixes; the plan's own candidates after {} of these)",
            one_line(&search::brief_fts(looser)),
            search::LOOSE_READS
        ))?;
    }
    out.line(&format!("span:      {span}"))?;
    if let Some(b) = &e.blocks {
        let then = if b.left_out {
            ", then every match scored (the top needed texts they leave out)"
        } else {
            ""
        };
        out.line(&format!(
            "ranking:   {} of the word's {} impact blocks read{then}",
            crate::term::thousands(b.read as i64),
            crate::term::thousands(b.of as i64)
        ))?;
    }
    if let Some(r) = &e.raw {
        out.line(&format!(
            "raw:       {} runs' lines searched ({} bytes), {} of them skipped",
            crate::term::thousands(r.runs as i64),
            crate::term::thousands(r.bytes as i64),
            crate::term::thousands(r.skipped as i64)
        ))?;
    }
    out.line(&format!(
        "read back: {} candidate texts",
        crate::term::thousands(e.read as i64)
    ))?;
    out.line(&format!("hits:      {} (limit {limit})", e.hits))?;
    match meaning {
        Some(m) => {
            let s = &m.stats;
            if s.no_known_word {
                out.line(&format!(
                    "meaning:   model {}; not asked: no word of the query is one the model knows whole (spelling pieces alone mean nothing)",
                    one_line(&m.model)
                ))?;
            } else {
                let best = s
                    .best
                    .map_or("none".to_string(), |b| format!("best {b:.2}"));
                out.line(&format!(
                    "meaning:   model {}; {} texts scored, {} at or above the floor {:.2} ({best}); {} meaning hits",
                    one_line(&m.model),
                    crate::term::thousands(s.scored as i64),
                    crate::term::thousands(s.above_floor as i64),
                    s.floor,
                    s.hits
                ))?;
            }
            out.line(&format!(
                "fused:     {} hits: {words} by words, {by_meaning} by meaning, {both} by both",
                fused.len()
            ))?;
        }
        None => out
            .line("meaning:   not used (--lexical, a literal or re: query, or nothing embedded)")?,
    }
    Ok(())
}

/// Hits as JSON, JSON lines or text (the handles computed only for text).
fn print_hits(
    env: &Env,
    args: &SearchArgs,
    hits: &[Hit],
    marks: bool,
    out: &mut Out,
    handles: impl FnOnce(&[Hit]) -> Result<HashMap<i64, String>>,
) -> Result<()> {
    if env.global.json {
        out.json(&env.answer(&hits))?;
    } else if args.jsonl {
        for h in hits {
            out.json(h)?;
        }
    } else if hits.is_empty() {
        crate::term::say("pidx: no matches");
    } else {
        let handles = handles(hits)?;
        render_hits(
            out,
            hits,
            &handles,
            marks,
            chrono::Utc::now().timestamp_millis(),
        )?;
    }
    Ok(())
}

fn render_hits(
    out: &mut Out,
    hits: &[Hit],
    handles: &HashMap<i64, String>,
    marks: bool,
    now_ms: i64,
) -> std::io::Result<()> {
    let mut last_file = None;
    for h in hits {
        if last_file != Some(h.file_id) {
            if last_file.is_some() {
                out.line("")?;
            }
            last_file = Some(h.file_id);
            let title = crate::present::output::truncate(&one_line(&h.title), 80);
            let handle = handles.get(&h.file_id).map_or("-", String::as_str);
            let mut header = format!("{title}  {}  {}", one_line(handle), one_line(&h.cwd));
            if let Some(source) = &h.source {
                header = format!("{}  {header}", one_line(source));
            }
            out.line(&out.paint("1", &header))?;
            out.line(&out.paint("2", &one_line(&h.path)))?;
        }
        let when = h
            .timestamp
            .as_deref()
            .and_then(crate::pi::js::parse_iso_ms)
            .map_or("?".to_string(), |t| crate::present::output::age(t, now_ms));
        let id = h.entry_id.as_deref().unwrap_or("-");
        // How it was found, when meaning took part: a meaning hit holds none of the words.
        let by = if marks {
            by_mark(out, h)
        } else {
            String::new()
        };
        out.line(&format!(
            "  [{}] {} {}  {by}{}",
            h.kind,
            when,
            one_line(id),
            marked(out, &h.snippet)
        ))?;
        if !h.also_in.is_empty() {
            let n = h.also_in.len();
            let line = format!(
                "      also in {n} other session{} (copied by a fork): {}",
                crate::term::plural(n),
                one_line(&h.also_in.join(", "))
            );
            out.line(&out.paint("2", &line))?;
        }
    }
    Ok(())
}

/// `(words)`, `(meaning 0.42)` or `(words+meaning 0.42)`, dimmed, and a space.
fn by_mark(out: &Out, h: &Hit) -> String {
    let sim = h.similarity.map_or(String::new(), |s| format!(" {s:.2}"));
    let mark = match h.by {
        search::By::Words => "(words)".to_string(),
        search::By::Meaning => format!("(meaning{sim})"),
        search::By::Both => format!("(words+meaning{sim})"),
    };
    format!("{} ", out.paint("2", &mark))
}

/// The snippet on one line, matches highlighted when colour is on.
fn marked(out: &Out, s: &search::Snippet) -> String {
    let mut text = String::new();
    let mut at = 0;
    for &(a, b) in &s.marks {
        if a < at || b > s.text.len() || !s.text.is_char_boundary(a) || !s.text.is_char_boundary(b)
        {
            continue;
        }
        text.push_str(&one_line_keep_edges(&s.text[at..a]));
        text.push_str(&out.paint("1;33", &one_line(&s.text[a..b])));
        at = b;
    }
    text.push_str(&one_line_keep_edges(&s.text[at..]));
    text.trim().to_string()
}

/// `one_line`, keeping one space where the text had white space at either end.
fn one_line_keep_edges(s: &str) -> String {
    let mut t = one_line(s);
    if s.starts_with(char::is_whitespace) && !t.is_empty() {
        t.insert(0, ' ');
    }
    if s.ends_with(char::is_whitespace) {
        t.push(' ');
    }
    t
}
