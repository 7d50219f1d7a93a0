//! The terminal while the picker runs: raw mode and the alternate screen on stderr (stdout stays
//! free for `--print`), restored when the picker ends, fails or panics; and the event loop,
//! which draws, waits for keys, the text loader and the background sync, and drains every
//! pending key before drawing again.

use std::io::{self, BufWriter, Stderr};
use std::sync::mpsc::Receiver;
use std::sync::Once;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyEventKind};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use super::app::{App, Effect};
use super::data::{Source, Synced};
use super::keys::Action;
use super::ui;

/// The picker's screen; dropping it gives the terminal back as it was.
pub struct Screen {
    terminal: Terminal<CrosstermBackend<BufWriter<Stderr>>>,
}

impl Screen {
    /// Enters raw mode and the alternate screen.
    ///
    /// # Errors
    /// The terminal refuses raw mode or cannot be written.
    pub fn enter() -> io::Result<Screen> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        enable_raw_mode()?;
        let mut err = io::stderr();
        if let Err(e) = execute!(err, EnterAlternateScreen) {
            restore();
            return Err(e);
        }
        // Buffered: a frame goes out in one write (stderr itself is unbuffered).
        let out = BufWriter::with_capacity(1 << 16, io::stderr());
        let terminal = Terminal::new(CrosstermBackend::new(out)).inspect_err(|_| {
            restore();
        })?;
        Ok(Screen { terminal })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves the alternate screen and raw mode (harmless when already left).
fn restore() {
    let _ = execute!(io::stderr(), LeaveAlternateScreen, cursor::Show);
    let _ = disable_raw_mode();
}

/// How long after the last key the preview of the row it selected is asked for.
const PREVIEW_AFTER: Duration = Duration::from_millis(40);

/// Runs the picker until a key leaves it.
///
/// # Errors
/// The terminal cannot be read or written.
pub fn run(
    screen: &mut Screen,
    app: &mut App,
    source: &mut Source,
    start_sync: impl FnOnce() -> Option<Receiver<Synced>>,
) -> io::Result<Effect> {
    let mut sync = None;
    let pal = ui::Palette::new();
    let mut start_sync = Some(start_sync);
    let mut last_key = Instant::now()
        .checked_sub(PREVIEW_AFTER)
        .unwrap_or_else(Instant::now);
    loop {
        app.update_handles(source);
        screen.terminal.draw(|f| ui::draw(f, app, &pal))?;
        if let Some(start) = start_sync.take() {
            // The rest starts once the first screen is out.
            app.start_loading(source);
            sync = start();
        }
        // The list is drawn first; the preview is read on the previewer's thread and drawn
        // when it comes (keys are answered meanwhile). While keys come in quick succession
        // (typing, holding an arrow) it waits: the next key's list needs the cores more.
        let stale = app.preview_stale();
        let preview_due = stale && last_key.elapsed() < PREVIEW_AFTER;
        if stale && !preview_due {
            app.update_preview(source);
        }
        let wait = if app.preview_pending() || preview_due {
            5
        } else {
            100
        };
        while !event::poll(Duration::from_millis(wait))? {
            if app.take_preview() || background(app, source, &mut sync) {
                break;
            }
            if preview_due && last_key.elapsed() >= PREVIEW_AFTER {
                break;
            }
        }
        while event::poll(Duration::ZERO)? {
            match event::read()? {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    last_key = Instant::now();
                    match app.act(Action::of(k), source) {
                        Effect::Stay => {}
                        other => return Ok(other),
                    }
                }
                Event::Resize(..) => screen.terminal.autoresize()?,
                _ => {}
            }
        }
    }
}

/// Takes what the background threads finished; true when the screen must be drawn again.
fn background(app: &mut App, source: &mut Source, sync: &mut Option<Receiver<Synced>>) -> bool {
    if app.poll_loaded(source) {
        return true;
    }
    let Some(done) = sync.as_ref().and_then(|rx| rx.try_recv().ok()) else {
        return false;
    };
    if let Synced::ProjectFirst { rest } = done {
        // More comes on the same channel.
        app.reload(source);
        app.status = Some(format!(
            "a first sync: this project is read; reading the other {rest} sessions…"
        ));
        return true;
    }
    *sync = None;
    let first_note = app
        .status
        .as_deref()
        .is_some_and(|s| s.starts_with("a first sync"));
    match done {
        Synced::ProjectFirst { .. } => false,
        Synced::Ran { changed, note } => {
            if changed {
                app.reload(source);
            }
            if note.is_some() || first_note {
                app.status = note;
            }
            changed || app.status.is_some() || first_note
        }
        Synced::Skipped => false,
        Synced::Failed(e) => {
            app.status = Some(format!("the index could not be brought up to date: {e}"));
            true
        }
    }
}
