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
//!
//! Format 3 adds, after every field of format 2, every decision of a cascade (the
//! records the notes and summaries named). It is written only for an assembly whose
//! cascade found something; any other receipt is written in format 2, so a book that
//! does not cascade keeps its receipts byte for byte.
//!
//! Format 4 adds, after every field of format 3 (its cascade list may be empty), the
//! demonstrations shown (render format 3): each example's term, source and target
//! sentences and where they come from. It is written only for an assembly that showed
//! an example, so the texts a replay needs are in the receipt itself.

use ledger_model::codec::{self, CodecError};
use ledger_model::{Hash32, Seq};
use serde::{Deserialize, Serialize};

use crate::assemble::{Disposition, Example, Reason, RetrievalState, Via};
use ledger_model::RecordId;

/// Version of the receipt layout written by this code for an assembly whose cascade
/// found nothing.
pub const RECEIPT_FORMAT: u16 = 2;
/// The receipt layout of an assembly whose cascade found something: format 2 and the
/// cascade's decisions.
pub const RECEIPT_FORMAT_3: u16 = 3;
/// The receipt layout of an assembly that showed demonstrations: format 3's fields
/// (the cascade list may be empty) and the examples.
pub const RECEIPT_FORMAT_4: u16 = 4;
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

/// A record a cascade found, as recorded: which record and version, whose text named
/// it, in which round, and the decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptCascade {
    /// Term number (`T-<term>`).
    pub term: u32,
    /// Seq of the event that put the version of the record in force.
    pub version: u64,
    /// The term whose note, or the summary whose text, named it.
    pub by: RecordId,
    /// The round, from 1.
    pub depth: u8,
    /// The decision.
    pub disposition: Disposition,
    /// Why.
    pub reason: Option<Reason>,
}

/// The durable record of one assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// [`RECEIPT_FORMAT`], [`RECEIPT_FORMAT_3`] when a cascade found something, or
    /// [`RECEIPT_FORMAT_1`] for a receipt read from a book.
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
    /// Format 3: every record a cascade found, with its decision.
    pub cascade: Vec<ReceiptCascade>,
    /// Format 4: the demonstrations shown, in render order.
    pub examples: Vec<Example>,
}

/// The layout of format 1: the fields of [`Receipt`] before `party` (decoded
/// strictly, so it re-encodes too).
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

impl ReceiptV1 {
    /// The receipt of these fields with `party` and `rules` (format 2's), no cascade.
    fn with(self, party: Option<String>, rules: Vec<ReceiptRule>) -> Receipt {
        Receipt {
            format: self.format,
            snapshot: self.snapshot,
            revision: self.revision,
            chapter: self.chapter,
            chunk_key: self.chunk_key,
            input: self.input,
            prev: self.prev,
            sticky_in: self.sticky_in,
            hits: self.hits,
            injected: self.injected,
            evicted: self.evicted,
            summaries: self.summaries,
            recent: self.recent,
            retrieval: self.retrieval,
            render_format: self.render_format,
            output: self.output,
            party,
            rules,
            cascade: Vec::new(),
            examples: Vec::new(),
        }
    }
}

/// The fields of a receipt up to `output` (all of format 1), borrowed: a borrowed
/// string or list encodes as the owned one does, so encoding copies nothing. Later
/// formats add fields after these; a tuple encodes as its parts one after another,
/// as a struct does, so `(Fields1, Fields2)` has format 2's bytes.
#[derive(Serialize)]
struct Fields1<'a> {
    format: u16,
    snapshot: Hash32,
    revision: Seq,
    chapter: u32,
    chunk_key: &'a str,
    input: Hash32,
    prev: Option<Hash32>,
    sticky_in: &'a [u32],
    hits: &'a [ReceiptHit],
    injected: &'a [ReceiptEntry],
    evicted: &'a [u32],
    summaries: &'a [u32],
    recent: &'a [Vec<u32>],
    retrieval: RetrievalState,
    render_format: u16,
    output: Hash32,
}

