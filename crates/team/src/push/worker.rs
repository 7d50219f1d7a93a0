//! `pidx watch --push URL`: a thread that pushes after the watcher commits, so the local index
//! never waits for the network. Pokes that arrive while a push runs are coalesced into the next
//! one (batched, at most one push per `BATCH`); when the server cannot be reached the thread
//! backs off (1 s doubling to 60 s) and, once it answers again, the next push catches up on
//! everything (push compares state, so nothing queued is lost).

use std::path::PathBuf;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::time::Duration;

use super::{push, PushOptions, PushReport};
use pidx_core::pi::layout::Root;
use pidx_core::store::Scope;
use pidx_core::store::Store;

const BATCH: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What the pusher tells the watcher's output.
pub enum PushNotice<'a> {
    Pushed(&'a PushReport, Duration),
    Failed(&'a str, Duration),
    Recovered,
}

/// The handle the watcher pokes after each commit.
pub struct Pusher {
    poke: Sender<()>,
}

impl Pusher {
    /// Starts the thread; it pushes once at start, then after pokes.
    pub fn spawn(
        db: PathBuf,
        roots: Vec<Root>,
        url: String,
        opts: PushOptions,
        notice: impl Fn(PushNotice) + Send + 'static,
    ) -> Pusher {
        let (poke, pokes) = channel::<()>();
        std::thread::spawn(move || {
            let mut client: Option<postgres::Client> = None;
            let mut backoff: Option<Duration> = None;
            let mut pending = true;
            loop {
                let wait = backoff.unwrap_or(Duration::from_secs(3600));
                match pokes.recv_timeout(if pending { BATCH } else { wait }) {
                    Ok(()) => {
                        pending = true;
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                    Err(RecvTimeoutError::Timeout) if !pending && backoff.is_none() => continue,
                    Err(RecvTimeoutError::Timeout) => {}
                }
                let started = std::time::Instant::now();
                match once(&mut client, &db, &roots, &url, &opts) {
                    Ok(report) => {
                        if backoff.take().is_some() {
                            notice(PushNotice::Recovered);
                        }
                        if report.changed() > 0 {
                            notice(PushNotice::Pushed(&report, started.elapsed()));
                        }
                        pending = false;
                    }
                    Err(e) => {
                        client = None;
                        let next =
                            backoff.map_or(Duration::from_secs(1), |b| (b * 2).min(MAX_BACKOFF));
                        notice(PushNotice::Failed(&e.to_string(), next));
                        backoff = Some(next);
                        pending = false;
                    }
                }
            }
        });
        Pusher { poke }
    }

    /// Asks for a push soon (coalesced with other pokes).
    pub fn poke(&self) {
        let _ = self.poke.send(());
    }
}

fn once(
    client: &mut Option<postgres::Client>,
    db: &std::path::Path,
    roots: &[Root],
    url: &str,
    opts: &PushOptions,
) -> pidx_core::Result<PushReport> {
    if client.is_none() {
        *client = Some(crate::pg::connect(url)?);
    }
    let store = Store::open_read_only(db)?;
    let scope = Scope::new(&store.conn, roots)?;
    let c = client.as_mut().expect("connected above");
    push(&store.conn, &scope, c, opts, || {})
}
