//! What the tests of more than one crate share, so that no test helper is written
//! twice:
//!
//! * [`harness`]: the runner of the `harness = false` targets (name filters, `--list`,
//!   libtest's `test result:` line that `.ci/run` counts);
//! * `records` (feature `records`; `records::applied` with `state`): builders of events
//!   and records, and a state folded from events outside a ledger;
//! * `profiles` (feature `profiles`): normalization profiles, each built once;
//! * `books` (feature `book`): a new book with the zh profile, write options;
//! * `interchange` (feature `interchange`; its `strategies` with `strategies`): the
//!   fixtures of glossary files, the values a reader returns and a writer takes, the
//!   round trips every format keeps, and proptest strategies of the terms a format
//!   carries;
//! * `counting` (feature `counting`): the counting allocator of the batch-cost tests;
//! * `matching` (feature `matching`): aho-corasick as an independent leftmost-longest
//!   engine over a matcher's patterns;
//! * [`tiny_model`]: the files of the tiny embedding model and its oracle;
//! * [`search`]: deterministic vectors for the tests and benchmarks of vector search;
//! * [`damage`]: a bit flipped near every stored copy of a marker in a file.
//!
//! Each part that needs a crate of the workspace is behind a feature, so the tests of
//! a crate build only what they use (the tests of a pure crate never build the book
//! service, and only those that fold text build OpenCC).
//!
//! Dev-only: a crate lists it under `[dev-dependencies]` and never under
//! `[dependencies]` (`tests/architecture.rs` checks it), so nothing of it reaches a
//! build of lorebank. Integration tests (`<crate>/tests/*.rs`) may use it, those of the
//! crates it depends on too, since they link the same library; unit tests inside a
//! crate's `src/` may not, because they would link a second copy of that crate.
//!
//! It holds helpers, never tests of other crates: its only `#[test]`s are the
//! harness's own, and the few checks it makes (the round trips every glossary format
//! keeps) return what they read and wrote, so what a test
//! is about stays in the test. A helper only one crate's tests use stays in that
//! crate's `tests/` (its fixtures, its simulated book). It must never reach a normal
//! dependency, nor grow a rule of its own that the code under test should hold.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

#[cfg(feature = "book")]
pub mod books;
#[cfg(feature = "counting")]
pub mod counting;
pub mod damage;
pub mod harness;
#[cfg(feature = "interchange")]
pub mod interchange;
#[cfg(feature = "matching")]
pub mod matching;
#[cfg(feature = "profiles")]
pub mod profiles;
#[cfg(feature = "records")]
pub mod records;
pub mod search;
pub mod tiny_model;
