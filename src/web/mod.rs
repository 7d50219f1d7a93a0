//! `pidx serve`: a read-only web application over the index. The async runtime lives only here;
//! each page runs the same synchronous `query` functions as the command line on a blocking
//! thread with its own read-only connection, freshened first (`app::fresh`, as the MCP server).
//! What a page shows is built from transcripts, which are hostile input: every string is escaped
//! by the templates (maud), Markdown loses its raw HTML and unsafe links (`markdown`), secrets
//! are redacted unless `--no-redact`, and `guard` adds the CSP and checks the Host and the token.

mod assets;
mod bigjson;
mod events;
pub mod export;
mod files;
mod guard;
mod highlight;
mod index;
mod markdown;
mod message;
mod page;
mod raster;
mod search;
mod session;
mod sessions;
mod tree;
mod usage;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::app::fresh::Fresh;
use crate::app::Env;
use crate::query::Reader;

/// The longest one page may take before its query is stopped.
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// How `pidx serve` runs (the command line's flags, without clap).
#[derive(Debug, Clone)]
pub struct Options {
    pub listen: SocketAddr,
    /// The access token; required (generated when `None`) for a non-loopback address.
    pub token: Option<String>,
    /// Show secrets as they are in the transcripts (the default redacts them).
    pub no_redact: bool,
    /// Open the address in the desktop's browser once listening.
    pub open: bool,
}

/// Hands the address to the desktop's opener; a failure is a note, the server runs on.
fn open_browser(url: &str) {
    let (program, args): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else {
        ("xdg-open", &[])
    };
    let spawned = std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("pidx serve: --open: could not run {program} ({e}); open the address above");
    }
}

/// What every request shares.
pub(crate) struct App {
    env: Arc<Env>,
    /// The local index's freshness (none on the team server).
    fresh: Option<Fresh>,
    index: index::Index,
    redact: bool,
    guard: guard::Guard,
    events: events::Events,
    /// Every session's search text for the list's typed filter (`q=`), read once and kept up
    /// to date with the local index between keys.
    typed: std::sync::Mutex<crate::query::picker::Typed>,
}

/// Serves until the process is stopped.
///
/// # Errors
/// When the runtime cannot start or the address cannot be bound.
pub fn run(env: Env, opts: Options) -> Result<bool> {
    index::memory::few_arenas();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .context("starting the web server's runtime")?;
    let env = Arc::new(env);
    if opts.no_redact {
        eprintln!("pidx serve: --no-redact: pages show secrets as they are in the transcripts");
    }
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(opts.listen)
            .await
            .with_context(|| format!("listening on {}", opts.listen))?;
        let addr = listener.local_addr().context("reading the bound address")?;
        // The bound port (not the asked one, which may be 0) is what a Host header names.
        let guard = guard::Guard::new(&opts, addr)?;
        eprintln!("pidx serve: {}", guard.url(addr));
        if opts.open {
            open_browser(&guard.url(addr));
        }
        let index = match env.global.pg_team()? {
            Some((url, open)) => index::Index::Server {
                url,
                open,
                source: env.global.source.clone(),
                idle: std::sync::Mutex::new(Vec::new()),
            },
            None => index::Index::Local {
                idle: std::sync::Mutex::new(Vec::new()),
            },
        };
        let app = Arc::new(App {
            fresh: (!index.is_server()).then(|| Fresh::new(Arc::clone(&env))),
            index,
            env,
            redact: !opts.no_redact,
            guard,
            events: events::Events::new(),
            typed: std::sync::Mutex::new(crate::query::picker::Typed::new(!opts.no_redact)),
        });
        // The team server is pushed to by other machines: no file events here to follow.
        if !app.index.is_server() {
            tokio::spawn(events::watch(Arc::clone(&app)));
        }
        axum::serve(listener, router(app))
            .await
            .context("serving HTTP")
    })?;
    Ok(true)
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(sessions::page))
        .route("/s/{session}", get(session::page))
        .route("/s/{session}/tree", get(tree::page))
        .route("/s/{session}/text", get(session::text))
        .route("/s/{session}/image", get(session::image))
        .route("/s/{session}/export", get(export::download))
        .route("/search", get(search::page))
        .route("/files", get(files::page))
        .route("/usage", get(usage::page))
        .route("/events", get(events::stream))
        .route("/assets/{name}", get(assets::serve))
        .fallback(|| async { Fail::NotFound("there is no such page".into()).into_response() })
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            guard::check,
        ))
        .with_state(app)
}

/// What a page's query works with besides its reader: the stop flag the time limit sets, and
/// how strings are shown.
pub(crate) struct Ctx {
    pub stop: Arc<AtomicBool>,
    pub redact: bool,
    /// The pages read the team server (sessions carry their source; no local-only views).
    pub server: bool,
    /// A page written to a file (`pidx export`): images inside it, no link back to a server.
    pub export: bool,
}

impl Ctx {
    /// A transcript string as a page may show it: secrets redacted (unless `--no-redact`) and
    /// control characters shown as symbols, so no escape sequence reaches the page.
    pub fn clean<'a>(&self, s: &'a str) -> std::borrow::Cow<'a, str> {
        let s = if self.redact {
            crate::redact::redact(s)
        } else {
            std::borrow::Cow::Borrowed(s)
        };
        match s {
            std::borrow::Cow::Borrowed(b) => controls(b),
            std::borrow::Cow::Owned(o) => std::borrow::Cow::Owned(controls(&o).into_owned()),
        }
    }

    /// A transcript string as one line of a cell `width` columns wide, [`Ctx::clean`]ed
    /// before it is cut to the width, so a secret across the cut is redacted whole. A long
    /// text is first cut at a place no secret straddles (`message::piece_end`): a title can be
    /// the megabytes of a first message, and redacting all of it to show a line cost a list of
    /// the oldest sessions 400 ms.
    pub fn line(&self, s: &str, width: usize) -> String {
        let piece = &s[..message::piece_end(s, 0, width.saturating_mul(8))];
        crate::term::one_line_upto(&self.clean(piece), width)
    }
}

