//! Identifiers and small value types: sequence numbers, hashes, record ids, chapter
//! windows. Each is a newtype so a seq cannot be passed where a chapter is meant.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Position of an event in the log, dense from 1. `Seq(0)` is the head of an empty
/// ledger; as a revision, `as_of = R` means "the ledger as it stood after event R".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seq(pub u64);

impl Seq {
    /// The head of an empty ledger.
    pub const ZERO: Seq = Seq(0);

    /// The seq after this one.
    ///
    /// # Panics
    /// At `u64::MAX`, which no ledger reaches.
    pub fn next(self) -> Seq {
        Seq(self.0.checked_add(1).expect("seq overflow"))
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A 32-byte blake3 hash: chain hashes, payload hashes, content ids.
///
/// In human-readable formats (JSON) it is 64 lowercase hex digits; in the canonical
/// binary codec it is 32 raw bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hash32(pub [u8; 32]);

impl Hash32 {
    /// All zeroes: the `prev` of event 1.
    pub const GENESIS: Hash32 = Hash32([0; 32]);

    /// Lowercase hex, 64 digits.
    pub fn to_hex(&self) -> String {
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
            out.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
        }
        out
    }

    /// Parses exactly 64 hex digits (either case).
    pub fn from_hex(text: &str) -> Option<Hash32> {
        let digits = text.as_bytes();
        if digits.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (byte_idx, pair) in digits.chunks_exact(2).enumerate() {
            let high = (pair[0] as char).to_digit(16)?;
            let low = (pair[1] as char).to_digit(16)?;
            out[byte_idx] = u8::try_from(high * 16 + low).ok()?;
        }
        Some(Hash32(out))
    }
}

impl fmt::Debug for Hash32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash32({})", self.to_hex())
    }
}

impl fmt::Display for Hash32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for Hash32 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&self.to_hex())
        } else {
            self.0.serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Hash32 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            Hash32::from_hex(&text)
                .ok_or_else(|| serde::de::Error::custom(format!("not a 64-digit hex hash: {text:?}")))
        } else {
            <[u8; 32]>::deserialize(deserializer).map(Hash32)
        }
    }
}

/// The kind of a record, the letter before the dash of its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecordKind {
    /// `T-…`: a glossary term.
    Term,
    /// `S-…`: a summary.
    Summary,
    /// `C-…`: a review candidate.
    Candidate,
    /// `R-…`: a rule (a translation instruction).
    Rule,
}

impl RecordKind {
    /// The id prefix letter.
    pub fn letter(self) -> char {
        match self {
            RecordKind::Term => 'T',
            RecordKind::Summary => 'S',
            RecordKind::Candidate => 'C',
            RecordKind::Rule => 'R',
        }
    }

    fn from_letter(letter: u8) -> Option<RecordKind> {
        match letter {
            b'T' => Some(RecordKind::Term),
            b'S' => Some(RecordKind::Summary),
            b'C' => Some(RecordKind::Candidate),
            b'R' => Some(RecordKind::Rule),
            _ => None,
        }
    }

    /// The noun used in messages.
    pub fn noun(self) -> &'static str {
        match self {
            RecordKind::Term => "term",
            RecordKind::Summary => "summary",
            RecordKind::Candidate => "candidate",
            RecordKind::Rule => "rule",
        }
    }
}

/// A stable, hand-typed record id: `T-412`, `S-12`, `C-77`, `R-3`.
///
/// The number is 1..=999_999_999 written without leading zeros, so every id has
/// exactly one spelling. Ordered by kind, then number (`T-9` < `T-10`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordId {
    kind: RecordKind,
    number: u32,
}

/// Largest record number.
pub const RECORD_NUMBER_MAX: u32 = 999_999_999;

impl RecordId {
    /// An id from parts; `None` when the number is 0 or above [`RECORD_NUMBER_MAX`].
    pub fn new(kind: RecordKind, number: u32) -> Option<RecordId> {
        (1..=RECORD_NUMBER_MAX).contains(&number).then_some(RecordId { kind, number })
    }

    /// The kind (`T`, `S`, `C` or `R`).
    pub fn kind(self) -> RecordKind {
        self.kind
    }

