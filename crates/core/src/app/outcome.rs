//! How a run ends, and the one place that turns it into an exit code: 0 results, 1 nothing
//! found, 2 error, 3 an answer from an index still being written; a closed pipe is not an
//! error.

/// What a command found: exit code 0 (results) or 1 (nothing found).
pub type Found = bool;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Results,
    /// Exit 1.
    Nothing,
    /// Exit 3: the answer was read from an index still behind the files on disk (`--no-wait`,
    /// or a watcher that stopped catching up), found or not.
    Incomplete,
}

impl Outcome {
    /// Results or nothing, by what a command found.
    pub fn of(found: Found) -> Outcome {
        if found {
            Outcome::Results
        } else {
            Outcome::Nothing
        }
    }
}

/// The exit code of a run; an error is described on stderr first.
pub fn exit_code(result: &anyhow::Result<Outcome>) -> i32 {
    match result {
        Ok(Outcome::Results) => 0,
        Ok(Outcome::Nothing) => 1,
        Ok(Outcome::Incomplete) => 3,
        Err(e) => error_code(e),
    }
}

/// The error and the causes it does not already spell out: pidx's own errors carry their
/// cause in their message, so the chain stops at the first of them (printing it whole would
/// repeat the cause: "index: x: x: Error code 14: x").
fn describe(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause.to_string());
        if cause.is::<crate::Error>() {
            break;
        }
        // An SQLite error that reached here without pidx's wrapper still gets its hint.
        if let Some(e) = cause.downcast_ref::<rusqlite::Error>() {
            text.push_str(crate::error::write_hint(e));
            break;
        }
    }
    text
}

fn error_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }) {
        return 0;
    }
    crate::term::say(&format!("pidx: {}", describe(e)));
    match e.downcast_ref::<crate::Error>() {
        Some(crate::Error::NotFound(_) | crate::Error::NoEntry { .. }) => 1,
        _ => 2,
    }
}
