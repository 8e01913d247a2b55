//! Error enums, one per operation family. Corruption is always its own variant,
//! distinct from I/O, which keeps the [`std::io::Error`] it failed with as its source.

use std::fmt;
use std::io;

use ledger_model::codec::CodecError;
use ledger_model::Seq;

/// Why a book could not be created or opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// `create` found a file already there.
    #[error("{path} already exists")]
    Exists {
        /// The path.
        path: String,
    },
    /// `open` found no file.
    #[error("{path} does not exist (create it with `lorebank init`)")]
    Missing {
        /// The path.
        path: String,
    },
    /// Another process has the book open.
    #[error("{path} is open in another process")]
    InUse {
        /// The path.
        path: String,
    },
    /// Another process kept the book open for longer than the opener's patience.
    #[error("{path} is in use by another process: gave up after waiting {waited}")]
    Busy {
        /// The path.
        path: String,
        /// How long the opener waited (its whole patience), for a person ("60 s").
        waited: String,
    },
    /// The file is a database, but not a lorebank ledger.
    #[error("{path} is not a lorebank ledger")]
    NotALedger {
        /// The path.
        path: String,
    },
    /// A ledger format this code does not read.
    #[error("{path} has ledger format {format}; this build reads format {}", crate::LEDGER_FORMAT)]
    UnsupportedFormat {
        /// The path.
        path: String,
        /// Its format.
        format: u16,
    },
    /// The file or its last event is damaged.
    #[error("{path} is corrupted: {detail}")]
    Corrupted {
        /// The path.
        path: String,
        /// What is wrong.
        detail: String,
    },
    /// A read-only open found a book left unclean by a crash: it needs one
    /// read-write open (any write command, or `verify` on a writable file) to recover.
    #[error(
        "{path} was not closed cleanly and needs recovery, which a read-only open cannot do; open it writable once"
    )]
    NeedsRecovery {
        /// The path.
        path: String,
    },
    /// The storage layer failed.
    #[error("cannot open {path}: {detail}")]
    Io {
        /// The path.
        path: String,
        /// What failed.
        detail: String,
    },
}

/// Declares the error enum of an operation that checks stored bytes: its own
/// variants, then the three every such check can end in (a corrupted event, another
/// damaged object, a failed storage layer), alike in each enum that has them.
macro_rules! stored_bytes_error {
    ($(#[$attr:meta])* pub enum $name:ident { $($own:tt)* }) => {
        $(#[$attr])*
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        pub enum $name {
            $($own)*
            /// A stored event failed its checks (the first broken link, torn write or
            /// mismatched hash). The ledger refuses appends from now on.
            #[error("event {seq} is corrupted: {detail}")]
            Corrupted {
                /// The first bad seq.
                seq: Seq,
                /// What is wrong.
                detail: String,
            },
            /// A stored object other than an event (a blob, a document, a shelf entry)
            /// failed its checks. The ledger refuses appends from now on.
            #[error("{object} is corrupted: {detail}")]
            Damaged {
                /// The object, named (`blob 241cb521…`, `document 3f2a…`).
                object: String,
                /// What is wrong.
                detail: String,
            },
            /// The storage layer failed.
            #[error("storage error: {0}")]
            Io(#[source] io::Error),
        }
    };
}

stored_bytes_error! {
    /// Why a read failed.
    pub enum ReadError {
        /// No event has this seq.
        #[error("no event {seq}: the head is {head}")]
        NotFound {
            /// Asked for.
            seq: Seq,
            /// Current head.
            head: Seq,
        },
    }
}

/// Why a batch was not appended. In every case nothing of the batch was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// Another writer moved the head first.
    #[error("conflict: expected head {expected}, but the head is {actual}")]
    Conflict {
        /// What the caller expected.
        expected: Seq,
        /// The actual head.
        actual: Seq,
    },
    /// The batch has no events.
    #[error("empty batch")]
    EmptyBatch,
    /// The batch is over a limit.
    #[error(
        "batch of {n_events} events and {n_bytes} bytes is over the limit of {events_max} events or {bytes_max} bytes"
    )]
    BatchTooLarge {
        /// Events in the batch.
        n_events: usize,
        /// Encoded bytes in the batch.
        n_bytes: usize,
        /// Limit on events.
        events_max: usize,
        /// Limit on bytes.
        bytes_max: usize,
    },
    /// A document key (the storage key of a document's shelf) is empty, too long or
    /// holds a control character.
    #[error("document key {key:?}: {reason}")]
    DocumentKey {
        /// The key (at most its first 80 characters).
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A document is over [`ledger_model::limits::DOCUMENT_BYTES_MAX`].
    #[error("document of {n_bytes} bytes is over the limit of {bytes_max} bytes")]
    DocumentTooLarge {
        /// Its size.
        n_bytes: usize,
        /// The limit.
        bytes_max: usize,
    },
    /// A derived entry's set name, key or size is over a limit.
    #[error("derived set {set:?}: {reason}")]
    DerivedEntry {
        /// The set (at most its first 80 characters).
        set: String,
        /// What is wrong.
        reason: String,
    },
    /// One event cannot be encoded.
    #[error("event {index} of the batch: {error}")]
    Encode {
        /// 0-based index in the batch.
        index: usize,
        /// Why.
        error: CodecError,
    },
    /// Detected corruption earlier: reopen and verify. (After a failed commit the
    /// handle refuses appends with [`AppendError::Io`] instead.)
    #[error("the ledger refuses appends after an earlier failure ({0}); reopen it and run verify")]
    Poisoned(String),
    /// The storage layer failed; the ledger now refuses appends.
    #[error("storage error: {0}")]
    Io(#[source] io::Error),
    /// The book's commit gate refused the group ([`crate::CommitGate`]); nothing of
    /// it was written.
    #[error("{0}")]
    Gate(crate::replica::GateRefusal),
    /// The book is a node's copy of a replicated book, and the write did not come
    /// through the commit gate of its library: it would fork the copy from the
    /// library.
    #[error(
        "{path} is a node's copy of a replicated book (stream position {position}): write through a node of its library (`lorebank --server`), not to the file"
    )]
    Replica {
        /// The book file.
        path: String,
        /// The log position its last group came from.
        position: u64,
    },
    /// A replicated group does not start at the book's head; nothing was written.
    #[error("the replicated group starts at event {} ({}), but the book's head is event {} ({})", .before.seq, .before.hash, .head.seq, .head.hash)]
    NotAtHead {
        /// Where the group starts.
        before: crate::Head,
        /// The book's head.
        head: crate::Head,
    },
}

