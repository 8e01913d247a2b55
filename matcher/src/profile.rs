//! The normalization profile: a versioned, content-addressed per-character fold table.
//!
//! A [`Profile`] is data, not code: a sorted table `char -> folded chars` that already
//! contains NFKC of every single char, the OpenCC variant folds, kana, case, `ё` and
//! whitespace folds, closed under iteration. It is serialized with a documented
//! little-endian layout ([`Profile::to_bytes`]) and named by a keyed blake3 of those
//! bytes ([`Profile::id`]), so the ledger can store it and a replay on another machine
//! folds text with the identical table.
//!
//! # Byte layout, format versions 1 and 2
//!
//! All integers little-endian. Reserved bytes must be zero.
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `LBNP` |
//! | 4 | 2 | format version, `1` or `2` |
//! | 6 | 1 | flavour: 0 plain, 1 zh, 2 ja |
//! | 7 | 1 | flags: bit 0 Aozora ruby, bit 1 HTML ruby, bit 2 collapse whitespace; other bits zero |
//! | 8 | 3 | Unicode version of the NFKC tables used to build it (major, minor, update) |
//! | 11 | 1 | reserved, zero |
//! | 12 | 4 | `n_entries` |
//! | 16 | 4 | `n_pool_chars` |
//! | 20 | 3 | format 2: Unicode version of the char properties of `std` (`char::UNICODE_VERSION`); format 1: zero |
//! | 23 | 1 | reserved, zero |
//! | 24 | 8 × `n_entries` | entries `(char: u32, n_out: u32)`, strictly increasing by char |
//! | … | 4 × `n_pool_chars` | pool: the outputs of all entries, concatenated in entry order |
//!
//! Canonical form, checked on load: every `char` and pool value is a Unicode scalar
//! value; no entry maps a char to itself; `n_out <= FOLD_CHARS_MAX`; the sum of
//! `n_out` equals `n_pool_chars`; every output is NFKC-normalized; no pool char is
//! itself a key (the table is closed: folding a folded char changes nothing); no
//! trailing bytes.
//!
//! # What the table does not contain: the Unicode of the toolchain
//!
//! Folding and matching also read Unicode data linked into the program, not stored in
//! the table: the composition of multi-char segments and the normalization boundaries
//! (`unicode-normalization`), and the word-boundary rule and markup scan
//! (`char::is_alphanumeric` and `char::is_whitespace` of `std`, whose Unicode version
//! is the compiler's; assembly's `split_whitespace` reads the same data). Another
//! version of either can fold or match the same text differently, so a replay would
//! give other bytes. The profile therefore records both versions ([`ToolchainUnicode`]),
//! and [`Profile::from_bytes`] refuses a profile whose versions differ from the running
//! program's with [`LoadError::UnicodeMismatch`].
//!
//! The `unicode-normalization` version has been in bytes 8..11 since format 1. The
//! `std` version is new. Format 1 has no field for it and means
//! [`FORMAT_1_CHAR_UNICODE`] (17.0.0, the Unicode of Rust 1.95, with which every
//! format 1 profile so far was built). The builder keeps writing format 1 while the
//! compiler's version is that one, so tables built with it keep their bytes, their ids
//! and the snapshot IDs of the books that name them. Only a build with another `std`
//! Unicode version writes format 2, which stores its version in bytes 20..23. A format 2
//! profile that stores 17.0.0 is refused as not canonical, so one table has one id.

use std::fmt;
use std::sync::Arc;

use unicode_normalization::UnicodeNormalization;

use crate::unicode::{boundary_before_uncached, joins_previous};

