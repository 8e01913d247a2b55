//! Receipts: the durable record of one assembly, content-addressed.
//!
//! A receipt names the snapshot and revision it was assembled at, the chunk, the
//! input (by content id; the text itself is stored in the book), the previous receipt
//! whose recent hits made records sticky, every hit with its decision and the version
//! of the record, what was injected, evicted and summarized, the retrieval counts and
//! the content id of the output. It holds no timestamp: assembling the same chunk
//! against the same snapshot gives the same receipt, stored once.
//!
//! Encoding: ledger-model's canonical codec (bincode 2.0.1, fixed configuration),
//! decoded strictly. The id is the keyed blake3 ([`RECEIPT_CONTEXT`]) of those bytes.

use ledger_model::codec::{self, CodecError};
use ledger_model::{Hash32, Seq};
use serde::{Deserialize, Serialize};

use crate::assemble::{Disposition, Reason, RetrievalState, Via};

/// Version of the receipt layout below.
pub const RECEIPT_FORMAT: u16 = 1;
/// blake3 `derive_key` context of receipt ids.
pub const RECEIPT_CONTEXT: &str = "lorebank 2026-11-29 receipt v1";
/// blake3 `derive_key` context of stored texts (chunk inputs, assembled contexts).
pub const TEXT_CONTEXT: &str = "lorebank 2026-11-29 text v1";

/// Content id of a text.
pub fn text_id(text: &str) -> Hash32 {
    Hash32(blake3::derive_key(TEXT_CONTEXT, text.as_bytes()))
}

/// A hit as recorded: which record and version, where, and the decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptHit {
    /// Term number (`T-<term>`).
    pub term: u32,
    /// Seq of the event that put the version of the record in force.
    pub version: u64,
    /// The surface as written in the chunk.
    pub text: String,
    /// Byte span in the chunk.
    pub bytes: (u32, u32),
    /// Char span in the chunk.
    pub chars: (u32, u32),
    /// The decision.
    pub disposition: Disposition,
    /// Why.
    pub reason: Option<Reason>,
}

/// An injected entry as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptEntry {
    /// Term number.
    pub term: u32,
    /// Seq of the event that put the version injected.
    pub version: u64,
    /// How it got in.
    pub via: Via,
    /// Marked `[unverified]`.
    pub unverified: bool,
}

/// The durable record of one assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// [`RECEIPT_FORMAT`].
    pub format: u16,
    /// Snapshot ID assembled against.
    pub snapshot: Hash32,
    /// Revision of the book when assembled (its snapshot is `snapshot`).
    pub revision: Seq,
    /// Chapter.
    pub chapter: u32,
    /// Chunk key within the chapter.
    pub chunk_key: String,
    /// Content id of the chunk text.
    pub input: Hash32,
    /// The previous receipt of the chapter that fed the sticky set.
    pub prev: Option<Hash32>,
    /// Sticky records carried in.
    pub sticky_in: Vec<u32>,
    /// Every hit with its decision.
    pub hits: Vec<ReceiptHit>,
    /// Injected entries in render order.
    pub injected: Vec<ReceiptEntry>,
    /// Evicted by the budget.
    pub evicted: Vec<u32>,
    /// Summaries included.
    pub summaries: Vec<u32>,
    /// Recent hits passed on to the next chunk.
    pub recent: Vec<Vec<u32>>,
    /// Counts.
    pub retrieval: RetrievalState,
    /// Render format of the output.
    pub render_format: u16,
    /// Content id of the output (the injected context).
    pub output: Hash32,
}

impl Receipt {
    /// Canonical bytes.
    pub fn encode(&self) -> Vec<u8> {
        codec::encode_large(self).expect("receipts always encode")
    }

    /// Decodes canonical bytes strictly.
    pub fn decode(bytes: &[u8]) -> Result<Receipt, CodecError> {
        codec::decode_large_strict(bytes)
    }

    /// The content-addressed id.
    pub fn id(&self) -> Hash32 {
        Hash32(blake3::derive_key(RECEIPT_CONTEXT, &self.encode()))
    }
}
