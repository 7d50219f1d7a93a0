//! Drives the real `pidx` binary through a pseudo-terminal (portable-pty) and keeps what it
//! drew in a terminal emulator (vt100), so tests read the screen a user would see. Waits poll
//! the screen until a condition holds (generous timeout), never for fixed amounts of time.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

/// How long a wait may take before the test fails (loaded CI machines are slow).
const PATIENCE: Duration = Duration::from_secs(30);

/// What the terminal was asked to do besides drawing.
#[derive(Default)]
pub struct Seen {
    pub title: Vec<u8>,
    pub bells: usize,
}

impl vt100::Callbacks for Seen {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = title.to_vec();
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.bells += 1;
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("a terminal size above zero")
}

/// A program running in a pseudo-terminal.
pub struct Term {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser<Seen>>>,
    /// Every byte the program wrote to the terminal.
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Term {
    /// Starts `program args` in `cwd` on a `rows` x `cols` terminal with exactly `env`.
    pub fn spawn(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, String)],
        (rows, cols): (u16, u16),
    ) -> Term {
        let size = PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size).expect("a pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawning the program");
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            nz(rows),
            nz(cols),
            0,
            Seen::default(),
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().expect("a pty reader");
        let (p, r) = (Arc::clone(&parser), Arc::clone(&raw));
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer().expect("a pty writer");
        Term {
            master: pair.master,
            writer,
            child,
            parser,
            raw,
        }
    }

    /// The screen's text, one line per row.
    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Every byte written to the terminal so far.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// The window title set (escape sequences can set it) and the bells rung.
    pub fn seen(&self) -> (String, usize) {
        let p = self.parser.lock().unwrap();
        let seen = p.callbacks();
        (
            String::from_utf8_lossy(&seen.title).into_owned(),
            seen.bells,
        )
    }

    pub fn alternate_screen(&self) -> bool {
        self.parser.lock().unwrap().screen().alternate_screen()
    }

    /// Waits until `ok(screen)` holds; fails with the screen when it does not in time.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            if start.elapsed() > PATIENCE {
                panic!("timed out waiting for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Types bytes as a keyboard would.
    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Resizes the terminal (the program gets SIGWINCH).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.lock().unwrap().set_size(nz(rows), nz(cols));
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// Waits for the program to end; its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader take what was written last.
                let _ = self.wait_quiet();
                return status.exit_code();
            }
            if start.elapsed() > PATIENCE {
                let _ = self.child.kill();
                panic!("the program did not end; the screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the output has stopped growing for a moment.
    fn wait_quiet(&self) -> usize {
        let mut last = usize::MAX;
        let start = Instant::now();
        loop {
            let n = self.raw.lock().unwrap().len();
            if n == last || start.elapsed() > PATIENCE {
                return n;
            }
            last = n;
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        if self.running() {
            let _ = self.child.kill();
        }
    }
}
