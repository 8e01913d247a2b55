//! The `lorebank` command-line application: the only place that knows argv, terminal
//! output and the JSON forms of the CLI. Library crates do the work; this crate
//! parses, calls, prints, and maps failures to documented exit codes.

/// `println!` through [`output::write_line`]: a closed stdout ends printing quietly
/// instead of panicking after a write was committed.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write_line(format_args!($($arg)*))
    };
}

mod chunk_views;
mod cli;
mod commands;
mod failure;
mod output;
mod views;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    let json = args.json;
    let result = commands::run(args).and_then(|()| output::finish());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            failure.report(json);
            ExitCode::from(failure.kind.exit_code())
        }
    }
}
