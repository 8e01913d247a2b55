//! The index of a book's registered source text: every chapter's original text and
//! its fold, where its lines break, and a table of anchored shingles (the hash of the
//! `SHINGLE_CHARS` folded chars at every `ANCHOR_STEP`-th position of each chapter).
//!
//! The table is a sorted array, bucketed by the top bits of the shingle's hash, so a
//! lookup is one bucket read; it is built by sorting `(hash, position)` pairs, which is
//! a total order, so the same chapters always give the same table.

use std::ops::Range;

use matcher::{Profile, ProfileId, TextError};

use crate::fold::{to_u32, Folded, Lines};
use crate::{
    ANCHOR_STEP, BOOK_BYTES_MAX, CHAPTERS_MAX, CHAPTER_BYTES_MAX, FOLDED_CHARS_MAX, OCCURRENCES_MAX, SHINGLE_CHARS,
};

/// Why an index could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two chapters have one number.
    #[error("chapter {number} is given twice")]
    DuplicateChapter {
        /// The number.
        number: u32,
    },
    /// More chapters than [`CHAPTERS_MAX`].
    #[error("{n} chapters exceed the limit of {limit}")]
    TooManyChapters {
        /// How many were given.
        n: usize,
        /// The limit.
        limit: usize,
    },
    /// A chapter longer than [`CHAPTER_BYTES_MAX`].
    #[error("chapter {number} has {n_bytes} bytes, more than the limit of {limit}")]
    ChapterTooLong {
        /// The chapter.
        number: u32,
        /// Its length.
        n_bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// All chapters together are longer than [`BOOK_BYTES_MAX`], or fold to more than
    /// [`FOLDED_CHARS_MAX`] chars.
    #[error("the book's text ({n_bytes} bytes, {n_folded} folded chars) exceeds the limits ({bytes_limit} bytes, {folded_limit} folded chars)")]
    BookTooLong {
        /// Its length in bytes (so far, when the fold is what overflowed).
        n_bytes: usize,
        /// Its folded length in chars (so far).
        n_folded: usize,
        /// The limit in bytes.
        bytes_limit: usize,
        /// The limit in folded chars.
        folded_limit: usize,
    },
}

/// One registered chapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chapter {
    pub(crate) number: u32,
    /// Its original text in `Index::text`.
    pub(crate) text: Range<u32>,
    /// Its fold in `Index::folded`.
    pub(crate) folded: Range<u32>,
}

/// The shingle table: positions grouped by the top `bits` bits of their shingle's key,
/// each with the key's low 32 bits as a fingerprint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Table {
    pub(crate) bits: u32,
    /// `starts[b]..starts[b + 1]`: bucket `b`'s entries. `2^bits + 1` entries.
    pub(crate) starts: Vec<u32>,
    /// (fingerprint, position), side by side so a lookup reads one cache line.
    pub(crate) entries: Vec<(u32, u32)>,
}

impl Table {
    /// The bucket of a key.
    #[inline]
    pub(crate) fn bucket(&self, key: u64) -> usize {
        if self.bits == 0 {
            0
        } else {
            (key >> (64 - self.bits)) as usize
        }
    }

    /// The positions whose shingle may be `key` (same bucket, same fingerprint).
    #[inline]
    pub(crate) fn candidates(&self, key: u64) -> impl Iterator<Item = u32> + '_ {
        let bucket = self.bucket(key);
        let range = match (self.starts.get(bucket), self.starts.get(bucket + 1)) {
            (Some(&start), Some(&end)) => start as usize..end as usize,
            _ => 0..0,
        };
        let fingerprint = key as u32;
        self.entries.get(range).unwrap_or(&[]).iter().filter(move |&&(fp, _)| fp == fingerprint).map(|&(_, pos)| pos)
    }
}

/// The index of a book's registered source text, built by [`Index::build`] and used
/// by [`Index::locate`].
///
/// Derived data: [`Index::build`] of the same chapters with the same profile always
/// gives an equal index with the same bytes ([`Index::to_bytes`]).
#[derive(Clone)]
pub struct Index {
    pub(crate) profile: Profile,
    /// By number, increasing.
    pub(crate) chapters: Vec<Chapter>,
    /// Every chapter's original text, in chapter order.
    pub(crate) text: String,
    /// Every chapter's folded chars, in chapter order.
    pub(crate) folded: Vec<char>,
    /// Line breaks in `folded`.
    pub(crate) lines: Lines,
    pub(crate) table: Table,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("profile", &self.profile.id())
            .field("chapters", &self.chapters.len())
            .field("text_bytes", &self.text.len())
            .field("folded_chars", &self.folded.len())
            .field("anchors", &self.table.entries.len())
            .finish()
    }
}

