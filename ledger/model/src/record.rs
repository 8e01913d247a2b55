//! The stored event record and the hash chain.
//!
//! A record is `header ‖ payload`. The payload is the canonical encoding of a
//! [`NewEvent`] (recorded_at, actor, source, body) under the body schema named in the
//! header. The header is fixed-size, little-endian:
//!
//! | offset | size | field          | meaning                                           |
//! |-------:|-----:|----------------|---------------------------------------------------|
//! | 0      | 2    | format         | record format version, [`RECORD_FORMAT`]          |
//! | 2      | 2    | schema         | body schema version, upcast on read; in format 2, |
//! |        |      |                | bit 15 set on the last event of its batch         |
//! | 4      | 4    | payload_len    | bytes after the header                            |
//! | 8      | 8    | seq            | position in the log, from 1                       |
//! | 16     | 32   | prev           | chain hash of event `seq - 1` (zeroes for seq 1)  |
//! | 48     | 32   | payload_hash   | keyed blake3 of the payload ([`PAYLOAD_CONTEXT`]) |
//!
//! The chain hash of an event is the keyed blake3 ([`CHAIN_CONTEXT`]) of its 80
//! header bytes, so it covers the previous hash, the seq, both versions and (through
//! the payload hash) every payload byte. Each hash domain has its own `derive_key`
//! context, so a payload hash can never be mistaken for a chain hash.

use std::sync::LazyLock;

use blake3::hazmat::{ContextKey, HasherExt};
use serde::{Deserialize, Serialize};

use crate::body::Body;
use crate::codec::{self, CodecError};
use crate::ids::{Hash32, Seq};
use crate::limits::EVENT_BYTES_MAX;

/// Record format version written by this code: 2, format 1 plus the batch-end flag
/// in bit 15 of `schema`.
pub const RECORD_FORMAT: u16 = 2;
/// The first record format: no batch-end flag. Still read, and written by [`seal`].
pub const RECORD_FORMAT_1: u16 = 1;
/// Bit of the stored `schema` field that marks, in record format 2, the last event
/// of its batch.
pub const BATCH_END_BIT: u16 = 0x8000;
/// Body schema version written by this code: 2, the governance fields and kinds.
pub const SCHEMA_CURRENT: u16 = 2;
/// The first body schema, still read (upcast through [`crate::schema1`]).
pub const SCHEMA_1: u16 = 1;
/// Size of the record header.
pub const HEADER_BYTES: usize = 80;
/// blake3 `derive_key` context of payload hashes.
pub const PAYLOAD_CONTEXT: &str = "lorebank 2026-11-29 event payload v1";
/// blake3 `derive_key` context of chain hashes.
pub const CHAIN_CONTEXT: &str = "lorebank 2026-11-29 event chain v1";

const _: () = assert!(HEADER_BYTES == 2 + 2 + 4 + 8 + 32 + 32);
const _: () = assert!(EVENT_BYTES_MAX <= u32::MAX as usize);

/// What an appender supplies: everything of an event except its place in the chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEvent {
    /// Wall-clock time of recording, unix milliseconds. Informational only.
    pub recorded_at_ms: u64,
    /// Who made the change: `human:anna`, `llm:extractor`, `import:galtransl`.
    pub actor: String,
    /// Provenance: `ch12#p3`, a file name, a review ticket.
    pub source: String,
    /// The change.
    pub body: Body,
}

impl NewEvent {
    /// The canonical payload bytes.
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        codec::encode(self)
    }
}

/// An event as read back from the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Position in the log.
    pub seq: Seq,
    /// Chain hash of the previous event.
    pub prev: Hash32,
    /// Chain hash of this event.
    pub hash: Hash32,
    /// Body schema version it was written with (the body is already upcast).
    pub schema: u16,
    /// Envelope and body.
    pub content: NewEvent,
}