/// Magic bytes at the start of a serialized profile.
pub const PROFILE_MAGIC: [u8; 4] = *b"LBNP";
/// The newest profile byte-layout version; this crate reads 1 and 2 and writes the
/// lowest one that can state its toolchain's Unicode versions (see the module docs).
pub const PROFILE_FORMAT_VERSION: u16 = 2;
/// The Unicode version of `std`'s char properties that a format 1 profile implies: the
/// version of Rust 1.95, with which every format 1 profile was built.
pub const FORMAT_1_CHAR_UNICODE: (u8, u8, u8) = (17, 0, 0);
/// The blake3 `derive_key` context that names profiles ([`Profile::id`]).
pub const PROFILE_ID_CONTEXT: &str = "lorebank 2026-11 normalization profile v1";
/// Longest output of one char in the fold table (NFKC's longest is 18, U+FDFA).
pub const FOLD_CHARS_MAX: u32 = 32;
/// Largest serialized profile accepted by [`Profile::from_bytes`].
pub const PROFILE_BYTES_MAX: usize = 64 << 20;

const HEADER_LEN: usize = 24;
const FLAG_AOZORA: u8 = 1;
const FLAG_HTML: u8 = 2;
const FLAG_COLLAPSE_WS: u8 = 4;
const FLAGS_KNOWN: u8 = FLAG_AOZORA | FLAG_HTML | FLAG_COLLAPSE_WS;

/// Value encoding of the in-memory lookup table.
/// Bit 31: the input char joins the previous char under NFKC (no boundary before it).
/// Bit 30: the output starts with such a joining char, so the fast path cannot be used.
/// Bits 0..30: a char if below `MULTI_BASE`, otherwise `MULTI_BASE + index` into `multi`.
pub(crate) const V_JOINS: u32 = 1 << 31;
pub(crate) const V_SLOW: u32 = 1 << 30;
const V_PAYLOAD: u32 = V_SLOW - 1;
const MULTI_BASE: u32 = 0x11_0000;

/// Which script family a profile was built for. Decides the OpenCC configs used and the
/// default markup handling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Flavour {
    /// No OpenCC variant folding: NFKC plus the Unicode folds only.
    Plain,
    /// Chinese: traditional and regional (Taiwan, Hong Kong) variants fold to simplified
    /// (OpenCC `t2s`, `tw2s`, `hk2s`, per character).
    Zh,
    /// Japanese: kyūjitai fold to shinjitai (OpenCC `t2jp`, and the inverse of `jp2t`).
    Ja,
}

impl Flavour {
    fn to_byte(self) -> u8 {
        match self {
            Flavour::Plain => 0,
            Flavour::Zh => 1,
            Flavour::Ja => 2,
        }
    }

    fn from_byte(byte: u8) -> Option<Flavour> {
        match byte {
            0 => Some(Flavour::Plain),
            1 => Some(Flavour::Zh),
            2 => Some(Flavour::Ja),
            _ => None,
        }
    }
}

/// The name of a profile: blake3 `derive_key(PROFILE_ID_CONTEXT)` of its bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProfileId(pub [u8; 32]);

impl fmt::Display for ProfileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ProfileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProfileId({self})")
    }
}

/// Markup and whitespace options stored in the profile header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProfileOptions {
    /// Strip Aozora Bunko markup (`《ruby》`, `｜`, `［＃note］`) and report the ruby.
    /// Off for Chinese, where `《》` are book-title brackets.
    pub aozora_ruby: bool,
    /// Strip HTML `<ruby>`, `<rb>`, `<rt>`, `<rp>` tags and report the ruby.
    pub html_ruby: bool,
    /// Collapse each run of whitespace (after mapping all whitespace to U+0020) to one space.
    pub collapse_whitespace: bool,
}

impl ProfileOptions {
    fn to_byte(self) -> u8 {
        (if self.aozora_ruby { FLAG_AOZORA } else { 0 })
            | (if self.html_ruby { FLAG_HTML } else { 0 })
            | (if self.collapse_whitespace { FLAG_COLLAPSE_WS } else { 0 })
    }

    fn from_byte(byte: u8) -> ProfileOptions {
        ProfileOptions {
            aozora_ruby: byte & FLAG_AOZORA != 0,
            html_ruby: byte & FLAG_HTML != 0,
            collapse_whitespace: byte & FLAG_COLLAPSE_WS != 0,
        }
    }
}

