//! What a page reads: the local index (read-only, freshened first, stopped by SQLite's progress
//! handler at the time limit) or the team server (`pidx --pg URL serve`: a small pool of
//! read-only connections opened by the team crate (`query::TeamServer`), each answer one `READ ONLY` transaction whose statement
//! is cancelled at the time limit by a `query::Watch`). Pages ask their questions through `query::Reader` either way;
//! this is the only file of the web front door that opens either.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::{App, Ctx, Fail, TIME_LIMIT};
use crate::app::reader::Opened;
use crate::query::{Reader, TeamOpener, TeamServer};
use crate::store::{Scope, Store};

/// Connections to the team server kept between requests (more are opened while busy and
/// closed after).
const KEPT: usize = 4;

/// Index connections kept between requests: a page then starts with the schema parsed and the
/// pages the last one read in its cache, instead of reading them back from the OS one `pread`
/// each (the usage page reads its rollups, 10 MB at 10,000 sessions, on every request).
const KEPT_LOCAL: usize = 2;

/// The page cache of a kept connection, in KiB (SQLite's negative `cache_size`): the usage
/// page's rollups at 10,000 sessions and the lists' rows fit; a few more pages than SQLite's
/// 2 MB default, against the 200 MB a page's server may take (`benches/serve.sh`).
const KEPT_CACHE_KIB: i64 = 16 * 1024;

/// Where the pages read.
pub enum Index {
    /// The local index, and connections to it kept between requests.
    Local { idle: Mutex<Vec<Store>> },
    /// The team server's URL and idle connections; `source` (`--source`) limits every page to
    /// one machine.
    Server {
        url: String,
        open: TeamOpener,
        source: Option<String>,
        idle: Mutex<Vec<Box<dyn TeamServer>>>,
    },
}

impl Index {
    pub fn is_server(&self) -> bool {
        matches!(self, Index::Server { .. })
    }

    pub fn is_local(&self) -> bool {
        matches!(self, Index::Local { .. })
    }
}

/// A kept connection to the local index, unless the index file was replaced since it was
/// opened (`sync --rebuild` writes a new file): that one is dropped and a new one opened.
fn kept(idle: &Mutex<Vec<Store>>) -> Option<Store> {
    let mut v = idle.lock().ok()?;
    while let Some(store) = v.pop() {
        if !store.is_replaced() {
            return Some(store);
        }
    }
    None
}

/// Keeps `store` for a later request, unless enough are kept or it was left inside a
/// transaction (a page that failed midway): that one would pin an old snapshot of the index.
fn keep(idle: &Mutex<Vec<Store>>, store: Store) {
    if store.conn.is_autocommit() {
        if let Ok(mut v) = idle.lock() {
            if v.len() < KEPT_LOCAL {
                v.push(store);
            }
        }
    }
}

/// A connection to the local index for one answer (a kept one, else a new one) whose
/// statements stop once `stop` is set, and its scope.
fn check_out(
    app: &App,
    idle: &Mutex<Vec<Store>>,
    stop: Arc<AtomicBool>,
) -> Result<(Store, Scope), Fail> {
    let store = kept(idle).map_or_else(|| open_local(app), Ok)?;
    store
        .conn
        .progress_handler(10_000, Some(move || stop.load(Ordering::Relaxed)))?;
    let scope = Scope::new(&store.conn, &app.env.roots)?;
    Ok((store, scope))
}

/// Gives back a connection [`check_out`] gave, its stop cleared, for a later answer.
fn check_in(idle: &Mutex<Vec<Store>>, store: Store) -> rusqlite::Result<()> {
    store.conn.progress_handler(0, None::<fn() -> bool>)?;
    keep(idle, store);
    Ok(())
}

fn open_local(app: &App) -> Result<Store, Fail> {
    let store = Store::open_read_only(&app.env.db)?;
    store
        .conn
        .execute_batch(&format!("PRAGMA cache_size = -{KEPT_CACHE_KIB}"))?;
    Ok(store)
}

/// Reads every session's search text for the list's typed filter on a thread of its own, unless
/// it has been read (or is being read): a list page starts it, so that the first key typed
/// into its filter does not wait for 10,000 sessions' texts (3.5 s).
pub fn warm_typed(app: &Arc<App>) {
    if !app.index.is_local() {
        return;
    }
    match app.typed.try_lock() {
        Ok(typed) if !typed.is_read() => {}
        _ => return,
    }
    let app = Arc::clone(app);
    std::thread::spawn(move || {
        let Index::Local { idle } = &app.index else {
            return;
        };
        let Ok(store) = kept(idle).map_or_else(|| open_local(&app), Ok) else {
            return;
        };
        if let Ok(scope) = Scope::new(&store.conn, &app.env.roots) {
            let mut typed = app.typed.lock().unwrap_or_else(|p| p.into_inner());
            // A failure here is met again, and said, by the first page that filters.
            let _ = typed.refresh(&store.conn, &scope);
        }
        keep(idle, store);
    });
}

