//! The `lorebank` command-line application: the only place that knows argv, terminal
//! output and the JSON forms of the CLI. Library crates do the work; this crate
//! parses, calls, prints, and maps failures to documented exit codes.
// Every line goes through `outln!`/`out!`/`errln!`, which never panic on a closed pipe.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `println!` through [`output::write_line`]: a closed stdout ends printing quietly
/// instead of panicking after a write was committed.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::render::output::write_line(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics: a closed stderr loses the message, nothing more.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `print!` through [`output::write_text`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::render::output::write_text(format_args!($($arg)*), false)
    };
}

// The modules, in rustfmt's order; their layering, lowest first, is failure < input <
// render < http < ui < serve < cli, each using only lower ones (`MODULES` in
// tests/architecture.rs, `the_modules_of_the_application_use_only_lower_ones`).
mod cli;
mod failure;
mod http;
mod input;
mod render;
mod serve;
mod ui;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = match cli::args::Args::try_parse() {
        Ok(args) => args,
        Err(error) => return argument_error(&error),
    };
    let json = args.json;
    failure::quiet_panics(matches!(args.command, cli::args::Command::Serve(_)));
    let run = std::panic::AssertUnwindSafe(|| cli::run(args));
    let result = std::panic::catch_unwind(run)
        .unwrap_or_else(|_| Err(failure::Failure::internal()))
        .and_then(|()| render::output::finish());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            failure.report(json);
            ExitCode::from(failure.kind.exit_code())
        }
    }
}

/// Reports an argument error: clap's text, or with `--json` anywhere before `--`, the
/// same JSON error object as every other failure (exit 2). Help and version are
/// printed as asked and succeed.
fn argument_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        outln!("{}", error.render().to_string().trim_end());
        return match render::output::finish() {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => ExitCode::from(failure.kind.exit_code()),
        };
    }
    let json = std::env::args_os().skip(1).take_while(|arg| arg != "--").any(|arg| arg == "--json");
    if !json {
        let _ = error.print();
        return ExitCode::from(failure::Kind::Invalid.exit_code());
    }
    let rendered = error.render().to_string();
    let message = rendered
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .map(|line| line.strip_prefix("error: ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join(" ");
    let failure = failure::Failure::invalid(message);
    failure.report(true);
    ExitCode::from(failure.kind.exit_code())
}