    /// The number after the dash.
    pub fn number(self) -> u32 {
        self.number
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` honours width and alignment (`{:<6}`) in tables.
        f.pad(&format!("{}-{}", self.kind.letter(), self.number))
    }
}

/// Why a string is not a record id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordIdError {
    /// The text that failed to parse.
    pub text: String,
}

impl fmt::Display for RecordIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid record id {:?}: expected T-, S-, C- or R- followed by a number 1..={} without leading zeros",
            self.text, RECORD_NUMBER_MAX
        )
    }
}

impl std::error::Error for RecordIdError {}

impl FromStr for RecordId {
    type Err = RecordIdError;

    fn from_str(text: &str) -> Result<RecordId, RecordIdError> {
        let error = || RecordIdError { text: text.to_owned() };
        let bytes = text.as_bytes();
        if bytes.len() < 3 || bytes[1] != b'-' {
            return Err(error());
        }
        let kind = RecordKind::from_letter(bytes[0]).ok_or_else(error)?;
        let digits = &text[2..];
        if digits.len() > 9 || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error());
        }
        let number: u32 = digits.parse().map_err(|_| error())?;
        RecordId::new(kind, number).ok_or_else(error)
    }
}

impl Serialize for RecordId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            (self.kind.letter() as u8, self.number).serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for RecordId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            text.parse().map_err(serde::de::Error::custom)
        } else {
            let (letter, number) = <(u8, u32)>::deserialize(deserializer)?;
            RecordKind::from_letter(letter)
                .and_then(|kind| RecordId::new(kind, number))
                .ok_or_else(|| serde::de::Error::custom(format!("invalid record id ({letter}, {number})")))
        }
    }
}

/// A chapter window `since ..= until` (story time, the spoiler gate). Chapters are
/// numbered from 1; `until: None` is open-ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    /// First chapter the record applies to.
    #[serde(default = "first_chapter")]
    pub since: u32,
    /// Last chapter the record applies to; `None` means to the end of the book.
    #[serde(default)]
    pub until: Option<u32>,
}

fn first_chapter() -> u32 {
    1
}

impl Default for Window {
    fn default() -> Window {
        Window { since: 1, until: None }
    }
}

impl Window {
    /// Whether `chapter` lies inside the window.
    pub fn contains(&self, chapter: u32) -> bool {
        self.since <= chapter && self.until.is_none_or(|until| chapter <= until)
    }

    /// Whether two windows share at least one chapter.
    pub fn overlaps(&self, other: &Window) -> bool {
        let end_a = self.until.unwrap_or(u32::MAX);
        let end_b = other.until.unwrap_or(u32::MAX);
        self.since <= end_b && other.since <= end_a
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.until {
            Some(until) => write!(f, "ch {}..={}", self.since, until),
            None => write!(f, "ch {}..", self.since),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_ids_have_one_spelling() {
        for good in ["T-1", "S-12", "C-77", "R-3", "T-999999999"] {
            let id: RecordId = good.parse().unwrap();
            assert_eq!(id.to_string(), good);
        }
        for bad in ["", "T", "T-", "T-0", "T-012", "t-1", "r-1", "X-1", "T-1x", "T--1", "T-1000000000", "T-+1", " T-1"]
        {
            assert!(bad.parse::<RecordId>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn record_ids_order_numerically() {
        let nine: RecordId = "T-9".parse().unwrap();
        let ten: RecordId = "T-10".parse().unwrap();
        assert!(nine < ten);
    }

    #[test]
    fn hash_hex_round_trips() {
        let hash = Hash32(core::array::from_fn(|idx| (idx * 7) as u8));
        assert_eq!(Hash32::from_hex(&hash.to_hex()), Some(hash));
        assert_eq!(Hash32::from_hex("zz"), None);
        assert_eq!(Hash32::from_hex(&"g".repeat(64)), None);
    }

    #[test]
    fn windows_contain_and_overlap() {
        let early = Window { since: 1, until: Some(120) };
        let late = Window { since: 121, until: None };
        assert!(early.contains(120) && !early.contains(121));
        assert!(late.contains(121) && late.contains(u32::MAX) && !late.contains(120));
        assert!(!early.overlaps(&late) && !late.overlaps(&early));
        let middle = Window { since: 100, until: Some(130) };
        assert!(early.overlaps(&middle) && late.overlaps(&middle));
    }
}