impl PartialEq for Index {
    fn eq(&self, other: &Index) -> bool {
        self.profile.id() == other.profile.id()
            && self.chapters == other.chapters
            && self.text == other.text
            && self.folded == other.folded
            && self.lines == other.lines
            && self.table == other.table
    }
}

impl Eq for Index {}

impl Index {
    /// Builds the index of `chapters` (number, original text) folded with `profile`.
    /// The order they are given in does not matter; numbers must be distinct.
    pub fn build<'a>(
        profile: &Profile,
        chapters: impl IntoIterator<Item = (u32, &'a str)>,
    ) -> Result<Index, BuildError> {
        let mut given: Vec<(u32, &str)> = chapters.into_iter().collect();
        if given.len() > CHAPTERS_MAX {
            return Err(BuildError::TooManyChapters { n: given.len(), limit: CHAPTERS_MAX });
        }
        given.sort_by_key(|&(number, _)| number);
        if let Some(pair) = given.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(BuildError::DuplicateChapter { number: pair[0].0 });
        }
        let mut n_bytes = 0usize;
        for &(number, text) in &given {
            if text.len() > CHAPTER_BYTES_MAX {
                return Err(BuildError::ChapterTooLong { number, n_bytes: text.len(), limit: CHAPTER_BYTES_MAX });
            }
            n_bytes += text.len();
        }
        let too_long = |n_bytes: usize, n_folded: usize| BuildError::BookTooLong {
            n_bytes,
            n_folded,
            bytes_limit: BOOK_BYTES_MAX,
            folded_limit: FOLDED_CHARS_MAX,
        };
        if n_bytes > BOOK_BYTES_MAX {
            return Err(too_long(n_bytes, 0));
        }
        let mut index = Index {
            profile: profile.clone(),
            chapters: Vec::with_capacity(given.len()),
            text: String::with_capacity(n_bytes),
            folded: Vec::with_capacity(n_bytes / 2),
            lines: Lines::new(Vec::new(), &[], 0),
            table: Table::default(),
        };
        for (number, text) in given {
            let folded = Folded::new(profile, text).map_err(|error| match error {
                TextError::TooLong { n_bytes, .. } | TextError::FoldedTooLong { n_bytes, .. } => {
                    too_long(n_bytes, index.folded.len())
                }
                _ => too_long(n_bytes, index.folded.len()),
            })?;
            if index.folded.len() + folded.chars.len() > FOLDED_CHARS_MAX {
                return Err(too_long(n_bytes, index.folded.len() + folded.chars.len()));
            }
            index.push(number, text, &folded);
        }
        index.table = build_table(&index.chapters, &index.folded);
        Ok(index)
    }

    /// Appends one chapter's text and fold.
    fn push(&mut self, number: u32, text: &str, folded: &Folded<'_>) {
        let text_start = to_u32(self.text.len());
        self.text.push_str(text);
        let origin = to_u32(self.folded.len());
        self.folded.extend_from_slice(&folded.chars);
        let breaks: Vec<u32> = folded.lines.breaks.iter().map(|&b| b + origin).collect();
        self.lines.extend(&breaks, &folded.chars, origin);
        self.chapters.push(Chapter {
            number,
            text: text_start..to_u32(self.text.len()),
            folded: origin..to_u32(self.folded.len()),
        });
    }

    /// The profile the index folds with.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The id of the profile the index folds with.
    pub fn profile_id(&self) -> ProfileId {
        self.profile.id()
    }

    /// The numbers of the registered chapters, increasing.
    pub fn chapters(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.chapters.iter().map(|chapter| chapter.number)
    }

    /// The original text of chapter `number`, as registered.
    pub fn chapter_text(&self, number: u32) -> Option<&str> {
        let idx = self.chapters.binary_search_by_key(&number, |chapter| chapter.number).ok()?;
        Some(self.text_of(idx))
    }

    /// The original text of the chapter at `idx`.
    pub(crate) fn text_of(&self, idx: usize) -> &str {
        let range = &self.chapters[idx].text;
        &self.text[range.start as usize..range.end as usize]
    }

    /// The index of the chapter holding folded position `pos`.
    pub(crate) fn chapter_at(&self, pos: u32) -> usize {
        self.chapters.partition_point(|chapter| chapter.folded.end <= pos)
    }

    /// Heap bytes held (the texts, the folds, the lines and the table), for a caller's
    /// memory budget.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.folded.capacity() * std::mem::size_of::<char>()
            + self.chapters.capacity() * std::mem::size_of::<Chapter>()
            + (self.lines.breaks.capacity() + self.lines.filled.capacity()) * 4
            + self.table.starts.capacity() * 4
            + self.table.entries.capacity() * 8
            + self.profile.heap_bytes()
    }
}

