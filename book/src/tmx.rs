//! The translation memory of a book as a use case: each recorded chunk's source text
//! beside its latest checked translation, gathered here and written as TMX 1.4b by
//! `formats::tmx` ([`Book::export_tmx`]).
//!
//! **Which pair.** For each chunk (chapter and chunk key) of the chapter asked for,
//! or of every chapter, in chapter then chunk-key order: its *latest receipt*, the
//! last filed under it (for a party, the last of the party's own), and of that
//! receipt its *latest check*, the last filing of its check index (the translation
//! checked last, see [`crate::check`]). A chunk whose latest receipt has no check is
//! left out and counted as unchecked, even when an earlier receipt has one: that
//! translation was made from another assembly, perhaps of another text. Neither
//! "latest" reads a clock: both are the order things were filed in.
//!
//! **Parties.** A party reads only its own receipts, by the rule of
//! [`Book::receipt_for`]: a chunk the party recorded, whose receipt names a record
//! the head no longer releases to it as it did, is left out and counted as withheld.

use formats::tmx::{Origin, Pair, Side, Stamp, TmxInput, Written};
use ledger_model::{limits, Hash32, Seq};
use projections::{Reader, SnapshotId};

use crate::book::Book;
use crate::chunks::reader_of;
use crate::error::BookError;

/// What to export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmxOptions {
    /// Only the chunks of this chapter; every chapter when `None`.
    pub chapter: Option<u32>,
    /// The language of the translations; the book's target language when `None`.
    pub target_lang: Option<String>,
    /// Most bytes of text the export gathers, sources and translations together
    /// ([`limits::TMX_TEXT_BYTES_MAX`] by [`TmxOptions::new`]); past it the export is
    /// refused.
    pub text_bytes_max: usize,
}

impl TmxOptions {
    /// The chunks of `chapter` (all when `None`), translations in `target_lang`,
    /// bounded by [`limits::TMX_TEXT_BYTES_MAX`].
    pub fn new(chapter: Option<u32>, target_lang: Option<String>) -> TmxOptions {
        TmxOptions { chapter, target_lang, text_bytes_max: limits::TMX_TEXT_BYTES_MAX }
    }
}

/// A recorded chunk and the receipt the export looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkRef {
    /// The chapter.
    pub chapter: u32,
    /// The chunk key.
    pub chunk_key: String,
    /// Its latest receipt (for a party, the party's latest).
    pub receipt: Hash32,
}

/// Chunks a report counts, the first [`limits::TMX_CHUNKS_LISTED_MAX`] of them named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed<T> {
    /// How many.
    pub count: usize,
    /// The first ones, in export order.
    pub first: Vec<T>,
}

impl<T> Default for Listed<T> {
    fn default() -> Listed<T> {
        Listed { count: 0, first: Vec::new() }
    }
}

impl<T> Listed<T> {
    fn push(&mut self, item: T) {
        self.count += 1;
        if self.first.len() < limits::TMX_CHUNKS_LISTED_MAX {
            self.first.push(item);
        }
    }
}

/// A chunk left out because one of its texts holds a character XML 1.0 cannot hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedChunk {
    /// The chunk.
    pub chunk: ChunkRef,
    /// Which text.
    pub side: Side,
    /// The first such character.
    pub character: char,
}

/// A translation memory: the document and what it holds and leaves out.
#[derive(Clone, Debug)]
pub struct TmxExport {
    /// The TMX document.
    pub bytes: Vec<u8>,
    /// The head it was read at.
    pub revision: Seq,
    /// The head's snapshot ID (the reader's view).
    pub snapshot: SnapshotId,
    /// The chapter exported, if one was asked for.
    pub chapter: Option<u32>,
    /// The language of the sources (the book's).
    pub source_lang: String,
    /// The language of the translations.
    pub target_lang: String,
    /// Chunks written.
    pub n_chunks: usize,
    /// Of those, the chunks written one unit per sentence.
    pub n_sentence_chunks: usize,
    /// Translation units (`<tu>`) written.
    pub n_units: usize,
    /// Chunks whose latest receipt has no check.
    pub unchecked: Listed<ChunkRef>,
    /// Chunks of a party whose receipt the head no longer releases to it as it was.
    pub withheld: Listed<ChunkRef>,
    /// Chunks a text of which XML 1.0 cannot hold.
    pub refused: Listed<RefusedChunk>,
}

