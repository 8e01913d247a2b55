//! The lorebank event model: what a change to a book is, and its one canonical byte
//! form.
//!
//! This crate owns the event types (schema 2: [`Body`] and its kinds; schema 1 is
//! read through [`schema1`]), the
//! newtypes for ids, seqs, hashes and chapter windows ([`ids`]), the canonical
//! bincode codec ([`codec`]), the stored record layout and hash chain ([`record`]),
//! validation of what a new event can tell alone ([`validate`]), the check of a
//! book's language tags ([`language`]) and the named limits ([`limits`]).
//!
//! It is pure: no files, no database, no clock, no randomness. `ledger` stores the
//! bytes this crate produces; `projections` and `book` fold the events it decodes
//! without ever compiling the storage engine.
//!
//! ```
//! use ledger_model::{record, Body, Hash32, NewEvent, Seq, TermRetired};
//!
//! let event = NewEvent {
//!     recorded_at_ms: 0,
//!     actor: "human:anna".into(),
//!     source: "review-7".into(),
//!     body: Body::TermRetired(TermRetired { id: "T-412".parse().unwrap(), reason: None }),
//! };
//! let payload = event.encode().unwrap();
//! let (bytes, hash) = record::seal(Seq(1), Hash32::GENESIS, record::SCHEMA_CURRENT, &payload);
//! let back = record::open(Seq(1), &bytes).unwrap();
//! assert_eq!(back.content, event);
//! assert_eq!(back.hash, hash);
//! ```
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod body;
pub mod codec;
pub mod ids;
pub mod language;
pub mod limits;
pub mod record;
pub mod schema1;
pub mod validate;

pub use body::*;
pub use ids::{Hash32, RecordId, RecordIdError, RecordKind, Seq, Window};
pub use record::{Event, NewEvent};
pub use validate::{FieldError, Rules};