/// The Unicode versions of the data that folding and matching read from the program
/// rather than from the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolchainUnicode {
    /// `std`'s char properties (`char::UNICODE_VERSION`): word boundaries, whitespace.
    pub char_properties: (u8, u8, u8),
    /// `unicode-normalization`'s tables: composition and normalization boundaries.
    pub normalization: (u8, u8, u8),
}

impl ToolchainUnicode {
    /// The versions linked into this program.
    pub const RUNNING: ToolchainUnicode = ToolchainUnicode {
        char_properties: char::UNICODE_VERSION,
        normalization: unicode_normalization::UNICODE_VERSION,
    };
}

fn version_text((major, minor, update): (u8, u8, u8)) -> String {
    format!("{major}.{minor}.{update}")
}

/// Why a serialized profile was refused by [`Profile::from_bytes`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Fewer bytes than a section needs.
    #[error("profile truncated: {section} needs {needed} bytes, {available} available")]
    Truncated {
        /// The section being read.
        section: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes left.
        available: usize,
    },
    /// More bytes than [`PROFILE_BYTES_MAX`].
    #[error("profile of {n_bytes} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Size given.
        n_bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The magic bytes are not `LBNP`.
    #[error("not a normalization profile: magic {found:02x?}, expected {expected:02x?}")]
    BadMagic {
        /// Found bytes.
        found: [u8; 4],
        /// Expected bytes.
        expected: [u8; 4],
    },
    /// A format version this crate does not read.
    #[error("unsupported profile format version {found}, this build reads 1 to {supported}")]
    UnsupportedVersion {
        /// Found version.
        found: u16,
        /// Supported version.
        supported: u16,
    },
    /// A header field with an invalid value.
    #[error("invalid profile header field {field}: {value}")]
    BadHeader {
        /// Field name.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// An entry or pool value that violates the canonical form.
    #[error("invalid profile entry {index}: {reason} (value {value:#x})")]
    BadEntry {
        /// Entry or pool index.
        index: usize,
        /// What is wrong.
        reason: &'static str,
        /// The offending value.
        value: u64,
    },
    /// Bytes after the pool.
    #[error("profile has {n_bytes} trailing bytes")]
    TrailingBytes {
        /// How many.
        n_bytes: usize,
    },
    /// The profile was built with Unicode data other than this program's: folding or
    /// matching with it here could give other results than where it was built.
    #[error(
        "the fold table was built with Unicode {} of {component}, this build has Unicode {}; \
         replaying with it could produce other bytes, so use a build with Unicode {0} of {component}",
        version_text(*.stored), version_text(*.running)
    )]
    UnicodeMismatch {
        /// Whose data: `std char properties` or `unicode-normalization`.
        component: &'static str,
        /// The version the profile records.
        stored: (u8, u8, u8),
        /// The version of this program.
        running: (u8, u8, u8),
    },
}

/// A loaded normalization profile. Cheap to clone (shared).
///
/// Build one with [`crate::ProfileBuilder`] or load one with [`Profile::from_bytes`].
#[derive(Clone)]
pub struct Profile {
    pub(crate) inner: Arc<ProfileInner>,
}

pub(crate) struct ProfileInner {
    bytes: Box<[u8]>,
    id: ProfileId,
    flavour: Flavour,
    pub(crate) options: ProfileOptions,
    unicode_version: (u8, u8, u8),
    char_unicode_version: (u8, u8, u8),
    n_entries: usize,
    /// Encoded values for every BMP char (see `V_*`). A fixed-size array, so indexing
    /// with a masked `u16` needs no bounds check on the hot path.
    bmp: Box<[u32; 0x1_0000]>,
    /// Entries for chars above the BMP: (char, encoded value without V_JOINS).
    astral: Box<[(u32, u32)]>,
    /// Multi-char (or empty) outputs: (pool start, length).
    multi: Box<[(u32, u32)]>,
    pool: Box<[char]>,
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("id", &self.inner.id)
            .field("flavour", &self.inner.flavour)
            .field("options", &self.inner.options)
            .field("n_entries", &self.inner.n_entries)
            .finish()
    }
}