/// Runs `here` on this thread and `beside` on another, with a second connection to the local
/// index, both stopped by `stop`: for a page that makes two reads which share nothing (the
/// usage page by tool: the tool rollup for its rows, the usage rollup for its total), one core
/// each. `beside`'s answer is `None` on the team server or when no second connection opens;
/// the page then makes that read on its own connection. The two reads are two snapshots: a
/// sync committing between them shows in one and not the other (pages read while pi writes).
pub fn side_by_side<A, B: Send>(
    app: &App,
    stop: &Arc<AtomicBool>,
    here: impl FnOnce() -> A,
    beside: impl FnOnce(&Store, &Scope) -> B + Send,
) -> (A, Option<B>) {
    let Index::Local { idle } = &app.index else {
        return (here(), None);
    };
    let Ok((store, scope)) = check_out(app, idle, Arc::clone(stop)) else {
        return (here(), None);
    };
    // The connection goes to the other thread and comes back with its answer (a panic there
    // drops it).
    let (a, other) = std::thread::scope(|s| {
        let other = s.spawn(move || (beside(&store, &scope), store));
        let a = here();
        (a, other.join().ok())
    });
    let Some((b, store)) = other else {
        return (a, None);
    };
    // Not kept when its stop cannot be cleared.
    let _ = check_in(idle, store);
    (a, Some(b))
}

/// A connection to the team server whose statements the server stops at twice the time limit
/// (the page's own limit is its `query::Watch`'s).
fn connect(open: TeamOpener, url: &str) -> Result<Box<dyn TeamServer>, Fail> {
    let mut server = open(url).map_err(|e| Fail::Internal(format!("{e:#}")))?;
    // The server's own limit is for a cancel that never arrived.
    server
        .time_limit(TIME_LIMIT * 2)
        .map_err(|e| Fail::Internal(format!("the team server: {e}")))?;
    Ok(server)
}

/// Runs `f` with a reader of what the pages read; `source` is the machine a page asked for
/// (on the team server; ignored locally, and `--source` wins over it).
pub fn with_reader<T>(
    app: &App,
    source: Option<String>,
    stop: Arc<AtomicBool>,
    f: impl FnOnce(&Ctx, &mut Reader) -> Result<T, Fail>,
) -> Result<T, Fail> {
    let ctx = Ctx {
        stop: Arc::clone(&stop),
        redact: app.redact,
        server: app.index.is_server(),
        export: false,
    };
    match &app.index {
        Index::Local { idle } => {
            if let Some(fresh) = &app.fresh {
                fresh.freshen();
            }
            let (store, scope) = check_out(app, idle, stop)?;
            let mut opened = Opened::Local {
                store,
                scope,
                unread: Vec::new(),
            };
            let answer = opened
                .reader()
                .map_err(Fail::from)
                .and_then(|mut r| f(&ctx, &mut r));
            if let Opened::Local { store, .. } = opened {
                if answer.is_ok() {
                    check_in(idle, store)?;
                }
            }
            answer
        }
        Index::Server {
            url,
            open,
            source: fixed,
            idle,
        } => {
            let pooled = idle.lock().ok().and_then(|mut v| v.pop());
            let mut client = match pooled {
                Some(c) if !c.is_closed() => c,
                _ => connect(*open, url)?,
            };
            let source = fixed.clone().or(source.filter(|s| !s.is_empty()));
            let watch = client.watch(&stop);
            let answer = (|| {
                let mut reader = client.reader(source)?;
                let out = f(&ctx, &mut reader)?;
                reader.finish()?;
                Ok(out)
            })();
            let cancelled = watch.end();
            // A connection whose answer failed, or that was told to cancel (the cancel may
            // still be on its way), is closed rather than trusted with the next.
            if answer.is_ok() && !cancelled {
                if let Ok(mut v) = idle.lock() {
                    if v.len() < KEPT {
                        v.push(client);
                    }
                }
            }
            answer
        }
    }
}

/// The resident memory above which a finished page hands freed memory back to the system.
const TRIM_ABOVE: u64 = 96 << 20;

/// glibc keeps what a page freed in the arena of the thread that ran it, one arena per blocking
/// thread: a big tree on one thread and a huge line on another would each stay resident. At
/// most two arenas, and after a page that left the process large, the free memory trimmed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub mod memory {
    use std::os::raw::c_int;

    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
        fn malloc_trim(pad: usize) -> c_int;
    }
    const M_ARENA_MAX: c_int = -8;

    /// Before any thread starts.
    pub fn few_arenas() {
        // SAFETY: glibc's documented tuning call, made before other threads allocate.
        unsafe {
            mallopt(M_ARENA_MAX, 2);
        }
    }

    /// After a page: trims the heaps when the process is large (reading statm costs
    /// microseconds; trimming only then keeps small pages quick).
    pub fn after_page() {
        let resident = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages * 4096);
        if resident > super::TRIM_ABOVE {
            // SAFETY: returns free heap pages to the system; no pointer is touched.
            unsafe {
                malloc_trim(0);
            }
        }
    }
}

/// Elsewhere the allocator is left as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub mod memory {
    pub fn few_arenas() {}
    pub fn after_page() {}
}
