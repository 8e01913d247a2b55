//! Book: the application service.
//!
//! [`Book`] is the ledger plus the projections folded from it, and every use case a
//! caller has is one call on it: writes ([`service`]: init, labelled batches, term
//! edit, rollback, all through the one write path of [`Book::submit`]), reads
//! ([`reads`]: glossary, snapshot, diff, rebuild, audit; [`service`]: term history,
//! log, verify) and chunks ([`chunks`]: assemble and record, replay with its
//! byte-equality proof, impact), and the audit page's reads ([`overview`],
//! [`explain`], [`timeline`], [`preview`], [`queue`]: one call per page). Results
//! are plain structs; failures are [`BookError`]s that say their own [`ErrorClass`].
//!
//! It reads and appends through `ledger` and assembles through the pure `assembly`
//! crate; it never calls `embed`, never reads the clock while assembling, and never
//! knows argv, HTTP or JSON.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod adjudicate;
pub mod alarm;
pub mod archive;
pub mod book;
pub mod check;
pub mod chunks;
pub mod error;
pub mod eval;
pub mod examples;
pub mod exchange;
pub mod explain;
pub mod extract;
pub mod governance;
pub mod idempotency;
pub mod interchange;
pub mod library;
pub mod overview;
pub mod preview;
pub mod proxy;
pub mod queue;
pub mod reads;
pub mod records;
pub mod review;
pub mod service;
pub mod source;
pub mod standard;
pub mod timeline;
pub mod tmx;

pub use archive::Copy;
pub use assembly::{assemble, receipt};
pub use book::{
    Book, CheckpointPolicy, Submitted, VerifyPhase, CHECKPOINTS_KEPT, CHECKPOINT_EVERY_EVENTS, CHECKPOINT_EVERY_MS,
    OPEN_LEDGER_BYTES, VERIFY_PROGRESS_EVERY,
};
pub use chunks::{Assembled, Assembler, Chunk};
pub use error::{BookError, ErrorClass};
pub use idempotency::{Claim, Seen};
pub use interchange::{Export, ExportForm, Exported, ImportOptions, ImportPhase, ImportReport};
pub use ledger::Patience;
pub use library::{Library, LibraryLimits, LibraryStatus, OpenBook, Origin};
pub use projections::Reader;
pub use service::{
    Actor, Clear, FieldValue, Initialized, Labelled, RollbackPlan, RuleFields, SummaryFields, TermAction, TermEdit,
    TermField, WriteOptions, Written, TERM_FIELDS,
};
pub use source::{SourceChapter, SourcePut, SourceWritten};
pub use tmx::{TmxExport, TmxOptions};
