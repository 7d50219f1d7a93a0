//! The `pidx` binary: parse arguments, run the command, exit with the code `app::outcome` maps
//! its outcome to.

use clap::Parser;

fn main() {
    let cli = pidx::cli::Cli::parse();
    let result = pidx::cli::run(cli);
    std::process::exit(pidx::app::outcome::exit_code(&result));
}
