//! Live updates: one task per server freshens the index every [`TICK`] (the same event-driven
//! `Fresh` step the pages take, so it costs nothing when no file changed) and watches SQLite's
//! `data_version` on a connection of its own; when another connection committed, every open
//! page is sent a `change` event (server-sent events) and fetches what is new.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio::sync::watch;

use super::App;
use crate::store::Store;

/// How often the index is checked for new entries.
const TICK: Duration = Duration::from_secs(1);

pub struct Events {
    tx: watch::Sender<u64>,
}

impl Events {
    pub fn new() -> Events {
        Events {
            tx: watch::channel(0).0,
        }
    }
}

/// Follows the index for the server's life.
pub async fn watch(app: Arc<App>) {
    let mut store: Option<Store> = None;
    let mut last: Option<i64> = None;
    loop {
        tokio::time::sleep(TICK).await;
        let worker = Arc::clone(&app);
        let mut held = store.take();
        let joined = tokio::task::spawn_blocking(move || {
            if let Some(fresh) = &worker.fresh {
                fresh.freshen();
            }
            if held.is_none() {
                held = Store::open_read_only(&worker.env.db).ok();
            }
            let version = held.as_ref().and_then(|s| {
                s.conn
                    .query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0))
                    .ok()
            });
            (held, version)
        })
        .await;
        let Ok((held, version)) = joined else {
            continue;
        };
        store = held;
        if version.is_some() && last.is_some() && version != last {
            app.events.tx.send_modify(|n| *n += 1);
        }
        last = version.or(last);
    }
}

pub async fn stream(
    State(app): State<Arc<App>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = app.events.tx.subscribe();
    let changes = stream::unfold(rx, |mut rx| async move {
        rx.changed().await.ok()?;
        let n = *rx.borrow_and_update();
        Some((Ok(Event::default().event("change").data(n.to_string())), rx))
    });
    Sse::new(changes).keep_alive(KeepAlive::default())
}
