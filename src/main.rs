//! The `pidx` binary: parse arguments, run the command, map the outcome to an exit code
//! (0 results, 1 nothing found, 2 error, 3 an answer from an index still being written; a
//! closed pipe is not an error).

use clap::Parser;

fn main() {
    let cli = pidx::cli::Cli::parse();
    let code = match pidx::cli::run(cli) {
        Ok(pidx::cli::Outcome::Results) => 0,
        Ok(pidx::cli::Outcome::Nothing) => 1,
        Ok(pidx::cli::Outcome::Incomplete) => 3,
        Err(e) => exit_code_for(&e),
    };
    std::process::exit(code);
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
        if cause.is::<pidx::Error>() {
            break;
        }
        // An SQLite error that reached here without pidx's wrapper still gets its hint.
        if let Some(e) = cause.downcast_ref::<rusqlite::Error>() {
            text.push_str(pidx::error::write_hint(e));
            break;
        }
    }
    text
}

fn exit_code_for(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }) {
        return 0;
    }
    pidx::term::say(&format!("pidx: {}", describe(e)));
    match e.downcast_ref::<pidx::Error>() {
        Some(pidx::Error::NotFound(_) | pidx::Error::NoEntry { .. }) => 1,
        _ => 2,
    }
}
