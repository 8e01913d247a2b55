//! Error enums, one per operation family. Corruption is always its own variant,
//! distinct from I/O.

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

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// No event has this seq.
    #[error("no event {seq}: the head is {head}")]
    NotFound {
        /// Asked for.
        seq: Seq,
        /// Current head.
        head: Seq,
    },
    /// A stored event failed its checks. The ledger refuses appends from now on.
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
    Io(String),
}

/// Why a batch was not appended. In every case nothing of the batch was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    Io(String),
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
            Poison::FailedCommit(detail) => {
                AppendError::Io(format!("failed commit: {detail}; appends are refused until the book is reopened"))
            }
            Poison::Damaged(what) => AppendError::Poisoned(what),
        }
    }
}

/// Why `verify` could not vouch for the chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The first broken link, torn write or mismatched hash.
    #[error("event {seq} is corrupted: {detail}")]
    Corrupted {
        /// The first bad seq.
        seq: Seq,
        /// What is wrong.
        detail: String,
    },
    /// A stored object other than an event failed its checks.
    #[error("{object} is corrupted: {detail}")]
    Damaged {
        /// The object, named (`blob 241cb521…`, `document 3f2a…`).
        object: String,
        /// What is wrong.
        detail: String,
    },
    /// The storage layer failed.
    #[error("storage error: {0}")]
    Io(String),
}

impl From<ReadError> for VerifyError {
    fn from(error: ReadError) -> VerifyError {
        match error {
            ReadError::Corrupted { seq, detail } => VerifyError::Corrupted { seq, detail },
            ReadError::NotFound { seq, head } => {
                VerifyError::Corrupted { seq, detail: format!("missing below the head {head} (torn write)") }
            }
            ReadError::Damaged { object, detail } => VerifyError::Damaged { object, detail },
            ReadError::Io(detail) => VerifyError::Io(detail),
        }
    }
}

/// Classifies a redb error: its own corruption reports stay corruption.
pub(crate) fn storage_detail(error: impl Into<redb::Error>) -> (bool, String) {
    let error: redb::Error = error.into();
    // redb reports a damaged file header ("not a redb database: magic number
    // mismatch") as invalid data from the file, and a file cut short inside its
    // header as an unexpected end of file: damage, not an I/O failure.
    let corrupted = match &error {
        // Every table is created with the book, so a missing one is damage.
        redb::Error::Corrupted(_) | redb::Error::TableDoesNotExist(_) => true,
        redb::Error::Io(io) => matches!(io.kind(), std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof),
        _ => false,
    };
    (corrupted, error.to_string())
}
