//! Books replicated through NATS JetStream (`docs/scale.md`).
//!
//! A library is one JetStream stream; a book is one subject of it, and the subject's
//! messages, read in order under [`ledger::replica::Follower`]'s rule, are the book.
//! A node's redb file of a book is a verified copy: this crate makes it so.
//!
//! * [`Replica`] is one book on one node. As the ledger's [`ledger::CommitGate`] it
//!   publishes every group the writer seals, with the subject's expected last
//!   sequence and a message id, confirms that the part is the first message after
//!   the one expected, and only then lets the writer commit; [`Replica::sync`]
//!   fetches what other nodes wrote, follows it and applies it, checked.
//! * [`ClusterOrigin`] is a [`book::Library`]'s [`book::Origin`]: which books the
//!   library holds, a node's file made on first open, every opened ledger attached,
//!   checkpoints taken from and shared to the stream's object store.
//! * [`Log`] is the log as the protocol needs it; [`JetStream`] is NATS JetStream
//!   (async-nats on a tokio runtime, called from blocking threads), and
//!   [`MemoryLog`] an in-memory log for tests, which can be told to accept publishes
//!   whatever their expected sequence, as a clustered JetStream may under
//!   concurrency.
//!
//! Neither `ledger` nor `book` knows NATS: they know a commit gate, a replica position
//! and an origin, and this crate is the only one that depends on async-nats.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod library;
pub mod log;
pub mod memory;
pub mod nats;
pub mod replica;

pub use library::{book_error, BookState, ClusterOrigin};
pub use log::{Log, LogError, Published, Stored};
pub use memory::MemoryLog;
pub use nats::{JetStream, JetStreamOptions};
pub use replica::{Policy, Replica, Synced};