/// The multiplier of the rolling hash (odd, so every char value counts).
const HASH_BASE: u64 = 0x100_0000_01B3;

/// The rolling hash of `chars` (`SHINGLE_CHARS` of them): a polynomial in
/// [`HASH_BASE`] with wrapping arithmetic, so it rolls in O(1).
#[inline]
pub(crate) fn shingle_hash(chars: &[char]) -> u64 {
    chars.iter().fold(0u64, |h, &c| h.wrapping_mul(HASH_BASE).wrapping_add(u64::from(c as u32) + 1))
}

/// `HASH_BASE^(SHINGLE_CHARS - 1)`, to roll the first char out.
pub(crate) const HASH_OUT: u64 = HASH_BASE.wrapping_pow(SHINGLE_CHARS as u32 - 1);

/// Rolls the hash of `chars[i..i + K]` to that of `chars[i + 1..i + 1 + K]`.
#[inline]
pub(crate) fn roll(hash: u64, out: char, into: char) -> u64 {
    hash.wrapping_sub(HASH_OUT.wrapping_mul(u64::from(out as u32) + 1))
        .wrapping_mul(HASH_BASE)
        .wrapping_add(u64::from(into as u32) + 1)
}

/// The table key of a shingle hash: a finalizer (splitmix64's), so the top bits that
/// pick the bucket depend on every char.
#[inline]
pub(crate) fn key_of(hash: u64) -> u64 {
    let mut z = hash;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The table of every `ANCHOR_STEP`-th shingle of every chapter (positions counted
/// from the chapter's start, so a chapter's anchors do not depend on the others),
/// without the shingles that occur more than `OCCURRENCES_MAX` times.
pub(crate) fn build_table(chapters: &[Chapter], folded: &[char]) -> Table {
    let mut entries: Vec<(u64, u32)> = Vec::with_capacity(folded.len() / ANCHOR_STEP + 1);
    for chapter in chapters {
        let text = &folded[chapter.folded.start as usize..chapter.folded.end as usize];
        if text.len() < SHINGLE_CHARS {
            continue;
        }
        for at in (0..=text.len() - SHINGLE_CHARS).step_by(ANCHOR_STEP) {
            let key = key_of(shingle_hash(&text[at..at + SHINGLE_CHARS]));
            entries.push((key, chapter.folded.start + to_u32(at)));
        }
    }
    // A total order: the same chapters give the same table.
    entries.sort_unstable();
    let mut kept: Vec<(u64, u32)> = Vec::with_capacity(entries.len());
    let mut group = 0;
    while group < entries.len() {
        let key = entries[group].0;
        let end = group + entries[group..].partition_point(|&(k, _)| k == key);
        if end - group <= OCCURRENCES_MAX {
            kept.extend_from_slice(&entries[group..end]);
        }
        group = end;
    }
    drop(entries);
    let bits = bucket_bits(kept.len());
    let mut table = Table {
        bits,
        starts: vec![0; (1usize << bits) + 1],
        entries: kept.iter().map(|&(key, pos)| (key as u32, pos)).collect(),
    };
    for &(key, _) in &kept {
        let bucket = table.bucket(key);
        table.starts[bucket + 1] += 1;
    }
    for bucket in 1..table.starts.len() {
        table.starts[bucket] += table.starts[bucket - 1];
    }
    table
}

/// One to two entries a bucket: `floor(log2(n))` bits, at least 4 and at most 30.
pub(crate) fn bucket_bits(n: usize) -> u32 {
    n.max(1).ilog2().clamp(4, 30)
}
