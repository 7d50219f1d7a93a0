//! The `pidx` binary: the one dispatch. It parses the command line and sends each command to
//! its front door: the command line itself (`cli::run`), or, with the index opened by `cli`,
//! the picker, the MCP server or the web server — siblings that never import one another. The
//! run's outcome becomes the exit code in one place (`app::outcome`).

use clap::Parser;

use pidx::app::Outcome;
use pidx::cli::{self, Door};

fn main() {
    let result = cli::run(cli::Cli::parse()).and_then(|door| match door {
        Door::Done(outcome) => Ok(outcome),
        Door::Pick(env, args) => {
            let opts = pidx::pick::Options {
                query: args.query,
                print: args.print,
                exec: args.exec,
                all: args.all,
                file: args.file,
            };
            pidx::pick::run(&env, &opts).map(|found| env.outcome(found))
        }
        Door::Mcp(env) => pidx::mcp::run(env).map(Outcome::of),
        Door::Serve(env, args) => {
            let opts = pidx::web::Options {
                listen: args.listen,
                token: args.token,
                no_redact: args.no_redact,
                open: args.open,
            };
            pidx::web::run(env, opts).map(Outcome::of)
        }
        Door::Export(env, args) => {
            let opts = pidx::web::export::Options {
                session: args.session,
                leaf: args.leaf,
                markdown: args.md,
                output: args.output,
                redact: !args.no_redact,
            };
            pidx::web::export::run(&env, &opts).map(Outcome::of)
        }
    });
    std::process::exit(pidx::app::outcome::exit_code(&result));
}
