//! Replay: everything that reads a book back and explains it.
//!
//! Today this crate owns [`Book`]: the ledger plus the projections folded from it,
//! and the one write path (fold, `decide`, append with the expected head). It will
//! own the pure assembly function (snapshot, chapter, chunk, previous receipt) ->
//! context, receipts, `replay` and its byte-equality proof, `audit` and `impact`.
//!
//! It reads and appends through `ledger`; it never calls `embed`, never reads the
//! clock while assembling, and never knows HTTP or JSON.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod book;
pub mod chunks;
pub mod error;
pub mod reads;
pub mod service;

pub use assembly::{assemble, receipt};
pub use book::{Book, Submitted};
pub use error::{BookError, ErrorClass};
pub use service::{Initialized, Labelled, RollbackPlan, TermEdit, WriteOptions, Written};
