//! Errors of book operations.

use ledger::{AppendError, OpenError, ReadError};
use ledger_model::Seq;
use projections::{PlanError, Rejection};

/// Why a book operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BookError {
    /// The book could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Reading the log failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Appending failed (including conflicts).
    #[error(transparent)]
    Append(#[from] AppendError),
    /// `decide` refused the batch.
    #[error(transparent)]
    Rejected(#[from] Rejection),
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
    /// A receipt is missing or named ambiguously.
    #[error("{0}")]
    Receipt(String),
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
}
