//! Failures of a command and their exit codes.
//!
//! | exit | kind          | meaning                                                  |
//! |-----:|---------------|----------------------------------------------------------|
//! | 0    |               | success                                                  |
//! | 1    | `io`          | the file system or storage failed; nothing was written   |
//! | 2    | `invalid`     | bad input (arguments, event file); nothing was written   |
//! | 3    | `corrupted`   | the book failed an integrity check                       |
//! | 4    | `mismatch`    | a replay did not reproduce the recorded bytes            |
//! | 5    | `conflict`    | another writer moved the head (`--expect-head`)          |

use ledger::{AppendError, OpenError, ReadError, VerifyError};
use replay::BookError;

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
}

impl Kind {
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Io => 1,
            Kind::Invalid => 2,
            Kind::Corrupted => 3,
            Kind::Mismatch => 4,
            Kind::Conflict => 5,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Io => "io",
            Kind::Invalid => "invalid",
            Kind::Corrupted => "corrupted",
            Kind::Mismatch => "mismatch",
            Kind::Conflict => "conflict",
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

    /// Prints the failure on stderr: one line of text, or one JSON object.
    pub fn report(&self, json: bool) {
        if json {
            let value = serde_json::json!({
                "error": { "kind": self.kind.name(), "exit_code": self.kind.exit_code(), "message": self.message }
            });
            eprintln!("{value}");
        } else {
            eprintln!("error: {}", self.message);
        }
    }
}

impl From<OpenError> for Failure {
    fn from(error: OpenError) -> Failure {
        let kind = match &error {
            OpenError::Corrupted { .. } | OpenError::NotALedger { .. } | OpenError::UnsupportedFormat { .. } => {
                Kind::Corrupted
            }
            OpenError::Exists { .. } | OpenError::Missing { .. } => Kind::Invalid,
            _ => Kind::Io,
        };
        Failure { kind, message: error.to_string() }
    }
}

impl From<ReadError> for Failure {
    fn from(error: ReadError) -> Failure {
        let kind = match &error {
            ReadError::Corrupted { .. } | ReadError::Damaged { .. } => Kind::Corrupted,
            ReadError::NotFound { .. } => Kind::Invalid,
            _ => Kind::Io,
        };
        Failure { kind, message: error.to_string() }
    }
}

impl From<VerifyError> for Failure {
    fn from(error: VerifyError) -> Failure {
        let kind = match &error {
            VerifyError::Corrupted { .. } | VerifyError::Damaged { .. } => Kind::Corrupted,
            _ => Kind::Io,
        };
        Failure { kind, message: error.to_string() }
    }
}

impl From<AppendError> for Failure {
    fn from(error: AppendError) -> Failure {
        let kind = match &error {
            AppendError::Conflict { .. } => Kind::Conflict,
            AppendError::EmptyBatch
            | AppendError::BatchTooLarge { .. }
            | AppendError::Encode { .. }
            | AppendError::ChunkKey { .. }
            | AppendError::ReceiptTooLarge { .. } => Kind::Invalid,
            AppendError::Poisoned(_) => Kind::Corrupted,
            _ => Kind::Io,
        };
        Failure { kind, message: error.to_string() }
    }
}

impl From<BookError> for Failure {
    fn from(error: BookError) -> Failure {
        match error {
            BookError::Open(error) => error.into(),
            BookError::Read(error) => error.into(),
            BookError::Append(error) => error.into(),
            BookError::Rejected(rejection) => Failure::invalid(rejection.to_string()),
            BookError::Plan(error) => Failure::invalid(error.to_string()),
            error @ BookError::BeyondHead { .. } => Failure::invalid(error.to_string()),
            error @ (BookError::Profile(_) | BookError::Corrupted(_)) => {
                Failure { kind: Kind::Corrupted, message: error.to_string() }
            }
            error @ (BookError::Receipt(_)
            | BookError::Assemble(_)
            | BookError::UnknownTable(_)
            | BookError::Unsupported(_)) => Failure::invalid(error.to_string()),
            error => Failure::io(error.to_string()),
        }
    }
}