impl PartialEq for Profile {
    fn eq(&self, other: &Profile) -> bool {
        self.inner.bytes == other.inner.bytes
    }
}

impl Eq for Profile {}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, section: &'static str) -> Result<&'a [u8], LoadError> {
        let available = self.bytes.len() - self.pos;
        if n > available {
            return Err(LoadError::Truncated { section, needed: n, available });
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u32(&mut self, section: &'static str) -> Result<u32, LoadError> {
        let b = self.take(4, section)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// One table entry before serialization: a char and what it folds to.
pub(crate) struct Entry {
    pub(crate) key: char,
    pub(crate) out: Vec<char>,
}

/// Serialize entries (sorted by key) in the canonical layout: format 1 when
/// `toolchain`'s char properties are those format 1 implies, else format 2.
pub(crate) fn encode_profile(
    flavour: Flavour,
    options: ProfileOptions,
    toolchain: ToolchainUnicode,
    entries: &[Entry],
) -> Vec<u8> {
    let n_pool: usize = entries.iter().map(|e| e.out.len()).sum();
    let mut out = Vec::with_capacity(HEADER_LEN + entries.len() * 8 + n_pool * 4);
    let (format, char_field) = if toolchain.char_properties == FORMAT_1_CHAR_UNICODE {
        (1u16, [0; 3])
    } else {
        let (major, minor, update) = toolchain.char_properties;
        (2, [major, minor, update])
    };
    let normalization = toolchain.normalization;
    out.extend_from_slice(&PROFILE_MAGIC);
    out.extend_from_slice(&format.to_le_bytes());
    out.push(flavour.to_byte());
    out.push(options.to_byte());
    out.extend_from_slice(&[normalization.0, normalization.1, normalization.2, 0]);
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    out.extend_from_slice(&(n_pool as u32).to_le_bytes());
    out.extend_from_slice(&char_field);
    out.push(0);
    for entry in entries {
        out.extend_from_slice(&(entry.key as u32).to_le_bytes());
        out.extend_from_slice(&(entry.out.len() as u32).to_le_bytes());
    }
    for entry in entries {
        for &c in &entry.out {
            out.extend_from_slice(&(c as u32).to_le_bytes());
        }
    }
    out
}

/// The fields of a profile's header, checked.
struct Header {
    flavour: Flavour,
    options: ProfileOptions,
    unicode_version: (u8, u8, u8),
    char_unicode_version: (u8, u8, u8),
    n_entries: u32,
    n_pool: u32,
}

impl Header {
    /// Reads and checks the header: magic, format, flavour, flags, reserved bytes, and
    /// that its Unicode versions are `running`'s.
    fn read(header: &[u8], running: ToolchainUnicode) -> Result<Header, LoadError> {
        let magic = [header[0], header[1], header[2], header[3]];
        if magic != PROFILE_MAGIC {
            return Err(LoadError::BadMagic { found: magic, expected: PROFILE_MAGIC });
        }
        let version = u16::from_le_bytes([header[4], header[5]]);
        if !(1..=PROFILE_FORMAT_VERSION).contains(&version) {
            return Err(LoadError::UnsupportedVersion { found: version, supported: PROFILE_FORMAT_VERSION });
        }
        let flavour = Flavour::from_byte(header[6])
            .ok_or(LoadError::BadHeader { field: "flavour", value: u64::from(header[6]) })?;
        if header[7] & !FLAGS_KNOWN != 0 {
            return Err(LoadError::BadHeader { field: "flags", value: u64::from(header[7]) });
        }
        let options = ProfileOptions::from_byte(header[7]);
        let unicode_version = (header[8], header[9], header[10]);
        if header[11] != 0 {
            return Err(LoadError::BadHeader { field: "reserved byte 11", value: u64::from(header[11]) });
        }
        let n_entries = u32::from_le_bytes([header[12], header[13], header[14], header[15]]);
        let n_pool = u32::from_le_bytes([header[16], header[17], header[18], header[19]]);
        let char_unicode_version = if version == 1 {
            let reserved = u32::from_le_bytes([header[20], header[21], header[22], header[23]]);
            if reserved != 0 {
                return Err(LoadError::BadHeader { field: "reserved bytes 20..24", value: u64::from(reserved) });
            }
            FORMAT_1_CHAR_UNICODE
        } else {
            if header[23] != 0 {
                return Err(LoadError::BadHeader { field: "reserved byte 23", value: u64::from(header[23]) });
            }
            let stored = (header[20], header[21], header[22]);
            if stored == FORMAT_1_CHAR_UNICODE {
                // Format 1 says this; one table has one byte form and one id.
                let value = u64::from(u32::from_le_bytes([header[20], header[21], header[22], 0]));
                return Err(LoadError::BadHeader { field: "char Unicode version (format 1 implies it)", value });
            }
            stored
        };
        for (component, stored, running) in [
            ("std char properties", char_unicode_version, running.char_properties),
            ("unicode-normalization", unicode_version, running.normalization),
        ] {
            if stored != running {
                return Err(LoadError::UnicodeMismatch { component, stored, running });
            }
        }
        Ok(Header { flavour, options, unicode_version, char_unicode_version, n_entries, n_pool })
    }
}

/// The pool of output chars: every value a Unicode scalar value.
fn read_pool(pool_bytes: &[u8], n_pool: u32) -> Result<Vec<char>, LoadError> {
    let mut pool = Vec::with_capacity(n_pool as usize);
    for (index, chunk) in pool_bytes.chunks_exact(4).enumerate() {
        let value = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let c = char::from_u32(value).ok_or(LoadError::BadEntry {
            index,
            reason: "pool value is not a unicode scalar value",
            value: u64::from(value),
        })?;
        pool.push(c);
    }
    Ok(pool)
}

/// The table's entries as (key, start in the pool, output length): keys strictly
/// increasing scalar values, outputs at most [`FOLD_CHARS_MAX`] chars that tile the
/// pool exactly, no entry that maps a char to itself.
fn read_keys(entry_bytes: &[u8], n_entries: u32, pool: &[char]) -> Result<Vec<(char, u32, u32)>, LoadError> {
    let n_pool = pool.len() as u64;
    let mut keys: Vec<(char, u32, u32)> = Vec::with_capacity(n_entries as usize);
    let mut pool_pos: u64 = 0;
    let mut prev_key: Option<u32> = None;
    let mut entries_reader = Reader { bytes: entry_bytes, pos: 0 };
    for index in 0..n_entries as usize {
        let key = entries_reader.u32("entries")?;
        let n_out = entries_reader.u32("entries")?;
        let c = char::from_u32(key).ok_or(LoadError::BadEntry {
            index,
            reason: "key is not a unicode scalar value",
            value: u64::from(key),
        })?;
        if prev_key.is_some_and(|prev| prev >= key) {
            return Err(LoadError::BadEntry { index, reason: "keys not strictly increasing", value: u64::from(key) });
        }
        prev_key = Some(key);
        if n_out > FOLD_CHARS_MAX {
            return Err(LoadError::BadEntry {
                index,
                reason: "output longer than FOLD_CHARS_MAX",
                value: u64::from(n_out),
            });
        }
        let start = pool_pos;
        pool_pos += u64::from(n_out);
        if pool_pos > n_pool {
            return Err(LoadError::BadEntry { index, reason: "output runs past the pool", value: pool_pos });
        }
        if n_out == 1 && pool[start as usize] == c {
            return Err(LoadError::BadEntry { index, reason: "identity entry", value: u64::from(key) });
        }
        keys.push((c, start as u32, n_out));
    }
    if pool_pos != n_pool {
        return Err(LoadError::BadHeader { field: "n_pool_chars", value: n_pool });
    }
    Ok(keys)
}

/// Checks that folding folded text changes nothing: every output is NFKC-normalized
/// (folding it again composes nothing), and no pool char is a key (the table is
/// closed).
fn check_closed(keys: &[(char, u32, u32)], pool: &[char]) -> Result<(), LoadError> {
    for (index, &(_, start, n_out)) in keys.iter().enumerate() {
        let out = &pool[start as usize..(start + n_out) as usize];
        if !out.iter().copied().nfkc().eq(out.iter().copied()) {
            return Err(LoadError::BadEntry {
                index,
                reason: "output is not NFKC-normalized",
                value: u64::from(keys[index].0 as u32),
            });
        }
    }
    for (index, &c) in pool.iter().enumerate() {
        if keys.binary_search_by_key(&c, |k| k.0).is_ok() {
            return Err(LoadError::BadEntry {
                index,
                reason: "pool char is itself folded (table not closed)",
                value: u64::from(c as u32),
            });
        }
    }
    Ok(())
}

/// The in-memory lookup structures of a profile's checked entries.
struct Lookup {
    /// The value of every BMP char.
    bmp: Box<[u32; 0x1_0000]>,
    /// The values of astral keys, in key order.
    astral: Vec<(u32, u32)>,
    /// Multi-char outputs: start in the pool and length.
    multi: Vec<(u32, u32)>,
}

/// Builds the lookup structures of checked entries.
fn lookup_tables(keys: &[(char, u32, u32)], pool: &[char]) -> Lookup {
    let mut multi: Vec<(u32, u32)> = Vec::new();
    let mut bmp: Box<[u32; 0x1_0000]> =
        vec![0u32; 0x1_0000].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!("length is 0x10000"));
    for (code, value) in bmp.iter_mut().enumerate() {
        *value = code as u32;
    }
    let mut astral: Vec<(u32, u32)> = Vec::new();
    for &(c, start, n_out) in keys {
        let value = if n_out == 1 {
            pool[start as usize] as u32
        } else {
            let idx = multi.len() as u32;
            multi.push((start, n_out));
            MULTI_BASE + idx
        };
        let first_out = if n_out == 0 { None } else { Some(pool[start as usize]) };
        let slow = if first_out.is_some_and(joins_previous) { V_SLOW } else { 0 };
        if (c as u32) < 0x1_0000 {
            bmp[c as usize] = value | slow;
        } else {
            astral.push((c as u32, value | slow));
        }
    }
    for (code, value) in bmp.iter_mut().enumerate() {
        if let Some(c) = char::from_u32(code as u32) {
            if joins_previous(c) {
                *value |= V_JOINS;
            }
        }
    }
    Lookup { bmp, astral, multi }
}

/// Output of one char under the table.
pub(crate) enum Folded<'a> {
    One(char),
    Many(&'a [char]),
}

impl Profile {
    /// Bytes the loaded profile holds on the heap: its serialized form and the tables
    /// built from it. An estimate for a cache's budget.
    pub fn heap_bytes(&self) -> usize {
        let inner = &self.inner;
        inner.bytes.len()
            + std::mem::size_of::<[u32; 0x1_0000]>()
            + inner.astral.len() * 8
            + inner.multi.len() * 8
            + inner.pool.len() * 4
    }

    /// Load a profile from its serialized bytes, validating every field, and check that
    /// it was built with this program's Unicode data ([`LoadError::UnicodeMismatch`]).
    ///
    /// Never panics: any byte string either loads or returns a [`LoadError`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Profile, LoadError> {
        Profile::load(bytes, ToolchainUnicode::RUNNING)
    }

    /// [`Profile::from_bytes`] as a program linked with `running` would see it.
    pub(crate) fn load(bytes: &[u8], running: ToolchainUnicode) -> Result<Profile, LoadError> {
        if bytes.len() > PROFILE_BYTES_MAX {
            return Err(LoadError::TooLarge { n_bytes: bytes.len(), limit: PROFILE_BYTES_MAX });
        }
        let mut reader = Reader { bytes, pos: 0 };
        let header = Header::read(reader.take(HEADER_LEN, "header")?, running)?;
        let (n_entries, n_pool) = (header.n_entries, header.n_pool);
        // Sizes first, so the arithmetic below cannot overflow and no huge allocation
        // happens before we know the bytes are there.
        let entries_len = (n_entries as usize).checked_mul(8);
        let pool_len = (n_pool as usize).checked_mul(4);
        let (Some(entries_len), Some(pool_len)) = (entries_len, pool_len) else {
            return Err(LoadError::BadHeader { field: "n_entries", value: u64::from(n_entries) });
        };
        let entry_bytes = reader.take(entries_len, "entries")?;
        let pool_bytes = reader.take(pool_len, "pool")?;
        if reader.pos != bytes.len() {
            return Err(LoadError::TrailingBytes { n_bytes: bytes.len() - reader.pos });
        }
        let pool = read_pool(pool_bytes, n_pool)?;
        let keys = read_keys(entry_bytes, n_entries, &pool)?;
        check_closed(&keys, &pool)?;
        let Lookup { bmp, astral, multi } = lookup_tables(&keys, &pool);
        let id = ProfileId(blake3::derive_key(PROFILE_ID_CONTEXT, bytes));
        Ok(Profile {
            inner: Arc::new(ProfileInner {
                bytes: bytes.into(),
                id,
                flavour: header.flavour,
                options: header.options,
                unicode_version: header.unicode_version,
                char_unicode_version: header.char_unicode_version,
                n_entries: keys.len(),
                bmp,
                astral: astral.into_boxed_slice(),
                multi: multi.into_boxed_slice(),
                pool: pool.into_boxed_slice(),
            }),
        })
    }

    /// The canonical serialized bytes (the exact bytes [`Profile::id`] hashes).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.bytes.to_vec()
    }

