//! Replay: context assembly, receipts, and everything that explains a past assembly.
//!
//! This crate will own the pure assembly function (snapshot, chapter, chunk, previous
//! receipt) -> context, receipts, `replay` and its byte-equality proof, `audit`,
//! `diff`, rollback planning, `impact` and the post-check of translated output.
//!
//! It reads and appends through `ledger`; it never calls `embed`, never reads the
//! clock while assembling, and never knows HTTP or JSON.
