//! Matcher: the canonical fold of source text and leftmost-longest glossary matching.
//!
//! This crate finds glossary keys in a chunk of Chinese or Japanese source text and says
//! exactly where each one is in the *original* text. It is the first half of the hot
//! path of `lorebank`: normalize the chunk, find keys leftmost-longest, hand the hits
//! (with their posting lists of record ids) to assembly.
//!
//! It is a leaf: it depends on nothing in the workspace and does no I/O, reads no clock,
//! draws no random numbers and never iterates a hash map (see `clippy.toml`). The only
//! code that touches the outside world is [`ProfileBuilder::build`], which asks the
//! system OpenCC library for its character tables (feature `opencc`).
//!
//! # Overview
//!
//! * [`Profile`]: a versioned, content-addressed fold table (NFKC of every char, then
//!   traditional→simplified or kyūjitai→shinjitai variants, katakana→hiragana, width,
//!   case, `ё`→`е`, whitespace), serialized with [`Profile::to_bytes`], loaded with
//!   [`Profile::from_bytes`] and named by [`Profile::id`]. Built by [`ProfileBuilder`].
//! * [`Profile::normalize`] folds a text into a [`NormalizedText`]: the folded string,
//!   an offset map back to the original, and the [`Ruby`] annotations it captured.
//!   [`Profile::fold`] folds a key (same fold, no offsets, no markup).
//! * [`MatcherBuilder`] folds (key, value) pairs and builds a [`Matcher`]: a daachorse
//!   automaton, leftmost-longest, with a posting list of values per folded pattern.
//!   [`Matcher::find`] returns [`Hit`]s with spans in bytes and chars of the original
//!   ([`SrcSpan`]) and of the folded text ([`NormSpan`]).
//! * [`Matcher::to_bytes`] / [`Matcher::from_bytes`] freeze and load a matcher; the
//!   loader checks a blake3 hash before daachorse sees a byte.
//!
//! # Example: a traditional chunk, a simplified glossary
//!
//! ```
//! use matcher::{Flavour, MatcherBuilder, ProfileBuilder};
//!
//! let profile = ProfileBuilder::new(Flavour::Zh).build()?;
//! let matcher = MatcherBuilder::new(&profile)
//!     .word_boundaries(true)
//!     .build([("萧炎", 412), ("萧", 7), ("蕭炎", 413)])?;
//!
//! let text = "蕭炎道：簫聲。";
//! let normalized = profile.normalize(text)?;
//! let hits = matcher.find(&normalized);
//! assert_eq!(hits.len(), 1); // 簫 (flute) is not 蕭 (a surname): no hit there
//! let hit = hits[0];
//! assert_eq!(&text[hit.src.bytes()], "蕭炎"); // span in the original text
//! assert_eq!(hit.src.chars(), 0..2);
//! assert_eq!(matcher.values(hit.pattern), [412, 413]); // both keys fold to 萧炎
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: the fold, by contrast
//!
//! ```
//! use matcher::{Flavour, ProfileBuilder};
//!
//! let nfkc = ProfileBuilder::nfkc_only().build()?;
//! let plain = ProfileBuilder::new(Flavour::Plain).build()?;
//! let zh = ProfileBuilder::new(Flavour::Zh).build()?;
//! let ja = ProfileBuilder::new(Flavour::Ja).build()?;
//!
//! // 髮 (hair) and 發 (emit) are both 发 in simplified Chinese; NFKC alone keeps them.
//! assert_eq!(nfkc.fold("頭髮"), "頭髮");
//! assert_eq!(zh.fold("頭髮"), "头发");
//! // Japanese keeps shinjitai, not simplified: 髮 → 髪.
//! assert_eq!(ja.fold("頭髮"), "頭髪");
//! // Half-width kana: NFKC makes them full-width; the kana fold makes them hiragana.
//! assert_eq!(nfkc.fold("ｶﾀｶﾅ"), "カタカナ");
//! assert_eq!(plain.fold("ｶﾀｶﾅ"), "かたかな");
//! // Expansions and case.
//! assert_eq!(nfkc.fold("㈱ＡＢ"), "(株)AB");
//! assert_eq!(plain.fold("㈱ＡＢ Ёж"), "(株)ab еж");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! When unsure, use [`Flavour::Zh`] for Chinese books and [`Flavour::Ja`] for Japanese
//! ones with every knob at its default.
//!
//! # Example: freeze and load
//!
//! ```
//! use matcher::{Flavour, Matcher, MatcherBuilder, ProfileBuilder};
//!
//! let profile = ProfileBuilder::new(Flavour::Plain).build()?;
//! let matcher = MatcherBuilder::new(&profile).build([("Lin", 1)])?;
//! let bytes = matcher.to_bytes();
//! let id = matcher.automaton_id(); // store beside the bytes
//! let loaded = Matcher::from_bytes_with_id(&bytes, &profile, &id)?;
//! let text = profile.normalize("Violin, LIN.")?;
//! assert_eq!(loaded.find(&text).len(), 1); // word boundaries: not inside "violin"
//! assert!(Matcher::from_bytes(&bytes[1..], &profile).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Offsets
//!
//! Offsets come in three newtypes so they cannot be mixed: [`SrcByte`], [`SrcChar`]
//! (original text) and [`NormByte`] (folded text). See [`NormalizedText`] for the
//! contract; in short, `fold(original[hit.src]) == matcher.pattern(hit.pattern)`,
//! hits increase and never overlap, and every offset is in range and on a char
//! boundary for any input.
//!
//! # Crate features
//!
//! * `opencc` (default): [`ProfileBuilder::build`] for [`Flavour::Zh`] and
//!   [`Flavour::Ja`] via the system OpenCC (Debian `libopencc-dev`). Without it, only
//!   [`Flavour::Plain`] and [`ProfileBuilder::nfkc_only`] profiles can be built; loading
//!   and using any profile needs nothing.
//!
//! # Lower-level APIs you can ignore
//!
//! [`LeftmostLongest`], [`Matcher::find_with`] and [`Matcher::find_naive`] exist so
//! tests and fuzzers can check daachorse against aho-corasick and a naive scanner;
//! [`NormalizedText::segments`] exposes the raw offset map.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

mod automaton;
mod builder;
pub mod markup;
mod normalize;
mod offset;
mod profile;
mod unicode;

pub use automaton::{
    AutomatonId, BuildError, FrozenLoadError, Hit, LeftmostLongest, Matcher, MatcherBuilder, PatternId,
    AUTOMATON_ID_CONTEXT, FROZEN_BYTES_MAX, FROZEN_FORMAT_VERSION, FROZEN_MAGIC, PATTERNS_MAX, PATTERN_CHARS_MAX,
    VALUES_MAX,
};
pub use builder::{ProfileBuildError, ProfileBuilder};
pub use normalize::{NormalizedText, Ruby, TextError};
pub use offset::{NormByte, NormSpan, SrcByte, SrcChar, SrcSpan};
pub use profile::{
    Flavour, LoadError, Profile, ProfileId, ProfileOptions, ToolchainUnicode, FOLD_CHARS_MAX, FORMAT_1_CHAR_UNICODE,
    PROFILE_BYTES_MAX, PROFILE_FORMAT_VERSION, PROFILE_ID_CONTEXT, PROFILE_MAGIC,
};

/// Longest text [`Profile::normalize`] accepts (64 MiB; chunks are a few KiB).
pub const TEXT_BYTES_MAX: usize = 64 << 20;
