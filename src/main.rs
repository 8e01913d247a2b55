//! The `lorebank` command-line application: the only place that knows argv, terminal
//! output and the JSON forms of the CLI. Library crates do the work; this crate
//! parses, calls, prints, and maps failures to documented exit codes.

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
    match commands::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            failure.report(json);
            ExitCode::from(failure.kind.exit_code())
        }
    }
}
