//! Failures of a command and their exit codes.
//!
//! | exit | kind          | meaning                                                  |
//! |-----:|---------------|----------------------------------------------------------|
//! | 0    |               | success                                                  |
//! | 1    | `io`          | the book's storage or the file system failed             |
//! | 2    | `invalid`     | bad input (arguments, input files); nothing was written  |
//! | 3    | `corrupted`   | the book failed an integrity check, or is not a book     |
//! | 4    | `mismatch`    | a replay did not reproduce the recorded bytes            |
//! | 5    | `conflict`    | another writer moved the head; nothing was written       |
//! | 101  | `internal`    | lorebank itself failed (a panic: a bug, never bad input) |
//!
//! Library failures say their own class (`book::ErrorClass`); [`Kind::of`] maps it.
//! A panic never reaches the user as panic text: [`quiet_panics`] keeps the hook
//! from printing it, and [`Failure::internal`] reports one that ended the command
//! like any other failure (one line, or with `--json` one object).

use book::{BookError, ErrorClass};
use ledger::{AppendError, OpenError, ReadError, VerifyError};

/// The class of a failure, which decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Storage or file system failure.
    Io,
    /// Bad input.
    Invalid,
    /// Integrity check failed.
    Corrupted,
    /// Optimistic concurrency conflict.
    Conflict,
    /// A replay did not reproduce the recorded bytes.
    Mismatch,
    /// lorebank itself failed: a panic, which is a bug (bad input never panics).
    Internal,
}

impl Kind {
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Io => 1,
            Kind::Invalid => 2,
            Kind::Corrupted => 3,
            Kind::Mismatch => 4,
            Kind::Conflict => 5,
            // What a Rust program that panics exits with.
            Kind::Internal => 101,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Io => "io",
            Kind::Invalid => "invalid",
            Kind::Corrupted => "corrupted",
            Kind::Mismatch => "mismatch",
            Kind::Conflict => "conflict",
            Kind::Internal => "internal",
        }
    }
}

/// A failed command: what kind, and a message for a person.
#[derive(Debug)]
pub struct Failure {
    pub kind: Kind,
    pub message: String,
}

impl Failure {
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure { kind: Kind::Invalid, message: message.into() }
    }

    pub fn io(message: impl Into<String>) -> Failure {
        Failure { kind: Kind::Io, message: message.into() }
    }

    /// The failure of a command that panicked: the panic's message and place, as
    /// [`quiet_panics`] kept them.
    pub fn internal() -> Failure {
        let panic = LAST_PANIC.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let what = panic.unwrap_or_else(|| "a panic".to_owned());
        Failure {
            kind: Kind::Internal,
            message: format!("internal error: {what}; this is a bug in lorebank, please report it"),
        }
    }

    /// Prints the failure on stderr: one line of text, or one JSON object.
    pub fn report(&self, json: bool) {
        if json {
            let value = serde_json::json!({
                "error": { "kind": self.kind.name(), "exit_code": self.kind.exit_code(), "message": self.message }
            });
            errln!("{value}");
        } else {
            errln!("error: {}", self.message);
        }
    }
}

impl Kind {
    /// The exit class of a library failure.
    pub fn of(class: ErrorClass) -> Kind {
        match class {
            ErrorClass::Storage => Kind::Io,
            ErrorClass::Invalid => Kind::Invalid,
            ErrorClass::Corrupt => Kind::Corrupted,
            ErrorClass::ReplayMismatch => Kind::Mismatch,
            ErrorClass::Conflict => Kind::Conflict,
        }
    }
}

impl From<OpenError> for Failure {
    fn from(error: OpenError) -> Failure {
        BookError::from(error).into()
    }
}

impl From<ReadError> for Failure {
    fn from(error: ReadError) -> Failure {
        BookError::from(error).into()
    }
}

impl From<VerifyError> for Failure {
    fn from(error: VerifyError) -> Failure {
        BookError::from(error).into()
    }
}

impl From<AppendError> for Failure {
    fn from(error: AppendError) -> Failure {
        BookError::from(error).into()
    }
}

impl From<BookError> for Failure {
    fn from(error: BookError) -> Failure {
        let mut message = error.to_string();
        // A damaged event leaves every revision before it readable: say so, so that
        // an editor can export what is intact before restoring.
        let damaged = match &error {
            BookError::Read(ReadError::Corrupted { seq, .. })
            | BookError::Verify(VerifyError::Corrupted { seq, .. }) => Some(seq.0),
            _ => None,
        };
        // The library speaks of the book; the command line adds its own words.
        if let BookError::DestinationExists { .. } = &error {
            message.push_str(" (pass --force to replace it)");
        }
        if let Some(seq) = damaged.filter(|seq| *seq > 1) {
            message.push_str(&format!(
                "; revisions before {seq} still read (`--as-of {}` with show, export, snapshot): export what is \
                 intact, then restore from a backup (docs/operations.md)",
                seq - 1
            ));
        }
        Failure { kind: Kind::of(error.class()), message }
    }
}

/// The message and place of the last panic in this process, kept by the hook that
/// [`quiet_panics`] sets.
static LAST_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Sets the process's panic hook: a panic prints nothing (no message, no backtrace,
/// whatever `RUST_BACKTRACE` says), so stderr holds only what the command reports.
/// The libraries catch the panics they expect (redb's on a damaged file, which they
/// turn into corruption errors); one that ends the command is reported by `main` as
/// [`Failure::internal`], naming the message kept here. A server (`log` true) has no
/// command to report it to, so it logs each panic as one line on stderr.
pub fn quiet_panics(log: bool) {
    std::panic::set_hook(Box::new(move |info| {
        let text = match (info.payload().downcast_ref::<&str>(), info.payload().downcast_ref::<String>()) {
            (Some(text), _) => (*text).to_owned(),
            (_, Some(text)) => text.clone(),
            _ => "a panic".to_owned(),
        };
        let place = info.location().map(|at| format!(" at {}:{}", at.file(), at.line())).unwrap_or_default();
        let what = format!("{}{place}", text.replace('\n', " "));
        if log {
            errln!("lorebank serve: a thread panicked: {what}");
        }
        *LAST_PANIC.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(what);
    }));
}