    /// The profile id: blake3 `derive_key(PROFILE_ID_CONTEXT)` of [`Profile::to_bytes`].
    pub fn id(&self) -> ProfileId {
        self.inner.id
    }

    /// The flavour it was built for.
    pub fn flavour(&self) -> Flavour {
        self.inner.flavour
    }

    /// Markup and whitespace options.
    pub fn options(&self) -> ProfileOptions {
        self.inner.options
    }

    /// The Unicode version of the NFKC data the table was built from. Combining
    /// sequences are composed at run time by the linked `unicode-normalization`;
    /// loading checks that its version is this one.
    pub fn unicode_version(&self) -> (u8, u8, u8) {
        self.inner.unicode_version
    }

    /// The Unicode version of `std`'s char properties the profile was built with
    /// ([`FORMAT_1_CHAR_UNICODE`] for a format 1 profile); loading checks that the
    /// running program's is this one.
    pub fn char_unicode_version(&self) -> (u8, u8, u8) {
        self.inner.char_unicode_version
    }

    /// Number of chars the table changes.
    pub fn n_entries(&self) -> usize {
        self.inner.n_entries
    }

    /// What a single char folds to, ignoring its neighbours (NFKC of the char, then the
    /// fold table). Mostly for documentation and tests; use [`Profile::fold`] on text.
    pub fn fold_char(&self, c: char) -> String {
        let mut out = String::new();
        match self.inner.lookup_output(self.inner.lookup(c)) {
            Folded::One(d) => out.push(d),
            Folded::Many(ds) => out.extend(ds),
        }
        out
    }
}