/// Why a handle stopped taking appends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Poison {
    /// A commit failed (its detail): the book is not damaged, and reopening it
    /// recovers the last commit.
    FailedCommit(String),
    /// Damage was detected (what, and how).
    Damaged(String),
}

impl AppendError {
    /// The refusal of a handle that stopped taking appends: after a failed commit an
    /// I/O error, after detected damage [`AppendError::Poisoned`].
    pub(crate) fn refused(reason: Poison) -> AppendError {
        match reason {
            Poison::FailedCommit(detail) => AppendError::Io(io::Error::other(format!(
                "failed commit: {detail}; appends are refused until the book is reopened"
            ))),
            Poison::Damaged(what) => AppendError::Poisoned(what),
        }
    }
}

stored_bytes_error! {
    /// Why `verify` could not vouch for the chain.
    pub enum VerifyError {}
}

impl From<ReadError> for VerifyError {
    fn from(error: ReadError) -> VerifyError {
        match error {
            ReadError::Corrupted { seq, detail } => VerifyError::Corrupted { seq, detail },
            ReadError::NotFound { seq, head } => {
                VerifyError::Corrupted { seq, detail: format!("missing below the head {head} (torn write)") }
            }
            ReadError::Damaged { object, detail } => VerifyError::Damaged { object, detail },
            ReadError::Io(error) => VerifyError::Io(error),
        }
    }
}

/// Whether a redb error is damage of the file rather than a failure of the storage
/// layer: its own corruption reports stay corruption.
pub(crate) fn is_damage(error: &redb::Error) -> bool {
    // redb reports a damaged file header ("not a redb database: magic number
    // mismatch") as invalid data from the file, and a file cut short inside its
    // header as an unexpected end of file: damage, not an I/O failure.
    match error {
        // Every table is created with the book, so a missing one is damage.
        redb::Error::Corrupted(_) | redb::Error::TableDoesNotExist(_) => true,
        redb::Error::Io(io) => matches!(io.kind(), io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof),
        _ => false,
    }
}

/// The kind of the I/O error inside a storage engine's error (`Other` for the
/// engine's own failures).
pub(crate) fn storage_kind(error: &redb::Error) -> io::ErrorKind {
    match error {
        redb::Error::Io(io) => io.kind(),
        _ => io::ErrorKind::Other,
    }
}

/// A failure of the storage engine as the I/O error an `Io` variant keeps: the
/// engine's words and [`storage_kind`]. The engine's error is the I/O error's inner
/// error ([`io::Error::get_ref`]).
pub(crate) fn storage_io(error: redb::Error) -> io::Error {
    io::Error::new(storage_kind(&error), error)
}

/// `error` with `words` before it (`cannot read book.lbar: …`): an I/O error of the
/// same kind that displays as `{words}: {error}` and has `error` as its source.
pub fn io_context(words: impl fmt::Display, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), InContext { words: words.to_string(), error })
}

/// An I/O error with words before it ([`io_context`]).
#[derive(Debug, thiserror::Error)]
#[error("{words}: {error}")]
struct InContext {
    words: String,
    #[source]
    error: io::Error,
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn an_io_variant_keeps_the_io_error_as_its_source_and_its_words() {
        let denied = io::Error::new(io::ErrorKind::PermissionDenied, "denied");
        let error = ReadError::Io(io_context("cannot read a.lbar", denied));
        assert_eq!(error.to_string(), "storage error: cannot read a.lbar: denied");
        let source = error.source().and_then(|source| source.downcast_ref::<io::Error>()).expect("an io::Error source");
        assert_eq!(source.kind(), io::ErrorKind::PermissionDenied);
        let inner = source.source().and_then(|inner| inner.downcast_ref::<io::Error>()).expect("the io::Error wrapped");
        assert_eq!(inner.to_string(), "denied");

        let engine = redb::Error::Io(io::Error::new(io::ErrorKind::StorageFull, "no space left"));
        let words = engine.to_string();
        let error = AppendError::Io(storage_io(engine));
        assert_eq!(error.to_string(), format!("storage error: {words}"));
        let source = error.source().and_then(|source| source.downcast_ref::<io::Error>()).expect("an io::Error source");
        assert_eq!(source.kind(), io::ErrorKind::StorageFull);
        assert!(matches!(source.get_ref().and_then(|e| e.downcast_ref::<redb::Error>()), Some(redb::Error::Io(_))));
    }
}
