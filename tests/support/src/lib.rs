//! What the tests of more than one crate share, so that no test helper is written
//! twice: the runner of the `harness = false` targets ([`harness`]: name filters,
//! `--list`, libtest's `test result:` line that `.ci/run` counts).
//!
//! Dev-only: a crate lists it under `[dev-dependencies]` and never under
//! `[dependencies]`, so nothing of it reaches a build of lorebank. Integration tests
//! (`<crate>/tests/*.rs`) may use it; unit tests inside a crate's `src/` may not,
//! because they would link a second copy of that crate.
//!
//! It holds helpers, never tests: it asserts nothing about the code under test, and
//! every check stays in the test that makes it.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod harness;
