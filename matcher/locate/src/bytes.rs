//! The byte form of an index, so a caller can keep it as derived data beside the
//! chapters and load it instead of building it again.
//!
//! Every integer is little-endian. The layout, in order:
//!
//! | field | bytes |
//! | --- | --- |
//! | magic [`INDEX_MAGIC`] | 4 |
//! | format [`INDEX_FORMAT_VERSION`], `u16`, then `0u16` | 4 |
//! | the profile's id | 32 |
//! | blake3 `derive_key(`[`INDEX_HASH_CONTEXT`]`)` of every byte after it | 32 |
//! | chapters, text bytes, folded bytes, breaks, table bits, table entries: six `u32` | 24 |
//! | per chapter: number, end of its text (bytes), end of its fold (chars): three `u32` | 12 a chapter |
//! | the chapters' original text, UTF-8 | text bytes |
//! | the chapters' fold, UTF-8 | folded bytes |
//! | per break: its position (`u32`) | 4 a break |
//! | per break: 1 when the line after it holds text, else 0 | 1 a break |
//! | the table's bucket starts: `2^bits + 1` `u32` | |
//! | per entry: fingerprint, position: two `u32` | 8 an entry |
//!
//! Decoding checks the hash before it reads anything else, then the profile, then
//! every count against the crate's limits and every offset against what it points
//! into, so no bytes make it panic or allocate beyond the limits. What decodes encodes
//! to the same bytes. A decoded index is trusted to be what [`Index::build`] made (the
//! hash is a checksum, not a signature): one forged with a valid hash can answer
//! wrongly, but [`Index::locate`] never panics on it and never reports a span outside
//! the texts, since every anchor is compared with the request and every span is mapped
//! through a fresh fold of its chapter, which must equal the stored fold.

use matcher::{Profile, ProfileId};

use crate::fold::{to_u32, Lines};
use crate::index::{Chapter, Index, Table};
use crate::{BOOK_BYTES_MAX, CHAPTERS_MAX, FOLDED_CHARS_MAX};

/// The first bytes of an index's byte form.
pub const INDEX_MAGIC: [u8; 4] = *b"LBLI";
/// The format of [`Index::to_bytes`].
pub const INDEX_FORMAT_VERSION: u16 = 1;
/// The blake3 `derive_key` context of the hash in the byte form.
pub const INDEX_HASH_CONTEXT: &str = "lorebank 2026-12 locate index v1";

const HEADER_BYTES: usize = 4 + 4 + 32 + 32;
const COUNTS_BYTES: usize = 6 * 4;

/// Why bytes are not an index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not the magic, or another format.
    #[error("not a locate index of format {INDEX_FORMAT_VERSION}")]
    NotAnIndex,
    /// The hash does not hold: the bytes were damaged.
    #[error("the index's hash does not hold")]
    Damaged,
    /// The index was built with another profile.
    #[error("the index was built with profile {found}, not {expected}")]
    OtherProfile {
        /// The profile of the index.
        found: ProfileId,
        /// The profile given.
        expected: ProfileId,
    },
    /// A count or an offset does not hold.
    #[error("malformed index: {0}")]
    Malformed(&'static str),
}