/// Format 2's fields, borrowed: format 1's, then the party and the rules. (A struct
/// encodes as its fields one after another, so format 2's bytes are format 1's
/// followed by these two.)
#[derive(Serialize)]
struct Fields2<'a> {
    party: Option<&'a str>,
    rules: &'a [ReceiptRule],
}

impl Receipt {
    /// Canonical bytes, in the receipt's own format.
    ///
    /// # Panics
    /// If a format-1 receipt names a party, rules or cascade decisions, a format-2
    /// receipt cascade decisions, or a receipt of a format before 4 examples, which
    /// their formats cannot hold (a receipt read from their bytes has none).
    pub fn encode(&self) -> Vec<u8> {
        let v1 = Fields1 {
            format: self.format,
            snapshot: self.snapshot,
            revision: self.revision,
            chapter: self.chapter,
            chunk_key: &self.chunk_key,
            input: self.input,
            prev: self.prev,
            sticky_in: &self.sticky_in,
            hits: &self.hits,
            injected: &self.injected,
            evicted: &self.evicted,
            summaries: &self.summaries,
            recent: &self.recent,
            retrieval: self.retrieval,
            render_format: self.render_format,
            output: self.output,
        };
        assert!(self.format == RECEIPT_FORMAT_4 || self.examples.is_empty(), "only format 4 holds examples");
        if self.format == RECEIPT_FORMAT_1 {
            assert!(
                self.party.is_none() && self.rules.is_empty() && self.cascade.is_empty(),
                "a format-1 receipt holds no party, no rules and no cascade"
            );
            return codec::encode_large(&v1).expect("receipts always encode");
        }
        let v2 = (v1, Fields2 { party: self.party.as_deref(), rules: &self.rules });
        if self.format == RECEIPT_FORMAT {
            assert!(self.cascade.is_empty(), "a format-2 receipt holds no cascade");
            return codec::encode_large(&v2).expect("receipts always encode");
        }
        if self.format == RECEIPT_FORMAT_3 {
            return codec::encode_large(&(v2.0, v2.1, &self.cascade)).expect("receipts always encode");
        }
        codec::encode_large(&(v2.0, v2.1, &self.cascade, &self.examples)).expect("receipts always encode")
    }

    /// Decodes canonical bytes strictly, of either format (the first field, a
    /// one-byte varint for both, says which).
    pub fn decode(bytes: &[u8]) -> Result<Receipt, CodecError> {
        match bytes.first() {
            Some(&format) if u16::from(format) == RECEIPT_FORMAT_1 => {
                let v1: ReceiptV1 = codec::decode_large_strict(bytes)?;
                Ok(v1.with(None, Vec::new()))
            }
            // Format 2 is format 1's fields, then the party and the rules.
            Some(&format) if u16::from(format) == RECEIPT_FORMAT => {
                let (v1, party, rules): (ReceiptV1, Option<String>, Vec<ReceiptRule>) =
                    codec::decode_large_strict(bytes)?;
                Ok(v1.with(party, rules))
            }
            Some(&format) if u16::from(format) == RECEIPT_FORMAT_3 => {
                let (v1, party, rules, cascade): (ReceiptV1, Option<String>, Vec<ReceiptRule>, Vec<ReceiptCascade>) =
                    codec::decode_large_strict(bytes)?;
                // Format 3 is written only for a cascade that found something: the same
                // receipt in format 3 with an empty list would be a second id.
                if cascade.is_empty() {
                    return Err(CodecError::Decode("a format-3 receipt with no cascade decisions".into()));
                }
                Ok(Receipt { cascade, ..v1.with(party, rules) })
            }
            Some(&format) if u16::from(format) == RECEIPT_FORMAT_4 => {
                let receipt: Receipt = codec::decode_large_strict(bytes)?;
                // Format 4 is written only for an assembly that showed an example.
                if receipt.examples.is_empty() {
                    return Err(CodecError::Decode("a format-4 receipt with no examples".into()));
                }
                Ok(receipt)
            }
            Some(&format) => Err(CodecError::Decode(format!("unknown receipt format {format}"))),
            None => Err(CodecError::Decode("empty receipt".into())),
        }
    }