/// A decoded record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format 2: whether this is the last event of its batch. `None` in format 1,
    /// which did not record batch boundaries.
    pub batch_end: Option<bool>,
    /// Record format version.
    pub format: u16,
    /// Body schema version.
    pub schema: u16,
    /// Payload length in bytes.
    pub payload_len: u32,
    /// Position in the log.
    pub seq: Seq,
    /// Chain hash of the previous event.
    pub prev: Hash32,
    /// Keyed blake3 of the payload.
    pub payload_hash: Hash32,
}

impl Header {
    /// The header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let mut out = [0u8; HEADER_BYTES];
        out[0..2].copy_from_slice(&self.format.to_le_bytes());
        let flag = if self.batch_end == Some(true) { BATCH_END_BIT } else { 0 };
        out[2..4].copy_from_slice(&(self.schema | flag).to_le_bytes());
        out[4..8].copy_from_slice(&self.payload_len.to_le_bytes());
        out[8..16].copy_from_slice(&self.seq.0.to_le_bytes());
        out[16..48].copy_from_slice(&self.prev.0);
        out[48..80].copy_from_slice(&self.payload_hash.0);
        out
    }

    /// Parses header bytes; checks only the format version.
    pub fn from_bytes(bytes: &[u8; HEADER_BYTES]) -> Result<Header, RecordError> {
        let format = u16::from_le_bytes([bytes[0], bytes[1]]);
        let stored_schema = u16::from_le_bytes([bytes[2], bytes[3]]);
        let (schema, batch_end) = match format {
            RECORD_FORMAT_1 => (stored_schema, None),
            RECORD_FORMAT => (stored_schema & !BATCH_END_BIT, Some(stored_schema & BATCH_END_BIT != 0)),
            _ => return Err(RecordError::UnknownFormat { format }),
        };
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[8..16]);
        let mut prev = [0u8; 32];
        prev.copy_from_slice(&bytes[16..48]);
        let mut payload_hash = [0u8; 32];
        payload_hash.copy_from_slice(&bytes[48..80]);
        Ok(Header {
            batch_end,
            format,
            schema,
            payload_len: u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
            seq: Seq(u64::from_le_bytes(word)),
            prev: Hash32(prev),
            payload_hash: Hash32(payload_hash),
        })
    }

    /// The chain hash of the event this header heads.
    pub fn chain_hash(&self) -> Hash32 {
        chain_hash_of(&self.to_bytes())
    }
}

/// The derive-key context keys, hashed once per process instead of once per hash
/// (`Hasher::new_derive_key` hashes its context string on every call). The hashes
/// are the same: this is blake3's own shortcut for repeated derive-key hashing.
static PAYLOAD_KEY: LazyLock<ContextKey> = LazyLock::new(|| blake3::hazmat::hash_derive_key_context(PAYLOAD_CONTEXT));
static CHAIN_KEY: LazyLock<ContextKey> = LazyLock::new(|| blake3::hazmat::hash_derive_key_context(CHAIN_CONTEXT));

/// The chain hash of a header, from its 80 bytes.
fn chain_hash_of(header: &[u8; HEADER_BYTES]) -> Hash32 {
    let mut hasher = blake3::Hasher::new_from_context_key(&CHAIN_KEY);
    hasher.update(header);
    Hash32(*hasher.finalize().as_bytes())
}

/// The keyed payload hash.
pub fn payload_hash(payload: &[u8]) -> Hash32 {
    let mut hasher = blake3::Hasher::new_from_context_key(&PAYLOAD_KEY);
    hasher.update(payload);
    Hash32(*hasher.finalize().as_bytes())
}

