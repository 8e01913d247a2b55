//! Leftmost-longest, non-overlapping matching of folded glossary keys, and the frozen
//! (serialized, hash-checked) form of the automaton.
//!
//! # Frozen byte layout, format version 1
//!
//! All integers little-endian; reserved bytes zero.
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `LBNA` |
//! | 4 | 2 | format version, `1` |
//! | 6 | 2 | reserved, zero |
//! | 8 | 32 | body hash: blake3 `derive_key(AUTOMATON_ID_CONTEXT, body)` |
//! | 40 | 8 | `body_len` |
//! | 48 | `body_len` | body |
//!
//! Body:
//!
//! | size | field |
//! | --- | --- |
//! | 32 | profile id the keys were folded with |
//! | 4 | flags: bit 0 word boundaries; other bits zero |
//! | 4 | `n_patterns` |
//! | 4 | `n_values` |
//! | 4 | `pattern_bytes_len` |
//! | 4 | `daachorse_len` |
//! | 4 × `n_patterns` | end offset of each pattern in the pattern bytes |
//! | 4 × `n_patterns` | end index of each pattern's posting list in the values |
//! | 4 × `n_values` | values (posting lists, each strictly increasing) |
//! | `pattern_bytes_len` | patterns, UTF-8, strictly increasing, concatenated |
//! | `daachorse_len` | daachorse `CharwiseDoubleArrayAhoCorasick<u32>::serialize()`, value = pattern index |
//!
//! The hash is checked before anything else is read, so damaged bytes never reach
//! daachorse. The hash proves integrity, not origin: whoever can write the bytes can
//! recompute it. daachorse's checked deserializer guarantees memory safety, not a
//! correct automaton, so the match kind is checked on load and every match it reports
//! is checked against the pattern table before use: a forged automaton can lose hits,
//! but it cannot make the matcher panic or report a pattern that is not in the text.

use std::collections::BTreeMap;
use std::fmt;

use daachorse::{CharwiseDoubleArrayAhoCorasick, CharwiseDoubleArrayAhoCorasickBuilder, MatchKind};

use crate::normalize::NormalizedText;
use crate::offset::{NormByte, NormSpan, SrcSpan};
use crate::profile::{Profile, ProfileId};
use crate::unicode::is_word_char;

/// Most distinct folded patterns in one matcher.
pub const PATTERNS_MAX: usize = 1 << 21;
/// Most chars in one folded pattern.
pub const PATTERN_CHARS_MAX: usize = 256;
/// Most (pattern, value) pairs in one matcher, after merging duplicates.
pub const VALUES_MAX: usize = 1 << 24;
/// Largest frozen matcher accepted by [`Matcher::from_bytes`].
pub const FROZEN_BYTES_MAX: usize = 1 << 30;
/// Magic bytes at the start of a frozen matcher.
pub const FROZEN_MAGIC: [u8; 4] = *b"LBNA";
/// The frozen byte-layout version this crate writes and reads.
pub const FROZEN_FORMAT_VERSION: u16 = 1;
/// The blake3 `derive_key` context of the frozen body hash ([`AutomatonId`]).
pub const AUTOMATON_ID_CONTEXT: &str = "lorebank 2026-11 frozen automaton v1";

const FROZEN_HEADER_LEN: usize = 48;
const BODY_FIXED_LEN: usize = 52;
const FLAG_WORD_BOUNDARIES: u32 = 1;

/// Index of a distinct folded pattern in a [`Matcher`] (patterns are sorted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PatternId(u32);

impl PatternId {
    /// The id of the pattern at `index` (patterns are sorted; ids are dense from 0).
    /// An id is only meaningful for the matcher it came from.
    pub fn new(index: u32) -> PatternId {
        PatternId(index)
    }

    /// The index as `u32`.
    pub fn as_u32(self) -> u32 {
        self.0
    }

    /// The index as `usize`.
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
}

/// The name of a frozen matcher: the blake3 body hash stored in its header. Store it
/// beside the bytes (outside them) and load with [`Matcher::from_bytes_with_id`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AutomatonId(pub [u8; 32]);

impl fmt::Display for AutomatonId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for AutomatonId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AutomatonId({self})")
    }
}

