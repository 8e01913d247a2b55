//! Checkpoints: a folded [`State`] as bytes, with its snapshot ID, so a book opens by
//! decoding its newest checkpoint and folding only the events after it.
//!
//! A checkpoint is derived data and is never trusted on its word. The ledger stores
//! it under the revision and chain hash it was taken at, with a checksum, and hands
//! it out only while both still hold; [`decode`] then refuses bytes of another format
//! or that do not decode to exactly one state. A refused checkpoint is dropped and
//! the state refolded from the log, which gives the same result, only slower.
//!
//! The bytes are [`codec::encode_large`] of a versioned document: the format, the
//! snapshot ID of the state, and the state itself (every field, so a decoded state
//! equals the folded one: `checkpoint + tail = full fold`).

use ledger_model::codec::{self, CodecError};
use ledger_model::Hash32;
use serde::{Deserialize, Serialize};

use crate::snapshot::SnapshotId;
use crate::state::State;

/// Version of the checkpoint layout: the document below and the serde form of
/// [`State`]. A change of either bumps it; checkpoints of another format are dropped
/// and rewritten, never upcast (they are derived). Format 2: the state of schema 2
/// (rules, governance, expected concepts, summary provenance). Format 3: the
/// embedding model and the candidates' related terms. Format 4: the book's languages.
/// Format 5: the book's source text by chapter. Format 6: the book's proxy template.
/// Format 7: the prompts of the book's model jobs and the model parties' policies.
/// Format 8: the book's cascading activation. Format 9: the terms always and never
/// offered a demonstration.
pub const CHECKPOINT_FORMAT: u16 = 9;

#[derive(Serialize)]
struct DocRef<'s> {
    format: u16,
    snapshot: Hash32,
    state: &'s State,
}

#[derive(Deserialize)]
struct Doc {
    format: u16,
    snapshot: Hash32,
    state: State,
}

/// Why checkpoint bytes were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The bytes are not one checkpoint document.
    #[error("does not decode: {0}")]
    Decode(#[from] CodecError),
    /// Written by another version of the layout.
    #[error("is of checkpoint format {found}, this program reads format {CHECKPOINT_FORMAT}")]
    Format {
        /// The format the bytes say.
        found: u16,
    },
}

/// The checkpoint bytes of `state`, whose snapshot ID is `snapshot`.
pub fn encode(state: &State, snapshot: SnapshotId) -> Vec<u8> {
    codec::encode_large(&DocRef { format: CHECKPOINT_FORMAT, snapshot: snapshot.0, state })
        .expect("states always encode: no maps with non-string keys, no floats")
}

/// The state and snapshot ID a checkpoint holds.
pub fn decode(bytes: &[u8]) -> Result<(State, SnapshotId), CheckpointError> {
    let doc: Doc = codec::decode_derived(bytes)?;
    if doc.format != CHECKPOINT_FORMAT {
        return Err(CheckpointError::Format { found: doc.format });
    }
    Ok((doc.state, SnapshotId(doc.snapshot)))
}