/// Why a stored record cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Shorter than a header.
    #[error("record is {len} bytes, shorter than the {HEADER_BYTES}-byte header")]
    TooShort {
        /// Record length.
        len: usize,
    },
    /// A record format this code does not know.
    #[error("unknown record format {format}")]
    UnknownFormat {
        /// The format version found.
        format: u16,
    },
    /// A body schema this code does not know.
    #[error("unknown body schema {schema}")]
    UnknownSchema {
        /// The schema version found.
        schema: u16,
    },
    /// The header names another seq than the key the record is stored under.
    #[error("header says seq {found}, stored as seq {expected}")]
    SeqMismatch {
        /// Where the record is stored.
        expected: Seq,
        /// What its header says.
        found: Seq,
    },
    /// The payload length in the header is not the length of the payload.
    #[error("header says {header} payload bytes, found {actual}")]
    PayloadLength {
        /// From the header.
        header: u32,
        /// Actual.
        actual: usize,
    },
    /// The payload does not hash to the header's payload hash.
    #[error("payload hash mismatch: header {expected}, payload {actual}")]
    PayloadHash {
        /// From the header.
        expected: Hash32,
        /// Of the payload.
        actual: Hash32,
    },
    /// The payload is not a canonical encoding.
    #[error("payload: {0}")]
    Payload(#[from] CodecError),
}

/// Seals an encoded payload into a record of format 1 ([`RECORD_FORMAT_1`], no
/// batch-end flag) at `seq` after `prev`. Returns the record bytes and the event's
/// chain hash. The ledger writes [`seal_in_batch`] records; this form stays for the
/// golden fixtures and tests of format 1.
///
/// # Panics
/// If the payload is longer than [`EVENT_BYTES_MAX`] (callers encode with
/// [`NewEvent::encode`], which refuses that).
pub fn seal(seq: Seq, prev: Hash32, schema: u16, payload: &[u8]) -> (Vec<u8>, Hash32) {
    seal_header(RECORD_FORMAT_1, None, seq, prev, schema, payload)
}

/// Seals a record of the current format ([`RECORD_FORMAT`]), marking whether it is
/// the last event of its batch, so batch boundaries can be recovered from the log
/// alone. Same preconditions as [`seal`]; `schema` must not use [`BATCH_END_BIT`].
pub fn seal_in_batch(seq: Seq, prev: Hash32, schema: u16, payload: &[u8], batch_end: bool) -> (Vec<u8>, Hash32) {
    assert!(schema & BATCH_END_BIT == 0, "schema uses the batch-end bit");
    seal_header(RECORD_FORMAT, Some(batch_end), seq, prev, schema, payload)
}

/// Writes a record of the current format ([`RECORD_FORMAT`]) into `out`, which must
/// be exactly [`HEADER_BYTES`] plus the payload long (the ledger seals straight into
/// the storage page it reserved). `payload_hash` must be [`payload_hash`] of
/// `payload`, computed by the caller beforehand (off the writer thread). Returns
/// the event's chain hash. The bytes are those [`seal_in_batch`] returns.
///
/// # Panics
/// As [`seal_in_batch`], and if `out` has the wrong length.
pub fn seal_into(
    out: &mut [u8],
    seq: Seq,
    prev: Hash32,
    schema: u16,
    payload: &[u8],
    payload_hash: Hash32,
    batch_end: bool,
) -> Hash32 {
    assert!(schema & BATCH_END_BIT == 0, "schema uses the batch-end bit");
    assert!(payload.len() <= EVENT_BYTES_MAX, "payload over EVENT_BYTES_MAX");
    assert!(seq.0 >= 1, "seq starts at 1");
    assert_eq!(out.len(), HEADER_BYTES + payload.len(), "record buffer length");
    debug_assert_eq!(payload_hash, self::payload_hash(payload));
    let header = Header {
        batch_end: Some(batch_end),
        format: RECORD_FORMAT,
        schema,
        payload_len: payload.len() as u32,
        seq,
        prev,
        payload_hash,
    };
    let (head, body) = out.split_at_mut(HEADER_BYTES);
    let head: &mut [u8; HEADER_BYTES] = head.try_into().expect("split at HEADER_BYTES");
    *head = header.to_bytes();
    body.copy_from_slice(payload);
    chain_hash_of(head)
}

