//! The canonical codec: the one bincode configuration every hashed byte goes through.
//!
//! bincode is pinned at `=2.0.1` (its 2.0 wire format is frozen). The configuration
//! is `standard()` spelled out: little-endian, variable-length integers, a decode
//! limit of [`EVENT_BYTES_MAX`]. bincode is deterministic but not canonical: its
//! decoder accepts overlong varints. [`decode_strict`] therefore re-encodes what it
//! decoded and rejects bytes that differ, so every value has exactly one encoding.
//! No type encoded here contains a hash map or a float.

use bincode::config::{Configuration, Limit, LittleEndian, Varint};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::limits::EVENT_BYTES_MAX;

/// The type of [`CONFIG`].
pub type CodecConfig = Configuration<LittleEndian, Varint, Limit<EVENT_BYTES_MAX>>;

/// The canonical bincode configuration. Changing it changes every hash in every book.
pub const CONFIG: CodecConfig =
    bincode::config::standard().with_little_endian().with_variable_int_encoding().with_limit::<EVENT_BYTES_MAX>();

/// Why bytes are not the canonical encoding of a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The value encodes to more than [`EVENT_BYTES_MAX`] bytes.
    #[error("encoded value is {len} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Encoded length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// bincode refused to encode the value.
    #[error("cannot encode: {0}")]
    Encode(String),
    /// bincode could not decode the bytes.
    #[error("cannot decode: {0}")]
    Decode(String),
    /// The value ended before the bytes did.
    #[error("{trailing} trailing bytes after the value")]
    Trailing {
        /// How many bytes were left over.
        trailing: usize,
    },
    /// The bytes decode, but are not the canonical encoding of what they decode to.
    #[error("bytes are not the canonical encoding of their value")]
    NonCanonical,
    /// A value's encoding decodes to a different value (see [`encode_checked`]).
    #[error("the encoding does not decode to the value it encodes")]
    NotRoundTrip,
}

/// The configuration for large derived documents (snapshots): [`CONFIG`] without the
/// per-event size limit. Same wire format, so the same canonical rules hold.
pub const LARGE_CONFIG: Configuration<LittleEndian, Varint> =
    bincode::config::standard().with_little_endian().with_variable_int_encoding();

/// Encodes a large derived document (a snapshot) canonically, without the event limit.
pub fn encode_large<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    bincode::serde::encode_to_vec(value, LARGE_CONFIG).map_err(|error| CodecError::Encode(error.to_string()))
}

/// Largest derived document (receipt) [`decode_large_strict`] accepts. The decode
/// limit also bounds what a forged length prefix can make the decoder allocate.
pub const DOCUMENT_BYTES_MAX: usize = 64 * 1024 * 1024;

/// The decoding configuration for derived documents: [`LARGE_CONFIG`] with a limit.
const LARGE_DECODE_CONFIG: Configuration<LittleEndian, Varint, Limit<DOCUMENT_BYTES_MAX>> =
    LARGE_CONFIG.with_limit::<DOCUMENT_BYTES_MAX>();

/// Decodes a large derived document strictly (see [`decode_strict`]).
pub fn decode_large_strict<T: Serialize + DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    if bytes.len() > DOCUMENT_BYTES_MAX {
        return Err(CodecError::TooLarge { len: bytes.len(), limit: DOCUMENT_BYTES_MAX });
    }
    let (value, consumed): (T, usize) = bincode::serde::decode_from_slice(bytes, LARGE_DECODE_CONFIG)
        .map_err(|error| CodecError::Decode(error.to_string()))?;
    if consumed != bytes.len() {
        return Err(CodecError::Trailing { trailing: bytes.len() - consumed });
    }
    if encode_large(&value)? != bytes {
        return Err(CodecError::NonCanonical);
    }
    Ok(value)
}

/// Largest derived document [`decode_derived`] accepts (a checkpoint of a state).
pub const DERIVED_BYTES_MAX: usize = 1 << 30;

/// The decoding configuration for [`decode_derived`].
const DERIVED_DECODE_CONFIG: Configuration<LittleEndian, Varint, Limit<DERIVED_BYTES_MAX>> =
    LARGE_CONFIG.with_limit::<DERIVED_BYTES_MAX>();