impl Index {
    /// The byte form (see the module documentation of the layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let folded: String = self.folded.iter().collect();
        let mut body = Vec::with_capacity(
            COUNTS_BYTES + self.text.len() + folded.len() + self.table.entries.len() * 8 + self.table.starts.len() * 4,
        );
        for count in [
            self.chapters.len(),
            self.text.len(),
            folded.len(),
            self.lines.breaks.len(),
            self.table.bits as usize,
            self.table.entries.len(),
        ] {
            body.extend_from_slice(&to_u32(count).to_le_bytes());
        }
        for chapter in &self.chapters {
            for value in [chapter.number, chapter.text.end, chapter.folded.end] {
                body.extend_from_slice(&value.to_le_bytes());
            }
        }
        body.extend_from_slice(self.text.as_bytes());
        body.extend_from_slice(folded.as_bytes());
        for &brk in &self.lines.breaks {
            body.extend_from_slice(&brk.to_le_bytes());
        }
        body.extend(self.lines.filled.windows(2).map(|pair| (pair[1] - pair[0]) as u8));
        for &start in &self.table.starts {
            body.extend_from_slice(&start.to_le_bytes());
        }
        for &(fingerprint, pos) in &self.table.entries {
            body.extend_from_slice(&fingerprint.to_le_bytes());
            body.extend_from_slice(&pos.to_le_bytes());
        }
        let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
        out.extend_from_slice(&INDEX_MAGIC);
        out.extend_from_slice(&INDEX_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&self.profile.id().0);
        out.extend_from_slice(blake3::Hasher::new_derive_key(INDEX_HASH_CONTEXT).update(&body).finalize().as_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// An index from its byte form, to fold with `profile` (which must be the one it
    /// was built with).
    pub fn from_bytes(bytes: &[u8], profile: &Profile) -> Result<Index, DecodeError> {
        if bytes.len() < HEADER_BYTES || bytes[..4] != INDEX_MAGIC {
            return Err(DecodeError::NotAnIndex);
        }
        if bytes[4..8] != [INDEX_FORMAT_VERSION.to_le_bytes(), [0, 0]].concat()[..] {
            return Err(DecodeError::NotAnIndex);
        }
        let body = &bytes[HEADER_BYTES..];
        if blake3::Hasher::new_derive_key(INDEX_HASH_CONTEXT).update(body).finalize().as_bytes()[..] != bytes[40..72] {
            return Err(DecodeError::Damaged);
        }
        let mut found = [0u8; 32];
        found.copy_from_slice(&bytes[8..40]);
        if found != profile.id().0 {
            return Err(DecodeError::OtherProfile { found: ProfileId(found), expected: profile.id() });
        }
        let mut reader = Reader { bytes: body };
        let n_chapters = reader.count(CHAPTERS_MAX, "chapters")?;
        let text_bytes = reader.count(BOOK_BYTES_MAX, "text bytes")?;
        let folded_bytes = reader.count(4 * FOLDED_CHARS_MAX, "folded bytes")?;
        let n_breaks = reader.count(FOLDED_CHARS_MAX, "breaks")?;
        let bits = reader.count(30, "table bits")?;
        let n_entries = reader.count(FOLDED_CHARS_MAX, "table entries")?;
        // Every section must fit in what is left before anything is allocated.
        let counted =
            [(n_chapters, 12), (text_bytes, 1), (folded_bytes, 1), (n_breaks, 5), ((1 << bits) + 1, 4), (n_entries, 8)];
        let need: u64 = counted.iter().map(|&(n, width)| n as u64 * width).sum();
        if need != reader.bytes.len() as u64 {
            return Err(DecodeError::Malformed("the sections do not fill the bytes"));
        }
        let mut chapters = Vec::with_capacity(n_chapters);
        let (mut text_at, mut folded_at) = (0u32, 0u32);
        for _ in 0..n_chapters {
            let (number, text_end, folded_end) = (reader.u32(), reader.u32(), reader.u32());
            if chapters.last().is_some_and(|before: &Chapter| before.number >= number) {
                return Err(DecodeError::Malformed("chapter numbers are not increasing"));
            }
            if text_end < text_at || folded_end < folded_at {
                return Err(DecodeError::Malformed("chapter ends are not increasing"));
            }
            chapters.push(Chapter { number, text: text_at..text_end, folded: folded_at..folded_end });
            (text_at, folded_at) = (text_end, folded_end);
        }
        let text = std::str::from_utf8(reader.take(text_bytes))
            .map_err(|_| DecodeError::Malformed("the text is not UTF-8"))?
            .to_owned();
        if text_at as usize != text.len() || chapters.iter().any(|c| !text.is_char_boundary(c.text.end as usize)) {
            return Err(DecodeError::Malformed("chapter texts do not tile the text"));
        }
        let folded: Vec<char> = std::str::from_utf8(reader.take(folded_bytes))
            .map_err(|_| DecodeError::Malformed("the fold is not UTF-8"))?
            .chars()
            .collect();
        if folded_at as usize != folded.len() {
            return Err(DecodeError::Malformed("chapter folds do not tile the fold"));
        }
        let breaks: Vec<u32> = (0..n_breaks).map(|_| reader.u32()).collect();
        if breaks.windows(2).any(|pair| pair[0] >= pair[1])
            || breaks.last().is_some_and(|&b| b as usize >= folded.len())
        {
            return Err(DecodeError::Malformed("breaks are not increasing inside the fold"));
        }
        let mut filled = Vec::with_capacity(n_breaks + 1);
        filled.push(0u32);
        for &flag in reader.take(n_breaks) {
            if flag > 1 {
                return Err(DecodeError::Malformed("a line flag is neither 0 nor 1"));
            }
            filled.push(filled[filled.len() - 1] + u32::from(flag));
        }
        let starts: Vec<u32> = (0..(1usize << bits) + 1).map(|_| reader.u32()).collect();
        if starts[0] != 0
            || starts.windows(2).any(|pair| pair[0] > pair[1])
            || starts[starts.len() - 1] as usize != n_entries
        {
            return Err(DecodeError::Malformed("bucket starts do not tile the entries"));
        }
        let entries: Vec<(u32, u32)> = (0..n_entries).map(|_| (reader.u32(), reader.u32())).collect();
        if entries.iter().any(|&(_, pos)| pos as usize >= folded.len()) {
            return Err(DecodeError::Malformed("an anchor lies outside the fold"));
        }
        Ok(Index {
            profile: profile.clone(),
            chapters,
            text,
            folded,
            lines: Lines { breaks, filled },
            table: Table { bits: to_u32(bits), starts, entries },
        })
    }
}

/// Reads the body front to back; its sections were measured against its length first.
struct Reader<'b> {
    bytes: &'b [u8],
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> &'b [u8] {
        let (head, rest) = self.bytes.split_at(n.min(self.bytes.len()));
        self.bytes = rest;
        head
    }

    fn u32(&mut self) -> u32 {
        let read = self.take(4);
        let mut word = [0u8; 4];
        word[..read.len()].copy_from_slice(read);
        u32::from_le_bytes(word)
    }

    /// A count, refused above `limit`.
    fn count(&mut self, limit: usize, what: &'static str) -> Result<usize, DecodeError> {
        if self.bytes.len() < 4 {
            return Err(DecodeError::Malformed("the counts are cut short"));
        }
        let value = self.u32() as usize;
        if value > limit {
            return Err(DecodeError::Malformed(what));
        }
        Ok(value)
    }
}
