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
//!
//! Format 2 adds, after every field of format 1, the party the context was assembled
//! for (`None`: the book's full view) and the decision on every rule in scope. A
//! format-1 receipt is still read (its first field says which layout follows) and
//! encodes to its own bytes, so its id holds; it was assembled for the full view
//! with no rules.

use ledger_model::codec::{self, CodecError};
use ledger_model::{Hash32, Seq};
use serde::{Deserialize, Serialize};

use crate::assemble::{Disposition, Reason, RetrievalState, Via};

/// Version of the receipt layout written by this code.
pub const RECEIPT_FORMAT: u16 = 2;
/// The first receipt layout: no party, no rules. Still read.
pub const RECEIPT_FORMAT_1: u16 = 1;
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

/// A rule in scope as recorded: which rule and version, and the decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptRule {
    /// Rule number (`R-<rule>`).
    pub rule: u32,
    /// Seq of the event that put the version of the rule in force.
    pub version: u64,
    /// The decision: injected unless rejected.
    pub disposition: Disposition,
    /// Why.
    pub reason: Option<Reason>,
}

/// The durable record of one assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// [`RECEIPT_FORMAT`], or [`RECEIPT_FORMAT_1`] for a receipt read from a book.
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
    /// Format 2: the party it was assembled for; `None`, the book's full view.
    pub party: Option<String>,
    /// Format 2: every rule in scope with its decision.
    pub rules: Vec<ReceiptRule>,
}

/// The layout of format 1: the fields of [`Receipt`] before `party`.
#[derive(Serialize, Deserialize)]
struct ReceiptV1 {
    format: u16,
    snapshot: Hash32,
    revision: Seq,
    chapter: u32,
    chunk_key: String,
    input: Hash32,
    prev: Option<Hash32>,
    sticky_in: Vec<u32>,
    hits: Vec<ReceiptHit>,
    injected: Vec<ReceiptEntry>,
    evicted: Vec<u32>,
    summaries: Vec<u32>,
    recent: Vec<Vec<u32>>,
    retrieval: RetrievalState,
    render_format: u16,
    output: Hash32,
}

impl Receipt {
    /// Canonical bytes, in the receipt's own format.
    ///
    /// # Panics
    /// If a format-1 receipt names a party or rules, which format 1 cannot hold (a
    /// receipt read from format-1 bytes has neither).
    pub fn encode(&self) -> Vec<u8> {
        if self.format == RECEIPT_FORMAT_1 {
            assert!(self.party.is_none() && self.rules.is_empty(), "a format-1 receipt holds no party and no rules");
            let v1 = ReceiptV1 {
                format: self.format,
                snapshot: self.snapshot,
                revision: self.revision,
                chapter: self.chapter,
                chunk_key: self.chunk_key.clone(),
                input: self.input,
                prev: self.prev,
                sticky_in: self.sticky_in.clone(),
                hits: self.hits.clone(),
                injected: self.injected.clone(),
                evicted: self.evicted.clone(),
                summaries: self.summaries.clone(),
                recent: self.recent.clone(),
                retrieval: self.retrieval,
                render_format: self.render_format,
                output: self.output,
            };
            return codec::encode_large(&v1).expect("receipts always encode");
        }
        codec::encode_large(self).expect("receipts always encode")
    }

    /// Decodes canonical bytes strictly, of either format (the first field, a
    /// one-byte varint for both, says which).
    pub fn decode(bytes: &[u8]) -> Result<Receipt, CodecError> {
        match bytes.first() {
            Some(&format) if u16::from(format) == RECEIPT_FORMAT_1 => {
                let v1: ReceiptV1 = codec::decode_large_strict(bytes)?;
                Ok(Receipt {
                    format: v1.format,
                    snapshot: v1.snapshot,
                    revision: v1.revision,
                    chapter: v1.chapter,
                    chunk_key: v1.chunk_key,
                    input: v1.input,
                    prev: v1.prev,
                    sticky_in: v1.sticky_in,
                    hits: v1.hits,
                    injected: v1.injected,
                    evicted: v1.evicted,
                    summaries: v1.summaries,
                    recent: v1.recent,
                    retrieval: v1.retrieval,
                    render_format: v1.render_format,
                    output: v1.output,
                    party: None,
                    rules: Vec::new(),
                })
            }
            Some(&format) if u16::from(format) == RECEIPT_FORMAT => codec::decode_large_strict(bytes),
            Some(&format) => Err(CodecError::Decode(format!("unknown receipt format {format}"))),
            None => Err(CodecError::Decode("empty receipt".into())),
        }
    }

    /// The content-addressed id.
    pub fn id(&self) -> Hash32 {
        Hash32(blake3::derive_key(RECEIPT_CONTEXT, &self.encode()))
    }
}