/// Decodes a derived document written by [`encode_large`] whose bytes are already
/// covered by a checksum (a checkpoint): the whole input must be one value, but the
/// re-encoding check of [`decode_large_strict`] is left out, because nothing hashes
/// what this decodes to (a checkpoint's id is the hash of its bytes).
pub fn decode_derived<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    if bytes.len() > DERIVED_BYTES_MAX {
        return Err(CodecError::TooLarge { len: bytes.len(), limit: DERIVED_BYTES_MAX });
    }
    let (value, consumed): (T, usize) = bincode::serde::decode_from_slice(bytes, DERIVED_DECODE_CONFIG)
        .map_err(|error| CodecError::Decode(error.to_string()))?;
    if consumed != bytes.len() {
        return Err(CodecError::Trailing { trailing: bytes.len() - consumed });
    }
    Ok(value)
}

/// Encodes `value` canonically.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let bytes = bincode::serde::encode_to_vec(value, CONFIG).map_err(|error| CodecError::Encode(error.to_string()))?;
    if bytes.len() > EVENT_BYTES_MAX {
        return Err(CodecError::TooLarge { len: bytes.len(), limit: EVENT_BYTES_MAX });
    }
    Ok(bytes)
}

/// Encodes `value` canonically and checks that the bytes decode back to it, so that
/// [`decode_strict`] will accept them: what is written must read back as written.
///
/// This is the strict decode without its re-encode, and the check is the same:
/// encoding is a function of the value, and the decoded value equals `value` (the
/// encoded types have no floats, so equal values encode alike), so re-encoding it
/// would give back exactly these bytes.
pub fn encode_checked<T: Serialize + DeserializeOwned + PartialEq>(value: &T) -> Result<Vec<u8>, CodecError> {
    let mut bytes = Vec::new();
    encode_checked_into(value, &mut bytes)?;
    Ok(bytes)
}

/// [`encode_checked`], appending the bytes to `out` (so many values can share one
/// buffer). On error, `out` is left as it was.
pub fn encode_checked_into<T: Serialize + DeserializeOwned + PartialEq>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    let start = out.len();
    let checked = append_checked(value, out, start);
    if checked.is_err() {
        out.truncate(start);
    }
    checked
}

fn append_checked<T: Serialize + DeserializeOwned + PartialEq>(
    value: &T,
    out: &mut Vec<u8>,
    start: usize,
) -> Result<(), CodecError> {
    bincode::serde::encode_into_std_write(value, out, CONFIG).map_err(|error| CodecError::Encode(error.to_string()))?;
    let bytes = &out[start..];
    if bytes.len() > EVENT_BYTES_MAX {
        return Err(CodecError::TooLarge { len: bytes.len(), limit: EVENT_BYTES_MAX });
    }
    let (back, consumed): (T, usize) =
        bincode::serde::decode_from_slice(bytes, CONFIG).map_err(|error| CodecError::Decode(error.to_string()))?;
    if consumed != bytes.len() {
        return Err(CodecError::Trailing { trailing: bytes.len() - consumed });
    }
    if back != *value {
        return Err(CodecError::NotRoundTrip);
    }
    Ok(())
}

/// Decodes `bytes`, which must be exactly the canonical encoding of one value.
pub fn decode_strict<T: Serialize + DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    if bytes.len() > EVENT_BYTES_MAX {
        return Err(CodecError::TooLarge { len: bytes.len(), limit: EVENT_BYTES_MAX });
    }
    let (value, consumed): (T, usize) =
        bincode::serde::decode_from_slice(bytes, CONFIG).map_err(|error| CodecError::Decode(error.to_string()))?;
    if consumed != bytes.len() {
        return Err(CodecError::Trailing { trailing: bytes.len() - consumed });
    }
    reencodes_to(&value, bytes)?;
    Ok(value)
}