/// Why a matcher could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A key folds to nothing, or to whitespace only.
    #[error("key {key_index} ({key:?}) folds to an empty or blank pattern")]
    EmptyKey {
        /// Position of the key in the input.
        key_index: usize,
        /// The key as given.
        key: String,
    },
    /// A folded key is longer than [`PATTERN_CHARS_MAX`].
    #[error("key {key_index} folds to {n_chars} chars, limit {limit}")]
    KeyTooLong {
        /// Position of the key in the input.
        key_index: usize,
        /// Chars after folding.
        n_chars: usize,
        /// The limit.
        limit: usize,
    },
    /// More distinct folded patterns than [`PATTERNS_MAX`].
    #[error("{n_patterns} distinct patterns exceed the limit of {limit}")]
    TooManyPatterns {
        /// Count (so far).
        n_patterns: usize,
        /// The limit.
        limit: usize,
    },
    /// More (pattern, value) pairs than [`VALUES_MAX`].
    #[error("{n_values} key values exceed the limit of {limit}")]
    TooManyValues {
        /// Count (so far).
        n_values: usize,
        /// The limit.
        limit: usize,
    },
    /// daachorse refused to build the automaton.
    #[error("automaton build failed: {message}")]
    Automaton {
        /// daachorse's message.
        message: String,
    },
}

/// Why frozen bytes were refused by [`Matcher::from_bytes`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrozenLoadError {
    /// Fewer bytes than a section needs.
    #[error("frozen matcher truncated: {section} needs {needed} bytes, {available} available")]
    Truncated {
        /// The section.
        section: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left.
        available: u64,
    },
    /// More bytes than [`FROZEN_BYTES_MAX`].
    #[error("frozen matcher of {n_bytes} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Size given.
        n_bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The magic bytes are not `LBNA`.
    #[error("not a frozen matcher: magic {found:02x?}, expected {expected:02x?}")]
    BadMagic {
        /// Found.
        found: [u8; 4],
        /// Expected.
        expected: [u8; 4],
    },
    /// A format version this crate does not read.
    #[error("unsupported frozen matcher version {found}, this build reads {supported}")]
    UnsupportedVersion {
        /// Found.
        found: u16,
        /// Supported.
        supported: u16,
    },
    /// The body hash does not match the header (or the id the caller expected).
    #[error("frozen matcher hash mismatch: expected {expected}, computed {actual}")]
    HashMismatch {
        /// Hash expected.
        expected: AutomatonId,
        /// Hash of the bytes.
        actual: AutomatonId,
    },
    /// The keys were folded with another profile than the one given.
    #[error("frozen matcher was built with profile {built_with}, not {given}")]
    ProfileMismatch {
        /// Profile recorded in the bytes.
        built_with: ProfileId,
        /// Profile given to the loader.
        given: ProfileId,
    },
    /// A field that violates the layout.
    #[error("invalid frozen matcher field {field}: {value}")]
    BadField {
        /// Field.
        field: &'static str,
        /// Offending value.
        value: u64,
    },
    /// daachorse refused the automaton bytes.
    #[error("frozen automaton rejected by daachorse: {message}")]
    Automaton {
        /// daachorse's message.
        message: String,
    },
}

/// One match: which pattern, where in the original text, where in the folded text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The folded pattern that matched; its values are [`Matcher::values`].
    pub pattern: PatternId,
    /// Span in the original text (bytes and chars).
    pub src: SrcSpan,
    /// Span in the folded text.
    pub norm: NormSpan,
}

/// A leftmost-longest search engine over a matcher's patterns (pattern index =
/// [`PatternId`]). [`Matcher`] implements it with daachorse; tests and fuzzers plug in
/// `aho-corasick` to check that every engine yields the same hits.
pub trait LeftmostLongest {
    /// The leftmost occurrence of any pattern starting at or after byte `from` of
    /// `haystack`, the longest one at that start: `(pattern, start, end)` in bytes of
    /// `haystack`.
    fn find_from(&self, haystack: &str, from: usize) -> Option<(PatternId, usize, usize)>;
}

/// Builds a [`Matcher`] from (key, value) pairs.
///
/// Keys are folded with the profile; keys that fold to the same pattern are merged and
/// their values form that pattern's posting list (sorted, deduplicated).
#[derive(Clone, Debug)]
pub struct MatcherBuilder {
    profile: Profile,
    word_boundaries: bool,
    patterns_max: usize,
}

impl MatcherBuilder {
    /// A builder folding keys with `profile`.
    pub fn new(profile: &Profile) -> MatcherBuilder {
        MatcherBuilder { profile: profile.clone(), word_boundaries: true, patterns_max: PATTERNS_MAX }
    }

    /// Refuse to build more than `n` distinct patterns (capped at [`PATTERNS_MAX`],
    /// the default). A glossary that outgrows its budget fails loudly instead of
    /// building a slow automaton.
    pub fn patterns_max(&mut self, n: usize) -> &mut Self {
        self.patterns_max = n.min(PATTERNS_MAX);
        self
    }

