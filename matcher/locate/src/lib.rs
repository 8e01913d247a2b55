//! Locate: finds the registered source span that a translation request translates.
//!
//! A translation tool (GalTransl, LinguaGacha, AiNiee, a Sakura front end) sends a
//! model the source chunk wrapped in its own instructions, often with its own glossary
//! block and the previous chunk as context. Given the book's registered source text
//! (chapters: number → original text) and such a request, this crate says which
//! chapter the request translates and which byte span of the chapter's original text,
//! and which byte span of the request holds it. The caller then assembles the book's
//! context over that span only, never over the wrapper, whose glossary keys would
//! otherwise activate entries.
//!
//! It owns the [`Index`] of a book's text (derived data, built deterministically, with
//! a checked byte form) and the rules that find a chunk in a request. It does not
//! store text, read requests off the network or decide what to do when nothing is
//! found: the caller refuses or forwards, per its setting, or takes the chapter from a
//! header ([`Options::chapter`]).
//!
//! Pure: no I/O, no clock, no randomness, no hash-map iteration (see `clippy.toml`).
//! The same chapters and profile always give the same index and the same bytes, and
//! the same request always gives the same answer. Any text is accepted; nothing here
//! panics on input, and nothing grows past the limits below.
//!
//! # Overview
//!
//! * [`Index::build`] folds every chapter with the book's normalization profile
//!   ([`matcher::Profile`], the fold of the glossary matcher: traditional and
//!   simplified, full and half width, kana, whitespace) and keys an anchor every
//!   [`ANCHOR_STEP`] folded chars by the hash of the [`SHINGLE_CHARS`] chars there.
//! * [`Index::locate`] folds the request, looks every shingle of it up, extends each
//!   anchor that matches to the longest run the request and the chapter share, chains
//!   the runs of one chapter into chunks, picks the chunk (below), and maps it back
//!   through both offset maps to [`Located`]: the chapter, the span in its original
//!   text, the span in the original request and the chars matched.
//! * [`Outcome`] says whether one chunk was found, several equally well
//!   ([`Outcome::Ambiguous`]: a line repeated in two chapters), or none that passes
//!   the thresholds; each answer carries the request's [`Coverage`].
//! * [`Index::to_bytes`] / [`Index::from_bytes`] store and load an index; the loader
//!   checks a blake3 hash, the profile and every count and offset.
//!
//! # Example: a traditional chunk in GalTransl's prompt
//!
//! ```
//! use locate::{Index, Outcome};
//! use matcher::{Flavour, ProfileBuilder};
//!
//! let profile = ProfileBuilder::new(Flavour::Zh).build()?;
//! let index = Index::build(&profile, [
//!     (1, "第一回\n　　诗曰：\n　　混沌未分天地乱，茫茫渺渺无人见。\n　　自从盘古破鸿蒙，开辟从兹清浊辨。\n"),
//!     (2, "第二回\n　　话表美猴王得了姓名，怡然踊跃，对菩提前作礼启谢。\n\
//!          　　那祖师即命大众引孙悟空出二门外，教他洒扫应对，进退周旋之节。\n"),
//! ])?;
//! // What GalTransl sends: instructions, its own glossary, then the lines (here in
//! // traditional characters, without the indentation).
//! let request = "参考以下术语表（可为空，格式为src->dst #备注）：\n美猴王->Царь обезьян\n孫悟空->Сунь Укун\n\
//!                将下面的文本从中文翻译成俄文：\n\
//!                話表美猴王得了姓名，怡然踴躍，對菩提前作禮啟謝。\n\
//!                那祖師即命大眾引孫悟空出二門外，教他灑掃應對，進退周旋之節。";
//! let Outcome::Found { chunk, coverage } = index.locate(request)? else { panic!("not found") };
//! assert_eq!(chunk.chapter, 2);
//! let text = index.chapter_text(2).unwrap();
//! let source = &text[chunk.source.clone()]; // the two lines, the break between them kept
//! assert!(source.starts_with("话表美猴王") && source.ends_with("进退周旋之节。"));
//! assert!(request[chunk.request.clone()].starts_with("話表美猴王")); // not the glossary's 美猴王
//! assert!(coverage.registered_cjk * 2 > coverage.request_cjk);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: what does not count, by contrast
//!
//! ```
//! use locate::{Index, Outcome};
//! use matcher::{Flavour, ProfileBuilder};
//!
//! let profile = ProfileBuilder::new(Flavour::Zh).build()?;
//! let index = Index::build(&profile, [
//!     (1, "　　诗曰：\n　　混沌未分天地乱，茫茫渺渺无人见。\n　　那猴王领一群猿猴、猕猴、马猴等。\n"),
//!     (2, "　　诗曰：\n　　混沌未分天地乱，茫茫渺渺无人见。\n　　那祖师即命大众引孙悟空出二门外。\n"),
//! ])?;
//! // Names alone are shorter than a run: not found.
//! let outcome = index.locate("猴王->Царь обезьян\n孙悟空->Сунь Укун\nTranslate: 你好")?;
//! assert!(matches!(outcome, Outcome::NotFound { nearest: None, .. }));
//! // A line both chapters hold: ambiguous, chapter 1 first.
//! let Outcome::Ambiguous { candidates, .. } = index.locate("Translate:\n混沌未分天地乱，茫茫渺渺无人见。")? else {
//!     panic!("not ambiguous")
//! };
//! assert_eq!(candidates.iter().map(|c| c.chapter).collect::<Vec<_>>(), [1, 2]);
//! // With the next line it is chapter 2's.
//! let outcome = index.locate("混沌未分天地乱，茫茫渺渺无人见。\n那祖师即命大众引孙悟空出二门外。")?;
//! assert_eq!(outcome.found().map(|c| c.chapter), Some(2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How the chunk is found
//!
//! **Runs.** A *run* is a maximal stretch of folded chars that the request and a
//! chapter share, without whitespace at its ends (and without a piece of punctuation
//! cut off by a line break: the `：` ending a tool's instruction line meets the `：`
//! ending the paragraph before the chunk). Only runs of at least [`RUN_CHARS_MIN`]
//! chars count: every such run holds an anchor ([`SHINGLE_CHARS`] +
//! [`ANCHOR_STEP`] − 1 = 11), so none is missed and none shorter is used. Eleven
//! folded chars is a clause of prose; a glossary's names (two to four chars) never
//! make one, and in the 西游记 slice chapter 8 shares no run of ten chars with chapters
//! 1–7 (stock phrases such as `？”菩萨道：“我` are eight). A shingle found at more than
//! [`OCCURRENCES_MAX`] places of the book is no anchor, so a run made only of such
//! shingles is missed: text repeated that often cannot name one place anyway.
//!
//! **Chains.** A tool sends a chunk line by line inside its own syntax (numbered
//! lines, JSON objects, table cells), so a chunk is many runs. Run *b* follows run *a*
//! in one chain when both are of one chapter, *b* comes after *a* in the request and in
//! the chapter, with at most [`REQUEST_GAP_CHARS_MAX`] and [`CHAPTER_GAP_CHARS_MAX`]
//! chars between them, and the request's gap holds no more whole lines with text than
//! the chapter's gap does. The per-line syntax of a tool breaks no line of its own;
//! a short line the tool sent in between (`「ええ」`) is a line in both gaps; a header
//! between the previous chunk and this one (`</previous>`, `###这是你接下来的翻译任务`,
//! `<textarea>`) is a line only the request has, so the previous chunk sent as context
//! is a chain of its own. A chain's score is its runs' chars (whitespace left out).
//!
//! **The choice.** The chunk is the chain with the highest score (the later in the
//! request on a tie); then, as long as another chain comes after it in the request and
//! continues it in the chapter (within [`CHAPTER_GAP_CHARS_MAX`]), that chain (the
//! best such), because every tool sends the previous chunk before the one to
//! translate: context longer than the chunk (the last lines of a chapter) is still
//! context. Another chain with the same score over an overlapping part of the request
//! at another place of the book makes the answer [`Outcome::Ambiguous`], its candidates
//! ordered by chapter and position (the first is the deterministic pick of a caller that
//! must pick one; better, it asks for a header). Lines shorter than a run at either end
//! of the chunk (`「あら、何で？」`) join it when the request holds them in place, by the
//! gap rule above.
//!
//! **Thresholds.** A chunk counts when it matches at least [`Options::chars_min`]
//! chars (default [`CHUNK_CHARS_MIN`] = 16) and the request's CJK letters inside
//! runs are at least [`Options::share_min_percent`] of all its CJK letters (default
//! [`SHARE_MIN_PERCENT`] = 20%). The first keeps a single coincidental clause from
//! naming a chapter; the second keeps an unregistered chunk that happens to quote a
//! registered line (a poem, a stock phrase) from being taken for that line: its own
//! text is unregistered CJK, while a registered chunk's wrapper is mostly Latin or
//! Cyrillic instructions and a few names. Otherwise the answer is
//! [`Outcome::NotFound`], with the nearest chunk for the caller's message.
//!
//! When unsure, keep the default [`Options`]; pass [`Options::chapter`] when a header
//! names the chapter.
//!
//! # Bounds
//!
//! * A request is at most [`REQUEST_BYTES_MAX`] (4 MiB; a caller's HTTP body limit is
//!   smaller); a longer one is an error, never cut.
//! * A book is at most [`CHAPTERS_MAX`] chapters of [`CHAPTER_BYTES_MAX`] each and
//!   [`BOOK_BYTES_MAX`] in all ([`FOLDED_CHARS_MAX`] folded chars); the index holds the
//!   text, its fold (4 bytes a char), its line breaks and one 8-byte entry per
//!   [`ANCHOR_STEP`] chars with a bucket array of about as many `u32`: linear in the
//!   book, about 12 bytes a char. Building it folds the book once and sorts its
//!   anchors: O(book × log book).
//! * Locating folds the request, looks up each of its shingles (one bucket of one to
//!   two entries on average, at most [`OCCURRENCES_MAX`] positions per shingle) and
//!   extends each new run once: O(request × [`OCCURRENCES_MAX`]) for the runs, at most
//!   [`RUNS_MAX`] of them chained in O(runs × runs in a gap's reach), plus one fold of
//!   each chapter reported (at most [`CANDIDATES_LISTED_MAX`]). Never O(request ×
//!   book).
//!
//! # Lower-level APIs you can ignore
//!
//! [`Index::heap_bytes`] is for a caller's memory budget; the byte form's constants
//! ([`INDEX_MAGIC`], [`INDEX_FORMAT_VERSION`], [`INDEX_HASH_CONTEXT`]) are for tools
//! that inspect stored bytes.
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