impl ProfileInner {
    /// Encoded value for `c` (see `V_*`).
    #[inline]
    pub(crate) fn lookup(&self, c: char) -> u32 {
        let code = c as u32;
        if code < 0x1_0000 {
            self.bmp[(code & 0xFFFF) as usize]
        } else {
            let joins = if boundary_before_uncached(c) { 0 } else { V_JOINS };
            match self.astral.binary_search_by_key(&code, |e| e.0) {
                Ok(idx) => self.astral[idx].1 | joins,
                Err(_) => code | joins,
            }
        }
    }

    #[inline]
    pub(crate) fn lookup_output(&self, value: u32) -> Folded<'_> {
        let payload = value & V_PAYLOAD;
        if payload < MULTI_BASE {
            // Always a valid char: built from validated keys and pool chars.
            Folded::One(char::from_u32(payload).unwrap_or(char::REPLACEMENT_CHARACTER))
        } else {
            let (start, len) = self.multi[(payload - MULTI_BASE) as usize];
            Folded::Many(&self.pool[start as usize..(start + len) as usize])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The toolchain every format 1 profile was built with.
    const FORMAT_1: ToolchainUnicode = ToolchainUnicode { char_properties: (17, 0, 0), normalization: (18, 0, 0) };

    /// A tiny profile (A→a) as a build linked with `toolchain` writes it.
    fn tiny(toolchain: ToolchainUnicode) -> Vec<u8> {
        let options = ProfileOptions { aozora_ruby: false, html_ruby: false, collapse_whitespace: false };
        encode_profile(Flavour::Plain, options, toolchain, &[Entry { key: 'A', out: vec!['a'] }])
    }

    #[test]
    fn format_1_implies_the_char_unicode_it_was_built_with_and_keeps_its_bytes() {
        assert_eq!(FORMAT_1.char_properties, FORMAT_1_CHAR_UNICODE);
        let bytes = tiny(FORMAT_1);
        assert_eq!((&bytes[4..6], &bytes[8..12], &bytes[20..24]), (&[1, 0][..], &[18, 0, 0, 0][..], &[0; 4][..]));
        let profile = Profile::load(&bytes, FORMAT_1).unwrap();
        assert_eq!((profile.char_unicode_version(), profile.unicode_version()), ((17, 0, 0), (18, 0, 0)));
    }

    #[test]
    fn a_program_with_other_unicode_data_refuses_the_profile() {
        let bytes = tiny(FORMAT_1);
        let newer_std = ToolchainUnicode { char_properties: (18, 0, 0), ..FORMAT_1 };
        let error = Profile::load(&bytes, newer_std).unwrap_err();
        assert_eq!(
            error,
            LoadError::UnicodeMismatch { component: "std char properties", stored: (17, 0, 0), running: (18, 0, 0) }
        );
        assert_eq!(
            error.to_string(),
            "the fold table was built with Unicode 17.0.0 of std char properties, this build has Unicode 18.0.0; \
             replaying with it could produce other bytes, so use a build with Unicode 17.0.0 of std char properties"
        );
        let newer_normalization = ToolchainUnicode { normalization: (19, 0, 0), ..FORMAT_1 };
        assert_eq!(
            Profile::load(&bytes, newer_normalization).unwrap_err(),
            LoadError::UnicodeMismatch { component: "unicode-normalization", stored: (18, 0, 0), running: (19, 0, 0) }
        );
    }

    #[test]
    fn a_build_with_another_std_unicode_writes_format_2() {
        let newer = ToolchainUnicode { char_properties: (18, 0, 0), ..FORMAT_1 };
        let bytes = tiny(newer);
        assert_eq!((&bytes[4..6], &bytes[20..24]), (&[2, 0][..], &[18, 0, 0, 0][..]));
        let profile = Profile::load(&bytes, newer).unwrap();
        assert_eq!(profile.char_unicode_version(), (18, 0, 0));
        assert_ne!(profile.id(), Profile::load(&tiny(FORMAT_1), FORMAT_1).unwrap().id());
        assert!(matches!(
            Profile::load(&bytes, FORMAT_1),
            Err(LoadError::UnicodeMismatch { component: "std char properties", stored: (18, 0, 0), .. })
        ));
        // Format 2 stating what format 1 implies is not canonical: one table, one id.
        let mut restated = bytes.clone();
        restated[20..23].copy_from_slice(&[17, 0, 0]);
        assert!(matches!(Profile::load(&restated, FORMAT_1), Err(LoadError::BadHeader { .. })));
        let mut reserved = bytes;
        reserved[23] = 1;
        assert!(matches!(Profile::load(&reserved, newer), Err(LoadError::BadHeader { field: "reserved byte 23", .. })));
    }
}