/// Whether `value` encodes to exactly `bytes`: the re-encode of [`decode_strict`],
/// compared as it is written instead of collected into a second buffer (the same
/// check, without an allocation and a copy per decoded value).
fn reencodes_to<T: Serialize>(value: &T, bytes: &[u8]) -> Result<(), CodecError> {
    let mut writer = Compare { rest: bytes, differs: false };
    match bincode::serde::encode_into_writer(value, &mut writer, CONFIG) {
        Ok(()) if writer.rest.is_empty() => Ok(()),
        Ok(()) => Err(CodecError::NonCanonical),
        Err(_) if writer.differs => Err(CodecError::NonCanonical),
        Err(error) => Err(CodecError::Encode(error.to_string())),
    }
}

/// A bincode writer that compares what is written with the bytes it expects.
struct Compare<'a> {
    rest: &'a [u8],
    differs: bool,
}

impl bincode::enc::write::Writer for Compare<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), bincode::error::EncodeError> {
        match self.rest.split_at_checked(bytes.len()) {
            Some((head, tail)) if head == bytes => {
                self.rest = tail;
                Ok(())
            }
            _ => {
                self.differs = true;
                Err(bincode::error::EncodeError::Other("the re-encoding differs from the bytes"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlong_varints_are_rejected() {
        // 5 as a one-byte varint is canonical; 251 followed by a u16 is the same value
        // spelled long, which bincode itself accepts.
        assert_eq!(decode_strict::<u64>(&[5]), Ok(5));
        assert_eq!(bincode::serde::decode_from_slice::<u64, _>(&[251, 5, 0], CONFIG).map(|(v, _)| v).ok(), Some(5));
        assert_eq!(decode_strict::<u64>(&[251, 5, 0]), Err(CodecError::NonCanonical));
    }

    #[test]
    fn a_reencoding_that_is_shorter_or_differs_is_not_canonical() {
        // The comparing writer must catch a re-encoding that differs in a byte, ends
        // early, or runs past the bytes, exactly as comparing two buffers would.
        assert_eq!(reencodes_to(&5u64, &[5]), Ok(()));
        assert_eq!(reencodes_to(&5u64, &[6]), Err(CodecError::NonCanonical));
        assert_eq!(reencodes_to(&5u64, &[5, 0]), Err(CodecError::NonCanonical));
        assert_eq!(reencodes_to(&300u64, &[251]), Err(CodecError::NonCanonical));
        assert_eq!(reencodes_to(&"ab", &[2, b'a', b'b']), Ok(()));
        assert_eq!(reencodes_to(&"ab", &[2, b'a', b'c']), Err(CodecError::NonCanonical));
    }

    /// A value whose decode validates what its encode does not check: its encoding
    /// does not read back, and `encode_checked` refuses it where `encode` does not.
    #[derive(Debug, PartialEq, serde::Serialize)]
    struct Positive(i64);

    impl<'de> serde::Deserialize<'de> for Positive {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Positive, D::Error> {
            let value = i64::deserialize(deserializer)?;
            if value <= 0 {
                return Err(serde::de::Error::custom("not positive"));
            }
            Ok(Positive(value.min(100)))
        }
    }

    #[test]
    fn encode_checked_refuses_what_would_not_read_back() {
        let bytes = encode_checked(&Positive(7)).unwrap();
        assert_eq!(decode_strict::<Positive>(&bytes), Ok(Positive(7)));
        assert!(encode(&Positive(-1)).is_ok());
        assert!(matches!(encode_checked(&Positive(-1)), Err(CodecError::Decode(_))));
        assert_eq!(encode_checked(&Positive(500)), Err(CodecError::NotRoundTrip));
        let mut shared = vec![9u8];
        encode_checked_into(&Positive(7), &mut shared).unwrap();
        assert_eq!(encode_checked_into(&Positive(500), &mut shared), Err(CodecError::NotRoundTrip));
        assert_eq!(shared, [vec![9u8], encode(&Positive(7)).unwrap()].concat());
    }

    #[test]
    fn trailing_bytes_are_rejected() {
        assert_eq!(decode_strict::<u8>(&[1, 2]), Err(CodecError::Trailing { trailing: 1 }));
    }

    #[test]
    fn oversized_input_is_rejected_before_decoding() {
        let bytes = vec![0u8; EVENT_BYTES_MAX + 1];
        assert!(matches!(decode_strict::<Vec<u8>>(&bytes), Err(CodecError::TooLarge { .. })));
    }
}