    /// Require word boundaries around patterns that start (end) with a word char of a
    /// script written with spaces (Latin, Cyrillic, Greek, digits): `lin` does not match
    /// inside `violin`. CJK, kana and Hangul keys match anywhere. Default on; off gives
    /// plain substring semantics for every key.
    pub fn word_boundaries(&mut self, on: bool) -> &mut Self {
        self.word_boundaries = on;
        self
    }

    /// Fold the keys and build the automaton.
    pub fn build<I, K>(&self, keys: I) -> Result<Matcher, BuildError>
    where
        I: IntoIterator<Item = (K, u32)>,
        K: AsRef<str>,
    {
        let mut postings: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut n_values = 0usize;
        for (key_index, (key, value)) in keys.into_iter().enumerate() {
            let key = key.as_ref();
            if key.chars().count() > PATTERN_CHARS_MAX * 4 {
                return Err(BuildError::KeyTooLong {
                    key_index,
                    n_chars: key.chars().count(),
                    limit: PATTERN_CHARS_MAX,
                });
            }
            let folded = self.profile.fold(key);
            if folded.trim().is_empty() {
                return Err(BuildError::EmptyKey { key_index, key: key.to_string() });
            }
            let n_chars = folded.chars().count();
            if n_chars > PATTERN_CHARS_MAX {
                return Err(BuildError::KeyTooLong { key_index, n_chars, limit: PATTERN_CHARS_MAX });
            }
            n_values += 1;
            if n_values > VALUES_MAX {
                return Err(BuildError::TooManyValues { n_values, limit: VALUES_MAX });
            }
            if !postings.contains_key(&folded) && postings.len() >= self.patterns_max {
                return Err(BuildError::TooManyPatterns { n_patterns: postings.len() + 1, limit: self.patterns_max });
            }
            postings.entry(folded).or_default().push(value);
        }
        let mut table = PatternTable::default();
        for (pattern, mut values) in postings {
            values.sort_unstable();
            values.dedup();
            table.patterns.push_str(&pattern);
            table.pattern_ends.push(table.patterns.len() as u32);
            table.values.extend_from_slice(&values);
            table.posting_ends.push(table.values.len() as u32);
        }
        let pma = if table.pattern_ends.is_empty() {
            None
        } else {
            let patvals = (0..table.pattern_ends.len()).map(|idx| (table.pattern(idx), idx as u32));
            Some(
                CharwiseDoubleArrayAhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build_with_values(patvals)
                    .map_err(|e| BuildError::Automaton { message: e.to_string() })?,
            )
        };
        Ok(Matcher::assemble(self.profile.clone(), self.word_boundaries, table, pma))
    }
}

#[derive(Default)]
struct PatternTable {
    patterns: String,
    pattern_ends: Vec<u32>,
    values: Vec<u32>,
    posting_ends: Vec<u32>,
}

impl PatternTable {
    fn pattern(&self, idx: usize) -> &str {
        let start = if idx == 0 { 0 } else { self.pattern_ends[idx - 1] as usize };
        &self.patterns[start..self.pattern_ends[idx] as usize]
    }

    fn values(&self, idx: usize) -> &[u32] {
        let start = if idx == 0 { 0 } else { self.posting_ends[idx - 1] as usize };
        &self.values[start..self.posting_ends[idx] as usize]
    }

    fn find(&self, pattern: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.pattern_ends.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.pattern(mid).cmp(pattern) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}

/// A frozen set of folded patterns with posting lists, searched leftmost-longest.
pub struct Matcher {
    profile: Profile,
    word_boundaries: bool,
    table: PatternTable,
    /// Per pattern: bit 0 = needs a word boundary before, bit 1 = after.
    bounds: Vec<u8>,
    pma: Option<CharwiseDoubleArrayAhoCorasick<u32>>,
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Matcher")
            .field("profile", &self.profile.id())
            .field("word_boundaries", &self.word_boundaries)
            .field("n_patterns", &self.n_patterns())
            .field("n_values", &self.table.values.len())
            .finish()
    }
}

impl Matcher {
    /// Bytes the matcher holds on the heap: its pattern table and automaton (the
    /// automaton's own count), not its profile. An estimate for a cache's budget.
    pub fn heap_bytes(&self) -> usize {
        let table = self.table.patterns.capacity()
            + 4 * (self.table.pattern_ends.capacity()
                + self.table.values.capacity()
                + self.table.posting_ends.capacity());
        table + self.bounds.capacity() + self.pma.as_ref().map_or(0, |pma| pma.heap_bytes())
    }
}

