//! The ledger: one book's append-only event log in one redb file.
//!
//! This crate owns the redb table layout and the durable write path. [`Ledger`]
//! appends batches atomically with optimistic concurrency (`expected_head`), through
//! one writer thread that group-commits the batches of concurrent appenders (several
//! batches, one durable commit); a long batch is streamed to the writer in parts as
//! it is encoded. Reads check every record's payload hash and every link of the hash
//! chain they cross ([`Ledger::scan_pipelined`] does so on a second thread while the
//! caller folds); [`Ledger::verify`] checks every stored object
//! (chain, blobs, documents, indexes) in one read transaction and names what is
//! damaged. [`Ledger::open_read_only`] opens a book without ever writing to it.
//! [`Ledger::open_in_turn`] and [`Ledger::open_read_only_in_turn`] wait their turn,
//! first come, first served, while other processes have the book open, for as long as
//! a [`Patience`] allows (see `docs/format.md`, *Lock files beside the book*).
//!
//! Besides the log it files [`Document`]s: content-addressed, checksummed bytes,
//! each filed under a caller-chosen shelf (`group`, `key`) in arrival order
//! ([`Ledger::file_documents`], [`Ledger::document`], [`Ledger::filed`],
//! [`Ledger::documents_with_prefix`]). The ledger never knows what a document means:
//! receipts, chapters and chunk keys are `book`'s (a receipt is a document filed
//! under its chapter and chunk key).
//!
//! It also keeps generic derived data beside the log, never referred to by it: the
//! cache, checkpoints ([`Ledger::put_checkpoint`]) and derived sets
//! ([`Ledger::derived_write`]: checksummed bytes under a set name and a key, which a
//! caller can recompute; the ledger never knows what they mean).
//!
//! A book can be a node's copy of a book replicated through an external ordered log
//! (`docs/scale.md`): a [`CommitGate`] set on the ledger ([`Ledger::set_gate`]) sees
//! every group the writer is about to commit and publishes it first, and
//! [`Ledger::apply_replica`] stores the groups other writers published, after
//! [`replica::Follower`] has checked their chain. The ledger knows no log: the
//! group's byte form and the rule that picks a book's groups out of a log are here
//! (`replica`), the transport is `cluster`'s.
//!
//! It stores the bytes `ledger-model` produces and decodes them back; it does not
//! judge what events mean (that is `projections`), and it never matches, assembles
//! or embeds. It validates only what storage needs (sizes, encodability); callers
//! validate content before appending.
//!
//! ```
//! use ledger::Ledger;
//! use ledger_model::{Body, NewEvent, Seq, TermRetired};
//!
//! let dir = std::env::temp_dir().join(format!("lorebank-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("book.lorebank");
//! # let _ = std::fs::remove_file(&path);
//! let ledger = Ledger::create(&path).unwrap();
//! let event = NewEvent {
//!     recorded_at_ms: 0,
//!     actor: "human:anna".into(),
//!     source: "doc".into(),
//!     body: Body::TermRetired(TermRetired { id: "T-1".parse().unwrap(), reason: None }),
//! };
//! let appended = ledger.append(&[event], Some(Seq(0))).unwrap();
//! assert_eq!(appended.last, Seq(1));
//! assert_eq!(ledger.verify().unwrap().head.seq, Seq(1));
//! # drop(ledger); std::fs::remove_dir_all(&dir).unwrap();
//! ```
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

mod backup;
mod checkpoint;
mod derived;
mod error;
pub mod replica;
mod store;
mod turns;
mod verify;
mod writer;

pub use checkpoint::{CheckpointInfo, CHECKPOINTS_RECENT};
pub use derived::{DerivedSet, DERIVED_KEY_BYTES_MAX, DERIVED_SET_BYTES_MAX, DERIVED_VALUE_BYTES_MAX};
pub use error::{io_context, AppendError, OpenError, ReadError, VerifyError};
pub use replica::{CommitGate, GateRefusal, GateRefusalKind, ReplicaPosition};
pub use store::{
    Head, Ledger, VerifyReport, LEDGER_FORMAT, PIPELINE_BATCHES_IN_FLIGHT, PIPELINE_BATCH_EVENTS, PIPELINE_MIN_EVENTS,
    STORED_CHECKSUM_CONTEXT,
};
pub use turns::{Patience, NOTICE_AFTER};
pub use writer::{Appended, Attachments, Document, GROUP_BATCHES_MAX};

// Backups, restores and the portable archive.
pub use backup::{
    check_destination, read_archive, Archive, BackupError, Copied, Staged, ARCHIVE_CHECKSUM_CONTEXT, ARCHIVE_MAGIC,
};