impl Book {
    /// The translation memory of what was translated: each chunk's source text beside
    /// its latest checked translation (see the module's documentation for which
    /// pair), as TMX 1.4b, read as `reader`. A party gets only its own receipts.
    /// Sources are in the book's source language, translations in its target
    /// language or the one `options` names (a BCP 47 tag in canonical case, refused
    /// naming `target_lang` otherwise).
    pub fn export_tmx(&mut self, reader: &Reader, options: &TmxOptions) -> Result<TmxExport, BookError> {
        crate::service::check_language("target_lang", options.target_lang.as_deref())?;
        let read = self.read_at(reader, None)?;
        let view = read.view();
        let (revision, snapshot, source_lang) = (view.revision(), read.snapshot, view.source_lang().to_owned());
        let target_lang = options.target_lang.clone().unwrap_or_else(|| view.target_lang().to_owned());
        drop(read);

        // The receipts filed under each chunk, in arrival order.
        let mut shelves: Vec<(u32, String, Vec<Hash32>)> = Vec::new();
        for (chapter, chunk_key, _, id) in self.ledger().filed(options.chapter)? {
            match shelves.last_mut() {
                Some(last) if last.0 == chapter && last.1 == chunk_key => last.2.push(id),
                _ => shelves.push((chapter, chunk_key, vec![id])),
            }
        }
        let mut pairs = Vec::new();
        let mut chunks = Vec::new();
        let mut unchecked = Listed::default();
        let mut withheld = Listed::default();
        let mut n_text_bytes: usize = 0;
        for (chapter, chunk_key, ids) in shelves {
            let latest = match reader {
                Reader::Full => ids.last().copied(),
                party => {
                    let mut own = None;
                    for id in ids.iter().rev() {
                        if reader_of(&self.receipt(&id.to_hex())?.1) == *party {
                            own = Some(*id);
                            break;
                        }
                    }
                    own
                }
            };
            // A party that recorded nothing of this chunk does not see it.
            let Some(latest) = latest else { continue };
            let chunk = ChunkRef { chapter, chunk_key, receipt: latest };
            let receipt = match self.receipt_for(reader, &latest.to_hex()) {
                Ok((_, receipt)) => receipt,
                Err(BookError::NotFound { .. }) if *reader != Reader::Full => {
                    withheld.push(chunk);
                    continue;
                }
                Err(error) => return Err(error),
            };
            let filings = self.check_filings(latest)?;
            let Some(last) = filings.last() else {
                unchecked.push(chunk);
                continue;
            };
            let first = filings.iter().find(|filing| filing.check == last.check).unwrap_or(last);
            let stamp = |recorded: &Option<(u64, String)>| {
                recorded.as_ref().map(|(at_ms, by)| Stamp { at_ms: *at_ms, by: by.clone() })
            };
            let stored = self.stored_check(latest, last.check)?;
            let source = self.text(receipt.input, "input")?;
            n_text_bytes = n_text_bytes.saturating_add(source.len()).saturating_add(stored.translation.len());
            if n_text_bytes > options.text_bytes_max {
                return Err(BookError::InvalidField {
                    field: "chapter",
                    message: format!(
                        "the texts to export are over the limit TMX_TEXT_BYTES_MAX of {} bytes at chapter {}, chunk \
                         {:?}; export a chapter at a time",
                        options.text_bytes_max, chunk.chapter, chunk.chunk_key
                    ),
                });
            }
            pairs.push(Pair {
                source,
                target: stored.translation,
                created: stamp(&first.recorded),
                changed: stamp(&last.recorded),
                origin: Origin {
                    chapter: chunk.chapter,
                    chunk_key: chunk.chunk_key.clone(),
                    receipt: latest,
                    snapshot: receipt.snapshot,
                    check: last.check,
                },
            });
            chunks.push(chunk);
        }

        let input = TmxInput {
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            source_lang: source_lang.clone(),
            target_lang: target_lang.clone(),
            pairs,
        };
        let written = formats::tmx::write(&input);
        let mut refused = Listed::default();
        for item in &written.refused {
            refused.push(RefusedChunk { chunk: chunks[item.pair].clone(), side: item.side, character: item.character });
        }
        Ok(TmxExport {
            n_units: written.n_units(),
            n_chunks: written.written.iter().filter(|written| **written != Written::Refused).count(),
            n_sentence_chunks: written
                .written
                .iter()
                .filter(|written| matches!(written, Written::Sentences(_)))
                .count(),
            bytes: written.bytes,
            revision,
            snapshot,
            chapter: options.chapter,
            source_lang,
            target_lang,
            unchecked,
            withheld,
            refused,
        })
    }
}