/// Whether a stored record is the last event of its batch: `Some` in record format
/// 2, `None` in format 1. Reads the header only (checked by [`open`]).
pub fn batch_end(record: &[u8]) -> Result<Option<bool>, RecordError> {
    let header_bytes: &[u8; HEADER_BYTES] = record
        .get(..HEADER_BYTES)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or(RecordError::TooShort { len: record.len() })?;
    Ok(Header::from_bytes(header_bytes)?.batch_end)
}

fn seal_header(
    format: u16,
    batch_end: Option<bool>,
    seq: Seq,
    prev: Hash32,
    schema: u16,
    payload: &[u8],
) -> (Vec<u8>, Hash32) {
    assert!(payload.len() <= EVENT_BYTES_MAX, "payload over EVENT_BYTES_MAX");
    assert!(seq.0 >= 1, "seq starts at 1");
    let header = Header {
        batch_end,
        format,
        schema,
        payload_len: payload.len() as u32,
        seq,
        prev,
        payload_hash: payload_hash(payload),
    };
    let mut record = Vec::with_capacity(HEADER_BYTES + payload.len());
    record.extend_from_slice(&header.to_bytes());
    record.extend_from_slice(payload);
    (record, header.chain_hash())
}

/// Opens a record stored under `expected_seq`: checks the header, the payload length
/// and hash, and decodes the payload strictly, upcasting old schemas. Does not check
/// `prev` against the previous event: that is the caller's walk of the chain.
pub fn open(expected_seq: Seq, record: &[u8]) -> Result<Event, RecordError> {
    open_in_batch(expected_seq, record).map(|(event, _)| event)
}

/// [`open`], also saying whether the event ends its batch (as [`batch_end`] does),
/// from the one parse of the header.
pub fn open_in_batch(expected_seq: Seq, record: &[u8]) -> Result<(Event, Option<bool>), RecordError> {
    let checked = check(expected_seq, record)?;
    let batch_end = checked.batch_end;
    Ok((checked.decode()?, batch_end))
}

/// A stored record whose header, payload length and payload hash were checked, and
/// whose chain hash is computed: everything [`open`] does but decoding the payload.
#[derive(Clone, Copy, Debug)]
pub struct Checked<'r> {
    /// Position in the log.
    pub seq: Seq,
    /// Chain hash of the previous event, as the header says.
    pub prev: Hash32,
    /// Chain hash of this event.
    pub hash: Hash32,
    /// Body schema version it was written with.
    pub schema: u16,
    /// Whether it ends its batch (record format 2).
    pub batch_end: Option<bool>,
    /// The payload, not yet decoded.
    pub payload: &'r [u8],
}

impl Checked<'_> {
    /// The event: the payload decoded strictly, upcasting old schemas.
    pub fn decode(&self) -> Result<Event, RecordError> {
        let content = decode_payload(self.schema, self.payload)?;
        Ok(Event { seq: self.seq, prev: self.prev, hash: self.hash, schema: self.schema, content })
    }
}

/// The checks of [`open`] but the payload's decoding (which [`Checked::decode`]
/// does), so a reader can check records on one thread and decode them on another.
pub fn check(expected_seq: Seq, record: &[u8]) -> Result<Checked<'_>, RecordError> {
    let header_bytes: &[u8; HEADER_BYTES] = record
        .get(..HEADER_BYTES)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or(RecordError::TooShort { len: record.len() })?;
    let header = Header::from_bytes(header_bytes)?;
    if header.seq != expected_seq {
        return Err(RecordError::SeqMismatch { expected: expected_seq, found: header.seq });
    }
    let payload = &record[HEADER_BYTES..];
    if header.payload_len as usize != payload.len() {
        return Err(RecordError::PayloadLength { header: header.payload_len, actual: payload.len() });
    }
    let actual = payload_hash(payload);
    if actual != header.payload_hash {
        return Err(RecordError::PayloadHash { expected: header.payload_hash, actual });
    }
    if !matches!(header.schema, SCHEMA_1 | SCHEMA_CURRENT) {
        return Err(RecordError::UnknownSchema { schema: header.schema });
    }
    // `from_bytes` keeps every stored bit, so the stored header bytes are exactly
    // `header.to_bytes()`: hash them as they are.
    let hash = chain_hash_of(header_bytes);
    Ok(Checked {
        seq: header.seq,
        prev: header.prev,
        hash,
        schema: header.schema,
        batch_end: header.batch_end,
        payload,
    })
}