/// The renderers a transcript's text goes through, for the fuzz targets (tests/fuzz), which check
/// that no input makes live markup of them. Not part of pidx's interface.
#[doc(hidden)]
pub mod fuzzing {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Markdown as a page shows it.
    pub fn markdown(text: &str) -> String {
        super::markdown::to_html(text)
    }

    /// A context message (pi's JSON, as `query::context` returns it) as a page shows it.
    pub fn message(raw: &str, redact: bool) -> String {
        let ctx = super::Ctx {
            stop: Arc::new(AtomicBool::new(false)),
            redact,
            server: false,
            export: false,
        };
        let at = super::message::At {
            url: "/s/x",
            leaf: "l",
            entry: 0,
            message: 0,
        };
        let v = super::message::parse(raw);
        let results = super::message::Results::new();
        super::message::render(&ctx, v.as_ref(), raw, &at, &results)
            .1
            .into_string()
    }
}

/// C0 and C1 control characters (but newline and tab) as visible symbols.
pub(crate) fn controls(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}';
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| match c {
            '\u{0}'..='\u{1f}' if bad(c) => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\u{7f}' => '\u{2421}',
            c if bad(c) => '\u{fffd}',
            c => c,
        })
        .collect::<String>()
        .into()
}

/// Why a page could not be given.
#[derive(Debug)]
pub(crate) enum Fail {
    NotFound(String),
    Bad(String),
    Internal(String),
}

impl From<crate::Error> for Fail {
    fn from(e: crate::Error) -> Fail {
        match e {
            crate::Error::NotFound(_) | crate::Error::NoEntry { .. } => {
                Fail::NotFound(e.to_string())
            }
            crate::Error::Invalid(_) | crate::Error::Ambiguous { .. } => Fail::Bad(e.to_string()),
            crate::Error::Stopped => Fail::Internal(format!(
                "the page took longer than {} s and was stopped; narrow it",
                TIME_LIMIT.as_secs()
            )),
            other => Fail::Internal(other.to_string()),
        }
    }
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Fail {
        Fail::from(crate::Error::from(e))
    }
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        let (status, why) = match self {
            Fail::NotFound(w) => (StatusCode::NOT_FOUND, w),
            Fail::Bad(w) => (StatusCode::BAD_REQUEST, w),
            Fail::Internal(w) => (StatusCode::INTERNAL_SERVER_ERROR, w),
        };
        let why = crate::term::one_line(&why);
        let body = page::layout("error", page::Nav::None, maud::html! { p.error { (why) } });
        (status, body).into_response()
    }
}

/// Runs a page's query on a blocking thread with a reader of the index (`index`): the local
/// one freshened first, or the team server's, limited to `source` when the page names one.
pub(crate) async fn blocking<T: Send + 'static>(
    app: &Arc<App>,
    source: Option<String>,
    f: impl FnOnce(&Ctx, &mut Reader) -> Result<T, Fail> + Send + 'static,
) -> Result<T, Fail> {
    let app = Arc::clone(app);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // The server drops a request the browser gave up on (a later keystroke aborts the search
    // before it, a page left): its query stops too, instead of holding a core the next one
    // needs.
    let _stop_if_dropped = StopOnDrop(Arc::clone(&stop));
    let mut job = tokio::task::spawn_blocking(move || {
        let answer = index::with_reader(&app, source, flag, f);
        index::memory::after_page();
        answer
    });
    // Past the time limit the query is told to stop, and its answer (the stop) awaited.
    let joined = match tokio::time::timeout(TIME_LIMIT, &mut job).await {
        Ok(joined) => joined,
        Err(_) => {
            stop.store(true, Ordering::Relaxed);
            job.await
        }
    };
    joined.unwrap_or_else(|e| Err(Fail::Internal(format!("the page failed inside pidx ({e})"))))
}

/// Sets its flag when dropped: at the end of a page's work, or when the request is dropped
/// before it (the page's query sees the flag through SQLite's progress handler and stops).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A session's address segment as the pages write it (`page::session_seg`): the file name
/// locally; `SOURCE/FILE` on the team server, where two machines may hold the same file name.
pub(crate) fn split_seg(app: &App, seg: &str) -> (Option<String>, String) {
    match seg.rsplit_once('/').filter(|_| app.index.is_server()) {
        Some((source, file)) => (Some(source.to_string()), file.to_string()),
        None => (None, seg.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::{controls, StopOnDrop};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_request_dropped_before_its_answer_stops_its_query() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        rt.block_on(async move {
            // What hyper does to the handler of a connection the browser closed: drop it.
            let handler = tokio::spawn(async move {
                let _guard = StopOnDrop(flag);
                std::future::pending::<()>().await;
            });
            tokio::task::yield_now().await;
            assert!(!stop.load(Ordering::Relaxed), "running: not stopped");
            handler.abort();
            assert!(handler.await.unwrap_err().is_cancelled());
            assert!(
                stop.load(Ordering::Relaxed),
                "dropped: its query is told to stop"
            );
        });
    }

    #[test]
    fn control_characters_become_symbols_and_text_stays() {
        assert_eq!(
            controls("a\x1b[31mb\x07\tc\nd\u{9b}e\x7f"),
            "a\u{241b}[31mb\u{2407}\tc\nd\u{fffd}e\u{2421}"
        );
        assert!(matches!(controls("plain ✓"), std::borrow::Cow::Borrowed(_)));
    }
}
