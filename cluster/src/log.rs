//! The replicated log as the protocol needs it: per-subject order, a publish that
//! expects a subject's last position and is deduplicated by message id, reads of the
//! first message after a position, and the checkpoint store. [`crate::nats`] is
//! JetStream; [`crate::memory`] is an in-memory log for tests, which can be told to
//! ignore the expected position (as a clustered JetStream may under concurrency,
//! nats-io/nats-server#4320).
//!
//! Calls are blocking: the commit gate runs on a ledger's writer thread and catch-up
//! on a request's blocking thread.

use std::ops::ControlFlow;

/// A message as the log stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// Its position in the log (JetStream's stream sequence), from 1.
    pub position: u64,
    /// The message id it was published with, if any.
    pub msg_id: Option<String>,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The answer to a publish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Published {
    /// Where the message is.
    pub position: u64,
    /// Whether the log had it already (same message id) and stored nothing.
    pub duplicate: bool,
}

/// Why a call on the log failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The subject's last position is not the expected one: nothing was stored.
    #[error("wrong last sequence on {subject}: {detail}")]
    WrongLast {
        /// The subject.
        subject: String,
        /// The log's words.
        detail: String,
    },
    /// The log did not answer, or has no leader now: the call may be retried (a
    /// publish with the same message id).
    #[error("the log is unavailable: {0}")]
    Unavailable(String),
    /// The log refused the call for another reason.
    #[error("the log refused: {0}")]
    Refused(String),
}

/// A replicated log of messages on subjects.
pub trait Log: Send + Sync {
    /// Publishes `bytes` on `subject`, deduplicated by `msg_id`; with `expected`, only
    /// if the subject's last message is at that position (0: the subject has none).
    /// One attempt.
    fn publish(&self, subject: &str, expected: Option<u64>, msg_id: &str, bytes: &[u8]) -> Result<Published, LogError>;

    /// The first message on `subject` at position `from` or after, as the log's
    /// leader has it.
    fn next(&self, subject: &str, from: u64) -> Result<Option<Stored>, LogError>;

    /// The message at `position` and its subject, if the log holds it.
    fn get(&self, position: u64) -> Result<Option<(String, Stored)>, LogError>;

    /// The messages on `subject` from position `from` on, in order, up to the last
    /// one the log has when the read begins, until `visit` breaks. For a read of many
    /// messages (JetStream: an ordered consumer).
    fn read_from(
        &self,
        subject: &str,
        from: u64,
        visit: &mut dyn FnMut(Stored) -> ControlFlow<()>,
    ) -> Result<(), LogError>;

    /// The subjects that have messages, of the form `prefix` and one more token.
    fn subjects(&self, prefix: &str) -> Result<Vec<String>, LogError>;

    /// Stores a checkpoint of revision `revision` under `name`, replacing what was
    /// there.
    fn put_checkpoint(&self, name: &str, revision: u64, bytes: &[u8]) -> Result<(), LogError>;

    /// The revision of the checkpoint stored under `name`, without its bytes.
    fn checkpoint_revision(&self, name: &str) -> Result<Option<u64>, LogError>;

    /// The checkpoint stored under `name`: its revision and bytes.
    fn get_checkpoint(&self, name: &str) -> Result<Option<(u64, Vec<u8>)>, LogError>;
}