    /// The content-addressed id.
    pub fn id(&self) -> Hash32 {
        Hash32(blake3::derive_key(RECEIPT_CONTEXT, &self.encode()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(format: u16, cascade: Vec<ReceiptCascade>) -> Receipt {
        Receipt {
            format,
            snapshot: Hash32([1; 32]),
            revision: Seq(7),
            chapter: 2,
            chunk_key: "c1".into(),
            input: Hash32([2; 32]),
            prev: None,
            sticky_in: Vec::new(),
            hits: Vec::new(),
            injected: vec![ReceiptEntry { term: 2, version: 3, via: Via::Cascade, unverified: false }],
            evicted: Vec::new(),
            summaries: Vec::new(),
            recent: Vec::new(),
            retrieval: RetrievalState::default(),
            render_format: 2,
            output: Hash32([3; 32]),
            party: Some("tool:pipeline".into()),
            rules: Vec::new(),
            cascade,
            examples: Vec::new(),
        }
    }

    fn example() -> Example {
        Example {
            term: 2,
            source: "沈照看着顾寒川。".into(),
            target: "Шэнь Чжао смотрела на Гу Ханьчуаня.".into(),
            chapter: 1,
            receipt: Hash32([4; 32]),
            check: Hash32([5; 32]),
        }
    }

    fn found() -> ReceiptCascade {
        ReceiptCascade {
            term: 2,
            version: 3,
            by: "T-1".parse().unwrap(),
            depth: 1,
            disposition: Disposition::Confirmed,
            reason: None,
        }
    }

    #[test]
    fn formats_2_and_3_decode_to_what_encoded_them() {
        for receipt in [receipt(RECEIPT_FORMAT, Vec::new()), receipt(RECEIPT_FORMAT_3, vec![found()])] {
            let bytes = receipt.encode();
            assert_eq!(u16::from(bytes[0]), receipt.format);
            assert_eq!(Receipt::decode(&bytes).unwrap(), receipt);
        }
        // Format 2 is format 3 without its last field: the same receipt without a
        // cascade keeps the bytes it had before format 3 existed.
        let two = receipt(RECEIPT_FORMAT, Vec::new()).encode();
        let three = receipt(RECEIPT_FORMAT_3, vec![found()]).encode();
        assert_eq!(two[1..], three[1..two.len()]);
    }

    #[test]
    fn format_4_is_format_3_with_the_examples_after_it() {
        for cascade in [Vec::new(), vec![found()]] {
            let four = Receipt { examples: vec![example()], ..receipt(RECEIPT_FORMAT_4, cascade.clone()) };
            let bytes = four.encode();
            assert_eq!(u16::from(bytes[0]), RECEIPT_FORMAT_4);
            assert_eq!(Receipt::decode(&bytes).unwrap(), four);
            if !cascade.is_empty() {
                let three = receipt(RECEIPT_FORMAT_3, cascade).encode();
                assert_eq!(three[1..], bytes[1..three.len()]);
            }
        }
    }

    #[test]
    fn a_format_4_receipt_without_examples_is_refused() {
        let mut bytes = receipt(RECEIPT_FORMAT_3, vec![found()]).encode();
        bytes.push(0); // an empty list of examples
        bytes[0] = RECEIPT_FORMAT_4 as u8;
        let error = Receipt::decode(&bytes).unwrap_err();
        assert!(error.to_string().contains("no examples"), "{error}");
    }

    #[test]
    fn a_format_3_receipt_without_a_cascade_is_refused() {
        let mut bytes = receipt(RECEIPT_FORMAT, Vec::new()).encode();
        bytes.push(0); // an empty list
        bytes[0] = RECEIPT_FORMAT_3 as u8;
        let error = Receipt::decode(&bytes).unwrap_err();
        assert!(error.to_string().contains("no cascade"), "{error}");
    }
}
