//! Projections: the state a translator and an auditor ask about, folded from the
//! event log.
//!
//! * [`State`]: the fold of events `1..=R` ([`State::apply`] is total), with
//!   bi-temporal reads ([`State::active_terms`] at a chapter, after story-time
//!   supersession) and per-record provenance.
//! * [`decide()`]: every write-time rule of a batch, including UNIQUE(folded surface,
//!   sense, window) and keys the matcher can use; what the build and the book have
//!   comes in as an [`Environment`]; no-op puts are dropped. [`decide_in_place`]
//!   decides on the state itself and, when it refuses, undoes what it applied;
//!   [`decide_indexed`] also keeps the head's [`SurfaceIndex`] of folded surfaces,
//!   renderings and supersessions, so a write checks only the groups it touches;
//!   [`decide_dry`] decides a dry run the same way and puts the state and the index
//!   back, accepted or not.
//! * [`checkpoint`]: a folded state as bytes, so a book folds only the tail.
//! * [`SnapshotId`]: the content address of everything that can change an assembly.
//! * [`diff()`] and [`plan_rollback`]: comparing states, and the compensating events
//!   that bring an earlier snapshot back.
//!
//! This crate does no I/O: no files, no redb, no clocks, no randomness, and no
//! iteration over hash maps in anything hashed or rendered. It takes events and
//! returns values; `ledger` and the application do the reading and writing.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod checkpoint;
pub mod decide;
pub mod diff;
pub mod frozen;
pub mod ids;
pub mod index;
pub mod read;
pub mod release;
pub mod rollback;
pub mod snapshot;
pub mod state;
mod undo;

pub use decide::{
    decide, decide_dry, decide_in_place, decide_indexed, Decided, Decision, Environment, KeyProblem, Problem,
    Rejection, UniqueConflict, Warning,
};
pub use diff::{diff, FieldChange, RecordDiff};
pub use ids::{FreeIds, NoFreeId};
pub use index::SurfaceIndex;
pub use read::ActiveTerm;
pub use release::{Governed, Reader};
pub use rollback::{plan_rollback, PlanError};
pub use snapshot::{SnapshotId, SnapshotTracker, Touched, Touches, SNAPSHOT_FORMAT};
pub use state::{Candidate, Expected, Provenance, Rule, State, Summary, Term};

/// Version of the matching semantics the snapshot's bytes are interpreted with
/// (fold pipeline, leftmost-longest, word boundaries for Latin/Cyrillic keys).
pub const MATCHER_SEMANTICS: u16 = 1;