impl LeftmostLongest for Matcher {
    #[inline]
    fn find_from(&self, haystack: &str, from: usize) -> Option<(PatternId, usize, usize)> {
        let pma = self.pma.as_ref()?;
        let m = pma.leftmost_find_iter(haystack.get(from..)?).next()?;
        let end = from + m.end();
        // A forged automaton may name a pattern that starts before `from`: no match.
        let (pattern, start) = self.verified(haystack, m.value(), end).filter(|&(_, start)| start >= from)?;
        Some((pattern, start, end))
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, section: &'static str) -> Result<&'a [u8], FrozenLoadError> {
        let available = (self.bytes.len() - self.pos) as u64;
        if n > available {
            return Err(FrozenLoadError::Truncated { section, needed: n, available });
        }
        let out = &self.bytes[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(out)
    }

    fn u32(&mut self, section: &'static str) -> Result<u32, FrozenLoadError> {
        let b = self.take(4, section)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u32s(&mut self, n: u32, section: &'static str) -> Result<Vec<u32>, FrozenLoadError> {
        let bytes = self.take(u64::from(n) * 4, section)?;
        Ok(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }
}

fn bad(field: &'static str, value: u64) -> FrozenLoadError {
    FrozenLoadError::BadField { field, value }
}

/// Check that `ends` is strictly increasing and ends at `total`.
fn check_ends(ends: &[u32], total: u32, field: &'static str) -> Result<(), FrozenLoadError> {
    let mut prev = 0u32;
    for &end in ends {
        if end <= prev {
            return Err(bad(field, u64::from(end)));
        }
        prev = end;
    }
    if prev != total {
        return Err(bad(field, u64::from(prev)));
    }
    Ok(())
}

impl Matcher {
    fn assemble(
        profile: Profile,
        word_boundaries: bool,
        table: PatternTable,
        pma: Option<CharwiseDoubleArrayAhoCorasick<u32>>,
    ) -> Matcher {
        let bounds = (0..table.pattern_ends.len())
            .map(|idx| {
                let pattern = table.pattern(idx);
                let mut bits = 0u8;
                if word_boundaries {
                    if pattern.chars().next().is_some_and(is_word_char) {
                        bits |= 1;
                    }
                    if pattern.chars().next_back().is_some_and(is_word_char) {
                        bits |= 2;
                    }
                }
                bits
            })
            .collect();
        Matcher { profile, word_boundaries, table, bounds, pma }
    }

    /// The profile the keys were folded with (fold text with it before matching).
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Whether word boundaries are enforced (see [`MatcherBuilder::word_boundaries`]).
    pub fn word_boundaries(&self) -> bool {
        self.word_boundaries
    }

    /// Number of distinct folded patterns.
    pub fn n_patterns(&self) -> usize {
        self.table.pattern_ends.len()
    }

    /// Every pattern id, in pattern order.
    pub fn pattern_ids(&self) -> impl Iterator<Item = PatternId> + '_ {
        (0..self.n_patterns() as u32).map(PatternId)
    }

    /// The folded text of a pattern.
    ///
    /// # Panics
    ///
    /// If `id` is not from this matcher.
    pub fn pattern(&self, id: PatternId) -> &str {
        self.table.pattern(id.as_usize())
    }

    /// The values (posting list) of a pattern: every value given with a key that folds
    /// to it, sorted and deduplicated.
    ///
    /// # Panics
    ///
    /// If `id` is not from this matcher.
    pub fn values(&self, id: PatternId) -> &[u32] {
        self.table.values(id.as_usize())
    }

    /// The pattern a key folds to, if it is in the matcher.
    pub fn lookup(&self, key: &str) -> Option<PatternId> {
        self.table.find(&self.profile.fold(key)).map(|idx| PatternId(idx as u32))
    }

    /// All hits in a normalized text: leftmost-longest, non-overlapping, in order.
    ///
    /// At each position the longest pattern that starts there, satisfies its word
    /// boundaries and starts and ends on segment boundaries of the offset map wins;
    /// the search resumes after it. `text` must come from this matcher's profile.
    pub fn find(&self, text: &NormalizedText<'_>) -> Vec<Hit> {
        let Some(pma) = self.pma.as_ref() else {
            return Vec::new();
        };
        let norm = text.as_str();
        let mut hits: Vec<Hit> = Vec::new();
        let mut hint = 0usize;
        let mut pos = 0usize;
        // One daachorse pass; restarted only after a rejected candidate.
        'restart: while pos < norm.len() {
            for m in pma.leftmost_find_iter(&norm[pos..]) {
                let end = pos + m.end();
                // Where the next hit may start: after the last one, and not before
                // this pass.
                let floor = hits.last().map_or(pos, |hit| hit.norm.end.as_usize().max(pos));
                let verified = self.verified(norm, m.value(), end).filter(|&(_, start)| start >= floor);
                let Some((pattern, start)) = verified else {
                    // Only an automaton this crate did not build reports what is not
                    // there, or a match that starts inside the last hit; skip past it
                    // rather than trust its offsets.
                    let past = end.max(floor);
                    pos = if past > pos { past } else { pos + norm[pos..].chars().next().map_or(1, char::len_utf8) };
                    continue 'restart;
                };
                if let Some(hit) = self.accept(text, pattern, start, end, &mut hint) {
                    hits.push(hit);
                    continue;
                }
                pos = match self.shorter_at(text, pattern, start, &mut hint) {
                    Some(hit) => {
                        hits.push(hit);
                        hit.norm.end.as_usize()
                    }
                    None => start + norm[start..].chars().next().map_or(1, char::len_utf8),
                };
                continue 'restart;
            }
            break;
        }
        // Postcondition: hits in text order, without overlap, each its pattern's text
        // (a walk over the hits: debug builds only, matching stays fast).
        debug_assert!(self.hits_hold(text, &hits), "hits are in text order, non-overlapping and in bounds");
        hits
    }

    /// Whether `hits` are in text order without overlap, each the text of its pattern
    /// in the folded text and mapped into the source, in the same order.
    fn hits_hold(&self, text: &NormalizedText<'_>, hits: &[Hit]) -> bool {
        let norm = text.as_str();
        let mut before: Option<&Hit> = None;
        for hit in hits {
            let holds = hit.pattern.as_usize() < self.n_patterns()
                && norm.get(hit.norm.bytes()) == Some(self.pattern(hit.pattern))
                && text.holds_in_source(&hit.src)
                && before.is_none_or(|before| before.norm.end <= hit.norm.start && before.src.end <= hit.src.start);
            if !holds {
                return false;
            }
            before = Some(hit);
        }
        true
    }

    /// The pattern a daachorse match names and its start, if the value is a pattern
    /// of this matcher and that pattern ends at `end` in `norm`. Always so for an
    /// automaton built from the pattern table; checked because the frozen form's hash
    /// proves integrity, not origin, so the match's value and length are not trusted
    /// as indexes.
    #[inline]
    fn verified(&self, norm: &str, value: u32, end: usize) -> Option<(PatternId, usize)> {
        if value as usize >= self.table.pattern_ends.len() {
            return None;
        }
        let pattern = self.table.pattern(value as usize);
        let start = end.checked_sub(pattern.len())?;
        (norm.as_bytes().get(start..end)? == pattern.as_bytes()).then_some((PatternId(value), start))
    }

    /// The longest pattern shorter than `pattern` that starts at `start` and passes.
    /// Every such pattern is a prefix of `pattern`.
    fn shorter_at(&self, text: &NormalizedText<'_>, pattern: PatternId, start: usize, hint: &mut usize) -> Option<Hit> {
        let full = self.pattern(pattern);
        let shorter = full.char_indices().rev().filter(|&(k, _)| k > 0).find_map(|(k, _)| {
            let idx = self.table.find(&full[..k])?;
            self.accept(text, PatternId(idx as u32), start, start + k, hint)
        });
        // Postcondition: the fallback is a shorter pattern at the same start.
        assert!(
            shorter
                .is_none_or(|hit| hit.norm.start.as_usize() == start && hit.norm.end.as_usize() < start + full.len()),
            "a shorter hit starts where the longer pattern did"
        );
        shorter
    }

    /// [`Matcher::find`] with another engine (same semantics; for differential tests).
    /// The engine must keep the contract of [`LeftmostLongest::find_from`]; debug
    /// builds check that the hits it yields are in order and do not overlap.
    pub fn find_with<E: LeftmostLongest + ?Sized>(&self, engine: &E, text: &NormalizedText<'_>) -> Vec<Hit> {
        let norm = text.as_str();
        let mut hits = Vec::new();
        let mut hint = 0usize;
        let mut pos = 0usize;
        while pos < norm.len() {
            let Some((pattern, start, end)) = engine.find_from(norm, pos) else {
                break;
            };
            if let Some(hit) = self.accept(text, pattern, start, end, &mut hint) {
                hits.push(hit);
                pos = end;
                continue;
            }
            match self.shorter_at(text, pattern, start, &mut hint) {
                Some(hit) => {
                    pos = hit.norm.end.as_usize();
                    hits.push(hit);
                }
                None => pos = start + norm[start..].chars().next().map_or(1, char::len_utf8),
            }
        }
        debug_assert!(self.hits_hold(text, &hits), "hits are in text order, non-overlapping and in bounds");
        hits
    }

    /// Reference implementation of [`Matcher::find`]: tries every pattern at every
    /// position (O(text × patterns)). For differential tests and fuzzers.
    pub fn find_naive(&self, text: &NormalizedText<'_>) -> Vec<Hit> {
        let norm = text.as_str();
        let mut hits = Vec::new();
        let mut pos = 0usize;
        while pos < norm.len() {
            let rest = &norm[pos..];
            let mut best: Option<Hit> = None;
            for idx in 0..self.n_patterns() {
                let pattern = self.table.pattern(idx);
                let longer = best.is_none_or(|b| pattern.len() > b.norm.end.as_usize() - pos);
                if longer && rest.starts_with(pattern) {
                    let mut hint = 0usize;
                    if let Some(hit) = self.accept(text, PatternId(idx as u32), pos, pos + pattern.len(), &mut hint) {
                        best = Some(hit);
                    }
                }
            }
            match best {
                Some(hit) => {
                    pos = hit.norm.end.as_usize();
                    hits.push(hit);
                }
                None => pos += rest.chars().next().map_or(1, char::len_utf8),
            }
        }
        debug_assert!(self.hits_hold(text, &hits), "hits are in text order, non-overlapping and in bounds");
        hits
    }

    #[inline]
    fn accept(
        &self,
        text: &NormalizedText<'_>,
        pattern: PatternId,
        start: usize,
        end: usize,
        hint: &mut usize,
    ) -> Option<Hit> {
        let norm = text.as_str();
        let bounds = *self.bounds.get(pattern.as_usize())?;
        if bounds & 1 != 0 && norm[..start].chars().next_back().is_some_and(is_word_char) {
            return None;
        }
        if bounds & 2 != 0 && norm[end..].chars().next().is_some_and(is_word_char) {
            return None;
        }
        let span = NormSpan { start: NormByte(u32::try_from(start).ok()?), end: NormByte(u32::try_from(end).ok()?) };
        let src = text.src_span_hinted(span, hint)?;
        Some(Hit { pattern, src, norm: span })
    }

    fn body(&self) -> Vec<u8> {
        let automaton = self.pma.as_ref().map(|pma| pma.serialize()).unwrap_or_default();
        let n_patterns = self.table.pattern_ends.len();
        let mut body = Vec::with_capacity(
            BODY_FIXED_LEN + n_patterns * 8 + self.table.values.len() * 4 + self.table.patterns.len() + automaton.len(),
        );
        body.extend_from_slice(&self.profile.id().0);
        let flags = if self.word_boundaries { FLAG_WORD_BOUNDARIES } else { 0 };
        body.extend_from_slice(&flags.to_le_bytes());
        body.extend_from_slice(&(n_patterns as u32).to_le_bytes());
        body.extend_from_slice(&(self.table.values.len() as u32).to_le_bytes());
        body.extend_from_slice(&(self.table.patterns.len() as u32).to_le_bytes());
        body.extend_from_slice(&(automaton.len() as u32).to_le_bytes());
        for list in [&self.table.pattern_ends, &self.table.posting_ends, &self.table.values] {
            for value in list.iter() {
                body.extend_from_slice(&value.to_le_bytes());
            }
        }
        body.extend_from_slice(self.table.patterns.as_bytes());
        body.extend_from_slice(&automaton);
        body
    }

    /// Serialize ("freeze") the matcher; deterministic: equal inputs, equal bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let body = self.body();
        let hash = blake3::derive_key(AUTOMATON_ID_CONTEXT, &body);
        let mut out = Vec::with_capacity(FROZEN_HEADER_LEN + body.len());
        out.extend_from_slice(&FROZEN_MAGIC);
        out.extend_from_slice(&FROZEN_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&hash);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// The id of the frozen form (the body hash in [`Matcher::to_bytes`]).
    pub fn automaton_id(&self) -> AutomatonId {
        AutomatonId(blake3::derive_key(AUTOMATON_ID_CONTEXT, &self.body()))
    }

    /// Load a frozen matcher, checking its embedded hash first, then every field.
    /// `profile` must be the profile the keys were folded with.
    ///
    /// Never panics or hangs on arbitrary bytes: they fail the hash check.
    pub fn from_bytes(bytes: &[u8], profile: &Profile) -> Result<Matcher, FrozenLoadError> {
        Self::load(bytes, profile, None)
    }

    /// [`Matcher::from_bytes`], also requiring the body hash to equal `expected` (an id
    /// stored outside the bytes, e.g. in the snapshot manifest).
    pub fn from_bytes_with_id(
        bytes: &[u8],
        profile: &Profile,
        expected: &AutomatonId,
    ) -> Result<Matcher, FrozenLoadError> {
        Self::load(bytes, profile, Some(expected))
    }

    fn load(bytes: &[u8], profile: &Profile, expected: Option<&AutomatonId>) -> Result<Matcher, FrozenLoadError> {
        if bytes.len() > FROZEN_BYTES_MAX {
            return Err(FrozenLoadError::TooLarge { n_bytes: bytes.len(), limit: FROZEN_BYTES_MAX });
        }
        let mut reader = Reader { bytes, pos: 0 };
        let header = reader.take(FROZEN_HEADER_LEN as u64, "header")?;
        let magic = [header[0], header[1], header[2], header[3]];
        if magic != FROZEN_MAGIC {
            return Err(FrozenLoadError::BadMagic { found: magic, expected: FROZEN_MAGIC });
        }
        let version = u16::from_le_bytes([header[4], header[5]]);
        if version != FROZEN_FORMAT_VERSION {
            return Err(FrozenLoadError::UnsupportedVersion { found: version, supported: FROZEN_FORMAT_VERSION });
        }
        if header[6] != 0 || header[7] != 0 {
            return Err(bad("reserved bytes 6..8", u64::from(u16::from_le_bytes([header[6], header[7]]))));
        }
        let mut stored = [0u8; 32];
        stored.copy_from_slice(&header[8..40]);
        let stored = AutomatonId(stored);
        let mut body_len = [0u8; 8];
        body_len.copy_from_slice(&header[40..48]);
        let body_len = u64::from_le_bytes(body_len);
        let body = reader.take(body_len, "body")?;
        if reader.pos != bytes.len() {
            return Err(bad("trailing bytes", (bytes.len() - reader.pos) as u64));
        }
        // Hash first: nothing below runs on bytes this crate did not write.
        let actual = AutomatonId(blake3::derive_key(AUTOMATON_ID_CONTEXT, body));
        let expected = *expected.unwrap_or(&stored);
        if actual != expected || actual != stored {
            return Err(FrozenLoadError::HashMismatch { expected, actual });
        }

        let mut reader = Reader { bytes: body, pos: 0 };
        let mut built_with = [0u8; 32];
        built_with.copy_from_slice(reader.take(32, "profile id")?);
        let built_with = ProfileId(built_with);
        if built_with != profile.id() {
            return Err(FrozenLoadError::ProfileMismatch { built_with, given: profile.id() });
        }
        let flags = reader.u32("flags")?;
        if flags & !FLAG_WORD_BOUNDARIES != 0 {
            return Err(bad("flags", u64::from(flags)));
        }
        let n_patterns = reader.u32("n_patterns")?;
        let n_values = reader.u32("n_values")?;
        let pattern_bytes_len = reader.u32("pattern_bytes_len")?;
        let daachorse_len = reader.u32("daachorse_len")?;
        if n_patterns as usize > PATTERNS_MAX {
            return Err(bad("n_patterns", u64::from(n_patterns)));
        }
        if n_values as usize > VALUES_MAX || n_values < n_patterns {
            return Err(bad("n_values", u64::from(n_values)));
        }
        let pattern_ends = reader.u32s(n_patterns, "pattern ends")?;
        let posting_ends = reader.u32s(n_patterns, "posting ends")?;
        let values = reader.u32s(n_values, "values")?;
        let patterns = reader.take(u64::from(pattern_bytes_len), "patterns")?;
        let automaton = reader.take(u64::from(daachorse_len), "automaton")?;
        if reader.pos != body.len() {
            return Err(bad("trailing body bytes", (body.len() - reader.pos) as u64));
        }
        check_ends(&pattern_ends, pattern_bytes_len, "pattern ends")?;
        check_ends(&posting_ends, n_values, "posting ends")?;
        let patterns =
            std::str::from_utf8(patterns).map_err(|e| bad("patterns utf-8", e.valid_up_to() as u64))?.to_string();
        let table = PatternTable { patterns, pattern_ends, values, posting_ends };
        let mut previous: Option<&str> = None;
        for idx in 0..n_patterns as usize {
            let start = if idx == 0 { 0 } else { table.pattern_ends[idx - 1] as usize };
            let end = table.pattern_ends[idx] as usize;
            let Some(pattern) = table.patterns.get(start..end) else {
                return Err(bad("pattern char boundary", end as u64));
            };
            if pattern.chars().count() > PATTERN_CHARS_MAX {
                return Err(bad("pattern length", idx as u64));
            }
            if previous.is_some_and(|p| p >= pattern) {
                return Err(bad("patterns not strictly increasing", idx as u64));
            }
            previous = Some(pattern);
            if table.values(idx).windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad("posting list not strictly increasing", idx as u64));
            }
        }
        let pma = if n_patterns == 0 {
            if daachorse_len != 0 {
                return Err(bad("daachorse_len", u64::from(daachorse_len)));
            }
            None
        } else {
            let (pma, rest) = CharwiseDoubleArrayAhoCorasick::<u32>::deserialize(automaton)
                .map_err(|e| FrozenLoadError::Automaton { message: e.to_string() })?;
            if !rest.is_empty() {
                return Err(bad("trailing automaton bytes", rest.len() as u64));
            }
            // Leftmost search panics on any other kind.
            if pma.match_kind() != MatchKind::LeftmostLongest {
                return Err(FrozenLoadError::Automaton { message: "match kind is not leftmost-longest".into() });
            }
            Some(pma)
        };
        Ok(Matcher::assemble(profile.clone(), flags & FLAG_WORD_BOUNDARIES != 0, table, pma))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProfileBuilder;

    fn profile() -> Profile {
        ProfileBuilder::nfkc_only().build().expect("nfkc profile")
    }

    /// `keys` with their frozen form, whose automaton is replaced by `pma` and whose
    /// hash is recomputed: what someone who can write the cache can produce.
    fn forged(keys: &[&str], pma: CharwiseDoubleArrayAhoCorasick<u32>) -> Vec<u8> {
        let profile = profile();
        let honest =
            MatcherBuilder::new(&profile).build(keys.iter().enumerate().map(|(idx, key)| (*key, idx as u32))).unwrap();
        let table = PatternTable {
            patterns: honest.table.patterns.clone(),
            pattern_ends: honest.table.pattern_ends.clone(),
            values: honest.table.values.clone(),
            posting_ends: honest.table.posting_ends.clone(),
        };
        Matcher::assemble(profile, true, table, Some(pma)).to_bytes()
    }

    #[test]
    fn a_forged_automaton_never_panics_and_never_reports_absent_text() {
        let keys = ["abc", "ab", "xyz"];
        // Values past the pattern table, and values naming the wrong pattern.
        let wrong = CharwiseDoubleArrayAhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build_with_values([("abc", 7u32), ("ab", 2), ("q", 0), ("x", u32::MAX)])
            .unwrap();
        let matcher = Matcher::from_bytes(&forged(&keys, wrong), &profile()).expect("structurally valid");
        let text = profile().normalize("abc q x ab xyz").unwrap();
        let hits = matcher.find(&text);
        for hit in &hits {
            assert_eq!(
                &text.as_str()[hit.norm.start.as_usize()..hit.norm.end.as_usize()],
                matcher.pattern(hit.pattern)
            );
        }
        let _ = matcher.find_with(&matcher, &text);
    }

    #[test]
    fn a_forged_match_inside_the_last_hit_is_skipped_so_hits_never_overlap() {
        let keys = ["甲乙", "乙丙"];
        let honest = MatcherBuilder::new(&profile())
            .build(keys.iter().enumerate().map(|(idx, key)| (*key, idx as u32)))
            .unwrap();
        let id = |key: &str| honest.lookup(key).unwrap().as_u32();
        // After 甲乙, the forged automaton reports 丙 as the whole of 乙丙, which ends
        // there but starts inside the hit before it.
        let overlapping = CharwiseDoubleArrayAhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build_with_values([("甲乙", id("甲乙")), ("丙", id("乙丙"))])
            .unwrap();
        let matcher = Matcher::from_bytes(&forged(&keys, overlapping), &profile()).expect("structurally valid");
        let text = profile().normalize("甲乙丙").unwrap();
        let hits = matcher.find(&text);
        assert_eq!(hits.iter().map(|hit| matcher.pattern(hit.pattern)).collect::<Vec<_>>(), ["甲乙"]);
    }

    #[test]
    fn an_automaton_of_another_match_kind_is_refused() {
        let standard = CharwiseDoubleArrayAhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build_with_values([("ab", 0u32), ("abc", 1)])
            .unwrap();
        let loaded = Matcher::from_bytes(&forged(&["ab", "abc"], standard), &profile());
        assert!(matches!(loaded, Err(FrozenLoadError::Automaton { .. })), "{loaded:?}");
    }
}
