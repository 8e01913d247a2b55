//! Errors of book operations.

use ledger::{AppendError, GateRefusalKind, OpenError, ReadError, VerifyError};
use ledger_model::Seq;
use projections::{PlanError, Rejection};

/// Why a book operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BookError {
    /// The book could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// `verify` found the chain damaged, or could not read it.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// Reading the log failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Appending failed (including conflicts).
    #[error(transparent)]
    Append(#[from] AppendError),
    /// `decide` refused the batch.
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// `decide` refused the body a caller labelled `label` (`events.jsonl line 3`).
    #[error("{label}: {}", unindexed(rejection))]
    RejectedAt {
        /// The caller's name for the refused body.
        label: String,
        /// Why.
        rejection: Box<Rejection>,
    },
    /// No rollback plan can be made.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A revision after the head was asked for.
    #[error("revision {revision} is after the head {head}")]
    BeyondHead {
        /// Asked for.
        revision: Seq,
        /// The head.
        head: Seq,
    },
    /// The chunk could not be assembled.
    #[error(transparent)]
    Assemble(#[from] assembly::assemble::AssembleError),
    /// A receipt is named ambiguously, or cannot be used as asked.
    #[error("{0}")]
    Receipt(String),
    /// What was asked for is not in the book (or not for this reader): `what` says
    /// what, after "no" (`receipt 3f2a… assembled for party tool:pipeline`, `events
    /// about T-99`). An adapter answers it as not found (HTTP 404).
    #[error("no {what}")]
    NotFound {
        /// What is missing.
        what: String,
    },
    /// Stored receipts or texts fail their checks.
    #[error("corrupted: {0}")]
    Corrupted(String),
    /// The frozen projection could not be built or loaded.
    #[error("frozen projection: {0}")]
    Frozen(String),
    /// A `config_set` names a fold table the book does not have and the batch does
    /// not bring.
    #[error("fold table {0} is not stored in the book (name the profile without a table to build it)")]
    UnknownTable(ledger_model::Hash32),
    /// A config asks for a format version this build does not have.
    #[error("unsupported {0}")]
    Unsupported(String),
    /// The normalization profile named by the config is missing or damaged.
    #[error("normalization profile: {0}")]
    Profile(String),
    /// The request itself is wrong (a bad argument, an unknown record, a no-op);
    /// nothing was written.
    #[error("{0}")]
    Invalid(String),
    /// One field of the request is wrong, named so that a caller can point at it (a
    /// query parameter, a flag); nothing was written.
    #[error("{message}")]
    InvalidField {
        /// The field, as the book calls it (`chapter`, `since`, `to`).
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An input is over one of the input limits (`ledger_model::limits::input`),
    /// which the message names; nothing was written.
    #[error("{0}")]
    TooLarge(String),
    /// A copy's destination is there, and replacing it was not asked for (the CLI's
    /// `--force` asks).
    #[error("{path} already exists, and replacing it was not asked for")]
    DestinationExists {
        /// The destination.
        path: String,
    },
    /// A library has no book of this name.
    #[error("no book named {0} in the library")]
    NoBook(String),
    /// A chat model could not be reached, or answered what a job cannot use; nothing
    /// was written.
    #[error("{0}")]
    Model(String),
    /// A replay did not reproduce the recorded bytes.
    #[error("replay of receipt {receipt} differs from the recorded output at byte {first_difference}")]
    Mismatch {
        /// The receipt replayed.
        receipt: ledger_model::Hash32,
        /// The first differing byte of the context.
        first_difference: usize,
    },
}

impl From<projections::NoFreeId> for BookError {
    fn from(error: projections::NoFreeId) -> BookError {
        BookError::Invalid(error.to_string())
    }
}

impl BookError {
    /// A glossary file named `name` that the reader refused: too large when it is
    /// over an input limit, otherwise invalid.
    pub(crate) fn of_file(name: &str, error: formats::ReadError) -> BookError {
        match error.limit {
            Some(_) => BookError::TooLarge(format!("{name}: {error}")),
            None => BookError::Invalid(format!("{name}: {error}")),
        }
    }
}

fn unindexed(rejection: &Rejection) -> String {
    Rejection { index: None, problem: rejection.problem.clone() }.to_string()
}

/// The class of a failure, which a caller maps to its own codes (the CLI to exit
/// codes 1 to 5, see `docs/cli.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The file system or storage failed.
    Storage,
    /// Bad input; nothing was written.
    Invalid,
    /// The book failed an integrity check, or the file is not a lorebank book.
    Corrupt,
    /// A replay did not reproduce the recorded bytes.
    ReplayMismatch,
    /// Another writer moved the head; nothing was written.
    Conflict,
}

impl ErrorClass {
    /// The class of a failure to open a book.
    pub fn of_open(error: &OpenError) -> ErrorClass {
        match error {
            OpenError::Corrupted { .. } | OpenError::NotALedger { .. } | OpenError::UnsupportedFormat { .. } => {
                ErrorClass::Corrupt
            }
            OpenError::Exists { .. } | OpenError::Missing { .. } => ErrorClass::Invalid,
            _ => ErrorClass::Storage,
        }
    }

    /// The class of a failed read.
    pub fn of_read(error: &ReadError) -> ErrorClass {
        match error {
            ReadError::Corrupted { .. } | ReadError::Damaged { .. } => ErrorClass::Corrupt,
            ReadError::NotFound { .. } => ErrorClass::Invalid,
            _ => ErrorClass::Storage,
        }
    }

    /// The class of a failed `verify`.
    pub fn of_verify(error: &VerifyError) -> ErrorClass {
        match error {
            VerifyError::Corrupted { .. } | VerifyError::Damaged { .. } => ErrorClass::Corrupt,
            _ => ErrorClass::Storage,
        }
    }

    /// The class of a failed append.
    pub fn of_append(error: &AppendError) -> ErrorClass {
        match error {
            AppendError::Conflict { .. } => ErrorClass::Conflict,
            AppendError::EmptyBatch
            | AppendError::BatchTooLarge { .. }
            | AppendError::Encode { .. }
            | AppendError::DocumentKey { .. }
            | AppendError::DocumentTooLarge { .. }
            | AppendError::DerivedEntry { .. } => ErrorClass::Invalid,
            AppendError::Poisoned(_) => ErrorClass::Corrupt,
            AppendError::Replica { .. } => ErrorClass::Invalid,
            AppendError::NotAtHead { .. } => ErrorClass::Conflict,
            AppendError::Gate(refusal) => match refusal.kind {
                GateRefusalKind::Stale => ErrorClass::Conflict,
                GateRefusalKind::Unavailable => ErrorClass::Storage,
                GateRefusalKind::Refused => ErrorClass::Corrupt,
                GateRefusalKind::Invalid => ErrorClass::Invalid,
            },
            _ => ErrorClass::Storage,
        }
    }
}

impl BookError {
    /// The field of the request this error names, when it names one: an
    /// [`BookError::InvalidField`]'s, or the dotted path of the field of a refused
    /// event (`term_put.window.until`, `alias_added.surface`, `term_put.decl[0]`), so
    /// that a form can point at its input.
    pub fn field(&self) -> Option<String> {
        let rejection = match self {
            BookError::InvalidField { field, .. } => return Some((*field).to_owned()),
            BookError::Rejected(rejection) => rejection,
            BookError::RejectedAt { rejection, .. } => rejection,
            _ => return None,
        };
        match &rejection.problem {
            projections::Problem::Field(error) => Some(error.field.clone()),
            projections::Problem::UnusableKey { field, .. } => Some(field.clone()),
            projections::Problem::SummaryTooEarly { .. } => Some("summary_put.visible_from".to_owned()),
            projections::Problem::UnknownAlias { .. } => Some("alias_removed.surface".to_owned()),
            _ => None,
        }
    }

    /// What kind of failure this is, for a caller to choose its exit code or status.
    pub fn class(&self) -> ErrorClass {
        match self {
            BookError::Open(error) => ErrorClass::of_open(error),
            BookError::Read(error) => ErrorClass::of_read(error),
            BookError::Verify(error) => ErrorClass::of_verify(error),
            BookError::Append(error) => ErrorClass::of_append(error),
            BookError::Rejected(_)
            | BookError::RejectedAt { .. }
            | BookError::Plan(_)
            | BookError::BeyondHead { .. }
            | BookError::Assemble(_)
            | BookError::Receipt(_)
            | BookError::NotFound { .. }
            | BookError::DestinationExists { .. }
            | BookError::UnknownTable(_)
            | BookError::Unsupported(_)
            | BookError::Invalid(_)
            | BookError::InvalidField { .. }
            | BookError::TooLarge(_)
            | BookError::NoBook(_) => ErrorClass::Invalid,
            BookError::Corrupted(_) | BookError::Profile(_) => ErrorClass::Corrupt,
            BookError::Mismatch { .. } => ErrorClass::ReplayMismatch,
            BookError::Frozen(_) | BookError::Model(_) => ErrorClass::Storage,
        }
    }
}
