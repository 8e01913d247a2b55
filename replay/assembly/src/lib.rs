//! Assembly: the pure hot path of lorebank.
//!
//! It owns the function from (frozen snapshot, chapter, chunk text, previous
//! receipt's recent hits) to the exact bytes injected into a translation prompt
//! ([`assemble::assemble`]), every render format and token estimator ever released,
//! and the byte form of receipts ([`receipt`]).
//!
//! It must not do I/O, read a clock, draw random numbers, iterate a hash map, or
//! depend on the storage engine: the same inputs give the same bytes on any machine,
//! which is what makes a receipt replayable. Opening books, storing receipts and
//! replaying them is the book service's (`book`).
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod assemble;
pub mod receipt;