/// The payload bytes `event` was stored with: its content encoded under its own body
/// schema (a schema-1 event as schema 1 wrote it). Sealing them with the event's
/// header fields gives back the stored record.
pub fn stored_payload(event: &Event) -> Result<Vec<u8>, CodecError> {
    match event.schema {
        SCHEMA_1 => {
            let body = event.content.body.to_schema1().ok_or_else(|| {
                CodecError::Encode(format!("a {} of schema 2 has no schema-1 form", event.content.body.kind_name()))
            })?;
            let content = &event.content;
            codec::encode(&crate::schema1::NewEvent {
                recorded_at_ms: content.recorded_at_ms,
                actor: content.actor.clone(),
                source: content.source.clone(),
                body,
            })
        }
        _ => event.content.encode(),
    }
}

/// Decodes a payload written under `schema`, upcasting it to the current body types.
/// Old schemas are read through here forever; stored bytes are never rewritten.
fn decode_payload(schema: u16, payload: &[u8]) -> Result<NewEvent, RecordError> {
    match schema {
        SCHEMA_1 => Ok(codec::decode_strict::<crate::schema1::NewEvent>(payload)?.into()),
        SCHEMA_CURRENT => Ok(codec::decode_strict::<NewEvent>(payload)?),
        _ => Err(RecordError::UnknownSchema { schema }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `open` hashes the stored header bytes instead of re-serializing the parsed
    /// header: sound only if parsing keeps every bit of a header it accepts.
    #[test]
    fn a_parsed_header_serializes_to_its_stored_bytes() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for format in [RECORD_FORMAT_1, RECORD_FORMAT] {
            for _ in 0..1_000 {
                let mut bytes = [0u8; HEADER_BYTES];
                for byte in &mut bytes {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    *byte = state as u8;
                }
                bytes[..2].copy_from_slice(&format.to_le_bytes());
                let header = Header::from_bytes(&bytes).unwrap();
                assert_eq!(header.to_bytes(), bytes);
                assert_eq!(chain_hash_of(&bytes), header.chain_hash());
            }
        }
    }

    #[test]
    fn seal_into_writes_the_bytes_seal_in_batch_returns() {
        let payload = b"payload bytes of an event";
        for batch_end in [false, true] {
            let (expected, hash) = seal_in_batch(Seq(9), Hash32([3; 32]), SCHEMA_CURRENT, payload, batch_end);
            let mut out = vec![0u8; HEADER_BYTES + payload.len()];
            let sealed =
                seal_into(&mut out, Seq(9), Hash32([3; 32]), SCHEMA_CURRENT, payload, payload_hash(payload), batch_end);
            assert_eq!((out, sealed), (expected, hash));
        }
    }

    /// The context keys hashed once give the hashes `derive_key` gives.
    #[test]
    fn hashes_from_context_keys_are_derive_key_hashes() {
        let payload = b"a payload of some bytes";
        assert_eq!(payload_hash(payload).0, blake3::derive_key(PAYLOAD_CONTEXT, payload));
        let header = [7u8; HEADER_BYTES];
        assert_eq!(chain_hash_of(&header).0, blake3::derive_key(CHAIN_CONTEXT, &header));
    }
}