mod bytes;
mod fold;
mod index;
mod search;

pub use bytes::{DecodeError, INDEX_FORMAT_VERSION, INDEX_HASH_CONTEXT, INDEX_MAGIC};
pub use index::{BuildError, Index};
pub use search::{Coverage, Located, Options, Outcome, RequestError};

/// Chars (folded) in a shingle, the unit the table is keyed by.
pub const SHINGLE_CHARS: usize = 8;
/// Every this many folded chars of a chapter (counted from its start), its shingle is
/// an anchor.
pub const ANCHOR_STEP: usize = 4;
/// The shortest run that counts: every shared run this long holds an anchor.
pub const RUN_CHARS_MIN: usize = SHINGLE_CHARS + ANCHOR_STEP - 1;
/// A shingle found at more places of the book than this is not an anchor.
pub const OCCURRENCES_MAX: usize = 32;
/// The most folded chapter chars between two runs of one chunk.
pub const CHAPTER_GAP_CHARS_MAX: u32 = 64;
/// The most folded request chars between two runs of one chunk.
pub const REQUEST_GAP_CHARS_MAX: u32 = 256;
/// The most runs one search keeps (the longest).
pub const RUNS_MAX: usize = 4096;
/// The most candidates an ambiguous answer lists.
pub const CANDIDATES_LISTED_MAX: usize = 16;
/// The default of [`Options::chars_min`].
pub const CHUNK_CHARS_MIN: usize = 16;
/// The default of [`Options::share_min_percent`].
pub const SHARE_MIN_PERCENT: usize = 20;
/// The longest request searched (4 MiB).
pub const REQUEST_BYTES_MAX: usize = 4 << 20;
/// The longest chapter (16 MiB).
pub const CHAPTER_BYTES_MAX: usize = 16 << 20;
/// The most text of all chapters together (512 MiB).
pub const BOOK_BYTES_MAX: usize = 512 << 20;
/// The most folded chars of all chapters together.
pub const FOLDED_CHARS_MAX: usize = 512 << 20;
/// The most chapters.
pub const CHAPTERS_MAX: usize = 100_000;
